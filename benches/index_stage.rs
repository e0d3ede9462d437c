//! The index stage alone, on a data folder `mirrorscope index` wrote:
//! `cargo bench --bench index_stage -- DATA [RUNS]`.
//!
//! Reads the current generation's page table, similarity and collections,
//! then builds the search index from the page store into a scratch folder
//! beside DATA (the same disk), RUNS times (default 1), as `index` does after
//! its analysis for bodies whose text it did not keep at ingest (those of
//! crawls ingested by an earlier run): each body is read and extracted. Prints per run: seconds, the peak resident memory split into
//! anonymous memory and mapped files (sampled every 50 ms: the kernel keeps
//! only the peak of their sum), bytes written, segments and index size. The
//! index stage of a million-page crawl can so be measured without ingesting
//! it again.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mirrorscope::config::Config;
use mirrorscope::datadir::DataDir;

/// Bytes this process has caused to be written to storage so far.
fn written_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|line| line.strip_prefix("write_bytes:"))
                .and_then(|value| value.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The largest anonymous, mapped-file and total resident sizes seen while
/// `work` runs.
fn sampling<T>(work: impl FnOnce() -> T) -> (T, (f64, f64, f64)) {
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut most = (0.0f64, 0.0f64, 0.0f64);
            while !done.load(Ordering::Relaxed) {
                if let Some((anonymous, file)) = mirrorscope::memory::resident_split_mb() {
                    most.0 = most.0.max(anonymous);
                    most.1 = most.1.max(file);
                    most.2 = most.2.max(anonymous + file);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            most
        })
    };
    let value = work();
    done.store(true, Ordering::Relaxed);
    let most = sampler.join().unwrap_or_default();
    (value, most)
}

fn segments(index_dir: &Path) -> usize {
    tantivy::Index::open_in_dir(index_dir)
        .and_then(|index| index.searchable_segment_metas())
        .map_or(0, |metas| metas.len())
}

fn main() {
    // As `index` does.
    mirrorscope::memory::one_heap_a_core();
    mirrorscope::memory::give_freed_pages_back_at_once();
    let arguments: Vec<String> = std::env::args()
        .skip(1)
        .filter(|argument| !argument.starts_with("--"))
        .collect();
    let Some(data_path) = arguments.first().map(PathBuf::from) else {
        eprintln!("usage: cargo bench --bench index_stage -- DATA [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = arguments
        .get(1)
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(1);
    let data = DataDir::open(&data_path).expect("the data folder opens");
    let config = Config::of(&data).expect("its config reads");
    let generation = data.generation().expect("it has a current generation");
    let loading = Instant::now();
    let table = generation.page_table().expect("the page table reads");
    // As `index` hands it to the index stage: without the fingerprints.
    let similarity = generation
        .similarity(&table)
        .expect("similarity reads")
        .without_fingerprints();
    let collections = generation.collections(&table).expect("collections read");
    let store = data.store(&config.store).expect("the store opens");
    println!(
        "{}: {} pages, tables read in {:.1} s, resident {:.0} MB",
        data_path.display(),
        table.pages.len(),
        loading.elapsed().as_secs_f64(),
        mirrorscope::memory::resident_mb().unwrap_or(0.0)
    );
    let scratch = data_path.with_extension("index-stage-bench");
    for run in 1..=runs {
        let _ = std::fs::remove_dir_all(&scratch);
        mirrorscope::memory::release_free();
        mirrorscope::memory::reset_peak();
        let (before_anonymous, before_file) =
            mirrorscope::memory::resident_split_mb().unwrap_or_default();
        let written = written_bytes();
        let started = Instant::now();
        let (counts, (anonymous, file, total)) = sampling(|| {
            mirrorscope::index::build(
                &scratch,
                &table,
                &similarity,
                &collections,
                (&store, None),
                &config.index,
            )
        });
        let seconds = started.elapsed().as_secs_f64();
        let counts = counts.expect("the index builds");
        println!(
            "run {run}: {seconds:.1} s, {} documents, {:.0} MB in {} segments; \
             {:.0} MB written; resident before {before_anonymous:.0} MB anonymous + \
             {before_file:.0} MB files, peak {anonymous:.0} MB anonymous, {file:.0} MB files, \
             {total:.0} MB together (kernel's peak {:.0} MB)",
            counts.documents,
            counts.bytes as f64 / 1e6,
            segments(&scratch),
            (written_bytes() - written) as f64 / 1e6,
            mirrorscope::memory::peak_mb().unwrap_or(0.0),
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
