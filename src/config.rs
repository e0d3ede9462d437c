//! One typed configuration with every threshold, its default and the reason
//! for it. Read from `<data>/config.json` when present (any field may be left
//! out and keeps its default); `mirrorscope` writes the defaults there on the
//! first `index` so they can be seen and edited.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::atomic::{self, WriteError};
use crate::collections::CollectionsConfig;
use crate::generation::DataDir;
use crate::index::IndexConfig;
use crate::ingest::IngestConfig;
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
    #[error("cannot write the default settings: {0}")]
    Write(WriteError),
}

impl Config {
    /// The settings of the data folder `data`: its `config.json`, or the
    /// defaults when it has none. Reads only: searching and reporting write
    /// nothing.
    pub fn of(data: &DataDir) -> Result<Config, ConfigError> {
        Config::load(&data.config_path())
    }

    /// The settings of the data folder `data`, for a writer: `config.json` is
    /// first written with the defaults when absent, so they can be seen and
    /// edited.
    pub fn for_writer(data: &DataDir) -> Result<Config, ConfigError> {
        let path = data.config_path();
        if !path.exists() {
            let text = serde_json::to_string_pretty(&Config::default()).unwrap_or_default();
            atomic::replace_with_bytes(&path, text.as_bytes()).map_err(ConfigError::Write)?;
        }
        Config::load(&path)
    }

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
            .or_else(|| config.collections.problem())
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
