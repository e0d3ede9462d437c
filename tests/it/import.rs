//! `mirrorscope import-analysis`: trivial clusters from a Parquet table made
//! a new generation's, the later stages computed again on them; tables that
//! cannot be the current generation's, and similar clusters that growth
//! could not have given, refused with what is wrong, the data folder left
//! as it was. (tests/it/spark.rs imports what the Spark jobs compute.)

use crate::common;

use std::path::Path;

use common::*;
use serde_json::Value;

fn current(data: &Path) -> String {
    std::fs::read_to_string(data.join("CURRENT"))
        .unwrap()
        .trim()
        .to_string()
}

fn stats(data: &Path) -> Value {
    json(&mirrorscope(
        &crate_dir(),
        &["stats", "--data", data.to_str().unwrap(), "--json"],
    ))
}

fn import(data: &Path, dir: &Path) -> std::process::Output {
    mirrorscope(
        &crate_dir(),
        &[
            "import-analysis",
            dir.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ],
    )
}

/// The current generation's trivial table, exported as Parquet into `dir`.
fn export_trivial(data: &Path, dir: &Path) -> Vec<(i64, i64)> {
    let output = mirrorscope(
        &crate_dir(),
        &[
            "export",
            "--data",
            data.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
            "--format",
            "parquet",
            "--tables",
            "trivial",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let (_, rows, _) = read_parquet(&dir.join("trivial.parquet"));
    rows.iter()
        .map(|row| (row[0].parse().unwrap(), row[1].parse().unwrap()))
        .collect()
}

#[test]
fn imported_clusters_become_the_generation_s() {
    if !slow_tests_wanted("import") {
        return;
    }
    let data = index_shipped_crawl_into("import");
    let dir = tempfile::tempdir().unwrap();
    let exported = dir.path().join("exported");
    let rows = export_trivial(&data, &exported);
    let before = stats(&data);
    let clusters_before = json(&mirrorscope(
        &crate_dir(),
        &["clusters", "--data", data.to_str().unwrap(), "--json"],
    ));

    // The generation's own clusters, imported: a new generation with the
    // same analysis.
    let first = current(&data);
    let output = import(&data, &exported);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("imported the analysis of 1 file(s)"));
    let second = current(&data);
    assert_ne!(first, second, "a new generation");
    let after = stats(&data);
    for figure in [
        "pages",
        "trivial_clusters",
        "near_duplicate_pages",
        "compared_pages",
    ] {
        assert_eq!(before[figure], after[figure], "{figure}");
    }
    let clusters_after = json(&mirrorscope(
        &crate_dir(),
        &["clusters", "--data", data.to_str().unwrap(), "--json"],
    ));
    assert_eq!(clusters_before["clusters"], clusters_after["clusters"]);

    // Clusters computed from the first generation are refused now.
    let output = import(&data, &exported);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains(&format!(
            "computed from generation {first}, the current one is {second}"
        )),
        "{}",
        stderr(&output)
    );
    assert_eq!(current(&data), second, "nothing written");

    // Every page alone (one cluster each, numbered as Spark might, from a
    // folder of part files): no copies, no collections, no mirrors by the
    // clusters.
    let alone = dir.path().join("alone");
    std::fs::create_dir_all(alone.join("trivial")).unwrap();
    std::fs::write(alone.join("GENERATION"), format!("{second}\n")).unwrap();
    let half = rows.len() / 2;
    let singletons: Vec<(i64, i64)> = rows.iter().map(|&(page, _)| (page, 1000 + page)).collect();
    write_trivial_parquet(&alone.join("trivial/part-0.parquet"), &singletons[..half]);
    // Issue 34: Snappy, the default of pyarrow and DuckDB, is read.
    write_trivial_parquet_compressed(
        &alone.join("trivial/part-1.parquet"),
        &singletons[half..],
        parquet::basic::Compression::SNAPPY,
    );
    let output = import(&data, &alone);
    assert!(output.status.success(), "{}", stderr(&output));
    let single = stats(&data);
    assert_eq!(single["trivial_clusters"], 0);
    assert_eq!(single["near_duplicate_pages"], 0);
    assert_eq!(single["collections"]["collection_clusters"], 0);
    assert!(
        before["collections"]["collection_clusters"]
            .as_u64()
            .unwrap()
            > 0
    );
    let mirrors = json(&mirrorscope(
        &crate_dir(),
        &[
            "mirrors",
            "--data",
            data.to_str().unwrap(),
            "--ranker",
            "clusters",
            "--json",
        ],
    ));
    assert_eq!(
        mirrors["ranked"], 0,
        "no shared clusters, no pair: {mirrors}"
    );
}

/// The tests that import refused tables into the shared crawl's folder
/// take turns: each import takes its writer lock, and a second import at
/// once would be refused as busy, not for its tables.
static SHARED_FOLDER: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn tables_that_cannot_be_the_generation_s_are_refused() {
    let _turn = SHARED_FOLDER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let crawl = shipped_crawl();
    // Refused before any write: the shared crawl's folder stays as it is
    // (an import that went through would need its own folder).
    let data = crawl.path();
    let dir = tempfile::tempdir().unwrap();
    let rows = export_trivial(data, dir.path());
    let generation = current(data);
    let case = |name: &str, rows: &[(i64, i64)]| {
        let folder = dir.path().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("GENERATION"), &generation).unwrap();
        write_trivial_parquet(&folder.join("trivial.parquet"), rows);
        let output = import(data, &folder);
        assert!(!output.status.success(), "{name} was imported");
        assert_eq!(current(data), generation, "{name}: nothing written");
        stderr(&output)
    };

    let message = case("short", &rows[..rows.len() - 1]);
    assert!(
        message.contains(&format!(
            "{} clusters given for the {} pages",
            rows.len() - 1,
            rows.len()
        )),
        "{message}"
    );
    let mut twice = rows.clone();
    twice.push(rows[3]);
    assert!(case("twice", &twice).contains("page 3 is given two clusters"));
    // Issue 34: a table repeating a page many times is refused at the first
    // repeat (its row named), not once every row is held.
    let mut repeated = rows.clone();
    repeated.extend(std::iter::repeat_n(rows[3], 200_000));
    let message = case("repeated", &repeated);
    assert!(
        message.contains(&format!(
            "row {}: page 3 is given two clusters",
            rows.len() + 1
        )),
        "{message}"
    );
    let mut outside = rows.clone();
    outside.push((rows.len() as i64 + 7, 0));
    assert!(
        case("outside", &outside).contains(&format!(
            "page {} is not a page of the current generation (it has {})",
            rows.len() + 7,
            rows.len()
        )),
        "outside"
    );
    let mut gap = rows.clone();
    gap.remove(5);
    assert!(case("gap", &gap).contains("page 5 has no cluster"));

    // A page the similarity stage does not compare (no text) cannot share
    // a cluster.
    let pages_json = json(&mirrorscope(
        &crate_dir(),
        &["stats", "--data", crawl.data.as_str(), "--json"],
    ));
    let compared = pages_json["compared_pages"].as_u64().unwrap() as usize;
    if compared < rows.len() {
        let (_, pages, _) = {
            let out = dir.path().join("pages");
            let output = mirrorscope(
                &crate_dir(),
                &[
                    "export",
                    "--data",
                    crawl.data.as_str(),
                    "--out",
                    out.to_str().unwrap(),
                    "--format",
                    "parquet",
                    "--tables",
                    "pages",
                ],
            );
            assert!(output.status.success());
            read_parquet(&out.join("pages.parquet"))
        };
        // status is the fifth column; a page answered other than 200 is
        // not compared.
        let other = pages.iter().position(|row| row[4] != "200").unwrap();
        let mut joined = rows.clone();
        let partner = if other == 0 { 1 } else { 0 };
        joined[other].1 = joined[partner].1;
        let message = case("joined", &joined);
        assert!(message.contains("has no text to compare"), "{message}");
    }

    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let output = import(data, &empty);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("holds neither trivial clusters"),
        "{}",
        stderr(&output)
    );
    assert_eq!(current(data), generation);
}

#[test]
fn grown_clusters_growth_could_not_give_are_refused() {
    let _turn = SHARED_FOLDER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let crawl = shipped_crawl();
    // Refused before any write, as above.
    let data = crawl.path();
    let dir = tempfile::tempdir().unwrap();
    let rows = export_trivial(data, dir.path());
    let generation = current(data);
    // The first page of each trivial cluster of two pages or more: a page
    // growth sees (a later page can be a second name of an earlier one).
    let mut firsts: Vec<(i64, i64)> = Vec::new();
    let mut sizes: std::collections::HashMap<i64, usize> = Default::default();
    for &(_, cluster) in &rows {
        *sizes.entry(cluster).or_default() += 1;
    }
    for &(page, cluster) in &rows {
        if sizes[&cluster] >= 2 && !firsts.iter().any(|&(_, seen)| seen == cluster) {
            firsts.push((page, cluster));
        }
    }
    let (first, other) = (firsts[0], firsts[1]);
    let figures = r#"{"link_summary_rows": 1, "virtual_links": 0, "merge_edges": 1,
        "extended_merge_edges": 0, "components": 1}"#;
    // `collections`: (collection, page) of one grown cluster; `trivial` the
    // clusters it grew from.
    let case = |name: &str, collections: &[(i64, i64)], trivial: &[i64], figures: Option<&str>| {
        let folder = dir.path().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("GENERATION"), &generation).unwrap();
        let grown: Vec<Vec<i64>> = collections
            .iter()
            .map(|&(collection, page)| vec![first.1, 0, collection, 0, page])
            .collect();
        write_int_parquet(
            &folder.join("grown.parquet"),
            &["component", "growth", "collection", "position", "page"],
            &grown,
        );
        if !trivial.is_empty() {
            let listed: Vec<Vec<i64>> = (0..)
                .zip(trivial)
                .map(|(position, &cluster)| vec![first.1, 0, position, cluster])
                .collect();
            write_int_parquet(
                &folder.join("grown_trivial.parquet"),
                &["component", "growth", "position", "cluster"],
                &listed,
            );
        }
        if let Some(figures) = figures {
            std::fs::write(folder.join("collections.json"), figures).unwrap();
        }
        let output = import(data, &folder);
        assert!(!output.status.success(), "{name} was imported");
        assert_eq!(current(data), generation, "{name}: nothing written");
        stderr(&output)
    };

    let message = case(
        "twice",
        &[(0, first.0), (1, first.0)],
        &[first.1],
        Some(figures),
    );
    assert!(
        message.contains(&format!("page {} is in two grown collections", first.0)),
        "{message}"
    );
    let message = case(
        "unnamed",
        &[(0, first.0), (1, other.0)],
        &[first.1],
        Some(figures),
    );
    assert!(
        message.contains(&format!(
            "page {} of grown cluster 0 is in trivial cluster {}, which the cluster does not name",
            other.0, other.1
        )),
        "{message}"
    );
    let message = case(
        "outside",
        &[(0, first.0), (1, rows.len() as i64)],
        &[first.1],
        Some(figures),
    );
    assert!(
        message.contains(&format!(
            "page {} is not a page of the generation",
            rows.len()
        )),
        "{message}"
    );
    let message = case("no trivial", &[(0, first.0)], &[], Some(figures));
    assert!(
        message.contains("holds grown clusters but not the trivial clusters they grew from"),
        "{message}"
    );
    let message = case("no figures", &[(0, first.0)], &[first.1], None);
    assert!(message.contains("collections.json"), "{message}");
    let message = case(
        "bad figures",
        &[(0, first.0)],
        &[first.1],
        Some(r#"{"link_summary_rows": -1}"#),
    );
    assert!(message.contains("no figure link_summary_rows"), "{message}");

    // Rankings of mirrored hosts that cannot be the generation's.
    let hosts = stats(data)["hosts"].as_u64().unwrap() as i64;
    let ranking = |name: &str, rows: &[(i64, i64, f64)]| {
        let folder = dir.path().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("GENERATION"), &generation).unwrap();
        write_ranking_parquet(&folder.join("mirror_pairs.parquet"), rows);
        let output = import(data, &folder);
        assert!(!output.status.success(), "{name} was imported");
        assert_eq!(current(data), generation, "{name}: nothing written");
        stderr(&output)
    };
    let message = ranking("far host", &[(0, hosts, 1.0)]);
    assert!(
        message.contains(&format!(
            "the clusters ranking: host {hosts} is not one of the generation's {hosts} hosts"
        )),
        "{message}"
    );
    assert!(ranking("self", &[(1, 1, 1.0)]).contains("host 1 is paired with itself"));
    assert!(
        ranking("twice", &[(0, 1, 1.0), (1, 0, 2.0)]).contains("hosts 1 and 0 are listed twice")
    );
    assert!(ranking("zero", &[(0, 1, 0.0)]).contains("is not a positive number"));
}

#[test]
fn imported_rankings_replace_the_rankers_own() {
    if !slow_tests_wanted("import") {
        return;
    }
    let data = index_shipped_crawl_into("import-rankings");
    let data_str = data.to_str().unwrap();
    let ranking = |ranker: &str| {
        json(&mirrorscope(
            &crate_dir(),
            &["mirrors", "--data", data_str, "--ranker", ranker, "--json"],
        ))
    };
    let pairs = |report: Value| reported_pairs(&report["pairs"]);
    let paths_before = pairs(ranking("paths"));
    let prefix_before = pairs(ranking("prefix"));
    assert!(prefix_before.len() > 2);

    // A prefix ranking of two pairs, the weaker first and the host ids
    // given either way round: the generation ranks them by score.
    let hosts = {
        let dir = tempfile::tempdir().unwrap();
        let output = mirrorscope(
            &crate_dir(),
            &[
                "export",
                "--data",
                data_str,
                "--out",
                dir.path().to_str().unwrap(),
                "--tables",
                "hosts",
            ],
        );
        assert!(output.status.success(), "{}", stderr(&output));
        let text = std::fs::read_to_string(dir.path().join("hosts.tsv")).unwrap();
        text.lines()
            .skip(1)
            .map(|line| line.split('\t').nth(1).unwrap().to_string())
            .collect::<Vec<String>>()
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("GENERATION"), current(&data)).unwrap();
    write_ranking_parquet(
        &dir.path().join("prefix_pairs.parquet"),
        &[(3, 1, 2.5), (0, 2, 7.25)],
    );
    let output = import(&data, dir.path());
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        pairs(ranking("prefix")),
        [
            (hosts[0].clone(), hosts[2].clone(), 7.25),
            (hosts[1].clone(), hosts[3].clone(), 2.5)
        ]
    );
    // The other rankers' are the generation's own.
    assert_eq!(pairs(ranking("paths")), paths_before);
}
