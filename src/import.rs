//! `mirrorscope import-analysis DIR`: the analysis computed elsewhere (the
//! Spark jobs of `spark/`, docs/SCALING.md) made the current generation's,
//! so that search, the reports and the later stages work from it.
//!
//! Reads from `DIR`, each table a Parquet file `NAME.parquet` or a folder
//! `NAME/` of Parquet files (as Spark writes a table):
//!
//! - `trivial` (page, cluster): one row per page of the current generation,
//!   its trivial cluster (the `similarity` job);
//! - `grown` (component, growth, collection, position, page) and
//!   `grown_trivial` (component, growth, position, cluster), with
//!   `collections.json` (growth's figures): the similar clusters as grown
//!   (the `collections` job), each the `growth`-th grown from the component
//!   of trivial clusters whose smallest is `component`, its collections'
//!   pages in order (the root first) and the trivial clusters it took pages
//!   from (the start first);
//! - `mirror_pairs` and `prefix_pairs` (host_a, host_b, score): the
//!   rankings of mirrored hosts of the `clusters` and `prefix` rankers (the
//!   `mirrors` job), used in place of the rankers' own;
//!
//! at least one of them, and `DIR/GENERATION` when present (the name of
//! the generation whose tables were exported, which `export` writes and the
//! jobs copy): the analysis must have been computed from the current
//! generation. The rest (parts joining their manuals, principal copies, the
//! other rankers, combining and classifying mirrored pairs, the search
//! index) is computed here into a new generation (see
//! [`pipeline::run_imported`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

use crate::collections::{ClusterVerdict, Grown, Growth, GrowthCounts};
use crate::export::GENERATION_FILE;
use crate::mirrors::{Ranker, RankingRows};
use crate::pages::PageId;
use crate::pipeline::{self, ImportedAnalysis, IndexPlan, PipelineError, Stages, Written};
use crate::similarity::TrivialClusterId;

/// What stopped `import-analysis`.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("{path}, row {row}: {message}")]
    Row {
        path: PathBuf,
        row: u64,
        message: String,
    },
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
}

type Result<T, E = ImportError> = std::result::Result<T, E>;

/// The rankings of mirrored hosts the jobs write, by the table holding
/// each.
const RANKING_TABLES: [(Ranker, &str); 2] = [
    (Ranker::Clusters, "mirror_pairs"),
    (Ranker::Prefix, "prefix_pairs"),
];

/// What was imported.
pub struct Imported {
    /// The new generation, or the generation staged for its index's shards.
    pub written: Written,
    pub stages: Stages,
    /// The files the clusters were read from.
    pub files: Vec<PathBuf>,
}

/// Imports `dir`'s analysis into the data folder `data`, its search index
/// built as `plan` says.
pub fn import(data: &Path, dir: &Path, plan: IndexPlan) -> Result<Imported> {
    let mut files = Vec::new();
    let trivial = match table_files(dir, "trivial")? {
        Some(found) => {
            // The tables name the current generation's pages: a table with
            // more rows is refused as it is read, in memory of the pages.
            let pages = crate::datadir::DataDir::open_existing(data)
                .and_then(|data| data.manifest())
                .map_err(PipelineError::from)?
                .counts
                .pages;
            let labels = read_trivial(dir, &found, pages)?;
            files.extend(found);
            Some(labels)
        }
        None => None,
    };
    let growth = match table_files(dir, "grown")? {
        Some(found) => {
            let (growth, read) = read_growth(dir, found)?;
            files.extend(read);
            Some(growth)
        }
        None => None,
    };
    let mut rankings = Vec::new();
    for (ranker, table) in RANKING_TABLES {
        if let Some(found) = table_files(dir, table)? {
            rankings.push(RankingRows {
                ranker,
                rows: read_ranking(&found)?,
            });
            files.extend(found);
        }
    }
    if trivial.is_none() && growth.is_none() && rankings.is_empty() {
        return Err(ImportError::Read {
            path: dir.to_path_buf(),
            message: "holds neither trivial clusters (trivial/ or trivial.parquet), nor grown clusters (grown/ or grown.parquet), nor a ranking of mirrored hosts (mirror_pairs/, prefix_pairs/)".into(),
        });
    }
    let marker = dir.join(GENERATION_FILE);
    let expected = match std::fs::read_to_string(&marker) {
        Ok(text) => Some(text.trim().to_string()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            tracing::warn!(
                "{}: missing; the analysis is taken to be of the current generation",
                marker.display()
            );
            None
        }
        Err(error) => {
            return Err(ImportError::Read {
                path: marker,
                message: error.to_string(),
            })
        }
    };
    let (written, stages) = pipeline::run_imported(
        data,
        ImportedAnalysis {
            trivial,
            growth,
            rankings,
        },
        expected.as_deref(),
        plan,
    )?;
    Ok(Imported {
        written,
        stages,
        files,
    })
}

/// The Parquet files of the table `name` in `dir`: the file
/// `NAME.parquet`, or those of the folder `NAME/`; `None` when it has
/// neither.
fn table_files(dir: &Path, name: &str) -> Result<Option<Vec<PathBuf>>> {
    let folder = dir.join(name);
    let file = dir.join(format!("{name}.parquet"));
    if folder.is_dir() {
        let entries = std::fs::read_dir(&folder).map_err(|error| ImportError::Read {
            path: folder.clone(),
            message: error.to_string(),
        })?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|entry| Some(entry.ok()?.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "parquet"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(ImportError::Read {
                path: folder,
                message: "no .parquet file in the folder".into(),
            });
        }
        Ok(Some(files))
    } else if file.is_file() {
        Ok(Some(vec![file]))
    } else {
        Ok(None)
    }
}

/// Calls `visit` with each row of a table's files, the values of `columns`
/// as `value` reads them (`kind` says what it accepts), in the files' order,
/// and the file and row it is at. Rows are never all held: a table is
/// refused at its first bad row, whatever its size.
fn for_each_row<T: Copy>(
    files: &[PathBuf],
    columns: &[&str],
    (value, kind): (fn(&Field) -> Option<T>, &str),
    mut visit: impl FnMut(&[T], &Path, u64) -> Result<()>,
) -> Result<()> {
    let mut parsed = Vec::with_capacity(columns.len());
    for path in files {
        let failed = |message: String| ImportError::Read {
            path: path.clone(),
            message,
        };
        let file = File::open(path).map_err(|error| failed(error.to_string()))?;
        let reader = SerializedFileReader::new(file).map_err(|error| failed(error.to_string()))?;
        let records = reader
            .get_row_iter(None)
            .map_err(|error| failed(error.to_string()))?;
        for (row, record) in (1u64..).zip(records) {
            let at = |message: String| ImportError::Row {
                path: path.clone(),
                row,
                message,
            };
            let record = record.map_err(|error| at(error.to_string()))?;
            let mut values: Vec<Option<Option<T>>> = vec![None; columns.len()];
            for (name, field) in record.get_column_iter() {
                if let Some(index) = columns.iter().position(|column| column == name) {
                    values[index] = Some(value(field));
                }
            }
            parsed.clear();
            for (value, column) in values.into_iter().zip(columns) {
                match value {
                    None => return Err(at(format!("no column {column}"))),
                    Some(None) => return Err(at(format!("{column} must be {kind}"))),
                    Some(Some(value)) => parsed.push(value),
                }
            }
            visit(&parsed, path, row)?;
        }
    }
    Ok(())
}

/// An integer of 0 or more.
fn integer(field: &Field) -> Option<u64> {
    match field {
        Field::Long(value) => u64::try_from(*value).ok(),
        Field::Int(value) => u64::try_from(*value).ok(),
        _ => None,
    }
}

const INTEGER: &str = "an integer of 0 or more";

/// A number, integer or not.
fn number(field: &Field) -> Option<f64> {
    match field {
        Field::Long(value) => Some(*value as f64),
        Field::Int(value) => Some(f64::from(*value)),
        Field::Double(value) => Some(*value),
        Field::Float(value) => Some(f64::from(*value)),
        _ => None,
    }
}

/// The (host, host, score) rows of a ranking table: `host_a`, `host_b`
/// (integers of 0 or more) and `score` (a number).
fn read_ranking(files: &[PathBuf]) -> Result<Vec<(u64, u64, f64)>> {
    let mut hosts = Vec::new();
    for_each_row(
        files,
        &["host_a", "host_b"],
        (integer, INTEGER),
        |row, _, _| {
            hosts.push((row[0], row[1]));
            Ok(())
        },
    )?;
    let mut rows = Vec::with_capacity(hosts.len());
    let mut pairs = hosts.into_iter();
    for_each_row(files, &["score"], (number, "a number"), |row, _, _| {
        if let Some((first, second)) = pairs.next() {
            rows.push((first, second, row[0]));
        }
        Ok(())
    })?;
    Ok(rows)
}

/// Each page's cluster, by page id, from the table `trivial` in `dir` (its
/// `files`): one row per page of a generation of `pages` pages. A page
/// outside it, or given a second cluster, is refused at its row.
pub fn read_trivial(dir: &Path, files: &[PathBuf], pages: u64) -> Result<Vec<u64>> {
    let mut labels: Vec<Option<u64>> = Vec::new();
    for_each_row(
        files,
        &["page", "cluster"],
        (integer, INTEGER),
        |row, path, number| {
            let (page, cluster) = (row[0], row[1]);
            let at = |message: String| ImportError::Row {
                path: path.to_path_buf(),
                row: number,
                message,
            };
            if page >= pages {
                return Err(at(format!(
                    "page {page} is not a page of the current generation (it has {pages})"
                )));
            }
            let index = page as usize;
            if labels.len() <= index {
                labels.resize(index + 1, None);
            }
            if labels[index].replace(cluster).is_some() {
                return Err(at(format!("page {page} is given two clusters")));
            }
            Ok(())
        },
    )?;
    // One row per page, pages 0 to n - 1 (too few rows are counted when
    // the generation is made).
    if let Some(page) = labels.iter().position(Option::is_none) {
        return Err(ImportError::Read {
            path: dir.join("trivial"),
            message: format!("page {page} has no cluster"),
        });
    }
    Ok(labels.into_iter().flatten().collect())
}

/// The similar clusters as grown, from the tables `grown` (its `files`) and
/// `grown_trivial` and from `collections.json` in `dir`, in growth's order;
/// and every file read.
fn read_growth(dir: &Path, files: Vec<PathBuf>) -> Result<(Growth, Vec<PathBuf>)> {
    let trivial_files = table_files(dir, "grown_trivial")?.ok_or_else(|| ImportError::Read {
        path: dir.to_path_buf(),
        message: "holds grown clusters but not the trivial clusters they grew from (grown_trivial/ or grown_trivial.parquet)".into(),
    })?;
    let page_id = |page: u64| {
        u32::try_from(page)
            .map(PageId)
            .map_err(|_| ImportError::Read {
                path: dir.join("grown"),
                message: format!("page {page} is not a page id"),
            })
    };
    // By (component, growth): the collections' pages by (collection,
    // position), and the trivial clusters by position.
    type Key = (u64, u64);
    let mut pages: BTreeMap<Key, BTreeMap<(u64, u64), PageId>> = BTreeMap::new();
    for_each_row(
        &files,
        &["component", "growth", "collection", "position", "page"],
        (integer, INTEGER),
        |row, _, _| {
            let placed = pages
                .entry((row[0], row[1]))
                .or_default()
                .insert((row[2], row[3]), page_id(row[4])?);
            if placed.is_some() {
                return Err(ImportError::Read {
                    path: dir.join("grown"),
                    message: format!(
                        "component {}, growth {}: collection {} has two pages at position {}",
                        row[0], row[1], row[2], row[3]
                    ),
                });
            }
            Ok(())
        },
    )?;
    let mut trivial: BTreeMap<Key, BTreeMap<u64, TrivialClusterId>> = BTreeMap::new();
    for_each_row(
        &trivial_files,
        &["component", "growth", "position", "cluster"],
        (integer, INTEGER),
        |row, _, _| {
            let cluster =
                u32::try_from(row[3])
                    .map(TrivialClusterId)
                    .map_err(|_| ImportError::Read {
                        path: dir.join("grown_trivial"),
                        message: format!("cluster {} is not a trivial cluster id", row[3]),
                    })?;
            if trivial
                .entry((row[0], row[1]))
                .or_default()
                .insert(row[2], cluster)
                .is_some()
            {
                return Err(ImportError::Read {
                    path: dir.join("grown_trivial"),
                    message: format!(
                        "component {}, growth {}: two trivial clusters at position {}",
                        row[0], row[1], row[2]
                    ),
                });
            }
            Ok(())
        },
    )?;
    if let Some(key) = trivial.keys().find(|key| !pages.contains_key(key)) {
        return Err(ImportError::Read {
            path: dir.join("grown"),
            message: format!("component {}, growth {} has no page", key.0, key.1),
        });
    }
    let mut grown = Vec::with_capacity(pages.len());
    for (key, placed) in pages {
        let Some(clusters) = trivial.remove(&key) else {
            return Err(ImportError::Read {
                path: dir.join("grown_trivial"),
                message: format!(
                    "component {}, growth {} names no trivial cluster",
                    key.0, key.1
                ),
            });
        };
        let mut collections: Vec<Vec<PageId>> = Vec::new();
        let mut last = None;
        for ((collection, _), page) in placed {
            if last != Some(collection) {
                collections.push(Vec::new());
                last = Some(collection);
            }
            if let Some(pages) = collections.last_mut() {
                pages.push(page);
            }
        }
        grown.push(Grown {
            collections,
            trivial: clusters.into_values().collect(),
            verdict: ClusterVerdict::default(),
        });
    }
    let figures_path = dir.join("collections.json");
    let counts = read_growth_counts(&figures_path)?;
    let mut read = files;
    read.extend(trivial_files);
    read.push(figures_path);
    Ok((
        Growth {
            clusters: grown,
            counts,
        },
        read,
    ))
}

/// Growth's figures, from the `collections` job's `collections.json`.
fn read_growth_counts(path: &Path) -> Result<GrowthCounts> {
    let failed = |message: String| ImportError::Read {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|error| failed(error.to_string()))?;
    let figures: serde_json::Value =
        serde_json::from_str(&text).map_err(|error| failed(error.to_string()))?;
    let figure = |name: &str| {
        figures[name]
            .as_u64()
            .ok_or_else(|| failed(format!("no figure {name} (an integer of 0 or more)")))
    };
    Ok(GrowthCounts {
        candidate_rows: figure("link_summary_rows")?,
        virtual_links: figure("virtual_links")?,
        merge_edges: figure("merge_edges")?,
        extended_merge_edges: figure("extended_merge_edges")?,
        components: figure("components")?,
    })
}
