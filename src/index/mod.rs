//! The search index: one tantivy document per page that answered 200 with a
//! body, built by `mirrorscope index` as part of each generation.
//!
//! Reads the page table, the page store (each page's body, to index its
//! visible text), the trivial clusters and the collections; writes
//! `generations/gen-<n>/index/`. Besides title, text (stored, for snippets),
//! URL and host, each document carries as fast fields what the roll-up of
//! results needs without looking anything up: the page id, its collection, its
//! similar cluster, its replication factor and its in-links from other hosts
//! (cho-2000 §5.2 rolls results up by collection and cluster; §1 ranks by
//! replication).

pub mod kind;
mod merge;
mod query;
mod read_only;
pub(crate) mod schema;
pub mod shards;
mod tokenizer;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tantivy::query::{Query, QueryParser};
use tantivy::{Index, IndexReader, ReloadPolicy, Searcher, TantivyDocument};

use crate::collections::{ClusterId, Collections};
use crate::corpus::{self, charset};
use crate::pages::{Page, PageId, PageTable};
use crate::similarity::aliases::UrlAliases;
use crate::similarity::Similarity;
use crate::store::texts::KeptTexts;
use crate::store::PageStore;

pub use query::SearchQuery;
pub use schema::{Fields, IndexField, PageDocument, NONE};
pub use shards::Shard;
pub use tokenizer::{snippet_analyzer, text_analyzer, words as query_terms, TEXT_TOKENIZER};

/// The folder of a generation that holds the index.
pub const INDEX_DIR: &str = "index";

/// How the index is built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// tantivy indexing threads; 0 = one per core, at most 4. Indexing runs
    /// beside text extraction (rayon), so more threads than cores only wait.
    pub writer_threads: usize,
    /// Memory for tantivy's in-memory segments, per indexing thread, in MiB.
    /// Default 64: tantivy's minimum is 15, and 64 MiB per thread flushes the
    /// demo crawl's 2,954 pages as one segment per thread (fewer merges)
    /// while keeping a big crawl's indexing within a few hundred MB.
    pub writer_memory_mib: usize,
    /// Bytes of a page's own text that are searched; words after them are
    /// not. Default 1 MiB: a documentation page's text is rarely a tenth of
    /// it, and it bounds what one page costs the index stage (its documents
    /// wait in tantivy's queue whole) whatever a crawl serves.
    pub max_text_bytes: usize,
    /// The most bytes of segments tantivy merges into one while the index is
    /// written ([`merge::BoundedMerges`]). Default 384 MiB: what a merge maps
    /// and how often a page is rewritten stop growing with the crawl, and a
    /// merge's mapped segments and buffers keep `index` of a million pages
    /// under 1.2 GB (512 MiB took it to 1,252 MB; 24 segments against 19).
    pub max_segment_mib: u64,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            writer_threads: 0,
            writer_memory_mib: 64,
            max_text_bytes: 1024 * 1024,
            max_segment_mib: 384,
        }
    }
}

impl IndexConfig {
    /// Why these values cannot be used, if they cannot.
    pub fn problem(&self) -> Option<String> {
        if !(15..=4096).contains(&self.writer_memory_mib) {
            return Some("index.writer_memory_mib must be from 15 to 4096".into());
        }
        if self.max_text_bytes == 0 {
            return Some("index.max_text_bytes must be at least 1".into());
        }
        if !(16..=1 << 20).contains(&self.max_segment_mib) {
            return Some("index.max_segment_mib must be from 16 to 1048576".into());
        }
        if self.writer_threads > 64 {
            return Some("index.writer_threads must be at most 64".into());
        }
        None
    }

    fn threads(&self) -> usize {
        if self.writer_threads > 0 {
            return self.writer_threads;
        }
        std::thread::available_parallelism()
            .map_or(1, |cores| cores.get())
            .min(4)
    }
}

/// Errors of the search index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{path}: search index: {source}")]
    Tantivy {
        path: PathBuf,
        source: tantivy::TantivyError,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the search index's writer took no text for five minutes; indexing stopped")]
    Stalled,
}

pub type Result<T> = std::result::Result<T, IndexError>;

/// The index stage's figures, kept in the generation's manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexCounts {
    /// Pages indexed (answered 200, with a body, not a stand-in).
    pub documents: u64,
    /// Pages whose body could not be read back from the store or decoded;
    /// each is named in a warning.
    pub unreadable_bodies: u64,
    /// Size of the index on disk.
    pub bytes: u64,
    /// Distinct bodies whose text was the one ingest kept
    /// ([`KeptTexts`]) rather than read and extracted again.
    #[serde(default)]
    pub kept_texts: u64,
}

/// What the index needs to know of each page besides its text.
struct PageFields {
    collection: u64,
    cluster: u64,
    lineage: u64,
    lineage_copy: u64,
    replication: u64,
    inlinks_from_other_hosts: u64,
    /// Its collection's start page.
    front: bool,
    /// [`kind::manual_page_key`], or [`NONE`].
    manual_page: u64,
    /// In a copy of its cluster other than the principal one: its site
    /// chrome (a mirror's banner, its own navigation) is the copy's, not
    /// the manual's, and is not searched.
    other_copy: bool,
}

/// Builds the index of a generation into `dir` (which must not exist yet).
pub fn build(
    dir: &Path,
    table: &PageTable,
    similarity: &Similarity,
    collections: &Collections,
    (store, texts): (&PageStore, Option<&KeptTexts>),
    config: &IndexConfig,
) -> Result<IndexCounts> {
    build_shard(
        dir,
        (table, similarity, collections),
        (store, texts),
        config,
        Shard::WHOLE,
    )
}

/// Builds `shard` of a generation's index into `dir` (which must not exist
/// yet): the documents of the pages whose body it holds
/// ([`Shard::holds`]), each as the whole index would have it. A body's
/// text is the one ingest kept in `texts`, else read from `store`.
pub fn build_shard(
    dir: &Path,
    (table, similarity, collections): (&PageTable, &Similarity, &Collections),
    (store, texts): (&PageStore, Option<&KeptTexts>),
    config: &IndexConfig,
    shard: Shard,
) -> Result<IndexCounts> {
    let tantivy_error = |source| IndexError::Tantivy {
        path: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(|source| IndexError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let (schema, fields) = schema::build();
    let index = Index::create_in_dir(dir, schema).map_err(tantivy_error)?;
    let queue = TextQueue::default();
    tokenizer::register_counting(&index, Arc::clone(&queue.tokenized));
    let threads = config.threads();
    let writer = index
        .writer_with_num_threads::<TantivyDocument>(
            threads,
            threads * config.writer_memory_mib * 1024 * 1024,
        )
        .map_err(tantivy_error)?;
    writer.set_merge_policy(Box::new(merge::BoundedMerges {
        dir: dir.to_path_buf(),
        most_bytes: config.max_segment_mib << 20,
    }));

    let facts = page_fields(table, similarity, collections);
    let documents = AtomicU64::new(0);
    let unreadable = AtomicU64::new(0);
    let kept_texts = AtomicU64::new(0);
    // Stand-ins (a soft 404, a "not mirrored here" page) are no results,
    // and a page under several URLs is one, under its plainest URL
    // ([`UrlAliases`]). Pages with the same body (and encoding) share their
    // text: each body is read and extracted once, however many pages it is
    // (a quarter of a crawl with mirrors).
    let started = std::time::Instant::now();
    let aliases = UrlAliases::find(table, similarity);
    tracing::info!(
        rules = aliases.rules.len(),
        aliases = aliases.alias_count(),
        seconds = started.elapsed().as_secs_f64(),
        "URL aliases found"
    );
    let mut indexed: Vec<u32> = (0..table.pages.len() as u32)
        .filter(|&index| {
            let page = PageId(index);
            let record = &table.pages[index as usize];
            is_indexed(record)
                && record
                    .content_key
                    .as_ref()
                    .is_some_and(|key| shard.holds(key))
                && !similarity.is_stand_in(page)
                && !aliases.is_alias(page)
        })
        .collect();
    let body_of = |index: u32| {
        let page = &table.pages[index as usize];
        (page.content_key, page.encoding.as_str())
    };
    indexed.sort_by(|&first, &second| {
        body_of(first)
            .cmp(&body_of(second))
            .then(first.cmp(&second))
    });
    let mut same_body: Vec<&[u32]> = indexed
        .chunk_by(|&first, &second| body_of(first) == body_of(second))
        .collect();
    // In the order of their first pages: documents stay near URL order, with
    // a page's copies (same cluster) beside it, which the roll-up's fold
    // and the fast fields' compression like.
    same_body.sort_unstable_by_key(|pages| pages[0]);
    same_body.par_iter().try_for_each(|pages| -> Result<()> {
        let first = &table.pages[pages[0] as usize];
        // A text ingest kept shorter than what is searched is the whole
        // reading's, as reading the body's start would give it. Past that,
        // text is not read: chrome lines are set aside from the start
        // read, so its own text may be a little less.
        let kept = texts
            .zip(first.content_key)
            .and_then(|(texts, key)| texts.get(key, first.encoding))
            .filter(|(text, _)| text.len() < config.max_text_bytes);
        if kept.is_some() {
            kept_texts.fetch_add(1, Ordering::Relaxed);
        }
        let read = kept.or_else(|| {
            with_stored_html(store, first, |html| {
                Some(corpus::extract_html_text_and_headings_within(
                    html,
                    config.max_text_bytes,
                ))
            })
        });
        let Some((text, headings)) = read else {
            unreadable.fetch_add(pages.len() as u64, Ordering::Relaxed);
            return Ok(());
        };
        let (own, chrome) = similarity.split_chrome(&first.title, &text);
        let headings = own_headings(&headings, &own);
        let headings = text_prefix(&headings, config.max_text_bytes);
        let body = text_prefix(&own, config.max_text_bytes);
        let chrome = text_prefix(&chrome, config.max_text_bytes);
        for &index in pages.iter() {
            let page = &table.pages[index as usize];
            let fact = &facts[index as usize];
            let chrome = if fact.other_copy { "" } else { chrome };
            let document = fields.document(&PageDocument {
                page: PageId(index),
                collection: fact.collection,
                cluster: fact.cluster,
                lineage: fact.lineage,
                lineage_copy: fact.lineage_copy,
                kind: kind_of(page, &own, fact.front),
                manual_page: fact.manual_page,
                replication: fact.replication,
                inlinks_from_other_hosts: fact.inlinks_from_other_hosts,
                host_id: u64::from(page.host.0),
                title: &page.title,
                body,
                headings,
                chrome,
                url: &page.url,
                host: table.host_name(page.host),
            });
            queue.wait_for_room(page.title.len() + body.len() + headings.len() + chrome.len())?;
            writer.add_document(document).map_err(tantivy_error)?;
            documents.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    })?;
    let mut writer = writer;
    writer.commit().map_err(tantivy_error)?;
    writer.wait_merging_threads().map_err(tantivy_error)?;
    readable_as_created(dir).map_err(|source| IndexError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    Ok(IndexCounts {
        documents: documents.into_inner(),
        unreadable_bodies: unreadable.into_inner(),
        bytes: folder_bytes(dir),
        kept_texts: kept_texts.into_inner(),
    })
}

/// The lines of `headings` that are lines of the page's own text `own`: a
/// sidebar's headings ("Previous topic", "Quick search") are its site's
/// chrome, not what the page is about.
fn own_headings(headings: &str, own: &str) -> String {
    let lines: rustc_hash::FxHashSet<&str> = own.lines().collect();
    headings
        .lines()
        .filter(|line| lines.contains(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The [`kind::PageKind`] of `page`, whose own text is `own`.
fn kind_of(page: &crate::pages::Page, own: &str, front: bool) -> u64 {
    let links = page.outlinks.len() + page.uncrawled_links.len();
    kind::classify(&page.url, own, links, front) as u64
}

/// Text handed to tantivy that its indexing threads have not tokenized yet
/// is held at most this much (beside one document per extracting thread).
/// tantivy queues up to 10,000 documents whatever their size: pages of
/// megabytes of text would otherwise wait there by the thousand.
const QUEUED_TEXT_BYTES: u64 = 8 * 1024 * 1024;

/// How long extraction waits for tantivy to take text before giving up.
const QUEUE_STALLED: std::time::Duration = std::time::Duration::from_secs(300);

/// The bytes of searched text handed to tantivy and taken by it.
#[derive(Default)]
struct TextQueue {
    added: AtomicU64,
    /// Counted by the tokenizer ([`tokenizer::register_counting`]).
    tokenized: Arc<AtomicU64>,
}

impl TextQueue {
    /// Waits until the queue has room, then counts `bytes` in.
    fn wait_for_room(&self, bytes: usize) -> Result<()> {
        let mut last_taken = self.tokenized.load(Ordering::Relaxed);
        let mut since = std::time::Instant::now();
        loop {
            let taken = self.tokenized.load(Ordering::Relaxed);
            if self.added.load(Ordering::Relaxed).saturating_sub(taken) <= QUEUED_TEXT_BYTES {
                break;
            }
            if taken != last_taken {
                (last_taken, since) = (taken, std::time::Instant::now());
            } else if since.elapsed() > QUEUE_STALLED {
                return Err(IndexError::Stalled);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        self.added.fetch_add(bytes as u64, Ordering::Relaxed);
        Ok(())
    }
}

/// The longest start of `text` of at most `bytes` bytes that ends on a
/// character boundary.
pub fn text_prefix(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Gives the index's files the permissions of a file this process creates.
/// tantivy writes `meta.json` and `.managed.json` through temporary files of
/// mode 0600, which a service account other than the indexing user cannot
/// read: the folder could be served only by whoever indexed it.
fn readable_as_created(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(".mode-probe");
    let created = std::fs::File::create(&probe)?.metadata()?.permissions();
    std::fs::remove_file(&probe)?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::set_permissions(entry.path(), created.clone())?;
        }
    }
    Ok(())
}

/// Whether a page gets a document: it answered 200 with a body.
pub fn is_indexed(page: &Page) -> bool {
    page.status == 200 && page.content_key.is_some()
}

/// The visible text of a page's stored body; `None` (with a warning) when the
/// body cannot be read back.
pub fn page_text(store: &PageStore, page: &Page) -> Option<String> {
    page_text_within(store, page, usize::MAX)
}

/// [`page_text`] of the start of a page: its lines until they hold
/// `most_bytes` ([`corpus::extract_html_text_within`]).
pub fn page_text_within(store: &PageStore, page: &Page, most_bytes: usize) -> Option<String> {
    with_stored_html(store, page, |html| {
        Some(corpus::extract_html_text_within(html, most_bytes).1)
    })
}

/// Title, text lines and links of a page's stored body, decoded as it was at
/// ingest; `None` (with a warning) when the body cannot be read back.
pub fn page_extract(store: &PageStore, page: &Page) -> Option<corpus::Extracted> {
    with_stored_html(store, page, |html| {
        let url = url::Url::parse(&page.url).ok()?;
        Some(corpus::extract_html(html, &url))
    })
}

/// Calls `read` with a page's stored body, decoded as it was at ingest.
fn with_stored_html<T>(
    store: &PageStore,
    page: &Page,
    read: impl FnOnce(&str) -> Option<T>,
) -> Option<T> {
    let key = page.content_key.as_ref()?;
    let body = match store.get(key) {
        Ok(body) => body,
        Err(error) => {
            tracing::warn!(url = %page.url, %error, "stored body unreadable; page left out");
            return None;
        }
    };
    let html: Cow<'_, str> = charset::decode_as(&body, &page.encoding);
    read(&html)
}

/// The `lineage_copy` of a page rolled up in a manual's entry without being
/// in one of its copies (a stray copy outside every copy's folder, such as
/// a page a content farm copied): no copy's position.
pub const IN_NO_COPY: u64 = u16::MAX as u64;

/// By page id: the collection and cluster ids, replication factor and in-links
/// the index stores.
fn page_fields(
    table: &PageTable,
    similarity: &Similarity,
    collections: &Collections,
) -> Vec<PageFields> {
    let copies = similarity.trivial_cluster_sizes();
    let strays = stray_clusters(similarity, collections);
    let manual_page_of = |index: usize| {
        let place = collections.lineages.of(PageId(index as u32))?;
        let copy = collections
            .lineages
            .lineage(place.lineage)?
            .copies
            .get(usize::from(place.copy))?;
        Some(kind::manual_page_key(
            place.lineage.0,
            &copy.prefix,
            &table.pages[index].url,
        ))
    };
    // A stray copy's twins in its manual: the manual and place of the
    // first of them in the cluster it rolls up with.
    let mut twins: Vec<Option<(u64, u64)>> = vec![None; strays.len()];
    for (index, trivial) in similarity.trivial.iter().enumerate() {
        let trivial = trivial.0 as usize;
        let Some(Some(stray_cluster)) = strays.get(trivial) else {
            continue;
        };
        if twins[trivial].is_some()
            || collections.cluster_of(PageId(index as u32)) != Some(*stray_cluster)
        {
            continue;
        }
        if let (Some(place), Some(manual_page)) = (
            collections.lineages.of(PageId(index as u32)),
            manual_page_of(index),
        ) {
            twins[trivial] = Some((u64::from(place.lineage.0), manual_page));
        }
    }
    (0..table.pages.len())
        .map(|index| {
            let page = PageId(index as u32);
            let collection = collections.collection_of[index];
            let trivial = similarity.trivial[index].0 as usize;
            let cluster = collections
                .cluster_of(page)
                .or_else(|| strays.get(trivial).copied().flatten());
            let lineage = collections.lineages.of(page);
            let front = collection
                .and_then(|id| collections.collection(id))
                .is_some_and(|collection| collection.root == page);
            let other_copy = match (collection, collections.cluster_of(page)) {
                (Some(collection), Some(cluster)) => collections
                    .cluster(cluster)
                    .is_some_and(|cluster| cluster.principal() != collection),
                _ => false,
            };
            // A stray copy outside every collection (a page a partial
            // crawl cut off, a page a content farm copied) rolls up in its
            // twins' manual's entry, at their place: in the copy whose
            // folder holds it, or in none.
            let stray = match (lineage, collections.cluster_of(page)) {
                (None, None) => twins.get(trivial).copied().flatten(),
                _ => None,
            };
            let stray_copy = stray.map(|(lineage, _)| {
                collections
                    .lineages
                    .lineage(crate::collections::LineageId(lineage as u32))
                    .and_then(|lineage| {
                        lineage
                            .copies
                            .iter()
                            .position(|copy| table.pages[index].url.starts_with(&copy.prefix))
                    })
                    .map_or(IN_NO_COPY, |position| position as u64)
            });
            PageFields {
                front,
                manual_page: manual_page_of(index)
                    .or(stray.map(|(_, manual_page)| manual_page))
                    .unwrap_or(NONE),
                collection: collection.map_or(NONE, |id| u64::from(id.0)),
                cluster: cluster.map_or(NONE, |id| u64::from(id.0)),
                lineage: lineage
                    .map(|place| u64::from(place.lineage.0))
                    .or(stray.map(|(lineage, _)| lineage))
                    .unwrap_or(NONE),
                lineage_copy: match (lineage, stray_copy) {
                    (Some(place), _) => u64::from(place.copy),
                    (None, Some(copy)) => copy,
                    (None, None) => 0,
                },
                replication: u64::from(copies[trivial]),
                inlinks_from_other_hosts: u64::from(collections.inlinks_from_other_hosts[index]),
                other_copy,
            }
        })
        .collect()
}

/// By trivial cluster id: for copies of a page that stayed outside every
/// collection while other copies of it are in one (a break point, a page a
/// partial crawl cut off), the cluster most of those other copies are in.
/// Such a stray copy rolls up with its twins instead of showing on its own.
pub fn stray_clusters(
    similarity: &Similarity,
    collections: &Collections,
) -> Vec<Option<ClusterId>> {
    let mut votes: std::collections::HashMap<(u32, ClusterId), u32> =
        std::collections::HashMap::new();
    let mut has_stray = std::collections::HashSet::new();
    for (index, trivial) in similarity.trivial.iter().enumerate() {
        let trivial = trivial.0;
        match collections.cluster_of(PageId(index as u32)) {
            Some(cluster) => *votes.entry((trivial, cluster)).or_default() += 1,
            None => {
                has_stray.insert(trivial);
            }
        }
    }
    let clusters = similarity.trivial_cluster_count();
    let mut best: Vec<Option<(u32, ClusterId)>> = vec![None; clusters];
    for ((trivial, cluster), count) in votes {
        if !has_stray.contains(&trivial) {
            continue;
        }
        let slot = &mut best[trivial as usize];
        let better = match *slot {
            None => true,
            Some((best_count, best_cluster)) => {
                // Ties go to the larger cluster (the earlier position).
                let position = |id| std::cmp::Reverse(collections.position(id));
                (count, position(cluster)) > (best_count, position(best_cluster))
            }
        };
        if better {
            *slot = Some((count, cluster));
        }
    }
    best.into_iter()
        .map(|slot| slot.map(|(_, cluster)| cluster))
        .collect()
}

fn folder_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok()?.metadata().ok())
                .filter(|metadata| metadata.is_file())
                .map(|metadata| metadata.len())
                .sum()
        })
        .unwrap_or(0)
}

/// The weight of a match in site chrome against one in the page's own text.
const CHROME_BOOST: f32 = 0.2;

/// The fields a query looks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// A page's title, own text and URL: what the page itself says.
    OwnText,
    /// Its site's chrome too (menus, sidebars, footers), weighed down by
    /// [`CHROME_BOOST`]: for queries whose words few pages say themselves.
    WithChrome,
}

/// An opened index: the searcher of one generation and its query parsers,
/// one for each [`Scope`].
pub struct SearchIndex {
    path: PathBuf,
    reader: IndexReader,
    fields: Fields,
    own_text: QueryParser,
    with_chrome: QueryParser,
    /// Every word in the title or the headings ([`SearchIndex::about_query`]).
    about: QueryParser,
}

impl SearchIndex {
    /// Opens the index in `dir`.
    pub fn open(dir: &Path) -> Result<SearchIndex> {
        let tantivy_error = |source| IndexError::Tantivy {
            path: dir.to_path_buf(),
            source,
        };
        // Read only: no lock, no write (a generation's index never changes).
        // A sharded index's shards are read as one index.
        let directory: Box<dyn tantivy::Directory> = if shards::is_sharded(dir) {
            Box::new(shards::ShardedDirectory::open(dir).map_err(tantivy_error)?)
        } else {
            Box::new(read_only::ReadOnlyDirectory::open(dir).map_err(tantivy_error)?)
        };
        let index = Index::open(directory).map_err(tantivy_error)?;
        tokenizer::register(&index);
        let fields = Fields::of(&index.schema()).map_err(|detail| IndexError::Tantivy {
            path: dir.to_path_buf(),
            source: tantivy::TantivyError::SchemaError(detail),
        })?;
        // One generation's index never changes: no reloads.
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(tantivy_error)?;
        let own_text = query_parser(&index, &fields, Scope::OwnText);
        let with_chrome = query_parser(&index, &fields, Scope::WithChrome);
        let about = about_parser(&index, &fields);
        Ok(SearchIndex {
            about,
            path: dir.to_path_buf(),
            reader,
            fields,
            own_text,
            with_chrome,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn fields(&self) -> &Fields {
        &self.fields
    }

    pub fn searcher(&self) -> Searcher {
        self.reader.searcher()
    }

    /// Parses a user's query (tantivy's syntax: words, "phrases", `+must`,
    /// `-not`, `field:value`, AND/OR). Any text is searched:
    ///
    /// 1. as typed, when it is valid syntax (`c++` and `c#` are words: the
    ///    `++` of a word is escaped before parsing);
    /// 2. else read leniently (tantivy drops what it cannot read: a stray
    ///    operator, an unbalanced parenthesis) when all that is left is valid
    ///    and still names a word: phrases, `+` and `-` keep working;
    /// 3. else as its words, each required, as if they had been typed alone
    ///    (`std::vector` names no field, a pasted URL, an unbalanced quote).
    ///
    /// `scope` says which fields the words are looked up in.
    /// A query for pages holding at least `share` of `words` (each looked up
    /// as a query of its own, in the scope's fields, with their weights),
    /// ranked by how many they hold and how well: a long question rarely
    /// has every word on one page.
    pub fn parse_most(&self, words: &[String], share: f64, scope: Scope) -> ParsedQuery {
        let clauses: Vec<(tantivy::query::Occur, Box<dyn Query>)> = words
            .iter()
            .map(|word| (tantivy::query::Occur::Should, self.matching(word, scope).0))
            .collect();
        let least = ((words.len() as f64 * share).ceil() as usize).clamp(1, words.len().max(1));
        let matching = Box::new(tantivy::query::BooleanQuery::with_minimum_required_clauses(
            clauses, least,
        ));
        ParsedQuery {
            query: SearchQuery::new(matching, &self.fields),
            reading: Reading::AsTyped,
        }
    }

    /// For each word of `query` but its function words ([`FUNCTION_WORDS`]),
    /// each once and at most [`ABOUT_WORDS`], a query for the pages whose
    /// title or headings hold it: the pages about the query hold them all.
    pub fn about_queries(&self, query: &str) -> Vec<Box<dyn Query>> {
        let mut words: Vec<String> = query_terms(query)
            .into_iter()
            .filter(|word| !is_function_word(word))
            .collect();
        let mut seen = rustc_hash::FxHashSet::default();
        words.retain(|word| seen.insert(word.clone()));
        words.truncate(ABOUT_WORDS);
        words
            .iter()
            .filter_map(|word| self.about.parse_query(&escape_language_suffixes(word)).ok())
            .collect()
    }

    /// A query for the pages one of whose title's parts is `query`'s words
    /// ([`kind::title_names`]); `None` for a query of no word.
    pub fn name_query(&self, query: &str) -> Option<tantivy::query::TermQuery> {
        let key = kind::name_key(query);
        (!key.is_empty()).then(|| {
            tantivy::query::TermQuery::new(
                tantivy::Term::from_field_text(self.fields.get(IndexField::Name), &key),
                tantivy::schema::IndexRecordOption::Basic,
            )
        })
    }

    pub fn parse(&self, query: &str, scope: Scope) -> ParsedQuery {
        let (matching, reading) = self.matching(query, scope);
        ParsedQuery {
            query: SearchQuery::new(matching, &self.fields),
            reading,
        }
    }

    /// What a page must match of `query`, and how its text was read.
    fn matching(&self, query: &str, scope: Scope) -> (Box<dyn Query>, Reading) {
        let parser = match scope {
            Scope::OwnText => &self.own_text,
            Scope::WithChrome => &self.with_chrome,
        };
        let query = &*without_exists_terms(query);
        let escaped = escape_language_suffixes(query);
        let error = match parser.parse_query(&escaped) {
            Ok(parsed) => {
                return (
                    function_words_optional(parser, query).unwrap_or(parsed),
                    Reading::AsTyped,
                )
            }
            Err(error) => error,
        };
        let (lenient, errors) = parser.parse_query_lenient(&escaped);
        let only_syntax = errors
            .iter()
            .all(|error| matches!(error, tantivy::query::QueryParserError::SyntaxError(_)));
        if only_syntax && names_a_term(&*lenient) && !has_unbalanced_quote(query) {
            tracing::debug!(query, reason = %describe_query_error(&error), "query read leniently");
            return (lenient, Reading::Lenient);
        }
        let words = query_words(query);
        tracing::debug!(query, reason = %describe_query_error(&error), words, "query searched as words");
        let query = if words.is_empty() {
            Box::new(tantivy::query::EmptyQuery) as Box<dyn Query>
        } else {
            parser
                .parse_query(&escape_language_suffixes(&words))
                .unwrap_or_else(|_| Box::new(tantivy::query::EmptyQuery))
        };
        (query, Reading::Words(words))
    }
}

/// English function words: a question's words that say nothing of what a
/// page is about (`how do I …`). Lucene's English stop words, with the
/// words questions add.
pub const FUNCTION_WORDS: [&str; 58] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "did", "do", "does",
    "for", "from", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not",
    "of", "on", "or", "should", "so", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "we", "what", "when", "where", "which", "who", "why", "will",
    "with", "would", "you", "your", "am", "our",
];

/// A query of plain words with function words among others (`how do I
/// password protect a directory`): the other words required, the function
/// words only raising the score of the pages that hold them, as a web
/// search engine reads a question. `None` for any other query (syntax,
/// phrases, only function words or none).
fn function_words_optional(parser: &QueryParser, query: &str) -> Option<Box<dyn Query>> {
    use tantivy::query::{BooleanQuery, Occur};
    let words = tokenizer::words(query);
    let typed: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    if words != typed {
        return None;
    }
    let (function, content): (Vec<&String>, Vec<&String>) =
        words.iter().partition(|word| is_function_word(word));
    if function.is_empty() || content.is_empty() {
        return None;
    }
    let content: Vec<&str> = content.into_iter().map(String::as_str).collect();
    let required = parser
        .parse_query(&escape_language_suffixes(&content.join(" ")))
        .ok()?;
    let mut clauses = vec![(Occur::Must, required)];
    for word in function {
        clauses.push((Occur::Should, parser.parse_query(word).ok()?));
    }
    Some(Box::new(BooleanQuery::new(clauses)))
}

/// The words of a query looked up in titles and headings: a question's
/// first eight words that are not function words say what it asks.
pub const ABOUT_WORDS: usize = 8;

/// Whether `word` (lower-case) is one of [`FUNCTION_WORDS`].
pub fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.contains(&word)
}

/// The parser of [`SearchIndex::about_query`]: every word in the title or
/// the headings.
fn about_parser(index: &Index, fields: &Fields) -> QueryParser {
    let mut parser = QueryParser::for_index(
        index,
        vec![
            fields.get(IndexField::Title),
            fields.get(IndexField::Headings),
        ],
    );
    parser.set_conjunction_by_default();
    parser
}

/// The query parser of a scope. Every word must match (in the page's
/// [`IndexField::Text`], or in its site's chrome in the wider scope), as
/// users of web search engines expect; what the title, headings and path
/// add to the score is [`SearchQuery`]'s.
fn query_parser(index: &Index, fields: &Fields, scope: Scope) -> QueryParser {
    let mut searched = vec![fields.get(IndexField::Text)];
    if scope == Scope::WithChrome {
        searched.push(fields.get(IndexField::Chrome));
    }
    let mut parser = QueryParser::for_index(index, searched);
    parser.set_conjunction_by_default();
    // Site chrome finds a page (a word only in its menu) but weighs
    // little: every page of the site has it.
    parser.set_field_boost(fields.get(IndexField::Chrome), CHROME_BOOST);
    parser
}

/// How a query's text was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// As typed: valid query syntax.
    AsTyped,
    /// Leniently: what was not valid syntax was left out.
    Lenient,
    /// As these words, each required.
    Words(String),
}

/// A parsed query.
pub struct ParsedQuery {
    pub query: SearchQuery,
    pub reading: Reading,
}

/// Whether a query looks up at least one term (a lenient reading that lost
/// every word would find nothing, or everything).
fn names_a_term(query: &dyn Query) -> bool {
    let mut any = false;
    query.query_terms(&mut |_, _| any = true);
    any
}

/// An odd number of double quotes: tantivy reads the rest of the text as a
/// phrase or drops it; the words are what the searcher meant.
/// `field:*` asks tantivy whether a field exists, which it answers only for
/// fast fields (an error at search time for every text field and for a
/// field the index does not have): it is read as the word before the colon.
fn without_exists_terms(query: &str) -> Cow<'_, str> {
    let ends_a_term = |rest: &str| {
        rest.chars()
            .next()
            .is_none_or(|next| next.is_whitespace() || next == ')')
    };
    let cuts: Vec<usize> = query
        .match_indices(":*")
        .filter(|&(at, _)| ends_a_term(&query[at + 2..]))
        .map(|(at, _)| at)
        .collect();
    if cuts.is_empty() {
        return Cow::Borrowed(query);
    }
    let mut kept = String::with_capacity(query.len());
    let mut from = 0;
    for at in cuts {
        kept.push_str(&query[from..at]);
        from = at + 2;
    }
    kept.push_str(&query[from..]);
    Cow::Owned(kept)
}

fn has_unbalanced_quote(query: &str) -> bool {
    query.matches('"').count() % 2 == 1
}

/// `c++` as `c\+\+`: in tantivy's syntax `+` is the "must" operator, so a
/// word's closing `++` is escaped to reach the tokenizer, which keeps it
/// (`index::tokenizer`). A leading `+` stays an operator.
pub fn escape_language_suffixes(query: &str) -> String {
    let mut escaped = String::with_capacity(query.len() + 4);
    let mut previous: Option<char> = None;
    let mut rest = query;
    while let Some(character) = rest.chars().next() {
        let after_word = previous.is_some_and(char::is_alphanumeric);
        if after_word && rest.starts_with("++") {
            let next = rest[2..].chars().next();
            if next.is_none_or(|next| !next.is_alphanumeric() && next != '+') {
                escaped.push_str("\\+\\+");
                rest = &rest[2..];
                previous = Some('+');
                continue;
            }
        }
        escaped.push(character);
        previous = Some(character);
        rest = &rest[character.len_utf8()..];
    }
    escaped
}

/// The words of a text (as the index tokenizes them: runs of letters and
/// digits, with a closing `++` or `#`), lower-cased (so `AND`, `OR` and
/// `NOT` are words, not operators) and space-separated: a query of plain
/// words, which the parser always accepts once [`escape_language_suffixes`]
/// has escaped it.
pub fn query_words(text: &str) -> String {
    tokenizer::words(text).join(" ")
}

fn describe_query_error(error: &tantivy::query::QueryParserError) -> String {
    use tantivy::query::QueryParserError as E;
    match error {
        E::SyntaxError(_) => {
            "the query syntax is not valid (unbalanced quotes or parentheses, or a stray operator)"
                .into()
        }
        E::FieldDoesNotExist(field) => {
            format!("there is no field {field:?}; fields are title, body, headings, url and host")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{text_prefix, without_exists_terms};

    #[test]
    fn a_text_prefix_ends_on_a_character_boundary() {
        assert_eq!(text_prefix("short", 10), "short");
        assert_eq!(text_prefix("abcdef", 3), "abc");
        // "é" is two bytes: a cut inside it keeps the character out.
        assert_eq!(text_prefix("café au lait", 4), "caf");
        assert_eq!(text_prefix("café au lait", 5), "café");
        assert_eq!(text_prefix("€", 0), "");
    }

    #[test]
    fn a_field_exists_term_is_read_as_its_word() {
        for (typed, read) in [
            ("title:*", "title"),
            ("+title:* -url:*", "+title -url"),
            ("(body:*) host", "(body) host"),
            ("title:foo*", "title:foo*"),
            ("a:*b", "a:*b"),
            ("virtual host", "virtual host"),
        ] {
            assert_eq!(without_exists_terms(typed), read, "{typed}");
        }
    }
}
