//! Pass 3: the trivial clusters of copies that took part in no grown
//! cluster are clusters of one-page collections, as cho-2000's trivial
//! clusters are (a page and its copies, linked to no other copied page).

use super::grow::{Grown, Members};
use super::verdict::{ClusterVerdict, Formed};
use crate::similarity::TrivialClusterId;

/// Adds a cluster of one-page collections for each trivial cluster of two
/// pages or more that no grown cluster holds. Returns how many.
pub(super) fn one_page_clusters(
    grown: &mut Vec<Grown>,
    members: &Members,
    trivial_clusters: usize,
) -> u64 {
    let mut used = vec![false; trivial_clusters];
    for cluster in grown.iter() {
        for &trivial in &cluster.trivial {
            used[trivial.index()] = true;
        }
    }
    let mut added = 0;
    for (index, &was_used) in used.iter().enumerate() {
        let trivial = TrivialClusterId(index as u32);
        let pages = members.pages(trivial);
        if !was_used && pages.len() >= 2 {
            grown.push(Grown {
                collections: pages.iter().map(|&page| vec![page]).collect(),
                trivial: vec![trivial],
                verdict: ClusterVerdict {
                    formed: Formed::OnePage,
                    ..ClusterVerdict::default()
                },
            });
            added += 1;
        }
    }
    added
}
