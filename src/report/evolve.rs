//! `mirrorscope evolve DIR_A DIR_B`: how the clusters of one crawl changed in
//! a later one (fetterly-manasse-najork-2004 §3), and which collections and
//! mirrored host pairs appeared or disappeared.
//!
//! Both sides are the current generations of two data folders (or two
//! generations of one folder, copied aside). Pages are matched by URL.
//!
//! **Near-duplicate clusters** are the similarity stage's trivial clusters of
//! compared pages (200, a body with words). For a URL u of A, C_A(u) is its
//! cluster in A and C_B(u) its cluster in B; a URL that B did not fetch (or
//! fetched without a comparable body) is in B's "not fetched" cluster, as
//! fetterly's URLs that could not be downloaded are. Per URL:
//! - containment Φ = |C_B(u) ∩ C_A(u)| / |C_A(u)| (fetterly Figure 4: of the
//!   URLs clustered with u in A, the share still clustered with it in B);
//! - reverse containment = |C_A(u) ∩ C_B(u)| / |C_B(u)| (Figure 7: how much of
//!   u's cluster in B was with it in A, the arrival of URLs);
//! - similarity Ψ = |C_A(u) ∩ C_B(u)| / |C_A(u) ∪ C_B(u)| (Figure 5);
//!
//! averaged by the size of C_A(u) in powers of ten (1, 2-10, 11-100, ... as
//! Figure 8's logarithmic regions). Of the near-duplicate pairs of A (two
//! URLs of one cluster), the report counts those still in one cluster in B.
//!
//! Clusters of two URLs or more are followed through shared URLs: an A
//! cluster none of whose URLs is in a B cluster of two or more is **gone**,
//! one whose URLs went to several is **split**; a B cluster holding URLs of
//! no A cluster is **born**, of several **merged**; the others continue one
//! to one and **grew**, **shrank** or kept their size. (An A cluster whose
//! one successor is a merger counts in none of these: the counts of A's
//! clusters need not add up to `clusters_a`.)
//!
//! **Collections**: the similar clusters of collections are matched as
//! `index` matches them to keep their ids ([`crate::collections::continuity`]);
//! a copy is its host and folder. **Mirrors**: host pairs classified at
//! levels 1 to 5.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use serde::Serialize;

use crate::collections::{continuity, ClusterId, ClusterKind, Collections};
use crate::generation::{Analysis, DataDir, Result};
use crate::mirrors::{Level, Mirrors};
use crate::pages::PageTable;
use crate::similarity::{is_compared, Similarity, TrivialClusterId};

use super::evolve_summary::{summarise, Summary};

/// One side of the comparison.
pub struct Side {
    pub folder: String,
    pub generation: String,
    pub table: PageTable,
    pub similarity: Similarity,
    pub collections: Collections,
    pub mirrors: Mirrors,
}

impl Side {
    pub fn read(data: &DataDir) -> Result<Side> {
        let Analysis {
            manifest,
            table,
            similarity,
            collections,
            mirrors,
            ..
        } = data.analysis()?;
        Ok(Side {
            folder: data.root().display().to_string(),
            generation: manifest.generation,
            similarity,
            collections,
            mirrors,
            table,
        })
    }
}

/// What `evolve` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Evolution {
    pub a: SideSummary,
    pub b: SideSummary,
    /// What happened to each host and each manual (see
    /// [`super::evolve_summary`]).
    pub summary: Summary,
    pub pages: PageChanges,
    pub near_duplicates: NearDuplicates,
    pub collections: CollectionChanges,
    pub mirrors: MirrorChanges,
    /// Cluster changes the text shows (the largest first); `None`: all.
    #[serde(skip)]
    pub shown_changes: Option<usize>,
}

/// Cluster changes the text shows unless asked for all.
pub const SHOWN_CHANGES: usize = 20;

#[derive(Debug, Clone, Serialize)]
pub struct SideSummary {
    pub data: String,
    pub generation: String,
    pub pages: u64,
    pub hosts: u64,
}

/// URLs of A and B compared.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PageChanges {
    /// In both, same status and body.
    pub unchanged: u64,
    /// In both, another status or body.
    pub changed: u64,
    pub only_a: u64,
    pub only_b: u64,
    /// Hosts with pages in one side only.
    pub hosts_only_a: Vec<String>,
    pub hosts_only_b: Vec<String>,
    /// Changed URLs, sorted (at most [`LISTED`]).
    pub changed_urls: Vec<String>,
}

/// fetterly-2004 §3's measures between the two sides.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NearDuplicates {
    /// Pairs of URLs in one cluster of A.
    pub pairs_a: u64,
    /// Of them, pairs in one cluster of B too.
    pub pairs_still: u64,
    pub by_size: Vec<SizeRange>,
    /// Clusters of two URLs or more on each side.
    pub clusters_a: u64,
    pub clusters_b: u64,
    pub born: u64,
    pub gone: u64,
    pub grown: u64,
    pub shrunk: u64,
    pub same_size: u64,
    pub merged: u64,
    pub split: u64,
}

/// Mean coefficients over the URLs of A whose cluster in A has a size in
/// `min..=max`.
#[derive(Debug, Clone, Serialize)]
pub struct SizeRange {
    pub min: u64,
    pub max: Option<u64>,
    pub urls: u64,
    pub containment: f64,
    pub reverse_containment: f64,
    pub similarity: f64,
}

/// Similar clusters of collections: one entry per cluster of either side
/// that is not the same in both.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CollectionChanges {
    pub clusters_a: u64,
    pub clusters_b: u64,
    pub continued: u64,
    pub changes: Vec<ClusterChange>,
    /// Copies (host and folder) in a cluster on one side only.
    pub copies_appeared: Vec<CopyEntry>,
    pub copies_disappeared: Vec<CopyEntry>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterFate {
    Born,
    Gone,
    Changed,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClusterChange {
    pub fate: ClusterFate,
    pub id_a: Option<ClusterId>,
    pub id_b: Option<ClusterId>,
    /// The principal copy's folder (B's when it has the cluster).
    pub principal: String,
    /// Copies and largest copy's pages, in A and in B.
    pub cardinality: (u64, u64),
    pub size: (u64, u64),
    pub copies_appeared: Vec<String>,
    pub copies_disappeared: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CopyEntry {
    pub host: String,
    pub prefix: String,
    pub cluster: ClusterId,
    pub pages: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct MirrorChanges {
    pub pairs_a: u64,
    pub pairs_b: u64,
    pub appeared: Vec<MirrorPair>,
    pub disappeared: Vec<MirrorPair>,
    /// Mirrored on both sides, at another level.
    pub level_changed: Vec<LevelChange>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MirrorPair {
    pub a: String,
    pub b: String,
    pub level: Level,
}

#[derive(Debug, Clone, Serialize)]
pub struct LevelChange {
    pub a: String,
    pub b: String,
    pub before: Level,
    pub after: Level,
}

/// At most this many changed URLs are listed.
pub const LISTED: usize = 1000;

impl Evolution {
    pub fn gather(a: &DataDir, b: &DataDir) -> Result<Evolution> {
        Ok(Evolution::between(&Side::read(a)?, &Side::read(b)?))
    }

    pub fn between(a: &Side, b: &Side) -> Evolution {
        let summary = |side: &Side| SideSummary {
            data: side.folder.clone(),
            generation: side.generation.clone(),
            pages: side.table.pages.len() as u64,
            hosts: side.table.hosts.len() as u64,
        };
        let pairs = ClusterPairs::between(a, b);
        Evolution {
            a: summary(a),
            b: summary(b),
            summary: summarise(a, b, &pairs),
            shown_changes: Some(SHOWN_CHANGES),
            pages: page_changes(&a.table, &b.table),
            near_duplicates: near_duplicates(a, b),
            collections: collection_changes(a, b, &pairs),
            mirrors: mirror_changes(a, b),
        }
    }
}

fn page_changes(a: &PageTable, b: &PageTable) -> PageChanges {
    let mut changes = PageChanges::default();
    let hosts = |table: &PageTable| -> BTreeSet<String> {
        table
            .pages
            .iter()
            .map(|page| table.host_name(page.host).to_string())
            .collect()
    };
    let (hosts_a, hosts_b) = (hosts(a), hosts(b));
    changes.hosts_only_a = hosts_a.difference(&hosts_b).cloned().collect();
    changes.hosts_only_b = hosts_b.difference(&hosts_a).cloned().collect();
    for page in &a.pages {
        match b.find_url(&page.url).and_then(|id| b.page(id)) {
            None => changes.only_a += 1,
            Some(later) => {
                let body = |p: &crate::pages::Page| p.content_key.map(|key| key.signature);
                if later.status == page.status && body(later) == body(page) {
                    changes.unchanged += 1;
                } else {
                    changes.changed += 1;
                    if changes.changed_urls.len() < LISTED {
                        changes.changed_urls.push(page.url.to_string());
                    }
                }
            }
        }
    }
    changes.only_b = b
        .pages
        .iter()
        .filter(|page| a.find_url(&page.url).is_none())
        .count() as u64;
    changes
}

/// A URL's cluster in B: a trivial cluster, or not fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Later {
    Cluster(TrivialClusterId),
    NotFetched,
}

/// One side's trivial clusters of compared pages (200, a body with words).
struct Clustering {
    /// By page id: its cluster, if the page is compared.
    of_page: Vec<Option<TrivialClusterId>>,
    /// Compared pages per cluster.
    sizes: HashMap<TrivialClusterId, u64>,
}

impl Clustering {
    fn of(side: &Side) -> Clustering {
        let of_page: Vec<Option<TrivialClusterId>> = (0..side.table.pages.len())
            .map(|page| {
                is_compared(&side.table, &side.similarity.fingerprints, page)
                    .then(|| side.similarity.trivial[page])
            })
            .collect();
        let mut sizes: HashMap<TrivialClusterId, u64> = HashMap::new();
        for cluster in of_page.iter().flatten() {
            *sizes.entry(*cluster).or_insert(0) += 1;
        }
        Clustering { of_page, sizes }
    }

    /// Whether the cluster holds two pages or more.
    fn is_multi(&self, cluster: TrivialClusterId) -> bool {
        self.sizes.get(&cluster).is_some_and(|&size| size >= 2)
    }
}

fn near_duplicates(a: &Side, b: &Side) -> NearDuplicates {
    let (clustering_a, clustering_b) = (Clustering::of(a), Clustering::of(b));
    // By A's page id: the cluster of the same URL in B, if B compared it.
    let in_b: Vec<Option<TrivialClusterId>> = a
        .table
        .pages
        .iter()
        .map(|page| {
            let id = b.table.find_url(&page.url)?;
            clustering_b.of_page[id.0 as usize]
        })
        .collect();
    // A's clusters, each with its URLs' clusters in B.
    let mut clusters_a: BTreeMap<TrivialClusterId, Vec<Later>> = BTreeMap::new();
    for (index, cluster) in clustering_a.of_page.iter().enumerate() {
        let Some(cluster) = cluster else {
            continue;
        };
        let later = in_b[index].map_or(Later::NotFetched, Later::Cluster);
        clusters_a.entry(*cluster).or_default().push(later);
    }
    let mut sizes_b: HashMap<Later, u64> = clustering_b
        .sizes
        .iter()
        .map(|(&cluster, &size)| (Later::Cluster(cluster), size))
        .collect();
    let not_fetched = clusters_a
        .values()
        .flatten()
        .filter(|&&later| later == Later::NotFetched)
        .count() as u64;
    sizes_b.insert(Later::NotFetched, not_fetched);

    let mut found = NearDuplicates::default();
    let mut ranges: Vec<(u64, f64, f64, f64)> = vec![(0, 0.0, 0.0, 0.0); SIZE_RANGES];
    for members in clusters_a.values() {
        let size = members.len() as u64;
        // Ordered, so that the sums add up the same way every run.
        let mut together: BTreeMap<Later, u64> = BTreeMap::new();
        for &later in members {
            *together.entry(later).or_insert(0) += 1;
        }
        found.pairs_a += size * (size - 1) / 2;
        for (&later, &count) in &together {
            if later != Later::NotFetched {
                found.pairs_still += count * (count - 1) / 2;
            }
            let size_b = sizes_b[&later];
            let range = &mut ranges[size_range(size)];
            range.0 += count;
            range.1 += count as f64 * count as f64 / size as f64;
            range.2 += count as f64 * count as f64 / size_b as f64;
            range.3 += count as f64 * count as f64 / (size + size_b - count) as f64;
        }
    }
    found.by_size = ranges
        .iter()
        .enumerate()
        .filter(|(_, range)| range.0 > 0)
        .map(|(index, &(urls, containment, reverse, similarity))| {
            let (min, max) = size_bounds(index);
            SizeRange {
                min,
                max,
                urls,
                containment: containment / urls as f64,
                reverse_containment: reverse / urls as f64,
                similarity: similarity / urls as f64,
            }
        })
        .collect();
    cluster_events(&clustering_a, &clustering_b, &in_b, &mut found);
    found
}

/// Size ranges 1, 2-10, 11-100, ..., above 100,000.
const SIZE_RANGES: usize = 7;

fn size_range(size: u64) -> usize {
    match size {
        0 | 1 => 0,
        _ => ((size - 1).ilog10() as usize + 1).min(SIZE_RANGES - 1),
    }
}

fn size_bounds(range: usize) -> (u64, Option<u64>) {
    match range {
        0 => (1, Some(1)),
        _ if range == SIZE_RANGES - 1 => (10u64.pow(range as u32 - 1) + 1, None),
        _ => (
            10u64.pow(range as u32 - 1) + 1,
            Some(10u64.pow(range as u32)),
        ),
    }
}

/// Born, gone, grown, shrunk, merged and split clusters of two URLs or more.
/// `in_b`: by A's page id, the same URL's cluster in B.
fn cluster_events(
    clustering_a: &Clustering,
    clustering_b: &Clustering,
    in_b: &[Option<TrivialClusterId>],
    found: &mut NearDuplicates,
) {
    let multi = |clustering: &Clustering| -> HashMap<TrivialClusterId, u64> {
        let mut sizes = clustering.sizes.clone();
        sizes.retain(|_, size| *size >= 2);
        sizes
    };
    let (sizes_a, sizes_b) = (multi(clustering_a), multi(clustering_b));
    found.clusters_a = sizes_a.len() as u64;
    found.clusters_b = sizes_b.len() as u64;
    // Successors of A's clusters and predecessors of B's, through URLs in a
    // multi-URL cluster on both sides.
    let mut successors: HashMap<TrivialClusterId, BTreeSet<TrivialClusterId>> = HashMap::new();
    let mut predecessors: HashMap<TrivialClusterId, BTreeSet<TrivialClusterId>> = HashMap::new();
    for (cluster_a, cluster_b) in clustering_a.of_page.iter().zip(in_b) {
        let (Some(cluster_a), Some(cluster_b)) = (*cluster_a, *cluster_b) else {
            continue;
        };
        if clustering_a.is_multi(cluster_a) && clustering_b.is_multi(cluster_b) {
            successors.entry(cluster_a).or_default().insert(cluster_b);
            predecessors.entry(cluster_b).or_default().insert(cluster_a);
        }
    }
    for (cluster, size) in &sizes_a {
        match successors.get(cluster).map_or(0, BTreeSet::len) {
            0 => found.gone += 1,
            1 => {
                let next = *successors[cluster]
                    .iter()
                    .next()
                    .unwrap_or(&TrivialClusterId(0));
                if predecessors.get(&next).map_or(0, BTreeSet::len) == 1 {
                    match sizes_b[&next].cmp(size) {
                        std::cmp::Ordering::Greater => found.grown += 1,
                        std::cmp::Ordering::Less => found.shrunk += 1,
                        std::cmp::Ordering::Equal => found.same_size += 1,
                    }
                }
            }
            _ => found.split += 1,
        }
    }
    for cluster in sizes_b.keys() {
        match predecessors.get(cluster).map_or(0, BTreeSet::len) {
            0 => found.born += 1,
            1 => {}
            _ => found.merged += 1,
        }
    }
}

/// Each similar cluster of B with the cluster of A it continues (matched by
/// URL, [`continuity`]), then A's clusters that none continues.
pub(super) struct ClusterPairs {
    /// (A's cluster, B's cluster): `(None, Some)` born, `(Some, None)` gone.
    pub pairs: Vec<(Option<ClusterId>, Option<ClusterId>)>,
    /// Clusters of A that a cluster of B continues.
    pub continued: usize,
}

impl ClusterPairs {
    fn between(a: &Side, b: &Side) -> ClusterPairs {
        let overlaps = continuity::overlaps(
            &b.collections,
            continuity::by_url(&a.table, &a.collections, &b.table),
        );
        let continues = continuity::continuations(
            &overlaps,
            b.collections.clusters.len(),
            |id| a.collections.cluster_pages(id),
            b.collections.config.rules.continues_share,
        );
        let mut pairs = Vec::new();
        let mut continued = BTreeSet::new();
        for (position, cluster) in b.collections.clusters.iter().enumerate() {
            pairs.push((continues[position], Some(cluster.id)));
            if let Some(earlier) = continues[position] {
                continued.insert(earlier);
            }
        }
        for cluster in &a.collections.clusters {
            if !continued.contains(&cluster.id) {
                pairs.push((Some(cluster.id), None));
            }
        }
        ClusterPairs {
            pairs,
            continued: continued.len(),
        }
    }
}

/// The folder of a cluster's principal copy (empty when it has none).
pub(super) fn principal_prefix(side: &Side, id: ClusterId) -> String {
    side.collections
        .cluster(id)
        .and_then(|cluster| side.collections.collection(cluster.principal()))
        .map_or_else(String::new, |copy| copy.prefix.clone())
}

fn collection_changes(a: &Side, b: &Side, pairs: &ClusterPairs) -> CollectionChanges {
    let copies = |side: &Side, id: ClusterId| -> BTreeMap<String, (String, String, u64)> {
        let Some(cluster) = side.collections.cluster(id) else {
            return BTreeMap::new();
        };
        cluster
            .collections
            .iter()
            .filter_map(|&copy| side.collections.collection(copy))
            .map(|copy| {
                let host = side.table.host_name(copy.host).to_string();
                (
                    copy.prefix.clone(),
                    (host, copy.prefix.clone(), copy.pages.len() as u64),
                )
            })
            .collect()
    };
    let shape = |side: &Side, id: Option<ClusterId>| {
        id.and_then(|id| side.collections.cluster(id))
            .map_or((0, 0), |cluster| {
                (cluster.cardinality() as u64, u64::from(cluster.size))
            })
    };
    let reported = |side: &Side, id: ClusterId| {
        side.collections
            .cluster(id)
            .is_some_and(|cluster| cluster.kind == ClusterKind::Collection)
    };

    let mut changes = CollectionChanges {
        clusters_a: a.collections.clusters.len() as u64,
        clusters_b: b.collections.clusters.len() as u64,
        ..CollectionChanges::default()
    };
    changes.continued = pairs.continued as u64;
    for &(id_a, id_b) in &pairs.pairs {
        let in_a = id_a.map_or_else(BTreeMap::new, |id| copies(a, id));
        let in_b = id_b.map_or_else(BTreeMap::new, |id| copies(b, id));
        let (shape_a, shape_b) = (shape(a, id_a), shape(b, id_b));
        let appeared: Vec<String> = in_b
            .keys()
            .filter(|prefix| !in_a.contains_key(*prefix))
            .cloned()
            .collect();
        let disappeared: Vec<String> = in_a
            .keys()
            .filter(|prefix| !in_b.contains_key(*prefix))
            .cloned()
            .collect();
        let fate = match (id_a, id_b) {
            (None, _) => ClusterFate::Born,
            (_, None) => ClusterFate::Gone,
            _ => ClusterFate::Changed,
        };
        let is_reported =
            id_a.is_some_and(|id| reported(a, id)) || id_b.is_some_and(|id| reported(b, id));
        if !is_reported
            || (fate == ClusterFate::Changed
                && appeared.is_empty()
                && disappeared.is_empty()
                && shape_a == shape_b)
        {
            continue;
        }
        // A copy appeared is in B's cluster, one disappeared in A's.
        let entries = |prefixes: &[String],
                       copies: &BTreeMap<String, (String, String, u64)>,
                       cluster: Option<ClusterId>|
         -> Vec<CopyEntry> {
            let Some(cluster) = cluster else {
                return Vec::new();
            };
            prefixes
                .iter()
                .map(|prefix| {
                    let (host, prefix, pages) = copies[prefix].clone();
                    CopyEntry {
                        host,
                        prefix,
                        cluster,
                        pages,
                    }
                })
                .collect()
        };
        changes
            .copies_appeared
            .extend(entries(&appeared, &in_b, id_b));
        changes
            .copies_disappeared
            .extend(entries(&disappeared, &in_a, id_a));
        changes.changes.push(ClusterChange {
            fate,
            id_a,
            id_b,
            principal: match id_b {
                Some(id) => principal_prefix(b, id),
                None => id_a.map_or_else(String::new, |id| principal_prefix(a, id)),
            },
            cardinality: (shape_a.0, shape_b.0),
            size: (shape_a.1, shape_b.1),
            copies_appeared: appeared,
            copies_disappeared: disappeared,
        });
    }
    changes.copies_appeared.sort();
    changes.copies_disappeared.sort();
    changes
}

/// A crawl's mirrored host pairs (levels 1-5) by host names, with their
/// level.
pub(super) fn mirrored_pairs(side: &Side) -> BTreeMap<(String, String), Level> {
    side.mirrors
        .pairs
        .iter()
        .filter(|pair| pair.level.is_mirror())
        .map(|pair| {
            let name = |id| side.table.host_name(id).to_string();
            ((name(pair.pair.a), name(pair.pair.b)), pair.level)
        })
        .collect()
}

fn mirror_changes(a: &Side, b: &Side) -> MirrorChanges {
    let (before, after) = (mirrored_pairs(a), mirrored_pairs(b));
    let mut changes = MirrorChanges {
        pairs_a: before.len() as u64,
        pairs_b: after.len() as u64,
        ..MirrorChanges::default()
    };
    let entry = |(a, b): &(String, String), level: Level| MirrorPair {
        a: a.clone(),
        b: b.clone(),
        level,
    };
    for (key, &level) in &before {
        match after.get(key) {
            None => changes.disappeared.push(entry(key, level)),
            Some(&now) if now != level => changes.level_changed.push(LevelChange {
                a: key.0.clone(),
                b: key.1.clone(),
                before: level,
                after: now,
            }),
            Some(_) => {}
        }
    }
    for (key, &level) in &after {
        if !before.contains_key(key) {
            changes.appeared.push(entry(key, level));
        }
    }
    changes
}

impl fmt::Display for Evolution {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            out,
            "A: {} ({}), {} pages on {} hosts",
            self.a.data, self.a.generation, self.a.pages, self.a.hosts
        )?;
        writeln!(
            out,
            "B: {} ({}), {} pages on {} hosts",
            self.b.data, self.b.generation, self.b.pages, self.b.hosts
        )?;
        write!(out, "{}", self.summary)?;
        writeln!(out, "\nDetails")?;
        let pages = &self.pages;
        writeln!(
            out,
            "\nURLs: {} unchanged, {} changed, {} only in A, {} only in B",
            pages.unchanged, pages.changed, pages.only_a, pages.only_b
        )?;
        if !pages.hosts_only_a.is_empty() {
            writeln!(out, "  hosts only in A: {}", pages.hosts_only_a.join(", "))?;
        }
        if !pages.hosts_only_b.is_empty() {
            writeln!(out, "  hosts only in B: {}", pages.hosts_only_b.join(", "))?;
        }

        let near = &self.near_duplicates;
        writeln!(
            out,
            "\nNear-duplicate pairs of A still near-duplicates in B: {} of {} ({})",
            near.pairs_still,
            near.pairs_a,
            percent(near.pairs_still, near.pairs_a)
        )?;
        writeln!(
            out,
            "{:>14} {:>8} {:>12} {:>12} {:>11}",
            "cluster size", "URLs", "containment", "reverse", "similarity"
        )?;
        for range in &near.by_size {
            let size = match range.max {
                Some(max) if max == range.min => format!("{max}"),
                Some(max) => format!("{}-{max}", range.min),
                None => format!("{}+", range.min),
            };
            writeln!(
                out,
                "{size:>14} {:>8} {:>12.3} {:>12.3} {:>11.3}",
                range.urls, range.containment, range.reverse_containment, range.similarity
            )?;
        }
        writeln!(
            out,
            "clusters of 2 URLs or more: {} in A, {} in B; born {}, gone {}, grown {}, shrunk {}, same size {}, merged {}, split {}",
            near.clusters_a,
            near.clusters_b,
            near.born,
            near.gone,
            near.grown,
            near.shrunk,
            near.same_size,
            near.merged,
            near.split
        )?;

        let collections = &self.collections;
        writeln!(
            out,
            "\nSimilar clusters of collections: {} in A, {} in B, {} continued; {} changed:",
            collections.clusters_a,
            collections.clusters_b,
            collections.continued,
            collections.changes.len()
        )?;
        // The largest changes first: most copies, then most pages.
        let mut shown: Vec<&ClusterChange> = collections.changes.iter().collect();
        shown.sort_by_key(|change| {
            std::cmp::Reverse((
                change.cardinality.0.max(change.cardinality.1),
                change.size.0.max(change.size.1),
            ))
        });
        let hidden = match self.shown_changes {
            Some(limit) if shown.len() > limit => {
                let hidden = shown.len() - limit;
                shown.truncate(limit);
                hidden
            }
            _ => 0,
        };
        for change in shown {
            let id =
                |id: Option<ClusterId>| id.map_or_else(|| "-".to_string(), |id| id.to_string());
            writeln!(
                out,
                "  {:<7} {} -> {}  {}  copies {} -> {}, size {} -> {}",
                format!("{:?}", change.fate).to_lowercase(),
                id(change.id_a),
                id(change.id_b),
                change.principal,
                change.cardinality.0,
                change.cardinality.1,
                change.size.0,
                change.size.1
            )?;
            for prefix in &change.copies_appeared {
                writeln!(out, "      + {prefix}")?;
            }
            for prefix in &change.copies_disappeared {
                writeln!(out, "      - {prefix}")?;
            }
        }
        if hidden > 0 {
            writeln!(out, "  ... and {hidden} smaller changes (--all shows them)")?;
        }

        let mirrors = &self.mirrors;
        writeln!(
            out,
            "\nMirrored host pairs: {} in A, {} in B",
            mirrors.pairs_a, mirrors.pairs_b
        )?;
        for pair in &mirrors.appeared {
            writeln!(
                out,
                "  + {} ~ {} (level {})",
                pair.a,
                pair.b,
                pair.level.name()
            )?;
        }
        for pair in &mirrors.disappeared {
            writeln!(
                out,
                "  - {} ~ {} (level {})",
                pair.a,
                pair.b,
                pair.level.name()
            )?;
        }
        for pair in &mirrors.level_changed {
            writeln!(
                out,
                "  ~ {} ~ {} (level {} -> {})",
                pair.a,
                pair.b,
                pair.before.name(),
                pair.after.name()
            )?;
        }
        Ok(())
    }
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_fall_in_powers_of_ten() {
        let ranges: Vec<usize> = [
            1, 2, 10, 11, 100, 101, 1000, 1001, 100_000, 100_001, 10_000_000,
        ]
        .iter()
        .map(|&size| size_range(size))
        .collect();
        assert_eq!(ranges, vec![0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 6]);
        assert_eq!(size_bounds(0), (1, Some(1)));
        assert_eq!(size_bounds(1), (2, Some(10)));
        assert_eq!(size_bounds(2), (11, Some(100)));
        assert_eq!(size_bounds(6), (100_001, None));
    }
}
