//! The analysis as Spark jobs (spark/, docs/SCALING.md) against the Rust
//! stages: a crawl exported as Parquet, the jobs run on Spark, and what
//! they compute compared with the generation's ([`analysis_is_the_rust_one`],
//! which the cluster test, tests/it/spark_cluster.rs, runs on the shipped
//! crawl's analysis on a standalone cluster, and the development crawl's
//! test, tests/it/devcrawl.rs, on its crawl 1 in local mode): the trivial
//! clusters page by page with the similarity stage's figures; the similar
//! clusters as grown (from Spark's own trivial clusters), by growth's
//! figures and by importing them, which must give the generation's clusters,
//! collections and mirrors to the byte; then the `clusters` ranker's
//! mirrored host pairs pair by pair with their scores, and the `prefix`
//! ranker's (the path-prefix evidence) in order with their scores. Here, in
//! local mode: strict growth (cho §3, without §4's extended clusters) on
//! the shipped crawl, and min-hash clusters imported and served. Crawl 1 of
//! the development crawl has clusters the split by path divides (the
//! shipped crawl's have none).
//!
//! The jobs of every test run in one Spark session ([`Jobs`]), taking
//! turns. Each job has 15 minutes ([`JOB_TIMEOUT`]); one that takes longer
//! fails the test.
//!
//! Needs Java and PySpark: `.ci/run` installs them (spark/setup.sh) and sets
//! `MIRRORSCOPE_SPARK_PYTHON` to the environment's python. Without it the
//! test says so and passes, as it does when Java could not be installed.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use common::*;

/// The python that has PySpark, or `None` (saying why) when the test
/// cannot run here.
pub fn spark_python() -> Option<String> {
    match std::env::var("MIRRORSCOPE_SPARK_PYTHON") {
        Ok(python) if !python.is_empty() => Some(python),
        _ => {
            eprintln!(
                "skipped: MIRRORSCOPE_SPARK_PYTHON is not set (`bash spark/setup.sh` installs Java and PySpark and prints it; .ci/run sets it)"
            );
            None
        }
    }
}

/// How long one job may take here: its usual minute or two on these
/// crawls, many times over, before the test gives up on it.
pub const JOB_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The Spark session every test of the run shares: `python -m
/// mirrorscope_spark jobs`, which runs the jobs written to its standard
/// input one after another and answers each with a line of JSON. One JVM
/// started and warmed up once, instead of once a job; the tests take turns
/// (the lock), as Spark in local mode has the machine's cores anyway.
pub struct Jobs {
    child: Child,
    asks: ChildStdin,
    answers: mpsc::Receiver<String>,
    /// The session's standard error (Spark's log), for a failure's message.
    log: PathBuf,
}

/// Also taken by tests that run Spark jobs of their own (tests/it/spark_cluster.rs):
/// on two cores, the jobs take turns.
pub static JOBS: Mutex<Option<Jobs>> = Mutex::new(None);

impl Jobs {
    fn start(python: &str) -> Jobs {
        let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join("spark-jobs.log");
        let mut child = Command::new(python)
            // As many shuffle partitions as local mode has cores: on these
            // crawls more only add tasks (8, the jobs' default, took 15%
            // longer), and two still split every shuffle.
            .args(["-m", "mirrorscope_spark", "jobs", "--master", "local[2]"])
            .args(["--partitions", "2"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .current_dir(crate_dir().join("spark"))
            .spawn()
            .expect("the environment's python runs");
        let asks = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Jobs {
            child,
            asks,
            answers,
            log,
        }
    }

    /// The end of the session's log.
    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let start = log.len().saturating_sub(6000);
        let start = (start..log.len())
            .find(|&i| log.is_char_boundary(i))
            .unwrap_or(log.len());
        log[start..].to_string()
    }
}

/// Runs the job `job` of `spark/mirrorscope_spark` on the tables in
/// `tables`, into `out`, with `config` (a mirrorscope config.json) when
/// given, in the shared session ([`Jobs`]); returns the figures it
/// reports. Fails the test when the job fails or outlasts [`JOB_TIMEOUT`].
fn run_job(
    python: &str,
    job: &str,
    tables: &Path,
    out: &Path,
    config: Option<&Path>,
) -> serde_json::Value {
    let asked = serde_json::json!({
        "job": job,
        "tables": tables,
        "out": out,
        "config": config,
    });
    // A test that failed holding the lock leaves the session as it was.
    let mut jobs = JOBS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if jobs
        .as_mut()
        .is_none_or(|jobs| jobs.child.try_wait().unwrap().is_some())
    {
        *jobs = Some(Jobs::start(python));
    }
    let session = jobs.as_mut().unwrap();
    let written = writeln!(session.asks, "{asked}").and_then(|()| session.asks.flush());
    let answer = match written.map(|()| session.answers.recv_timeout(JOB_TIMEOUT)) {
        Ok(Ok(answer)) => answer,
        failed => {
            let _ = session.child.kill();
            let _ = session.child.wait();
            let log = session.log_tail();
            *jobs = None;
            drop(jobs);
            panic!("the Spark session ended or ran the job {job} for more than {} s ({failed:?}):\n{log}", JOB_TIMEOUT.as_secs());
        }
    };
    drop(jobs);
    let mut answer: serde_json::Value =
        serde_json::from_str(&answer).expect("the session answers in JSON");
    if let Some(error) = answer.get("error") {
        panic!(
            "the Spark job {job} failed:\n{}",
            error.as_str().unwrap_or_default()
        );
    }
    answer["figures"].take()
}

/// Exports `tables` of `data` into `out` in `format`.
fn export(data: &str, out: &Path, format: &str, tables: &str) {
    let output = mirrorscope(
        &crate_dir(),
        &[
            "export",
            "--data",
            data,
            "--out",
            out.to_str().unwrap(),
            "--format",
            format,
            "--tables",
            tables,
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
}

/// Exports the tables the jobs read from `data` into `out`.
pub fn export_parquet(data: &str, out: &Path) {
    export(
        data,
        out,
        "parquet",
        "hosts,pages,links,uncrawled,chunks,megashingles,trivial,mirrors",
    );
}

/// The current generation's clusters, collections and mirrors, as the
/// text `export` writes, by table.
pub fn analysis_tables(data: &str) -> Vec<(&'static str, String)> {
    let dir = tempfile::tempdir().unwrap();
    let tables = ["clusters", "collections", "collection_pages", "mirrors"];
    export(data, dir.path(), "tsv", &tables.join(","));
    tables
        .into_iter()
        .map(|table| {
            let text = std::fs::read_to_string(dir.path().join(format!("{table}.tsv"))).unwrap();
            (table, text)
        })
        .collect()
}

/// Imports the jobs' `results` into `data` and checks that the new
/// generation's clusters, collections and mirrors are those of `expected`.
fn imported_analysis_is(data: &str, results: &Path, expected: &[(&str, String)]) {
    let imported = mirrorscope(
        &crate_dir(),
        &["import-analysis", results.to_str().unwrap(), "--data", data],
    );
    assert!(imported.status.success(), "{}", stderr(&imported));
    for ((table, rust), (_, spark)) in expected.iter().zip(analysis_tables(data)) {
        assert!(
            !rust.is_empty() && *rust == spark,
            "{table}: the similar clusters grown on Spark give another table than the Rust stage's"
        );
    }
}

/// Growth's figures: as the Spark job reports them against the manifest's.
fn growth_figures_agree(spark: &serde_json::Value, rust: &serde_json::Value) {
    for figure in [
        "alias_pages",
        "virtual_links",
        "link_summary_rows",
        "merge_edges",
        "extended_merge_edges",
        "clusters_grown",
    ] {
        assert_eq!(
            spark[figure], rust[figure],
            "{figure}: Spark said {}, the Rust stage {}",
            spark[figure], rust[figure]
        );
    }
}

/// Runs the analysis jobs on the data folder `data` and checks their
/// trivial clusters, figures, similar clusters and mirrored pairs against
/// the generation's ([`analysis_is_the_rust_one`]). Imports the jobs'
/// results: writes a generation (the same analysis) into `data`.
pub fn spark_analysis_matches(python: &str, data: &str) {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    let results = dir.path().join("results");
    export_parquet(data, &tables);
    let config = Path::new(data).join("config.json");
    let output = run_job(
        python,
        "analysis",
        &tables,
        &results,
        config.exists().then_some(config.as_path()),
    );
    analysis_is_the_rust_one(data, &tables, &results, &output);
}

/// Checks what the `analysis` job made of `tables` (exported from `data`'s
/// current generation, or from one holding the same crawl and analysis)
/// into `results`, reporting `output`: the same
/// trivial clusters row for row, the same figures, the same pairs of both
/// rankers; then imports the results into `data` and checks the similar
/// clusters, collections and mirrors are the generation's.
pub fn analysis_is_the_rust_one(
    data: &str,
    tables: &Path,
    results: &Path,
    output: &serde_json::Value,
) {
    let figures = &output["similarity"];

    // The same table: every page in the same cluster, numbered alike.
    let (_, rust, _) = read_parquet(&tables.join("trivial.parquet"));
    let (columns, mut spark, kinds) = read_parquet(&results.join("trivial"));
    assert_eq!(columns, ["page", "cluster"]);
    assert_eq!(kinds, ["int", "int"]);
    spark.sort_by_key(|row| row[0].parse::<u64>().unwrap());
    assert_eq!(spark.len(), rust.len(), "one row per page");
    let differing: Vec<_> = rust
        .iter()
        .zip(&spark)
        .filter(|(rust, spark)| rust != spark)
        .take(10)
        .collect();
    assert!(
        differing.is_empty(),
        "pages whose trivial cluster differs (Rust, Spark): {differing:?}"
    );

    let stats = json(&mirrorscope(
        &crate_dir(),
        &["stats", "--data", data, "--json"],
    ));
    growth_figures_agree(&output["collections"], &stats["collections"]);
    for figure in [
        "compared_pages",
        "distinct_texts",
        "trivial_clusters",
        "near_duplicate_pages",
        "boilerplate_chunks",
        "chunk_pairs",
        "megashingle_pairs",
    ] {
        assert_eq!(
            figures[figure], stats[figure],
            "{figure}: Spark said {}, the Rust stage {}",
            figures[figure], stats[figure]
        );
    }

    // The `clusters` ranker: the same pairs with the same scores, and the
    // same pages of each side in shared clusters.
    let reported = json(&mirrorscope(
        &crate_dir(),
        &["mirrors", "--data", data, "--ranker", "clusters", "--json"],
    ));
    let pairs = |list: &serde_json::Value| {
        let mut pairs: Vec<(String, String, u64)> = reported_pairs(list)
            .into_iter()
            .map(|(a, b, score)| (a, b, score as u64))
            .collect();
        pairs.sort();
        pairs
    };
    let (spark_pairs, rust_pairs) = (
        pairs(&output["mirrors"]["pairs"]),
        pairs(&reported["pairs"]),
    );
    assert!(!rust_pairs.is_empty());
    assert_eq!(spark_pairs, rust_pairs, "the clusters ranker's pairs");
    let (columns, exported, _) = read_parquet(&tables.join("mirrors.parquet"));
    let column = |name: &str| columns.iter().position(|c| c == name).unwrap();
    let (_, hosts, _) = read_parquet(&tables.join("hosts.parquet"));
    let name_of: std::collections::HashMap<&str, &str> = hosts
        .iter()
        .map(|row| (row[0].as_str(), row[1].as_str()))
        .collect();
    let mut compared = 0;
    for pair in output["mirrors"]["pairs"].as_array().unwrap() {
        let row = exported.iter().find(|row| {
            name_of[row[column("host_a")].as_str()] == pair["a"]
                && name_of[row[column("host_b")].as_str()] == pair["b"]
        });
        if let Some(row) = row {
            compared += 1;
            assert_eq!(
                pair["clustered_pages"],
                serde_json::json!([
                    row[column("clustered_pages_a")].parse::<u64>().unwrap(),
                    row[column("clustered_pages_b")].parse::<u64>().unwrap()
                ]),
                "{pair}"
            );
        }
    }
    assert!(
        compared > 0,
        "some pair of the ranker is in the mirrors table"
    );

    // The `prefix` ranker (bharat-2000's path-prefix evidence): the same
    // pairs in the same order with the same scores, to the bit (Spark adds
    // each pair's terms in the order the Rust ranker does).
    let reported = json(&mirrorscope(
        &crate_dir(),
        &["mirrors", "--data", data, "--ranker", "prefix", "--json"],
    ));
    let rust_prefix = reported_pairs(&reported["pairs"]);
    assert!(!rust_prefix.is_empty());
    assert_eq!(
        reported_pairs(&output["prefix"]["pairs"]),
        rust_prefix,
        "the prefix ranker's pairs"
    );

    // Spark's trivial and grown clusters and its two rankings imported: the
    // same similar clusters, collections and mirrors as the Rust stages
    // computed.
    let expected = analysis_tables(data);
    imported_analysis_is(data, results, &expected);
}

#[test]
fn strict_growth_on_spark_is_the_rust_growth() {
    let Some(python) = spark_python() else {
        return;
    };
    let data = index_shipped_crawl_into("spark-strict");
    let data_str = data.to_str().unwrap();
    let extended = json(&mirrorscope(
        &crate_dir(),
        &["stats", "--data", data_str, "--json"],
    ));
    // Strict similar clusters (cho §3: a = s = d = b only), as grown (no
    // joining by folders): the Rust stage grows them on the generation's
    // own trivial clusters, imported.
    let config_path = data.join("config.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["collections"]["extended"] = false.into();
    config["collections"]["folders"] = false.into();
    std::fs::write(&config_path, config.to_string()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("own");
    export_parquet(data_str, &own);
    let imported = mirrorscope(
        &crate_dir(),
        &["import-analysis", own.to_str().unwrap(), "--data", data_str],
    );
    assert!(imported.status.success(), "{}", stderr(&imported));
    let strict = json(&mirrorscope(
        &crate_dir(),
        &["stats", "--data", data_str, "--json"],
    ));
    assert_eq!(strict["collections"]["extended_merge_edges"], 0);
    assert_ne!(
        strict["collections"]["clusters"], extended["collections"]["clusters"],
        "strict clusters as grown are not the default's on the shipped crawl"
    );

    let tables = dir.path().join("tables");
    let results = dir.path().join("results");
    export_parquet(data_str, &tables);
    let output = run_job(
        &python,
        "collections",
        &tables,
        &results,
        Some(&config_path),
    );
    growth_figures_agree(&output["collections"], &strict["collections"]);
    let expected = analysis_tables(data_str);
    imported_analysis_is(data_str, &results, &expected);
}

#[test]
fn clusters_computed_on_spark_are_imported_and_served() {
    let Some(python) = spark_python() else {
        return;
    };
    // A data folder of its own: the import writes a generation.
    let data = index_shipped_crawl_into("spark-import");
    let data_str = data.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    let results = dir.path().join("results");
    export_parquet(data_str, &tables);
    // Clusters the Rust stage did not compute: min-hash megashingles
    // instead of shared chunks.
    let config = dir.path().join("config.json");
    std::fs::write(&config, r#"{"similarity": {"test": "minhash"}}"#).unwrap();
    let output = run_job(&python, "similarity", &tables, &results, Some(&config));
    let before = json(&mirrorscope(
        &crate_dir(),
        &["stats", "--data", data_str, "--json"],
    ));
    assert_ne!(
        output["similarity"]["trivial_clusters"], before["trivial_clusters"],
        "the min-hash clusters differ from the chunk clusters on the shipped crawl"
    );

    let imported = mirrorscope(
        &crate_dir(),
        &[
            "import-analysis",
            results.to_str().unwrap(),
            "--data",
            data_str,
        ],
    );
    assert!(imported.status.success(), "{}", stderr(&imported));
    let after = json(&mirrorscope(
        &crate_dir(),
        &["stats", "--data", data_str, "--json"],
    ));
    for figure in ["trivial_clusters", "near_duplicate_pages"] {
        assert_eq!(after[figure], output["similarity"][figure], "{figure}");
    }
    // The generation's trivial table is Spark's, row for row.
    let again = dir.path().join("again");
    export_parquet(data_str, &again);
    let (_, rust, _) = read_parquet(&again.join("trivial.parquet"));
    let (_, mut spark, _) = read_parquet(&results.join("trivial"));
    spark.sort_by_key(|row| row[0].parse::<u64>().unwrap());
    assert!(
        rust == spark,
        "the imported generation holds Spark's clusters"
    );

    // And the read side works from them: a page's copies, as `similar`
    // (and the site's page view) shows them, are its Spark cluster's.
    let (_, pages, _) = read_parquet(&again.join("pages.parquet"));
    let mut members: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for row in &spark {
        members
            .entry(row[1].as_str())
            .or_default()
            .push(row[0].parse().unwrap());
    }
    let cluster = members
        .values()
        .find(|pages| pages.len() >= 3)
        .expect("a cluster of three pages or more");
    let shown = json(&mirrorscope(
        &crate_dir(),
        &[
            "similar",
            &pages[cluster[0]][1],
            "--data",
            data_str,
            "--json",
        ],
    ));
    assert_eq!(shown["cluster_size"], cluster.len(), "{shown}");
    let mut copies: Vec<&str> = shown["copies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|copy| copy["url"].as_str().unwrap())
        .collect();
    copies.sort();
    let mut expected: Vec<&str> = cluster[1..]
        .iter()
        .map(|&page| pages[page][1].as_str())
        .collect();
    expected.sort();
    assert_eq!(copies, expected);
}
