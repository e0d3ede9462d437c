//! `dedup-warc` on the shipped crawl, checked by the tools of web archiving:
//! `warcio check` on every file written, pywb's own indexer against the CDXJ
//! index written, and pywb's replay (`id_` mode, through the index written)
//! answering every capture of the crawl with its original payload bytes,
//! revisits included. pywb and warcio come from PyPI (`tests/pywb/setup.sh`,
//! which `.ci/run` runs; it exports `MIRRORSCOPE_PYWB_BIN`).

use crate::common;

use std::collections::BTreeSet;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::*;

/// The folder of pywb's and warcio's commands, or `None` (the test is then
/// skipped, but not under CI).
fn pywb_bin() -> Option<PathBuf> {
    match std::env::var_os("MIRRORSCOPE_PYWB_BIN") {
        Some(bin) => Some(PathBuf::from(bin)),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "MIRRORSCOPE_PYWB_BIN is not set: run tests/pywb/setup.sh (.ci/run does)"
            );
            eprintln!("pywb is not installed (tests/pywb/setup.sh): the replay test is skipped");
            None
        }
    }
}

/// A pywb server over `root/collections`, stopped when dropped.
struct Wayback(Child);

impl Drop for Wayback {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start_wayback(bin: &Path, root: &Path) -> (Wayback, u16) {
    let port = free_port();
    let child = Command::new(bin.join("wayback"))
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .current_dir(root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("pywb's wayback starts");
    let server = Wayback(child);
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "wayback did not listen"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    (server, port)
}

/// Every response of the crawl's WARC files: its URL and 14-digit time,
/// one tab-separated line each.
fn captures(crawl: &[PathBuf]) -> Vec<String> {
    let files = mirrorscope::corpus::list_warc_files(crawl).unwrap();
    let mut lines = Vec::new();
    for path in &files.files {
        for record in mirrorscope::corpus::warc::WarcReader::open(path, 1 << 30).unwrap() {
            let record = record.unwrap();
            if record.warc_type() != "response" {
                continue;
            }
            let date: String = record
                .header("WARC-Date")
                .unwrap()
                .chars()
                .filter(char::is_ascii_digit)
                .take(14)
                .collect();
            lines.push(format!(
                "{}\t{date}",
                record.header("WARC-Target-URI").unwrap()
            ));
        }
    }
    lines
}

#[test]
fn the_shipped_crawl_deduplicated_is_checked_indexed_and_replayed_by_pywb() {
    let Some(bin) = pywb_bin() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let crawl = vec![crate_dir().join("corpus")];
    let run = mirrorscope(
        &crate_dir(),
        &[
            "dedup-warc",
            crawl[0].to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--max-file-bytes",
            "4000000",
            "--json",
        ],
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let report = json(&run);
    let revisits = report["revisits"].as_u64().unwrap();
    let saved = report["payload_bytes_saved"].as_u64().unwrap();
    assert!(revisits > 500, "{report}");
    assert!(saved > 0 && report["output_bytes"].as_u64() < report["input_bytes"].as_u64());
    let files: Vec<String> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file.as_str().unwrap().to_string())
        .collect();
    assert!(files.len() > 1, "cut at 4 MB: {files:?}");

    // Written again into the same folder: refused, nothing overwritten.
    let again = mirrorscope(
        &crate_dir(),
        &[
            "dedup-warc",
            crawl[0].to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("already holds"),
        "{}",
        stderr(&again)
    );

    // warcio check: every record's block and payload digests hold.
    for file in &files {
        let checked = Command::new(bin.join("warcio"))
            .args(["check", out.join(file).to_str().unwrap()])
            .output()
            .expect("warcio runs");
        assert!(
            checked.status.success(),
            "{file}: {}{}",
            stdout(&checked),
            stderr(&checked)
        );
    }

    // pywb's own indexer finds the captures the written index holds, under
    // the same keys and times.
    let ours = std::fs::read_to_string(out.join("dedup.cdxj")).unwrap();
    let theirs_file = dir.path().join("pywb.cdxj");
    let indexed = Command::new(bin.join("cdx-indexer"))
        .args(["--cdxj", "--sort", "--output"])
        .arg(&theirs_file)
        .args(files.iter().map(|file| out.join(file)))
        .output()
        .expect("cdx-indexer runs");
    assert!(indexed.status.success(), "{}", stderr(&indexed));
    let theirs = std::fs::read_to_string(&theirs_file).unwrap();
    let keys = |text: &str| -> BTreeSet<String> {
        text.lines()
            .filter(|line| !line.starts_with('!'))
            .filter_map(|line| {
                let mut parts = line.splitn(3, ' ');
                Some(format!("{} {}", parts.next()?, parts.next()?))
            })
            .collect()
    };
    assert_eq!(keys(&ours), keys(&theirs));
    assert!(ours.contains("\"mime\":\"warc/revisit\""));
    assert!(ours.contains("\"original\":"));

    // pywb replays every capture through the written index, revisits
    // included, as it replays the original files (indexed by its own
    // indexer): the same status and the same payload bytes (pywb joins a
    // chunked transfer's chunks, and serves a URL's capture rather than
    // its redirect to itself, in both).
    let collections = dir.path().join("pywb/collections");
    for (name, archive, index) in [
        (
            "dedup",
            files.iter().map(|file| out.join(file)).collect::<Vec<_>>(),
            out.join("dedup.cdxj"),
        ),
        (
            "orig",
            mirrorscope::corpus::list_warc_files(&crawl).unwrap().files,
            dir.path().join("orig.cdxj"),
        ),
    ] {
        let collection = collections.join(name);
        std::fs::create_dir_all(collection.join("archive")).unwrap();
        std::fs::create_dir_all(collection.join("indexes")).unwrap();
        for file in &archive {
            std::fs::copy(
                file,
                collection.join("archive").join(file.file_name().unwrap()),
            )
            .unwrap();
        }
        if name == "orig" {
            let indexed = Command::new(bin.join("cdx-indexer"))
                .args(["--cdxj", "--sort", "--output"])
                .arg(&index)
                .args(&archive)
                .output()
                .expect("cdx-indexer runs");
            assert!(indexed.status.success(), "{}", stderr(&indexed));
        }
        std::fs::copy(&index, collection.join("indexes/index.cdxj")).unwrap();
    }
    let (_server, port) = start_wayback(&bin, &dir.path().join("pywb"));
    let expected = captures(&crawl);
    assert!(expected.len() > 2000, "{}", expected.len());
    let list = dir.path().join("captures.tsv");
    std::fs::write(&list, expected.join("\n")).unwrap();
    let replayed = Command::new(bin.join("python"))
        .args([
            "-c",
            "import hashlib, http.client, sys\n\
             port, bad, n, ok = int(sys.argv[2]), [], 0, 0\n\
             def get(path):\n    \
                 c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)\n    \
                 c.request('GET', path)\n    \
                 r = c.getresponse()\n    \
                 body = r.read()\n    \
                 c.close()\n    \
                 return r.status, hashlib.sha1(body).hexdigest()\n\
             for line in open(sys.argv[1]):\n    \
                 url, ts = line.rstrip('\\n').split('\\t')\n    \
                 n += 1\n    \
                 dedup = get(f'/dedup/{ts}id_/' + url)\n    \
                 ok += dedup[0] == 200\n    \
                 if dedup != get(f'/orig/{ts}id_/' + url): bad.append(url)\n\
             print(n, len(bad), ok)\n\
             print('\\n'.join(bad[:20]))",
            list.to_str().unwrap(),
            &port.to_string(),
        ])
        .output()
        .expect("python fetches through pywb");
    assert!(replayed.status.success(), "{}", stderr(&replayed));
    let answer = stdout(&replayed);
    let counts: Vec<usize> = answer
        .lines()
        .next()
        .unwrap_or("")
        .split(' ')
        .filter_map(|count| count.parse().ok())
        .collect();
    assert_eq!(counts.len(), 3, "{answer}");
    assert_eq!(counts[0], expected.len(), "{answer}");
    assert_eq!(counts[1], 0, "replayed, differing:\n{answer}");
    // Most captures are pages answered 200 (the rest redirects and 404s).
    assert!(counts[2] * 10 >= counts[0] * 8, "{answer}");
}
