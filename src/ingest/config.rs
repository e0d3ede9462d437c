//! The ingest stage's settings.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct IngestConfig {
    /// Largest WARC record block and largest decoded body, in bytes. Default
    /// 10 MiB: the largest page of the demo crawl is under 2 MB (SOURCES.md
    /// drops bigger files) and Common Crawl truncates bodies at 1 MiB; 10 MiB
    /// keeps every real document page while bounding the memory one record can
    /// take (a few records per core are in flight at once).
    pub max_body_bytes: u64,
    /// Records read from one file before they are processed in parallel;
    /// 256 keeps both cores busy on pages of a few KB.
    pub batch_records: usize,
    /// Bytes of record blocks read from one file before they are processed:
    /// a batch ends at `batch_records` or once it holds this much, whichever
    /// comes first (a record bigger than the budget is a batch of its own).
    /// Default 8 MiB: 256 pages of the demo crawl's average size fit several
    /// times over, and a file of 10 MB pages holds one at a time.
    pub batch_bytes: u64,
    /// Bytes of record blocks held by all the files read at once. Files are
    /// read in parallel, one per thread; each one's batch budget is the
    /// smaller of `batch_bytes` and this divided by the number of files in
    /// flight. Default 32 MiB.
    pub total_batch_bytes: u64,
}

impl Default for IngestConfig {
    fn default() -> Self {
        IngestConfig {
            max_body_bytes: 10 * 1024 * 1024,
            batch_records: 256,
            batch_bytes: 8 * 1024 * 1024,
            total_batch_bytes: 32 * 1024 * 1024,
        }
    }
}

/// Largest accepted `max_body_bytes`: one record in memory per thread must fit.
const MAX_BODY_CAP: u64 = 1 << 30;

impl IngestConfig {
    /// Why these values cannot be used, if they cannot.
    pub fn problem(&self) -> Option<String> {
        if self.batch_records == 0 {
            return Some("ingest.batch_records must be at least 1".into());
        }
        if self.batch_bytes == 0 || self.total_batch_bytes == 0 {
            return Some("ingest.batch_bytes and total_batch_bytes must be at least 1".into());
        }
        if self.max_body_bytes == 0 || self.max_body_bytes > MAX_BODY_CAP {
            return Some(format!(
                "ingest.max_body_bytes must be from 1 to {MAX_BODY_CAP}"
            ));
        }
        None
    }
}

impl IngestConfig {
    /// The byte budget of one file's batch when `files_in_flight` files are
    /// read at once (at least one byte: a batch always takes one record).
    pub fn batch_budget(&self, files_in_flight: usize) -> u64 {
        let share = self.total_batch_bytes / files_in_flight.max(1) as u64;
        self.batch_bytes.min(share).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_budget_is_shared_by_the_files_read_at_once() {
        let config = IngestConfig::default();
        assert_eq!(config.batch_budget(1), 8 * 1024 * 1024);
        assert_eq!(config.batch_budget(4), 8 * 1024 * 1024);
        assert_eq!(config.batch_budget(8), 4 * 1024 * 1024);
        assert_eq!(config.batch_budget(0), 8 * 1024 * 1024);
        let tiny = IngestConfig {
            total_batch_bytes: 3,
            ..IngestConfig::default()
        };
        assert_eq!(tiny.batch_budget(64), 1);
    }
}
