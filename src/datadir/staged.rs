//! Staged generations: a generation whose tables are written while its
//! search index is built apart, in shards, by other processes (the Spark
//! job of `spark/`, docs/SCALING.md), then published.
//!
//! ```text
//! generations/staged-<id>/      tables, staged.json, index/shards.json,
//!                               texts.bin and texts.table (the texts ingest kept)
//!   index/shard-<n>/            one shard's tantivy index, once whole
//!   index/shard-<n>.json        its counts
//!   index/.shard-<n>.tmp-<id>/  a shard being built
//! ```
//!
//! Each shard is built under a temporary name, then renamed: a shard's
//! folder is whole or absent, and a task run twice (a retried or
//! speculative Spark task) keeps the first copy finished. `publish` checks
//! every shard is there and the current generation is still the one the
//! tables were computed from (its cluster ids continue that one's), then
//! names the generation and switches to it as `index` does.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{seal, sync_dir, write_json, write_tables, FingerprintsAside};
use crate::collections::Collections;
use crate::generation::{
    io_error, read_json, CrawlEntry, DataDir, DataError, Generation, Manifest, Result,
};
use crate::index::shards::{self, Shard, ShardList, SHARDS_FILE};
use crate::index::{IndexCounts, INDEX_DIR};
use crate::mirrors::Mirrors;
use crate::pages::PageTable;
use crate::similarity::Similarity;
use crate::store::texts::{KeptTexts, TEXTS_FILE};

/// The start of a staged generation's name (and folder).
const STAGED_PREFIX: &str = "staged-";

/// What a staged generation keeps until it is published.
const STAGED_FILE: &str = "staged.json";

/// A shard's counts, in its folder: a name tantivy and
/// [`shards::ShardedDirectory`] leave alone (it starts with a dot).
const SHARD_COUNTS_FILE: &str = ".counts.json";

#[derive(Debug, Serialize, Deserialize)]
struct StagedFacts {
    /// The generation current when the tables were computed.
    base: Option<String>,
    shards: u32,
    /// Its manifest, but for its name, date and index.
    manifest: Manifest,
}

/// A generation written but for its index, not yet current.
#[derive(Debug, Clone)]
pub struct StagedGeneration {
    /// `staged-…`: what `index-shard` and `publish` are given.
    pub name: String,
    pub path: PathBuf,
    /// The shards its index is built in.
    pub shards: u32,
    /// The generation current when it was staged.
    pub base: Option<String>,
    /// Its manifest, named after it, without its index.
    pub manifest: Manifest,
}

impl StagedGeneration {
    /// Its tables, read as a generation's.
    pub fn tables(&self) -> Generation {
        Generation {
            path: self.path.clone(),
        }
    }

    /// The texts ingest kept for its shards, of the `bodies` a shard holds;
    /// `None` where it keeps none, or they cannot be read (said, and the
    /// bodies are read from the store instead).
    pub fn kept_texts(
        &self,
        bodies: &mut dyn Iterator<Item = crate::store::texts::Body>,
    ) -> Option<KeptTexts> {
        KeptTexts::open(&self.path, Some(bodies)).unwrap_or_else(|error| {
            tracing::warn!(
                "{}: the texts ingest kept cannot be read ({error}); the shard reads the bodies again",
                self.path.join(TEXTS_FILE).display()
            );
            None
        })
    }

    fn index_dir(&self) -> PathBuf {
        self.path.join(INDEX_DIR)
    }
}

fn format_error(path: &Path, detail: impl Into<String>) -> DataError {
    DataError::Format {
        path: path.to_path_buf(),
        detail: detail.into(),
    }
}

impl DataDir {
    /// The current generation's name; `None` in a folder with none yet.
    fn current_if_any(&self) -> Result<Option<String>> {
        match self.current_generation() {
            Ok(name) => Ok(Some(name)),
            Err(DataError::NoGeneration(_)) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Writes a generation's tables as a staged generation whose index is
    /// to be built in `shard_count` shards, with the `texts` ingest kept in
    /// this run for the shards to read. Needs the writer lock; the shards
    /// do not.
    pub fn stage_generation(
        &self,
        crawls: Vec<CrawlEntry>,
        (table, similarity, aside, collections, mirrors): (
            &PageTable,
            &Similarity,
            Option<FingerprintsAside>,
            &Collections,
            &Mirrors,
        ),
        texts: Option<KeptTexts>,
        shard_count: u32,
    ) -> Result<StagedGeneration> {
        Shard::new(0, shard_count).map_err(|detail| format_error(&self.root, detail))?;
        let base = self.current_if_any()?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        let name = format!("{STAGED_PREFIX}{stamp}");
        let generations = self.root.join("generations");
        let path = generations.join(&name);
        let temporary = generations.join(format!(".{name}.tmp"));
        fs::create_dir_all(temporary.join(INDEX_DIR)).map_err(io_error(&temporary))?;
        let written = (|| {
            let mut tables = write_tables(
                &temporary,
                crawls,
                (table, similarity, aside.as_ref()),
                collections,
                mirrors,
            )?;
            tables.generation = name.clone();
            if let Some(mut texts) = texts {
                texts
                    .persist_into(&temporary)
                    .map_err(io_error(&temporary.join(TEXTS_FILE)))?;
            }
            write_json(
                &temporary.join(INDEX_DIR).join(SHARDS_FILE),
                &ShardList {
                    shards: shard_count,
                },
            )?;
            write_json(
                &temporary.join(STAGED_FILE),
                &StagedFacts {
                    base: base.clone(),
                    shards: shard_count,
                    manifest: tables.clone(),
                },
            )?;

            sync_dir(&temporary.join(INDEX_DIR))?;
            sync_dir(&temporary)?;
            fs::rename(&temporary, &path).map_err(io_error(&path))?;
            sync_dir(&generations)?;
            Ok(tables)
        })();
        let manifest = match written {
            Ok(manifest) => manifest,
            Err(error) => {
                let _ = fs::remove_dir_all(&temporary);
                return Err(error);
            }
        };
        Ok(StagedGeneration {
            name,
            path,
            shards: shard_count,
            base,
            manifest,
        })
    }

    /// The staged generation `name`.
    pub fn staged(&self, name: &str) -> Result<StagedGeneration> {
        let generations = self.root.join("generations");
        let well_formed = name
            .strip_prefix(STAGED_PREFIX)
            .is_some_and(|id| !id.is_empty() && id.bytes().all(|byte| byte.is_ascii_digit()));
        if !well_formed {
            return Err(format_error(
                &generations,
                format!("{name:?} is not a staged generation's name (staged-<digits>)"),
            ));
        }
        let path = generations.join(name);
        let facts_path = path.join(STAGED_FILE);
        if !facts_path.is_file() {
            return Err(format_error(
                &path,
                "no such staged generation: it was published, or removed when another generation became current",
            ));
        }
        let facts: StagedFacts = read_json(&facts_path)?;
        if facts.manifest.format != crate::generation::GENERATION_FORMAT {
            return Err(format_error(
                &path,
                format!(
                    "staged by a build that writes generation format {}, not the {} this build reads; stage it again with `mirrorscope index --index-shards`",
                    facts.manifest.format,
                    crate::generation::GENERATION_FORMAT
                ),
            ));
        }
        Ok(StagedGeneration {
            name: name.to_string(),
            path,
            shards: facts.shards,
            base: facts.base,
            manifest: facts.manifest,
        })
    }

    /// Builds `shard` of `staged`'s index with `build`, which writes it into
    /// the folder it is given (a temporary one), unless a copy of it is
    /// finished already. Returns the shard's counts.
    pub fn build_staged_shard(
        &self,
        staged: &StagedGeneration,
        shard: Shard,
        build: impl FnOnce(&Path) -> Result<IndexCounts>,
    ) -> Result<IndexCounts> {
        if shard.count != staged.shards {
            return Err(format_error(
                &staged.path,
                format!(
                    "its index is staged in {} shards, not {}",
                    staged.shards, shard.count
                ),
            ));
        }
        let index = staged.index_dir();
        let folder = index.join(shard.folder_name());
        if folder.is_dir() {
            tracing::info!(shard = %folder.display(), "the shard is built already");
            return read_json(&folder.join(SHARD_COUNTS_FILE));
        }
        let temporary = crate::atomic::unique_temporary_beside(&folder);
        // Not `create_dir_all`: a staged generation removed meanwhile (once
        // another became current) is not made again.
        fs::create_dir(&temporary).map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => format_error(
                &staged.path,
                "no such staged generation: it was removed when another generation became current",
            ),
            _ => io_error(&temporary)(error),
        })?;
        let built = (|| {
            let counts = build(&temporary)?;
            write_json(&temporary.join(SHARD_COUNTS_FILE), &counts)?;
            sync_dir(&temporary)?;
            // The rename is the commit: the folder comes with its counts.
            // A copy finished first (a task run twice) stays: both hold the
            // same documents.
            if let Err(error) = fs::rename(&temporary, &folder) {
                if !folder.is_dir() {
                    return Err(io_error(&folder)(error));
                }
                fs::remove_dir_all(&temporary).map_err(io_error(&temporary))?;
                return read_json(&folder.join(SHARD_COUNTS_FILE));
            }
            sync_dir(&index)?;
            Ok(counts)
        })();
        if built.is_err() && temporary.exists() {
            let _ = fs::remove_dir_all(&temporary);
        }
        built
    }

    /// Staged generations that can never be published: staged on a
    /// generation that is no longer `current` (publish refuses them; their
    /// cluster ids continue the old one's). Those still on `current` may
    /// have shards being built and are kept.
    pub(super) fn stale_staged(&self, current: Option<&str>) -> Result<Vec<PathBuf>> {
        let generations = self.root.join("generations");
        let mut stale = Vec::new();
        for entry in fs::read_dir(&generations).map_err(io_error(&generations))? {
            let path = entry.map_err(io_error(&generations))?.path();
            let staged = path
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with(STAGED_PREFIX));
            let facts_path = path.join(STAGED_FILE);
            if !staged || !facts_path.is_file() {
                continue;
            }
            // One whose facts cannot be read cannot be published either.
            match read_json::<StagedFacts>(&facts_path) {
                Ok(facts) if facts.base.as_deref() == current => {}
                Ok(_) => stale.push(path),
                Err(error) => {
                    tracing::warn!("{error}: the staged generation cannot be published");
                    stale.push(path);
                }
            }
        }
        stale.sort();
        Ok(stale)
    }

    /// Removes the staged generations [`DataDir::stale_staged`] finds, once
    /// `current` is current. Needs the writer lock. Each is first renamed
    /// aside ([`crate::atomic::remove_folder`]), so that a shard task still
    /// building in it fails rather than writing its shard back; what cannot
    /// be removed is said and left to `check --repair` (`current` is
    /// current already).
    pub(super) fn remove_stale_staged(&self, current: &str) {
        let stale = match self.stale_staged(Some(current)) {
            Ok(stale) => stale,
            Err(error) => {
                tracing::warn!("{error}: staged generations left as they are");
                return;
            }
        };
        for path in stale {
            tracing::info!(staged = %path.display(), "removing a staged generation that can no longer be published");
            if let Err(error) = crate::atomic::remove_folder(&path) {
                tracing::warn!(staged = %path.display(), "{error}: left for check --repair");
            }
        }
    }

    /// Publishes the staged generation `name` once every shard of its index
    /// is built: it becomes the next generation, and current. Needs the
    /// writer lock. Refused when another generation became current since
    /// it was staged.
    pub fn publish_staged(&self, name: &str) -> Result<Manifest> {
        if let Some(manifest) = self.finish_interrupted_publish(name)? {
            return Ok(manifest);
        }
        let staged = self.staged(name)?;
        let facts: StagedFacts = read_json(&staged.path.join(STAGED_FILE))?;
        let current = self.current_if_any()?;
        if current != facts.base {
            return Err(format_error(
                &staged.path,
                format!(
                    "it was computed from generation {}, and {} is current now: its cluster ids would not continue the current ones; import the analysis again",
                    facts.base.as_deref().unwrap_or("(none)"),
                    current.as_deref().unwrap_or("(none)")
                ),
            ));
        }
        let index = staged.index_dir();
        let folders = shards::shard_folders(&index).map_err(io_error(&index))?;
        let mut counts = IndexCounts::default();
        for folder in &folders {
            let shard: IndexCounts = read_json(&folder.join(SHARD_COUNTS_FILE))?;
            counts.documents += shard.documents;
            counts.unreadable_bodies += shard.unreadable_bodies;
            counts.kept_texts += shard.kept_texts;
            counts.bytes += shard.bytes;
        }
        // The shards open as one index, holding what their counts say.
        let opened = crate::index::SearchIndex::open(&index)
            .map_err(|error| format_error(&index, error.to_string()))?;
        let documents = opened.searcher().num_docs();
        if documents != counts.documents {
            return Err(format_error(
                &index,
                format!(
                    "the shards hold {documents} documents, their counts say {}",
                    counts.documents
                ),
            ));
        }
        drop(opened);
        // The texts were the shards'; a generation does not keep them.
        KeptTexts::remove_from(&staged.path).map_err(io_error(&staged.path.join(TEXTS_FILE)))?;
        // What killed copies of a shard left: nobody's.
        for entry in fs::read_dir(&index).map_err(io_error(&index))? {
            let path = entry.map_err(io_error(&index))?.path();
            let leftover = path
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with('.') && name.contains(".tmp-"));
            if leftover {
                fs::remove_dir_all(&path).map_err(io_error(&path))?;
            }
        }
        let mut manifest = facts.manifest;
        manifest.index = counts;
        let generation = self.next_generation_name()?;
        let manifest = seal(&staged.path, &generation, manifest)?;
        let final_dir = self.root.join("generations").join(&generation);
        fs::rename(&staged.path, &final_dir).map_err(io_error(&final_dir))?;
        self.switch_to(&generation)?;
        // Kept until now: a publish interrupted after the rename is
        // finished by the next (see `finish_interrupted_publish`).
        let facts_path = final_dir.join(STAGED_FILE);
        fs::remove_file(&facts_path).map_err(io_error(&facts_path))?;
        Ok(manifest)
    }

    /// When a publish of `name` was interrupted after its generation was
    /// renamed into place (a `gen-…` still holding the staging facts of
    /// `name`): switches to it if its base is still current, and returns
    /// its manifest.
    fn finish_interrupted_publish(&self, name: &str) -> Result<Option<Manifest>> {
        for generation in self.generation_names()? {
            let folder = self.root.join("generations").join(&generation);
            let facts_path = folder.join(STAGED_FILE);
            if !facts_path.is_file() {
                continue;
            }
            let facts: StagedFacts = read_json(&facts_path)?;
            if facts.manifest.generation != name {
                continue;
            }
            let current = self.current_if_any()?;
            if current.as_deref() != Some(generation.as_str()) {
                if current != facts.base {
                    return Err(format_error(
                        &folder,
                        "published from a generation that is no longer current; import the analysis again",
                    ));
                }
                self.switch_to(&generation)?;
            }
            fs::remove_file(&facts_path).map_err(io_error(&facts_path))?;
            return Generation { path: folder }.manifest().map(Some);
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{
        empty_collections, empty_mirrors, empty_similarity, write_empty_generation,
    };
    use super::*;
    use crate::store::StoreConfig;

    fn stage(data: &DataDir, shards: u32) -> StagedGeneration {
        data.stage_generation(
            Vec::new(),
            (
                &PageTable::default(),
                &empty_similarity(),
                None,
                &empty_collections(),
                &empty_mirrors(),
            ),
            None,
            shards,
        )
        .unwrap()
    }

    /// Builds `shard` of `staged` as `index-shard` does, from its tables.
    fn build(data: &DataDir, staged: &StagedGeneration, shard: Shard) -> Result<IndexCounts> {
        let store = data.store(&StoreConfig::default()).unwrap();
        data.build_staged_shard(staged, shard, |dir| {
            let tables = staged.tables();
            let table = tables.page_table()?;
            Ok(crate::index::build_shard(
                dir,
                (
                    &table,
                    &tables.similarity(&table)?,
                    &tables.collections(&table)?,
                ),
                (&store, None),
                &Default::default(),
                shard,
            )
            .unwrap())
        })
    }

    #[test]
    fn a_staged_generation_is_published_once_every_shard_is_built() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let staged = stage(&data, 2);
        assert!(matches!(
            data.current_generation(),
            Err(DataError::NoGeneration(_))
        ));
        assert_eq!(data.staged(&staged.name).unwrap().shards, 2);
        let refused = data.publish_staged(&staged.name).unwrap_err().to_string();
        assert!(refused.contains("shard 0 of 2 is missing"), "{refused}");

        build(&data, &staged, Shard::new(1, 2).unwrap()).unwrap();
        let refused = data.publish_staged(&staged.name).unwrap_err().to_string();
        assert!(refused.contains("shard 0 of 2 is missing"), "{refused}");
        // A shard built already is kept: the second build is not run.
        let kept = data
            .build_staged_shard(&staged, Shard::new(1, 2).unwrap(), |_| {
                panic!("built again")
            })
            .unwrap();
        assert_eq!(kept.documents, 0);
        let wrong_count = build(&data, &staged, Shard::new(0, 3).unwrap()).unwrap_err();
        assert!(wrong_count
            .to_string()
            .contains("staged in 2 shards, not 3"));
        build(&data, &staged, Shard::new(0, 2).unwrap()).unwrap();

        let manifest = data.publish_staged(&staged.name).unwrap();
        assert_eq!(manifest.generation, "gen-000001");
        assert_eq!(data.current_generation().unwrap(), "gen-000001");
        assert!(!staged.path.exists());
        let index = dir.path().join("generations/gen-000001/index");
        assert!(shards::is_sharded(&index));
        assert!(!index.parent().unwrap().join(STAGED_FILE).exists());
        assert_eq!(data.manifest().unwrap(), manifest);
        assert!(data.publish_staged(&staged.name).is_err());
    }

    #[test]
    fn a_publish_interrupted_after_its_rename_is_finished_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let staged = stage(&data, 1);
        build(&data, &staged, Shard::WHOLE).unwrap();
        // A killed copy of the shard left its folder.
        let leftover = staged.path.join("index/.shard-0000.tmp-1-2");
        fs::create_dir_all(&leftover).unwrap();
        // Killed after the rename, before CURRENT: as publish leaves it.
        let sealed = seal(&staged.path, "gen-000001", staged.manifest.clone()).unwrap();
        let renamed = dir.path().join("generations/gen-000001");
        fs::rename(&staged.path, &renamed).unwrap();
        assert!(data.current_generation().is_err());

        let manifest = data.publish_staged(&staged.name).unwrap();
        assert_eq!(manifest, sealed);
        assert_eq!(data.current_generation().unwrap(), "gen-000001");
        assert!(!renamed.join(STAGED_FILE).exists());
        assert!(data.publish_staged(&staged.name).is_err());
        assert!(renamed.join("index/.shard-0000.tmp-1-2").exists());

        // A publish that runs whole takes such leftovers away.
        let staged = stage(&data, 1);
        build(&data, &staged, Shard::WHOLE).unwrap();
        fs::create_dir_all(staged.path.join("index/.shard-0000.tmp-3-4")).unwrap();
        let manifest = data.publish_staged(&staged.name).unwrap();
        let index = dir
            .path()
            .join("generations")
            .join(&manifest.generation)
            .join("index");
        assert!(!index.join(".shard-0000.tmp-3-4").exists());
        assert!(index.join("shard-0000/.counts.json").is_file());
    }

    #[test]
    fn staged_generations_another_current_generation_outdates_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let outdated = stage(&data, 1);
        build(&data, &outdated, Shard::WHOLE).unwrap();
        let unbuilt = stage(&data, 1);
        // `index` makes another generation current: the staged ones can
        // never be published, and go.
        write_empty_generation(&data).unwrap();
        assert!(!outdated.path.exists());
        let refused = data.publish_staged(&outdated.name).unwrap_err().to_string();
        assert!(refused.contains("no such staged generation"), "{refused}");
        // A shard task that had read its tables before fails, and does not
        // make the folder again.
        let refused = build(&data, &unbuilt, Shard::WHOLE)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("removed when another"), "{refused}");
        assert!(!unbuilt.path.exists());
        assert!(data.leftovers().unwrap().is_empty());

        // Two staged on the new current one: publishing either outdates
        // the other.
        let published = stage(&data, 1);
        let other = stage(&data, 1);
        assert!(data.stale_staged(Some("gen-000001")).unwrap().is_empty());
        build(&data, &published, Shard::WHOLE).unwrap();
        data.publish_staged(&published.name).unwrap();
        assert_eq!(data.current_generation().unwrap(), "gen-000002");
        assert!(!other.path.exists());

        // CURRENT pointed back by hand: publish refuses.
        let kept = stage(&data, 1);
        build(&data, &kept, Shard::WHOLE).unwrap();
        let current_file = dir.path().join("CURRENT");
        super::super::write_atomically(&current_file, b"gen-000001\n").unwrap();
        let refused = data.publish_staged(&kept.name).unwrap_err().to_string();
        assert!(refused.contains("import the analysis again"), "{refused}");
        assert_eq!(data.leftovers().unwrap(), vec![kept.path.clone()]);
        // `check --repair` points CURRENT to the newest intact generation
        // first (gen-000001, written empty here, has no index): the staged
        // generation is on it, and stays.
        let config = StoreConfig::default();
        let repaired = super::super::check(&data, &config, true).unwrap();
        assert_eq!(
            repaired.repaired.unwrap().current_set_to.as_deref(),
            Some("gen-000002")
        );
        assert!(kept.path.exists());

        // One an older build left, on a generation no longer current, is
        // counted, and removed by `--repair`; not while CURRENT is missing.
        let left = dir.path().join("generations/staged-1");
        fs::create_dir_all(&left).unwrap();
        let mut facts: StagedFacts = read_json(&kept.path.join(STAGED_FILE)).unwrap();
        facts.base = Some("gen-000001".into());
        write_json(&left.join(STAGED_FILE), &facts).unwrap();
        assert_eq!(data.leftovers().unwrap(), vec![left.clone()]);
        let current = fs::read(&current_file).unwrap();
        fs::remove_file(&current_file).unwrap();
        assert!(data.leftovers().unwrap().is_empty());
        super::super::write_atomically(&current_file, &current).unwrap();
        let report = super::super::check(&data, &config, false).unwrap();
        assert_eq!(report.temporary_files.count, 1, "{report}");
        let repaired = super::super::check(&data, &config, true).unwrap();
        assert_eq!(
            repaired.repaired.as_ref().unwrap().temporary_files_removed,
            1
        );
        assert!(!left.exists());
        assert_eq!(
            data.publish_staged(&kept.name).unwrap().generation,
            "gen-000003"
        );
    }

    #[test]
    fn a_generation_staged_by_a_build_of_another_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let staged = stage(&data, 1);
        assert!(data.staged(&staged.name).is_ok());
        let facts = staged.path.join(STAGED_FILE);
        let mut written: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&facts).unwrap()).unwrap();
        let older = crate::generation::GENERATION_FORMAT - 1;
        written["manifest"]["format"] = older.into();
        fs::write(&facts, written.to_string()).unwrap();
        let error = data.staged(&staged.name).err().unwrap().to_string();
        assert!(
            error.contains(&format!("generation format {older}, not the")),
            "{error}"
        );
        assert!(data.publish_staged(&staged.name).is_err());
    }

    #[test]
    fn only_staged_generations_names_are_taken() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        for name in [
            "gen-000001",
            "staged-",
            "staged-../../x",
            "staged-1/2",
            "staged-12",
        ] {
            assert!(data.staged(name).is_err(), "{name}");
        }
        assert!(data
            .stage_generation(
                Vec::new(),
                (
                    &PageTable::default(),
                    &empty_similarity(),
                    None,
                    &empty_collections(),
                    &empty_mirrors(),
                ),
                None,
                0,
            )
            .is_err());
    }
}
