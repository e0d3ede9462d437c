//! Tantivy collectors over the roll-up fast fields, scores boosted by
//! replication when asked (cho-2000 §1): one keeps every matching document
//! (for the expansions, whose hits are one cluster's), one folds the hits of
//! a whole search into groups as they come.

use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::{ColumnIndex, ColumnValues};
use tantivy::{BitSet, DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

use rustc_hash::FxHashMap;

use super::rollup::{EntryKey, Fold, Hit, Shown};
use crate::collections::{ClusterId, CollectionId, LineageId, LineagePlace};
use crate::index::kind::PageKind;
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
            EntryKey::Lineage(lineage) | EntryKey::ManualPage(lineage, _) => {
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

/// A page whose title or headings hold every word of the query (its
/// function words aside) is about it: its score is multiplied by this; one
/// whose title or headings hold a share of them, by the same share of it.
/// A documentation search shows the page about a term before the pages
/// that mention it.
pub const ABOUT: f32 = 3.0;

/// A front page that is about the query (the query names its manual or its
/// part) is multiplied by this besides: the manual's start page before its
/// pages that carry the manual's name in their titles.
pub const FRONT_NAMED: f32 = 2.0;

/// A page one of whose title's parts is the query (`48. Message
/// processing` for `message processing`) is named by it: its score is
/// multiplied by this besides. An exact title match is the page asked for.
pub const NAMED: f32 = 2.0;

/// A listing (a source listing, a generated index, a search page) that is
/// not about the query is multiplied by this: it lists the words without
/// being about them.
pub const LISTING: f32 = 0.25;

/// A score weighed by the page's kind, the share of the query's words its
/// title or headings hold (`about`, from 0 to 1), and whether its title
/// names it by the query.
pub fn weigh(score: Score, kind: PageKind, about: f32, named: bool) -> Score {
    let whole = about >= 1.0 || named;
    let score = if named { score * NAMED } else { score };
    match kind {
        PageKind::Listing if whole => score,
        PageKind::Listing => score * LISTING,
        PageKind::Front if whole => score * ABOUT * FRONT_NAMED,
        PageKind::Prose | PageKind::Front => score * (1.0 + (ABOUT - 1.0) * about),
    }
}

/// The documents whose title or headings hold each of a query's words, by
/// segment ([`AboutCollector`], one search a word).
#[derive(Debug, Default)]
pub struct About {
    words: usize,
    /// By segment, a set of documents for each word.
    by_segment: Vec<Vec<BitSet>>,
    /// By segment, the documents the query names ([`NAMED`]).
    named: Vec<Option<BitSet>>,
    /// The searcher's segments, by ordinal.
    segments: Vec<tantivy::index::SegmentId>,
}

impl About {
    /// Sets made for the segments of `searcher`.
    pub fn new(searcher: &tantivy::Searcher) -> About {
        About {
            segments: searcher
                .segment_readers()
                .iter()
                .map(SegmentReader::segment_id)
                .collect(),
            ..About::default()
        }
    }

    /// The ordinal of `segment` in the searcher the sets were made for.
    pub fn ordinal_of(&self, segment: tantivy::index::SegmentId) -> Option<SegmentOrdinal> {
        self.segments
            .iter()
            .position(|&id| id == segment)
            .map(|at| at as SegmentOrdinal)
    }

    /// `score` of document `doc` of `kind` in segment `segment`, weighed
    /// ([`weigh`]).
    #[inline]
    pub fn weigh(
        &self,
        segment: SegmentOrdinal,
        doc: DocId,
        score: Score,
        kind: PageKind,
    ) -> Score {
        weigh(
            score,
            kind,
            self.share(segment, doc),
            self.names(segment, doc),
        )
    }

    /// Sets the documents the query names.
    pub fn set_named(&mut self, docs: Vec<(SegmentOrdinal, BitSet)>) {
        for (segment, docs) in docs {
            let at = segment as usize;
            if self.named.len() <= at {
                self.named.resize_with(at + 1, || None);
            }
            self.named[at] = Some(docs);
        }
    }

    #[inline]
    fn names(&self, segment: SegmentOrdinal, doc: DocId) -> bool {
        self.named
            .get(segment as usize)
            .and_then(Option::as_ref)
            .is_some_and(|docs| docs.contains(doc))
    }

    /// Adds the documents holding one more word.
    pub fn add_word(&mut self, docs: Vec<(SegmentOrdinal, BitSet)>) {
        for (segment, docs) in docs {
            let at = segment as usize;
            if self.by_segment.len() <= at {
                self.by_segment.resize_with(at + 1, Vec::new);
            }
            self.by_segment[at].push(docs);
        }
        self.words += 1;
    }

    /// The share of the words `doc`'s title or headings hold.
    #[inline]
    fn share(&self, segment: SegmentOrdinal, doc: DocId) -> f32 {
        if self.words == 0 {
            return 0.0;
        }
        let Some(sets) = self.by_segment.get(segment as usize) else {
            return 0.0;
        };
        let held = sets.iter().filter(|docs| docs.contains(doc)).count();
        held as f32 / self.words as f32
    }
}

/// Collects the documents a query finds as one bit set per segment.
pub struct AboutCollector;

pub struct AboutSegmentCollector {
    segment: SegmentOrdinal,
    docs: BitSet,
}

impl Collector for AboutCollector {
    type Fruit = Vec<(SegmentOrdinal, BitSet)>;
    type Child = AboutSegmentCollector;

    fn for_segment(
        &self,
        segment_local_id: SegmentOrdinal,
        segment: &SegmentReader,
    ) -> tantivy::Result<AboutSegmentCollector> {
        Ok(AboutSegmentCollector {
            segment: segment_local_id,
            docs: BitSet::with_max_value(segment.max_doc()),
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(
        &self,
        fruits: Vec<(SegmentOrdinal, BitSet)>,
    ) -> tantivy::Result<Vec<(SegmentOrdinal, BitSet)>> {
        Ok(fruits)
    }
}

impl SegmentCollector for AboutSegmentCollector {
    type Fruit = (SegmentOrdinal, BitSet);

    fn collect(&mut self, doc: DocId, _score: Score) {
        self.docs.insert(doc);
    }

    fn harvest(self) -> (SegmentOrdinal, BitSet) {
        (self.segment, self.docs)
    }
}

/// Collects all matching documents as [`Hit`]s.
pub struct HitCollector {
    /// `Some(boost)` ranks by replication.
    pub replication_boost: Option<f32>,
    /// The documents about the query.
    pub about: Arc<About>,
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
    kind: Arc<dyn ColumnValues<u64>>,
    manual_page: Arc<dyn ColumnValues<u64>>,
    about: Arc<About>,
    boost: Option<f32>,
}

impl Columns {
    fn open(
        segment_ord: SegmentOrdinal,
        segment: &SegmentReader,
        boost: Option<f32>,
        about: &Arc<About>,
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
            kind: column(segment, IndexField::Kind, 0)?,
            manual_page: column(segment, IndexField::ManualPage, NONE)?,
            about: Arc::clone(about),
            boost,
        })
    }

    /// The score of `doc`, weighed by its kind and whether it is about the
    /// query ([`weigh`]), and by replication when asked.
    #[inline]
    fn score(&self, doc: DocId, score: Score) -> Score {
        let score = self.about.weigh(self.segment, doc, score, self.kind(doc));
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
    fn kind(&self, doc: DocId) -> PageKind {
        PageKind::from_u64(self.kind.get_val(doc))
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
            listing: self.kind(doc).is_listing(),
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
            columns: Columns::open(
                segment_local_id,
                segment,
                self.replication_boost,
                &self.about,
            )?,
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
    /// The documents about the query.
    pub about: Arc<About>,
    /// A search within one manual: each of its pages (in all its copies
    /// and versions) is an entry.
    pub by_page: bool,
}

pub struct FoldSegmentCollector {
    columns: Columns,
    principals: Arc<Principals>,
    fold: Fold,
    by_page: bool,
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
            columns: Columns::open(
                segment_local_id,
                segment,
                self.replication_boost,
                &self.about,
            )?,
            principals: Arc::clone(&self.principals),
            fold: Fold::new(self.wanted, self.collections),
            by_page: self.by_page,
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
        let listing = columns.kind(doc).is_listing();
        let manual_page = match lineage {
            Some(_) => columns.manual_page.get_val(doc),
            None => NONE,
        };
        let entry = match lineage {
            Some(place) if self.by_page => Some(EntryKey::ManualPage(place.lineage, manual_page)),
            _ => super::rollup::entry_key(lineage, cluster),
        };
        let principals = &self.principals;
        self.fold.add_lazily(
            score,
            entry,
            collection,
            lineage,
            listing,
            (columns.host(doc), manual_page),
            || Hit {
                score,
                page: columns.page(doc),
                collection,
                cluster,
                lineage,
                host: columns.host(doc),
                listing,
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
    fn a_page_about_the_query_rises_and_a_listing_that_is_not_sinks() {
        assert_eq!(weigh(2.0, PageKind::Prose, 0.0, false), 2.0);
        assert_eq!(weigh(2.0, PageKind::Prose, 1.0, false), 2.0 * ABOUT);
        assert_eq!(
            weigh(2.0, PageKind::Prose, 0.5, false),
            2.0 * (1.0 + (ABOUT - 1.0) / 2.0)
        );
        assert_eq!(weigh(2.0, PageKind::Prose, 1.0, true), 2.0 * ABOUT * NAMED);
        assert_eq!(
            weigh(2.0, PageKind::Front, 1.0, false),
            2.0 * ABOUT * FRONT_NAMED
        );
        assert_eq!(weigh(2.0, PageKind::Front, 0.0, false), 2.0);
        assert_eq!(weigh(2.0, PageKind::Listing, 0.0, false), 2.0 * LISTING);
        assert_eq!(weigh(2.0, PageKind::Listing, 0.5, false), 2.0 * LISTING);
        // A listing the query is about or names ("concept index") is what
        // was asked.
        assert_eq!(weigh(2.0, PageKind::Listing, 1.0, false), 2.0);
        assert_eq!(weigh(2.0, PageKind::Listing, 1.0, true), 2.0 * NAMED);
    }

    #[test]
    fn one_copy_keeps_the_score_and_more_copies_raise_it() {
        assert_eq!(replication_boost(2.0, 1, 0.5), 2.0);
        assert_eq!(replication_boost(2.0, 0, 0.5), 2.0);
        let five = replication_boost(2.0, 5, 0.5);
        assert!((five - 2.0 * (1.0 + 0.5 * 5f32.ln())).abs() < 1e-6);
        assert!(replication_boost(2.0, 12, 0.5) > five);
    }
}
