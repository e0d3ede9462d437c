//! What tantivy's part of a search costs, query by query, on a data folder's
//! index: scoring every hit (`Weight::for_each`, as the rolled-up search
//! does), finding the hits without scores (`for_each_no_score`), and the
//! best ten by block-max WAND (`for_each_pruning`), for the query as the
//! engine parses it (each word a union of its fields: title, body,
//! headings, URL) and for the same words in the body field alone, as one
//! combined text field would be searched. Best of seven runs, ms.
//!
//! ```text
//! cargo bench --bench query_costs -- DATA [QUERY ...]
//! ```
//!
//! Without queries, those of the pipeline bench's generated web
//! (`benches/support/web.rs`). BENCHMARKS.md, thirteenth stop, has the
//! figures of the 1M web.

mod support;

use std::path::PathBuf;
use std::time::Instant;

use mirrorscope::datadir::DataDir;
use mirrorscope::index::{IndexField, Scope, SearchIndex, INDEX_DIR};
use tantivy::query::{BooleanQuery, EnableScoring, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TokenStream;
use tantivy::{Score, Searcher, Term};

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

fn costs(searcher: &Searcher, query: &dyn Query) -> Costs {
    let scored = query
        .weight(EnableScoring::enabled_from_searcher(searcher))
        .expect("the query weighs");
    let plain = query
        .weight(EnableScoring::disabled_from_searcher(searcher))
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
            scored
                .for_each_pruning(threshold, segment, &mut |_, score| {
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

/// The query's words, each required, in the body field alone (one word
/// its term query, which tantivy prunes as such), as the index's analyzer
/// makes them.
fn in_body(index: &SearchIndex, query: &str) -> Box<dyn Query> {
    let body = index.fields().get(IndexField::Body);
    let mut analyzer = mirrorscope::index::text_analyzer();
    let mut stems = Vec::new();
    let mut stream = analyzer.token_stream(query);
    while stream.advance() {
        stems.push(stream.token().text.clone());
    }
    let mut words: Vec<Box<dyn Query>> = stems
        .into_iter()
        .map(|word| {
            Box::new(TermQuery::new(
                Term::from_field_text(body, &word),
                IndexRecordOption::WithFreqs,
            )) as Box<dyn Query>
        })
        .collect();
    if words.len() == 1 {
        return words.remove(0);
    }
    Box::new(BooleanQuery::new(
        words.into_iter().map(|word| (Occur::Must, word)).collect(),
    ))
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
        "{:<24} {:>22} {:>22} {:>22}   {:>18} {:>18} {:>18}",
        "query",
        "fields: scored",
        "counted",
        "top 10 pruned",
        "body: scored",
        "counted",
        "top 10 pruned"
    );
    let shown = |(ms, hits): (f64, u64)| format!("{ms:.2} ({hits})");
    for query in &queries {
        let parsed = index.parse(query, Scope::OwnText);
        let fields = costs(&searcher, &*parsed.query);
        let body = costs(&searcher, &*in_body(&index, query));
        println!(
            "{:<24} {:>22} {:>22} {:>22}   {:>18} {:>18} {:>18}",
            format!("{query:?}"),
            shown(fields.scored),
            shown(fields.counted),
            shown(fields.pruned),
            shown(body.scored),
            shown(body.counted),
            shown(body.pruned)
        );
    }
}
