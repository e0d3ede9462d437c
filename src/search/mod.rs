//! Search with roll-up (cho-2000 §5.2): a query's hits folded into one entry
//! per collection and one per similar cluster, each with its Collection
//! expansion (the collection's matching pages) and its Replica expansion
//! (every copy of the collection, and the copy of the matching page on each);
//! the stored copy of a page, with why it was grouped.
//!
//! Reads one generation: its page table, trivial clusters, collections and
//! search index, and the page store; writes nothing. An [`Engine`] is one
//! generation, opened whole; the server swaps engines when `index` switches
//! generations.

mod collector;
mod expand;
mod host;
mod manual_name;
mod page;
mod pruned;
pub mod rollup;
mod suggest;
mod view;

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use lru::LruCache;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use tantivy::collector::Count;
use tantivy::query::Query;
use tantivy::snippet::SnippetGenerator;
use tantivy::{DocAddress, Score, Searcher, TantivyDocument};

use crate::collections::{Cluster, ClusterId, Collection, CollectionId, Collections, LineageId};
use crate::generation::{Analysis, DataDir, DataError, FingerprintFile, Manifest};
use crate::index::{IndexError, IndexField, Reading, Scope, SearchIndex, SearchQuery, INDEX_DIR};
use crate::mirrors::Mirrors;
use crate::pages::{PageId, PageTable};
use crate::similarity::aliases::UrlAliases;
use crate::similarity::Similarity;
use crate::store::{PageStore, StoreConfig};

pub use collector::replication_boost;
pub use expand::{
    CollectionView, CopyView, ExpandedPage, Mirroring, Paging, ReplicaView, SiteView,
    EXPANSION_ROWS,
};
pub use host::{is_host_name, HostMirrorView, HostView, TestView};
use manual_name::ManualName;
pub use page::{CopyEvidence, PageView};
use view::Snippets;
pub use view::{
    followable, CollectionLink, FacetValue, Facets, PageLink, ReplicaLink, ResultGroup, Results,
    SiteLink, Sitelink, SnippetPart,
};

/// Result groups per page of results.
pub const GROUPS_PER_PAGE: usize = 10;

/// Below this many pages that say a query's words in their own text (a
/// results page's worth), the words are looked up in site chrome too.
/// Chrome is on every page of a site: searched always, its long lists cost
/// every query time and find pages that only link to the subject.
pub const CHROME_BELOW: u64 = GROUPS_PER_PAGE as u64;

/// What a search found, before its views are built.
enum Found {
    Folded(rollup::Folded),
    Flat(usize, Vec<(Score, DocAddress)>),
}

impl Found {
    fn total_hits(&self) -> u64 {
        match self {
            Found::Folded(folded) => folded.total_hits,
            Found::Flat(count, _) => *count as u64,
        }
    }
}

/// Search settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    /// With `rank=replication`, scores become `score x (1 + boost x
    /// ln(copies))` (cho-2000 §1: a page with many copies matters more).
    /// Default 0.25: on the demo crawl it lifts a page copied on five hosts
    /// by 40% over a page found once, enough to reorder close scores, not
    /// enough to bury a much better unreplicated match.
    pub replication_boost: f32,
    /// Longest snippet, in characters.
    pub snippet_chars: usize,
    /// Longest query, in bytes.
    pub max_query_bytes: usize,
    /// Highest results page a request may ask for.
    pub max_page: usize,
    /// Most pages one Collection expansion lists.
    pub max_expansion_pages: usize,
    /// Search threads of the server's pool; 0 = one per core. Read once,
    /// when the server starts (every other search setting is read again
    /// with each generation the server opens).
    pub threads: usize,
    /// Searches that may wait for a thread; beyond, the server answers 503.
    /// Read once, when the server starts, as `threads`.
    pub queue: usize,
    /// A request's time, in milliseconds. A search that waited this long for
    /// a thread is answered 503 without running (its client has waited
    /// enough; the thread goes to the next); a search running past it makes
    /// no more snippets: its later entries show the start of their page's
    /// text. Default 1000. The queue wait is read once, as `threads`.
    pub budget_ms: u64,
    /// Searches whose results are kept, most recently asked first, for the
    /// same words asked again (the front page's links, a query shared by many
    /// users); 0 keeps none. Default 512 (a few MB).
    pub cached_searches: usize,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            replication_boost: 0.25,
            snippet_chars: 240,
            max_query_bytes: 1000,
            max_page: 1000,
            max_expansion_pages: 1000,
            threads: 0,
            queue: 256,
            budget_ms: 1000,
            cached_searches: 512,
        }
    }
}

impl SearchConfig {
    /// Why these values cannot be used, if they cannot.
    pub fn problem(&self) -> Option<String> {
        if !(0.0..=100.0).contains(&self.replication_boost) {
            return Some("search.replication_boost must be from 0 to 100".into());
        }
        if self.snippet_chars == 0
            || self.max_query_bytes == 0
            || self.max_page == 0
            || self.max_expansion_pages == 0
            || self.queue == 0
            || self.budget_ms == 0
        {
            return Some(
                "search.snippet_chars, max_query_bytes, max_page, max_expansion_pages, queue and budget_ms must be at least 1"
                    .into(),
            );
        }
        None
    }

    /// A request's time budget.
    pub fn budget(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.budget_ms)
    }

    /// Threads of the search pool.
    pub fn pool_threads(&self) -> usize {
        if self.threads > 0 {
            return self.threads;
        }
        std::thread::available_parallelism().map_or(1, |cores| cores.get())
    }
}

/// How results are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rank {
    /// BM25.
    #[default]
    Relevance,
    /// BM25 boosted by the number of copies (cho-2000 §1).
    Replication,
}

/// The facets' values a search is narrowed to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Filters {
    /// A manual (its lineage): each of its pages is an entry.
    pub manual: Option<LineageId>,
    /// A release (`3.1.x`): the pages of the copies of that version.
    pub version: Option<String>,
    /// A host, by name.
    pub host: Option<String>,
}

impl Filters {
    pub fn is_empty(&self) -> bool {
        self.manual.is_none() && self.version.is_none() && self.host.is_none()
    }
}

/// Most values a facet lists (the values applied always listed).
pub const FACET_VALUES: usize = 10;

/// A search as asked.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub query: String,
    /// From 1.
    pub page: usize,
    pub rollup: bool,
    pub rank: Rank,
    /// Search these very words: a query that finds nothing is not
    /// corrected (the "search instead for" link).
    pub as_typed: bool,
    pub filters: Filters,
}

/// Errors of searching.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// A parameter out of its range.
    #[error("{0}")]
    BadRequest(String),
    /// No such page, collection or cluster.
    #[error("{0}")]
    NotFound(String),
    #[error(transparent)]
    Data(#[from] DataError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error("search index: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
}

pub type Result<T> = std::result::Result<T, SearchError>;

/// One generation, opened for searching.
pub struct Engine {
    generation: String,
    manifest: Manifest,
    table: PageTable,
    /// The analysis without the pages' fingerprints (they are most of its
    /// memory), which are read from their file for the pages shown.
    similarity: Similarity,
    fingerprints: FingerprintFile,
    /// The statistics page's figures, once gathered.
    stats: std::sync::OnceLock<crate::stats::Stats>,
    collections: Collections,
    mirrors: Mirrors,
    /// Pages of each trivial cluster: `copies[offsets[t]..offsets[t + 1]]`.
    copy_offsets: Vec<u32>,
    copies: Vec<PageId>,
    /// By trivial cluster: the cluster its stray copies roll up into.
    strays: Vec<Option<ClusterId>>,
    /// Each similar cluster's principal collection, for the roll-up fold.
    principals: Arc<FxHashMap<ClusterId, CollectionId>>,
    /// The URLs of each page named more than once on its host, by the page
    /// standing for them ([`UrlAliases`]), and each page's standing page.
    url_names: FxHashMap<PageId, Vec<PageId>>,
    standing_for: Vec<PageId>,
    /// By collection id: its pages, a page under two URLs counted once.
    collection_sizes: Vec<u32>,
    index: SearchIndex,
    /// The index's roll-up fast fields, decoded once.
    rollup_fields: Arc<collector::RollupFields>,
    store: PageStore,
    config: SearchConfig,
    /// Results of recent searches, whole (none cut short by the budget).
    recent: Mutex<Option<LruCache<SearchKey, Results>>>,
    /// Each manual's name, as the manual facet shows it.
    manual_labels: FxHashMap<LineageId, ManualName>,
    /// Each manual's copies' releases ([`copy_releases`]).
    copy_releases: FxHashMap<LineageId, Vec<Option<String>>>,
}

/// For each manual, the release each copy's version is listed as: its
/// manual's most precise name of it
/// ([`crate::collections::Lineage::versions`]: `10.1` is `10.1.60` where
/// a copy says so).
fn copy_releases(collections: &Collections) -> FxHashMap<LineageId, Vec<Option<String>>> {
    collections
        .lineages
        .lineages
        .iter()
        .map(|lineage| {
            let listed = lineage.versions();
            let releases = lineage
                .copies
                .iter()
                .map(|copy| {
                    let version = copy.version.as_deref()?;
                    let release = listed
                        .iter()
                        .find(|listed| crate::collections::lineage::same_release(listed, version))
                        .copied()
                        .unwrap_or(version);
                    Some(release.to_string())
                })
                .collect();
            (lineage.id, releases)
        })
        .collect()
}

/// By collection id: how many pages it holds, a second URL of one of its
/// pages ([`UrlAliases`], `standing_for`) not counted.
fn collection_sizes(collections: &Collections, standing_for: &[PageId]) -> Vec<u32> {
    collections
        .collections
        .iter()
        .map(|collection| {
            let pages = &collection.pages;
            pages
                .iter()
                .filter(|&&page| is_own_page_in(standing_for, page, pages))
                .count() as u32
        })
        .collect()
}

/// Whether `page` counts as a page of its own in `pages` (sorted): not a
/// second URL of one of them, by `standing_for` ([`UrlAliases`]).
fn is_own_page_in(standing_for: &[PageId], page: PageId, pages: &[PageId]) -> bool {
    match standing_for.get(page.0 as usize) {
        Some(&standing) if standing != page => pages.binary_search(&standing).is_err(),
        _ => true,
    }
}

/// Pages of a manual's principal copy whose titles are read to name it.
const LABEL_SAMPLE: usize = 200;

/// Each manual's name: the part of its pages' titles that most of them
/// share ("SQLAlchemy 1.4 Documentation" of "Session Basics — SQLAlchemy
/// 1.4 Documentation"), without a version in parentheses (the manual is
/// every version); else its front page's title (its folder's own page,
/// else the page it was found from); else its folder. A manual of several
/// releases is named without the one its titles give ([`ManualName`]).
fn manual_labels(table: &PageTable, collections: &Collections) -> FxHashMap<LineageId, ManualName> {
    const SEPARATORS: [&str; 5] = [" — ", " – ", " - ", " | ", " · "];
    let mut labels = FxHashMap::default();
    for lineage in &collections.lineages.lineages {
        let copy = lineage.principal();
        let collection = copy
            .collection
            .and_then(|collection| collections.collection(collection));
        let pages = collection.map_or(&[][..], |collection| &collection.pages[..]);
        let mut counts: FxHashMap<&str, usize> = FxHashMap::default();
        let sample = pages.len().min(LABEL_SAMPLE);
        for &page in &pages[..sample] {
            let Some(page) = table.page(page) else {
                continue;
            };
            let mut parts = vec![page.title.as_ref()];
            for separator in SEPARATORS {
                parts = parts
                    .into_iter()
                    .flat_map(|part| part.split(separator))
                    .collect();
            }
            parts.sort_unstable();
            parts.dedup();
            for part in parts {
                let part = part.trim();
                if !part.is_empty() {
                    *counts.entry(part).or_default() += 1;
                }
            }
        }
        let front = collection
            .and_then(|collection| table.page(front_page(table, collection)))
            .map(|front| front.title.trim().to_string())
            .filter(|title| !title.is_empty());
        let most = |candidates: &mut dyn Iterator<Item = (&str, usize)>| {
            candidates
                .max_by(|first, second| first.1.cmp(&second.1).then(second.0.cmp(first.0)))
                .map(|(part, _)| without_version_note(part))
        };
        // The part of the front page's title most pages share, else the
        // part most pages share.
        let of_front = front.as_deref().and_then(|front| {
            let mut parts = counts
                .iter()
                .filter(|&(part, &count)| count >= 2 && front.contains(part))
                .map(|(&part, &count)| (part, count));
            most(&mut parts)
        });
        let shared = of_front.or_else(|| {
            let mut parts = counts
                .iter()
                .filter(|&(_, &count)| count >= 2 && count * 2 >= sample)
                .map(|(&part, &count)| (part, count));
            most(&mut parts)
        });
        let label = shared
            .filter(|label| !label.is_empty())
            .or(front)
            .unwrap_or_else(|| copy.prefix.clone());
        let name = ManualName::of(label, copy.version.as_deref(), &lineage.versions());
        labels.insert(lineage.id, name);
    }
    labels
}

/// A copy's front page: its folder's own page (`dir/`, `dir/index.html`)
/// where the copy holds it, its table of contents titled by the manual's
/// name; else the page its growth began from, which may be any chapter
/// (Exim's "1. Introduction").
fn front_page(table: &PageTable, collection: &crate::collections::Collection) -> PageId {
    ["", "index.html", "index.htm"]
        .into_iter()
        .filter_map(|name| table.find_url(&format!("{}{name}", collection.prefix)))
        .find(|page| collection.pages.binary_search(page).is_ok())
        .unwrap_or(collection.root)
}

/// `name` without a closing parenthesis that holds a version
/// (`Apache Tomcat 10 (10.1.60)`, `Flask Documentation (3.1.x)`).
fn without_version_note(name: &str) -> String {
    let name = name.trim();
    if let Some(open) = name.rfind(" (") {
        let note = &name[open + 2..];
        if note.ends_with(')') && note.chars().any(|c| c.is_ascii_digit()) {
            return name[..open].trim().to_string();
        }
    }
    name.to_string()
}

/// A query of this many words or more that finds nothing shows the pages
/// holding most of them.
const MOST_WORDS_FROM: usize = 4;

/// The share of a long query's words a page must hold to be shown when no
/// page holds them all: half, as a question's words are half particles.
const MOST_WORDS_SHARE: f64 = 0.5;

/// Whether a correction is sure enough to show its results in place of
/// nothing: every word it changes, and the word it puts instead, has at
/// least four letters (one edit to a short word, `vec` to `ve`, is as likely
/// another word as a typing mistake: that stays a "Did you mean").
fn sure_correction(query: &str, corrected: &str) -> bool {
    let typed = crate::index::query_terms(query);
    let fixed = crate::index::query_terms(corrected);
    typed.len() == fixed.len()
        && typed
            .iter()
            .zip(&fixed)
            .filter(|(typed, fixed)| typed != fixed)
            .all(|(typed, fixed)| typed.chars().count() >= 4 && fixed.chars().count() >= 4)
}

/// What a search's results depend on, beside the generation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SearchKey {
    query: String,
    page: usize,
    rollup: bool,
    rank: Rank,
    as_typed: bool,
    filters: Filters,
}

impl SearchKey {
    fn of(request: &SearchRequest) -> SearchKey {
        SearchKey {
            query: request.query.clone(),
            page: request.page,
            rollup: request.rollup,
            rank: request.rank,
            as_typed: request.as_typed,
            filters: request.filters.clone(),
        }
    }
}

impl Engine {
    /// Opens the current generation of `data` with the search settings
    /// `config`; the store, which has the settings `store`, is opened for
    /// reading only.
    pub fn open(data: &DataDir, config: SearchConfig, store: &StoreConfig) -> Result<Engine> {
        let store = data.store_for_reading(store)?;
        let generation = data.generation()?;
        let Analysis {
            manifest,
            table,
            similarity,
            collections,
            mirrors,
            path,
        } = generation.analysis_without_fingerprints()?;
        let fingerprints = generation.fingerprints(&table)?;
        let index_dir: PathBuf = path.join(INDEX_DIR);
        let index = SearchIndex::open(&index_dir)?;
        let rollup_fields = Arc::new(collector::RollupFields::read(&index.searcher())?);
        tracing::debug!(
            bytes = rollup_fields.bytes(),
            "the index's roll-up fields decoded"
        );
        // What decoding the tables and fields needed for a while is given
        // back: a server lives long after opening.
        crate::memory::release_free();
        let (copy_offsets, copies) = copies_by_trivial_cluster(&similarity);
        let strays = crate::index::stray_clusters(&similarity, &collections);
        let aliases = UrlAliases::find(&table, &similarity);
        let url_names = aliases.groups().into_iter().collect();
        let collection_sizes = collection_sizes(&collections, &aliases.standing_for);
        let manual_labels = manual_labels(&table, &collections);
        let copy_releases = copy_releases(&collections);
        let principals = Arc::new(
            collections
                .clusters
                .iter()
                .map(|cluster| (cluster.id, cluster.principal()))
                .collect(),
        );
        let engine = Engine {
            generation: manifest.generation.clone(),
            manifest,
            table,
            similarity,
            fingerprints,
            stats: std::sync::OnceLock::new(),
            collections,
            mirrors,
            copy_offsets,
            copies,
            strays,
            principals,
            url_names,
            standing_for: aliases.standing_for,
            collection_sizes,
            index,
            rollup_fields,
            store,
            recent: Mutex::new(NonZeroUsize::new(config.cached_searches).map(LruCache::new)),
            config,
            manual_labels,
            copy_releases,
        };
        // And what building the tables derived from them needed: without
        // this, mimalloc gives it back only once later allocations purge
        // (the 1M web's server held 1,203 MB until its first search, then
        // 901 MB).
        crate::memory::release_free();
        Ok(engine)
    }

    /// The URLs `page` goes by on its host, itself included (just itself
    /// when it has one).
    pub fn url_names(&self, page: PageId) -> Vec<PageId> {
        self.standing_for
            .get(page.0 as usize)
            .and_then(|standing| self.url_names.get(standing))
            .cloned()
            .unwrap_or_else(|| vec![page])
    }

    /// Whether `page` counts as a page of its own in `pages` (sorted): not
    /// a second URL of one of them ([`UrlAliases`]). A list of a folder's
    /// pages shows the standing URL of a page named twice, and counts it
    /// once.
    pub fn is_own_page(&self, page: PageId, pages: &[PageId]) -> bool {
        is_own_page_in(&self.standing_for, page, pages)
    }

    /// How many pages `collection` holds, a page under two URLs counted
    /// once (counted when the engine opens).
    pub fn collection_size(&self, collection: &Collection) -> usize {
        self.collection_sizes
            .get(collection.id.0 as usize)
            .map_or(collection.pages.len(), |&size| size as usize)
    }

    /// The pages of `cluster`'s largest collection, as
    /// [`Engine::collection_size`] counts them (the cluster's `size` counts
    /// URLs).
    pub fn cluster_size(&self, cluster: &Cluster) -> usize {
        cluster
            .collections
            .iter()
            .filter_map(|&id| self.collections.collection(id))
            .map(|collection| self.collection_size(collection))
            .max()
            .unwrap_or(0)
    }

    /// The generation's name (`gen-000004`).
    pub fn generation(&self) -> &str {
        &self.generation
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    pub fn table(&self) -> &PageTable {
        &self.table
    }

    pub fn collections(&self) -> &Collections {
        &self.collections
    }

    pub fn mirrors(&self) -> &Mirrors {
        &self.mirrors
    }

    /// The figures of `mirrorscope stats` for this generation.
    /// Gathered at the first call and kept: the generation never changes,
    /// and the stand-ins' fingerprints are read from their file.
    pub fn stats(&self) -> Result<crate::stats::Stats> {
        if let Some(stats) = self.stats.get() {
            return Ok(stats.clone());
        }
        let stats = crate::stats::Stats::of(
            &self.manifest,
            &self.table,
            (&self.similarity, &self.fingerprints),
            &self.collections,
        )?;
        Ok(self.stats.get_or_init(|| stats).clone())
    }

    /// The copies of `page` in the crawl (its trivial cluster), itself
    /// included, in page order.
    pub fn copies_of(&self, page: PageId) -> &[PageId] {
        let Some(trivial) = self.similarity.trivial.get(page.0 as usize) else {
            return &[];
        };
        let index = trivial.0 as usize;
        let start = self.copy_offsets[index] as usize;
        let end = self.copy_offsets[index + 1] as usize;
        &self.copies[start..end]
    }

    /// For a page outside every collection, the cluster its copies are in
    /// (the one the index rolls it up into).
    pub fn stray_cluster(&self, page: PageId) -> Option<ClusterId> {
        let trivial = self.similarity.trivial.get(page.0 as usize)?;
        self.strays.get(trivial.0 as usize).copied().flatten()
    }

    /// Runs a search: rolled-up groups, or the flat list of hits.
    ///
    /// Results asked for again come from the recent searches; a search that
    /// runs past the budget ([`SearchConfig::budget_ms`]) makes no more
    /// snippets.
    pub fn search(&self, request: &SearchRequest) -> Result<Results> {
        let started = Instant::now();
        let key = SearchKey::of(request);
        let cached =
            self.recent.lock().ok().and_then(|mut recent| {
                recent.as_mut().and_then(|recent| recent.get(&key).cloned())
            });
        if let Some(mut results) = cached {
            results.took_ms = started.elapsed().as_secs_f64() * 1000.0;
            return Ok(results);
        }
        let snippets_until = started + self.config.budget();
        let (mut results, mut whole) = self.search_untimed(request, snippets_until, false)?;
        // Nothing found and a correction at hand: its results, as web search
        // engines show them ("Showing results for …").
        if let (0, false, Some(corrected)) = (
            results.total_groups,
            request.as_typed,
            results
                .suggestion
                .clone()
                .filter(|corrected| sure_correction(&request.query, corrected)),
        ) {
            let again = SearchRequest {
                query: corrected.clone(),
                ..request.clone()
            };
            let (mut found, found_whole) = self.search_untimed(&again, snippets_until, false)?;
            if found.total_groups > 0 {
                found.query = request.query.clone();
                found.showing_for = Some(corrected);
                found.suggestion = None;
                (results, whole) = (found, found_whole);
            }
        }
        // Still nothing, for a question of many words: the pages holding
        // most of them.
        if results.total_groups == 0
            && !request.as_typed
            && crate::index::query_terms(&request.query).len() >= MOST_WORDS_FROM
        {
            let (mut found, found_whole) = self.search_untimed(request, snippets_until, true)?;
            if found.total_groups > 0 {
                found.most_words = true;
                found.suggestion = None;
                (results, whole) = (found, found_whole);
            }
        }
        results.took_ms = started.elapsed().as_secs_f64() * 1000.0;
        if whole {
            if let Ok(mut recent) = self.recent.lock() {
                if let Some(recent) = recent.as_mut() {
                    recent.push(key, results.clone());
                }
            }
        }
        Ok(results)
    }

    /// The results, and whether every entry has its snippet; with
    /// `most_words`, of the pages holding most of the query's words
    /// ([`MOST_WORDS_SHARE`]) rather than all.
    fn search_untimed(
        &self,
        request: &SearchRequest,
        snippets_until: Instant,
        most_words: bool,
    ) -> Result<(Results, bool)> {
        let query_text = self.check_query(&request.query)?;
        if request.page == 0 || request.page > self.config.max_page {
            return Err(SearchError::BadRequest(format!(
                "page must be from 1 to {}",
                self.config.max_page
            )));
        }
        let mut results = Results {
            query: request.query.clone(),
            page: request.page,
            pages: 0,
            total_hits: 0,
            total_groups: 0,
            took_ms: 0.0,
            suggestion: None,
            showing_for: None,
            most_words: false,
            rollup: request.rollup,
            rank: request.rank,
            searched_words: None,
            lenient: false,
            chrome_searched: false,
            facets: Facets::default(),
            groups: Vec::new(),
        };
        if query_text.is_empty() {
            return Ok((results, true));
        }
        let searcher = self.index.searcher();
        let offset = (request.page - 1) * GROUPS_PER_PAGE;
        // The page's own text first; its site's chrome too when few pages
        // say the words themselves and chrome finds more.
        let words = most_words.then(|| {
            let mut words = crate::index::query_terms(query_text);
            words.sort_unstable();
            words.dedup();
            words
        });
        let parse = |scope| match &words {
            Some(words) => self.index.parse_most(words, MOST_WORDS_SHARE, scope),
            None => self.parse(query_text, scope),
        };
        let mut parsed = parse(Scope::OwnText);
        // The pages about the query, looked up once for both scopes.
        let about = Arc::new(self.about(&searcher, &request.query)?);
        let mut found = self.find(&searcher, request, &parsed.query, offset, &about)?;
        if found.total_hits() < CHROME_BELOW {
            let wider = parse(Scope::WithChrome);
            let more = self.find(&searcher, request, &wider.query, offset, &about)?;
            if more.total_hits() > found.total_hits() {
                (parsed, found) = (wider, more);
                results.chrome_searched = true;
            }
        }
        match parsed.reading {
            Reading::AsTyped => {}
            Reading::Lenient => results.lenient = true,
            Reading::Words(words) => results.searched_words = Some(words),
        }
        let snippets = self.snippets(&searcher, &parsed.query, snippets_until)?;
        match found {
            Found::Folded(folded) => {
                results.facets = self.facets(&folded.facets, &request.filters);
                results.total_hits = folded.total_hits;
                results.total_groups = folded.total_groups;
                results.pages = folded.total_groups.div_ceil(GROUPS_PER_PAGE as u64) as usize;
                for group in folded.groups.iter().skip(offset) {
                    results
                        .groups
                        .push(self.group_view(&searcher, &snippets, group)?);
                }
            }
            Found::Flat(count, hits) => {
                results.total_hits = count as u64;
                results.total_groups = count as u64;
                results.pages = count.div_ceil(GROUPS_PER_PAGE);
                for (score, address) in hits {
                    results
                        .groups
                        .push(self.flat_view(&searcher, &snippets, score, address)?);
                }
            }
        }
        if results.total_groups == 0 {
            results.suggestion = self.suggest(query_text, &searcher);
        }
        Ok((results, !snippets.cut.get()))
    }

    /// The groups up to the page asked for (rolled up), or the page's hits
    /// and their count (flat); `about`, the pages about the query
    /// ([`Engine::about`]), weighs their scores.
    fn find(
        &self,
        searcher: &Searcher,
        request: &SearchRequest,
        query: &SearchQuery,
        offset: usize,
        about: &Arc<collector::About>,
    ) -> Result<Found> {
        let boost = (request.rank == Rank::Replication).then_some(self.config.replication_boost);
        let about = Arc::clone(about);
        let filtered = self
            .narrowed(&*query.matching, &request.filters)
            .map(|matching| query.matching_instead(matching));
        let query: &SearchQuery = filtered.as_ref().unwrap_or(query);
        if request.rollup {
            let principals = collector::Principals {
                clusters: Arc::clone(&self.principals),
                copies: self.versions_asked(&request.query),
            };
            let wanted = offset + GROUPS_PER_PAGE;
            let collections = self.collections.collections.len();
            // A search within one manual makes each of its pages an entry:
            // its hits are few, and all of them are folded.
            let folded = if request.filters.manual.is_some() {
                searcher.search(
                    query,
                    &collector::FoldCollector {
                        replication_boost: boost,
                        wanted,
                        collections,
                        principals: Arc::new(principals),
                        about,
                        by_page: true,
                        shared: Default::default(),
                        fields: Arc::clone(&self.rollup_fields),
                    },
                )?
            } else {
                pruned::PrunedFold {
                    replication_boost: boost,
                    wanted,
                    collections,
                    principals: &principals,
                    about: &about,
                    fields: &self.rollup_fields,
                }
                .search(searcher, query)?
            }
            .finish();
            return Ok(Found::Folded(folded));
        }
        let (count, best) = pruned::flat_best(
            searcher,
            query,
            offset + GROUPS_PER_PAGE,
            (boost, &about, &self.rollup_fields),
        )?;
        Ok(Found::Flat(count, best.into_iter().skip(offset).collect()))
    }

    /// `query` narrowed to the pages `filters` leave, or `None` when they
    /// leave every page.
    fn narrowed(&self, query: &dyn Query, filters: &Filters) -> Option<Box<dyn Query>> {
        use tantivy::query::{BooleanQuery, EmptyQuery, Occur, TermQuery};
        use tantivy::schema::IndexRecordOption;
        use tantivy::Term;
        if filters.is_empty() {
            return None;
        }
        let fields = self.index.fields();
        let term = |field: IndexField, value: u64| -> Box<dyn Query> {
            Box::new(TermQuery::new(
                Term::from_field_u64(fields.get(field), value),
                IndexRecordOption::Basic,
            ))
        };
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, query.box_clone())];
        if let Some(manual) = filters.manual {
            clauses.push((
                Occur::Must,
                term(IndexField::LineageId, u64::from(manual.0)),
            ));
        }
        if let Some(host) = &filters.host {
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(fields.get(IndexField::Host), host),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        if let Some(version) = &filters.version {
            let copies: Vec<(Occur, Box<dyn Query>)> = self
                .copies_of_version(version, filters.manual)
                .into_iter()
                .map(|(lineage, copy)| {
                    let both: Box<dyn Query> = Box::new(BooleanQuery::new(vec![
                        (
                            Occur::Must,
                            term(IndexField::LineageId, u64::from(lineage.0)),
                        ),
                        (Occur::Must, term(IndexField::LineageCopy, u64::from(copy))),
                    ]));
                    (Occur::Should, both)
                })
                .collect();
            let any: Box<dyn Query> = if copies.is_empty() {
                Box::new(EmptyQuery)
            } else {
                Box::new(BooleanQuery::new(copies))
            };
            clauses.push((Occur::Must, any));
        }
        Some(Box::new(BooleanQuery::new(clauses)))
    }

    /// The copies (manual, position) whose version is the release
    /// `version`, of `manual` only when one is given.
    fn copies_of_version(&self, version: &str, manual: Option<LineageId>) -> Vec<(LineageId, u16)> {
        let mut copies = Vec::new();
        for lineage in &self.collections.lineages.lineages {
            if manual.is_some_and(|manual| manual != lineage.id) {
                continue;
            }
            for (position, copy) in lineage.copies.iter().enumerate() {
                let same = copy.version.as_deref().is_some_and(|release| {
                    crate::collections::lineage::same_release(release, version)
                });
                if same {
                    copies.push((lineage.id, position.min(usize::from(u16::MAX)) as u16));
                }
            }
        }
        copies
    }

    /// The release a copy's version is listed as ([`copy_releases`]).
    fn release_of(&self, lineage: LineageId, copy: u16) -> Option<&str> {
        self.copy_releases
            .get(&lineage)?
            .get(usize::from(copy))?
            .as_deref()
    }

    /// A manual's name over its releases ([`manual_labels`]).
    pub fn manual_label(&self, lineage: LineageId) -> String {
        self.manual_labels.get(&lineage).map_or_else(
            || format!("manual {lineage}"),
            |name| name.name().to_string(),
        )
    }

    /// The name of `release` of a manual ([`ManualName::release`]).
    fn release_label(&self, lineage: LineageId, release: &str) -> String {
        match self.manual_labels.get(&lineage) {
            Some(name) => name.release(release),
            None => format!("manual {lineage} {release}"),
        }
    }

    /// The facets of a search's entries ([`rollup::FacetCounts`]): each
    /// value with the entries choosing it leaves, most first, at most
    /// [`FACET_VALUES`] a facet beside the values applied.
    fn facets(&self, counts: &rollup::FacetCounts, filters: &Filters) -> Facets {
        // By release, as the generation names it: a broad search has
        // thousands of manuals' entries.
        let mut versions: FxHashMap<&str, u64> = FxHashMap::default();
        let mut version_of: FxHashMap<&str, Vec<LineageId>> = FxHashMap::default();
        let mut releases: Vec<&str> = Vec::new();
        for (lineage, copies) in &counts.copies {
            releases.clear();
            releases.extend(
                copies
                    .iter()
                    .filter_map(|&copy| self.release_of(*lineage, copy)),
            );
            releases.sort_unstable();
            releases.dedup();
            for &release in &releases {
                let manuals = version_of.entry(release).or_default();
                if !manuals.contains(lineage) {
                    manuals.push(*lineage);
                }
                *versions.entry(release).or_default() += 1;
            }
        }
        let manual = most_entries(&counts.manuals, filters.manual)
            .into_iter()
            .map(|(lineage, entries)| FacetValue {
                value: lineage.to_string(),
                label: self.manual_label(lineage),
                entries,
                applied: filters.manual == Some(lineage),
            })
            .collect();
        let version = most_entries(&versions, filters.version.as_deref())
            .into_iter()
            .map(|(release, entries)| {
                // A release of one manual says which ("Flask Documentation
                // 2.2.x").
                let label = match version_of.get(release).map(Vec::as_slice) {
                    // Within one manual, its releases need no name.
                    _ if filters.manual.is_some() => release.to_string(),
                    Some(&[lineage]) => self.release_label(lineage, release),
                    _ => release.to_string(),
                };
                FacetValue {
                    applied: filters.version.as_deref() == Some(release),
                    label,
                    value: release.to_string(),
                    entries,
                }
            })
            .collect();
        // A broad search has entries on thousands of hosts: the few shown
        // are chosen by name before any is copied.
        let named: Vec<(u64, &str)> = counts
            .hosts
            .iter()
            .map(|(&host, &entries)| (entries, self.table.host_name(crate::pages::HostId(host))))
            .collect();
        let host = most_first_named(named, filters.host.as_deref())
            .into_iter()
            .map(|(entries, name)| FacetValue {
                applied: filters.host.as_deref() == Some(name),
                label: name.to_string(),
                value: name.to_string(),
                entries,
            })
            .collect();
        Facets {
            manual: most_first(manual),
            version: most_first(version),
            host: most_first(host),
        }
    }

    /// The documents about `query`: their title or headings hold its
    /// words ([`SearchIndex::about_query`]).
    fn about(&self, searcher: &Searcher, query: &str) -> Result<collector::About> {
        let mut about = collector::About::new();
        for word in self.index.about_queries(query) {
            about.add_word(pruned::found_sets(searcher, &*word)?);
        }
        if let Some(named) = self.index.name_query(query) {
            about.set_named(pruned::found_sets(searcher, &named)?);
        }
        Ok(about)
    }

    /// The manuals a query names a version of, and the copy of that version
    /// each is to be shown from (`flask 2.2` shows Flask 2.2, 2.2.2 or
    /// 2.2.x, where a copy of it is in the crawl).
    fn versions_asked(&self, query: &str) -> FxHashMap<LineageId, u16> {
        let asked = crate::corpus::html::version_strings(query);
        let mut copies = FxHashMap::default();
        if asked.is_empty() {
            return copies;
        }
        let parts = |version: &str| -> Vec<String> {
            version
                .trim_start_matches(['v', 'V'])
                .split('.')
                .map(str::to_string)
                .collect()
        };
        for lineage in &self.collections.lineages.lineages {
            let matching = lineage.copies.iter().position(|copy| {
                copy.version.as_deref().is_some_and(|version| {
                    let version = parts(version);
                    asked.iter().any(|asked| version.starts_with(&parts(asked)))
                })
            });
            if let Some(copy) = matching.filter(|&copy| copy > 0) {
                copies.insert(lineage.id, copy.min(u16::MAX as usize) as u16);
            }
        }
        copies
    }

    /// The scope a query is searched in, as [`Engine::search`] chooses it:
    /// the pages' own text, with their site's chrome when fewer than
    /// [`CHROME_BELOW`] pages match in their own text. (Expansions follow
    /// the search they expand; where chrome adds no page, both scopes find
    /// the same pages.)
    fn scope_of(&self, query: &str) -> Result<Scope> {
        let own = self.parse(query, Scope::OwnText);
        let count = self.index.searcher().search(&own.query, &Count)? as u64;
        Ok(if count < CHROME_BELOW {
            Scope::WithChrome
        } else {
            Scope::OwnText
        })
    }

    /// The query, trimmed; refused when too long.
    fn check_query<'q>(&self, query: &'q str) -> Result<&'q str> {
        if query.len() > self.config.max_query_bytes {
            return Err(SearchError::BadRequest(format!(
                "the query is longer than {} bytes",
                self.config.max_query_bytes
            )));
        }
        Ok(query.trim())
    }

    fn parse(&self, query: &str, scope: Scope) -> crate::index::ParsedQuery {
        self.index.parse(query, scope)
    }

    /// The snippets of a search for `query`, made until `until`. As
    /// tantivy's `SnippetGenerator::create`, which keeps its terms to itself:
    /// a long text's window is found by them ([`view::snippet_window`]).
    fn snippets(&self, searcher: &Searcher, query: &dyn Query, until: Instant) -> Result<Snippets> {
        let field = self.index.fields().get(IndexField::Text);
        let mut terms = std::collections::BTreeSet::new();
        query.query_terms(&mut |term, _| {
            if term.field() == field {
                terms.insert(term.clone());
            }
        });
        let mut weighed = std::collections::BTreeMap::new();
        for term in &terms {
            let value = term.value();
            let Some(text) = value.as_str() else {
                continue;
            };
            let frequency = searcher.doc_freq(term)?;
            if frequency > 0 {
                weighed.insert(text.to_string(), 1.0 / (1.0 + frequency as f32));
            }
        }
        let words: Vec<String> = weighed.keys().map(|word| word.to_lowercase()).collect();
        // The text field's analyzer, but for the stems of words no term
        // could be.
        let analyzer = crate::index::snippet_analyzer(&words);
        let generator =
            SnippetGenerator::new(weighed, analyzer.clone(), field, self.config.snippet_chars);
        Ok(Snippets::new(generator, (words, analyzer), until))
    }

    fn stored(&self, searcher: &Searcher, address: DocAddress) -> Result<TantivyDocument> {
        Ok(searcher.doc(address)?)
    }
}

/// A facet's values, most entries first (then by label), the first
/// [`FACET_VALUES`] and those applied.
fn most_first(mut values: Vec<FacetValue>) -> Vec<FacetValue> {
    values.sort_by(|first, second| {
        second
            .entries
            .cmp(&first.entries)
            .then_with(|| first.label.cmp(&second.label))
            .then_with(|| first.value.cmp(&second.value))
    });
    let mut kept = 0;
    values.retain(|value| {
        kept += 1;
        kept <= FACET_VALUES || value.applied
    });
    values
}

/// The values of a facet by `key` with entries that [`most_first`] may
/// keep, found before any is labelled: those with more entries than the
/// [`FACET_VALUES`]-th most, those with as many (their labels order them),
/// and `applied` wherever it is. A broad search has entries in thousands
/// of manuals.
fn most_entries<K: Copy + Eq + std::hash::Hash>(
    counts: &FxHashMap<K, u64>,
    applied: Option<K>,
) -> Vec<(K, u64)> {
    let mut values: Vec<(K, u64)> = counts
        .iter()
        .filter(|(_, &entries)| entries > 0)
        .map(|(&key, &entries)| (key, entries))
        .collect();
    if values.len() > FACET_VALUES {
        let (_, &mut (_, least), _) =
            values.select_nth_unstable_by(FACET_VALUES - 1, |first, second| second.1.cmp(&first.1));
        values.retain(|&(key, entries)| entries >= least || Some(key) == applied);
    }
    values
}

/// The values [`most_first`] keeps of a facet whose label is its value
/// (`(entries, name)`), found without making a [`FacetValue`] of the others:
/// the [`FACET_VALUES`] first in its order, and `applied` wherever it is.
fn most_first_named<'n>(
    mut values: Vec<(u64, &'n str)>,
    applied: Option<&str>,
) -> Vec<(u64, &'n str)> {
    let order = |first: &(u64, &str), second: &(u64, &str)| {
        second.0.cmp(&first.0).then_with(|| first.1.cmp(second.1))
    };
    if values.len() > FACET_VALUES {
        values.select_nth_unstable_by(FACET_VALUES, order);
        let applied_beyond = values[FACET_VALUES..]
            .iter()
            .copied()
            .find(|&(_, name)| Some(name) == applied);
        values.truncate(FACET_VALUES);
        values.extend(applied_beyond);
    }
    values
}

/// The pages of each trivial cluster, as offsets into one list.
fn copies_by_trivial_cluster(similarity: &Similarity) -> (Vec<u32>, Vec<PageId>) {
    let mut offsets = Vec::with_capacity(similarity.trivial_cluster_count() + 1);
    offsets.push(0u32);
    for size in similarity.trivial_cluster_sizes() {
        offsets.push(offsets[offsets.len() - 1] + size);
    }
    let mut next = offsets.clone();
    let mut copies = vec![PageId(0); similarity.trivial.len()];
    for (page, id) in similarity.trivial.iter().enumerate() {
        let slot = &mut next[id.0 as usize];
        copies[*slot as usize] = PageId(page as u32);
        *slot += 1;
    }
    (offsets, copies)
}

#[cfg(test)]
mod tests {
    /// A manual found from one of its chapters is named by its folder's
    /// own page (its table of contents) where the copy holds it, else by
    /// that chapter.
    #[test]
    fn a_manual_is_named_by_its_folders_own_page() {
        use super::front_page;
        use crate::collections::{ClusterId, Collection, CollectionId};
        use crate::pages::{HostId, PageTable};
        let titled = |url: &str, title: &str| {
            let mut page = crate::test_support::capture(url, title);
            page.title = title.into();
            page
        };
        let captures = [
            titled(
                "http://mail.example/spec/index.html",
                "Specification of Exim",
            ),
            titled("http://mail.example/spec/ch01.html", "1. Introduction"),
            titled("http://mail.example/spec/ch02.html", "2. Incorporated code"),
        ];
        let table = PageTable::build(&[&captures]);
        let page = |url: &str| table.find_url(url).unwrap();
        let copy = |prefix: &str, pages: &[&str]| {
            let mut pages: Vec<_> = pages.iter().map(|url| page(url)).collect();
            pages.sort_unstable();
            Collection {
                id: CollectionId(0),
                cluster: ClusterId(0),
                host: HostId(0),
                root: page("http://mail.example/spec/ch01.html"),
                prefix: prefix.into(),
                pages,
                inlinks_from_other_hosts: 0,
            }
        };
        let spec = [
            "http://mail.example/spec/index.html",
            "http://mail.example/spec/ch01.html",
            "http://mail.example/spec/ch02.html",
        ];
        let front = |collection: &Collection| {
            table.pages[front_page(&table, collection).0 as usize]
                .title
                .to_string()
        };
        assert_eq!(
            front(&copy("http://mail.example/spec/", &spec)),
            "Specification of Exim"
        );
        // A copy without its table of contents: the chapter it was found from.
        assert_eq!(
            front(&copy("http://mail.example/spec/", &spec[1..])),
            "1. Introduction"
        );
    }

    #[test]
    fn a_manual_is_named_without_the_version_of_one_copy() {
        use super::without_version_note;
        assert_eq!(
            without_version_note("Apache Tomcat 10 (10.1.60)"),
            "Apache Tomcat 10"
        );
        assert_eq!(
            without_version_note("Flask Documentation (3.1.x)"),
            "Flask Documentation"
        );
        assert_eq!(
            without_version_note("Requests (HTTP for Humans)"),
            "Requests (HTTP for Humans)"
        );
    }

    #[test]
    fn only_a_correction_of_long_words_replaces_nothing_found() {
        use super::sure_correction;
        assert!(sure_correction("virtual hsot", "virtual host"));
        assert!(sure_correction("confguration", "configuration"));
        assert!(!sure_correction("std::vec", "std ve"));
        assert!(!sure_correction("teh", "the"));
        assert!(!sure_correction("one two", "one"));
    }
    use super::*;

    /// The host facet keeps what sorting every host would keep: the most
    /// entries first, ties by name, and the applied host wherever it ranks.
    #[test]
    fn the_host_facet_keeps_the_hosts_sorting_all_of_them_would() {
        let names: Vec<String> = (0..40)
            .map(|at| format!("h{:02}.example", (at * 7) % 40))
            .collect();
        // Many ties: entries 1 to 4.
        let counts: Vec<(u64, &str)> = names
            .iter()
            .enumerate()
            .map(|(at, name)| ((at % 4) as u64 + 1, name.as_str()))
            .collect();
        for applied in [
            None,
            Some("h00.example"),
            Some("h39.example"),
            Some("nowhere"),
        ] {
            let all = counts
                .iter()
                .map(|&(entries, name)| FacetValue {
                    value: name.to_string(),
                    label: name.to_string(),
                    entries,
                    applied: applied == Some(name),
                })
                .collect();
            let chosen = most_first_named(counts.clone(), applied)
                .into_iter()
                .map(|(entries, name)| FacetValue {
                    value: name.to_string(),
                    label: name.to_string(),
                    entries,
                    applied: applied == Some(name),
                })
                .collect();
            let expected = most_first(all);
            assert_eq!(most_first(chosen), expected, "applied {applied:?}");
            // The applied host ranks beyond the first ten: it is kept too.
            let beyond = applied.is_some_and(|name| name != "nowhere");
            assert_eq!(expected.len(), FACET_VALUES + usize::from(beyond));
        }
    }

    /// The manual facet, chosen by entries before any manual is labelled,
    /// keeps what labelling and sorting every manual would: labels order
    /// the ties (here in another order than the ids), manuals with no entry
    /// are none, and the applied manual is kept wherever it ranks.
    #[test]
    fn the_manual_facet_keeps_the_manuals_sorting_all_of_them_would() {
        let label = |lineage: LineageId| format!("manual {:02}", (lineage.0 * 7) % 40);
        // Many ties: entries 0 to 3.
        let counts: FxHashMap<LineageId, u64> = (0..40)
            .map(|at| (LineageId(at), u64::from(at % 4)))
            .collect();
        for applied in [
            None,
            Some(LineageId(0)),
            Some(LineageId(5)),
            Some(LineageId(99)),
        ] {
            let value = |(lineage, entries): (LineageId, u64)| FacetValue {
                value: lineage.to_string(),
                label: label(lineage),
                entries,
                applied: applied == Some(lineage),
            };
            let all = counts
                .iter()
                .filter(|(_, &entries)| entries > 0)
                .map(|(&lineage, &entries)| value((lineage, entries)))
                .collect();
            let chosen = most_entries(&counts, applied);
            assert!(
                chosen.len() < 30,
                "chosen before labelling: {}",
                chosen.len()
            );
            let expected = most_first(all);
            assert_eq!(
                most_first(chosen.into_iter().map(value).collect()),
                expected,
                "applied {applied:?}"
            );
            let beyond = applied == Some(LineageId(5));
            assert_eq!(expected.len(), FACET_VALUES + usize::from(beyond));
        }
    }

    #[test]
    fn route_ids_are_plain_decimal_u32() {
        let parse_page_id = |text: &str| text.parse::<PageId>().ok();
        assert_eq!(parse_page_id("0"), Some(PageId(0)));
        assert_eq!(parse_page_id("4294967295"), Some(PageId(u32::MAX)));
        assert_eq!(
            "7".parse::<crate::collections::ClusterId>(),
            Ok(ClusterId(7))
        );
        assert_eq!(
            "7".parse::<crate::collections::CollectionId>(),
            Ok(CollectionId(7))
        );
        assert_eq!(
            "7".parse::<crate::pages::HostId>(),
            Ok(crate::pages::HostId(7))
        );
        assert!("x7"
            .parse::<ClusterId>()
            .unwrap_err()
            .to_string()
            .contains("not an id"));
        for bad in [
            "",
            "-1",
            "+1",
            " 1",
            "1 ",
            "4294967296",
            "99999999999",
            "1e3",
            "0x10",
            "١",
        ] {
            assert_eq!(parse_page_id(bad), None, "{bad:?}");
        }
    }
}
