use super::*;
use crate::ingest::Capture;
use crate::test_support::{capture, capture_with_status, run};

fn id(table: &PageTable, url: &str) -> PageId {
    table
        .find_url(url)
        .unwrap_or_else(|| panic!("{url} not in the table"))
}

fn together(table: &PageTable, similarity: &Similarity, first: &str, second: &str) -> bool {
    similarity.cluster_of(id(table, first)) == similarity.cluster_of(id(table, second))
}

fn relation(table: &PageTable, similarity: &Similarity, first: &str, second: &str) -> Relation {
    similarity
        .evidence(table, id(table, first), id(table, second))
        .unwrap()
        .relation
}

/// `count` distinct sentences, numbered from `from`, one per line.
fn sentences(topic: &str, from: usize, count: usize) -> Vec<String> {
    (from..from + count)
        .map(|n| format!("{topic} sentence number {n} says something of its own about {topic}"))
        .collect()
}

#[test]
fn cho_figure_2_transitive_similarity_gives_one_trivial_cluster() {
    // p ~ p' (8 of 10 lines shared), p' ~ p'' (8 of 10), p !~ p'' (6 of 10).
    let p = sentences("figure", 0, 10);
    let mut p1 = p.clone();
    p1[8] = "a changed ninth line".into();
    p1[9] = "a changed tenth line".into();
    let mut p2 = p1.clone();
    p2[0] = "a changed first line".into();
    p2[1] = "a changed second line".into();
    let captures = [
        capture("http://a.example/p", &p.join("\n")),
        capture("http://b.example/p", &p1.join("\n")),
        capture("http://c.example/p", &p2.join("\n")),
    ];
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    let (p, p1, p2) = (
        "http://a.example/p",
        "http://b.example/p",
        "http://c.example/p",
    );
    assert_eq!(relation(&table, &similarity, p, p1), Relation::Similar);
    assert_eq!(relation(&table, &similarity, p1, p2), Relation::Similar);
    assert_eq!(relation(&table, &similarity, p, p2), Relation::Transitive);
    assert!(together(&table, &similarity, p, p2));
    assert_eq!(similarity.counts.trivial_clusters, 1);
    assert_eq!(similarity.counts.near_duplicate_pages, 2);
    let evidence = similarity
        .evidence(&table, id(&table, p), id(&table, p2))
        .unwrap();
    assert_eq!((evidence.shared_chunks, evidence.required_chunks), (6, 8));
}

/// A manual of six pages on `host` (under `prefix`), each with the same
/// twelve-line navigation bar and two-line footer around three lines of its
/// own; with `banner`, each page starts with a line naming where it was
/// mirrored from.
fn manual(host: &str, prefix: &str, banner: bool) -> Vec<Capture> {
    let navigation: Vec<String> = (0..12)
        .map(|n| format!("Chapter {n} of the manual in the navigation bar"))
        .collect();
    let footer = [
        "Copyright 2026 The Example Foundation all rights reserved",
        "Licensed under the Example License version 2",
    ];
    (0..6)
        .map(|page| {
            let mut lines = Vec::new();
            if banner {
                lines.push(format!(
                    "Mirrored from http://www.example.org/manual/page{page}.html by {host}. Last synchronised 2026-11-20."
                ));
            }
            lines.extend(navigation.iter().cloned());
            lines.extend(sentences(&format!("page{page}"), 0, 3));
            lines.extend(footer.iter().map(|line| line.to_string()));
            capture(
                &format!("http://{host}{prefix}page{page}.html"),
                &lines.join("\n"),
            )
        })
        .collect()
}

#[test]
fn shared_navigation_and_footer_do_not_make_pages_of_a_manual_similar() {
    let mut captures = manual("www.example.org", "/manual/", false);
    captures.extend(manual("mirror.example.net", "/pub/manual/", true));
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    let page = |host: &str, prefix: &str, n: usize| format!("http://{host}{prefix}page{n}.html");
    for n in 0..6 {
        // The same page with a mirror banner added is a copy...
        let original = page("www.example.org", "/manual/", n);
        let mirrored = page("mirror.example.net", "/pub/manual/", n);
        assert_eq!(
            relation(&table, &similarity, &original, &mirrored),
            Relation::Similar,
            "{original} ~ {mirrored}"
        );
        // ...and different pages sharing the chrome are not.
        for other in 0..6 {
            if other != n {
                let different = page("www.example.org", "/manual/", other);
                assert!(!together(&table, &similarity, &original, &different));
            }
        }
    }
    assert_eq!(similarity.counts.trivial_clusters, 6);
    // The 14 chrome lines are set aside (the banner is not: it names the page).
    assert_eq!(similarity.boilerplate.len(), 14);

    // Without looking at hosts, the chrome (14 of 17 lines) makes different
    // pages similar; only their paths then keep them apart.
    let blind = SimilarityConfig {
        boilerplate_pages_per_host: 1000,
        ..SimilarityConfig::default()
    };
    let (table, similarity) = run(&captures, &blind);
    let (page0, page1) = (
        "http://www.example.org/manual/page0.html",
        "http://www.example.org/manual/page1.html",
    );
    assert_eq!(
        relation(&table, &similarity, page0, page1),
        Relation::Unrelated
    );
    let evidence = similarity
        .evidence(&table, id(&table, page0), id(&table, page1))
        .unwrap();
    assert!(evidence.shared_chunks >= evidence.required_chunks);
    assert_eq!(similarity.counts.trivial_clusters, 6);
}

#[test]
fn a_short_page_is_not_the_copy_of_a_long_page_that_contains_it() {
    let long = sentences("long", 0, 20);
    let short = long[..3].to_vec();
    let captures = [
        capture("http://a.example/long", &long.join("\n")),
        capture("http://b.example/short", &short.join("\n")),
    ];
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    assert!(!together(
        &table,
        &similarity,
        "http://a.example/long",
        "http://b.example/short"
    ));
}

#[test]
fn exact_and_equivalent_copies_and_pages_not_answered_200() {
    let text = sentences("same", 0, 4).join("\n");
    let reformatted = text.replace('\n', "\r\n").to_uppercase().replace(' ', "  ");
    let captures = [
        capture("http://a.example/x", &text),
        capture("http://b.example/x", &text),
        capture("http://c.example/x", &reformatted),
        capture_with_status("http://d.example/missing", &text, 404),
    ];
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    let (a, b, c, d) = (
        "http://a.example/x",
        "http://b.example/x",
        "http://c.example/x",
        "http://d.example/missing",
    );
    assert_eq!(relation(&table, &similarity, a, b), Relation::Exact);
    assert_eq!(relation(&table, &similarity, a, c), Relation::Equivalent);
    assert!(!together(&table, &similarity, a, d));
    assert_eq!(similarity.counts.compared_pages, 3);
    assert_eq!(similarity.counts.distinct_texts, 1);
    let histogram = &similarity.counts.replica_histogram;
    let row = |label: &str| histogram.iter().find(|row| row.replicas == label).unwrap();
    // Every compared page has two other copies, but only one exact one.
    assert_eq!(row("2-10").pages, 3);
    assert_eq!(row("2-10").equivalent, 3);
    assert_eq!((row("1").exact, row("0").exact), (2, 1));
    for row in histogram {
        assert_eq!(row.chunks, row.pages);
    }
    // Every page, compared or not, is in exactly one trivial cluster.
    assert_eq!(similarity.trivial.len(), table.pages.len());
}

#[test]
fn the_histogram_buckets_follow_cho_figure_11() {
    let buckets: Vec<&str> = [0, 1, 2, 10, 11, 100, 101, 5000]
        .iter()
        .map(|&copies| HISTOGRAM_BUCKETS[bucket(copies)])
        .collect();
    assert_eq!(
        buckets,
        ["0", "1", "2-10", "2-10", "10-100", "10-100", ">100", ">100"]
    );
}

#[test]
fn the_minhash_test_joins_near_identical_long_pages() {
    let long = sentences("shingled", 0, 200);
    let mut edited = long.clone();
    edited[100] = "one edited line in the middle".into();
    let captures = [
        capture("http://a.example/x", &long.join("\n")),
        capture("http://b.example/x", &edited.join("\n")),
    ];
    let config = SimilarityConfig {
        test: SimilarityTest::Minhash,
        ..SimilarityConfig::default()
    };
    let (table, similarity) = run(&captures, &config);
    let evidence = similarity
        .evidence(
            &table,
            id(&table, "http://a.example/x"),
            id(&table, "http://b.example/x"),
        )
        .unwrap();
    assert!(evidence.shared_megashingle);
    assert!(evidence.resemblance.unwrap() > 0.9);
    assert_eq!(evidence.relation, Relation::Similar);
    assert_eq!(similarity.counts.megashingle_pairs, 1);
}

#[test]
fn config_values_are_checked() {
    assert_eq!(SimilarityConfig::default().problem(), None);
    for bad in [
        SimilarityConfig {
            chunk_lines: 3,
            ..SimilarityConfig::default()
        },
        SimilarityConfig {
            shared_chunks: 0,
            ..SimilarityConfig::default()
        },
        SimilarityConfig {
            shared_fraction: 1.5,
            ..SimilarityConfig::default()
        },
        SimilarityConfig {
            larger_fraction: f64::NAN,
            ..SimilarityConfig::default()
        },
    ] {
        assert!(bad.problem().is_some(), "{bad:?}");
    }
}

#[test]
fn pages_without_words_are_nobody_s_copies() {
    let captures = [
        capture("http://a.example/image-only", " -- "),
        capture("http://b.example/script-shell", "   "),
    ];
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    assert!(!together(
        &table,
        &similarity,
        "http://a.example/image-only",
        "http://b.example/script-shell"
    ));
    assert_eq!(similarity.counts.compared_pages, 0);
    assert_eq!(similarity.counts.near_duplicate_pages, 0);
}

/// Pages (path, text) on each host under `prefix`.
fn site(host: &str, prefix: &str, pages: &[(&str, &str)]) -> Vec<Capture> {
    pages
        .iter()
        .map(|(path, text)| capture(&format!("http://{host}{prefix}{path}"), text))
        .collect()
}

#[test]
fn one_text_under_two_paths_of_a_manual_is_two_pages() {
    // A re-exported item: the same text at two paths of the manual, on
    // three copies, one of them under another prefix.
    let item = sentences("receiver", 0, 12).join("\n");
    let other = sentences("sender", 0, 12).join("\n");
    let pages = [
        ("sync/mpsc/struct.Receiver.html", item.as_str()),
        ("sync/mpmc/struct.Receiver.html", item.as_str()),
        ("sync/mpsc/struct.Sender.html", other.as_str()),
    ];
    let mut captures = site("www.example.org", "/stable/std/", &pages);
    captures.extend(site("mirror.example.net", "/stable/std/", &pages));
    captures.extend(site("ftp.example.edu", "/pub/doc/rust/std/", &pages));
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    let url = |host: &str, prefix: &str, path: &str| format!("http://{host}{prefix}{path}");
    let mpsc = "sync/mpsc/struct.Receiver.html";
    let mpmc = "sync/mpmc/struct.Receiver.html";
    for path in [mpsc, mpmc] {
        let original = url("www.example.org", "/stable/std/", path);
        assert!(together(
            &table,
            &similarity,
            &original,
            &url("mirror.example.net", "/stable/std/", path)
        ));
        assert!(together(
            &table,
            &similarity,
            &original,
            &url("ftp.example.edu", "/pub/doc/rust/std/", path)
        ));
    }
    assert!(!together(
        &table,
        &similarity,
        &url("www.example.org", "/stable/std/", mpsc),
        &url("www.example.org", "/stable/std/", mpmc)
    ));
    assert!(!together(
        &table,
        &similarity,
        &url("www.example.org", "/stable/std/", mpsc),
        &url("ftp.example.edu", "/pub/doc/rust/std/", mpmc)
    ));
    // Three pages with three copies each.
    assert_eq!(similarity.counts.trivial_clusters, 3);
    assert_eq!(similarity.counts.near_duplicate_pages, 6);
}

#[test]
fn a_folder_and_its_index_page_stay_one_page() {
    let index = sentences("index", 0, 12).join("\n");
    let pages = [("", index.as_str()), ("index.html", index.as_str())];
    let mut captures = site("a.example", "/docs/", &pages);
    captures.extend(site("b.example", "/docs/", &pages));
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    assert!(together(
        &table,
        &similarity,
        "http://a.example/docs/",
        "http://b.example/docs/index.html"
    ));
    assert_eq!(similarity.counts.trivial_clusters, 1);
}

#[test]
fn one_text_answering_many_urls_of_a_host_is_not_split() {
    // Two soft-404 hosts answer the URLs they were asked for, each with its
    // own set of paths, with one "not available" page.
    let missing =
        "This page is not available on this mirror.\nPlease use the primary site instead.";
    let mut captures: Vec<Capture> = (0..5)
        .map(|n| capture(&format!("http://a.example/docs/page{n}.html"), missing))
        .collect();
    captures
        .extend((0..5).map(|n| capture(&format!("http://b.example/other/item{n}.html"), missing)));
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    assert!(together(
        &table,
        &similarity,
        "http://a.example/docs/page0.html",
        "http://b.example/other/item3.html"
    ));
    assert_eq!(similarity.counts.trivial_clusters, 1);
}

#[test]
fn a_similarity_is_written_without_its_fingerprints() {
    let captures = [
        capture("http://a.example/x", "one line\nand another line of words"),
        capture("http://b.example/x", "one line\nand another line of words"),
        capture("http://c.example/y", "quite other words here"),
        capture_with_status("http://c.example/gone", "", 404),
    ];
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    assert!(similarity.fingerprints.iter().any(Option::is_some));
    let written = postcard::to_allocvec(&similarity).unwrap();
    assert_eq!(
        written,
        postcard::to_allocvec(&similarity.clone().without_fingerprints()).unwrap()
    );
    let read: Similarity = postcard::from_bytes(&written).unwrap();
    assert!(read.fingerprints.is_empty());
    assert_eq!(read.trivial, similarity.trivial);
    assert_eq!(read.counts, similarity.counts);
    assert_eq!(read.problem(table.pages.len()), None);
    // Read for another table: refused.
    assert!(read.problem(table.pages.len() + 1).is_some());
    // Fingerprints, when held, must be one per page.
    let mut short = similarity.clone();
    short.fingerprints.pop();
    assert!(short.problem(table.pages.len()).is_some());
}

#[test]
fn the_analysis_of_fingerprints_read_from_their_file_is_the_analysis_held_in_memory() {
    // Exact copies, a mirror with a banner (chunks), near-identical long
    // pages (megashingles), a stand-in host, a page without words and one
    // not answered 200: every kind of page the stage reads.
    let mut captures = manual("www.example.org", "/manual/", false);
    captures.extend(manual("mirror.example.net", "/pub/manual/", true));
    let long = sentences("shingled", 0, 200);
    let mut edited = long.clone();
    edited[100] = "one edited line in the middle".into();
    captures.push(capture("http://a.example/x", &long.join("\n")));
    captures.push(capture("http://b.example/x", &edited.join("\n")));
    captures.push(capture("http://c.example/x", &long.join("\n")));
    captures
        .extend((0..12).map(|n| capture(&format!("http://d.example/docs/p{n}.html"), "Not here.")));
    captures.push(capture("http://e.example/empty", "  \n "));
    captures.push(capture_with_status("http://e.example/gone", "gone", 404));
    for test in [
        SimilarityTest::Chunks,
        SimilarityTest::Minhash,
        SimilarityTest::Both,
    ] {
        let config = SimilarityConfig {
            test,
            ..SimilarityConfig::default()
        };
        let (table, held) = run(&captures, &config);
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("fingerprints.bin");
        crate::generation::write_fingerprints(&path, &held.fingerprints).unwrap();
        let file = crate::generation::FingerprintFile::open(&path).unwrap();
        let read = analyse_from(&table, &file, &config).unwrap();
        assert!(read.fingerprints.is_empty());
        // Everything but the fingerprints, as a generation writes it.
        assert_eq!(
            postcard::to_allocvec(&read).unwrap(),
            postcard::to_allocvec(&held).unwrap(),
            "{test}"
        );
        let counts = &held.counts;
        assert!(
            counts.megashingle_pairs > 0 && counts.chunk_pairs > 0,
            "{counts:?}"
        );
        assert!(counts.stand_in_pages > 0, "{counts:?}");
    }
}
