//! Search latency and throughput on the shipped crawl: rolled-up search
//! against flat tantivy search, on the same index.
//!
//! `cargo bench --bench search` indexes the shipped crawl into a temporary
//! folder, then measures
//! - in process (`Engine::search`, no HTTP): p50 / p99 per mode;
//! - over HTTP on loopback, one client with a keep-alive connection: p50 / p99;
//! - over HTTP, 50 concurrent keep-alive clients for a fixed time: requests/s
//!   and p50 / p99 under load.
//!
//! Queries cycle through a fixed list of words and phrases from the crawl.
//! `SEARCH_BENCH_SECONDS` sets the time per throughput run (default 10).

use std::time::Instant;

use mirrorscope::pipeline::{self, IndexRequest};

mod support;

const QUERIES: &[&str] = &[
    "virtual host",
    "configuration",
    "install",
    "mod_rewrite",
    "session",
    "logging",
    "template",
    "database",
    "security",
    "proxy",
    "connector",
    "ssl certificate",
    "authentication",
    "cache",
    "router",
    "query",
    "mail delivery",
    "filter",
    "error",
    "\"virtual host\"",
];

fn main() {
    let seconds = support::search::run_seconds(10.0);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let begin = Instant::now();
    let outcome = pipeline::run_index(&IndexRequest {
        inputs: vec![pipeline::default_corpus_dir()],
        data: data.clone(),
        progress: false,
        add: false,
        allow_shrink: false,
        parts: None,
        index_shards: None,
    })
    .expect("indexing the shipped crawl");
    println!(
        "indexed the shipped crawl in {:.2} s: {} documents, {:.1} MB of index",
        begin.elapsed().as_secs_f64(),
        outcome.manifest.index.documents,
        outcome.manifest.index.bytes as f64 / 1e6
    );

    let queries: Vec<String> = QUERIES.iter().map(|query| query.to_string()).collect();
    support::search::measure(&data, &queries, seconds);
}
