//! The packed layout (format 2): gomes-et-al-2006's volumes holding their
//! blocks packed, not a file per block.
//!
//! ```text
//! <root>/store.json              {"format_version":2,"volumes":4,"depth":2}
//! <root>/index/data.mdb          signature and overflow index -> where the block is
//! <root>/index/lock.mdb          LMDB's reader table
//! <root>/vol-<v>/pack-<n>        append-only pack files of volume v (n: 8 digits)
//! ```
//!
//! Content keys, store modes, overflow blocks and fake duplicates are those
//! of the file layout (see the module above): a body still goes to volume
//! `signature mod volumes`, and the key `<32 hex>-<v>[-<k>]` still names it.
//! What changes is where the block's bytes live. A pack file is a sequence
//! of records, each a plain-text header, an empty line and the block's data:
//!
//! ```text
//! mirrorscope-packed-block 1
//! key: adee2232af3a4355…-1
//! original-size: 12345
//! compression: zstd
//! data-size: 3456
//!
//! <3456 bytes: the body, zstd-compressed or as is>
//! ```
//!
//! The index, an LMDB database, maps each key to its pack, the record's
//! offset and lengths, the original size and compression, and the reference
//! count; a second table records each pack's volume, its *committed length*
//! and its bytes no key points to any more. Reference counts live in the
//! index only, so a new reference is one index update, not a rewrite.
//!
//! # Crashes
//!
//! A write appends records at the pack's committed length, syncs the pack,
//! then commits the index (LMDB syncs its own file): a crash before the
//! commit leaves bytes past the committed length that no key points to.
//! Readers never look past it; the next writer writes over them, and
//! opening the store for writing truncates them away. Nothing a key names
//! is ever overwritten, so no block is ever torn.
//!
//! # Processes
//!
//! LMDB lets any number of processes read while one writes, each reader
//! seeing the last commit: the search server reads bodies while `index`
//! writes. Writers are serialized by LMDB's write lock; a staging handle
//! (ingest's) decides its puts against the committed index and must be its
//! store's only writer, as with the file layout.
//!
//! # Space
//!
//! A block whose last reference goes leaves its record in the pack as dead
//! bytes, counted per pack. [`PageStore::compact`] copies the live records of
//! packs that are at least half dead into the volume's current pack and
//! removes them.

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::mem::ManuallyDrop;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock, Weak};

use heed::types::Bytes;
use heed::{Database, Env, EnvOpenOptions, RoTxn, RwTxn, WithoutTls};

use super::block::{decode_data, encode_data, BlockCompression, BlockHeader};
use super::durable::sync_directory;
use super::error::{Result, StoreError};
use super::key::{ContentKey, Signature, SIGNATURE_BYTES};
use super::{BlockFacts, DeleteOutcome, PageStore, PutOutcome, StoreMode};
use super::{StoreWalk, WalkedBlock};

mod upgrade;

/// Folder of the index under the store's root.
pub(super) const INDEX_DIRECTORY: &str = "index";

/// A pack stops taking records once it holds this many bytes.
pub(super) const PACK_BYTES: u64 = 1 << 30;

/// The virtual size LMDB maps for the index: room for hundreds of millions
/// of blocks. Only what is written takes space on disk.
const MAP_BYTES: usize = 64 << 30;

/// Readers at a time, over every process: ingest's threads and the server's.
const MAX_READERS: u32 = 1024;

const RECORD_MAGIC: &str = "mirrorscope-packed-block";
const RECORD_VERSION: u32 = 1;

/// Longest record header: the magic, a key and three numbers.
const MAX_RECORD_HEADER_BYTES: usize = 256;

/// Bytes of an index key: the signature (big-endian) then the overflow index
/// (big-endian), so that a signature's blocks are adjacent and in order.
const INDEX_KEY_BYTES: usize = SIGNATURE_BYTES + 4;

/// Where one block is and what it holds, as the index records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) pack: u32,
    /// Offset of the record (its header) in the pack.
    pub(super) offset: u64,
    pub(super) header_len: u32,
    pub(super) data_len: u64,
    pub(super) original_size: u64,
    pub(super) compression: BlockCompression,
    pub(super) references: u64,
}

const ENTRY_BYTES: usize = 4 + 8 + 4 + 8 + 8 + 8 + 1;

impl Entry {
    fn encode(&self) -> [u8; ENTRY_BYTES] {
        let mut bytes = [0u8; ENTRY_BYTES];
        bytes[0..4].copy_from_slice(&self.pack.to_le_bytes());
        bytes[4..12].copy_from_slice(&self.offset.to_le_bytes());
        bytes[12..16].copy_from_slice(&self.header_len.to_le_bytes());
        bytes[16..24].copy_from_slice(&self.data_len.to_le_bytes());
        bytes[24..32].copy_from_slice(&self.original_size.to_le_bytes());
        bytes[32..40].copy_from_slice(&self.references.to_le_bytes());
        bytes[40] = match self.compression {
            BlockCompression::None => 0,
            BlockCompression::Zstd => 1,
        };
        bytes
    }

    fn decode(bytes: &[u8]) -> Option<Entry> {
        if bytes.len() != ENTRY_BYTES {
            return None;
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        Some(Entry {
            pack: u32::from_le_bytes(bytes[0..4].try_into().unwrap()),
            offset: u64_at(4),
            header_len: u32::from_le_bytes(bytes[12..16].try_into().unwrap()),
            data_len: u64_at(16),
            original_size: u64_at(24),
            references: u64_at(32),
            compression: match bytes[40] {
                0 => BlockCompression::None,
                1 => BlockCompression::Zstd,
                _ => return None,
            },
        })
    }

    /// The record's length in its pack, header included.
    pub(super) fn record_len(&self) -> u64 {
        u64::from(self.header_len) + self.data_len
    }

    fn block_header(&self) -> BlockHeader {
        BlockHeader {
            original_size: self.original_size,
            compression: self.compression,
            references: self.references.max(1),
        }
    }
}

/// One pack file as the index records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PackInfo {
    volume: u16,
    /// Bytes written and committed; anything after is a crashed write's.
    committed: u64,
    /// Committed bytes of records no key points to.
    dead: u64,
}

const PACK_INFO_BYTES: usize = 2 + 8 + 8;

impl PackInfo {
    fn encode(&self) -> [u8; PACK_INFO_BYTES] {
        let mut bytes = [0u8; PACK_INFO_BYTES];
        bytes[0..2].copy_from_slice(&self.volume.to_le_bytes());
        bytes[2..10].copy_from_slice(&self.committed.to_le_bytes());
        bytes[10..18].copy_from_slice(&self.dead.to_le_bytes());
        bytes
    }

    fn decode(bytes: &[u8]) -> Option<PackInfo> {
        (bytes.len() == PACK_INFO_BYTES).then(|| PackInfo {
            volume: u16::from_le_bytes(bytes[0..2].try_into().unwrap()),
            committed: u64::from_le_bytes(bytes[2..10].try_into().unwrap()),
            dead: u64::from_le_bytes(bytes[10..18].try_into().unwrap()),
        })
    }
}

fn index_key(signature: Signature, overflow: u32) -> [u8; INDEX_KEY_BYTES] {
    let mut bytes = [0u8; INDEX_KEY_BYTES];
    bytes[..SIGNATURE_BYTES].copy_from_slice(&signature.to_be_bytes());
    bytes[SIGNATURE_BYTES..].copy_from_slice(&overflow.to_be_bytes());
    bytes
}

fn decode_index_key(bytes: &[u8]) -> Option<(Signature, u32)> {
    if bytes.len() != INDEX_KEY_BYTES {
        return None;
    }
    let signature = u128::from_be_bytes(bytes[..SIGNATURE_BYTES].try_into().unwrap());
    let overflow = u32::from_be_bytes(bytes[SIGNATURE_BYTES..].try_into().unwrap());
    Some((Signature(signature), overflow))
}

/// The name of pack `pack` in its volume's folder.
pub(super) fn pack_file_name(pack: u32) -> String {
    format!("pack-{pack:08}")
}

/// The pack number a file name names, if it names one.
pub(super) fn parse_pack_file_name(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("pack-")?;
    (digits.len() == 8 && digits.bytes().all(|byte| byte.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// A record's header, blank line included.
fn record_header(key: &ContentKey, header: &BlockHeader, data_len: usize) -> Vec<u8> {
    let compression = match header.compression {
        BlockCompression::None => "none",
        BlockCompression::Zstd => "zstd",
    };
    format!(
        "{RECORD_MAGIC} {RECORD_VERSION}\nkey: {key}\noriginal-size: {}\ncompression: {compression}\ndata-size: {data_len}\n\n",
        header.original_size
    )
    .into_bytes()
}

/// Checks that `header` (a record header, blank line included) is the one
/// `entry` says block `key` has.
fn check_record_header(
    header: &[u8],
    key: &ContentKey,
    entry: &Entry,
) -> std::result::Result<(), String> {
    let expected = record_header(key, &entry.block_header(), entry.data_len as usize);
    if header == expected.as_slice() {
        return Ok(());
    }
    let shown = String::from_utf8_lossy(&header[..header.len().min(MAX_RECORD_HEADER_BYTES)]);
    Err(format!(
        "the record at offset {} is not block {key}'s (its header reads {shown:?})",
        entry.offset
    ))
}

fn index_error(action: &'static str, path: &Path, error: heed::Error) -> StoreError {
    let source = match error {
        heed::Error::Io(source) => source,
        other => io::Error::other(other.to_string()),
    };
    StoreError::io(action, path, source)
}

/// The index of one store, opened once per process: LMDB refuses a second
/// environment on the same files in one process, and every handle of the
/// store in this process shares this one.
pub(super) struct Index {
    env: ManuallyDrop<Env<WithoutTls>>,
    blocks: Database<Bytes, Bytes>,
    packs: Database<Bytes, Bytes>,
    /// The index folder, for messages and the registry.
    path: PathBuf,
}

/// The indexes open in this process, by their canonical folder.
static OPEN_INDEXES: Mutex<BTreeMap<PathBuf, Weak<Index>>> = Mutex::new(BTreeMap::new());

impl Drop for Index {
    fn drop(&mut self) {
        // Close the environment while holding the registry, so that an open
        // of the same folder never meets it half closed.
        let mut open = OPEN_INDEXES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if open
            .get(&self.path)
            .is_some_and(|weak| weak.strong_count() == 0)
        {
            open.remove(&self.path);
        }
        // SAFETY: dropped once, here, and never used again.
        unsafe { ManuallyDrop::drop(&mut self.env) };
    }
}

/// Opens the LMDB environment in `directory`. `read_only_without_locks`
/// is for a process that may not write there: LMDB then keeps no reader
/// table, so a writer in another process could reuse pages a read is still
/// on. Every read is one lookup, and a record whose header does not name its
/// key is refused, so the worst such a race does is fail one read.
fn open_environment(
    directory: &Path,
    read_only_without_locks: bool,
) -> heed::Result<Env<WithoutTls>> {
    let mut options = EnvOpenOptions::new().read_txn_without_tls();
    options
        .map_size(MAP_BYTES)
        .max_dbs(4)
        .max_readers(MAX_READERS);
    if read_only_without_locks {
        // SAFETY: LMDB's flags; the caveat above is the one LMDB documents.
        unsafe { options.flags(heed::EnvFlags::READ_ONLY | heed::EnvFlags::NO_LOCK) };
    }
    // SAFETY: heed's conditions for opening: this process opens the folder
    // once (`OPEN_INDEXES`), and the files are LMDB's own.
    unsafe { options.open(directory) }
}

/// LMDB creates its files readable by their owner only; the data folder's
/// files are readable by everyone who may read the folder (a server running
/// as another user), as tantivy's and the generations' are.
fn share_with_readers(directory: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for name in ["data.mdb", "lock.mdb"] {
        let path = directory.join(name);
        let Ok(metadata) = fs::metadata(&path) else {
            continue;
        };
        let mode = metadata.permissions().mode();
        if mode & 0o044 != 0o044 {
            fs::set_permissions(&path, fs::Permissions::from_mode(mode | 0o044))
                .map_err(|source| StoreError::io("share", &path, source))?;
        }
    }
    Ok(())
}

impl Index {
    /// The index in `directory`, created if `writable` and absent.
    fn open(directory: &Path, writable: bool) -> Result<Arc<Index>> {
        if writable {
            fs::create_dir_all(directory)
                .map_err(|source| StoreError::io("create", directory, source))?;
        }
        let canonical = directory
            .canonicalize()
            .map_err(|source| StoreError::io("open", directory, source))?;
        loop {
            let mut open = OPEN_INDEXES
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some(index) = open.get(&canonical).and_then(Weak::upgrade) {
                return Ok(index);
            }
            let env = match open_environment(&canonical, false) {
                // A reader that may not write the folder (a server running as
                // another user): no reader table, see `open_environment`.
                Err(heed::Error::Io(error))
                    if !writable
                        && matches!(
                            error.kind(),
                            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
                        ) =>
                {
                    open_environment(&canonical, true)
                }
                other => other,
            };
            let env = match env {
                Ok(env) => env,
                // The last handle is closing it on another thread.
                Err(heed::Error::EnvAlreadyOpened) => {
                    drop(open);
                    std::thread::yield_now();
                    continue;
                }
                Err(error) => return Err(index_error("open the index", &canonical, error)),
            };
            let (blocks, packs) = if writable {
                let mut txn = env
                    .write_txn()
                    .map_err(|error| index_error("write", &canonical, error))?;
                let blocks = env
                    .create_database(&mut txn, Some("blocks"))
                    .map_err(|error| index_error("create a table in", &canonical, error))?;
                let packs = env
                    .create_database(&mut txn, Some("packs"))
                    .map_err(|error| index_error("create a table in", &canonical, error))?;
                txn.commit()
                    .map_err(|error| index_error("commit", &canonical, error))?;
                let _ = env.clear_stale_readers();
                share_with_readers(&canonical)?;
                (blocks, packs)
            } else {
                let txn = env
                    .read_txn()
                    .map_err(|error| index_error("read", &canonical, error))?;
                let missing = || {
                    StoreError::io(
                        "open a table in",
                        &canonical,
                        io::Error::new(io::ErrorKind::NotFound, "the index has no such table"),
                    )
                };
                let blocks = env
                    .open_database(&txn, Some("blocks"))
                    .map_err(|error| index_error("open a table in", &canonical, error))?
                    .ok_or_else(missing)?;
                let packs = env
                    .open_database(&txn, Some("packs"))
                    .map_err(|error| index_error("open a table in", &canonical, error))?
                    .ok_or_else(missing)?;
                txn.commit()
                    .map_err(|error| index_error("read", &canonical, error))?;
                (blocks, packs)
            };
            let index = Arc::new(Index {
                env: ManuallyDrop::new(env),
                blocks,
                packs,
                path: canonical.clone(),
            });
            open.insert(canonical, Arc::downgrade(&index));
            return Ok(index);
        }
    }

    fn read(&self) -> Result<RoTxn<'_, WithoutTls>> {
        self.env
            .read_txn()
            .map_err(|error| index_error("read", &self.path, error))
    }

    fn write(&self) -> Result<RwTxn<'_>> {
        self.env
            .write_txn()
            .map_err(|error| index_error("write", &self.path, error))
    }

    fn commit(&self, txn: RwTxn<'_>) -> Result<()> {
        txn.commit()
            .map_err(|error| index_error("commit", &self.path, error))
    }

    fn entry(&self, txn: &RoTxn<'_, WithoutTls>, key: &ContentKey) -> Result<Option<Entry>> {
        let Some(bytes) = self
            .blocks
            .get(txn, &index_key(key.signature, key.overflow))
            .map_err(|error| index_error("read", &self.path, error))?
        else {
            return Ok(None);
        };
        Entry::decode(bytes)
            .map(Some)
            .ok_or_else(|| self.corrupt(key))
    }

    fn corrupt(&self, key: &ContentKey) -> StoreError {
        StoreError::CorruptBlock {
            path: self.path.clone(),
            reason: format!("the index entry of {key} is malformed"),
        }
    }

    /// Every block of `signature`, by overflow index.
    fn entries_of(
        &self,
        txn: &RoTxn<'_, WithoutTls>,
        signature: Signature,
    ) -> Result<Vec<(u32, Entry)>> {
        let prefix = signature.to_be_bytes();
        let mut found = Vec::new();
        let iter = self
            .blocks
            .prefix_iter(txn, &prefix)
            .map_err(|error| index_error("read", &self.path, error))?;
        for item in iter {
            let (key, value) = item.map_err(|error| index_error("read", &self.path, error))?;
            let (_, overflow) = decode_index_key(key).ok_or_else(|| self.malformed_key())?;
            let entry = Entry::decode(value).ok_or_else(|| self.malformed_key())?;
            found.push((overflow, entry));
        }
        Ok(found)
    }

    fn malformed_key(&self) -> StoreError {
        StoreError::CorruptBlock {
            path: self.path.clone(),
            reason: "an index entry is malformed".to_owned(),
        }
    }

    fn put_entry(&self, txn: &mut RwTxn<'_>, key: &ContentKey, entry: &Entry) -> Result<()> {
        self.blocks
            .put(
                txn,
                &index_key(key.signature, key.overflow),
                &entry.encode(),
            )
            .map_err(|error| index_error("write", &self.path, error))
    }

    fn remove_entry(&self, txn: &mut RwTxn<'_>, key: &ContentKey) -> Result<()> {
        self.blocks
            .delete(txn, &index_key(key.signature, key.overflow))
            .map_err(|error| index_error("write", &self.path, error))?;
        Ok(())
    }

    fn packs(&self, txn: &RoTxn<'_, WithoutTls>) -> Result<BTreeMap<u32, PackInfo>> {
        let mut packs = BTreeMap::new();
        let iter = self
            .packs
            .iter(txn)
            .map_err(|error| index_error("read", &self.path, error))?;
        for item in iter {
            let (key, value) = item.map_err(|error| index_error("read", &self.path, error))?;
            let pack = <[u8; 4]>::try_from(key)
                .ok()
                .map(u32::from_be_bytes)
                .zip(PackInfo::decode(value))
                .ok_or_else(|| StoreError::CorruptBlock {
                    path: self.path.clone(),
                    reason: "a pack entry is malformed".to_owned(),
                })?;
            packs.insert(pack.0, pack.1);
        }
        Ok(packs)
    }

    fn put_pack(&self, txn: &mut RwTxn<'_>, pack: u32, info: &PackInfo) -> Result<()> {
        self.packs
            .put(txn, &pack.to_be_bytes(), &info.encode())
            .map_err(|error| index_error("write", &self.path, error))
    }

    fn remove_pack(&self, txn: &mut RwTxn<'_>, pack: u32) -> Result<()> {
        self.packs
            .delete(txn, &pack.to_be_bytes())
            .map_err(|error| index_error("write", &self.path, error))?;
        Ok(())
    }
}

/// A block waiting in a staging handle.
#[derive(Debug)]
struct StagedNew {
    header: BlockHeader,
    data: Vec<u8>,
}

/// What a staging handle holds until its next flush: new blocks, and new
/// references to committed blocks.
#[derive(Debug, Default)]
struct PackedStaging {
    /// Held shared by each put, exclusively by a flush.
    gate: RwLock<()>,
    pending: Mutex<Pending>,
    failed: Mutex<Option<String>>,
}

#[derive(Debug, Default)]
struct Pending {
    new: BTreeMap<(Signature, u32), StagedNew>,
    /// References to add to committed blocks.
    added: HashMap<(Signature, u32), u64>,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.new.is_empty() && self.added.is_empty()
    }

    fn staged_of(&self, signature: Signature) -> impl Iterator<Item = (u32, &StagedNew)> {
        self.new
            .range((signature, 0)..=(signature, u32::MAX))
            .map(|(&(_, overflow), staged)| (overflow, staged))
    }
}

/// The packed layout's part of a [`PageStore`] handle.
#[derive(Clone)]
pub(super) struct Packed {
    index: Arc<Index>,
    /// Pack files open for reading, shared by clones.
    readers: Arc<Mutex<HashMap<u32, Arc<File>>>>,
    staging: Option<Arc<PackedStaging>>,
    pack_bytes: u64,
}

impl std::fmt::Debug for Packed {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Packed")
            .field("index", &self.index.path)
            .field("staging", &self.staging.is_some())
            .finish()
    }
}

impl Packed {
    /// Opens the packed layout under `root`. For writing, creates the index
    /// if absent and cuts what crashed writes left past each pack's
    /// committed length.
    pub(super) fn open(root: &Path, volumes: u16, writable: bool) -> Result<Packed> {
        let index = Index::open(&root.join(INDEX_DIRECTORY), writable)?;
        let packed = Packed {
            index,
            readers: Arc::default(),
            staging: None,
            pack_bytes: PACK_BYTES,
        };
        if writable {
            packed.cut_crashed_writes(root, volumes)?;
        }
        Ok(packed)
    }

    pub(super) fn staged(mut self) -> Packed {
        self.staging = Some(Arc::default());
        self
    }

    #[cfg(test)]
    pub(super) fn with_pack_bytes(mut self, pack_bytes: u64) -> Packed {
        self.pack_bytes = pack_bytes;
        self
    }

    /// Truncates every pack to its committed length and removes pack files
    /// the index does not know (created by a write that never committed),
    /// holding the index's write lock so that no other writer is at work.
    fn cut_crashed_writes(&self, root: &Path, volumes: u16) -> Result<()> {
        let txn = self.index.write()?;
        let packs = self.index.packs(&txn)?;
        for (&pack, info) in &packs {
            let path = pack_path(root, info.volume, pack);
            match fs::metadata(&path) {
                Ok(metadata) if metadata.len() > info.committed => {
                    let file = OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .map_err(|source| StoreError::io("open", &path, source))?;
                    file.set_len(info.committed)
                        .and_then(|()| file.sync_all())
                        .map_err(|source| StoreError::io("truncate", &path, source))?;
                    tracing::info!(path = %path.display(), cut = metadata.len() - info.committed, "cut an interrupted write's bytes from a pack");
                }
                Ok(_) => {}
                Err(error) if error.kind() == io::ErrorKind::NotFound && info.committed == 0 => {}
                Err(source) => return Err(StoreError::io("inspect", &path, source)),
            }
        }
        for volume in 0..volumes {
            let directory = volume_directory(root, volume);
            let entries = match fs::read_dir(&directory) {
                Ok(entries) => entries,
                Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
                Err(source) => return Err(StoreError::io("list", &directory, source)),
            };
            let mut removed = false;
            for entry in entries {
                let entry = entry.map_err(|source| StoreError::io("list", &directory, source))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Some(pack) = parse_pack_file_name(&name) {
                    if !packs.contains_key(&pack) {
                        fs::remove_file(entry.path())
                            .map_err(|source| StoreError::io("remove", entry.path(), source))?;
                        tracing::info!(path = %entry.path().display(), "removed a pack an interrupted write created");
                        removed = true;
                    }
                }
            }
            if removed {
                sync_directory(&directory)?;
            }
        }
        // Nothing written: the transaction only held the lock.
        txn.abort();
        Ok(())
    }

    /// Whether nothing is staged.
    fn nothing_staged(&self) -> bool {
        self.staging.as_ref().is_none_or(|staging| {
            staging
                .pending
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .is_empty()
        })
    }

    /// A pack file opened for reading (kept open for the next read).
    fn reader(&self, root: &Path, volume: u16, pack: u32) -> Result<Arc<File>> {
        let mut readers = self
            .readers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(file) = readers.get(&pack) {
            return Ok(Arc::clone(file));
        }
        let path = pack_path(root, volume, pack);
        let file =
            Arc::new(File::open(&path).map_err(|source| StoreError::io("open", &path, source))?);
        readers.insert(pack, Arc::clone(&file));
        Ok(file)
    }
}

fn volume_directory(root: &Path, volume: u16) -> PathBuf {
    root.join(format!("vol-{volume}"))
}

pub(super) fn pack_path(root: &Path, volume: u16, pack: u32) -> PathBuf {
    volume_directory(root, volume).join(pack_file_name(pack))
}

/// A body that a put found stored, or decided to store.
enum Decision {
    /// A committed block holds it.
    Committed(u32, Entry),
    /// A block staged by this handle holds it.
    Staged(u32),
    /// It needs a new block at this overflow index.
    New(u32),
}

#[cfg(test)]
impl PageStore {
    /// This handle with packs of at most `pack_bytes` (tests of roll-over).
    pub(super) fn with_pack_bytes(mut self, pack_bytes: u64) -> PageStore {
        self.packed = self.packed.map(|packed| packed.with_pack_bytes(pack_bytes));
        self
    }
}

impl PageStore {
    fn packed_handle(&self) -> &Packed {
        self.packed.as_ref().expect("a packed store")
    }

    fn not_found(&self, key: &ContentKey) -> StoreError {
        StoreError::NotFound {
            key: *key,
            path: self.root.join(INDEX_DIRECTORY),
        }
    }

    /// Decides where `body` (signature `signature`) goes: the first block,
    /// committed or staged, holding it under the store's mode, or the
    /// lowest free overflow index.
    fn decide(
        &self,
        packed: &Packed,
        committed: &[(u32, Entry)],
        staged: &[(u32, &StagedNew)],
        signature: Signature,
        body: &[u8],
    ) -> Result<Decision> {
        let volume = self.volume_of(signature);
        let mut taken: Vec<u32> = committed
            .iter()
            .map(|&(overflow, _)| overflow)
            .chain(staged.iter().map(|&(overflow, _)| overflow))
            .collect();
        taken.sort_unstable();
        if self.mode != StoreMode::ForceNew {
            for &overflow in &taken {
                if let Some(&(_, entry)) = committed.iter().find(|(at, _)| *at == overflow) {
                    if entry.original_size != body.len() as u64 {
                        continue;
                    }
                    if self.mode == StoreMode::Compare {
                        let key = ContentKey {
                            signature,
                            volume,
                            overflow,
                        };
                        match self.read_block(packed, &key, &entry) {
                            Ok(stored) if stored == body => {}
                            Ok(_) => continue,
                            Err(StoreError::CorruptBlock { path, reason }) => {
                                tracing::warn!(path = %path.display(), %reason, "corrupt block at a body's signature skipped; the body goes to another block");
                                continue;
                            }
                            Err(error) => return Err(error),
                        }
                    }
                    return Ok(Decision::Committed(overflow, entry));
                }
                if let Some(&(_, block)) = staged.iter().find(|(at, _)| *at == overflow) {
                    if block.header.original_size != body.len() as u64 {
                        continue;
                    }
                    if self.mode == StoreMode::Compare
                        && !decode_data(&block.header, &block.data)
                            .is_ok_and(|stored| stored == body)
                    {
                        continue;
                    }
                    return Ok(Decision::Staged(overflow));
                }
            }
        }
        super::lowest_free_overflow(&taken)
            .map(Decision::New)
            .ok_or_else(|| StoreError::Io {
                action: "find a free overflow index for",
                path: self.root.join(INDEX_DIRECTORY),
                source: io::Error::other(format!("every overflow index of {signature} is taken")),
            })
    }

    fn compress(&self, body: &[u8]) -> Result<(BlockHeader, Vec<u8>)> {
        let (compression, data) =
            encode_data(body, self.zstd_level).map_err(|source| StoreError::Compression {
                path: self.root.join(INDEX_DIRECTORY),
                source,
            })?;
        Ok((
            BlockHeader {
                original_size: body.len() as u64,
                compression,
                references: 1,
            },
            data,
        ))
    }

    /// [`PageStore::put`] on the packed layout.
    pub(super) fn packed_put(&self, body: &[u8]) -> Result<PutOutcome> {
        let packed = self.packed_handle();
        if let Some(staging) = &packed.staging {
            return self.packed_put_staged(packed, staging, body);
        }
        let signature = (self.signer)(body);
        let volume = self.volume_of(signature);
        let index = &packed.index;
        // Compress before taking the write lock: most puts of a new crawl
        // are new bodies.
        let mut compressed = None;
        loop {
            let mut txn = index.write()?;
            let committed = index.entries_of(&txn, signature)?;
            match self.decide(packed, &committed, &[], signature, body)? {
                Decision::Committed(overflow, mut entry) => {
                    let key = ContentKey {
                        signature,
                        volume,
                        overflow,
                    };
                    entry.references = one_more(&entry, index)?;
                    index.put_entry(&mut txn, &key, &entry)?;
                    index.commit(txn)?;
                    return Ok(PutOutcome {
                        key,
                        stored_new: false,
                        original_size: entry.original_size,
                        stored_size: entry.record_len(),
                    });
                }
                Decision::Staged(_) => unreachable!("a direct put stages nothing"),
                Decision::New(overflow) => {
                    let Some((header, data)) = compressed.take() else {
                        drop(txn);
                        compressed = Some(self.compress(body)?);
                        continue;
                    };
                    let key = ContentKey {
                        signature,
                        volume,
                        overflow,
                    };
                    let mut blocks = vec![(key, header, data)];
                    let entries = self.append_blocks(packed, &mut txn, &mut blocks)?;
                    index.commit(txn)?;
                    let entry = entries[0];
                    return Ok(PutOutcome {
                        key,
                        stored_new: true,
                        original_size: entry.original_size,
                        stored_size: entry.record_len(),
                    });
                }
            }
        }
    }

    fn packed_put_staged(
        &self,
        packed: &Packed,
        staging: &PackedStaging,
        body: &[u8],
    ) -> Result<PutOutcome> {
        let _gate = staging
            .gate
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        check_failed(staging, &self.root)?;
        let signature = (self.signer)(body);
        let volume = self.volume_of(signature);
        let index = &packed.index;
        let mut compressed: Option<(BlockHeader, Vec<u8>)> = None;
        loop {
            let txn = index.read()?;
            let committed = index.entries_of(&txn, signature)?;
            drop(txn);
            let mut pending = staging
                .pending
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let staged: Vec<(u32, &StagedNew)> = pending.staged_of(signature).collect();
            let decision = self.decide(packed, &committed, &staged, signature, body)?;
            let key = |overflow| ContentKey {
                signature,
                volume,
                overflow,
            };
            match decision {
                Decision::Committed(overflow, entry) => {
                    let added = pending.added.entry((signature, overflow)).or_insert(0);
                    *added += 1;
                    entry.references.checked_add(*added).ok_or_else(|| {
                        StoreError::ReferenceCountOverflow {
                            path: index.path.clone(),
                        }
                    })?;
                    return Ok(PutOutcome {
                        key: key(overflow),
                        stored_new: false,
                        original_size: entry.original_size,
                        stored_size: entry.record_len(),
                    });
                }
                Decision::Staged(overflow) => {
                    let block = pending
                        .new
                        .get_mut(&(signature, overflow))
                        .expect("decided on a staged block");
                    block.header.references =
                        block.header.references.checked_add(1).ok_or_else(|| {
                            StoreError::ReferenceCountOverflow {
                                path: index.path.clone(),
                            }
                        })?;
                    let stored_size =
                        (record_header(&key(overflow), &block.header, block.data.len()).len()
                            + block.data.len()) as u64;
                    return Ok(PutOutcome {
                        key: key(overflow),
                        stored_new: false,
                        original_size: block.header.original_size,
                        stored_size,
                    });
                }
                Decision::New(overflow) => {
                    // Compress outside the lock, then decide again: another
                    // thread may have staged the body meanwhile.
                    let Some((header, data)) = compressed.take() else {
                        drop(pending);
                        compressed = Some(self.compress(body)?);
                        continue;
                    };
                    let stored_size = (record_header(&key(overflow), &header, data.len()).len()
                        + data.len()) as u64;
                    pending
                        .new
                        .insert((signature, overflow), StagedNew { header, data });
                    return Ok(PutOutcome {
                        key: key(overflow),
                        stored_new: true,
                        original_size: body.len() as u64,
                        stored_size,
                    });
                }
            }
        }
    }

    /// Appends `blocks` (key, header with its reference count, data) to
    /// their volumes' current packs, syncs the packs, and records the
    /// entries and the packs' new lengths in `txn`; the caller commits.
    /// Returns the entries in the order of `blocks`.
    fn append_blocks(
        &self,
        packed: &Packed,
        txn: &mut RwTxn<'_>,
        blocks: &mut [(ContentKey, BlockHeader, Vec<u8>)],
    ) -> Result<Vec<Entry>> {
        let index = &packed.index;
        let mut packs = index.packs(txn)?;
        let mut entries = vec![None; blocks.len()];
        // Volume by volume, so that each pack gets one write.
        let mut by_volume: BTreeMap<u16, Vec<usize>> = BTreeMap::new();
        for (position, (key, _, _)) in blocks.iter().enumerate() {
            by_volume.entry(key.volume).or_default().push(position);
        }
        let mut written = Vec::new();
        for (volume, positions) in by_volume {
            let mut chunk: Vec<u8> = Vec::new();
            let mut chunk_pack = current_pack(&mut packs, volume, packed.pack_bytes);
            let mut chunk_start = packs[&chunk_pack].committed;
            for position in positions {
                let (key, header, data) = &blocks[position];
                let record = record_header(key, header, data.len());
                let record_len = (record.len() + data.len()) as u64;
                if chunk_start + chunk.len() as u64 > 0
                    && chunk_start + chunk.len() as u64 + record_len > packed.pack_bytes
                {
                    // This pack is full: write what it takes, go on in a new one.
                    if !chunk.is_empty() {
                        written.push(self.write_chunk(volume, chunk_pack, chunk_start, &chunk)?);
                        packs.get_mut(&chunk_pack).expect("current pack").committed +=
                            chunk.len() as u64;
                        chunk.clear();
                    }
                    chunk_pack = new_pack(&mut packs, volume);
                    chunk_start = 0;
                }
                let offset = chunk_start + chunk.len() as u64;
                entries[position] = Some(Entry {
                    pack: chunk_pack,
                    offset,
                    header_len: record.len() as u32,
                    data_len: data.len() as u64,
                    original_size: header.original_size,
                    compression: header.compression,
                    references: header.references,
                });
                chunk.extend_from_slice(&record);
                chunk.extend_from_slice(data);
            }
            if !chunk.is_empty() {
                written.push(self.write_chunk(volume, chunk_pack, chunk_start, &chunk)?);
                packs.get_mut(&chunk_pack).expect("current pack").committed += chunk.len() as u64;
            }
        }
        // Every pack's bytes on disk before the index names them.
        let mut new_files = Vec::new();
        for (file, path, created) in written {
            file.sync_data()
                .map_err(|source| StoreError::io("sync", &path, source))?;
            if created {
                new_files.push(path);
            }
        }
        for path in &new_files {
            if let Some(directory) = path.parent() {
                sync_directory(directory)?;
            }
        }
        for (pack, info) in &packs {
            index.put_pack(txn, *pack, info)?;
        }
        let entries: Vec<Entry> = entries
            .into_iter()
            .map(|entry| entry.expect("every block placed"))
            .collect();
        for ((key, _, _), entry) in blocks.iter().zip(&entries) {
            if index
                .blocks
                .get(txn, &index_key(key.signature, key.overflow))
                .map_err(|error| index_error("read", &index.path, error))?
                .is_some()
            {
                return Err(StoreError::Io {
                    action: "add a block to",
                    path: index.path.clone(),
                    source: io::Error::other(format!(
                        "block {key} is already stored: another process wrote to the store while this handle staged writes"
                    )),
                });
            }
            index.put_entry(txn, key, entry)?;
        }
        Ok(entries)
    }

    /// Writes `chunk` at `offset` of pack `pack`, creating the file if
    /// needed. Returns the file, its path and whether it was created.
    fn write_chunk(
        &self,
        volume: u16,
        pack: u32,
        offset: u64,
        chunk: &[u8],
    ) -> Result<(File, PathBuf, bool)> {
        let directory = volume_directory(&self.root, volume);
        let path = directory.join(pack_file_name(pack));
        let created = !path.exists();
        if created {
            fs::create_dir_all(&directory)
                .map_err(|source| StoreError::io("create", &directory, source))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|source| StoreError::io("open", &path, source))?;
        failpoint::before_append(&path)?;
        file.write_all_at(chunk, offset)
            .map_err(|source| StoreError::io("write", &path, source))?;
        Ok((file, path, created))
    }

    /// Writes what a staging handle holds: the new blocks appended, then
    /// one index commit with them and the new references.
    pub(super) fn packed_flush(&self) -> Result<usize> {
        let packed = self.packed_handle();
        let Some(staging) = &packed.staging else {
            return Ok(0);
        };
        let _gate = staging
            .gate
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        check_failed(staging, &self.root)?;
        let pending = std::mem::take(
            &mut *staging
                .pending
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        if pending.is_empty() {
            return Ok(0);
        }
        let written = pending.new.len() + pending.added.len();
        match self.write_pending(packed, pending) {
            Ok(()) => Ok(written),
            Err(error) => {
                let reason = error.to_string();
                *staging
                    .failed
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(reason.clone());
                Err(StoreError::StagedWritesLost {
                    root: self.root.clone(),
                    reason,
                })
            }
        }
    }

    fn write_pending(&self, packed: &Packed, pending: Pending) -> Result<()> {
        let index = &packed.index;
        let mut txn = index.write()?;
        for ((signature, overflow), added) in pending.added {
            let key = ContentKey {
                signature,
                volume: self.volume_of(signature),
                overflow,
            };
            let mut entry = index.entry(&txn, &key)?.ok_or_else(|| StoreError::Io {
                action: "add references in",
                path: index.path.clone(),
                source: io::Error::other(format!(
                    "block {key} is gone: another process wrote to the store while this handle staged writes"
                )),
            })?;
            entry.references = entry.references.checked_add(added).ok_or_else(|| {
                StoreError::ReferenceCountOverflow {
                    path: index.path.clone(),
                }
            })?;
            index.put_entry(&mut txn, &key, &entry)?;
        }
        let mut blocks: Vec<(ContentKey, BlockHeader, Vec<u8>)> = pending
            .new
            .into_iter()
            .map(|((signature, overflow), staged)| {
                let key = ContentKey {
                    signature,
                    volume: self.volume_of(signature),
                    overflow,
                };
                (key, staged.header, staged.data)
            })
            .collect();
        if !blocks.is_empty() {
            self.append_blocks(packed, &mut txn, &mut blocks)?;
        }
        index.commit(txn)
    }

    /// Flushes a staging handle before a read or a reference change.
    fn packed_settle(&self) -> Result<()> {
        if !self.packed_handle().nothing_staged() {
            self.packed_flush()?;
        }
        Ok(())
    }

    /// Reads and decodes block `key` at `entry`.
    fn read_block(&self, packed: &Packed, key: &ContentKey, entry: &Entry) -> Result<Vec<u8>> {
        let (data, _) = self.read_record(packed, key, entry)?;
        let path = pack_path(&self.root, key.volume, entry.pack);
        decode_data(&entry.block_header(), &data)
            .map_err(|reason| StoreError::CorruptBlock { path, reason })
    }

    /// The record of `key` at `entry`: its data, after checking its header.
    /// A pack file kept open may be one compaction has since removed and a
    /// new pack replaced under the same name: on a mismatch, reads once more
    /// from the file now at that path.
    fn read_record(
        &self,
        packed: &Packed,
        key: &ContentKey,
        entry: &Entry,
    ) -> Result<(Vec<u8>, PathBuf)> {
        match self.read_record_once(packed, key, entry) {
            Err(StoreError::CorruptBlock { .. }) => {
                packed
                    .readers
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .remove(&entry.pack);
                self.read_record_once(packed, key, entry)
            }
            other => other,
        }
    }

    fn read_record_once(
        &self,
        packed: &Packed,
        key: &ContentKey,
        entry: &Entry,
    ) -> Result<(Vec<u8>, PathBuf)> {
        let path = pack_path(&self.root, key.volume, entry.pack);
        let file = packed.reader(&self.root, key.volume, entry.pack)?;
        let length = usize::try_from(entry.record_len()).map_err(|_| StoreError::CorruptBlock {
            path: path.clone(),
            reason: format!("the record of {key} is too long to read"),
        })?;
        let mut bytes = vec![0u8; length];
        file.read_exact_at(&mut bytes, entry.offset)
            .map_err(|source| match source.kind() {
                io::ErrorKind::UnexpectedEof => StoreError::CorruptBlock {
                    path: path.clone(),
                    reason: format!(
                        "the pack ends before the record of {key} (offset {}, {} bytes)",
                        entry.offset, length
                    ),
                },
                _ => StoreError::io("read", &path, source),
            })?;
        let data = bytes.split_off(entry.header_len as usize);
        check_record_header(&bytes, key, entry).map_err(|reason| StoreError::CorruptBlock {
            path: path.clone(),
            reason,
        })?;
        Ok((data, path))
    }

    /// The committed entry of `key`, or `NotFound`.
    fn committed_entry(&self, packed: &Packed, key: &ContentKey) -> Result<Entry> {
        self.check_volume(key)?;
        if self.volume_of(key.signature) != key.volume {
            return Err(self.not_found(key));
        }
        let txn = packed.index.read()?;
        packed
            .index
            .entry(&txn, key)?
            .ok_or_else(|| self.not_found(key))
    }

    pub(super) fn packed_get(&self, key: &ContentKey) -> Result<Vec<u8>> {
        self.packed_settle()?;
        let packed = self.packed_handle();
        let entry = self.committed_entry(packed, key)?;
        self.read_block(packed, key, &entry)
    }

    pub(super) fn packed_references(&self, key: &ContentKey) -> Result<u64> {
        self.packed_settle()?;
        Ok(self.committed_entry(self.packed_handle(), key)?.references)
    }

    /// Changes block `key`'s count with `change` (given the count, returns
    /// the new one; 0 removes the block), in one commit.
    fn change_references(
        &self,
        key: &ContentKey,
        change: impl FnOnce(u64) -> Result<u64>,
    ) -> Result<(u64, Entry)> {
        self.packed_settle()?;
        let packed = self.packed_handle();
        self.check_volume(key)?;
        let _gate = packed.staging.as_ref().map(|staging| {
            staging
                .gate
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        });
        let index = &packed.index;
        let mut txn = index.write()?;
        let mut entry = index
            .entry(&txn, key)?
            .filter(|_| self.volume_of(key.signature) == key.volume)
            .ok_or_else(|| self.not_found(key))?;
        let references = change(entry.references)?;
        if references == 0 {
            index.remove_entry(&mut txn, key)?;
            let mut packs = index.packs(&txn)?;
            if let Some(info) = packs.get_mut(&entry.pack) {
                info.dead = info.dead.saturating_add(entry.record_len());
                index.put_pack(&mut txn, entry.pack, info)?;
            }
        } else {
            entry.references = references;
            index.put_entry(&mut txn, key, &entry)?;
        }
        index.commit(txn)?;
        Ok((references, entry))
    }

    pub(super) fn packed_add_reference(&self, key: &ContentKey) -> Result<u64> {
        let path = self.root.join(INDEX_DIRECTORY);
        self.change_references(key, |references| {
            references
                .checked_add(1)
                .ok_or(StoreError::ReferenceCountOverflow { path })
        })
        .map(|(references, _)| references)
    }

    pub(super) fn packed_delete(&self, key: &ContentKey) -> Result<DeleteOutcome> {
        let (remaining, _) =
            self.change_references(key, |references| Ok(references.saturating_sub(1)))?;
        Ok(if remaining == 0 {
            DeleteOutcome::Removed
        } else {
            DeleteOutcome::Decremented { remaining }
        })
    }

    pub(super) fn packed_set_references(&self, key: &ContentKey, references: u64) -> Result<()> {
        self.change_references(key, |_| Ok(references)).map(|_| ())
    }

    /// Every block of the index, in key order, with the pack holding it.
    pub(super) fn packed_walk(&self) -> Result<StoreWalk> {
        self.packed_settle()?;
        let packed = self.packed_handle();
        let index = &packed.index;
        let txn = index.read()?;
        let mut walk = StoreWalk::default();
        let iter = index
            .blocks
            .iter(&txn)
            .map_err(|error| index_error("read", &index.path, error))?;
        for item in iter {
            let (raw_key, value) = item.map_err(|error| index_error("read", &index.path, error))?;
            let Some((signature, overflow)) = decode_index_key(raw_key) else {
                tracing::warn!(index = %index.path.display(), "malformed index key skipped");
                continue;
            };
            let key = ContentKey {
                signature,
                volume: self.volume_of(signature),
                overflow,
            };
            let (path, header) = match Entry::decode(value) {
                Some(entry) => (
                    pack_path(&self.root, key.volume, entry.pack),
                    Ok(BlockFacts {
                        references: entry.references,
                        original_size: entry.original_size,
                        file_size: entry.record_len(),
                    }),
                ),
                None => (
                    index.path.clone(),
                    Err(format!("the index entry of {key} is malformed")),
                ),
            };
            walk.blocks.push(WalkedBlock { key, path, header });
        }
        drop(txn);
        // Left by an interrupted write of `store.json` or of the file layout.
        let folders = std::iter::once(self.root.clone())
            .chain((0..self.layout.volumes).map(|volume| volume_directory(&self.root, volume)));
        for folder in folders {
            let Ok(entries) = fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                if super::location::is_temporary_file_name(&entry.file_name().to_string_lossy()) {
                    walk.temporary_files.push(entry.path());
                }
            }
        }
        walk.temporary_files.sort();
        Ok(walk)
    }

    pub(super) fn packed_verify(&self, key: &ContentKey) -> Result<Option<String>> {
        self.packed_settle()?;
        let packed = self.packed_handle();
        let entry = self.committed_entry(packed, key)?;
        let body = match self.read_block(packed, key, &entry) {
            Ok(body) => body,
            Err(StoreError::CorruptBlock { reason, .. }) => return Ok(Some(reason)),
            Err(error) => return Err(error),
        };
        let signature = self.signature(&body);
        Ok((signature != key.signature).then(|| {
            format!(
                "the body's signature is {signature}, not the {} its key says",
                key.signature
            )
        }))
    }

    /// Reclaims the space of removed blocks: every pack at least half dead
    /// has its live records copied to its volume's current pack, and is
    /// removed. Returns the bytes reclaimed. Only for a store no other
    /// process writes to; readers in other processes that already opened a
    /// removed pack keep reading it until they close it.
    pub fn compact(&self) -> Result<u64> {
        let Some(packed) = &self.packed else {
            return Ok(0);
        };
        self.packed_settle()?;
        let index = &packed.index;
        let txn = index.read()?;
        let victims: Vec<(u32, PackInfo)> = index
            .packs(&txn)?
            .into_iter()
            .filter(|(_, info)| info.committed > 0 && info.dead.saturating_mul(2) >= info.committed)
            .collect();
        drop(txn);
        let mut reclaimed = 0;
        for (pack, info) in victims {
            let mut txn = index.write()?;
            let mut live: Vec<(ContentKey, BlockHeader, Vec<u8>)> = Vec::new();
            let iter = index
                .blocks
                .iter(&txn)
                .map_err(|error| index_error("read", &index.path, error))?;
            let mut moving = Vec::new();
            for item in iter {
                let (raw_key, value) =
                    item.map_err(|error| index_error("read", &index.path, error))?;
                let (Some((signature, overflow)), Some(entry)) =
                    (decode_index_key(raw_key), Entry::decode(value))
                else {
                    continue;
                };
                if entry.pack == pack {
                    moving.push((
                        ContentKey {
                            signature,
                            volume: info.volume,
                            overflow,
                        },
                        entry,
                    ));
                }
            }
            for (key, entry) in &moving {
                let (data, _) = self.read_record(packed, key, entry)?;
                index.remove_entry(&mut txn, key)?;
                live.push((*key, entry.block_header_exact(), data));
            }
            index.remove_pack(&mut txn, pack)?;
            if !live.is_empty() {
                self.append_blocks(packed, &mut txn, &mut live)?;
            }
            index.commit(txn)?;
            let path = pack_path(&self.root, info.volume, pack);
            packed
                .readers
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .remove(&pack);
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                Err(source) => return Err(StoreError::io("remove", &path, source)),
            }
            if let Some(directory) = path.parent() {
                sync_directory(directory)?;
            }
            reclaimed += info.dead;
            tracing::info!(path = %path.display(), dead = info.dead, moved = moving.len(), "compacted a pack");
        }
        Ok(reclaimed)
    }
}

impl Entry {
    /// The header of the block, with its true reference count (even 0).
    fn block_header_exact(&self) -> BlockHeader {
        BlockHeader {
            original_size: self.original_size,
            compression: self.compression,
            references: self.references,
        }
    }
}

fn one_more(entry: &Entry, index: &Index) -> Result<u64> {
    entry
        .references
        .checked_add(1)
        .ok_or_else(|| StoreError::ReferenceCountOverflow {
            path: index.path.clone(),
        })
}

fn check_failed(staging: &PackedStaging, root: &Path) -> Result<()> {
    super::staging::refuse_after_failure(&staging.failed, root)
}

/// The pack of `volume` that takes new records: its newest, unless full,
/// in which case a new one.
fn current_pack(packs: &mut BTreeMap<u32, PackInfo>, volume: u16, pack_bytes: u64) -> u32 {
    let newest = packs
        .iter()
        .rev()
        .find(|(_, info)| info.volume == volume)
        .map(|(&pack, info)| (pack, info.committed));
    match newest {
        Some((pack, committed)) if committed < pack_bytes => pack,
        _ => new_pack(packs, volume),
    }
}

/// Registers a new, empty pack of `volume`.
fn new_pack(packs: &mut BTreeMap<u32, PackInfo>, volume: u16) -> u32 {
    let pack = packs.keys().next_back().map_or(0, |&last| last + 1);
    packs.insert(
        pack,
        PackInfo {
            volume,
            committed: 0,
            dead: 0,
        },
    );
    pack
}

/// Test-only fault injection: the next append on this thread writes half
/// its bytes and fails, as a process dying mid-write would leave the pack.
#[cfg(test)]
pub(super) mod failpoint {
    use std::cell::Cell;
    use std::path::Path;

    use super::super::error::{Result, StoreError};

    thread_local! {
        static NEXT_APPEND: Cell<bool> = const { Cell::new(false) };
    }

    pub(in crate::store) fn arm() {
        NEXT_APPEND.with(|next| next.set(true));
    }

    pub(super) fn before_append(path: &Path) -> Result<()> {
        if NEXT_APPEND.with(|next| next.replace(false)) {
            return Err(StoreError::io(
                "write",
                path,
                std::io::Error::other("injected failure before the append"),
            ));
        }
        Ok(())
    }
}

#[cfg(not(test))]
mod failpoint {
    use std::path::Path;

    use super::super::error::Result;

    #[inline]
    pub(super) fn before_append(_path: &Path) -> Result<()> {
        Ok(())
    }
}
