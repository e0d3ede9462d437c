//! Fingerprints set aside in a file while a crawl is read and its page
//! table built, so that no stage before the generation's fingerprint file
//! holds them all.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::Fingerprint;

/// A spill that could not be written or read: its file, and why.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct SpillError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl SpillError {
    fn new(path: &Path, source: std::io::Error) -> SpillError {
        SpillError {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Bytes that are not a fingerprint (or one too long to set aside).
fn invalid(detail: impl ToString) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, detail.to_string())
}

/// Fingerprints set aside while a page table is built from their
/// captures: written one after another to a file of no name (removed as
/// soon as it is opened, so nothing is left behind), each read back by
/// where it was put. The captures of a big crawl hold their fingerprints
/// (min-hashes and line hashes, 0.67 KB a page) until then; set aside,
/// they cost the page table stage nothing, and the pages' fingerprints
/// file is written from here a batch of pages at a time
/// ([`write_with`]).
#[derive(Debug)]
pub struct FingerprintSpill {
    path: PathBuf,
    out: BufWriter<File>,
    at: u64,
    /// The last fingerprint's bytes (one buffer for them all).
    bytes: Vec<u8>,
}

/// Where [`FingerprintSpill::put`] wrote a fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spilled {
    at: u64,
    length: u32,
}

/// A [`FingerprintSpill`] written, to read from.
#[derive(Debug)]
pub struct SpilledFingerprints {
    path: PathBuf,
    file: File,
}

impl FingerprintSpill {
    /// Starts one at `path` (its name is given up at once).
    pub fn create(path: &Path) -> Result<FingerprintSpill, SpillError> {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|error| SpillError::new(path, error))?;
        std::fs::remove_file(path).map_err(|error| SpillError::new(path, error))?;
        Ok(FingerprintSpill {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 20, file),
            at: 0,
            bytes: Vec::new(),
        })
    }

    /// Writes `print`; says where, to read it back.
    pub fn put(&mut self, print: &Fingerprint) -> Result<Spilled, SpillError> {
        let mut bytes = std::mem::take(&mut self.bytes);
        bytes.clear();
        self.bytes = postcard::to_extend(print, bytes)
            .map_err(|error| SpillError::new(&self.path, invalid(error)))?;
        let length = u32::try_from(self.bytes.len()).map_err(|_| {
            SpillError::new(
                &self.path,
                invalid(format!("a fingerprint of {} bytes", self.bytes.len())),
            )
        })?;
        self.out
            .write_all(&self.bytes)
            .map_err(|error| SpillError::new(&self.path, error))?;
        let spilled = Spilled {
            at: self.at,
            length,
        };
        self.at += u64::from(length);
        Ok(spilled)
    }

    /// The fingerprint put at `place`, read while the spill is still
    /// written to (what was buffered is written first).
    pub fn get(&mut self, place: Spilled) -> Result<Fingerprint, SpillError> {
        self.out
            .flush()
            .map_err(|error| SpillError::new(&self.path, error))?;
        read_spilled(&self.path, self.out.get_ref(), place)
    }

    /// Done writing: what was put can be read.
    pub fn finish(self) -> Result<SpilledFingerprints, SpillError> {
        let path = self.path;
        let file = self
            .out
            .into_inner()
            .map_err(|error| SpillError::new(&path, error.into_error()))?;
        Ok(SpilledFingerprints { path, file })
    }
}

impl SpilledFingerprints {
    /// The fingerprints put at `places`, in their order.
    pub fn read(&self, places: &[Option<Spilled>]) -> Result<Vec<Option<Fingerprint>>, SpillError> {
        places
            .par_iter()
            .map(|place| {
                place
                    .map(|place| read_spilled(&self.path, &self.file, place))
                    .transpose()
            })
            .collect()
    }
}

/// The fingerprint at `place` in the spill `file` (at `path`).
fn read_spilled(path: &Path, file: &File, place: Spilled) -> Result<Fingerprint, SpillError> {
    let mut bytes = vec![0u8; place.length as usize];
    file.read_exact_at(&mut bytes, place.at)
        .map_err(|error| SpillError::new(path, error))?;
    postcard::from_bytes(&bytes).map_err(|error| SpillError::new(path, invalid(error)))
}
