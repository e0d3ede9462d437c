//! Rolled-up search counting every hit and scoring in full only what a
//! results page shows, with the same results as folding every scored hit
//! ([`super::collector::FoldCollector`]) at a fraction of its cost: a broad
//! query matches a third of a crawl, and weighing and keeping each of its
//! hits cost more than finding them.
//!
//! 1. **Count.** Every matching document is counted, without a score, by
//!    what it shares with many others ([`super::collector::Pair`]: its
//!    group, host, copy, collection, kind), one number a hit, each pair's
//!    count added to its group once at the end ([`Fold::count_many`]): the
//!    totals, each entry's pages and the facets are exact. A search matching
//!    most documents is counted by those it misses instead, each pair's
//!    hits its live documents less its misses ([`Tally::miss`]).
//! 2. **Rank.** A hit is offered ([`Fold::offer`]) only when its score may
//!    reach the `wanted`-th best group's so far (a group ranks by its best
//!    page's score, so a page below it changes no results page). A page's
//!    raw score is its text's ([`SearchQuery::matching`]) plus what its
//!    title, headings and path add ([`SearchQuery::bonus`]), and weighing
//!    only lowers it ([`super::collector::weigh`]) but for the pages about
//!    the query, and by replication when asked, bounded by the most copied
//!    page's. So the pages with a bonus and those about the query are
//!    scored whole, each looked up; every other page's raw score is its
//!    text's, and tantivy skips the blocks of postings whose best score is
//!    below the bar ([`Weight::for_each_pruning`]: block-max WAND for a
//!    word, and for a conjunction of words). A host's pages in no cluster
//!    rank by their best page of prose, known only once all are counted:
//!    such a group raises the bar only by a page of prose.
//! 3. **Show.** Every matching page of the best groups is scored, each
//!    looked up: the page an entry is shown from, its sitelinks and a
//!    host's "more from this site" come from their own pages, which may
//!    score below the others.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use tantivy::postings::BlockSegmentPostings;
use tantivy::query::{Bm25Weight, BooleanQuery, EnableScoring, Occur, Query, TermQuery, Weight};
use tantivy::schema::IndexRecordOption;

use crate::index::SearchQuery;
use tantivy::{DocId, DocSet, Score, Searcher, SegmentOrdinal, SegmentReader, Term};

use super::collector::{About, Columns, DocBits, Principals, RollupFields, NO_ID};
use super::rollup::{result_order, Fold, Hit, Slot};
use crate::pages::PageId;

/// A rolled-up search's settings ([`super::collector::FoldCollector`]'s
/// but for a search within one manual, which that collector runs).
pub struct PrunedFold<'a> {
    /// `Some(boost)` ranks by replication.
    pub replication_boost: Option<f32>,
    /// Groups to build in full: those up to the results page asked for.
    pub wanted: usize,
    /// Collections in the generation.
    pub collections: usize,
    /// Which pages each entry is shown from.
    pub principals: &'a Principals,
    /// The documents about the query.
    pub about: &'a Arc<About>,
    /// The index's roll-up fields, decoded.
    pub fields: &'a RollupFields,
}

/// A score's margin below the bar: a weighed score is a product of rounded
/// factors, and offering a hit more changes nothing.
const MARGIN: Score = 1.0 - 1e-4;

/// Hits counted by pair ([`super::collector::Pair`]), each pair's count
/// added to its group once ([`Tally::settle`]).
struct Tally {
    /// Hits by pair number.
    hits: Vec<u32>,
    /// The pairs with a hit, each once: in order of first hit, or of
    /// number when counted by misses (nothing depends on the order).
    touched: Vec<u32>,
    /// The places in manuals met ([`Columns::pair_and_place`]), a bit
    /// each, and one more for none.
    places_seen: Vec<u64>,
    /// The bit for no place.
    no_place: u32,
    /// The live documents a search misses ([`Found::for_each_missed`]),
    /// summed over every segment, by pair and by place (one more for
    /// none); empty until [`Tally::ready_for_misses`].
    missed: Vec<u32>,
    places_missed: Vec<u32>,
}

impl Tally {
    fn new(fields: &RollupFields) -> Tally {
        let no_place = fields.manual_places();
        Tally {
            hits: vec![0; fields.pairs() as usize],
            touched: Vec::new(),
            places_seen: vec![0u64; no_place as usize / 64 + 1],
            no_place,
            missed: Vec::new(),
            places_missed: Vec::new(),
        }
    }

    /// Counts a hit of pair `pair` at place `place` ([`NO_ID`] for none).
    #[inline]
    fn count(&mut self, pair: u32, place: u32) {
        let hits = &mut self.hits[pair as usize];
        if *hits == 0 {
            self.touched.push(pair);
        }
        *hits += 1;
        // No place, `NO_ID`, is above every place; without a branch:
        // whether a hit is of a manual comes in no order a processor could
        // guess.
        const _: () = assert!(NO_ID == u32::MAX);
        let place = place.min(self.no_place) as usize;
        self.places_seen[place / 64] |= 1 << (place % 64);
    }

    /// Counts a live document of pair `pair` at place `place` ([`NO_ID`]
    /// for none) that a search misses ([`Tally::count_all_but_missed`]).
    #[inline]
    fn miss(&mut self, pair: u32, place: u32) {
        self.missed[pair as usize] += 1;
        self.places_missed[place.min(self.no_place) as usize] += 1;
    }

    /// Makes room to count misses ([`Tally::miss`]).
    fn ready_for_misses(&mut self) {
        if self.missed.is_empty() {
            self.missed = vec![0; self.hits.len()];
            self.places_missed = vec![0; self.no_place as usize + 1];
        }
    }

    /// Counts the hits of a search whose misses were counted in every
    /// segment, and no hit: of each pair, its live documents
    /// (`alive_by_pair`) less those missed; each place with more live
    /// documents (`alive_by_place`) than missed is met.
    fn count_all_but_missed(&mut self, (alive_by_pair, alive_by_place): (&[u32], &[u32])) {
        debug_assert!(self.touched.is_empty(), "hits counted already");
        for (pair, (&alive, &missed)) in alive_by_pair.iter().zip(&self.missed).enumerate() {
            let hits = alive.saturating_sub(missed);
            if hits > 0 {
                self.hits[pair] += hits;
                self.touched.push(pair as u32);
            }
        }
        let places = alive_by_place.chunks(64).zip(self.places_missed.chunks(64));
        for (word, (alive, missed)) in self.places_seen.iter_mut().zip(places) {
            for (bit, (&alive, &missed)) in alive.iter().zip(missed).enumerate() {
                *word |= u64::from(alive > missed) << bit;
            }
        }
    }

    /// The places met of the range `places`.
    fn places_in(&self, places: std::ops::Range<u32>) -> u32 {
        range_masks(places.start as usize..places.end as usize)
            .map(|(at, mask)| (self.places_seen[at] & mask).count_ones())
            .sum()
    }

    /// Adds each pair's count to its group in `fold`, and each manual's
    /// entry's places met.
    fn settle(&self, fold: &mut Fold, fields: &RollupFields, principals: &Principals) {
        let groups = fields.groups() as usize / 64 + 1;
        // Room for the groups met, made once.
        let mut met = vec![0u64; groups];
        let (mut entries, mut sites) = (0, 0);
        for &number in &self.touched {
            let pair = fields.pair(number);
            if first_time(&mut met, pair.group) {
                match pair.entry {
                    Some(_) => entries += 1,
                    None => sites += 1,
                }
            }
        }
        fold.reserve(entries, sites);
        let mut placed = vec![0u64; groups];
        for &number in &self.touched {
            let pair = fields.pair(number);
            let hits = self.hits[number as usize];
            let places = match fields.places_of(pair.group) {
                Some(range) if first_time(&mut placed, pair.group) => self.places_in(range),
                _ => 0,
            };
            fold.count_many(
                pair.group,
                pair.entry,
                pair.collection,
                (pair.host, pair.copy),
                (hits, if pair.listing { 0 } else { hits }, places),
                |key| principals.of(key),
            );
        }
    }
}

impl PrunedFold<'_> {
    /// Folds the hits of `query` in `searcher`'s segments.
    pub fn search(&self, searcher: &Searcher, query: &SearchQuery) -> tantivy::Result<Fold> {
        let fields = self.fields;
        let principals = self.principals;
        let mut fold = Fold::of_groups(self.wanted, self.collections, fields.groups());
        let weights = Weights::of(searcher, query)?;

        // 1. Count, and 2. rank.
        let segments: Vec<Columns> = searcher
            .segment_readers()
            .iter()
            .enumerate()
            .map(|(ordinal, segment)| {
                Columns::open(
                    (ordinal as SegmentOrdinal, segment),
                    fields,
                    self.replication_boost,
                    self.about,
                )
            })
            .collect::<tantivy::Result<_>>()?;
        let mut tally = Tally::new(fields);
        let mut leaders = Leaders::new(self.wanted);
        count(searcher, &segments, &weights, &mut tally, fields)?;
        for (segment, columns) in searcher.segment_readers().iter().zip(&segments) {
            self.rank((&mut fold, &mut leaders), (segment, columns), &weights)?;
        }
        tally.settle(&mut fold, fields, principals);
        if self.wanted == 0 || fold.is_empty() {
            return Ok(fold);
        }

        // 3. Show: the pages of the leading groups, each looked up.
        let scored = query.weight(EnableScoring::enabled_from_searcher(searcher))?;
        let (entries, sites) = fold.groups_counted();
        let mut chosen = (vec![false; entries], vec![false; sites]);
        for slot in fold.leading() {
            match slot {
                Slot::Entry(at) => chosen.0[at as usize] = true,
                Slot::Site(at) => chosen.1[at as usize] = true,
            }
        }
        let mut leading: Vec<(u32, Slot)> = tally
            .touched
            .iter()
            .filter_map(|&number| {
                let group = fields.pair(number).group;
                let slot = fold.slot_of_group(group)?;
                let chosen = match slot {
                    Slot::Entry(at) => chosen.0[at as usize],
                    Slot::Site(at) => chosen.1[at as usize],
                };
                chosen.then_some((group, slot))
            })
            .collect();
        leading.sort_unstable_by_key(|&(group, _)| group);
        leading.dedup_by_key(|&mut (group, _)| group);
        for (segment, columns) in searcher.segment_readers().iter().zip(&segments) {
            let mut pages: Vec<(DocId, Slot)> = leading
                .iter()
                .flat_map(|&(group, slot)| {
                    columns.of_group(group).iter().map(move |&doc| (doc, slot))
                })
                .collect();
            if pages.is_empty() {
                continue;
            }
            pages.sort_unstable_by_key(|&(doc, _)| doc);
            let mut scorer = scored.scorer(segment, 1.0)?;
            for (doc, slot) in pages {
                if scorer.doc() < doc && scorer.seek(doc) == tantivy::TERMINATED {
                    break;
                }
                if scorer.doc() == doc && !segment.is_deleted(doc) {
                    fold.offer(slot, columns.hit(doc, scorer.score()));
                }
            }
        }
        Ok(fold)
    }

    /// Offers to `fold` the hits of one segment that may rank: first those
    /// scored apart (the pages whose title, headings or path hold a word of
    /// the query, and those the query weighs up), each scored whole; then the
    /// others, by their text's score alone, as tantivy finds those above
    /// the bar ([`Weight::for_each_pruning`]).
    fn rank(
        &self,
        (fold, leaders): (&mut Fold, &mut Leaders),
        (segment, columns): (&SegmentReader, &Columns),
        weights: &Weights,
    ) -> tantivy::Result<()> {
        let (fields, principals) = (self.fields, self.principals);
        let bound = columns.bound();
        let alive = segment.alive_bitset();
        let dead = |doc: DocId| alive.is_some_and(|alive| !alive.is_alive(doc));
        // The bar a weighed score must reach to be offered, kept with the
        // raw score that does, as a weighed score is at most `bound` times
        // the raw one but for the pages about the query.
        let bar = Cell::new(leaders.bar() * MARGIN);
        let mut offer = |doc: DocId, score: Score| {
            let pair = fields.pair(columns.pair_and_place(doc)[0]);
            let slot =
                fold.slot_for_group(pair.group, pair.entry, pair.host, |key| principals.of(key));
            fold.offer(slot, columns.hit(doc, score));
            if let Some(ranked) = fold.sure_rank(slot) {
                leaders.note(pair.group, ranked);
                bar.set(leaders.bar() * MARGIN);
            }
        };

        let apart = scored_apart(segment, columns, weights, &bar, &mut |doc, score| {
            if columns.score(doc, score) >= bar.get() {
                offer(doc, score);
            }
        })?;

        // The others: their text's score is their whole raw score.
        weights
            .matching
            .for_each_pruning(bar.get() / bound, segment, &mut |doc, score| {
                if !is_set(&apart, doc) && !dead(doc) {
                    offer(doc, score);
                }
                bar.get() / bound
            })
    }
}

/// Sets bit `at` of `bits`; whether it was not set before.
#[inline]
fn first_time(bits: &mut [u64], at: u32) -> bool {
    let (word, bit) = (at as usize / 64, 1u64 << (at % 64));
    let first = bits[word] & bit == 0;
    bits[word] |= bit;
    first
}

/// Whether `doc`'s bit is set in `set` (document `d` is bit `d % 64` of
/// word `d / 64`).
#[inline]
fn is_set(set: &[u64], doc: DocId) -> bool {
    set[doc as usize / 64] >> (doc % 64) & 1 == 1
}

/// Scores whole the hits of one segment whose score is more than their
/// text's: those whose title, headings or path hold a word of the query
/// (the bonus's documents) and those the query weighs up, each looked up;
/// gives each to `visit` with its raw score (as tantivy scores the whole
/// query: the text's, plus the bonus's where it matches). Returns them, as
/// a set of bits over the segment's documents, matching or not. A page
/// whose weighed score would stay below `bar` (as it is then) even were its
/// text's the most any text scores ([`Weights::text_ceiling`]) is not
/// looked up: it would not be visited, as it may reach no results page.
fn scored_apart(
    segment: &SegmentReader,
    columns: &Columns,
    weights: &Weights,
    bar: &Cell<Score>,
    visit: &mut dyn FnMut(DocId, Score),
) -> tantivy::Result<Vec<u64>> {
    let alive = segment.alive_bitset();
    let mut apart = columns
        .about()
        .weighed_up(segment.max_doc())
        .unwrap_or_else(|| vec![0; segment.max_doc() as usize / 64 + 1]);
    let mut bonuses: Vec<(DocId, Score)> = Vec::new();
    if let Some(bonus) = &weights.bonus {
        bonus.for_each(segment, &mut |doc, score| {
            bonuses.push((doc, score));
            set_bit(&mut apart, doc);
        })?;
    }
    let mut scorer = weights.matching.scorer(segment, 1.0)?;
    let mut bonuses = bonuses.into_iter().peekable();
    for doc in ones(&apart) {
        let bonus = match bonuses.next_if(|&(bonused, _)| bonused <= doc) {
            Some((bonused, score)) if bonused == doc => score,
            _ => 0.0,
        };
        if columns.score(doc, bonus + weights.text_ceiling) < bar.get() {
            continue;
        }
        if scorer.doc() < doc && scorer.seek(doc) == tantivy::TERMINATED {
            break;
        }
        if scorer.doc() == doc && alive.is_none_or(|alive| alive.is_alive(doc)) {
            visit(doc, scorer.score() + bonus);
        }
    }
    Ok(apart)
}

/// The flat list (`rollup=off`): the count of `query`'s hits, and its best
/// `wanted` by weighed score as the roll-up weighs it ([`Columns::score`]:
/// the page's kind and what it is about, the replication boost when asked
/// for), then the lower page id, so that equal scores come in the same
/// order whichever segments the pages were written to; found as the
/// rolled-up search finds
/// its groups: counted without scores, the hits with a bonus or weighed up
/// scored whole, the others by their text's score, pruned below the
/// `wanted`-th best so far.
pub fn flat_best(
    searcher: &Searcher,
    query: &SearchQuery,
    wanted: usize,
    (boost, about, fields): (Option<f32>, &Arc<About>, &RollupFields),
) -> tantivy::Result<(usize, Vec<(Score, tantivy::DocAddress)>)> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let weights = Weights::of(searcher, query)?;
    // The best so far, the worst on top.
    let mut best: BinaryHeap<Reverse<Flat>> = BinaryHeap::new();
    let mut count = 0;
    for (ordinal, segment) in searcher.segment_readers().iter().enumerate() {
        let ordinal = ordinal as SegmentOrdinal;
        count += weights.counted.count(segment)? as usize;
        if wanted == 0 {
            continue;
        }
        let columns = Columns::open((ordinal, segment), fields, boost, about)?;
        let bound = columns.bound();
        let alive = segment.alive_bitset();
        // The weighed score a hit must reach: the `wanted`-th best's.
        let bar = |best: &BinaryHeap<Reverse<Flat>>| match best.peek() {
            Some(Reverse(worst)) if best.len() == wanted => worst.score * MARGIN,
            _ => Score::NEG_INFINITY,
        };
        let offer = |best: &mut BinaryHeap<Reverse<Flat>>, doc: DocId, raw: Score| {
            let hit = Flat {
                score: columns.score(doc, raw),
                page: Reverse(columns.page(doc).0),
                address: tantivy::DocAddress::new(ordinal, doc),
            };
            if best.len() < wanted {
                best.push(Reverse(hit));
            } else if best.peek().is_some_and(|Reverse(worst)| hit > *worst) {
                best.pop();
                best.push(Reverse(hit));
            }
        };
        let weighed_bar = Cell::new(bar(&best));
        let apart = scored_apart(
            segment,
            &columns,
            &weights,
            &weighed_bar,
            &mut |doc, raw| {
                offer(&mut best, doc, raw);
                weighed_bar.set(bar(&best));
            },
        )?;
        let mut raw_bar = bar(&best) / bound;
        weights
            .matching
            .for_each_pruning(raw_bar, segment, &mut |doc, raw| {
                if !is_set(&apart, doc) && alive.is_none_or(|alive| alive.is_alive(doc)) {
                    offer(&mut best, doc, raw);
                    raw_bar = bar(&best) / bound;
                }
                raw_bar
            })?;
    }
    let mut best: Vec<Flat> = best.into_iter().map(|Reverse(hit)| hit).collect();
    best.sort_unstable_by(|a, b| b.cmp(a));
    Ok((
        count,
        best.into_iter()
            .map(|hit| (hit.score, hit.address))
            .collect(),
    ))
}

/// A hit of the flat list, ordered as it is listed, best greatest.
#[derive(Debug, Clone, Copy)]
struct Flat {
    score: Score,
    page: std::cmp::Reverse<u32>,
    address: tantivy::DocAddress,
}

impl PartialEq for Flat {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for Flat {}

impl PartialOrd for Flat {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Flat {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.score
            .total_cmp(&other.score)
            .then(self.page.cmp(&other.page))
    }
}

/// A search's weights ([`SearchQuery`]).
struct Weights {
    /// What a page must match, without scores: to count.
    counted: Box<dyn Weight>,
    /// Its shape, when its hits are read straight from the postings.
    counting: Counting,
    /// The most a page's text may score for `matching` (infinite when not
    /// known): a page whose score is its text's and a bonus known already
    /// is looked up only when that much could make it rank
    /// ([`scored_apart`]).
    text_ceiling: Score,
    /// What a page must match, scored by its text.
    matching: Box<dyn Weight>,
    /// What its title, headings and path add.
    bonus: Option<Box<dyn Weight>>,
}

impl Weights {
    fn of(searcher: &Searcher, query: &SearchQuery) -> tantivy::Result<Weights> {
        let scoring = EnableScoring::enabled_from_searcher(searcher);
        let counting = Counting::of(&*query.matching);
        Ok(Weights {
            text_ceiling: counting.text_ceiling(searcher)?,
            counting,
            counted: query
                .matching
                .weight(EnableScoring::disabled_from_searcher(searcher))?,
            matching: query.matching.weight(scoring)?,
            bonus: query
                .bonus
                .as_ref()
                .map(|bonus| bonus.weight(scoring))
                .transpose()?,
        })
    }
}

/// Counts the hits of every segment into `tally`, without scores: by the
/// live documents they miss when they match more than half of the
/// segments' documents together ([`Found::matches`]), as a word on most
/// pages is cheaper counted by the few pages without it; else by their
/// hits.
fn count(
    searcher: &Searcher,
    segments: &[Columns],
    weights: &Weights,
    tally: &mut Tally,
    fields: &RollupFields,
) -> tantivy::Result<()> {
    let readers = searcher.segment_readers();
    let found: Vec<Option<Found>> = readers
        .iter()
        .map(|segment| weights.counting.find(segment))
        .collect::<tantivy::Result<_>>()?;
    // Fewer misses than hits over the segments, each read here, and the
    // generation's live documents the searcher's.
    let (mut matches, mut documents) = (0u64, 0u64);
    for (found, segment) in found.iter().zip(readers) {
        matches += found.as_ref().map_or(0, |found| u64::from(found.matches()));
        documents += u64::from(segment.max_doc());
    }
    let broad = found.iter().all(Option::is_some)
        && matches > documents / 2
        && fields.live_documents() == searcher.num_docs();
    if broad {
        tally.ready_for_misses();
        // Every segment's is read here (`broad`).
        for ((segment, columns), found) in readers
            .iter()
            .zip(segments)
            .zip(found.into_iter().flatten())
        {
            count_misses(segment, columns, found, tally);
        }
        tally.count_all_but_missed(fields.alive_by_pair_and_place());
        return Ok(());
    }
    for ((segment, columns), found) in readers.iter().zip(segments).zip(found) {
        count_hits(segment, columns, weights, found, tally)?;
    }
    Ok(())
}

/// Counts the hits of one segment into `tally` one by one: those `found`,
/// or those tantivy finds when the query's shape is not read here.
fn count_hits(
    segment: &SegmentReader,
    columns: &Columns,
    weights: &Weights,
    found: Option<Found>,
    tally: &mut Tally,
) -> tantivy::Result<()> {
    let alive = segment.alive_bitset();
    let mut visit = |docs: &[DocId]| match alive {
        None => {
            for &doc in docs {
                let [number, place] = columns.pair_and_place(doc);
                tally.count(number, place);
            }
        }
        Some(alive) => {
            for &doc in docs.iter().filter(|&&doc| alive.is_alive(doc)) {
                let [number, place] = columns.pair_and_place(doc);
                tally.count(number, place);
            }
        }
    };
    match found {
        Some(found) => found.for_each(&mut visit),
        None => weights.counted.for_each_no_score(segment, &mut visit)?,
    }
    Ok(())
}

/// Counts into `tally` (made ready, [`Tally::ready_for_misses`]) the live
/// documents of one segment that are not `found`, the hits to be counted
/// once every segment's are ([`Tally::count_all_but_missed`]).
fn count_misses(segment: &SegmentReader, columns: &Columns, found: Found, tally: &mut Tally) {
    let alive = segment.alive_bitset();
    found.for_each_missed(segment.max_doc(), &mut |docs: &[DocId]| {
        for &doc in docs {
            if alive.is_none_or(|alive| alive.is_alive(doc)) {
                let [number, place] = columns.pair_and_place(doc);
                tally.miss(number, place);
            }
        }
    });
}

/// The shapes most searches take, whose hits are read straight from their
/// postings when counted: tantivy hands a term's hits over one at a time
/// (each `advance` a call) and meets two words' by seeking one's postings
/// for each hit of the other, where a word's postings are blocks of 128
/// documents decoded at once, and two common words' hits are cheaper
/// found as the words' sets of documents, a bit each, intersected.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Counting {
    /// One word (a term query): its postings' blocks.
    Term(Term),
    /// Words all required (a boolean query of term queries, each a must),
    /// read as sets of bits when each is common ([`DENSE_SHARE`]).
    AllOf(Vec<Term>),
    /// Words any of which (a boolean query of term queries, each a should,
    /// one required): their sets of bits united.
    AnyOf(Vec<Term>),
    /// Any other query: tantivy's own iteration.
    Other,
}

/// A little over 1: [`Counting::text_ceiling`] times this bounds any sum of
/// its words' scores, whatever order it is rounded in.
const CEILING_MARGIN: Score = 1.0 + 1e-4;

/// The share of a segment's documents (one in this many) its rarest word
/// must hold for a conjunction to be counted by sets of bits
/// ([`Counting::AllOf`]): setting a bit costs a fraction of a seek, but each
/// word's every document is set, where seeking visits only the rarest
/// word's documents.
const DENSE_SHARE: u32 = 8;

impl Counting {
    pub(super) fn of(query: &dyn Query) -> Counting {
        if let Some(term) = query.downcast_ref::<TermQuery>() {
            return Counting::Term(term.term().clone());
        }
        let Some(boolean) = query.downcast_ref::<BooleanQuery>() else {
            return Counting::Other;
        };
        let clauses = boolean.clauses();
        let all = |occur: Occur| -> Option<Vec<Term>> {
            clauses
                .iter()
                .map(|(said, clause)| {
                    let term = clause.downcast_ref::<TermQuery>()?;
                    (*said == occur).then(|| term.term().clone())
                })
                .collect()
        };
        if clauses.is_empty() {
            return Counting::Other;
        }
        if let Some(terms) = all(Occur::Must) {
            return Counting::AllOf(terms);
        }
        match all(Occur::Should) {
            Some(terms) if boolean.get_minimum_number_should_match() <= 1 => Counting::AnyOf(terms),
            _ => Counting::Other,
        }
    }

    /// The most a page's text may score for this query as tantivy scores
    /// it (BM25 on `searcher`'s statistics; a conjunction's, the sum of its
    /// words'): a word's weight, its score as its frequency grows without
    /// bound, which no page reaches. Infinite for [`Counting::Other`].
    fn text_ceiling(&self, searcher: &Searcher) -> tantivy::Result<Score> {
        let terms = match self {
            Counting::Term(term) => std::slice::from_ref(term),
            // A union scores the sum of the words a page holds.
            Counting::AllOf(terms) | Counting::AnyOf(terms) => terms.as_slice(),
            Counting::Other => return Ok(Score::INFINITY),
        };
        let mut ceiling: Score = 0.0;
        for term in terms {
            let weight = Bm25Weight::for_terms(searcher, std::slice::from_ref(term))?;
            ceiling += weight.score(0, u32::MAX);
        }
        // Sums rounded in another order than tantivy's may differ by as
        // little: this much more covers it.
        Ok(ceiling * CEILING_MARGIN)
    }

    /// The documents of `segment` that match, deleted ones too, for the
    /// shapes read here but a rare words' conjunction; `None` for those.
    fn find(&self, segment: &SegmentReader) -> tantivy::Result<Option<Found>> {
        let max_doc = segment.max_doc();
        let postings = |terms: &[Term]| -> tantivy::Result<Vec<BlockSegmentPostings>> {
            let mut all = Vec::with_capacity(terms.len());
            for term in terms {
                all.extend(block_postings(segment, term)?);
            }
            Ok(all)
        };
        Ok(match self {
            Counting::Term(term) => Some(match block_postings(segment, term)? {
                Some(postings) => Found::Postings(Box::new(postings)),
                None => Found::Nothing,
            }),
            Counting::AnyOf(terms) => {
                Some(Found::bits(combine_bits(max_doc, postings(terms)?, false)))
            }
            Counting::AllOf(terms) => {
                let all = postings(terms)?;
                // A word the segment lacks: no hit.
                if all.len() < terms.len() {
                    return Ok(Some(Found::Nothing));
                }
                let rarest = all.iter().map(|postings| postings.doc_freq()).min();
                (rarest.unwrap_or(0).saturating_mul(DENSE_SHARE) >= max_doc)
                    .then(|| Found::bits(combine_bits(max_doc, all, true)))
            }
            Counting::Other => None,
        })
    }
}

/// The documents of a segment a query matches, deleted ones too
/// ([`Counting::find`]).
enum Found {
    /// No document.
    Nothing,
    /// One word's postings (a block of them decoded, hence boxed).
    Postings(Box<BlockSegmentPostings>),
    /// A set of bits (document `d` is bit `d % 64` of word `d / 64`), and
    /// how many are set.
    Bits(Vec<u64>, u32),
}

impl Found {
    fn bits(words: Vec<u64>) -> Found {
        let set = words.iter().map(|word| word.count_ones()).sum();
        Found::Bits(words, set)
    }

    /// How many documents match.
    fn matches(&self) -> u32 {
        match self {
            Found::Nothing => 0,
            Found::Postings(postings) => postings.doc_freq(),
            Found::Bits(_, set) => *set,
        }
    }

    /// Gives `visit` the documents, in blocks in order.
    fn for_each(self, visit: &mut dyn FnMut(&[DocId])) {
        match self {
            Found::Nothing => {}
            Found::Postings(mut postings) => {
                while !postings.docs().is_empty() {
                    visit(postings.docs());
                    postings.advance();
                }
            }
            Found::Bits(words, _) => visit_bits(&words, visit),
        }
    }

    /// Gives `visit` the documents below `max_doc` not found, in blocks in
    /// order.
    fn for_each_missed(self, max_doc: DocId, visit: &mut dyn FnMut(&[DocId])) {
        let mut words = self.into_bits(max_doc);
        for word in &mut words {
            *word = !*word;
        }
        // No document past the last.
        if let Some(last) = words.last_mut() {
            *last &= (1u64 << (max_doc % 64)) - 1;
        }
        visit_bits(&words, visit);
    }

    /// The documents below `max_doc`, as a set of bits.
    fn into_bits(self, max_doc: DocId) -> Vec<u64> {
        match self {
            Found::Bits(words, _) => words,
            Found::Nothing => vec![0; max_doc as usize / 64 + 1],
            Found::Postings(postings) => {
                let mut words = vec![0; max_doc as usize / 64 + 1];
                set_bits(&mut words, *postings);
                words
            }
        }
    }
}

/// The documents of each segment of `searcher` that `query` finds, deleted
/// ones aside, a set of bits a segment (what [`About`] is made of): read
/// straight from the postings where [`Counting`] reads the query (a word in
/// a page's title or headings), else by tantivy.
pub(super) fn found_sets(
    searcher: &Searcher,
    query: &dyn Query,
) -> tantivy::Result<Vec<(SegmentOrdinal, DocBits)>> {
    let counting = Counting::of(query);
    let mut weight = None;
    let mut found = Vec::with_capacity(searcher.segment_readers().len());
    for (ordinal, segment) in searcher.segment_readers().iter().enumerate() {
        let mut words = match counting.find(segment)? {
            Some(found) => found.into_bits(segment.max_doc()),
            None => {
                if weight.is_none() {
                    weight = Some(query.weight(EnableScoring::disabled_from_searcher(searcher))?);
                }
                let mut words = vec![0u64; segment.max_doc() as usize / 64 + 1];
                if let Some(weight) = &weight {
                    weight.for_each_no_score(segment, &mut |docs| {
                        for &doc in docs {
                            set_bit(&mut words, doc);
                        }
                    })?;
                }
                words
            }
        };
        if let Some(alive) = segment.alive_bitset() {
            let deleted: Vec<DocId> = ones(&words).filter(|&doc| !alive.is_alive(doc)).collect();
            for doc in deleted {
                words[doc as usize / 64] &= !(1 << (doc % 64));
            }
        }
        found.push((ordinal as SegmentOrdinal, DocBits::new(words)));
    }
    Ok(found)
}

/// The postings of `term` in `segment`, documents only; `None` when no
/// document holds it.
fn block_postings(
    segment: &SegmentReader,
    term: &Term,
) -> tantivy::Result<Option<BlockSegmentPostings>> {
    let index = segment.inverted_index(term.field())?;
    Ok(index.read_block_postings(term, IndexRecordOption::Basic)?)
}

/// The documents below `max_doc` that every one of `all` holds (`every`),
/// or one of them at least, as a set of bits: each one's documents as a
/// set of bits, the sets intersected (or united) word by word.
fn combine_bits(max_doc: DocId, all: Vec<BlockSegmentPostings>, every: bool) -> Vec<u64> {
    let words = max_doc as usize / 64 + 1;
    if !every || all.len() == 1 {
        // United: each word's bits set in one set.
        let mut kept = vec![0u64; words];
        for postings in all {
            set_bits(&mut kept, postings);
        }
        return kept;
    }
    let mut kept = vec![u64::MAX; words];
    let mut next = vec![0u64; words];
    for postings in all {
        set_bits(&mut next, postings);
        for (kept, next) in kept.iter_mut().zip(next.iter_mut()) {
            *kept &= std::mem::take(next);
        }
    }
    kept
}

/// Sets the bits of `postings`' documents in `words`: a block of documents
/// with none between its first and last (most of a common word's) as a
/// range, word by word; another's one by one, each word's bits gathered in
/// a register while documents fall in it rather than each stored on the
/// last.
fn set_bits(words: &mut [u64], mut postings: BlockSegmentPostings) {
    let (mut at, mut word) = (0usize, 0u64);
    while let (Some(&first), Some(&last)) = (postings.docs().first(), postings.docs().last()) {
        let docs = postings.docs();
        if (last - first) as usize + 1 == docs.len() {
            set_range(words, first as usize..last as usize + 1);
        } else {
            for &doc in docs {
                let doc = doc as usize;
                if doc / 64 != at {
                    words[at] |= word;
                    (at, word) = (doc / 64, 0);
                }
                word |= 1 << (doc % 64);
            }
        }
        postings.advance();
    }
    words[at] |= word;
}

/// Sets the bits of `range` in `words`.
fn set_range(words: &mut [u64], range: std::ops::Range<usize>) {
    for (at, mask) in range_masks(range) {
        words[at] |= mask;
    }
}

/// Each word of a set of bits that `range` covers, and the mask of its bits
/// in the range.
fn range_masks(range: std::ops::Range<usize>) -> impl Iterator<Item = (usize, u64)> {
    let (start, end) = (range.start, range.end);
    let (first, last) = (start / 64, end.saturating_sub(1) / 64);
    (first..=last).filter(move |_| start < end).map(move |at| {
        let mut mask = u64::MAX;
        if at == first {
            mask &= u64::MAX << (start % 64);
        }
        if at == last {
            mask &= u64::MAX >> (63 - (end - 1) % 64);
        }
        (at, mask)
    })
}

/// Gives `visit` the documents of the set of bits `words`, in order, in
/// blocks.
fn visit_bits(words: &[u64], visit: &mut dyn FnMut(&[DocId])) {
    let mut docs = Vec::with_capacity(128);
    for doc in ones(words) {
        docs.push(doc);
        if docs.len() == 128 {
            visit(&docs);
            docs.clear();
        }
    }
    if !docs.is_empty() {
        visit(&docs);
    }
}

/// The documents of the set of bits `words` (document `d` is bit `d % 64`
/// of word `d / 64`), in order.
fn ones(words: &[u64]) -> impl Iterator<Item = DocId> + '_ {
    words.iter().enumerate().flat_map(|(at, &word)| {
        let base = (at * 64) as DocId;
        std::iter::successors((word != 0).then_some(word), |&left| {
            let left = left & (left - 1);
            (left != 0).then_some(left)
        })
        .map(move |left| base + left.trailing_zeros())
    })
}

/// Sets document `doc`'s bit in `words`.
#[inline]
fn set_bit(words: &mut [u64], doc: DocId) {
    words[doc as usize / 64] |= 1 << (doc % 64);
}

/// The best `wanted` groups offered so far, with the hit each ranks by.
struct Leaders {
    wanted: usize,
    /// Each leading group's hit, by group number ([`Pair::group`]).
    members: FxHashMap<u32, Hit>,
    /// The leading groups, best first.
    order: BTreeSet<Ranked>,
}

/// A group in [`Leaders`]' order: its hit's score, highest first, then
/// its page, lowest first ([`Hit::beats`]).
#[derive(Debug, Clone, Copy)]
struct Ranked {
    score: Score,
    page: PageId,
    group: u32,
}

impl Ranked {
    fn of(group: u32, hit: &Hit) -> Ranked {
        Ranked {
            score: hit.score,
            page: hit.page,
            group,
        }
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Ranked) -> std::cmp::Ordering {
        result_order((self.score, self.page), (other.score, other.page))
            .then(self.group.cmp(&other.group))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Ranked) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Ranked) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ranked {}

impl Leaders {
    fn new(wanted: usize) -> Leaders {
        Leaders {
            wanted,
            members: FxHashMap::default(),
            order: BTreeSet::new(),
        }
    }

    /// Notes that `slot`'s group ranks by `hit` now (never worse than
    /// before: a group's best only rises).
    fn note(&mut self, group: u32, hit: Hit) {
        if let Some(before) = self.members.get_mut(&group) {
            self.order.remove(&Ranked::of(group, before));
            *before = hit;
            self.order.insert(Ranked::of(group, &hit));
            return;
        }
        if self.order.len() >= self.wanted {
            match self.order.last() {
                Some(last) if Ranked::of(group, &hit) < *last => {
                    let last = *last;
                    self.order.remove(&last);
                    self.members.remove(&last.group);
                }
                _ => return,
            }
        }
        self.members.insert(group, hit);
        self.order.insert(Ranked::of(group, &hit));
    }

    /// The score a hit must reach to matter: the `wanted`-th best
    /// group's so far (none below `wanted` groups).
    fn bar(&self) -> Score {
        match self.order.last() {
            Some(last) if self.order.len() >= self.wanted => last.score,
            _ => Score::NEG_INFINITY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A manual's places met are the bits of its range set, whatever
    /// words the range starts and ends in.
    #[test]
    fn the_places_met_of_a_range_are_its_bits_set() {
        let mut tally = Tally {
            hits: vec![0; 1],
            touched: Vec::new(),
            places_seen: vec![0; 5],
            no_place: 300,
            missed: Vec::new(),
            places_missed: Vec::new(),
        };
        let met = [0u32, 3, 63, 64, 65, 127, 128, 200, 255, 256, 299];
        for &place in &met {
            tally.count(0, place);
        }
        tally.count(0, NO_ID);
        assert_eq!(tally.hits[0], met.len() as u32 + 1);
        for (start, end) in [
            (0, 300),
            (0, 1),
            (1, 3),
            (3, 64),
            (63, 65),
            (64, 128),
            (66, 127),
            (100, 257),
            (299, 300),
            (5, 5),
        ] {
            let expected = met
                .iter()
                .filter(|&&place| (start..end).contains(&place))
                .count();
            assert_eq!(
                tally.places_in(start..end),
                expected as u32,
                "{start}..{end}"
            );
        }
    }

    use crate::collections::{ClusterId, CollectionId, LineageId};
    use crate::index::kind::PageKind;
    use crate::index::SearchQuery;
    use crate::index::{IndexField, PageDocument, NONE};
    use crate::search::collector::FoldCollector;
    use crate::search::rollup::Folded;
    use tantivy::query::{BooleanQuery, Occur, TermQuery};
    use tantivy::schema::IndexRecordOption;
    use tantivy::{Index, Term};

    /// A range's bits are set, and no other, wherever it starts and ends
    /// in its words; an empty range sets none.
    #[test]
    fn a_range_sets_its_bits_and_no_other() {
        for (start, end) in [
            (0, 1),
            (0, 64),
            (3, 64),
            (63, 65),
            (64, 128),
            (5, 300),
            (127, 128),
            (200, 256),
            (7, 7),
        ] {
            let mut words = vec![0u64; 5];
            words[4] = 1 << 63;
            set_range(&mut words, start..end);
            for bit in 0..320usize {
                let set = words[bit / 64] >> (bit % 64) & 1 == 1;
                assert_eq!(
                    set,
                    (start..end).contains(&bit) || bit == 319,
                    "{start}..{end}: {bit}"
                );
            }
        }
    }

    /// What a search misses is every document below the segment's count
    /// that it did not find, and none past it, whatever word the count
    /// ends in.
    #[test]
    fn the_documents_missed_are_the_rest_below_the_count() {
        for max_doc in [0u32, 1, 63, 64, 65, 128, 130] {
            let found: Vec<DocId> = (0..max_doc).filter(|doc| doc % 3 == 1).collect();
            let mut words = vec![0u64; max_doc as usize / 64 + 1];
            for &doc in &found {
                words[doc as usize / 64] |= 1 << (doc % 64);
            }
            let expected: Vec<DocId> = (0..max_doc).filter(|doc| doc % 3 != 1).collect();
            for (found, expected) in [
                (Found::bits(words.clone()), expected.clone()),
                (Found::Nothing, (0..max_doc).collect()),
            ] {
                let mut missed = Vec::new();
                found.for_each_missed(max_doc, &mut |docs| missed.extend_from_slice(docs));
                assert_eq!(missed, expected, "{max_doc}");
            }
        }
    }

    /// An index in memory with the search's schema, and its writer (one
    /// thread, segments never merged).
    fn empty_index() -> (Index, crate::index::Fields, tantivy::IndexWriter) {
        let (schema, fields) = crate::index::schema::build();
        let index = Index::create_in_ram(schema);
        index
            .tokenizers()
            .register(crate::index::TEXT_TOKENIZER, crate::index::text_analyzer());
        let writer = index.writer_with_num_threads(1, 15_000_000).unwrap();
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        (index, fields, writer)
    }

    /// A small generated web in three segments: manuals in several copies
    /// (some pages of a copy in no cluster), similar clusters of
    /// collections, hosts of pages in no cluster with listings among them;
    /// words said more or less often, in titles or not.
    fn generated_index() -> (Index, crate::index::Fields) {
        let (index, fields, mut writer) = empty_index();
        // A deterministic sequence (xorshift).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let words = ["alpha", "beta", "gamma", "delta"];
        for page in 0..1500u32 {
            let (lineage, copy, place, cluster, collection, host) = match next(10) {
                // A manual's page: 6 manuals, 4 copies each on their hosts.
                0..=3 => {
                    let lineage = next(6);
                    let copy = next(4);
                    // Some pages of a copy are in no cluster.
                    let cluster = if next(5) == 0 { NONE } else { 100 + lineage };
                    let collection = if cluster == NONE {
                        NONE
                    } else {
                        lineage * 4 + copy
                    };
                    (
                        lineage,
                        copy,
                        next(40),
                        cluster,
                        collection,
                        10 + lineage * 4 + copy,
                    )
                }
                // A similar cluster's page: 20 clusters of 3 collections.
                4..=6 => {
                    let cluster = 200 + next(20);
                    let copy = next(3);
                    (
                        NONE,
                        0,
                        NONE,
                        cluster,
                        1000 + cluster * 3 + copy,
                        50 + (cluster % 7) * 3 + copy,
                    )
                }
                // A page in no cluster on one of 30 hosts.
                _ => (NONE, 0, NONE, NONE, NONE, 200 + next(30)),
            };
            let mut body = String::new();
            for word in words {
                for _ in 0..next(4) {
                    body.push_str(word);
                    body.push(' ');
                }
                body.push_str("filler text ");
            }
            for _ in 0..next(30) {
                body.push_str("more ");
            }
            let title = match next(12) {
                0 => "alpha".to_string(),
                1 => "alpha beta guide".to_string(),
                2 => "gamma".to_string(),
                _ => format!("page {page}"),
            };
            let kind = match next(8) {
                0 => PageKind::Listing,
                1 => PageKind::Front,
                _ => PageKind::Prose,
            };
            let url = format!("https://h{host}.example/p{page}");
            let host_name = format!("h{host}.example");
            writer
                .add_document(fields.document(&PageDocument {
                    page: PageId(page),
                    collection,
                    cluster,
                    replication: 1 + next(9),
                    inlinks_from_other_hosts: 0,
                    host_id: host,
                    lineage,
                    lineage_copy: copy,
                    kind: kind as u64,
                    manual_page: place,
                    title: &title,
                    body: &body,
                    headings: if next(9) == 0 { "delta" } else { "" },
                    chrome: "",
                    url: &url,
                    host: &host_name,
                }))
                .unwrap();
            if page % 500 == 499 {
                writer.commit().unwrap();
            }
        }
        writer.commit().unwrap();
        (index, fields)
    }

    /// One page of a small index: its host, its cluster (and collection)
    /// or none, its kind, title and text.
    struct Page<'a> {
        host: u64,
        cluster: u64,
        kind: PageKind,
        title: &'a str,
        body: &'a str,
    }

    /// An index of `pages`, in order, in one segment.
    fn index_of(pages: &[Page]) -> (Index, crate::index::Fields) {
        let (index, fields, mut writer) = empty_index();
        for (at, page) in pages.iter().enumerate() {
            let url = format!("https://h{}.example/p{at}", page.host);
            let host = format!("h{}.example", page.host);
            writer
                .add_document(fields.document(&PageDocument {
                    page: PageId(at as u32),
                    collection: page.cluster,
                    cluster: page.cluster,
                    replication: 1,
                    inlinks_from_other_hosts: 0,
                    host_id: page.host,
                    lineage: NONE,
                    lineage_copy: 0,
                    kind: page.kind as u64,
                    manual_page: NONE,
                    title: page.title,
                    body: page.body,
                    headings: "",
                    chrome: "",
                    url: &url,
                    host: &host,
                }))
                .unwrap();
        }
        writer.commit().unwrap();
        (index, fields)
    }

    /// The documents `counting` visits in `segment`, or `None` when it
    /// leaves the segment to tantivy.
    fn visited(counting: &Counting, segment: &SegmentReader) -> Option<Vec<DocId>> {
        let mut docs = Vec::new();
        let found = counting.find(segment).unwrap()?;
        found.for_each(&mut |block| docs.extend_from_slice(block));
        Some(docs)
    }

    /// One word and words all required are read straight from their
    /// postings: the same documents tantivy finds, in order, deleted ones
    /// among them (counting leaves those out), and a rare word's
    /// conjunction is left to tantivy's seeking; any other query is
    /// tantivy's. No page's text scores above the ceiling.
    #[test]
    fn counting_reads_what_tantivy_finds_straight_from_the_postings() {
        let (index, fields, mut writer) = empty_index();
        let text = |page: u32| {
            let mut words = vec!["common"];
            if !page.is_multiple_of(3) {
                words.push("often");
            }
            if page % 97 == 5 {
                words.push("rare");
            }
            // One page says "common" many times in a short text.
            if page == 200 {
                words = vec!["common"; 40];
            }
            words.join(" ")
        };
        for page in 0..700u32 {
            let (url, body) = (format!("https://h.example/p{page}"), text(page));
            writer
                .add_document(fields.document(&PageDocument {
                    page: PageId(page),
                    collection: NONE,
                    cluster: NONE,
                    replication: 1,
                    inlinks_from_other_hosts: 0,
                    host_id: 1,
                    lineage: NONE,
                    lineage_copy: 0,
                    kind: PageKind::Prose as u64,
                    manual_page: NONE,
                    title: "",
                    body: &body,
                    headings: "",
                    chrome: "",
                    url: &url,
                    host: "h.example",
                }))
                .unwrap();
        }
        writer.commit().unwrap();
        for page in [1u64, 2, 301, 699] {
            writer.delete_term(Term::from_field_u64(fields.get(IndexField::PageId), page));
        }
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let segment = &searcher.segment_readers()[0];
        assert!(segment.alive_bitset().is_some(), "pages were deleted");
        let all_of = |words: &[&str]| -> Box<dyn Query> {
            Box::new(BooleanQuery::new(
                words
                    .iter()
                    .map(|word| (Occur::Must, word_query(&fields, word)))
                    .collect(),
            ))
        };
        let tantivy_finds = |query: &dyn Query| {
            let weight = query
                .weight(EnableScoring::disabled_from_searcher(&searcher))
                .unwrap();
            let mut docs = Vec::new();
            weight
                .for_each_no_score(segment, &mut |block| docs.extend_from_slice(block))
                .unwrap();
            docs
        };

        let word = word_query(&fields, "often");
        let counting = Counting::of(&*word);
        assert!(matches!(counting, Counting::Term(_)));
        assert_eq!(visited(&counting, segment), Some(tantivy_finds(&*word)));

        let both = all_of(&["common", "often"]);
        let counting = Counting::of(&*both);
        assert!(matches!(&counting, Counting::AllOf(terms) if terms.len() == 2));
        let docs = visited(&counting, segment).expect("two common words: sets of bits");
        assert_eq!(docs, tantivy_finds(&*both));
        let saying_both = (0..700u32).filter(|page| !page.is_multiple_of(3) && *page != 200);
        assert_eq!(docs.len(), saying_both.count());
        let weights = Weights::of(&searcher, &SearchQuery::new(both, &fields)).unwrap();
        let alive = segment.alive_bitset().unwrap();
        let living = docs.iter().filter(|&&doc| alive.is_alive(doc)).count();
        assert_eq!(weights.counted.count(segment).unwrap() as usize, living);
        assert_eq!(living, docs.len() - 3, "pages 1, 2 and 301 say both");

        let rare = all_of(&["common", "rare"]);
        assert!(matches!(Counting::of(&*rare), Counting::AllOf(_)));
        assert_eq!(
            visited(&Counting::of(&*rare), segment),
            None,
            "left to seeking"
        );

        let absent = all_of(&["common", "absent"]);
        assert_eq!(visited(&Counting::of(&*absent), segment), Some(Vec::new()));

        let but_not: Box<dyn Query> = Box::new(BooleanQuery::new(vec![
            (Occur::Must, word_query(&fields, "common")),
            (Occur::MustNot, word_query(&fields, "often")),
        ]));
        assert_eq!(Counting::of(&*but_not), Counting::Other);
        assert_eq!(visited(&Counting::Other, segment), None);
        assert_eq!(
            Counting::Other.text_ceiling(&searcher).unwrap(),
            Score::INFINITY
        );

        for words in [&["common"][..], &["common", "often"]] {
            let query = all_of(words);
            let ceiling = Counting::of(&*query).text_ceiling(&searcher).unwrap();
            assert!(ceiling.is_finite());
            let weight = query
                .weight(EnableScoring::enabled_from_searcher(&searcher))
                .unwrap();
            let mut highest: Score = 0.0;
            weight
                .for_each(segment, &mut |_, score| highest = highest.max(score))
                .unwrap();
            assert!(
                highest > 0.0 && highest <= ceiling,
                "{words:?}: {highest} > {ceiling}"
            );
        }

        // Words any of which, and what the pages about a query are made
        // of: the documents tantivy finds, deleted ones aside.
        let either: Box<dyn Query> = Box::new(BooleanQuery::new(vec![
            (Occur::Should, word_query(&fields, "rare")),
            (Occur::Should, word_query(&fields, "absent")),
            (Occur::Should, word_query(&fields, "often")),
        ]));
        assert!(matches!(&Counting::of(&*either), Counting::AnyOf(terms) if terms.len() == 3));
        assert_eq!(
            visited(&Counting::of(&*either), segment),
            Some(tantivy_finds(&*either))
        );
        for query in [
            word,
            either,
            rare,
            absent,
            but_not,
            all_of(&["common", "often"]),
        ] {
            let found = found_sets(&searcher, &*query).unwrap();
            let tantivy_found = searcher
                .search(&*query, &tantivy::collector::DocSetCollector)
                .unwrap();
            assert_eq!(found.len(), 1);
            let (ordinal, docs) = &found[0];
            let found: Vec<DocId> = (0..segment.max_doc())
                .filter(|&doc| docs.contains(doc))
                .collect();
            let mut expected: Vec<DocId> = tantivy_found
                .into_iter()
                .map(|address| {
                    assert_eq!(address.segment_ord, *ordinal);
                    address.doc_id
                })
                .collect();
            expected.sort_unstable();
            assert_eq!(found, expected, "{query:?}");
        }
    }

    /// A host's listing about the query scores above its page of prose
    /// that only mentions it: the host's entry is still the page of prose
    /// (a listing is an entry only when no page of prose matches), which
    /// the pruned fold knows only once every hit is counted, so the
    /// listing never raised the bar that a better group, met later, has
    /// to pass.
    #[test]
    fn a_listing_above_its_hosts_page_of_prose_never_hides_a_better_group() {
        let many = "alpha ".repeat(12);
        let (index, fields) = index_of(&[
            Page {
                host: 1,
                cluster: NONE,
                kind: PageKind::Listing,
                title: "alpha",
                body: &many,
            },
            Page {
                host: 1,
                cluster: NONE,
                kind: PageKind::Prose,
                title: "one",
                body: "alpha and a great many other words of no interest here at all",
            },
            Page {
                host: 2,
                cluster: 7,
                kind: PageKind::Prose,
                title: "two",
                body: "alpha alpha alpha words",
            },
        ]);
        let searcher = index.reader().unwrap().searcher();
        let rollup = RollupFields::read(&searcher).unwrap();
        let about = Arc::new(about(&searcher, &fields, &["alpha"]));
        let principals = Principals::default();
        let folded = PrunedFold {
            replication_boost: None,
            wanted: 1,
            collections: 10,
            principals: &principals,
            about: &about,
            fields: &rollup,
        }
        .search(
            &searcher,
            &SearchQuery::new(word_query(&fields, "alpha"), &fields),
        )
        .unwrap()
        .finish();
        assert_eq!(folded.total_groups, 2);
        assert_eq!(folded.groups.len(), 1);
        assert_eq!(folded.groups[0].shown.page, PageId(2), "{folded:?}");
    }

    /// A word looked up as the search's parser does: in the text field
    /// (own text, title, headings and URL path).
    fn word_query(fields: &crate::index::Fields, word: &str) -> Box<dyn Query> {
        Box::new(TermQuery::new(
            Term::from_field_text(fields.get(IndexField::Text), word),
            IndexRecordOption::WithFreqs,
        ))
    }

    /// The documents about `words`, as the engine finds them.
    fn about(searcher: &Searcher, fields: &crate::index::Fields, words: &[&str]) -> About {
        let mut about = About::new();
        for word in words {
            let query = BooleanQuery::new(
                [IndexField::Title, IndexField::Headings]
                    .into_iter()
                    .map(|field| {
                        let query: Box<dyn Query> = Box::new(TermQuery::new(
                            Term::from_field_text(fields.get(field), word),
                            IndexRecordOption::Basic,
                        ));
                        (Occur::Should, query)
                    })
                    .collect(),
            );
            about.add_word(found_sets(searcher, &query).unwrap());
        }
        let named = TermQuery::new(
            Term::from_field_text(
                fields.get(IndexField::Name),
                &crate::index::kind::name_key(&words.join(" ")),
            ),
            IndexRecordOption::Basic,
        );
        about.set_named(found_sets(searcher, &named).unwrap());
        about
    }

    /// A search counted by the live documents it misses gives the tally
    /// counting its hits gives: each pair's count, the pairs met and the
    /// places met, with deleted pages on either side of the count, whether
    /// the query matches most of each segment (and is counted so) or not.
    #[test]
    fn counting_the_misses_of_a_broad_search_counts_its_hits() {
        let (index, fields) = generated_index();
        let mut writer: tantivy::IndexWriter =
            index.writer_with_num_threads(1, 15_000_000).unwrap();
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        for page in (0..1500u64).filter(|page| page % 7 == 3) {
            writer.delete_term(Term::from_field_u64(fields.get(IndexField::PageId), page));
        }
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let rollup = RollupFields::read(&searcher).unwrap();
        let about = Arc::new(About::new());
        let boolean = |occur: Occur, words: &[&str]| -> Box<dyn Query> {
            Box::new(BooleanQuery::new(
                words
                    .iter()
                    .map(|word| (occur, word_query(&fields, word)))
                    .collect(),
            ))
        };
        let queries: Vec<(Box<dyn Query>, bool)> = vec![
            (word_query(&fields, "alpha"), true),
            (word_query(&fields, "filler"), true),
            (word_query(&fields, "more"), true),
            (boolean(Occur::Must, &["alpha", "beta"]), true),
            (boolean(Occur::Should, &["gamma", "delta"]), true),
            // Words on fewer than half the pages together are read by
            // their hits.
            (
                boolean(Occur::Must, &["alpha", "beta", "gamma", "delta"]),
                false,
            ),
        ];
        for (matching, broad) in queries {
            let query = SearchQuery::new(matching, &fields);
            let weights = Weights::of(&searcher, &query).unwrap();
            let (mut by_hits, mut by_misses) = (Tally::new(&rollup), Tally::new(&rollup));
            by_misses.ready_for_misses();
            let mut segments = Vec::new();
            for (ordinal, segment) in searcher.segment_readers().iter().enumerate() {
                assert!(segment.alive_bitset().is_some(), "pages were deleted");
                let columns =
                    Columns::open((ordinal as SegmentOrdinal, segment), &rollup, None, &about)
                        .unwrap();
                let found = |searched| weights.counting.find(searched).unwrap().unwrap();
                assert_eq!(
                    found(segment).matches() > segment.max_doc() / 2,
                    broad,
                    "{query:?}"
                );
                count_hits(
                    segment,
                    &columns,
                    &weights,
                    Some(found(segment)),
                    &mut by_hits,
                )
                .unwrap();
                count_misses(segment, &columns, found(segment), &mut by_misses);
                segments.push(columns);
            }
            by_misses.count_all_but_missed(rollup.alive_by_pair_and_place());
            // Both as many as tantivy counts.
            let counted: u32 = searcher
                .segment_readers()
                .iter()
                .map(|segment| weights.counted.count(segment).unwrap())
                .sum();
            assert_eq!(by_hits.hits.iter().sum::<u32>(), counted, "{query:?}");
            // The search counts a broad query by its misses, and its hits
            // the same.
            let mut counted = Tally::new(&rollup);
            count(&searcher, &segments, &weights, &mut counted, &rollup).unwrap();
            assert_eq!(!counted.missed.is_empty(), broad, "{query:?}");
            assert_eq!(counted.hits, by_hits.hits, "{query:?}");
            assert!(by_hits.touched.len() > 1, "{query:?}");
            assert_eq!(by_misses.hits, by_hits.hits, "{query:?}");
            let (mut met, mut met_by_misses) = (by_hits.touched, by_misses.touched);
            met.sort_unstable();
            met_by_misses.sort_unstable();
            assert_eq!(met_by_misses, met, "{query:?}");
            let places = rollup.manual_places() as usize;
            let below = |seen: &[u64]| -> Vec<bool> {
                (0..places)
                    .map(|place| seen[place / 64] >> (place % 64) & 1 == 1)
                    .collect()
            };
            assert!(below(&by_hits.places_seen).contains(&true));
            assert_eq!(
                below(&by_misses.places_seen),
                below(&by_hits.places_seen),
                "{query:?}"
            );
        }
    }

    /// The pruned fold finds what folding every scored hit finds: the same
    /// groups, shown from the same pages with the same sitelinks, the same
    /// counts and facets, on every results page, ranked by relevance or by
    /// replication, for words said by few pages or by most, about which
    /// some titles are or not, a conjunction, and nothing found.
    #[test]
    fn the_pruned_fold_finds_what_folding_every_scored_hit_finds() {
        let (index, fields) = generated_index();
        let searcher = index.reader().unwrap().searcher();
        assert_eq!(searcher.segment_readers().len(), 3);
        let rollup = RollupFields::read(&searcher).unwrap();
        let mut clusters = FxHashMap::default();
        for lineage in 0..6 {
            clusters.insert(ClusterId(100 + lineage), CollectionId(lineage * 4 + 1));
        }
        for cluster in 200..210 {
            clusters.insert(ClusterId(cluster), CollectionId(1000 + cluster * 3 + 2));
        }
        let mut copies = FxHashMap::default();
        copies.insert(LineageId(2), 3u16);
        let principals = Principals {
            clusters: Arc::new(clusters),
            copies,
        };
        let conjunction = |first: &str, second: &str| -> Box<dyn Query> {
            Box::new(BooleanQuery::new(vec![
                (Occur::Must, word_query(&fields, first)),
                (Occur::Must, word_query(&fields, second)),
            ]))
        };
        let queries: Vec<(Box<dyn Query>, Vec<&str>)> = vec![
            (word_query(&fields, "alpha"), vec!["alpha"]),
            (word_query(&fields, "gamma"), vec!["gamma"]),
            (word_query(&fields, "more"), vec!["more"]),
            (word_query(&fields, "delta"), vec!["delta"]),
            (conjunction("beta", "delta"), vec!["beta", "delta"]),
            // Both words in some titles: pages scored apart, and a
            // conjunction tantivy prunes.
            (conjunction("alpha", "beta"), vec!["alpha", "beta"]),
            (word_query(&fields, "absent"), vec!["absent"]),
        ];
        let mut compared = 0;
        for (matching, words) in queries {
            let query = SearchQuery::new(matching, &fields);
            assert!(query.bonus.is_some());
            let about = Arc::new(about(&searcher, &fields, &words));
            for wanted in [1, 3, 10, 25, 5000] {
                for boost in [None, Some(0.25)] {
                    let whole: Folded = searcher
                        .search(
                            &query,
                            &FoldCollector {
                                replication_boost: boost,
                                wanted,
                                collections: 2000,
                                principals: Arc::new(principals.clone()),
                                about: Arc::clone(&about),
                                by_page: false,
                                shared: Default::default(),
                                fields: Arc::new(RollupFields::read(&searcher).unwrap()),
                            },
                        )
                        .unwrap()
                        .finish();
                    let pruned = PrunedFold {
                        replication_boost: boost,
                        wanted,
                        collections: 2000,
                        principals: &principals,
                        about: &about,
                        fields: &rollup,
                    }
                    .search(&searcher, &query)
                    .unwrap()
                    .finish();
                    assert_eq!(
                        pruned, whole,
                        "{words:?}, {wanted} groups wanted, boost {boost:?}"
                    );
                    compared += usize::from(!whole.groups.is_empty());
                }
            }
        }
        assert!(compared >= 45, "most searches find something: {compared}");
    }

    /// The flat list as every hit scored whole and weighed would give it:
    /// the count, and the best `wanted` by weighed score, then the lower
    /// page id.
    fn every_hit_flat(
        searcher: &Searcher,
        query: &SearchQuery,
        wanted: usize,
        (boost, about, fields): (Option<f32>, &Arc<About>, &RollupFields),
    ) -> (usize, Vec<(Score, tantivy::DocAddress)>) {
        let weight = query
            .weight(EnableScoring::enabled_from_searcher(searcher))
            .unwrap();
        let mut all = Vec::new();
        for (ordinal, segment) in searcher.segment_readers().iter().enumerate() {
            let ordinal = ordinal as SegmentOrdinal;
            let columns = Columns::open((ordinal, segment), fields, boost, about).unwrap();
            weight
                .for_each(segment, &mut |doc, raw| {
                    all.push((
                        columns.score(doc, raw),
                        std::cmp::Reverse(columns.page(doc).0),
                        tantivy::DocAddress::new(ordinal, doc),
                    ))
                })
                .unwrap();
        }
        let count = all.len();
        all.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        all.truncate(wanted);
        (
            count,
            all.into_iter()
                .map(|(score, _, address)| (score, address))
                .collect(),
        )
    }

    #[test]
    fn the_pruned_flat_list_is_every_hit_scored_and_weighed() {
        let (index, fields) = generated_index();
        let searcher = index.reader().unwrap().searcher();
        let rollup = RollupFields::read(&searcher).unwrap();
        let conjunction: Box<dyn Query> = Box::new(BooleanQuery::new(vec![
            (Occur::Must, word_query(&fields, "alpha")),
            (Occur::Must, word_query(&fields, "beta")),
        ]));
        let queries: Vec<(Box<dyn Query>, Vec<&str>)> = vec![
            (word_query(&fields, "alpha"), vec!["alpha"]),
            (word_query(&fields, "more"), vec!["more"]),
            (conjunction, vec!["alpha", "beta"]),
            (word_query(&fields, "absent"), vec!["absent"]),
        ];
        let mut compared = 0;
        for (matching, words) in queries {
            let query = SearchQuery::new(matching, &fields);
            let about = Arc::new(about(&searcher, &fields, &words));
            for wanted in [0, 1, 10, 25, 5000] {
                for boost in [None, Some(0.25)] {
                    let settings = (boost, &about, &rollup);
                    let pruned = flat_best(&searcher, &query, wanted, settings).unwrap();
                    let every = every_hit_flat(&searcher, &query, wanted, settings);
                    assert_eq!(pruned, every, "{words:?}, {wanted} wanted, boost {boost:?}");
                    compared += usize::from(!every.1.is_empty());
                }
            }
        }
        assert!(compared >= 20, "most searches find something: {compared}");
    }
}
