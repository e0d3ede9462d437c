//! Issue 34's big-page crawl: 64 pages of 9.9 MB (under the 10 MiB cap) in
//! one small WARC file, as a hostile or careless crawl serves them.
//!
//! `cargo bench --bench bigpages` writes the file, indexes it with the
//! `mirrorscope` binary (its peak resident memory, from the kernel's count
//! for child processes), then searches it over HTTP with 10 keep-alive
//! clients: words every page has, asked again (the recent searches answer)
//! and with the cache of recent searches off (every search made afresh).
//! `SEARCH_BENCH_SECONDS` sets each run's time (default 10).

use std::io::BufWriter;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use mirrorscope::corpus::warc_write::{OutRecord, WarcWriter};

mod support;

const PAGES: usize = 64;
const PAGE_BYTES: usize = 9_900_000;
const WORDS: &[&str] = &[
    "virtual",
    "host",
    "configuration",
    "install",
    "module",
    "request",
    "proxy",
    "server",
    "cache",
    "filter",
    "error",
    "logging",
    "template",
    "database",
    "security",
    "session",
    "router",
    "query",
    "mail",
    "delivery",
];

/// One page: a heading, then forty paragraphs of its own again and again
/// (so that the file is small, as a probe's is), in `<div>`s. No other page
/// has them: they are the page's text, not its site's chrome.
fn page_html(number: usize) -> String {
    let block: String = (0..40)
        .map(|paragraph| {
            let words: Vec<&str> = (0..12)
                .map(|word| WORDS[(paragraph * 7 + word) % WORDS.len()])
                .collect();
            format!(
                "<div><p>Page {number}, part {paragraph}: {}</p></div>\n",
                words.join(" ")
            )
        })
        .collect();
    let head = format!(
        "<html><head><title>Big page {number}</title></head><body><h1>Big page {number}</h1>"
    );
    let repeats = (PAGE_BYTES - head.len() - 20) / block.len();
    format!("{head}{}</body></html>", block.repeat(repeats))
}

fn write_crawl(path: &Path) -> std::io::Result<()> {
    let mut writer = WarcWriter::new(BufWriter::new(std::fs::File::create(path)?), true);
    for number in 0..PAGES {
        let html = page_html(number);
        let mut block = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
            html.len()
        )
        .into_bytes();
        block.extend_from_slice(html.as_bytes());
        writer.write_record(&OutRecord {
            warc_type: "response",
            headers: vec![
                (
                    "WARC-Record-ID",
                    format!("<urn:uuid:00000000-0000-4000-8000-{number:012}>"),
                ),
                ("WARC-Date", format!("2026-10-01T00:00:{:02}Z", number % 60)),
                (
                    "WARC-Target-URI",
                    format!("http://big.example.org/page{number}.html"),
                ),
                (
                    "Content-Type",
                    "application/http; msgtype=response".to_string(),
                ),
            ],
            block: &block,
        })?;
    }
    writer.finish()?;
    Ok(())
}

/// The most memory any child process of this one held, in MB.
fn children_peak_mb() -> f64 {
    // SAFETY: getrusage writes into the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return 0.0;
    }
    usage.ru_maxrss as f64 / 1024.0
}

/// Sets one search setting in the data folder's `config.json`.
fn set_search_setting(data: &Path, name: &str, value: serde_json::Value) {
    let path = data.join("config.json");
    let mut config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("config.json")).expect("JSON");
    config["search"][name] = value;
    std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
}

fn main() {
    let seconds = support::search::run_seconds(10.0);
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("big.warc.gz");
    write_crawl(&warc).expect("writing the crawl");
    println!(
        "{PAGES} pages of {:.1} MB: a WARC file of {:.1} MB",
        PAGE_BYTES as f64 / 1e6,
        std::fs::metadata(&warc).unwrap().len() as f64 / 1e6
    );

    let data = dir.path().join("data");
    let begin = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_mirrorscope"))
        .arg("index")
        .arg(&warc)
        .arg("--data")
        .arg(&data)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .status()
        .expect("running mirrorscope index");
    assert!(status.success(), "mirrorscope index failed");
    println!(
        "index: {:.1} s, peak resident memory {:.0} MB",
        begin.elapsed().as_secs_f64(),
        children_peak_mb()
    );

    // Every page has these words: each search snippets ten big pages.
    let queries: Vec<String> = (0..WORDS.len())
        .map(|index| format!("{} {}", WORDS[index], WORDS[(index + 5) % WORDS.len()]))
        .collect();
    let queries = Arc::new(queries);
    for (label, cached) in [
        ("asked again (recent searches on)", 512),
        ("each made afresh (recent searches off)", 0),
    ] {
        set_search_setting(&data, "cached_searches", cached.into());
        let address = support::search::start_server(&data);
        let (rate, latencies) = support::search::load(address, &queries, 10, seconds, true);
        support::search::report(&format!("10 clients, {label}"), latencies);
        println!("{:<44} {rate:.0} requests/s", "");
    }
}
