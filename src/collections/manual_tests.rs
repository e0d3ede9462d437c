//! Joining by folders and choosing the principal copy, on small synthetic
//! webs of mirrored manuals: one web per way a manual falls apart or a
//! wrong copy is taken for the original.

use std::collections::BTreeSet;

use super::*;
use crate::ingest::Capture;
use crate::similarity::SimilarityConfig;
use crate::test_support::manuals::{serve, text, tree, HostCopy as Copy, Tree};
use crate::test_support::{capture, run};

/// The web served by `copies`, analysed.
fn analysed(trees: &[(&Tree, Vec<Copy>)], config: &CollectionsConfig) -> (PageTable, Collections) {
    let captures: Vec<Capture> = trees
        .iter()
        .flat_map(|(tree, copies)| copies.iter().flat_map(|copy| serve(tree, copy)))
        .collect();
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    let collections = analyse(&table, &similarity, config);
    (table, collections)
}

/// Each cluster of collections of two pages or more, as the set of its
/// copies' folders, with the principal's folder.
fn clusters(table: &PageTable, collections: &Collections) -> Vec<(String, BTreeSet<String>)> {
    let mut found: Vec<(String, BTreeSet<String>)> = collections
        .clusters
        .iter()
        .filter(|cluster| cluster.kind == ClusterKind::Collection)
        .map(|cluster| {
            let prefix = |id: CollectionId| collections.collections[id.0 as usize].prefix.clone();
            (
                prefix(cluster.principal()),
                cluster.collections.iter().map(|&id| prefix(id)).collect(),
            )
        })
        .collect();
    found.sort();
    let _ = table;
    found
}

/// Which folders the cluster of `url` holds pages of.
fn cluster_of_url(table: &PageTable, collections: &Collections, url: &str) -> Option<ClusterId> {
    collections.cluster_of(table.find_url(url)?)
}

fn folders(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|folder| folder.to_string()).collect()
}

#[test]
fn a_manual_whose_versions_differ_on_a_hub_is_one_cluster() {
    // The primary and two exact mirrors serve the new version; two mirrors
    // the old one, whose section indexes differ: these break points cut
    // cho's growth, so the manual grows into several clusters.
    let manual = tree(
        "hub",
        &[("intro", 4), ("api", 5), ("api/sub", 4), ("guide", 4)],
    );
    let hubs = ["api/index.html", "guide/index.html", "api/sub/index.html"];
    let copies = || {
        vec![
            Copy::whole("www.example.org", "/docs/", "192.0.2.1"),
            Copy::whole("mirror.example.net", "/docs/", "192.0.2.2"),
            Copy::whole("copy.example.com", "/docs/", "192.0.2.5"),
            Copy {
                changed: &hubs,
                ..Copy::whole("old.example.com", "/docs/", "192.0.2.3")
            },
            Copy {
                changed: &hubs,
                ..Copy::whole("ftp.example.edu", "/pub/manual/", "192.0.2.4")
            },
        ]
    };
    let grown_only = CollectionsConfig {
        folders: false,
        ..CollectionsConfig::default()
    };
    let (_, collections) = analysed(&[(&manual, copies())], &grown_only);
    assert!(
        collections.clusters.len() >= 3,
        "{}",
        collections.clusters.len()
    );

    let (table, collections) = analysed(&[(&manual, copies())], &CollectionsConfig::default());
    for cluster in &collections.clusters {
        eprintln!(
            "{:?} {:?}",
            cluster.kind,
            cluster
                .collections
                .iter()
                .map(|&c| (
                    collections.collections[c.0 as usize].prefix.clone(),
                    collections.collections[c.0 as usize]
                        .pages
                        .iter()
                        .map(|p| table.pages[p.0 as usize].url.clone())
                        .collect::<Vec<_>>()
                ))
                .collect::<Vec<_>>()
        );
    }
    assert_eq!(collections.clusters.len(), 1);
    assert_eq!(
        clusters(&table, &collections),
        [(
            "http://www.example.org/docs/".to_string(),
            folders(&[
                "http://copy.example.com/docs/",
                "http://ftp.example.edu/pub/manual/",
                "http://mirror.example.net/docs/",
                "http://old.example.com/docs/",
                "http://www.example.org/docs/"
            ])
        )]
    );
    // Every page of every copy is in it.
    let cluster = &collections.clusters[0];
    assert_eq!(
        collections.cluster_pages(cluster.id) as usize,
        5 * manual.pages.len()
    );
}

#[test]
fn a_mirror_site_with_several_manuals_keeps_them_apart() {
    let first = tree("first", &[("intro", 4), ("api", 6)]);
    let second = tree("second", &[("tutorial", 5), ("reference", 5)]);
    let (table, collections) = analysed(
        &[
            (
                &first,
                vec![
                    Copy::whole("first.example.org", "/docs/", "192.0.2.1"),
                    Copy::whole("first-mirror.example.net", "/docs/", "192.0.2.2"),
                    Copy::whole("mirrors.example.edu", "/pub/first/", "192.0.2.9"),
                ],
            ),
            (
                &second,
                vec![
                    Copy::whole("second.example.org", "/manual/", "192.0.2.3"),
                    Copy::whole("second-mirror.example.net", "/manual/", "192.0.2.4"),
                    Copy::whole("mirrors.example.edu", "/pub/second/", "192.0.2.9"),
                ],
            ),
        ],
        &CollectionsConfig::default(),
    );
    assert_eq!(
        clusters(&table, &collections),
        [
            (
                "http://first.example.org/docs/".to_string(),
                folders(&[
                    "http://first-mirror.example.net/docs/",
                    "http://first.example.org/docs/",
                    "http://mirrors.example.edu/pub/first/"
                ])
            ),
            (
                "http://second.example.org/manual/".to_string(),
                folders(&[
                    "http://mirrors.example.edu/pub/second/",
                    "http://second-mirror.example.net/manual/",
                    "http://second.example.org/manual/"
                ])
            )
        ]
    );
}

#[test]
fn translations_in_sibling_folders_are_not_copies() {
    // Each host serves the English manual under en/ and its translation
    // under de/ (the same paths, other words).
    let manual = tree("translated", &[("intro", 4), ("api", 6)]);
    let german: Vec<&str> = manual.pages.iter().map(|(path, _)| path.as_str()).collect();
    let mut copies = Vec::new();
    for (host, ip) in [
        ("www.example.org", "192.0.2.1"),
        ("mirror.example.net", "192.0.2.2"),
        ("copy.example.com", "192.0.2.3"),
    ] {
        copies.push(Copy::whole(host, "/docs/en/", ip));
        copies.push(Copy {
            changed: &german,
            ..Copy::whole(host, "/docs/de/", ip)
        });
    }
    let (table, collections) = analysed(&[(&manual, copies)], &CollectionsConfig::default());
    let en = cluster_of_url(
        &table,
        &collections,
        "http://www.example.org/docs/en/api/page1.html",
    );
    let de = cluster_of_url(
        &table,
        &collections,
        "http://www.example.org/docs/de/api/page1.html",
    );
    assert!(en.is_some() && de.is_some());
    assert_ne!(en, de);
    assert_eq!(clusters(&table, &collections).len(), 2);
}

#[test]
fn a_partial_mirror_of_a_sub_folder_joins_the_manual() {
    // A host holding only the api/ section, under a folder of its own.
    let manual = tree("partial", &[("intro", 4), ("api", 6), ("guide", 4)]);
    let only_api = |path: &str| path.starts_with("api/");
    let copies = vec![
        Copy::whole("www.example.org", "/docs/", "192.0.2.1"),
        Copy::whole("mirror.example.net", "/docs/", "192.0.2.2"),
        Copy::whole("copy.example.com", "/docs/", "192.0.2.3"),
        Copy {
            fetched: &only_api,
            ..Copy::whole("api.example.info", "/reference/", "192.0.2.4")
        },
    ];
    let (table, collections) = analysed(&[(&manual, copies)], &CollectionsConfig::default());
    let found = clusters(&table, &collections);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]
            .1
            .contains("http://api.example.info/reference/api/"),
        "{found:?}"
    );
    assert_eq!(found[0].0, "http://www.example.org/docs/");
}

#[test]
fn pages_of_one_copy_only_join_the_copy_of_their_tree() {
    // The primary has pages no mirror has: a page the mirrors' crawls
    // missed, and a page nothing links to (growth, which follows links,
    // never reaches it); a soft 404 on a partial mirror answers the URLs it
    // lacks with one page, which stays out.
    let manual = tree("one-copy", &[("intro", 4), ("api", 6)]);
    let mirrored = |path: &str| path != "api/page5.html" && path != "intro/page3.html";
    let partial = |path: &str| path.starts_with("api/") && path != "api/page5.html";
    let copies = [
        Copy::whole("www.example.org", "/docs/", "192.0.2.1"),
        Copy {
            fetched: &mirrored,
            ..Copy::whole("mirror.example.net", "/docs/", "192.0.2.2")
        },
        Copy {
            fetched: &mirrored,
            ..Copy::whole("copy.example.com", "/docs/", "192.0.2.3")
        },
        Copy {
            fetched: &partial,
            ..Copy::whole("part.example.info", "/docs/", "192.0.2.4")
        },
    ];
    let mut captures: Vec<Capture> = copies
        .iter()
        .flat_map(|copy| serve(&manual, copy))
        .collect();
    captures.push(capture(
        "http://www.example.org/docs/api/unlinked.html",
        &text("one-copy", "api/unlinked.html", false, None),
    ));
    let missing = "This page is not available on this mirror\nPlease use the primary site";
    for path in ["intro/page0.html", "intro/page1.html", "intro/page2.html"] {
        captures.push(capture(
            &format!("http://part.example.info/docs/{path}"),
            missing,
        ));
    }
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    let collections = analyse(&table, &similarity, &CollectionsConfig::default());
    let manual_cluster = cluster_of_url(
        &table,
        &collections,
        "http://www.example.org/docs/index.html",
    );
    assert!(manual_cluster.is_some());
    for url in [
        "http://www.example.org/docs/api/page5.html",
        "http://www.example.org/docs/api/unlinked.html",
        "http://www.example.org/docs/intro/page3.html",
        "http://part.example.info/docs/api/page1.html",
    ] {
        assert_eq!(
            cluster_of_url(&table, &collections, url),
            manual_cluster,
            "{url}"
        );
    }
    assert_ne!(
        cluster_of_url(
            &table,
            &collections,
            "http://part.example.info/docs/intro/page1.html"
        ),
        manual_cluster
    );
    assert_eq!(collections.counts.completed_pages, 1);
}

#[test]
fn the_principal_copy_is_the_complete_current_original() {
    // The original (its name last in every order of names) against: an
    // older version on three hosts, a mirror with a banner crawled in part,
    // a partial mirror, and an exact copy on a mirror operator's machine
    // that also serves another manual.
    let manual = tree("original", &[("intro", 5), ("api", 8), ("guide", 5)]);
    let other = tree("other", &[("tutorial", 6)]);
    let older: Vec<&str> = manual
        .pages
        .iter()
        .map(|(path, _)| path.as_str())
        .filter(|path| path.ends_with("page1.html") || path.ends_with("page2.html"))
        .collect();
    let most = |path: &str| !path.ends_with("page3.html");
    let api = |path: &str| path.starts_with("api/");
    let copies = vec![
        Copy::whole("zz-original.example.org", "/manual/", "192.0.2.1"),
        Copy {
            changed: &older,
            ..Copy::whole("a.example.net", "/m/", "192.0.2.2")
        },
        Copy {
            changed: &older,
            ..Copy::whole("b.example.net", "/m/", "192.0.2.3")
        },
        Copy {
            changed: &older,
            ..Copy::whole("c.example.net", "/m/", "192.0.2.4")
        },
        Copy {
            banner: Some("Mirrored by D from zz-original"),
            fetched: &most,
            ..Copy::whole("d.example.net", "/m/", "192.0.2.5")
        },
        Copy {
            fetched: &api,
            ..Copy::whole("e.example.net", "/m/", "192.0.2.6")
        },
        Copy::whole("f.example.net", "/m/", "192.0.2.9"),
    ];
    let other_copies = vec![
        Copy::whole("other.example.org", "/t/", "192.0.2.7"),
        Copy::whole("other-mirror.example.net", "/t/", "192.0.2.9"),
    ];
    let (table, collections) = analysed(
        &[(&manual, copies), (&other, other_copies)],
        &CollectionsConfig::default(),
    );
    let found = clusters(&table, &collections);
    let principal_of = |folder: &str| {
        found
            .iter()
            .find(|(_, copies)| copies.contains(folder))
            .map(|(principal, _)| principal.as_str())
    };
    assert_eq!(
        principal_of("http://a.example.net/m/"),
        Some("http://zz-original.example.org/manual/")
    );
    assert_eq!(
        principal_of("http://other-mirror.example.net/t/"),
        Some("http://other.example.org/t/")
    );
}

#[test]
fn why_a_cluster_stays_apart_is_told_by_the_rule_that_kept_it() {
    // A second manual mirrored on three hosts, one of its copies inside a
    // folder of the first manual's copy: it is not a part of the first.
    let first = tree("first", &[("intro", 4), ("api", 6)]);
    let second = tree("second", &[("tutorial", 5)]);
    let copies = [
        Copy::whole("a.example", "/docs/", "192.0.2.1"),
        Copy::whole("b.example", "/docs/", "192.0.2.2"),
    ];
    let seconds = [
        Copy::whole("a.example", "/docs/extra/", "192.0.2.1"),
        Copy::whole("c.example", "/tutorial/", "192.0.2.3"),
        Copy::whole("d.example", "/tutorial/", "192.0.2.4"),
    ];
    let captures: Vec<Capture> = copies
        .iter()
        .map(|copy| (&first, copy))
        .chain(seconds.iter().map(|copy| (&second, copy)))
        .flat_map(|(tree, copy)| serve(tree, copy))
        .collect();
    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    let collections = analyse(&table, &similarity, &CollectionsConfig::default());
    let first_id =
        cluster_of_url(&table, &collections, "http://a.example/docs/index.html").unwrap();
    let second_id = cluster_of_url(
        &table,
        &collections,
        "http://a.example/docs/extra/index.html",
    )
    .unwrap();
    assert_ne!(first_id, second_id);
    // The join pass kept its verdict with the cluster.
    let verdict = collections.cluster(second_id).unwrap().verdict;
    assert_eq!(
        verdict.apart,
        Some(crate::collections::Apart::NotHeld { held: 1, copies: 3 })
    );
    assert_eq!(verdict.parts_joined, 0);
    let urls: Vec<&str> = table.pages.iter().map(|page| page.url.as_ref()).collect();
    let hosts: Vec<crate::pages::HostId> = table.pages.iter().map(|page| page.host).collect();
    let stand_ins = similarity.stand_ins();
    let folders = manuals::PageFolders {
        urls: &urls,
        hosts: &hosts,
        labels: &similarity.trivial,
        stand_ins,
        rules: &collections.config.rules,
    };
    let why = manuals::why_apart(&collections, first_id, second_id, &folders);
    assert!(
        why.starts_with("1 of its 3 copies lie inside a folder of cluster")
            && why.contains("http://c.example/tutorial/"),
        "{why}"
    );
    let grown_only = CollectionsConfig {
        folders: false,
        ..CollectionsConfig::default()
    };
    let collections = analyse(&table, &similarity, &grown_only);
    assert_eq!(
        collections.cluster(second_id).unwrap().verdict.apart,
        Some(crate::collections::Apart::FoldersOff)
    );
    let why = manuals::why_apart(&collections, first_id, second_id, &folders);
    assert!(why.contains("collections.folders"), "{why}");
}

#[test]
fn a_page_a_content_farm_copied_is_a_copy_of_the_page_not_of_the_manual() {
    // The manual whole on its site and a mirror, and on a partial mirror
    // that has its front page and one section; an old version of it on a
    // host of its own, every page but one rewritten since. A Q&A site
    // copies one page of it into its own template, among questions of its
    // own that link to one another and to the copy.
    let manual = tree("farmed", &[("guide", 4), ("api", 4)]);
    let unchanged = "guide/page3.html";
    let rewritten: Vec<&str> = manual
        .pages
        .iter()
        .map(|(path, _)| path.as_str())
        .filter(|path| *path != unchanged)
        .collect();
    let mut captures: Vec<Capture> = [
        Copy::whole("docs.farmed.test", "/manual/", "192.0.2.1"),
        Copy::whole("mirror.farmed.test", "/farmed/", "192.0.2.2"),
        Copy {
            fetched: &|path: &str| path == "index.html" || path.starts_with("guide/"),
            ..Copy::whole("part.farmed.test", "/f/", "192.0.2.3")
        },
        Copy {
            changed: &rewritten,
            ..Copy::whole("old.farmed.test", "/old/", "192.0.2.4")
        },
    ]
    .iter()
    .flat_map(|copy| serve(&manual, copy))
    .collect();
    let copied = "guide/page2.html";
    assert!(manual.pages.iter().any(|(path, _)| path == copied));
    let question = |n: usize| format!("http://answers.farm.test/q/{n}.html");
    for n in 0..6 {
        let lines: Vec<String> = (0..12)
            .map(|line| format!("Question {n} of the farm asks thing {line} its own way"))
            .collect();
        let mut page = capture(&question(n), &lines.join("\n"));
        page.links = crate::pages::Links::from_iter([
            question((n + 1) % 6),
            "http://answers.farm.test/copied/1.html".to_string(),
        ]);
        captures.push(page);
    }
    // A sibling manual beside it on its site shares one page, under the same
    // file name, beside its own front page.
    let sibling = |page: &str| format!("http://docs.farmed.test/sibling/{page}");
    let shared = "guide/page1.html";
    let mut front = capture(
        &sibling("index.html"),
        "The sibling manual's own front page",
    );
    front.links = crate::pages::Links::from_iter([sibling("page1.html"), sibling("own.html")]);
    let mut own = capture(&sibling("own.html"), "A page the sibling manual has alone");
    own.links = crate::pages::Links::from_iter([sibling("index.html")]);
    let mut licence = capture(&sibling("page1.html"), &text("farmed", shared, false, None));
    licence.links = crate::pages::Links::from_iter([sibling("index.html")]);
    captures.extend([front, own, licence]);
    // A mirror's page whose one link to a page with copies goes through a
    // redirect (`guide` -> `guide/index.html`), beside a page of its own.
    let redirected = |page: &str| format!("http://redir.farmed.test/r/{page}");
    let mut section = capture(
        &redirected("guide/index.html"),
        &text("farmed", "guide/index.html", false, None),
    );
    section.links = crate::pages::Links::from_iter([redirected("notes.html")]);
    let mut moved = crate::test_support::capture_with_status(&redirected("guide"), "", 301);
    moved.links = crate::pages::Links::from_iter([redirected("guide/index.html")]);
    let notes = capture(
        &redirected("notes.html"),
        "Notes of the redirecting mirror alone",
    );
    let mut behind = capture(
        &redirected("guide/page0.html"),
        &text("farmed", "guide/page0.html", false, None),
    );
    behind.links = crate::pages::Links::from_iter([redirected("guide"), redirected("notes.html")]);
    captures.extend([section, moved, notes, behind]);
    let mut copy = capture(
        "http://answers.farm.test/copied/1.html",
        &text(
            "farmed",
            copied,
            false,
            Some("Sponsored: answers for developers"),
        ),
    );
    copy.links = crate::pages::Links::from_iter([question(0), question(3)]);
    captures.push(copy);

    let (table, similarity) = run(&captures, &SimilarityConfig::default());
    let page = |url: &str| table.find_url(url).unwrap();
    let farm_copy = page("http://answers.farm.test/copied/1.html");
    let original = page(&format!("http://docs.farmed.test/manual/{copied}"));
    assert_eq!(
        similarity.cluster_of(farm_copy),
        similarity.cluster_of(original),
        "the farm's page is a copy of the page"
    );
    let graph = WebGraph::from_table(&table, CollectionsConfig::default().rules.redirect_hops);
    let alone = copied_alone(&table, &similarity, &graph);
    let flagged: Vec<&str> = (0..table.pages.len())
        .filter(|&index| alone[index])
        .map(|index| table.pages[index].url.as_ref())
        .collect();
    // The old version's one unchanged page sits among pages with no copy
    // too, but where its copies sit (its name, beside its section's index):
    // a page of that old copy. The sibling's shared page has the name, but
    // sits beside the sibling's front page.
    assert_eq!(
        flagged,
        [
            "http://answers.farm.test/copied/1.html",
            "http://docs.farmed.test/sibling/page1.html"
        ]
    );
    let old_page = page(&format!("http://old.farmed.test/old/{unchanged}"));
    assert_eq!(
        similarity.cluster_of(old_page),
        similarity.cluster_of(page(&format!("http://docs.farmed.test/manual/{unchanged}")))
    );

    let collections = analyse(&table, &similarity, &CollectionsConfig::default());
    assert_eq!(collections.cluster_of(farm_copy), None);
    let found = clusters(&table, &collections);
    assert_eq!(found[0].0, "http://docs.farmed.test/manual/");
    assert!(
        found[0].1.is_superset(&folders(&[
            "http://docs.farmed.test/manual/",
            "http://mirror.farmed.test/farmed/",
            "http://part.farmed.test/f/",
        ])),
        "one manual, its partial mirror included: {found:?}"
    );
    assert!(
        found
            .iter()
            .all(|(_, copies)| copies.iter().all(|copy| !copy.contains("farm.test/"))),
        "no copy on the farm: {found:?}"
    );
    // The copied page's copies are in the manual's cluster.
    let cluster = collections.cluster_of(page("http://docs.farmed.test/manual/index.html"));
    assert!(cluster.is_some());
    for base in [
        "http://docs.farmed.test/manual/",
        "http://mirror.farmed.test/farmed/",
        "http://part.farmed.test/f/",
    ] {
        assert_eq!(
            collections.cluster_of(page(&format!("{base}{copied}"))),
            cluster,
            "{base}{copied}"
        );
    }
}

#[test]
fn a_page_is_named_by_its_file_or_its_folder() {
    assert_eq!(page_name("http://a.example/docs/Guide/Intro.HTML"), "intro");
    assert_eq!(
        page_name("http://a.example/docs/guide/intro.html?x=1#top"),
        "intro"
    );
    assert_eq!(page_name("http://a.example/docs/guide/"), "guide");
    assert_eq!(page_name("http://a.example/docs/guide/index.html"), "guide");
    assert_eq!(page_name("http://a.example/docs/fn.empty.html"), "fn.empty");
    assert_eq!(page_name("http://a.example/"), "");
    assert_eq!(page_name("http://a.example/q/17"), "17");
}
