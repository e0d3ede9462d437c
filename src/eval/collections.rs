//! `eval`'s `collections`: the similar clusters against the truth's
//! replicated collections (cho-2000 §4: targets, the clusters matching them,
//! and "problem" collections that match none).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use serde::Serialize;

use super::{ratio, shown, Truth};
use crate::collections::manuals::{why_apart, PageFolders};
use crate::collections::{compared_labels, ClusterId, ClusterKind, Collections};
use crate::pages::{HostId, PageId, PageTable};
use crate::similarity::Similarity;

/// One copy found in the cluster that best matches a truth collection.
#[derive(Debug, Clone, Serialize)]
pub struct FoundCopy {
    /// Our collection id.
    pub collection: String,
    pub host: String,
    pub prefix: String,
    pub pages: u64,
    /// The truth replica most of its pages belong to (`None`: none of them
    /// is in the truth).
    pub replica: Option<String>,
    /// Its pages that belong to that replica.
    pub replica_pages_found: u64,
    /// The replica's crawled pages.
    pub replica_pages: u64,
}

/// A replicated collection of the truth and the cluster that best matches it.
#[derive(Debug, Clone, Serialize)]
pub struct TruthCollection {
    pub collection: String,
    /// Replicas (copies) in the truth, and those with crawled pages.
    pub copies: usize,
    /// Crawled pages of all its copies.
    pub pages: u64,
    /// The cluster holding most of its pages.
    pub cluster: Option<String>,
    pub cluster_cardinality: usize,
    /// Copies of the truth matched by a collection of that cluster.
    pub copies_found: usize,
    /// Its pages in that cluster.
    pub pages_in_cluster: u64,
    /// Other clusters holding some of its pages (break points).
    pub other_clusters: usize,
    /// Clusters holding some of its pages (the best one included).
    pub clusters: usize,
    /// Its crawled pages in no cluster.
    pub pages_in_no_cluster: u64,
    pub found: Vec<FoundCopy>,
    /// The largest other clusters holding its pages (up to 5), and why
    /// each stayed apart.
    pub breaks: Vec<Break>,
}

/// A cluster holding pages of a truth collection besides its best cluster.
#[derive(Debug, Clone, Serialize)]
pub struct Break {
    pub cluster: String,
    /// Pages of the truth collection in it.
    pub pages: u64,
    pub cardinality: usize,
    /// The rule that kept it apart from the best cluster.
    pub why: String,
}

/// A found collection that matches no truth collection (cho §4's "problem
/// collections").
#[derive(Debug, Clone, Serialize)]
pub struct ProblemCollection {
    pub collection: String,
    pub cluster: String,
    pub host: String,
    pub prefix: String,
    pub pages: u64,
    /// The truth collection most of its pages belong to, if any.
    pub truth: Option<String>,
}

/// Collections against the truth.
#[derive(Debug, Clone, Serialize)]
pub struct CollectionScores {
    /// Of the judged pairs of pages in one similar cluster (at least one
    /// page in the truth), the share in copies of one truth collection.
    pub precision: Option<f64>,
    /// Of the pairs of crawled pages in copies of one truth collection, the
    /// share found in one similar cluster.
    pub recall: Option<f64>,
    pub found_pairs: u64,
    pub correct_pairs: u64,
    pub wrong_pairs: u64,
    /// Pairs of pages neither of which is in the truth: not judged.
    pub unjudged_pairs: u64,
    pub truth_pairs: u64,
    /// Truth URLs that are not pages of this generation.
    pub truth_urls_missing: u64,
    pub truth_collections: Vec<TruthCollection>,
    /// Collections of two pages or more in clusters that best match no
    /// truth collection.
    pub problem_collections: Vec<ProblemCollection>,
}

/// Scores the collections of a generation against the truth.
pub fn score(
    table: &PageTable,
    similarity: &Similarity,
    collections: &Collections,
    truth: &Truth,
) -> CollectionScores {
    let pages = table.pages.len();
    // Truth (collection, replica) of each page of the table.
    let mut truth_of: Vec<Option<(&str, &str)>> = vec![None; pages];
    let mut truth_urls_missing = 0;
    for (url, row) in &truth.rows {
        match table.find_url(url) {
            Some(page) => {
                truth_of[page.0 as usize] = Some((row.collection.as_str(), row.replica.as_str()))
            }
            None => truth_urls_missing += 1,
        }
    }
    // A replica holding one page (however many URLs it has) is a copy of a
    // page, not of a collection: a page copied into another site's template
    // by a content farm, a page a sibling manual shares. cho-2000's
    // collections are linked pages; its copies are judged as page pairs,
    // not here. A collection the truth holds in one replica (of more pages)
    // is not replicated: its URLs that are one page (a page under `http:`
    // and `https:`) are page pairs, not a collection to find. The pages of
    // either are not judged here.
    let mut pages_of_replica: HashMap<(&str, &str), HashSet<&str>> = HashMap::new();
    for row in truth.rows.values() {
        pages_of_replica
            .entry((row.collection.as_str(), row.replica.as_str()))
            .or_default()
            .insert(row.page.as_str());
    }
    let collection_replica = |key: &(&str, &str)| pages_of_replica[key].len() >= 2;
    let mut replicas_of: HashMap<&str, HashSet<&str>> = HashMap::new();
    for key in pages_of_replica
        .keys()
        .filter(|key| collection_replica(key))
    {
        replicas_of.entry(key.0).or_default().insert(key.1);
    }
    for page_truth in &mut truth_of {
        if page_truth.is_some_and(|key| {
            !collection_replica(&key) || replicas_of.get(key.0).is_none_or(|set| set.len() < 2)
        }) {
            *page_truth = None;
        }
    }

    // Pairs, counted per cluster without listing them.
    let pairs_of = |count: u64| count * count.saturating_sub(1) / 2;
    let mut by_cluster: BTreeMap<ClusterId, HashMap<Option<&str>, u64>> = BTreeMap::new();
    for (page, page_truth) in truth_of.iter().enumerate() {
        if let Some(cluster) = collections.cluster_of(crate::pages::PageId(page as u32)) {
            let family = page_truth.map(|(collection, _)| collection);
            *by_cluster
                .entry(cluster)
                .or_default()
                .entry(family)
                .or_default() += 1;
        }
    }
    let (mut found, mut correct, mut unjudged) = (0u64, 0u64, 0u64);
    for families in by_cluster.values() {
        let total: u64 = families.values().sum();
        found += pairs_of(total);
        for (family, &count) in families {
            if family.is_some() {
                correct += pairs_of(count);
            } else {
                unjudged += pairs_of(count);
            }
        }
    }
    let mut family_pages: BTreeMap<&str, u64> = BTreeMap::new();
    let mut replica_pages: HashMap<&str, u64> = HashMap::new();
    for (family, replica) in truth_of.iter().flatten() {
        *family_pages.entry(family).or_default() += 1;
        *replica_pages.entry(replica).or_default() += 1;
    }
    let truth_pairs: u64 = family_pages.values().map(|&count| pairs_of(count)).sum();

    // Each truth collection's best cluster, and what its copies cover.
    let mut matched_clusters: HashSet<ClusterId> = HashSet::new();
    let mut truth_collections = Vec::new();
    let urls: Vec<&str> = table.pages.iter().map(|page| page.url.as_ref()).collect();
    let hosts: Vec<HostId> = table.pages.iter().map(|page| page.host).collect();
    let graph =
        crate::collections::WebGraph::from_table(table, collections.config.rules.redirect_hops);
    let labels = compared_labels(table, similarity, &graph);
    let stand_ins = similarity.stand_ins();
    let folders = PageFolders {
        urls: &urls,
        hosts: &hosts,
        labels: &labels,
        stand_ins,
        rules: &collections.config.rules,
    };
    for (&family, &family_total) in &family_pages {
        let mut holding_clusters: Vec<(ClusterId, u64)> = by_cluster
            .iter()
            .filter_map(|(&cluster, families)| {
                families.get(&Some(family)).map(|&count| (cluster, count))
            })
            .collect();
        holding_clusters.sort_by_key(|&(cluster, count)| {
            (std::cmp::Reverse(count), collections.position(cluster))
        });
        let in_no_cluster = truth_of
            .iter()
            .enumerate()
            .filter(|(page, page_truth)| {
                page_truth.is_some_and(|(collection, _)| collection == family)
                    && collections.cluster_of(PageId(*page as u32)).is_none()
            })
            .count() as u64;
        let (best, in_best, clusters_holding) = {
            let holding: Vec<(ClusterId, u64)> = by_cluster
                .iter()
                .filter_map(|(&cluster, families)| {
                    families.get(&Some(family)).map(|&count| (cluster, count))
                })
                .collect();
            let best = holding
                .iter()
                .max_by_key(|&&(cluster, count)| {
                    (count, std::cmp::Reverse(collections.position(cluster)))
                })
                .copied();
            (
                best.map(|(cluster, _)| cluster),
                best.map_or(0, |(_, count)| count),
                holding.len(),
            )
        };
        let mut found_copies = Vec::new();
        let mut copies_found = HashSet::new();
        let mut cardinality = 0;
        if let Some(cluster) = best.and_then(|id| collections.cluster(id)) {
            matched_clusters.insert(cluster.id);
            cardinality = cluster.cardinality();
            for &id in &cluster.collections {
                let collection = &collections.collections[id.0 as usize];
                let mut replicas: HashMap<&str, u64> = HashMap::new();
                for page in &collection.pages {
                    if let Some((page_family, replica)) = truth_of[page.0 as usize] {
                        if page_family == family {
                            *replicas.entry(replica).or_default() += 1;
                        }
                    }
                }
                let majority = replicas
                    .iter()
                    .max_by_key(|&(replica, count)| (*count, std::cmp::Reverse(*replica)))
                    .map(|(replica, count)| (*replica, *count));
                if let Some((replica, _)) = majority {
                    copies_found.insert(replica);
                }
                found_copies.push(FoundCopy {
                    collection: id.to_string(),
                    host: table.host_name(collection.host).to_string(),
                    prefix: collection.prefix.clone(),
                    pages: collection.pages.len() as u64,
                    replica: majority.map(|(replica, _)| replica.to_string()),
                    replica_pages_found: majority.map_or(0, |(_, count)| count),
                    replica_pages: majority.map_or(0, |(replica, _)| replica_pages[replica]),
                });
            }
        }
        let breaks = match best {
            Some(best) => holding_clusters
                .iter()
                .filter(|&&(cluster, _)| cluster != best)
                .take(5)
                .map(|&(cluster, pages)| Break {
                    cluster: cluster.to_string(),
                    pages,
                    cardinality: collections.cluster(cluster).map_or(0, |c| c.cardinality()),
                    why: why_apart(collections, best, cluster, &folders),
                })
                .collect(),
            None => Vec::new(),
        };
        truth_collections.push(TruthCollection {
            collection: family.to_string(),
            copies: replicas_of.get(family).map_or(0, HashSet::len),
            pages: family_total,
            cluster: best.map(|cluster| cluster.to_string()),
            cluster_cardinality: cardinality,
            copies_found: copies_found.len(),
            pages_in_cluster: in_best,
            other_clusters: clusters_holding.saturating_sub(1),
            clusters: clusters_holding,
            pages_in_no_cluster: in_no_cluster,
            found: found_copies,
            breaks,
        });
    }

    // Problem collections: non-trivial collections in clusters that match
    // no truth collection.
    let mut problem_collections = Vec::new();
    for cluster in &collections.clusters {
        if cluster.kind != ClusterKind::Collection || matched_clusters.contains(&cluster.id) {
            continue;
        }
        for &id in &cluster.collections {
            let collection = &collections.collections[id.0 as usize];
            let mut families: HashMap<&str, u64> = HashMap::new();
            for page in &collection.pages {
                if let Some((family, _)) = truth_of[page.0 as usize] {
                    *families.entry(family).or_default() += 1;
                }
            }
            problem_collections.push(ProblemCollection {
                collection: id.to_string(),
                cluster: cluster.id.to_string(),
                host: table.host_name(collection.host).to_string(),
                prefix: collection.prefix.clone(),
                pages: collection.pages.len() as u64,
                truth: families
                    .into_iter()
                    .max_by_key(|&(family, count)| (count, std::cmp::Reverse(family)))
                    .map(|(family, _)| family.to_string()),
            });
        }
    }

    let judged = found - unjudged;
    CollectionScores {
        precision: ratio(correct, judged),
        recall: ratio(correct, truth_pairs),
        found_pairs: found,
        correct_pairs: correct,
        wrong_pairs: judged - correct,
        unjudged_pairs: unjudged,
        truth_pairs,
        truth_urls_missing,
        truth_collections,
        problem_collections,
    }
}

impl fmt::Display for CollectionScores {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            out,
            "\ncollections (similar clusters against the truth's replicated collections)"
        )?;
        writeln!(
            out,
            "  precision {}  ({} right, {} wrong of {} pairs of pages in one cluster; {} pairs outside the truth not judged)",
            shown(self.precision), self.correct_pairs, self.wrong_pairs, self.found_pairs, self.unjudged_pairs
        )?;
        writeln!(
            out,
            "  recall    {}  ({} of {} pairs of crawled pages in copies of one collection)",
            shown(self.recall),
            self.correct_pairs,
            self.truth_pairs
        )?;
        for family in &self.truth_collections {
            writeln!(
                out,
                "\n  {}: {} copies, {} pages crawled",
                family.collection, family.copies, family.pages
            )?;
            let Some(cluster) = &family.cluster else {
                writeln!(out, "    not found")?;
                continue;
            };
            writeln!(
                out,
                "    cluster {cluster}: {} of {} copies found, {} of {} pages in it{}{}",
                family.copies_found,
                family.copies,
                family.pages_in_cluster,
                family.pages,
                match family.other_clusters {
                    0 => String::new(),
                    other => format!(", the rest in {other} other clusters"),
                },
                match family.pages_in_no_cluster {
                    0 => String::new(),
                    none => format!(", {none} in none"),
                }
            )?;
            writeln!(
                out,
                "    {:>6} {:>6} {:>14}  prefix",
                "ours", "pages", "of its replica"
            )?;
            for copy in &family.found {
                writeln!(
                    out,
                    "    {:>6} {:>6} {:>14}  {}",
                    copy.collection,
                    copy.pages,
                    format!("{}/{}", copy.replica_pages_found, copy.replica_pages),
                    copy.prefix
                )?;
            }
            for piece in &family.breaks {
                writeln!(
                    out,
                    "    apart: cluster {} ({} of its pages, {} copies): {}",
                    piece.cluster, piece.pages, piece.cardinality, piece.why
                )?;
            }
        }
        writeln!(
            out,
            "\n  problem collections (in clusters matching no truth collection): {}",
            self.problem_collections.len()
        )?;
        for problem in &self.problem_collections {
            writeln!(
                out,
                "    cluster {:>5} collection {:>5} {:>5} pages  {}{}",
                problem.cluster,
                problem.collection,
                problem.pages,
                problem.prefix,
                problem
                    .truth
                    .as_ref()
                    .map_or(String::new(), |family| format!("  (part of {family})"))
            )?;
        }
        if self.truth_urls_missing > 0 {
            writeln!(
                out,
                "\n  {} truth URLs are not pages of this generation",
                self.truth_urls_missing
            )?;
        }
        Ok(())
    }
}
