//! Which similar cluster of an earlier generation a cluster continues, so
//! that a cluster keeps its number from one generation to the next (links to
//! `/replicas/{id}` and a Replica expansion's `r{id}` stay on the same
//! cluster; collection and page numbers in links are still per generation),
//! and so that `evolve` can match clusters of two crawls.
//!
//! When the previous generation cannot be read (a format from an older
//! build), numbering starts afresh.
//!
//! Pages are matched by URL, the one identity two crawls share. A later
//! cluster continues the earlier cluster it shares the most pages with,
//! provided that cluster is not continued by another that shares more: one
//! to one, greedily by shared pages (ties by earlier id, then later
//! position), so the result does not depend on hash order.

use std::collections::{HashMap, HashSet};

use crate::pages::{PageId, PageTable};

use super::{ClusterId, Collections};

/// Shared pages between a later cluster (by position) and an earlier one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overlap {
    pub later: usize,
    pub earlier: ClusterId,
    pub shared: u32,
}

/// A later page's cluster in the earlier generation, by URL.
pub fn by_url<'a>(
    earlier_table: &'a PageTable,
    earlier: &'a Collections,
    later_table: &'a PageTable,
) -> impl Fn(PageId) -> Option<ClusterId> + 'a {
    move |page| {
        let url = later_table.page(page)?.url.as_ref();
        earlier.cluster_of(earlier_table.find_url(url)?)
    }
}

/// Every (later cluster, earlier cluster) pair sharing a page, by later
/// position then earlier id. `earlier_cluster` gives a later page's cluster
/// in the earlier generation.
pub fn overlaps(
    later: &Collections,
    earlier_cluster: impl Fn(PageId) -> Option<ClusterId>,
) -> Vec<Overlap> {
    let mut found = Vec::new();
    for (position, cluster) in later.clusters.iter().enumerate() {
        let mut shared: HashMap<ClusterId, u32> = HashMap::new();
        for &collection in &cluster.collections {
            let Some(collection) = later.collection(collection) else {
                continue;
            };
            for &page in &collection.pages {
                if let Some(id) = earlier_cluster(page) {
                    *shared.entry(id).or_insert(0) += 1;
                }
            }
        }
        let mut pairs: Vec<Overlap> = shared
            .into_iter()
            .map(|(earlier, shared)| Overlap {
                later: position,
                earlier,
                shared,
            })
            .collect();
        pairs.sort_by_key(|overlap| overlap.earlier);
        found.extend(pairs);
    }
    found
}

/// By later position: the earlier cluster it continues, if any. A cluster
/// continues one whose pages (`earlier_pages`) it holds at least `share` of
/// ([`super::CollectionRules::continues_share`]): a fragment of a cluster
/// that is otherwise gone gets a new id.
pub fn continuations(
    overlaps: &[Overlap],
    later_clusters: usize,
    earlier_pages: impl Fn(ClusterId) -> u32,
    share: f64,
) -> Vec<Option<ClusterId>> {
    let mut ranked: Vec<&Overlap> = overlaps
        .iter()
        .filter(|overlap| {
            crate::share::at_least(
                overlap.shared as usize,
                earlier_pages(overlap.earlier) as usize,
                share,
            )
        })
        .collect();
    ranked.sort_by(|first, second| {
        second
            .shared
            .cmp(&first.shared)
            .then(first.earlier.cmp(&second.earlier))
            .then(first.later.cmp(&second.later))
    });
    let mut continues = vec![None; later_clusters];
    let mut taken: HashSet<ClusterId> = HashSet::new();
    for overlap in ranked {
        if continues[overlap.later].is_none() && !taken.contains(&overlap.earlier) {
            continues[overlap.later] = Some(overlap.earlier);
            taken.insert(overlap.earlier);
        }
    }
    continues
}

/// Numbers `later`'s clusters: a cluster continuing an earlier one keeps its
/// id; the others get ids the data folder never used (from the earlier
/// generation's `next_cluster_id`), in position order.
pub fn renumber(
    later: &mut Collections,
    earlier: &Collections,
    earlier_cluster: impl Fn(PageId) -> Option<ClusterId>,
) {
    let overlaps = overlaps(later, earlier_cluster);
    let share = later.config.rules.continues_share;
    let continues = continuations(
        &overlaps,
        later.clusters.len(),
        |id| earlier.cluster_pages(id),
        share,
    );
    let mut next = earlier.next_cluster_id;
    let mut ids = Vec::with_capacity(continues.len());
    for continued in continues {
        ids.push(continued.unwrap_or_else(|| {
            next += 1;
            ClusterId(next - 1)
        }));
    }
    later.set_cluster_ids(&ids, next);
}
