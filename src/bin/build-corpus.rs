//! Builds the shipped demo crawl (`corpus/`) from the documentation archives
//! in the sources folder: a simulated crawl of a small web of primary hosts,
//! mirrors of many kinds and unrelated manuals, written as WARC/1.1 (gzip per
//! record), plus `truth.tsv`, the ground truth of which pages are copies.
//!
//! The output depends only on the archives and on the plan in
//! `build_corpus/plan.rs`: fixed clock, sorted iteration, hash-based choices
//! with a fixed seed, gzip members with mtime 0. Same inputs, same bytes.
//!
//! ```text
//! cargo run --release --features corpus-builder --bin build-corpus -- \
//!     --sources ../shared/sources --out corpus
//! ```
//!
//! `--crawl second` writes, instead, the same web crawled four weeks later
//! (one mirror updated, one gone, one new, a few pages revised: see
//! `plan::second_hosts`), which the tests of `mirrorscope evolve` and
//! `index --add` use. It is not shipped: it is made when needed.

#[path = "build_corpus/crawl.rs"]
mod crawl;
#[path = "build_corpus/digest.rs"]
mod digest;
#[path = "build_corpus/html.rs"]
mod html;
#[path = "build_corpus/http.rs"]
mod http;
#[path = "build_corpus/plan.rs"]
mod plan;
#[path = "build_corpus/site.rs"]
mod site;
#[path = "build_corpus/sources.rs"]
mod sources;
#[path = "build_corpus/time.rs"]
mod time;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};

use crate::crawl::{Crawler, TruthRow};
use crate::plan::{Host, Schedule};
use crate::sources::Tree;

/// Build the demo crawl (WARC files and truth.tsv) from the source archives.
#[derive(Parser)]
#[command(name = "build-corpus")]
struct Args {
    /// Folder holding the source archives (NAME.tar.xz).
    #[arg(long, default_value = "../shared/sources")]
    sources: PathBuf,
    /// Output folder (WARC files crawl-NN.warc.gz and truth.tsv are replaced).
    #[arg(long, default_value = "corpus")]
    out: PathBuf,
    /// Which crawl: the shipped one, or the same web four weeks later.
    #[arg(long, value_enum, default_value = "first")]
    crawl: Which,
}

#[derive(Clone, Copy, ValueEnum)]
enum Which {
    First,
    Second,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("build-corpus: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<()> {
    let (hosts, schedule) = match args.crawl {
        Which::First => (plan::hosts(), plan::FIRST),
        Which::Second => (plan::second_hosts(), plan::SECOND),
    };
    let trees = load_trees(&args.sources, &hosts)?;
    check_dates(&hosts, &trees, &schedule)?;
    fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    remove_old_warcs(&args.out)?;

    let mut crawler = Crawler::new(&trees, &args.out, schedule);
    let seeds: String = hosts
        .iter()
        .map(|host| format!("http://{}{}\n", host.name, host.seed))
        .collect();
    crawler.write_resource("urn:mirrorscope:demo-crawl:seeds", "text/plain", &seeds)?;
    crawler.run(&hosts)?;

    let truth = copies_only(&crawler.truth);
    write_truth(&args.out.join("truth.tsv"), &truth)?;
    print_summary(&crawler, &truth);
    Ok(())
}

/// Reads every archive the plan mounts, once each.
fn load_trees<'a>(sources: &Path, hosts: &'a [Host]) -> Result<BTreeMap<&'a str, Tree>> {
    let names: BTreeSet<&str> = hosts
        .iter()
        .flat_map(|host| host.mounts.iter().map(|mount| mount.source))
        .collect();
    let mut trees = BTreeMap::new();
    for name in names {
        eprintln!("reading {name}.tar.xz");
        trees.insert(name, Tree::load(sources, name)?);
    }
    Ok(trees)
}

/// Every file must be older than the crawl, and every rewriting mirror must
/// have synchronised after its source was made and before the crawl:
/// otherwise `Last-Modified` would lie.
fn check_dates(hosts: &[Host], trees: &BTreeMap<&str, Tree>, schedule: &Schedule) -> Result<()> {
    let (year, month, day, hour) = schedule.start;
    let crawl_start = time::unix(year, month, day, hour, 0, 0);
    for (name, tree) in trees {
        if tree.newest_mtime() >= crawl_start {
            bail!(
                "{name} has files newer than the crawl start {}",
                time::warc_date(crawl_start)
            );
        }
    }
    for host in hosts {
        for mount in host.mounts.iter().filter(|mount| mount.is_dated()) {
            let (year, month, day) = mount.synced;
            let synced = time::unix(year, month, day, 3, 15, 0);
            let newest = trees.get(mount.source).map_or(0, Tree::newest_mtime);
            if synced < newest || synced >= crawl_start {
                bail!(
                    "{}{}: sync date {} is not between the newest file of {} and the crawl start",
                    host.name,
                    mount.prefix,
                    time::warc_date(synced),
                    mount.source
                );
            }
        }
    }
    Ok(())
}

fn remove_old_warcs(out: &Path) -> Result<()> {
    for entry in fs::read_dir(out).with_context(|| format!("cannot read {}", out.display()))? {
        let path = entry?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with("crawl-") && name.ends_with(".warc.gz") {
            fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    Ok(())
}

/// Keeps the rows of pages that have a copy on another replica.
fn copies_only(rows: &BTreeSet<TruthRow>) -> Vec<TruthRow> {
    let mut replicas: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    for row in rows {
        replicas
            .entry((&row.collection, &row.page))
            .or_default()
            .insert(&row.replica);
    }
    rows.iter()
        .filter(|row| {
            replicas
                .get(&(row.collection.as_str(), row.page.as_str()))
                .is_some_and(|set| set.len() >= 2)
        })
        .cloned()
        .collect()
}

fn write_truth(path: &Path, rows: &[TruthRow]) -> Result<()> {
    let mut text = String::from("url\tcollection\treplica\tpage\n");
    for row in rows {
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\n",
            row.url, row.collection, row.replica, row.page
        ));
    }
    fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

fn print_summary(crawler: &Crawler<'_>, truth: &[TruthRow]) {
    println!(
        "| host | IP | role | HTML 200 | other 200 | 301 | 404 | revisits | encoded | bytes |"
    );
    println!("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for host in &crawler.hosts {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            host.name,
            host.ip,
            host.role,
            host.html_pages,
            host.other_ok,
            host.redirects,
            host.not_found,
            host.revisits,
            host.encoded,
            host.bytes
        );
    }
    println!();
    let records: Vec<String> = crawler
        .records
        .iter()
        .map(|(kind, count)| format!("{kind} {count}"))
        .collect();
    println!("records: {}", records.join(", "));
    let total: u64 = crawler.files.iter().map(|file| file.bytes).sum();
    for file in &crawler.files {
        println!(
            "{}: {} records, {} bytes",
            file.name, file.records, file.bytes
        );
    }
    println!("total: {} files, {} bytes", crawler.files.len(), total);
    let collections: BTreeSet<&str> = truth.iter().map(|row| row.collection.as_str()).collect();
    let replicas: BTreeSet<&str> = truth.iter().map(|row| row.replica.as_str()).collect();
    println!(
        "truth.tsv: {} rows, {} collections, {} replicas",
        truth.len(),
        collections.len(),
        replicas.len()
    );
    let mut per_replica: BTreeMap<&str, usize> = BTreeMap::new();
    for row in truth {
        *per_replica.entry(&row.replica).or_insert(0) += 1;
    }
    for (replica, count) in per_replica {
        println!("  {replica}: {count}");
    }
}
