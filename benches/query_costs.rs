//! What tantivy's part of a search costs, query by query, on a data folder's
//! index: scoring every hit whole (`Weight::for_each`: the text field's
//! score and the title's, headings' and path's, as the flat list does),
//! finding the hits without scores (`for_each_no_score`, as the rolled-up
//! search counts), and the best ten by the text field's score with
//! block-max WAND (`for_each_pruning`, as the rolled-up search ranks the
//! pages without a bonus). Best of seven runs, ms.
//!
//! ```text
//! cargo bench --bench query_costs -- DATA [QUERY ...]
//! ```
//!
//! Without queries, those of the pipeline bench's generated web
//! (`benches/support/web.rs`). BENCHMARKS.md, thirteenth and fourteenth
//! stops, has the figures of the 1M web.

mod support;

use std::path::PathBuf;
use std::time::Instant;

use mirrorscope::datadir::DataDir;
use mirrorscope::index::{Scope, SearchIndex, SearchQuery, INDEX_DIR};
use tantivy::query::{EnableScoring, Query};
use tantivy::{Score, Searcher};

/// The three costs of one query, ms, and the hits each saw.
struct Costs {
    scored: (f64, u64),
    counted: (f64, u64),
    pruned: (f64, u64),
}

fn best_of_seven(mut run: impl FnMut() -> u64) -> (f64, u64) {
    let mut best = (f64::MAX, 0);
    for _ in 0..7 {
        let started = Instant::now();
        let seen = run();
        best = (best.0.min(started.elapsed().as_secs_f64() * 1000.0), seen);
    }
    best
}

fn costs(searcher: &Searcher, query: &SearchQuery) -> Costs {
    let scored = query
        .weight(EnableScoring::enabled_from_searcher(searcher))
        .expect("the query weighs");
    let plain = query
        .weight(EnableScoring::disabled_from_searcher(searcher))
        .expect("the query weighs");
    let text = query
        .matching
        .weight(EnableScoring::enabled_from_searcher(searcher))
        .expect("the query weighs");
    let scored_cost = best_of_seven(|| {
        let mut hits = 0;
        for segment in searcher.segment_readers() {
            scored
                .for_each(segment, &mut |_, _| hits += 1)
                .expect("scored");
        }
        hits
    });
    let counted = best_of_seven(|| {
        let mut hits = 0;
        for segment in searcher.segment_readers() {
            plain
                .for_each_no_score(segment, &mut |docs| hits += docs.len() as u64)
                .expect("counted");
        }
        hits
    });
    let pruned = best_of_seven(|| {
        // The best ten scores so far; the threshold, the tenth.
        let mut best: Vec<Score> = Vec::new();
        let mut threshold = Score::NEG_INFINITY;
        let mut called = 0;
        for segment in searcher.segment_readers() {
            text.for_each_pruning(threshold, segment, &mut |_, score| {
                called += 1;
                best.push(score);
                if best.len() > 10 {
                    best.sort_unstable_by(|a, b| b.total_cmp(a));
                    best.truncate(10);
                    threshold = best[9];
                }
                threshold
            })
            .expect("pruned");
        }
        called
    });
    Costs {
        scored: scored_cost,
        counted,
        pruned,
    }
}

fn main() {
    let arguments: Vec<String> = std::env::args()
        .skip(1)
        .filter(|argument| !argument.starts_with("--"))
        .collect();
    let Some(data_path) = arguments.first().map(PathBuf::from) else {
        eprintln!("usage: cargo bench --bench query_costs -- DATA [QUERY ...]");
        std::process::exit(2);
    };
    let queries: Vec<String> = if arguments.len() > 1 {
        arguments[1..].to_vec()
    } else {
        support::web::queries()
    };
    let data = DataDir::open(&data_path).expect("the data folder opens");
    let generation = data.generation().expect("it has a current generation");
    let index =
        SearchIndex::open(&generation.path().join(INDEX_DIR)).expect("the search index opens");
    let searcher = index.searcher();
    println!(
        "{}: {} documents in {} segments; ms, best of 7 (hits seen)",
        data_path.display(),
        searcher.num_docs(),
        searcher.segment_readers().len()
    );
    println!(
        "{:<24} {:>22} {:>22} {:>22}",
        "query", "scored", "counted", "top 10 pruned"
    );
    let shown = |(ms, hits): (f64, u64)| format!("{ms:.2} ({hits})");
    for query in &queries {
        let parsed = index.parse(query, Scope::OwnText);
        let costs = costs(&searcher, &parsed.query);
        println!(
            "{:<24} {:>22} {:>22} {:>22}",
            format!("{query:?}"),
            shown(costs.scored),
            shown(costs.counted),
            shown(costs.pruned)
        );
    }
}
