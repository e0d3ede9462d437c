//! The principal copy of a cluster: the one a person calls the original.
//!
//! cho-2000 §3.1 prefers as the entry point the copy with most links from
//! other sites, and §5.2 shows each cluster from one copy. Links alone do not
//! tell the original on a crawl of mirrored manuals: most mirrors are linked
//! from nowhere, and an older version or a partial mirror can win a tie. The
//! copies are compared on what they hold, in this order:
//!
//! 1. **Agreement**: for each page of the copy, the other copies holding a
//!    page with the same own text (site chrome such as a mirror's banner set
//!    aside, see [`crate::similarity::Similarity::own_text_signatures`]),
//!    summed. Mirrors copy the original, so the version most copies hold is
//!    the original's, and a complete copy agrees on more pages than a partial
//!    mirror or a partly crawled one. An older version agrees only with the
//!    other copies of that version, and a copy rewritten page by page (a
//!    per-page footer) with none.
//! 2. **Links from other hosts** into the copy (cho §3.1): partial mirrors
//!    link the pages they lack to the original, banners name it.
//! 3. **Fewer other collections on its address**: a mirror operator serves
//!    copies of many collections from one machine, the original site its own.
//! 4. The newest crawl, then the shortest root URL.

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};

use super::PageFacts;
use crate::pages::{HostId, PageId};

/// One copy of a cluster, as the principal choice sees it.
pub(super) struct Candidate<'a> {
    /// Its pages, sorted.
    pub pages: &'a [PageId],
    pub root: PageId,
    pub inlinks: u64,
}

/// The principal copy of every cluster, by position.
pub(super) struct Chooser {
    principals: Vec<usize>,
}

impl Chooser {
    pub fn new<'a>(
        facts: &PageFacts,
        hosts: &[HostId],
        clusters: impl Iterator<Item = Vec<Candidate<'a>>>,
    ) -> Chooser {
        let clusters: Vec<Vec<Candidate<'a>>> = clusters.collect();
        let address = |page: PageId| facts.addresses.get(page.0 as usize).copied().flatten();
        // Clusters with copies on two hosts or more, by address.
        let mut on_address: HashMap<&str, HashSet<usize>> = HashMap::new();
        for (index, candidates) in clusters.iter().enumerate() {
            let first_host = candidates.first().map(|c| hosts[c.root.0 as usize]);
            if candidates
                .iter()
                .all(|c| Some(hosts[c.root.0 as usize]) == first_host)
            {
                continue;
            }
            for candidate in candidates {
                if let Some(ip) = address(candidate.root) {
                    on_address.entry(ip).or_default().insert(index);
                }
            }
        }
        let principals = clusters
            .iter()
            .enumerate()
            .map(|(index, candidates)| {
                if candidates.len() < 2 {
                    return 0;
                }
                let agreement = agreement(facts, candidates);
                let others_on_address = |candidate: &Candidate| {
                    address(candidate.root).map_or(0, |ip| {
                        on_address
                            .get(ip)
                            .map_or(0, |set| set.len() - usize::from(set.contains(&index)))
                    })
                };
                let newest = |candidate: &Candidate| {
                    candidate
                        .pages
                        .iter()
                        .filter_map(|page| facts.dates.get(page.0 as usize).copied())
                        .max()
                        .unwrap_or("")
                };
                (0..candidates.len())
                    .max_by_key(|&position| {
                        let candidate = &candidates[position];
                        let url = facts.urls[candidate.root.0 as usize];
                        (
                            agreement[position],
                            candidate.inlinks,
                            Reverse(others_on_address(candidate)),
                            newest(candidate),
                            Reverse(url.len()),
                            Reverse(url),
                        )
                    })
                    .unwrap_or(0)
            })
            .collect();
        Chooser { principals }
    }

    /// The position of the principal copy among the cluster's collections.
    pub fn principal(&self, cluster: usize) -> usize {
        self.principals[cluster]
    }
}

/// For each copy, the pages of other copies with the same own text as one
/// of its pages, summed over its pages.
fn agreement(facts: &PageFacts, candidates: &[Candidate]) -> Vec<u64> {
    let mut agreement = vec![0u64; candidates.len()];
    if facts.own_text.is_empty() {
        return agreement;
    }
    // Own text -> copies holding it.
    let mut holders: HashMap<u64, Vec<usize>> = HashMap::new();
    for (position, candidate) in candidates.iter().enumerate() {
        for &page in candidate.pages {
            let text = facts.own_text.get(page.0 as usize).copied().unwrap_or(0);
            if text == 0 {
                continue;
            }
            let copies = holders.entry(text).or_default();
            if copies.last() != Some(&position) {
                copies.push(position);
            }
        }
    }
    for copies in holders.values() {
        for &position in copies {
            agreement[position] += copies.len() as u64 - 1;
        }
    }
    agreement
}
