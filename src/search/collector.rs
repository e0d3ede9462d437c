//! Tantivy collectors over the roll-up fast fields, scores boosted by
//! replication when asked (cho-2000 §1): one keeps every matching document
//! (for the expansions, whose hits are one cluster's), one folds the hits of
//! a whole search into groups as they come.

use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::{ColumnIndex, ColumnValues};
use tantivy::{DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

use rustc_hash::FxHashMap;

use super::rollup::{EntryKey, Fold, Hit, Shown};
use crate::collections::{ClusterId, CollectionId, LineageId, LineagePlace};
use crate::index::{IndexField, NONE};
use crate::pages::PageId;

/// Which pages each entry is shown from: a cluster's principal collection,
/// a manual's principal copy unless the query names another version.
#[derive(Debug, Clone, Default)]
pub struct Principals {
    /// Each similar cluster's principal collection.
    pub clusters: Arc<FxHashMap<ClusterId, CollectionId>>,
    /// Manuals shown from another copy than their principal (the version a
    /// query names).
    pub copies: FxHashMap<LineageId, u16>,
}

impl Principals {
    pub fn of(&self, key: EntryKey) -> Shown {
        match key {
            EntryKey::Cluster(cluster) => self
                .clusters
                .get(&cluster)
                .map_or(Shown::Best, |&collection| Shown::Collection(collection)),
            EntryKey::Lineage(lineage) => {
                Shown::Copy(self.copies.get(&lineage).copied().unwrap_or(0))
            }
        }
    }
}

/// `score x (1 + boost x ln(copies))`: one copy leaves the score as it is;
/// each tenfold more copies adds `2.3 x boost` times the score.
pub fn replication_boost(score: Score, copies: u64, boost: f32) -> Score {
    let copies = copies.max(1) as f32;
    score * (1.0 + boost * copies.ln())
}

/// Collects all matching documents as [`Hit`]s.
pub struct HitCollector {
    /// `Some(boost)` ranks by replication.
    pub replication_boost: Option<f32>,
}

pub struct HitSegmentCollector {
    columns: Columns,
    hits: Vec<Hit>,
}

/// A segment's roll-up fast fields.
struct Columns {
    segment: SegmentOrdinal,
    page: Arc<dyn ColumnValues<u64>>,
    collection: Arc<dyn ColumnValues<u64>>,
    cluster: Arc<dyn ColumnValues<u64>>,
    lineage: Arc<dyn ColumnValues<u64>>,
    lineage_copy: Arc<dyn ColumnValues<u64>>,
    replication: Arc<dyn ColumnValues<u64>>,
    host: Arc<dyn ColumnValues<u64>>,
    boost: Option<f32>,
}

impl Columns {
    fn open(
        segment_ord: SegmentOrdinal,
        segment: &SegmentReader,
        boost: Option<f32>,
    ) -> tantivy::Result<Columns> {
        Ok(Columns {
            segment: segment_ord,
            page: column(segment, IndexField::PageId, 0)?,
            collection: column(segment, IndexField::CollectionId, NONE)?,
            cluster: column(segment, IndexField::ClusterId, NONE)?,
            lineage: column(segment, IndexField::LineageId, NONE)?,
            lineage_copy: column(segment, IndexField::LineageCopy, 0)?,
            replication: column(segment, IndexField::Replication, 1)?,
            host: column(segment, IndexField::HostId, 0)?,
            boost,
        })
    }

    #[inline]
    fn score(&self, doc: DocId, score: Score) -> Score {
        match self.boost {
            Some(boost) => replication_boost(score, self.replication.get_val(doc), boost),
            None => score,
        }
    }

    #[inline]
    fn cluster(&self, doc: DocId) -> Option<ClusterId> {
        id(self.cluster.get_val(doc)).map(ClusterId)
    }

    #[inline]
    fn lineage(&self, doc: DocId) -> Option<LineagePlace> {
        id(self.lineage.get_val(doc)).map(|lineage| LineagePlace {
            lineage: LineageId(lineage),
            copy: self.lineage_copy.get_val(doc).min(u64::from(u16::MAX)) as u16,
        })
    }

    #[inline]
    fn collection(&self, doc: DocId) -> Option<CollectionId> {
        id(self.collection.get_val(doc)).map(CollectionId)
    }

    #[inline]
    fn page(&self, doc: DocId) -> PageId {
        PageId(self.page.get_val(doc) as u32)
    }

    #[inline]
    fn host(&self, doc: DocId) -> u32 {
        self.host.get_val(doc) as u32
    }

    #[inline]
    fn hit(&self, doc: DocId, score: Score) -> Hit {
        Hit {
            score: self.score(doc, score),
            page: self.page(doc),
            collection: self.collection(doc),
            cluster: self.cluster(doc),
            lineage: self.lineage(doc),
            host: self.host(doc),
            doc: DocAddress::new(self.segment, doc),
        }
    }
}

/// A fast field's values by document. Every document has each roll-up
/// field, so the column is read directly; `default` serves a segment where
/// some document lacks it (an index written by another build).
fn column(
    segment: &SegmentReader,
    field: IndexField,
    default: u64,
) -> tantivy::Result<Arc<dyn ColumnValues<u64>>> {
    let column = segment.fast_fields().u64(field.name())?;
    Ok(match column.index {
        ColumnIndex::Full => column.values,
        _ => column.first_or_default_col(default),
    })
}

fn id(value: u64) -> Option<u32> {
    (value != NONE).then_some(value as u32)
}

impl Collector for HitCollector {
    type Fruit = Vec<Hit>;
    type Child = HitSegmentCollector;

    fn for_segment(
        &self,
        segment_local_id: SegmentOrdinal,
        segment: &SegmentReader,
    ) -> tantivy::Result<HitSegmentCollector> {
        Ok(HitSegmentCollector {
            columns: Columns::open(segment_local_id, segment, self.replication_boost)?,
            hits: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Vec<Hit>>) -> tantivy::Result<Vec<Hit>> {
        Ok(fruits.into_iter().flatten().collect())
    }
}

impl SegmentCollector for HitSegmentCollector {
    type Fruit = Vec<Hit>;

    fn collect(&mut self, doc: DocId, score: Score) {
        self.hits.push(self.columns.hit(doc, score));
    }

    fn harvest(self) -> Vec<Hit> {
        self.hits
    }
}

/// Folds all matching documents into groups ([`Fold`]).
pub struct FoldCollector {
    /// `Some(boost)` ranks by replication.
    pub replication_boost: Option<f32>,
    /// Groups to build in full: those up to the results page asked for.
    pub wanted: usize,
    /// Collections in the generation.
    pub collections: usize,
    /// Which pages each entry is shown from.
    pub principals: Arc<Principals>,
}

pub struct FoldSegmentCollector {
    columns: Columns,
    principals: Arc<Principals>,
    fold: Fold,
}

impl Collector for FoldCollector {
    type Fruit = Fold;
    type Child = FoldSegmentCollector;

    fn for_segment(
        &self,
        segment_local_id: SegmentOrdinal,
        segment: &SegmentReader,
    ) -> tantivy::Result<FoldSegmentCollector> {
        Ok(FoldSegmentCollector {
            columns: Columns::open(segment_local_id, segment, self.replication_boost)?,
            principals: Arc::clone(&self.principals),
            fold: Fold::new(self.wanted, self.collections),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Fold>) -> tantivy::Result<Fold> {
        let mut fruits = fruits.into_iter();
        let mut merged = fruits
            .next()
            .unwrap_or_else(|| Fold::new(self.wanted, self.collections));
        for fruit in fruits {
            merged.merge(fruit);
        }
        Ok(merged)
    }
}

impl SegmentCollector for FoldSegmentCollector {
    type Fruit = Fold;

    /// Reads the cluster and manual of every hit, its collection when it
    /// has a cluster (a page in no cluster is in no collection), and its
    /// page only when the hit may become a group's best.
    fn collect(&mut self, doc: DocId, score: Score) {
        let columns = &self.columns;
        let score = columns.score(doc, score);
        let cluster = columns.cluster(doc);
        let lineage = columns.lineage(doc);
        let collection = cluster.and_then(|_| columns.collection(doc));
        let principals = &self.principals;
        self.fold.add_lazily(
            score,
            super::rollup::entry_key(lineage, cluster),
            collection,
            lineage,
            || columns.host(doc),
            || Hit {
                score,
                page: columns.page(doc),
                collection,
                cluster,
                lineage,
                host: columns.host(doc),
                doc: DocAddress::new(columns.segment, doc),
            },
            |key| principals.of(key),
        );
    }

    fn harvest(self) -> Fold {
        self.fold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_copy_keeps_the_score_and_more_copies_raise_it() {
        assert_eq!(replication_boost(2.0, 1, 0.5), 2.0);
        assert_eq!(replication_boost(2.0, 0, 0.5), 2.0);
        let five = replication_boost(2.0, 5, 0.5);
        assert!((five - 2.0 * (1.0 + 0.5 * 5f32.ln())).abs() < 1e-6);
        assert!(replication_boost(2.0, 12, 0.5) > five);
    }
}
