//! Store configuration, and the layout a store records in `store.json`.

use serde::{Deserialize, Serialize};

/// How `put` decides that a body is already stored (gomes-et-al-2006 §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StoreMode {
    /// No duplicate elimination: every put creates a new block, at the next
    /// free overflow index of the signature's location.
    ForceNew,
    /// A block at the signature's location with the same original size is a
    /// duplicate. Two different bodies with the same signature and the same
    /// size are a *fake duplicate*: the second is not stored and its key reads
    /// back the first. The paper measured the chance of that as the product of
    /// a signature collision and a size coincidence.
    #[default]
    Regular,
    /// Like `regular`, but a duplicate must also be byte for byte equal, so a
    /// fake duplicate never happens. Costs one decompression per candidate.
    Compare,
}

/// How a store keeps its blocks on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StoreFormat {
    /// Append-only pack files per volume and an index from key to (pack,
    /// offset, length, references): format 2, see `packed.rs`. A store in
    /// the file layout is upgraded to it when opened for writing.
    #[default]
    Packed,
    /// A file per block under the paper's sig2location tree: format 1.
    Files,
}

/// Settings for opening a [`super::PageStore`].
///
/// `volumes` and `depth` shape the tree on disk and are fixed when the store
/// is created; reopening an existing store uses the values in its
/// `store.json`. `mode` and `zstd_level` apply to this handle only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// Number of volumes; a body goes to volume `signature mod volumes`.
    /// Default 4: enough to spread a store over a few disks by symlinking
    /// `vol-<v>` directories, few enough to keep directories small.
    pub volumes: u16,
    /// Depth of each volume's tree: `depth - 1` directory levels, one per
    /// leading signature byte, then the block file. Default 2: 256 leaf
    /// directories per volume, about 1,000 blocks per directory at a million
    /// distinct pages. The paper's example depth 3 (65,536 leaves per
    /// volume) suits stores of hundreds of millions; on the demo crawl it
    /// made nearly every block create two directories, and directory
    /// creation and its fsyncs were a third of ingest time (measured, see
    /// BENCHMARKS.md). From 1 (no directories) to 16.
    pub depth: u8,
    /// How duplicates are detected. Default `regular`.
    pub mode: StoreMode,
    /// zstd level for new blocks. Default 3: zstd's own default, most of the
    /// ratio of higher levels on HTML at a fraction of the time.
    pub zstd_level: i32,
    /// The layout of a new store, and whether to upgrade one in the file
    /// layout: `packed` (default) or `files`. A packed store stays packed.
    pub format: StoreFormat,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            volumes: 4,
            depth: 2,
            mode: StoreMode::Regular,
            zstd_level: 3,
            format: StoreFormat::Packed,
        }
    }
}

/// Largest tree depth: 15 directory levels leave one signature byte for the
/// block name.
pub const MAX_DEPTH: u8 = 16;

/// Version of the on-disk layout written in `store.json` for a packed store:
/// the newest.
pub const STORE_FORMAT_VERSION: u32 = 2;

/// Version of the file-per-block layout.
pub const FILES_FORMAT_VERSION: u32 = 1;

/// Contents of `<root>/store.json`: what every handle on the store must agree
/// on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreLayout {
    pub format_version: u32,
    pub volumes: u16,
    pub depth: u8,
}

impl StoreLayout {
    /// Whether the blocks are packed (format 2).
    pub fn is_packed(&self) -> bool {
        self.format_version == STORE_FORMAT_VERSION
    }

    /// Checks the numbers; returns why they are unusable.
    pub(super) fn validate(&self) -> Result<(), String> {
        if self.format_version != STORE_FORMAT_VERSION
            && self.format_version != FILES_FORMAT_VERSION
        {
            return Err(format!(
                "format version {} is not supported (this build reads versions {FILES_FORMAT_VERSION} and {STORE_FORMAT_VERSION})",
                self.format_version
            ));
        }
        if self.volumes == 0 {
            return Err("volumes must be at least 1".to_owned());
        }
        if self.depth == 0 || self.depth > MAX_DEPTH {
            return Err(format!(
                "depth must be from 1 to {MAX_DEPTH}, not {}",
                self.depth
            ));
        }
        Ok(())
    }
}
