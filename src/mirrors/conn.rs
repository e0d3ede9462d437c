//! Ranker `conn` (bharat-2000 §3.3): the `paths` ranking, keeping only pairs
//! whose common paths link alike.
//!
//! For a pair, the n = 10 common paths of highest out-degree on each host
//! are tested (up to 2n); a path passes when a share f = 0.9 of the union of
//! its two out-link sets is common to both. Links within a host are compared
//! as relative links (the host name removed, so a mirror's own links match
//! the original's); links to other hosts as whole URLs. The pair stays when a
//! share m = 0.75 of the tested paths pass. A path whose two pages link
//! nowhere is not counted (it can neither pass nor fail), and a pair with no
//! path left to test does not stay.

use std::collections::HashSet;

use xxhash_rust::xxh3::xxh3_64;

use super::hosts::{HostData, Web};
use super::Ranked;
use crate::pages::{relative_link_key, PageId, PageTable};

/// Paths tested per host.
pub const TESTED_PATHS: usize = 10;
/// Share of the out-link union that must be common for a path to pass.
pub const LINK_AGREEMENT: f64 = 0.9;
/// Share of tested paths that must pass.
pub const PATH_AGREEMENT: f64 = 0.75;

pub fn filter(web: &Web<'_>, paths: &[Ranked]) -> Vec<Ranked> {
    paths
        .iter()
        .filter(
            |ranked| match (web.host(ranked.pair.a), web.host(ranked.pair.b)) {
                (Some(a), Some(b)) => links_agree(web.table, a, b),
                _ => false,
            },
        )
        .copied()
        .collect()
}

/// Whether the common paths of two hosts link alike.
pub fn links_agree(table: &PageTable, a: &HostData, b: &HostData) -> bool {
    // Common paths with each side's page and out-degree.
    let common: Vec<(PageId, PageId)> = a
        .paths
        .iter()
        .zip(&a.pages)
        .filter_map(|(path, page)| Some((*page, b.page_at(path)?)))
        .collect();
    if common.is_empty() {
        return false;
    }
    let degree = |page: PageId| {
        table
            .page(page)
            .map_or(0, |page| page.outlinks.len() + page.uncrawled_links.len())
    };
    let mut by_a = common.clone();
    by_a.sort_by_key(|(page_a, _)| (std::cmp::Reverse(degree(*page_a)), *page_a));
    let mut by_b = common;
    by_b.sort_by_key(|(_, page_b)| (std::cmp::Reverse(degree(*page_b)), *page_b));
    let mut tested: Vec<(PageId, PageId)> = by_a.into_iter().take(TESTED_PATHS).collect();
    for pair in by_b.into_iter().take(TESTED_PATHS) {
        if !tested.contains(&pair) {
            tested.push(pair);
        }
    }
    // A path whose pages link nowhere says nothing either way: not tested.
    let mut testable = 0usize;
    let mut passed = 0usize;
    for (page_a, page_b) in &tested {
        let (links_a, links_b) = (out_links(table, *page_a), out_links(table, *page_b));
        let union = links_a.union(&links_b).count();
        if union == 0 {
            continue;
        }
        testable += 1;
        if links_a.intersection(&links_b).count() as f64 >= LINK_AGREEMENT * union as f64 {
            passed += 1;
        }
    }
    testable > 0 && passed as f64 >= PATH_AGREEMENT * testable as f64
}

/// A page's out-links, relative within its host, whole elsewhere.
fn out_links(table: &PageTable, id: PageId) -> HashSet<u64> {
    let Some(page) = table.page(id) else {
        return HashSet::new();
    };
    let mut links: HashSet<u64> = page.uncrawled_links.iter().copied().collect();
    for target in &page.outlinks {
        let Some(target) = table.page(*target) else {
            continue;
        };
        let key = relative_link_key(&page.url, &target.url)
            .unwrap_or_else(|| xxh3_64(target.url.as_bytes()));
        links.insert(key);
    }
    links
}
