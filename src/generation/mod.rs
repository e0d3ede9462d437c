//! The read side of the data folder: the current generation as `CURRENT`
//! names it, read and checked ([`Analysis`]: whole, or without the pages'
//! fingerprints, which the server reads a block at a time from their own
//! file, [`FingerprintFile`]), and the page store
//! opened for reading. Everything that reads a generation (search, the site,
//! stats, the reports, export, eval) reads it through here; nothing here
//! writes. The write side (crawl folders, the lock, writing generations,
//! recovery, `check`) is [`crate::datadir`], which adds its methods to
//! [`DataDir`].
//!
//! ```text
//! data/
//!   config.json                 the typed configuration (written with defaults by the first index)
//!   lock                        held by `index` while it writes
//!   store/                      the page store (see `store`)
//!   crawls/<crawl-id>/          one ingested crawl (see `datadir`)
//!   generations/gen-<n>/        a complete generation: manifest.json, pages.bin,
//!                               similarity.bin (trivial clusters, boilerplate),
//!                               fingerprints.bin (every page's, in blocks: see `fingerprints`),
//!                               collections.bin (similar clusters and their collections),
//!                               mirrors.bin, index/ (the tantivy search index)
//!   CURRENT                     the name of the generation readers use
//! ```

mod fingerprints;

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::collections::{CollectionCounts, Collections};
pub use crate::fingerprint::Fingerprints;
use crate::index::{IndexCounts, IndexError};
use crate::mirrors::{MirrorCounts, Mirrors};
use crate::pages::{PageTable, TableCounts};
use crate::similarity::{Similarity, SimilarityCounts};
use crate::store::{PageStore, StoreConfig, StoreError};
pub(crate) use fingerprints::FINGERPRINTS_FILE;
pub use fingerprints::{
    write as write_fingerprints, write_with as write_fingerprints_with, FingerprintFile,
};

/// The settings file in the data folder's root.
pub(crate) const CONFIG_FILE: &str = "config.json";
/// Version of the generation format written by this build.
pub const GENERATION_FORMAT: u32 = 17;
pub(crate) const PAGES_FILE: &str = "pages.bin";
pub(crate) const SIMILARITY_FILE: &str = "similarity.bin";
pub(crate) const COLLECTIONS_FILE: &str = "collections.bin";
pub(crate) const MIRRORS_FILE: &str = "mirrors.bin";
pub(crate) const MANIFEST_FILE: &str = "manifest.json";

/// Errors of the data directory.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {detail}")]
    Format { path: PathBuf, detail: String },
    #[error("{0}: no index yet; run `mirrorscope index` first")]
    NoGeneration(PathBuf),
    #[error("{path}: another `mirrorscope index` is writing to this data directory")]
    Busy { path: PathBuf },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A crawl folder's files (captures, reference journals) that could
    /// not be read or written.
    #[error(transparent)]
    Crawl(Box<dyn std::error::Error + Send + Sync>),
    #[error(transparent)]
    Index(#[from] IndexError),
}

pub type Result<T> = std::result::Result<T, DataError>;

impl From<crate::fingerprint::SpillError> for DataError {
    fn from(error: crate::fingerprint::SpillError) -> DataError {
        DataError::Io {
            path: error.path,
            source: error.source,
        }
    }
}

impl From<crate::atomic::WriteError> for DataError {
    fn from(error: crate::atomic::WriteError) -> DataError {
        DataError::Io {
            path: error.path,
            source: error.source,
        }
    }
}

pub(crate) fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> DataError + '_ {
    move |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One crawl of a generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrawlEntry {
    pub id: String,
    pub files: Vec<String>,
    pub captures: u64,
}

/// What a generation holds, written as `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub generation: String,
    /// Seconds since the Unix epoch when the generation was written.
    pub created: u64,
    pub crawls: Vec<CrawlEntry>,
    pub counts: TableCounts,
    pub similarity: SimilarityCounts,
    pub collections: CollectionCounts,
    pub mirrors: MirrorCounts,
    pub index: IndexCounts,
}

/// A data directory, opened.
pub struct DataDir {
    pub(crate) root: PathBuf,
}

/// One generation's files.
pub struct Generation {
    pub(crate) path: PathBuf,
}

/// A generation's analysis, read once and checked (the manifest's format
/// first, then each stage's output against the page table): what every
/// reader (search, stats, the reports, export, eval) works from.
pub struct Analysis {
    pub manifest: Manifest,
    pub table: PageTable,
    pub similarity: Similarity,
    pub collections: Collections,
    pub mirrors: Mirrors,
    /// The generation's folder (its search index is in `index/` there).
    pub path: PathBuf,
}

impl Generation {
    /// Reads the whole analysis, every page's fingerprint included; see
    /// [`Analysis`].
    pub fn analysis(&self) -> Result<Analysis> {
        let mut analysis = self.analysis_without_fingerprints()?;
        analysis.similarity.fingerprints = self.fingerprints(&analysis.table)?.read_all()?;
        Ok(analysis)
    }

    /// The analysis less the pages' fingerprints (`similarity.fingerprints`
    /// is empty): what the server holds, reading the fingerprints of the
    /// pages it shows from [`Generation::fingerprints`].
    pub fn analysis_without_fingerprints(&self) -> Result<Analysis> {
        let manifest = self.manifest()?;
        let table = self.page_table()?;
        let similarity = self.similarity_without_fingerprints(&table)?;
        Ok(Analysis {
            manifest,
            similarity,
            collections: self.collections(&table)?,
            mirrors: self.mirrors(&table)?,
            table,
            path: self.path.clone(),
        })
    }

    /// The manifest, once its format is known to be this build's.
    pub fn manifest(&self) -> Result<Manifest> {
        #[derive(Deserialize)]
        struct Format {
            format: u32,
        }
        let path = self.path.join(MANIFEST_FILE);
        let Format { format } = read_json(&path)?;
        if format != GENERATION_FORMAT {
            return Err(DataError::Format {
                path: self.path.clone(),
                detail: format!(
                    "generation format {format} is not the {GENERATION_FORMAT} this build reads; run `mirrorscope index` again"
                ),
            });
        }
        read_json(&path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn page_table(&self) -> Result<PageTable> {
        let path = self.path.join(PAGES_FILE);
        let mut table: PageTable = read_compressed(&path)?;
        if !table.text_hosts.is_well_formed() {
            return Err(DataError::Format {
                path,
                detail: "the lists of hosts pages name are out of order or past their end".into(),
            });
        }
        table.share_record_files();
        Ok(table)
    }

    /// The similarity stage's output with every page's fingerprint,
    /// checked against the page table.
    pub fn similarity(&self, table: &PageTable) -> Result<Similarity> {
        let mut similarity = self.similarity_without_fingerprints(table)?;
        similarity.fingerprints = self.fingerprints(table)?.read_all()?;
        Ok(similarity)
    }

    /// [`Generation::similarity`] without the pages' fingerprints, which
    /// are in a file of their own: what an index shard and the server read.
    pub fn similarity_without_fingerprints(&self, table: &PageTable) -> Result<Similarity> {
        self.read_checked(SIMILARITY_FILE, |similarity: &Similarity| {
            similarity.problem(table.pages.len())
        })
    }

    /// The pages' fingerprints, opened to be read a block at a time, and
    /// refused when they are not those of the page table's pages.
    pub fn fingerprints(&self, table: &PageTable) -> Result<FingerprintFile> {
        let path = self.path.join(FINGERPRINTS_FILE);
        let file = FingerprintFile::open(&path)?;
        if file.pages() != table.pages.len() {
            return Err(DataError::Format {
                path,
                detail: format!(
                    "fingerprints of {} pages for the page table's {}",
                    file.pages(),
                    table.pages.len()
                ),
            });
        }
        Ok(file)
    }

    /// The collections stage's output, checked against the page table.
    pub fn collections(&self, table: &PageTable) -> Result<Collections> {
        self.read_checked(COLLECTIONS_FILE, |collections: &Collections| {
            collections.problem(table.pages.len())
        })
    }

    /// The mirrors stage's output, checked against the page table.
    pub fn mirrors(&self, table: &PageTable) -> Result<Mirrors> {
        self.read_checked(MIRRORS_FILE, |mirrors: &Mirrors| {
            mirrors.problem(table.hosts.len())
        })
    }

    /// A stage's file, refused with `problem`'s reason when it has one.
    fn read_checked<T: for<'de> Deserialize<'de>>(
        &self,
        file: &str,
        problem: impl FnOnce(&T) -> Option<String>,
    ) -> Result<T> {
        let path = self.path.join(file);
        let value: T = read_compressed(&path)?;
        match problem(&value) {
            Some(detail) => Err(DataError::Format { path, detail }),
            None => Ok(value),
        }
    }
}

pub(crate) fn read_compressed<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let compressed = fs::read(path).map_err(io_error(path))?;
    let bytes = zstd::decode_all(compressed.as_slice()).map_err(io_error(path))?;
    postcard::from_bytes(&bytes).map_err(|error| DataError::Format {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })
}

pub(crate) fn generation_number(name: &str) -> Option<u64> {
    name.strip_prefix("gen-")?.parse().ok()
}

pub(crate) fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let text = fs::read_to_string(path).map_err(io_error(path))?;
    serde_json::from_str(&text).map_err(|error| DataError::Format {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })
}

impl DataDir {
    /// Opens an existing data directory for reading, without creating anything.
    pub fn open_existing(root: &Path) -> Result<DataDir> {
        if !root.join("CURRENT").exists() {
            return Err(DataError::NoGeneration(root.to_path_buf()));
        }
        Ok(DataDir {
            root: root.to_path_buf(),
        })
    }

    /// Opens a data directory to check it, without creating anything: one
    /// with a `CURRENT`, or with generations whose `CURRENT` was lost.
    pub fn open_to_check(root: &Path) -> Result<DataDir> {
        if !root.join("CURRENT").exists() && !root.join("generations").is_dir() {
            return Err(DataError::NoGeneration(root.to_path_buf()));
        }
        Ok(DataDir {
            root: root.to_path_buf(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder's `config.json` (it may not exist: then every setting has
    /// its default).
    pub fn config_path(&self) -> PathBuf {
        self.root.join(CONFIG_FILE)
    }

    /// The page store, opened for reading only (see
    /// [`PageStore::open_for_reading`]).
    pub fn store_for_reading(&self, config: &StoreConfig) -> Result<PageStore> {
        Ok(PageStore::open_for_reading(
            &self.root.join("store"),
            config.clone(),
        )?)
    }

    /// The name of the current generation.
    pub fn current_generation(&self) -> Result<String> {
        let path = self.root.join("CURRENT");
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(DataError::NoGeneration(self.root.clone()))
            }
            Err(source) => return Err(DataError::Io { path, source }),
        };
        let name = text.trim().to_string();
        if generation_number(&name).is_none() {
            return Err(DataError::Format {
                path,
                detail: format!("{name:?} is not a generation name"),
            });
        }
        Ok(name)
    }

    /// The manifest of the current generation.
    pub fn manifest(&self) -> Result<Manifest> {
        self.generation()?.manifest()
    }

    /// The page table of the current generation.
    pub fn page_table(&self) -> Result<PageTable> {
        self.generation()?.page_table()
    }

    /// The current generation's analysis, read once (see [`Analysis`]).
    pub fn analysis(&self) -> Result<Analysis> {
        self.generation()?.analysis()
    }

    /// The current generation, named once: every part read through it comes
    /// from the same generation even if `index` switches to a newer one.
    pub fn generation(&self) -> Result<Generation> {
        let name = self.current_generation()?;
        Ok(Generation {
            path: self.root.join("generations").join(name),
        })
    }
}
