//! `mirrorscope import-analysis DIR`: trivial clusters computed elsewhere
//! (the Spark jobs of `spark/`, docs/SCALING.md) made the current
//! generation's, so that search, the reports and the later stages work from
//! them.
//!
//! Reads `DIR/trivial`, a Parquet file or a folder of Parquet files (as Spark
//! writes a table) with the columns `page` and `cluster`, one row per page
//! of the current generation, and `DIR/GENERATION` when present (the name of
//! the generation whose tables were exported, which `export` writes and the
//! jobs copy): the clusters must have been computed from the current
//! generation. Then the collections and mirrors stages and the search index
//! run on those clusters into a new generation (see
//! [`pipeline::run_with_trivial`]).

use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

use crate::datadir::Manifest;
use crate::export::GENERATION_FILE;
use crate::pipeline::{self, PipelineError, Stages};

/// What stopped `import-analysis`.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("{path}, row {row}: {message}")]
    Row {
        path: PathBuf,
        row: u64,
        message: String,
    },
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
}

type Result<T, E = ImportError> = std::result::Result<T, E>;

/// What was imported.
pub struct Imported {
    pub manifest: Manifest,
    pub stages: Stages,
    /// The files the clusters were read from.
    pub files: Vec<PathBuf>,
}

/// Imports `dir`'s trivial clusters into the data folder `data`.
pub fn import(data: &Path, dir: &Path) -> Result<Imported> {
    let (files, labels) = read_trivial(dir)?;
    let marker = dir.join(GENERATION_FILE);
    let expected = match std::fs::read_to_string(&marker) {
        Ok(text) => Some(text.trim().to_string()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            tracing::warn!(
                "{}: missing; the clusters are taken to be of the current generation",
                marker.display()
            );
            None
        }
        Err(error) => {
            return Err(ImportError::Read {
                path: marker,
                message: error.to_string(),
            })
        }
    };
    let (manifest, stages) = pipeline::run_with_trivial(data, &labels, expected.as_deref())?;
    Ok(Imported {
        manifest,
        stages,
        files,
    })
}

/// The Parquet files of the table `trivial` in `dir`.
fn trivial_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let folder = dir.join("trivial");
    let file = dir.join("trivial.parquet");
    if folder.is_dir() {
        let entries = std::fs::read_dir(&folder).map_err(|error| ImportError::Read {
            path: folder.clone(),
            message: error.to_string(),
        })?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|entry| Some(entry.ok()?.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "parquet"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(ImportError::Read {
                path: folder,
                message: "no .parquet file in the folder".into(),
            });
        }
        Ok(files)
    } else if file.is_file() {
        Ok(vec![file])
    } else {
        Err(ImportError::Read {
            path: dir.to_path_buf(),
            message: "holds neither trivial/ (a folder of Parquet files) nor trivial.parquet"
                .into(),
        })
    }
}

/// Each page's cluster, by page id, from the table `trivial` in `dir`; and
/// the files read.
pub fn read_trivial(dir: &Path) -> Result<(Vec<PathBuf>, Vec<u64>)> {
    let files = trivial_files(dir)?;
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    for path in &files {
        let failed = |message: String| ImportError::Read {
            path: path.clone(),
            message,
        };
        let file = File::open(path).map_err(|error| failed(error.to_string()))?;
        let reader = SerializedFileReader::new(file).map_err(|error| failed(error.to_string()))?;
        let rows = reader
            .get_row_iter(None)
            .map_err(|error| failed(error.to_string()))?;
        for (row, record) in (1u64..).zip(rows) {
            let at = |message: String| ImportError::Row {
                path: path.clone(),
                row,
                message,
            };
            let record = record.map_err(|error| at(error.to_string()))?;
            let (mut page, mut cluster) = (None, None);
            for (name, field) in record.get_column_iter() {
                let value = match field {
                    Field::Long(value) => u64::try_from(*value).ok(),
                    Field::Int(value) => u64::try_from(*value).ok(),
                    _ => None,
                };
                match name.as_str() {
                    "page" => page = Some(value),
                    "cluster" => cluster = Some(value),
                    _ => {}
                }
            }
            let (Some(page), Some(cluster)) = (page, cluster) else {
                return Err(at("no column page or cluster".into()));
            };
            let (Some(page), Some(cluster)) = (page, cluster) else {
                return Err(at("page and cluster must be integers of 0 or more".into()));
            };
            pairs.push((page, cluster));
        }
    }
    // One row per page, pages 0 to n - 1.
    pairs.sort_unstable();
    let mut labels = Vec::with_capacity(pairs.len());
    for (expected, &(page, cluster)) in (0u64..).zip(&pairs) {
        if page != expected {
            let message = if page < expected {
                format!("page {page} is given two clusters")
            } else {
                format!("page {expected} has no cluster")
            };
            return Err(ImportError::Read {
                path: dir.join("trivial"),
                message,
            });
        }
        labels.push(cluster);
    }
    Ok((files, labels))
}
