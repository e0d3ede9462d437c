use std::path::Path;

use super::*;
use crate::similarity::SimilarityConfig;
use crate::test_support::{capture, run};

fn lines(topic: &str, count: usize) -> String {
    (0..count)
        .map(|n| format!("{topic} line {n} with words of its own about {topic}"))
        .collect::<Vec<_>>()
        .join("\n")
}

const HEADER: &str = "url\tcollection\treplica\tpage\n";

#[test]
fn a_truth_file_needs_its_header_and_bad_lines_are_skipped_and_counted() {
    let path = Path::new("truth.tsv");
    let error = Truth::parse("url\tcollection\n", path)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("truth.tsv") && error.contains("header"),
        "{error}"
    );
    let text = format!(
        "{HEADER}HTTP://A.example:80/x#frag\tmanual\tmanual@a\tx\nhttp://b.example/x\tmanual\n\nhttp://c.example/x\t\tr\tx\n"
    );
    let truth = Truth::parse(&text, path).unwrap();
    assert_eq!(truth.bad_lines, 2);
    // URLs are compared in canonical form.
    assert_eq!(truth.rows["http://a.example/x"].replica, "manual@a");
}

#[test]
fn page_pairs_score_clusters_against_the_truth() {
    let manual_x = lines("x", 10);
    let manual_y = lines("y", 10);
    let older_y = format!("{}\n{}", &lines("y", 4), lines("rewritten", 6));
    let captures = [
        capture("http://a.example/x", &manual_x),
        capture("http://b.example/x", &format!("{manual_x}\nmirrored by b")),
        capture("http://a.example/y", &manual_y),
        capture("http://b.example/y", &older_y),
        // Two copies of something the truth does not know: not judged.
        capture("http://a.example/404", "not found"),
        capture("http://b.example/404", "not found"),
        // A page wrongly joined to x: no truth row, but x has one.
        capture("http://c.example/x-again", &manual_x),
    ];
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    let truth = Truth::parse(
        &format!(
            "{HEADER}http://a.example/x\tm\tm@a\tx\nhttp://b.example/x\tm\tm@b\tx\nhttp://a.example/y\tm\tm@a\ty\nhttp://b.example/y\tm\tm@b\ty\nhttp://z.example/x\tm\tm@z\tx\n"
        ),
        Path::new("t"),
    )
    .unwrap();
    let pairs = page_pairs(&table, &similarity, &truth);
    // Found: {a/x, b/x, c/x-again} gives 3 pairs (1 right, 2 wrong), the
    // 404s 1 unjudged pair; y and its rewritten older version are apart.
    assert_eq!(pairs.found_pairs, 4);
    assert_eq!(
        (pairs.correct_pairs, pairs.wrong_pairs, pairs.unjudged_pairs),
        (1, 2, 1)
    );
    assert!((pairs.precision.unwrap() - 1.0 / 3.0).abs() < 1e-9);
    // x's copies differ by one line (close); y's by 12 of 16 lines.
    assert_eq!(
        (pairs.close_copy_pairs, pairs.close_copy_pairs_found),
        (1, 1)
    );
    assert_eq!(pairs.recall, Some(1.0));
    assert_eq!(pairs.recall_all_copies, Some(0.5));
    let different = &pairs.recall_by_difference[Difference::Different as usize];
    assert_eq!((different.pairs, different.found), (1, 0));
    assert_eq!(pairs.truth_urls_missing, 1);
    assert_eq!(pairs.wrong_examples.len(), 1);
}

#[test]
fn nothing_to_measure_is_not_a_perfect_score() {
    let captures = [capture("http://a.example/x", &lines("x", 5))];
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    let truth = Truth::parse(
        &format!("{HEADER}http://elsewhere.example/x\tm\tm@e\tx\n"),
        Path::new("t"),
    )
    .unwrap();
    let pairs = page_pairs(&table, &similarity, &truth);
    assert_eq!((pairs.precision, pairs.recall), (None, None));
    assert_eq!(pairs.truth_urls_missing, 1);
}
