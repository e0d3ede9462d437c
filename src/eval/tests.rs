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
fn a_mirrors_file_beside_the_truth_gives_the_mirrored_pairs() {
    // The truth holds the manual on a and b, and one page of it copied by a
    // content farm on f: hosts holding copies of one collection would pair
    // f with both; mirrors.tsv pairs a and b alone.
    let dir = tempfile::tempdir().unwrap();
    let truth_path = dir.path().join("truth.tsv");
    std::fs::write(
        &truth_path,
        format!(
            "{HEADER}http://a.example/m/x.html\tm\tm:a.example\tx.html\n\
             http://b.example/m/x.html\tm\tm:b.example\tx.html\n\
             http://f.example/q/1.html\tm\tm:f.example/q/1.html\tx.html\n"
        ),
    )
    .unwrap();
    let alone = Truth::read(&truth_path).unwrap();
    assert!(alone.mirror_pairs.is_none());
    assert_eq!(mirrors::truth_pairs(&alone).len(), 3);

    std::fs::write(
        dir.path().join("mirrors.tsv"),
        "host_a\thost_b\trelation\nB.example\ta.example\tlevel1\nonly-one-host\n",
    )
    .unwrap();
    let truth = Truth::read(&truth_path).unwrap();
    let pairs: Vec<(String, String)> = mirrors::truth_pairs(&truth).into_iter().collect();
    assert_eq!(pairs, [("a.example".to_string(), "b.example".to_string())]);
    assert_eq!(truth.bad_lines, 1, "the line without a pair");

    std::fs::write(dir.path().join("mirrors.tsv"), "a\tb\n").unwrap();
    let error = Truth::read(&truth_path).unwrap_err().to_string();
    assert!(
        error.contains("mirrors.tsv") && error.contains("header"),
        "{error}"
    );
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

#[test]
fn collections_are_matched_scored_and_problems_listed() {
    // The manual (index -> guide) on a and b, and on c crawled in part (its
    // guide never fetched); an orphan page of the manual copied on a and b;
    // and a pair of copies the truth does not know (a problem collection).
    let page = |url: &str, text: &str, links: &[&str]| {
        let mut page = capture(url, text);
        page.links = links.iter().map(|link| link.to_string()).collect();
        page
    };
    let (index, guide, orphan, other, more) = (
        lines("index", 10),
        lines("guide", 10),
        lines("orphan", 10),
        lines("other", 10),
        lines("more", 10),
    );
    let captures = [
        page(
            "http://a.example/m/",
            &index,
            &["http://a.example/m/guide.html"],
        ),
        page("http://a.example/m/guide.html", &guide, &[]),
        page("http://a.example/m/orphan.html", &orphan, &[]),
        page(
            "http://b.example/m/",
            &index,
            &["http://b.example/m/guide.html"],
        ),
        page("http://b.example/m/guide.html", &guide, &[]),
        page("http://b.example/m/orphan.html", &orphan, &[]),
        page(
            "http://c.example/m/",
            &index,
            &["http://c.example/m/guide.html"],
        ),
        page(
            "http://a.example/x/",
            &other,
            &["http://a.example/x/more.html"],
        ),
        page("http://a.example/x/more.html", &more, &[]),
        page(
            "http://d.example/x/",
            &other,
            &["http://d.example/x/more.html"],
        ),
        page("http://d.example/x/more.html", &more, &[]),
    ];
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    let grown_only = crate::collections::CollectionsConfig {
        folders: false,
        ..Default::default()
    };
    let collections = crate::collections::analyse(&table, &similarity, &grown_only);
    let mut rows = String::from(HEADER);
    for (host, pages) in [("a", 3), ("b", 3), ("c", 1)] {
        for name in ["", "guide.html", "orphan.html"].iter().take(pages) {
            let path = if name.is_empty() { "index.html" } else { name };
            rows.push_str(&format!(
                "http://{host}.example/m/{name}\tmanual\tmanual@{host}\t{path}\n"
            ));
        }
    }
    rows.push_str("http://c.example/m/guide.html\tmanual\tmanual@c\tguide.html\n");
    rows.push_str("http://e.example/never-crawled.html\tmanual\tmanual@e\tguide.html\n");
    rows.push_str("http://e.example/never-crawled/\tmanual\tmanual@e\tindex.html\n");
    // A collection in one replica is not replicated: not judged (its pairs
    // are not counted, it matches no cluster, x/ stays a problem).
    rows.push_str("http://a.example/x/\tsingle\tsingle@a\tindex.html\n");
    rows.push_str("http://a.example/x/more.html\tsingle\tsingle@a\tmore.html\n");
    let truth = Truth::parse(&rows, Path::new("truth.tsv")).unwrap();
    let scores = collections::score(&table, &similarity, &collections, &truth);
    assert_eq!(scores.truth_collections.len(), 1);
    // 7 crawled pages of the manual: 21 pairs. Found: the 5 pages of the
    // main cluster (10 pairs) and the orphans (1 pair).
    assert_eq!(scores.truth_pairs, 21);
    assert_eq!(scores.correct_pairs, 11);
    assert_eq!(scores.precision, Some(1.0));
    assert_eq!(scores.unjudged_pairs, 6, "the 4 pages of x/ in one cluster");
    assert_eq!(scores.truth_urls_missing, 3, "c's guide, e's pages");
    let manual = &scores.truth_collections[0];
    assert_eq!((manual.copies, manual.pages), (4, 7));
    assert_eq!((manual.copies_found, manual.pages_in_cluster), (3, 5));
    assert_eq!(manual.cluster_cardinality, 3);
    assert_eq!(manual.other_clusters, 1, "the orphans");
    let copies: Vec<(&str, u64, u64)> = manual
        .found
        .iter()
        .map(|copy| {
            (
                copy.prefix.as_str(),
                copy.replica_pages_found,
                copy.replica_pages,
            )
        })
        .collect();
    assert_eq!(
        copies,
        [
            ("http://a.example/m/", 2, 3),
            ("http://b.example/m/", 2, 3),
            ("http://c.example/m/", 1, 1)
        ]
    );
    let problems: Vec<&str> = scores
        .problem_collections
        .iter()
        .map(|problem| problem.prefix.as_str())
        .collect();
    assert_eq!(problems, ["http://a.example/x/", "http://d.example/x/"]);
    assert!(scores.problem_collections.iter().all(|p| p.truth.is_none()));
    let text = scores.to_string();
    assert!(
        text.contains("problem collections") && text.contains("http://d.example/x/"),
        "{text}"
    );

    // A replica of one page is a copy of a page (a content farm's copy in
    // its own template), not of the collection: not judged here, whatever
    // cluster it is in (d's page sits with x/).
    let farmed =
        format!("{rows}http://d.example/x/more.html\tmanual\tmanual@d/x/more.html\tguide.html\n");
    let farmed = Truth::parse(&farmed, Path::new("truth.tsv")).unwrap();
    let with_farm = collections::score(&table, &similarity, &collections, &farmed);
    assert_eq!(
        (
            with_farm.truth_pairs,
            with_farm.correct_pairs,
            with_farm.unjudged_pairs
        ),
        (
            scores.truth_pairs,
            scores.correct_pairs,
            scores.unjudged_pairs
        )
    );
    assert_eq!(with_farm.truth_collections[0].copies, 4);

    // Joined by folders, the orphans' copies sit in the manual's copies on
    // a and b: one cluster holds the whole manual.
    let collections = crate::collections::analyse(&table, &similarity, &Default::default());
    let scores = collections::score(&table, &similarity, &collections, &truth);
    assert_eq!(scores.correct_pairs, 21);
    assert_eq!((scores.precision, scores.recall), (Some(1.0), Some(1.0)));
    let manual = &scores.truth_collections[0];
    assert_eq!((manual.copies_found, manual.pages_in_cluster), (3, 7));
    assert_eq!(manual.other_clusters, 0);
}
