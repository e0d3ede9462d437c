//! `mirrorscope export` on the shipped crawl: every table is written with
//! its header, parses back as tab-separated CSV, and joined on its ids
//! gives what `stats`, `clusters` and `mirrors` report; in Parquet, every
//! table holds the same columns and rows, typed.

use crate::common;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use common::*;

/// A tab-separated file read as RFC 4180 CSV (tab as delimiter): the header
/// and the rows, each checked to have the header's number of fields.
fn read_tsv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut records: Vec<Vec<String>> = Vec::new();
    let mut record: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                c => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => quoted = true,
            '\t' => record.push(std::mem::take(&mut field)),
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            c => field.push(c),
        }
    }
    assert!(!quoted, "{}: a quote is left open", path.display());
    assert!(
        field.is_empty() && record.is_empty(),
        "{}: the last row has no line end",
        path.display()
    );
    let header = records.remove(0);
    for (index, row) in records.iter().enumerate() {
        assert_eq!(
            row.len(),
            header.len(),
            "{} row {}: {row:?}",
            path.display(),
            index + 1
        );
    }
    (header, records)
}

/// A table as maps from column name to value.
struct Table {
    columns: HashMap<String, usize>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn read(dir: &Path, name: &str) -> Table {
        let (header, rows) = read_tsv(&dir.join(format!("{name}.tsv")));
        Table {
            columns: header
                .into_iter()
                .enumerate()
                .map(|(index, column)| (column, index))
                .collect(),
            rows,
        }
    }

    fn get<'r>(&self, row: &'r [String], column: &str) -> &'r str {
        &row[*self
            .columns
            .get(column)
            .unwrap_or_else(|| panic!("no column {column}"))]
    }

    /// `value` by `key`, both columns of this table.
    fn map(&self, key: &str, value: &str) -> HashMap<String, String> {
        self.rows
            .iter()
            .map(|row| {
                (
                    self.get(row, key).to_string(),
                    self.get(row, value).to_string(),
                )
            })
            .collect()
    }
}

#[test]
fn exported_tables_join_into_what_the_reports_say() {
    let crawl = shipped_crawl();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tables");
    let output = mirrorscope(
        &crate_dir(),
        &[
            "export",
            "--data",
            &crawl.data,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let listed = stdout(&output);
    let mut files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "GENERATION",
            "chunks.tsv",
            "clusters.tsv",
            "collection_pages.tsv",
            "collections.tsv",
            "hosts.tsv",
            "links.tsv",
            "megashingles.tsv",
            "minhash.tsv",
            "mirrors.tsv",
            "pages.tsv",
            "trivial.tsv",
            "uncrawled.tsv"
        ],
        "no .partial file is left"
    );
    for file in files.iter().filter(|file| *file != "GENERATION") {
        assert!(listed.contains(file.as_str()), "{file} listed in {listed}");
    }
    let current = std::fs::read_to_string(crawl.path().join("CURRENT")).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("GENERATION"))
            .unwrap()
            .trim(),
        current.trim(),
        "GENERATION names the generation exported"
    );

    let stats = json(&mirrorscope(
        &crate_dir(),
        &["stats", "--data", &crawl.data, "--json"],
    ));
    let count = |value: &serde_json::Value| value.as_u64().unwrap() as usize;
    let pages = Table::read(&out, "pages");
    let hosts = Table::read(&out, "hosts");
    let links = Table::read(&out, "links");
    let uncrawled = Table::read(&out, "uncrawled");
    let trivial = Table::read(&out, "trivial");
    let minhash = Table::read(&out, "minhash");
    let megashingles = Table::read(&out, "megashingles");
    let chunks = Table::read(&out, "chunks");
    let clusters = Table::read(&out, "clusters");
    let collections = Table::read(&out, "collections");
    let members = Table::read(&out, "collection_pages");
    let mirrors = Table::read(&out, "mirrors");

    // Row counts are the generation's own figures.
    assert_eq!(pages.rows.len(), count(&stats["pages"]));
    assert_eq!(hosts.rows.len(), count(&stats["hosts"]));
    assert_eq!(links.rows.len(), count(&stats["links"]));
    // Links to pages the crawl did not fetch: some pages of the shipped
    // crawl's partial mirrors have them, each page's keys distinct.
    assert!(!uncrawled.rows.is_empty());
    let mut keys: HashSet<(&str, &str)> = HashSet::new();
    for row in &uncrawled.rows {
        let page: usize = uncrawled.get(row, "page").parse().unwrap();
        assert!(page < pages.rows.len());
        assert!(keys.insert((uncrawled.get(row, "page"), uncrawled.get(row, "link"))));
    }
    assert_eq!(trivial.rows.len(), pages.rows.len());
    assert_eq!(
        clusters.rows.len(),
        count(&stats["collections"]["clusters"])
    );
    assert_eq!(
        collections.rows.len(),
        count(&stats["collections"]["collections"])
    );
    assert_eq!(
        members.rows.len(),
        count(&stats["collections"]["pages_in_collections"])
    );
    // A trivial cluster of more than one page is a set of copies.
    let mut sizes: HashMap<&str, usize> = HashMap::new();
    for row in &trivial.rows {
        *sizes.entry(trivial.get(row, "cluster")).or_default() += 1;
    }
    assert_eq!(
        sizes.values().filter(|&&size| size > 1).count(),
        count(&stats["trivial_clusters"])
    );
    // Every compared page has its 84 min-hashes and a row per megashingle.
    assert_eq!(minhash.columns.len(), 85);
    assert_eq!(minhash.rows.len(), count(&stats["compared_pages"]));
    assert!(megashingles.rows.len() <= minhash.rows.len() * 15);
    assert!(chunks.rows.len() >= minhash.rows.len());
    // Links point at pages of the table; text signatures are 128-bit hex.
    let page_count = pages.rows.len();
    assert!(links.rows.iter().all(|row| {
        row.iter()
            .all(|id| id.parse::<usize>().is_ok_and(|id| id < page_count))
    }));
    assert!(pages.rows.iter().all(|row| {
        let signature = pages.get(row, "text_signature");
        signature.is_empty()
            || (signature.len() == 32 && u128::from_str_radix(signature, 16).is_ok())
    }));

    // Joined on their ids, the tables give every cluster of `clusters`:
    // its collections' hosts, roots, prefixes and page URLs.
    let url_of = pages.map("page", "url");
    let host_name = hosts.map("host", "name");
    let mut pages_of: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for row in &members.rows {
        pages_of
            .entry(members.get(row, "collection"))
            .or_default()
            .insert(url_of[members.get(row, "page")].as_str());
    }
    let report = json(&mirrorscope(
        &crate_dir(),
        &["clusters", "--data", &crawl.data, "--json"],
    ));
    let reported = report["clusters"].as_array().unwrap();
    // One cluster per replicated manual of the shipped crawl (five), every
    // one of them checked.
    assert_eq!(reported.len(), clusters.rows.len());
    assert!(reported.len() >= 5);
    for cluster in reported {
        let id = cluster["id"].as_str().unwrap();
        let row = clusters
            .rows
            .iter()
            .find(|row| clusters.get(row, "cluster") == id)
            .unwrap_or_else(|| panic!("cluster {id} exported"));
        assert_eq!(
            clusters.get(row, "cardinality"),
            cluster["cardinality"].to_string()
        );
        assert_eq!(clusters.get(row, "size"), cluster["size"].to_string());
        assert_eq!(
            clusters.get(row, "principal"),
            cluster["principal"].as_str().unwrap()
        );
        assert_eq!(clusters.get(row, "kind"), cluster["kind"].as_str().unwrap());
        let mut exported: Vec<(String, String, String, BTreeSet<&str>)> = collections
            .rows
            .iter()
            .filter(|row| collections.get(row, "cluster") == id)
            .map(|row| {
                let collection = collections.get(row, "collection");
                (
                    host_name[collections.get(row, "host")].clone(),
                    url_of[collections.get(row, "root")].clone(),
                    collections.get(row, "prefix").to_string(),
                    pages_of.get(collection).cloned().unwrap_or_default(),
                )
            })
            .collect();
        let mut expected: Vec<(String, String, String, BTreeSet<&str>)> = cluster["collections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|collection| {
                (
                    collection["host"].as_str().unwrap().to_string(),
                    collection["root"].as_str().unwrap().to_string(),
                    collection["prefix"].as_str().unwrap().to_string(),
                    collection["pages"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|url| url.as_str().unwrap())
                        .collect(),
                )
            })
            .collect();
        exported.sort();
        expected.sort();
        assert_eq!(exported, expected, "cluster {id}");
    }

    // Every pair `mirrors` reports is exported with its level.
    let exported_pairs: BTreeSet<(String, String, String)> = mirrors
        .rows
        .iter()
        .map(|row| {
            let a = host_name[mirrors.get(row, "host_a")].clone();
            let b = host_name[mirrors.get(row, "host_b")].clone();
            let (a, b) = if a <= b { (a, b) } else { (b, a) };
            (a, b, mirrors.get(row, "level").to_string())
        })
        .collect();
    let report = json(&mirrorscope(
        &crate_dir(),
        &["mirrors", "--data", &crawl.data, "--json"],
    ));
    let pairs = report["pairs"].as_array().unwrap();
    assert!(pairs.len() >= 30);
    for pair in pairs {
        let a = pair["a"].as_str().unwrap().to_string();
        let b = pair["b"].as_str().unwrap().to_string();
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        let level = pair["level"].as_str().unwrap().to_string();
        assert!(
            exported_pairs.contains(&(a.clone(), b.clone(), level.clone())),
            "{a} {b} level {level}"
        );
    }
}

#[test]
fn export_names_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = dir.path().join("out");
    let args = |extra: &[&str]| {
        let mut args = vec![
            "export",
            "--data",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |extra: &[&str]| {
        let args = args(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        mirrorscope(&crate_dir(), &args)
    };

    let unknown = run(&["--tables", "pages,shingles"]);
    assert!(!unknown.status.success());
    let message = stderr(&unknown);
    assert!(
        message.contains("\"shingles\" is not a table") && message.contains("megashingles"),
        "{message}"
    );

    let missing = run(&[]);
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains(data.to_str().unwrap()),
        "{}",
        stderr(&missing)
    );
    assert!(!out.exists(), "nothing is written without an index");
}

#[test]
fn parquet_tables_hold_what_the_tsv_tables_hold_typed() {
    let crawl = shipped_crawl();
    let dir = tempfile::tempdir().unwrap();
    let export = |format: &str| {
        let out = dir.path().join(format);
        let output = mirrorscope(
            &crate_dir(),
            &[
                "export",
                "--data",
                &crawl.data,
                "--out",
                out.to_str().unwrap(),
                "--format",
                format,
            ],
        );
        assert!(output.status.success(), "{}", stderr(&output));
        (out, stdout(&output))
    };
    let (tsv, _) = export("tsv");
    let (parquet, listed) = export("parquet");
    let mut files: Vec<String> = std::fs::read_dir(&parquet)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        13,
        "one file per table and GENERATION, no .partial: {files:?}"
    );
    assert_eq!(
        std::fs::read_to_string(parquet.join("GENERATION")).unwrap(),
        std::fs::read_to_string(tsv.join("GENERATION")).unwrap()
    );
    for file in files.iter().filter(|file| *file != "GENERATION") {
        assert!(file.ends_with(".parquet"), "{file}");
        assert!(listed.contains(file.as_str()), "{file} listed in {listed}");
        let name = file.trim_end_matches(".parquet");
        let (header, rows) = read_tsv(&tsv.join(format!("{name}.tsv")));
        let (columns, values, kinds) = read_parquet(&parquet.join(file));
        assert_eq!(columns, header, "{name}: the same columns");
        assert_eq!(values.len(), rows.len(), "{name}: the same rows");
        assert!(values == rows, "{name}: the same values, row by row");
        // Ids, counts and hashes are integers; names and signatures text.
        for (column, kind) in columns.iter().zip(&kinds) {
            let expected = match column.as_str() {
                "url" | "name" | "ip" | "date" | "title" | "body_signature" | "text_signature"
                | "kind" | "prefix" | "level" | "shared_ip" | "language" => "text",
                "extended" | "small" | "stand_in" | "copied_alone" => "flag",
                _ => "int",
            };
            assert!(
                kind.is_empty() || *kind == expected,
                "{name}.{column} is {kind}, not {expected}"
            );
        }
    }

    let output = mirrorscope(
        &crate_dir(),
        &[
            "export",
            "--data",
            &crawl.data,
            "--out",
            "x",
            "--format",
            "csv",
        ],
    );
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("formats: tsv, parquet"),
        "{}",
        stderr(&output)
    );
}
