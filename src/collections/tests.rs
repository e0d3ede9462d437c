//! The paper's figures as hand-built graphs, and Definition 5 checked on
//! generated replicated sites.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;

use super::*;

/// A hand-built web: pages named like the figures ("a" on host 0 and "a'"
/// on host 1 are copies when given the same label).
#[derive(Default)]
struct Web {
    hosts: Vec<HostId>,
    labels: Vec<TrivialClusterId>,
    names: Vec<String>,
    uncrawled: Vec<Vec<u64>>,
    links: Vec<(PageId, PageId)>,
    label_names: HashMap<String, TrivialClusterId>,
}

impl Web {
    /// Adds a page named `name` on `host`, similar to every page given the
    /// same `label` (`None`: compared with nothing, like a redirect).
    fn page(&mut self, name: &str, host: u32, label: Option<&str>) -> PageId {
        let id = PageId(self.hosts.len() as u32);
        self.hosts.push(HostId(host));
        self.names.push(name.to_string());
        self.uncrawled.push(Vec::new());
        let next = TrivialClusterId(self.label_names.len() as u32);
        let label = label.map_or(TrivialClusterId::NONE, |label| {
            *self.label_names.entry(label.to_string()).or_insert(next)
        });
        self.labels.push(label);
        id
    }

    fn id(&self, name: &str) -> PageId {
        let index = self.names.iter().position(|n| n == name);
        PageId(index.unwrap_or_else(|| panic!("no page {name}")) as u32)
    }

    fn link(&mut self, from: &str, to: &str) {
        self.links.push((self.id(from), self.id(to)));
    }

    fn graph(&self) -> WebGraph {
        WebGraph::new(self.hosts.clone(), self.links.clone())
    }

    fn collections(&self, config: &CollectionsConfig) -> Collections {
        let facts = PageFacts {
            urls: self.names.iter().map(String::as_str).collect(),
            uncrawled_links: self.uncrawled.iter().map(Vec::as_slice).collect(),
            own_text: Vec::new(),
            addresses: Vec::new(),
            stand_ins: Vec::new(),
            ..PageFacts::default()
        };
        build(
            &self.graph(),
            &self.labels,
            self.label_names.len(),
            config,
            &facts,
        )
    }

    /// Records that `from` links to `to`, a URL that was not crawled.
    fn uncrawled(&mut self, from: &str, to: &str) {
        let page = self.id(from).0 as usize;
        let key = crate::pages::relative_link_key(from, to).expect("same host");
        self.uncrawled[page].push(key);
        self.uncrawled[page].sort_unstable();
    }

    /// Each cluster as its collections' page names, sorted.
    fn clusters(&self, collections: &Collections) -> Vec<Vec<Vec<String>>> {
        let mut clusters: Vec<Vec<Vec<String>>> = collections
            .clusters
            .iter()
            .map(|cluster| {
                let mut copies: Vec<Vec<String>> = cluster
                    .collections
                    .iter()
                    .map(|&id| {
                        let mut names: Vec<String> = collections.collections[id.0 as usize]
                            .pages
                            .iter()
                            .map(|page| self.names[page.0 as usize].clone())
                            .collect();
                        names.sort();
                        names
                    })
                    .collect();
                copies.sort();
                copies
            })
            .collect();
        clusters.sort();
        clusters
    }
}

fn names(groups: &[&[&str]]) -> Vec<Vec<String>> {
    groups
        .iter()
        .map(|group| group.iter().map(|name| name.to_string()).collect())
        .collect()
}

/// cho's strict condition (§3), the clusters as grown.
fn strict() -> CollectionsConfig {
    CollectionsConfig {
        extended: false,
        folders: false,
        ..CollectionsConfig::default()
    }
}

/// cho Figure 6: three sites holding a, b, c, d (a links to b and c, c to
/// d); two of them also hold t, linked from b; the first also holds s and
/// g, unlinked.
fn figure_6() -> Web {
    let mut web = Web::default();
    for (host, mark) in ["", "'", "''"].iter().enumerate() {
        for label in ["a", "b", "c", "d"] {
            web.page(&format!("{label}{mark}"), host as u32, Some(label));
        }
        web.link(&format!("a{mark}"), &format!("b{mark}"));
        web.link(&format!("a{mark}"), &format!("c{mark}"));
        web.link(&format!("c{mark}"), &format!("d{mark}"));
        if host < 2 {
            web.page(&format!("t{mark}"), host as u32, Some("t"));
            web.link(&format!("b{mark}"), &format!("t{mark}"));
        }
    }
    web.page("s", 0, Some("s"));
    web.page("g", 0, Some("g"));
    web
}

#[test]
fn figure_6_link_summary_has_the_papers_counts() {
    let web = figure_6();
    let sizes: Vec<u32> = (0..web.label_names.len() as u32)
        .map(TrivialClusterId)
        .map(|label| web.labels.iter().filter(|&&l| l == label).count() as u32)
        .collect();
    let rows = link_summary(
        &web.graph(),
        &web.labels,
        &sizes,
        &VirtualLinks::default(),
        |_, _| true,
    );
    let row = |from: &str, to: &str| {
        let (from, to) = (web.label_names[from], web.label_names[to]);
        *rows
            .iter()
            .find(|row| row.from == from && row.to == to)
            .unwrap()
    };
    let ab = row("a", "b");
    assert_eq!((ab.a, ab.b, ab.s, ab.d), (3, 3, 3, 3));
    assert!(ab.merges());
    let bt = row("b", "t");
    assert_eq!((bt.a, bt.b, bt.s, bt.d), (3, 2, 2, 2));
    assert!(!bt.merges() && !bt.merges_extended());
    assert_eq!(rows.len(), 4, "a->b, a->c, c->d, b->t: {rows:?}");
}

#[test]
fn figure_6_a_b_c_d_grow_into_one_cluster_t_s_and_g_stay_apart() {
    let web = figure_6();
    for config in [strict(), CollectionsConfig::default()] {
        let found = web.collections(&config);
        assert_eq!(
            web.clusters(&found),
            vec![
                names(&[
                    &["a", "b", "c", "d"],
                    &["a'", "b'", "c'", "d'"],
                    &["a''", "b''", "c''", "d''"]
                ]),
                names(&[&["t"], &["t'"]]),
            ],
            "extended: {}",
            config.extended
        );
        let grown = &found.clusters[0];
        assert_eq!((grown.cardinality(), grown.size), (3, 4));
        assert_eq!(grown.kind, ClusterKind::Collection);
        assert!(!grown.extended && grown.small);
        assert_eq!(found.clusters[1].kind, ClusterKind::Page);
        for name in ["s", "g"] {
            assert_eq!(found.collection_of[web.id(name).0 as usize], None);
        }
        let root = found.collections[grown.principal().0 as usize].root;
        assert_eq!(web.names[root.0 as usize].trim_end_matches('\''), "a");
    }
}

#[test]
fn figure_3b_no_one_to_one_mapping_is_not_similar() {
    // [i]: p -> q, p -> r, r -> s1, r -> s2; [ii]: p -> q1, p -> q2, p -> r,
    // r -> s. Both have five pages, but q and s have no one-to-one mapping.
    let mut web = Web::default();
    for (name, label) in [("p", "p"), ("q", "q"), ("r", "r"), ("s1", "s"), ("s2", "s")] {
        web.page(name, 0, Some(label));
    }
    for (name, label) in [
        ("p'", "p"),
        ("q1'", "q"),
        ("q2'", "q"),
        ("r'", "r"),
        ("s'", "s"),
    ] {
        web.page(name, 1, Some(label));
    }
    for (from, to) in [
        ("p", "q"),
        ("p", "r"),
        ("r", "s1"),
        ("r", "s2"),
        ("p'", "q1'"),
        ("p'", "q2'"),
        ("p'", "r'"),
        ("r'", "s'"),
    ] {
        web.link(from, to);
    }
    for config in [strict(), CollectionsConfig::default()] {
        let found = web.collections(&config);
        // Only the core p -> r is similar; q and s stay copies of pages.
        assert_eq!(
            web.clusters(&found),
            vec![
                names(&[&["p", "r"], &["p'", "r'"]]),
                names(&[&["q"], &["q1'"], &["q2'"]]),
                names(&[&["s'"], &["s1"], &["s2"]]),
            ]
        );
    }
}

/// cho Figure 7: a -> b -> a' -> b' -> a, a cycle through two trivial
/// clusters; pages on other hosts link to `favoured` and its copy.
fn figure_7(favoured: &str) -> Web {
    let mut web = Web::default();
    web.page("a", 0, Some("a"));
    web.page("b", 0, Some("b"));
    web.page("a'", 1, Some("a"));
    web.page("b'", 1, Some("b"));
    web.link("a", "b");
    web.link("b", "a'");
    web.link("a'", "b'");
    web.link("b'", "a");
    // The cycle's own cross-host links give each cluster two in-links from
    // other hosts; the favoured one gets two more.
    for (index, target) in [favoured, &format!("{favoured}'")].iter().enumerate() {
        for other in 0..2 {
            let name = format!("elsewhere{index}{other}");
            web.page(&name, 2 + index as u32, None);
            web.link(&name, target);
        }
    }
    web
}

#[test]
fn figure_7_the_start_follows_the_in_links_from_other_sites() {
    let anywhere = CollectionsConfig {
        single_site: false,
        ..CollectionsConfig::default()
    };
    let from_a = figure_7("a");
    assert_eq!(
        from_a.clusters(&from_a.collections(&anywhere)),
        vec![names(&[&["a", "b"], &["a'", "b'"]])]
    );
    let from_b = figure_7("b");
    assert_eq!(
        from_b.clusters(&from_b.collections(&anywhere)),
        vec![names(&[&["a", "b'"], &["a'", "b"]])]
    );
    // Single-site collections: starting at b, each link to the next page
    // leaves the host, so only a's start keeps a and b together.
    let found = from_a.collections(&CollectionsConfig::default());
    assert_eq!(
        from_a.clusters(&found),
        vec![names(&[&["a", "b"], &["a'", "b'"]])]
    );
    let found = from_b.collections(&CollectionsConfig::default());
    assert_eq!(
        from_b.clusters(&found),
        vec![names(&[&["a"], &["a'"]]), names(&[&["b"], &["b'"]])]
    );
}

/// A manual's front page f links to a, a to the leaf x, on two hosts; pages
/// of two other hosts link to x and x' (a page people cite), so by in-links
/// from other sites (§3.1) x would be the start, and x's growth reaches
/// nothing. cho §3 starts where the others can be reached: at f.
#[test]
fn growth_starts_at_the_cluster_the_rest_can_be_reached_from() {
    let mut web = Web::default();
    for (host, mark) in ["", "'"].iter().enumerate() {
        for label in ["f", "a", "x"] {
            web.page(&format!("{label}{mark}"), host as u32, Some(label));
        }
        web.link(&format!("f{mark}"), &format!("a{mark}"));
        web.link(&format!("a{mark}"), &format!("x{mark}"));
    }
    for (index, target) in ["x", "x'"].iter().enumerate() {
        for other in 0..3 {
            let name = format!("citing{index}{other}");
            web.page(&name, 2 + index as u32, None);
            web.link(&name, target);
        }
    }
    let found = web.collections(&strict());
    assert_eq!(
        web.clusters(&found),
        vec![names(&[&["a", "f", "x"], &["a'", "f'", "x'"]])]
    );
    // The root of each collection is a copy of the front page.
    for cluster in &found.clusters {
        for id in &cluster.collections {
            let root = found.collections[id.0 as usize].root;
            assert!(web.names[root.0 as usize].starts_with('f'));
        }
    }
}

/// A manual whose pages link in one long chain (a book read page after
/// page, a changelog paged by "next") is one component as deep as it is
/// long: finding where growth starts must not recurse along it.
#[test]
fn a_chain_of_many_thousand_pages_grows_without_deep_recursion() {
    const PAGES: usize = 50_000;
    let mut web = Web::default();
    for host in 0..2u32 {
        for index in 0..PAGES {
            web.page(&format!("{host}/{index}"), host, Some(&index.to_string()));
        }
    }
    for host in 0..2 {
        for index in 1..PAGES {
            let (from, to) = (host * PAGES + index - 1, host * PAGES + index);
            web.links.push((PageId(from as u32), PageId(to as u32)));
        }
    }
    // Growth runs on rayon's threads; a small pool stack makes any recursion
    // along the chain fail here rather than only on a large crawl.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .stack_size(256 * 1024)
        .build()
        .expect("a thread pool");
    let found = pool.install(|| web.collections(&strict()));
    assert_eq!(found.clusters.len(), 1);
    assert_eq!(found.clusters[0].size, PAGES as u32);
    assert_eq!(found.clusters[0].cardinality(), 2);
}

/// cho Figure 10: [i] holds a..g (a -> b, c; b -> d, e; c -> f, g); the
/// partial mirror [ii] holds a, b, c, its b and c linking to [i]'s d..g.
fn figure_10() -> Web {
    let mut web = Web::default();
    for label in ["a", "b", "c", "d", "e", "f", "g"] {
        web.page(label, 0, Some(label));
    }
    for label in ["a", "b", "c"] {
        web.page(&format!("{label}'"), 1, Some(label));
    }
    for (from, to) in [
        ("a", "b"),
        ("a", "c"),
        ("b", "d"),
        ("b", "e"),
        ("c", "f"),
        ("c", "g"),
        ("a'", "b'"),
        ("a'", "c'"),
        ("b'", "d"),
        ("b'", "e"),
        ("c'", "f"),
        ("c'", "g"),
    ] {
        web.link(from, to);
    }
    web
}

#[test]
fn figure_10_extended_clusters_take_in_the_partial_mirror() {
    let web = figure_10();
    let found = web.collections(&strict());
    assert_eq!(
        web.clusters(&found),
        vec![names(&[&["a", "b", "c"], &["a'", "b'", "c'"]])]
    );
    assert!(!found.clusters[0].extended);

    let found = web.collections(&CollectionsConfig::default());
    assert_eq!(
        web.clusters(&found),
        vec![names(&[
            &["a", "b", "c", "d", "e", "f", "g"],
            &["a'", "b'", "c'"]
        ])]
    );
    let cluster = &found.clusters[0];
    assert!(cluster.extended);
    assert_eq!((cluster.cardinality(), cluster.size), (2, 7));
    // [i] is the principal copy: the partial mirror links into it.
    let principal = &found.collections[cluster.principal().0 as usize];
    assert_eq!(principal.pages.len(), 7);
    assert_eq!(principal.inlinks_from_other_hosts, 4);
    assert!(found.counts.extended_merge_edges >= 4);
}

#[test]
fn problem_accepts_its_own_output_and_rejects_a_mismatch() {
    let web = figure_6();
    let found = web.collections(&CollectionsConfig::default());
    assert_eq!(found.problem(web.names.len()), None);
    assert!(found.problem(web.names.len() + 1).is_some());
    let mut broken = found.clone();
    broken.collection_of.swap(0, 1);
    broken.collection_of[0] = None;
    assert!(broken.problem(web.names.len()).is_some());
}

/// Checks cho Definition 5 on a cluster's collections: equal sizes, a
/// one-to-one mapping of similar pages (same trivial cluster), and for each
/// page and its image, a similar parent in each collection unless neither
/// has a parent there.
fn definition_5(
    graph: &WebGraph,
    labels: &[TrivialClusterId],
    collections: &[Vec<PageId>],
) -> Result<(), String> {
    let by_label: Vec<HashMap<TrivialClusterId, PageId>> = collections
        .iter()
        .map(|pages| {
            pages
                .iter()
                .map(|&page| (labels[page.0 as usize], page))
                .collect()
        })
        .collect();
    for (pages, map) in collections.iter().zip(&by_label) {
        if pages.len() != collections[0].len() || map.len() != pages.len() {
            return Err(format!("not one-to-one: {collections:?}"));
        }
        if map.keys().any(|label| !by_label[0].contains_key(label)) {
            return Err(format!("pages without a similar page: {collections:?}"));
        }
    }
    let parents = |collection: usize, page: PageId| -> HashSet<TrivialClusterId> {
        let members: HashSet<PageId> = collections[collection].iter().copied().collect();
        graph
            .inlinks(page)
            .filter(|parent| members.contains(parent))
            .map(|parent| labels[parent.0 as usize])
            .collect()
    };
    for first in 0..collections.len() {
        for second in first + 1..collections.len() {
            for (label, &page) in &by_label[first] {
                let image = by_label[second][label];
                let (mine, theirs) = (parents(first, page), parents(second, image));
                if !(mine.is_empty() && theirs.is_empty()) && mine.is_disjoint(&theirs) {
                    return Err(format!("{page} and {image} have no similar parents"));
                }
            }
        }
    }
    Ok(())
}

/// Checks what every cluster guarantees: each page in at most one
/// collection, at most one page of a trivial cluster per collection, each
/// collection on one host (when asked) and reachable from its root.
fn invariants(
    graph: &WebGraph,
    labels: &[TrivialClusterId],
    found: &Collections,
    single_site: bool,
) -> Result<(), String> {
    let mut seen = HashSet::new();
    for collection in &found.collections {
        let pages: HashSet<PageId> = collection.pages.iter().copied().collect();
        for &page in &collection.pages {
            if !seen.insert(page) {
                return Err(format!("{page} is in two collections"));
            }
        }
        let distinct: HashSet<TrivialClusterId> = collection
            .pages
            .iter()
            .map(|p| labels[p.0 as usize])
            .collect();
        if distinct.len() != pages.len() {
            return Err(format!("collection {} repeats a page", collection.id));
        }
        if single_site
            && collection
                .pages
                .iter()
                .any(|&p| graph.host(p) != collection.host)
        {
            return Err(format!("collection {} spans hosts", collection.id));
        }
        let mut reached = HashSet::from([collection.root]);
        let mut stack = vec![collection.root];
        while let Some(page) = stack.pop() {
            for child in graph.outlinks(page) {
                if pages.contains(&child) && reached.insert(child) {
                    stack.push(child);
                }
            }
        }
        if reached.len() != pages.len() {
            return Err(format!(
                "collection {} is not connected from its root",
                collection.id
            ));
        }
    }
    Ok(())
}

/// A small deterministic generator (xorshift) for the generated webs.
struct Draw(u64);

impl Draw {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// A site of `size` pages (a random tree plus extra links) copied on
/// `copies` hosts; copies lose pages, change pages (no longer similar) and
/// gain or lose links; unrelated pages are added around them.
fn replicated_web(
    size: usize,
    copies: usize,
    seed: u64,
) -> (WebGraph, Vec<TrivialClusterId>, usize) {
    let mut draw = Draw(seed | 1);
    let mut template: Vec<(usize, usize)> =
        (1..size).map(|child| (draw.below(child), child)).collect();
    for _ in 0..size {
        template.push((draw.below(size), draw.below(size)));
    }
    let mut hosts = Vec::new();
    let mut labels = Vec::new();
    let mut links = Vec::new();
    let mut next_label = size as u32;
    for copy in 0..copies {
        let mut page_of = vec![None; size];
        for (index, slot) in page_of.iter_mut().enumerate() {
            if index != 0 && draw.chance(15) {
                continue; // not in this copy (or not crawled)
            }
            *slot = Some(PageId(hosts.len() as u32));
            hosts.push(HostId(copy as u32));
            labels.push(TrivialClusterId(if draw.chance(10) {
                next_label += 1; // changed: similar to nothing
                next_label - 1
            } else {
                index as u32
            }));
        }
        for &(from, to) in &template {
            if let (Some(from), Some(to)) = (page_of[from], page_of[to]) {
                if !draw.chance(5) {
                    links.push((from, to));
                }
            }
        }
        for _ in 0..2 {
            let (from, to) = (draw.below(size), draw.below(size));
            if let (Some(from), Some(to)) = (page_of[from], page_of[to]) {
                links.push((from, to));
            }
        }
    }
    for _ in 0..size / 2 {
        let page = PageId(hosts.len() as u32);
        hosts.push(HostId(copies as u32));
        labels.push(TrivialClusterId(next_label));
        next_label += 1;
        links.push((page, PageId(draw.below(page.0 as usize) as u32)));
    }
    (WebGraph::new(hosts, links), labels, next_label as usize)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_cluster_satisfies_definition_5(
        size in 2usize..14,
        copies in 2usize..5,
        seed in any::<u64>(),
    ) {
        let (graph, labels, clusters) = replicated_web(size, copies, seed);
        let pages = labels.len();
        let facts = PageFacts {
            urls: vec![""; pages],
            uncrawled_links: vec![&[]; pages],
            own_text: Vec::new(),
            addresses: Vec::new(),
            stand_ins: Vec::new(),
            ..PageFacts::default()
        };
        for extended in [false, true] {
            let config = CollectionsConfig { extended, ..CollectionsConfig::default() };
            let found = build(&graph, &labels, clusters, &config, &facts);
            prop_assert_eq!(found.problem(pages), None);
            if let Err(problem) = invariants(&graph, &labels, &found, true) {
                prop_assert!(false, "{}", problem);
            }
            for cluster in found.clusters.iter().filter(|cluster| !cluster.extended) {
                let collections: Vec<Vec<PageId>> = cluster
                    .collections
                    .iter()
                    .map(|&id| found.collections[id.0 as usize].pages.clone())
                    .collect();
                if let Err(problem) = definition_5(&graph, &labels, &collections) {
                    prop_assert!(false, "extended {}: {}", extended, problem);
                }
            }
        }
    }
}

#[test]
fn the_generated_webs_grow_clusters_of_both_kinds() {
    // Keeps the property above from passing on webs that grow nothing.
    let (mut strict_clusters, mut extended_clusters) = (0, 0);
    for seed in 1..200u64 {
        let (graph, labels, clusters) = replicated_web(10, 3, seed * 7919);
        let facts = PageFacts {
            urls: vec![""; labels.len()],
            uncrawled_links: vec![&[]; labels.len()],
            own_text: Vec::new(),
            addresses: Vec::new(),
            stand_ins: Vec::new(),
            ..PageFacts::default()
        };
        for config in [strict(), CollectionsConfig::default()] {
            let found = build(&graph, &labels, clusters, &config, &facts);
            for cluster in found.clusters.iter().filter(|cluster| cluster.size >= 3) {
                if !config.extended && !cluster.extended {
                    strict_clusters += 1;
                } else if config.extended && cluster.extended {
                    extended_clusters += 1;
                }
            }
        }
    }
    assert!(
        strict_clusters >= 50 && extended_clusters >= 10,
        "{strict_clusters} strict, {extended_clusters} extended"
    );
}

#[test]
fn a_partly_crawled_copy_joins_through_its_virtual_links() {
    // Both hosts hold index -> {one, two}, one -> three; the crawl of the
    // second host never fetched its two.html and three.html.
    let mut web = Web::default();
    let full = "http://full.example/docs/";
    let part = "http://part.example/mirror/docs/";
    for (host, base) in [full, part].iter().enumerate() {
        for page in ["index.html", "one.html"] {
            web.page(&format!("{base}{page}"), host as u32, Some(page));
        }
        web.link(&format!("{base}index.html"), &format!("{base}one.html"));
    }
    for page in ["two.html", "three.html"] {
        web.page(&format!("{full}{page}"), 0, Some(page));
    }
    web.link(&format!("{full}index.html"), &format!("{full}two.html"));
    web.link(&format!("{full}one.html"), &format!("{full}three.html"));
    web.uncrawled(&format!("{part}index.html"), &format!("{part}two.html"));
    web.uncrawled(&format!("{part}one.html"), &format!("{part}three.html"));

    let found = web.collections(&CollectionsConfig::default());
    let short = |name: &str| name.rsplit('/').next().unwrap().to_string();
    let clusters = web.clusters(&found);
    assert_eq!(clusters.len(), 1, "{clusters:?}");
    let copies: Vec<Vec<String>> = clusters[0]
        .iter()
        .map(|copy| copy.iter().map(|name| short(name)).collect())
        .collect();
    assert_eq!(
        copies,
        names(&[
            &["index.html", "one.html", "three.html", "two.html"],
            &["index.html", "one.html"]
        ])
    );
    assert!(found.clusters[0].extended);
    assert_eq!(found.counts.virtual_links, 2);

    // Without the virtual links (strict clusters), only index and one.
    let found = web.collections(&strict());
    assert_eq!(found.clusters[0].size, 2);
}

#[test]
fn a_sibling_manual_does_not_grow_in_through_the_pages_both_share() {
    // Alpha on two hosts; beta, its sibling, beside it on the first host
    // only. Both have the same install and licence pages, each linking to
    // its own manual's index.html; beta's own pages link only to each other.
    let mut web = Web::default();
    let alpha = [
        "http://docs.acme.test/alpha/",
        "http://mirror.acme.test/alpha/",
    ];
    for (host, base) in alpha.iter().enumerate() {
        for page in [
            "index.html",
            "a1.html",
            "a2.html",
            "install.html",
            "licence.html",
        ] {
            web.page(&format!("{base}{page}"), host as u32, Some(page));
        }
        for page in ["a1.html", "a2.html", "install.html", "licence.html"] {
            web.link(&format!("{base}index.html"), &format!("{base}{page}"));
            web.link(&format!("{base}{page}"), &format!("{base}index.html"));
        }
    }
    let beta = "http://docs.acme.test/beta/";
    for page in ["index.html", "b1.html", "b2.html", "b3.html", "b4.html"] {
        web.page(&format!("{beta}{page}"), 0, Some(&format!("beta {page}")));
    }
    for page in ["install.html", "licence.html"] {
        web.page(&format!("{beta}{page}"), 0, Some(page));
        web.link(&format!("{beta}index.html"), &format!("{beta}{page}"));
        web.link(&format!("{beta}{page}"), &format!("{beta}index.html"));
    }
    for (from, to) in [("index", "b1"), ("b1", "b2"), ("b2", "b3"), ("b3", "b4")] {
        web.link(&format!("{beta}{from}.html"), &format!("{beta}{to}.html"));
    }

    let found = web.collections(&CollectionsConfig::default());
    let clusters = web.clusters(&found);
    assert_eq!(clusters.len(), 1, "{clusters:?}");
    for copy in &clusters[0] {
        for own in ["b1.html", "b2.html", "b3.html", "b4.html"] {
            assert!(
                !copy.contains(&format!("{beta}{own}")),
                "beta's own {own} grew into alpha's cluster: {clusters:?}"
            );
        }
    }
    // Alpha's two copies are whole.
    let whole = |base: &str| {
        [
            "a1.html",
            "a2.html",
            "index.html",
            "install.html",
            "licence.html",
        ]
        .map(|page| format!("{base}{page}"))
        .to_vec()
    };
    for base in alpha {
        assert!(clusters[0].contains(&whole(base)), "{clusters:?}");
    }
}

#[test]
fn a_folder_and_its_index_page_are_one_page() {
    let mut web = Web::default();
    for (host, base) in ["http://a.example/d/", "http://b.example/d/"]
        .iter()
        .enumerate()
    {
        let host = host as u32;
        web.page(base, host, Some("index"));
        web.page(&format!("{base}index.html"), host, Some("index"));
        web.page(&format!("{base}x.html"), host, Some("x"));
        web.link(base, &format!("{base}x.html"));
        web.link(base, &format!("{base}index.html"));
        web.link(&format!("{base}index.html"), &format!("{base}x.html"));
        web.link(&format!("{base}x.html"), &format!("{base}index.html"));
    }
    let found = web.collections(&CollectionsConfig::default());
    assert_eq!(
        web.clusters(&found),
        vec![names(&[
            &[
                "http://a.example/d/",
                "http://a.example/d/index.html",
                "http://a.example/d/x.html"
            ],
            &[
                "http://b.example/d/",
                "http://b.example/d/index.html",
                "http://b.example/d/x.html"
            ],
        ])]
    );
    let cluster = &found.clusters[0];
    assert!(!cluster.extended);
    assert_eq!(
        found.collections[cluster.principal().0 as usize].root,
        web.id("http://a.example/d/")
    );
    assert_eq!(found.counts.alias_pages, 2);
    assert_eq!(found.counts.merge_edges, 2, "index -> x and x -> index");
}

#[test]
fn a_collections_prefix_is_the_folder_of_all_its_pages() {
    let prefix = |urls: &[&str]| folder_prefix(urls.iter().copied());
    assert_eq!(
        prefix(&[
            "http://a.example/docs/2.4/",
            "http://a.example/docs/2.4/en/bind.html"
        ]),
        "http://a.example/docs/2.4/"
    );
    assert_eq!(
        prefix(&[
            "http://a.example/docs/a.html",
            "http://a.example/docs/ab.html"
        ]),
        "http://a.example/docs/"
    );
    assert_eq!(
        prefix(&["http://a.example/x.html", "http://a.example/y.html"]),
        "http://a.example/"
    );
    assert_eq!(
        prefix(&["http://a.example/docs/x.html"]),
        "http://a.example/docs/"
    );
    assert_eq!(prefix(&["http://a.example"]), "http://a.example/");
}

/// Sites `hosts` each holding pages `pages` (named `h{host}/{page}`), the
/// first linking to the others, copies of each other page by page.
fn replicated(web: &mut Web, hosts: &[u32], pages: &[&str]) {
    for &host in hosts {
        for page in pages {
            web.page(&format!("h{host}/{page}"), host, Some(page));
        }
        for page in &pages[1..] {
            web.link(&format!("h{host}/{}", pages[0]), &format!("h{host}/{page}"));
        }
    }
}

#[test]
fn clusters_keep_their_ids_across_generations_and_new_ones_get_unused_ids() {
    let mut earlier_web = Web::default();
    replicated(&mut earlier_web, &[0, 1, 2], &["a", "b", "c"]);
    replicated(&mut earlier_web, &[3, 4], &["p", "q"]);
    replicated(&mut earlier_web, &[5, 6], &["x", "y"]);
    let earlier = earlier_web.collections(&strict());
    assert_eq!(earlier.clusters.len(), 3);
    assert_eq!(earlier.next_cluster_id, 3);
    let id_of = |collections: &Collections, web: &Web, name: &str| {
        collections.cluster_of(web.id(name)).expect("in a cluster")
    };

    // Later: host 2 dropped its copy, the x-y collection is gone, and a new
    // collection r-s appears on hosts 7 and 8 (listed first, so that its
    // position is that of a continuing cluster before).
    let mut later_web = Web::default();
    replicated(&mut later_web, &[7, 8], &["r", "s"]);
    replicated(&mut later_web, &[3, 4], &["p", "q"]);
    replicated(&mut later_web, &[0, 1], &["a", "b", "c"]);
    let mut later = later_web.collections(&strict());
    let earlier_cluster = |page: PageId| {
        let name = &later_web.names[page.0 as usize];
        let index = earlier_web.names.iter().position(|n| n == name)?;
        earlier.cluster_of(PageId(index as u32))
    };
    continuity::renumber(&mut later, &earlier, earlier_cluster);

    assert_eq!(later.problem(later_web.names.len()), None);
    assert_eq!(
        id_of(&later, &later_web, "h0/a"),
        id_of(&earlier, &earlier_web, "h0/a")
    );
    assert_eq!(
        id_of(&later, &later_web, "h3/p"),
        id_of(&earlier, &earlier_web, "h3/p")
    );
    // Not the id of the x-y cluster that ended: one never used.
    let born = id_of(&later, &later_web, "h7/r");
    assert_eq!(born, ClusterId(3));
    assert_eq!(later.next_cluster_id, 4);
    let cluster = later.cluster(born).expect("found by id");
    assert_eq!(cluster.id, born);
    assert!(later
        .cluster(id_of(&earlier, &earlier_web, "h5/x"))
        .is_none());
}

#[test]
fn a_cluster_split_in_two_continues_in_the_part_holding_more_pages() {
    let overlaps = [
        continuity::Overlap {
            later: 0,
            earlier: ClusterId(4),
            shared: 2,
        },
        continuity::Overlap {
            later: 1,
            earlier: ClusterId(4),
            shared: 5,
        },
        continuity::Overlap {
            later: 1,
            earlier: ClusterId(2),
            shared: 1,
        },
    ];
    let pages = |id: ClusterId| if id == ClusterId(4) { 7 } else { 3 };
    assert_eq!(
        continuity::continuations(&overlaps, 3, pages, 0.5),
        vec![None, Some(ClusterId(4)), None]
    );
    // Cluster 2 kept one of its three pages: a fragment, not a continuation.
    let overlaps = [continuity::Overlap {
        later: 0,
        earlier: ClusterId(2),
        shared: 1,
    }];
    assert_eq!(
        continuity::continuations(&overlaps, 1, pages, 0.5),
        vec![None]
    );
}

impl Web {
    /// Grows the clusters as [`build`] does, without the later steps.
    fn grown(&self, options: GrowOptions) -> (Vec<Grown>, GrowthCounts) {
        let members = Members::new(&self.labels, self.label_names.len());
        grow::grow(
            &self.graph(),
            &self.labels,
            &members,
            options,
            &VirtualLinks::default(),
        )
    }
}

#[test]
fn grown_clusters_come_in_order_of_their_components_smallest_cluster() {
    // Two components: p -> q, and x -> {a, y}, on two hosts each. Their
    // trivial clusters are numbered a 0, p 1, q 2, x 3, y 4; union-find
    // roots the second component at x (3), the first at p (1), but the
    // second holds the smallest cluster (a) and comes first.
    let mut web = Web::default();
    for (host, mark) in ["", "'"].iter().enumerate() {
        for label in ["a", "p", "q", "x", "y"] {
            web.page(&format!("{label}{mark}"), host as u32, Some(label));
        }
        web.link(&format!("p{mark}"), &format!("q{mark}"));
        web.link(&format!("x{mark}"), &format!("a{mark}"));
        web.link(&format!("x{mark}"), &format!("y{mark}"));
    }
    let options = GrowOptions::of(&CollectionsConfig::default());
    let (grown, counts) = web.grown(options);
    assert_eq!(counts.components, 2);
    let starts: Vec<TrivialClusterId> = grown.iter().map(|cluster| cluster.trivial[0]).collect();
    assert_eq!(starts, [web.label_names["x"], web.label_names["p"]]);
}

#[test]
fn clusters_grown_elsewhere_give_the_collections_grown_here() {
    // What import-analysis does with the Spark job's growth: the same
    // clusters, in the same order, give the same stage's output, on the
    // generated webs (whose manuals' joining depends on the order).
    for seed in 1..60u64 {
        let (graph, labels, clusters) = replicated_web(12, 3, seed * 104_729);
        let pages = labels.len();
        let urls: Vec<String> = (0..pages)
            .map(|page| {
                format!(
                    "http://h{}.example/d/{page}.html",
                    graph.host(PageId(page as u32)).0
                )
            })
            .collect();
        let facts = PageFacts {
            urls: urls.iter().map(String::as_str).collect(),
            uncrawled_links: vec![&[]; pages],
            own_text: Vec::new(),
            addresses: Vec::new(),
            stand_ins: Vec::new(),
            ..PageFacts::default()
        };
        for config in [strict(), CollectionsConfig::default()] {
            let here = build(&graph, &labels, clusters, &config, &facts);
            let (growth_labels, _) = names::aliases(&graph, &labels);
            let members = Members::new(&growth_labels, clusters);
            let options = GrowOptions::of(&config);
            let (grown, counts) = grow::grow(
                &graph,
                &growth_labels,
                &members,
                options,
                &VirtualLinks::default(),
            );
            grow::check_grown(&grown, &growth_labels, clusters).unwrap();
            let growth = Growth {
                clusters: grown,
                counts,
            };
            let mut elsewhere =
                build_with(&graph, &labels, clusters, &config, &facts, Some(growth));
            // The same clusters, each saying it was grown elsewhere.
            for cluster in &mut elsewhere.clusters {
                assert_ne!(cluster.verdict.formed, Formed::Grown, "seed {seed}");
                if cluster.verdict.formed == Formed::Imported {
                    cluster.verdict.formed = Formed::Grown;
                }
            }
            assert_eq!(elsewhere.clusters, here.clusters, "seed {seed}");
            assert_eq!(elsewhere.collections, here.collections, "seed {seed}");
            assert_eq!(elsewhere.counts, here.counts, "seed {seed}");
        }
    }
}

#[test]
fn clusters_growth_could_not_give_are_refused() {
    let web = figure_6();
    let (grown, _) = web.grown(GrowOptions::of(&CollectionsConfig::default()));
    let clusters = web.label_names.len();
    assert_eq!(grow::check_grown(&grown, &web.labels, clusters), Ok(()));
    let check = |change: &dyn Fn(&mut Vec<Grown>)| {
        let mut changed = grown.clone();
        change(&mut changed);
        grow::check_grown(&changed, &web.labels, clusters).unwrap_err()
    };
    let (a, b) = (web.id("a"), web.id("b"));
    // A page twice, in another copy's collection.
    let error = check(&|grown| grown[0].collections[1].push(a));
    assert!(
        error.contains("holds two pages of trivial cluster"),
        "{error}"
    );
    // A page of a trivial cluster the cluster did not grow from.
    let error = check(&|grown| grown[0].collections[0].push(web.id("s")));
    assert!(error.contains("which the cluster does not name"), "{error}");
    // One trivial cluster in two grown clusters.
    let error = check(&|grown| {
        grown.push(Grown {
            collections: vec![vec![b]],
            trivial: vec![web.labels[b.0 as usize]],
            verdict: ClusterVerdict::default(),
        })
    });
    assert!(error.contains("grew into clusters 0 and 1"), "{error}");
    let error = check(&|grown| grown[0].trivial.push(TrivialClusterId(clusters as u32)));
    assert!(
        error.contains(&format!("names trivial cluster {clusters}")),
        "{error}"
    );
    let error = check(&|grown| grown[0].collections.push(Vec::new()));
    assert!(error.contains("an empty collection"), "{error}");
    let error = check(&|grown| grown[0].collections[0].push(PageId(9999)));
    assert!(
        error.contains("page 9999 is not a page of the generation"),
        "{error}"
    );
    let mut unlabelled = web.labels.clone();
    unlabelled[a.0 as usize] = TrivialClusterId::NONE;
    let error = grow::check_grown(&grown, &unlabelled, clusters).unwrap_err();
    assert!(error.contains("takes no part in growth"), "{error}");
}
