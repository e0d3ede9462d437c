//! `mirrorscope export`: the current generation's tables as files for a
//! distributed query engine (docs/SCALING.md: the chunk self-join and
//! LinkSummary as SQL, the Spark jobs of `spark/`) or a notebook.
//!
//! Every table is keyed by the generation's ids (page, host, trivial
//! cluster, collection, similar cluster), so the tables join with each
//! other. Two formats hold the same tables with the same columns:
//!
//! - **tab-separated text** (`NAME.tsv`, see [`tsv`]): a header line, then
//!   one row per line, quoted as in RFC 4180 only where a field must be;
//! - **Parquet** (`NAME.parquet`, see [`parquet`]): one file per table,
//!   typed columns (64-bit integers, UTF-8 text, booleans; an absent value
//!   is a null), zstd-compressed, in row groups that a Spark or DataFusion
//!   task reads on its own.
//!
//! 64-bit hashes are signed integers (the same bits as a `BIGINT`), 128-bit
//! signatures hexadecimal text.
//!
//! Reads the current generation; writes only the files it is asked for, each
//! first as `NAME.EXT.partial`, renamed when complete, and `GENERATION`, the
//! generation's name (`import-analysis` checks it).

mod tsv;

use std::io;
use std::path::{Path, PathBuf};

use crate::collections::Collections;
use crate::generation::{io_error, Analysis, DataDir, Result};
use crate::mirrors::Mirrors;
use crate::pages::PageTable;
use crate::similarity::{is_compared, Similarity};
use crate::tabular::{parquet, Rows};
pub use crate::tabular::{Column, Kind};

/// The file naming the generation the tables are of, beside them.
pub const GENERATION_FILE: &str = "GENERATION";

/// A table `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Hosts,
    Pages,
    Links,
    Uncrawled,
    Chunks,
    Minhash,
    Megashingles,
    Trivial,
    Clusters,
    Collections,
    CollectionPages,
    Mirrors,
}

/// The file format `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Tab-separated text with a header line.
    #[default]
    Tsv,
    /// Apache Parquet, one file per table.
    Parquet,
}

impl Format {
    /// The files' extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Tsv => "tsv",
            Format::Parquet => "parquet",
        }
    }

    pub fn from_name(name: &str) -> Option<Format> {
        [Format::Tsv, Format::Parquet]
            .into_iter()
            .find(|format| format.extension() == name)
    }
}

impl Table {
    pub const ALL: [Table; 12] = [
        Table::Hosts,
        Table::Pages,
        Table::Links,
        Table::Uncrawled,
        Table::Chunks,
        Table::Minhash,
        Table::Megashingles,
        Table::Trivial,
        Table::Clusters,
        Table::Collections,
        Table::CollectionPages,
        Table::Mirrors,
    ];

    /// The file's name without its extension.
    pub fn name(self) -> &'static str {
        match self {
            Table::Hosts => "hosts",
            Table::Pages => "pages",
            Table::Links => "links",
            Table::Uncrawled => "uncrawled",
            Table::Chunks => "chunks",
            Table::Minhash => "minhash",
            Table::Megashingles => "megashingles",
            Table::Trivial => "trivial",
            Table::Clusters => "clusters",
            Table::Collections => "collections",
            Table::CollectionPages => "collection_pages",
            Table::Mirrors => "mirrors",
        }
    }

    pub fn from_name(name: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|table| table.name() == name)
    }

    /// The table's columns, in order, with their kinds.
    pub fn schema(self) -> Vec<Column> {
        use Kind::{Flag, Int, Text};
        let ints = |names: &[&str]| -> Vec<Column> {
            names.iter().map(|name| Column::new(*name, Int)).collect()
        };
        match self {
            Table::Hosts => vec![
                Column::new("host", Int),
                Column::new("name", Text),
                Column::new("urls", Int),
            ],
            Table::Pages => vec![
                Column::new("page", Int),
                Column::new("url", Text),
                Column::new("host", Int),
                Column::optional("ip", Text),
                Column::new("status", Int),
                Column::new("date", Text),
                Column::new("crawl", Int),
                Column::new("title", Text),
                Column::new("body_bytes", Int),
                Column::optional("body_signature", Text),
                Column::optional("text_signature", Text),
                Column::optional("words", Int),
                Column::optional("language", Text),
                Column::new("stand_in", Flag),
                Column::new("copied_alone", Flag),
            ],
            Table::Links => ints(&["src", "dst"]),
            Table::Uncrawled => ints(&["page", "link"]),
            Table::Chunks => ints(&["page", "chunk"]),
            Table::Minhash => std::iter::once(Column::new("page", Int))
                .chain(
                    (0..crate::fingerprint::MINHASH_FUNCTIONS)
                        .map(|i| Column::new(format!("h{i}"), Int)),
                )
                .collect(),
            Table::Megashingles => ints(&["page", "slot", "value"]),
            Table::Trivial => ints(&["page", "cluster"]),
            Table::Clusters => vec![
                Column::new("cluster", Int),
                Column::new("kind", Text),
                Column::new("cardinality", Int),
                Column::new("size", Int),
                Column::new("principal", Int),
                Column::new("extended", Flag),
                Column::new("small", Flag),
            ],
            Table::Collections => vec![
                Column::new("collection", Int),
                Column::new("cluster", Int),
                Column::new("host", Int),
                Column::new("root", Int),
                Column::new("prefix", Text),
                Column::new("pages", Int),
                Column::new("inlinks_from_other_hosts", Int),
            ],
            Table::CollectionPages => ints(&["page", "collection"]),
            Table::Mirrors => vec![
                Column::new("host_a", Int),
                Column::new("host_b", Int),
                Column::new("level", Text),
                Column::optional("shared_ip", Text),
                Column::new("clustered_pages_a", Int),
                Column::new("clustered_pages_b", Int),
            ],
        }
    }

    /// The columns' names, as the header line gives them.
    pub fn columns(self) -> Vec<String> {
        self.schema()
            .into_iter()
            .map(|column| column.name)
            .collect()
    }
}

/// One file written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    pub table: Table,
    pub path: PathBuf,
    pub rows: u64,
    pub bytes: u64,
}

/// The generation's tables, read once for every file.
struct Tables {
    table: PageTable,
    similarity: Similarity,
    collections: Collections,
    mirrors: Mirrors,
}

/// Writes `tables` of the current generation of `data` into `out` (created
/// when missing) as `NAME.tsv` or `NAME.parquet`, replacing files of the
/// same names.
pub fn export(
    data: &DataDir,
    out: &Path,
    tables: &[Table],
    format: Format,
) -> Result<Vec<Exported>> {
    let Analysis {
        manifest,
        table,
        similarity,
        collections,
        mirrors,
        ..
    } = data.analysis()?;
    let all = Tables {
        table,
        similarity,
        collections,
        mirrors,
    };
    std::fs::create_dir_all(out).map_err(io_error(out))?;
    // Which generation the tables are of, for `import-analysis` to check
    // that clusters computed from them are the current generation's.
    let marker = out.join(GENERATION_FILE);
    crate::atomic::replace_with_bytes(&marker, format!("{}\n", manifest.generation).as_bytes())?;
    let mut written = Vec::with_capacity(tables.len());
    for &table in tables {
        let name = format!("{}.{}", table.name(), format.extension());
        let path = out.join(&name);
        let partial = out.join(format!("{name}.partial"));
        let rows = crate::atomic::replace(&path, &partial, |file| match format {
            Format::Tsv => {
                let mut rows = tsv::TsvWriter::new(file, &table.columns())?;
                all.write(table, &mut rows)?;
                Ok(rows.rows())
            }
            Format::Parquet => {
                let mut rows = parquet::ParquetWriter::new(file, table.name(), table.schema())?;
                all.write(table, &mut rows)?;
                rows.finish()
            }
        })?;
        let bytes = std::fs::metadata(&path).map_err(io_error(&path))?.len();
        tracing::debug!(table = table.name(), rows, bytes, "exported");
        written.push(Exported {
            table,
            path,
            rows,
            bytes,
        });
    }
    Ok(written)
}

/// A count or an id as a 64-bit integer column's value.
fn int(value: impl TryInto<i64>) -> i64 {
    // Counts and ids of a generation are far below 2^63.
    value.try_into().unwrap_or(i64::MAX)
}

impl Tables {
    /// Writes the rows of `table`.
    fn write(&self, table: Table, out: &mut impl Rows) -> io::Result<()> {
        let pages = &self.table.pages;
        let fingerprints = &self.similarity.fingerprints;
        // The pages the similarity stage compares, with their fingerprints.
        let compared = || {
            fingerprints.iter().enumerate().filter_map(|(id, print)| {
                let print = print.as_ref()?;
                is_compared(&self.table, fingerprints, id).then_some((id, print))
            })
        };
        match table {
            Table::Hosts => {
                for (host, name) in self.table.hosts.iter().enumerate() {
                    out.int(int(host))?;
                    out.text(name)?;
                    out.int(i64::from(
                        self.mirrors.host_urls.get(host).copied().unwrap_or(0),
                    ))?;
                    out.end_row()?;
                }
            }
            Table::Pages => {
                let graph = crate::collections::WebGraph::from_table(
                    &self.table,
                    self.collections.config.rules.redirect_hops,
                );
                let alone = crate::collections::copied_alone(&self.table, &self.similarity, &graph);
                for (id, page) in pages.iter().enumerate() {
                    let fingerprint = fingerprints.get(id).and_then(Option::as_ref);
                    out.int(int(id))?;
                    out.text(&page.url)?;
                    out.int(i64::from(page.host.0))?;
                    out.optional_text(page.ip.as_deref())?;
                    out.int(i64::from(page.status))?;
                    out.text(&page.date)?;
                    out.int(i64::from(page.crawl))?;
                    out.text(&page.title)?;
                    out.int(int(page.body_bytes))?;
                    out.optional_text(
                        page.content_key
                            .map(|key| key.signature.to_string())
                            .as_deref(),
                    )?;
                    out.optional_text(
                        fingerprint
                            .map(|print| format!("{:032x}", print.text_signature))
                            .as_deref(),
                    )?;
                    out.optional_int(fingerprint.map(|print| i64::from(print.words)))?;
                    let language = self.similarity.languages.get(id).copied().flatten();
                    out.optional_text(language.as_ref().map(|language| language.code()))?;
                    out.flag(self.similarity.stand_in.get(id).copied().unwrap_or(false))?;
                    out.flag(alone[id])?;
                    out.end_row()?;
                }
            }
            Table::Links => {
                for (id, page) in pages.iter().enumerate() {
                    for target in &page.outlinks {
                        out.int(int(id))?;
                        out.int(i64::from(target.0))?;
                        out.end_row()?;
                    }
                }
            }
            Table::Uncrawled => {
                for (id, page) in pages.iter().enumerate() {
                    for &link in &page.uncrawled_links {
                        out.int(int(id))?;
                        out.int(link as i64)?;
                        out.end_row()?;
                    }
                }
            }
            Table::Chunks => {
                let config = &self.similarity.config;
                for (id, print) in compared() {
                    for chunk in print.chunks(config.chunk_lines, config.max_page_chunks) {
                        out.int(int(id))?;
                        out.int(chunk as i64)?;
                        out.end_row()?;
                    }
                }
            }
            Table::Minhash => {
                for (id, print) in compared() {
                    out.int(int(id))?;
                    for &value in &print.minhash {
                        out.int(i64::from(value))?;
                    }
                    out.end_row()?;
                }
            }
            Table::Megashingles => {
                for (id, print) in compared() {
                    let Some(megashingles) = print.megashingles() else {
                        continue;
                    };
                    for (slot, value) in megashingles.into_iter().enumerate() {
                        out.int(int(id))?;
                        out.int(int(slot))?;
                        out.int(value as i64)?;
                        out.end_row()?;
                    }
                }
            }
            Table::Trivial => {
                for (id, cluster) in self.similarity.trivial.iter().enumerate() {
                    out.int(int(id))?;
                    out.int(i64::from(cluster.0))?;
                    out.end_row()?;
                }
            }
            Table::Clusters => {
                for cluster in &self.collections.clusters {
                    out.int(i64::from(cluster.id.0))?;
                    out.text(&cluster.kind.to_string())?;
                    out.int(int(cluster.cardinality()))?;
                    out.int(i64::from(cluster.size))?;
                    out.int(i64::from(cluster.principal().0))?;
                    out.flag(cluster.extended)?;
                    out.flag(cluster.small)?;
                    out.end_row()?;
                }
            }
            Table::Collections => {
                for collection in &self.collections.collections {
                    out.int(i64::from(collection.id.0))?;
                    out.int(i64::from(collection.cluster.0))?;
                    out.int(i64::from(collection.host.0))?;
                    out.int(i64::from(collection.root.0))?;
                    out.text(&collection.prefix)?;
                    out.int(int(collection.pages.len()))?;
                    out.int(int(collection.inlinks_from_other_hosts))?;
                    out.end_row()?;
                }
            }
            Table::CollectionPages => {
                for collection in &self.collections.collections {
                    for page in &collection.pages {
                        out.int(i64::from(page.0))?;
                        out.int(i64::from(collection.id.0))?;
                        out.end_row()?;
                    }
                }
            }
            Table::Mirrors => {
                for pair in &self.mirrors.pairs {
                    out.int(i64::from(pair.pair.a.0))?;
                    out.int(i64::from(pair.pair.b.0))?;
                    out.text(pair.level.name())?;
                    out.optional_text(pair.shared_ip.as_deref())?;
                    out.int(i64::from(pair.clustered_pages.0))?;
                    out.int(i64::from(pair.clustered_pages.1))?;
                    out.end_row()?;
                }
            }
        }
        Ok(())
    }
}
