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
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rustc_hash::FxHashMap;

use crate::corpus::charset::EncodingName;
use crate::store::ContentKey;

/// Which body a text is of: pages with the same body and encoding share it.
type Body = (ContentKey, EncodingName);

/// Where a text and its headings are, and their lengths once decompressed.
#[derive(Debug, Clone, Copy)]
struct Place {
    at: u64,
    stored: u32,
    text: u32,
    headings: u32,
}

/// Texts being kept, while ingest writes them ([`TextSpill::put`], from
/// any thread); [`TextSpill::finish`] makes them [`KeptTexts`] to read.
#[derive(Debug)]
pub struct TextSpill {
    path: PathBuf,
    /// Texts of this many bytes or more are not kept: the index reads only
    /// the start of those ([`super::IndexConfig::max_text_bytes`]).
    longest: usize,
    state: Mutex<Writing>,
    /// A write failed: nothing more is kept, and nothing written is read
    /// (the index stage reads the bodies instead).
    failed: AtomicBool,
}

#[derive(Debug)]
struct Writing {
    out: BufWriter<File>,
    end: u64,
    places: FxHashMap<Body, Place>,
}

/// The texts ingest kept, to read from any thread ([`KeptTexts::get`]).
#[derive(Debug, Default)]
pub struct KeptTexts {
    path: PathBuf,
    file: Option<File>,
    places: FxHashMap<Body, Place>,
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
            longest,
            state: Mutex::new(Writing {
                out: BufWriter::with_capacity(1 << 20, file),
                end: 0,
                places: FxHashMap::default(),
            }),
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
    /// that cannot be kept is read from the store again.
    pub fn put(&self, (key, encoding): Body, text: &str, headings: &str) {
        if text.len() >= self.longest
            || self.failed.load(Ordering::Relaxed)
            || self.writing().places.contains_key(&(key, encoding))
        {
            return;
        }
        let (Ok(text_length), Ok(headings_length)) =
            (u32::try_from(text.len()), u32::try_from(headings.len()))
        else {
            return;
        };
        let mut both = String::with_capacity(text.len() + headings.len());
        both.push_str(text);
        both.push_str(headings);
        let compressed = lz4_flex::compress(both.as_bytes());
        let place = Place {
            at: 0,
            stored: 0,
            text: text_length,
            headings: headings_length,
        };
        if let Err(error) = self.write((key, encoding), &compressed, place) {
            self.give_up(&error);
        }
    }

    /// Appends `compressed` as the text of `body` at `place` (its lengths),
    /// unless another thread kept it first.
    fn write(&self, body: Body, compressed: &[u8], place: Place) -> std::io::Result<()> {
        let stored = u32::try_from(compressed.len())
            .map_err(|_| std::io::Error::other("a compressed text of 4 GiB or more"))?;
        let mut writing = self.writing();
        if writing.places.contains_key(&body) {
            return Ok(());
        }
        writing.out.write_all(compressed)?;
        let at = writing.end;
        writing.end += u64::from(stored);
        writing.places.insert(
            body,
            Place {
                at,
                stored,
                ..place
            },
        );
        Ok(())
    }

    fn give_up(&self, error: &std::io::Error) {
        if !self.failed.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "{}: the texts ingest extracted cannot be kept ({error}); the index stage reads the bodies again",
                self.path.display()
            );
        }
    }

    /// Done writing: the texts kept, to read. None when a write failed.
    pub fn finish(self) -> KeptTexts {
        let path = self.path.clone();
        let failed = self.failed.load(Ordering::Relaxed);
        let writing = self
            .state
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if failed {
            return KeptTexts::default();
        }
        match writing.out.into_inner() {
            Ok(file) => KeptTexts {
                path,
                file: Some(file),
                places: writing.places,
            },
            Err(error) => {
                let error = error.into_error();
                tracing::warn!(
                    "{}: the texts ingest extracted cannot be kept ({error}); the index stage reads the bodies again",
                    path.display()
                );
                KeptTexts::default()
            }
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

    /// Bytes of the texts kept (with their headings), and of the file.
    pub fn bytes(&self) -> (u64, u64) {
        self.places.values().fold((0, 0), |(text, stored), place| {
            (
                text + u64::from(place.text) + u64::from(place.headings),
                stored + u64::from(place.stored),
            )
        })
    }

    /// The text and headings of `body` read as `encoding`, if kept; `None`
    /// (with a warning) when they cannot be read back.
    pub fn get(&self, key: ContentKey, encoding: EncodingName) -> Option<(String, String)> {
        let place = *self.places.get(&(key, encoding))?;
        let file = self.file.as_ref()?;
        let read = || -> std::io::Result<(String, String)> {
            let mut stored = vec![0; place.stored as usize];
            file.read_exact_at(&mut stored, place.at)?;
            let capacity = place.text as usize + place.headings as usize;
            let mut both =
                lz4_flex::decompress(&stored, capacity).map_err(std::io::Error::other)?;
            if both.len() != capacity {
                return Err(std::io::Error::other(format!(
                    "{} bytes where {capacity} were written",
                    both.len()
                )));
            }
            let headings = both.split_off(place.text as usize);
            let invalid = |_| std::io::Error::other("bytes that are not UTF-8");
            Ok((
                String::from_utf8(both).map_err(invalid)?,
                String::from_utf8(headings).map_err(invalid)?,
            ))
        };
        match read() {
            Ok(texts) => Some(texts),
            Err(error) => {
                tracing::warn!(
                    "{}: the text of {key} cannot be read back ({error}); its body is read instead",
                    self.path.display()
                );
                None
            }
        }
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

    /// Bytes that changed on the disk are no text: the body is read instead.
    #[test]
    fn a_kept_text_that_reads_back_wrong_is_not_given() {
        let (_folder, spill) = spill(1 << 20);
        let utf8 = EncodingName::from_label("utf-8");
        spill.put((key(1), utf8), &"a line of text\n".repeat(50), "");
        spill.put((key(2), utf8), "another text", "");
        let kept = spill.finish();
        let file = kept.file.as_ref().unwrap();
        let first = kept.places[&(key(1), utf8)];
        file.write_all_at(&vec![0xff; first.stored as usize], first.at)
            .unwrap();
        assert_eq!(kept.get(key(1), utf8), None);
        assert_eq!(kept.get(key(2), utf8).unwrap().0, "another text");
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
