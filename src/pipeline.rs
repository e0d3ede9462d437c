//! `mirrorscope index`: crawl files -> ingested crawl -> page table -> a new
//! generation, switched to atomically.
//!
//! A crawl is identified by the content of its WARC files; indexing the same
//! files again reuses the ingested crawl (its bodies are not stored twice and
//! their reference counts do not grow) and gives the same page table.

use std::io::Read;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use xxhash_rust::xxh3::Xxh3;

use crate::corpus;
use crate::datadir::{CrawlEntry, DataDir, DataError, Manifest, Result};
use crate::ingest::{self, IngestOptions, IngestReport};
use crate::pages::PageTable;
use crate::{collections, index, mirrors, similarity};

/// What `index` was asked to do.
#[derive(Debug, Clone)]
pub struct IndexRequest {
    /// WARC files or folders of them.
    pub inputs: Vec<PathBuf>,
    pub data: PathBuf,
    /// Draw a progress bar (only shown when stderr is a terminal).
    pub progress: bool,
}

/// What `index` did.
#[derive(Debug, Clone)]
pub struct IndexOutcome {
    pub crawl_id: String,
    /// True when the crawl had been ingested before and was reused.
    pub reused: bool,
    pub report: IngestReport,
    pub manifest: Manifest,
    /// Interrupted ingests rolled back before this one.
    pub rolled_back: usize,
}

/// The shipped crawl: `corpus/` in the working directory, else the one beside
/// the crate's sources.
pub fn default_corpus_dir() -> PathBuf {
    let local = PathBuf::from("corpus");
    if local.is_dir() {
        return local;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// Identifies a crawl by its files' names, sizes and contents.
pub fn crawl_id(files: &[PathBuf]) -> Result<String> {
    let mut hasher = Xxh3::new();
    let mut buffer = vec![0u8; 1 << 20];
    for path in files {
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().to_string())
            .unwrap_or_default();
        hasher.update(name.as_bytes());
        hasher.update(&[0]);
        let mut file = std::fs::File::open(path).map_err(|source| DataError::Io {
            path: path.clone(),
            source,
        })?;
        let mut length = 0u64;
        loop {
            let read = file.read(&mut buffer).map_err(|source| DataError::Io {
                path: path.clone(),
                source,
            })?;
            if read == 0 {
                break;
            }
            length += read as u64;
            hasher.update(&buffer[..read]);
        }
        hasher.update(&length.to_le_bytes());
    }
    Ok(format!("crawl-{:016x}", (hasher.digest128() >> 64) as u64))
}

/// Runs `index`: ingest (or reuse) the crawl, build the page table, write and
/// switch to a new generation.
pub fn run_index(request: &IndexRequest) -> Result<IndexOutcome> {
    let files = corpus::list_warc_files(&request.inputs).map_err(ingest::IngestError::from)?;
    if files.is_empty() {
        let shown: Vec<String> = request
            .inputs
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        return Err(DataError::Format {
            path: request.inputs.first().cloned().unwrap_or_default(),
            detail: format!("no WARC files (*.warc, *.warc.gz) in {}", shown.join(", ")),
        });
    }
    let data = DataDir::open(&request.data)?;
    let _lock = data.lock_for_writing()?;
    let config = data.config()?;
    let store = data.store(&config)?;
    let rolled_back = data.recover_interrupted_crawls(&store)?;

    let crawl_id = crawl_id(&files)?;
    let file_names: Vec<String> = files
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    let stale = data.has_crawl(&crawl_id) && !data.crawl_is_current(&crawl_id)?;
    if stale {
        tracing::info!(crawl = %crawl_id, "crawl was ingested by an older build; ingesting it again");
        data.set_aside_stale(&crawl_id)?;
    }
    let reused = data.has_crawl(&crawl_id);
    let (captures, report) = if reused {
        tracing::info!(crawl = %crawl_id, "crawl already ingested; reusing it");
        (
            data.crawl_captures(&crawl_id)?,
            data.crawl_report(&crawl_id)?,
        )
    } else {
        let mut earlier_captures: Vec<PathBuf> = Vec::new();
        for id in data.crawl_ids()? {
            if data.crawl_is_current(&id)? {
                earlier_captures.push(data.crawl_captures_path(&id));
            } else {
                tracing::warn!(crawl = %id, "crawl ingested by an older build: revisits are not resolved against it until it is indexed again");
            }
        }
        let total_bytes: u64 = files
            .iter()
            .filter_map(|path| std::fs::metadata(path).ok())
            .map(|metadata| metadata.len())
            .sum();
        let bar = progress_bar(request.progress, total_bytes);
        let progress = |bytes: u64| bar.set_position(bytes);
        let partial = data.begin_crawl(&crawl_id)?;
        let options = IngestOptions {
            config: &config.ingest,
            earlier_captures: &earlier_captures,
            progress: &progress,
        };
        let ingested = ingest::ingest_files(&files, &store, &partial, &options)?;
        bar.finish_and_clear();
        data.finish_crawl(
            &crawl_id,
            &partial,
            &file_names,
            &ingested.captures,
            &ingested.report,
        )?;
        (ingested.captures, ingested.report)
    };

    let (table, fingerprints) = PageTable::build_with_fingerprints(&[&captures]);
    let similarity = similarity::analyse(&table, fingerprints, &config.similarity);
    let collections = collections::analyse(&table, &similarity, &config.collections);
    let started = std::time::Instant::now();
    let mirrors = mirrors::analyse(&table, &similarity, &collections, &config.mirrors);
    tracing::info!(
        seconds = started.elapsed().as_secs_f64(),
        ranked_pairs = mirrors.counts.ranked_pairs,
        "mirrors ranked and classified"
    );
    let crawls = vec![CrawlEntry {
        id: crawl_id.clone(),
        files: file_names,
        captures: captures.len() as u64,
    }];
    let manifest =
        data.write_generation(crawls, &table, &similarity, &collections, &mirrors, |dir| {
            Ok(index::build(
                dir,
                &table,
                &similarity,
                &collections,
                &store,
                &config.index,
            )?)
        })?;
    if stale {
        // The new generation uses the crawl just ingested again.
        data.release_stale(&crawl_id, &store)?;
    }
    Ok(IndexOutcome {
        crawl_id,
        reused,
        report,
        manifest,
        rolled_back,
    })
}

fn progress_bar(enabled: bool, total_bytes: u64) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    // Draws to stderr, and only when it is a terminal.
    let bar = ProgressBar::new(total_bytes);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} reading crawl {bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    ) {
        bar.set_style(style);
    }
    bar
}
