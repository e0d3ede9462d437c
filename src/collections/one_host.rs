//! No replica on one host from inside one manual.
//!
//! A similar cluster whose collections are all on one host is two folders of
//! that host holding the same pages. Most often that is one manual publishing
//! a sub-tree twice (the same parameter pages under `fo/` and `html/`, a
//! print view, a one-page folder that repeats a page of the manual): parts of
//! one manual, not replicas of it. Two copies of one host are replicas only
//! when neither lies inside the other's manual, which the site shows this
//! way: their folders meet only at the host's root, and no other page of the
//! host links into two of them (a manual's index linking to both builds).
//! Otherwise the cluster is dissolved: its pages are in no collection, and
//! the manual's lineage takes them in as pages of its copy (search still
//! rolls them up as one entry with the manual).

use std::collections::HashSet;

use super::grow::Grown;
use super::manuals::common_folder;
use super::WebGraph;
use crate::pages::{url_path, HostId, PageId};

/// Whether a grown cluster's collections are parts of one manual of one
/// host (see the module's description).
pub(super) fn parts_of_one_manual(cluster: &Grown, graph: &WebGraph, urls: &[&str]) -> bool {
    let hosts: HashSet<HostId> = cluster
        .collections
        .iter()
        .flatten()
        .map(|&page| graph.host(page))
        .collect();
    if hosts.len() != 1 || cluster.collections.len() < 2 {
        return false;
    }
    let folder_of = |pages: &[PageId]| {
        common_folder(
            pages
                .iter()
                .filter_map(|&page| url_path(urls[page.0 as usize])),
        )
    };
    let folders: Vec<String> = cluster.collections.iter().map(|c| folder_of(c)).collect();
    let shared = common_folder(folders.iter().map(String::as_str));
    if shared != "/" {
        return true;
    }
    // A page of the host outside the cluster that links into two of its
    // collections (or a collection linking into another) is the manual
    // holding them.
    let collection_of = |page: PageId| {
        cluster
            .collections
            .iter()
            .position(|pages| pages.contains(&page))
    };
    let mut parents: Vec<HashSet<Option<usize>>> = Vec::new();
    let mut parent_of: std::collections::HashMap<PageId, usize> = Default::default();
    for (index, pages) in cluster.collections.iter().enumerate() {
        for &page in pages {
            for parent in graph.inlinks(page) {
                let from = collection_of(parent);
                if from.is_some_and(|from| from != index) {
                    return true;
                }
                if from.is_none() {
                    let slot = *parent_of.entry(parent).or_insert_with(|| {
                        parents.push(HashSet::new());
                        parents.len() - 1
                    });
                    parents[slot].insert(Some(index));
                    if parents[slot].len() > 1 {
                        return true;
                    }
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::collections::{analyse, CollectionsConfig};
    use crate::similarity::SimilarityConfig;
    use crate::test_support::{capture, run};

    fn clusters_of(web: &[crate::ingest::Capture]) -> usize {
        let (table, similarity) = run(web, &SimilarityConfig::default());
        let collections = analyse(&table, &similarity, &CollectionsConfig::default());
        collections
            .clusters
            .iter()
            .filter(|cluster| cluster.kind == crate::collections::ClusterKind::Collection)
            .count()
    }

    /// Three pages under `folder`, linking to each other, on `host`.
    fn sub_tree(host: &str, folder: &str) -> Vec<crate::ingest::Capture> {
        (0..3)
            .map(|n| {
                let mut page = capture(
                    &format!("http://{host}{folder}p{n}.html"),
                    &format!("Parameter {n} of the configuration, described at length here"),
                );
                page.links = (0..3)
                    .filter(|&other| other != n)
                    .map(|other| format!("http://{host}{folder}p{other}.html"))
                    .collect();
                page
            })
            .collect()
    }

    #[test]
    fn a_sub_tree_a_manual_publishes_twice_is_no_replica() {
        // Under one folder of the manual.
        let mut web = sub_tree("docs.example.org", "/manual/fo/");
        web.extend(sub_tree("docs.example.org", "/manual/html/"));
        assert_eq!(clusters_of(&web), 0);
        // At the host's root, both linked from the manual's index.
        let mut web = sub_tree("docs.example.org", "/fo/");
        web.extend(sub_tree("docs.example.org", "/html/"));
        let mut index = capture(
            "http://docs.example.org/index.html",
            "The manual's index, in words of its own",
        );
        index.links = crate::pages::Links::from_iter([
            "http://docs.example.org/fo/p0.html",
            "http://docs.example.org/html/p0.html",
        ]);
        web.push(index);
        assert_eq!(clusters_of(&web), 0);
    }

    #[test]
    fn two_unrelated_trees_of_one_host_holding_the_same_pages_are_replicas() {
        let mut web = sub_tree("ftp.example.edu", "/mirror-a/");
        web.extend(sub_tree("ftp.example.edu", "/mirror-b/"));
        assert_eq!(clusters_of(&web), 1);
    }
}
