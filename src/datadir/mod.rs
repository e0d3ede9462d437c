//! The write side of the data folder: the writer lock, the ingested crawls
//! and writing the generations built from them, with the switch between
//! generations, recovery after an interrupted writer and `check`. Reading
//! a generation is [`crate::generation`]'s, whose [`DataDir`] this module
//! adds its methods to.
//!
//! ```text
//! data/
//!   crawls/<crawl-id>/          one ingested crawl: captures.bin, report.json, files.json,
//!                               references (the store references it holds)
//!   crawls/<crawl-id>.partial/  a crawl being ingested; on the next start, its journaled
//!                               references are released and it is removed
//!   crawls/<crawl-id>.stale/    a crawl written by an older build, being ingested again; its
//!                               references are released once the new one is complete
//!   generations/.gen-<n>.tmp/   a generation being written
//!   generations/staged-<id>/    a generation whose index is being built in shards (staged.rs)
//! ```
//!
//! A generation directory is written under a temporary name, synced, then
//! renamed; `CURRENT` is replaced atomically after it. A reader that reads
//! `CURRENT` then the generation it names never sees half a generation, and a
//! crash at any point leaves the previous generation serving.

mod check;
mod staged;

pub use check::{check, CheckReport, Problems, Repaired};
pub use staged::StagedGeneration;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::{self, File};
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use crate::collections::Collections;
use crate::fingerprint::{Fingerprint, FingerprintSpill};
use crate::generation::{
    generation_number, io_error, read_json, write_fingerprints, write_fingerprints_with,
    FingerprintFile, COLLECTIONS_FILE, FINGERPRINTS_FILE, MANIFEST_FILE, MIRRORS_FILE, PAGES_FILE,
    SIMILARITY_FILE,
};
pub use crate::generation::{
    Analysis, CrawlEntry, DataDir, DataError, Generation, Manifest, Result, GENERATION_FORMAT,
};
use crate::index::IndexCounts;
use crate::ingest::{self, Capture, IngestReport};
use crate::mirrors::Mirrors;
use crate::pages::PageTable;
use crate::similarity::Similarity;
use crate::store::texts::TextSpill;
use crate::store::{ContentKey, PageStore, StoreConfig};

impl From<ingest::IngestError> for DataError {
    fn from(error: ingest::IngestError) -> DataError {
        DataError::Crawl(Box::new(error))
    }
}

/// How many generations are kept on disk, the current one included.
const GENERATIONS_KEPT: usize = 3;

/// Holds the data directory's writer lock until dropped.
pub struct WriterLock {
    _file: File,
}

impl DataDir {
    /// Opens (creating if needed) the data directory at `root`.
    pub fn open(root: &Path) -> Result<DataDir> {
        for folder in [
            root.to_path_buf(),
            root.join("crawls"),
            root.join("generations"),
        ] {
            fs::create_dir_all(&folder).map_err(io_error(&folder))?;
        }
        Ok(DataDir {
            root: root.to_path_buf(),
        })
    }

    /// Takes the writer lock, failing at once if another writer holds it.
    pub fn lock_for_writing(&self) -> Result<WriterLock> {
        let path = self.root.join("lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_error(&path))?;
        match file.try_lock() {
            Ok(()) => Ok(WriterLock { _file: file }),
            Err(fs::TryLockError::WouldBlock) => Err(DataError::Busy { path }),
            Err(fs::TryLockError::Error(source)) => Err(DataError::Io { path, source }),
        }
    }

    /// Opens the page store with `config`, for the one process holding this
    /// directory's writer lock. Writes are staged and directory syncs
    /// deferred: writers flush the store before they record what they wrote
    /// (see [`PageStore::stage_writes`]).
    pub fn store(&self, config: &StoreConfig) -> Result<PageStore> {
        let store = PageStore::open(&self.root.join("store"), config.clone())?;
        Ok(store.stage_writes())
    }

    pub fn crawl_dir(&self, crawl_id: &str) -> PathBuf {
        self.root.join("crawls").join(crawl_id)
    }

    /// True when the crawl was completely ingested before.
    pub fn has_crawl(&self, crawl_id: &str) -> bool {
        self.crawl_dir(crawl_id).join(REPORT_FILE).exists()
    }

    /// The ids of every completely ingested crawl, sorted.
    pub fn crawl_ids(&self) -> Result<Vec<String>> {
        let folder = self.root.join("crawls");
        let mut ids = Vec::new();
        for entry in fs::read_dir(&folder).map_err(io_error(&folder))? {
            let entry = entry.map_err(io_error(&folder))?;
            let name = entry.file_name().to_string_lossy().to_string();
            if !name.ends_with(PARTIAL_SUFFIX)
                && !name.ends_with(STALE_SUFFIX)
                && !name.ends_with(REMOVED_SUFFIX)
                && self.has_crawl(&name)
            {
                ids.push(name);
            }
        }
        ids.sort();
        Ok(ids)
    }

    /// Gives back the store references of crawls whose ingest was
    /// interrupted, then removes them; finishes or undoes crawls left set
    /// aside. Returns how many ingests were rolled back.
    ///
    /// An interruption can leak references (taken but not yet journaled, or
    /// a release cut short); after any rollback the counts are set to what
    /// the crawls hold ([`DataDir::recount_references`]). A durable marker
    /// makes sure the recount happens even if this run is interrupted too.
    pub fn recover_interrupted_crawls(&self, store: &PageStore) -> Result<usize> {
        let partial = self.crawls_with_suffix(PARTIAL_SUFFIX)?;
        let marker = self.root.join(RECOUNT_MARKER);
        let interrupted = !partial.is_empty()
            || !self.crawls_with_suffix(STALE_SUFFIX)?.is_empty()
            || !self.crawls_with_suffix(REMOVED_SUFFIX)?.is_empty();
        if interrupted {
            write_atomically(&marker, b"recount the store's references\n")?;
        }
        for (_, folder) in &partial {
            tracing::warn!(crawl = %folder.display(), "rolling back an interrupted ingest");
            self.release_folder(folder, store)?;
        }
        // A crawl set aside as stale: if its new ingest completed, the
        // generation using it may not have been written, but the new crawl
        // holds the same bodies; give the old references back. If the new
        // ingest did not complete (just rolled back above), put it back.
        for (crawl_id, folder) in self.crawls_with_suffix(STALE_SUFFIX)? {
            if self.has_crawl(&crawl_id) {
                self.release_folder(&folder, store)?;
            } else {
                self.put_back(&crawl_id, &folder)?;
            }
        }
        // A crawl being removed: the generation without it was written
        // before it was set aside, so finish giving its references back;
        // unless the current generation still uses it (then put it back).
        let in_use: Vec<String> = match self.manifest() {
            Ok(manifest) => manifest.crawls.into_iter().map(|crawl| crawl.id).collect(),
            Err(_) => Vec::new(),
        };
        for (crawl_id, folder) in self.crawls_with_suffix(REMOVED_SUFFIX)? {
            if in_use.contains(&crawl_id) {
                self.put_back(&crawl_id, &folder)?;
            } else {
                self.release_folder(&folder, store)?;
            }
        }
        if marker.exists() {
            let recount = self.recount_references(store)?;
            tracing::warn!(
                counts_fixed = recount.counts_fixed,
                orphans_removed = recount.orphans_removed,
                references_reclaimed = recount.references_reclaimed,
                "store references recounted after an interruption"
            );
            fs::remove_file(&marker).map_err(io_error(&marker))?;
            sync_dir(&self.root)?;
        }
        Ok(partial.len())
    }

    /// The store references every crawl folder holds, by block: a complete
    /// crawl holds every reference its journal names; a crawl being rolled
    /// back or removed (`.partial`, `.stale`, `.removed`), those after what
    /// its `released` marker says was given back. Nothing else holds a
    /// reference, so this is what each block's count should be.
    pub fn held_references(&self) -> Result<HashMap<ContentKey, u64>> {
        let folder = self.root.join("crawls");
        let mut held: HashMap<ContentKey, u64> = HashMap::new();
        for entry in fs::read_dir(&folder).map_err(io_error(&folder))? {
            let entry = entry.map_err(io_error(&folder))?;
            let path = entry.path();
            let journal = path.join(ingest::REFERENCES_FILE);
            if !entry.file_type().map_err(io_error(&path))?.is_dir() || !journal.exists() {
                continue;
            }
            let keys = ingest::read_references(&journal)?;
            let released = released_so_far(&path)?.min(keys.len());
            for key in &keys[released..] {
                *held.entry(*key).or_default() += 1;
            }
        }
        Ok(held)
    }

    /// Sets every block's reference count to what the crawls hold
    /// ([`DataDir::held_references`]), removing blocks nobody holds: what an
    /// interruption leaked (references taken but not yet journaled, or a
    /// release cut short) is reclaimed. Needs the writer lock. Blocks a crawl
    /// holds but the store lacks, and corrupt blocks, are left as they are
    /// and counted.
    pub fn recount_references(&self, store: &PageStore) -> Result<Recount> {
        let held = self.held_references()?;
        let walk = store.walk()?;
        let mut recount = Recount::default();
        let mut seen = std::collections::HashSet::with_capacity(walk.blocks.len());
        for block in &walk.blocks {
            seen.insert(block.key);
            let Ok(found) = block.header.as_ref().map(|facts| facts.references) else {
                recount.corrupt += 1;
                continue;
            };
            let wanted = held.get(&block.key).copied().unwrap_or(0);
            if found == wanted {
                continue;
            }
            store.set_references(&block.key, wanted)?;
            if wanted == 0 {
                recount.orphans_removed += 1;
            } else {
                recount.counts_fixed += 1;
            }
            recount.references_reclaimed += found.saturating_sub(wanted);
        }
        recount.missing = held.keys().filter(|key| !seen.contains(key)).count() as u64;
        store.flush()?;
        Ok(recount)
    }

    /// The crawl folders named `<id><suffix>`, with their ids.
    fn crawls_with_suffix(&self, suffix: &str) -> Result<Vec<(String, PathBuf)>> {
        let folder = self.root.join("crawls");
        let mut found = Vec::new();
        for entry in fs::read_dir(&folder).map_err(io_error(&folder))? {
            let entry = entry.map_err(io_error(&folder))?;
            let name = entry.file_name().to_string_lossy().to_string();
            if let Some(crawl_id) = name.strip_suffix(suffix) {
                found.push((crawl_id.to_string(), entry.path()));
            }
        }
        found.sort();
        Ok(found)
    }

    /// Gives back the store references a crawl folder journaled (a body is
    /// deleted when nothing else refers to it), then deletes the folder.
    /// Returns the references given back.
    fn release_folder(&self, folder: &Path, store: &PageStore) -> Result<usize> {
        if !folder.exists() {
            return Ok(0);
        }
        let journal = folder.join(ingest::REFERENCES_FILE);
        let mut released = 0;
        if journal.exists() {
            let keys = ingest::read_references(&journal)?;
            released = keys.len();
            release_journaled_references(folder, &keys, store)?;
        }
        fs::remove_dir_all(folder).map_err(io_error(folder))?;
        sync_dir(&self.root.join("crawls"))?;
        Ok(released)
    }

    /// Renames a complete crawl to `<id><suffix>` (replacing a leftover).
    fn set_aside(&self, crawl_id: &str, suffix: &str) -> Result<()> {
        let complete = self.crawl_dir(crawl_id);
        let aside = self.aside_dir(crawl_id, suffix);
        if aside.exists() {
            fs::remove_dir_all(&aside).map_err(io_error(&aside))?;
        }
        fs::rename(&complete, &aside).map_err(io_error(&complete))?;
        sync_dir(&self.root.join("crawls"))
    }

    /// Renames a crawl set aside back into place.
    fn put_back(&self, crawl_id: &str, aside: &Path) -> Result<()> {
        let complete = self.crawl_dir(crawl_id);
        fs::rename(aside, &complete).map_err(io_error(&complete))?;
        sync_dir(&self.root.join("crawls"))
    }

    /// Removes a crawl the current generation no longer uses: sets it aside
    /// as `<id>.removed`, gives its store references back (a body is deleted
    /// when nothing else refers to it), and deletes it. Interrupted, the next
    /// writer finishes the job. Returns the references given back.
    pub fn remove_crawl(&self, crawl_id: &str, store: &PageStore) -> Result<usize> {
        if self.crawl_dir(crawl_id).exists() {
            self.set_aside(crawl_id, REMOVED_SUFFIX)?;
        }
        let released = self.release_folder(&self.aside_dir(crawl_id, REMOVED_SUFFIX), store)?;
        // Packed bodies leave dead bytes behind; take back the space.
        let reclaimed = store.compact()?;
        if reclaimed > 0 {
            tracing::info!(
                crawl = crawl_id,
                reclaimed_bytes = reclaimed,
                "compacted the page store"
            );
        }
        Ok(released)
    }

    /// True when the crawl's captures are in the format this build writes;
    /// false when they are readable but older. An unreadable file is an error.
    pub fn crawl_is_current(&self, crawl_id: &str) -> Result<bool> {
        let path = self.crawl_captures_path(crawl_id);
        ingest::captures_current(&path).map_err(io_error(&path))
    }

    /// Sets aside a crawl ingested by an older build, as `<id>.stale`, so
    /// that it can be ingested again. Its store references stay taken until
    /// [`DataDir::release_stale`], called once the new generation no longer
    /// needs them: the current generation never loses a body meanwhile.
    pub fn set_aside_stale(&self, crawl_id: &str) -> Result<()> {
        self.set_aside(crawl_id, STALE_SUFFIX)
    }

    /// Gives up an ingest begun with [`DataDir::begin_crawl`]: the store
    /// references it journaled are given back, its folder removed, and the
    /// crawl it was to replace (set aside as stale) put back.
    pub fn abandon_crawl(&self, crawl_id: &str, partial: &Path, store: &PageStore) -> Result<()> {
        self.release_folder(partial, store)?;
        let stale = self.aside_dir(crawl_id, STALE_SUFFIX);
        if stale.exists() && !self.has_crawl(crawl_id) {
            self.put_back(crawl_id, &stale)?;
        }
        Ok(())
    }

    /// Gives back the store references of a crawl set aside as stale, and
    /// removes it.
    pub fn release_stale(&self, crawl_id: &str, store: &PageStore) -> Result<()> {
        self.release_folder(&self.aside_dir(crawl_id, STALE_SUFFIX), store)
            .map(|_| ())
    }

    fn aside_dir(&self, crawl_id: &str, suffix: &str) -> PathBuf {
        self.root.join("crawls").join(format!("{crawl_id}{suffix}"))
    }

    /// Starts ingesting a crawl: a fresh `<id>.partial` directory.
    pub fn begin_crawl(&self, crawl_id: &str) -> Result<PathBuf> {
        let partial = self
            .root
            .join("crawls")
            .join(format!("{crawl_id}{PARTIAL_SUFFIX}"));
        if partial.exists() {
            fs::remove_dir_all(&partial).map_err(io_error(&partial))?;
        }
        fs::create_dir_all(&partial).map_err(io_error(&partial))?;
        Ok(partial)
    }

    /// Completes an ingest: writes its captures (their fingerprints read
    /// back from `spill` where ingest set them aside), files and report,
    /// then renames the partial directory into place.
    pub fn finish_crawl(
        &self,
        crawl_id: &str,
        partial: &Path,
        files: &[String],
        (captures, spill): (&mut [Capture], Option<&Mutex<FingerprintSpill>>),
        report: &IngestReport,
    ) -> Result<()> {
        let path = partial.join(CAPTURES_FILE);
        match spill {
            Some(spill) => ingest::write_captures_spilled(&path, captures, spill)?,
            None => ingest::write_captures(&path, captures)?,
        }
        write_json(&partial.join("files.json"), &files)?;
        // The report goes last: its presence marks a complete crawl.
        write_json(&partial.join(REPORT_FILE), report)?;
        sync_dir(partial)?;
        let final_dir = self.crawl_dir(crawl_id);
        fs::rename(partial, &final_dir).map_err(io_error(&final_dir))?;
        sync_dir(&self.root.join("crawls"))
    }

    pub fn crawl_report(&self, crawl_id: &str) -> Result<IngestReport> {
        read_json(&self.crawl_dir(crawl_id).join(REPORT_FILE))
    }

    pub fn crawl_files(&self, crawl_id: &str) -> Result<Vec<String>> {
        read_json(&self.crawl_dir(crawl_id).join("files.json"))
    }

    pub fn crawl_captures(&self, crawl_id: &str) -> Result<Vec<Capture>> {
        Ok(ingest::read_captures(&self.crawl_captures_path(crawl_id))?)
    }

    /// Where a complete crawl's captures are.
    pub fn crawl_captures_path(&self, crawl_id: &str) -> PathBuf {
        self.crawl_dir(crawl_id).join(CAPTURES_FILE)
    }

    /// [`DataDir::set_fingerprints_aside_with`] from fingerprints held
    /// whole (the tests').
    #[cfg(test)]
    fn set_fingerprints_aside(
        &self,
        fingerprints: &[Option<Fingerprint>],
    ) -> Result<FingerprintsAside> {
        self.set_fingerprints_aside_with(fingerprints.len(), |range| {
            Ok(Cow::Borrowed(&fingerprints[range]))
        })
    }

    /// Writes the pages' fingerprints ahead of their generation, as the
    /// page table is built, so that the stages after it hold none (they are
    /// most of the analysis's memory): the similarity stage reads them from
    /// the file, and the generation's writer moves the file into its folder.
    /// `fetch` gives the fingerprints of `pages` pages a range of page ids at
    /// a time (the pipeline's, from the spill the captures' went to). The
    /// file is `generations/.fingerprints.tmp`: one writer at a time (the
    /// lock), and `check --repair` removes one a crash left.
    pub fn set_fingerprints_aside_with<'a>(
        &self,
        pages: usize,
        fetch: impl FnMut(Range<usize>) -> Result<Cow<'a, [Option<Fingerprint>]>>,
    ) -> Result<FingerprintsAside> {
        let path = self.generations_dir()?.join(FINGERPRINTS_ASIDE);
        // Removed again if writing or reading it back fails.
        let mut aside = FingerprintsAside { file: None, path };
        write_fingerprints_with(&aside.path, pages, fetch)?;
        aside.file = Some(FingerprintFile::open(&aside.path)?);
        Ok(aside)
    }

    /// A file of no name in `generations/` to set the captures'
    /// fingerprints in while the page table is built from them
    /// ([`FingerprintSpill`]).
    pub fn fingerprint_spill(&self) -> Result<FingerprintSpill> {
        Ok(FingerprintSpill::create(
            &self.generations_dir()?.join(FINGERPRINT_SPILL),
        )?)
    }

    /// A file in `generations/` to keep the texts ingest extracts in, for
    /// the index stage of the same run ([`TextSpill`]): those shorter than
    /// `longest` bytes. Of no name, unless `for_shards`: then it keeps its
    /// name until the staged generation takes it
    /// ([`DataDir::stage_generation`]), and is removed if the run ends
    /// before (`check --repair` removes one a crash left).
    pub fn text_spill(&self, longest: usize, for_shards: bool) -> Result<TextSpill> {
        let path = self.generations_dir()?.join(TEXT_SPILL);
        let spill = match for_shards {
            false => TextSpill::create(&path, longest),
            true => TextSpill::create_named(&path, longest),
        };
        spill.map_err(io_error(&path))
    }

    /// `generations/`, made if it is not there yet.
    fn generations_dir(&self) -> Result<PathBuf> {
        let generations = self.root.join("generations");
        fs::create_dir_all(&generations).map_err(io_error(&generations))?;
        Ok(generations)
    }

    /// Writes a new generation and makes it current. Returns its manifest.
    /// The tables are written first; then `build_index` writes the search
    /// index into the folder it is given (the generation's `index/`, under
    /// its temporary name), from the similarity stage's output without the
    /// pages' fingerprints ([`Similarity::without_fingerprints`]): the index
    /// needs none, and a big crawl's index stage peaks without them, nor
    /// without `mirrors`, which is let go once written. The fingerprints
    /// are `similarity`'s, or those written `aside`.
    #[allow(clippy::too_many_arguments)]
    pub fn write_generation(
        &self,
        crawls: Vec<CrawlEntry>,
        table: &PageTable,
        similarity: Similarity,
        aside: Option<FingerprintsAside>,
        collections: &Collections,
        mirrors: Mirrors,
        build_index: impl FnOnce(&Path, &Similarity) -> Result<IndexCounts>,
    ) -> Result<Manifest> {
        let generations = self.root.join("generations");
        let name = self.next_generation_name()?;
        let temporary = generations.join(format!(".{name}.tmp"));
        if temporary.exists() {
            fs::remove_dir_all(&temporary).map_err(io_error(&temporary))?;
        }
        fs::create_dir_all(&temporary).map_err(io_error(&temporary))?;
        // A run that fails (a full disk, a killed index writer) takes its
        // half-written generation away: it is nobody's, and may be large.
        let written = (|| {
            let mut manifest = write_tables(
                &temporary,
                crawls,
                (table, &similarity, aside.as_ref()),
                collections,
                &mirrors,
            )?;
            // Written, the mirrors and the fingerprints are no part of the
            // index: let go before it is built.
            drop(mirrors);
            let similarity = similarity.without_fingerprints();
            manifest.index = build_index(&temporary.join(crate::index::INDEX_DIR), &similarity)?;
            let manifest = seal(&temporary, &name, manifest)?;
            let final_dir = self.root.join("generations").join(&name);
            fs::rename(&temporary, &final_dir).map_err(io_error(&final_dir))?;
            Ok(manifest)
        })();
        let manifest = match written {
            Ok(manifest) => manifest,
            Err(error) => {
                if let Err(removing) = fs::remove_dir_all(&temporary) {
                    tracing::warn!(
                        "{}: cannot remove the generation left unfinished: {removing}",
                        temporary.display()
                    );
                }
                return Err(error);
            }
        };
        self.switch_to(&name)?;
        Ok(manifest)
    }

    /// The name the next generation written takes.
    fn next_generation_name(&self) -> Result<String> {
        let number = self
            .generation_names()?
            .iter()
            .filter_map(|name| generation_number(name))
            .max()
            .unwrap_or(0)
            + 1;
        Ok(format!("gen-{number:06}"))
    }

    /// Makes the generation `name`, in place, the current one: points
    /// `CURRENT` to it, then prunes the oldest generations and the staged
    /// ones that can no longer be published.
    fn switch_to(&self, name: &str) -> Result<()> {
        sync_dir(&self.root.join("generations"))?;
        write_atomically(&self.root.join("CURRENT"), format!("{name}\n").as_bytes())?;
        self.prune_generations(name)?;
        self.remove_stale_staged(name);
        Ok(())
    }

    pub(crate) fn generation_names(&self) -> Result<Vec<String>> {
        let folder = self.root.join("generations");
        let mut names = Vec::new();
        for entry in fs::read_dir(&folder).map_err(io_error(&folder))? {
            let entry = entry.map_err(io_error(&folder))?;
            let name = entry.file_name().to_string_lossy().to_string();
            if generation_number(&name).is_some() {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    /// Removes the oldest generations beyond [`GENERATIONS_KEPT`], never the current one.
    fn prune_generations(&self, current: &str) -> Result<()> {
        let names = self.generation_names()?;
        let excess = names.len().saturating_sub(GENERATIONS_KEPT);
        for name in names
            .iter()
            .take(excess)
            .filter(|name| name.as_str() != current)
        {
            let path = self.root.join("generations").join(name);
            fs::remove_dir_all(&path).map_err(io_error(&path))?;
        }
        Ok(())
    }
}

/// Writes the manifest of the generation in `folder`, named `name` and
/// created now, and syncs the folder: the generation is whole.
fn seal(folder: &Path, name: &str, mut manifest: Manifest) -> Result<Manifest> {
    manifest.generation = name.to_string();
    manifest.created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    write_json(&folder.join(MANIFEST_FILE), &manifest)?;
    sync_dir(folder)?;
    Ok(manifest)
}

/// The pages' fingerprints written ahead of their generation
/// ([`DataDir::set_fingerprints_aside`]). The file is removed when this is
/// dropped before the generation's writer moved it.
#[derive(Debug)]
pub struct FingerprintsAside {
    /// `None` only while the file is being written.
    file: Option<FingerprintFile>,
    path: PathBuf,
}

impl FingerprintsAside {
    pub fn file(&self) -> &FingerprintFile {
        self.file.as_ref().expect("opened once written")
    }
}

impl Drop for FingerprintsAside {
    fn drop(&mut self) {
        match fs::remove_file(&self.path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => tracing::warn!(
                "{}: cannot remove the fingerprints of a generation never written: {error}",
                self.path.display()
            ),
            _ => {}
        }
    }
}

/// The name of the fingerprints written ahead of their generation, in
/// `generations/`.
const FINGERPRINTS_ASIDE: &str = ".fingerprints.tmp";
/// Removed as soon as it is made ([`FingerprintSpill::create`]); one a
/// crash left there (between the two) is written over by the next `index`,
/// and `check` finds it among the leftovers (a `.NAME.tmp` name).
const FINGERPRINT_SPILL: &str = ".fingerprints-spill.tmp";
/// As [`FINGERPRINT_SPILL`], for the texts ingest keeps.
const TEXT_SPILL: &str = ".texts-spill.tmp";

/// Writes a generation's tables into `folder`: the manifest of what they
/// hold, without its name, date and index, which are known later. The
/// pages' fingerprints are `similarity`'s, or those written `aside`, whose
/// file moves into `folder`.
fn write_tables(
    folder: &Path,
    crawls: Vec<CrawlEntry>,
    (table, similarity, aside): (&PageTable, &Similarity, Option<&FingerprintsAside>),
    collections: &Collections,
    mirrors: &Mirrors,
) -> Result<Manifest> {
    let fingerprints = folder.join(FINGERPRINTS_FILE);
    let held = match aside {
        Some(aside) => aside.file().pages(),
        None => similarity.fingerprints.len(),
    };
    if held != table.pages.len() {
        // Written without them, a generation could never be read again.
        return Err(DataError::Format {
            path: fingerprints,
            detail: format!(
                "the similarity stage holds {held} fingerprints for the {} pages of the table",
                table.pages.len()
            ),
        });
    }
    write_compressed(&folder.join(PAGES_FILE), table)?;
    write_compressed(&folder.join(SIMILARITY_FILE), similarity)?;
    match aside {
        Some(aside) => fs::rename(&aside.path, &fingerprints).map_err(io_error(&fingerprints))?,
        None => write_fingerprints(&fingerprints, &similarity.fingerprints)?,
    }
    write_compressed(&folder.join(COLLECTIONS_FILE), collections)?;
    write_compressed(&folder.join(MIRRORS_FILE), mirrors)?;
    Ok(Manifest {
        format: GENERATION_FORMAT,
        generation: String::new(),
        created: 0,
        crawls,
        counts: table.counts(),
        similarity: similarity.counts.clone(),
        collections: collections.counts.clone(),
        mirrors: mirrors.counts.clone(),
        index: IndexCounts::default(),
    })
}

/// Writes `value` (postcard, then zstd) to `path` and syncs it, streaming:
/// neither the encoded nor the compressed bytes are ever held whole (the
/// similarity file holds every page's line hashes).
fn write_compressed<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let file = File::create(path).map_err(io_error(path))?;
    let buffered = std::io::BufWriter::with_capacity(1 << 20, file);
    let encoder = zstd::Encoder::new(buffered, 3).map_err(io_error(path))?;
    // postcard says only that writing failed: the writer keeps why. It
    // writes a value at a time (a varint, a byte): the encoder is handed
    // them 64 KiB at a time, since each of its calls compresses what it is
    // given (the index stage of a million pages took 49 s longer otherwise).
    let mut out = KeepingError {
        inner: std::io::BufWriter::with_capacity(1 << 16, encoder),
        error: None,
    };
    if let Err(error) = postcard::to_io(value, &mut out) {
        return Err(match out.error.take() {
            Some(source) => DataError::Io {
                path: path.to_path_buf(),
                source,
            },
            None => DataError::Format {
                path: path.to_path_buf(),
                detail: error.to_string(),
            },
        });
    }
    let encoder = out
        .inner
        .into_inner()
        .map_err(|error| io_error(path)(error.into_error()))?;
    let buffered = encoder.finish().map_err(io_error(path))?;
    let file = buffered
        .into_inner()
        .map_err(|error| io_error(path)(error.into_error()))?;
    file.sync_all().map_err(io_error(path))
}

/// A writer that keeps the first error of the writer it wraps.
struct KeepingError<W> {
    inner: W,
    error: Option<std::io::Error>,
}

impl<W: Write> Write for KeepingError<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.inner.write(bytes).inspect_err(|error| {
            self.error
                .get_or_insert_with(|| std::io::Error::new(error.kind(), error.to_string()));
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// What [`DataDir::recount_references`] changed and found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Recount {
    /// Blocks whose count was set to what their crawls hold.
    pub counts_fixed: u64,
    /// Blocks no crawl holds, removed.
    pub orphans_removed: u64,
    /// References the counts lost in all.
    pub references_reclaimed: u64,
    /// Blocks a crawl holds that the store lacks (left as they are).
    pub missing: u64,
    /// Blocks whose header cannot be read (left as they are).
    pub corrupt: u64,
}

/// How many of a crawl folder's journaled references were given back, by
/// its `released` marker (0 without one).
fn released_so_far(folder: &Path) -> Result<usize> {
    let marker = folder.join("released");
    match fs::read_to_string(&marker) {
        Ok(text) => Ok(text.trim().parse::<usize>().unwrap_or(usize::MAX)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(source) => Err(DataError::Io {
            path: marker,
            source,
        }),
    }
}

/// Gives back the references an interrupted ingest journaled, so that a
/// second interruption never gives one back twice: before each slice of
/// releases, how far the release will have got is recorded durably in
/// `released`; a run that finds it starts after it. An interruption inside a
/// slice leaves its remaining references taken: a leak, never an under-count.
fn release_journaled_references(
    partial: &Path,
    keys: &[ContentKey],
    store: &PageStore,
) -> Result<()> {
    const SLICE: usize = 256;
    let marker = partial.join("released");
    let already = released_so_far(partial)?.min(keys.len());
    tracing::info!(
        crawl = %partial.display(),
        references = keys.len().saturating_sub(already),
        "giving back store references"
    );
    let mut start = already.min(keys.len());
    while start < keys.len() {
        let end = (start + SLICE).min(keys.len());
        write_atomically(&marker, format!("{end}\n").as_bytes())?;
        for key in &keys[start..end] {
            match store.delete(key) {
                Ok(_) => {}
                Err(error) if error.is_not_found() => {
                    tracing::warn!(%key, "journaled reference already gone");
                }
                Err(error) => return Err(error.into()),
            }
        }
        store.flush()?;
        start = end;
    }
    Ok(())
}

const PARTIAL_SUFFIX: &str = ".partial";
/// Present while the store's references must be recounted (after an
/// interruption, until the recount is done).
const RECOUNT_MARKER: &str = "recount-references";
const STALE_SUFFIX: &str = ".stale";
const REMOVED_SUFFIX: &str = ".removed";
const REPORT_FILE: &str = "report.json";
const CAPTURES_FILE: &str = "captures.bin";

fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(|error| DataError::Format {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })?;
    text.push('\n');
    write_synced(path, text.as_bytes())
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = File::create(path).map_err(io_error(path))?;
    file.write_all(bytes).map_err(io_error(path))?;
    file.sync_all().map_err(io_error(path))
}

/// Replaces `path` atomically (see [`crate::atomic`]).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(crate::atomic::replace_with_bytes(path, bytes)?)
}

fn sync_dir(path: &Path) -> Result<()> {
    Ok(crate::atomic::sync_folder(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn empty_similarity() -> Similarity {
        crate::similarity::analyse(&PageTable::default(), Vec::new(), &Default::default())
    }

    pub(super) fn empty_collections() -> Collections {
        crate::collections::analyse(
            &PageTable::default(),
            &empty_similarity(),
            &Default::default(),
        )
    }

    /// A generation of no pages, written and made current in `data`.
    pub(super) fn write_empty_generation(data: &DataDir) -> Result<Manifest> {
        data.write_generation(
            Vec::new(),
            &PageTable::default(),
            empty_similarity(),
            None,
            &empty_collections(),
            empty_mirrors(),
            |_, _| Ok(IndexCounts::default()),
        )
    }

    pub(super) fn empty_mirrors() -> Mirrors {
        crate::mirrors::analyse(
            &PageTable::default(),
            &empty_similarity(),
            &empty_collections(),
            &Default::default(),
        )
    }

    #[test]
    fn a_new_generation_replaces_the_current_one_and_old_ones_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        assert!(matches!(data.manifest(), Err(DataError::NoGeneration(_))));
        let table = PageTable::default();
        for expected in 1..=5u64 {
            let manifest = data
                .write_generation(
                    Vec::new(),
                    &table,
                    empty_similarity(),
                    None,
                    &empty_collections(),
                    empty_mirrors(),
                    |_, _| Ok(IndexCounts::default()),
                )
                .unwrap();
            assert_eq!(manifest.generation, format!("gen-{expected:06}"));
            assert_eq!(data.current_generation().unwrap(), manifest.generation);
            assert_eq!(data.page_table().unwrap(), table);
        }
        assert_eq!(
            data.generation_names().unwrap(),
            vec!["gen-000003", "gen-000004", "gen-000005"]
        );
    }

    #[test]
    fn the_index_is_built_without_fingerprints_and_the_generation_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let (table, similarity) = crate::test_support::run(
            &[crate::test_support::capture(
                "http://a.example/page.html",
                "a page of its own\nwith two lines",
            )],
            &Default::default(),
        );
        assert!(similarity.fingerprints[0].is_some());
        let collections = crate::collections::analyse(&table, &similarity, &Default::default());
        let mirrors =
            crate::mirrors::analyse(&table, &similarity, &collections, &Default::default());
        let kept = similarity.fingerprints.clone();
        data.write_generation(
            Vec::new(),
            &table,
            similarity,
            None,
            &collections,
            mirrors,
            |_, similarity| {
                assert!(similarity.fingerprints.is_empty());
                assert_eq!(similarity.trivial.len(), 1);
                Ok(IndexCounts::default())
            },
        )
        .unwrap();
        let generation = data.generation().unwrap();
        let table = generation.page_table().unwrap();
        assert_eq!(generation.similarity(&table).unwrap().fingerprints, kept);
        // The server's reading: the rest without them, each page's read
        // from their own file.
        let served = generation.analysis_without_fingerprints().unwrap();
        assert!(served.similarity.fingerprints.is_empty());
        assert_eq!(served.similarity.trivial.len(), 1);
        let file = generation.fingerprints(&table).unwrap();
        use crate::generation::Fingerprints;
        assert_eq!(file.of_pages(&[0]).unwrap(), kept);
    }

    #[test]
    fn fingerprints_written_aside_move_into_the_generation_and_are_never_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let (table, held) = crate::test_support::run(
            &[
                crate::test_support::capture("http://a.example/one.html", "a page of its own"),
                crate::test_support::capture("http://b.example/two.html", "another page"),
            ],
            &Default::default(),
        );
        let prints = held.fingerprints.clone();
        let aside_path = dir.path().join("generations").join(FINGERPRINTS_ASIDE);
        // Dropped unused (a stage failed): the file goes with it.
        drop(data.set_fingerprints_aside(&prints).unwrap());
        assert!(!aside_path.exists());
        // For another table: refused, and nothing is left.
        let aside = data.set_fingerprints_aside(&prints[..1]).unwrap();
        let refused = data.write_generation(
            Vec::new(),
            &table,
            held.clone().without_fingerprints(),
            Some(aside),
            &empty_collections(),
            empty_mirrors(),
            |_, _| Ok(IndexCounts::default()),
        );
        assert!(
            matches!(&refused, Err(DataError::Format { detail, .. }) if detail.contains("1 fingerprints for the 2 pages")),
            "{refused:?}"
        );
        assert!(!aside_path.exists());
        assert_eq!(data.leftovers().unwrap(), Vec::<PathBuf>::new());
        // Written: the generation holds them, read back page by page.
        let aside = data.set_fingerprints_aside(&prints).unwrap();
        assert_eq!(aside.file().read_all().unwrap(), prints);
        let similarity =
            crate::similarity::analyse_from(&table, aside.file(), &Default::default()).unwrap();
        assert!(similarity.fingerprints.is_empty());
        let collections = crate::collections::analyse(&table, &similarity, &Default::default());
        let mirrors = crate::mirrors::analyse_reading(
            &table,
            (&similarity, aside.file()),
            &collections,
            &Default::default(),
            &[],
        )
        .unwrap();
        data.write_generation(
            Vec::new(),
            &table,
            similarity,
            Some(aside),
            &collections,
            mirrors,
            |_, _| Ok(IndexCounts::default()),
        )
        .unwrap();
        assert!(!aside_path.exists());
        let generation = data.generation().unwrap();
        let table = generation.page_table().unwrap();
        let read = generation.similarity(&table).unwrap();
        assert_eq!(read.fingerprints, prints);
        assert_eq!(read.trivial, held.trivial);
    }

    #[test]
    fn the_fingerprint_spill_has_no_name_and_a_crash_leftover_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let mut spill = data.fingerprint_spill().unwrap();
        let print = Fingerprint::of_text("a line\nanother line");
        let place = spill.put(&print).unwrap();
        let generations = dir.path().join("generations");
        assert_eq!(fs::read_dir(&generations).unwrap().count(), 0);
        let spilled = spill.finish().unwrap();
        assert_eq!(
            spilled.read(&[Some(place), None]).unwrap(),
            [Some(print), None]
        );
        // A crash between making it and giving up its name leaves it under
        // a name `check --repair` removes.
        let leftover = generations.join(FINGERPRINT_SPILL);
        fs::write(&leftover, b"half").unwrap();
        assert_eq!(data.leftovers().unwrap(), [leftover]);
        drop(data.fingerprint_spill().unwrap());
        assert_eq!(fs::read_dir(&generations).unwrap().count(), 0);
    }

    #[test]
    fn an_unfinished_generation_is_never_current() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        write_empty_generation(&data).unwrap();
        // A crash while writing generation 2 leaves only its temporary folder.
        fs::create_dir_all(dir.path().join("generations/.gen-000002.tmp")).unwrap();
        fs::write(
            dir.path().join("generations/.gen-000002.tmp/pages.bin"),
            b"half",
        )
        .unwrap();
        assert_eq!(data.current_generation().unwrap(), "gen-000001");
        assert!(data.page_table().is_ok());
        // The next writer cleans it and takes the number.
        assert_eq!(
            write_empty_generation(&data).unwrap().generation,
            "gen-000002"
        );
    }

    #[test]
    fn a_generation_that_fails_to_be_written_is_taken_away() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let write = |fails: bool| {
            data.write_generation(
                Vec::new(),
                &PageTable::default(),
                empty_similarity(),
                None,
                &empty_collections(),
                empty_mirrors(),
                |index, _| {
                    fs::create_dir_all(index).unwrap();
                    fs::write(index.join("segment"), vec![0u8; 4096]).unwrap();
                    if fails {
                        return Err(DataError::Io {
                            path: index.to_path_buf(),
                            source: std::io::Error::other("No space left on device"),
                        });
                    }
                    Ok(IndexCounts::default())
                },
            )
        };
        write(false).unwrap();
        let error = write(true).unwrap_err();
        assert!(error.to_string().contains("No space left"), "{error}");
        let mut names: Vec<String> = fs::read_dir(dir.path().join("generations"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["gen-000001"], "no .gen-000002.tmp left behind");
        assert_eq!(data.current_generation().unwrap(), "gen-000001");
    }

    #[test]
    fn one_writer_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let held = data.lock_for_writing().unwrap();
        assert!(matches!(
            data.lock_for_writing(),
            Err(DataError::Busy { .. })
        ));
        drop(held);
        assert!(data.lock_for_writing().is_ok());
    }
}
