//! One trivial cluster per page of a site: a cluster that holds several
//! pages of one host at different paths is split by path.
//!
//! Transitive similarity (cho-2000 Definition 4) joins texts, not pages. A
//! manual that publishes one text under two paths (a re-exported item, a
//! reference page and the chapter that lists it, a symbolic link) has two
//! pages with that text, and so has every copy of the manual: one trivial
//! cluster then holds both pages of every host, and the one-to-one mapping
//! between copies that cho's Definition 5 asks for (§2.2, "One-to-one") is
//! lost. Pages built from one template chain the same way.
//!
//! The split follows the paths, as fetterly-2004 §2 confirms mirrored pages
//! by URL suffix: the host with the most distinct paths in the cluster gives
//! one group per path (a folder and its `index.html` are one path, see
//! [`page_arcs`]); every other member joins the group whose path shares the
//! longest run of final arcs with its own (`/pub/doc/std/iter/x.html` joins
//! `/stable/std/iter/x.html`, not `/stable/std/ops/x.html`). Members that
//! match no group, or two equally, stay together in one group of their own.
//!
//! A split is made only when it is corroborated: at least two of the groups
//! (`split_corroborating_groups`) find members on other hosts. Stand-ins (one text answering many URLs of
//! a host: a soft 404, a parked domain, see [`super::stand_ins`]) are in no
//! cluster by then: those URLs are names of no page.

use std::collections::HashMap;

use crate::pages::{common_suffix, page_arcs, url_path, HostId, PageTable};

/// Splits the clusters of `labels` (one per page, `u32::MAX` for a page in
/// no cluster) that hold several pages of one host at different paths.
/// Returns the new labels: kept clusters keep their label, split ones take
/// new labels above every label in use.
pub(super) fn split_by_path(
    table: &PageTable,
    labels: &[u32],
    config: &super::SimilarityConfig,
) -> Vec<u32> {
    let mut members: HashMap<u32, Vec<usize>> = HashMap::new();
    for (page, &label) in labels.iter().enumerate() {
        if label != u32::MAX {
            members.entry(label).or_default().push(page);
        }
    }
    let mut next = labels
        .iter()
        .filter(|&&label| label != u32::MAX)
        .max()
        .map_or(0, |&label| label + 1);
    let mut result = labels.to_vec();
    let mut clusters: Vec<(u32, Vec<usize>)> = members
        .into_iter()
        .filter(|(_, pages)| pages.len() >= config.split_min_pages)
        .collect();
    clusters.sort_unstable_by_key(|(label, _)| *label);
    for (_, pages) in clusters {
        let Some(groups) = groups_by_path(table, &pages, config.split_corroborating_groups) else {
            continue;
        };
        for group in groups.into_iter().skip(1) {
            for page in group {
                result[page] = next;
            }
            next += 1;
        }
    }
    result
}

/// The cluster's pages in groups, one per page of the reference host, when
/// the split is corroborated; `None` to keep the cluster whole.
fn groups_by_path(
    table: &PageTable,
    pages: &[usize],
    corroborating_groups: usize,
) -> Option<Vec<Vec<usize>>> {
    let arcs: Vec<Vec<&str>> = pages
        .iter()
        .map(|&page| {
            let url = &table.pages[page].url;
            page_arcs(url_path(url).unwrap_or(url))
        })
        .collect();
    let host = |member: usize| table.pages[pages[member]].host;

    // The reference host: the most distinct paths, then the lowest id.
    let mut paths_by_host: HashMap<HostId, Vec<&[&str]>> = HashMap::new();
    for (member, member_arcs) in arcs.iter().enumerate() {
        paths_by_host
            .entry(host(member))
            .or_default()
            .push(member_arcs);
    }
    let (reference, _) = paths_by_host
        .iter_mut()
        .map(|(host, paths)| {
            paths.sort_unstable();
            paths.dedup();
            (*host, paths.len())
        })
        .max_by_key(|&(host, paths)| (paths, std::cmp::Reverse(host)))?;
    let reference_paths = paths_by_host.remove(&reference)?;
    if reference_paths.len() < 2 {
        return None;
    }

    // One group per path of the reference host, found by its last arc.
    let mut by_last_arc: HashMap<&str, Vec<usize>> = HashMap::new();
    for (group, path) in reference_paths.iter().enumerate() {
        by_last_arc
            .entry(path.last().copied().unwrap_or(""))
            .or_default()
            .push(group);
    }
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); reference_paths.len() + 1];
    let mut corroborated = vec![false; reference_paths.len()];
    let loose = reference_paths.len();
    for (member, member_arcs) in arcs.iter().enumerate() {
        let on_reference = host(member) == reference;
        let best = by_last_arc
            .get(member_arcs.last().copied().unwrap_or(""))
            .and_then(|candidates| {
                let mut best: Option<(usize, usize)> = None;
                let mut tied = false;
                for &group in candidates {
                    let shared = common_suffix(member_arcs, reference_paths[group]);
                    match best {
                        Some((_, most)) if shared < most => {}
                        Some((_, most)) if shared == most => tied = true,
                        _ => {
                            best = Some((group, shared));
                            tied = false;
                        }
                    }
                }
                best.filter(|_| !tied).map(|(group, _)| group)
            });
        match best {
            Some(group) => {
                groups[group].push(pages[member]);
                corroborated[group] |= !on_reference;
            }
            None => groups[loose].push(pages[member]),
        }
    }
    if corroborated.iter().filter(|&&found| found).count() < corroborating_groups {
        return None;
    }
    groups.retain(|group| !group.is_empty());
    Some(groups)
}
