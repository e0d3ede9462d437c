//! Ingest in parts: a crawl's WARC files read by separate processes (the
//! Spark job `ingest`, docs/SCALING.md), each part then taken into the data
//! folder as if `index` had read its files.
//!
//! `mirrorscope ingest-part FILE… --out PART` ([`ingest_part`]) reads its
//! files as `index` does (decoding, extraction, fingerprints) into a folder
//! of its own: a page store holding their bodies, the captures as Parquet
//! tables (captures, links, fingerprints, lines: [`super::part_tables`]),
//! which a Spark job reads as they are, the text of each distinct body as
//! extracted ([`crate::store::texts`]), and `part.bin`, what was read of
//! each file (how many captures, its revisit records and counts). A part
//! is written under a temporary name and renamed once whole, so a task run
//! twice finds it done.
//!
//! `mirrorscope index INPUT… --parts DIR` ([`assemble_parts`]) then lists the
//! crawl's files as `index` does and takes each file's part instead of
//! reading it: the bodies copied into the data folder's store (once a body,
//! each capture a reference, journaled as ingest journals them; the texts
//! the part kept, kept for the index as ingest keeps them), the file
//! names as the listing gives them, then the files merged as `index`
//! merges them (revisits resolved across every part). The crawl, its id
//! and its generation are those `index` makes of the same files.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::{
    io_error, merge_files, read_files, Counters, FileResult, IngestError, IngestOptions, Ingested,
    ReferenceJournal, Result, REFERENCES_FILE,
};
use crate::store::texts::{KeptTexts, TextSpill, TEXTS_FILE};
use crate::store::{ContentKey, PageStore, StoreConfig};

/// The file of a part that says what was read.
pub const PART_FILE: &str = "part.bin";

/// The folder of a part that holds its bodies.
const STORE_DIR: &str = "store";

/// The first bytes of [`PART_FILE`]: a part of another build's format is
/// refused, not misread.
const PART_HEADER: &[u8] = b"mirrorscope ingest part 3 (captures in Parquet)\n";

/// A file as it was when its part read it: a file changed since (a crawl
/// file appended to, replaced) is read again, not taken from the part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileStamp {
    fn of(path: &Path) -> std::io::Result<FileStamp> {
        let metadata = std::fs::metadata(path)?;
        Ok(FileStamp {
            len: metadata.len(),
            modified: metadata.modified().ok(),
        })
    }
}

/// What a part read of one file.
#[derive(Clone)]
enum PartFile {
    Read(FileResult),
    /// It could not be read at all (missing, not WARC): why, as `index`
    /// reports it.
    Failed {
        reason: String,
        message: String,
    },
}

/// What a part read of its files.
struct Part {
    /// Each file as the part was given it, as it was before it was read,
    /// and what was read of it.
    files: Vec<(String, FileStamp, PartFile)>,
}

/// What `part.bin` holds of a file: what a part read of it but its
/// captures, which are in the part's tables.
#[derive(Serialize, Deserialize)]
enum Listed {
    Read {
        captures: usize,
        revisits: Vec<crate::corpus::Revisit>,
        counts: super::report::Counts,
    },
    Failed {
        reason: String,
        message: String,
    },
}

/// `part.bin`: each file as the part was given it, as it was before it was
/// read, and what was read of it.
#[derive(Serialize, Deserialize)]
struct Listing {
    files: Vec<(String, FileStamp, Listed)>,
}

/// What `ingest-part` did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartSummary {
    pub files: usize,
    pub captures: usize,
    /// False when the part was written before (a task run again).
    pub written: bool,
    /// Inputs passed over, as `index` passes them over (not a regular
    /// file, empty, unreadable), with why; `index --parts` reports them.
    pub skipped: usize,
}

/// Reads the WARC files of `inputs` (files, and folders of them, listed as
/// `index` lists a crawl's: nothing that is not a regular file is opened)
/// into the part folder `part`, which must not exist, or be a finished
/// part of the same files: then nothing is read again.
pub fn ingest_part(
    inputs: &[PathBuf],
    part: &Path,
    options: &IngestOptions<'_>,
    (store_config, longest_text): (&StoreConfig, usize),
) -> Result<PartSummary> {
    let listed = crate::corpus::list_warc_files(inputs)?;
    for (path, why) in &listed.skipped {
        // What `index` passes over (not a regular file, empty, a link to
        // nothing) is passed over; a file that could not be opened may open
        // on a retry (on another machine): the task fails.
        let passed_over = match std::fs::metadata(path) {
            Ok(metadata) => !metadata.is_file() || metadata.len() == 0,
            Err(error) => error.kind() == std::io::ErrorKind::NotFound,
        };
        if !passed_over {
            return Err(IngestError::Format {
                path: path.clone(),
                detail: why.clone(),
            });
        }
        tracing::warn!("{}: passed over: {why}", path.display());
    }
    let files = &listed.files;
    let skipped = listed.skipped.len();
    if part.join(PART_FILE).is_file() {
        match read_listing(part) {
            Ok(read) => {
                let given: Vec<PathBuf> = files.iter().map(|path| same_file(path)).collect();
                let written: Vec<PathBuf> = read
                    .files
                    .iter()
                    .map(|(path, _, _)| same_file(Path::new(path)))
                    .collect();
                if given != written {
                    return Err(IngestError::Format {
                        path: part.to_path_buf(),
                        detail: "a part of other files is there: remove it, or name another part"
                            .into(),
                    });
                }
                let unchanged = read.files.iter().all(|(path, stamp, _)| {
                    FileStamp::of(Path::new(path)).is_ok_and(|now| now == *stamp)
                });
                if unchanged {
                    return Ok(PartSummary {
                        files: read.files.len(),
                        captures: read.captures(),
                        written: false,
                        skipped,
                    });
                }
                tracing::info!(part = %part.display(), "a file changed since the part read it: reading again");
            }
            // Of another build's format, or damaged: read again.
            Err(error) => tracing::info!("{error}: reading the part again"),
        }
        // Renamed aside first, a name `parts_in` passes over: never taken
        // half removed.
        crate::atomic::remove_folder(part).map_err(io_error(part))?;
    }
    // Its own: another attempt at this part (a retried task, elsewhere)
    // may be writing beside it.
    let temporary = crate::atomic::unique_temporary_beside(part);
    if let Some(parent) = temporary.parent() {
        std::fs::create_dir_all(parent).map_err(io_error(parent))?;
    }
    std::fs::create_dir(&temporary).map_err(io_error(&temporary))?;
    let written = (|| {
        let store =
            PageStore::open(&temporary.join(STORE_DIR), store_config.clone())?.stage_writes();
        let journal = ReferenceJournal::create(temporary.join(REFERENCES_FILE))?;
        let counters = Counters::default();
        // Each distinct body's text, for the shards' index tasks.
        let texts_path = temporary.join(TEXTS_FILE);
        let texts =
            TextSpill::create_named(&texts_path, longest_text).map_err(io_error(&texts_path))?;
        let options = IngestOptions {
            texts: Some(&texts),
            ..*options
        };
        // Before reading: a file that changes while it is read is then
        // found changed.
        let stamps = files
            .iter()
            .map(|path| FileStamp::of(path).map_err(io_error(path)))
            .collect::<Result<Vec<_>>>()?;
        let per_file = read_files(files, &store, &journal, &options, &counters);
        store.flush()?;
        journal.finish()?;
        drop(store);
        texts
            .finish()
            .persist_into(&temporary)
            .map_err(io_error(&texts_path))?;
        let mut read = Part { files: Vec::new() };
        for ((path, stamp), result) in files.iter().zip(stamps).zip(per_file) {
            let outcome = match result {
                Ok(file) => PartFile::Read(file),
                // A file that is not WARC stays so: the crawl reports it.
                // One that could not be opened may open on a retry (on
                // another machine): the task fails.
                Err(IngestError::Warc(error @ crate::corpus::WarcError::NotWarc { .. })) => {
                    PartFile::Failed {
                        reason: error.reason().to_string(),
                        message: error.to_string(),
                    }
                }
                Err(error) => return Err(error),
            };
            read.files
                .push((path.display().to_string(), stamp, outcome));
        }
        write_part(&temporary, &read)?;
        std::fs::File::open(&temporary)
            .and_then(|folder| folder.sync_all())
            .map_err(io_error(&temporary))?;
        let written = match std::fs::rename(&temporary, part) {
            Ok(()) => true,
            // Another attempt finished first: its part stays.
            Err(_) if part.join(PART_FILE).is_file() => {
                std::fs::remove_dir_all(&temporary).map_err(io_error(&temporary))?;
                false
            }
            Err(error) => return Err(io_error(part)(error)),
        };
        Ok(PartSummary {
            files: read.files.len(),
            captures: read
                .files
                .iter()
                .map(|(_, _, file)| match file {
                    PartFile::Read(file) => file.captures.len(),
                    PartFile::Failed { .. } => 0,
                })
                .sum(),
            written,
            skipped,
        })
    })();
    if written.is_err() && temporary.exists() {
        let _ = std::fs::remove_dir_all(&temporary);
    }
    written
}

impl Listing {
    fn captures(&self) -> usize {
        self.files
            .iter()
            .map(|(_, _, file)| match file {
                Listed::Read { captures, .. } => *captures,
                Listed::Failed { .. } => 0,
            })
            .fold(0usize, usize::saturating_add)
    }
}

/// Writes `part` into `folder`: its captures as the tables, then
/// `part.bin`.
fn write_part(folder: &Path, part: &Part) -> Result<()> {
    // Every file, one that could not be read with no capture: `file` in
    // the tables is its place in `part.bin`.
    let read: Vec<&[crate::pages::Capture]> = part
        .files
        .iter()
        .map(|(_, _, file)| match file {
            PartFile::Read(file) => file.captures.as_slice(),
            PartFile::Failed { .. } => &[],
        })
        .collect();
    super::part_tables::write(folder, &read)?;
    let listing = Listing {
        files: part
            .files
            .iter()
            .map(|(path, stamp, file)| {
                let listed = match file {
                    PartFile::Read(file) => Listed::Read {
                        captures: file.captures.len(),
                        revisits: file.revisits.clone(),
                        counts: file.counts.clone(),
                    },
                    PartFile::Failed { reason, message } => Listed::Failed {
                        reason: reason.clone(),
                        message: message.clone(),
                    },
                };
                (path.clone(), stamp.clone(), listed)
            })
            .collect(),
    };
    let path = &folder.join(PART_FILE);
    let bytes = postcard::to_allocvec(&listing).map_err(|error| IngestError::Format {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })?;
    let mut written = PART_HEADER.to_vec();
    written.extend(zstd::encode_all(bytes.as_slice(), 3).map_err(io_error(path))?);
    std::fs::write(path, &written).map_err(io_error(path))?;
    std::fs::File::open(path)
        .and_then(|file| file.sync_all())
        .map_err(io_error(path))
}

/// What `part.bin` in `folder` says; refused when a table is missing.
fn read_listing(folder: &Path) -> Result<Listing> {
    let path = folder.join(PART_FILE);
    let bytes = std::fs::read(&path).map_err(io_error(&path))?;
    let Some(bytes) = bytes.strip_prefix(PART_HEADER) else {
        return Err(IngestError::Format {
            path,
            detail: "not an ingest part of this build's format: run ingest-part again".into(),
        });
    };
    let bytes = zstd::decode_all(bytes).map_err(io_error(&path))?;
    let listing: Listing = postcard::from_bytes(&bytes).map_err(|error| IngestError::Format {
        path,
        detail: error.to_string(),
    })?;
    if let Some(missing) = super::part_tables::TABLES
        .iter()
        .map(|name| folder.join(name))
        .find(|table| !table.is_file())
    {
        return Err(IngestError::Format {
            path: missing,
            detail: "missing: run ingest-part again".into(),
        });
    }
    // A table cut short or damaged has no footer, or another count.
    let captures = folder.join(super::part_tables::CAPTURES);
    match crate::tabular::parquet::rows_of(&captures) {
        Ok(rows) if rows == listing.captures() as u64 => Ok(listing),
        Ok(rows) => Err(IngestError::Format {
            path: captures,
            detail: format!(
                "{rows} captures, where {PART_FILE} counts {}: run ingest-part again",
                listing.captures()
            ),
        }),
        Err(error) => Err(IngestError::Format {
            path: captures,
            detail: format!("{error}: run ingest-part again"),
        }),
    }
}

/// The part in `folder`: `part.bin` and the captures of its tables.
fn read_part(folder: &Path) -> Result<Part> {
    let listing = read_listing(folder)?;
    let names: Vec<(Arc<str>, usize)> = listing
        .files
        .iter()
        .map(|(path, _, file)| match file {
            Listed::Read { captures, .. } => (Arc::from(path.as_str()), *captures),
            Listed::Failed { .. } => (Arc::from(path.as_str()), 0),
        })
        .collect();
    let mut captures = super::part_tables::read(folder, &names)?.into_iter();
    let files = listing
        .files
        .into_iter()
        .map(|(path, stamp, file)| {
            // Each file has its list, a failed one an empty one.
            let read = captures.next().unwrap_or_default();
            let file = match file {
                Listed::Read {
                    revisits, counts, ..
                } => PartFile::Read(FileResult {
                    captures: read,
                    revisits,
                    counts,
                }),
                Listed::Failed { reason, message } => PartFile::Failed { reason, message },
            };
            (path, stamp, file)
        })
        .collect();
    Ok(Part { files })
}

/// The finished parts in `dir` (each a folder holding [`PART_FILE`]), in
/// name order.
pub fn parts_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut parts = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_error(dir))? {
        let path = entry.map_err(io_error(dir))?.path();
        let temporary = path
            .file_name()
            .and_then(|name| name.to_str())
            .is_none_or(|name| name.starts_with('.'));
        if !temporary && path.join(PART_FILE).is_file() {
            parts.push(path);
        }
    }
    parts.sort();
    Ok(parts)
}

/// Puts made between two flushes of the store while a file's bodies are
/// copied: they are staged in memory (compressed) until the flush.
const PUTS_PER_FLUSH: usize = 4096;

/// Copies the bodies of one `file` a part read from the part's store
/// `from` into `store`, each capture a reference (journaled once the store
/// holds it, as ingest journals): each distinct body is read back once,
/// and put as many times as captures have it, which the store counts in
/// memory until it flushes. Names the file as `path` does. The texts the
/// part kept of the bodies are kept in `texts` under the store's keys.
fn copy_bodies(
    path: &Path,
    mut file: FileResult,
    (from, from_texts): (&PageStore, Option<&KeptTexts>),
    (store, texts): (&PageStore, Option<&TextSpill>),
    journal: &ReferenceJournal,
) -> Result<FileResult> {
    let name: Arc<str> = Arc::from(path.display().to_string());
    let mut with_body: FxHashMap<ContentKey, Vec<usize>> = FxHashMap::default();
    let mut order = Vec::new();
    for (at, capture) in file.captures.iter_mut().enumerate() {
        capture.info.location.file = Arc::clone(&name);
        if let Some(key) = capture.content_key {
            let captures = with_body.entry(key).or_default();
            if captures.is_empty() {
                order.push(key);
            }
            captures.push(at);
        }
    }
    for revisit in &mut file.revisits {
        revisit.info.location.file = Arc::clone(&name);
    }
    file.counts.forget_bodies();
    let mut references = Vec::new();
    for key in order {
        let body = from.get(&key)?;
        for at in &with_body[&key] {
            let outcome = store.put(&body)?;
            let capture = &mut file.captures[*at];
            capture.content_key = Some(outcome.key);
            if let (Some(from_texts), Some(texts)) = (from_texts, texts) {
                from_texts.copy_to(
                    (key, capture.encoding),
                    texts,
                    (outcome.key, capture.encoding),
                );
            }
            file.counts
                .count_body(capture.body_bytes, outcome.stored_new);
            references.push(outcome.key);
        }
        if references.len() >= PUTS_PER_FLUSH {
            store.flush()?;
            journal.record(&references)?;
            references.clear();
        }
    }
    store.flush()?;
    journal.record(&references)?;
    Ok(file)
}

/// The path `path` names, for matching a part's file with the listing's.
fn same_file(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Ingests `files` (listed as `index` lists a crawl's files) from the
/// `parts` that read them into `store`, journaling references in
/// `crawl_dir/references`; as [`super::ingest_files`] would have.
pub fn assemble_parts(
    files: &[PathBuf],
    parts: &[PathBuf],
    store: &PageStore,
    crawl_dir: &Path,
    options: &IngestOptions<'_>,
    store_config: &StoreConfig,
) -> Result<Ingested> {
    let started = Instant::now();
    // Which part read each file, by the file it names.
    let mut read: FxHashMap<PathBuf, (usize, FileStamp, PartFile)> = FxHashMap::default();
    let mut part_stores = Vec::with_capacity(parts.len());
    let mut part_texts = Vec::with_capacity(parts.len());
    for (number, folder) in parts.iter().enumerate() {
        for (path, stamp, file) in read_part(folder)?.files {
            let key = same_file(Path::new(&path));
            if let Some((first, _, _)) = read.get(&key) {
                // (A link and its target given to one part are both read.)
                if *first != number {
                    tracing::warn!(
                        "{path}: read by two parts; the part {} is taken",
                        parts[*first].display()
                    );
                }
                continue;
            }
            read.insert(key, (number, stamp, file));
        }
        part_stores.push(PageStore::open_for_reading(
            &folder.join(STORE_DIR),
            store_config.clone(),
        )?);
        // A part written by a build that kept no texts has none: its
        // bodies are read again by the index stage.
        let texts = match options.texts {
            None => None,
            Some(_) => KeptTexts::open(folder, None).unwrap_or_else(|error| {
                tracing::warn!(
                    "{}: its texts cannot be read ({error}); the index stage reads its bodies again",
                    folder.display()
                );
                None
            }),
        };
        part_texts.push(texts);
    }
    // Two paths naming one file (links) are two files, as `index` reads
    // them: each gets the part's reading (a copy, for all but the last).
    let keys: Vec<PathBuf> = files.iter().map(|path| same_file(path)).collect();
    let mut uses: FxHashMap<&Path, usize> = FxHashMap::default();
    for key in &keys {
        *uses.entry(key).or_default() += 1;
    }
    let mut taken = Vec::with_capacity(files.len());
    for (path, key) in files.iter().zip(&keys) {
        let Some((part, stamp, _)) = read.get(key) else {
            return Err(IngestError::Format {
                path: path.clone(),
                detail: format!(
                    "no part read it (parts: {}); run ingest-part on it",
                    parts.len()
                ),
            });
        };
        if FileStamp::of(path).map_err(io_error(path))? != *stamp {
            return Err(IngestError::Format {
                path: path.clone(),
                detail: format!(
                    "changed since the part {} read it; run ingest-part on it again",
                    parts[*part].display()
                ),
            });
        }
        let part = *part;
        let left = uses.get_mut(key.as_path()).expect("counted above");
        *left -= 1;
        let file = if *left == 0 {
            read.remove(key).expect("found above").2
        } else {
            read[key].2.clone()
        };
        taken.push((path, (part, file)));
    }
    if !read.is_empty() {
        tracing::warn!(
            "{} file(s) the parts read are not the crawl's, left out",
            read.len()
        );
    }

    let journal = ReferenceJournal::create(crawl_dir.join(REFERENCES_FILE))?;
    let per_file: Vec<Result<FileResult>> = taken
        .into_par_iter()
        .map(|(path, (part, file))| match file {
            PartFile::Failed { reason, message } => {
                Err(IngestError::FileFailed { reason, message })
            }
            PartFile::Read(file) => copy_bodies(
                path,
                file,
                (&part_stores[part], part_texts[part].as_ref()),
                (store, options.texts),
                &journal,
            ),
        })
        .collect();
    let records = per_file
        .iter()
        .flatten()
        .map(|file| file.counts.records)
        .sum();
    let bytes_read = per_file
        .iter()
        .flatten()
        .map(|file| file.counts.bytes_read)
        .sum();
    let mut ingested = merge_files(files.len(), per_file, store, journal, options)?;
    ingested.report.records = records;
    ingested.report.bytes_read = bytes_read;
    ingested.report.elapsed_seconds = started.elapsed().as_secs_f64();
    Ok(ingested)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_finished_parts_are_taken_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["part-2", "part-1", ".part-0.tmp-7-8", "empty"] {
            std::fs::create_dir_all(dir.path().join(name)).unwrap();
        }
        for name in ["part-2", "part-1", ".part-0.tmp-7-8"] {
            std::fs::write(dir.path().join(name).join(PART_FILE), b"").unwrap();
        }
        let parts: Vec<String> = parts_in(dir.path())
            .unwrap()
            .iter()
            .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(parts, ["part-1", "part-2"]);
    }

    #[test]
    fn a_part_whose_captures_table_is_cut_short_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = FileStamp {
            len: 1,
            modified: None,
        };
        let read = FileResult {
            captures: vec![crate::test_support::capture("https://a.example/", "a page")],
            ..FileResult::default()
        };
        let failed = PartFile::Failed {
            reason: "not-warc".into(),
            message: "not WARC".into(),
        };
        let part = Part {
            files: vec![
                ("bad.warc".into(), stamp.clone(), failed),
                ("a.warc".into(), stamp, PartFile::Read(read)),
            ],
        };
        write_part(dir.path(), &part).unwrap();
        let back = read_part(dir.path()).unwrap();
        assert!(matches!(back.files[0].2, PartFile::Failed { .. }));
        let PartFile::Read(file) = &back.files[1].2 else {
            panic!("the second file was read");
        };
        assert_eq!(file.captures[0].info.url, "https://a.example/");
        assert_eq!(&*file.captures[0].info.location.file, "a.warc");

        let table = dir.path().join(super::super::part_tables::CAPTURES);
        let bytes = std::fs::read(&table).unwrap();
        std::fs::write(&table, &bytes[..bytes.len() / 2]).unwrap();
        let Err(error) = read_listing(dir.path()) else {
            panic!("a part cut short was taken as done");
        };
        let error = error.to_string();
        assert!(
            error.contains("captures.parquet") && error.contains("ingest-part again"),
            "{error}"
        );
    }

    #[test]
    fn a_part_of_another_format_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(PART_FILE), b"mirrorscope ingest part 0\n").unwrap();
        let Err(error) = read_part(dir.path()) else {
            panic!("an old part was read");
        };
        assert!(error.to_string().contains(PART_FILE), "{error}");
        assert!(error.to_string().contains("ingest-part again"), "{error}");
    }
}
