//! Ranker `clusters` (fetterly-2004 §2): host pairs that share near-duplicate
//! pages, confirmed by URL suffixes.
//!
//! The trivial clusters of the similarity stage are walked; in each, the
//! hosts with a member are paired, and each host of a pair is credited with
//! its members. A pair is a candidate when each host has at least
//! [`MirrorsConfig::cluster_pages`] pages in clusters with a member on the
//! other.
//! - **Auto-mirrors** (a host resembling itself) never pair: pairs are of two
//!   host names.
//! - **Aliases**: in each cluster, one preferred host name is kept per IP
//!   address (the host with most members there, then most URLs, then the
//!   first name), and members on the other names of that address are set
//!   aside. A host and its alias on one address are thus not reported as
//!   mirrors of each other, and mirrors of virtually hosted sites (other
//!   clusters, other preferred names) are still found.
//! - **URL suffixes**: the query is dropped and the paths compared arc by arc
//!   from the end. A member is confirmed when a member of the same cluster on
//!   the other host ends with the same last arc; the pair is listed when each
//!   side has at least `cluster_pages` confirmed pages. The paper hashed up
//!   to the last four arcs into a Bloom filter per cluster; here the sets are
//!   exact, and the longest common run of final arcs also tells under which
//!   folders the two copies sit (a [`Subtree`]), which classification uses.
//!
//! The score is the smaller side's count of confirmed pages.

use std::collections::HashMap;

use super::hosts::Web;
use super::{HostPair, MirrorsConfig, Ranked, Subtree};
use crate::pages::{common_suffix, HostId, PageId};

/// A subtree must account for this share of a pair's matched pages.
const SUBTREE_SHARE: f64 = 0.1;
/// At most this many subtrees are kept per pair.
const MAX_SUBTREES: usize = 8;

#[derive(Debug, Default, Clone)]
struct PairEvidence {
    /// Members of each side in clusters with a member on the other.
    pages: (u32, u32),
    /// Of them, those with a suffix match.
    confirmed: (u32, u32),
    /// (folder on a, folder on b) -> matched pages of a.
    subtrees: HashMap<(String, String), u32>,
}

/// What the clusters say of every pair of hosts that share one.
pub struct ClusterEvidence {
    pairs: HashMap<HostPair, PairEvidence>,
    min_pages: u32,
}

pub fn evidence(web: &Web<'_>, config: &MirrorsConfig) -> ClusterEvidence {
    let table = web.table;
    let mut members: HashMap<u32, Vec<PageId>> = HashMap::new();
    for (index, cluster) in web.similarity.trivial.iter().enumerate() {
        let page = PageId(index as u32);
        let Some(record) = table.page(page) else {
            continue;
        };
        if record.status == 200 && web.is_considered(record.host) {
            members.entry(cluster.0).or_default().push(page);
        }
    }
    let mut clusters: Vec<(u32, Vec<PageId>)> = members
        .into_iter()
        .filter(|(_, pages)| pages.len() > 1)
        .collect();
    clusters.sort_by_key(|(cluster, _)| *cluster);
    let mut pairs: HashMap<HostPair, PairEvidence> = HashMap::new();
    for (_, pages) in clusters {
        let by_host = preferred_members(web, &pages);
        if by_host.len() < 2 {
            continue;
        }
        let indexed: Vec<Indexed<'_>> = by_host
            .iter()
            .map(|(_, members)| Indexed::new(members))
            .collect();
        for (index, (host_a, _)) in by_host.iter().enumerate() {
            for (offset, (host_b, _)) in by_host[index + 1..].iter().enumerate() {
                let pair = HostPair::new(*host_a, *host_b);
                let (first, second) = if pair.a == *host_a {
                    (&indexed[index], &indexed[index + 1 + offset])
                } else {
                    (&indexed[index + 1 + offset], &indexed[index])
                };
                let entry = pairs.entry(pair).or_default();
                entry.pages.0 += first.members.len() as u32;
                entry.pages.1 += second.members.len() as u32;
                for (arcs_a, _) in first.members {
                    if let Some((arcs_b, common)) = second.best_match(arcs_a) {
                        entry.confirmed.0 += 1;
                        let folders = (folder(arcs_a, common), folder(arcs_b, common));
                        *entry.subtrees.entry(folders).or_default() += 1;
                    }
                }
                entry.confirmed.1 += second
                    .members
                    .iter()
                    .filter(|(arcs_b, _)| first.best_match(arcs_b).is_some())
                    .count() as u32;
            }
        }
    }
    ClusterEvidence {
        pairs,
        min_pages: config.cluster_pages,
    }
}

type Members = Vec<(Vec<String>, PageId)>;

/// A cluster's members by host, one preferred host name per IP address,
/// each member with its path's arcs.
fn preferred_members(web: &Web<'_>, pages: &[PageId]) -> Vec<(HostId, Members)> {
    let table = web.table;
    let mut per_host: HashMap<HostId, u32> = HashMap::new();
    for page in pages {
        if let Some(record) = table.page(*page) {
            *per_host.entry(record.host).or_default() += 1;
        }
    }
    let mut preferred: HashMap<&str, HostId> = HashMap::new();
    for page in pages {
        let Some(record) = table.page(*page) else {
            continue;
        };
        let Some(ip) = record.ip.as_deref() else {
            continue;
        };
        let rank = |host: HostId| {
            (
                per_host.get(&host).copied().unwrap_or(0),
                web.host(host).map_or(0, |data| data.url_count()),
                std::cmp::Reverse(table.host_name(host).to_string()),
            )
        };
        let choice = preferred.entry(ip).or_insert(record.host);
        if rank(record.host) > rank(*choice) {
            *choice = record.host;
        }
    }
    let mut by_host: HashMap<HostId, Members> = HashMap::new();
    for page in pages {
        let Some(record) = table.page(*page) else {
            continue;
        };
        if let Some(ip) = record.ip.as_deref() {
            if preferred.get(ip) != Some(&record.host) {
                continue;
            }
        }
        let Some((_, path)) = super::split_url(&record.url) else {
            continue;
        };
        by_host
            .entry(record.host)
            .or_default()
            .push((arcs(path), *page));
    }
    let mut by_host: Vec<(HostId, Members)> = by_host.into_iter().collect();
    by_host.sort_by_key(|(host, _)| *host);
    by_host
}

/// A path's arcs, query dropped: `/a/b/c.html?x` gives `a`, `b`, `c.html`.
fn arcs(path: &str) -> Vec<String> {
    path.split('?')
        .next()
        .unwrap_or("")
        .split('/')
        .filter(|arc| !arc.is_empty())
        .map(str::to_string)
        .collect()
}

/// One host's members in a cluster, found by their last arc.
struct Indexed<'m> {
    members: &'m Members,
    by_last_arc: HashMap<&'m str, Vec<usize>>,
}

impl<'m> Indexed<'m> {
    fn new(members: &'m Members) -> Indexed<'m> {
        let mut by_last_arc: HashMap<&str, Vec<usize>> = HashMap::new();
        for (index, (arcs, _)) in members.iter().enumerate() {
            if let Some(last) = arcs.last() {
                by_last_arc.entry(last.as_str()).or_default().push(index);
            }
        }
        Indexed {
            members,
            by_last_arc,
        }
    }

    /// The member ending most like `arcs` (at least its last arc).
    fn best_match(&self, arcs: &[String]) -> Option<(&'m [String], usize)> {
        let candidates = self.by_last_arc.get(arcs.last()?.as_str())?;
        candidates
            .iter()
            .map(|&index| {
                let other = self.members[index].0.as_slice();
                (other, common_suffix(arcs, other))
            })
            .max_by_key(|(other, common)| (*common, std::cmp::Reverse(other.len())))
    }
}

/// The folder above the last `common` arcs, as a path ending in `/`.
fn folder(arcs: &[String], common: usize) -> String {
    let kept = &arcs[..arcs.len() - common];
    if kept.is_empty() {
        "/".to_string()
    } else {
        format!("/{}/", kept.join("/"))
    }
}

impl ClusterEvidence {
    /// The confirmed pairs, most confirmed pages first.
    pub fn ranking(&self) -> Vec<Ranked> {
        let scores = self
            .pairs
            .iter()
            .filter(|(_, evidence)| {
                evidence.pages.0 >= self.min_pages
                    && evidence.pages.1 >= self.min_pages
                    && evidence.confirmed.0 >= self.min_pages
                    && evidence.confirmed.1 >= self.min_pages
            })
            .map(|(pair, evidence)| {
                (
                    *pair,
                    f64::from(evidence.confirmed.0.min(evidence.confirmed.1)),
                )
            })
            .collect();
        super::ranked(scores)
    }

    /// Pages of each side in clusters with a member on the other.
    pub fn clustered_pages(&self, pair: HostPair) -> (u32, u32) {
        self.pairs
            .get(&pair)
            .map_or((0, 0), |evidence| evidence.pages)
    }

    /// The folders the pair's shared pages sit under, most pages first:
    /// those holding at least a tenth of the matched pages (and 2).
    pub fn subtrees(&self, pair: HostPair) -> Vec<Subtree> {
        let Some(evidence) = self.pairs.get(&pair) else {
            return Vec::new();
        };
        let total: u32 = evidence.subtrees.values().sum();
        let mut subtrees = Subtree::ranked(evidence.subtrees.iter().filter(|(_, pages)| {
            **pages >= 2 && f64::from(**pages) >= SUBTREE_SHARE * f64::from(total)
        }));
        subtrees.truncate(MAX_SUBTREES);
        subtrees
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(arcs: &[&str]) -> Vec<String> {
        arcs.iter().map(|arc| arc.to_string()).collect()
    }

    #[test]
    fn folders_above_the_common_suffix() {
        let a = arcs("/pub/apache/httpd/docs/2.4/en/mod/core.html?x=1");
        let b = arcs("/docs/2.4/en/mod/core.html");
        let common = common_suffix(&a, &b);
        assert_eq!(common, 5);
        assert_eq!(folder(&a, common), "/pub/apache/httpd/");
        assert_eq!(folder(&b, common), "/");
        let c = owned(&["apache", "en", "mod", "core.html"]);
        assert_eq!(common_suffix(&c, &b), 3);
        assert_eq!(folder(&c, 3), "/apache/");
        assert_eq!(folder(&b, 3), "/docs/2.4/");
    }
}
