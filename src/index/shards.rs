//! A generation's search index written in shards, each a tantivy index of
//! its own built by a separate process (a Spark task, docs/SCALING.md), and
//! searched as one.
//!
//! A shard holds the pages whose body's signature falls in it
//! ([`Shard::holds`]): pages sharing a body are in one shard, whose build
//! reads and extracts that body once, and the signatures, uniform, split
//! the pages evenly. Every shard is built from the whole generation's
//! tables, so its documents carry the same cluster, collection and manual
//! ids as one index's would.
//!
//! The generation's `index/` then holds `shards.json` (how many) and one
//! folder per shard. [`ShardedDirectory`] reads them as one tantivy index:
//! its `meta.json` lists every shard's segments, each segment's files are
//! read from its shard's folder. A searcher over it sees the shards'
//! segments as one index's: term statistics (BM25's document frequencies,
//! average lengths) are summed over all of them, and the roll-up, which
//! merges a cluster's hits by cluster id across segments, counts across
//! shards exactly as it does across one index's segments.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, WatchCallback, WatchHandle, WritePtr,
};

use super::read_only::ReadOnlyDirectory;
use crate::store::ContentKey;

/// The file of a sharded index's folder that says how many shards it has.
pub const SHARDS_FILE: &str = "shards.json";

/// tantivy's list of an index's segments, in each shard's folder.
const META_FILE: &str = "meta.json";

/// The contents of [`SHARDS_FILE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardList {
    pub shards: u32,
}

/// One shard of an index of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// From 0.
    pub number: u32,
    pub count: u32,
}

/// The most shards an index is split into: a shard per core of a few
/// hundred machines; more would make each shard's segments tiny.
pub const MOST_SHARDS: u32 = 4096;

impl Shard {
    /// The whole index, unsharded.
    pub const WHOLE: Shard = Shard {
        number: 0,
        count: 1,
    };

    /// Shard `number` of `count`, or why there is none.
    pub fn new(number: u32, count: u32) -> Result<Shard, String> {
        if count == 0 || count > MOST_SHARDS {
            return Err(format!(
                "an index has from 1 to {MOST_SHARDS} shards, not {count}"
            ));
        }
        if number >= count {
            return Err(format!(
                "shard {number} of {count}: shards are numbered from 0 to {}",
                count - 1
            ));
        }
        Ok(Shard { number, count })
    }

    /// Whether the pages whose body is `key` are in this shard.
    pub fn holds(&self, key: &ContentKey) -> bool {
        key.signature.0 % u128::from(self.count) == u128::from(self.number)
    }

    /// The shard's folder in a sharded index's folder.
    pub fn folder_name(&self) -> String {
        format!("shard-{:04}", self.number)
    }
}

/// Whether `dir` holds a sharded index (it has [`SHARDS_FILE`]).
pub fn is_sharded(dir: &Path) -> bool {
    dir.join(SHARDS_FILE).is_file()
}

/// The shard folders of the sharded index in `dir`, checked: each must
/// hold a finished tantivy index.
pub fn shard_folders(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let path = dir.join(SHARDS_FILE);
    let list: ShardList = serde_json::from_slice(&std::fs::read(&path)?).map_err(|error| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {error}", path.display()),
        )
    })?;
    (0..list.shards)
        .map(|number| {
            let shard = Shard::new(number, list.shards)
                .map_err(|detail| io::Error::new(io::ErrorKind::InvalidData, detail))?;
            let folder = dir.join(shard.folder_name());
            if !folder.join(META_FILE).is_file() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "{}: shard {} of {} is missing or unfinished (no {META_FILE})",
                        folder.display(),
                        number,
                        list.shards
                    ),
                ));
            }
            Ok(folder)
        })
        .collect()
}

/// The `meta.json` of one index made of the shards' `metas` (each a
/// shard's `meta.json`, in shard order): every shard's segments, in order.
/// The shards must share one schema and one set of index settings, as
/// shards built by one build from one generation do.
pub fn union_meta(metas: &[(PathBuf, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let mut union: Option<serde_json::Map<String, serde_json::Value>> = None;
    for (path, bytes) in metas {
        let meta: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|error| format!("{}: {error}", path.display()))?;
        let serde_json::Value::Object(mut meta) = meta else {
            return Err(format!("{}: not a JSON object", path.display()));
        };
        let Some(serde_json::Value::Array(segments)) = meta.remove("segments") else {
            return Err(format!("{}: no list of segments", path.display()));
        };
        let opstamp = meta
            .get("opstamp")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| format!("{}: no opstamp", path.display()))?;
        let Some(union) = union.as_mut() else {
            meta.insert("segments".into(), serde_json::Value::Array(segments));
            union = Some(meta);
            continue;
        };
        for key in ["schema", "index_settings"] {
            if union.get(key) != meta.get(key) {
                return Err(format!(
                    "{}: its {key} is not the first shard's: the shards were not built by one build",
                    path.display()
                ));
            }
        }
        if let Some(serde_json::Value::Array(all)) = union.get_mut("segments") {
            all.extend(segments);
        }
        let highest = union
            .get("opstamp")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
            .max(opstamp);
        union.insert("opstamp".into(), highest.into());
    }
    let union = union.ok_or_else(|| "an index of no shards".to_string())?;
    serde_json::to_vec(&union).map_err(|error| error.to_string())
}

/// The shards of a sharded index, read as one read-only tantivy index.
#[derive(Clone, Debug)]
pub struct ShardedDirectory {
    shards: Vec<ReadOnlyDirectory>,
    /// Which shard holds each segment file, by its name.
    owner: Arc<HashMap<PathBuf, usize>>,
    meta: Arc<Vec<u8>>,
}

impl ShardedDirectory {
    /// Opens the sharded index in `dir`.
    pub fn open(dir: &Path) -> tantivy::Result<ShardedDirectory> {
        let folders = shard_folders(dir).map_err(|error| io_error(dir, error))?;
        let mut shards = Vec::with_capacity(folders.len());
        let mut owner = HashMap::new();
        let mut metas = Vec::with_capacity(folders.len());
        for (number, folder) in folders.iter().enumerate() {
            shards.push(ReadOnlyDirectory::open(folder)?);
            let entries = std::fs::read_dir(folder).map_err(|error| io_error(folder, error))?;
            for entry in entries {
                let name =
                    PathBuf::from(entry.map_err(|error| io_error(folder, error))?.file_name());
                let segment_file = name
                    .to_str()
                    .is_some_and(|name| name.contains('.') && !name.starts_with('.'));
                if name == Path::new(META_FILE) || !segment_file {
                    continue;
                }
                if let Some(first) = owner.insert(name.clone(), number) {
                    return Err(io_error(
                        folder,
                        io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!(
                                "{} is in shards {first} and {number}: the shards are copies",
                                name.display()
                            ),
                        ),
                    ));
                }
            }
            let path = folder.join(META_FILE);
            let bytes = std::fs::read(&path).map_err(|error| io_error(&path, error))?;
            metas.push((path, bytes));
        }
        let meta = union_meta(&metas)
            .map_err(|detail| io_error(dir, io::Error::new(io::ErrorKind::InvalidData, detail)))?;
        Ok(ShardedDirectory {
            shards,
            owner: Arc::new(owner),
            meta: Arc::new(meta),
        })
    }

    fn shard_of(&self, path: &Path) -> Option<&ReadOnlyDirectory> {
        self.owner.get(path).map(|&number| &self.shards[number])
    }
}

fn io_error(path: &Path, error: io::Error) -> tantivy::TantivyError {
    tantivy::TantivyError::from(OpenReadError::IoError {
        io_error: Arc::new(error),
        filepath: path.to_path_buf(),
    })
}

impl Directory for ShardedDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        match self.shard_of(path) {
            Some(shard) => shard.get_file_handle(path),
            None => Err(OpenReadError::FileDoesNotExist(path.to_path_buf())),
        }
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError {
            io_error: Arc::new(read_only_error(path)),
            filepath: path.to_path_buf(),
        })
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        Ok(path == Path::new(META_FILE) || self.owner.contains_key(path))
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::IoError {
            io_error: Arc::new(read_only_error(path)),
            filepath: path.to_path_buf(),
        })
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        if path == Path::new(META_FILE) {
            return Ok(self.meta.as_ref().clone());
        }
        match self.shard_of(path) {
            Some(shard) => shard.atomic_read(path),
            None => Err(OpenReadError::FileDoesNotExist(path.to_path_buf())),
        }
    }

    fn atomic_write(&self, path: &Path, _data: &[u8]) -> io::Result<()> {
        Err(read_only_error(path))
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    /// As [`ReadOnlyDirectory`]: nothing writes a generation's index once
    /// it is written.
    fn acquire_lock(&self, _lock: &Lock) -> Result<DirectoryLock, LockError> {
        Ok(DirectoryLock::from(Box::new(())))
    }

    /// A generation's index never changes: nothing to watch.
    fn watch(&self, _watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        Ok(WatchHandle::empty())
    }
}

fn read_only_error(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{}: a generation's index is read only once written",
            path.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Signature;

    fn key(signature: u128) -> ContentKey {
        ContentKey {
            signature: Signature(signature),
            volume: 0,
            overflow: 0,
        }
    }

    #[test]
    fn every_body_is_in_exactly_one_shard() {
        for count in [1, 2, 3, 7] {
            for signature in [0u128, 1, 2, 5, u128::MAX, 0x1234_5678_9abc_def0 << 64] {
                let holders = (0..count)
                    .filter(|&number| Shard::new(number, count).unwrap().holds(&key(signature)))
                    .count();
                assert_eq!(holders, 1, "signature {signature:x} in {count} shards");
            }
        }
        assert!(Shard::WHOLE.holds(&key(12345)));
    }

    #[test]
    fn shard_numbers_and_counts_are_checked() {
        assert!(Shard::new(0, 0).is_err());
        assert!(Shard::new(3, 3).is_err());
        assert!(Shard::new(0, MOST_SHARDS + 1).is_err());
        assert_eq!(Shard::new(2, 3).unwrap().folder_name(), "shard-0002");
    }

    fn meta(segments: &str, opstamp: u64, schema: &str) -> Vec<u8> {
        format!(
            r#"{{"index_settings":{{"docstore_compression":"lz4","docstore_blocksize":16384}},"segments":[{segments}],"schema":{schema},"opstamp":{opstamp}}}"#
        )
        .into_bytes()
    }

    #[test]
    fn the_union_lists_every_shards_segments_in_shard_order() {
        let first = r#"{"segment_id":"aa","max_doc":3,"deletes":null}"#;
        let second = r#"{"segment_id":"bb","max_doc":2,"deletes":null}"#;
        let third = r#"{"segment_id":"cc","max_doc":9,"deletes":null}"#;
        let union = union_meta(&[
            ("a/meta.json".into(), meta(first, 10, "[]")),
            (
                "b/meta.json".into(),
                meta(&format!("{second},{third}"), 30, "[]"),
            ),
        ])
        .unwrap();
        let union: serde_json::Value = serde_json::from_slice(&union).unwrap();
        let ids: Vec<&str> = union["segments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|segment| segment["segment_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["aa", "bb", "cc"]);
        assert_eq!(union["opstamp"], 30);
        assert_eq!(union["index_settings"]["docstore_blocksize"], 16384);
    }

    #[test]
    fn shards_of_different_schemas_are_refused_naming_the_shard() {
        let problem = union_meta(&[
            ("a/meta.json".into(), meta("", 1, "[]")),
            ("b/meta.json".into(), meta("", 1, r#"[{"name":"x"}]"#)),
        ])
        .unwrap_err();
        assert!(
            problem.contains("b/meta.json") && problem.contains("schema"),
            "{problem}"
        );
        assert!(union_meta(&[]).is_err());
        assert!(union_meta(&[("c/meta.json".into(), b"{".to_vec())])
            .unwrap_err()
            .contains("c/meta.json"));
    }
}
