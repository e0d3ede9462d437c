//! What `mirrorscope check` asks of the store: every block with its key and
//! reference count, the temporary files left by interrupted writes, whether
//! a block's body is what its key says, and, to repair, a block's count set
//! to what its owners hold.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::durable::remove_file_durably;
use super::location::{is_temporary_file_name, parse_block_file_name, BlockLocation};
use super::{
    decode_data, lock_existing_directory, parse_block_for_rewrite, parse_header, read_header_only,
    read_whole_file, rewrite_references, ContentKey, PageStore, Result, Signature, StoreError,
};

/// One block file found by [`PageStore::walk`].
#[derive(Debug, Clone)]
pub struct WalkedBlock {
    pub key: ContentKey,
    pub path: PathBuf,
    /// What its header says, or why it cannot be read.
    pub header: std::result::Result<BlockFacts, String>,
}

/// What a block's header says, and its file's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockFacts {
    pub references: u64,
    pub original_size: u64,
    pub file_size: u64,
}

/// Everything in a store's volumes.
#[derive(Debug, Default)]
pub struct StoreWalk {
    pub blocks: Vec<WalkedBlock>,
    /// Files left by writes that never finished (`.tmp-…`).
    pub temporary_files: Vec<PathBuf>,
}

impl PageStore {
    /// Every block and temporary file of the store, blocks in key order.
    /// Reads only headers.
    pub fn walk(&self) -> Result<StoreWalk> {
        if self.packed.is_some() {
            return self.packed_walk();
        }
        let _gate = self.settled()?;
        let mut walk = StoreWalk::default();
        for volume in 0..self.layout.volumes {
            let directory = self.volume_directory(volume);
            self.walk_tree(&directory, volume, String::new(), &mut walk)?;
        }
        walk.blocks.sort_by_key(|block| block.key);
        walk.temporary_files.sort();
        Ok(walk)
    }

    /// Walks one directory of volume `volume`; `prefix` is the hex of the
    /// signature bytes its path names.
    fn walk_tree(
        &self,
        directory: &Path,
        volume: u16,
        prefix: String,
        walk: &mut StoreWalk,
    ) -> Result<()> {
        let entries = match fs::read_dir(directory) {
            Ok(entries) => entries,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(StoreError::io("list", directory, error)),
        };
        for entry in entries {
            let entry = entry.map_err(|source| StoreError::io("list", directory, source))?;
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry
                .file_type()
                .map_err(|source| StoreError::io("inspect", &path, source))?;
            if kind.is_dir() {
                self.walk_tree(&path, volume, format!("{prefix}{name}"), walk)?;
            } else if is_temporary_file_name(&name) {
                walk.temporary_files.push(path);
            } else if let Some((_, overflow)) = parse_block_file_name(&name, self.layout.depth) {
                // The directories name the signature's first bytes, the
                // leaf the rest.
                let leaf = name.split('.').next().unwrap_or_default();
                let Ok(signature) = u128::from_str_radix(&format!("{prefix}{leaf}"), 16) else {
                    continue;
                };
                let key = ContentKey {
                    signature: Signature(signature),
                    volume,
                    overflow,
                };
                let header = match read_header_only(&path) {
                    Ok(Some((header, file_size))) => Ok(BlockFacts {
                        references: header.references,
                        original_size: header.original_size,
                        file_size,
                    }),
                    // Removed while we walked.
                    Ok(None) => continue,
                    Err(StoreError::CorruptBlock { reason, .. }) => Err(reason),
                    Err(error) => return Err(error),
                };
                walk.blocks.push(WalkedBlock { key, path, header });
            }
        }
        Ok(())
    }

    /// Why block `key` is not the body its key names, if it is not: its
    /// header or data unreadable, the data not decompressing to
    /// `original-size` bytes, or the body's signature not the key's.
    pub fn verify(&self, key: &ContentKey) -> Result<Option<String>> {
        if self.packed.is_some() {
            return self.packed_verify(key);
        }
        let location = self.location_of(key)?;
        let path = location.block_path(key.overflow);
        let Some(bytes) = read_whole_file(&path)? else {
            return Err(StoreError::NotFound { key: *key, path });
        };
        let (header, offset) = match parse_header(&bytes) {
            Ok(parsed) => parsed,
            Err(reason) => return Ok(Some(reason)),
        };
        let body = match decode_data(&header, &bytes[offset..]) {
            Ok(body) => body,
            Err(reason) => return Ok(Some(reason)),
        };
        let signature = self.signature(&body);
        Ok((signature != key.signature).then(|| {
            format!(
                "the body's signature is {signature}, not the {} its name says",
                key.signature
            )
        }))
    }

    /// Sets block `key`'s reference count to `references`, removing the
    /// block at 0: the repair of a count that disagrees with the references
    /// its owners hold. Only for a store no one else writes to.
    pub fn set_references(&self, key: &ContentKey, references: u64) -> Result<()> {
        if self.packed.is_some() {
            return self.packed_set_references(key, references);
        }
        let _gate = self.exclusive()?;
        let location: BlockLocation = self.location_of(key)?;
        let _lock = lock_existing_directory(&location, key)?;
        let path = location.block_path(key.overflow);
        if references == 0 {
            return remove_file_durably(
                &self.syncs,
                &location.directory,
                &location.block_file_name(key.overflow),
            );
        }
        let bytes = read_whole_file(&path)?.ok_or_else(|| StoreError::NotFound {
            key: *key,
            path: path.clone(),
        })?;
        let (header, offset) = parse_block_for_rewrite(&path, &bytes)?;
        if header.references != references {
            rewrite_references(
                &self.syncs,
                &location,
                key.overflow,
                header,
                references,
                &bytes[offset..],
            )?;
        }
        Ok(())
    }

    /// Removes one temporary file left by an interrupted write.
    pub fn remove_temporary_file(&self, path: &Path) -> Result<()> {
        let (Some(directory), Some(name)) = (path.parent(), path.file_name()) else {
            return Ok(());
        };
        let name = name.to_string_lossy();
        if !path.starts_with(&self.root) || !is_temporary_file_name(&name) {
            return Ok(());
        }
        match remove_file_durably(&self.syncs, directory, &name) {
            Err(StoreError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                Ok(())
            }
            other => other,
        }
    }
}
