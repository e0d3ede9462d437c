//! Which pages are copies of which: fingerprints and trivial clusters.
//!
//! Reads the page table and each page's [`Fingerprint`] (computed at ingest).
//! Writes, into the generation, a [`Similarity`]: every page's trivial
//! cluster (cho-2000 Definition 4, the table `trivial(cluster, page)` of
//! §3.2), the chunks set aside as boilerplate, and the counts `stats` shows.
//!
//! Levels of sameness, each included in the next:
//! - **exact**: byte-identical bodies (the store's signature; gomes-2006 §4);
//! - **equivalent**: the same words in the same order once markup, spacing
//!   and case are gone (bharat-broder-1999 §2, level 2);
//! - **similar**: directly similar by the configured test, `chunks` (shared
//!   chunks of k lines, site chrome aside, at least T and at least the given
//!   shares of the smaller and of the larger page: cho-2000 §2.1, §3.2,
//!   §5.1, see [`chunks`] and [`SimilarityConfig`]),
//!   `minhash` (a shared megashingle, fetterly-2004 §2) or `both` (either);
//! - **trivial cluster**: the transitive closure of the above by union-find.
//!
//! Only pages answered `200` with a body that has words take part; every
//! other page is a trivial cluster of its own.

pub mod aliases;
mod chunks;
pub mod languages;
mod paths;
pub mod stand_ins;

use std::collections::HashMap;
use std::fmt;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::language::{self, Language};
use crate::pages::{HostId, PageId, PageTable};

pub use crate::fingerprint::{
    chunk_hash, line_hashes, Fingerprint, Fingerprints, MEGASHINGLES, MINHASH_FUNCTIONS,
    SHINGLE_WORDS, SUPERSHINGLES, SUPERSHINGLE_WIDTH,
};
use crate::union_find::UnionFind;
pub use chunks::required_shared;

/// The pairwise test behind trivial clusters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SimilarityTest {
    Chunks,
    Minhash,
    Both,
}

impl fmt::Display for SimilarityTest {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            SimilarityTest::Chunks => "chunks",
            SimilarityTest::Minhash => "minhash",
            SimilarityTest::Both => "both",
        })
    }
}

/// Thresholds of the similarity stage. The defaults were chosen by measuring
/// on the demo crawl with `mirrorscope eval` (see BENCHMARKS.md, "Choosing
/// the similarity thresholds").
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SimilarityConfig {
    /// Which test makes two pages directly similar. Default `chunks`: it sets
    /// site chrome aside, which min-hash over whole pages cannot.
    pub test: SimilarityTest,
    /// Lines per chunk: 1, 2 or 4 (cho-2000 §5.1 used 2 and 4).
    pub chunk_lines: usize,
    /// T, the absolute part of the threshold: two pages are similar when
    /// they share at least this many chunks (and the shares below). cho-2000
    /// §5.1 used "more than" 15 four-line and 25 two-line chunks of whole
    /// pages, chrome included; with chrome set aside and one-line chunks, an
    /// absolute T that high keeps apart copies of short pages and joins long
    /// pages of one manual, so the default is 1 and the shares decide.
    pub shared_chunks: u32,
    /// The relative part: the share of the smaller page's chunks (those that
    /// count) that must be shared. Scaling with the page lets short pages be
    /// similar, and keeps long pages that share a few screens of text
    /// (two connector references with the same common attributes) apart.
    pub shared_fraction: f64,
    /// The share of the larger page's chunks that must be shared too: a
    /// short page is not the copy of a long one that merely contains it.
    pub larger_fraction: f64,
    /// A chunk on more texts than this on one host is site chrome.
    pub boilerplate_pages_per_host: u32,
    /// A chunk on more texts than this in the crawl is set aside too.
    pub max_chunk_pages: u32,
    /// A text with more chunks than this is compared on this many of them,
    /// the same sample for every copy ([`Fingerprint::chunks`]). Default
    /// 10,000: four times the lines of a long reference page, and what
    /// bounds the chunk table when a crawl holds pages of megabytes of lines.
    pub max_page_chunks: usize,
    /// A text one host serves under this many URLs or more is a stand-in
    /// (a soft 404, a parked domain, a "not mirrored here" page) unless
    /// another host serves it among a manual's pages ([`stand_ins`]). A
    /// manual publishes one text under two or three names (a folder and its
    /// index page, a symbolic link, a re-exported item); a host answering
    /// URLs it does not have does so for dozens.
    pub stand_in_names: usize,
    /// A candidate stand-in text is a manual's page after all when another
    /// host serves it at more than this share of the same places (the last
    /// two arcs of the path), as a copy of the manual serves the manual's
    /// stubs: most of them, since a copy crawled in part lacks some.
    pub stand_in_places_share: f64,
    /// ... and there sits among other pages: its pages are fewer than this
    /// share of the pages of their folders. Two parked domains answering
    /// the same requests alike serve nothing else in those folders.
    pub stand_in_folder_share: f64,
    /// A page whose language is only detected (no `lang`, no
    /// `Content-Language`) takes its folder's language when more than this
    /// share of the folder's pages have that one: a short page (a table, a
    /// command reference) is detected wrong more often than a folder of a
    /// manual changes language.
    pub language_folder_share: f64,
    /// A trivial cluster is split by path from this many pages, a cheap
    /// filter: two paths of one host need a third page to be compared
    /// with (a corroborated split needs two pages per corroborating group).
    pub split_min_pages: usize,
    /// A split by path is made when at least this many of its groups find
    /// members on other hosts ([`paths`]): one group corroborated alone is
    /// one page of the reference host under two names, not two pages.
    pub split_corroborating_groups: usize,
    /// A way two URLs of one host differ (scheme, a query parameter, an
    /// index file, a path parameter, case: [`aliases`]) names one page on
    /// that host when at least this many groups of its URLs differ so...
    pub alias_min_groups: usize,
    /// ... and at least this share of those groups are one text each. A
    /// parameter that names other pages (`?page=2`, `?lang=de`) gives other
    /// texts in most of its groups; a tracking parameter in none.
    pub alias_share: f64,
}

impl Default for SimilarityConfig {
    fn default() -> Self {
        SimilarityConfig {
            test: SimilarityTest::Chunks,
            chunk_lines: 1,
            shared_chunks: 1,
            shared_fraction: 0.8,
            larger_fraction: 0.5,
            boilerplate_pages_per_host: 4,
            max_chunk_pages: 1000,
            max_page_chunks: 10_000,
            stand_in_names: 10,
            stand_in_places_share: 0.5,
            stand_in_folder_share: 0.5,
            language_folder_share: 0.5,
            split_min_pages: 3,
            split_corroborating_groups: 2,
            alias_min_groups: 2,
            alias_share: 0.9,
        }
    }
}

impl SimilarityConfig {
    /// Why these values cannot be used, if they cannot.
    pub fn problem(&self) -> Option<String> {
        if ![1, 2, 4].contains(&self.chunk_lines) {
            return Some("similarity.chunk_lines must be 1, 2 or 4".into());
        }
        if self.shared_chunks == 0 {
            return Some("similarity.shared_chunks must be at least 1".into());
        }
        if !(self.shared_fraction > 0.0 && self.shared_fraction <= 1.0) {
            return Some("similarity.shared_fraction must be above 0 and at most 1".into());
        }
        if !(0.0..=1.0).contains(&self.larger_fraction) {
            return Some("similarity.larger_fraction must be from 0 to 1".into());
        }
        if self.stand_in_names < 2 {
            return Some("similarity.stand_in_names must be at least 2".into());
        }
        let share = |value: f64| (0.0..1.0).contains(&value);
        if !(share(self.stand_in_places_share)
            && share(self.language_folder_share)
            && self.stand_in_folder_share > 0.0
            && self.stand_in_folder_share <= 1.0)
        {
            return Some(
                "similarity.stand_in_places_share and language_folder_share must be at least 0 and below 1, stand_in_folder_share above 0 and at most 1".into(),
            );
        }
        if self.split_min_pages < 2 || self.split_corroborating_groups < 2 {
            return Some(
                "similarity.split_min_pages and split_corroborating_groups must be at least 2"
                    .into(),
            );
        }
        if self.alias_min_groups < 1 || !(self.alias_share > 0.0 && self.alias_share <= 1.0) {
            return Some(
                "similarity.alias_min_groups must be at least 1 and alias_share above 0 and at most 1"
                    .into(),
            );
        }
        if self.max_page_chunks == 0 {
            return Some("similarity.max_page_chunks must be at least 1".into());
        }
        if self.boilerplate_pages_per_host == 0 || self.max_chunk_pages < 2 {
            return Some(
                "similarity.boilerplate_pages_per_host must be at least 1 and similarity.max_chunk_pages at least 2".into(),
            );
        }
        None
    }
}

/// A trivial cluster's number in a generation. Four bytes, as a `u32` is,
/// so that a table of them by page costs what a table of numbers does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[repr(transparent)]
pub struct TrivialClusterId(pub u32);

impl TrivialClusterId {
    /// The collections stage's label for a page that takes part in no
    /// trivial cluster worth growing (not compared, a stand-in, or a second
    /// name of a page of its host): above every cluster's number, so it
    /// sorts after them all.
    pub const NONE: TrivialClusterId = TrivialClusterId(u32::MAX);

    /// Its position in a table by trivial cluster.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

// A table of trivial clusters by page stays four bytes a page.
const _: () = assert!(std::mem::size_of::<TrivialClusterId>() == 4);

impl fmt::Display for TrivialClusterId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.0)
    }
}

/// One bucket of cho-2000 Figure 11: pages by how many other copies they
/// have, under each level of sameness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistogramRow {
    /// "0", "1", "2-10" (2 to 10), "10-100" (11 to 100), ">100".
    pub replicas: String,
    /// Under the trivial clusters (the configured test).
    pub pages: u64,
    pub exact: u64,
    pub equivalent: u64,
    pub chunks: u64,
    pub minhash: u64,
}

pub const HISTOGRAM_BUCKETS: [&str; 5] = ["0", "1", "2-10", "10-100", ">100"];

fn bucket(other_copies: u64) -> usize {
    match other_copies {
        0 => 0,
        1 => 1,
        2..=10 => 2,
        11..=100 => 3,
        _ => 4,
    }
}

/// The similarity stage's figures, kept in the generation's manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimilarityCounts {
    pub similarity_test: SimilarityTest,
    /// Pages compared: answered 200, with a body that has words.
    pub compared_pages: u64,
    /// Distinct texts among them (equivalence classes).
    pub distinct_texts: u64,
    /// Trivial clusters of more than one page.
    pub trivial_clusters: u64,
    /// Pages beyond the first of each trivial cluster: the pages a reader
    /// would not need (fetterly-2004 §3 counts "near-duplicates" this way).
    pub near_duplicate_pages: u64,
    pub replica_histogram: Vec<HistogramRow>,
    pub boilerplate_chunks: u64,
    /// Directly similar pairs of distinct texts found by each test.
    pub chunk_pairs: u64,
    pub megashingle_pairs: u64,
    /// Pairs of texts similar by either test whose languages differ, left
    /// apart (translations, [`languages`]).
    #[serde(default)]
    pub cross_language_pairs: u64,
    /// Compared pages that are stand-ins ([`stand_ins`]).
    #[serde(default)]
    pub stand_in_pages: u64,
}

/// The similarity stage's output for a generation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Similarity {
    pub config: SimilarityConfig,
    /// By page id; `None` for a page without a body. Written to a file of
    /// their own (`crate::generation::FingerprintFile`), never with the
    /// rest, and empty in an analysis read without them.
    #[serde(skip)]
    pub fingerprints: Vec<Option<Fingerprint>>,
    /// By page id: its trivial cluster.
    pub trivial: Vec<TrivialClusterId>,
    /// By page id: the first page with the same text, whose fingerprint the
    /// analysis used for all of them (the page itself when not compared).
    pub representative: Vec<PageId>,
    /// Chunk hashes set aside as site chrome or overly common, sorted.
    pub boilerplate: Vec<u64>,
    /// By page id: its language as the stage used it
    /// ([`languages::effective`]); pages of two languages are never copies.
    pub languages: Vec<Option<Language>>,
    /// By page id: whether it is a stand-in ([`stand_ins`]): a trivial
    /// cluster of its own, never a copy, never a search result.
    pub stand_in: Vec<bool>,
    pub counts: SimilarityCounts,
}

/// Whether a page takes part in similarity: answered 200, with a body that
/// has at least one word (pages without text, such as image-only pages or
/// script shells, would otherwise all be "equivalent").
pub fn is_compared(table: &PageTable, fingerprints: &[Option<Fingerprint>], page: usize) -> bool {
    let words = fingerprints
        .get(page)
        .and_then(Option::as_ref)
        .map_or(0, |fingerprint| fingerprint.words);
    compared_with(table, page, words)
}

/// [`is_compared`], the page's number of words given.
pub fn compared_with(table: &PageTable, page: usize, words: u32) -> bool {
    let entry = &table.pages[page];
    entry.status == 200 && entry.content_key.is_some() && words > 0
}

/// What the stage reads of every page's fingerprint before it knows which
/// pages are one text; the rest (chunks, min-hash) it reads of one page of
/// each text. A page without a fingerprint has no word.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageText {
    pub words: u32,
    /// Lines with a word (the bound of its chunks).
    pub lines: u32,
    /// [`Fingerprint::text_signature`].
    pub text: u128,
    /// [`Fingerprint::echo_signature`].
    pub echo: u128,
}

impl PageText {
    pub fn of(fingerprint: Option<&Fingerprint>) -> PageText {
        fingerprint.map_or_else(PageText::default, |print| PageText {
            words: print.words,
            lines: u32::try_from(print.lines.len()).unwrap_or(u32::MAX),
            text: print.text_signature,
            echo: print.echo_signature,
        })
    }
}

/// Runs the stage: fingerprints (by page id) -> trivial clusters. The
/// analysis keeps the fingerprints ([`Similarity::fingerprints`]).
pub fn analyse(
    table: &PageTable,
    fingerprints: Vec<Option<Fingerprint>>,
    config: &SimilarityConfig,
) -> Similarity {
    let mut similarity = match analyse_from(table, &fingerprints, config) {
        Ok(similarity) => similarity,
        Err(never) => match never {},
    };
    similarity.fingerprints = fingerprints;
    similarity
}

/// Texts whose chunks are read from the fingerprints at once: the chunks
/// of a share are in the table that pairs them before the next is read.
const TEXTS_READ_AT_ONCE: usize = 16_384;

/// Runs the stage on fingerprints wherever they are (in memory, or in a
/// file the pipeline wrote once the page table was built, so that no stage
/// holds them all), reading each page's signatures, then the chunks and
/// min-hash of one page of each text. The analysis holds no fingerprint.
/// Fails only when the file cannot be read.
pub fn analyse_from<F: Fingerprints + Sync>(
    table: &PageTable,
    prints: &F,
    config: &SimilarityConfig,
) -> Result<Similarity, F::Error> {
    assert_eq!(table.pages.len(), prints.page_count());
    let page_count = table.pages.len();
    let every_page: Vec<usize> = (0..page_count).collect();
    let texts = prints.map_pages(&every_page, |_, print| PageText::of(print))?;
    drop(every_page);

    let compared: Vec<bool> = (0..page_count)
        .map(|page| compared_with(table, page, texts[page].words))
        .collect();
    let stand_in = stand_ins::find(table, &texts, config);
    let documents_of_a_folder: Vec<bool> = compared
        .iter()
        .zip(&stand_in)
        .map(|(&compared, &stand_in)| compared && !stand_in)
        .collect();
    let languages =
        languages::effective(table, &documents_of_a_folder, config.language_folder_share);

    // Distinct texts ("documents") in one language, numbered in order of
    // their first page: the same text in two editions of a manual (a
    // command reference) is a page of each, not a copy.
    let mut document_of = vec![u32::MAX; page_count];
    let mut first_page: Vec<usize> = Vec::new();
    let mut hosts: Vec<Vec<HostId>> = Vec::new();
    let mut pages_of: Vec<u64> = Vec::new();
    {
        let mut by_signature: HashMap<(u128, Option<Language>), u32> = HashMap::new();
        for page in 0..page_count {
            if !compared[page] {
                continue;
            }
            let key = (texts[page].text, languages[page]);
            let document = *by_signature.entry(key).or_insert_with(|| {
                first_page.push(page);
                hosts.push(Vec::new());
                pages_of.push(0);
                (first_page.len() - 1) as u32
            });
            document_of[page] = document;
            hosts[document as usize].push(table.pages[page].host);
            pages_of[document as usize] += 1;
        }
    }
    for list in &mut hosts {
        list.sort_unstable();
        list.dedup();
    }
    let documents = first_page.len();
    // Each text has at most a chunk per `chunk_lines` lines.
    let most_chunks: usize = first_page
        .iter()
        .map(|&page| {
            (texts[page].lines as usize)
                .div_ceil(config.chunk_lines.max(1))
                .min(config.max_page_chunks)
        })
        .sum();
    drop(texts);

    // Exact copies whose bytes decode to different texts (a charset given in
    // one header and not in the other) still count as exact.
    let mut exact_links: Vec<(u32, u32)> = Vec::new();
    {
        let mut by_body = HashMap::new();
        for (page, (entry, &document)) in table.pages.iter().zip(&document_of).enumerate() {
            let Some(key) = entry.content_key else {
                continue;
            };
            if document == u32::MAX {
                continue;
            }
            let first = *by_body.entry((key, languages[page])).or_insert(document);
            if first != document {
                exact_links.push((first, document));
            }
        }
    }

    // Of each text, its first page's chunks and megashingles (a compared
    // page has a fingerprint: it has words), read a share of the texts at a
    // time: the chunks go straight to the table that pairs them.
    let mut chunk_table = chunks::ChunkTable::with_capacity(most_chunks, documents);
    let mut megashingles: Vec<Option<[u64; MEGASHINGLES]>> = Vec::with_capacity(documents);
    for share in first_page.chunks(TEXTS_READ_AT_ONCE) {
        let read = prints.map_pages(share, |_, print| {
            print.map_or((Vec::new(), None), |print| {
                (
                    print.chunks(config.chunk_lines, config.max_page_chunks),
                    print.megashingles(),
                )
            })
        })?;
        for (chunks, megashingle) in read {
            chunk_table.push(&chunks);
            megashingles.push(megashingle);
        }
    }
    let hosts_of: Vec<&[HostId]> = hosts.iter().map(Vec::as_slice).collect();
    let mut chunk_result = chunk_table.similar_pairs(&hosts_of, config);
    drop(hosts_of);
    drop(hosts);
    let mut megashingle_pairs = megashingle_pairs(&megashingles);
    drop(megashingles);
    // Texts in two languages are never copies, whatever lines they share.
    let language_of = |document: u32| languages[first_page[document as usize]];
    let same_language =
        |first: u32, second: u32| language::compatible(language_of(first), language_of(second));
    let before = chunk_result.pairs.len() + megashingle_pairs.len();
    chunk_result
        .pairs
        .retain(|&(first, second, _)| same_language(first, second));
    megashingle_pairs.retain(|&(first, second)| same_language(first, second));
    let cross_language_pairs = (before - chunk_result.pairs.len() - megashingle_pairs.len()) as u64;

    let clusters_by = |with_chunks: bool, with_minhash: bool| {
        let mut sets = UnionFind::new(documents);
        for &(first, second) in &exact_links {
            sets.union(first, second);
        }
        if with_chunks {
            for &(first, second, _) in &chunk_result.pairs {
                sets.union(first, second);
            }
        }
        if with_minhash {
            for &(first, second) in &megashingle_pairs {
                sets.union(first, second);
            }
        }
        sets.labels()
    };
    // Each level of sameness includes the stricter ones; the trivial
    // clusters are the configured test's.
    let equivalent_labels = clusters_by(false, false);
    let chunk_labels = clusters_by(true, false);
    let minhash_labels = clusters_by(false, true);
    let trivial_of_document = match config.test {
        SimilarityTest::Chunks => chunk_labels.clone(),
        SimilarityTest::Minhash => minhash_labels.clone(),
        SimilarityTest::Both => clusters_by(true, true),
    };

    // Trivial clusters of pages: documents' clusters split by path where one
    // host holds several pages of one (see [`paths`]), then every page not
    // compared on its own; numbered in order of their first page.
    // Stand-ins are clusters of their own: one text answering many URLs
    // is no copy of anything.
    let page_labels: Vec<u32> = document_of
        .iter()
        .zip(&stand_in)
        .map(|(&document, &stand_in)| {
            if document == u32::MAX || stand_in {
                u32::MAX
            } else {
                trivial_of_document[document as usize]
            }
        })
        .collect();
    let page_labels = paths::split_by_path(table, &page_labels, config);
    let mut trivial = Vec::with_capacity(page_count);
    {
        let mut number_of_label: HashMap<u32, u32> = HashMap::new();
        let mut next = 0u32;
        for &label in &page_labels {
            let number = if label == u32::MAX {
                next += 1;
                next - 1
            } else {
                *number_of_label.entry(label).or_insert_with(|| {
                    next += 1;
                    next - 1
                })
            };
            trivial.push(TrivialClusterId(number));
        }
    }

    // Figure 11: other copies of each compared page under each level.
    let page_sizes = |labels: &[u32]| -> Vec<u64> {
        let mut size = vec![0u64; documents];
        for (document, &label) in labels.iter().enumerate() {
            size[label as usize] += pages_of[document];
        }
        size
    };
    // Pages per bucket when documents are grouped by `labels`.
    let buckets_of = |labels: &[u32]| -> [u64; HISTOGRAM_BUCKETS.len()] {
        let sizes = page_sizes(labels);
        let mut counts = [0u64; HISTOGRAM_BUCKETS.len()];
        for (document, &label) in labels.iter().enumerate() {
            counts[bucket(sizes[label as usize] - 1)] += pages_of[document];
        }
        counts
    };
    let mut exact = [0u64; HISTOGRAM_BUCKETS.len()];
    {
        let mut body_pages: HashMap<_, u64> = HashMap::new();
        for (entry, &document) in table.pages.iter().zip(&document_of) {
            if document != u32::MAX {
                *body_pages.entry(entry.content_key).or_default() += 1;
            }
        }
        for copies in body_pages.values() {
            exact[bucket(copies - 1)] += copies;
        }
    }
    // Compared pages per trivial cluster (after the split by path; a
    // stand-in is a cluster of its own).
    let mut trivial_sizes: HashMap<u32, u64> = HashMap::new();
    for (&is_compared, id) in compared.iter().zip(&trivial) {
        if is_compared {
            *trivial_sizes.entry(id.0).or_default() += 1;
        }
    }
    let mut pages = [0u64; HISTOGRAM_BUCKETS.len()];
    for size in trivial_sizes.values() {
        pages[bucket(size - 1)] += size;
    }
    let (equivalent, chunks, minhash) = (
        buckets_of(&equivalent_labels),
        buckets_of(&chunk_labels),
        buckets_of(&minhash_labels),
    );
    let histogram: Vec<HistogramRow> = HISTOGRAM_BUCKETS
        .iter()
        .enumerate()
        .map(|(index, label)| HistogramRow {
            replicas: label.to_string(),
            pages: pages[index],
            exact: exact[index],
            equivalent: equivalent[index],
            chunks: chunks[index],
            minhash: minhash[index],
        })
        .collect();
    let compared_pages: u64 = pages_of.iter().sum();
    let clusters: Vec<u64> = trivial_sizes.into_values().collect();

    let counts = SimilarityCounts {
        similarity_test: config.test,
        compared_pages,
        distinct_texts: documents as u64,
        trivial_clusters: clusters.iter().filter(|&&size| size > 1).count() as u64,
        near_duplicate_pages: compared_pages - clusters.len() as u64,
        replica_histogram: histogram,
        boilerplate_chunks: chunk_result.boilerplate.len() as u64,
        chunk_pairs: chunk_result.pairs.len() as u64,
        megashingle_pairs: megashingle_pairs.len() as u64,
        cross_language_pairs,
        stand_in_pages: stand_in.iter().filter(|&&flag| flag).count() as u64,
    };
    let representative = document_of
        .iter()
        .enumerate()
        .map(|(page, &document)| {
            if document == u32::MAX {
                PageId(page as u32)
            } else {
                PageId(first_page[document as usize] as u32)
            }
        })
        .collect();
    Ok(Similarity {
        config: config.clone(),
        fingerprints: Vec::new(),
        trivial,
        representative,
        boilerplate: chunk_result.boilerplate,
        languages,
        stand_in,
        counts,
    })
}

/// Pairs of documents sharing a megashingle (fetterly-2004 §2): for each of
/// the 15 slots (one table per slot), documents with equal megashingles in
/// that slot. Every pair of a group is listed, except in a group of more than
/// `MAX_LISTED_GROUP` documents, whose members are only joined to its first
/// (enough for union-find, and the work stays linear).
fn megashingle_pairs(megashingles: &[Option<[u64; MEGASHINGLES]>]) -> Vec<(u32, u32)> {
    const MAX_LISTED_GROUP: usize = 1000;
    let mut table: Vec<(u8, u64, u32)> = megashingles
        .par_iter()
        .enumerate()
        .flat_map_iter(|(document, megashingles)| {
            megashingles.iter().flat_map(move |megas| {
                megas
                    .iter()
                    .enumerate()
                    .map(move |(slot, &mega)| (slot as u8, mega, document as u32))
            })
        })
        .collect();
    table.par_sort_unstable();
    let mut pairs = Vec::new();
    let mut start = 0;
    for index in 1..=table.len() {
        if index == table.len()
            || table[index].0 != table[start].0
            || table[index].1 != table[start].1
        {
            let group = &table[start..index];
            if group.len() > MAX_LISTED_GROUP {
                pairs.extend(group[1..].iter().map(|entry| (group[0].2, entry.2)));
            } else {
                for (position, first) in group.iter().enumerate() {
                    pairs.extend(
                        group[position + 1..]
                            .iter()
                            .map(|second| (first.2, second.2)),
                    );
                }
            }
            start = index;
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// How two pages relate, as `similar` and the page view explain it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Relation {
    /// Byte-identical bodies.
    Exact,
    /// The same words in the same order.
    Equivalent,
    /// Directly similar by the configured test.
    Similar,
    /// In one trivial cluster through other pages.
    Transitive,
    /// Not in the same trivial cluster.
    Unrelated,
}

/// Why two pages are (or are not) grouped.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub relation: Relation,
    /// Min-hash estimate of the resemblance of their shingle sets.
    pub resemblance: Option<f64>,
    /// Chunks (not boilerplate) the two share, and how many each has.
    pub shared_chunks: u32,
    pub chunks: (u32, u32),
    /// Shared chunks the configured threshold asks for.
    pub required_chunks: u32,
    pub shared_megashingle: bool,
}

impl Similarity {
    /// The analysis without its pages' fingerprints, once they are written:
    /// the search index reads none of them, and they are most of this
    /// stage's memory (every page's line hashes and min-hash).
    pub fn without_fingerprints(mut self) -> Similarity {
        self.fingerprints = Vec::new();
        self
    }

    /// The same analysis with other trivial clusters: `labels` gives each
    /// page's cluster (any numbering; renumbered in the order of each
    /// cluster's first page, as this stage numbers them), computed
    /// elsewhere (`mirrorscope import-analysis`, from the Spark jobs). The
    /// figures that depend on the clusters are counted again; those of the
    /// other levels of sameness are this stage's. Says what is wrong when
    /// the labels cannot be this table's: not one per page, or a page that
    /// is not compared (no text) sharing a cluster.
    pub fn with_trivial(
        mut self,
        table: &PageTable,
        labels: &[u64],
    ) -> std::result::Result<Similarity, String> {
        if labels.len() != table.pages.len() {
            return Err(format!(
                "{} clusters given for the {} pages of the generation",
                labels.len(),
                table.pages.len()
            ));
        }
        let compared: Vec<bool> = (0..labels.len())
            .map(|page| is_compared(table, &self.fingerprints, page))
            .collect();
        let mut number_of: HashMap<u64, (u32, usize)> = HashMap::new();
        let mut trivial = Vec::with_capacity(labels.len());
        for (page, &label) in labels.iter().enumerate() {
            let next = number_of.len() as u32;
            let (number, first) = *number_of.entry(label).or_insert((next, page));
            if first != page && !(compared[page] && compared[first]) {
                let alone = if compared[page] { first } else { page };
                return Err(format!(
                    "page {alone} has no text to compare but shares cluster {label} with page {}",
                    if alone == page { first } else { page }
                ));
            }
            if first != page && (self.stand_in[page] || self.stand_in[first]) {
                let alone = if self.stand_in[page] { page } else { first };
                return Err(format!(
                    "page {alone} is a stand-in (one text answering many URLs of its host) but shares cluster {label} with page {}",
                    if alone == page { first } else { page }
                ));
            }
            trivial.push(TrivialClusterId(number));
        }
        let mut sizes: HashMap<TrivialClusterId, u64> = HashMap::new();
        for (page, &cluster) in trivial.iter().enumerate() {
            if compared[page] {
                *sizes.entry(cluster).or_default() += 1;
            }
        }
        let mut pages = [0u64; HISTOGRAM_BUCKETS.len()];
        for size in sizes.values() {
            pages[bucket(size - 1)] += size;
        }
        let counts = &mut self.counts;
        counts.trivial_clusters = sizes.values().filter(|&&size| size > 1).count() as u64;
        counts.near_duplicate_pages = counts.compared_pages - sizes.len() as u64;
        for (row, pages) in counts.replica_histogram.iter_mut().zip(pages) {
            row.pages = pages;
        }
        self.trivial = trivial;
        Ok(self)
    }

    /// Splits a page's extracted text (lines joined by `\n`) into its own
    /// lines and the lines this stage set aside as site chrome (a chunk of
    /// them is in [`Similarity::boilerplate`]), each kept in order and joined
    /// by `\n`. Snippets come from the own text; lines without a word stay
    /// with it (they belong to no chunk). The title is the fingerprint's first
    /// line, so it is given to chunk the lines as the fingerprint did.
    pub fn split_chrome(&self, title: &str, text: &str) -> (String, String) {
        if self.boilerplate.is_empty() {
            return (text.to_string(), String::new());
        }
        let lines: Vec<&str> = text.split('\n').collect();
        let title_lines = line_hashes(title)
            .into_iter()
            .flatten()
            .map(|hash| (None, hash));
        let hashed: Vec<(Option<usize>, u64)> = title_lines
            .chain(
                line_hashes(text)
                    .into_iter()
                    .enumerate()
                    .filter_map(|(index, hash)| Some((Some(index), hash?))),
            )
            .collect();
        let per_chunk = self.config.chunk_lines.max(1);
        let mut chrome = vec![false; lines.len()];
        let mut hashes = Vec::with_capacity(per_chunk);
        for group in hashed.chunks(per_chunk) {
            hashes.clear();
            hashes.extend(group.iter().map(|&(_, hash)| hash));
            if self
                .boilerplate
                .binary_search(&chunk_hash(&hashes, per_chunk))
                .is_ok()
            {
                for &(index, _) in group {
                    if let Some(index) = index {
                        chrome[index] = true;
                    }
                }
            }
        }
        let mut own = String::with_capacity(text.len());
        let mut set_aside = String::new();
        for (line, is_chrome) in lines.iter().zip(chrome) {
            let target = if is_chrome { &mut set_aside } else { &mut own };
            if !target.is_empty() {
                target.push('\n');
            }
            target.push_str(line);
        }
        (own, set_aside)
    }

    /// Why this similarity cannot belong to a table of `pages` pages, if
    /// so. Its fingerprints, when it holds them, must be the pages' too.
    pub fn problem(&self, pages: usize) -> Option<String> {
        let fingerprints = self.fingerprints.len();
        if (fingerprints != 0 && fingerprints != pages)
            || self.trivial.len() != pages
            || self.representative.len() != pages
            || self.languages.len() != pages
            || self.stand_in.len() != pages
        {
            return Some(format!(
                "similarity of {} pages does not match the page table's {pages}",
                self.trivial.len()
            ));
        }
        None
    }

    /// By page: whether it is a stand-in ([`stand_ins`]).
    pub fn stand_ins(&self) -> &[bool] {
        &self.stand_in
    }

    /// Whether a page is a stand-in ([`stand_ins`]).
    pub fn is_stand_in(&self, page: PageId) -> bool {
        self.stand_in.get(page.0 as usize).copied().unwrap_or(false)
    }

    /// Number of trivial clusters (ids run from 0 to this, exclusive).
    pub fn trivial_cluster_count(&self) -> usize {
        self.trivial
            .iter()
            .map(|id| id.index() + 1)
            .max()
            .unwrap_or(0)
    }

    /// By trivial cluster id: how many pages it holds (a page's copies in
    /// the crawl, itself included).
    pub fn trivial_cluster_sizes(&self) -> Vec<u32> {
        let mut sizes = vec![0u32; self.trivial_cluster_count()];
        for id in &self.trivial {
            sizes[id.index()] += 1;
        }
        sizes
    }

    pub fn cluster_of(&self, page: PageId) -> Option<TrivialClusterId> {
        self.trivial.get(page.0 as usize).copied()
    }

    /// The pages of `page`'s trivial cluster, itself included, in id order.
    pub fn cluster_members(&self, page: PageId) -> Vec<PageId> {
        let Some(cluster) = self.cluster_of(page) else {
            return Vec::new();
        };
        self.trivial
            .iter()
            .enumerate()
            .filter(|(_, &other)| other == cluster)
            .map(|(index, _)| PageId(index as u32))
            .collect()
    }

    /// By page id: a hash of the page's own text, its chunks with site
    /// chrome set aside (0 for a page without a fingerprint or without
    /// such chunks). Two copies of one version of a page, one with a
    /// mirror's banner or footer and one without, have the same signature.
    pub fn own_text_signatures(&self) -> Vec<u64> {
        self.fingerprints
            .par_iter()
            .map(|fingerprint| {
                fingerprint
                    .as_ref()
                    .map_or(0, |print| self.own_text_signature(print))
            })
            .collect()
    }

    /// [`Similarity::own_text_signatures`] of one page, its fingerprint given.
    pub fn own_text_signature(&self, fingerprint: &Fingerprint) -> u64 {
        let chunks = self.counted_chunks(fingerprint);
        if chunks.is_empty() {
            return 0;
        }
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for chunk in &chunks {
            hasher.update(&chunk.to_le_bytes());
        }
        hasher.digest().max(1)
    }

    fn counted_chunks(&self, fingerprint: &Fingerprint) -> Vec<u64> {
        fingerprint
            .chunks(self.config.chunk_lines, self.config.max_page_chunks)
            .into_iter()
            .filter(|chunk| self.boilerplate.binary_search(chunk).is_err())
            .collect()
    }

    /// Explains how `first` and `second` relate.
    pub fn evidence(&self, table: &PageTable, first: PageId, second: PageId) -> Option<Evidence> {
        let fa = self.fingerprints.get(first.0 as usize)?.as_ref();
        let fb = self.fingerprints.get(second.0 as usize)?.as_ref();
        self.evidence_of(table, (first, fa), (second, fb))
    }

    /// [`Similarity::evidence`], the two pages' fingerprints given (read
    /// from the generation's file by an analysis held without them).
    pub fn evidence_of(
        &self,
        table: &PageTable,
        (first, fa): (PageId, Option<&Fingerprint>),
        (second, fb): (PageId, Option<&Fingerprint>),
    ) -> Option<Evidence> {
        let (a, b) = (table.page(first)?, table.page(second)?);
        let same_cluster = self.cluster_of(first) == self.cluster_of(second);
        let (Some(fa), Some(fb)) = (fa, fb) else {
            return Some(Evidence {
                relation: if same_cluster && first == second {
                    Relation::Exact
                } else {
                    Relation::Unrelated
                },
                resemblance: None,
                shared_chunks: 0,
                chunks: (0, 0),
                required_chunks: 0,
                shared_megashingle: false,
            });
        };
        let chunks_a = self.counted_chunks(fa);
        let chunks_b = self.counted_chunks(fb);
        let shared = chunks_a
            .iter()
            .filter(|chunk| chunks_b.binary_search(chunk).is_ok())
            .count() as u32;
        let required = required_shared(&self.config, chunks_a.len() as u32, chunks_b.len() as u32);
        let shared_megashingle = match (fa.megashingles(), fb.megashingles()) {
            (Some(x), Some(y)) => x.iter().zip(&y).any(|(p, q)| p == q),
            _ => false,
        };
        let direct = match self.config.test {
            SimilarityTest::Chunks => shared >= required,
            SimilarityTest::Minhash => shared_megashingle,
            SimilarityTest::Both => shared >= required || shared_megashingle,
        };
        let relation = if !same_cluster {
            Relation::Unrelated
        } else if a.content_key.is_some() && a.content_key == b.content_key {
            Relation::Exact
        } else if fa.text_signature == fb.text_signature {
            Relation::Equivalent
        } else if direct {
            Relation::Similar
        } else {
            Relation::Transitive
        };
        Some(Evidence {
            relation,
            resemblance: fa.resemblance(fb),
            shared_chunks: shared,
            chunks: (chunks_a.len() as u32, chunks_b.len() as u32),
            required_chunks: required,
            shared_megashingle,
        })
    }
}

#[cfg(test)]
mod tests;
