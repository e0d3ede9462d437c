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
    /// Records read from one file before they are processed in parallel.
    /// Bounds memory to about `batch_records x max record size` per file in
    /// flight; 256 keeps both cores busy on pages of a few KB.
    pub batch_records: usize,
}

impl Default for IngestConfig {
    fn default() -> Self {
        IngestConfig {
            max_body_bytes: 10 * 1024 * 1024,
            batch_records: 256,
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
        if self.max_body_bytes == 0 || self.max_body_bytes > MAX_BODY_CAP {
            return Some(format!(
                "ingest.max_body_bytes must be from 1 to {MAX_BODY_CAP}"
            ));
        }
        None
    }
}
