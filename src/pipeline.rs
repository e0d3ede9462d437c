//! `mirrorscope index`: crawl files -> ingested crawl -> page table -> a new
//! generation, switched to atomically.
//!
//! A crawl is identified by the content of its WARC files; indexing the same
//! files again reuses the ingested crawl (its bodies are not stored twice and
//! their reference counts do not grow) and gives the same page table.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use indicatif::{ProgressBar, ProgressStyle};
use xxhash_rust::xxh3::Xxh3;

use crate::config::{Config, ConfigError};
use crate::corpus;
use crate::datadir::{CrawlEntry, DataDir, DataError, Manifest};
use crate::fingerprint::{FingerprintSpill, Spilled};
use crate::ingest::{self, Capture, IngestOptions, IngestReport};
use crate::pages::PageTable;
use crate::store::texts::KeptTexts;
use crate::store::Signature;
use crate::{collections, index, mirrors, similarity};

/// What stopped `index`, in the terms of what was asked.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// Nothing among the crawl's paths is a WARC file.
    #[error("no WARC files (*.warc, *.warc.gz) in {0}")]
    NoWarcFiles(String),
    /// The crawl's files held no page that could be read: `index` refuses
    /// rather than switch to a generation without pages.
    #[error(
        "no page could be read from {files}; nothing was written and the current generation stays"
    )]
    NothingRead { files: String },
    /// The crawl, read from files of the names the current generation was
    /// read from, holds far fewer pages than it: a file was cut short or
    /// replaced by mistake, and serving it would lose most of the site.
    #[error(
        "{files} give {pages} pages where the current generation {generation}, read from files of the same names, has {current}; nothing was written and {generation} stays current. If the crawl really shrank, run again with --allow-shrink"
    )]
    Shrinks {
        files: String,
        pages: u64,
        current: u64,
        generation: String,
    },
    /// `index --remove` named a crawl the current generation does not have.
    #[error("{crawl} is not a crawl of generation {generation} (its crawls: {known})")]
    UnknownCrawl {
        crawl: String,
        generation: String,
        known: String,
    },
    /// `index --remove` named the generation's only crawl.
    #[error(
        "{crawl} is the only crawl of generation {generation}: add another before removing it"
    )]
    OnlyCrawl { crawl: String, generation: String },
    /// `import-analysis` was given clusters this generation cannot take.
    #[error("{0}")]
    Analysis(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Ingest(#[from] ingest::IngestError),
    #[error(transparent)]
    Data(#[from] DataError),
}

pub type Result<T, E = PipelineError> = std::result::Result<T, E>;

/// How long one stage of `index` took and the most memory the process held
/// during it.
#[derive(Debug, Clone, Serialize)]
pub struct StageTime {
    pub stage: &'static str,
    pub seconds: f64,
    /// Peak resident memory during the stage, in MB (`VmHWM`, reset when
    /// the stage starts); `None` where the system does not say.
    pub peak_mb: Option<f64>,
    /// Resident memory once the stage is done and the memory it freed is
    /// given back, in MB: what it leaves held for the stages after it.
    pub held_mb: Option<f64>,
}

/// Times the stages of one run, in order.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stages(pub Vec<StageTime>);

impl Stages {
    /// Runs `work` as the stage `stage`.
    pub fn run<T>(&mut self, stage: &'static str, work: impl FnOnce() -> T) -> T {
        crate::memory::reset_peak();
        let started = std::time::Instant::now();
        let value = work();
        let seconds = started.elapsed().as_secs_f64();
        let peak_mb = crate::memory::peak_mb();
        crate::memory::release_free();
        let held_mb = crate::memory::resident_mb();
        tracing::info!(stage, seconds, peak_mb, held_mb, "stage done");
        self.0.push(StageTime {
            stage,
            seconds,
            peak_mb,
            held_mb,
        });
        value
    }
}

/// What `index` was asked to do.
#[derive(Debug, Clone)]
pub struct IndexRequest {
    /// WARC files or folders of them.
    pub inputs: Vec<PathBuf>,
    pub data: PathBuf,
    /// Draw a progress bar (only shown when stderr is a terminal).
    pub progress: bool,
    /// Keep the current generation's crawls and add this one (`--add`),
    /// instead of making it the only crawl.
    pub add: bool,
    /// Make the crawl current even when it holds far fewer pages than the
    /// current generation read from files of the same names
    /// (`--allow-shrink`; [`PipelineError::Shrinks`]).
    pub allow_shrink: bool,
    /// A folder of ingest parts to take the files from instead of reading
    /// them (`--parts`; [`ingest::parts`]).
    pub parts: Option<PathBuf>,
    /// Build the search index apart, in this many shards: the generation
    /// is staged (`--index-shards`; [`IndexPlan::InShards`]).
    pub index_shards: Option<u32>,
}

/// What a crawl changed against the one before it (gomes-et-al-2006 §2,
/// Table 1).
#[derive(Debug, Clone, Serialize)]
pub struct CrawlChange {
    pub previous: String,
    /// Captures with a body another capture of the same crawl has.
    pub duplicates_within: u64,
    /// Of the others, captures with a body the previous crawl has.
    pub duplicates_of_previous: u64,
    /// URLs of the previous crawl captured again.
    pub urls_persisting: u64,
    pub previous_urls: u64,
}

impl CrawlChange {
    fn between(previous_id: &str, previous: &[Capture], current: &[Capture]) -> CrawlChange {
        let previous_bodies: HashSet<Signature> = previous
            .iter()
            .filter_map(|capture| capture.content_key.map(|key| key.signature))
            .collect();
        let mut seen: HashSet<Signature> = HashSet::new();
        let (mut within, mut of_previous) = (0, 0);
        for capture in current {
            let Some(key) = capture.content_key else {
                continue;
            };
            if !seen.insert(key.signature) {
                within += 1;
            } else if previous_bodies.contains(&key.signature) {
                of_previous += 1;
            }
        }
        let previous_urls: HashSet<&str> = previous
            .iter()
            .map(|capture| capture.info.url.as_str())
            .collect();
        let current_urls: HashSet<&str> = current
            .iter()
            .map(|capture| capture.info.url.as_str())
            .collect();
        CrawlChange {
            previous: previous_id.to_string(),
            duplicates_within: within,
            duplicates_of_previous: of_previous,
            urls_persisting: previous_urls.intersection(&current_urls).count() as u64,
            previous_urls: previous_urls.len() as u64,
        }
    }
}

/// What `index` did.
#[derive(Debug, Clone)]
pub struct IndexOutcome {
    pub crawl_id: String,
    /// True when the crawl had been ingested before and was reused.
    pub reused: bool,
    pub report: IngestReport,
    /// The new generation's manifest (a staged one's, but for its index).
    pub manifest: Manifest,
    /// With `--index-shards`: the generation staged, not yet current.
    pub staged: Option<crate::datadir::StagedGeneration>,
    /// Interrupted ingests rolled back before this one.
    pub rolled_back: usize,
    /// With `--add`: the crawl against the one before it.
    pub change: Option<CrawlChange>,
    /// Time and memory of each stage.
    pub stages: Stages,
    /// Where the ingest stage's time went (zero when the crawl was reused).
    pub ingest_work: ingest::IngestWork,
}

/// What `index --remove` did.
#[derive(Debug, Clone)]
pub struct RemoveOutcome {
    pub crawl_id: String,
    pub manifest: Manifest,
    /// Store references given back (bodies with no other reference deleted).
    pub released_references: usize,
    pub rolled_back: usize,
    pub stages: Stages,
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
    let listed = corpus::list_warc_files(&request.inputs).map_err(ingest::IngestError::from)?;
    for (path, reason) in &listed.skipped {
        tracing::warn!("{}: {reason}, file skipped", path.display());
    }
    if !listed.other_names.is_empty() {
        let shown: Vec<String> = listed
            .other_names
            .iter()
            .take(5)
            .map(|path| path.display().to_string())
            .collect();
        let more = listed.other_names.len().saturating_sub(shown.len());
        tracing::info!(
            "{} files not read for their name (not *.warc or *.warc.gz): {}{}",
            listed.other_names.len(),
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    let files = listed.files;
    if files.is_empty() {
        let shown: Vec<String> = request
            .inputs
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        return Err(PipelineError::NoWarcFiles(shown.join(", ")));
    }
    let data = DataDir::open(&request.data)?;
    let _lock = data.lock_for_writing()?;
    let config = Config::for_writer(&data)?;
    let store = data.store(&config.store)?;
    let rolled_back = data.recover_interrupted_crawls(&store)?;
    let mut stages = Stages::default();

    let crawl_id = stages.run("crawl id", || crawl_id(&files))?;
    let file_names: Vec<String> = files
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    let stale = data.has_crawl(&crawl_id) && !data.crawl_is_current(&crawl_id)?;
    if stale && request.index_shards.is_some() {
        // Its old reading is given back once the new generation is
        // current, which a staged one is not until `publish`.
        return Err(PipelineError::Analysis(format!(
            "{crawl_id} was ingested by an older build: index it again without --index-shards first"
        )));
    }
    if stale {
        tracing::info!(crawl = %crawl_id, "crawl was ingested by an older build; ingesting it again");
        data.set_aside_stale(&crawl_id)?;
    }
    let reused = data.has_crawl(&crawl_id);
    let (captures, report, ingest_work, spilled) = if reused {
        tracing::info!(crawl = %crawl_id, "crawl already ingested; reusing it");
        (
            data.crawl_captures(&crawl_id)?,
            data.crawl_report(&crawl_id)?,
            ingest::IngestWork::default(),
            None,
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
        // The captures' fingerprints (0.67 KB a page) are set aside as they
        // are made, until the page table stage writes them in page order.
        let spill = Mutex::new(data.fingerprint_spill()?);
        // Each distinct body's text, as extracted, for the index stage (or
        // for the shards' tasks: then in a file they can open).
        let texts = data.text_spill(config.index.max_text_bytes, request.index_shards.is_some())?;
        let options = IngestOptions {
            config: &config.ingest,
            earlier_captures: &earlier_captures,
            progress: &progress,
            spill: Some(&spill),
            texts: Some(&texts),
        };
        let ingested = match &request.parts {
            None => stages.run("ingest and store", || {
                ingest::ingest_files(&files, &store, &partial, &options)
            }),
            Some(folder) => stages.run("ingest parts into the store", || {
                let parts = ingest::parts::parts_in(folder)?;
                ingest::parts::assemble_parts(
                    &files,
                    &parts,
                    &store,
                    &partial,
                    &options,
                    &config.store,
                )
            }),
        }?;
        bar.finish_and_clear();
        if ingested.captures.is_empty() {
            data.abandon_crawl(&crawl_id, &partial, &store)?;
            return Err(PipelineError::NothingRead {
                files: nothing_read(&file_names, &ingested.report),
            });
        }
        if !request.add && !request.allow_shrink {
            if let Err(error) = refuse_shrinking(&data, &file_names, &ingested.captures) {
                data.abandon_crawl(&crawl_id, &partial, &store)?;
                return Err(error);
            }
        }
        let mut ingested = ingested;
        stages.run("write the crawl's captures", || {
            data.finish_crawl(
                &crawl_id,
                &partial,
                &file_names,
                (&mut ingested.captures, Some(&spill)),
                &ingested.report,
            )
        })?;
        let spill = spill
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let texts = texts.finish();
        tracing::info!(
            bodies = texts.len(),
            stored_mb = texts.stored_bytes() as f64 / 1e6,
            "texts kept for the index stage"
        );
        tracing::info!(work = ?ingested.work, "ingest's work in thread-seconds");
        (
            ingested.captures,
            ingested.report,
            ingested.work,
            Some((spill, texts)),
        )
    };

    let new_entry = CrawlEntry {
        id: crawl_id.clone(),
        files: file_names,
        captures: captures.len() as u64,
    };
    // With --add, the current generation's crawls (this one aside) come
    // first; the newest capture of a URL wins in the page table.
    let mut entries: Vec<CrawlEntry> = if request.add {
        match data.manifest() {
            Ok(manifest) => manifest.crawls,
            Err(DataError::NoGeneration(_)) => Vec::new(),
            Err(error) => return Err(error.into()),
        }
    } else {
        Vec::new()
    };
    entries.retain(|entry| entry.id != crawl_id);
    let mut crawls: Vec<Vec<Capture>> = entries
        .iter()
        .map(|entry| data.crawl_captures(&entry.id))
        .collect::<Result<_, DataError>>()?;
    let change = entries
        .last()
        .zip(crawls.last())
        .map(|(previous, previous_captures)| {
            CrawlChange::between(&previous.id, previous_captures, &captures)
        });
    entries.push(new_entry);
    crawls.push(captures);
    let plan = match request.index_shards {
        Some(shards) => IndexPlan::InShards(shards),
        None => IndexPlan::Here,
    };
    let (manifest, staged) = match build_generation(
        &data,
        &config,
        &store,
        (entries, crawls, spilled),
        &mut stages,
        plan,
    )? {
        Written::Current(manifest) => (*manifest, None),
        Written::Staged(staged) => (staged.manifest.clone(), Some(*staged)),
    };
    if stale {
        // The new generation uses the crawl just ingested again.
        data.release_stale(&crawl_id, &store)?;
    }
    Ok(IndexOutcome {
        crawl_id,
        reused,
        report,
        manifest,
        staged,
        rolled_back,
        change,
        stages,
        ingest_work,
    })
}

/// A new crawl holding less than this share of the current generation's
/// pages, read from files of the same names, is refused without
/// `--allow-shrink`. A recrawl of a site loses a few pages, not half.
const SHRINK_SHARE: f64 = 0.5;

/// Refuses a crawl read from the files the current generation was read
/// from (by name) that holds fewer than [`SHRINK_SHARE`] of its pages.
fn refuse_shrinking(data: &DataDir, files: &[String], captures: &[Capture]) -> Result<()> {
    let manifest = match data.manifest() {
        Ok(manifest) => manifest,
        Err(DataError::NoGeneration(_)) => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    let name_of = |file: &str| {
        Path::new(file)
            .file_name()
            .map(|name| name.to_string_lossy().to_string())
    };
    let current_names: std::collections::HashSet<String> = manifest
        .crawls
        .iter()
        .flat_map(|crawl| crawl.files.iter())
        .filter_map(|file| name_of(file))
        .collect();
    let same_names = files
        .iter()
        .all(|file| name_of(file).is_some_and(|name| current_names.contains(&name)));
    if !same_names {
        return Ok(());
    }
    let urls: std::collections::HashSet<&str> = captures
        .iter()
        .map(|capture| capture.info.url.as_str())
        .collect();
    let (pages, current) = (urls.len() as u64, manifest.counts.pages);
    if (pages as f64) >= SHRINK_SHARE * current as f64 {
        return Ok(());
    }
    tracing::warn!(
        pages,
        current,
        "the new crawl holds far fewer pages than the current generation, from files of the same names"
    );
    Err(PipelineError::Shrinks {
        files: files.join(", "),
        pages,
        current,
        generation: manifest.generation,
    })
}

/// Why a crawl gave no page: each file that could not be read, with its
/// reason, or what its records were.
fn nothing_read(files: &[String], report: &IngestReport) -> String {
    let mut parts: Vec<String> = report.failed_files.clone();
    let counted = |counts: &std::collections::BTreeMap<String, u64>| {
        counts
            .iter()
            .map(|(reason, count)| format!("{count} {reason}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if parts.len() < files.len() {
        let mut what = format!("{} records read", report.records);
        if !report.ignored.is_empty() {
            what.push_str(&format!(", ignored: {}", counted(&report.ignored)));
        }
        if !report.skipped.is_empty() {
            what.push_str(&format!(", skipped: {}", counted(&report.skipped)));
        }
        let unnamed: Vec<&str> = files
            .iter()
            .filter(|file| !parts.iter().any(|failed| failed.contains(file.as_str())))
            .map(String::as_str)
            .collect();
        parts.push(format!(
            "{} ({what}; no HTML page among them)",
            unnamed.join(", ")
        ));
    }
    parts.join("; ")
}

/// What `import-analysis` brings in from elsewhere (the Spark jobs, see
/// [`crate::import`]): trivial clusters, similar clusters as grown, or both.
#[derive(Debug, Default)]
pub struct ImportedAnalysis {
    /// Each page's trivial cluster, by page id, in any numbering.
    pub trivial: Option<Vec<u64>>,
    /// The similar clusters as grown (in [`collections::grow::grow`]'s
    /// order) and growth's figures. Their trivial clusters are numbered as
    /// in `trivial` when it is given, else as the current generation's.
    pub growth: Option<collections::Growth>,
    /// Rankings of mirrored host pairs, as (host, host, score) rows, used
    /// in place of these rankers' own.
    pub rankings: Vec<mirrors::RankingRows>,
}

/// A new generation of the current one's crawls and page table whose
/// trivial clusters, similar clusters as grown, or both are `imported`
/// instead of this build's; the later stages run on them. `expected` names
/// the generation they were computed from, when known: it must be the
/// current one.
pub fn run_imported(
    data_path: &Path,
    imported: ImportedAnalysis,
    expected: Option<&str>,
    plan: IndexPlan,
) -> Result<(Written, Stages)> {
    let data = DataDir::open_existing(data_path)?;
    let _lock = data.lock_for_writing()?;
    let config = Config::for_writer(&data)?;
    let store = data.store(&config.store)?;
    data.recover_interrupted_crawls(&store)?;
    let mut stages = Stages::default();
    let analysis = stages.run("read the generation", || data.analysis())?;
    if let Some(expected) = expected {
        if expected != analysis.manifest.generation {
            return Err(PipelineError::Analysis(format!(
                "the clusters were computed from generation {expected}, the current one is {}: export its tables and run the jobs again",
                analysis.manifest.generation
            )));
        }
    }
    let table = analysis.table;
    let mut growth = imported.growth;
    let rankings = imported
        .rankings
        .iter()
        .map(|read| {
            mirrors::imported_ranking(read, table.hosts.len()).map_err(|error| {
                PipelineError::Analysis(format!("the {} ranking: {error}", read.ranker.name()))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let similarity = match &imported.trivial {
        None => analysis.similarity,
        Some(labels) => {
            let similarity = stages
                .run("trivial clusters", || {
                    analysis.similarity.with_trivial(&table, labels)
                })
                .map_err(PipelineError::Analysis)?;
            // The grown clusters name the given clusters' numbers; the
            // generation numbers them by first page.
            if let Some(growth) = &mut growth {
                let renumbered: HashMap<u64, similarity::TrivialClusterId> = labels
                    .iter()
                    .zip(&similarity.trivial)
                    .map(|(&given, &ours)| (given, ours))
                    .collect();
                for cluster in &mut growth.clusters {
                    for trivial in &mut cluster.trivial {
                        *trivial = *renumbered.get(&u64::from(trivial.0)).ok_or_else(|| {
                            PipelineError::Analysis(format!(
                                "the grown clusters name trivial cluster {trivial}, which no page is in"
                            ))
                        })?;
                    }
                }
            }
            similarity
        }
    };
    let clustered = Clustered {
        table: &table,
        similarity,
        aside: None,
        growth,
        rankings,
        texts: None,
    };
    let written = analyse_and_write(
        &data,
        &config,
        &store,
        analysis.manifest.crawls,
        clustered,
        &mut stages,
        plan,
    )?;
    Ok((written, stages))
}

/// What ingest set aside for the stages after it: the captures'
/// fingerprints, and each distinct body's text.
type SetAside = (FingerprintSpill, KeptTexts);

/// Every stage after ingest, on the given crawls (in order, the newest
/// capture of a URL winning): a new generation, switched to. Takes the
/// captures, and lets them go once the page table is built. The
/// fingerprints of captures ingest set aside, and the texts it kept, are
/// in `spilled`.
fn build_generation(
    data: &DataDir,
    config: &crate::config::Config,
    store: &crate::store::PageStore,
    (entries, crawls, spilled): (Vec<CrawlEntry>, Vec<Vec<Capture>>, Option<SetAside>),
    stages: &mut Stages,
    plan: IndexPlan,
) -> Result<Written> {
    let (spill, texts) = spilled.unzip();
    // The page table takes what the analysis needs of the captures (their
    // links resolved to page ids, their fingerprints and texts moved): the
    // captures, links as URLs and all, are gone before the analysis starts.
    // The fingerprints go to a file of their own straight away: the
    // similarity stage reads what it needs of them there, and no later
    // stage holds them.
    //
    // Before the table is built, the captures' fingerprints are set in a
    // spill file (those of the crawl just ingested are there already), so
    // that the table is built without them beside it; the pages' file is
    // then written from the spill a batch of pages at a time, in page
    // order.
    let (table, aside) = stages.run("page table", || -> Result<_> {
        let mut crawls = crawls;
        let mut spill = match spill {
            Some(spill) => spill,
            None => data.fingerprint_spill()?,
        };
        let mut places: Vec<Vec<Option<Spilled>>> = Vec::with_capacity(crawls.len());
        for captures in &mut crawls {
            let mut crawl_places = Vec::with_capacity(captures.len());
            for capture in captures.iter_mut() {
                let place = match capture.spilled.take() {
                    Some(place) => Some(place),
                    None => {
                        let print = capture.fingerprint.take();
                        print
                            .map(|print| spill.put(&print))
                            .transpose()
                            .map_err(DataError::from)?
                    }
                };
                crawl_places.push(place);
            }
            places.push(crawl_places);
        }
        let spilled = spill.finish().map_err(DataError::from)?;
        let (table, by_page) =
            PageTable::from_captures_keeping(crawls, |(crawl, at), _| places[crawl][at]);
        drop(places);
        let aside = data.set_fingerprints_aside_with(by_page.len(), |range| {
            Ok(spilled.read(&by_page[range]).map(Cow::Owned)?)
        })?;
        drop((by_page, spilled));
        // Every later stage holds the table: in fresh memory, not among
        // the blocks the captures left.
        let mut table = table;
        table.compact().map_err(|error| {
            PipelineError::Analysis(format!("the page table could not be compacted: {error}"))
        })?;
        Ok((table, aside))
    })?;
    let similarity = stages.run("trivial clusters", || {
        similarity::analyse_from(&table, aside.file(), &config.similarity)
    })?;
    let clustered = Clustered {
        table: &table,
        similarity,
        aside: Some(aside),
        growth: None,
        rankings: Vec::new(),
        texts,
    };
    analyse_and_write(data, config, store, entries, clustered, stages, plan)
}

/// What the stages after the trivial clusters start from.
struct Clustered<'a> {
    table: &'a PageTable,
    similarity: similarity::Similarity,
    /// The pages' fingerprints, when they are not `similarity`'s.
    aside: Option<crate::datadir::FingerprintsAside>,
    /// The similar clusters as grown elsewhere; `None` grows them here.
    growth: Option<collections::Growth>,
    /// Rankings computed elsewhere, in place of these rankers' own.
    rankings: Vec<mirrors::Ranking>,
    /// The texts ingest kept in this run, if any.
    texts: Option<KeptTexts>,
}

/// Where a new generation's search index is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexPlan {
    /// Here, before the generation is switched to.
    Here,
    /// Apart, in this many shards (`index-shard`), the generation staged
    /// until `publish`.
    InShards(u32),
}

/// What the stages wrote.
pub enum Written {
    /// A new generation, current.
    Current(Box<Manifest>),
    /// A generation staged for its index's shards.
    Staged(Box<crate::datadir::StagedGeneration>),
}

/// The stages after the trivial clusters, then the search index: a new
/// generation of `entries` with the clustered page table, switched to (or
/// staged, by `plan`).
fn analyse_and_write(
    data: &DataDir,
    config: &crate::config::Config,
    store: &crate::store::PageStore,
    entries: Vec<CrawlEntry>,
    clustered: Clustered,
    stages: &mut Stages,
    plan: IndexPlan,
) -> Result<Written> {
    let Clustered {
        table,
        similarity,
        aside,
        growth,
        rankings,
        texts,
    } = clustered;
    let mut collections = match growth {
        None => stages.run("link summary and growth", || match &aside {
            Some(aside) => {
                collections::analyse_with(table, (&similarity, aside.file()), &config.collections)
            }
            None => Ok(collections::analyse(
                table,
                &similarity,
                &config.collections,
            )),
        })?,
        Some(growth) => stages
            .run("collections of the clusters as grown", || {
                collections::analyse_grown(table, &similarity, &config.collections, growth)
            })
            .map_err(|error| PipelineError::Analysis(format!("the grown clusters: {error}")))?,
    };
    stages.run("cluster ids", || match previous_collections(data) {
        Ok(Some((previous_table, previous))) => collections::continuity::renumber(
            &mut collections,
            &previous,
            collections::continuity::by_url(&previous_table, &previous, table),
        ),
        Ok(None) => {}
        Err(error) => tracing::warn!(
            "cluster ids start afresh: the current generation cannot be read ({error})"
        ),
    });
    let mirrors = stages.run("mirrors", || -> Result<mirrors::Mirrors> {
        // Classifying host pairs compares their sampled pages' min-hashes
        // and signatures (bharat-2000's sampled paths): read from the file
        // for those pages alone.
        Ok(match &aside {
            Some(aside) => mirrors::analyse_reading(
                table,
                (&similarity, aside.file()),
                &collections,
                &config.mirrors,
                &rankings,
            )?,
            None => {
                mirrors::analyse_with(table, &similarity, &collections, &config.mirrors, &rankings)
            }
        })
    })?;
    tracing::info!(
        ranked_pairs = mirrors.counts.ranked_pairs,
        "mirrors ranked and classified"
    );
    if let IndexPlan::InShards(shards) = plan {
        let staged = stages.run("write the staged generation", || {
            data.stage_generation(
                entries,
                (table, &similarity, aside, &collections, &mirrors),
                texts,
                shards,
            )
        })?;
        return Ok(Written::Staged(Box::new(staged)));
    }
    let mut index_time = None;
    let manifest = stages.run("index and write generation", || {
        data.write_generation(
            entries,
            table,
            similarity,
            aside,
            &collections,
            mirrors,
            |dir, similarity| {
                let started = std::time::Instant::now();
                let built = index::build(
                    dir,
                    table,
                    similarity,
                    &collections,
                    (store, texts.as_ref()),
                    &config.index,
                );
                index_time = Some(started.elapsed().as_secs_f64());
                Ok(built?)
            },
        )
    })?;
    if let Some(seconds) = index_time {
        tracing::info!(seconds, "search index built");
    }
    Ok(Written::Current(Box::new(manifest)))
}

/// Runs `ingest-part`: `files` read into the part folder `out`, with the
/// settings of the data folder `data` (its defaults when it has none).
pub fn run_ingest_part(
    files: &[PathBuf],
    out: &Path,
    data: &Path,
) -> Result<ingest::parts::PartSummary> {
    // Read only: a part writes nothing to the data folder.
    let config = Config::load(&data.join(crate::generation::CONFIG_FILE))?;
    let options = IngestOptions {
        config: &config.ingest,
        earlier_captures: &[],
        progress: &|_| {},
        spill: None,
        texts: None,
    };
    Ok(ingest::parts::ingest_part(
        files,
        out,
        &options,
        (&config.store, config.index.max_text_bytes),
    )?)
}

/// Runs `index-shard`: builds `shard` of the staged generation `name`'s
/// index from its tables and the store. Takes no lock: the shards of one
/// generation are built at once, by as many processes.
pub fn run_index_shard(
    data_path: &Path,
    name: &str,
    shard: index::Shard,
) -> Result<index::IndexCounts> {
    // A first generation may be staged in a folder with none current.
    let data = DataDir::open_to_check(data_path)?;
    let config = Config::of(&data)?;
    let staged = data.staged(name)?;
    let store = data.store_for_reading(&config.store)?;
    let tables = staged.tables();
    let table = tables.page_table()?;
    let similarity = tables.similarity_without_fingerprints(&table)?;
    let collections = tables.collections(&table)?;
    // The texts ingest kept of the bodies this shard holds, if it kept them
    // (`index --parts --index-shards`); the others are read from the store.
    let mut bodies = table.pages.iter().filter_map(|page| {
        page.content_key
            .filter(|key| shard.holds(key))
            .map(|key| (key, page.encoding))
    });
    let texts = staged.kept_texts(&mut bodies);
    Ok(data.build_staged_shard(&staged, shard, |dir| {
        Ok(index::build_shard(
            dir,
            (&table, &similarity, &collections),
            (&store, texts.as_ref()),
            &config.index,
            shard,
        )?)
    })?)
}

/// Runs `publish`: the staged generation `name`, its shards built, made
/// the current one.
pub fn run_publish(data_path: &Path, name: &str) -> Result<Manifest> {
    let data = DataDir::open_to_check(data_path)?;
    let _lock = data.lock_for_writing()?;
    Ok(data.publish_staged(name)?)
}

/// The current generation's page table and collections, whose cluster ids
/// the new generation keeps; `None` in a data folder without one.
fn previous_collections(data: &DataDir) -> Result<Option<(PageTable, collections::Collections)>> {
    let generation = match data.generation() {
        Ok(generation) => generation,
        Err(DataError::NoGeneration(_)) => return Ok(None),
        Err(error) => return Err(error.into()),
    };
    generation.manifest()?;
    let table = generation.page_table()?;
    let collections = generation.collections(&table)?;
    Ok(Some((table, collections)))
}

/// How often `serve` looks again while another process writes the first
/// generation.
const WAIT_FOR_WRITER: std::time::Duration = std::time::Duration::from_millis(500);

/// Indexes the shipped crawl when the data folder has no generation yet.
/// When another `mirrorscope index` holds the folder's lock, waits (saying
/// so) for the generation it writes, or for the lock to be free.
pub fn index_shipped_crawl_unless_indexed(folder: &Path) -> Result<()> {
    let data = DataDir::open(folder)?;
    let mut said = false;
    let corpus = default_corpus_dir();
    if matches!(data.current_generation(), Err(DataError::NoGeneration(_))) {
        tracing::info!(corpus = %corpus.display(), "no index yet: indexing the shipped crawl first");
    }
    while matches!(data.current_generation(), Err(DataError::NoGeneration(_))) {
        // Look at the lock before indexing: waiting costs nothing and logs
        // once. (Another writer may still take it in between: then indexing
        // says so, and the wait goes on.)
        let free = match data.lock_for_writing() {
            // Let go of it at once: indexing takes it itself.
            Ok(lock) => {
                drop(lock);
                Ok(())
            }
            Err(DataError::Busy { path }) => Err(path),
            Err(error) => return Err(error.into()),
        };
        let busy = match free {
            Ok(()) => match run_index(&IndexRequest {
                inputs: vec![corpus.clone()],
                data: folder.to_path_buf(),
                progress: true,
                add: false,
                allow_shrink: false,
                parts: None,
                index_shards: None,
            }) {
                Ok(_) => continue,
                Err(PipelineError::Data(DataError::Busy { path })) => path,
                Err(error) => return Err(error),
            },
            Err(path) => path,
        };
        if !said {
            tracing::info!(
                "{} is held by another `mirrorscope index`; waiting for the generation it writes",
                busy.display()
            );
            said = true;
        }
        std::thread::sleep(WAIT_FOR_WRITER);
    }
    Ok(())
}

/// Runs `index --remove CRAWL_ID`: a new generation without the crawl, then
/// its store references given back. Refuses to remove the only crawl.
pub fn run_remove(data_path: &Path, crawl_id: &str) -> Result<RemoveOutcome> {
    let data = DataDir::open_existing(data_path)?;
    let _lock = data.lock_for_writing()?;
    let config = Config::for_writer(&data)?;
    let store = data.store(&config.store)?;
    let rolled_back = data.recover_interrupted_crawls(&store)?;
    let manifest = data.manifest()?;
    if !manifest.crawls.iter().any(|entry| entry.id == crawl_id) {
        let ids: Vec<&str> = manifest
            .crawls
            .iter()
            .map(|entry| entry.id.as_str())
            .collect();
        return Err(PipelineError::UnknownCrawl {
            crawl: crawl_id.to_string(),
            generation: manifest.generation,
            known: ids.join(", "),
        });
    }
    if manifest.crawls.len() == 1 {
        return Err(PipelineError::OnlyCrawl {
            crawl: crawl_id.to_string(),
            generation: manifest.generation,
        });
    }
    let entries: Vec<CrawlEntry> = manifest
        .crawls
        .into_iter()
        .filter(|entry| entry.id != crawl_id)
        .collect();
    let crawls: Vec<Vec<Capture>> = entries
        .iter()
        .map(|entry| data.crawl_captures(&entry.id))
        .collect::<Result<_, DataError>>()?;
    let mut stages = Stages::default();
    let manifest = match build_generation(
        &data,
        &config,
        &store,
        (entries, crawls, None),
        &mut stages,
        IndexPlan::Here,
    )? {
        Written::Current(manifest) => *manifest,
        Written::Staged(staged) => {
            return Err(PipelineError::Analysis(format!(
                "{} was staged where a generation was to be written",
                staged.name
            )))
        }
    };
    // Only now that no generation in use needs them.
    let released_references = data.remove_crawl(crawl_id, &store)?;
    Ok(RemoveOutcome {
        crawl_id: crawl_id.to_string(),
        manifest,
        released_references,
        rolled_back,
        stages,
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
