//! A search index built in shards (`import-analysis --index-shards`, one
//! `index-shard` per shard, `publish`) serves what one index built from the
//! same analysis does: the same entries, in the same order, with the same
//! counts, facets and snippets, for the 30 queries of
//! tests/relevance/corpus-queries.tsv and for words on most pages, rolled
//! up and flat. Until every shard is built the staged generation is not
//! current and cannot be published; a shard built twice is kept once. An
//! index built from the texts ingest kept serves what one built from the
//! stored bodies does.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use mirrorscope::datadir::DataDir;
use mirrorscope::search::{Engine, Filters, Rank, Results, SearchConfig, SearchRequest};

fn run(args: &[&str]) -> std::process::Output {
    mirrorscope(&crate_dir(), args)
}

pub fn current(data: &Path) -> String {
    std::fs::read_to_string(data.join("CURRENT"))
        .unwrap()
        .trim()
        .to_string()
}

/// Every query the comparison runs: the relevance queries, then words
/// on most of the crawl's pages (many entries, many pages of results).
pub fn queries() -> Vec<String> {
    let tsv =
        std::fs::read_to_string(crate_dir().join("tests/relevance/corpus-queries.tsv")).unwrap();
    let mut queries: Vec<String> = tsv
        .lines()
        .skip(1)
        .map(|line| line.split('\t').next().unwrap().to_string())
        .collect();
    assert_eq!(queries.len(), 30);
    queries.extend(["the", "configuration", "version 2", "\"virtual host\""].map(String::from));
    queries
}

/// Page `page` of a search, its time left out.
fn searched(engine: &Engine, query: &str, rollup: bool, rank: Rank, page: usize) -> Results {
    let mut results = engine
        .search(&SearchRequest {
            query: query.to_string(),
            page,
            rollup,
            rank,
            as_typed: false,
            filters: Filters::default(),
        })
        .unwrap();
    results.took_ms = 0.0;
    results
}

/// Each entry as text, its score left out, with its score.
fn entries(results: &mut Results) -> Vec<(f32, String)> {
    std::mem::take(&mut results.groups)
        .into_iter()
        .map(|mut group| {
            let score = group.score;
            group.score = 0.0;
            (score, format!("{group:#?}"))
        })
        .collect()
}

/// What a search shows: as text, without the time it took and with each
/// score left out; the scores; and how many entries it shows; and the
/// entries of the pages beside it.
pub fn shown(engine: &Engine, query: &str, rollup: bool, rank: Rank, page: usize) -> Shown {
    let mut results = searched(engine, query, rollup, rank, page);
    let (scores, groups) = entries(&mut results).into_iter().unzip();
    let beside = |page: usize| entries(&mut searched(engine, query, rollup, rank, page));
    let before = if page > 1 {
        beside(page - 1)
    } else {
        Vec::new()
    };
    let after = if page < results.pages {
        beside(page + 1)
    } else {
        Vec::new()
    };
    Shown {
        text: format!("{results:#?}"),
        groups,
        scores,
        before,
        after,
    }
}

/// A search's results, their entries and their scores apart: tantivy sums
/// a document's term scores in an order that depends on its segment (a term
/// whose postings end is swapped out of the union, an intersection begins
/// with its segment's rarest word), so one document's score may differ in
/// its last bit between one index and its shards, and entries of scores
/// equal but for that bit (copies of one page, or two pages alike) may come
/// in another order. Where such entries run past the page's end (or began
/// on the page before), which of them the page shows is that order's: they
/// are compared with their run's entries on the page beside.
#[derive(Debug)]
pub struct Shown {
    /// The results without their entries.
    text: String,
    /// Each entry, its score left out.
    groups: Vec<String>,
    scores: Vec<f32>,
    /// The entries of the page before and of the page after, with their
    /// scores.
    before: Vec<(f32, String)>,
    after: Vec<(f32, String)>,
}

impl Shown {
    pub fn is_like(&self, other: &Shown) -> bool {
        let close = |first: f32, second: f32| (first - second).abs() <= 1e-5 * first.abs().max(1.0);
        if self.text != other.text
            || self.scores.len() != other.scores.len()
            || self.groups.len() != other.groups.len()
            || !self
                .scores
                .iter()
                .zip(&other.scores)
                .all(|(&a, &b)| close(a, b))
        {
            return false;
        }
        // Entries of scores equal but for their last bits, in any order.
        let mut start = 0;
        while start < self.groups.len() {
            let mut end = start + 1;
            while end < self.groups.len() && close(self.scores[start], self.scores[end]) {
                end += 1;
            }
            // The run's entries with those of its score on the pages
            // beside, where it reaches the page's edge.
            let score = self.scores[start];
            let gathered = |shown: &Shown| {
                let mut run = shown.groups[start..end].to_vec();
                let edges = [
                    (start == 0, &shown.before),
                    (end == shown.groups.len(), &shown.after),
                ];
                for (at_edge, beside) in edges {
                    if at_edge {
                        run.extend(
                            beside
                                .iter()
                                .filter(|(other, _)| close(*other, score))
                                .map(|(_, group)| group.clone()),
                        );
                    }
                }
                run
            };
            let (mut mine, mut theirs) = (gathered(self), gathered(other));
            mine.sort();
            theirs.sort();
            if mine != theirs {
                return false;
            }
            start = end;
        }
        true
    }
}

pub fn engine(data: &Path) -> Engine {
    let data = DataDir::open_existing(data).unwrap();
    Engine::open(&data, SearchConfig::default(), &Default::default()).unwrap()
}

pub fn copy_folder(from: &Path, to: &Path) {
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn an_index_built_in_shards_serves_what_one_index_does() {
    let whole = index_shipped_crawl_into("shards-whole");
    let root = whole.parent().unwrap().to_path_buf();
    let sharded: PathBuf = root.join("sharded");
    copy_folder(&whole, &sharded);
    // The analysis to import: the generation's own trivial clusters.
    let tables = root.join("tables");
    let output = run(&[
        "export",
        "--data",
        whole.to_str().unwrap(),
        "--out",
        tables.to_str().unwrap(),
        "--format",
        "parquet",
        "--tables",
        "trivial",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));

    let output = run(&[
        "import-analysis",
        tables.to_str().unwrap(),
        "--data",
        whole.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(current(&whole), "gen-000002");

    let data = sharded.to_str().unwrap();
    let output = run(&[
        "import-analysis",
        tables.to_str().unwrap(),
        "--data",
        data,
        "--index-shards",
        "3",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = stdout(&output);
    let staged = printed.lines().next().unwrap().to_string();
    assert!(staged.starts_with("staged-"), "{printed}");
    assert!(printed.contains("index-shard"), "{printed}");
    // Staged, not current: search goes on serving the generation before.
    assert_eq!(current(&sharded), "gen-000001");
    // That generation's index was built from the texts ingest kept; the
    // one imported into `whole` from the same analysis read every body
    // from the store again. They serve alike.
    let index_counts = |data: &Path, generation: &str| -> serde_json::Value {
        let path = data.join(format!("generations/{generation}/manifest.json"));
        let text = std::fs::read_to_string(path).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["index"].clone()
    };
    let (kept, reread) = (
        index_counts(&sharded, "gen-000001"),
        index_counts(&whole, "gen-000002"),
    );
    assert!(kept["kept_texts"].as_u64().unwrap() > 0, "{kept}");
    assert_eq!(reread["kept_texts"], 0, "{reread}");
    assert_eq!(kept["documents"], reread["documents"]);
    serve_alike(&whole, &sharded);

    let publish = || run(&["publish", &staged, "--data", data]);
    let output = publish();
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("shard 0 of 3 is missing"),
        "{}",
        stderr(&output)
    );
    assert_eq!(current(&sharded), "gen-000001");

    for (shard, of) in [("3", "3"), ("0", "4")] {
        let output = index_shard(&staged, (shard, of), data);
        assert!(!output.status.success(), "shard {shard} of {of} was built");
    }
    let mut documents = 0;
    for shard in ["2", "0", "1", "1"] {
        let output = index_shard(&staged, (shard, "3"), data);
        assert!(output.status.success(), "{}", stderr(&output));
        let printed = stdout(&output);
        let built: u64 = printed
            .split(" built, ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|count| count.parse().ok())
            .unwrap_or_else(|| panic!("{printed}"));
        assert!(built > 0, "{printed}");
        documents += built;
    }
    let output = publish();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(current(&sharded), "gen-000002");
    assert!(!sharded.join("generations").join(&staged).exists());
    let output = publish();
    assert!(!output.status.success(), "published twice");

    let manifest = |data: &Path| -> serde_json::Value {
        let text =
            std::fs::read_to_string(data.join("generations/gen-000002/manifest.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let (whole_manifest, sharded_manifest) = (manifest(&whole), manifest(&sharded));
    for part in ["crawls", "counts", "similarity", "collections", "mirrors"] {
        assert_eq!(whole_manifest[part], sharded_manifest[part], "{part}");
    }
    let indexed = whole_manifest["index"]["documents"].as_u64().unwrap();
    assert_eq!(sharded_manifest["index"]["documents"], indexed);
    // Shard 1, built twice, counted once.
    assert_eq!(documents, indexed + sharded_manifest_shard(&sharded, 1));
    assert_consistent(&sharded);

    serve_alike(&whole, &sharded);
}

/// `index-shard STAGED --shard K --of N` in the data folder `data`.
pub fn index_shard(staged: &str, (shard, of): (&str, &str), data: &str) -> std::process::Output {
    run(&[
        "index-shard",
        staged,
        "--shard",
        shard,
        "--of",
        of,
        "--data",
        data,
    ])
}

/// Checks the current generations of the data folders `expected` and
/// `found` serve alike: every query of [`queries`], rolled up (ranked by
/// relevance, and by replication) and flat, its first two pages.
pub fn serve_alike(expected: &Path, found: &Path) {
    let (one, other) = (engine(expected), engine(found));
    for query in queries() {
        for (rollup, rank) in [
            (true, Rank::Relevance),
            (true, Rank::Replication),
            (false, Rank::Relevance),
        ] {
            for page in [1, 2] {
                let shown_by_one = shown(&one, &query, rollup, rank, page);
                if page == 1 {
                    assert!(!shown_by_one.scores.is_empty(), "{query:?} found nothing");
                }
                let shown_by_other = shown(&other, &query, rollup, rank, page);
                assert!(
                    shown_by_other.is_like(&shown_by_one),
                    "{query:?}, rolled up {rollup}, {rank:?}, page {page}: {shown_by_other:#?} against {shown_by_one:#?}"
                );
            }
        }
    }
}

/// The documents shard `number` of the current generation's index holds.
fn sharded_manifest_shard(data: &Path, number: u32) -> u64 {
    let path = data.join(format!(
        "generations/gen-000002/index/shard-{number:04}/.counts.json"
    ));
    let counts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    counts["documents"].as_u64().unwrap()
}

/// Two pages of one score at the end of a page, one on it and the other
/// first on the next, may swap between two indexes (the shipped crawl's
/// eventlet.html and gevent.html at the end of page 1 of "how do I deploy
/// flask with gunicorn", flat): alike. Another page in the other's place
/// is not.
#[test]
fn near_ties_across_a_page_edge_are_compared_with_the_page_beside() {
    let shown = |last: &str, next: &str| Shown {
        text: "results".into(),
        groups: vec!["a".into(), "b".into(), last.into()],
        scores: vec![3.0, 2.0, 1.0],
        before: Vec::new(),
        after: vec![(1.0, next.into()), (0.5, "y".into())],
    };
    let one = shown("eventlet", "gevent");
    assert!(shown("gevent", "eventlet").is_like(&one));
    assert!(one.is_like(&shown("eventlet", "gevent")));
    assert!(!shown("gevent", "other").is_like(&one));
    assert!(!shown("other", "eventlet").is_like(&one));
}
