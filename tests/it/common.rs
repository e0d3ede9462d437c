//! Shared helpers of the integration tests: writing small crawls, running the binary.

#![allow(dead_code)]

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use mirrorscope::corpus::warc_write::{OutRecord, WarcWriter};

/// The shipped crawl.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// Runs the `mirrorscope` binary with `args` in `dir`.
pub fn mirrorscope(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mirrorscope"))
        .args(args)
        .current_dir(dir)
        .env("MIRRORSCOPE_LOG", "warn")
        .output()
        .expect("the mirrorscope binary runs")
}

/// A child process killed when dropped.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether a test that indexes whole crawls many times should run: in an
/// optimised build (`--release`, or `--profile ci` as `.ci/run` builds), or
/// when `MIRRORSCOPE_SLOW_TESTS` is set. Says why when it does not.
pub fn slow_tests_wanted(name: &str) -> bool {
    if !cfg!(debug_assertions) || std::env::var_os("MIRRORSCOPE_SLOW_TESTS").is_some() {
        return true;
    }
    eprintln!(
        "skipped in a debug build: run `cargo test --release --test it {name}::` (.ci/run runs it with --profile ci)"
    );
    false
}

/// `mirrorscope serve --data DATA` on a free loopback port, to be spawned.
pub fn serve_command(data: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mirrorscope"));
    command.args([
        "serve",
        "--data",
        data.to_str().unwrap(),
        "--bind",
        "127.0.0.1:0",
    ]);
    command
}

/// Starts `mirrorscope serve` on a free loopback port; returns it and the
/// base URL it prints.
pub fn serve(data: &Path) -> (Running, String) {
    serve_by(serve_command(data))
}

/// Runs `command` (a `mirrorscope serve` on a free loopback port, perhaps
/// run by another program); returns it and the base URL it prints.
pub fn serve_by(mut command: Command) -> (Running, String) {
    let mut child = command
        .env("MIRRORSCOPE_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the server starts");
    let stdout = child.stdout.take().unwrap();
    let server = Running(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let base = line
        .trim()
        .strip_prefix("mirrorscope: serving ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .trim_end_matches('/')
        .to_string();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    (server, base)
}

/// Two string fields of every object of a JSON array, as pairs.
pub fn string_pairs(list: &serde_json::Value, first: &str, second: &str) -> Vec<(String, String)> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .map(|item| {
            let field = |name: &str| {
                item[name]
                    .as_str()
                    .unwrap_or_else(|| panic!("no string {name} in {item}"))
                    .to_string()
            };
            (field(first), field(second))
        })
        .collect()
}

/// Indexes `crawl` into the data folder `data`.
pub fn index_into(crawl: &Path, data: &Path) {
    let output = mirrorscope(
        &crate_dir(),
        &[
            "index",
            crawl.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
}

/// Asserts `check` finds the data folder `data` consistent (its report
/// shown if not).
pub fn assert_consistent(data: &Path) {
    let output = mirrorscope(
        &crate_dir(),
        &["check", "--data", &data.display().to_string()],
    );
    assert!(
        output.status.success(),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The JSON a successful command printed.
pub fn json(output: &Output) -> serde_json::Value {
    assert!(output.status.success(), "{}", stderr(output));
    serde_json::from_str(&stdout(output))
        .unwrap_or_else(|error| panic!("{error}: {}", stdout(output)))
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// An HTML page of a small test site.
pub struct TestPage {
    pub url: String,
    pub head: String,
    pub body: Vec<u8>,
}

impl TestPage {
    pub fn html(url: &str, title: &str, text: &str, links: &[&str]) -> TestPage {
        let anchors: String = links
            .iter()
            .map(|link| format!("<a href=\"{link}\">{link}</a>\n"))
            .collect();
        let body = format!("<!DOCTYPE html><html><head><title>{title}</title></head><body><h1>{title}</h1><p>{text}</p>\n{anchors}</body></html>");
        TestPage {
            url: url.to_string(),
            head: "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n".to_string(),
            body: body.into_bytes(),
        }
    }

    /// The HTTP block: head, blank line, body.
    pub fn block(&self) -> Vec<u8> {
        let mut block = self.head.clone().into_bytes();
        block.extend_from_slice(format!("Content-Length: {}\r\n\r\n", self.body.len()).as_bytes());
        block.extend_from_slice(&self.body);
        block
    }
}

/// The bytes of one response record for `page` (plain, not gzipped).
pub fn response_record(page: &TestPage, index: usize) -> Vec<u8> {
    record_bytes("response", &page.url, index, &page.block(), &[])
}

pub fn record_bytes(
    warc_type: &str,
    url: &str,
    index: usize,
    block: &[u8],
    extra: &[(&str, String)],
) -> Vec<u8> {
    let mut headers = vec![
        (
            "WARC-Record-ID",
            format!("<urn:uuid:00000000-0000-0000-0000-{index:012}>"),
        ),
        (
            "WARC-Date",
            format!("2026-10-03T12:{:02}:{:02}Z", index / 60 % 60, index % 60),
        ),
        ("WARC-Target-URI", url.to_string()),
        ("WARC-IP-Address", "192.0.2.10".to_string()),
        (
            "Content-Type",
            "application/http; msgtype=response".to_string(),
        ),
    ];
    headers.extend(extra.iter().cloned());
    let mut writer = WarcWriter::new(Vec::new(), false);
    writer
        .write_record(&OutRecord {
            warc_type,
            headers,
            block,
        })
        .expect("writing to memory");
    writer.finish().expect("writing to memory")
}

/// Writes raw records to `path`, one gzip member each when `gzip`.
pub fn write_warc(path: &Path, gzip: bool, records: &[Vec<u8>]) {
    let mut writer = WarcWriter::new(File::create(path).expect("create fixture"), gzip);
    for record in records {
        writer.write_raw_record(record).expect("write fixture");
    }
    writer.finish().expect("write fixture");
}

/// A small site: `pages` pages on `host`, each linking to the next.
pub fn site(host: &str, pages: usize) -> Vec<TestPage> {
    (0..pages)
        .map(|index| {
            let next = format!("p{}.html", (index + 1) % pages);
            TestPage::html(
                &format!("http://{host}/doc/p{index}.html"),
                &format!("Page {index}"),
                &format!("This is page number {index} of the manual, with its own text."),
                &[&next],
            )
        })
        .collect()
}

/// Writes `pages` as one response record each, numbering records from `first_index`.
pub fn write_site(path: &Path, gzip: bool, pages: &[TestPage], first_index: usize) {
    let records: Vec<Vec<u8>> = pages
        .iter()
        .enumerate()
        .map(|(index, page)| response_record(page, first_index + index))
        .collect();
    write_warc(path, gzip, &records);
}

/// The shipped crawl, indexed.
pub struct IndexedCrawl {
    /// The data directory, for `--data`.
    pub data: String,
    /// What `index` printed.
    pub summary: String,
}

impl IndexedCrawl {
    pub fn path(&self) -> &Path {
        Path::new(&self.data)
    }
}

/// The shipped crawl, indexed once per test run (into the tests' target
/// folder) for every test that only reads it. A test that writes to its
/// data folder indexes its own with [`index_shipped_crawl_into`].
pub fn shipped_crawl() -> &'static IndexedCrawl {
    static CRAWL: std::sync::OnceLock<IndexedCrawl> = std::sync::OnceLock::new();
    CRAWL.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shipped");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("data").to_str().unwrap().to_string();
        let output = mirrorscope(&crate_dir(), &["index", "--data", &data]);
        assert!(output.status.success(), "{}", stderr(&output));
        IndexedCrawl {
            data,
            summary: stdout(&output),
        }
    })
}

/// The crate's folder, where `corpus/` is.
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `eval` of `data` against the shipped crawl's truth file, with `extra` arguments.
pub fn eval_shipped_truth(data: &str, extra: &[&str]) -> Output {
    eval_truth(&crate_dir().join("corpus/truth.tsv"), data, extra)
}

/// `eval` of `data` against the truth file `truth`, with `extra` arguments.
pub fn eval_truth(truth: &Path, data: &str, extra: &[&str]) -> Output {
    let mut args = vec!["eval", "--truth", truth.to_str().unwrap(), "--data", data];
    args.extend_from_slice(extra);
    mirrorscope(&crate_dir(), &args)
}

/// Indexes the shipped crawl into `dir` (emptied first), a folder under the
/// tests' target directory that outlives the test process.
pub fn index_shipped_crawl_into(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("data");
    let output = mirrorscope(&crate_dir(), &["index", "--data", data.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    data
}

/// A Parquet file, or a folder of them (as Spark writes a table), read
/// whole: the column names and every row's values as `export` writes them
/// in tab-separated text (a null as an empty field). Also returns each
/// column's kind as first seen ("int", "text", "flag"), to check the types.
pub fn read_parquet(path: &Path) -> (Vec<String>, Vec<Vec<String>>, Vec<&'static str>) {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    let files: Vec<PathBuf> = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|file| file.extension().is_some_and(|ext| ext == "parquet"))
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    let mut names = Vec::new();
    let mut rows = Vec::new();
    let mut kinds: Vec<&'static str> = Vec::new();
    for file in files {
        let reader = SerializedFileReader::new(File::open(&file).unwrap())
            .unwrap_or_else(|error| panic!("{}: {error}", file.display()));
        names = reader
            .metadata()
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|column| column.name().to_string())
            .collect();
        kinds.resize(names.len(), "");
        for row in reader.get_row_iter(None).unwrap() {
            let row = row.unwrap();
            let mut values = Vec::with_capacity(names.len());
            for (index, (_, field)) in row.get_column_iter().enumerate() {
                let (kind, value) = match field {
                    Field::Long(value) => ("int", value.to_string()),
                    Field::Int(value) => ("int", value.to_string()),
                    Field::Str(value) => ("text", value.clone()),
                    Field::Bool(value) => ("flag", value.to_string()),
                    Field::Null => ("", String::new()),
                    other => panic!("{}: unexpected value {other:?}", file.display()),
                };
                if kinds[index].is_empty() {
                    kinds[index] = kind;
                }
                values.push(value);
            }
            rows.push(values);
        }
    }
    (names, rows, kinds)
}

/// Writes a Parquet file of `page` and `cluster` rows (64-bit integers, no
/// nulls), as a Spark job's trivial table.
pub fn write_trivial_parquet(path: &Path, rows: &[(i64, i64)]) {
    write_trivial_parquet_compressed(path, rows, parquet::basic::Compression::UNCOMPRESSED);
}

/// [`write_trivial_parquet`] compressed with `compression`.
pub fn write_trivial_parquet_compressed(
    path: &Path,
    rows: &[(i64, i64)],
    compression: parquet::basic::Compression,
) {
    write_parquet_compressed(
        path,
        &[
            ("page", Values::Int(rows.iter().map(|row| row.0).collect())),
            (
                "cluster",
                Values::Int(rows.iter().map(|row| row.1).collect()),
            ),
        ],
        compression,
    );
}

/// Writes a Parquet file of 64-bit integer `columns` (no nulls), one row
/// per entry of `rows`.
pub fn write_int_parquet(path: &Path, columns: &[&str], rows: &[Vec<i64>]) {
    let columns: Vec<(&str, Values)> = columns
        .iter()
        .enumerate()
        .map(|(index, name)| {
            (
                *name,
                Values::Int(rows.iter().map(|row| row[index]).collect()),
            )
        })
        .collect();
    write_parquet(path, &columns);
}

/// Writes a Parquet file of `host_a`, `host_b` (64-bit integers) and
/// `score` (a double) rows, as the Spark jobs write a ranking.
pub fn write_ranking_parquet(path: &Path, rows: &[(i64, i64, f64)]) {
    write_parquet(
        path,
        &[
            (
                "host_a",
                Values::Int(rows.iter().map(|row| row.0).collect()),
            ),
            (
                "host_b",
                Values::Int(rows.iter().map(|row| row.1).collect()),
            ),
            (
                "score",
                Values::Double(rows.iter().map(|row| row.2).collect()),
            ),
        ],
    );
}

/// One column's values.
pub enum Values {
    Int(Vec<i64>),
    Double(Vec<f64>),
}

/// Writes a Parquet file of one row group holding these columns (no nulls).
pub fn write_parquet(path: &Path, columns: &[(&str, Values)]) {
    write_parquet_compressed(path, columns, parquet::basic::Compression::UNCOMPRESSED);
}

/// [`write_parquet`], its pages compressed with `compression`.
pub fn write_parquet_compressed(
    path: &Path,
    columns: &[(&str, Values)],
    compression: parquet::basic::Compression,
) {
    use parquet::data_type::{DoubleType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use std::sync::Arc;

    let fields: String = columns
        .iter()
        .map(|(name, values)| match values {
            Values::Int(_) => format!(" required int64 {name};"),
            Values::Double(_) => format!(" required double {name};"),
        })
        .collect();
    let schema = parse_message_type(&format!("message table {{{fields} }}")).unwrap();
    let file = File::create(path).unwrap();
    let mut writer = SerializedFileWriter::new(
        file,
        Arc::new(schema),
        Arc::new(
            WriterProperties::builder()
                .set_compression(compression)
                .build(),
        ),
    )
    .unwrap();
    let mut group = writer.next_row_group().unwrap();
    for (_, values) in columns {
        let mut column = group.next_column().unwrap().unwrap();
        match values {
            Values::Int(values) => column.typed::<Int64Type>().write_batch(values, None, None),
            Values::Double(values) => column.typed::<DoubleType>().write_batch(values, None, None),
        }
        .unwrap();
        column.close().unwrap();
    }
    group.close().unwrap();
    writer.close().unwrap();
}

/// The pairs of a `mirrors --json` report: (host, host, score) in order.
pub fn reported_pairs(report: &serde_json::Value) -> Vec<(String, String, f64)> {
    report
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            (
                pair["a"].as_str().unwrap().to_string(),
                pair["b"].as_str().unwrap().to_string(),
                pair["score"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// The status line and body of a GET of `path` from the server at `base`
/// (`http://127.0.0.1:PORT`).
pub fn http_get(base: &str, path: &str) -> (String, String) {
    use std::io::{Read, Write};
    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).expect("the server listens");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.lines().next().unwrap_or_default().to_string();
    (status, body.to_string())
}
