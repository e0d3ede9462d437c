//! A tantivy collector that keeps every matching document with its roll-up
//! fast fields, its score boosted by replication when asked (cho-2000 §1).

use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::ColumnValues;
use tantivy::{DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

use super::rollup::Hit;
use crate::collections::{ClusterId, CollectionId};
use crate::index::{IndexField, NONE};
use crate::pages::PageId;

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
    segment: SegmentOrdinal,
    page: Arc<dyn ColumnValues<u64>>,
    collection: Arc<dyn ColumnValues<u64>>,
    cluster: Arc<dyn ColumnValues<u64>>,
    replication: Arc<dyn ColumnValues<u64>>,
    boost: Option<f32>,
    hits: Vec<Hit>,
}

fn column(
    segment: &SegmentReader,
    field: IndexField,
    default: u64,
) -> tantivy::Result<Arc<dyn ColumnValues<u64>>> {
    Ok(segment
        .fast_fields()
        .u64(field.name())?
        .first_or_default_col(default))
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
            segment: segment_local_id,
            page: column(segment, IndexField::PageId, 0)?,
            collection: column(segment, IndexField::CollectionId, NONE)?,
            cluster: column(segment, IndexField::ClusterId, NONE)?,
            replication: column(segment, IndexField::Replication, 1)?,
            boost: self.replication_boost,
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
        let score = match self.boost {
            Some(boost) => replication_boost(score, self.replication.get_val(doc), boost),
            None => score,
        };
        self.hits.push(Hit {
            score,
            page: PageId(self.page.get_val(doc) as u32),
            collection: id(self.collection.get_val(doc)).map(CollectionId),
            cluster: id(self.cluster.get_val(doc)).map(ClusterId),
            doc: DocAddress::new(self.segment, doc),
        });
    }

    fn harvest(self) -> Vec<Hit> {
        self.hits
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
