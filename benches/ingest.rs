//! Ingest throughput: read + decode + extract + store, on the shipped crawl
//! (or the WARC files/folders given as arguments), with 1 thread and with every
//! core. Prints pages/s, records/s, MB/s and peak memory.
//!
//! `cargo bench --bench ingest [-- PATH...]`

use std::time::Instant;

use mirrorscope::pipeline::{run_index, IndexRequest};

mod support;

const RUNS: usize = 3;

fn main() {
    let inputs = support::crawl_inputs();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!("ingest benchmark on {} ({} cores available), best of {RUNS} runs, fresh data directory each run", inputs.iter().map(|path| path.display().to_string()).collect::<Vec<_>>().join(" "), cores);
    println!(
        "{:>7}  {:>9}  {:>10}  {:>11}  {:>13}  {:>14}  {:>8}",
        "threads", "pages", "seconds", "pages/s", "pages/s/core", "WARC MB/s", "body MB/s"
    );
    let mut thread_counts = vec![1];
    if cores > 1 {
        thread_counts.push(cores);
    }
    let mut peak: f64 = 0.0;
    for threads in thread_counts {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        let mut best: Option<(f64, mirrorscope::pipeline::IndexOutcome)> = None;
        for _ in 0..RUNS {
            let data = tempfile::tempdir().expect("a temporary data directory");
            let request = IndexRequest {
                inputs: inputs.clone(),
                data: data.path().to_path_buf(),
                progress: false,
                add: false,
                allow_shrink: false,
                parts: None,
                index_shards: None,
            };
            let started = Instant::now();
            let outcome = pool
                .install(|| run_index(&request))
                .expect("the crawl indexes");
            let seconds = started.elapsed().as_secs_f64();
            if best
                .as_ref()
                .is_none_or(|(best_seconds, _)| seconds < *best_seconds)
            {
                best = Some((seconds, outcome));
            }
        }
        let (seconds, outcome) = best.expect("at least one run");
        // `index` restarts the peak at each stage: the run's is the largest.
        for stage in &outcome.stages.0 {
            peak = peak.max(stage.peak_mb.unwrap_or(0.0));
        }
        let pages = outcome.report.captures as f64;
        println!(
            "{threads:>7}  {pages:>9}  {seconds:>10.3}  {:>11.0}  {:>13.0}  {:>14.1}  {:>8.1}",
            pages / seconds,
            pages / seconds / threads as f64,
            outcome.report.bytes_read as f64 / 1e6 / seconds,
            outcome.report.body_bytes as f64 / 1e6 / seconds,
        );
    }
    println!("peak resident memory {peak:.0} MB");
}
