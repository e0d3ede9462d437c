//! The page store's error type.

use std::io;
use std::path::PathBuf;

use super::key::ContentKey;

/// Everything that can go wrong in the page store. Each message names the
/// path or content key involved.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file-system operation failed; `action` says which ("read", "rename
    /// into place", ...).
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// No block exists for the key (never stored, or deleted).
    #[error("no block for content key {key} at {path}")]
    NotFound { key: ContentKey, path: PathBuf },

    /// A block file exists but is not a valid block.
    #[error("corrupt block {path}: {reason}")]
    CorruptBlock { path: PathBuf, reason: String },

    /// The key names a volume the store does not have.
    #[error(
        "content key {key} names volume {volume} but the store at {root} has {volumes} volumes"
    )]
    VolumeOutOfRange {
        key: ContentKey,
        volume: u16,
        volumes: u16,
        root: PathBuf,
    },

    /// A content key in text form could not be parsed.
    #[error("invalid content key {input:?}: {reason}")]
    InvalidContentKey { input: String, reason: &'static str },

    /// A signature in text form could not be parsed.
    #[error("invalid signature {input:?}: {reason}")]
    InvalidSignature { input: String, reason: &'static str },

    /// The configuration given to open a new store is not usable.
    #[error("invalid configuration for the store at {root}: {reason}")]
    InvalidConfig { root: PathBuf, reason: String },

    /// `store.json` exists but cannot be used.
    #[error("invalid store description {path}: {reason}")]
    InvalidDescription { path: PathBuf, reason: String },

    /// Compressing a body for a new block failed.
    #[error("cannot compress the body for block {path}: {source}")]
    Compression {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// A block already holds `u64::MAX` references.
    #[error("block {path} already holds the largest possible reference count")]
    ReferenceCountOverflow { path: PathBuf },

    /// A flush of staged writes failed: what was staged then is lost, so
    /// the handle refuses to go on (its callers must not journal anything).
    #[error("the page store at {root} lost staged writes when a flush failed ({reason}); start the ingest again")]
    StagedWritesLost { root: PathBuf, reason: String },
}

/// Result of page store operations.
pub type Result<T> = std::result::Result<T, StoreError>;

impl StoreError {
    /// Shorthand for [`StoreError::Io`].
    pub(super) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        StoreError::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// True for [`StoreError::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, StoreError::NotFound { .. })
    }
}
