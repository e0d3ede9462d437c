//! One typed configuration with every threshold, its default and the reason
//! for it. Read from `<data>/config.json` when present (any field may be left
//! out and keeps its default); `mirrorscope` writes the defaults there on the
//! first `index` so they can be seen and edited.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::collections::CollectionsConfig;
use crate::index::IndexConfig;
use crate::mirrors::MirrorsConfig;
use crate::search::SearchConfig;
use crate::similarity::SimilarityConfig;
use crate::store::StoreConfig;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub ingest: IngestConfig,
    pub store: StoreConfig,
    pub similarity: SimilarityConfig,
    pub collections: CollectionsConfig,
    pub mirrors: MirrorsConfig,
    pub index: IndexConfig,
    pub search: SearchConfig,
}

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

/// A configuration file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
    #[error("{path}: {detail}")]
    Invalid { path: String, detail: String },
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

impl Config {
    /// Reads `path` if it exists; the defaults otherwise.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Config::default())
            }
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.display().to_string(),
                    source,
                })
            }
        };
        let config: Config = serde_json::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.display().to_string(),
            source,
        })?;
        if let Some(detail) = config
            .ingest
            .problem()
            .or_else(|| config.similarity.problem())
            .or_else(|| config.mirrors.problem())
            .or_else(|| config.index.problem())
            .or_else(|| config.search.problem())
        {
            return Err(ConfigError::Invalid {
                path: path.display().to_string(),
                detail,
            });
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_fields_keep_defaults_and_unknown_fields_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, r#"{"ingest": {"max_body_bytes": 1000}}"#).unwrap();
        let config = Config::load(&path).unwrap();
        assert_eq!(config.ingest.max_body_bytes, 1000);
        assert_eq!(config.ingest.batch_records, 256);
        std::fs::write(&path, r#"{"ingest": {"max_body_byte": 1000}}"#).unwrap();
        let error = Config::load(&path).unwrap_err().to_string();
        assert!(
            error.contains("config.json") && error.contains("max_body_byte"),
            "{error}"
        );
        assert_eq!(
            Config::load(&dir.path().join("absent.json")).unwrap(),
            Config::default()
        );
    }
}
