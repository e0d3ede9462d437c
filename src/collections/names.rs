//! Passes 1 and 5: one page under two names of its host. A folder and its
//! `index.html`, or a page and a symbolic link to it, have the same text and
//! the same links: the first name in URL order takes part in growing (links
//! to either lead to it), and the second joins its collection afterwards. A
//! page with more second names than one (a soft 404 answering every missing
//! URL) is merged the same way but its names join no collection.

use std::collections::HashMap;

use super::graph::WebGraph;
use super::grow::Grown;
use crate::pages::{HostId, PageId};
use crate::similarity::TrivialClusterId;

/// Pass 1: pages that are a second URL of a page of the same host: the same trivial
/// cluster and the same links (at least one, links between the two names
/// aside). Returns the labels with those
/// pages taken out, and (alias, page) pairs.
pub(super) fn aliases(
    graph: &WebGraph,
    labels: &[TrivialClusterId],
) -> (Vec<TrivialClusterId>, Vec<(PageId, PageId)>) {
    let mut growth_labels = labels.to_vec();
    let mut first: HashMap<(TrivialClusterId, HostId, u64), PageId> = HashMap::new();
    let mut pairs = Vec::new();
    for (index, &label) in labels.iter().enumerate() {
        let page = PageId(index as u32);
        if label == TrivialClusterId::NONE {
            continue;
        }
        let host = graph.host(page);
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        let mut links = 0;
        for target in graph.outlinks(page) {
            if labels[target.0 as usize] != label || graph.host(target) != host {
                hasher.update(&target.0.to_le_bytes());
                links += 1;
            }
        }
        if links == 0 {
            continue;
        }
        let key = (label, host, hasher.digest());
        match first.get(&key) {
            Some(&twin) => {
                growth_labels[index] = TrivialClusterId::NONE;
                pairs.push((page, twin));
            }
            None => {
                first.insert(key, page);
            }
        }
    }
    (growth_labels, pairs)
}

/// Pass 5: each second name joins the collection of its page, when its page
/// has no other second name. Returns how many joined; each cluster's
/// verdict counts its own.
pub(super) fn join_second_names(grown: &mut [Grown], aliases: &[(PageId, PageId)]) -> u64 {
    let mut place: HashMap<PageId, (usize, usize)> = HashMap::new();
    for (cluster, grown_cluster) in grown.iter().enumerate() {
        for (collection, pages) in grown_cluster.collections.iter().enumerate() {
            for &page in pages {
                place.insert(page, (cluster, collection));
            }
        }
    }
    let mut names: HashMap<PageId, usize> = HashMap::new();
    for &(_, twin) in aliases {
        *names.entry(twin).or_default() += 1;
    }
    let mut joined = 0;
    for &(alias, twin) in aliases {
        if names[&twin] > 1 {
            continue;
        }
        if let Some(&(cluster, collection)) = place.get(&twin) {
            grown[cluster].collections[collection].push(alias);
            grown[cluster].verdict.second_names += 1;
            joined += 1;
        }
    }
    joined
}
