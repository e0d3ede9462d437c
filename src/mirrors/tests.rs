use super::*;
use crate::ingest::Capture;
use crate::test_support::{capture, capture_with_status, run};

/// A page of `count` words, distinct per `seed`, 10 words a line.
fn text(seed: &str, count: usize) -> String {
    (0..count)
        .map(|i| format!("{seed}{i}{}", if i % 10 == 9 { "\n" } else { " " }))
        .collect()
}

/// A page sharing the first `kept` of `body`'s words, its other words its
/// own (`seed`), as long as `body`'s 120.
fn related(body: &str, kept: usize, seed: &str) -> String {
    let start: Vec<&str> = body.split_whitespace().take(kept).collect();
    format!("{}\n{}", start.join(" "), text(seed, 120 - kept))
}

fn site(host: &str, pages: &[(&str, String)]) -> Vec<Capture> {
    pages
        .iter()
        .map(|(path, body)| capture(&format!("http://{host}{path}"), body))
        .collect()
}

fn with_ip(mut captures: Vec<Capture>, ip: &str) -> Vec<Capture> {
    for capture in &mut captures {
        capture.info.ip = Some(ip.to_string());
    }
    captures
}

fn config() -> MirrorsConfig {
    MirrorsConfig {
        min_urls: 1,
        cluster_pages: 3,
        ..MirrorsConfig::default()
    }
}

/// The level Stage II gives `a` and `b` of a crawl, paths compared as they are.
fn level(captures: &[Capture], a: &str, b: &str) -> (Level, Vec<PathTest>) {
    let (table, similarity) = run(captures, &Default::default());
    let config = config();
    let web = hosts::Web::new(&table, &similarity, &config);
    let id = |name: &str| HostId(table.hosts.iter().position(|host| host == name).unwrap() as u32);
    let prints = &similarity.fingerprints;
    let Ok(classifier) = classify::Classifier::new(&web, &config, [id(a), id(b)], prints);
    let planned = classifier.plan(HostPair::new(id(a), id(b)), Vec::new());
    let Ok(compared) = classify::Compared::read(prints, planned.pages().collect());
    let (level, tests, _) = classifier.settle(planned, &compared);
    (level, tests)
}

fn manual(variant: impl Fn(usize, String) -> Option<String>) -> Vec<(&'static str, String)> {
    const PATHS: [&str; 6] = [
        "/",
        "/guide/intro.html",
        "/guide/install.html",
        "/guide/usage.html",
        "/api/alpha.html",
        "/api/beta.html",
    ];
    PATHS
        .iter()
        .enumerate()
        .filter_map(|(index, path)| {
            variant(index, text(&format!("p{index}w"), 120)).map(|body| (*path, body))
        })
        .collect()
}

#[test]
fn level_1_identical_bytes_under_the_same_paths() {
    let mut crawl = site("a.example", &manual(|_, body| Some(body)));
    crawl.extend(site("b.example", &manual(|_, body| Some(body))));
    let (level, tests) = level(&crawl, "a.example", "b.example");
    assert_eq!(level, Level::One, "{tests:?}");
    // The root pair and every page of each side (fewer than 9 each).
    assert_eq!(tests.len(), 1 + 5 + 5);
}

#[test]
fn level_2_the_same_words_in_other_bytes() {
    let mut crawl = site("a.example", &manual(|_, body| Some(body)));
    crawl.extend(site(
        "b.example",
        &manual(|_, body| Some(body.replace('\n', "\r\n"))),
    ));
    assert_eq!(level(&crawl, "a.example", "b.example").0, Level::Two);
}

#[test]
fn level_3_a_banner_on_every_page() {
    let mut crawl = site("a.example", &manual(|_, body| Some(body)));
    crawl.extend(site(
        "b.example",
        &manual(|_, body| {
            Some(format!(
                "mirrored by b example last synchronised today\n{body}"
            ))
        }),
    ));
    let (level, tests) = level(&crawl, "a.example", "b.example");
    assert_eq!(level, Level::Three, "{tests:?}");
    assert!(tests
        .iter()
        .all(|test| test.outcome == Outcome::HighSimilarity));
}

#[test]
fn level_4_a_partial_mirror() {
    let mut crawl = site("a.example", &manual(|_, body| Some(body)));
    // b leaves out the API pages.
    crawl.extend(site(
        "b.example",
        &manual(|index, body| (index < 4).then_some(body)),
    ));
    let (level, tests) = level(&crawl, "a.example", "b.example");
    assert_eq!(level, Level::Four);
    let failures: Vec<&PathTest> = tests
        .iter()
        .filter(|test| test.outcome == Outcome::TargetFailure)
        .collect();
    assert_eq!(failures.len(), 2, "{tests:?}");
    assert!(failures.iter().all(|test| test.path_a.starts_with("/api/")));
}

#[test]
fn level_5_every_path_valid_but_content_only_related() {
    let mut crawl = site("a.example", &manual(|_, body| Some(body)));
    // The same paths, each page sharing its first 30 words only.
    crawl.extend(site(
        "b.example",
        &manual(|index, body| Some(related(&body, 30, &format!("other{index}w")))),
    ));
    let (level, tests) = level(&crawl, "a.example", "b.example");
    assert_eq!(level, Level::Five, "{tests:?}");
}

#[test]
fn translations_under_the_same_paths_are_no_mirrors_at_any_level() {
    use crate::language::{Language, PageLanguage};
    let declared = |mut captures: Vec<Capture>, tag: &str| {
        for capture in &mut captures {
            capture.language = PageLanguage::Declared(Language::from_tag(tag).unwrap());
        }
        captures
    };
    // The same paths; each page shares its code and names with the
    // original (a third of the words: related by Table 1), one page, a
    // command reference, is nearly the same text in both, and one the same
    // bytes.
    let mut crawl = declared(site("en.example", &manual(|_, body| Some(body))), "en");
    crawl.extend(declared(
        site(
            "fr.example",
            &manual(|index, body| {
                if index == 4 {
                    return Some(body.replacen("p4w0 ", "p4w0 fr ", 1));
                }
                if index == 5 {
                    // The same bytes, in the French edition's language.
                    return Some(body);
                }
                Some(related(&body, 40, &format!("fr{index}w")))
            }),
        ),
        "fr",
    ));
    let (found, tests) = level(&crawl, "en.example", "fr.example");
    assert_eq!(found, Level::Mismatch, "{tests:?}");
    // Declared in one language, the same pages are related, as above.
    for capture in &mut crawl {
        capture.language = PageLanguage::Unknown;
    }
    let (found, tests) = level(&crawl, "en.example", "fr.example");
    assert_eq!(found, Level::Four, "{tests:?}");
}

#[test]
fn mismatch_when_common_paths_hold_other_pages() {
    let mut crawl = site("a.example", &manual(|_, body| Some(body)));
    crawl.extend(site(
        "b.example",
        &manual(|index, _| Some(text(&format!("unrelated{index}w"), 120))),
    ));
    assert_eq!(level(&crawl, "a.example", "b.example").0, Level::Mismatch);
}

#[test]
fn untested_when_nothing_was_crawled_on_either_side() {
    let crawl = vec![
        capture_with_status("http://a.example/", "gone", 404),
        capture_with_status("http://b.example/", "gone", 404),
    ];
    assert_eq!(level(&crawl, "a.example", "b.example").0, Level::Untested);
}

/// A small crawl: `www.docs.example` with a manual, an exact mirror under
/// the same paths, a copy under another folder, its alias on the same
/// address, and an unrelated site sharing that address.
fn small_web() -> Vec<Capture> {
    let pages: Vec<(String, String)> = (0..12)
        .map(|i| {
            (
                format!("guide/part{}/page-{i}.html", i % 3),
                text(&format!("m{i}w"), 80),
            )
        })
        .collect();
    let under = |host: &str, folder: &str, ip: &str| {
        let captures: Vec<Capture> = pages
            .iter()
            .map(|(path, body)| capture(&format!("http://{host}{folder}{path}"), body))
            .chain([capture(
                &format!("http://{host}{folder}"),
                &text("rootw", 40),
            )])
            .collect();
        with_ip(captures, ip)
    };
    let mut crawl = under("www.docs.example", "/manual/", "192.0.2.1");
    crawl.extend(under("docs.example", "/manual/", "192.0.2.1"));
    crawl.extend(under("mirror.net.example", "/manual/", "198.51.100.9"));
    crawl.extend(under(
        "ftp.archive.example",
        "/pub/docs/manual/",
        "203.0.113.5",
    ));
    let shop: Vec<Capture> = (0..12)
        .map(|i| {
            capture(
                &format!("http://shop.example/item-{i}"),
                &text(&format!("s{i}w"), 80),
            )
        })
        .collect();
    crawl.extend(with_ip(shop, "192.0.2.1"));
    crawl
}

#[test]
fn the_rankers_on_a_small_web() {
    let (table, similarity) = run(&small_web(), &Default::default());
    let collections = crate::collections::analyse(&table, &similarity, &Default::default());
    let mirrors = analyse(&table, &similarity, &collections, &config());
    let id = |name: &str| HostId(table.hosts.iter().position(|host| host == name).unwrap() as u32);
    let pair = |a: &str, b: &str| HostPair::new(id(a), id(b));
    let listed = |ranker: Ranker| -> Vec<HostPair> {
        mirrors
            .ranking(ranker)
            .unwrap()
            .pairs
            .iter()
            .map(|ranked| ranked.pair)
            .collect()
    };
    // ip4: the three hosts on 192.0.2.1, in one cluster.
    let ip4 = listed(Ranker::Ip4);
    assert_eq!(ip4.len(), 3);
    assert!(ip4.contains(&pair("www.docs.example", "shop.example")));
    // paths: the three hosts with the same paths, and no other pair.
    let paths = listed(Ranker::Paths);
    assert!(paths.contains(&pair("www.docs.example", "mirror.net.example")));
    assert!(!paths
        .iter()
        .any(|p| *p == pair("www.docs.example", "ftp.archive.example")));
    // clusters: the copy under another folder is found, with its folders;
    // the alias is not paired with its preferred name.
    let clusters = listed(Ranker::Clusters);
    // docs.example is preferred to www.docs.example on their address (as
    // many pages in each cluster and URLs on the host; the first name).
    assert!(
        clusters.contains(&pair("docs.example", "ftp.archive.example")),
        "{clusters:?}"
    );
    assert!(!clusters.contains(&pair("www.docs.example", "ftp.archive.example")));
    assert!(!clusters.contains(&pair("www.docs.example", "docs.example")));
    assert!(!clusters
        .iter()
        .any(|p| p.a == id("shop.example") || p.b == id("shop.example")));
    let copy = mirrors
        .pair(id("docs.example"), id("ftp.archive.example"))
        .unwrap();
    let (folder_www, folder_ftp) = if copy.pair.a == id("docs.example") {
        (&copy.subtrees[0].a, &copy.subtrees[0].b)
    } else {
        (&copy.subtrees[0].b, &copy.subtrees[0].a)
    };
    assert_eq!(
        (folder_www.as_str(), folder_ftp.as_str()),
        ("/", "/pub/docs/")
    );
    assert_eq!(copy.level, Level::One, "{:?}", copy.tests);
    // Classification keeps the shared address from making a mirror.
    let shop = mirrors
        .pair(id("www.docs.example"), id("shop.example"))
        .unwrap();
    assert_eq!(shop.level, Level::Mismatch);
    assert_eq!(shop.shared_ip.as_deref(), Some("192.0.2.1"));
    // combined: pairs listed by more rankers first.
    let combined = mirrors.ranking(Ranker::Combined).unwrap();
    let counts: Vec<usize> = combined
        .pairs
        .iter()
        .map(|ranked| {
            mirrors
                .pair(ranked.pair.a, ranked.pair.b)
                .unwrap()
                .ranks
                .iter()
                .filter(|(ranker, _)| config().combined.contains(ranker))
                .count()
        })
        .collect();
    assert!(
        counts.windows(2).all(|pair| pair[0] >= pair[1]),
        "{counts:?}"
    );
    assert_eq!(mirrors.problem(table.hosts.len()), None);
}

#[test]
fn combined_orders_by_rankers_then_best_rank() {
    let pair = |a: u32, b: u32| HostPair::new(HostId(a), HostId(b));
    let ranking = |ranker: Ranker, pairs: &[HostPair]| Ranking {
        ranker,
        pairs: pairs
            .iter()
            .map(|pair| Ranked {
                pair: *pair,
                score: 1.0,
            })
            .collect(),
    };
    let rankings = vec![
        ranking(Ranker::Ip4, &[pair(0, 1), pair(2, 3), pair(4, 5)]),
        ranking(Ranker::Paths, &[pair(4, 5), pair(6, 7)]),
        ranking(Ranker::Hosts, &[pair(8, 9), pair(2, 3)]),
        ranking(Ranker::Ip3, &[pair(0, 1)]),
    ];
    let combined = combine(&rankings, &[Ranker::Ip4, Ranker::Paths, Ranker::Hosts]);
    let order: Vec<HostPair> = combined.iter().map(|ranked| ranked.pair).collect();
    // Two rankers: (4,5) best rank 0 (paths), (2,3) best rank 1. Then one
    // ranker: (0,1) rank 0, (8,9) rank 0, (6,7) rank 1; ip3 is not merged.
    assert_eq!(
        order,
        vec![pair(4, 5), pair(2, 3), pair(0, 1), pair(8, 9), pair(6, 7)]
    );
    assert!((combined[0].score - 2.0 / 3.0).abs() < 1e-12);
}

/// Two hosts of `pages` pages each under `folder`, with these names, for
/// the term-vector rankers.
fn pair_of_sites(a: &str, b: &str, folder_a: &str, folder_b: &str, pages: usize) -> Vec<Capture> {
    let mut crawl = Vec::new();
    for (host, folder) in [(a, folder_a), (b, folder_b)] {
        for i in 0..pages {
            crawl.push(capture(
                &format!("http://{host}{folder}page-{i}.html"),
                &text(&format!("{host}{i}w"), 20),
            ));
        }
    }
    crawl
}

#[test]
fn the_hosts_ranker_weighs_name_parts_by_length_and_rarity() {
    let crawl = pair_of_sites(
        "www.rare-name.example",
        "ftp.rare-name.example",
        "/a/",
        "/b/",
        3,
    );
    let (table, similarity) = run(&crawl, &Default::default());
    let web = hosts::Web::new(&table, &similarity, &config());
    let ranking = terms::hosts(&web, &config());
    // Shared: `example` (one part: log 1 = 0, no weight) and
    // `rare-name.example` (two parts, on 2 hosts): log 2 / (1 + log 2).
    let weight = 2f64.log10() / (1.0 + 2f64.log10());
    assert_eq!(ranking.len(), 1);
    assert!(
        (ranking[0].score - weight * weight).abs() < 1e-12,
        "{ranking:?}"
    );
}

#[test]
fn the_prefix_ranker_scales_by_host_size() {
    let crawl = pair_of_sites("one.example", "two.example", "/docs/", "/docs/", 10);
    let (table, similarity) = run(&crawl, &Default::default());
    let web = hosts::Web::new(&table, &similarity, &config());
    let ranking = terms::prefix(&web, &config());
    assert_eq!(ranking.len(), 1);
    // 10 log 10 = 10 terms a host: `/`, `/docs/` and 8 of the pages, all
    // shared by both hosts (df 2 = maxdf: weight 1 each); the size factor
    // is 1 / (0.1 + 0.15 (log 10 + log 10)) = 2.5.
    assert!((ranking[0].score - 10.0 * 2.5).abs() < 1e-9, "{ranking:?}");
}

#[test]
fn conn_keeps_pairs_whose_common_paths_link_alike() {
    let linked = |host: &str, extra: &str| -> Vec<Capture> {
        (0..4)
            .map(|i| {
                let mut page = capture(
                    &format!("http://{host}/p{i}.html"),
                    &text(&format!("c{i}w"), 20),
                );
                page.links = (0..4)
                    .filter(|j| *j != i)
                    .map(|j| format!("http://{host}/p{j}.html"))
                    .chain(
                        (!extra.is_empty()).then(|| format!("http://{extra}/elsewhere-{i}.html")),
                    )
                    .collect();
                page
            })
            .collect()
    };
    let mut crawl = linked("a.example", "");
    crawl.extend(linked("b.example", ""));
    crawl.extend(linked("c.example", "other.example"));
    // The pages c links to are crawled (links to pages outside the crawl
    // are not in the page table).
    crawl.extend((0..4).map(|i| {
        capture(
            &format!("http://other.example/elsewhere-{i}.html"),
            &text(&format!("o{i}w"), 20),
        )
    }));
    let (table, similarity) = run(&crawl, &Default::default());
    let web = hosts::Web::new(&table, &similarity, &config());
    let paths = terms::paths(&web, &config());
    let kept = conn::filter(&web, &paths);
    let id = |name: &str| HostId(table.hosts.iter().position(|host| host == name).unwrap() as u32);
    let kept: Vec<HostPair> = kept.iter().map(|ranked| ranked.pair).collect();
    // a and b link alike (relative links within each host); c adds an
    // out-link to another host on every page: 3 of 4 links in common is
    // under f = 0.9.
    assert_eq!(paths.len(), 3);
    assert_eq!(kept, vec![HostPair::new(id("a.example"), id("b.example"))]);
}

#[test]
fn a_path_is_the_page_the_crawl_fetched_when_http_redirects_to_https() {
    let crawl = vec![
        capture_with_status("http://a.example/docs/", "moved", 301),
        capture("https://a.example/docs/", &text("docsw", 40)),
    ];
    let (table, similarity) = run(&crawl, &Default::default());
    let web = hosts::Web::new(&table, &similarity, &config());
    let host = &web.hosts[0];
    assert_eq!(host.url_count(), 1);
    let page = host.page_at("/docs/").unwrap();
    assert_eq!(table.page(page).unwrap().status, 200);
}

#[test]
fn conn_needs_links_to_test() {
    // The same paths, no links at all: paths lists the pair, conn cannot
    // confirm it.
    let crawl = pair_of_sites("one.example", "two.example", "/docs/", "/docs/", 4);
    let (table, similarity) = run(&crawl, &Default::default());
    let web = hosts::Web::new(&table, &similarity, &config());
    let paths = terms::paths(&web, &config());
    assert_eq!(paths.len(), 1);
    assert!(conn::filter(&web, &paths).is_empty());
}

#[test]
fn a_parked_pair_answering_every_url_alike_is_no_mirror() {
    // Two parked domains answer the same twelve URLs with one page each:
    // the same bytes under the same paths, but no documents.
    let parked = "This domain is parked. Buy it now from the registrar.";
    let paths: Vec<String> = (0..12).map(|n| format!("/go/page-{n}.html")).collect();
    let mut captures = Vec::new();
    for host in ["parked-a.example", "parked-b.example"] {
        for path in &paths {
            captures.push(capture(&format!("http://{host}{path}"), parked));
        }
    }
    let (level, tests) = level(&captures, "parked-a.example", "parked-b.example");
    assert!(!level.is_mirror(), "{level:?} {tests:?}");
}

#[test]
fn hosts_of_a_small_replicated_manual_are_ranked_by_their_copies() {
    // A manual of 13 pages on three hosts, each below the 20 URLs a host
    // needs to be ranked otherwise: the copies make them a mirrored pair.
    use crate::collections::CollectionsConfig;
    use crate::test_support::manuals::{serve, tree, HostCopy};
    let manual = tree("small", &[("guide", 6), ("api", 4)]);
    let captures: Vec<Capture> = ["www.small.example", "mirror.example.net", "ftp.example.edu"]
        .iter()
        .flat_map(|&host| serve(&manual, &HostCopy::whole(host, "/docs/", host)))
        .collect();
    let (table, similarity) = run(&captures, &Default::default());
    let collections =
        crate::collections::analyse(&table, &similarity, &CollectionsConfig::default());
    let mirrors = analyse(&table, &similarity, &collections, &MirrorsConfig::default());
    assert_eq!(mirrors.counts.hosts_considered, 0);
    let id = |name: &str| HostId(table.hosts.iter().position(|host| host == name).unwrap() as u32);
    let ranked = mirrors.ranking(Ranker::Collections).unwrap();
    assert_eq!(ranked.pairs.len(), 3);
    let report = mirrors
        .pair(id("www.small.example"), id("mirror.example.net"))
        .unwrap();
    assert_eq!(report.level, Level::One, "{:?}", report.tests);
    let combined = mirrors.ranking(Ranker::Combined).unwrap();
    assert_eq!(combined.pairs.len(), 3);
}

/// Fingerprints held, counting the pages read.
struct Counted<'p> {
    prints: &'p Vec<Option<crate::fingerprint::Fingerprint>>,
    read: std::sync::Mutex<Vec<usize>>,
}

impl crate::fingerprint::Fingerprints for Counted<'_> {
    type Error = std::convert::Infallible;

    fn page_count(&self) -> usize {
        self.prints.len()
    }

    fn map_pages<R: Send>(
        &self,
        pages: &[usize],
        map: impl Fn(usize, Option<&crate::fingerprint::Fingerprint>) -> R + Sync,
    ) -> Result<Vec<R>, Self::Error> {
        self.read.lock().unwrap().extend_from_slice(pages);
        self.prints.map_pages(pages, map)
    }

    fn visit(
        &self,
        pages: &[usize],
        visit: &mut dyn FnMut(usize, Option<&crate::fingerprint::Fingerprint>),
    ) -> Result<(), Self::Error> {
        self.read.lock().unwrap().extend_from_slice(pages);
        self.prints.visit(pages, visit)
    }
}

#[test]
fn classification_reads_the_fingerprints_of_the_classified_hosts_alone() {
    // What the pipeline does: the similarity holds no fingerprint, they
    // are read, page by page, from where they were set aside.
    let mut crawl = small_web();
    // A host no ranker pairs with another: its pages are never read.
    let notes: Vec<(String, String)> = (0..6)
        .map(|i| (format!("/notes/n{i}.txt"), text(&format!("lone{i}w"), 80)))
        .collect();
    crawl.extend(
        notes
            .iter()
            .map(|(path, body)| capture(&format!("http://solitary.test{path}"), body)),
    );
    let (table, similarity) = run(&crawl, &Default::default());
    let collections = crate::collections::analyse(&table, &similarity, &Default::default());
    let held = analyse(&table, &similarity, &collections, &config());
    assert!(held.counts.mirrored_pairs > 0, "{:?}", held.counts);
    let lone = HostId(
        table
            .hosts
            .iter()
            .position(|host| host == "solitary.test")
            .unwrap() as u32,
    );
    assert!(held
        .pairs
        .iter()
        .all(|report| report.pair.a != lone && report.pair.b != lone));

    let counted = Counted {
        prints: &similarity.fingerprints,
        read: Default::default(),
    };
    let without = similarity.clone().without_fingerprints();
    let Ok(read) = analyse_reading(&table, (&without, &counted), &collections, &config(), &[]);
    assert_eq!(
        postcard::to_allocvec(&read).unwrap(),
        postcard::to_allocvec(&held).unwrap()
    );
    let asked = counted.read.into_inner().unwrap();
    assert!(!asked.is_empty());
    for (page, record) in table.pages.iter().enumerate() {
        if record.host == lone {
            assert!(!asked.contains(&page), "{} was read", record.url);
        }
    }
}
