//! Replicated collections: which hyperlinked collections of pages are copies
//! of which (cho-2000 §2-§4).
//!
//! Reads the page table (pages, hosts, links) and the similarity stage's
//! trivial clusters; writes, into the generation, [`Collections`]: similar
//! clusters, each with its collections (host, root page, pages), cardinality
//! and size, the principal copy, and each page's collection.
//!
//! - [`graph`]: the web graph (Definition 1) on petgraph, links through
//!   redirects resolved, in-links from other hosts counted.
//! - [`summary`]: the LinkSummary table (Figure 8), a parallel group-by.
//! - [`grow`]: the trivial cluster graph, its components and their growth
//!   into similar clusters (Figure 9; extended clusters of §4).
//!
//! Two URLs of one host with the same text and the same links (a folder and
//! its `index.html`) are one page under two names: links to either lead to
//! the first in URL order, which takes part in growing; the other joins its
//! collection afterwards. More names for one page (a soft 404 answering every
//! missing URL) are merged the same way but join no collection.
//!
//! The stage is a list of passes, each in a file of its own, run in this
//! order by [`build`]: 1. second names set aside ([`names`]); 2. growth
//! ([`grow`]); 3. copies of one page that grew into nothing ([`leftovers`]);
//! 4. parts joined to their manual by folders ([`manuals`]); 5. second
//! names back into their page's collection ([`names`]); 6. each copy
//! completed with its tree ([`manuals`]); 7. no replica on one host from
//! inside one manual ([`one_host`]); 8. the principal copy ([`principal`]);
//! then numbering, largest first, with ids carried over from the previous
//! generation ([`continuity`]), and the lineages ([`lineage`]). Each pass's
//! thresholds are in [`rules`], what it did to each cluster in the cluster's
//! [`verdict`], what it did in all in [`CollectionCounts`].
//!
//! A trivial cluster of copies that joined no larger cluster is reported as a
//! cluster of one-page collections (kind `page`), as cho's trivial clusters
//! are; only clusters of two collections or more are reported. Every page is
//! in at most one collection.

pub mod continuity;
pub mod graph;
pub mod grow;
mod leftovers;
pub mod lineage;
pub mod manuals;
mod names;
mod one_host;
pub mod principal;
pub mod rules;
pub mod summary;
pub mod verdict;

#[cfg(test)]
mod manual_tests;
#[cfg(test)]
mod tests;

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::fingerprint::Fingerprints;
use crate::pages::{
    folder_prefix, parse_decimal_id, HostId, HostLists, NotAnId, PageId, PageTable, NO_HOST_LISTS,
};
use crate::similarity::{compared_with, is_compared, Similarity, TrivialClusterId};
pub use graph::WebGraph;
pub use grow::{GrowOptions, Grown, Growth, GrowthCounts, Members};
pub use lineage::{Lineage, LineageConfig, LineageCopy, LineageId, LineagePlace, Lineages};
pub use principal::PrincipalEvidence;
pub use rules::CollectionRules;
pub use summary::{link_summary, LinkSummaryRow, VirtualLinks};
pub use verdict::{Apart, ClusterVerdict, Formed};

/// Settings of the collections stage.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CollectionsConfig {
    /// Grow extended clusters (cho §4): merge on a = s >= d = b too, so that
    /// partial mirrors and partly crawled copies join the cluster of the
    /// full copies. Default on: cho found it turned 23 of 31 "problem
    /// collections" into parts of the right clusters.
    pub extended: bool,
    /// Keep each collection on one host (cho §5.1, the form a crawler can
    /// avoid). Default on.
    pub single_site: bool,
    /// Clusters whose largest collection has fewer pages than this are
    /// flagged `small` (cho §5.1: noise clusters had fewer than 10 pages).
    pub small_size: u32,
    /// Join clusters whose copies sit inside the folders of a larger
    /// cluster's copies, and complete each copy with the pages of its tree
    /// that no cluster holds ([`manuals`]): the manual is the collection.
    /// Default on: cho's growth alone leaves a manual of thousands of pages
    /// in hundreds of clusters (sub-folders, pages that differ between
    /// versions, pages nothing links to). Off gives the clusters as grown.
    pub folders: bool,
    /// Versions, parts and pages of one manual gathered into its lineage
    /// ([`lineage`]), which search shows once.
    pub lineage: LineageConfig,
    /// The thresholds of the rules ([`rules`]).
    pub rules: CollectionRules,
}

impl Default for CollectionsConfig {
    fn default() -> Self {
        CollectionsConfig {
            extended: true,
            single_site: true,
            small_size: 10,
            folders: true,
            lineage: LineageConfig::default(),
            rules: CollectionRules::default(),
        }
    }
}

impl CollectionsConfig {
    /// Why these values cannot be used, if they cannot.
    pub fn problem(&self) -> Option<String> {
        self.rules.problem().or_else(|| self.lineage.problem())
    }
}

/// A similar cluster's number: kept from one generation to the next while
/// the cluster continues (see [`continuity`]), never reused for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClusterId(pub u32);

/// A collection's number in a generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CollectionId(pub u32);

impl fmt::Display for ClusterId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.0)
    }
}

impl fmt::Display for CollectionId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.0)
    }
}

impl std::str::FromStr for ClusterId {
    type Err = NotAnId;

    fn from_str(text: &str) -> Result<ClusterId, NotAnId> {
        parse_decimal_id(text).map(ClusterId)
    }
}

impl std::str::FromStr for CollectionId {
    type Err = NotAnId;

    fn from_str(text: &str) -> Result<CollectionId, NotAnId> {
        parse_decimal_id(text).map(CollectionId)
    }
}

/// What a cluster's collections are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterKind {
    /// Collections of two pages or more.
    Collection,
    /// Copies of one page that grew into nothing larger.
    Page,
}

impl fmt::Display for ClusterKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            ClusterKind::Collection => "collection",
            ClusterKind::Page => "page",
        })
    }
}

/// A similar cluster (cho Definitions 6-8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    pub id: ClusterId,
    pub kind: ClusterKind,
    /// Its collections, the principal copy first, then by root URL.
    pub collections: Vec<CollectionId>,
    /// Pages of its largest collection.
    pub size: u32,
    /// Its collections are not copies of the same pages (cho §4: partial
    /// mirrors, partial crawls); its size is the largest collection's.
    pub extended: bool,
    /// Its largest collection is below `small_size` pages (cho §5.1 noise).
    pub small: bool,
    /// What told the principal copy from the next ([`principal`]).
    #[serde(default)]
    pub principal_evidence: PrincipalEvidence,
    /// What the other passes did to it ([`verdict`]).
    #[serde(default)]
    pub verdict: ClusterVerdict,
}

impl Cluster {
    /// Number of collections (replicas).
    pub fn cardinality(&self) -> usize {
        self.collections.len()
    }

    /// The principal copy, the one the evidence names the original
    /// ([`principal`]).
    pub fn principal(&self) -> CollectionId {
        self.collections[0]
    }
}

/// One copy of a collection in a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Collection {
    pub id: CollectionId,
    pub cluster: ClusterId,
    pub host: HostId,
    /// Its copy of the cluster's start page.
    pub root: PageId,
    /// The folder holding all its pages (their URLs' longest common prefix
    /// that ends in `/`): where a crawler would find this copy.
    pub prefix: String,
    /// Its pages, in page (URL) order.
    pub pages: Vec<PageId>,
    /// Links to its pages from pages on other hosts.
    pub inlinks_from_other_hosts: u64,
}

/// The collections stage's figures, kept in the generation's manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectionCounts {
    /// Similar clusters (of two collections or more).
    pub clusters: u64,
    /// Of which clusters of collections of two pages or more.
    pub collection_clusters: u64,
    pub extended_clusters: u64,
    pub small_clusters: u64,
    /// The `small_size` the flag was given with.
    pub small_size: u32,
    pub collections: u64,
    pub pages_in_collections: u64,
    /// Pages in collections of two pages or more.
    pub pages_in_large_collections: u64,
    /// Pages that are a second URL of another page of their host.
    pub alias_pages: u64,
    /// (page, cluster) virtual links of partly crawled copies.
    pub virtual_links: u64,
    /// LinkSummary rows with a = s (those a merge condition can hold on).
    pub link_summary_rows: u64,
    pub merge_edges: u64,
    pub extended_merge_edges: u64,
    /// Clusters as grown (of two collections or more, copies of one page
    /// included), before parts joined their manuals.
    #[serde(default)]
    pub clusters_grown: u64,
    /// Pages that joined a copy of a manual as pages of its tree.
    #[serde(default)]
    pub completed_pages: u64,
    /// Clusters of one host whose collections are parts of one manual,
    /// dissolved ([`one_host`]).
    #[serde(default)]
    pub one_host_parts: u64,
    /// Clusters of copies of one page that grew into no larger cluster
    /// (pass 3, [`leftovers`]).
    #[serde(default)]
    pub one_page_clusters: u64,
    /// Grown clusters joined into another by folders (pass 4,
    /// [`manuals`]).
    #[serde(default)]
    pub parts_joined: u64,
    /// Second names that joined their page's collection (pass 5,
    /// [`names`]).
    #[serde(default)]
    pub second_names_joined: u64,
    /// Manuals in all their versions ([`lineage`]).
    #[serde(default)]
    pub lineage: lineage::LineageCounts,
}

/// The collections stage's output for a generation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Collections {
    pub config: CollectionsConfig,
    /// Largest cardinality first, then largest size. Ids are positions in
    /// a data folder's first generation; later ones keep the ids of the
    /// clusters they continue ([`continuity`]), so look clusters up by id with
    /// [`Collections::cluster`].
    pub clusters: Vec<Cluster>,
    /// Positions in `clusters`, by cluster id.
    by_id: Vec<u32>,
    /// Above every cluster id this data folder has used.
    pub next_cluster_id: u32,
    /// By collection id.
    pub collections: Vec<Collection>,
    /// By page id: the collection it is in.
    pub collection_of: Vec<Option<CollectionId>>,
    /// By page id: links to it from pages on other hosts.
    pub inlinks_from_other_hosts: Vec<u32>,
    /// Each manual in all its versions and copies.
    pub lineages: Lineages,
    pub counts: CollectionCounts,
}

impl Collections {
    /// Gathers the clusters into manuals in all their versions
    /// ([`lineage`]), with the settings the clusters were found with.
    fn find_lineages<F: Fingerprints + Sync>(
        &mut self,
        table: &PageTable,
        (similarity, prints): (&Similarity, &F),
        documents: &[bool],
    ) -> Result<(), F::Error> {
        self.lineages = lineage::find(
            table,
            (similarity, prints),
            documents,
            self,
            &self.config.lineage,
        )?;
        self.counts.lineage = self.lineages.counts.clone();
        Ok(())
    }

    pub fn cluster(&self, id: ClusterId) -> Option<&Cluster> {
        self.clusters.get(self.position(id)?)
    }

    /// Where the cluster is in `clusters` (largest first): the order to
    /// break ties by, as ids follow a folder's history.
    pub fn position(&self, id: ClusterId) -> Option<usize> {
        let index = self
            .by_id
            .binary_search_by_key(&id, |&position| self.clusters[position as usize].id)
            .ok()?;
        Some(self.by_id[index] as usize)
    }

    /// Pages in the cluster's collections.
    pub fn cluster_pages(&self, id: ClusterId) -> u32 {
        self.cluster(id).map_or(0, |cluster| {
            cluster
                .collections
                .iter()
                .filter_map(|&collection| self.collection(collection))
                .map(|collection| collection.pages.len() as u32)
                .sum()
        })
    }

    /// Gives the clusters (by position) these ids, `next` being above every
    /// id used so far.
    pub(crate) fn set_cluster_ids(&mut self, ids: &[ClusterId], next: u32) {
        debug_assert_eq!(ids.len(), self.clusters.len());
        debug_assert!(ids.iter().all(|id| id.0 < next));
        for (cluster, &id) in self.clusters.iter_mut().zip(ids) {
            cluster.id = id;
            for &collection in &cluster.collections {
                self.collections[collection.0 as usize].cluster = id;
            }
        }
        self.by_id = positions_by_id(&self.clusters);
        self.next_cluster_id = next;
    }

    pub fn collection(&self, id: CollectionId) -> Option<&Collection> {
        self.collections.get(id.0 as usize)
    }

    /// The cluster a page's collection belongs to.
    pub fn cluster_of(&self, page: PageId) -> Option<ClusterId> {
        let collection = (*self.collection_of.get(page.0 as usize)?)?;
        Some(self.collections[collection.0 as usize].cluster)
    }

    /// Why this value cannot belong to a page table of `pages` pages, if it
    /// cannot (a damaged or mismatched file).
    pub fn problem(&self, pages: usize) -> Option<String> {
        if self.collection_of.len() != pages || self.inlinks_from_other_hosts.len() != pages {
            return Some(format!(
                "collections cover {} pages, the page table has {pages}",
                self.collection_of.len()
            ));
        }
        if let Some(problem) = self.lineages.problem(pages) {
            return Some(problem);
        }
        for copy in self
            .lineages
            .lineages
            .iter()
            .flat_map(|lineage| &lineage.copies)
        {
            if copy
                .collection
                .is_some_and(|id| self.collection(id).is_none())
            {
                return Some("a lineage names a collection there is not".into());
            }
        }
        if self.by_id.len() != self.clusters.len()
            || self
                .by_id
                .iter()
                .any(|&p| p as usize >= self.clusters.len())
            || self.by_id.windows(2).any(|pair| {
                self.clusters[pair[0] as usize].id >= self.clusters[pair[1] as usize].id
            })
            || self.clusters.iter().any(|c| c.id.0 >= self.next_cluster_id)
        {
            return Some("the clusters' ids are not distinct or not indexed".into());
        }
        for (index, cluster) in self.clusters.iter().enumerate() {
            if cluster.collections.is_empty() {
                return Some(format!("cluster {index} is malformed"));
            }
            for &collection in &cluster.collections {
                if self.collection(collection).map(|c| c.cluster) != Some(cluster.id) {
                    return Some(format!("cluster {index} lists a collection not its own"));
                }
            }
        }
        for (index, collection) in self.collections.iter().enumerate() {
            let pages_ok = collection.pages.iter().all(|&page| {
                self.collection_of.get(page.0 as usize).copied().flatten()
                    == Some(CollectionId(index as u32))
            });
            if collection.id.0 as usize != index
                || self.cluster(collection.cluster).is_none()
                || !pages_ok
            {
                return Some(format!("collection {index} is malformed"));
            }
        }
        None
    }
}

/// Each page's trivial cluster, or [`TrivialClusterId::NONE`] for a page
/// similarity does not compare (not answered 200, or without a word), for
/// a stand-in (a soft 404 is no page of any collection) and for a page
/// copied alone ([`copied_alone`]): what growth and the joining of manuals
/// see.
pub(crate) fn compared_labels(
    table: &PageTable,
    similarity: &Similarity,
    graph: &WebGraph,
) -> Vec<TrivialClusterId> {
    compared_labels_of(table, similarity, graph, &documents(table, similarity))
}

/// [`compared_labels`], the pages that may be of a collection given
/// ([`documents`]).
fn compared_labels_of(
    table: &PageTable,
    similarity: &Similarity,
    graph: &WebGraph,
    documents: &[bool],
) -> Vec<TrivialClusterId> {
    let alone = copied_alone_among(table, similarity, graph, documents);
    (0..table.pages.len())
        .map(|page| {
            if documents[page] && !alone[page] {
                similarity.trivial[page]
            } else {
                TrivialClusterId::NONE
            }
        })
        .collect()
}

/// By page: compared by similarity and no stand-in, a page that may be
/// one of a collection (the similarity's fingerprints held).
fn documents(table: &PageTable, similarity: &Similarity) -> Vec<bool> {
    (0..table.pages.len())
        .map(|page| {
            is_compared(table, &similarity.fingerprints, page)
                && !similarity.is_stand_in(PageId(page as u32))
        })
        .collect()
}

/// What the stage reads of each page's fingerprint, by page: whether it
/// may be of a collection ([`documents`]), and its own text's signature
/// ([`Similarity::own_text_signature`]); one pass over the fingerprints,
/// wherever they are.
fn read_texts<F: Fingerprints + Sync>(
    table: &PageTable,
    (similarity, prints): (&Similarity, &F),
) -> Result<(Vec<bool>, Vec<u64>), F::Error> {
    let every_page: Vec<usize> = (0..table.pages.len()).collect();
    Ok(prints
        .map_pages(&every_page, |page, print| {
            let words = print.map_or(0, |print| print.words);
            let own_text = print.map_or(0, |print| similarity.own_text_signature(print));
            let document =
                compared_with(table, page, words) && !similarity.is_stand_in(PageId(page as u32));
            (document, own_text)
        })?
        .into_iter()
        .unzip())
}

/// Pages copied alone: a copy of a page (its trivial cluster holds a page
/// of another host) that has crawled neighbours, the pages it links to and
/// those linking to it (in `graph`, through redirects as growth sees them), none of
/// which has a copy on another host. A content farm or a Q&A site copies a
/// page of a manual into its own template, among pages of its own; a
/// mirror copies the pages around it too. cho-2000 grows a collection
/// along links that its copies share, and such a page shares none: it is
/// a copy of that page (page pairs, the page view, the roll-up with its
/// twins) but no copy of the manual, so the collections stage sees it as a
/// page of its own, and it never places a cluster's copy on its host
/// (which would pair its host with the manual's). A page without a crawled
/// neighbour (a mirror's page reached by no crawled link) says nothing
/// either way and is left as it is. So is a page that sits where one of
/// its copies on another host sits: named as that copy is ([`page_name`],
/// a name, not a site's root), beside a page named as one of that copy's
/// neighbours is, that copy not being alone itself. That is a page of a
/// copy of the manual, such as the one page an old version shares with the
/// new one among pages of its own (cho-2000's link structure, read by name
/// where the text changed). A site copying a page names it its own way,
/// and a sibling manual's shared licence page sits beside its own manual's
/// front page, named after the other manual.
pub fn copied_alone(table: &PageTable, similarity: &Similarity, graph: &WebGraph) -> Vec<bool> {
    copied_alone_among(table, similarity, graph, &documents(table, similarity))
}

/// [`copied_alone`], the pages that may be of a collection (`compared`,
/// [`documents`]) given.
fn copied_alone_among(
    table: &PageTable,
    similarity: &Similarity,
    graph: &WebGraph,
    compared: &[bool],
) -> Vec<bool> {
    let pages = table.pages.len();
    // Trivial clusters whose compared pages are on two hosts or more.
    let clusters = similarity.trivial_cluster_count();
    let mut first_host: Vec<Option<HostId>> = vec![None; clusters];
    let mut across_hosts = vec![false; clusters];
    for page in (0..pages).filter(|&page| compared[page]) {
        let cluster = similarity.trivial[page].index();
        let host = table.pages[page].host;
        match first_host[cluster] {
            None => first_host[cluster] = Some(host),
            Some(first) if first != host => across_hosts[cluster] = true,
            Some(_) => {}
        }
    }
    let has_copy = |page: usize| compared[page] && across_hosts[similarity.trivial[page].index()];
    let is_compared_page: &[bool] = compared;
    let neighbours = move |page: usize| {
        let id = PageId(page as u32);
        graph
            .outlinks(id)
            .chain(graph.inlinks(id))
            .map(|other| other.0 as usize)
            .filter(move |&other| other != page && is_compared_page[other])
    };
    let candidates: Vec<usize> = (0..pages)
        .filter(|&page| has_copy(page))
        .filter(|&page| {
            let mut around = neighbours(page).peekable();
            around.peek().is_some() && !neighbours(page).any(has_copy)
        })
        .collect();
    let mut alone = vec![false; pages];
    if candidates.is_empty() {
        return alone;
    }
    let is_candidate: HashSet<usize> = candidates.iter().copied().collect();
    let name_key = |page: usize| -> Option<u64> {
        let name = page_name(&table.pages[page].url);
        (!name.is_empty()).then(|| xxhash_rust::xxh3::xxh3_64(name.as_bytes()))
    };
    // For each candidate's (trivial cluster, page name): the hosts where a
    // page of that cluster under that name, not a candidate itself, has a
    // neighbour of each name (at most two hosts a name: enough to tell
    // another host from the candidate's own).
    let wanted: HashSet<(u32, u64)> = candidates
        .iter()
        .filter_map(|&page| Some((similarity.trivial[page].0, name_key(page)?)))
        .collect();
    let mut placed: HashMap<(u32, u64), HashMap<u64, Vec<HostId>>> = HashMap::new();
    for page in (0..pages).filter(|&page| compared[page] && !is_candidate.contains(&page)) {
        let Some(name) = name_key(page) else {
            continue;
        };
        let key = (similarity.trivial[page].0, name);
        if !wanted.contains(&key) {
            continue;
        }
        let host = table.pages[page].host;
        let around = placed.entry(key).or_default();
        for neighbour in neighbours(page) {
            let Some(neighbour_name) = name_key(neighbour) else {
                continue;
            };
            let hosts = around.entry(neighbour_name).or_default();
            if hosts.len() < 2 && !hosts.contains(&host) {
                hosts.push(host);
            }
        }
    }
    for page in candidates {
        let host = table.pages[page].host;
        let in_place = name_key(page)
            .and_then(|name| placed.get(&(similarity.trivial[page].0, name)))
            .is_some_and(|around| {
                neighbours(page).filter_map(name_key).any(|neighbour_name| {
                    around
                        .get(&neighbour_name)
                        .is_some_and(|hosts| hosts.iter().any(|&other| other != host))
                })
            });
        alone[page] = !in_place;
    }
    alone
}

/// The name a URL gives its page: its last path segment without query or
/// fragment, lower-cased, without a `.html` or `.htm` ending; for a
/// folder's index page, the folder's name.
pub(crate) fn page_name(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let path = path.split_once("://").map_or(path, |(_, rest)| rest);
    let segments: Vec<&str> = path
        .split('/')
        .skip(1)
        .filter(|segment| !segment.is_empty())
        .collect();
    let mut name = segments.last().copied().unwrap_or("").to_ascii_lowercase();
    if name == "index.html" || name == "index.htm" {
        name = segments
            .len()
            .checked_sub(2)
            .map_or(String::new(), |parent| {
                segments[parent].to_ascii_lowercase()
            });
    }
    for ending in [".html", ".htm"] {
        if let Some(stem) = name.strip_suffix(ending) {
            return stem.to_string();
        }
    }
    name
}

/// Runs the stage on a page table and its trivial clusters, the
/// similarity's fingerprints held.
pub fn analyse(
    table: &PageTable,
    similarity: &Similarity,
    config: &CollectionsConfig,
) -> Collections {
    match analyse_with(table, (similarity, &similarity.fingerprints), config) {
        Ok(collections) => collections,
        Err(never) => match never {},
    }
}

/// [`analyse`], the pages' fingerprints read from `prints` (the file the
/// pipeline wrote them to, the similarity holding none). Fails only when
/// the file cannot be read.
pub fn analyse_with<F: Fingerprints + Sync>(
    table: &PageTable,
    (similarity, prints): (&Similarity, &F),
    config: &CollectionsConfig,
) -> Result<Collections, F::Error> {
    let (documents, own_text) = read_texts(table, (similarity, prints))?;
    let (graph, labels, trivial_clusters, facts) =
        prepare(table, similarity, (&documents, own_text), config);
    let mut collections = build(&graph, &labels, trivial_clusters, config, &facts);
    drop((graph, labels, facts));
    collections.find_lineages(table, (similarity, prints), &documents)?;
    Ok(collections)
}

/// Runs the stage with the similar clusters as grown elsewhere (the Spark
/// job of `spark/`, read by `import-analysis`): growth by `growth` (in the
/// order [`grow::grow`] gives its clusters, over the trivial clusters of
/// `similarity`), the rest of the stage (parts joining their manuals,
/// second names, principal copies) here. Refuses, saying why, clusters that
/// growth could not have given ([`grow::check_grown`]).
pub fn analyse_grown(
    table: &PageTable,
    similarity: &Similarity,
    config: &CollectionsConfig,
    growth: Growth,
) -> Result<Collections, String> {
    let held = (similarity, &similarity.fingerprints);
    let (documents, own_text) = match read_texts(table, held) {
        Ok(texts) => texts,
        Err(never) => match never {},
    };
    let (graph, labels, trivial_clusters, facts) =
        prepare(table, similarity, (&documents, own_text), config);
    let (growth_labels, _) = names::aliases(&graph, &labels);
    grow::check_grown(&growth.clusters, &growth_labels, trivial_clusters)?;
    let mut collections = build_with(
        &graph,
        &labels,
        trivial_clusters,
        config,
        &facts,
        Some(growth),
    );
    if let Err(never) = collections.find_lineages(table, held, &documents) {
        match never {}
    }
    Ok(collections)
}

/// The web graph, each page's trivial cluster as growth sees it, the number
/// of trivial clusters, and the other facts of the pages; the pages that may
/// be of a collection ([`documents`]) and their own texts' signatures given.
fn prepare<'a>(
    table: &'a PageTable,
    similarity: &Similarity,
    (documents, own_text): (&[bool], Vec<u64>),
    config: &CollectionsConfig,
) -> (WebGraph, Vec<TrivialClusterId>, usize, PageFacts<'a>) {
    let started = std::time::Instant::now();
    let graph = WebGraph::from_table(table, config.rules.redirect_hops);
    let labels = compared_labels_of(table, similarity, &graph, documents);
    let trivial_clusters = labels
        .iter()
        .filter(|&&label| label != TrivialClusterId::NONE)
        .max()
        .map_or(0, |&label| label.index() + 1);
    let host_ids: HashMap<&str, HostId> = table
        .hosts
        .iter()
        .enumerate()
        .map(|(id, name)| (name.as_str(), HostId(id as u32)))
        .collect();
    let facts = PageFacts {
        urls: table.pages.iter().map(|page| page.url.as_ref()).collect(),
        first_crawl: table.pages.iter().map(|page| page.first_crawl).collect(),
        named_hosts: table.pages.iter().map(|page| &*page.linked_hosts).collect(),
        text_hosts: &table.text_hosts,
        canonical_hosts: table
            .pages
            .iter()
            .map(|page| {
                let canonical = page.canonical.as_deref()?;
                host_ids.get(crate::pages::host_of_url(canonical)).copied()
            })
            .collect(),
        uncrawled_links: table
            .pages
            .iter()
            .map(|page| page.uncrawled_links.as_ref())
            .collect(),
        own_text,
        addresses: table.pages.iter().map(|page| page.ip.as_deref()).collect(),
        stand_ins: similarity.stand_ins().to_vec(),
    };
    tracing::debug!(
        seconds = started.elapsed().as_secs_f64(),
        "collections: web graph, own texts and stand-ins"
    );
    (graph, labels, trivial_clusters, facts)
}

/// What growing needs to know of each page besides the graph, by page id.
pub struct PageFacts<'a> {
    pub urls: Vec<&'a str>,
    /// The earliest crawl of the generation that saw each page, for
    /// choosing principal copies (empty when not known).
    pub first_crawl: Vec<u16>,
    /// Other hosts each page links to ([`crate::pages::Page::linked_hosts`]),
    /// for choosing principal copies (empty when not known).
    pub named_hosts: Vec<&'a [HostId]>,
    /// Hosts each page's text names, its own included
    /// ([`crate::pages::PageTable::text_hosts`]; none when not known).
    pub text_hosts: &'a HostLists,
    /// The host of each page's `<link rel="canonical">`, when it is a host
    /// of the crawl (empty when not known).
    pub canonical_hosts: Vec<Option<HostId>>,
    /// [`crate::pages::relative_link_key`]s of links to pages not crawled.
    pub uncrawled_links: Vec<&'a [u64]>,
    /// [`Similarity::own_text_signatures`], for choosing principal copies
    /// (empty when not known: every copy then agrees with none).
    pub own_text: Vec<u64>,
    /// IP addresses the pages were crawled from (empty when not known).
    pub addresses: Vec<Option<&'a str>>,
    /// [`Similarity::stand_ins`] (empty when not known).
    pub stand_ins: Vec<bool>,
}

impl Default for PageFacts<'_> {
    fn default() -> Self {
        PageFacts {
            urls: Vec::new(),
            first_crawl: Vec::new(),
            named_hosts: Vec::new(),
            text_hosts: &NO_HOST_LISTS,
            canonical_hosts: Vec::new(),
            uncrawled_links: Vec::new(),
            own_text: Vec::new(),
            addresses: Vec::new(),
            stand_ins: Vec::new(),
        }
    }
}

/// Grows the clusters of a web graph and numbers them. `labels` as in
/// [`grow::grow`].
pub fn build(
    graph: &WebGraph,
    labels: &[TrivialClusterId],
    trivial_clusters: usize,
    config: &CollectionsConfig,
    facts: &PageFacts,
) -> Collections {
    build_with(graph, labels, trivial_clusters, config, facts, None)
}

/// [`build`], with the clusters grown here or, when `grown` is given, as
/// grown elsewhere.
fn build_with(
    graph: &WebGraph,
    labels: &[TrivialClusterId],
    trivial_clusters: usize,
    config: &CollectionsConfig,
    facts: &PageFacts,
    grown: Option<Growth>,
) -> Collections {
    let urls = &facts.urls;
    let started = std::time::Instant::now();
    let lap = |step: &str| {
        tracing::debug!(
            seconds = started.elapsed().as_secs_f64(),
            "collections: {step}"
        );
    };
    // The passes, in order; each cluster's verdict records what they did
    // to it ([`verdict`]), the counts what they did in all.
    // 1. Second names of a page set aside (`names`).
    let (growth_labels, aliases) = names::aliases(graph, labels);
    let merged;
    let graph = if aliases.is_empty() {
        graph
    } else {
        merged = graph.merge_aliases(&aliases);
        &merged
    };
    let members = Members::new(&growth_labels, trivial_clusters);
    let options = GrowOptions::of(config);
    // 2. Growth along links (`grow`), or the clusters grown elsewhere.
    let (mut grown, growth) = match grown {
        Some(imported) => {
            let mut clusters = imported.clusters;
            for cluster in &mut clusters {
                cluster.verdict.formed = Formed::Imported;
            }
            (clusters, imported.counts)
        }
        None => {
            let sizes: Vec<u32> = (0..trivial_clusters as u32)
                .map(|cluster| members.size(TrivialClusterId(cluster)))
                .collect();
            let virtual_links =
                VirtualLinks::find(graph, &growth_labels, &sizes, urls, &facts.uncrawled_links);
            grow::grow(graph, &growth_labels, &members, options, &virtual_links)
        }
    };
    lap("grown");

    // 3. Copies of one page that grew into nothing (`leftovers`).
    let one_page_clusters = leftovers::one_page_clusters(&mut grown, &members, trivial_clusters);

    let hosts: Vec<HostId> = (0..labels.len())
        .map(|page| graph.host(PageId(page as u32)))
        .collect();
    let folders = manuals::PageFolders {
        urls,
        hosts: &hosts,
        labels,
        stand_ins: &facts.stand_ins,
        rules: &config.rules,
    };
    let clusters_grown = grown.len() as u64;
    // 4. Parts join their manual by folders (`manuals`).
    if config.folders {
        grown = manuals::join_parts(grown, &folders);
        lap("parts joined");
    } else {
        for cluster in &mut grown {
            cluster.verdict.apart = Some(Apart::FoldersOff);
        }
    }

    let parts_joined: u64 = grown
        .iter()
        .map(|cluster| u64::from(cluster.verdict.parts_joined))
        .sum();
    // 5. Second names join their page's collection (`names`).
    let second_names = names::join_second_names(&mut grown, &aliases);
    // 6. Each copy completed with the exceptions of its tree (`manuals`).
    let mut completed_pages = 0;
    if config.folders {
        let mut placed = vec![false; labels.len()];
        for cluster in &grown {
            for &page in cluster.collections.iter().flatten() {
                placed[page.0 as usize] = true;
            }
        }
        let second_names: HashSet<PageId> = aliases.iter().map(|&(alias, _)| alias).collect();
        completed_pages = manuals::complete(&mut grown, &placed, &second_names, &folders);
        lap("copies completed");
    }
    // 7. No replica on one host from inside one manual (`one_host`).
    let before = grown.len();
    grown.retain(|cluster| !one_host::parts_of_one_manual(cluster, graph, urls));
    let one_host_parts = (before - grown.len()) as u64;

    // Each candidate cluster: its collections sorted, principal first.
    struct Draft {
        collections: Vec<(Vec<PageId>, PageId, u64)>,
        size: usize,
        extended: bool,
        evidence: PrincipalEvidence,
        verdict: ClusterVerdict,
    }
    let mut drafts: Vec<Draft> = grown
        .into_iter()
        .map(|cluster| {
            let verdict = ClusterVerdict {
                trivial_clusters: cluster.trivial.len() as u32,
                ..cluster.verdict
            };
            let collections: Vec<(Vec<PageId>, PageId, u64)> = cluster
                .collections
                .into_iter()
                .map(|pages| {
                    let root = pages[0];
                    let inlinks: u64 = pages
                        .iter()
                        .map(|&page| u64::from(graph.inlinks_from_other_hosts(page)))
                        .sum();
                    let mut pages = pages;
                    pages.sort_unstable();
                    (pages, root, inlinks)
                })
                .collect();
            let size = collections.iter().map(|(pages, _, _)| pages.len()).max();
            // Equi-sized collections of copies of the same pages (cho
            // Definition 6), or an extended cluster.
            let copied_pages = |pages: &[PageId]| {
                let mut copied: Vec<TrivialClusterId> =
                    pages.iter().map(|p| labels[p.0 as usize]).collect();
                copied.sort_unstable();
                copied.dedup();
                copied
            };
            let first = copied_pages(&collections[0].0);
            let extended = collections
                .iter()
                .skip(1)
                .any(|(pages, _, _)| copied_pages(pages) != first)
                || !roots_agree(graph, labels, &collections);
            Draft {
                size: size.unwrap_or(0),
                extended,
                collections,
                evidence: PrincipalEvidence::Alone,
                verdict,
            }
        })
        .collect();
    lap("clusters drafted");
    // 8. The principal copy first, by evidence (`principal`), then the
    //    others by root URL.
    let principals = principal::Chooser::new(
        facts,
        &hosts,
        drafts.iter().map(|draft| {
            draft
                .collections
                .iter()
                .map(|(pages, root, inlinks)| principal::Candidate {
                    pages,
                    root: *root,
                    inlinks: *inlinks,
                })
                .collect()
        }),
    );
    for (index, draft) in drafts.iter_mut().enumerate() {
        let principal = principals.principal(index);
        draft.evidence = principals.evidence(index);
        let principal = draft.collections.swap_remove(principal);
        draft
            .collections
            .sort_by_key(|(_, root, _)| urls[root.0 as usize]);
        draft.collections.insert(0, principal);
    }
    drop(principals);
    lap("principal copies chosen");
    drafts.sort_by(|first, second| {
        let key = |draft: &Draft| {
            (
                Reverse(draft.collections.len()),
                Reverse(draft.size),
                urls[draft.collections[0].1 .0 as usize],
            )
        };
        key(first).cmp(&key(second))
    });

    let mut clusters = Vec::with_capacity(drafts.len());
    let mut collections = Vec::new();
    let mut collection_of = vec![None; labels.len()];
    let mut counts = CollectionCounts {
        small_size: config.small_size,
        alias_pages: aliases.len() as u64,
        virtual_links: growth.virtual_links,
        link_summary_rows: growth.candidate_rows,
        merge_edges: growth.merge_edges,
        extended_merge_edges: growth.extended_merge_edges,
        clusters_grown,
        completed_pages,
        one_host_parts,
        one_page_clusters,
        parts_joined,
        second_names_joined: second_names,
        ..CollectionCounts::default()
    };
    for (index, draft) in drafts.into_iter().enumerate() {
        let id = ClusterId(index as u32);
        let kind = if draft.size >= 2 {
            ClusterKind::Collection
        } else {
            ClusterKind::Page
        };
        let small = draft.size < config.small_size as usize;
        counts.clusters += 1;
        counts.collection_clusters += u64::from(kind == ClusterKind::Collection);
        counts.extended_clusters += u64::from(draft.extended);
        counts.small_clusters += u64::from(small);
        let mut members = Vec::with_capacity(draft.collections.len());
        for (pages, root, inlinks) in draft.collections {
            let collection_id = CollectionId(collections.len() as u32);
            for &page in &pages {
                collection_of[page.0 as usize] = Some(collection_id);
            }
            counts.collections += 1;
            counts.pages_in_collections += pages.len() as u64;
            if kind == ClusterKind::Collection {
                counts.pages_in_large_collections += pages.len() as u64;
            }
            members.push(collection_id);
            collections.push(Collection {
                id: collection_id,
                cluster: id,
                host: graph.host(root),
                root,
                prefix: folder_prefix(pages.iter().map(|page| urls[page.0 as usize])),
                pages,
                inlinks_from_other_hosts: inlinks,
            });
        }
        clusters.push(Cluster {
            id,
            kind,
            collections: members,
            size: draft.size as u32,
            extended: draft.extended,
            small,
            principal_evidence: draft.evidence,
            verdict: draft.verdict,
        });
    }
    Collections {
        config: config.clone(),
        by_id: positions_by_id(&clusters),
        next_cluster_id: clusters.len() as u32,
        clusters,
        collections,
        collection_of,
        inlinks_from_other_hosts: (0..labels.len())
            .map(|page| graph.inlinks_from_other_hosts(PageId(page as u32)))
            .collect(),
        lineages: Lineages {
            of_page: vec![None; labels.len()],
            ..Lineages::default()
        },
        counts,
    }
}

fn positions_by_id(clusters: &[Cluster]) -> Vec<u32> {
    let mut positions: Vec<u32> = (0..clusters.len() as u32).collect();
    positions.sort_by_key(|&position| clusters[position as usize].id);
    positions
}

/// Definition 5 at the roots, the one place growth does not ensure it: each
/// root and its copies have a similar parent in their collections, or none
/// has a parent there. Collections given as (pages sorted, root, _).
fn roots_agree(
    graph: &WebGraph,
    labels: &[TrivialClusterId],
    collections: &[(Vec<PageId>, PageId, u64)],
) -> bool {
    let parents = |(pages, root, _): &(Vec<PageId>, PageId, u64)| -> Vec<TrivialClusterId> {
        let mut found: Vec<TrivialClusterId> = graph
            .inlinks(*root)
            .filter(|parent| pages.binary_search(parent).is_ok())
            .map(|parent| labels[parent.0 as usize])
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    };
    let all: Vec<Vec<TrivialClusterId>> = collections.iter().map(parents).collect();
    all.iter().enumerate().all(|(index, mine)| {
        all[index + 1..].iter().all(|theirs| {
            (mine.is_empty() && theirs.is_empty())
                || mine.iter().any(|label| theirs.binary_search(label).is_ok())
        })
    })
}
