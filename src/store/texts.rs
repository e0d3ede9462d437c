//! The texts ingest extracted, kept for the index stage of the same run, so
//! that it does not read and parse each body a second time.
//!
//! Ingest reads every body's text (title, lines, headings) to fingerprint
//! it; the index stage needs the same text of each distinct body. On pages
//! of real documentation that second extraction was a third of the index
//! stage (BENCHMARKS.md). Each distinct (body, encoding)'s text and
//! headings are written, as LZ4 blocks, to a file of no name (removed as soon
//! as it is opened, as [`crate::fingerprint::FingerprintSpill`] is: a crash
//! leaves nothing behind), and read back by the index stage. A body whose
//! text is not kept (one ingested by an earlier run, or read from Spark's
//! parts) is read from the store and extracted as before: the texts are the
//! same either way (`corpus::html`'s `the_text_alone_is_the_whole_readings_text`).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rustc_hash::FxHashSet;

use super::{ContentKey, SIGNATURE_BYTES};
use crate::corpus::charset::EncodingName;

/// Which body a text is of: pages with the same body and encoding share it.
type Body = (ContentKey, EncodingName);

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
/// TiB), its length (header and LZ4 block) in the high 24 (16 MiB).
fn pack(at: u64, length: usize) -> Option<u64> {
    (at < 1 << 40 && length < 1 << 24).then_some(at | (length as u64) << 40)
}

fn unpack(place: u64) -> (u64, usize) {
    (place & ((1 << 40) - 1), (place >> 40) as usize)
}

/// The header of a text in the file: the body's key and encoding, then
/// the lengths of its text and headings; the LZ4 block of both follows.
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
}

impl TextSpill {
    /// Starts one at `path` (its name is given up at once) that keeps texts
    /// shorter than `longest` bytes.
    pub fn create(path: &Path, longest: usize) -> std::io::Result<TextSpill> {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        std::fs::remove_file(path)?;
        Ok(TextSpill {
            path: path.to_path_buf(),
            file,
            longest,
            state: Mutex::default(),
            failed: AtomicBool::new(false),
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
        let name = name_of(body);
        if !self.writing().claimed.insert(name) {
            return;
        }
        let mut both = String::with_capacity(text.len() + headings.len());
        both.push_str(text);
        both.push_str(headings);
        let mut stored = header(body, text_length, headings_length);
        stored.extend_from_slice(&lz4_flex::compress(both.as_bytes()));
        let at = {
            let mut writing = self.writing();
            let at = writing.end;
            writing.end += stored.len() as u64;
            at
        };
        let Some(place) = pack(at, stored.len()) else {
            return;
        };
        match self.file.write_all_at(&stored, at) {
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
        let name = name_of((key, encoding));
        let found = self
            .places
            .binary_search_by_key(&name, |&(name, _)| name)
            .ok()?;
        let (at, length) = unpack(self.places[found].1);
        let file = self.file.as_ref()?;
        let read = || -> std::io::Result<Option<(String, String)>> {
            let mut stored = vec![0; length];
            file.read_exact_at(&mut stored, at)?;
            let expected = header((key, encoding), 0, 0);
            let named = expected.len() - 8;
            if stored.len() < expected.len() || stored[..named] != expected[..named] {
                // Another body of the same name.
                return Ok(None);
            }
            let length_at = |offset: usize| {
                u32::from_le_bytes(stored[offset..offset + 4].try_into().expect("4 bytes")) as usize
            };
            let (text, headings) = (length_at(named), length_at(named + 4));
            let mut both = lz4_flex::decompress(&stored[expected.len()..], text + headings)
                .map_err(std::io::Error::other)?;
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
        let (_folder, spill) = spill(10);
        let utf8 = EncodingName::from_label("utf-8");
        spill.put((key(1), utf8), "0123456789", "");
        spill.put((key(2), utf8), "012345678", "");
        let kept = spill.finish();
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
        let (_folder, spill) = spill(1 << 20);
        let utf8 = EncodingName::from_label("utf-8");
        spill.put((key(1), utf8), &"a line of text\n".repeat(50), "");
        spill.put((key(2), utf8), "another text", "");
        let kept = spill.finish();
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
        let (_folder, spill) = spill(1 << 20);
        let utf8 = EncodingName::from_label("utf-8");
        spill.put((key(1), utf8), "the text of body 1", "");
        let mut kept = spill.finish();
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
