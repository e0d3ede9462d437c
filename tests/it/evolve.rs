//! Two crawls of the demo web: the shipped one, and the same web four weeks
//! later written by the corpus builder (`--crawl second`: the Kiel mirror
//! updated its Tomcat copy to the primary's version, the JP-IX mirror is
//! gone, an NL-IX mirror of the Exim specification is new, and three pages of
//! the Requests docs were revised). The second crawl is 21 MB, so it is made
//! here rather than shipped; it needs the source archives in
//! `../shared/sources` (present under CI, which fails without them).
#![cfg(feature = "corpus-builder")]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const DROPPED: &str = "tomcat.mirror.jp-ix.example";
const ADDED: &str = "exim.mirror.nl-ix.example";
const KIEL_TOMCAT: &str = "http://mirror.uni-kiel.example/pub/apache/tomcat/tomcat-10.1-doc/";
const REVISED: [&str; 3] = [
    "http://requests.pyhosting.example/community/faq.html",
    "http://requests.pyhosting.example/community/updates.html",
    "http://requests.pyhosting.example/user/install.html",
];

/// The second crawl's folder, built once per test binary run into
/// `name`; `None` (the test is skipped) when the sources are missing
/// outside CI.
fn second_crawl(name: &str) -> Option<PathBuf> {
    let sources = crate_dir().join("../shared/sources");
    if !sources.is_dir() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing: the second crawl cannot be built",
            sources.display()
        );
        eprintln!("skipped: no {}", sources.display());
        return None;
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_build-corpus"))
        .args(["--crawl", "second", "--sources"])
        .arg(&sources)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    Some(out)
}

fn clusters_by_principal(data: &Path) -> BTreeMap<String, u64> {
    let report = json(&mirrorscope(
        &crate_dir(),
        &["clusters", "--data", data.to_str().unwrap(), "--json"],
    ));
    report["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cluster| {
            let principal = cluster["collections"][0]["root"]
                .as_str()
                .unwrap()
                .to_string();
            let id: u64 = cluster["id"].as_str().unwrap().parse().unwrap();
            (principal, id)
        })
        .collect()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn evolve_reports_the_mirror_updated_dropped_and_added_and_the_revised_pages() {
    let Some(second) = second_crawl("evolve-second-crawl") else {
        return;
    };
    let earlier = index_shipped_crawl_into("evolve-a");
    // The later crawl indexed as the next generation of a copy of the same
    // data folder, so that cluster ids carry over.
    let later = index_shipped_crawl_into("evolve-b");
    let ids_before = clusters_by_principal(&later);
    index_into(&second, &later);
    let ids_after = clusters_by_principal(&later);
    // Every cluster continues (the same principal copies) under its id.
    assert_eq!(ids_after, ids_before);

    let evolution = json(&mirrorscope(
        &crate_dir(),
        &[
            "evolve",
            earlier.to_str().unwrap(),
            later.to_str().unwrap(),
            "--json",
        ],
    ));

    // Pages: the dropped and added hosts, and changed bodies only where the
    // Kiel mirror's Tomcat copy was updated and on the revised pages.
    let pages = &evolution["pages"];
    assert_eq!(strings(&pages["hosts_only_a"]), vec![DROPPED]);
    assert_eq!(strings(&pages["hosts_only_b"]), vec![ADDED]);
    let changed = strings(&pages["changed_urls"]);
    assert_eq!(changed.len() as u64, pages["changed"].as_u64().unwrap());
    for url in &changed {
        assert!(
            url.starts_with(KIEL_TOMCAT) || REVISED.contains(&url.as_str()),
            "{url} changed"
        );
    }
    for url in REVISED {
        assert!(
            changed.iter().any(|changed| changed == url),
            "{url} not changed"
        );
    }
    // Tomcat 10.1.55 and 10.1.60 differ on most pages.
    assert!(
        changed
            .iter()
            .filter(|url| url.starts_with(KIEL_TOMCAT))
            .count()
            > 50
    );

    // Collections: the same clusters; the Tomcat one lost JP-IX's copy, the
    // Exim one gained NL-IX's.
    let collections = &evolution["collections"];
    assert_eq!(collections["clusters_a"], collections["continued"]);
    let copies = |key: &str| string_pairs(&collections[key], "host", "prefix");
    assert_eq!(
        copies("copies_disappeared"),
        vec![(
            DROPPED.to_string(),
            format!("http://{DROPPED}/tomcat-10.1-doc/")
        )]
    );
    assert_eq!(
        copies("copies_appeared"),
        vec![(
            ADDED.to_string(),
            format!("http://{ADDED}/exim-html-current/doc/html/spec_html/")
        )]
    );
    let changes = collections["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "{changes:?}");
    for change in changes {
        assert_eq!(change["fate"], "changed");
        assert_eq!(change["id_a"], change["id_b"], "ids carry over");
    }
    let tomcat = ids_before["http://tomcat.apache-project.example/tomcat-10.1-doc/"];
    assert!(changes.iter().any(
        |change| change["id_b"] == tomcat && change["cardinality"] == serde_json::json!([5, 4])
    ));

    // Mirrors: pairs with JP-IX gone, pairs with NL-IX new, nothing else.
    let mirrors = &evolution["mirrors"];
    let pairs = |key: &str| -> BTreeSet<(String, String, String)> {
        mirrors[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| {
                (
                    pair["a"].as_str().unwrap().to_string(),
                    pair["b"].as_str().unwrap().to_string(),
                    pair["level"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let gone = pairs("disappeared");
    let new = pairs("appeared");
    assert!(
        gone.iter().all(|(a, b, _)| a == DROPPED || b == DROPPED),
        "{gone:?}"
    );
    assert!(
        new.iter().all(|(a, b, _)| a == ADDED || b == ADDED),
        "{new:?}"
    );
    assert!(gone.contains(&(
        "tomcat.apache-project.example".to_string(),
        DROPPED.to_string(),
        "4".to_string()
    )));
    assert!(new.contains(&(
        ADDED.to_string(),
        "www.exim-mta.example".to_string(),
        "1".to_string()
    )));
    assert_eq!(mirrors["level_changed"], serde_json::json!([]));

    // Near-duplicates (fetterly §3): clusters grow (NL-IX's copies join the
    // Exim pages) and shrink (JP-IX's leave), none is born, gone, merged or
    // split; a page alone in A is alone or in B's "not fetched" cluster, so
    // its containment is 1 by definition.
    let near = &evolution["near_duplicates"];
    for key in ["born", "gone", "merged", "split"] {
        assert_eq!(near[key], 0, "{key}: {near}");
    }
    assert!(near["grown"].as_u64().unwrap() >= 60, "{near}");
    assert!(near["shrunk"].as_u64().unwrap() >= 60, "{near}");
    let (pairs_a, still) = (
        near["pairs_a"].as_u64().unwrap(),
        near["pairs_still"].as_u64().unwrap(),
    );
    assert!(
        still < pairs_a && still * 10 > pairs_a * 8,
        "{still} of {pairs_a}"
    );
    let ranges = near["by_size"].as_array().unwrap();
    assert_eq!(ranges[0]["min"], 1);
    assert_eq!(ranges[0]["containment"], 1.0);
    let urls: u64 = ranges
        .iter()
        .map(|range| range["urls"].as_u64().unwrap())
        .sum();
    assert!(urls > 2000);

    // The summary names each change by host, the kind first.
    let summary = string_pairs(&evolution["summary"]["hosts"], "kind", "host");
    let has = |kind: &str, host: &str| summary.contains(&(kind.to_string(), host.to_string()));
    assert!(has("disappeared", DROPPED), "{summary:?}");
    assert!(has("appeared", ADDED), "{summary:?}");
    assert!(
        has("version-changed", "mirror.uni-kiel.example"),
        "{summary:?}"
    );
    assert!(
        has("pages-changed", "requests.pyhosting.example"),
        "{summary:?}"
    );
    assert!(
        summary.iter().all(|(kind, host)| kind == "unchanged"
            || kind == "level-changed"
            || [
                DROPPED,
                ADDED,
                "mirror.uni-kiel.example",
                "requests.pyhosting.example"
            ]
            .contains(&host.as_str())),
        "{summary:?}"
    );

    // The text form says the same, the summary first.
    let text = stdout(&mirrorscope(
        &crate_dir(),
        &["evolve", earlier.to_str().unwrap(), later.to_str().unwrap()],
    ));
    assert!(
        text.contains(&format!("hosts only in A: {DROPPED}")),
        "{text}"
    );
    assert!(text.contains(&format!("+ http://{ADDED}/")), "{text}");
    let by_host = text.find("By host:").expect("a summary by host");
    assert!(by_host < text.find("Details").unwrap(), "{text}");
    assert!(
        text.contains("version changed  mirror.uni-kiel.example [http://tomcat.apache-project.example/tomcat-10.1-doc/]"),
        "{text}"
    );
}

/// Kills the child process when the test ends, whatever happens.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn an_interrupted_add_leaves_the_previous_generation_serving() {
    let Some(second) = second_crawl("interrupted-second-crawl") else {
        return;
    };
    let data = index_shipped_crawl_into("interrupted-add");
    let data_arg = data.to_str().unwrap();
    let generation = std::fs::read_to_string(data.join("CURRENT")).unwrap();
    let stats_before = json(&mirrorscope(
        &crate_dir(),
        &["stats", "--data", data_arg, "--json"],
    ));

    // Killed while it ingests the second crawl.
    let mut child = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_mirrorscope"))
            .args(["index", "--add"])
            .arg(&second)
            .args(["--data", data_arg])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    let partial = || {
        std::fs::read_dir(data.join("crawls"))
            .unwrap()
            .any(|entry| {
                entry
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".partial")
            })
    };
    // Killed as soon as the ingest has begun (reading 21 MB takes seconds).
    while !partial() {
        assert!(
            child.0.try_wait().unwrap().is_none(),
            "index --add ended before it was killed"
        );
        assert!(started.elapsed() < Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(1));
    }
    child.0.kill().unwrap();
    child.0.wait().unwrap();

    // The previous generation still answers, with the first crawl's figures.
    assert_eq!(
        std::fs::read_to_string(data.join("CURRENT")).unwrap(),
        generation
    );
    let stats = json(&mirrorscope(
        &crate_dir(),
        &["stats", "--data", data_arg, "--json"],
    ));
    assert_eq!(stats["pages"], stats_before["pages"]);
    assert_eq!(stats["crawls"], 1);
    let avoid = mirrorscope(&crate_dir(), &["avoid", "--data", data_arg]);
    assert!(avoid.status.success(), "{}", stderr(&avoid));
    assert!(stdout(&avoid).contains(&format!("http://{DROPPED}/")));

    // The next run rolls the partial ingest back and adds the crawl; the
    // URLs of both crawls are kept, the newest capture winning.
    let output = mirrorscope(
        &crate_dir(),
        &[
            "index",
            "--add",
            second.to_str().unwrap(),
            "--data",
            data_arg,
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stdout(&output);
    assert!(
        summary.contains("rolled back 1 interrupted ingest(s)"),
        "{summary}"
    );
    assert!(summary.contains("URL persistence"), "{summary}");
    // Nearly every body was stored by the first crawl; what is saved is a
    // share of the bodies read, revisits included.
    let saved: Vec<u64> = summary
        .lines()
        .find_map(|line| line.strip_prefix("bytes saved"))
        .unwrap()
        .split_whitespace()
        .filter_map(|word| word.parse().ok())
        .collect();
    assert!(
        saved[0] <= saved[1] && saved[0] * 10 > saved[1] * 9,
        "{summary}"
    );
    let stats = json(&mirrorscope(
        &crate_dir(),
        &["stats", "--data", data_arg, "--json"],
    ));
    assert_eq!(stats["crawls"], 2);
    assert!(stats["pages"].as_u64().unwrap() > stats_before["pages"].as_u64().unwrap());
}
