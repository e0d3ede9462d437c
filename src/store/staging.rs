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
//! `put` and a read hold the staging gate shared, a flush and a reference
//! change (`add_reference`, `delete`) hold it exclusively; the location's
//! directory lock orders `put`s of one location as before. Between the two
//! phases of a flush, the temporary files are outside any lock: a staging
//! handle must be its store's only writing process, which `mirrorscope
//! index` ensures by holding the data directory's lock.
//!
//! A flush that fails loses what was staged, including blocks other threads
//! put (ingest reads several files at once through one handle): from then
//! on every `put` and flush of the handle fails too, so that no caller
//! journals a reference the store does not hold.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

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
    /// Its leaf's number and overflow index, for the directory's listing.
    pub(super) name: (u128, u32),
    pub(super) header: BlockHeader,
    /// The block's data as stored (compressed or not, as the header says).
    pub(super) data: Vec<u8>,
}

/// The staged blocks of one location, by overflow index.
pub(super) type StagedAtLocation = BTreeMap<u32, StagedBlock>;

/// Where a body's blocks live: its volume and signature.
pub(super) type LocationKey = (u16, u128);

/// A temporary file, the block path it becomes, and the block's name in
/// its directory's listing.
type Rename = (PathBuf, PathBuf, (u128, u32));

/// The blocks of one directory as (leaf number, overflow index), sorted.
pub(super) type Listing = Vec<(u128, u32)>;

#[derive(Debug, Default)]
pub(super) struct Staging {
    /// Held shared by each `put` and read, exclusively by a flush and a
    /// reference change.
    gate: RwLock<()>,
    blocks: Mutex<HashMap<LocationKey, StagedAtLocation>>,
    /// Why a flush failed, once one has: the handle is unusable.
    failed: Mutex<Option<String>>,
    /// The blocks of each directory a `put` has looked in: listed once, then
    /// kept up to date by the flushes, this handle being the store's only
    /// writer. Listing a directory of hundreds of blocks at every `put`
    /// would cost more than the put itself.
    listings: Mutex<HashMap<PathBuf, Listing>>,
}

/// The gate held shared.
pub(super) type Shared<'a> = RwLockReadGuard<'a, ()>;
/// The gate held exclusively.
pub(super) type Exclusive<'a> = RwLockWriteGuard<'a, ()>;

impl Staging {
    /// The gate, shared, for a `put`; an error once a flush has failed.
    pub(super) fn enter(&self, root: &Path) -> Result<Shared<'_>> {
        let gate = self
            .gate
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.check(root)?;
        Ok(gate)
    }

    /// The gate, shared, with nothing staged: for a read. Flushes first
    /// when something is.
    pub(super) fn enter_settled(&self, syncs: &DirectorySyncs, root: &Path) -> Result<Shared<'_>> {
        loop {
            let gate = self
                .gate
                .read()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if self.is_empty() {
                return Ok(gate);
            }
            drop(gate);
            self.flush(syncs, root)?;
        }
    }

    /// The gate, exclusively, with everything staged written: for a
    /// reference change, which must not race a staged count.
    pub(super) fn enter_exclusively(
        &self,
        syncs: &DirectorySyncs,
        root: &Path,
    ) -> Result<Exclusive<'_>> {
        let gate = self
            .gate
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.flush_held(syncs, root)?;
        Ok(gate)
    }

    fn check(&self, root: &Path) -> Result<()> {
        refuse_after_failure(&self.failed, root)
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

    /// The overflow indices of the blocks on disk at `location`, from the
    /// directory's listing (made with `list` the first time). The caller
    /// holds the directory's lock.
    pub(super) fn overflows_on_disk(
        &self,
        directory: &Path,
        leaf: u128,
        list: impl FnOnce() -> Result<Listing>,
    ) -> Result<Vec<u32>> {
        let known = self
            .listings()
            .get(directory)
            .map(|listing| overflows_in(listing, leaf));
        if let Some(overflows) = known {
            return Ok(overflows);
        }
        let mut listing = list()?;
        listing.sort_unstable();
        let overflows = overflows_in(&listing, leaf);
        self.listings().insert(directory.to_path_buf(), listing);
        Ok(overflows)
    }

    /// Forgets a directory's listing (after a block there is removed).
    pub(super) fn forget_listing(&self, directory: &Path) {
        self.listings().remove(directory);
    }

    fn listings(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Listing>> {
        self.listings
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(super) fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<LocationKey, StagedAtLocation>> {
        self.blocks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Writes every staged block (see the module documentation) and makes
    /// the renames and every deferred directory change durable; returns how
    /// many directories were waiting.
    pub(super) fn flush(&self, syncs: &DirectorySyncs, root: &Path) -> Result<usize> {
        let _gate = self
            .gate
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.flush_held(syncs, root)
    }

    /// [`Staging::flush`] with the gate already held exclusively. A failure
    /// sticks (see the module documentation).
    fn flush_held(&self, syncs: &DirectorySyncs, root: &Path) -> Result<usize> {
        self.check(root)?;
        let staged = std::mem::take(&mut *self.lock());
        let outcome =
            write_all(staged, syncs, &mut self.listings()).and_then(|_| syncs.flush(root));
        if let Err(error) = &outcome {
            *self
                .failed
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(error.to_string());
        }
        outcome
    }
}

/// Writes `staged`: temporary files, one sync per file system, renames.
/// On an error, removes every temporary file not renamed.
fn write_all(
    staged: HashMap<LocationKey, StagedAtLocation>,
    syncs: &DirectorySyncs,
    listings: &mut HashMap<PathBuf, Listing>,
) -> Result<usize> {
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
    let mut pending: Vec<(PathBuf, Vec<Rename>)> = Vec::new();
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
                renames.push((temporary, directory.join(&block.file_name), block.name));
            }
        }
        // Phase 2: their contents durable, once per file system they are on.
        sync_contents(by_directory.keys().map(PathBuf::as_path))
    })();
    if let Err(error) = written {
        remove_all(&pending);
        return Err(error);
    }
    // Phase 3: into place, directory by directory, under its lock. Phase 4,
    // the renames durable, is the caller's flush of `syncs`.
    let mut count = 0;
    for index in 0..pending.len() {
        let (directory, renames) = &pending[index];
        let renamed = (|| -> Result<()> {
            let _lock = DirectoryLock::acquire(directory)
                .map_err(|source| StoreError::io("lock", directory, source))?;
            for (temporary, path, name) in renames {
                rename_into_place(temporary, path)?;
                if let Some(listing) = listings.get_mut(directory) {
                    if let Err(slot) = listing.binary_search(name) {
                        listing.insert(slot, *name);
                    }
                }
                count += 1;
            }
            syncs.sync(directory)
        })();
        if let Err(error) = renamed {
            // Those renamed are gone from their temporary names already.
            remove_all(&pending[index..]);
            return Err(error);
        }
    }
    Ok(count)
}

/// The overflow indices of `leaf` in a sorted listing.
fn overflows_in(listing: &Listing, leaf: u128) -> Vec<u32> {
    let start = listing.partition_point(|&(key, _)| key < leaf);
    listing[start..]
        .iter()
        .take_while(|&&(key, _)| key == leaf)
        .map(|&(_, overflow)| overflow)
        .collect()
}

fn remove_all(pending: &[(PathBuf, Vec<Rename>)]) {
    for (_, renames) in pending {
        for (temporary, _, _) in renames {
            remove_temporary_file(temporary);
        }
    }
}

/// `StagedWritesLost` once a staging handle's flush has failed (`failed`
/// holds why): the handle must not go on. Shared by both layouts.
pub(super) fn refuse_after_failure(failed: &Mutex<Option<String>>, root: &Path) -> Result<()> {
    match &*failed
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
    {
        Some(reason) => Err(StoreError::StagedWritesLost {
            root: root.to_path_buf(),
            reason: reason.clone(),
        }),
        None => Ok(()),
    }
}
