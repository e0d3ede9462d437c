//! Folding hits into groups (cho-2000 §5.2, Figure 14): the pages of one
//! collection become one entry, the collections of one similar cluster become
//! one entry shown from the principal copy, and a manual in all its versions
//! (its lineage, [`crate::collections::lineage`]) becomes one entry shown
//! from its newest original (or from the version the query names); copies of
//! a page that grew into no larger collection become one entry (their
//! cluster is of kind `page`), and a page with no copies stays as it is.
//!
//! Pages in no cluster and no manual crowd by host, as web search engines
//! do: a host shows at most [`ENTRIES_PER_HOST`] of them as entries, and its
//! other matching pages in no cluster fold under the last of those ("more
//! from this site"), so one unreplicated manual cannot fill a results page.
//!
//! Every matching document is folded, not just the first screenful, so the
//! groups of every results page are complete and disjoint and their counts
//! are exact. The fold runs inside the index's collector, segment by
//! segment, and builds in full only the groups up to the results page asked
//! for: similar clusters are few, while pages in no cluster, most of the
//! hits of a large crawl, are each their own group and only counted past the
//! best ones.

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;
use tantivy::{DocAddress, Score};

use crate::collections::{ClusterId, CollectionId, LineageId, LineagePlace};
use crate::pages::PageId;

/// One matching document, with what the index says of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub score: f32,
    pub page: PageId,
    pub collection: Option<CollectionId>,
    pub cluster: Option<ClusterId>,
    /// Its manual and copy there, when it is a page of a manual.
    pub lineage: Option<LineagePlace>,
    /// The page's host id.
    pub host: u32,
    /// A source listing, a generated index or a search page
    /// ([`crate::index::kind::PageKind::Listing`]): never an entry's page
    /// where a page of prose of it matches.
    pub listing: bool,
    pub doc: DocAddress,
}

impl Hit {
    /// The entry it folds into, when it is not a page alone.
    pub fn entry(&self) -> Option<EntryKey> {
        entry_key(self.lineage, self.cluster)
    }
}

/// What one entry gathers: a manual in all its versions, or the copies of
/// one similar cluster outside every manual (copies of one page).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKey {
    Lineage(LineageId),
    Cluster(ClusterId),
    /// One page of a manual in all its copies and versions (the number of
    /// its place in the manual): the entries of a search within one manual.
    ManualPage(LineageId, u64),
}

impl EntryKey {
    /// The manual the entry is of, or a page of.
    pub fn lineage(self) -> Option<LineageId> {
        match self {
            EntryKey::Lineage(lineage) | EntryKey::ManualPage(lineage, _) => Some(lineage),
            EntryKey::Cluster(_) => None,
        }
    }
}

/// What the facets count ([`Folded::facets`]): the entries a search shows
/// by host and by manual, and each manual's entry's copies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FacetCounts {
    /// Entries with a matching page on each host.
    pub hosts: FxHashMap<u32, u64>,
    /// Entries a search within each manual would show: its matching pages
    /// (one an entry in all their copies and versions).
    pub manuals: FxHashMap<LineageId, u64>,
    /// Each entry of a manual, or of a page of one: its copies with a
    /// matching page (the version facet counts them by release).
    pub copies: Vec<(LineageId, Vec<u16>)>,
}

/// The entry of a page in `lineage` and `cluster`.
#[inline]
pub fn entry_key(lineage: Option<LineagePlace>, cluster: Option<ClusterId>) -> Option<EntryKey> {
    match (lineage, cluster) {
        (Some(place), _) => Some(EntryKey::Lineage(place.lineage)),
        (None, Some(cluster)) => Some(EntryKey::Cluster(cluster)),
        (None, None) => None,
    }
}

/// Which of an entry's pages it is shown from, when one of them matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// A cluster's principal collection.
    Collection(CollectionId),
    /// A manual's copy (its principal, or the version a query names).
    Copy(u16),
    /// No preference: the best page.
    Best,
}

impl Shown {
    /// Whether a page of `collection`, at `place` in its manual, is one the
    /// entry is shown from.
    #[inline]
    fn holds(self, collection: Option<CollectionId>, place: Option<LineagePlace>) -> bool {
        match self {
            Shown::Collection(principal) => collection == Some(principal),
            Shown::Copy(copy) => place.is_some_and(|place| place.copy == copy),
            Shown::Best => false,
        }
    }
}

/// Entries one host's pages in no cluster may have: one, as a manual's
/// pages are one entry; its other pages fold under it ("more from this
/// site"), as web search engines crowd a host.
pub const ENTRIES_PER_HOST: usize = 1;

/// Other pages of an entry shown under it as title links ("sitelinks", as
/// web search engines show a site's best pages under its entry): at most
/// three, of the pages the entry is shown from.
pub const SITELINKS: usize = 3;

/// A page is a sitelink when it scores at least this share of the entry's
/// page: it matches about as well (a page that only mentions the words
/// scores far below one about them).
pub const SITELINK_SHARE: f32 = 0.5;

/// The best pages an entry is shown from kept while folding: its page and
/// its sitelinks.
const KEPT: usize = 1 + SITELINKS;

impl Hit {
    /// Whether this hit comes first ([`result_order`]).
    fn beats(&self, other: &Hit) -> bool {
        rank(self, other).is_lt()
    }

    /// Whether this hit is rather an entry's page than `other`: a page of
    /// prose before a listing, then the better score.
    fn preferred(&self, other: &Hit) -> bool {
        match (self.listing, other.listing) {
            (false, true) => true,
            (true, false) => false,
            _ => self.beats(other),
        }
    }
}

/// A host's pages in no cluster kept while folding: its entries and the
/// last one's sitelinks.
const SITE_KEPT: usize = ENTRIES_PER_HOST + SITELINKS;

/// The best `N` hits offered, preferred first ([`Hit::preferred`]), each
/// page once.
#[derive(Debug, Clone, Copy)]
struct Kept<const N: usize>([Option<Hit>; N]);

impl<const N: usize> Default for Kept<N> {
    fn default() -> Self {
        Kept([None; N])
    }
}

impl<const N: usize> Kept<N> {
    /// Whether a hit of this score and kind may be kept.
    #[inline]
    fn may_enter(&self, score: f32, listing: bool) -> bool {
        match self.0[N - 1] {
            None => true,
            Some(last) => match (listing, last.listing) {
                (false, true) => true,
                (true, false) => false,
                _ => score.total_cmp(&last.score).is_ge(),
            },
        }
    }

    fn offer(&mut self, hit: Hit) {
        let mut carried = hit;
        for slot in self.0.iter_mut() {
            match slot {
                None => {
                    *slot = Some(carried);
                    return;
                }
                Some(kept) => {
                    if kept.page == carried.page {
                        return;
                    }
                    if carried.preferred(kept) {
                        std::mem::swap(kept, &mut carried);
                    }
                }
            }
        }
    }

    fn first(&self) -> Option<Hit> {
        self.0[0]
    }

    /// The kept hits after the first `skip` that match about as well as
    /// `shown`.
    fn sitelinks(&self, skip: usize, shown: &Hit) -> Vec<Hit> {
        Kept::<N>::sitelinks_of(&self.0[skip.min(N)..], shown)
    }

    /// Of `hits`, those that match about as well as `shown`
    /// ([`SITELINK_SHARE`]), listings left out.
    fn sitelinks_of(hits: &[Option<Hit>], shown: &Hit) -> Vec<Hit> {
        hits.iter()
            .flatten()
            .filter(|hit| !hit.listing && hit.score >= SITELINK_SHARE * shown.score)
            .copied()
            .collect()
    }
}

/// One entry of rolled-up results.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The page shown: the best-scoring matching page of the principal copy
    /// when it has one, else the best-scoring matching page of the group.
    pub shown: Hit,
    /// The group's score: its best hit's.
    pub score: f32,
    /// Matching pages folded into this entry (itself included).
    pub hits: u32,
    /// Matching pages of the shown page's collection (itself included).
    pub collection_hits: u32,
    /// On the last entry of a host's pages in no cluster: its other such
    /// matching pages, folded under it (counted in `hits`).
    pub site_more: u32,
    /// On that entry: the pages the host's entries show.
    pub site_shown: Vec<PageId>,
    /// Other pages of what the entry is shown from that match about as
    /// well, best first ([`SITELINKS`]).
    pub sitelinks: Vec<Hit>,
}

/// One entry's hits so far.
#[derive(Debug, Clone)]
struct Accumulator {
    /// The pages it is shown from.
    principal: Shown,
    /// Its best hit offered ([`Fold::offer`]); `None` while its hits are
    /// only counted.
    best: Option<Hit>,
    /// The best pages of those it is shown from.
    of_principal: Kept<KEPT>,
    /// Hosts of its matching pages, each once.
    hosts: Vec<u32>,
    /// Copies (in its manual) of its matching pages, each once.
    copies: Vec<u16>,
    /// The places in its manual of its matching pages (a manual's entry).
    pages: Places,
    /// The place last noted: a page's copies come one after another.
    last_page: u64,
    /// Places in its manual counted apart from `pages` ([`Fold::count_many`]).
    places: u32,
}

impl Accumulator {
    fn new(principal: Shown) -> Accumulator {
        Accumulator {
            principal,
            best: None,
            of_principal: Kept::default(),
            hosts: Vec::new(),
            copies: Vec::new(),
            pages: Places::default(),
            last_page: crate::index::NONE,
            places: 0,
        }
    }

    /// Notes a matching page's host, copy and place in its manual
    /// (`crate::index::NONE` for none) for the facets.
    #[inline]
    fn note(&mut self, host: u32, copy: Option<u16>, manual_page: u64) {
        if self.hosts.last() != Some(&host) && !self.hosts.contains(&host) {
            self.hosts.push(host);
        }
        if let Some(copy) = copy {
            if self.copies.last() != Some(&copy) && !self.copies.contains(&copy) {
                self.copies.push(copy);
            }
        }
        if manual_page != crate::index::NONE && manual_page != self.last_page {
            self.pages.insert(manual_page);
            self.last_page = manual_page;
        }
    }

    /// Offers a hit counted already: it may become the best, or one of
    /// the pages the entry is shown from. A hit offered twice counts once.
    fn add(&mut self, hit: Hit) {
        if self.best.is_none_or(|best| hit.beats(&best)) {
            self.best = Some(hit);
        }
        if self.principal.holds(hit.collection, hit.lineage) {
            self.of_principal.offer(hit);
        }
    }

    fn merge(&mut self, other: Accumulator) {
        if let Some(best) = other.best {
            if self.best.is_none_or(|mine| best.beats(&mine)) {
                self.best = Some(best);
            }
        }
        for hit in other.of_principal.0.into_iter().flatten() {
            self.of_principal.offer(hit);
        }
        for host in other.hosts {
            if !self.hosts.contains(&host) {
                self.hosts.push(host);
            }
        }
        for copy in other.copies {
            if !self.copies.contains(&copy) {
                self.copies.push(copy);
            }
        }
        self.pages.merge(&other.pages);
        self.places += other.places;
    }

    /// Its matching pages' places in its manual, each once.
    fn places(&self) -> u64 {
        self.pages.len() as u64 + u64::from(self.places)
    }
}

/// A set of places in a manual, each a small number: the search's roll-up
/// fields number a manual's places densely (0, 1, 2… in each manual), so a
/// bit a place holds them, where hashing each page's place cost a broad
/// search a sixth of its time.
#[derive(Debug, Clone, Default)]
struct Places {
    bits: Vec<u64>,
    len: usize,
}

impl Places {
    #[inline]
    fn insert(&mut self, place: u64) {
        let (word, bit) = ((place / 64) as usize, place % 64);
        if word >= self.bits.len() {
            self.bits.resize(word + 1, 0);
        }
        let mask = 1u64 << bit;
        if self.bits[word] & mask == 0 {
            self.bits[word] |= mask;
            self.len += 1;
        }
    }

    fn merge(&mut self, other: &Places) {
        if self.bits.len() < other.bits.len() {
            self.bits.resize(other.bits.len(), 0);
        }
        for (mine, theirs) in self.bits.iter_mut().zip(&other.bits) {
            *mine |= theirs;
        }
        self.len = self
            .bits
            .iter()
            .map(|word| word.count_ones() as usize)
            .sum();
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// Better hits first ([`result_order`]).
fn rank(first: &Hit, second: &Hit) -> std::cmp::Ordering {
    result_order((first.score, first.page), (second.score, second.page))
}

/// The order of results by their score and page: the higher score first;
/// among equal scores, the lower page id (URL order), so that results never
/// depend on segment order.
pub(super) fn result_order(
    (score, page): (Score, PageId),
    (other_score, other_page): (Score, PageId),
) -> std::cmp::Ordering {
    other_score.total_cmp(&score).then(page.cmp(&other_page))
}

/// Folds hits as they come (one fold for a search's segments in turn, or one
/// per segment merged at the end: the collector's `SharedFold`)
/// into exactly the groups [`Folded`] needs: every manual's and similar
/// cluster's, and of the pages in neither, each its own group, only the
/// best `wanted`. Every hit is counted, so the totals stay exact.
#[derive(Debug)]
pub struct Fold {
    wanted: usize,
    hits: u64,
    /// Matching pages by collection id.
    per_collection: Vec<u32>,
    /// Each entry's accumulator, in order of first hit.
    clusters: Vec<(EntryKey, Accumulator)>,
    /// Each entry's matching pages, by slot (kept apart from the
    /// accumulators, as [`SiteHits`]).
    entry_hits: Vec<u32>,
    /// Where each entry is in `clusters`.
    cluster_slots: FxHashMap<EntryKey, u32>,
    /// The entry of the last hit in one, and its slot: documents are in
    /// URL order, so the pages of one collection come one after another.
    last: Option<(EntryKey, u32)>,
    /// Pages in no cluster, by host: each host's best ones.
    sites: Vec<Site>,
    /// And how many match, by slot.
    site_hits: Vec<SiteHits>,
    /// Where each host is in `sites`.
    site_slots: FxHashMap<u32, u32>,
    /// The host of the last hit in no cluster, and its slot (URL order
    /// keeps a host's pages together).
    last_site: Option<(u32, u32)>,
    /// The slot of each group numbered by the search's roll-up fields
    /// ([`Fold::count_many`]), as [`Slot::code`]; [`NO_SLOT`] for none.
    by_group: Vec<u32>,
}

/// Where a counted hit's group is kept in a [`Fold`]: an entry's
/// accumulator, or a host's pages in no cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Slot {
    Entry(u32),
    Site(u32),
}

impl Slot {
    /// A host's pages in no cluster in a slot's number.
    const SITE: u32 = 1 << 31;

    /// The slot as one number.
    #[inline]
    pub fn code(self) -> u32 {
        match self {
            Slot::Entry(at) => at,
            Slot::Site(at) => at | Slot::SITE,
        }
    }

    /// The slot numbered `code` ([`Slot::code`]).
    #[inline]
    pub fn of_code(code: u32) -> Slot {
        match code & Slot::SITE {
            0 => Slot::Entry(code),
            _ => Slot::Site(code & !Slot::SITE),
        }
    }
}

/// No slot yet, in [`Fold`]'s slots by group.
const NO_SLOT: u32 = u32::MAX;

/// One host's matching pages in no cluster so far.
#[derive(Debug, Clone, Copy)]
struct Site {
    /// The best of them, preferred first: its entries, then the last
    /// entry's sitelinks.
    top: Kept<SITE_KEPT>,
}

impl Site {
    fn new() -> Site {
        Site {
            top: Kept::default(),
        }
    }

    /// The entries' hits.
    fn entries(&self) -> impl Iterator<Item = &Hit> {
        self.top.0[..ENTRIES_PER_HOST].iter().flatten()
    }

    fn merge(&mut self, other: Site) {
        for hit in other.top.0.into_iter().flatten() {
            self.top.offer(hit);
        }
    }

    /// The hit the host's entry ranks by: its best page, a page of prose
    /// before a listing; a listing only when no page of prose of the host
    /// matches (`prose_matched`; while hits are still counted, one may yet).
    fn entry(&self, prose_matched: bool) -> Option<Hit> {
        self.top
            .first()
            .filter(|hit| !hit.listing || !prose_matched)
    }

    fn shown(&self) -> usize {
        self.entries().count()
    }
}

/// How many of one host's pages in no cluster match, kept apart from
/// their best hits ([`Site`]): counting reads these at every hit, in an
/// order that goes from host to host.
#[derive(Debug, Clone, Copy, Default)]
struct SiteHits {
    count: u32,
    /// Of them, pages of prose (not listings): a host's entry is one of
    /// those when it has one.
    prose: u32,
}

impl SiteHits {
    /// The entries the pages make, whether or not their hits were offered.
    fn groups(&self) -> u64 {
        u64::from(self.count).min(ENTRIES_PER_HOST as u64)
    }

    fn merge(&mut self, other: SiteHits) {
        self.count += other.count;
        self.prose += other.prose;
    }
}

/// What a results page needs of a search's groups.
#[derive(Debug, Clone, PartialEq)]
pub struct Folded {
    /// The best `wanted` groups, best first.
    pub groups: Vec<Group>,
    /// Groups in all.
    pub total_groups: u64,
    /// Matching pages in all.
    pub total_hits: u64,
    /// What the facets count, over all the groups.
    pub facets: FacetCounts,
}

impl Fold {
    /// A fold that keeps the best `wanted` groups, for an index of
    /// `collections` collections.
    pub fn new(wanted: usize, collections: usize) -> Fold {
        Fold {
            wanted,
            hits: 0,
            per_collection: vec![0; collections],
            clusters: Vec::new(),
            entry_hits: Vec::new(),
            cluster_slots: FxHashMap::default(),
            last: None,
            sites: Vec::new(),
            site_hits: Vec::new(),
            site_slots: FxHashMap::default(),
            last_site: None,
            by_group: Vec::new(),
        }
    }

    /// A fold ([`Fold::new`]) of hits counted by the number of their group
    /// ([`Fold::count_many`]), of `groups` groups.
    pub fn of_groups(wanted: usize, collections: usize, groups: u32) -> Fold {
        Fold {
            by_group: vec![NO_SLOT; groups as usize],
            ..Fold::new(wanted, collections)
        }
    }

    /// Adds one hit. `principal` gives the pages an entry is shown from; it
    /// is asked once per entry.
    pub fn add(&mut self, hit: Hit, principal: impl FnOnce(EntryKey) -> Shown) {
        self.add_lazily(
            hit.score,
            hit.entry(),
            hit.collection,
            hit.lineage,
            hit.listing,
            (hit.host, crate::index::NONE),
            || hit,
            principal,
        );
    }

    /// Adds one hit of which only the score, entry, collection, place in
    /// its manual, host and place in its manual's pages (`manual_page`: a
    /// small number, the same for the page's copies in every version, as
    /// the search's roll-up fields number a manual's places;
    /// `crate::index::NONE` for none) are known yet; `hit` gives the rest,
    /// called only when the hit may be a group's best (most hits score
    /// below their group's best, or below their host's best pages in no
    /// cluster, and are only counted).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn add_lazily(
        &mut self,
        score: f32,
        entry: Option<EntryKey>,
        collection: Option<CollectionId>,
        place: Option<LineagePlace>,
        listing: bool,
        (host, manual_page): (u32, u64),
        hit: impl FnOnce() -> Hit,
        principal: impl FnOnce(EntryKey) -> Shown,
    ) {
        let slot = self.count(
            entry,
            collection,
            place,
            listing,
            (host, manual_page),
            principal,
        );
        if self.may_improve(slot, score, collection, place, listing) {
            self.offer(slot, hit());
        }
    }

    /// Counts one hit of which only its entry, collection, place in its
    /// manual, kind, host and place in its manual's pages are known
    /// ([`Fold::add_lazily`]), for the totals and the facets; its score is
    /// offered apart ([`Fold::offer`]), or never when it cannot change a
    /// results page. Gives where its group is kept.
    #[inline]
    pub fn count(
        &mut self,
        entry: Option<EntryKey>,
        collection: Option<CollectionId>,
        place: Option<LineagePlace>,
        listing: bool,
        (host, manual_page): (u32, u64),
        principal: impl FnOnce(EntryKey) -> Shown,
    ) -> Slot {
        self.hits += 1;
        if let Some(count) =
            collection.and_then(|collection| self.per_collection.get_mut(collection.0 as usize))
        {
            *count += 1;
        }
        match entry {
            Some(entry) => {
                let slot = match self.last {
                    Some((last, slot)) if last == entry => slot,
                    _ => self.slot(entry, || Accumulator::new(principal(entry))),
                };
                self.last = Some((entry, slot));
                // A manual's entry counts its pages for the manual facet.
                let manual_page = match entry {
                    EntryKey::Lineage(_) => manual_page,
                    _ => crate::index::NONE,
                };
                self.entry_hits[slot as usize] += 1;
                let accumulator = &mut self.clusters[slot as usize].1;
                accumulator.note(host, place.map(|place| place.copy), manual_page);
                Slot::Entry(slot)
            }
            None => {
                let slot = match self.last_site {
                    Some((last, slot)) if last == host => slot,
                    _ => {
                        let next = self.sites.len() as u32;
                        let slot = *self.site_slots.entry(host).or_insert(next);
                        if slot == next {
                            self.sites.push(Site::new());
                            self.site_hits.push(SiteHits::default());
                        }
                        self.last_site = Some((host, slot));
                        slot
                    }
                };
                let hits = &mut self.site_hits[slot as usize];
                hits.count += 1;
                hits.prose += u32::from(!listing);
                Slot::Site(slot)
            }
        }
    }

    /// Counts `hits` hits at once ([`Fold::count`]), of which `prose` are
    /// pages of prose, all of group number `group` (below the number the
    /// fold was made for: [`Fold::of_groups`]), `entry`, `collection`,
    /// `host` and copy in their manual: a search that counts its hits by
    /// what they share (the search's roll-up fields' pairs) adds each
    /// pair's count once. `places` are places in their manual not counted
    /// before: the search tells them apart.
    #[allow(clippy::too_many_arguments)]
    pub fn count_many(
        &mut self,
        group: u32,
        entry: Option<EntryKey>,
        collection: Option<CollectionId>,
        (host, copy): (u32, Option<u16>),
        (hits, prose, places): (u32, u32, u32),
        principal: impl FnOnce(EntryKey) -> Shown,
    ) -> Slot {
        self.hits += u64::from(hits);
        if let Some(count) =
            collection.and_then(|collection| self.per_collection.get_mut(collection.0 as usize))
        {
            *count += hits;
        }
        let slot = self.slot_for_group(group, entry, host, principal);
        match slot {
            Slot::Entry(at) => {
                self.entry_hits[at as usize] += hits;
                let accumulator = &mut self.clusters[at as usize].1;
                accumulator.note(host, copy, crate::index::NONE);
                accumulator.places += places;
            }
            Slot::Site(at) => {
                let counted = &mut self.site_hits[at as usize];
                counted.count += hits;
                counted.prose += prose;
            }
        }
        slot
    }

    /// Makes room for `entries` more entries and `sites` more hosts' pages
    /// in no cluster at once: a search counting by pair knows how many
    /// groups it met before it settles them ([`Fold::count_many`]), which
    /// one by one moved the vectors and tables again as they grew.
    pub fn reserve(&mut self, entries: usize, sites: usize) {
        self.clusters.reserve(entries);
        self.entry_hits.reserve(entries);
        self.cluster_slots.reserve(entries);
        self.sites.reserve(sites);
        self.site_hits.reserve(sites);
        self.site_slots.reserve(sites);
    }

    /// The slot of group number `group`, once a hit of it was counted
    /// ([`Fold::count_many`]).
    #[inline]
    pub fn slot_of_group(&self, group: u32) -> Option<Slot> {
        let code = *self.by_group.get(group as usize)?;
        (code != NO_SLOT).then(|| Slot::of_code(code))
    }

    /// Whether a hit of this score, collection, place and kind, counted
    /// in `slot`, may change what its group shows or how it ranks.
    #[inline]
    fn may_improve(
        &self,
        slot: Slot,
        score: f32,
        collection: Option<CollectionId>,
        place: Option<LineagePlace>,
        listing: bool,
    ) -> bool {
        match slot {
            Slot::Entry(slot) => {
                let accumulator = &self.clusters[slot as usize].1;
                accumulator
                    .best
                    .is_none_or(|best| score.total_cmp(&best.score).is_ge())
                    || (accumulator.principal.holds(collection, place)
                        && accumulator.of_principal.may_enter(score, listing))
            }
            Slot::Site(slot) => self.sites[slot as usize].top.may_enter(score, listing),
        }
    }

    /// Offers the score of a hit counted in `slot` ([`Fold::count`]): it
    /// may become its group's best, or a page the group is shown from. A
    /// hit offered twice is kept once.
    #[inline]
    pub fn offer(&mut self, slot: Slot, hit: Hit) {
        match slot {
            Slot::Entry(slot) => self.clusters[slot as usize].1.add(hit),
            Slot::Site(slot) => self.sites[slot as usize].top.offer(hit),
        }
    }

    /// The hit `slot`'s group ranks by so far, when no hit still to come
    /// can lower it: an entry's best; a host's entry when it is a page of
    /// prose (a listing is its entry only when no page of prose of it
    /// matches, which only the whole count tells).
    pub fn sure_rank(&self, slot: Slot) -> Option<Hit> {
        match slot {
            Slot::Entry(slot) => self.clusters[slot as usize].1.best,
            Slot::Site(slot) => self.sites[slot as usize].entry(true),
        }
    }

    /// The hit each group ranks by, of the groups with hits offered, once
    /// every hit is counted: a host's entry is a listing only when none of
    /// its matching pages is a page of prose.
    fn ranked(&self) -> impl Iterator<Item = (Slot, Hit)> + '_ {
        let entries = self
            .clusters
            .iter()
            .enumerate()
            .filter_map(|(at, (_, accumulator))| {
                accumulator.best.map(|best| (Slot::Entry(at as u32), best))
            });
        let sites = self
            .sites
            .iter()
            .zip(&self.site_hits)
            .enumerate()
            .filter_map(|(at, (site, hits))| {
                site.entry(hits.prose > 0)
                    .map(|entry| (Slot::Site(at as u32), entry))
            });
        entries.chain(sites)
    }

    /// The best `wanted` groups of those with hits offered, once every
    /// hit is counted ([`Fold::count_many`]): the groups a results page
    /// shows when every hit that may rank them was offered.
    pub fn leading(&self) -> Vec<Slot> {
        let mut ranked: Vec<(Slot, Hit)> = self.ranked().collect();
        keep_best(&mut ranked, self.wanted, |(_, hit)| hit);
        ranked.into_iter().map(|(slot, _)| slot).collect()
    }

    /// The slot of group number `group` (below the number the fold was
    /// made for: [`Fold::of_groups`]), made if it has none: `entry`'s
    /// accumulator, or, in none, `host`'s pages in no cluster.
    pub fn slot_for_group(
        &mut self,
        group: u32,
        entry: Option<EntryKey>,
        host: u32,
        principal: impl FnOnce(EntryKey) -> Shown,
    ) -> Slot {
        let known = self.by_group[group as usize];
        if known != NO_SLOT {
            return Slot::of_code(known);
        }
        let slot = match entry {
            Some(entry) => Slot::Entry(self.slot(entry, || Accumulator::new(principal(entry)))),
            None => {
                let next = self.sites.len() as u32;
                let slot = *self.site_slots.entry(host).or_insert(next);
                if slot == next {
                    self.sites.push(Site::new());
                    self.site_hits.push(SiteHits::default());
                }
                Slot::Site(slot)
            }
        };
        self.by_group[group as usize] = slot.code();
        slot
    }

    /// The slot of `key`'s accumulator, made with `new` if it has none.
    fn slot(&mut self, key: EntryKey, new: impl FnOnce() -> Accumulator) -> u32 {
        match self.cluster_slots.entry(key) {
            Entry::Occupied(entry) => *entry.get(),
            Entry::Vacant(entry) => {
                let slot = self.clusters.len() as u32;
                self.clusters.push((key, new()));
                self.entry_hits.push(0);
                entry.insert(slot);
                slot
            }
        }
    }

    /// The entries and the hosts with pages in no cluster counted so far
    /// (the bounds of their [`Slot`]s).
    pub fn groups_counted(&self) -> (usize, usize) {
        (self.clusters.len(), self.sites.len())
    }

    /// Whether no hit was counted.
    pub fn is_empty(&self) -> bool {
        self.hits == 0
    }

    /// Adds another fold's hits (another segment's) to this one's.
    pub fn merge(&mut self, other: Fold) {
        debug_assert!(
            self.by_group.is_empty() && other.by_group.is_empty(),
            "a fold counted by group numbers is one search's, never merged"
        );
        self.hits += other.hits;
        if self.per_collection.len() < other.per_collection.len() {
            self.per_collection.resize(other.per_collection.len(), 0);
        }
        for (count, other) in self.per_collection.iter_mut().zip(other.per_collection) {
            *count += other;
        }
        for ((cluster, accumulator), hits) in other.clusters.into_iter().zip(other.entry_hits) {
            match self.cluster_slots.get(&cluster) {
                Some(&slot) => {
                    self.clusters[slot as usize].1.merge(accumulator);
                    self.entry_hits[slot as usize] += hits;
                }
                None => {
                    self.cluster_slots
                        .insert(cluster, self.clusters.len() as u32);
                    self.clusters.push((cluster, accumulator));
                    self.entry_hits.push(hits);
                }
            }
        }
        for (host, slot) in other.site_slots {
            let (site, hits) = (other.sites[slot as usize], other.site_hits[slot as usize]);
            let next = self.sites.len() as u32;
            let mine = *self.site_slots.entry(host).or_insert(next);
            if mine == next {
                self.sites.push(site);
                self.site_hits.push(hits);
            } else {
                self.sites[mine as usize].merge(site);
                self.site_hits[mine as usize].merge(hits);
            }
        }

        self.last_site = None;
    }

    /// The best `wanted` groups, best first, and the totals.
    pub fn finish(self) -> Folded {
        // An entry whose hits were only counted ranks below the results
        // page (a pruned search offers the scores that may change it).
        let clustered = self
            .clusters
            .iter()
            .enumerate()
            .filter_map(|(at, (_, accumulator))| Some((accumulator.best?, Offered::Entry(at))));
        // A host's entry is a page of prose when one matches; one whose
        // pages of prose were only counted ranks below the results page.
        let singles =
            self.sites
                .iter()
                .zip(&self.site_hits)
                .enumerate()
                .flat_map(|(at, (site, hits))| {
                    let ranked = site.entry(hits.prose > 0).is_some();
                    let shown = if ranked { site.shown() } else { 0 };
                    site.entries()
                        .take(shown)
                        .enumerate()
                        .map(move |(place, &hit)| (hit, Offered::Site { at, place, shown }))
                });
        // The groups kept are made, not every group offered: a broad
        // search meets thousands.
        let mut offered: Vec<(Hit, Offered)> = clustered.chain(singles).collect();
        keep_best(&mut offered, self.wanted, |(hit, _)| hit);
        offered.sort_unstable_by(|first, second| rank(&first.0, &second.0));
        let groups = offered
            .into_iter()
            .map(|(hit, offered)| self.group(hit, offered))
            .collect();
        let single_groups: u64 = self.site_hits.iter().map(SiteHits::groups).sum();
        let mut facets = FacetCounts::default();
        // A host's entries are its pages in no cluster or its entries.
        facets
            .hosts
            .reserve(self.site_slots.len() + self.clusters.len());
        for (key, accumulator) in &self.clusters {
            for &host in &accumulator.hosts {
                *facets.hosts.entry(host).or_default() += 1;
            }
            match *key {
                EntryKey::Lineage(lineage) => {
                    *facets.manuals.entry(lineage).or_default() += accumulator.places();
                    facets.copies.push((lineage, accumulator.copies.clone()));
                }
                EntryKey::ManualPage(lineage, _) => {
                    *facets.manuals.entry(lineage).or_default() += 1;
                    facets.copies.push((lineage, accumulator.copies.clone()));
                }
                EntryKey::Cluster(_) => {}
            }
        }
        for (&host, &slot) in &self.site_slots {
            *facets.hosts.entry(host).or_default() += self.site_hits[slot as usize].groups();
        }
        // In an order of their own, not of the hits' (a fold may meet them
        // in any order).
        for (_, copies) in &mut facets.copies {
            copies.sort_unstable();
        }
        facets.copies.sort_unstable();
        Folded {
            groups,
            total_groups: self.clusters.len() as u64 + single_groups,
            total_hits: self.hits,
            facets,
        }
    }
}

impl Fold {
    /// The group of an entry or of a host's page in no cluster
    /// ([`Fold::finish`]) that ranks by `best`.
    fn group(&self, best: Hit, offered: Offered) -> Group {
        match offered {
            Offered::Entry(at) => {
                let (_, accumulator) = &self.clusters[at];
                let (shown, sitelinks) = match accumulator.of_principal.first() {
                    Some(shown) => (shown, accumulator.of_principal.sitelinks(1, &shown)),
                    None => (best, Vec::new()),
                };
                let collection_hits = shown
                    .collection
                    .and_then(|collection| self.per_collection.get(collection.0 as usize))
                    .map_or(1, |&count| count.max(1));
                Group {
                    shown,
                    score: best.score,
                    hits: self.entry_hits[at],
                    collection_hits,
                    site_more: 0,
                    site_shown: Vec::new(),
                    sitelinks,
                }
            }
            Offered::Site { at, place, shown } => {
                let (site, hits) = (&self.sites[at], &self.site_hits[at]);
                let more = hits.count - shown as u32;
                let last = place + 1 == shown;
                let site_more = if last { more } else { 0 };
                Group {
                    shown: best,
                    score: best.score,
                    hits: 1 + site_more,
                    collection_hits: 1,
                    site_more,
                    site_shown: if last && more > 0 {
                        site.entries().map(|hit| hit.page).collect()
                    } else {
                        Vec::new()
                    },
                    sitelinks: if last {
                        Kept::<SITE_KEPT>::sitelinks_of(&site.top.0[ENTRIES_PER_HOST..], &best)
                    } else {
                        Vec::new()
                    },
                }
            }
        }
    }
}

/// What a group offered to [`Fold::finish`] is, before it is made.
#[derive(Debug, Clone, Copy)]
enum Offered {
    /// The entry at this index of the fold's entries.
    Entry(usize),
    /// The `place`th entry of the host at index `at` of the fold's hosts
    /// with pages in no cluster, which has `shown` entries.
    Site {
        at: usize,
        place: usize,
        shown: usize,
    },
}

/// Keeps the `wanted` best of `items` by the hit each ranks by
/// ([`rank`]), in no order.
fn keep_best<T>(items: &mut Vec<T>, wanted: usize, hit: impl Fn(&T) -> &Hit) {
    if items.len() <= wanted {
        return;
    }
    if wanted == 0 {
        items.clear();
        return;
    }
    items.select_nth_unstable_by(wanted - 1, |first, second| rank(hit(first), hit(second)));
    items.truncate(wanted);
}

/// Folds `hits` (in any order) into all their groups, best first.
#[cfg(test)]
pub fn fold(hits: &[Hit], principal: impl Fn(EntryKey) -> Shown) -> Vec<Group> {
    let collections = hits
        .iter()
        .filter_map(|hit| hit.collection)
        .map(|collection| collection.0 as usize + 1)
        .max()
        .unwrap_or(0);
    let mut fold = Fold::new(usize::MAX, collections);
    for &hit in hits {
        fold.add(hit, &principal);
    }
    fold.finish().groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(score: f32, page: u32, collection: Option<u32>, cluster: Option<u32>) -> Hit {
        Hit {
            score,
            page: PageId(page),
            collection: collection.map(CollectionId),
            cluster: cluster.map(ClusterId),
            lineage: None,
            host: page,
            listing: false,
            doc: DocAddress::new(0, page),
        }
    }

    /// An entry shown from the principal collection `principal` gives its
    /// cluster.
    fn by_cluster(
        principal: impl Fn(ClusterId) -> Option<CollectionId>,
    ) -> impl Fn(EntryKey) -> Shown {
        move |key| match key {
            EntryKey::Cluster(cluster) => principal(cluster).map_or(Shown::Best, Shown::Collection),
            EntryKey::Lineage(_) | EntryKey::ManualPage(..) => Shown::Copy(0),
        }
    }

    fn on(host: u32, hit: Hit) -> Hit {
        Hit { host, ..hit }
    }

    /// cho Figure 14: the TechWeb pages on www.techweb.com (collection 0,
    /// principal) and techweb.cmp.com (collection 1) fold into one entry shown
    /// from the principal copy; an unrelated page stays on its own.
    #[test]
    fn collections_and_their_replicas_fold_into_one_entry_from_the_principal_copy() {
        let hits = [
            hit(9.0, 10, Some(1), Some(0)), // the mirror's copy scores best
            hit(8.5, 1, Some(0), Some(0)),
            hit(7.0, 2, Some(0), Some(0)),
            hit(6.0, 3, Some(0), Some(0)),
            hit(8.0, 50, None, None),
            hit(5.0, 11, Some(1), Some(0)),
        ];
        let groups = fold(
            &hits,
            by_cluster(|cluster| (cluster == ClusterId(0)).then_some(CollectionId(0))),
        );
        assert_eq!(groups.len(), 2);
        // The cluster ranks by its best hit, and shows the principal's best page.
        assert_eq!(groups[0].score, 9.0);
        assert_eq!(groups[0].shown.page, PageId(1));
        assert_eq!(groups[0].hits, 5);
        assert_eq!(groups[0].collection_hits, 3);
        assert_eq!(groups[1].shown.page, PageId(50));
        assert_eq!((groups[1].hits, groups[1].collection_hits), (1, 1));
    }

    #[test]
    fn without_a_matching_page_in_the_principal_copy_the_best_page_is_shown() {
        let hits = [hit(3.0, 7, Some(4), Some(2)), hit(4.0, 8, Some(5), Some(2))];
        let groups = fold(&hits, by_cluster(|_| Some(CollectionId(3))));
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].shown.page, PageId(8));
        assert_eq!(groups[0].collection_hits, 1);
        assert_eq!(groups[0].hits, 2);
    }

    #[test]
    fn a_stray_copy_folds_into_its_twins_cluster() {
        // Page 9 is outside every collection but carries its twins' cluster.
        let hits = [hit(2.0, 9, None, Some(1)), hit(1.0, 4, Some(6), Some(1))];
        let groups = fold(&hits, by_cluster(|_| Some(CollectionId(6))));
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].shown.page, PageId(4));
        assert_eq!(groups[0].score, 2.0);
    }

    #[test]
    fn an_entry_is_shown_from_prose_with_its_close_pages_as_sitelinks() {
        // One cluster, its principal collection 1: a listing scoring best,
        // three prose pages close to the best prose page, one far below,
        // and a page of the other collection.
        let listing = Hit {
            listing: true,
            ..hit(9.0, 1, Some(1), Some(0))
        };
        let hits = [
            listing,
            hit(4.0, 2, Some(1), Some(0)),
            hit(3.0, 3, Some(1), Some(0)),
            hit(2.5, 4, Some(1), Some(0)),
            hit(1.0, 5, Some(1), Some(0)),
            hit(8.0, 6, Some(0), Some(0)),
        ];
        let groups = fold(&hits, by_cluster(|_| Some(CollectionId(1))));
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].shown.page, PageId(2));
        let sitelinks: Vec<u32> = groups[0].sitelinks.iter().map(|hit| hit.page.0).collect();
        // Page 5 scores under half of page 2's; the listing is never one.
        assert_eq!(sitelinks, [3, 4]);
        assert_eq!(groups[0].score, 9.0);
    }

    #[test]
    fn a_site_entry_has_its_next_pages_as_sitelinks() {
        let hits = [
            hit(4.0, 1, None, None),
            hit(3.0, 2, None, None),
            hit(1.0, 3, None, None),
        ]
        .map(|hit| on(7, hit));
        let groups = fold(&hits, by_cluster(|_| None));
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].site_more, 2);
        let sitelinks: Vec<u32> = groups[0].sitelinks.iter().map(|hit| hit.page.0).collect();
        assert_eq!(sitelinks, [2]);
    }

    #[test]
    fn ties_are_broken_by_page_id_whatever_the_input_order() {
        let mut hits = vec![
            hit(1.0, 5, None, None),
            hit(1.0, 2, None, None),
            hit(1.0, 9, None, None),
        ];
        let forward = fold(&hits, by_cluster(|_| None));
        hits.reverse();
        let backward = fold(&hits, by_cluster(|_| None));
        assert_eq!(forward, backward);
        let pages: Vec<u32> = forward.iter().map(|group| group.shown.page.0).collect();
        assert_eq!(pages, vec![2, 5, 9]);
    }

    /// What the reference fold groups by.
    #[derive(PartialEq, Eq, Hash)]
    enum Key {
        Entry(EntryKey),
        Page(PageId),
    }

    /// A group of the reference fold so far.
    struct Sofar {
        best: Hit,
        of_principal: Vec<Hit>,
        hits: u32,
    }

    /// Preferred first ([`Hit::preferred`]).
    fn by_preference(first: &Hit, second: &Hit) -> std::cmp::Ordering {
        if first.preferred(second) {
            std::cmp::Ordering::Less
        } else if second.preferred(first) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    }

    /// Of `hits` (preferred first), the sitelinks of `shown`.
    fn reference_sitelinks(hits: &[Hit], shown: &Hit) -> Vec<Hit> {
        hits.iter()
            .take(SITELINKS)
            .filter(|hit| !hit.listing && hit.score >= SITELINK_SHARE * shown.score)
            .copied()
            .collect()
    }

    /// The fold as it was first written, kept as the reference the bounded
    /// fold is checked against: every hit into a map of groups, every group
    /// sorted.
    fn reference_fold(hits: &[Hit], principal: impl Fn(EntryKey) -> Shown) -> Vec<Group> {
        use std::collections::HashMap;
        let mut per_collection: HashMap<CollectionId, u32> = HashMap::new();
        let mut groups: HashMap<Key, Sofar> = HashMap::new();
        for hit in hits {
            if let Some(collection) = hit.collection {
                *per_collection.entry(collection).or_default() += 1;
            }
            let key = match hit.entry() {
                Some(entry) => Key::Entry(entry),
                None => Key::Page(hit.page),
            };
            let of_principal = hit
                .entry()
                .is_some_and(|entry| principal(entry).holds(hit.collection, hit.lineage));
            let sofar = groups.entry(key).or_insert(Sofar {
                best: *hit,
                of_principal: Vec::new(),
                hits: 0,
            });
            sofar.hits += 1;
            if hit.beats(&sofar.best) {
                sofar.best = *hit;
            }
            if of_principal {
                sofar.of_principal.push(*hit);
            }
        }
        let mut folded: Vec<(Hit, Group)> = Vec::new();
        let mut sites: HashMap<u32, Vec<Hit>> = HashMap::new();
        for (key, mut sofar) in groups {
            if let Key::Page(_) = key {
                sites.entry(sofar.best.host).or_default().push(sofar.best);
                continue;
            }
            sofar.of_principal.sort_by(by_preference);
            let shown = sofar.of_principal.first().copied().unwrap_or(sofar.best);
            let sitelinks = if sofar.of_principal.is_empty() {
                Vec::new()
            } else {
                reference_sitelinks(&sofar.of_principal[1..], &shown)
            };
            let collection_hits = shown
                .collection
                .and_then(|collection| per_collection.get(&collection).copied())
                .unwrap_or(1);
            let group = Group {
                shown,
                score: sofar.best.score,
                hits: sofar.hits,
                collection_hits,
                site_more: 0,
                site_shown: Vec::new(),
                sitelinks,
            };
            folded.push((sofar.best, group));
        }
        for mut pages in sites.into_values() {
            pages.sort_by(by_preference);
            let kept = pages.len().min(ENTRIES_PER_HOST);
            let more = (pages.len() - kept) as u32;
            let shown_pages: Vec<PageId> = pages.iter().take(kept).map(|hit| hit.page).collect();
            for (place, &hit) in pages.iter().take(kept).enumerate() {
                let last = place + 1 == kept;
                let site_more = if last { more } else { 0 };
                let group = Group {
                    shown: hit,
                    score: hit.score,
                    hits: 1 + site_more,
                    collection_hits: 1,
                    site_more,
                    site_shown: if last && more > 0 {
                        shown_pages.clone()
                    } else {
                        Vec::new()
                    },
                    sitelinks: if last {
                        reference_sitelinks(&pages[kept..], &hit)
                    } else {
                        Vec::new()
                    },
                };
                folded.push((hit, group));
            }
        }
        folded.sort_by(|(first, _), (second, _)| rank(first, second));
        folded.into_iter().map(|(_, group)| group).collect()
    }

    /// The fold a search runs: per segment, keeping only the best `wanted`
    /// groups in full, then merged.
    fn fold_in_segments(
        hits: &[Hit],
        segments: usize,
        wanted: usize,
        principal: impl Fn(EntryKey) -> Shown,
    ) -> Folded {
        let mut folds: Vec<Fold> = (0..segments).map(|_| Fold::new(wanted, 64)).collect();
        for (index, &hit) in hits.iter().enumerate() {
            folds[index % segments].add(hit, &principal);
        }
        let mut folds = folds.into_iter();
        let mut merged = folds.next().unwrap();
        for fold in folds {
            merged.merge(fold);
        }
        merged.finish()
    }

    /// A manual entry's places are counted once each, however many copies
    /// hold them and however the segments' folds merge.
    #[test]
    fn a_manuals_places_count_once_each_across_copies_and_merges() {
        let mut places = Places::default();
        for place in [0, 5, 64, 5, 0, 200] {
            places.insert(place);
        }
        assert_eq!(places.len(), 4);
        let mut other = Places::default();
        for place in [5, 300, 1] {
            other.insert(place);
        }
        places.merge(&other);
        assert_eq!(places.len(), 6);
        let mut small = Places::default();
        small.insert(3);
        small.merge(&places);
        assert_eq!(small.len(), 7);
    }

    #[test]
    fn a_bounded_fold_gives_the_first_groups_and_totals_of_the_whole_fold() {
        // 400 hits: a third in no cluster (each its own group), the rest in
        // 11 clusters of 2 collections each; scores with many ties.
        // Pages in no cluster are on 40 hosts (a page's host: page / 10).
        let hits: Vec<Hit> = (0..400u32)
            .map(|page| {
                let cluster = (page % 3 != 0).then_some(page % 11);
                let collection = cluster.map(|cluster| cluster * 2 + page % 2);
                // Every seventh page a listing.
                Hit {
                    listing: page % 7 == 0,
                    ..on(
                        page / 10,
                        hit(((page * 7919) % 23) as f32, page, collection, cluster),
                    )
                }
            })
            .collect();
        let principal = by_cluster(|cluster: ClusterId| Some(CollectionId(cluster.0 * 2 + 1)));
        let whole = reference_fold(&hits, &principal);
        assert!(whole.iter().any(|group| !group.sitelinks.is_empty()));
        assert!(whole
            .iter()
            .all(|group| group.sitelinks.iter().all(|hit| !hit.listing)));
        // 134 pages in no cluster, 3 or 4 on each host: one entry a host.
        assert_eq!(whole.len(), 40 * ENTRIES_PER_HOST + 11);
        for segments in [1, 3] {
            for wanted in [1, 10, 20, 150, 1000] {
                let folded = fold_in_segments(&hits, segments, wanted, &principal);
                assert_eq!(folded.total_hits, 400);
                assert_eq!(folded.total_groups, whole.len() as u64);
                let expected = &whole[..wanted.min(whole.len())];
                assert_eq!(
                    folded.groups, expected,
                    "{segments} segments, {wanted} wanted"
                );
            }
        }
    }

    #[test]
    fn a_host_shows_one_page_in_no_cluster_and_folds_the_rest_under_it() {
        let hits = [
            on(1, hit(9.0, 10, None, None)),
            on(1, hit(3.0, 11, None, None)),
            on(1, hit(8.0, 12, None, None)),
            on(1, hit(7.0, 13, None, None)),
            on(2, hit(7.5, 20, None, None)),
            // A replicated page of host 1 is its cluster's entry, not crowded.
            on(1, hit(6.0, 14, Some(0), Some(0))),
        ];
        let principal = by_cluster(|_| Some(CollectionId(0)));
        let groups = fold(&hits, &principal);
        let shown: Vec<(u32, u32, u32)> = groups
            .iter()
            .map(|group| (group.shown.page.0, group.hits, group.site_more))
            .collect();
        assert_eq!(
            shown,
            vec![(10, 4, 3), (20, 1, 0), (14, 1, 0)],
            "host 1 once with its three other pages, then host 2, then the cluster"
        );
        assert_eq!(groups, reference_fold(&hits, &principal));
        for segments in [1, 2, 3] {
            let folded = fold_in_segments(&hits, segments, 2, &principal);
            assert_eq!(folded.total_groups, 3);
            assert_eq!(folded.groups, &groups[..2]);
        }
    }

    #[test]
    fn a_manual_in_all_its_versions_is_one_entry_shown_from_the_copy_asked_for() {
        // Lineage 4: copy 0 the newest original (cluster 1, collection 2),
        // copy 1 an older version on a mirror (cluster 3), copy 2 an older
        // version in no cluster; a page of cluster 5 outside the manual.
        let of = |copy: u16| {
            Some(LineagePlace {
                lineage: LineageId(4),
                copy,
            })
        };
        let with = |hit: Hit, place| Hit {
            lineage: place,
            ..hit
        };
        let hits = [
            with(hit(9.0, 30, Some(7), Some(3)), of(1)),
            with(hit(8.0, 40, None, None), of(2)),
            with(hit(6.0, 10, Some(2), Some(1)), of(0)),
            with(hit(5.0, 11, Some(2), Some(1)), of(0)),
            hit(7.0, 50, Some(9), Some(5)),
        ];
        let principal = |copy: u16| {
            move |key: EntryKey| match key {
                EntryKey::Lineage(_) | EntryKey::ManualPage(..) => Shown::Copy(copy),
                EntryKey::Cluster(_) => Shown::Collection(CollectionId(9)),
            }
        };
        let groups = fold(&hits, principal(0));
        assert_eq!(groups.len(), 2, "the manual once, the other cluster once");
        assert_eq!(groups[0].score, 9.0, "ranked by its best page");
        assert_eq!(groups[0].shown.page, PageId(10), "shown from the newest");
        assert_eq!(groups[0].hits, 4);
        assert_eq!(groups, reference_fold(&hits, principal(0)));
        // A query naming the older version shows that one.
        let asked = fold(&hits, principal(2));
        assert_eq!(asked[0].shown.page, PageId(40));
        for segments in [1, 2, 3] {
            let folded = fold_in_segments(&hits, segments, 10, principal(1));
            assert_eq!(folded.groups[0].shown.page, PageId(30));
            assert_eq!(folded.total_groups, 2);
        }
    }

    #[test]
    fn a_later_hit_of_equal_score_and_lower_page_becomes_the_best() {
        // Within cluster 0 (principal collection 1), equal scores arrive
        // after the current best with lower page ids, in the principal copy
        // and outside it; and a page in no cluster ties the group's score.
        let hits = [
            hit(5.0, 40, Some(2), Some(0)),
            hit(5.0, 30, Some(1), Some(0)),
            hit(4.0, 25, Some(1), Some(0)),
            hit(5.0, 20, Some(2), Some(0)),
            hit(5.0, 10, Some(1), Some(0)),
            hit(1.0, 5, Some(2), Some(0)),
            hit(5.0, 15, None, None),
            hit(5.0, 12, None, None),
        ];
        let principal = by_cluster(|_: ClusterId| Some(CollectionId(1)));
        let expected = reference_fold(&hits, &principal);
        assert_eq!(expected[0].shown.page, PageId(10));
        assert_eq!(expected[1].shown.page, PageId(12));
        for segments in [1, 2, 3] {
            for wanted in [1, 2, 3, 10] {
                let folded = fold_in_segments(&hits, segments, wanted, &principal);
                assert_eq!(folded.groups, &expected[..wanted.min(expected.len())]);
                assert_eq!(folded.total_groups, 3);
            }
        }
        // Reversed, the earlier hits come later.
        let mut reversed = hits;
        reversed.reverse();
        assert_eq!(fold(&reversed, &principal), expected);
    }

    #[test]
    fn every_hit_lands_in_exactly_one_group() {
        let hits: Vec<Hit> = (0..200u32)
            .map(|page| {
                let cluster = (page % 3 != 0).then_some(page % 7);
                let collection = cluster.map(|cluster| cluster * 2 + page % 2);
                hit((page % 13) as f32, page, collection, cluster)
            })
            .collect();
        let groups = fold(
            &hits,
            by_cluster(|cluster| Some(CollectionId(cluster.0 * 2))),
        );
        let total: u32 = groups.iter().map(|group| group.hits).sum();
        assert_eq!(total as usize, hits.len());
        let mut clusters: Vec<u32> = groups
            .iter()
            .filter_map(|group| group.shown.cluster.map(|cluster| cluster.0))
            .collect();
        let before = clusters.len();
        clusters.sort_unstable();
        clusters.dedup();
        assert_eq!(clusters.len(), before, "no two groups of one cluster");
        assert!(groups.windows(2).all(|pair| pair[0].score >= pair[1].score));
    }
}
