//! `fingerprints.bin`: every page's [`Fingerprint`], in blocks a reader can
//! take one at a time. The fingerprints are most of an analysis's memory
//! (every page's line hashes and min-hash), and the server needs only those
//! of the pages it shows: the page view's copies and the statistics page's
//! stand-ins. So they live in a file of their own, beside `similarity.bin`,
//! and the server reads a block when it needs one; the reports, `eval`,
//! `export` and `check` read them all.
//!
//! ```text
//! header   "MSFPRNT1", pages (u64), pages per block (u64)
//! blocks   one zstd frame each (with its checksum) of the postcard encoding
//!          of its pages' `Option<Fingerprint>`s, in page order
//! index    the offset of each block, then that of the index itself (u64s)
//! footer   the offset of the index (u64)
//! ```
//!
//! Numbers are little-endian. The file is written once, streaming, by the
//! generation's writer, and never changed.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{io_error, DataError, Result};
use crate::fingerprint::{Fingerprint, Fingerprints};

/// The file's name in a generation's folder.
pub(crate) const FINGERPRINTS_FILE: &str = "fingerprints.bin";
const MAGIC: &[u8; 8] = b"MSFPRNT1";
const HEADER_BYTES: u64 = 24;
/// Pages per block: what the page view reads to show one page's copy (a
/// few tens of kilobytes), small against the file of a big crawl.
pub const PAGES_PER_BLOCK: usize = 64;
/// Blocks compressed at once, in parallel, between two writes.
const BLOCKS_PER_BATCH: usize = 256;

/// Writes `fingerprints` (by page id) to `path` and syncs it; see the
/// module's documentation.
pub fn write(path: &Path, fingerprints: &[Option<Fingerprint>]) -> Result<()> {
    write_blocks(path, fingerprints.len(), PAGES_PER_BLOCK, |range| {
        Ok(Cow::Borrowed(&fingerprints[range]))
    })
}

/// Writes the fingerprints of `pages` pages to `path` as [`write`] does,
/// `fetch` giving those of a range of page ids at a time: the pages'
/// fingerprints need not all be held at once.
pub fn write_with<'a>(
    path: &Path,
    pages: usize,
    fetch: impl FnMut(Range<usize>) -> Result<Cow<'a, [Option<Fingerprint>]>>,
) -> Result<()> {
    write_blocks(path, pages, PAGES_PER_BLOCK, fetch)
}

fn write_blocks<'a>(
    path: &Path,
    pages: usize,
    per_block: usize,
    mut fetch: impl FnMut(Range<usize>) -> Result<Cow<'a, [Option<Fingerprint>]>>,
) -> Result<()> {
    let file = File::create(path).map_err(io_error(path))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut header = Vec::with_capacity(HEADER_BYTES as usize);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&(pages as u64).to_le_bytes());
    header.extend_from_slice(&(per_block as u64).to_le_bytes());
    out.write_all(&header).map_err(io_error(path))?;
    let mut offsets = Vec::with_capacity(pages.div_ceil(per_block) + 1);
    let mut at = HEADER_BYTES;
    let batch_pages = per_block * BLOCKS_PER_BATCH;
    for start in (0..pages).step_by(batch_pages) {
        let batch = fetch(start..pages.min(start + batch_pages))?;
        let blocks = batch
            .par_chunks(per_block)
            .map(|block| compress(path, block))
            .collect::<Result<Vec<Vec<u8>>>>()?;
        for block in blocks {
            offsets.push(at);
            out.write_all(&block).map_err(io_error(path))?;
            at += block.len() as u64;
        }
    }
    offsets.push(at);
    let mut index = Vec::with_capacity(offsets.len() * 8 + 8);
    for offset in offsets {
        index.extend_from_slice(&offset.to_le_bytes());
    }
    index.extend_from_slice(&at.to_le_bytes());
    out.write_all(&index).map_err(io_error(path))?;
    let file = out
        .into_inner()
        .map_err(|error| io_error(path)(error.into_error()))?;
    file.sync_all().map_err(io_error(path))
}

fn compress(path: &Path, block: &[Option<Fingerprint>]) -> Result<Vec<u8>> {
    let encoded = postcard::to_allocvec(block).map_err(|error| DataError::Format {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })?;
    let mut encoder = zstd::Encoder::new(Vec::new(), 3).map_err(io_error(path))?;
    encoder.include_checksum(true).map_err(io_error(path))?;
    encoder.write_all(&encoded).map_err(io_error(path))?;
    encoder.finish().map_err(io_error(path))
}

thread_local! {
    /// The thread's zstd decompression context, kept from block to block:
    /// a new one for each block of 64 pages set up its window of 2 MiB
    /// afresh (pages the system had to give and zero each time), which
    /// was a tenth of the mirrors stage of a million pages (`perf`).
    static CONTEXT: std::cell::RefCell<Option<zstd::zstd_safe::DCtx<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// The bytes of one block's frame.
fn decompress(compressed: &[u8]) -> std::io::Result<Vec<u8>> {
    CONTEXT.with_borrow_mut(|slot| {
        let context = match slot {
            Some(context) => context,
            None => slot.insert(zstd::zstd_safe::DCtx::try_create().ok_or_else(|| {
                std::io::Error::other("zstd could not set up a decompression context")
            })?),
        };
        // A block that failed may have left the context in the middle of
        // its frame.
        context
            .reset(zstd::zstd_safe::ResetDirective::SessionOnly)
            .map_err(|code| std::io::Error::other(zstd::zstd_safe::get_error_name(code)))?;
        let mut decoder = zstd::stream::read::Decoder::with_context(compressed, context);
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut decoder, &mut bytes)?;
        Ok(bytes)
    })
}

/// A generation's `fingerprints.bin`, opened: its header and block index
/// are read and checked, the blocks are read when asked for.
#[derive(Debug)]
pub struct FingerprintFile {
    path: PathBuf,
    file: File,
    pages: usize,
    per_block: usize,
    /// The offset of each block, then the end of the last.
    offsets: Vec<u64>,
}

impl FingerprintFile {
    /// Opens the file at `path`, refusing one whose header, index or
    /// length do not agree.
    pub fn open(path: &Path) -> Result<FingerprintFile> {
        let file = File::open(path).map_err(io_error(path))?;
        let length = file.metadata().map_err(io_error(path))?.len();
        let problem = |detail: String| DataError::Format {
            path: path.to_path_buf(),
            detail,
        };
        if length < HEADER_BYTES + 16 {
            return Err(problem(format!(
                "{length} bytes is too short for a fingerprints file"
            )));
        }
        let mut header = [0u8; HEADER_BYTES as usize];
        file.read_exact_at(&mut header, 0).map_err(io_error(path))?;
        if &header[..8] != MAGIC {
            return Err(problem(
                "not a fingerprints file of this build (its header differs)".into(),
            ));
        }
        let number =
            |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
        let (pages, per_block) = (number(8), number(16));
        let mut footer = [0u8; 8];
        file.read_exact_at(&mut footer, length - 8)
            .map_err(io_error(path))?;
        let index_at = u64::from_le_bytes(footer);
        let blocks = if per_block == 0 {
            None
        } else {
            Some(pages.div_ceil(per_block))
        };
        let index_bytes = blocks
            .and_then(|blocks| blocks.checked_add(1))
            .and_then(|entries| entries.checked_mul(8));
        let expected_length = index_bytes
            .and_then(|bytes| bytes.checked_add(8))
            .and_then(|bytes| bytes.checked_add(index_at));
        let (Some(blocks), Some(index_bytes)) = (blocks, index_bytes) else {
            return Err(problem(if per_block == 0 {
                format!("its header says {pages} pages in blocks of 0 pages")
            } else {
                format!("its header says {pages} pages in blocks of {per_block}: more blocks than a file can index")
            }));
        };
        if expected_length != Some(length) || index_at < HEADER_BYTES {
            return Err(problem(format!(
                "{length} bytes, but its index of {blocks} blocks at byte {index_at} says otherwise: the file is cut short or damaged"
            )));
        }
        let mut index = vec![0u8; index_bytes as usize];
        file.read_exact_at(&mut index, index_at)
            .map_err(io_error(path))?;
        let offsets: Vec<u64> = index
            .chunks_exact(8)
            .map(|bytes| u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
            .collect();
        if offsets.first() != Some(&HEADER_BYTES) || offsets.last() != Some(&index_at) {
            return Err(problem(format!(
                "its block index runs from byte {} to {}, not from the header's end ({HEADER_BYTES}) to the index ({index_at})",
                offsets.first().copied().unwrap_or_default(),
                offsets.last().copied().unwrap_or_default()
            )));
        }
        if let Some(entry) = offsets.windows(2).position(|pair| pair[0] > pair[1]) {
            return Err(problem(format!(
                "block {} starts at byte {}, before block {entry} (byte {})",
                entry + 1,
                offsets[entry + 1],
                offsets[entry]
            )));
        }
        Ok(FingerprintFile {
            path: path.to_path_buf(),
            file,
            pages: pages as usize,
            per_block: per_block as usize,
            offsets,
        })
    }

    /// Pages the file holds a fingerprint (or `None`) for.
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// Every page's fingerprint, by page id (blocks decoded in parallel).
    pub fn read_all(&self) -> Result<Vec<Option<Fingerprint>>> {
        let blocks = (0..self.offsets.len() - 1)
            .into_par_iter()
            .map(|block| self.block(block))
            .collect::<Result<Vec<_>>>()?;
        let mut all = Vec::with_capacity(self.pages);
        for block in blocks {
            all.extend(block);
        }
        Ok(all)
    }

    /// The fingerprints of block `number`, checked: its checksum, its
    /// encoding, and its number of pages.
    fn block(&self, number: usize) -> Result<Vec<Option<Fingerprint>>> {
        let (start, end) = (self.offsets[number], self.offsets[number + 1]);
        let mut compressed = vec![0u8; (end - start) as usize];
        self.file
            .read_exact_at(&mut compressed, start)
            .map_err(io_error(&self.path))?;
        let problem = |detail: String| DataError::Format {
            path: self.path.clone(),
            detail: format!(
                "block {number} (pages from {}): {detail}",
                number * self.per_block
            ),
        };
        let encoded = decompress(&compressed).map_err(|error| problem(error.to_string()))?;
        let block: Vec<Option<Fingerprint>> =
            postcard::from_bytes(&encoded).map_err(|error| problem(error.to_string()))?;
        let expected = self.per_block.min(self.pages - number * self.per_block);
        if block.len() != expected {
            return Err(problem(format!(
                "{} pages where {expected} belong",
                block.len()
            )));
        }
        Ok(block)
    }
}

impl Fingerprints for FingerprintFile {
    type Error = DataError;

    fn page_count(&self) -> usize {
        self.pages
    }

    fn map_pages<R: Send>(
        &self,
        pages: &[usize],
        map: impl Fn(usize, Option<&Fingerprint>) -> R + Sync,
    ) -> Result<Vec<R>> {
        debug_assert!(pages.is_sorted(), "pages are asked for in order");
        // Runs of `pages` in one block (pages past the end make one of
        // their own), each block read and decoded once.
        let block_of = |page: usize| (page < self.pages).then(|| page / self.per_block);
        let mut runs = Vec::new();
        let mut start = 0;
        for index in 1..=pages.len() {
            if index == pages.len() || block_of(pages[index]) != block_of(pages[start]) {
                runs.push(&pages[start..index]);
                start = index;
            }
        }
        let mapped = runs
            .into_par_iter()
            .map(|run| match block_of(run[0]) {
                None => Ok(run.iter().map(|&page| map(page, None)).collect()),
                Some(number) => {
                    let block = self.block(number)?;
                    Ok(run
                        .iter()
                        .map(|&page| map(page, block[page % self.per_block].as_ref()))
                        .collect::<Vec<R>>())
                }
            })
            .collect::<Result<Vec<Vec<R>>>>()?;
        Ok(mapped.into_iter().flatten().collect())
    }

    fn visit(
        &self,
        pages: &[usize],
        visit: &mut dyn FnMut(usize, Option<&Fingerprint>),
    ) -> Result<()> {
        let mut by_block: Vec<usize> = pages.to_vec();
        by_block.sort_unstable();
        by_block.dedup();
        let mut loaded: Option<(usize, Vec<Option<Fingerprint>>)> = None;
        for page in by_block {
            if page >= self.pages {
                visit(page, None);
                continue;
            }
            let number = page / self.per_block;
            if loaded.as_ref().is_none_or(|(held, _)| *held != number) {
                loaded = Some((number, self.block(number)?));
            }
            let (_, block) = loaded.as_ref().expect("loaded above");
            visit(page, block[page % self.per_block].as_ref());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::{FingerprintSpill, Spilled};

    fn fingerprints(pages: usize) -> Vec<Option<Fingerprint>> {
        (0..pages)
            .map(|page| {
                (page % 5 != 3).then(|| {
                    Fingerprint::of_page(
                        &format!("Page {page}"),
                        &format!("line one of {page}\nline two {}\nthe end", page * 7),
                    )
                })
            })
            .collect()
    }

    fn in_blocks_of(path: &Path, written: &[Option<Fingerprint>], per_block: usize) {
        write_blocks(path, written.len(), per_block, |range| {
            Ok(Cow::Borrowed(&written[range]))
        })
        .unwrap();
    }

    /// 23 pages' fingerprints written in `folder` in blocks of 4 (a last
    /// block of 3), and the file opened.
    fn twenty_three_in_blocks_of_four(
        folder: &Path,
    ) -> (Vec<Option<Fingerprint>>, FingerprintFile) {
        let path = folder.join(FINGERPRINTS_FILE);
        let written = fingerprints(23);
        in_blocks_of(&path, &written, 4);
        (written, FingerprintFile::open(&path).unwrap())
    }

    #[test]
    fn every_page_is_read_back_whole_and_one_at_a_time() {
        let folder = tempfile::tempdir().unwrap();
        let (written, file) = twenty_three_in_blocks_of_four(folder.path());
        assert_eq!(file.pages(), 23);
        assert_eq!(file.read_all().unwrap(), written);
        let asked = [22, 0, 3, 3, 9, 30];
        let read = file.of_pages(&asked).unwrap();
        let expected: Vec<_> = asked
            .iter()
            .map(|&page| written.get(page).cloned().flatten())
            .collect();
        assert_eq!(read, expected);
        assert_eq!(written.of_pages(&asked).unwrap(), expected);
    }

    #[test]
    fn mapping_pages_gives_each_its_own_fingerprint_in_order() {
        let folder = tempfile::tempdir().unwrap();
        let (written, file) = twenty_three_in_blocks_of_four(folder.path());
        assert_eq!((file.page_count(), written.page_count()), (23, 23));
        // Runs within a block, a lone page of a block, the last block's
        // pages, and pages past the end.
        let asked = [0, 1, 3, 4, 9, 20, 22, 23, 30];
        let signature = |page: usize, print: Option<&Fingerprint>| {
            (page, print.map(|print| print.text_signature))
        };
        let expected: Vec<_> = asked
            .iter()
            .map(|&page| {
                (
                    page,
                    written
                        .get(page)
                        .cloned()
                        .flatten()
                        .map(|print| print.text_signature),
                )
            })
            .collect();
        assert_eq!(file.map_pages(&asked, signature).unwrap(), expected);
        assert_eq!(written.map_pages(&asked, signature).unwrap(), expected);
        assert!(file.map_pages(&[], signature).unwrap().is_empty());
    }

    #[test]
    fn fingerprints_set_aside_are_read_back_by_where_they_were_put() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("spill");
        let prints = fingerprints(600);
        let mut spill = FingerprintSpill::create(&path).unwrap();
        let places: Vec<Option<Spilled>> = prints
            .iter()
            .map(|print| print.as_ref().map(|print| spill.put(print).unwrap()))
            .collect();
        // Nothing is left behind under its name.
        assert!(!path.exists());
        let spilled = spill.finish().unwrap();
        // Read back in another order, as a page table orders its pages.
        let order: Vec<usize> = (0..prints.len()).rev().step_by(3).collect();
        let asked: Vec<Option<Spilled>> = order.iter().map(|&at| places[at]).collect();
        let expected: Vec<Option<Fingerprint>> =
            order.iter().map(|&at| prints[at].clone()).collect();
        assert_eq!(spilled.read(&asked).unwrap(), expected);

        // The pages' file written a batch at a time from the spill (blocks
        // of one page: batches of 256) is the one written from them all.
        let (whole, batched) = (folder.path().join("whole"), folder.path().join("batched"));
        in_blocks_of(&whole, &prints, 1);
        let mut batches = Vec::new();
        write_blocks(&batched, prints.len(), 1, |range| {
            batches.push(range.clone());
            Ok(spilled.read(&places[range]).map(Cow::Owned)?)
        })
        .unwrap();
        assert_eq!(batches, [0..256, 256..512, 512..600]);
        assert_eq!(
            std::fs::read(&whole).unwrap(),
            std::fs::read(&batched).unwrap()
        );
        assert_eq!(
            FingerprintFile::open(&batched).unwrap().read_all().unwrap(),
            prints
        );
    }

    #[test]
    fn no_pages_is_a_file_of_no_blocks() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join(FINGERPRINTS_FILE);
        write(&path, &[]).unwrap();
        let file = FingerprintFile::open(&path).unwrap();
        assert_eq!(file.pages(), 0);
        assert!(file.read_all().unwrap().is_empty());
        assert_eq!(file.of_pages(&[0]).unwrap(), vec![None]);
    }

    #[test]
    fn a_block_reads_whole_after_one_cut_short_on_the_same_thread() {
        let bytes: Vec<u8> = (0..200_000u32)
            .flat_map(|n| (n % 251).to_le_bytes())
            .collect();
        let frame = compress(Path::new("test"), &fingerprints(30)).unwrap();
        let big = zstd::encode_all(bytes.as_slice(), 3).unwrap();
        assert!(decompress(&big[..big.len() / 2]).is_err());
        assert_eq!(decompress(&big).unwrap(), bytes);
        assert!(decompress(&big[..big.len() - 1]).is_err());
        let encoded = decompress(&frame).unwrap();
        let block: Vec<Option<Fingerprint>> = postcard::from_bytes(&encoded).unwrap();
        assert_eq!(block, fingerprints(30));
    }

    #[test]
    fn a_cut_or_damaged_file_is_refused_with_where() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join(FINGERPRINTS_FILE);
        in_blocks_of(&path, &fingerprints(10), 4);
        let bytes = std::fs::read(&path).unwrap();

        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let error = FingerprintFile::open(&path).unwrap_err().to_string();
        assert!(error.contains("cut short or damaged"), "{error}");

        let mut other = bytes.clone();
        other[0] = b'X';
        std::fs::write(&path, &other).unwrap();
        let error = FingerprintFile::open(&path).unwrap_err().to_string();
        assert!(error.contains("not a fingerprints file"), "{error}");

        // A byte of the second block changed: its checksum fails, and the
        // first block still reads.
        let file_of = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            FingerprintFile::open(&path).unwrap()
        };
        let second = file_of(&bytes).offsets[1] as usize + 20;
        let mut damaged = bytes.clone();
        damaged[second] ^= 0x55;
        let file = file_of(&damaged);
        let error = file.read_all().unwrap_err().to_string();
        assert!(error.contains("block 1 (pages from 4)"), "{error}");
        assert!(error.contains(FINGERPRINTS_FILE), "{error}");
        assert_eq!(file.of_pages(&[1]).unwrap().len(), 1);
    }
}
