//! The analysis as Spark jobs (spark/, docs/SCALING.md) against the Rust
//! stages: the shipped crawl exported as Parquet, the similarity job run on
//! Spark in local mode, and its trivial clusters compared with the
//! generation's, page by page, with the stage's figures. The development
//! crawl's test (tests/it/devcrawl.rs) does the same on its crawl 1, whose
//! clusters the split by path does divide (the shipped crawl's do not).
//!
//! Needs Java and PySpark: `.ci/run` installs them (spark/setup.sh) and sets
//! `MIRRORSCOPE_SPARK_PYTHON` to the environment's python. Without it the
//! test says so and passes, as it does when Java could not be installed.

use crate::common;

use std::path::Path;
use std::process::Command;

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

/// Runs `python -m mirrorscope_spark ARGS` from `spark/`.
fn run_job(python: &str, args: &[&str]) -> serde_json::Value {
    let output = Command::new(python)
        .args(["-m", "mirrorscope_spark"])
        .args(args)
        .current_dir(crate_dir().join("spark"))
        .output()
        .expect("the environment's python runs");
    assert!(
        output.status.success(),
        "the Spark job failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the job prints its figures as JSON")
}

/// Exports the tables the similarity job reads from `data` into `out`.
fn export_parquet(data: &str, out: &Path) {
    let output = mirrorscope(
        &crate_dir(),
        &[
            "export",
            "--data",
            data,
            "--out",
            out.to_str().unwrap(),
            "--format",
            "parquet",
            "--tables",
            "pages,chunks,megashingles,trivial",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
}

/// Runs the similarity job on the data folder `data` and checks its trivial
/// clusters and figures against the generation's.
pub fn spark_similarity_matches(python: &str, data: &str) {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    let results = dir.path().join("results");
    export_parquet(data, &tables);
    let mut args = vec![
        "similarity",
        "--tables",
        tables.to_str().unwrap(),
        "--out",
        results.to_str().unwrap(),
        "--master",
        "local[2]",
    ];
    let config = Path::new(data).join("config.json");
    let config = config.to_str().unwrap();
    if Path::new(config).exists() {
        args.extend(["--config", config]);
    }
    let figures = run_job(python, &args);

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
}

#[test]
fn spark_similarity_gives_the_rust_trivial_clusters_on_the_shipped_crawl() {
    let Some(python) = spark_python() else {
        return;
    };
    spark_similarity_matches(&python, &shipped_crawl().data);
}
