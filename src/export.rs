//! `mirrorscope export`: the current generation's tables as tab-separated
//! files, for a distributed query engine (docs/SCALING.md: the chunk
//! self-join and LinkSummary as SQL) or a notebook.
//!
//! Every table is keyed by the generation's ids (page, host, trivial
//! cluster, collection, similar cluster), so the tables join with each
//! other. A file has a header line, then one row per line; fields are
//! separated by tabs and quoted as in RFC 4180 (`"`, with `""` for a quote
//! inside) only when they hold a tab, a quote or a line break, which is how
//! DataFusion, Spark, DuckDB and pandas read tab-separated CSV. 64-bit hashes
//! are written as signed decimals (the same bits as a `BIGINT`), 128-bit
//! signatures in hexadecimal; an absent value is an empty field.
//!
//! Reads the current generation; writes only the files it is asked for, each
//! first as `NAME.tsv.partial`, renamed when complete.

use std::fmt::Display;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::collections::Collections;
use crate::generation::{Analysis, DataDir, DataError, Result};
use crate::mirrors::Mirrors;
use crate::pages::PageTable;
use crate::similarity::{is_compared, Similarity};

/// A table `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Hosts,
    Pages,
    Links,
    Chunks,
    Minhash,
    Megashingles,
    Trivial,
    Clusters,
    Collections,
    CollectionPages,
    Mirrors,
}

impl Table {
    pub const ALL: [Table; 11] = [
        Table::Hosts,
        Table::Pages,
        Table::Links,
        Table::Chunks,
        Table::Minhash,
        Table::Megashingles,
        Table::Trivial,
        Table::Clusters,
        Table::Collections,
        Table::CollectionPages,
        Table::Mirrors,
    ];

    /// The file's name without `.tsv`.
    pub fn name(self) -> &'static str {
        match self {
            Table::Hosts => "hosts",
            Table::Pages => "pages",
            Table::Links => "links",
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

    /// The header line's columns.
    pub fn columns(self) -> Vec<String> {
        let fixed: &[&str] = match self {
            Table::Hosts => &["host", "name", "urls"],
            Table::Pages => &[
                "page",
                "url",
                "host",
                "ip",
                "status",
                "date",
                "crawl",
                "title",
                "body_bytes",
                "body_signature",
                "text_signature",
                "words",
            ],
            Table::Links => &["src", "dst"],
            Table::Chunks => &["page", "chunk"],
            Table::Minhash => {
                let mut columns = vec!["page".to_string()];
                columns.extend((0..crate::fingerprint::MINHASH_FUNCTIONS).map(|i| format!("h{i}")));
                return columns;
            }
            Table::Megashingles => &["page", "slot", "value"],
            Table::Trivial => &["page", "cluster"],
            Table::Clusters => &[
                "cluster",
                "kind",
                "cardinality",
                "size",
                "principal",
                "extended",
                "small",
            ],
            Table::Collections => &[
                "collection",
                "cluster",
                "host",
                "root",
                "prefix",
                "pages",
                "inlinks_from_other_hosts",
            ],
            Table::CollectionPages => &["page", "collection"],
            Table::Mirrors => &[
                "host_a",
                "host_b",
                "level",
                "shared_ip",
                "clustered_pages_a",
                "clustered_pages_b",
            ],
        };
        fixed.iter().map(|column| column.to_string()).collect()
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
/// when missing) as `NAME.tsv`, replacing files of the same names.
pub fn export(data: &DataDir, out: &Path, tables: &[Table]) -> Result<Vec<Exported>> {
    let Analysis {
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
    std::fs::create_dir_all(out).map_err(|source| DataError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let mut written = Vec::with_capacity(tables.len());
    for &table in tables {
        let path = out.join(format!("{}.tsv", table.name()));
        let partial = out.join(format!("{}.tsv.partial", table.name()));
        let rows = crate::atomic::replace(&path, &partial, |out| {
            let mut writer = TsvWriter::new(out);
            all.write(table, &mut writer)
        })
        .map_err(|error| DataError::Io {
            path: error.path,
            source: error.source,
        })?;
        let bytes = std::fs::metadata(&path)
            .map_err(|source| DataError::Io {
                path: path.clone(),
                source,
            })?
            .len();
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

impl Tables {
    /// Writes the header and rows of `table`; returns the rows written.
    fn write<W: Write>(&self, table: Table, out: &mut TsvWriter<W>) -> std::io::Result<u64> {
        for column in table.columns() {
            out.text(&column)?;
        }
        out.end_row()?;
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
                    out.value(host)?;
                    out.text(name)?;
                    out.value(self.mirrors.host_urls.get(host).copied().unwrap_or(0))?;
                    out.end_row()?;
                }
            }
            Table::Pages => {
                for (id, page) in pages.iter().enumerate() {
                    let fingerprint = fingerprints.get(id).and_then(Option::as_ref);
                    out.value(id)?;
                    out.text(&page.url)?;
                    out.value(page.host.0)?;
                    out.text(page.ip.as_deref().unwrap_or(""))?;
                    out.value(page.status)?;
                    out.text(&page.date)?;
                    out.value(page.crawl)?;
                    out.text(&page.title)?;
                    out.value(page.body_bytes)?;
                    out.optional(page.content_key.map(|key| key.signature))?;
                    out.optional(
                        fingerprint.map(|print| format!("{:032x}", print.text_signature)),
                    )?;
                    out.optional(fingerprint.map(|print| print.words))?;
                    out.end_row()?;
                }
            }
            Table::Links => {
                for (id, page) in pages.iter().enumerate() {
                    for target in &page.outlinks {
                        out.value(id)?;
                        out.value(target.0)?;
                        out.end_row()?;
                    }
                }
            }
            Table::Chunks => {
                let lines = self.similarity.config.chunk_lines;
                for (id, print) in compared() {
                    for chunk in print.chunks(lines) {
                        out.value(id)?;
                        out.value(chunk as i64)?;
                        out.end_row()?;
                    }
                }
            }
            Table::Minhash => {
                for (id, print) in compared() {
                    out.value(id)?;
                    for value in &print.minhash {
                        out.value(value)?;
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
                        out.value(id)?;
                        out.value(slot)?;
                        out.value(value as i64)?;
                        out.end_row()?;
                    }
                }
            }
            Table::Trivial => {
                for (id, cluster) in self.similarity.trivial.iter().enumerate() {
                    out.value(id)?;
                    out.value(cluster.0)?;
                    out.end_row()?;
                }
            }
            Table::Clusters => {
                for cluster in &self.collections.clusters {
                    out.value(cluster.id.0)?;
                    out.value(cluster.kind)?;
                    out.value(cluster.cardinality())?;
                    out.value(cluster.size)?;
                    out.value(cluster.principal().0)?;
                    out.value(cluster.extended)?;
                    out.value(cluster.small)?;
                    out.end_row()?;
                }
            }
            Table::Collections => {
                for collection in &self.collections.collections {
                    out.value(collection.id.0)?;
                    out.value(collection.cluster.0)?;
                    out.value(collection.host.0)?;
                    out.value(collection.root.0)?;
                    out.text(&collection.prefix)?;
                    out.value(collection.pages.len())?;
                    out.value(collection.inlinks_from_other_hosts)?;
                    out.end_row()?;
                }
            }
            Table::CollectionPages => {
                for collection in &self.collections.collections {
                    for page in &collection.pages {
                        out.value(page.0)?;
                        out.value(collection.id.0)?;
                        out.end_row()?;
                    }
                }
            }
            Table::Mirrors => {
                for pair in &self.mirrors.pairs {
                    out.value(pair.pair.a.0)?;
                    out.value(pair.pair.b.0)?;
                    out.value(pair.level)?;
                    out.text(pair.shared_ip.as_deref().unwrap_or(""))?;
                    out.value(pair.clustered_pages.0)?;
                    out.value(pair.clustered_pages.1)?;
                    out.end_row()?;
                }
            }
        }
        Ok(out.rows)
    }
}

/// Writes rows of tab-separated fields.
struct TsvWriter<W: Write> {
    inner: W,
    /// Rows ended, the header not counted.
    rows: u64,
    header_done: bool,
    at_row_start: bool,
}

impl<W: Write> TsvWriter<W> {
    fn new(inner: W) -> TsvWriter<W> {
        TsvWriter {
            inner,
            rows: 0,
            header_done: false,
            at_row_start: true,
        }
    }

    fn separate(&mut self) -> std::io::Result<()> {
        if !self.at_row_start {
            self.inner.write_all(b"\t")?;
        }
        self.at_row_start = false;
        Ok(())
    }

    /// A field that needs no quoting (a number, a flag, a hex string).
    fn value(&mut self, value: impl Display) -> std::io::Result<()> {
        self.separate()?;
        write!(self.inner, "{value}")
    }

    fn optional(&mut self, value: Option<impl Display>) -> std::io::Result<()> {
        match value {
            Some(value) => self.value(value),
            None => self.separate(),
        }
    }

    /// A text field, quoted when it holds a tab, a quote or a line break.
    fn text(&mut self, text: &str) -> std::io::Result<()> {
        self.separate()?;
        write_text(&mut self.inner, text)
    }

    fn end_row(&mut self) -> std::io::Result<()> {
        self.inner.write_all(b"\n")?;
        if self.header_done {
            self.rows += 1;
        }
        self.header_done = true;
        self.at_row_start = true;
        Ok(())
    }
}

fn write_text(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    if !text.contains(['\t', '"', '\n', '\r']) {
        return out.write_all(text.as_bytes());
    }
    out.write_all(b"\"")?;
    for (index, part) in text.split('"').enumerate() {
        if index > 0 {
            out.write_all(b"\"\"")?;
        }
        out.write_all(part.as_bytes())?;
    }
    out.write_all(b"\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(text: &str) -> String {
        let mut out = Vec::new();
        write_text(&mut out, text).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn text_is_quoted_only_when_it_must_be() {
        assert_eq!(quoted("Apache HTTP Server"), "Apache HTTP Server");
        assert_eq!(quoted(""), "");
        assert_eq!(quoted("a\tb"), "\"a\tb\"");
        assert_eq!(quoted("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quoted("two\nlines"), "\"two\nlines\"");
        assert_eq!(quoted("cr\r"), "\"cr\r\"");
    }

    /// Reads tab-separated text as RFC 4180 CSV: fields quoted when they
    /// start with a quote, `""` a quote inside; a stray quote is an error.
    fn parse(text: &str) -> Vec<Vec<String>> {
        let mut rows = vec![Vec::new()];
        let mut field = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' if field.is_empty() => loop {
                    match chars.next().expect("a closing quote") {
                        '"' if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        '"' => break,
                        inside => field.push(inside),
                    }
                },
                '"' => panic!("a quote inside an unquoted field"),
                '\t' => rows.last_mut().unwrap().push(std::mem::take(&mut field)),
                '\n' => {
                    rows.last_mut().unwrap().push(std::mem::take(&mut field));
                    rows.push(Vec::new());
                }
                c => field.push(c),
            }
        }
        assert!(
            rows.pop().unwrap().is_empty(),
            "the last row ends with a line end"
        );
        rows
    }

    #[test]
    fn awkward_text_reads_back_as_written() {
        let fields = [
            "a\tb",
            "say \"hi\"",
            "two\r\nlines",
            "\"",
            "",
            "plain",
            "trailing\t",
        ];
        let mut writer = TsvWriter::new(Vec::new());
        for field in fields {
            writer.text(field).unwrap();
        }
        writer.end_row().unwrap();
        writer.value(1).unwrap();
        writer.text("x").unwrap();
        writer.end_row().unwrap();
        let rows = parse(&String::from_utf8(writer.inner).unwrap());
        assert_eq!(rows[0], fields);
        assert_eq!(rows[1], ["1", "x"]);
    }

    #[test]
    fn rows_are_counted_without_the_header() {
        let mut writer = TsvWriter::new(Vec::new());
        writer.text("page").unwrap();
        writer.text("url").unwrap();
        writer.end_row().unwrap();
        writer.value(7).unwrap();
        writer.optional(None::<u32>).unwrap();
        writer.end_row().unwrap();
        assert_eq!(writer.rows, 1);
        assert_eq!(String::from_utf8(writer.inner).unwrap(), "page\turl\n7\t\n");
    }
}
