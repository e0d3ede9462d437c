//! The whole pipeline on a generated web: writes the web as WARC.gz
//! (`benches/support/web.rs`), runs `index` on it into a fresh data folder
//! and prints each stage's time, throughput and peak memory, then measures
//! search on the result (in process and over HTTP, rolled up against flat).
//!
//! ```text
//! cargo bench --bench pipeline                     # 100,000 pages
//! cargo bench --bench pipeline -- 1000000          # a million
//! cargo bench --bench pipeline -- 1000000 --web DIR --keep
//! cargo bench --bench pipeline -- --search DATA
//! cargo bench --bench pipeline -- --crawl DIR        # an existing crawl, as is
//! ```
//!
//! `--web DIR` writes (or, when DIR already holds this size and seed, reuses)
//! the generated crawl there instead of a temporary folder; the data folder
//! goes to `$TMPDIR`. `--keep` leaves both in place. `--search DATA` skips
//! the web and the index and measures search on the data folder a `--keep`
//! run left. `SEARCH_BENCH_SECONDS` sets the time of each 50-client run
//! (default 10); `SEARCH_BENCH_QUERIES` (separated by commas) measures those
//! searches instead of the generated web's.

mod support;

use std::path::{Path, PathBuf};
use std::time::Instant;

use mirrorscope::pipeline::{run_index, IndexRequest};

const SEED: u64 = 0x6d69_7272_6f72_7363;

fn main() {
    // As the binary does (`mirrorscope::memory::one_heap_a_core`).
    mirrorscope::memory::one_heap_a_core();
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let pages: usize = arguments
        .iter()
        .find_map(|argument| argument.parse().ok())
        .unwrap_or(100_000);
    let web_dir: Option<PathBuf> = arguments
        .iter()
        .position(|argument| argument == "--web")
        .and_then(|index| arguments.get(index + 1))
        .map(PathBuf::from);
    let keep = arguments.iter().any(|argument| argument == "--keep");
    let seconds = support::search::run_seconds(10.0);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if let Some(data) = arguments
        .iter()
        .position(|argument| argument == "--search")
        .and_then(|index| arguments.get(index + 1))
    {
        println!("search on {data}");
        let queries = support::search::chosen(support::web::queries());
        support::search::measure(Path::new(data), &queries, seconds);
        return;
    }
    // As `index` does; a search measured after it in this process runs so
    // too (`--search DATA` measures as `serve` runs).
    mirrorscope::memory::give_freed_pages_back_at_once();

    let crawl: Option<PathBuf> = arguments
        .iter()
        .position(|argument| argument == "--crawl")
        .and_then(|index| arguments.get(index + 1))
        .map(PathBuf::from);
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let web = crawl
        .clone()
        .or(web_dir)
        .unwrap_or_else(|| scratch.path().join("web"));
    let marker = web.join(format!(
        "generated-{pages}-{SEED:x}-v{}",
        support::web::VERSION
    ));
    let started = Instant::now();
    if crawl.is_some() {
        println!("indexing the crawl in {}", web.display());
    } else if marker.exists() {
        println!("reusing the generated web in {}", web.display());
    } else {
        let _ = std::fs::remove_dir_all(&web);
        let generated = support::web::generate(&web, pages, SEED).expect("writing the web");
        std::fs::write(&marker, "").expect("writing the marker");
        println!(
            "generated {} pages on {} hosts in {:.1} s: {} collections, {} of them replicated ({} copies); {:.0} MB of HTML, {:.0} MB of WARC.gz in {} files",
            generated.pages,
            generated.hosts,
            started.elapsed().as_secs_f64(),
            generated.collections,
            generated.replicated,
            generated.copies,
            generated.html_bytes as f64 / 1e6,
            generated.warc_bytes as f64 / 1e6,
            generated.files.len()
        );
    }

    let data = scratch.path().join("data");
    let started = Instant::now();
    let outcome = run_index(&IndexRequest {
        inputs: vec![web.clone()],
        data: data.clone(),
        progress: false,
        add: false,
        allow_shrink: false,
        parts: None,
        index_shards: None,
    })
    .expect("the generated web indexes");
    let total = started.elapsed().as_secs_f64();
    let indexed = outcome.manifest.counts.pages as f64;
    println!(
        "\nindex of {} pages ({} captures), {cores} cores: {total:.1} s, {:.0} pages/s",
        outcome.manifest.counts.pages,
        outcome.report.captures,
        indexed / total
    );
    println!(
        "{:<28} {:>9} {:>12} {:>12} {:>12}",
        "stage", "seconds", "pages/s", "peak MB", "held MB"
    );
    for stage in &outcome.stages.0 {
        let rate = if stage.seconds > 0.0 {
            format!("{:.0}", indexed / stage.seconds)
        } else {
            "-".into()
        };
        let megabytes =
            |value: Option<f64>| value.map_or_else(|| "-".to_string(), |mb| format!("{mb:.0}"));
        println!(
            "{:<28} {:>9.2} {:>12} {:>12} {:>12}",
            stage.stage,
            stage.seconds,
            rate,
            megabytes(stage.peak_mb),
            megabytes(stage.held_mb),
        );
    }
    let work = &outcome.ingest_work;
    println!(
        "  ingest and store, in thread-seconds: reading WARC {:.1}, decoding {:.1}, extracting HTML {:.1}, fingerprints {:.1}, storing {:.1}, keeping texts {:.1}, flushing and journaling {:.1}",
        work.reading, work.decoding, work.extracting, work.fingerprinting, work.storing, work.keeping_texts, work.flushing
    );
    let counts = &outcome.manifest;
    println!(
        "{} distinct bodies, {} near-duplicate pages in {} trivial clusters; {} similar clusters ({} of collections); {} ranked host pairs, {} mirrored; index {} documents, {:.0} MB",
        counts.counts.distinct_bodies,
        counts.similarity.near_duplicate_pages,
        counts.similarity.trivial_clusters,
        counts.collections.clusters,
        counts.collections.collection_clusters,
        counts.mirrors.ranked_pairs,
        counts.mirrors.mirrored_pairs,
        counts.index.documents,
        counts.index.bytes as f64 / 1e6
    );

    // The generated web's queries mean nothing on another crawl.
    if crawl.is_none() {
        println!("\nsearch on the generated web (freed pages given back at once, as `index` runs: `--search DATA` measures as `serve` runs)");
        support::search::measure(&data, &support::web::queries(), seconds);
    }

    if keep {
        let kept = scratch.keep();
        println!(
            "\nkept {} (web) and {}",
            web.display(),
            kept.join("data").display()
        );
    }
}
