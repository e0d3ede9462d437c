//! `mirrorscope check`: whether a data folder is consistent, and, with
//! `--repair`, what can be put right.
//!
//! Checked: every store block's reference count against the references the
//! crawl folders hold (their journals, less what a rollback gave back);
//! blocks nobody holds; blocks a crawl holds that the store lacks; blocks
//! whose body does not decompress to its size or to the signature its name
//! says; temporary files left by interrupted writes; each generation's files
//! against its manifest; every page of the current generation finding its
//! body. `--repair` (with the writer lock) sets counts to what is held,
//! removes orphans and temporary files; a missing or corrupt block cannot be
//! repaired (its body is gone) and keeps the check failing.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::path::PathBuf;

use rayon::prelude::*;
use serde::Serialize;

use super::{io_error, DataDir, DataError, Generation, Recount, Result, GENERATION_FORMAT};
use crate::store::{ContentKey, PageStore, StoreConfig};

/// How many of each kind of problem a report names (all are counted).
const NAMED: usize = 20;

/// Problems of one kind: how many, and the first few named.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Problems {
    pub count: u64,
    pub examples: Vec<String>,
}

impl Problems {
    fn add(&mut self, example: impl FnOnce() -> String) {
        self.count += 1;
        if self.examples.len() < NAMED {
            self.examples.push(example());
        }
    }
}

/// What `check` found (and, with `--repair`, did).
#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckReport {
    pub data: PathBuf,
    /// Another process held the writer lock: counts may be in flux.
    pub writer_active: bool,
    pub crawl_folders: u64,
    pub blocks: u64,
    /// The blocks' reference counts, summed.
    pub references_counted: u64,
    /// The references the crawl folders hold, summed.
    pub references_held: u64,
    /// Blocks whose count is above what is held (a leak).
    pub counts_too_high: Problems,
    /// Blocks whose count is below what is held (a body could be deleted
    /// while still in use).
    pub counts_too_low: Problems,
    /// Blocks no crawl holds.
    pub orphan_blocks: Problems,
    /// Blocks a crawl holds that the store lacks.
    pub missing_blocks: Problems,
    /// Blocks whose header or body is unreadable, or whose body is not what
    /// their name says.
    pub corrupt_blocks: Problems,
    /// Files and folders left by interrupted writes.
    pub temporary_files: Problems,
    /// Generation files that do not match their manifest.
    pub generation_problems: Problems,
    pub generations_checked: u64,
    /// Pages of the current generation whose body block is there.
    pub pages_checked: u64,
    /// What `--repair` did.
    pub repaired: Option<Repaired>,
}

/// What `--repair` changed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Repaired {
    pub counts_fixed: u64,
    pub orphans_removed: u64,
    pub references_reclaimed: u64,
    pub temporary_files_removed: u64,
    /// The generation `CURRENT` was pointed to, when it was missing,
    /// garbled or named a generation that is gone or broken: the newest
    /// intact one.
    pub current_set_to: Option<String>,
}

impl CheckReport {
    /// True when nothing is wrong.
    pub fn is_consistent(&self) -> bool {
        [
            &self.counts_too_high,
            &self.counts_too_low,
            &self.orphan_blocks,
            &self.missing_blocks,
            &self.corrupt_blocks,
            &self.temporary_files,
            &self.generation_problems,
        ]
        .iter()
        .all(|problems| problems.count == 0)
    }
}

/// Checks the data folder `data`, whose store has the settings `config`;
/// with `repair`, first puts right what can be (taking the writer lock,
/// refused while another writer holds it), then checks again.
pub fn check(data: &DataDir, config: &StoreConfig, repair: bool) -> Result<CheckReport> {
    if repair {
        let _lock = data.lock_for_writing()?;
        // Opening the store for writing removes its temporary files.
        let before = gather(data, &data.store_for_reading(config)?, false)?;
        let store = data.store(config)?;
        let Recount {
            counts_fixed,
            orphans_removed,
            references_reclaimed,
            ..
        } = data.recount_references(&store)?;
        store.compact()?;
        // `CURRENT` first: which staged generations are leftovers depends
        // on it.
        let current_set_to = repoint_current(data)?;
        data.remove_leftovers()?;
        let mut after = gather(data, &store, false)?;
        after.repaired = Some(Repaired {
            counts_fixed,
            orphans_removed,
            references_reclaimed,
            temporary_files_removed: before
                .temporary_files
                .count
                .saturating_sub(after.temporary_files.count),
            current_set_to,
        });
        return Ok(after);
    }
    let writer_active = matches!(data.lock_for_writing(), Err(DataError::Busy { .. }));
    let store = data.store_for_reading(config)?;
    gather(data, &store, writer_active)
}

fn gather(data: &DataDir, store: &PageStore, writer_active: bool) -> Result<CheckReport> {
    let mut report = CheckReport {
        data: data.root().to_path_buf(),
        writer_active,
        ..CheckReport::default()
    };
    let held = data.held_references()?;
    report.crawl_folders = data.crawl_folders()?.len() as u64;
    report.references_held = held.values().sum();
    let walk = store.walk()?;
    // Reading and decompressing every body is most of the work: in parallel.
    let verified: Vec<Option<String>> = walk
        .blocks
        .par_iter()
        .map(|block| match block.header {
            Ok(_) => store.verify(&block.key),
            Err(_) => Ok(None),
        })
        .collect::<std::result::Result<_, _>>()?;
    let mut present: HashMap<ContentKey, bool> = HashMap::with_capacity(walk.blocks.len());
    for (block, verified) in walk.blocks.iter().zip(verified) {
        report.blocks += 1;
        let wanted = held.get(&block.key).copied().unwrap_or(0);
        let found = match &block.header {
            Ok(facts) => facts.references,
            Err(reason) => {
                report
                    .corrupt_blocks
                    .add(|| format!("{}: {reason}", block.path.display()));
                present.insert(block.key, false);
                continue;
            }
        };
        report.references_counted += found;
        if let Some(reason) = verified {
            report
                .corrupt_blocks
                .add(|| format!("{}: {reason}", block.path.display()));
            present.insert(block.key, false);
            continue;
        }
        present.insert(block.key, true);
        if wanted == 0 {
            report
                .orphan_blocks
                .add(|| format!("{} ({found} references, none held)", block.key));
        } else if found > wanted {
            report
                .counts_too_high
                .add(|| format!("{}: {found} counted, {wanted} held", block.key));
        } else if found < wanted {
            report
                .counts_too_low
                .add(|| format!("{}: {found} counted, {wanted} held", block.key));
        }
    }
    for key in held.keys() {
        if !present.contains_key(key) {
            report
                .missing_blocks
                .add(|| format!("{key}: held by a crawl, not in the store"));
        }
    }
    for path in &walk.temporary_files {
        report.temporary_files.add(|| path.display().to_string());
    }
    for path in data.leftovers()? {
        report.temporary_files.add(|| path.display().to_string());
    }
    check_generations(data, &present, &mut report)?;
    Ok(report)
}

/// Points `CURRENT` to the newest intact generation when it is missing,
/// garbled, or names a generation that is gone or broken (a disk that lost
/// the file, a hand edit); the generation it names is kept when intact.
fn repoint_current(data: &DataDir) -> Result<Option<String>> {
    let intact = |name: &str| {
        let generation = Generation {
            path: data.root().join("generations").join(name),
        };
        generation.path().is_dir()
            && generation_problems(&generation, true).is_ok_and(|problems| problems.is_empty())
    };
    if let Ok(name) = data.current_generation() {
        if intact(&name) {
            return Ok(None);
        }
    }
    let mut names = data.generation_names()?;
    names.sort_by_key(|name| std::cmp::Reverse(super::generation_number(name)));
    let Some(newest) = names.into_iter().find(|name| intact(name)) else {
        return Ok(None);
    };
    super::write_atomically(
        &data.root().join("CURRENT"),
        format!("{newest}\n").as_bytes(),
    )?;
    tracing::warn!(generation = %newest, "CURRENT now names the newest intact generation");
    Ok(Some(newest))
}

/// Each generation's files against its manifest; the current generation's
/// pages against the store.
fn check_generations(
    data: &DataDir,
    present: &HashMap<ContentKey, bool>,
    report: &mut CheckReport,
) -> Result<()> {
    let names = data.generation_names()?;
    let current = match data.current_generation() {
        Ok(name) => Some(name),
        Err(DataError::NoGeneration(_)) => {
            if !names.is_empty() {
                report.generation_problems.add(|| {
                    format!(
                        "CURRENT is missing while {} generations are there (check --repair points it to the newest intact one)",
                        names.len()
                    )
                });
            }
            None
        }
        Err(error) => {
            report.generation_problems.add(|| error.to_string());
            None
        }
    };
    for name in names {
        let generation = Generation {
            path: data.root().join("generations").join(&name),
        };
        let is_current = current.as_deref() == Some(name.as_str());
        report.generations_checked += 1;
        let problems = match generation_problems(&generation, is_current) {
            Ok(problems) => problems,
            Err(error) => vec![error.to_string()],
        };
        for problem in problems {
            report
                .generation_problems
                .add(|| format!("{}: {problem}", generation.path().display()));
        }
        if is_current {
            if let Ok(table) = generation.page_table() {
                for page in &table.pages {
                    let Some(key) = page.content_key else {
                        continue;
                    };
                    if present.get(&key).copied().unwrap_or(false) {
                        report.pages_checked += 1;
                    } else {
                        report.generation_problems.add(|| {
                            format!("{}: the body of {} ({key}) cannot be read", name, page.url)
                        });
                    }
                }
            }
        }
    }
    if let Some(name) = current {
        if !data.root().join("generations").join(&name).is_dir() {
            report
                .generation_problems
                .add(|| format!("CURRENT names {name}, which is not there"));
        }
    }
    Ok(())
}

/// What is wrong with one generation's files, by its manifest. A generation
/// of an older format is only a problem when it is the current one.
fn generation_problems(generation: &Generation, is_current: bool) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let manifest = match generation.manifest() {
        Ok(manifest) => manifest,
        Err(DataError::Format { detail, .. })
            if !is_current && detail.contains(&format!("not the {GENERATION_FORMAT}")) =>
        {
            return Ok(problems);
        }
        Err(error) => return Ok(vec![error.to_string()]),
    };
    let table = generation.page_table()?;
    if table.counts() != manifest.counts {
        problems.push(format!(
            "pages.bin holds {} pages, the manifest says {}",
            table.counts().pages,
            manifest.counts.pages
        ));
    }
    // Each stage's file, read and checked as readers read it, against the
    // counts the manifest kept of it.
    let stages = [
        (
            "similarity.bin",
            generation
                .similarity(&table)
                .map(|similarity| similarity.counts == manifest.similarity),
        ),
        (
            "collections.bin",
            generation
                .collections(&table)
                .map(|collections| collections.counts == manifest.collections),
        ),
        (
            "mirrors.bin",
            generation
                .mirrors(&table)
                .map(|mirrors| mirrors.counts == manifest.mirrors),
        ),
    ];
    for (file, matches) in stages {
        match matches {
            Ok(true) => {}
            Ok(false) => problems.push(format!("{file} does not match the manifest's counts")),
            Err(error) => problems.push(error.to_string()),
        }
    }
    match crate::index::SearchIndex::open(&generation.path().join(crate::index::INDEX_DIR)) {
        Ok(index) => {
            let documents = index.searcher().num_docs();
            if documents != manifest.index.documents {
                problems.push(format!(
                    "the search index holds {documents} documents, the manifest says {}",
                    manifest.index.documents
                ));
            }
        }
        Err(error) => problems.push(error.to_string()),
    }
    Ok(problems)
}

impl DataDir {
    /// Every crawl folder, complete or not.
    pub fn crawl_folders(&self) -> Result<Vec<PathBuf>> {
        let folder = self.root.join("crawls");
        let mut found = Vec::new();
        for entry in fs::read_dir(&folder).map_err(io_error(&folder))? {
            let entry = entry.map_err(io_error(&folder))?;
            if entry.path().is_dir() {
                found.push(entry.path());
            }
        }
        found.sort();
        Ok(found)
    }

    /// Files and folders a crash left under a temporary name (`.NAME.tmp…`):
    /// a generation being written, a file being replaced in the data
    /// folder or in a crawl folder; and staged generations that can no
    /// longer be published (abandoned when another generation became
    /// current). The store's own are in its walk.
    pub(super) fn leftovers(&self) -> Result<Vec<PathBuf>> {
        let mut folders = vec![self.root.clone(), self.root.join("generations")];
        folders.extend(self.crawl_folders()?);
        let mut found = Vec::new();
        for folder in folders {
            for entry in fs::read_dir(&folder).map_err(io_error(&folder))? {
                let entry = entry.map_err(io_error(&folder))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && name.contains(".tmp") {
                    found.push(entry.path());
                }
            }
        }
        // Which staged generations are stale is known only while `CURRENT`
        // names a generation that is there (or there is none at all):
        // `--repair` points it first.
        let current = match self.current_generation() {
            Ok(name) if self.root.join("generations").join(&name).is_dir() => Some(Some(name)),
            Err(DataError::NoGeneration(_)) if self.generation_names()?.is_empty() => Some(None),
            _ => None,
        };
        if let Some(current) = current {
            found.extend(self.stale_staged(current.as_deref())?);
        }
        found.sort();
        Ok(found)
    }

    /// Removes what [`DataDir::leftovers`] finds. Needs the writer lock.
    fn remove_leftovers(&self) -> Result<()> {
        for path in self.leftovers()? {
            let removed = if path.is_dir() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            removed.map_err(io_error(&path))?;
        }
        Ok(())
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            formatter,
            "data folder                 {}",
            self.data.display()
        )?;
        if self.writer_active {
            writeln!(
                formatter,
                "note                        another `mirrorscope index` is writing: counts may be in flux"
            )?;
        }
        writeln!(
            formatter,
            "crawl folders               {}",
            self.crawl_folders
        )?;
        writeln!(
            formatter,
            "blocks                      {} ({} references counted, {} held by crawls)",
            self.blocks, self.references_counted, self.references_held
        )?;
        writeln!(
            formatter,
            "generations checked         {} (current: {} pages read back)",
            self.generations_checked, self.pages_checked
        )?;
        for (label, problems) in [
            ("counts too high (leaks)", &self.counts_too_high),
            ("counts too low", &self.counts_too_low),
            ("blocks nobody holds", &self.orphan_blocks),
            ("blocks missing", &self.missing_blocks),
            ("corrupt blocks", &self.corrupt_blocks),
            ("temporary files", &self.temporary_files),
            ("generation problems", &self.generation_problems),
        ] {
            writeln!(formatter, "{label:<28}{}", problems.count)?;
            for example in &problems.examples {
                writeln!(formatter, "  {example}")?;
            }
            if problems.count > problems.examples.len() as u64 {
                writeln!(
                    formatter,
                    "  … and {} more",
                    problems.count - problems.examples.len() as u64
                )?;
            }
        }
        if let Some(repaired) = &self.repaired {
            writeln!(
                formatter,
                "repaired                    {} counts set to what is held, {} orphan blocks removed ({} references reclaimed), {} temporary files removed",
                repaired.counts_fixed,
                repaired.orphans_removed,
                repaired.references_reclaimed,
                repaired.temporary_files_removed
            )?;
            if let Some(generation) = &repaired.current_set_to {
                writeln!(
                    formatter,
                    "CURRENT set to              {generation} (the newest intact generation)"
                )?;
            }
        }
        write!(
            formatter,
            "{}",
            if self.is_consistent() {
                "consistent"
            } else {
                "NOT consistent"
            }
        )
    }
}
