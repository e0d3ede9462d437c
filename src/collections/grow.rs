//! Cluster growing (cho-2000 §3, Figure 9; §4 for extended clusters).
//!
//! 1. LinkSummary rows with |Ri| = s (the only rows a merge condition can
//!    hold on), virtual links of partly crawled copies counted in s.
//! 2. The trivial cluster graph (TCG): an edge Ri -> Rj where a = s = d = b,
//!    or, for extended clusters, a = s >= d = b.
//! 3. Connected components of the TCG by union-find.
//! 4. Each component is merged into a cluster from a start: a trivial
//!    cluster from which the others can be reached (§3), the one reaching
//!    most first, then the one with the most pages (the paper's preference
//!    for cardinality), then the most in-links from other hosts (§3.1,
//!    Figure 7). Each page of
//!    the start roots a collection; following TCG edges breadth-first, each
//!    page of Rj joins the collection of a page of Ri that links to it: one on
//!    its own host (single-site collections, §5.1), else (when collections may
//!    span hosts) any. A collection takes at most one page of each trivial
//!    cluster, so the mapping between collections stays one-to-one
//!    (Definition 5). Growth follows links from parent to child only, so every
//!    collection is connected and each page has a parent in it (§3).
//!    Clusters of the component the start cannot reach grow from the next
//!    start, so one component can give several similar clusters.
//!
//! Components are independent and grow in parallel. The similar clusters
//! come in order of their component's smallest trivial cluster, then in the
//! order their starts were taken: an order fixed by the clusters alone, which
//! the Spark job of `spark/` gives its growth too.

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet, VecDeque};

use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use rayon::prelude::*;

use super::graph::WebGraph;
use super::summary::{link_summary, VirtualLinks};
use super::verdict::ClusterVerdict;
use crate::pages::PageId;
use crate::similarity::TrivialClusterId;
use crate::union_find::UnionFind;

/// How trivial clusters merge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrowOptions {
    /// Merge on a = s >= d = b (extended clusters, cho §4) as well as on
    /// a = s = d = b.
    pub extended: bool,
    /// Collections stay on one host (cho §5.1).
    pub single_site: bool,
    /// [`super::CollectionRules::links_back_share`].
    pub links_back_share: f64,
    /// [`super::CollectionRules::measured_sources`].
    pub measured_sources: usize,
}

impl GrowOptions {
    /// The options `config` sets.
    pub fn of(config: &super::CollectionsConfig) -> GrowOptions {
        GrowOptions {
            extended: config.extended,
            single_site: config.single_site,
            links_back_share: config.rules.links_back_share,
            measured_sources: config.rules.measured_sources,
        }
    }
}

/// The pages of every trivial cluster: `pages(cluster)`.
pub struct Members {
    offsets: Vec<u32>,
    pages: Vec<PageId>,
}

impl Members {
    pub fn new(labels: &[TrivialClusterId], clusters: usize) -> Members {
        let mut offsets = vec![0u32; clusters + 1];
        for &label in labels {
            if label != TrivialClusterId::NONE {
                offsets[label.index() + 1] += 1;
            }
        }
        for index in 1..offsets.len() {
            offsets[index] += offsets[index - 1];
        }
        let mut next = offsets.clone();
        let mut pages = vec![PageId(0); offsets[clusters] as usize];
        for (page, &label) in labels.iter().enumerate() {
            if label != TrivialClusterId::NONE {
                pages[next[label.index()] as usize] = PageId(page as u32);
                next[label.index()] += 1;
            }
        }
        Members { offsets, pages }
    }

    /// The cluster's pages, in page order.
    pub fn pages(&self, cluster: TrivialClusterId) -> &[PageId] {
        let start = self.offsets[cluster.index()] as usize;
        let end = self.offsets[cluster.index() + 1] as usize;
        &self.pages[start..end]
    }

    pub fn size(&self, cluster: TrivialClusterId) -> u32 {
        self.offsets[cluster.index() + 1] - self.offsets[cluster.index()]
    }

    pub fn clusters(&self) -> usize {
        self.offsets.len() - 1
    }
}

/// One similar cluster grown from trivial clusters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grown {
    /// Its collections; the first page of each is its root (a copy of the
    /// start page), the rest in the order they joined.
    pub collections: Vec<Vec<PageId>>,
    /// The trivial clusters it took pages from, the start first.
    pub trivial: Vec<TrivialClusterId>,
    /// What the passes did to it ([`super::verdict`]).
    pub verdict: ClusterVerdict,
}

/// Similar clusters as grown elsewhere (the Spark job of `spark/`), in the
/// order [`grow`] gives its own, with growth's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Growth {
    pub clusters: Vec<Grown>,
    pub counts: GrowthCounts,
}

/// What growing found, besides the clusters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GrowthCounts {
    /// LinkSummary rows with a = s.
    pub candidate_rows: u64,
    /// (page, cluster) virtual links of partly crawled copies.
    pub virtual_links: u64,
    /// TCG edges by a = s = d = b.
    pub merge_edges: u64,
    /// TCG edges by a = s > d = b only (extended clusters).
    pub extended_merge_edges: u64,
    /// Connected components of the TCG with at least one edge.
    pub components: u64,
}

/// Grows similar clusters. `labels[page]` is the page's trivial cluster or
/// [`TrivialClusterId::NONE`]; clusters are numbered densely from 0.
pub fn grow(
    graph: &WebGraph,
    labels: &[TrivialClusterId],
    members: &Members,
    options: GrowOptions,
    virtual_links: &VirtualLinks,
) -> (Vec<Grown>, GrowthCounts) {
    let clusters = members.clusters();
    let sizes: Vec<u32> = (0..clusters as u32)
        .map(|cluster| members.size(TrivialClusterId(cluster)))
        .collect();
    let rows = link_summary(graph, labels, &sizes, virtual_links, |a, s| a == s);
    let mut counts = GrowthCounts {
        candidate_rows: rows.len() as u64,
        virtual_links: virtual_links.len() as u64,
        ..GrowthCounts::default()
    };
    // TCG edges, sorted by (from, to) as the rows are.
    let mut edges: Vec<(TrivialClusterId, TrivialClusterId)> = Vec::new();
    for row in &rows {
        if row.merges() {
            counts.merge_edges += 1;
            edges.push((row.from, row.to));
        } else if options.extended && row.merges_extended() {
            counts.extended_merge_edges += 1;
            edges.push((row.from, row.to));
        }
    }
    drop(rows);

    let mut sets = UnionFind::new(clusters);
    for &(from, to) in &edges {
        sets.union(from.0, to.0);
    }
    // (component, trivial cluster), each component named by its
    // union-find root.
    let mut in_component: Vec<(u32, TrivialClusterId)> = edges
        .iter()
        .flat_map(|&(from, to)| [from, to])
        .map(|cluster| (sets.find(cluster.0), cluster))
        .collect();
    in_component.par_sort_unstable();
    in_component.dedup();
    // Components in order of their smallest trivial cluster (each sorted
    // run starts with it): an order of the clusters alone, which the
    // growth imported from elsewhere (`import-analysis`) follows too.
    let mut components: Vec<&[(u32, TrivialClusterId)]> = in_component
        .chunk_by(|first, second| first.0 == second.0)
        .collect();
    components.sort_unstable_by_key(|component| component[0].1);
    counts.components = components.len() as u64;

    let context = Context {
        graph,
        labels,
        members,
        edges: &edges,
        options,
    };
    let grown: Vec<Grown> = components
        .par_iter()
        .flat_map_iter(|component| {
            let clusters: Vec<TrivialClusterId> =
                component.iter().map(|&(_, cluster)| cluster).collect();
            context.grow_component(&clusters)
        })
        .collect();
    (grown, counts)
}

struct Context<'a> {
    graph: &'a WebGraph,
    labels: &'a [TrivialClusterId],
    members: &'a Members,
    /// TCG edges sorted by (from, to).
    edges: &'a [(TrivialClusterId, TrivialClusterId)],
    options: GrowOptions,
}

impl Context<'_> {
    fn successors(&self, cluster: TrivialClusterId) -> impl Iterator<Item = TrivialClusterId> + '_ {
        let start = self.edges.partition_point(|&(from, _)| from < cluster);
        self.edges[start..]
            .iter()
            .take_while(move |&&(from, _)| from == cluster)
            .map(|&(_, to)| to)
    }

    fn inlinks_from_other_hosts(&self, cluster: TrivialClusterId) -> u64 {
        self.members
            .pages(cluster)
            .iter()
            .map(|&page| u64::from(self.graph.inlinks_from_other_hosts(page)))
            .sum()
    }

    /// Grows every similar cluster of one TCG component.
    fn grow_component(&self, clusters: &[TrivialClusterId]) -> Vec<Grown> {
        let mut reached: HashSet<TrivialClusterId> = HashSet::new();
        let mut grown = Vec::new();
        for start in self.starts(clusters) {
            if !reached.contains(&start) {
                grown.push(self.grow_from(start, &mut reached));
            }
        }
        grown
    }

    /// The component's starts in order of preference; one that an earlier
    /// growth reached is passed over. cho-2000 §3 starts "at any node from
    /// which all the others in the component can be reached", and §3.1
    /// prefers, among several, the one with most in-links from other sites.
    /// So the trivial clusters that no other part of the component leads to
    /// (the sources of its condensation) come first, the one reaching most
    /// trivial clusters of copies first (a manual's front page, not one of
    /// its leaves);
    /// then every other trivial cluster, for the parts no source reaches.
    /// Ties, and the rest: most pages, most in-links from other hosts, then
    /// the lowest number.
    fn starts(&self, clusters: &[TrivialClusterId]) -> Vec<TrivialClusterId> {
        let preference = |cluster: TrivialClusterId| {
            Reverse((
                self.members.size(cluster),
                self.inlinks_from_other_hosts(cluster),
                Reverse(cluster),
            ))
        };
        // Only clusters of two pages or more can start, and they are all
        // that matters here: an edge into a cluster of b pages needs s >= b
        // pages linking to it (a = s >= d = b), so single pages lead only to
        // single pages, and a component of single pages (unrelated sites
        // linking page to page) has no start at all.
        let copied = |cluster: TrivialClusterId| self.members.size(cluster) >= 2;
        let mut others: Vec<TrivialClusterId> =
            clusters.iter().copied().filter(|&c| copied(c)).collect();
        if others.is_empty() {
            return others;
        }
        others.sort_by_cached_key(|&cluster| preference(cluster));

        // The component's clusters of copies as a petgraph graph, for its
        // strongly connected components.
        let position: HashMap<TrivialClusterId, u32> = others
            .iter()
            .enumerate()
            .map(|(index, &cluster)| (cluster, index as u32))
            .collect();
        let mut graph: DiGraph<TrivialClusterId, ()> = DiGraph::with_capacity(others.len(), 0);
        for &cluster in &others {
            graph.add_node(cluster);
        }
        for &cluster in &others {
            for successor in self.successors(cluster) {
                if let Some(&to) = position.get(&successor) {
                    graph.add_edge(
                        NodeIndex::new(position[&cluster] as usize),
                        NodeIndex::new(to as usize),
                        (),
                    );
                }
            }
        }
        // Kosaraju's algorithm walks with explicit stacks: a component can
        // be a chain of many thousand trivial clusters, deeper than a
        // thread's stack allows recursion (petgraph's Tarjan recurses).
        let components = kosaraju_scc(&graph);
        let mut scc_of = vec![0usize; others.len()];
        for (index, component) in components.iter().enumerate() {
            for node in component {
                scc_of[node.index()] = index;
            }
        }
        let mut entered = vec![false; components.len()];
        for edge in graph.raw_edges() {
            let (from, to) = (scc_of[edge.source().index()], scc_of[edge.target().index()]);
            if from != to {
                entered[to] = true;
            }
        }
        // One start per source (its preferred cluster of two pages or
        // more); reach measured for the most preferred sources only, which
        // bounds the work on components with very many sources.
        let mut sources: Vec<TrivialClusterId> = components
            .iter()
            .enumerate()
            .filter(|&(index, _)| !entered[index])
            .filter_map(|(_, component)| {
                component
                    .iter()
                    .map(|node| graph[*node])
                    .min_by_key(|&cluster| preference(cluster))
            })
            .collect();
        sources.sort_by_cached_key(|&cluster| preference(cluster));
        let measured = sources.len().min(self.options.measured_sources);
        let mut reach: Vec<(usize, TrivialClusterId)> = sources[..measured]
            .iter()
            .map(|&source| {
                let mut seen: HashSet<TrivialClusterId> = HashSet::from([source]);
                let mut queue = VecDeque::from([source]);
                while let Some(cluster) = queue.pop_front() {
                    for successor in self.successors(cluster).filter(|&c| copied(c)) {
                        if seen.insert(successor) {
                            queue.push_back(successor);
                        }
                    }
                }
                (seen.len(), source)
            })
            .collect();
        // Most reached first; the sort is stable, so ties keep preference.
        reach.sort_by_key(|&(reached, _)| Reverse(reached));
        let mut starts: Vec<TrivialClusterId> =
            reach.into_iter().map(|(_, source)| source).collect();
        starts.extend_from_slice(&sources[measured..]);
        starts.extend(others);
        starts
    }

    fn grow_from(&self, start: TrivialClusterId, reached: &mut HashSet<TrivialClusterId>) -> Grown {
        let mut collections: Vec<Vec<PageId>> = Vec::new();
        let mut collection_of: HashMap<PageId, u32> = HashMap::new();
        for &page in self.members.pages(start) {
            collection_of.insert(page, collections.len() as u32);
            collections.push(vec![page]);
        }
        reached.insert(start);
        let mut trivial = vec![start];
        let mut queue = VecDeque::from([start]);
        while let Some(parent_cluster) = queue.pop_front() {
            // A page with no copy joins from a cluster of copies only: a
            // link between two pages without copies is a link inside one
            // host's tree, no evidence that either is replicated (cho §4's
            // extension takes the pages a copy lacks next to copied ones,
            // not a sibling manual reached through a page both link to).
            let parent_single = self.members.size(parent_cluster) == 1;
            for child_cluster in self.successors(parent_cluster) {
                if reached.contains(&child_cluster)
                    || (parent_single && self.members.size(child_cluster) == 1)
                {
                    continue;
                }
                let mut taken: HashSet<u32> = HashSet::new();
                let mut joined: Vec<(PageId, u32)> = Vec::new();
                for &child in self.members.pages(child_cluster) {
                    let host = self.graph.host(child);
                    let parent = self
                        .graph
                        .inlinks(child)
                        .filter(|&parent| self.labels[parent.0 as usize] == parent_cluster)
                        .filter_map(|parent| {
                            let collection = *collection_of.get(&parent)?;
                            let same_host = self.graph.host(parent) == host;
                            (!taken.contains(&collection)
                                && (same_host || !self.options.single_site))
                                .then_some((Reverse(same_host), parent, collection))
                        })
                        .min();
                    if let Some((_, _, collection)) = parent {
                        taken.insert(collection);
                        joined.push((child, collection));
                    }
                }
                // Definition 5 asks each root and its copies for a similar
                // parent unless none has one: for similar clusters in the
                // strict sense, the copies of a cluster either all link back
                // to their collection's root or none does, the smaller side
                // staying out (a break point, cho §2.2). Extended clusters
                // take every copy.
                let links_back = |&(child, collection): &(PageId, u32)| {
                    let root = collections[collection as usize][0];
                    self.graph.links_to(child, root)
                };
                if !self.options.extended {
                    let back = joined.iter().filter(|join| links_back(join)).count();
                    let keep_back =
                        crate::share::more_than(back, joined.len(), self.options.links_back_share);
                    joined.retain(|join| links_back(join) == keep_back);
                }
                for &(child, collection) in &joined {
                    collection_of.insert(child, collection);
                    collections[collection as usize].push(child);
                }
                if !joined.is_empty() {
                    reached.insert(child_cluster);
                    trivial.push(child_cluster);
                    queue.push_back(child_cluster);
                }
            }
        }
        Grown {
            collections,
            trivial,
            verdict: ClusterVerdict::default(),
        }
    }
}

/// Why clusters grown elsewhere (and imported) are not clusters growth
/// could give over `labels` (each page's trivial cluster as growth sees it,
/// [`TrivialClusterId::NONE`] for a page it does not) and
/// `trivial_clusters` trivial clusters, if they are not: every cluster
/// holds collections of pages, each page in one collection of one cluster
/// and its trivial cluster one the cluster took pages from, a collection
/// takes at most one page of each trivial cluster (Definition 5's
/// one-to-one mapping), and each trivial cluster grew into one similar
/// cluster at most.
pub fn check_grown(
    grown: &[Grown],
    labels: &[TrivialClusterId],
    trivial_clusters: usize,
) -> Result<(), String> {
    let mut cluster_of_trivial: HashMap<TrivialClusterId, usize> = HashMap::new();
    let mut placed: HashSet<PageId> = HashSet::new();
    for (index, cluster) in grown.iter().enumerate() {
        if cluster.collections.is_empty() || cluster.trivial.is_empty() {
            return Err(format!("grown cluster {index} holds no collection"));
        }
        for &trivial in &cluster.trivial {
            if trivial.index() >= trivial_clusters {
                return Err(format!(
                    "grown cluster {index} names trivial cluster {trivial}, of {trivial_clusters}"
                ));
            }
            if let Some(other) = cluster_of_trivial.insert(trivial, index) {
                return Err(format!(
                    "trivial cluster {trivial} grew into clusters {other} and {index}"
                ));
            }
        }
        for pages in &cluster.collections {
            if pages.is_empty() {
                return Err(format!("grown cluster {index} has an empty collection"));
            }
            let mut taken: HashSet<TrivialClusterId> = HashSet::new();
            for &page in pages {
                let label = labels
                    .get(page.0 as usize)
                    .copied()
                    .ok_or_else(|| format!("page {} is not a page of the generation", page.0))?;
                if label == TrivialClusterId::NONE {
                    return Err(format!(
                        "page {} takes no part in growth (not compared, or a second name of a page of its host)",
                        page.0
                    ));
                }
                if cluster_of_trivial.get(&label) != Some(&index) {
                    return Err(format!(
                        "page {} of grown cluster {index} is in trivial cluster {label}, which the cluster does not name",
                        page.0
                    ));
                }
                if !taken.insert(label) {
                    return Err(format!(
                        "a collection of grown cluster {index} holds two pages of trivial cluster {label}"
                    ));
                }
                if !placed.insert(page) {
                    return Err(format!("page {} is in two grown collections", page.0));
                }
            }
        }
    }
    Ok(())
}
