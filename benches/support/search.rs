//! Search latency and throughput on an indexed data folder: rolled-up
//! search against flat tantivy search, in process and over HTTP on loopback
//! (one keep-alive client; then 50 concurrent clients for a fixed time).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpServer};
use mirrorscope::search::{Rank, SearchRequest};
use mirrorscope::web::{configure, AppState};

/// The queries of `SEARCH_BENCH_QUERIES` (separated by commas) where it is
/// set, to look at a few searches alone (under a profiler); else `queries`.
pub fn chosen(queries: Vec<String>) -> Vec<String> {
    match std::env::var("SEARCH_BENCH_QUERIES") {
        Ok(chosen) => chosen.split(',').map(str::to_string).collect(),
        Err(_) => queries,
    }
}

/// Seconds of each throughput run: `SEARCH_BENCH_SECONDS`, else `default`.
pub fn run_seconds(default: f64) -> f64 {
    std::env::var("SEARCH_BENCH_SECONDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[index]
}

/// The process's resident memory in MB (0 where /proc is not there).
fn resident_mb() -> f64 {
    mirrorscope::memory::resident_mb().unwrap_or(0.0)
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

pub fn report(label: &str, mut latencies: Vec<Duration>) -> (f64, f64) {
    latencies.sort_unstable();
    let (p50, p99) = (
        millis(percentile(&latencies, 0.5)),
        millis(percentile(&latencies, 0.99)),
    );
    println!(
        "{label:<44} n={:>6}  p50 {p50:>7.3} ms  p99 {p99:>7.3} ms",
        latencies.len()
    );
    (p50, p99)
}

/// Reports one mode's latencies as "`place`, flat" or "`place`, rolled up";
/// a flat run (which comes first) leaves its p50 in `flat_p50`, and a
/// rolled-up run then prints its cost over it, labelled with `short`.
fn report_mode(
    place: &str,
    short: &str,
    rollup: bool,
    latencies: Vec<Duration>,
    flat_p50: &mut f64,
) {
    let mode = if rollup { "rolled up" } else { "flat" };
    let (p50, _) = report(&format!("{place}, {mode}"), latencies);
    if !rollup {
        *flat_p50 = p50;
    } else {
        println!(
            "{:<44} {:+.0}% p50",
            format!("roll-up cost over flat ({short})"),
            (p50 / *flat_p50 - 1.0) * 100.0
        );
    }
}

fn encode(query: &str) -> String {
    url::form_urlencoded::byte_serialize(query.as_bytes()).collect()
}

/// A keep-alive HTTP/1.1 client for GET requests.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    fn connect(address: SocketAddr) -> Client {
        let stream = TcpStream::connect(address).expect("the server listens");
        stream.set_nodelay(true).unwrap();
        Client {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        }
    }

    /// GETs `path`; returns the status.
    fn get(&mut self, path: &str) -> u16 {
        write!(self.writer, "GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n").unwrap();
        let mut status_line = String::new();
        self.reader.read_line(&mut status_line).unwrap();
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or(0);
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        self.reader.read_exact(&mut body).unwrap();
        status
    }
}

fn path(query: &str, rollup: bool) -> String {
    let flat = if rollup { "" } else { "&rollup=off" };
    format!("/api/search?q={}{flat}", encode(query))
}

pub fn start_server(data: &Path) -> SocketAddr {
    let state = web::Data::new(
        AppState::open(data, mirrorscope::settings_from_config()).expect("the index opens"),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            HttpServer::new(move || {
                let state = state.clone();
                App::new().configure(move |config| configure(config, state))
            })
            .workers(2)
            .listen(listener)
            .expect("listen")
            .run()
            .await
        })
    });
    // Wait until it answers.
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(address).is_err() {
        assert!(Instant::now() < deadline, "the server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    address
}

pub fn load(
    address: SocketAddr,
    queries: &Arc<Vec<String>>,
    clients: usize,
    seconds: f64,
    rollup: bool,
) -> (f64, Vec<Duration>) {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|client| {
            let queries = Arc::clone(queries);
            std::thread::spawn(move || {
                let mut connection = Client::connect(address);
                let mut latencies = Vec::new();
                let mut next = client;
                while Instant::now() < deadline {
                    let query = &queries[next % queries.len()];
                    next += 1;
                    let begin = Instant::now();
                    let status = connection.get(&path(query, rollup));
                    assert!(status == 200 || status == 503, "status {status}");
                    latencies.push(begin.elapsed());
                }
                latencies
            })
        })
        .collect();
    let latencies: Vec<Duration> = threads
        .into_iter()
        .flat_map(|thread| thread.join().unwrap())
        .collect();
    let elapsed = started.elapsed().as_secs_f64();
    (latencies.len() as f64 / elapsed, latencies)
}

/// Turns the engine's cache of recent searches off in `data`'s settings
/// (`search.cached_searches` 0), so that every measured search runs: the
/// bench measures searching, not the cache. `SEARCH_BENCH_CACHE=on` keeps
/// the settings as they are.
pub fn uncached(data: &Path) {
    if std::env::var("SEARCH_BENCH_CACHE").is_ok_and(|value| value == "on") {
        println!("searches asked again come from the cache (SEARCH_BENCH_CACHE=on)");
        return;
    }
    let path = data.join("config.json");
    let mut config: serde_json::Value = std::fs::read(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    config["search"]["cached_searches"] = serde_json::json!(0);
    std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    println!("every search runs: the cache of recent searches is off");
}

/// Runs every measurement on `data`, cycling through `queries`; each
/// throughput run lasts `seconds`.
pub fn measure(data: &Path, queries: &[String], seconds: f64) {
    uncached(data);
    // In process: the engine alone.
    let before = resident_mb();
    let opened = Instant::now();
    let state = AppState::open(data, mirrorscope::settings_from_config()).unwrap();
    let engine = state.engine();
    println!(
        "opened the generation in {:.1} s; resident memory {:.0} MB -> {:.0} MB",
        opened.elapsed().as_secs_f64(),
        before,
        resident_mb()
    );
    let passes = 50;
    let mut flat_p50 = 0.0;
    for rollup in [false, true] {
        let mut latencies = Vec::new();
        for _ in 0..passes {
            for query in queries {
                let request = SearchRequest {
                    query: query.to_string(),
                    page: 1,
                    rollup,
                    rank: Rank::Relevance,
                    as_typed: false,
                    filters: Default::default(),
                };
                let begin = Instant::now();
                let results = engine.search(&request).expect("search");
                latencies.push(begin.elapsed());
                std::hint::black_box(results);
            }
        }
        report_mode("in process", "in process", rollup, latencies, &mut flat_p50);
    }

    // Per query: what it matches and what each mode costs (median of 9).
    println!(
        "{:<28} {:>9} {:>9} {:>10} {:>12}",
        "query", "hits", "groups", "flat ms", "rolled ms"
    );
    for query in queries {
        let timed = |rollup: bool| {
            let request = SearchRequest {
                query: query.to_string(),
                page: 1,
                rollup,
                rank: Rank::Relevance,
                as_typed: false,
                filters: Default::default(),
            };
            let mut times = Vec::new();
            let mut results = None;
            for _ in 0..9 {
                let begin = Instant::now();
                results = Some(engine.search(&request).expect("search"));
                times.push(begin.elapsed());
            }
            times.sort_unstable();
            (millis(times[4]), results.expect("searched"))
        };
        let (flat, _) = timed(false);
        let (rolled, results) = timed(true);
        println!(
            "{:<28} {:>9} {:>9} {flat:>10.3} {rolled:>12.3}",
            format!("{query:?}"),
            results.total_hits,
            format!("~{}", results.pages * 10),
        );
    }

    let address = start_server(data);
    let shared = Arc::new(queries.to_vec());
    let mut http_flat_p50 = 0.0;
    for rollup in [false, true] {
        let mut client = Client::connect(address);
        let mut latencies = Vec::new();
        for _ in 0..passes {
            for query in queries {
                let begin = Instant::now();
                assert_eq!(client.get(&path(query, rollup)), 200);
                latencies.push(begin.elapsed());
            }
        }
        report_mode(
            "HTTP, 1 client",
            "HTTP",
            rollup,
            latencies,
            &mut http_flat_p50,
        );
    }
    for rollup in [false, true] {
        let (throughput, latencies) = load(address, &shared, 50, seconds, rollup);
        let label = if rollup {
            "HTTP, 50 clients, rolled up"
        } else {
            "HTTP, 50 clients, flat"
        };
        report(label, latencies);
        println!("{:<44} {throughput:.0} requests/s over {seconds} s", "");
    }
}
