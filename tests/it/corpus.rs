//! The shipped crawl, end to end: it indexes without a bad record, every page
//! of the ground truth is in the page table, exact mirrors share their stored
//! bodies, and `stats` shows fewer distinct bodies than pages.

use crate::common;

use std::collections::{BTreeMap, HashMap, HashSet};

use common::*;
use mirrorscope::datadir::DataDir;
use mirrorscope::pages::PageTable;
use mirrorscope::pipeline::{run_index, IndexOutcome, IndexRequest};

struct Indexed {
    _dir: tempfile::TempDir,
    data: std::path::PathBuf,
    outcome: IndexOutcome,
    table: PageTable,
}

fn index_corpus() -> Indexed {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let outcome = run_index(&IndexRequest {
        inputs: vec![corpus_dir()],
        data: data.clone(),
        progress: false,
        add: false,
        allow_shrink: false,
        parts: None,
        index_shards: None,
    })
    .expect("the shipped crawl indexes");
    let table = DataDir::open_existing(&data).unwrap().page_table().unwrap();
    Indexed {
        _dir: dir,
        data,
        outcome,
        table,
    }
}

/// url -> (collection, replica, page) from corpus/truth.tsv.
fn truth() -> BTreeMap<String, (String, String, String)> {
    let text = std::fs::read_to_string(corpus_dir().join("truth.tsv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("url\tcollection\treplica\tpage"));
    lines
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 4, "{line}");
            (
                fields[0].to_string(),
                (
                    fields[1].to_string(),
                    fields[2].to_string(),
                    fields[3].to_string(),
                ),
            )
        })
        .collect()
}

#[test]
fn the_shipped_crawl_indexes_cleanly_and_matches_its_truth() {
    let indexed = index_corpus();
    let report = &indexed.outcome.report;
    // A clean crawl: nothing skipped as bad, every kind of record accounted for.
    assert_eq!(report.skipped_total(), 0, "{:?}", report.skipped);
    assert!(report.failed_files.is_empty());
    assert_eq!(report.files, 11);
    for kind in ["request", "warcinfo", "non-html"] {
        assert!(
            report.ignored.get(kind).copied().unwrap_or(0) > 0,
            "{kind}: {:?}",
            report.ignored
        );
    }
    // The alias host is written as revisit records pointing at the primary's URLs.
    assert!(
        report.revisits_resolved >= 80,
        "{}",
        report.revisits_resolved
    );
    let counts = indexed.outcome.manifest.counts;
    assert!(counts.pages > 2_500, "{counts:?}");
    assert!(counts.distinct_bodies < counts.pages, "{counts:?}");
    assert!(counts.exact_duplicate_pages > 500, "{counts:?}");
    assert!(counts.links > 10 * counts.pages, "{counts:?}");

    // Every URL of the truth file is a crawled page, in canonical form, with status 200.
    let truth = truth();
    assert!(truth.len() > 2_000);
    for url in truth.keys() {
        let id = indexed
            .table
            .find_url(url)
            .unwrap_or_else(|| panic!("truth URL {url} is not in the page table"));
        let page = indexed.table.page(id).unwrap();
        assert_eq!(page.status, 200, "{url}");
        assert!(page.content_key.is_some(), "{url}");
    }

    // Exact mirrors share their stored bodies: the primary and the exact mirror
    // of the httpd manual hold the same body for every page they both have.
    let primary = "apache-httpd-2.4-manual@httpd.apache-project.example/docs/2.4/";
    let mirror = "apache-httpd-2.4-manual@apache.mirror.nordu.example/docs/2.4/";
    let mut by_page: HashMap<&str, HashMap<&str, &str>> = HashMap::new();
    for (url, (_, replica, page)) in &truth {
        by_page
            .entry(page.as_str())
            .or_default()
            .insert(replica.as_str(), url.as_str());
    }
    let key_of = |url: &str| {
        indexed
            .table
            .page(indexed.table.find_url(url).unwrap())
            .unwrap()
            .content_key
    };
    let mut shared = 0;
    for replicas in by_page.values() {
        if let (Some(a), Some(b)) = (replicas.get(primary), replicas.get(mirror)) {
            assert_eq!(key_of(a), key_of(b), "{a} and {b} are exact copies");
            shared += 1;
        }
    }
    assert!(shared > 200, "{shared}");

    // A stale older version is a different body for pages that changed.
    let stale = "apache-httpd-2.4-manual@archive.apache-project.example/docs/2.4/";
    let differing = by_page
        .values()
        .filter_map(|replicas| Some((replicas.get(primary)?, replicas.get(stale)?)))
        .filter(|(a, b)| key_of(a) != key_of(b))
        .count();
    assert!(differing > 0);

    // Hosts and IP addresses are kept from the WARC records.
    let hosts: HashSet<&str> = indexed.table.hosts.iter().map(String::as_str).collect();
    assert!(
        hosts.contains("httpd.apache-project.example") && hosts.contains("flask-framework.example")
    );
    assert!(indexed.table.pages.iter().all(|page| page.ip.is_some()));

    // stats --json, through the binary.
    let output = mirrorscope(
        indexed.data.parent().unwrap(),
        &["stats", "--json", "--data", indexed.data.to_str().unwrap()],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let stats: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(stats["pages"], counts.pages);
    assert_eq!(stats["distinct_bodies"], counts.distinct_bodies);
    assert_eq!(stats["exact_duplicate_pages"], counts.exact_duplicate_pages);
    assert!(stats["distinct_bodies"].as_u64() < stats["pages"].as_u64());
}

#[test]
fn index_without_arguments_indexes_the_shipped_crawl_and_prints_the_counts() {
    let dir = tempfile::tempdir().unwrap();
    // Run from the crate folder, as the README does, with the data elsewhere.
    let data = dir.path().join("data");
    let output = mirrorscope(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
        &["index", "--data", data.to_str().unwrap()],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for line in [
        "records read",
        "pages (HTML captures)",
        "records not indexed",
        "bad records skipped         0",
        "distinct bodies",
        "duplicate pages eliminated",
        "bytes saved",
        "time",
        "MB of HTML/s",
    ] {
        assert!(text.contains(line), "summary lacks {line:?}:\n{text}");
    }
    // Nothing but the summary: no warnings for a clean crawl.
    assert!(!stderr(&output).contains("WARN"), "{}", stderr(&output));
}
