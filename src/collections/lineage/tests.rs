//! Small synthetic webs, one per mechanism of the lineage pass.

use super::*;
use crate::collections::{analyse, CollectionsConfig};
use crate::ingest::Capture;
use crate::language::{Language, PageLanguage};
use crate::similarity::SimilarityConfig;
use crate::test_support::{capture, run};

/// Topics of a small manual: a front page and `pages` reference pages.
fn topics(pages: usize) -> Vec<String> {
    let mut topics = vec!["index.html".to_string()];
    topics.extend((0..pages).map(|n| format!("ref/topic{n}.html")));
    topics
}

/// The text of a topic in a release: twelve lines of its own, of which the
/// release rewrote a third (`edit` 0, 1 or 2 picks which third; `None`: the
/// original text), after a navigation bar.
fn release_text(manual: &str, topic: &str, edit: Option<usize>, language: &str) -> String {
    let mut lines: Vec<String> = (0..6)
        .map(|n| format!("{manual} navigation entry {n}"))
        .collect();
    for n in 0..12 {
        let rewritten = edit.is_some_and(|third| n % 3 == third);
        lines.push(if rewritten {
            format!("{language} {manual} {topic} was rewritten at point {n} for this release only")
        } else {
            format!("{language} {manual} {topic} explains point {n} in its own plain words here")
        });
    }
    lines.join("\n")
}

/// One host serving a release of a manual under `prefix`, every page
/// linking to the front page and the front page to every page.
fn release(
    host: &str,
    prefix: &str,
    manual: &str,
    version: &str,
    edit: Option<usize>,
    topics: &[String],
) -> Vec<Capture> {
    release_in("English", host, prefix, manual, version, edit, topics)
}

/// [`release`], written in `language`.
fn release_in(
    language: &str,
    host: &str,
    prefix: &str,
    manual: &str,
    version: &str,
    edit: Option<usize>,
    topics: &[String],
) -> Vec<Capture> {
    let url = |topic: &str| format!("http://{host}{prefix}{topic}");
    topics
        .iter()
        .map(|topic| {
            let mut page = capture(&url(topic), &release_text(manual, topic, edit, language));
            page.title = format!("{topic} ({manual} {version} documentation)");
            page.versions = Box::new([Box::from(version)]);
            page.links = if topic == "index.html" {
                topics.iter().skip(1).map(|t| url(t)).collect()
            } else {
                [url("index.html")].into_iter().collect()
            };
            page
        })
        .collect()
}

fn lineages_of(web: &[Capture]) -> (crate::pages::PageTable, Collections) {
    let (table, similarity) = run(web, &SimilarityConfig::default());
    let collections = analyse(&table, &similarity, &CollectionsConfig::default());
    assert_eq!(collections.problem(table.pages.len()), None);
    (table, collections)
}

/// Copies as (host, version).
type Copies = Vec<(String, Option<String>)>;

/// The lineage of a URL, and its copies.
fn lineage_at(
    table: &crate::pages::PageTable,
    collections: &Collections,
    url: &str,
) -> Option<(LineageId, Copies)> {
    let page = table.find_url(url)?;
    let place = collections.lineages.of(page)?;
    let lineage = collections.lineages.lineage(place.lineage)?;
    Some((
        place.lineage,
        lineage
            .copies
            .iter()
            .map(|copy| (table.host_name(copy.host).to_string(), copy.version.clone()))
            .collect(),
    ))
}

/// Widget 4.2, 3.2 and 2.2 on three hosts, each release rewriting another
/// third of every page.
fn three_widget_releases(topics: &[String]) -> Vec<Capture> {
    let mut web = release(
        "docs.example.org",
        "/manual/",
        "Widget",
        "4.2",
        None,
        topics,
    );
    web.extend(release(
        "mirror.example.net",
        "/widget/",
        "Widget",
        "3.2",
        Some(0),
        topics,
    ));
    web.extend(release(
        "old.example.com",
        "/pub/widget/",
        "Widget",
        "2.2",
        Some(1),
        topics,
    ));
    web
}

#[test]
fn three_versions_on_three_hosts_are_one_manual_shown_from_the_newest() {
    let topics = topics(12);
    let web = three_widget_releases(&topics);
    let (table, collections) = lineages_of(&web);
    // No two releases are copies of each other: no cluster at all.
    assert!(collections.clusters.is_empty());
    let (id, copies) = lineage_at(
        &table,
        &collections,
        "http://old.example.com/pub/widget/ref/topic3.html",
    )
    .expect("a version in no cluster is in the lineage");
    assert_eq!(
        copies,
        vec![
            ("docs.example.org".to_string(), Some("4.2".to_string())),
            ("mirror.example.net".to_string(), Some("3.2".to_string())),
            ("old.example.com".to_string(), Some("2.2".to_string())),
        ],
        "the newest version first, then the older ones"
    );
    for url in [
        "http://docs.example.org/manual/index.html",
        "http://mirror.example.net/widget/ref/topic0.html",
    ] {
        assert_eq!(lineage_at(&table, &collections, url).map(|l| l.0), Some(id));
    }
    let lineage = collections.lineages.lineage(id).unwrap();
    assert_eq!(lineage.versions(), vec!["4.2", "3.2", "2.2"]);
    assert_eq!(collections.lineages.counts.with_versions, 1);
}

#[test]
fn an_older_version_on_two_mirrors_does_not_hide_the_newer_original() {
    // 3.2 is on two mirrors (a cluster of two copies), 4.2 only on the
    // original: the original is still the one shown.
    let topics = topics(12);
    let mut web = release(
        "docs.example.org",
        "/manual/",
        "Widget",
        "4.2",
        None,
        &topics,
    );
    web.extend(release(
        "a.mirror.net",
        "/widget/",
        "Widget",
        "3.2",
        Some(0),
        &topics,
    ));
    web.extend(release(
        "b.mirror.org",
        "/widget/",
        "Widget",
        "3.2",
        Some(0),
        &topics,
    ));
    let (table, collections) = lineages_of(&web);
    assert_eq!(collections.clusters.len(), 1, "the two 3.2 copies");
    let (_, copies) = lineage_at(
        &table,
        &collections,
        "http://a.mirror.net/widget/index.html",
    )
    .unwrap();
    assert_eq!(
        copies[0],
        ("docs.example.org".to_string(), Some("4.2".to_string()))
    );
    assert_eq!(copies.len(), 3);
}

#[test]
fn translations_under_the_same_paths_are_other_manuals() {
    let topics = topics(12);
    let mut web = Vec::new();
    for (host, language, code) in [
        ("en.example.org", "English", "eng"),
        ("fr.example.org", "Francais", "fra"),
        ("de.example.org", "Deutsch", "deu"),
    ] {
        for mut page in release_in(language, host, "/handbook/", "Widget", "4.2", None, &topics) {
            page.language = PageLanguage::Declared(Language::from_code(code).unwrap());
            web.push(page);
        }
    }
    let (table, collections) = lineages_of(&web);
    assert!(
        collections.clusters.is_empty(),
        "translations are no copies"
    );
    for host in ["en", "fr", "de"] {
        assert_eq!(
            lineage_at(
                &table,
                &collections,
                &format!("http://{host}.example.org/handbook/index.html")
            ),
            None,
            "{host}: a translation is no version of another"
        );
    }
}

#[test]
fn sibling_manuals_sharing_a_licence_and_an_install_page_stay_apart() {
    // Two projects of one organisation: the same licence and install pages
    // (the project's name aside) at the same places, every other page their
    // own: two of thirteen pages resemble, no majority.
    let shared = ["licence.html", "install.html"];
    let mut web = Vec::new();
    for (host, manual) in [("alpha.example.org", "Alpha"), ("beta.example.org", "Beta")] {
        let mut topics: Vec<String> = vec!["index.html".into()];
        topics.extend((0..10).map(|n| format!("{}/part{n}.html", manual.to_lowercase())));
        topics.extend(shared.iter().map(|page| page.to_string()));
        for mut page in release(host, "/docs/", manual, "1.0", None, &topics) {
            let name = page.info.url.rsplit('/').next().unwrap().to_string();
            // Each project's pages in words of its own.
            let own: Vec<String> = (0..12)
                .map(|n| format!("{manual}{n} {name} {manual}word{n} {manual}idea {manual}end"))
                .collect();
            let url = page.info.url.clone();
            page.fingerprint = capture(&url, &own.join("\n")).fingerprint;
            page.content_key = capture(&url, &own.join("\n")).content_key;
            if shared.contains(&name.as_str()) {
                // The organisation's text, the project's name in it: pages
                // that resemble, not copies.
                let mut shared_page = capture(
                    &page.info.url,
                    &release_text(&format!("Organisation {manual}"), &name, None, "English"),
                );
                shared_page.title = name;
                shared_page.links = page.links;
                web.push(shared_page);
            } else {
                web.push(page);
            }
        }
    }
    let (table, collections) = lineages_of(&web);
    let of = |url: &str| lineage_at(&table, &collections, url).map(|lineage| lineage.0);
    assert!(collections.clusters.is_empty());
    let alpha = of("http://alpha.example.org/docs/alpha/part3.html");
    let beta = of("http://beta.example.org/docs/beta/part3.html");
    assert!(alpha.is_none() && beta.is_none(), "{alpha:?} {beta:?}");
}

#[test]
fn pages_only_one_copy_has_are_pages_of_its_manual() {
    use crate::test_support::manuals::{serve, tree, HostCopy};
    let manual = tree("Gizmo", &[("guide", 6), ("api", 6)]);
    let mut web = serve(
        &manual,
        &HostCopy::whole("docs.example.org", "/gizmo/", "192.0.2.1"),
    );
    web.extend(serve(
        &manual,
        &HostCopy::whole("mirror.example.net", "/gizmo/", "192.0.2.2"),
    ));
    // A page of one version only, in a folder no other page of it is in,
    // and a page of the host outside the manual.
    web.push(capture(
        "http://docs.example.org/gizmo/new/feature.html",
        "A feature only this release documents, in words of its own",
    ));
    web.push(capture(
        "http://docs.example.org/blog/post.html",
        "A blog post about something else entirely, in words of its own",
    ));
    let (table, collections) = lineages_of(&web);
    let (id, copies) = lineage_at(
        &table,
        &collections,
        "http://docs.example.org/gizmo/index.html",
    )
    .unwrap();
    assert_eq!(copies.len(), 2);
    assert_eq!(
        lineage_at(
            &table,
            &collections,
            "http://docs.example.org/gizmo/new/feature.html"
        )
        .map(|l| l.0),
        Some(id)
    );
    assert_eq!(
        lineage_at(
            &table,
            &collections,
            "http://docs.example.org/blog/post.html"
        ),
        None
    );
}

#[test]
fn versions_are_ordered_as_numbers() {
    assert_eq!(compare_versions("10.1", "9.6"), Ordering::Greater);
    assert_eq!(compare_versions("1.85.0", "1.63.0"), Ordering::Greater);
    assert_eq!(compare_versions("3.1.x", "3.1.1"), Ordering::Less);
    assert_eq!(compare_versions("v2.0", "2.0"), Ordering::Equal);
    assert_eq!(compare_versions("2.4.71", "2.4"), Ordering::Greater);
    assert!(same_release("10.1", "10.1.60") && same_release("3.1.x", "3.1.1"));
    assert!(!same_release("10.1.55", "10.1.60") && !same_release("2.2", "3.1"));
    assert_eq!(
        title_key("CREATE TYPE (PostgreSQL 15.20)"),
        title_key("create type (postgresql 13.23)")
    );
}

#[test]
fn a_copy_names_the_most_precise_version_its_pages_say() {
    let mut pages = Vec::new();
    for n in 0..12 {
        let mut page = capture(&format!("http://docs.example.org/tomcat/p{n}.html"), "text");
        // The manual's name on every page, the release in most titles,
        // and a version some page happens to mention.
        let mut versions = vec!["10.1"];
        if n < 9 {
            versions.push("10.1.60");
        }
        if n == 3 {
            versions.push("1.1");
        }
        page.versions = versions.into_iter().map(Box::from).collect();
        pages.push(page);
    }
    let table = crate::pages::PageTable::build(&[&pages]);
    let ids: Vec<PageId> = (0..table.pages.len() as u32).map(PageId).collect();
    let config = LineageConfig::default();
    assert_eq!(
        version_of(&table, "http://docs.example.org/tomcat/", &ids, &config).as_deref(),
        Some("10.1.60")
    );
    // A version in the folder's path wins.
    assert_eq!(
        version_of(
            &table,
            "http://mirror.example.net/apache/tomcat/10.1.55/",
            &ids,
            &config
        )
        .as_deref(),
        Some("10.1.55")
    );
    // A path naming the release takes the pages' more precise version of
    // it (one release is not shown as `10.1` on one copy and `10.1.60` on
    // another), and not a version some page happens to mention.
    assert_eq!(
        version_of(
            &table,
            "http://tomcat.example.net/tomcat-10.1-doc/",
            &ids,
            &config
        )
        .as_deref(),
        Some("10.1.60")
    );
    // Said by too few of the copy's pages (1 of 4), it is not taken.
    let some: Vec<PageId> = ids
        .iter()
        .copied()
        .filter(|&id| {
            let url = &table.pages[id.0 as usize].url;
            ["p8.html", "p9.html", "p10.html", "p11.html"]
                .iter()
                .any(|name| url.ends_with(name))
        })
        .collect();
    assert_eq!(
        version_of(
            &table,
            "http://tomcat.example.net/tomcat-10.1-doc/",
            &some,
            &config
        )
        .as_deref(),
        Some("10.1")
    );
    // Pages that name no version in common name none.
    let few = &ids[..1];
    let mut table = table;
    for page in &mut table.pages[1..] {
        page.versions = Box::default();
    }
    assert_eq!(
        version_of(&table, "http://docs.example.org/tomcat/", &ids, &config),
        None
    );
    assert!(version_of(&table, "http://docs.example.org/tomcat/", few, &config).is_some());
}

#[test]
fn a_sub_tree_that_is_a_cluster_of_its_own_is_a_part_of_its_manual() {
    use crate::test_support::manuals::{serve, tree, HostCopy};
    // The manual on two hosts, and a sub-tree of it that nothing in the
    // manual links to: a cluster of its own (with the joining of parts by
    // folders off), inside the manual's copies.
    let manual = tree("Gizmo", &[("guide", 8), ("api", 8)]);
    let mut web = Vec::new();
    for (host, ip) in [
        ("docs.example.org", "192.0.2.1"),
        ("mirror.example.net", "192.0.2.2"),
    ] {
        web.extend(serve(&manual, &HostCopy::whole(host, "/gizmo/", ip)));
        for n in 0..3 {
            let mut page = capture(
                &format!("http://{host}/gizmo/params/p{n}.html"),
                &format!("Parameter {n} of the Gizmo configuration, described at length here"),
            );
            page.links = crate::pages::Links::from_iter([format!(
                "http://{host}/gizmo/params/p{}.html",
                (n + 1) % 3
            )]);
            web.push(page);
        }
    }
    let (table, similarity) = run(&web, &SimilarityConfig::default());
    let grown_only = CollectionsConfig {
        folders: false,
        ..CollectionsConfig::default()
    };
    let collections = analyse(&table, &similarity, &grown_only);
    assert_eq!(collections.problem(table.pages.len()), None);
    let (id, copies) = lineage_at(
        &table,
        &collections,
        "http://docs.example.org/gizmo/index.html",
    )
    .unwrap();
    assert_eq!(
        copies.len(),
        2,
        "one copy a host, its parts folded in: {copies:?}"
    );
    let url = "http://mirror.example.net/gizmo/params/p1.html";
    assert_eq!(lineage_at(&table, &collections, url).map(|l| l.0), Some(id));
    let parts: Vec<_> = collections
        .clusters
        .iter()
        .filter(|cluster| collections.lineages.is_part(&collections, cluster.id))
        .collect();
    assert_eq!(parts.len(), 1, "the sub-tree is a part");
    assert_eq!(collections.clusters.len(), 2, "the manual is not");
    assert_eq!(collections.lineages.counts.parts, 1);
}

#[test]
fn a_copy_naming_its_release_less_precisely_is_of_that_release() {
    // The original's pages say `10.1`, its mirror's `10.1.60` (another
    // build of the same pages): the original stays the principal.
    let topics = topics(12);
    let mut web = release(
        "docs.example.org",
        "/manual/",
        "Widget",
        "10.1",
        None,
        &topics,
    );
    for mut page in release(
        "m.example.net",
        "/manual/",
        "Widget",
        "10.1.60",
        None,
        &topics,
    ) {
        page.links.push("http://docs.example.org/manual/index.html");
        web.push(page);
    }
    let (table, collections) = lineages_of(&web);
    let (_, copies) = lineage_at(
        &table,
        &collections,
        "http://m.example.net/manual/index.html",
    )
    .unwrap();
    assert_eq!(copies[0].0, "docs.example.org");
}

#[test]
fn the_stage_reading_fingerprints_from_their_file_finds_what_it_finds_holding_them() {
    // Three versions joined by rule 4 (their pages resemble), a mirror of
    // the newest (a cluster of collections), a stand-in host.
    let topics = topics(12);
    let mut web = three_widget_releases(&topics);
    web.extend(release(
        "copy.example.info",
        "/docs/",
        "Widget",
        "4.2",
        None,
        &topics,
    ));
    web.extend((0..12).map(|n| capture(&format!("http://parked.example/p{n}.html"), "Not here.")));
    let (table, similarity) = run(&web, &SimilarityConfig::default());
    let held = analyse(&table, &similarity, &CollectionsConfig::default());
    assert!(held.counts.lineage.versions_joined > 0, "{:?}", held.counts);
    assert!(held
        .clusters
        .iter()
        .any(|cluster| cluster.kind == ClusterKind::Collection));
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("fingerprints.bin");
    crate::generation::write_fingerprints(&path, &similarity.fingerprints).unwrap();
    let file = crate::generation::FingerprintFile::open(&path).unwrap();
    let without = similarity.clone().without_fingerprints();
    let read =
        crate::collections::analyse_with(&table, (&without, &file), &CollectionsConfig::default())
            .unwrap();
    assert_eq!(
        postcard::to_allocvec(&read).unwrap(),
        postcard::to_allocvec(&held).unwrap()
    );
}
