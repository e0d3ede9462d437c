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
/// segment (`pruned::found_sets`, one search a word).
#[derive(Debug, Default)]
pub struct About {
    words: usize,
    /// By segment, a set of documents for each word.
    by_segment: Vec<Vec<Arc<DocBits>>>,
    /// By segment, the documents the query names ([`NAMED`]).
    named: Vec<Option<Arc<DocBits>>>,
}

impl About {
    /// No sets yet: [`About::add_word`] adds a word's.
    pub fn new() -> About {
        About::default()
    }

    /// The sets of segment `segment`, for its collector: a search weighs
    /// each of its hits by them, and a segment's own sets are found once
    /// rather than at every hit. A word no document of the segment is
    /// about is left out of its sets (it still counts as a word).
    pub fn of_segment(&self, segment: SegmentOrdinal) -> SegmentAbout {
        SegmentAbout {
            words: self.words,
            sets: self
                .by_segment
                .get(segment as usize)
                .map(|sets| sets.iter().filter(|docs| docs.any()).cloned().collect())
                .unwrap_or_default(),
            named: self
                .named
                .get(segment as usize)
                .and_then(Option::as_ref)
                .filter(|docs| docs.any())
                .cloned(),
        }
    }

    /// Sets the documents the query names.
    pub fn set_named(&mut self, docs: Vec<(SegmentOrdinal, DocBits)>) {
        for (segment, docs) in docs {
            let at = segment as usize;
            if self.named.len() <= at {
                self.named.resize_with(at + 1, || None);
            }
            self.named[at] = Some(Arc::new(docs));
        }
    }

    /// Adds the documents holding one more word.
    pub fn add_word(&mut self, docs: Vec<(SegmentOrdinal, DocBits)>) {
        for (segment, docs) in docs {
            let at = segment as usize;
            if self.by_segment.len() <= at {
                self.by_segment.resize_with(at + 1, Vec::new);
            }
            self.by_segment[at].push(Arc::new(docs));
        }
        self.words += 1;
    }
}

/// One segment's documents about the query ([`About::of_segment`]).
#[derive(Debug, Default)]
pub struct SegmentAbout {
    /// The query's words, those no document of the segment is about
    /// included.
    words: usize,
    /// For each word some document of the segment is about, those.
    sets: Vec<Arc<DocBits>>,
    /// The documents the query names, when some are.
    named: Option<Arc<DocBits>>,
}

impl SegmentAbout {
    /// `score` of document `doc` of `kind`, weighed ([`weigh`]).
    #[inline]
    pub fn weigh(&self, doc: DocId, score: Score, kind: PageKind) -> Score {
        weigh(score, kind, self.share(doc), self.names(doc))
    }

    /// The documents whose score the query weighs up (their title or
    /// headings hold one of its words, or their title names it:
    /// [`weigh`]), as one set over the segment's `documents`, a bit each
    /// (document `d` is bit `d % 64` of word `d / 64`): a broad search
    /// asks of every hit. `None` when there are none.
    pub(super) fn weighed_up(&self, documents: u32) -> Option<Vec<u64>> {
        if !self.weighs_up_any() {
            return None;
        }
        let mut union = vec![0u64; documents as usize / 64 + 1];
        for set in self.sets.iter().chain(&self.named) {
            for (union, &word) in union.iter_mut().zip(set.words()) {
                *union |= word;
            }
        }
        Some(union)
    }

    /// Whether the query weighs up the score of some document of the
    /// segment ([`SegmentAbout::weighed_up`]).
    pub(super) fn weighs_up_any(&self) -> bool {
        !self.sets.is_empty() || self.named.is_some()
    }

    #[inline]
    fn names(&self, doc: DocId) -> bool {
        self.named.as_ref().is_some_and(|docs| docs.contains(doc))
    }

    /// The share of the words `doc`'s title or headings hold.
    #[inline]
    fn share(&self, doc: DocId) -> f32 {
        if self.sets.is_empty() {
            return 0.0;
        }
        let held = self.sets.iter().filter(|docs| docs.contains(doc)).count();
        held as f32 / self.words as f32
    }
}

/// A set of a segment's documents, a bit each: document `d` is bit
/// `d % 64` of word `d / 64`.
#[derive(Debug, Default, Clone)]
pub struct DocBits {
    words: Vec<u64>,
    /// Whether a bit is set.
    any: bool,
}

impl DocBits {
    pub fn new(words: Vec<u64>) -> DocBits {
        let any = words.iter().any(|&word| word != 0);
        DocBits { words, any }
    }

    #[inline]
    pub fn contains(&self, doc: DocId) -> bool {
        self.words
            .get(doc as usize / 64)
            .is_some_and(|word| word >> (doc % 64) & 1 == 1)
    }

    /// Whether some document is in the set.
    pub fn any(&self) -> bool {
        self.any
    }

    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

/// What a fold counts of a document ([`Columns::counted`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Counted {
    pub entry: Option<EntryKey>,
    pub collection: Option<CollectionId>,
    pub lineage: Option<LineagePlace>,
    pub listing: bool,
    pub host: u32,
    pub manual_page: u64,
}

/// Collects all matching documents as [`Hit`]s.
pub struct HitCollector {
    /// `Some(boost)` ranks by replication.
    pub replication_boost: Option<f32>,
    /// The documents about the query.
    pub about: Arc<About>,
    /// The index's roll-up fields, decoded.
    pub fields: Arc<RollupFields>,
}

pub struct HitSegmentCollector {
    columns: Columns,
    hits: Vec<Hit>,
}

/// The roll-up fast fields of one segment, decoded once for the
/// generation. A broad search reads seven of them for each of up to every
/// document of the index, and a column's own reader decodes a value at each
/// read: about 3 ns a value on the million-page web (measured by reading
/// them twice), 20 ms of a search matching every page. Decoded, they take
/// 31 bytes a document; with what a rolled-up search counts of each and
/// the documents by group ([`SegmentFields`]' `counted` and `by_group`),
/// 43 and a few.
#[derive(Debug, Default)]
pub struct SegmentFields {
    page: Box<[u32]>,
    /// Ids, [`NO_ID`] for none.
    collection: Box<[u32]>,
    cluster: Box<[u32]>,
    lineage: Box<[u32]>,
    lineage_copy: Box<[u16]>,
    replication: Box<[u32]>,
    host: Box<[u32]>,
    kind: Box<[u8]>,
    /// The page's place in its manual, numbered 0, 1, 2… in each manual
    /// ([`RollupFields::read`]); [`NO_ID`] for none.
    place: Box<[u32]>,
    /// What a rolled-up search counts of the page: its pair, numbered 0,
    /// 1, 2… in the generation ([`RollupFields::read`], [`Pair`]), and its
    /// place in its manual numbered in the generation (each place of each
    /// manual its own number; [`NO_ID`] for none). Side by side: a search
    /// matching few pages reads them at random, one cache line a hit.
    counted: Box<[[u32; 2]]>,
    /// The segment's documents by group ([`Pair::group`]).
    by_group: GroupDocs,
    /// The most copies of a page of the segment (`replication`'s most),
    /// which bounds the replication boost of its scores.
    most_copies: u32,
}

/// One segment's documents by group: a rolled-up search scores in full
/// only the matching pages of the groups its results page shows.
#[derive(Debug, Default)]
pub struct GroupDocs {
    /// Documents, by group, then in order.
    docs: Box<[DocId]>,
    /// Each group with documents here, by number, and where its
    /// documents start in `docs`.
    starts: Box<[(u32, u32)]>,
}

impl GroupDocs {
    /// The documents of the segment whose pairs are `pairs` (by
    /// document), each pair of group `group_of(pair)`.
    fn of(pairs: &[u32], group_of: impl Fn(u32) -> u32) -> GroupDocs {
        let mut by_group: Vec<(u32, DocId)> = pairs
            .iter()
            .enumerate()
            .map(|(doc, &pair)| (group_of(pair), doc as DocId))
            .collect();
        by_group.sort_unstable();
        let mut starts: Vec<(u32, u32)> = Vec::new();
        for (at, &(group, _)) in by_group.iter().enumerate() {
            if starts.last().is_none_or(|&(last, _)| last != group) {
                starts.push((group, at as u32));
            }
        }
        GroupDocs {
            docs: by_group.into_iter().map(|(_, doc)| doc).collect(),
            starts: starts.into(),
        }
    }

    /// The documents of group `group`, in order.
    pub fn of_group(&self, group: u32) -> &[DocId] {
        let at = self.starts.partition_point(|&(number, _)| number < group);
        match self.starts.get(at) {
            Some(&(number, start)) if number == group => {
                let end = self
                    .starts
                    .get(at + 1)
                    .map_or(self.docs.len(), |&(_, end)| end as usize);
                &self.docs[start as usize..end]
            }
            _ => &[],
        }
    }

    fn bytes(&self) -> usize {
        std::mem::size_of_val(&*self.docs) + std::mem::size_of_val(&*self.starts)
    }
}

/// A [`SegmentFields`] id that is none (the index's [`NONE`]).
pub(super) const NO_ID: u32 = u32::MAX;

impl SegmentFields {
    /// Decodes the roll-up fields of `segment`, but for the places in
    /// their manuals: those are given as the index keeps them
    /// (`manual_page` keys), to be numbered.
    fn read(segment: &SegmentReader) -> tantivy::Result<(SegmentFields, Vec<u64>)> {
        let documents = segment.max_doc();
        let values = |field: IndexField, default: u64| -> tantivy::Result<Vec<u64>> {
            let column = column(segment, field, default)?;
            let mut values = vec![0u64; documents as usize];
            column.get_range(0, &mut values);
            Ok(values)
        };
        // Ids are u32 in the page table; the index's none is u64::MAX.
        let ids = |field: IndexField| -> tantivy::Result<Box<[u32]>> {
            Ok(values(field, NONE)?
                .into_iter()
                .map(|value| match id(value) {
                    Some(id) => id.min(NO_ID - 1),
                    None => NO_ID,
                })
                .collect())
        };
        let narrow = |field: IndexField, default: u64| -> tantivy::Result<Box<[u32]>> {
            Ok(values(field, default)?
                .into_iter()
                .map(|value| value.min(u64::from(u32::MAX)) as u32)
                .collect())
        };
        let mut fields = SegmentFields {
            page: narrow(IndexField::PageId, 0)?,
            collection: ids(IndexField::CollectionId)?,
            cluster: ids(IndexField::ClusterId)?,
            lineage: ids(IndexField::LineageId)?,
            lineage_copy: values(IndexField::LineageCopy, 0)?
                .into_iter()
                .map(|copy| copy.min(u64::from(u16::MAX)) as u16)
                .collect(),
            replication: narrow(IndexField::Replication, 1)?,
            host: narrow(IndexField::HostId, 0)?,
            kind: values(IndexField::Kind, 0)?
                .into_iter()
                .map(|kind| kind.min(u64::from(u8::MAX)) as u8)
                .collect(),
            place: Box::default(),
            counted: Box::default(),
            by_group: GroupDocs::default(),
            most_copies: 1,
        };
        fields.most_copies = fields.replication.iter().copied().max().unwrap_or(1);
        Ok((fields, values(IndexField::ManualPage, NONE)?))
    }

    /// The kind of `doc`; `None` past the segment's documents.
    #[cfg(test)]
    pub fn kind(&self, doc: DocId) -> Option<PageKind> {
        let kind = *self.kind.get(doc as usize)?;
        Some(PageKind::from_u64(u64::from(kind)))
    }

    /// The replication of `doc`; `None` past the segment's documents.
    #[cfg(test)]
    pub fn replication(&self, doc: DocId) -> Option<u64> {
        self.replication.get(doc as usize).copied().map(u64::from)
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        fn held<T>(values: &[T]) -> usize {
            std::mem::size_of_val(values)
        }
        [
            &self.page,
            &self.collection,
            &self.cluster,
            &self.lineage,
            &self.replication,
            &self.host,
            &self.place,
        ]
        .into_iter()
        .map(|values| held(values))
        .sum::<usize>()
            + held(&self.counted)
            + self.by_group.bytes()
            + held(&self.lineage_copy)
            + held(&self.kind)
    }
}

/// The [`SegmentFields`] of each segment of a generation's index, decoded
/// when the generation is opened (its index never changes).
#[derive(Debug, Default)]
pub struct RollupFields {
    segments: FxHashMap<tantivy::index::SegmentId, Arc<SegmentFields>>,
    /// The pairs numbered ([`SegmentFields`]' `counted`), by number.
    pairs: Vec<Pair>,
    /// The groups numbered ([`Pair::group`]).
    groups: u32,
    /// The places in manuals numbered ([`SegmentFields`]' `counted`):
    /// each manual's one after another.
    manual_places: u32,
    /// By group number, a manual's entry's range of places.
    place_ranges: Vec<Option<(u32, u32)>>,
    /// The live documents of each pair, and of each place, by number: a
    /// search matching most documents counts those it misses
    /// ([`super::pruned`]).
    alive_by_pair: Box<[u32]>,
    alive_by_place: Box<[u32]>,
    /// The live documents read (`alive_by_pair`'s sum): the counts are
    /// a searcher's that has as many.
    live_documents: u64,
}

/// What a rolled-up search counts of a page outside a search within one
/// manual, the same for many pages: its group (a manual's entry, a similar
/// cluster's, or its host's pages in no cluster), its host, its copy in
/// its manual, its collection, and (of a page in no cluster) whether it
/// is a listing. A search counts its hits by pair, and each pair's count
/// into its group once ([`super::pruned`]): a broad search reads one
/// number a hit, where it read seven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pair {
    /// The group's number: pairs of one group have the same.
    pub group: u32,
    pub entry: Option<EntryKey>,
    pub host: u32,
    pub copy: Option<u16>,
    pub collection: Option<CollectionId>,
    pub listing: bool,
}

impl RollupFields {
    /// Decodes the fields of every segment `searcher` reads, and numbers
    /// each manual's places: the same place (its `manual_page` key) has the
    /// same number in every segment, and a manual's numbers run from 0, so
    /// that the roll-up holds the places of a manual's matching pages as
    /// bits rather than hashed keys.
    pub fn read(searcher: &tantivy::Searcher) -> tantivy::Result<RollupFields> {
        use rayon::prelude::*;
        let decoded: Vec<(tantivy::index::SegmentId, (SegmentFields, Vec<u64>))> = searcher
            .segment_readers()
            .par_iter()
            .map(|segment| Ok((segment.segment_id(), SegmentFields::read(segment)?)))
            .collect::<tantivy::Result<_>>()?;
        // A place's number in its manual.
        let mut numbers: FxHashMap<(u32, u64), u32> = FxHashMap::default();
        let mut next: FxHashMap<u32, u32> = FxHashMap::default();
        let mut groups: FxHashMap<Group, u32> = FxHashMap::default();
        let mut pairs: FxHashMap<Pair, u32> = FxHashMap::default();
        let mut pairs_group: Vec<u32> = Vec::new();
        let mut numbered = Vec::with_capacity(decoded.len());
        for (segment, (mut decoded, keys)) in decoded {
            decoded.place = keys
                .iter()
                .zip(decoded.lineage.iter())
                .map(|(&key, &lineage)| {
                    if key == NONE || lineage == NO_ID {
                        return NO_ID;
                    }
                    *numbers.entry((lineage, key)).or_insert_with(|| {
                        let number = next.entry(lineage).or_default();
                        *number += 1;
                        *number - 1
                    })
                })
                .collect();
            let pair: Vec<u32> = (0..decoded.page.len())
                .map(|doc| {
                    let group = Group::of(&decoded, doc);
                    let number = groups.len() as u32;
                    let number = *groups.entry(group).or_insert(number);
                    let pair = Pair::of(&decoded, doc, group, number);
                    let next = pairs.len() as u32;
                    *pairs.entry(pair).or_insert_with(|| {
                        pairs_group.push(number);
                        next
                    })
                })
                .collect();
            decoded.by_group = GroupDocs::of(&pair, |pair| pairs_group[pair as usize]);
            numbered.push((segment, decoded, pair));
        }
        // A manual's places numbered in the generation one after another:
        // the places of a manual's entry a search met are the bits of its
        // range ([`RollupFields::places_of`]).
        let mut lineages: Vec<(u32, u32)> = next.into_iter().collect();
        lineages.sort_unstable();
        let mut first = FxHashMap::default();
        let mut places = 0u32;
        for (lineage, count) in lineages {
            first.insert(lineage, (places, count));
            places += count;
        }
        let mut place_ranges = vec![None; groups.len()];
        for (group, &number) in &groups {
            if let Group::Lineage(lineage) = group {
                place_ranges[number as usize] = first
                    .get(lineage)
                    .map(|&(start, count)| (start, start + count));
            }
        }
        let mut fields = FxHashMap::default();
        let mut alive_by_pair = vec![0u32; pairs.len()];
        let mut alive_by_place = vec![0u32; places as usize];
        for ((segment, mut decoded, pair), reader) in
            numbered.into_iter().zip(searcher.segment_readers())
        {
            debug_assert_eq!(segment, reader.segment_id());
            decoded.counted = pair
                .into_iter()
                .zip(decoded.place.iter().zip(decoded.lineage.iter()))
                .map(|(pair, (&place, lineage))| match first.get(lineage) {
                    Some(&(start, _)) if place != NO_ID => [pair, start + place],
                    _ => [pair, NO_ID],
                })
                .collect();
            let alive = reader.alive_bitset();
            for (doc, &[pair, place]) in decoded.counted.iter().enumerate() {
                if alive.is_none_or(|alive| alive.is_alive(doc as DocId)) {
                    alive_by_pair[pair as usize] += 1;
                    if place != NO_ID {
                        alive_by_place[place as usize] += 1;
                    }
                }
            }
            fields.insert(segment, Arc::new(decoded));
        }
        tracing::debug!(
            pairs = pairs.len(),
            groups = groups.len(),
            places,
            "roll-up fields read"
        );
        let mut by_number = vec![None; pairs.len()];
        for (pair, number) in pairs {
            by_number[number as usize] = Some(pair);
        }
        Ok(RollupFields {
            segments: fields,
            pairs: by_number.into_iter().flatten().collect(),
            groups: groups.len() as u32,
            manual_places: places,
            place_ranges,
            live_documents: alive_by_pair.iter().map(|&live| u64::from(live)).sum(),
            alive_by_pair: alive_by_pair.into(),
            alive_by_place: alive_by_place.into(),
        })
    }

    /// The range of the places numbered in the generation of group
    /// `group`'s manual, when it is a manual's entry.
    pub fn places_of(&self, group: u32) -> Option<std::ops::Range<u32>> {
        let (start, end) = (*self.place_ranges.get(group as usize)?)?;
        Some(start..end)
    }

    /// The pair numbered `number` ([`SegmentFields`]' `counted`).
    #[inline]
    pub fn pair(&self, number: u32) -> &Pair {
        &self.pairs[number as usize]
    }

    /// The places in manuals numbered.
    pub fn manual_places(&self) -> u32 {
        self.manual_places
    }

    /// The live documents read ([`RollupFields::alive_by_pair_and_place`]
    /// counts them).
    pub(super) fn live_documents(&self) -> u64 {
        self.live_documents
    }

    /// The live documents of each pair, and of each place in a manual, by
    /// number ([`SegmentFields`]' `counted`).
    pub(super) fn alive_by_pair_and_place(&self) -> (&[u32], &[u32]) {
        (&self.alive_by_pair, &self.alive_by_place)
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.segments
            .values()
            .map(|fields| fields.bytes())
            .sum::<usize>()
            + std::mem::size_of_val(&*self.alive_by_pair)
            + std::mem::size_of_val(&*self.alive_by_place)
    }

    /// The groups numbered ([`Pair::group`] is below).
    pub fn groups(&self) -> u32 {
        self.groups
    }

    /// The pairs numbered ([`Columns::pair_and_place`] is below).
    pub fn pairs(&self) -> u32 {
        self.pairs.len() as u32
    }

    /// The fields of `segment`, one of the searcher's they were read from.
    pub fn of(&self, segment: &SegmentReader) -> tantivy::Result<Arc<SegmentFields>> {
        self.segments
            .get(&segment.segment_id())
            .cloned()
            .ok_or_else(|| {
                tantivy::TantivyError::InternalError(format!(
                    "segment {} is not one of the generation's index",
                    segment.segment_id().uuid_string()
                ))
            })
    }
}

/// What a page's hits fold into outside a search within one manual
/// ([`super::rollup::entry_key`], or its host's pages in no cluster).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Group {
    Lineage(u32),
    Cluster(u32),
    Site(u32),
}

impl Group {
    fn of(fields: &SegmentFields, doc: usize) -> Group {
        match (fields.lineage[doc], fields.cluster[doc]) {
            (NO_ID, NO_ID) => Group::Site(fields.host[doc]),
            (NO_ID, cluster) => Group::Cluster(cluster),
            (lineage, _) => Group::Lineage(lineage),
        }
    }
}

impl Pair {
    /// The pair of document `doc`, of `group` numbered `number`.
    fn of(fields: &SegmentFields, doc: usize, group: Group, number: u32) -> Pair {
        let (entry, copy, collection) = match group {
            Group::Lineage(lineage) => (
                Some(EntryKey::Lineage(LineageId(lineage))),
                Some(fields.lineage_copy[doc]),
                // A page in no cluster is in no collection.
                decoded_id(fields.cluster[doc])
                    .and_then(|_| decoded_id(fields.collection[doc]))
                    .map(CollectionId),
            ),
            Group::Cluster(cluster) => (
                Some(EntryKey::Cluster(ClusterId(cluster))),
                None,
                decoded_id(fields.collection[doc]).map(CollectionId),
            ),
            Group::Site(_) => (None, None, None),
        };
        Pair {
            group: number,
            entry,
            host: fields.host[doc],
            copy,
            collection,
            // Only a host's pages in no cluster are counted by kind.
            listing: entry.is_none()
                && PageKind::from_u64(u64::from(fields.kind[doc])).is_listing(),
        }
    }
}

/// A segment's roll-up fast fields, read by document.
pub(super) struct Columns {
    segment: SegmentOrdinal,
    fields: Arc<SegmentFields>,
    about: SegmentAbout,
    boost: Option<f32>,
}

impl Columns {
    pub(super) fn open(
        (segment_ord, segment): (SegmentOrdinal, &SegmentReader),
        fields: &RollupFields,
        boost: Option<f32>,
        about: &Arc<About>,
    ) -> tantivy::Result<Columns> {
        Ok(Columns {
            segment: segment_ord,
            fields: fields.of(segment)?,
            about: about.of_segment(segment_ord),
            boost,
        })
    }

    /// The score of `doc`, weighed by its kind and whether it is about the
    /// query ([`weigh`]), and by replication when asked.
    #[inline]
    pub(super) fn score(&self, doc: DocId, score: Score) -> Score {
        self.score_of_kind(doc, score, self.kind(doc))
    }

    /// [`Columns::score`] of a document of `kind`, read already.
    #[inline]
    fn score_of_kind(&self, doc: DocId, score: Score, kind: PageKind) -> Score {
        let score = self.about.weigh(doc, score, kind);
        match self.boost {
            Some(boost) => replication_boost(
                score,
                u64::from(self.fields.replication[doc as usize]),
                boost,
            ),
            None => score,
        }
    }

    /// The segment's documents of group `group` ([`Pair::group`]), in
    /// order.
    pub(super) fn of_group(&self, group: u32) -> &[DocId] {
        self.fields.by_group.of_group(group)
    }

    /// The number of `doc`'s pair ([`Pair`]), and of its place in its
    /// manual in the generation ([`SegmentFields`]' `counted`).
    #[inline]
    pub(super) fn pair_and_place(&self, doc: DocId) -> [u32; 2] {
        self.fields.counted[doc as usize]
    }

    #[inline]
    fn cluster(&self, doc: DocId) -> Option<ClusterId> {
        decoded_id(self.fields.cluster[doc as usize]).map(ClusterId)
    }

    #[inline]
    fn lineage(&self, doc: DocId) -> Option<LineagePlace> {
        decoded_id(self.fields.lineage[doc as usize]).map(|lineage| LineagePlace {
            lineage: LineageId(lineage),
            copy: self.fields.lineage_copy[doc as usize],
        })
    }

    #[inline]
    fn collection(&self, doc: DocId) -> Option<CollectionId> {
        decoded_id(self.fields.collection[doc as usize]).map(CollectionId)
    }

    #[inline]
    pub(super) fn page(&self, doc: DocId) -> PageId {
        PageId(self.fields.page[doc as usize])
    }

    #[inline]
    fn kind(&self, doc: DocId) -> PageKind {
        PageKind::from_u64(u64::from(self.fields.kind[doc as usize]))
    }

    #[inline]
    fn host(&self, doc: DocId) -> u32 {
        self.fields.host[doc as usize]
    }

    /// The number of `doc`'s place in its manual ([`SegmentFields`]'s
    /// `place`), [`NONE`] for none.
    #[inline]
    fn manual_page(&self, doc: DocId) -> u64 {
        match self.fields.place[doc as usize] {
            NO_ID => NONE,
            place => u64::from(place),
        }
    }

    /// What the fold counts of `doc` ([`Fold::count`]): its entry (with
    /// `by_page`, a manual's page in all its copies), collection when it
    /// has a cluster (a page in no cluster is in no collection), place in
    /// its manual, whether it is a listing (its `kind`, read once with its
    /// score's), its host and its place's number in its manual ([`NONE`]
    /// for none).
    #[inline(always)]
    pub(super) fn counted(&self, doc: DocId, by_page: bool, kind: PageKind) -> Counted {
        let cluster = self.cluster(doc);
        let lineage = self.lineage(doc);
        let manual_page = match lineage {
            Some(_) => self.manual_page(doc),
            None => NONE,
        };
        Counted {
            entry: match lineage {
                Some(place) if by_page => Some(EntryKey::ManualPage(place.lineage, manual_page)),
                _ => super::rollup::entry_key(lineage, cluster),
            },
            collection: cluster.and_then(|_| self.collection(doc)),
            lineage,
            listing: kind.is_listing(),
            host: self.host(doc),
            manual_page,
        }
    }

    /// The most [`Columns::score`] multiplies a score by for a document
    /// that the query does not weigh up ([`SegmentAbout::weighed_up`]):
    /// 1, or the replication boost of the segment's most copied page.
    pub(super) fn bound(&self) -> Score {
        match self.boost {
            Some(boost) => {
                replication_boost(1.0, u64::from(self.fields.most_copies), boost).max(1.0)
            }
            None => 1.0,
        }
    }

    pub(super) fn about(&self) -> &SegmentAbout {
        &self.about
    }

    #[inline]
    pub(super) fn hit(&self, doc: DocId, score: Score) -> Hit {
        let kind = self.kind(doc);
        Hit {
            score: self.score_of_kind(doc, score, kind),
            page: self.page(doc),
            collection: self.collection(doc),
            cluster: self.cluster(doc),
            lineage: self.lineage(doc),
            host: self.host(doc),
            listing: kind.is_listing(),
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

#[inline]
fn decoded_id(value: u32) -> Option<u32> {
    (value != NO_ID).then_some(value)
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
                (segment_local_id, segment),
                &self.fields,
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
    /// The fold segments collected one after another go on filling
    /// ([`SharedFold`]).
    pub shared: SharedFold,
    /// The index's roll-up fields, decoded.
    pub fields: Arc<RollupFields>,
}

/// The fold of a search's segments, handed from each segment to the next.
/// tantivy's searcher collects a search's segments in turn: each goes on
/// folding into the fold the last one left, rather than into one of its
/// own merged with the others at the end (a fold's entries hashed again,
/// its counts per collection allocated and added, once a segment). A
/// segment collected while another holds the fold (an executor running
/// segments at once) folds into its own, merged as before.
#[derive(Debug, Clone, Default)]
pub struct SharedFold(Arc<std::sync::Mutex<Option<Fold>>>);

impl SharedFold {
    fn take(&self) -> Option<Fold> {
        self.0.lock().ok()?.take()
    }

    /// Leaves `fold` for the next segment; gives it back when another
    /// segment left one already.
    fn leave(&self, fold: Fold) -> Option<Fold> {
        match self.0.lock() {
            Ok(mut slot) if slot.is_none() => {
                *slot = Some(fold);
                None
            }
            _ => Some(fold),
        }
    }
}

pub struct FoldSegmentCollector {
    columns: Columns,
    principals: Arc<Principals>,
    fold: Fold,
    by_page: bool,
    shared: SharedFold,
}

impl Collector for FoldCollector {
    type Fruit = Fold;
    type Child = FoldSegmentCollector;

    fn for_segment(
        &self,
        segment_local_id: SegmentOrdinal,
        segment: &SegmentReader,
    ) -> tantivy::Result<FoldSegmentCollector> {
        let fold = self.shared.take();
        Ok(FoldSegmentCollector {
            columns: Columns::open(
                (segment_local_id, segment),
                &self.fields,
                self.replication_boost,
                &self.about,
            )?,
            principals: Arc::clone(&self.principals),
            fold: fold.unwrap_or_else(|| Fold::new(self.wanted, self.collections)),
            by_page: self.by_page,
            shared: self.shared.clone(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Option<Fold>>) -> tantivy::Result<Fold> {
        let mut merged = self
            .shared
            .take()
            .unwrap_or_else(|| Fold::new(self.wanted, self.collections));
        for fruit in fruits.into_iter().flatten() {
            merged.merge(fruit);
        }
        Ok(merged)
    }
}

impl SegmentCollector for FoldSegmentCollector {
    type Fruit = Option<Fold>;

    /// Reads the cluster and manual of every hit, its collection when it
    /// has a cluster (a page in no cluster is in no collection), and its
    /// page only when the hit may become a group's best.
    fn collect(&mut self, doc: DocId, score: Score) {
        let columns = &self.columns;
        let kind = columns.kind(doc);
        let score = columns.score_of_kind(doc, score, kind);
        let Counted {
            entry,
            collection,
            lineage,
            listing,
            host,
            manual_page,
        } = columns.counted(doc, self.by_page, kind);
        let principals = &self.principals;
        self.fold.add_lazily(
            score,
            entry,
            collection,
            lineage,
            listing,
            (host, manual_page),
            || Hit {
                score,
                page: columns.page(doc),
                collection,
                cluster: columns.cluster(doc),
                lineage,
                host,
                listing,
                doc: DocAddress::new(columns.segment, doc),
            },
            |key| principals.of(key),
        );
    }

    fn harvest(self) -> Option<Fold> {
        self.shared.leave(self.fold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::PageDocument;

    /// The documents a query weighs up are those of any word's set or of
    /// the named set, whatever bucket of 64 they fall in; none, when no set
    /// holds any.
    #[test]
    fn the_documents_weighed_up_are_the_union_of_the_sets() {
        let documents = 300;
        let set_of = |docs: &[u32]| {
            let mut words = vec![0u64; documents as usize / 64 + 1];
            for &doc in docs {
                words[doc as usize / 64] |= 1 << (doc % 64);
            }
            Arc::new(DocBits::new(words))
        };
        let about = SegmentAbout {
            words: 3,
            sets: vec![set_of(&[0, 63, 64, 299]), set_of(&[5, 64, 200])],
            named: Some(set_of(&[127, 128])),
        };
        let union = about.weighed_up(documents).expect("some are weighed up");
        let weighed: Vec<u32> = (0..documents)
            .filter(|&doc| union[doc as usize / 64] >> (doc % 64) & 1 == 1)
            .collect();
        assert_eq!(weighed, [0, 5, 63, 64, 127, 128, 200, 299]);
        assert!(SegmentAbout::default().weighed_up(documents).is_none());
    }

    /// The decoded roll-up fields read back what each document was given,
    /// an id of none as none, and a value too wide for its slot at its
    /// slot's most; a manual's places are numbered from 0, the same place
    /// with the same number in every segment.
    #[test]
    fn a_segments_roll_up_fields_decode_to_what_its_documents_were_given() {
        let (schema, fields) = crate::index::schema::build();
        let index = tantivy::Index::create_in_ram(schema);
        index
            .tokenizers()
            .register(crate::index::TEXT_TOKENIZER, crate::index::text_analyzer());
        let mut writer = index.writer_with_num_threads(1, 15_000_000).unwrap();
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        let document = |page: u32, id: u64, copy: u64, replication: u64, place: u64| PageDocument {
            page: PageId(page),
            collection: id,
            cluster: id,
            replication,
            inlinks_from_other_hosts: 0,
            host_id: u64::from(page) + 100,
            lineage: id,
            lineage_copy: copy,
            kind: PageKind::Listing as u64,
            manual_page: place,
            title: "a title",
            body: "some words",
            headings: "",
            chrome: "",
            url: "https://a.example/",
            host: "a.example",
        };
        let key = 0x9e37_79b9_7f4a_7c15;
        for document in [
            document(7, NONE, 0, 1, NONE),
            document(8, 42, 3, 5, key),
            document(9, 42, 1 << 20, 1 << 40, key + 1),
        ] {
            writer.add_document(fields.document(&document)).unwrap();
        }
        writer.commit().unwrap();
        // A second segment: the first place of manual 42 in another copy,
        // and a place of another manual under the same key.
        writer
            .add_document(fields.document(&document(10, 42, 1, 1, key)))
            .unwrap();
        writer
            .add_document(fields.document(&document(11, 43, 0, 1, key)))
            .unwrap();
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        assert_eq!(searcher.segment_readers().len(), 2);
        let decoded = RollupFields::read(&searcher).unwrap();
        // 39 bytes a document, and its number by group: 4 bytes, and 8 a
        // group of a segment (two groups in each); the live documents
        // counted by pair and by place: 4 bytes a pair (five, one a
        // document) and a place (three: manual 42's two, 43's one).
        assert_eq!(decoded.bytes(), 5 * 39 + 5 * 4 + 4 * 8 + (5 + 3) * 4);
        let mut by_page = FxHashMap::default();
        let mut pairs = FxHashMap::default();
        for (ordinal, segment) in searcher.segment_readers().iter().enumerate() {
            let columns = Columns::open(
                (ordinal as SegmentOrdinal, segment),
                &decoded,
                None,
                &Arc::default(),
            )
            .unwrap();
            for doc in 0..segment.max_doc() {
                let page = columns.page(doc).0;
                let [pair, place] = columns.pair_and_place(doc);
                let pair = *decoded.pair(pair);
                assert!(columns.of_group(pair.group).contains(&doc));
                pairs.insert(page, (pair, place));
                let fields = decoded.of(segment).unwrap();
                by_page.insert(
                    page,
                    (
                        columns.cluster(doc),
                        columns.collection(doc),
                        columns.lineage(doc),
                        columns.manual_page(doc),
                        columns.host(doc),
                        columns.kind(doc),
                        fields.replication(doc),
                    ),
                );
            }
            assert_eq!(decoded.of(segment).unwrap().kind(segment.max_doc()), None);
        }
        let place = |lineage, copy| {
            Some(LineagePlace {
                lineage: LineageId(lineage),
                copy,
            })
        };
        let listing = PageKind::Listing;
        assert_eq!(by_page[&7], (None, None, None, NONE, 107, listing, Some(1)));
        assert_eq!(
            by_page[&8],
            (
                Some(ClusterId(42)),
                Some(CollectionId(42)),
                place(42, 3),
                0,
                108,
                listing,
                Some(5)
            )
        );
        assert_eq!(
            by_page[&9],
            (
                Some(ClusterId(42)),
                Some(CollectionId(42)),
                place(42, u16::MAX),
                1,
                109,
                listing,
                Some(u64::from(u32::MAX))
            )
        );
        assert_eq!(by_page[&10].3, 0, "the same place in another segment");
        // A manual's pages in every segment are one group, its copies and
        // collections pairs of it; its places are numbered in the
        // generation as in the manual.
        let group = |page: u32| pairs[&page].0.group;
        assert_eq!(group(8), group(9));
        assert_eq!(group(8), group(10));
        assert_ne!(group(8), group(11));
        assert_ne!(group(7), group(8));
        assert_eq!(
            pairs[&7].0.entry, None,
            "a page in no cluster is its host's"
        );
        assert_eq!(pairs[&8].0.entry, Some(EntryKey::Lineage(LineageId(42))));
        assert_eq!((pairs[&8].0.copy, pairs[&10].0.copy), (Some(3), Some(1)));
        assert_eq!(pairs[&8].1, pairs[&10].1, "one place, in two copies");
        assert_ne!(pairs[&8].1, pairs[&9].1);
        assert_ne!(pairs[&10].1, pairs[&11].1, "another manual's place");
        assert_eq!(pairs[&7].1, NO_ID);
        assert_eq!(decoded.manual_places(), 3);
        // A manual's places are numbered one after another.
        let range = |page: u32| decoded.places_of(group(page)).unwrap();
        assert_eq!(range(8).len(), 2);
        assert_eq!(range(11).len(), 1);
        assert!(range(8).contains(&pairs[&9].1) && range(11).contains(&pairs[&11].1));
        assert_eq!(decoded.places_of(group(7)), None);
        assert_eq!(decoded.groups(), 3);
        assert_eq!(by_page[&11].3, 0, "another manual numbers its own places");
    }

    /// Segments collected in turn fold into one fold; a segment collected
    /// while another holds it folds into its own, merged at the end.
    #[test]
    fn segments_in_turn_share_one_fold_and_segments_at_once_keep_their_own() {
        let shared = SharedFold::default();
        assert!(shared.take().is_none());
        let mut first = Fold::new(10, 4);
        first.add(
            Hit {
                score: 1.0,
                page: PageId(1),
                collection: None,
                cluster: None,
                lineage: None,
                host: 0,
                listing: false,
                doc: DocAddress::new(0, 1),
            },
            |_| Shown::Best,
        );
        assert!(shared.leave(first).is_none(), "left for the next segment");
        let taken = shared.take().expect("the fold the first segment left");
        assert_eq!(taken.finish().total_hits, 1);
        assert!(shared.leave(Fold::new(10, 4)).is_none());
        let other = shared.leave(Fold::new(10, 4));
        assert!(other.is_some(), "a second fold is handed back to be merged");
    }

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
