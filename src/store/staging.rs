//! Staged writes: the blocks a batch of `put`s creates or re-references,
//! held in memory and written together at the next flush.
//!
//! Writing each block on its own costs an fsync per block (its contents must
//! be on disk before the rename that makes it visible), which on a virtual
//! disk is most of what ingest costs. A flush instead writes every staged
//! block to a temporary file, makes them all durable with one file-system
//! sync, renames them all into place, and makes the renames durable with a
//! second sync. The guarantee is the same as for a single write: a crash
//! before the renames leaves temporary files (removed as stale, as always)
//! and the store as it was; a crash during them leaves each block old or
//! new, never torn. Ingest journals a batch's references only after its
//! flush, as it already did for deferred directory syncs.
//!
//! A staged block is seen by later `put`s of the same handle (a body met
//! twice in one batch gains a reference in memory) but not by reads, so
//! every other operation of the store flushes first. Within a process, a
//! `put` holds the staging gate shared and a flush holds it exclusively; the
//! location's directory lock orders `put`s of one location as before.
//! Between the two phases of a flush, the temporary files are outside any
//! lock: a staging handle must be its store's only writing process, which
//! `mirrorscope index` ensures by holding the data directory's lock.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock, RwLockReadGuard};

use super::block::BlockHeader;
use super::durable::{
    remove_temporary_file, rename_into_place, sync_contents, write_temporary_file, DirectoryLock,
    DirectorySyncs,
};
use super::error::{Result, StoreError};

/// A block as it will be written.
#[derive(Debug, Clone)]
pub(super) struct StagedBlock {
    pub(super) directory: PathBuf,
    pub(super) file_name: String,
    pub(super) header: BlockHeader,
    /// The block's data as stored (compressed or not, as the header says).
    pub(super) data: Vec<u8>,
}

/// The staged blocks of one location, by overflow index.
pub(super) type StagedAtLocation = BTreeMap<u32, StagedBlock>;

/// Where a body's blocks live: its volume and signature.
pub(super) type LocationKey = (u16, u128);

#[derive(Debug, Default)]
pub(super) struct Staging {
    /// Held shared by each `put`, exclusively by a flush.
    gate: RwLock<()>,
    blocks: Mutex<HashMap<LocationKey, StagedAtLocation>>,
}

impl Staging {
    /// Held for the whole of a staged `put`.
    pub(super) fn enter(&self) -> RwLockReadGuard<'_, ()> {
        self.gate
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Takes the staged blocks of `location` out, for a `put` that holds the
    /// location's directory lock (and so is the only one to touch them).
    pub(super) fn take(&self, location: LocationKey) -> StagedAtLocation {
        self.lock().remove(&location).unwrap_or_default()
    }

    /// Puts the blocks of `location` back.
    pub(super) fn restore(&self, location: LocationKey, blocks: StagedAtLocation) {
        if !blocks.is_empty() {
            self.lock().insert(location, blocks);
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<LocationKey, StagedAtLocation>> {
        self.blocks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Writes every staged block (see the module documentation); returns
    /// how many. On an error, nothing not yet renamed is left behind, and
    /// the staged blocks are dropped: the caller must not journal them.
    pub(super) fn flush(&self, syncs: &DirectorySyncs, root: &Path) -> Result<usize> {
        let _gate = self
            .gate
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let staged = std::mem::take(&mut *self.lock());
        let mut by_directory: BTreeMap<PathBuf, Vec<StagedBlock>> = BTreeMap::new();
        for block in staged.into_values().flat_map(BTreeMap::into_values) {
            by_directory
                .entry(block.directory.clone())
                .or_default()
                .push(block);
        }
        if by_directory.is_empty() {
            return Ok(0);
        }
        // Phase 1: every block into a temporary file of its directory.
        let mut pending: Vec<(PathBuf, Vec<(PathBuf, PathBuf)>)> = Vec::new();
        let written = (|| -> Result<()> {
            for (directory, blocks) in &by_directory {
                let _lock = DirectoryLock::acquire(directory)
                    .map_err(|source| StoreError::io("lock", directory, source))?;
                pending.push((directory.clone(), Vec::with_capacity(blocks.len())));
                let renames = &mut pending.last_mut().expect("just pushed").1;
                for block in blocks {
                    let header = block.header.encode();
                    let temporary =
                        write_temporary_file(directory, &block.file_name, &[&header, &block.data])?;
                    renames.push((temporary, directory.join(&block.file_name)));
                }
            }
            // Phase 2: their contents durable, all at once.
            sync_contents(root)
        })();
        if let Err(error) = written {
            remove_all(&pending);
            return Err(error);
        }
        // Phase 3: into place, directory by directory, under its lock.
        let mut count = 0;
        for index in 0..pending.len() {
            let (directory, renames) = &pending[index];
            let renamed = (|| -> Result<()> {
                let _lock = DirectoryLock::acquire(directory)
                    .map_err(|source| StoreError::io("lock", directory, source))?;
                for (done, (temporary, path)) in renames.iter().enumerate() {
                    if let Err(error) = rename_into_place(temporary, path) {
                        for (temporary, _) in &renames[done..] {
                            remove_temporary_file(temporary);
                        }
                        return Err(error);
                    }
                    count += 1;
                }
                syncs.sync(directory)
            })();
            if let Err(error) = renamed {
                remove_all(&pending[index + 1..]);
                return Err(error);
            }
        }
        // Phase 4, the renames durable, is the caller's flush of `syncs`.
        Ok(count)
    }
}

fn remove_all(pending: &[(PathBuf, Vec<(PathBuf, PathBuf)>)]) {
    for (_, renames) in pending {
        for (temporary, _) in renames {
            remove_temporary_file(temporary);
        }
    }
}
