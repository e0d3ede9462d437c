//! `dedup-warc` on the shipped crawl (and, in tests/it/devcrawl.rs, on
//! development crawl 1), checked by the tools of web archiving:
//! `warcio check` on every file written, pywb's own indexer against the CDXJ
//! index written, and pywb's replay (`id_` mode, through the index written)
//! answering every capture of the crawl with its original payload bytes,
//! revisits included. pywb and warcio come from PyPI (`tests/pywb/setup.sh`,
//! which `.ci/run` runs; it exports `MIRRORSCOPE_PYWB_BIN`).

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::Value;

/// The folder of pywb's and warcio's commands, or `None` (the test is then
/// skipped, but not under CI).
pub(crate) fn pywb_bin() -> Option<PathBuf> {
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

/// What [`deduplicated_and_replayed`] found.
pub(crate) struct Replayed {
    /// `dedup-warc --json`'s report.
    pub report: Value,
    /// The files written, in order.
    pub files: Vec<String>,
    /// Captures replayed, and how many of them pywb answered 200.
    pub captures: usize,
    pub answered_ok: usize,
}

/// `dedup-warc` on `crawl` into `dir/out` (with `options`), checked by the
/// tools of web archiving: `warcio check` passes on every file written,
/// pywb's `cdx-indexer` finds the keys the written index holds, and pywb
/// replays every response of the crawl (`id_` mode, through the written
/// index, revisits included) as it replays the original files indexed by
/// its own indexer: the same status and the same payload bytes (pywb joins
/// a chunked transfer's chunks, and serves a URL's capture rather than its
/// redirect to itself, in both). `tests/pywb/replay.py` calls pywb's front
/// end in process, on every core.
pub(crate) fn deduplicated_and_replayed(
    bin: &Path,
    crawl: &[PathBuf],
    dir: &Path,
    options: &[&str],
) -> Replayed {
    let out = dir.join("out");
    let mut args = vec!["dedup-warc"];
    args.extend(crawl.iter().map(|path| path.to_str().unwrap()));
    args.extend(["--out", out.to_str().unwrap(), "--json"]);
    args.extend(options);
    let run = mirrorscope(&crate_dir(), &args);
    assert!(run.status.success(), "{}", stderr(&run));
    let report = json(&run);
    let files: Vec<String> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file.as_str().unwrap().to_string())
        .collect();
    let written: Vec<PathBuf> = files.iter().map(|file| out.join(file)).collect();

    // warcio check: every record's block and payload digests hold.
    let checked = Command::new(bin.join("warcio"))
        .arg("check")
        .args(&written)
        .output()
        .expect("warcio runs");
    assert!(
        checked.status.success(),
        "{}{}",
        stdout(&checked),
        stderr(&checked)
    );

    // pywb's own indexer finds the captures the written index holds, under
    // the same keys and times.
    let ours = std::fs::read_to_string(out.join("dedup.cdxj")).unwrap();
    let theirs_file = dir.join("pywb.cdxj");
    cdx_index(bin, &written, &theirs_file);
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

    // Two pywb collections: the written files through the written index,
    // and the original files through pywb's own.
    let originals = mirrorscope::corpus::list_warc_files(crawl).unwrap().files;
    let root = dir.join("pywb");
    for (name, archive) in [("dedup", &written), ("orig", &originals)] {
        let collection = root.join("collections").join(name);
        std::fs::create_dir_all(collection.join("archive")).unwrap();
        std::fs::create_dir_all(collection.join("indexes")).unwrap();
        for file in archive.iter() {
            std::os::unix::fs::symlink(
                std::path::absolute(file).unwrap(),
                collection.join("archive").join(file.file_name().unwrap()),
            )
            .unwrap();
        }
    }
    std::fs::copy(
        out.join("dedup.cdxj"),
        root.join("collections/dedup/indexes/index.cdxj"),
    )
    .unwrap();
    cdx_index(
        bin,
        &originals,
        &root.join("collections/orig/indexes/index.cdxj"),
    );

    let expected = captures(crawl);
    let list = dir.join("captures.tsv");
    std::fs::write(&list, expected.join("\n")).unwrap();
    let replayed = Command::new(bin.join("python"))
        .arg(crate_dir().join("tests/pywb/replay.py"))
        .args([&root, &list])
        .args(["dedup", "orig"])
        .output()
        .expect("python runs replay.py");
    assert!(replayed.status.success(), "{}", stderr(&replayed));
    let answer = json(&replayed);
    assert_eq!(answer["captures"], expected.len(), "{answer}");
    assert_eq!(answer["differing"], 0, "replayed, differing: {answer}");
    Replayed {
        report,
        files,
        captures: expected.len(),
        answered_ok: answer["ok"].as_u64().unwrap() as usize,
    }
}

/// pywb's `cdx-indexer` on `files`, sorted, into `output`.
fn cdx_index(bin: &Path, files: &[PathBuf], output: &Path) {
    let indexed = Command::new(bin.join("cdx-indexer"))
        .args(["--cdxj", "--sort", "--output"])
        .arg(output)
        .args(files)
        .output()
        .expect("cdx-indexer runs");
    assert!(indexed.status.success(), "{}", stderr(&indexed));
}

#[test]
fn the_shipped_crawl_deduplicated_is_checked_indexed_and_replayed_by_pywb() {
    let Some(bin) = pywb_bin() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let crawl = vec![crate_dir().join("corpus")];
    let replayed =
        deduplicated_and_replayed(&bin, &crawl, dir.path(), &["--max-file-bytes", "4000000"]);
    let report = &replayed.report;
    assert!(report["revisits"].as_u64().unwrap() > 500, "{report}");
    assert!(report["payload_bytes_saved"].as_u64().unwrap() > 0);
    assert!(report["output_bytes"].as_u64() < report["input_bytes"].as_u64());
    assert!(
        replayed.files.len() > 1,
        "cut at 4 MB: {:?}",
        replayed.files
    );
    let index = std::fs::read_to_string(dir.path().join("out/dedup.cdxj")).unwrap();
    assert!(index.contains("\"mime\":\"warc/revisit\""));
    assert!(index.contains("\"original\":"));
    assert!(replayed.captures > 2000, "{}", replayed.captures);
    // Most captures are pages answered 200 (the rest redirects and 404s).
    assert!(replayed.answered_ok * 10 >= replayed.captures * 8);

    // Written again into the same folder: refused, nothing overwritten.
    let again = mirrorscope(
        &crate_dir(),
        &[
            "dedup-warc",
            crawl[0].to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ],
    );
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("already holds"),
        "{}",
        stderr(&again)
    );
}
