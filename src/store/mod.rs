//! The page store: content-addressed storage that keeps each distinct body
//! once, following gomes-et-al-2006 §4 (exact-duplicate elimination in a web
//! archive).
//!
//! **Reads** bodies from the crawl (`put`) and content keys from callers
//! (`get`, `add_reference`, `delete`). **Writes** block files under a root
//! directory. Every other stage finds a page's body through its
//! [`ContentKey`].
//!
//! # How a body is stored (§4.1)
//!
//! `put` computes the body's [`Signature`] (xxh3, 128 bits), picks volume
//! `signature mod volumes`, and applies *sig2location*: in a volume tree of
//! depth `depth`, the `depth - 1` most significant signature bytes name one
//! directory level each (two lower-case hex digits), and the remaining bytes
//! in hex name the block file. With depth 3, signature `adee2232af3a4355…`
//! lives at `ad/ee/2232af3a4355…`, the paper's example. If an equal body is
//! already stored there, its reference count goes up by one; otherwise a new
//! block is written. `delete` takes one reference away and removes the block
//! with its last one. The paper lets clients pick a volume and so searches
//! every volume on a store; here the volume is always `signature mod volumes`
//! under the layout fixed in `store.json`, so `put` looks in that volume only.
//!
//! # Store modes and fake duplicates (§4.2)
//!
//! Different bodies can share a signature. [`StoreMode`] decides what counts
//! as "already stored":
//!
//! - `force-new`: nothing; every put writes a new block.
//! - `regular` (default): a block at the location with the same original
//!   size. Same signature but different size is a collision, stored in an
//!   *overflow block* beside the primary one. Same signature and same size is
//!   taken as a duplicate even if the bytes differ: a *fake duplicate*, the
//!   documented price of not reading the old block.
//! - `compare`: same size and byte-for-byte equal after decompression. Fake
//!   duplicates cannot happen.
//!
//! `put` examines the primary block and every overflow block at the location
//! in index order and uses the first match; a new block takes the lowest free
//! index. Lookups go by the exact file name, so a gap left by a deleted
//! overflow block never hides the blocks after it.
//!
//! # Two layouts
//!
//! A store is *packed* (format 2, the default for a new store): blocks are
//! records appended to a few pack files per volume, found through an LMDB
//! index that also holds their reference counts (see `packed/mod.rs`). Or it
//! keeps *a file per block* in the paper's sig2location tree (format 1,
//! described below; `StoreConfig::format = files`). Opening a format-1 store
//! for writing with the default configuration upgrades it to packs. Keys,
//! modes, overflow blocks and fake duplicates are the same in both.
//!
//! # On disk (file layout)
//!
//! ```text
//! <root>/store.json                     {"format_version":1,"volumes":4,"depth":3}
//! <root>/vol-<v>/<b0>/<b1>/<leaf>       primary block (v in 0..volumes)
//! <root>/vol-<v>/<b0>/<b1>/<leaf>.<k>   k-th overflow block at the same location
//! <root>/vol-<v>/<b0>/<b1>/.lock        lock file of that leaf directory
//! <root>/…/.tmp-<pid>-<n>-<name>        a write in progress (or a crashed one)
//! ```
//!
//! A content key is written `<32 hex>-<v>` for a primary block and
//! `<32 hex>-<v>-<k>` for an overflow block. `store.json` fixes the layout
//! when the store is created; reopening with a different `volumes` or `depth`
//! keeps the stored one and logs a warning.
//!
//! A block is a plain-text ASCII header, an empty line, then the data:
//!
//! ```text
//! mirrorscope-block 1
//! original-size: 12345
//! compression: zstd
//! references: 3
//!
//! <the body, zstd-compressed (compression: zstd) or as is (compression: none)>
//! ```
//!
//! `original-size` is the body's length in bytes; `references` how many
//! stores minus deletes the block has seen (at least 1). The body is stored
//! as is when zstd would not make it smaller (the empty body, for one). To
//! read a block without mirrorscope:
//!
//! ```sh
//! empty_line_at=$(grep -m1 -abx '' BLOCK | cut -d: -f1)
//! tail -c +$((empty_line_at + 2)) BLOCK | zstd -d    # `cat` for compression: none
//! ```
//!
//! # Crashes and concurrency
//!
//! Every change (a new block, a new reference count, a removal) is atomic:
//! the new block is written to a temporary file in the same directory,
//! fsynced, renamed into place, and the directory is fsynced. A reference
//! count change rewrites the header and copies the same compressed data; a
//! block is never overwritten with a different body. A crash leaves the old
//! block or the new one, and possibly a temporary file, which [`PageStore::open`]
//! (and any later write in that directory) removes.
//!
//! A handle made with [`PageStore::stage_writes`] (ingest's) holds the
//! blocks of a batch of `put`s in memory and writes them all at the next
//! flush with two file-system syncs instead of one fsync per block, under the
//! same guarantee (see `staging.rs`).
//!
//! [`PageStore`] is `Send + Sync`; use one from many threads through `&self`,
//! or several processes on one root. Each read-modify-write holds an exclusive
//! `flock` on the leaf directory's `.lock`, opened afresh each time, which
//! excludes other threads and other processes alike. Reads take no lock.
//! Every read checks the header and that the body decompresses to exactly
//! `original-size` bytes; a corrupt block is an error naming its file.

mod audit;
mod block;
mod config;
mod durable;
mod error;
mod key;
mod location;
mod packed;
mod staging;
pub mod texts;

#[cfg(test)]
mod packed_tests;
#[cfg(test)]
mod tests;

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::Serialize;

use self::block::{
    decode_data, encode_data, parse_header, BlockCompression, BlockHeader, MAX_HEADER_BYTES,
};
use self::durable::{
    create_directory_durably, remove_file_durably, remove_stale_temporary_files,
    write_file_atomically, DirectoryLock, DirectorySyncs,
};
use self::location::{is_temporary_file_name, BlockLocation};
use self::packed::Packed;
use self::staging::{StagedAtLocation, StagedBlock, Staging};

pub use self::audit::{BlockFacts, StoreWalk, WalkedBlock};
pub use self::config::{
    StoreConfig, StoreFormat, StoreLayout, StoreMode, FILES_FORMAT_VERSION, MAX_DEPTH,
    STORE_FORMAT_VERSION,
};
pub use self::error::{Result, StoreError};
pub use self::key::{signature_of, ContentKey, Signature, SIGNATURE_BYTES};

/// Name of the file that records a store's layout.
pub const STORE_DESCRIPTION_FILE_NAME: &str = "store.json";

/// What [`PageStore::put`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PutOutcome {
    /// The block now holding the body.
    pub key: ContentKey,
    /// True if a new block was written, false if an existing block gained a
    /// reference.
    pub stored_new: bool,
    /// Length of the body in bytes.
    pub original_size: u64,
    /// Length in bytes of the block file holding the body (header included),
    /// whether it is new or not.
    pub stored_size: u64,
}

/// What [`PageStore::delete`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum DeleteOutcome {
    /// The block lost one reference and keeps `remaining`.
    Decremented { remaining: u64 },
    /// That was the last reference: the block file is gone.
    Removed,
}

/// Totals over every block of a store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StoreStats {
    /// Block files, primary and overflow.
    pub blocks: u64,
    /// Sum of the reference counts.
    pub references: u64,
    /// Sum of the original sizes of the blocks: each distinct body once.
    pub original_bytes: u64,
    /// Sum of original size times references: what storing every reference
    /// separately and uncompressed would take.
    pub referenced_bytes: u64,
    /// Sum of the block file sizes, headers included.
    pub stored_bytes: u64,
    /// Block files whose header cannot be read; each is logged with its path
    /// and left out of the other totals.
    pub corrupt_blocks: u64,
}

/// A content-addressed page store rooted at one directory. See the module
/// documentation for the layout and guarantees.
#[derive(Debug, Clone)]
pub struct PageStore {
    root: PathBuf,
    layout: StoreLayout,
    mode: StoreMode,
    zstd_level: i32,
    signer: fn(&[u8]) -> Signature,
    /// Shared by clones of this handle.
    syncs: Arc<DirectorySyncs>,
    /// `Some` when `put`s are staged until the next flush (shared by clones).
    staging: Option<Arc<Staging>>,
    /// `Some` for a packed store (format 2): every operation goes there.
    packed: Option<Packed>,
    /// For a reader of a file-layout store: the packed layout, once an
    /// upgrade by a writer has made the store packed (shared by clones).
    upgraded: Arc<OnceLock<Packed>>,
}

/// How a candidate block at a body's location compares with the body.
enum Candidate {
    /// The block holds this body (by the mode's standard): reference it.
    Matches {
        block_bytes: Vec<u8>,
        header: BlockHeader,
        data_offset: usize,
    },
    /// A different body, or an unreadable block: look further.
    Differs,
}

impl PageStore {
    /// Opens the store at `root`, creating it if absent. Removes temporary
    /// files left by interrupted writes anywhere in the store.
    pub fn open(root: &Path, config: StoreConfig) -> Result<PageStore> {
        Self::open_with_signer(root, config, signature_of)
    }

    /// [`PageStore::open`] with another signature function, for tests that
    /// need collisions (a one-bit signature, say). A store must always be
    /// opened with the same function.
    #[doc(hidden)]
    pub fn open_with_signer(
        root: &Path,
        config: StoreConfig,
        signer: fn(&[u8]) -> Signature,
    ) -> Result<PageStore> {
        if !zstd::compression_level_range().contains(&config.zstd_level) {
            let range = zstd::compression_level_range();
            return Err(StoreError::InvalidConfig {
                root: root.to_path_buf(),
                reason: format!(
                    "zstd level {} is outside {}..={}",
                    config.zstd_level,
                    range.start(),
                    range.end()
                ),
            });
        }
        create_directory_durably(&DirectorySyncs::immediate(), root)?;
        let _root_lock =
            DirectoryLock::acquire(root).map_err(|source| StoreError::io("lock", root, source))?;
        // A new packed store gets its index before `store.json` names the
        // format, so that a reader never finds the one without the other.
        let new = !root.join(STORE_DESCRIPTION_FILE_NAME).exists();
        if new && config.format == StoreFormat::Packed {
            Packed::open(root, config.volumes, true)?;
        }
        let layout = load_or_create_layout(root, &config)?;
        remove_stale_temporary_files(root)?;
        let mut store = PageStore {
            root: root.to_path_buf(),
            layout,
            mode: config.mode,
            zstd_level: config.zstd_level,
            signer,
            syncs: Arc::new(DirectorySyncs::immediate()),
            staging: None,
            packed: None,
            upgraded: Arc::default(),
        };
        for volume in 0..layout.volumes {
            let volume_directory = store.volume_directory(volume);
            create_directory_durably(&DirectorySyncs::immediate(), &volume_directory)?;
            remove_temporary_files_in_tree(&volume_directory)?;
        }
        if layout.is_packed() {
            store.packed = Some(Packed::open(root, layout.volumes, true)?);
            store.finish_upgrade()?;
        } else if config.format == StoreFormat::Packed {
            store = store.upgrade_to_packed()?;
        }
        Ok(store)
    }

    /// Opens an existing store for reading only: nothing is created or
    /// cleaned, so a reader (the search server) can open it while `index`
    /// writes to it.
    pub fn open_for_reading(root: &Path, config: StoreConfig) -> Result<PageStore> {
        let description = root.join(STORE_DESCRIPTION_FILE_NAME);
        if !description.is_file() {
            return Err(StoreError::io(
                "open",
                description,
                io::Error::new(io::ErrorKind::NotFound, "no page store here"),
            ));
        }
        let layout = load_or_create_layout(root, &config)?;
        let packed = layout
            .is_packed()
            .then(|| Packed::open(root, layout.volumes, false))
            .transpose()?;
        Ok(PageStore {
            root: root.to_path_buf(),
            layout,
            mode: config.mode,
            zstd_level: config.zstd_level,
            signer: signature_of,
            syncs: Arc::new(DirectorySyncs::immediate()),
            staging: None,
            packed,
            upgraded: Arc::default(),
        })
    }

    /// Defers the directory fsyncs of this handle (and its clones) to the
    /// next [`PageStore::flush`]. Every block's contents are still fsynced
    /// before it is renamed into place, so no block is ever torn; what waits
    /// is the durability of the renames and removals themselves. A caller
    /// that records elsewhere that a write happened (a journal of
    /// references) must call `flush` first. Used by ingest, where one flush
    /// per batch replaces thousands of directory fsyncs.
    pub fn defer_directory_syncs(mut self) -> PageStore {
        self.syncs = Arc::new(DirectorySyncs::deferred());
        self
    }

    /// Besides deferring directory syncs, holds the blocks `put` writes or
    /// re-references in memory until the next [`PageStore::flush`], which
    /// writes them all with two syncs per file system instead of an fsync
    /// each (see `staging.rs`). A put that is never flushed is never
    /// written: a caller journals the keys of a batch only after its flush.
    /// Every operation but `put` flushes first. The handle must be the store's
    /// only writing process (ingest holds the data directory's lock).
    pub fn stage_writes(self) -> PageStore {
        let mut store = self.defer_directory_syncs();
        match store.packed.take() {
            Some(packed) => store.packed = Some(packed.staged()),
            None => store.staging = Some(Arc::new(Staging::default())),
        }
        store
    }

    /// Writes the staged blocks and makes every deferred change durable
    /// (see [`PageStore::defer_directory_syncs`] and
    /// [`PageStore::stage_writes`]); returns how many directories were
    /// waiting. Does nothing for a handle that writes and syncs at once.
    pub fn flush(&self) -> Result<usize> {
        if self.packed.is_some() {
            return self.packed_flush();
        }
        match &self.staging {
            Some(staging) => staging.flush(&self.syncs, &self.root),
            None => self.syncs.flush(&self.root),
        }
    }

    /// For a read through a staging handle: the gate, shared, once nothing
    /// is staged (flushing first if something is).
    fn settled(&self) -> Result<Option<staging::Shared<'_>>> {
        self.staging
            .as_ref()
            .map(|staging| staging.enter_settled(&self.syncs, &self.root))
            .transpose()
    }

    /// For a reference change through a staging handle: the gate, held
    /// exclusively, once everything staged is written.
    fn exclusive(&self) -> Result<Option<staging::Exclusive<'_>>> {
        self.staging
            .as_ref()
            .map(|staging| staging.enter_exclusively(&self.syncs, &self.root))
            .transpose()
    }

    /// The directory the store lives in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The layout recorded in `store.json`.
    pub fn layout(&self) -> StoreLayout {
        self.layout
    }

    /// The store mode of this handle.
    pub fn mode(&self) -> StoreMode {
        self.mode
    }

    /// The signature this store gives `body`.
    pub fn signature(&self, body: &[u8]) -> Signature {
        (self.signer)(body)
    }

    /// Stores one reference to `body`: references an existing block if the
    /// mode finds one holding it, writes a new block otherwise.
    pub fn put(&self, body: &[u8]) -> Result<PutOutcome> {
        if self.packed.is_some() {
            return self.packed_put(body);
        }
        if let Some(staging) = &self.staging {
            return self.put_staged(staging, body);
        }
        let (signature, volume, location, _lock) = self.locate_and_lock(body)?;
        let existing_overflows = existing_overflow_indices(&location)?;

        if self.mode != StoreMode::ForceNew {
            for &overflow in &existing_overflows {
                let Candidate::Matches {
                    block_bytes,
                    header,
                    data_offset,
                } = self.examine_candidate(&location, overflow, body)?
                else {
                    continue;
                };
                let references = one_more_reference(&location, overflow, &header)?;
                let stored_size = rewrite_references(
                    &self.syncs,
                    &location,
                    overflow,
                    header,
                    references,
                    &block_bytes[data_offset..],
                )?;
                return Ok(PutOutcome {
                    key: ContentKey {
                        signature,
                        volume,
                        overflow,
                    },
                    stored_new: false,
                    original_size: header.original_size,
                    stored_size,
                });
            }
        }

        let (overflow, header, data) = self.new_block(&location, &existing_overflows, body)?;
        let file_name = location.block_file_name(overflow);
        let header = header.encode();
        write_file_atomically(
            &self.syncs,
            &location.directory,
            &file_name,
            &[&header, &data],
        )?;
        Ok(PutOutcome {
            key: ContentKey {
                signature,
                volume,
                overflow,
            },
            stored_new: true,
            original_size: body.len() as u64,
            stored_size: (header.len() + data.len()) as u64,
        })
    }

    /// Where `body` belongs (its signature, volume and location), with the
    /// location's directory created and locked.
    fn locate_and_lock(
        &self,
        body: &[u8],
    ) -> Result<(Signature, u16, BlockLocation, DirectoryLock)> {
        let signature = (self.signer)(body);
        let volume = self.volume_of(signature);
        let location =
            BlockLocation::new(&self.volume_directory(volume), signature, self.layout.depth);
        create_directory_durably(&self.syncs, &location.directory)?;
        let lock = DirectoryLock::acquire(&location.directory)
            .map_err(|source| StoreError::io("lock", &location.directory, source))?;
        Ok((signature, volume, location, lock))
    }

    /// [`PageStore::put`] on a staging handle: decides as `put` does, from
    /// the blocks on disk and those staged at the location, and stages the
    /// new block or the new reference count.
    fn put_staged(&self, staging: &Staging, body: &[u8]) -> Result<PutOutcome> {
        let _gate = staging.enter(&self.root)?;
        let (signature, volume, location, _lock) = self.locate_and_lock(body)?;
        let mut overflows =
            staging.overflows_on_disk(&location.directory, location.leaf_key(), || {
                list_blocks(&location.directory, self.layout.depth)
            })?;
        let key = (volume, signature.0);
        let mut staged = staging.take(key);
        overflows.extend(staged.keys().copied());
        overflows.sort_unstable();
        overflows.dedup();
        let outcome = self.stage_put(&location, signature, volume, &overflows, &mut staged, body);
        staging.restore(key, staged);
        outcome
    }

    /// The decision of a staged put, `staged` being the location's staged
    /// blocks and `overflows` every index taken on disk or staged.
    fn stage_put(
        &self,
        location: &BlockLocation,
        signature: Signature,
        volume: u16,
        overflows: &[u32],
        staged: &mut StagedAtLocation,
        body: &[u8],
    ) -> Result<PutOutcome> {
        let outcome = |overflow: u32, block: &StagedBlock, stored_new: bool| PutOutcome {
            key: ContentKey {
                signature,
                volume,
                overflow,
            },
            stored_new,
            original_size: block.header.original_size,
            stored_size: (block.header.encode().len() + block.data.len()) as u64,
        };
        if self.mode != StoreMode::ForceNew {
            for &overflow in overflows {
                if let Some(block) = staged.get_mut(&overflow) {
                    if !self.staged_block_holds(block, body) {
                        continue;
                    }
                    block.header.references =
                        one_more_reference(location, overflow, &block.header)?;
                    return Ok(outcome(overflow, block, false));
                }
                let Candidate::Matches {
                    mut block_bytes,
                    header,
                    data_offset,
                } = self.examine_candidate(location, overflow, body)?
                else {
                    continue;
                };
                let references = one_more_reference(location, overflow, &header)?;
                let block = StagedBlock {
                    directory: location.directory.clone(),
                    file_name: location.block_file_name(overflow),
                    name: (location.leaf_key(), overflow),
                    header: BlockHeader {
                        references,
                        ..header
                    },
                    data: block_bytes.split_off(data_offset),
                };
                let result = outcome(overflow, &block, false);
                staged.insert(overflow, block);
                return Ok(result);
            }
        }
        let (overflow, header, data) = self.new_block(location, overflows, body)?;
        let block = StagedBlock {
            directory: location.directory.clone(),
            file_name: location.block_file_name(overflow),
            name: (location.leaf_key(), overflow),
            header,
            data,
        };
        let result = outcome(overflow, &block, true);
        staged.insert(overflow, block);
        Ok(result)
    }

    /// A new block for `body` at the lowest overflow index not in
    /// `overflows` (sorted): the index, the header and the data.
    fn new_block(
        &self,
        location: &BlockLocation,
        overflows: &[u32],
        body: &[u8],
    ) -> Result<(u32, BlockHeader, Vec<u8>)> {
        let overflow = lowest_free_overflow(overflows).ok_or_else(|| StoreError::Io {
            action: "find a free overflow index at",
            path: location.block_path(0),
            source: io::Error::other("every overflow index is taken"),
        })?;
        let (compression, data) =
            encode_data(body, self.zstd_level).map_err(|source| StoreError::Compression {
                path: location.block_path(overflow),
                source,
            })?;
        let header = BlockHeader {
            original_size: body.len() as u64,
            compression,
            references: 1,
        };
        Ok((overflow, header, data))
    }

    /// Whether a staged block holds `body` under this store's mode.
    fn staged_block_holds(&self, block: &StagedBlock, body: &[u8]) -> bool {
        if block.header.original_size != body.len() as u64 {
            return false;
        }
        match self.mode {
            StoreMode::Compare => {
                decode_data(&block.header, &block.data).is_ok_and(|stored| stored == body)
            }
            _ => true,
        }
    }

    /// Adds one reference to the existing block `key` (a WARC revisit record
    /// pointing at a stored payload, say). Returns the new count.
    pub fn add_reference(&self, key: &ContentKey) -> Result<u64> {
        if self.packed.is_some() {
            return self.packed_add_reference(key);
        }
        let _gate = self.exclusive()?;
        let location = self.location_of(key)?;
        let _lock = lock_existing_directory(&location, key)?;
        let path = location.block_path(key.overflow);
        let block_bytes = read_whole_file(&path)?.ok_or_else(|| StoreError::NotFound {
            key: *key,
            path: path.clone(),
        })?;
        let (header, data_offset) = parse_block_for_rewrite(&path, &block_bytes)?;
        let references = header
            .references
            .checked_add(1)
            .ok_or(StoreError::ReferenceCountOverflow { path })?;
        rewrite_references(
            &self.syncs,
            &location,
            key.overflow,
            header,
            references,
            &block_bytes[data_offset..],
        )?;
        Ok(references)
    }

    /// Reads the body of block `key`.
    pub fn get(&self, key: &ContentKey) -> Result<Vec<u8>> {
        if self.packed.is_some() {
            return self.packed_get(key);
        }
        if let Some(store) = self.upgraded_view() {
            return store.packed_get(key);
        }
        match self.files_get(key) {
            Err(error) if error.is_not_found() => match self.reopen_if_upgraded()? {
                Some(store) => store.packed_get(key),
                None => Err(error),
            },
            other => other,
        }
    }

    fn files_get(&self, key: &ContentKey) -> Result<Vec<u8>> {
        let _gate = self.settled()?;
        let location = self.location_of(key)?;
        let path = location.block_path(key.overflow);
        let block_bytes = read_whole_file(&path)?.ok_or_else(|| StoreError::NotFound {
            key: *key,
            path: path.clone(),
        })?;
        let (header, data_offset) =
            parse_header(&block_bytes).map_err(|reason| StoreError::CorruptBlock {
                path: path.clone(),
                reason,
            })?;
        decode_data(&header, &block_bytes[data_offset..])
            .map_err(|reason| StoreError::CorruptBlock { path, reason })
    }

    /// The reference count of block `key`.
    pub fn references(&self, key: &ContentKey) -> Result<u64> {
        if self.packed.is_some() {
            return self.packed_references(key);
        }
        if let Some(store) = self.upgraded_view() {
            return store.packed_references(key);
        }
        match self.files_references(key) {
            Err(error) if error.is_not_found() => match self.reopen_if_upgraded()? {
                Some(store) => store.packed_references(key),
                None => Err(error),
            },
            other => other,
        }
    }

    fn files_references(&self, key: &ContentKey) -> Result<u64> {
        let _gate = self.settled()?;
        let location = self.location_of(key)?;
        let path = location.block_path(key.overflow);
        let Some((header, _file_size)) = read_header_only(&path)? else {
            return Err(StoreError::NotFound { key: *key, path });
        };
        Ok(header.references)
    }

    /// Takes one reference away from block `key`, removing the block with
    /// its last reference.
    pub fn delete(&self, key: &ContentKey) -> Result<DeleteOutcome> {
        if self.packed.is_some() {
            return self.packed_delete(key);
        }
        let _gate = self.exclusive()?;
        let location = self.location_of(key)?;
        let _lock = lock_existing_directory(&location, key)?;
        let path = location.block_path(key.overflow);
        let block_bytes = read_whole_file(&path)?.ok_or_else(|| StoreError::NotFound {
            key: *key,
            path: path.clone(),
        })?;
        let (header, data_offset) = parse_block_for_rewrite(&path, &block_bytes)?;
        debug_assert!(header.references >= 1, "parse_header rejects a zero count");
        if header.references <= 1 {
            if let Some(staging) = &self.staging {
                staging.forget_listing(&location.directory);
            }
            remove_file_durably(
                &self.syncs,
                &location.directory,
                &location.block_file_name(key.overflow),
            )?;
            return Ok(DeleteOutcome::Removed);
        }
        let remaining = header.references - 1;
        rewrite_references(
            &self.syncs,
            &location,
            key.overflow,
            header,
            remaining,
            &block_bytes[data_offset..],
        )?;
        Ok(DeleteOutcome::Decremented { remaining })
    }

    /// Totals every block of the store's walk. Reads only headers (the
    /// index, in the packed layout).
    pub fn stats(&self) -> Result<StoreStats> {
        let mut stats = StoreStats::default();
        for block in self.walk()?.blocks {
            match block.header {
                Ok(facts) => {
                    stats.blocks += 1;
                    stats.references = stats.references.saturating_add(facts.references);
                    stats.original_bytes = stats.original_bytes.saturating_add(facts.original_size);
                    stats.referenced_bytes = stats
                        .referenced_bytes
                        .saturating_add(facts.original_size.saturating_mul(facts.references));
                    stats.stored_bytes = stats.stored_bytes.saturating_add(facts.file_size);
                }
                Err(reason) => {
                    tracing::warn!(path = %block.path.display(), %reason, "corrupt block left out of the store statistics");
                    stats.corrupt_blocks += 1;
                }
            }
        }
        Ok(stats)
    }

    fn volume_of(&self, signature: Signature) -> u16 {
        let volume = signature.0 % u128::from(self.layout.volumes);
        // The remainder is below `volumes`, a u16.
        volume as u16
    }

    fn volume_directory(&self, volume: u16) -> PathBuf {
        debug_assert!(volume < self.layout.volumes);
        self.root.join(format!("vol-{volume}"))
    }

    /// An error for a key naming a volume this store does not have.
    fn check_volume(&self, key: &ContentKey) -> Result<()> {
        if key.volume >= self.layout.volumes {
            return Err(StoreError::VolumeOutOfRange {
                key: *key,
                volume: key.volume,
                volumes: self.layout.volumes,
                root: self.root.clone(),
            });
        }
        Ok(())
    }

    fn location_of(&self, key: &ContentKey) -> Result<BlockLocation> {
        self.check_volume(key)?;
        Ok(BlockLocation::new(
            &self.volume_directory(key.volume),
            key.signature,
            self.layout.depth,
        ))
    }

    /// Decides whether block `overflow` at `location` already holds `body`
    /// under this store's mode. The caller holds the directory lock.
    fn examine_candidate(
        &self,
        location: &BlockLocation,
        overflow: u32,
        body: &[u8],
    ) -> Result<Candidate> {
        let path = location.block_path(overflow);
        // Regular mode decides on the header alone; read the rest only on a match.
        if self.mode == StoreMode::Regular {
            match read_header_only(&path) {
                Ok(Some((header, _))) if header.original_size == body.len() as u64 => {}
                Ok(_) => return Ok(Candidate::Differs),
                Err(StoreError::CorruptBlock { path, reason }) => {
                    tracing::warn!(path = %path.display(), %reason, "corrupt block at a body's location skipped; the body goes to another block");
                    return Ok(Candidate::Differs);
                }
                Err(error) => return Err(error),
            }
        }
        let Some(block_bytes) = read_whole_file(&path)? else {
            return Ok(Candidate::Differs);
        };
        let (header, data_offset) = match parse_header(&block_bytes) {
            Ok(parsed) => parsed,
            Err(reason) => {
                tracing::warn!(path = %path.display(), %reason, "corrupt block at a body's location skipped; the body goes to another block");
                return Ok(Candidate::Differs);
            }
        };
        if header.original_size != body.len() as u64 {
            return Ok(Candidate::Differs);
        }
        if self.mode == StoreMode::Compare {
            match decode_data(&header, &block_bytes[data_offset..]) {
                Ok(stored_body) if stored_body == body => {}
                Ok(_) => return Ok(Candidate::Differs),
                Err(reason) => {
                    tracing::warn!(path = %path.display(), %reason, "corrupt block at a body's location skipped; the body goes to another block");
                    return Ok(Candidate::Differs);
                }
            }
        }
        Ok(Candidate::Matches {
            block_bytes,
            header,
            data_offset,
        })
    }
}

/// Writes `store.json` atomically and durably.
fn write_layout(root: &Path, layout: &StoreLayout) -> Result<()> {
    let path = root.join(STORE_DESCRIPTION_FILE_NAME);
    let mut json =
        serde_json::to_vec_pretty(layout).map_err(|error| StoreError::InvalidDescription {
            path,
            reason: error.to_string(),
        })?;
    json.push(b'\n');
    write_file_atomically(
        &DirectorySyncs::immediate(),
        root,
        STORE_DESCRIPTION_FILE_NAME,
        &[&json],
    )
}

/// Reads `store.json`, or writes it from `config` if the store is new. The
/// caller holds the root lock.
fn load_or_create_layout(root: &Path, config: &StoreConfig) -> Result<StoreLayout> {
    let description_path = root.join(STORE_DESCRIPTION_FILE_NAME);
    let configured = StoreLayout {
        format_version: match config.format {
            StoreFormat::Packed => STORE_FORMAT_VERSION,
            StoreFormat::Files => FILES_FORMAT_VERSION,
        },
        volumes: config.volumes,
        depth: config.depth,
    };
    let text = match fs::read(&description_path) {
        Ok(text) => text,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            configured
                .validate()
                .map_err(|reason| StoreError::InvalidConfig {
                    root: root.to_path_buf(),
                    reason,
                })?;
            write_layout(root, &configured)?;
            tracing::info!(root = %root.display(), volumes = configured.volumes, depth = configured.depth, packed = configured.is_packed(), "created a new page store");
            return Ok(configured);
        }
        Err(error) => return Err(StoreError::io("read", description_path, error)),
    };
    let stored: StoreLayout =
        serde_json::from_slice(&text).map_err(|error| StoreError::InvalidDescription {
            path: description_path.clone(),
            reason: error.to_string(),
        })?;
    stored
        .validate()
        .map_err(|reason| StoreError::InvalidDescription {
            path: description_path.clone(),
            reason,
        })?;
    if stored.volumes != configured.volumes || stored.depth != configured.depth {
        tracing::warn!(
            path = %description_path.display(),
            stored_volumes = stored.volumes,
            stored_depth = stored.depth,
            configured_volumes = configured.volumes,
            configured_depth = configured.depth,
            "the store's recorded layout differs from the configuration; using the recorded layout"
        );
    }
    Ok(stored)
}

/// Removes stale temporary files in every directory under `directory`,
/// taking each directory's lock before touching it.
fn remove_temporary_files_in_tree(directory: &Path) -> Result<()> {
    let entries =
        fs::read_dir(directory).map_err(|source| StoreError::io("list", directory, source))?;
    let mut has_temporary_files = false;
    for entry in entries {
        let entry = entry.map_err(|source| StoreError::io("list", directory, source))?;
        let path = entry.path();
        let file_type = entry
            .file_type()
            .map_err(|source| StoreError::io("inspect", &path, source))?;
        if file_type.is_dir() {
            remove_temporary_files_in_tree(&path)?;
        } else if entry
            .file_name()
            .to_str()
            .is_some_and(is_temporary_file_name)
        {
            has_temporary_files = true;
        }
    }
    if has_temporary_files {
        let _lock = DirectoryLock::acquire(directory)
            .map_err(|source| StoreError::io("lock", directory, source))?;
        remove_stale_temporary_files(directory)?;
    }
    Ok(())
}

/// Locks the leaf directory of `key`, which must exist.
fn lock_existing_directory(location: &BlockLocation, key: &ContentKey) -> Result<DirectoryLock> {
    DirectoryLock::acquire(&location.directory).map_err(|source| {
        if source.kind() == io::ErrorKind::NotFound {
            return StoreError::NotFound {
                key: *key,
                path: location.block_path(key.overflow),
            };
        }
        StoreError::io("lock", &location.directory, source)
    })
}

/// The overflow indices of the blocks at `location`, ascending, gaps
/// included. Removes stale temporary files seen on the way (the caller holds
/// the directory lock).
fn existing_overflow_indices(location: &BlockLocation) -> Result<Vec<u32>> {
    let directory = &location.directory;
    let entries =
        fs::read_dir(directory).map_err(|source| StoreError::io("list", directory, source))?;
    let mut overflows = Vec::new();
    let mut saw_temporary_file = false;
    for entry in entries {
        let entry = entry.map_err(|source| StoreError::io("list", directory, source))?;
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        if let Some(overflow) = location.overflow_of(file_name) {
            overflows.push(overflow);
        } else if is_temporary_file_name(file_name) {
            saw_temporary_file = true;
        }
    }
    if saw_temporary_file {
        remove_stale_temporary_files(directory)?;
    }
    overflows.sort_unstable();
    Ok(overflows)
}

/// Every block file of `directory` as (leaf number, overflow index).
fn list_blocks(directory: &Path, depth: u8) -> Result<staging::Listing> {
    let entries = match fs::read_dir(directory) {
        Ok(entries) => entries,
        Err(source) => return Err(StoreError::io("list", directory, source)),
    };
    let mut listing = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| StoreError::io("list", directory, source))?;
        if let Some(name) = entry
            .file_name()
            .to_str()
            .and_then(|name| location::parse_block_file_name(name, depth))
        {
            listing.push(name);
        }
    }
    Ok(listing)
}

/// The reference count of block `overflow` at `location` after one more.
fn one_more_reference(
    location: &BlockLocation,
    overflow: u32,
    header: &BlockHeader,
) -> Result<u64> {
    header
        .references
        .checked_add(1)
        .ok_or_else(|| StoreError::ReferenceCountOverflow {
            path: location.block_path(overflow),
        })
}

/// The smallest index not in `sorted_overflows`; None if all are taken.
fn lowest_free_overflow(sorted_overflows: &[u32]) -> Option<u32> {
    debug_assert!(sorted_overflows.windows(2).all(|pair| pair[0] < pair[1]));
    let mut candidate: u32 = 0;
    for &overflow in sorted_overflows {
        if overflow != candidate {
            break;
        }
        candidate = candidate.checked_add(1)?;
    }
    Some(candidate)
}

/// Parses a block about to get a new reference count. Besides the header,
/// checks what is cheap to check: the size of uncompressed data.
fn parse_block_for_rewrite(path: &Path, block_bytes: &[u8]) -> Result<(BlockHeader, usize)> {
    let (header, data_offset) =
        parse_header(block_bytes).map_err(|reason| StoreError::CorruptBlock {
            path: path.to_path_buf(),
            reason,
        })?;
    let data_size = (block_bytes.len() - data_offset) as u64;
    if header.compression == BlockCompression::None && data_size != header.original_size {
        return Err(StoreError::CorruptBlock {
            path: path.to_path_buf(),
            reason: format!(
                "the data is {data_size} bytes but original-size is {}",
                header.original_size
            ),
        });
    }
    Ok((header, data_offset))
}

/// Atomically replaces block `overflow` with the same data under a header
/// carrying `references`. Returns the new file size. The caller holds the
/// directory lock.
fn rewrite_references(
    syncs: &DirectorySyncs,
    location: &BlockLocation,
    overflow: u32,
    header: BlockHeader,
    references: u64,
    data: &[u8],
) -> Result<u64> {
    debug_assert!(
        references >= 1,
        "a block with no references is removed, not rewritten"
    );
    let new_header = BlockHeader {
        references,
        ..header
    }
    .encode();
    write_file_atomically(
        syncs,
        &location.directory,
        &location.block_file_name(overflow),
        &[&new_header, data],
    )?;
    Ok((new_header.len() + data.len()) as u64)
}

/// The whole file, or None if it does not exist.
fn read_whole_file(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(StoreError::io("read", path, error)),
    }
}

/// The header of the block at `path` and the file's size, or None if there
/// is no such file. Reads at most [`MAX_HEADER_BYTES`].
fn read_header_only(path: &Path) -> Result<Option<(BlockHeader, u64)>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(StoreError::io("open", path, error)),
    };
    let file_size = file
        .metadata()
        .map_err(|source| StoreError::io("inspect", path, source))?
        .len();
    let mut prefix = Vec::with_capacity(MAX_HEADER_BYTES);
    file.take(MAX_HEADER_BYTES as u64)
        .read_to_end(&mut prefix)
        .map_err(|source| StoreError::io("read", path, source))?;
    let (header, _data_offset) =
        parse_header(&prefix).map_err(|reason| StoreError::CorruptBlock {
            path: path.to_path_buf(),
            reason,
        })?;
    Ok(Some((header, file_size)))
}
