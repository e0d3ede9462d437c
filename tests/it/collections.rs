//! Replicated collections on the shipped crawl, through the command line:
//! every family of `corpus/truth.tsv` is one similar cluster with exactly its
//! copies (partial mirrors and partly crawled copies included), its primary
//! host is the principal copy, page-pair precision and recall pass 0.9, and
//! `clusters` lists and filters what it promises.

use crate::common;

use std::collections::{HashMap, HashSet};

use common::*;

/// The primary host of each family, from corpus/README.md's host table.
const PRIMARIES: [(&str, &str); 5] = [
    ("apache-httpd-2.4-manual", "httpd.apache-project.example"),
    ("tomcat-10.1-docs", "tomcat.apache-project.example"),
    ("flask-docs", "www.flask-framework.example"),
    ("exim-spec", "www.exim-mta.example"),
    ("sqlalchemy-1.4-docs", "docs.sqlalchemy-project.example"),
];

#[test]
fn every_replicated_collection_of_the_shipped_crawl_is_one_cluster() {
    let crawl = shipped_crawl();
    let data = crawl.data.as_str();
    let crate_dir = &crate_dir();
    assert!(
        crawl.summary.contains("similar clusters"),
        "{}",
        crawl.summary
    );

    let truth_path = crate_dir.join("corpus/truth.tsv");
    let eval = json(&eval_shipped_truth(data, &["--json"]));
    let scores = &eval["collections"];
    // Measured: precision 0.9985, recall 0.9921 over 618,892 pairs.
    assert!(scores["precision"].as_f64().unwrap() >= 0.9, "{scores:#}");
    assert!(scores["recall"].as_f64().unwrap() >= 0.9, "{scores:#}");
    assert!(
        scores["truth_pairs"].as_u64().unwrap() > 500_000,
        "{scores:#}"
    );
    assert!(scores["problem_collections"].is_array());

    // The copies of each family, from the truth file itself.
    let truth = std::fs::read_to_string(&truth_path).unwrap();
    let mut replicas: HashMap<&str, HashSet<&str>> = HashMap::new();
    for line in truth.lines().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        replicas.entry(fields[1]).or_default().insert(fields[2]);
    }
    let clusters = json(&mirrorscope(
        crate_dir,
        &["clusters", "--data", data, "--json"],
    ));
    let clusters = clusters["clusters"].as_array().unwrap();
    let families = scores["truth_collections"].as_array().unwrap();
    assert_eq!(families.len(), replicas.len());
    for family in families {
        let name = family["collection"].as_str().unwrap();
        let copies = replicas[name].len();
        // One cluster with exactly the family's copies, each matched to a
        // different replica, holding nearly all of the family's pages.
        assert_eq!(family["copies"], copies, "{family:#}");
        assert_eq!(family["copies_found"], copies, "{family:#}");
        assert_eq!(family["cluster_cardinality"], copies, "{family:#}");
        let found: HashSet<&str> = family["found"]
            .as_array()
            .unwrap()
            .iter()
            .map(|copy| copy["replica"].as_str().unwrap())
            .collect();
        assert_eq!(found, replicas[name], "{family:#}");
        let in_cluster = family["pages_in_cluster"].as_f64().unwrap();
        assert!(
            in_cluster >= 0.95 * family["pages"].as_f64().unwrap(),
            "{family:#}"
        );
        // Its principal copy is the primary host.
        let id = family["cluster"].as_str().unwrap();
        let cluster = clusters.iter().find(|cluster| cluster["id"] == id).unwrap();
        let principal = &cluster["collections"][0];
        assert_eq!(principal["id"], cluster["principal"]);
        let primary = PRIMARIES
            .iter()
            .find(|(family, _)| *family == name)
            .unwrap()
            .1;
        assert_eq!(principal["host"], primary, "{name}");
        assert_eq!(cluster["kind"], "collection");
    }
    // Partial mirrors and partly crawled copies make their clusters extended.
    let apache = families
        .iter()
        .find(|family| family["collection"] == "apache-httpd-2.4-manual")
        .unwrap();
    let sizes: Vec<u64> = apache["found"]
        .as_array()
        .unwrap()
        .iter()
        .map(|copy| copy["pages"].as_u64().unwrap())
        .collect();
    assert_eq!(
        sizes,
        [243, 243, 103, 243, 75],
        "primary first, then by prefix"
    );

    // The contract: cardinality, size, collections; every page in at most
    // one collection.
    let mut seen = HashSet::new();
    for cluster in clusters {
        let collections = cluster["collections"].as_array().unwrap();
        assert_eq!(cluster["cardinality"], collections.len());
        let largest = collections
            .iter()
            .map(|collection| collection["pages"].as_array().unwrap().len())
            .max()
            .unwrap();
        assert_eq!(cluster["size"], largest);
        assert_eq!(cluster["small"], largest < 10);
        for collection in collections {
            let root = collection["root"].as_str().unwrap();
            let prefix = collection["prefix"].as_str().unwrap();
            assert!(root.starts_with(prefix), "{root} {prefix}");
            for page in collection["pages"].as_array().unwrap() {
                assert!(
                    seen.insert(page.as_str().unwrap().to_string()),
                    "{page} twice"
                );
            }
        }
    }

    // Filters.
    let filtered = json(&mirrorscope(
        crate_dir,
        &[
            "clusters",
            "--data",
            data,
            "--json",
            "--min-cardinality",
            "5",
            "--min-size",
            "50",
        ],
    ));
    let filtered = filtered["clusters"].as_array().unwrap();
    assert_eq!(
        filtered.len(),
        3,
        "apache, tomcat and flask; exim has 4 copies"
    );
    assert!(filtered
        .iter()
        .all(|c| c["cardinality"].as_u64() >= Some(5)));
    assert!(filtered.iter().all(|c| c["size"].as_u64() >= Some(50)));

    // The text form: largest cardinality first, with the principal copy.
    let text = stdout(&mirrorscope(
        crate_dir,
        &["clusters", "--data", data, "--min-size", "2"],
    ));
    let first_row = text.lines().nth(2).unwrap();
    assert!(
        first_row.contains("http://httpd.apache-project.example/docs/2.4/"),
        "{text}"
    );
    let eval_text = stdout(&eval_shipped_truth(data, &[]));
    assert!(eval_text.contains("problem collections"), "{eval_text}");
    assert!(eval_text.contains("5 of 5 copies found"), "{eval_text}");
}

#[test]
fn clusters_without_an_index_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let output = mirrorscope(dir.path(), &["clusters", "--data", data.to_str().unwrap()]);
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(message.contains("mirrorscope index"), "{message}");
    assert!(!message.contains("panicked"), "{message}");
}
