//! The texts ingest extracted, kept for the index stage of the same run, so
//! that it does not read and parse each body a second time.
//!
//! Ingest reads every body's text (title, lines, headings) to fingerprint
//! it; the index stage needs the same text of each distinct body. On pages
//! of real documentation that second extraction was a third of the index
//! stage (BENCHMARKS.md). Each distinct (body, encoding)'s text and
//! headings are written, as they are, to a file of no name (removed as soon
//! as it is opened, as [`crate::fingerprint::FingerprintSpill`] is: a crash
//! leaves nothing behind), and read back by the index stage. Texts kept in
//! a file of a name, which other processes and machines read, are LZ4
//! blocks ([`RAW`]). A body whose
//! text is not kept (one ingested by an earlier run, or read from Spark's
//! parts without texts) is read from the store and extracted as before: the
//! texts are the same either way (`corpus::html`'s
//! `the_text_alone_is_the_whole_readings_text`).
//!
//! Where the index is built by other processes, the texts are kept in
//! files of a name ([`KeptTexts::persist_into`], [`TEXTS_FILE`] and
//! [`TEXTS_TABLE_FILE`]): an ingest part keeps those of its bodies
//! (`ingest-part`), `index --parts` copies them for the bodies it takes
//! into the data folder's store ([`KeptTexts::copy_to`]), and a staged
//! generation keeps them for its `index-shard` tasks, each opening those of
//! the bodies its shard holds ([`KeptTexts::open`]); `publish` removes them.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rustc_hash::FxHashSet;

use super::{ContentKey, SIGNATURE_BYTES};
use crate::corpus::charset::EncodingName;

/// Which body a text is of: pages with the same body and encoding share it.
pub type Body = (ContentKey, EncodingName);

/// The texts kept in a folder of their own (a part, a staged generation):
/// each text's header and block, as [`TextSpill`] writes them.
pub const TEXTS_FILE: &str = "texts.bin";

/// Where each text of [`TEXTS_FILE`] is: [`TABLE_HEADER`], the count of
/// texts (u64), then (name, place) of each by name, 16 bytes little-endian.
pub const TEXTS_TABLE_FILE: &str = "texts.table";

/// The first bytes of [`TEXTS_TABLE_FILE`]: a table of another format is
/// not read (its texts are read from the bodies instead).
const TABLE_HEADER: &[u8] = b"mirrorscope kept texts 1\n";

/// A body's name in the table of texts kept: 64 bits of hash of its key
/// and encoding, so that the table holds 16 bytes a body (12 MB for the
/// 750,069 bodies of the generated million-page web, where a map by key
/// held 88 MB more through the index stage). Two bodies of one name
/// (about one chance in 10^7 at a million) cannot be mistaken: each text's
/// header in the file names its body in full, and a text whose header
/// names another is not given.
fn name_of((key, encoding): Body) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&key.signature.to_be_bytes());
    hasher.update(&key.volume.to_le_bytes());
    hasher.update(&key.overflow.to_le_bytes());
    hasher.update(encoding.as_str().as_bytes());
    hasher.digest()
}

/// Where a text is in the file, packed: its offset in the low 40 bits (1
/// TiB), its length (header and block) in the high 24 (16 MiB).
fn pack(at: u64, length: usize) -> Option<u64> {
    (at < 1 << 40 && length < 1 << 24).then_some(at | (length as u64) << 40)
}

fn unpack(place: u64) -> (u64, usize) {
    (place & ((1 << 40) - 1), (place >> 40) as usize)
}

/// Set in a header's length of the headings when the block is the text and
/// headings as they are, not LZ4. A spill of no name, read back by the
/// same run from the page cache, keeps them so: compressing them was a
/// tenth of ingest on the 100k generated web (`perf`), whose text LZ4
/// takes to 68% of its size (real documentation's to 44%), and the index
/// stage decompressed them again. A spill of a name (Spark's parts and
/// staged generations, copied between machines) compresses them.
const RAW: u32 = 1 << 31;

/// The header of a text in the file: the body's key and encoding, then
/// the lengths of its text and headings (with [`RAW`]); the block of both
/// follows.
fn header((key, encoding): Body, text: u32, headings: u32) -> Vec<u8> {
    let name = encoding.as_str().as_bytes();
    let mut header = Vec::with_capacity(SIGNATURE_BYTES + 15 + name.len());
    header.extend_from_slice(&key.signature.to_be_bytes());
    header.extend_from_slice(&key.volume.to_le_bytes());
    header.extend_from_slice(&key.overflow.to_le_bytes());
    header.push(name.len().min(255) as u8);
    header.extend_from_slice(&name[..name.len().min(255)]);
    header.extend_from_slice(&text.to_le_bytes());
    header.extend_from_slice(&headings.to_le_bytes());
    header
}

/// Texts being kept, while ingest writes them ([`TextSpill::put`], from
/// any thread); [`TextSpill::finish`] makes them [`KeptTexts`] to read.
#[derive(Debug)]
pub struct TextSpill {
    path: PathBuf,
    file: File,
    /// Texts of this many bytes or more are not kept: the index reads only
    /// the start of those ([`crate::index::IndexConfig::max_text_bytes`]).
    longest: usize,
    state: Mutex<Writing>,
    /// A write failed: nothing more is kept (what was written is read).
    failed: AtomicBool,
    /// The file keeps its name ([`TextSpill::create_named`]): it is
    /// removed if dropped before it is persisted.
    leftover: RemovedOnDrop,
    /// Texts are written as LZ4 blocks, else as they are ([`RAW`]).
    compressed: bool,
}

#[derive(Debug, Default)]
struct Writing {
    /// Where the next text goes.
    end: u64,
    /// The bodies whose text is kept or being written.
    claimed: FxHashSet<u64>,
    /// (name, place) of each text written.
    places: Vec<(u64, u64)>,
}

/// The texts ingest kept, to read from any thread ([`KeptTexts::get`]).
#[derive(Debug, Default)]
pub struct KeptTexts {
    path: PathBuf,
    file: Option<File>,
    /// (name, place), by name.
    places: Box<[(u64, u64)]>,
    /// A named spill's file, removed when this is dropped unless it was
    /// persisted ([`KeptTexts::persist_into`]).
    leftover: RemovedOnDrop,
}

/// A file removed when this is dropped, unless let go first.
#[derive(Debug, Default)]
struct RemovedOnDrop(Option<PathBuf>);

impl Drop for RemovedOnDrop {
    fn drop(&mut self) {
        let Some(path) = self.0.take() else {
            return;
        };
        match std::fs::remove_file(&path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => tracing::warn!(
                "{}: cannot remove texts kept for an index never built: {error}",
                path.display()
            ),
            _ => {}
        }
    }
}

impl TextSpill {
    /// Starts one at `path` (its name is given up at once) that keeps texts
    /// shorter than `longest` bytes.
    pub fn create(path: &Path, longest: usize) -> std::io::Result<TextSpill> {
        let spill = TextSpill::writing_to(path, longest, false)?;
        std::fs::remove_file(path)?;
        Ok(spill)
    }

    /// Starts one at `path` whose file keeps its name, to be persisted
    /// ([`KeptTexts::persist_into`]) for other processes to read; removed
    /// if it is dropped before.
    pub fn create_named(path: &Path, longest: usize) -> std::io::Result<TextSpill> {
        TextSpill::writing_to(path, longest, true)
    }

    /// A spill writing to a new file at `path`.
    fn writing_to(path: &Path, longest: usize, named: bool) -> std::io::Result<TextSpill> {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(TextSpill {
            path: path.to_path_buf(),
            file,
            longest,
            state: Mutex::default(),
            failed: AtomicBool::new(false),
            leftover: RemovedOnDrop(named.then(|| path.to_path_buf())),
            compressed: named,
        })
    }

    fn writing(&self) -> std::sync::MutexGuard<'_, Writing> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps the text and headings of `body` read as `encoding`, unless
    /// they are kept already or the text is too long. Never fails: a text
    /// that cannot be kept is read from the store again. Compressing and
    /// writing happen outside the lock, each text at a place of its own.
    pub fn put(&self, body: Body, text: &str, headings: &str) {
        if text.len() >= self.longest || self.failed.load(Ordering::Relaxed) {
            return;
        }
        let (Ok(text_length), Ok(headings_length)) =
            (u32::try_from(text.len()), u32::try_from(headings.len()))
        else {
            return;
        };
        if headings_length >= RAW {
            return;
        }
        let name = name_of(body);
        if !self.claim(name) {
            return;
        }
        let stored = if self.compressed {
            let mut both = String::with_capacity(text.len() + headings.len());
            both.push_str(text);
            both.push_str(headings);
            let mut stored = header(body, text_length, headings_length);
            stored.extend_from_slice(&lz4_flex::compress(both.as_bytes()));
            stored
        } else {
            let mut stored = header(body, text_length, headings_length | RAW);
            stored.reserve(text.len() + headings.len());
            stored.extend_from_slice(text.as_bytes());
            stored.extend_from_slice(headings.as_bytes());
            stored
        };
        self.write_claimed(name, &stored);
    }

    /// Whether `name`'s text is to be written now: not kept or being
    /// written already, and nothing failed.
    fn claim(&self, name: u64) -> bool {
        !self.failed.load(Ordering::Relaxed) && self.writing().claimed.insert(name)
    }

    fn is_claimed(&self, name: u64) -> bool {
        self.writing().claimed.contains(&name)
    }

    /// Writes the text `stored` (header and block) of the body `name`
    /// claimed, at a place of its own.
    fn write_claimed(&self, name: u64, stored: &[u8]) {
        let at = {
            let mut writing = self.writing();
            let at = writing.end;
            writing.end += stored.len() as u64;
            at
        };
        let Some(place) = pack(at, stored.len()) else {
            return;
        };
        match self.file.write_all_at(stored, at) {
            Ok(()) => self.writing().places.push((name, place)),
            Err(error) => {
                if !self.failed.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "{}: the texts ingest extracted cannot be kept ({error}); the index stage reads the bodies again",
                        self.path.display()
                    );
                }
            }
        }
    }

    /// Done writing: the texts kept, to read.
    pub fn finish(self) -> KeptTexts {
        let writing = self
            .state
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut places = writing.places;
        places.sort_unstable();
        KeptTexts {
            path: self.path,
            file: Some(self.file),
            places: places.into_boxed_slice(),
            leftover: self.leftover,
        }
    }
}

impl KeptTexts {
    /// How many bodies' texts are kept.
    pub fn len(&self) -> usize {
        self.places.len()
    }

    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// Bytes of the file the texts are kept in.
    pub fn stored_bytes(&self) -> u64 {
        self.places
            .iter()
            .map(|&(_, place)| unpack(place).1 as u64)
            .sum()
    }

    /// The text and headings of `body` read as `encoding`, if kept; `None`
    /// (with a warning) when they cannot be read back.
    pub fn get(&self, key: ContentKey, encoding: EncodingName) -> Option<(String, String)> {
        let read = || -> std::io::Result<Option<(String, String)>> {
            let Some(Stored {
                mut bytes,
                header,
                text,
                headings,
                raw,
            }) = self.stored((key, encoding))?
            else {
                return Ok(None);
            };
            let mut both = if raw {
                bytes.drain(..header);
                bytes
            } else {
                lz4_flex::decompress(&bytes[header..], text + headings)
                    .map_err(std::io::Error::other)?
            };
            if both.len() != text + headings {
                return Err(std::io::Error::other(format!(
                    "{} bytes where {} were written",
                    both.len(),
                    text + headings
                )));
            }
            let headings = both.split_off(text);
            let invalid = |_| std::io::Error::other("bytes that are not UTF-8");
            Ok(Some((
                String::from_utf8(both).map_err(invalid)?,
                String::from_utf8(headings).map_err(invalid)?,
            )))
        };
        read().unwrap_or_else(|error| {
            tracing::warn!(
                "{}: the text of {key} cannot be read back ({error}); its body is read instead",
                self.path.display()
            );
            None
        })
    }

    /// `body`'s text as it is in the file, if kept; `None` for another
    /// body of the same name.
    fn stored(&self, body: Body) -> std::io::Result<Option<Stored>> {
        let name = name_of(body);
        let Ok(found) = self.places.binary_search_by_key(&name, |&(name, _)| name) else {
            return Ok(None);
        };
        let Some(file) = self.file.as_ref() else {
            return Ok(None);
        };
        let (at, length) = unpack(self.places[found].1);
        let mut bytes = vec![0; length];
        file.read_exact_at(&mut bytes, at)?;
        let expected = header(body, 0, 0);
        let named = expected.len() - 8;
        if bytes.len() < expected.len() || bytes[..named] != expected[..named] {
            return Ok(None);
        }
        let length_at = |offset: usize| {
            u32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes")) as usize
        };
        let (text, headings) = (length_at(named), length_at(named + 4));
        Ok(Some(Stored {
            bytes,
            header: expected.len(),
            text,
            headings: headings & !(RAW as usize),
            raw: headings & RAW as usize != 0,
        }))
    }

    /// Keeps in `spill` the text kept here of `from`, as the text of `to`:
    /// the same body put into another store, where its key may differ
    /// (`index --parts` copying a part's bodies). Copied as it is, without
    /// decompressing it; the index stage checks it when it reads it. A text
    /// that cannot be read here is not copied (its body is read instead).
    pub fn copy_to(&self, from: Body, spill: &TextSpill, to: Body) {
        let name = name_of(to);
        if spill.is_claimed(name) {
            return;
        }
        let stored = match self.stored(from) {
            Ok(Some(stored)) => stored,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(
                    "{}: the text of {} cannot be read ({error}); its body is read instead",
                    self.path.display(),
                    from.0
                );
                return;
            }
        };
        let (Ok(text), Ok(headings)) = (u32::try_from(stored.text), u32::try_from(stored.headings))
        else {
            return;
        };
        if stored.text >= spill.longest || !spill.claim(name) {
            return;
        }
        let headings = if stored.raw { headings | RAW } else { headings };
        let mut copied = header(to, text, headings);
        copied.extend_from_slice(&stored.bytes[stored.header..]);
        spill.write_claimed(name, &copied);
    }

    /// Makes these texts [`TEXTS_FILE`] and [`TEXTS_TABLE_FILE`] of
    /// `folder`, for other processes to open ([`KeptTexts::open`]): a named
    /// spill's file is renamed there (it must be on the same file system),
    /// one of no name copied. Both files are synced; the folder is the
    /// caller's to sync.
    pub fn persist_into(&mut self, folder: &Path) -> std::io::Result<()> {
        let Some(file) = self.file.as_ref() else {
            return Ok(());
        };
        let texts = folder.join(TEXTS_FILE);
        match &self.leftover.0 {
            Some(path) if *path == texts => {}
            Some(path) => std::fs::rename(path, &texts)?,
            None => {
                let mut copy = File::create(&texts)?;
                let mut from = file.try_clone()?;
                std::io::Seek::rewind(&mut from)?;
                std::io::copy(&mut from, &mut copy)?;
                copy.sync_all()?;
            }
        }
        self.leftover.0 = None;
        self.path = texts;
        file.sync_all()?;
        let mut table = Vec::with_capacity(TABLE_HEADER.len() + 8 + 16 * self.places.len());
        table.extend_from_slice(TABLE_HEADER);
        table.extend_from_slice(&(self.places.len() as u64).to_le_bytes());
        for &(name, place) in self.places.iter() {
            table.extend_from_slice(&name.to_le_bytes());
            table.extend_from_slice(&place.to_le_bytes());
        }
        let table_path = folder.join(TEXTS_TABLE_FILE);
        let mut written = File::create(&table_path)?;
        written.write_all(&table)?;
        written.sync_all()
    }

    /// The texts [`KeptTexts::persist_into`] left in `folder`, of the
    /// bodies `wanted` alone (every one with `None`): a shard's task opens
    /// those its shard holds. `None` where the folder keeps no texts; an
    /// error for a table that cannot be read (the caller reads the bodies
    /// instead).
    pub fn open(
        folder: &Path,
        wanted: Option<&mut dyn Iterator<Item = Body>>,
    ) -> std::io::Result<Option<KeptTexts>> {
        let table_path = folder.join(TEXTS_TABLE_FILE);
        let mut table = match File::open(&table_path) {
            Ok(table) => std::io::BufReader::with_capacity(1 << 20, table),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        };
        let path = folder.join(TEXTS_FILE);
        let file = File::open(&path)?;
        let mut start = vec![0; TABLE_HEADER.len() + 8];
        table.read_exact(&mut start)?;
        if !start.starts_with(TABLE_HEADER) {
            return Err(std::io::Error::other(format!(
                "{}: not a table of kept texts of this build's format",
                table_path.display()
            )));
        }
        let count = u64::from_le_bytes(start[TABLE_HEADER.len()..].try_into().expect("8 bytes"));
        let wanted: Option<Vec<u64>> = wanted.map(|bodies| {
            let mut names: Vec<u64> = bodies.map(name_of).collect();
            names.sort_unstable();
            names.dedup();
            names
        });
        let mut places = Vec::new();
        let mut entry = [0u8; 16];
        for _ in 0..count {
            table.read_exact(&mut entry)?;
            let name = u64::from_le_bytes(entry[..8].try_into().expect("8 bytes"));
            let place = u64::from_le_bytes(entry[8..].try_into().expect("8 bytes"));
            if wanted
                .as_ref()
                .is_none_or(|wanted| wanted.binary_search(&name).is_ok())
            {
                places.push((name, place));
            }
        }
        if table.read(&mut entry)? != 0 {
            return Err(std::io::Error::other(format!(
                "{}: more than the {count} texts it counts",
                table_path.display()
            )));
        }
        // Written in order; read in order whatever it holds.
        places.sort_unstable();
        Ok(Some(KeptTexts {
            path,
            file: Some(file),
            places: places.into_boxed_slice(),
            leftover: RemovedOnDrop(None),
        }))
    }

    /// Removes the texts [`KeptTexts::persist_into`] left in `folder`, if
    /// any.
    pub fn remove_from(folder: &Path) -> std::io::Result<()> {
        for name in [TEXTS_TABLE_FILE, TEXTS_FILE] {
            match std::fs::remove_file(folder.join(name)) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
                _ => {}
            }
        }
        Ok(())
    }
}

/// A text as it is in the file: its header (`header` bytes) and block,
/// and the lengths of its text and headings.
struct Stored {
    bytes: Vec<u8>,
    header: usize,
    text: usize,
    headings: usize,
    /// The block is the text and headings as they are ([`RAW`]).
    raw: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> ContentKey {
        ContentKey {
            signature: crate::store::signature_of(&[byte; 40]),
            volume: 0,
            overflow: 0,
        }
    }

    fn spill(longest: usize) -> (tempfile::TempDir, TextSpill) {
        let folder = tempfile::tempdir().unwrap();
        let spill = TextSpill::create(&folder.path().join("texts"), longest).unwrap();
        (folder, spill)
    }

    /// The texts (of no headings, read as UTF-8) of the bodies `key(N)`,
    /// kept in a spill of limit `longest`.
    fn kept(longest: usize, texts: &[(u8, &str)]) -> (tempfile::TempDir, KeptTexts) {
        let (folder, spill) = spill(longest);
        let utf8 = EncodingName::from_label("utf-8");
        for &(body, text) in texts {
            spill.put((key(body), utf8), text, "");
        }
        (folder, spill.finish())
    }

    #[test]
    fn a_kept_text_reads_back_as_it_was_put_and_leaves_no_file() {
        let (folder, spill) = spill(1 << 20);
        let utf8 = EncodingName::from_label("utf-8");
        let latin = EncodingName::from_label("windows-1252");
        spill.put(
            (key(1), utf8),
            "Première ligne\nSecond line",
            "Première ligne",
        );
        spill.put((key(1), latin), "PremiÃ¨re ligne", "");
        spill.put((key(2), utf8), "", "");
        // Kept once: a later page of the same body changes nothing.
        spill.put((key(1), utf8), "other", "other");
        assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 0);
        let kept = spill.finish();
        assert_eq!(kept.len(), 3);
        assert_eq!(
            kept.get(key(1), utf8),
            Some((
                "Première ligne\nSecond line".to_string(),
                "Première ligne".to_string()
            ))
        );
        assert_eq!(
            kept.get(key(1), latin),
            Some(("PremiÃ¨re ligne".to_string(), String::new()))
        );
        assert_eq!(kept.get(key(2), utf8), Some((String::new(), String::new())));
        assert_eq!(kept.get(key(3), utf8), None);
    }

    /// The index reads a long page's start alone: its text is not kept,
    /// and the index stage reads that start from the body.
    #[test]
    fn a_text_as_long_as_the_limit_is_not_kept() {
        let (_folder, kept) = kept(10, &[(1, "0123456789"), (2, "012345678")]);
        let utf8 = EncodingName::from_label("utf-8");
        assert_eq!(kept.get(key(1), utf8), None);
        assert_eq!(
            kept.get(key(2), utf8),
            Some(("012345678".to_string(), String::new()))
        );
    }

    fn place_of(kept: &KeptTexts, body: Body) -> u64 {
        let name = name_of(body);
        kept.places.iter().find(|place| place.0 == name).unwrap().1
    }

    /// Bytes that changed on the disk are no text: the body is read instead.
    #[test]
    fn a_kept_text_that_reads_back_wrong_is_not_given() {
        let long = "a line of text\n".repeat(50);
        let (_folder, kept) = kept(1 << 20, &[(1, &long), (2, "another text")]);
        let utf8 = EncodingName::from_label("utf-8");
        let (at, length) = unpack(place_of(&kept, (key(1), utf8)));
        let block = header((key(1), utf8), 0, 0).len() as u64;
        let file = kept.file.as_ref().unwrap();
        file.write_all_at(&vec![0xff; length - block as usize], at + block)
            .unwrap();
        assert_eq!(kept.get(key(1), utf8), None);
        assert_eq!(kept.get(key(2), utf8).unwrap().0, "another text");
    }

    /// Two bodies whose names are the same: the text of one is not given
    /// for the other, whose header it does not carry.
    #[test]
    fn a_text_is_given_only_for_the_body_its_header_names() {
        let (_folder, mut kept) = kept(1 << 20, &[(1, "the text of body 1")]);
        let utf8 = EncodingName::from_label("utf-8");
        let place = place_of(&kept, (key(1), utf8));
        kept.places = vec![
            (name_of((key(2), utf8)), place),
            (
                name_of((key(1), EncodingName::from_label("windows-1252"))),
                place,
            ),
        ]
        .into_boxed_slice();
        kept.places.sort_unstable();
        assert_eq!(kept.get(key(2), utf8), None);
        assert_eq!(
            kept.get(key(1), EncodingName::from_label("windows-1252")),
            None
        );
    }

    /// A part's texts, persisted, opened by another process: all of them,
    /// or those of the bodies a shard holds; a named spill dropped before
    /// it is persisted leaves nothing.
    #[test]
    fn persisted_texts_open_elsewhere_and_a_named_spill_leaves_nothing_unless_persisted() {
        let folder = tempfile::tempdir().unwrap();
        let utf8 = EncodingName::from_label("utf-8");
        let path = folder.path().join(".spill.tmp");
        let spill = TextSpill::create_named(&path, 1 << 20).unwrap();
        spill.put((key(1), utf8), "dropped", "");
        drop(spill.finish());
        assert!(!path.exists());

        let spill = TextSpill::create_named(&path, 1 << 20).unwrap();
        for body in 1..=4u8 {
            spill.put(
                (key(body), utf8),
                &format!("text {body}"),
                &format!("heading {body}"),
            );
        }
        let mut kept = spill.finish();
        let staged = folder.path().join("staged");
        std::fs::create_dir(&staged).unwrap();
        kept.persist_into(&staged).unwrap();
        drop(kept);
        assert!(!path.exists());
        assert!(staged.join(TEXTS_FILE).is_file());

        let all = KeptTexts::open(&staged, None).unwrap().unwrap();
        assert_eq!(all.len(), 4);
        assert_eq!(
            all.get(key(3), utf8),
            Some(("text 3".to_string(), "heading 3".to_string()))
        );
        let mut wanted = [(key(2), utf8), (key(4), utf8), (key(9), utf8)].into_iter();
        let some = KeptTexts::open(&staged, Some(&mut wanted))
            .unwrap()
            .unwrap();
        assert_eq!(some.len(), 2);
        assert_eq!(some.get(key(2), utf8).unwrap().0, "text 2");
        assert_eq!(some.get(key(3), utf8), None);
        drop((all, some));
        assert!(staged.join(TEXTS_FILE).is_file(), "opened texts stay");

        // A table cut short is refused; a folder without texts has none.
        let table = std::fs::read(staged.join(TEXTS_TABLE_FILE)).unwrap();
        std::fs::write(staged.join(TEXTS_TABLE_FILE), &table[..table.len() - 3]).unwrap();
        assert!(KeptTexts::open(&staged, None).is_err());
        KeptTexts::remove_from(&staged).unwrap();
        assert!(KeptTexts::open(&staged, None).unwrap().is_none());
        assert_eq!(std::fs::read_dir(&staged).unwrap().count(), 0);
    }

    /// Texts of no name are copied out when persisted.
    #[test]
    fn a_spill_of_no_name_is_copied_when_persisted() {
        let (folder, mut kept) = kept(1 << 20, &[(1, "first"), (2, "second")]);
        let utf8 = EncodingName::from_label("utf-8");
        kept.persist_into(folder.path()).unwrap();
        let opened = KeptTexts::open(folder.path(), None).unwrap().unwrap();
        assert_eq!(opened.get(key(2), utf8).unwrap().0, "second");
        assert_eq!(kept.get(key(1), utf8).unwrap().0, "first");
    }

    /// `index --parts` keeps a part's texts under the keys the data
    /// folder's store gives the same bodies, as they were, once a body, and
    /// not past the limit.
    #[test]
    fn texts_copied_from_a_part_read_under_their_new_keys() {
        let (_part_folder, part) = spill(1 << 20);
        let utf8 = EncodingName::from_label("utf-8");
        part.put((key(1), utf8), "a text of the part", "a heading");
        part.put((key(2), utf8), &"long ".repeat(10), "");
        let part = part.finish();
        let (_folder, spill) = spill(20);
        let moved = |body: u8| ContentKey {
            overflow: 7,
            ..key(body)
        };
        part.copy_to((key(1), utf8), &spill, (moved(1), utf8));
        part.copy_to((key(1), utf8), &spill, (moved(1), utf8));
        part.copy_to((key(2), utf8), &spill, (moved(2), utf8));
        part.copy_to((key(3), utf8), &spill, (moved(3), utf8));
        let kept = spill.finish();
        assert_eq!(kept.len(), 1);
        assert_eq!(
            kept.get(moved(1), utf8),
            Some(("a text of the part".to_string(), "a heading".to_string()))
        );
        assert_eq!(kept.get(key(1), utf8), None);
    }

    /// A spill of no name (read back by the same run) keeps texts as they
    /// are; one of a name (read elsewhere) compresses them; a text copied
    /// from either into the other reads back whole.
    #[test]
    fn a_spill_of_no_name_keeps_texts_as_they_are_and_one_of_a_name_compresses_them() {
        let text = "a line of documentation\n".repeat(40);
        let utf8 = EncodingName::from_label("utf-8");
        let folder = tempfile::tempdir().unwrap();
        let named_spill =
            |name: &str| TextSpill::create_named(&folder.path().join(name), 1 << 20).unwrap();
        let (_raw_folder, raw) = spill(1 << 20);
        raw.put((key(1), utf8), &text, "a heading");
        let raw = raw.finish();
        let named = named_spill("named");
        named.put((key(1), utf8), &text, "a heading");
        let named = named.finish();
        let block = (text.len() + "a heading".len()) as u64;
        let header = header((key(1), utf8), 0, 0).len() as u64;
        assert_eq!(raw.stored_bytes(), header + block);
        assert!(named.stored_bytes() < header + block / 4);

        let expected = Some((text.clone(), "a heading".to_string()));
        let (_copies_folder, into_raw) = spill(1 << 20);
        named.copy_to((key(1), utf8), &into_raw, (key(2), utf8));
        let into_named = named_spill("copies");
        raw.copy_to((key(1), utf8), &into_named, (key(3), utf8));
        assert_eq!(into_raw.finish().get(key(2), utf8), expected);
        assert_eq!(into_named.finish().get(key(3), utf8), expected);
        assert_eq!(raw.get(key(1), utf8), expected);
        assert_eq!(named.get(key(1), utf8), expected);
    }

    #[test]
    fn texts_put_from_many_threads_are_each_kept_once() {
        use rayon::prelude::*;
        let (_folder, spill) = spill(1 << 20);
        let utf8 = EncodingName::from_label("utf-8");
        (0..2000u32).into_par_iter().for_each(|page| {
            let body = (page % 100) as u8;
            spill.put((key(body), utf8), &format!("text of body {body}"), "");
        });
        let kept = spill.finish();
        assert_eq!(kept.len(), 100);
        for body in 0..100u8 {
            assert_eq!(
                kept.get(key(body), utf8).unwrap().0,
                format!("text of body {body}")
            );
        }
    }
}
