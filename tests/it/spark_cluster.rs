//! The whole pipeline on a real Spark cluster, not local mode: a standalone
//! master and two workers started on loopback from the PySpark install;
//! submitted to `spark://127.0.0.1:…`, the `pipeline` job (the shipped
//! crawl's WARC files read by ingest tasks, the index built by shard tasks),
//! then the `analysis` and `index` jobs (the analysis on Spark, checked
//! row for row against the Rust stages' as tests/it/spark.rs checks it,
//! imported, its index in shards). Each generation they make is the single machine's
//! `index` of the same crawl: the same clusters, collections, mirrors and
//! manifest, and for the 30 queries of tests/relevance/corpus-queries.tsv
//! (and broad words) the same rolled-up and flat results with the same
//! counts.
//!
//! Needs Java and PySpark (see tests/it/spark.rs); skipped with a message
//! without them.

use crate::common;
use crate::shards::{current, serve_alike};
use crate::spark::{analysis_tables, export_parquet, spark_python, JOBS, JOB_TIMEOUT};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// How long the master and the workers may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// A standalone Spark master and its workers, stopped when dropped.
struct Cluster {
    processes: Vec<Child>,
    url: String,
    logs: PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for process in &mut self.processes {
            let _ = process.kill();
            let _ = process.wait();
        }
    }
}

impl Cluster {
    /// A master and `workers` workers of one core each, on loopback, run by
    /// the `spark-class` of `python`'s PySpark.
    fn start(python: &str, workers: usize, dir: &Path) -> Cluster {
        let output = Command::new(python)
            .args([
                "-c",
                "import os, pyspark; print(os.path.dirname(pyspark.__file__))",
            ])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let home = PathBuf::from(stdout(&output).trim());
        let spark_class = home.join("bin/spark-class");
        let logs = dir.join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        let launch = |name: &str, arguments: &[&str]| {
            Command::new(&spark_class)
                .args(arguments)
                .env("SPARK_HOME", &home)
                .env("SPARK_LOCAL_IP", "127.0.0.1")
                .env("SPARK_LOG_DIR", &logs)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(logs.join(format!("{name}.log"))).unwrap())
                .spawn()
                .expect("spark-class runs")
        };
        let mut cluster = Cluster {
            processes: Vec::new(),
            url: String::new(),
            logs: logs.clone(),
        };
        cluster.processes.push(launch(
            "master",
            &[
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--webui-port",
                "0",
            ],
        ));
        let master_log = logs.join("master.log");
        cluster.url = cluster.wait_for(&master_log, |log| {
            let start = log.find("Starting Spark master at spark://")?;
            let url = log[start..].split_whitespace().nth(4)?;
            Some(url.to_string())
        });
        for worker in 0..workers {
            let work = dir.join(format!("worker-{worker}"));
            std::fs::create_dir_all(&work).unwrap();
            let url = cluster.url.clone();
            cluster.processes.push(launch(
                &format!("worker-{worker}"),
                &[
                    "org.apache.spark.deploy.worker.Worker",
                    &url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "1",
                    "--memory",
                    "2g",
                    "--webui-port",
                    "0",
                    "--work-dir",
                    work.to_str().unwrap(),
                ],
            ));
        }
        cluster.wait_for(&master_log, |log| {
            (log.matches("Registering worker").count() >= workers).then_some(())
        });
        cluster
    }

    /// Waits until `found` finds what it looks for in the log at `path`.
    fn wait_for<T>(&mut self, path: &Path, found: impl Fn(&str) -> Option<T>) -> T {
        let started = Instant::now();
        loop {
            let log = std::fs::read_to_string(path).unwrap_or_default();
            if let Some(value) = found(&log) {
                return value;
            }
            for process in &mut self.processes {
                if let Some(status) = process.try_wait().unwrap() {
                    panic!("a Spark process ended ({status}):\n{}", self.log_tails());
                }
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "the Spark cluster did not start in {} s:\n{}",
                START_TIMEOUT.as_secs(),
                self.log_tails()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn log_tails(&self) -> String {
        let mut text = String::new();
        for entry in std::fs::read_dir(&self.logs).unwrap().flatten() {
            let log = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let start = log.len().saturating_sub(3000);
            let start = (start..log.len())
                .find(|&at| log.is_char_boundary(at))
                .unwrap_or(log.len());
            text.push_str(&format!(
                "== {}\n{}\n",
                entry.path().display(),
                &log[start..]
            ));
        }
        text
    }
}

/// Submits `python -m mirrorscope_spark ARGUMENTS` to the cluster; returns
/// the figures it prints. Fails the test when it fails or outlasts
/// [`JOB_TIMEOUT`].
fn submit(python: &str, cluster: &Cluster, arguments: &[&str]) -> serde_json::Value {
    let log = cluster.logs.join(format!("job-{}.log", arguments[0]));
    let out = cluster.logs.join(format!("job-{}.json", arguments[0]));
    let mut job = Command::new(python)
        .args(["-m", "mirrorscope_spark"])
        .args(arguments)
        .args(["--master", &cluster.url, "--partitions", "2"])
        .args(["--driver-memory", "1g"])
        .current_dir(crate_dir().join("spark"))
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("the environment's python runs");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = job.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > JOB_TIMEOUT {
            let _ = job.kill();
            let _ = job.wait();
            panic!(
                "the job {} ran for more than {} s:\n{}",
                arguments[0],
                JOB_TIMEOUT.as_secs(),
                cluster.log_tails()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        status.success(),
        "the job {} failed ({status}):\n{}",
        arguments[0],
        cluster.log_tails()
    );
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).expect("the job prints JSON")
}

/// Checks the current generation of `found` holds the single machine's
/// analysis (`single`'s current generation, `gen-000001`): the same
/// clusters, collections, mirrors and manifest, and serves alike.
fn same_as_single_machine(single: &Path, found: &Path) {
    let expected = analysis_tables(single.to_str().unwrap());
    for ((table, single), (_, cluster)) in expected
        .iter()
        .zip(analysis_tables(found.to_str().unwrap()))
    {
        assert!(
            !single.is_empty() && *single == cluster,
            "{table}: the cluster's generation holds another table than the single machine's"
        );
    }
    let manifest = |data: &Path| -> serde_json::Value {
        let path = data
            .join("generations")
            .join(current(data))
            .join("manifest.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let (one, other) = (manifest(single), manifest(found));
    for part in ["counts", "similarity", "collections", "mirrors"] {
        assert_eq!(one[part], other[part], "{part}");
    }
    // The same crawl (the job names its files by their absolute paths).
    for field in ["id", "captures"] {
        assert_eq!(
            one["crawls"][0][field], other["crawls"][0][field],
            "{field}"
        );
    }
    assert_eq!(one["index"]["documents"], other["index"]["documents"]);
    serve_alike(single, found);
}

/// The shards a job's figures say were built, by number.
fn shards_built(figures: &serde_json::Value) -> Vec<u64> {
    figures["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|shard| shard["shard"].as_u64().unwrap())
        .collect()
}

#[test]
fn the_pipeline_and_the_analysis_on_a_standalone_cluster_serve_the_single_machine_result() {
    let Some(python) = spark_python() else {
        return;
    };
    // The Spark tests take turns on the two cores.
    let _turn = JOBS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let single = index_shipped_crawl_into("spark-cluster");
    let root = single.parent().unwrap().to_path_buf();
    let on_cluster = root.join("on-cluster");
    let cluster = Cluster::start(&python, 2, &root.join("cluster"));

    // WARC to served: the files read by tasks, the index built by tasks.
    let pipeline = submit(
        &python,
        &cluster,
        &[
            "pipeline",
            "--crawl",
            corpus_dir().to_str().unwrap(),
            "--data",
            on_cluster.to_str().unwrap(),
            "--parts",
            root.join("parts").to_str().unwrap(),
            "--files-per-task",
            "2",
            "--shards",
            "3",
            "--mirrorscope",
            env!("CARGO_BIN_EXE_mirrorscope"),
        ],
    );
    let parts = pipeline["parts"].as_array().unwrap();
    assert_eq!(pipeline["files"], 11, "{pipeline:#}");
    assert_eq!(parts.len(), 6, "{pipeline:#}");
    // Spark read the parts' Parquet tables: as many captures as the tasks
    // said they read ("PART: N file(s), M captures").
    let said: u64 = parts
        .iter()
        .map(|part| {
            let printed = part["printed"].as_str().unwrap();
            let words: Vec<&str> = printed.split_whitespace().collect();
            let at = words
                .iter()
                .position(|word| word.starts_with("captures"))
                .unwrap();
            words[at - 1].parse::<u64>().unwrap()
        })
        .sum();
    let tables = &pipeline["part_tables"];
    assert_eq!(tables["captures"], said, "{pipeline:#}");
    assert!(tables["links"].as_u64().unwrap() > said, "{pipeline:#}");
    assert!(tables["fingerprints"].as_u64().unwrap() > 0, "{pipeline:#}");
    assert!(
        tables["lines"].as_u64().unwrap() > tables["fingerprints"].as_u64().unwrap(),
        "{pipeline:#}"
    );
    assert_eq!(shards_built(&pipeline), [0, 1, 2], "{pipeline:#}");
    eprintln!(
        "ingest parts read by {} executor(s), index shards built by {}",
        pipeline["ingest_executors"], pipeline["executors"]
    );
    assert_eq!(current(&on_cluster), "gen-000001");
    same_as_single_machine(&single, &on_cluster);
    // The shards' tasks indexed the texts the ingest tasks extracted, as
    // many as the single machine's index stage took from its ingest.
    let kept_texts = |data: &Path| -> serde_json::Value {
        let path = data.join("generations/gen-000001/manifest.json");
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        manifest["index"]["kept_texts"].clone()
    };
    assert!(kept_texts(&single).as_u64().unwrap() > 0);
    assert_eq!(kept_texts(&on_cluster), kept_texts(&single));

    // Then the analysis on Spark, imported, its index built in shards.
    let tables = root.join("tables");
    export_parquet(on_cluster.to_str().unwrap(), &tables);
    let results = root.join("results");
    let analysis = submit(
        &python,
        &cluster,
        &[
            "analysis",
            "--tables",
            tables.to_str().unwrap(),
            "--out",
            results.to_str().unwrap(),
        ],
    );
    assert!(analysis["similarity"]["trivial_clusters"].as_u64().unwrap() > 0);
    // Row for row and figure for figure the Rust stages' analysis (the
    // check imports it into a copy of the single machine's folder, which
    // stays as `index` made it).
    let imported = root.join("single-imported");
    crate::shards::copy_folder(&single, &imported);
    crate::spark::analysis_is_the_rust_one(
        imported.to_str().unwrap(),
        &tables,
        &results,
        &analysis,
    );
    let index = submit(
        &python,
        &cluster,
        &[
            "index",
            "--data",
            on_cluster.to_str().unwrap(),
            "--analysis",
            results.to_str().unwrap(),
            "--shards",
            "3",
            "--mirrorscope",
            env!("CARGO_BIN_EXE_mirrorscope"),
        ],
    );
    drop(cluster);
    assert_eq!(shards_built(&index), [0, 1, 2], "{index:#}");
    assert_eq!(current(&on_cluster), "gen-000002");
    same_as_single_machine(&single, &on_cluster);
}
