//! The counts an ingest reports (`mirrorscope index` prints them; they are
//! kept in `crawls/<id>/report.json`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Counts of one file, merged into the crawl's report (kept in an ingest
/// part, `parts.rs`, until then).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub(super) struct Counts {
    /// Hashes of the file's `WARC-Record-ID`s.
    pub record_ids: Vec<u64>,
    /// Records read, good and bad, and the file's bytes read (the crawl's
    /// running totals are the reading threads' counters: these are for an
    /// ingest part's files).
    pub records: u64,
    pub bytes_read: u64,
    pub skipped: BTreeMap<Cow<'static, str>, u64>,
    pub ignored: BTreeMap<Cow<'static, str>, u64>,
    pub repaired: BTreeMap<Cow<'static, str>, u64>,
    pub failed_files: Vec<String>,
    pub pages_with_body: u64,
    pub new_blocks: u64,
    pub body_bytes: u64,
    pub duplicate_pages_eliminated: u64,
    pub bytes_saved: u64,
}

impl Counts {
    /// One stored body: newly written, or a reference to a block already there.
    pub fn count_body(&mut self, body_bytes: u64, stored_new: bool) {
        self.pages_with_body += 1;
        self.body_bytes += body_bytes;
        if stored_new {
            self.new_blocks += 1;
        } else {
            self.duplicate_pages_eliminated += 1;
            self.bytes_saved += body_bytes;
        }
    }

    /// Forgets the bodies counted: they are counted again where they are
    /// stored for good (an ingest part's bodies, in the data folder's store).
    pub fn forget_bodies(&mut self) {
        self.pages_with_body = 0;
        self.body_bytes = 0;
        self.new_blocks = 0;
        self.duplicate_pages_eliminated = 0;
        self.bytes_saved = 0;
    }
}

/// What ingesting one crawl did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IngestReport {
    /// WARC files read.
    pub files: u64,
    /// WARC records read, good and bad.
    pub records: u64,
    /// Bytes of WARC files read.
    pub bytes_read: u64,
    /// HTML captures kept (responses and resolved revisits).
    pub captures: u64,
    /// Records not indexed by design, by kind (request, warcinfo, non-html...).
    pub ignored: BTreeMap<String, u64>,
    /// Bad records skipped with a warning, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Records kept after a repair, with a warning, by kind
    /// (`invalid-utf8`: bad bytes of a body declared UTF-8 decoded to
    /// U+FFFD).
    pub repaired: BTreeMap<String, u64>,
    /// Files that could not be read at all, with the reason.
    pub failed_files: Vec<String>,
    /// Captures with a stored body.
    pub pages_with_body: u64,
    /// Distinct bodies among this crawl's captures.
    pub distinct_bodies: u64,
    /// Blocks written to the store (bodies it did not hold before).
    pub new_blocks: u64,
    /// Captures whose body was already stored and only gained a reference.
    pub duplicate_pages_eliminated: u64,
    /// Decoded body bytes of all captures.
    pub body_bytes: u64,
    /// Body bytes not written again thanks to duplicate elimination.
    pub bytes_saved: u64,
    /// Revisit records resolved to an earlier capture's body.
    pub revisits_resolved: u64,
    /// Records whose `WARC-Record-ID` an earlier record of the crawl has
    /// (the id must be unique; a file read twice, or a writer that reuses
    /// ids). They are read as any other.
    pub duplicate_record_ids: u64,
    pub elapsed_seconds: f64,
}

impl IngestReport {
    pub(super) fn absorb(&mut self, counts: &Counts) {
        for (reason, count) in &counts.skipped {
            *self.skipped.entry(reason.to_string()).or_default() += count;
        }
        for (kind, count) in &counts.ignored {
            *self.ignored.entry(kind.to_string()).or_default() += count;
        }
        for (kind, count) in &counts.repaired {
            *self.repaired.entry(kind.to_string()).or_default() += count;
        }
        self.failed_files
            .extend(counts.failed_files.iter().cloned());
        self.pages_with_body += counts.pages_with_body;
        self.new_blocks += counts.new_blocks;
        self.body_bytes += counts.body_bytes;
        self.duplicate_pages_eliminated += counts.duplicate_pages_eliminated;
        self.bytes_saved += counts.bytes_saved;
    }

    /// Bad records skipped, all reasons together.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }
}

fn join_counts(counts: &BTreeMap<String, u64>) -> String {
    if counts.is_empty() {
        return "none".to_string();
    }
    counts
        .iter()
        .map(|(reason, count)| format!("{reason} {count}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for IngestReport {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let megabytes = self.bytes_read as f64 / 1e6;
        let seconds = self.elapsed_seconds.max(1e-9);
        writeln!(formatter, "files read                  {}", self.files)?;
        writeln!(
            formatter,
            "records read                {} ({megabytes:.1} MB)",
            self.records
        )?;
        writeln!(formatter, "pages (HTML captures)       {}", self.captures)?;
        writeln!(
            formatter,
            "records not indexed         {}",
            join_counts(&self.ignored)
        )?;
        writeln!(
            formatter,
            "bad records skipped         {} ({})",
            self.skipped_total(),
            join_counts(&self.skipped)
        )?;
        if self.duplicate_record_ids > 0 {
            writeln!(
                formatter,
                "records with a repeated id  {}",
                self.duplicate_record_ids
            )?;
        }
        if !self.repaired.is_empty() {
            writeln!(
                formatter,
                "records kept after repair   {} ({})",
                self.repaired.values().sum::<u64>(),
                join_counts(&self.repaired)
            )?;
        }
        writeln!(
            formatter,
            "distinct bodies             {}",
            self.distinct_bodies
        )?;
        writeln!(formatter, "new blocks stored           {}", self.new_blocks)?;
        writeln!(
            formatter,
            "duplicate pages eliminated  {}",
            self.duplicate_pages_eliminated
        )?;
        writeln!(
            formatter,
            "bytes saved                 {} of {} body bytes ({:.1}%)",
            self.bytes_saved,
            self.body_bytes,
            100.0 * self.bytes_saved as f64 / (self.body_bytes.max(1)) as f64
        )?;
        write!(
            formatter,
            "time                        {:.2} s ({:.0} records/s, {:.1} MB/s)",
            self.elapsed_seconds,
            self.records as f64 / seconds,
            megabytes / seconds
        )
    }
}
