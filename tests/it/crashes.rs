//! `index`, `index --add` and `index --remove` killed with SIGKILL at points
//! spread over their run on the shipped crawl, then the next `index` and
//! `check`: the data folder is consistent after every one (no leaked or
//! missing reference, no orphan block, no leftover file) and every page of
//! the current generation reads back.
//!
//! Runs in optimised builds only (`.ci/run` builds with `--profile ci`):
//! each of its 24 kills needs a run of `index` after it.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// Kill points per command.
const KILLS: u32 = 8;

/// Runs at most per kill point: a run that ended before its kill point is
/// tried again with the time it took.
const ATTEMPTS: u32 = 3;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs `mirrorscope ARGS` to the end; returns whether it succeeded, and
/// its standard error.
fn run(args: &[&str]) -> (bool, String) {
    let output = mirrorscope(&crate_dir(), args);
    (output.status.success(), stderr(&output))
}

/// Starts `mirrorscope ARGS` and kills it (SIGKILL) after `after`; returns
/// `None` if it was still running then, or how long it took if it ended
/// by itself first.
fn run_and_kill(args: &[&str], after: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mirrorscope"))
        .args(args)
        .env("MIRRORSCOPE_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = started + after;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return Some(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let ended = child.try_wait().unwrap().is_some();
    child.kill().unwrap();
    child.wait().unwrap();
    ended.then(|| started.elapsed())
}

/// `check --json` of `data`.
fn check(data: &Path) -> (bool, serde_json::Value) {
    let output = mirrorscope(
        &crate_dir(),
        &["check", "--data", data.to_str().unwrap(), "--json"],
    );
    let report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", stderr(&output)));
    (output.status.success(), report)
}

fn crawl_ids(data: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(data.join("CURRENT")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            data.join("generations")
                .join(text.trim())
                .join("manifest.json"),
        )
        .unwrap(),
    )
    .unwrap();
    manifest["crawls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|crawl| crawl["id"].as_str().unwrap().to_string())
        .collect()
}

/// The shipped crawl's files split in two crawls, A and B.
fn two_crawls(dir: &Path) -> (PathBuf, PathBuf) {
    let (first, second) = (dir.join("crawl-a"), dir.join("crawl-b"));
    std::fs::create_dir_all(&first).unwrap();
    std::fs::create_dir_all(&second).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    files.sort();
    let half = files.len() / 2;
    for (index, file) in files.iter().enumerate() {
        let folder = if index < half { &first } else { &second };
        std::fs::copy(file, folder.join(file.file_name().unwrap())).unwrap();
    }
    (first, second)
}

#[test]
fn killed_writers_leave_a_consistent_data_folder() {
    if !slow_tests_wanted("crashes") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = two_crawls(dir.path());
    let (first, second) = (first.to_str().unwrap(), second.to_str().unwrap());

    // The states each command starts from, and one uninterrupted run of
    // each to time it.
    let empty = dir.path().join("empty");
    let with_a = dir.path().join("with-a");
    let with_both = dir.path().join("with-both");
    let timed = |args: &[&str]| {
        let started = Instant::now();
        let (ok, err) = run(args);
        assert!(ok, "{args:?}: {err}");
        started.elapsed()
    };
    std::fs::create_dir_all(&empty).unwrap();
    let index_time = timed(&["index", first, "--data", with_a.to_str().unwrap()]);
    copy_tree(&with_a, &with_both);
    let add_time = timed(&[
        "index",
        "--add",
        second,
        "--data",
        with_both.to_str().unwrap(),
    ]);
    let second_id = crawl_ids(&with_both)[1].clone();
    let removed = dir.path().join("removed");
    copy_tree(&with_both, &removed);
    let remove_time = timed(&[
        "index",
        "--remove",
        &second_id,
        "--data",
        removed.to_str().unwrap(),
    ]);
    for start in [&with_a, &with_both, &removed] {
        let (clean, report) = check(start);
        assert!(clean, "{}: {report:#}", start.display());
    }

    let scenarios: [(&str, &Path, Vec<&str>, Duration); 3] = [
        ("index", &empty, vec!["index", first], index_time),
        (
            "index --add",
            &with_a,
            vec!["index", "--add", second],
            add_time,
        ),
        (
            "index --remove",
            &with_both,
            vec!["index", "--remove", &second_id],
            remove_time,
        ),
    ];
    // A run's length depends on what else the machine is doing (the other
    // tests run beside this one): when a run ends before its kill point,
    // the command's time is taken from that run and the point tried again.
    let mut kills = 0;
    for (name, start, command, took) in &scenarios {
        let mut took = *took;
        for point in 1..=KILLS {
            for _attempt in 0..ATTEMPTS {
                let data = dir
                    .path()
                    .join(format!("run-{}-{point}", name.replace(' ', "")));
                copy_tree(start, &data);
                let mut args = command.clone();
                args.extend(["--data", data.to_str().unwrap()]);
                let after = took.mul_f64(f64::from(point) / f64::from(KILLS + 1));
                let ended = run_and_kill(&args, after);
                // The next run of the same command recovers; a removal that
                // had switched generations before the kill has nothing left
                // to remove (its recovery still runs first).
                let (ok, err) = run(&args);
                assert!(
                    ok || (*name == "index --remove"
                        && err.contains("is not a crawl of generation")),
                    "{name}, killed after {after:?}: the next run failed: {err}"
                );
                let (clean, report) = check(&data);
                assert!(
                    clean,
                    "{name}, killed after {after:?}: check after the next run: {report:#}"
                );
                assert!(report["pages_checked"].as_u64().unwrap() > 0);
                assert_eq!(report["generation_problems"]["count"], 0);
                std::fs::remove_dir_all(&data).unwrap();
                match ended {
                    None => {
                        kills += 1;
                        break;
                    }
                    Some(run_time) => took = took.min(run_time),
                }
            }
        }
    }
    assert!(
        kills >= 20,
        "only {kills} of {} runs were still running when killed",
        3 * KILLS
    );
}
