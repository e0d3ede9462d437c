//! Ingesting a crawl: WARC files -> page store + the crawl's list of captures.
//!
//! Reads: WARC files (through `corpus`). Writes: each distinct body once into
//! the page store (gomes-et-al-2006 §4), and `crawls/<id>/` in the data
//! directory: `captures.bin` (one entry per HTML capture, with its content
//! key), `report.json` (the counts printed by `mirrorscope index`) and
//! `references` (one line per store reference this crawl holds, so the crawl
//! can later release exactly what it took).
//!
//! Parallel across files and across records: each file is read in order in
//! batches of at most `batch_records` records and `batch_bytes` of blocks
//! (less when many files are read at once: they share `total_batch_bytes`);
//! a batch is decoded, extracted, hashed and stored with rayon, and every
//! [`BATCHES_PER_FLUSH`] batches the store's writes are made durable and
//! the references they took journaled. Memory is
//! bounded by the batches in flight, the records being worked on (one per
//! thread) and the captures' metadata; bodies are never all held at once.
//!
//! Revisit records are resolved after every response is stored, through their
//! WARC-Payload-Digest, against this crawl's captures and those of crawls
//! already in the data directory.

mod config;
mod part_tables;
pub mod parts;
mod report;

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use url::Url;

pub use self::config::IngestConfig;
use crate::corpus::charset::EncodingName;
use crate::corpus::{self, charset, ReadLimits, RecordOutcome, WarcReader};
use crate::fingerprint::Fingerprint;
use crate::fingerprint::{FingerprintSpill, SpillError};
use crate::language;
use crate::pages::Links;
use crate::store::texts::TextSpill;
use crate::store::{ContentKey, PageStore};

pub use crate::pages::Capture;
pub use report::IngestReport;

/// Errors that stop an ingest (a bad record never does).
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error(transparent)]
    Warc(#[from] corpus::WarcError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {detail}")]
    Format { path: PathBuf, detail: String },
    /// A file an ingest part could not read at all, as the part said.
    #[error("{message}")]
    FileFailed { reason: String, message: String },
}

pub type Result<T> = std::result::Result<T, IngestError>;

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> IngestError + '_ {
    move |source| IngestError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A fingerprint that could not be set aside or read back (the spill's
/// errors are its file's).
fn spill_error(error: SpillError) -> IngestError {
    IngestError::Io {
        path: error.path,
        source: error.source,
    }
}

/// Running counts shared by the worker threads (atomics: no lock in the hot loop).
#[derive(Default)]
struct Counters {
    records: AtomicU64,
    bytes_read: AtomicU64,
    /// Nanoseconds of thread time in each part (see [`IngestWork`]).
    reading: AtomicU64,
    decoding: AtomicU64,
    extracting: AtomicU64,
    fingerprinting: AtomicU64,
    storing: AtomicU64,
    keeping_texts: AtomicU64,
    flushing: AtomicU64,
}

impl Counters {
    /// The time each kind of work took, in seconds.
    fn work(&self) -> IngestWork {
        let seconds = |counter: &AtomicU64| counter.load(Ordering::Relaxed) as f64 / 1e9;
        IngestWork {
            reading: seconds(&self.reading),
            decoding: seconds(&self.decoding),
            extracting: seconds(&self.extracting),
            fingerprinting: seconds(&self.fingerprinting),
            storing: seconds(&self.storing),
            keeping_texts: seconds(&self.keeping_texts),
            flushing: seconds(&self.flushing),
        }
    }
}

/// Adds the time since `started` to `counter`, in nanoseconds.
fn add_time(counter: &AtomicU64, started: Instant) {
    counter.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

/// Where the ingest stage's time went, in thread-seconds (summed over the
/// threads, so they may add up to more than the stage's wall-clock time):
/// the stage does all of this record by record, in one pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct IngestWork {
    /// Reading WARC records (gzip inflate, WARC and HTTP headers).
    pub reading: f64,
    /// Undoing content encodings and decoding the charset.
    pub decoding: f64,
    /// Extracting title, visible text and links from the HTML.
    pub extracting: f64,
    /// Fingerprints: words, lines, text signature, 84 min-hashes.
    pub fingerprinting: f64,
    /// Storing bodies (signature, compression, staging).
    pub storing: f64,
    /// Keeping each distinct body's text for the index stage (compression,
    /// writing), [`TextSpill`].
    pub keeping_texts: f64,
    /// Flushing each batch's writes and journaling its references.
    pub flushing: f64,
}

/// What one record became after decoding and storing.
enum Processed {
    /// A page: whether its body was stored new, and the repair that let it
    /// be kept, if any.
    Capture(Box<Capture>, bool, Option<&'static str>),
    Revisit(Box<corpus::Revisit>),
    Ignored(&'static str),
    Bad(&'static str),
}

/// Writes store references to the crawl's journal as they are taken, so that
/// an interrupted ingest can give back exactly what it took.
struct ReferenceJournal {
    path: PathBuf,
    writer: Mutex<BufWriter<File>>,
}

impl ReferenceJournal {
    fn create(path: PathBuf) -> Result<ReferenceJournal> {
        let file = File::create(&path).map_err(io_error(&path))?;
        Ok(ReferenceJournal {
            path,
            writer: Mutex::new(BufWriter::new(file)),
        })
    }

    fn record(&self, keys: &[ContentKey]) -> Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut writer = self
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for key in keys {
            writeln!(writer, "{key}").map_err(io_error(&self.path))?;
        }
        writer.flush().map_err(io_error(&self.path))
    }

    fn finish(self) -> Result<()> {
        let writer = self
            .writer
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let file = writer.into_inner().map_err(|error| IngestError::Io {
            path: self.path.clone(),
            source: error.into_error(),
        })?;
        file.sync_all().map_err(io_error(&self.path))
    }
}

/// Reads the references listed in a crawl's journal.
pub fn read_references(path: &Path) -> Result<Vec<ContentKey>> {
    let text = std::fs::read_to_string(path).map_err(io_error(path))?;
    let mut keys = Vec::new();
    for (line_number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        // A torn last line (crash mid-write) is skipped: that reference was
        // taken but not recorded, and leaks rather than being released twice.
        match line.parse() {
            Ok(key) => keys.push(key),
            Err(error) => {
                tracing::warn!(path = %path.display(), line = line_number + 1, %error, "unreadable reference line skipped")
            }
        }
    }
    Ok(keys)
}

/// Options for one ingest.
pub struct IngestOptions<'a> {
    pub config: &'a IngestConfig,
    /// The captures files of crawls ingested before, read only if a revisit
    /// record refers to none of this crawl's captures.
    pub earlier_captures: &'a [PathBuf],
    /// Called with the number of bytes read so far (progress display).
    pub progress: &'a (dyn Fn(u64) + Sync),
    /// Where each capture's fingerprint is set aside as it is made (the
    /// capture keeps its place, [`Capture::spilled`]), so that a big crawl's
    /// are not held until its page table is built; `None` keeps them in
    /// the captures.
    pub spill: Option<&'a Mutex<FingerprintSpill>>,
    /// Where each distinct body's text is kept for the index stage of the
    /// same run; `None` keeps none.
    pub texts: Option<&'a TextSpill>,
}

/// The result of ingesting a crawl into `crawl_dir`.
pub struct Ingested {
    pub captures: Vec<Capture>,
    pub report: IngestReport,
    pub work: IngestWork,
}

/// Ingests `files` into `store`, journaling references in `crawl_dir/references`.
pub fn ingest_files(
    files: &[PathBuf],
    store: &PageStore,
    crawl_dir: &Path,
    options: &IngestOptions<'_>,
) -> Result<Ingested> {
    let started = Instant::now();
    let journal = ReferenceJournal::create(crawl_dir.join(REFERENCES_FILE))?;
    let counters = Counters::default();
    let per_file = read_files(files, store, &journal, options, &counters);
    let mut ingested = merge_files(files.len(), per_file, store, journal, options)?;
    ingested.report.records = counters.records.load(Ordering::Relaxed);
    ingested.report.bytes_read = counters.bytes_read.load(Ordering::Relaxed);
    ingested.report.elapsed_seconds = started.elapsed().as_secs_f64();
    ingested.work = counters.work();
    Ok(ingested)
}

/// Reads `files` at once (one a thread), storing their bodies in `store`.
fn read_files(
    files: &[PathBuf],
    store: &PageStore,
    journal: &ReferenceJournal,
    options: &IngestOptions<'_>,
    counters: &Counters,
) -> Vec<Result<FileResult>> {
    let limits = ReadLimits {
        max_body_bytes: options.config.max_body_bytes,
    };
    // One file per thread is read at once: they share the total budget.
    let in_flight = files.len().min(rayon::current_num_threads());
    let batch_budget = options.config.batch_budget(in_flight);
    files
        .par_iter()
        .map(|path| {
            ingest_one_file(
                path,
                store,
                journal,
                (limits, batch_budget),
                options,
                counters,
            )
        })
        .collect()
}

/// One crawl's captures and report from what was read of each of its
/// `file_count` files (in the crawl's order): the files' captures one after
/// another, revisits resolved against them (and the earlier crawls'),
/// their counts added up. Records and bytes read, and the time taken, are
/// the caller's to set.
fn merge_files(
    file_count: usize,
    per_file: Vec<Result<FileResult>>,
    store: &PageStore,
    journal: ReferenceJournal,
    options: &IngestOptions<'_>,
) -> Result<Ingested> {
    let mut report = IngestReport {
        files: file_count as u64,
        ..IngestReport::default()
    };
    // Sized once: growing by doubling held up to twice the captures.
    let (capture_count, revisit_count) =
        per_file
            .iter()
            .flatten()
            .fold((0, 0), |(captures, revisits), file| {
                (
                    captures + file.captures.len(),
                    revisits + file.revisits.len(),
                )
            });
    let mut captures = Vec::with_capacity(capture_count + revisit_count);
    let mut revisits = Vec::with_capacity(revisit_count);
    let mut record_ids: Vec<u64> = Vec::new();
    for result in per_file {
        let (reason, message) = match result {
            Ok(file_result) => {
                report.absorb(&file_result.counts);
                record_ids.extend(file_result.counts.record_ids);
                captures.extend(file_result.captures);
                revisits.extend(file_result.revisits);
                continue;
            }
            Err(IngestError::Warc(error)) => (error.reason().to_string(), error.to_string()),
            Err(IngestError::FileFailed { reason, message }) => (reason, message),
            Err(error) => return Err(error),
        };
        // A missing or unreadable file is reported and counted; the others go on.
        tracing::error!("{message}");
        *report.skipped.entry(reason).or_default() += 1;
        report.failed_files.push(message);
    }
    report.duplicate_record_ids = repeated(record_ids);
    if report.duplicate_record_ids > 0 {
        tracing::warn!(
            "{} records have a WARC-Record-ID an earlier record of this crawl has (a file read twice, or a writer reusing ids); each is read as any other",
            report.duplicate_record_ids
        );
    }

    resolve_revisits(
        revisits,
        &mut captures,
        store,
        &journal,
        options,
        &mut report,
    )?;
    journal.finish()?;

    report.captures = captures.len() as u64;
    let mut keys: Vec<ContentKey> = captures
        .iter()
        .filter_map(|capture| capture.content_key)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    report.distinct_bodies = keys.len() as u64;
    Ok(Ingested {
        captures,
        report,
        work: IngestWork::default(),
    })
}

/// How many of `ids` repeat one before them.
fn repeated(mut ids: Vec<u64>) -> u64 {
    ids.sort_unstable();
    ids.windows(2).filter(|pair| pair[0] == pair[1]).count() as u64
}

/// Name of the journal of store references inside a crawl directory.
pub const REFERENCES_FILE: &str = "references";

#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
struct FileResult {
    captures: Vec<Capture>,
    revisits: Vec<corpus::Revisit>,
    counts: report::Counts,
}

fn ingest_one_file(
    path: &Path,
    store: &PageStore,
    journal: &ReferenceJournal,
    (limits, batch_budget): (ReadLimits, u64),
    options: &IngestOptions<'_>,
    counters: &Counters,
) -> Result<FileResult> {
    let mut reader = WarcReader::open(path, limits.max_body_bytes)?;
    let file_name: Arc<str> = Arc::from(path.display().to_string());
    let mut result = FileResult::default();
    let mut last_position = 0u64;
    // References stored but not flushed and journaled yet, and the batches
    // they come from.
    let mut unjournaled = Vec::new();
    let mut unflushed_batches = 0;
    loop {
        let reading = Instant::now();
        let mut batch = Vec::with_capacity(options.config.batch_records.min(1024));
        let (mut batch_bytes, mut items) = (0u64, 0usize);
        // A batch ends at `batch_records` items (records or bad ones) or
        // once its blocks reach the byte budget.
        while items < options.config.batch_records && batch_bytes < batch_budget {
            let Some(item) = reader.next() else {
                break;
            };
            items += 1;
            counters.records.fetch_add(1, Ordering::Relaxed);
            match item {
                Ok(record) => {
                    batch_bytes += record.block.len() as u64;
                    if let Some(id) = record.header("WARC-Record-ID") {
                        result
                            .counts
                            .record_ids
                            .push(xxhash_rust::xxh3::xxh3_64(id.trim().as_bytes()));
                    }
                    batch.push(record);
                }
                Err(error) => {
                    // Stray bytes are no record: the message says what
                    // was passed over.
                    let what = match &error {
                        corpus::WarcError::NotWarc { .. } => ", file skipped",
                        corpus::WarcError::Record {
                            kind: corpus::RecordProblem::NoVersionLine(_),
                            ..
                        } => "",
                        _ => ", record skipped",
                    };
                    tracing::warn!("{error}{what}");
                    *result
                        .counts
                        .skipped
                        .entry(error.reason().into())
                        .or_default() += 1;
                    if matches!(error, corpus::WarcError::NotWarc { .. }) {
                        result.counts.failed_files.push(error.to_string());
                    }
                }
            }
        }
        add_time(&counters.reading, reading);
        result.counts.records += items as u64;
        if batch.is_empty() && reader.is_finished() {
            break;
        }
        let position = reader.position();
        counters
            .bytes_read
            .fetch_add(position - last_position, Ordering::Relaxed);
        result.counts.bytes_read += position - last_position;
        last_position = position;
        (options.progress)(counters.bytes_read.load(Ordering::Relaxed));

        let processed: Vec<Result<Processed>> = batch
            .par_iter()
            .map(|record| {
                process_record(record, &file_name, limits, (store, options.texts), counters)
            })
            .collect();
        let mut first_error = None;
        for item in processed {
            let processed = match item {
                Ok(processed) => processed,
                Err(error) => {
                    // Keep going through the batch: what the other records
                    // stored must still be journaled before giving up.
                    first_error.get_or_insert(error);
                    continue;
                }
            };
            match processed {
                Processed::Capture(mut capture, stored_new, repaired) => {
                    if let (Some(spill), Some(print)) = (options.spill, &capture.fingerprint) {
                        let put = spill
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .put(print);
                        // A capture whose fingerprint could not be set aside
                        // keeps it: what it stored is journaled with the
                        // others' before the ingest gives up.
                        match put {
                            Ok(place) => {
                                capture.spilled = Some(place);
                                capture.fingerprint = None;
                            }
                            Err(error) => {
                                first_error.get_or_insert(spill_error(error));
                            }
                        }
                    }
                    if let Some(key) = capture.content_key {
                        unjournaled.push(key);
                        result.counts.count_body(capture.body_bytes, stored_new);
                    }
                    if let Some(repair) = repaired {
                        *result.counts.repaired.entry(repair.into()).or_default() += 1;
                    }
                    result.captures.push(*capture);
                }
                Processed::Revisit(revisit) => result.revisits.push(*revisit),
                Processed::Ignored(reason) => {
                    *result.counts.ignored.entry(reason.into()).or_default() += 1
                }
                Processed::Bad(reason) => {
                    *result.counts.skipped.entry(reason.into()).or_default() += 1
                }
            }
        }
        unflushed_batches += 1;
        if unflushed_batches >= BATCHES_PER_FLUSH || first_error.is_some() {
            flush_and_journal(store, journal, &mut unjournaled, counters)?;
            unflushed_batches = 0;
        }
        if let Some(error) = first_error {
            return Err(error);
        }
    }
    flush_and_journal(store, journal, &mut unjournaled, counters)?;
    Ok(result)
}

/// Batches of a file stored between two flushes of the store. A flush
/// commits the store's index, which copies a leaf page for each new key
/// (content signatures, spread over the whole B-tree) and the branch pages
/// above them: four batches a commit halve what ingest writes (1.5 to 0.73
/// GB on the 100,098-page generated web; ingest 17.3-17.7 to 15.2-16.0 s), while
/// holding at most four batches' new bodies, compressed, until the flush.
const BATCHES_PER_FLUSH: usize = 4;

/// Makes the store's staged writes durable, then journals `references`
/// (emptied): a journaled reference is always one the store really holds.
fn flush_and_journal(
    store: &PageStore,
    journal: &ReferenceJournal,
    references: &mut Vec<ContentKey>,
    counters: &Counters,
) -> Result<()> {
    let flushing = Instant::now();
    store.flush()?;
    journal.record(references)?;
    references.clear();
    add_time(&counters.flushing, flushing);
    Ok(())
}

/// Decodes, extracts and stores one record.
fn process_record(
    record: &corpus::WarcRecord,
    file_name: &Arc<str>,
    limits: ReadLimits,
    (store, kept_texts): (&PageStore, Option<&TextSpill>),
    counters: &Counters,
) -> Result<Processed> {
    let decoding = Instant::now();
    let outcome = corpus::interpret_record(record, file_name, limits);
    add_time(&counters.decoding, decoding);
    let page = match outcome {
        RecordOutcome::Page(page) => page,
        RecordOutcome::Revisit(revisit) => return Ok(Processed::Revisit(Box::new(revisit))),
        RecordOutcome::Ignored(reason) => return Ok(Processed::Ignored(reason)),
        RecordOutcome::Bad { reason, detail } => {
            tracing::warn!(
                "{file_name} at offset {}: {detail}, record skipped",
                record.offset
            );
            return Ok(Processed::Bad(reason));
        }
    };
    let mut capture = Capture {
        body_bytes: page.body.len() as u64,
        info: page.info,
        content_key: None,
        encoding: EncodingName::NONE,
        title: String::new(),
        links: page.redirect_to.into_iter().collect(),
        revisit_of: None,
        fingerprint: None,
        language: Default::default(),
        canonical: None,
        versions: Box::default(),
        text_hosts: crate::pages::ThinList::new(),
        spilled: None,
    };
    if page.body.is_empty() {
        return Ok(Processed::Capture(Box::new(capture), false, None));
    }
    let decoding = Instant::now();
    let decoded = charset::decode_body(&page.body, page.headers.content_type.as_deref());
    add_time(&counters.decoding, decoding);
    let mut repaired = decoded.malformed.as_ref().map(|problem| {
        tracing::warn!(
            "{file_name} at offset {}: {} {problem}; kept, bad bytes shown as U+FFFD as a browser does",
            record.offset,
            capture.info.url
        );
        "invalid-utf8"
    });
    if page.broken_chunking {
        tracing::warn!(
            "{file_name} at offset {}: {} says its body is chunked, but its chunk sizes do not add up; kept as sent, chunk sizes and all",
            record.offset,
            capture.info.url
        );
        repaired = Some("bad-chunking");
    }
    let texts = apply_extraction(
        &mut capture,
        &decoded.text,
        page.headers.content_language.as_deref(),
        Some(counters),
    );
    capture.encoding = decoded.encoding;
    let storing = Instant::now();
    let outcome = store.put(&page.body)?;
    add_time(&counters.storing, storing);
    capture.content_key = Some(outcome.key);
    if let (Some(spill), Some((text, headings))) = (kept_texts, texts) {
        let keeping = Instant::now();
        spill.put((outcome.key, decoded.encoding), &text, &headings);
        add_time(&counters.keeping_texts, keeping);
    }
    Ok(Processed::Capture(
        Box::new(capture),
        outcome.stored_new,
        repaired,
    ))
}

/// Extracts and fingerprints a capture's text; `counters` (None for the
/// few revisits) take the time of each. Returns the text and headings
/// extracted, for the index stage to be given ([`TextSpill`]).
fn apply_extraction(
    capture: &mut Capture,
    text: &str,
    content_language: Option<&str>,
    counters: Option<&Counters>,
) -> Option<(String, String)> {
    let started = Instant::now();
    let Ok(page_url) = Url::parse(&capture.info.url) else {
        return None;
    };
    let extracted = corpus::extract_html(text, &page_url);
    let fingerprinting = Instant::now();
    capture.fingerprint = Some(Box::new(Fingerprint::of_page_at(
        crate::pages::url_path(&capture.info.url),
        &extracted.title,
        &extracted.text,
    )));
    if let Some(counters) = counters {
        let extracting = fingerprinting.duration_since(started).as_nanos() as u64;
        counters.extracting.fetch_add(extracting, Ordering::Relaxed);
        add_time(&counters.fingerprinting, fingerprinting);
    }
    // The text's language is detected on a sample of the pages and every
    // folder's index page; the similarity stage gives the others their
    // folder's (language::DETECTION_SAMPLE).
    let url = capture.info.url.as_str();
    let index_page = crate::pages::url_path(url)
        .and_then(|path| path.rsplit('/').next())
        .is_some_and(|last| last.is_empty() || crate::pages::is_index_name(last));
    let detected =
        (index_page || language::in_detection_sample(url)).then_some(extracted.text.as_str());
    capture.language = language::decide(
        extracted
            .declared_languages
            .iter()
            .map(String::as_str)
            .chain(content_language),
        detected,
    );
    capture.canonical = extracted.canonical.map(|url| Box::from(url.as_str()));
    capture.text_hosts = crate::corpus::host_names(&extracted.text)
        .into_iter()
        .map(String::into_boxed_str)
        .collect();
    capture.versions = extracted
        .versions
        .into_iter()
        .map(String::into_boxed_str)
        .collect();
    capture.title = extracted.title;
    capture.links.extend(&extracted.links);
    Some((extracted.text, extracted.headings))
}

/// Resolves revisit records to the body they refer to, by payload digest.
fn resolve_revisits(
    revisits: Vec<corpus::Revisit>,
    captures: &mut Vec<Capture>,
    store: &PageStore,
    journal: &ReferenceJournal,
    options: &IngestOptions<'_>,
    report: &mut IngestReport,
) -> Result<()> {
    if revisits.is_empty() {
        return Ok(());
    }
    let mut by_digest = DigestIndex::new();
    for capture in captures.iter() {
        if let (Some(digest), Some(key)) = (&capture.info.payload_digest, capture.content_key) {
            by_digest
                .entry(digest.clone())
                .or_insert_with(|| (key, capture.info.url.clone()));
        }
    }
    let mut resolved = Vec::new();
    let outcome = resolve_each(
        revisits,
        &by_digest,
        captures,
        store,
        options,
        report,
        &mut resolved,
    );
    // Journal what was taken even when a later revisit failed.
    store.flush()?;
    journal.record(&resolved)?;
    outcome
}

type DigestIndex = HashMap<String, (ContentKey, String)>;

/// Payload digest -> (stored body, URL) over the captures of earlier crawls.
fn earlier_digests(paths: &[PathBuf]) -> Result<DigestIndex> {
    let mut digests = DigestIndex::new();
    for path in paths {
        for capture in CaptureReader::open(path)? {
            let capture = capture?;
            if let (Some(digest), Some(key)) = (capture.info.payload_digest, capture.content_key) {
                digests.entry(digest).or_insert((key, capture.info.url));
            }
        }
    }
    Ok(digests)
}

fn resolve_each(
    revisits: Vec<corpus::Revisit>,
    by_digest: &DigestIndex,
    captures: &mut Vec<Capture>,
    store: &PageStore,
    options: &IngestOptions<'_>,
    report: &mut IngestReport,
    resolved: &mut Vec<ContentKey>,
) -> Result<()> {
    // Earlier crawls are read only when a revisit is not resolved within this one.
    let mut earlier: Option<DigestIndex> = None;
    for revisit in revisits {
        let digest = revisit.info.payload_digest.as_deref();
        let mut target = digest.and_then(|digest| by_digest.get(digest).cloned());
        if target.is_none() && !options.earlier_captures.is_empty() {
            if earlier.is_none() {
                earlier = Some(earlier_digests(options.earlier_captures)?);
            }
            target = digest.and_then(|digest| earlier.as_ref()?.get(digest).cloned());
        }
        let Some((key, original_url)) = target else {
            tracing::warn!(
                "{} at offset {}: revisit of {} has no earlier capture with digest {}, record skipped",
                revisit.info.location.file,
                revisit.info.location.offset,
                revisit.info.url,
                revisit.info.payload_digest.as_deref().unwrap_or("(none)")
            );
            *report
                .skipped
                .entry("unresolved-revisit".into())
                .or_default() += 1;
            continue;
        };
        let body = store.get(&key)?;
        let mut capture = Capture {
            body_bytes: body.len() as u64,
            info: revisit.info,
            content_key: None,
            encoding: EncodingName::NONE,
            title: String::new(),
            links: Links::new(),
            revisit_of: Some(revisit.refers_to_uri.unwrap_or(original_url)),
            fingerprint: None,
            language: Default::default(),
            canonical: None,
            versions: Box::default(),
            text_hosts: crate::pages::ThinList::new(),
            spilled: None,
        };
        let decoded = charset::decode_body(&body, revisit.headers.content_type.as_deref());
        if let Some(problem) = &decoded.malformed {
            tracing::warn!(
                "{} at offset {}: revisit of {}: {problem}; kept, bad bytes shown as U+FFFD as a browser does",
                capture.info.location.file,
                capture.info.location.offset,
                capture.info.url
            );
            *report.repaired.entry("invalid-utf8".into()).or_default() += 1;
        }
        // Links resolve against the revisit's own URL, which may differ.
        let texts = apply_extraction(
            &mut capture,
            &decoded.text,
            revisit.headers.content_language.as_deref(),
            None,
        );
        capture.encoding = decoded.encoding;
        if let (Some(spill), Some((text, headings))) = (options.texts, texts) {
            spill.put((key, decoded.encoding), &text, &headings);
        }
        store.add_reference(&key)?;
        capture.content_key = Some(key);
        resolved.push(key);
        report.revisits_resolved += 1;
        // A resolved revisit is a page with a body, stored once already.
        report.pages_with_body += 1;
        report.body_bytes += capture.body_bytes;
        report.duplicate_pages_eliminated += 1;
        report.bytes_saved += capture.body_bytes;
        captures.push(capture);
    }
    Ok(())
}

/// The first line of a captures file; a file without it was written by an
/// older build (its crawl is ingested again).
/// Version 3: bodies declared UTF-8 with bad bytes are kept (U+FFFD), URLs
/// keep raw bytes percent-encoded and lose their user name; a crawl read
/// by an older build is read again so that its pages follow these rules.
/// Version 4: each page's language, canonical URL and version strings.
/// Version 5: each fingerprint's echo signature.
/// Version 6: no HTTP `Content-Type` and `Content-Language` (read at ingest only).
/// Version 7: the host names each page's text names.
const CAPTURES_HEADER: &[u8] = b"mirrorscope captures 7\n";

/// True when the captures file at `path` is in the format this build
/// writes, false when it is readable but not (an older build's).
pub fn captures_current(path: &Path) -> std::io::Result<bool> {
    read_header(&mut File::open(path)?)
}

/// Reads the first line of a captures file: true when it is this build's.
fn read_header(file: &mut File) -> std::io::Result<bool> {
    let mut start = [0u8; CAPTURES_HEADER.len()];
    match std::io::Read::read_exact(file, &mut start) {
        Ok(()) => Ok(start == CAPTURES_HEADER),
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => Ok(false),
        Err(error) => Err(error),
    }
}

/// Reads a crawl's captures written by [`write_captures`].
pub fn read_captures(path: &Path) -> Result<Vec<Capture>> {
    let mut reader = CaptureReader::open(path)?;
    let mut captures = Vec::with_capacity(reader.capacity_hint());
    for capture in &mut reader {
        captures.push(capture?);
    }
    Ok(captures)
}

/// A captures file read one capture at a time: what it decompresses is
/// held a window at a time, never the whole crawl's bytes beside the
/// captures made of them.
pub struct CaptureReader {
    path: PathBuf,
    decoder: zstd::Decoder<'static, std::io::BufReader<File>>,
    /// Decompressed bytes not yet read, from `start`.
    window: Vec<u8>,
    start: usize,
    /// Whether the decoder has given all it holds.
    drained: bool,
    /// Captures the file says it holds, and how many are still to read.
    count: usize,
    left: usize,
    /// The compressed file's length, to bound what a damaged count reserves.
    file_bytes: u64,
}

/// Decompressed bytes a [`CaptureReader`] asks for at a time (a capture
/// takes about a kilobyte).
const CAPTURE_WINDOW: usize = 1 << 20;

impl CaptureReader {
    /// Opens a captures file of this build's version.
    pub fn open(path: &Path) -> Result<Self> {
        let mut file = File::open(path).map_err(io_error(path))?;
        let file_bytes = file.metadata().map_err(io_error(path))?.len();
        if !read_header(&mut file).map_err(io_error(path))? {
            return Err(IngestError::Format {
                path: path.to_path_buf(),
                detail: "not a captures file of this version".into(),
            });
        }
        let decoder = zstd::Decoder::new(file).map_err(io_error(path))?;
        let mut reader = CaptureReader {
            path: path.to_path_buf(),
            decoder,
            window: Vec::new(),
            start: 0,
            drained: false,
            count: 0,
            left: 0,
            file_bytes,
        };
        reader.count = reader.next_value::<usize>()?;
        reader.left = reader.count;
        Ok(reader)
    }

    /// How many captures to make room for: the count the file gives, but
    /// no more than its compressed bytes could hold (a damaged count must
    /// not reserve memory the file cannot fill).
    pub fn capacity_hint(&self) -> usize {
        self.count
            .min(usize::try_from(self.file_bytes / 16).unwrap_or(usize::MAX))
    }

    /// The next value of the stream, reading more of the file until the
    /// window holds it whole.
    fn next_value<T: serde::de::DeserializeOwned>(&mut self) -> Result<T> {
        loop {
            match postcard::take_from_bytes::<T>(&self.window[self.start..]) {
                Ok((value, rest)) => {
                    self.start = self.window.len() - rest.len();
                    return Ok(value);
                }
                Err(postcard::Error::DeserializeUnexpectedEnd) if !self.drained => self.fill()?,
                Err(error) => {
                    return Err(IngestError::Format {
                        path: self.path.clone(),
                        detail: error.to_string(),
                    })
                }
            }
        }
    }

    /// Drops what was read from the window and decompresses as much again
    /// as it holds (at least [`CAPTURE_WINDOW`]), so that a value longer
    /// than the window is read whole after a few rounds.
    fn fill(&mut self) -> Result<()> {
        self.window.drain(..self.start);
        self.start = 0;
        let had = self.window.len();
        let want = had.max(CAPTURE_WINDOW);
        let mut limited = std::io::Read::take(&mut self.decoder, want as u64);
        let read = std::io::Read::read_to_end(&mut limited, &mut self.window)
            .map_err(io_error(&self.path))?;
        if read < want {
            self.drained = true;
        }
        Ok(())
    }
}

impl Iterator for CaptureReader {
    type Item = Result<Capture>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let capture = self.next_value::<Capture>();
        if capture.is_err() {
            // A damaged file ends the reading.
            self.left = 0;
        }
        Some(capture)
    }
}

/// Writes captures (postcard, zstd-compressed) and syncs the file. The
/// bytes are those of the whole list serialized at once, made a capture at
/// a time: the crawl's serialized captures (a gigabyte a million pages) are
/// never held beside them.
pub fn write_captures(path: &Path, captures: &[Capture]) -> Result<()> {
    write_each(path, captures.len(), |write| {
        captures.iter().try_for_each(write)
    })
}

/// [`write_captures`] of captures whose fingerprints ingest set aside in
/// `spill` ([`Capture::spilled`]): each is read back for its capture to be
/// written whole, and let go again.
pub fn write_captures_spilled(
    path: &Path,
    captures: &mut [Capture],
    spill: &Mutex<FingerprintSpill>,
) -> Result<()> {
    let mut spill = spill
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    write_each(path, captures.len(), |write| {
        for capture in captures.iter_mut() {
            let Some(place) = capture.spilled else {
                write(capture)?;
                continue;
            };
            capture.fingerprint = Some(Box::new(spill.get(place).map_err(spill_error)?));
            let written = write(capture);
            capture.fingerprint = None;
            written?;
        }
        Ok(())
    })
}

/// Lets zstd compress what `encoder` is given on a worker thread of its
/// own while the caller goes on encoding, for a file written while nothing
/// else runs: its compression was as much of its writing as the encoding
/// (the crawl's captures of a million pages took 8 s, on one core of two).
/// A job is 1 MiB of input, so the worker's buffers hold a few MiB,
/// whatever the file. A zstd without threads (a system library built
/// without them) compresses on the calling thread, as before.
fn compress_beside<W: std::io::Write>(encoder: &mut zstd::Encoder<'_, W>) {
    let beside = encoder
        .multithread(1)
        .and_then(|()| encoder.set_parameter(zstd::stream::raw::CParameter::JobSize(1 << 20)));
    if let Err(error) = beside {
        tracing::debug!("captures compressed on the writing thread: {error}");
    }
}

/// Writes a captures file of `count` captures, which `captures` gives,
/// one at a time, to the writer it is handed.
fn write_each(
    path: &Path,
    count: usize,
    captures: impl FnOnce(&mut dyn FnMut(&Capture) -> Result<()>) -> Result<()>,
) -> Result<()> {
    let format = |error: postcard::Error| IngestError::Format {
        path: path.to_path_buf(),
        detail: error.to_string(),
    };
    let mut file = BufWriter::new(File::create(path).map_err(io_error(path))?);
    file.write_all(CAPTURES_HEADER).map_err(io_error(path))?;
    let mut encoder = zstd::Encoder::new(file, 3).map_err(io_error(path))?;
    compress_beside(&mut encoder);
    // A list is its length, then its items.
    let mut bytes = postcard::to_extend(&count, Vec::new()).map_err(format)?;
    encoder.write_all(&bytes).map_err(io_error(path))?;
    bytes.clear();
    let mut written = 0;
    captures(&mut |capture| {
        bytes = postcard::to_extend(capture, std::mem::take(&mut bytes)).map_err(format)?;
        encoder.write_all(&bytes).map_err(io_error(path))?;
        bytes.clear();
        written += 1;
        Ok(())
    })?;
    assert_eq!(written, count, "as many captures written as counted");
    let file = encoder.finish().map_err(io_error(path))?;
    let file = file
        .into_inner()
        .map_err(|error| io_error(path)(error.into_error()))?;
    file.sync_all().map_err(io_error(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::capture;

    fn captures(count: usize) -> Vec<Capture> {
        (0..count)
            .map(|index| {
                let mut capture = capture(
                    &format!("http://h{}.example/p{index}.html", index % 7),
                    &format!("page {index}\nshared line\n"),
                );
                capture.links = (0..index % 5)
                    .map(|link| format!("http://h.example/{link}"))
                    .collect();
                capture
            })
            .collect()
    }

    fn decompressed(path: &Path) -> Vec<u8> {
        let bytes = std::fs::read(path).unwrap();
        zstd::decode_all(bytes.strip_prefix(CAPTURES_HEADER).unwrap()).unwrap()
    }

    #[test]
    fn captures_written_a_capture_at_a_time_are_the_list_serialized_whole() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("captures.bin");
        // About 3 MB: values cut by the read window's edges.
        let written = captures(10_000);
        write_captures(&path, &written).unwrap();
        assert!(decompressed(&path).len() > 2 * CAPTURE_WINDOW);
        // The bytes of the format before streaming: files written by an
        // earlier build read the same.
        assert_eq!(
            decompressed(&path),
            postcard::to_allocvec(&written).unwrap()
        );
        assert_eq!(read_captures(&path).unwrap(), written);
        write_captures(&path, &[]).unwrap();
        assert!(read_captures(&path).unwrap().is_empty());
    }

    #[test]
    fn captures_whose_fingerprints_were_set_aside_are_written_whole() {
        let folder = tempfile::tempdir().unwrap();
        let whole = captures(300);
        // As ingest leaves them: every other capture's fingerprint set
        // aside, the others' held (a resolved revisit's).
        let spill = Mutex::new(FingerprintSpill::create(&folder.path().join("spill")).unwrap());
        let mut set_aside = whole.clone();
        for capture in set_aside.iter_mut().step_by(2) {
            let print = capture.fingerprint.take().unwrap();
            capture.spilled = Some(spill.lock().unwrap().put(&print).unwrap());
        }
        let (held, spilled) = (
            folder.path().join("held.bin"),
            folder.path().join("spilled.bin"),
        );
        write_captures(&held, &whole).unwrap();
        write_captures_spilled(&spilled, &mut set_aside, &spill).unwrap();
        assert_eq!(
            std::fs::read(&spilled).unwrap(),
            std::fs::read(&held).unwrap()
        );
        // Written, they are let go again: the spill still has them.
        for (capture, original) in set_aside.iter().zip(&whole).step_by(2) {
            assert_eq!(capture.fingerprint, None);
            let place = capture.spilled.unwrap();
            let read = spill.lock().unwrap().get(place).unwrap();
            assert_eq!(Some(read), original.fingerprint.as_deref().cloned());
        }
        assert!(set_aside[1].fingerprint.is_some());
    }

    #[test]
    fn a_capture_longer_than_the_read_window_is_read_whole() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("captures.bin");
        let mut written = captures(3);
        written[1].links = (0..5_000)
            .map(|link| format!("http://h.example/{link}/{}", "x".repeat(500)))
            .collect();
        write_captures(&path, &written).unwrap();
        assert!(decompressed(&path).len() > 2 * CAPTURE_WINDOW);
        assert_eq!(read_captures(&path).unwrap(), written);
    }

    #[test]
    fn a_damaged_captures_file_is_an_error_naming_it() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("captures.bin");
        // Cut short: the count promises captures the bytes do not hold.
        let mut bytes = postcard::to_allocvec(&captures(50)).unwrap();
        bytes.truncate(bytes.len() / 2);
        let mut file = CAPTURES_HEADER.to_vec();
        file.extend(zstd::encode_all(bytes.as_slice(), 3).unwrap());
        std::fs::write(&path, &file).unwrap();
        let error = read_captures(&path).unwrap_err().to_string();
        assert!(error.contains("captures.bin"), "{error}");

        // A count of 2^62 reserves no more than the file could hold.
        let mut bytes = postcard::to_allocvec(&(1usize << 62)).unwrap();
        bytes.extend(postcard::to_allocvec(&captures(1)[0]).unwrap());
        let mut file = CAPTURES_HEADER.to_vec();
        file.extend(zstd::encode_all(bytes.as_slice(), 3).unwrap());
        std::fs::write(&path, &file).unwrap();
        let reader = CaptureReader::open(&path).unwrap();
        assert!(reader.capacity_hint() <= file.len() / 16);
        assert!(read_captures(&path).is_err());

        // An earlier version's file is refused, not misread.
        std::fs::write(&path, b"mirrorscope captures 6\n").unwrap();
        assert!(!captures_current(&path).unwrap());
        let error = read_captures(&path).unwrap_err().to_string();
        assert!(
            error.contains("not a captures file of this version"),
            "{error}"
        );
    }
}
