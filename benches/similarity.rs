//! Similarity throughput: fingerprinting (words, lines, text signature, 84
//! min-hashes, 6 supershingles, 15 megashingles) on the shipped crawl's pages
//! and on synthetic 6 KB pages, one thread; then the similar-pair step
//! (chunk iceberg, megashingle clustering, trivial clusters) on generated
//! crawls of growing size, with every core.
//!
//! `cargo bench --bench similarity`

use std::hint::black_box;
use std::time::Instant;

use mirrorscope::corpus::{
    self, charset, CaptureInfo, ReadLimits, RecordLocation, RecordOutcome, WarcReader,
};
use mirrorscope::ingest::Capture;
use mirrorscope::pages::PageTable;
use mirrorscope::pipeline::default_corpus_dir;
use mirrorscope::similarity::{analyse, Fingerprint, SimilarityConfig};
use mirrorscope::store::{signature_of, ContentKey};

const RUNS: usize = 5;

/// (title, text) of every HTML page of the shipped crawl.
fn crawl_texts() -> Vec<(String, String)> {
    let files = corpus::list_warc_files(&[default_corpus_dir()])
        .expect("the shipped crawl")
        .files;
    let limits = ReadLimits {
        max_body_bytes: 10 << 20,
    };
    let mut texts = Vec::new();
    for path in files {
        let reader = WarcReader::open(&path, limits.max_body_bytes).expect("a WARC file");
        let file: std::sync::Arc<str> = std::sync::Arc::from("bench");
        for record in reader.flatten() {
            let RecordOutcome::Page(page) = corpus::interpret_record(&record, &file, limits) else {
                continue;
            };
            let decoded = charset::decode_body(&page.body, page.headers.content_type.as_deref());
            let Ok(url) = url::Url::parse(&page.info.url) else {
                continue;
            };
            let extracted = corpus::extract_html(&decoded.text, &url);
            texts.push((extracted.title, extracted.text));
        }
    }
    texts
}

/// A deterministic stream of words from a 5,000-word vocabulary.
struct Words(u64);

impl Words {
    fn next(&mut self) -> String {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        format!("w{}", (self.0 >> 33) % 5000)
    }
}

/// `count` pages of about `bytes` bytes of text, 12 words a line.
fn synthetic_texts(count: usize, bytes: usize) -> Vec<(String, String)> {
    let mut words = Words(7);
    (0..count)
        .map(|_| {
            let mut text = String::with_capacity(bytes + 16);
            let mut in_line = 0;
            while text.len() < bytes {
                text.push_str(&words.next());
                in_line += 1;
                text.push(if in_line % 12 == 0 { '\n' } else { ' ' });
            }
            (String::new(), text)
        })
        .collect()
}

/// Fingerprints every text `RUNS` times on one thread; best pages/s.
fn fingerprint_rate(texts: &[(String, String)]) -> (f64, f64) {
    let bytes: usize = texts
        .iter()
        .map(|(title, text)| title.len() + text.len())
        .sum();
    let mut best = f64::MAX;
    for _ in 0..RUNS {
        let started = Instant::now();
        for (title, text) in texts {
            let fingerprint = Fingerprint::of_page(title, text);
            black_box(fingerprint.megashingles());
            black_box(&fingerprint);
        }
        best = best.min(started.elapsed().as_secs_f64());
    }
    (texts.len() as f64 / best, bytes as f64 / best / 1e6)
}

/// Our fingerprints against datasketch's MinHash (84 permutations) on the
/// same documents, one thread each: `benches/minhash_datasketch.py` run by
/// `python3` (skipped, with a note, where it or datasketch is missing).
fn compare_with_datasketch(name: &str, texts: &[(String, String)]) {
    let documents: Vec<String> = texts
        .iter()
        .map(|(title, text)| format!("{title}\n{text}"))
        .collect();
    let file = tempfile::NamedTempFile::new().expect("a temporary file");
    let lines: String = documents
        .iter()
        .map(|document| serde_json::to_string(document).expect("a JSON string") + "\n")
        .collect();
    std::fs::write(file.path(), lines).expect("writing the documents");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/minhash_datasketch.py");
    let output = std::process::Command::new("python3")
        .arg(&script)
        .arg(file.path())
        .output();
    let theirs = match output {
        Ok(output) if output.status.success() => {
            let answer: serde_json::Value =
                serde_json::from_slice(&output.stdout).expect("the script's JSON");
            answer["documents"].as_f64().unwrap_or(0.0)
                / answer["seconds"].as_f64().unwrap_or(f64::NAN)
        }
        Ok(output) => {
            println!(
                "{name}: datasketch not run ({}); `pip install datasketch` to compare",
                String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
            return;
        }
        Err(error) => {
            println!("{name}: python3 not run ({error})");
            return;
        }
    };
    let (ours, _) = fingerprint_rate(texts);
    println!(
        "{:<28} {:>8} {:>16.0} {:>18.0} {:>7.1}x",
        name,
        texts.len(),
        ours,
        theirs,
        ours / theirs
    );
}

/// A generated crawl: `sites` manuals of 50 pages, each served by its
/// primary and two mirrors (one adds a banner line); every page has a
/// 15-line navigation bar and footer shared by its site and 30 lines of its
/// own.
fn generated_crawl(sites: usize) -> Vec<Capture> {
    let mut words = Words(11);
    let mut captures = Vec::new();
    for site in 0..sites {
        let chrome: Vec<String> = (0..15)
            .map(|n| format!("site {site} navigation entry {n} {}", words.next()))
            .collect();
        for page in 0..50 {
            let own: Vec<String> = (0..30)
                .map(|_| (0..10).map(|_| words.next()).collect::<Vec<_>>().join(" "))
                .collect();
            for (copy, host) in ["www", "mirror-a", "mirror-b"].iter().enumerate() {
                let url = format!("http://{host}.site{site}.example/manual/page{page}.html");
                let mut lines = Vec::new();
                if copy == 2 {
                    lines.push(format!("Mirrored from {url} by {host}"));
                }
                lines.extend(chrome.iter().cloned());
                lines.extend(own.iter().cloned());
                let text = lines.join("\n");
                captures.push(Capture {
                    info: CaptureInfo {
                        url,
                        date: "2026-11-20T12:00:00Z".into(),
                        ip: None,
                        payload_digest: None,
                        status: 200,
                        location: RecordLocation {
                            file: "generated".into(),
                            offset: 0,
                        },
                    },
                    content_key: Some(ContentKey {
                        signature: signature_of(text.as_bytes()),
                        volume: 0,
                        overflow: 0,
                    }),
                    body_bytes: text.len() as u64,
                    encoding: "UTF-8".into(),
                    title: String::new(),
                    links: mirrorscope::pages::Links::new(),
                    revisit_of: None,
                    fingerprint: Some(Box::new(Fingerprint::of_text(&text))),
                    language: Default::default(),
                    canonical: None,
                    versions: Box::default(),
                    text_hosts: mirrorscope::pages::ThinList::new(),
                    spilled: None,
                });
            }
        }
    }
    captures
}

fn main() {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!("similarity benchmark ({cores} cores available), best of {RUNS} runs");
    println!("\nfingerprinting, one thread (words, lines, signature, 84 min-hashes, supershingles, megashingles)");
    println!(
        "{:<28} {:>8} {:>10} {:>13} {:>8}",
        "pages", "count", "avg bytes", "pages/s/core", "MB/s"
    );
    let crawl = crawl_texts();
    let synthetic = synthetic_texts(20_000, 6 * 1024);
    for (name, texts) in [
        ("shipped crawl (HTML pages)", &crawl),
        ("synthetic 6 KB pages", &synthetic),
    ] {
        let bytes: usize = texts
            .iter()
            .map(|(title, text)| title.len() + text.len())
            .sum();
        let (rate, megabytes) = fingerprint_rate(texts);
        println!(
            "{:<28} {:>8} {:>10} {:>13.0} {:>8.1}",
            name,
            texts.len(),
            bytes / texts.len().max(1),
            rate,
            megabytes
        );
    }

    println!("\nmin-hash against datasketch 2 (MinHash, 84 permutations, update_batch), same documents, one thread each;");
    println!("ours also computes lines, the text signature, supershingles and megashingles");
    println!(
        "{:<28} {:>8} {:>16} {:>18} {:>8}",
        "pages", "count", "ours pages/s", "datasketch pages/s", "ratio"
    );
    compare_with_datasketch("shipped crawl (HTML pages)", &crawl);
    compare_with_datasketch("synthetic 6 KB pages", &synthetic);

    println!("\nsimilar pairs and trivial clusters on generated crawls ({cores} threads)");
    println!(
        "{:>8} {:>9} {:>11} {:>13} {:>10}",
        "pages", "seconds", "pages/s", "chunk pairs", "clusters"
    );
    for sites in [40, 80, 160, 320] {
        let captures = generated_crawl(sites);
        let (table, fingerprints) = PageTable::build_with_fingerprints(&[&captures]);
        let config = SimilarityConfig::default();
        let mut best = f64::MAX;
        let mut counts = None;
        for _ in 0..RUNS.min(3) {
            let fingerprints = fingerprints.clone();
            let started = Instant::now();
            let similarity = analyse(&table, fingerprints, &config);
            best = best.min(started.elapsed().as_secs_f64());
            counts = Some(similarity.counts);
        }
        let counts = counts.expect("at least one run");
        println!(
            "{:>8} {:>9.3} {:>11.0} {:>13} {:>10}",
            table.pages.len(),
            best,
            table.pages.len() as f64 / best,
            counts.chunk_pairs,
            counts.trivial_clusters
        );
    }
}
