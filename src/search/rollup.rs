//! Folding hits into groups (cho-2000 §5.2, Figure 14): the pages of one
//! collection become one entry, the collections of one similar cluster become
//! one entry shown from the principal copy, copies of a page that grew into no
//! larger collection become one entry (their cluster is of kind `page`), and a
//! page with no copies stays as it is.
//!
//! Every matching document is folded, not just the first screenful, so the
//! groups of every results page are complete and disjoint and their counts
//! are exact.

use std::collections::HashMap;

use tantivy::DocAddress;

use crate::collections::{ClusterId, CollectionId};
use crate::pages::PageId;

/// One matching document, with what the index says of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub score: f32,
    pub page: PageId,
    pub collection: Option<CollectionId>,
    pub cluster: Option<ClusterId>,
    pub doc: DocAddress,
}

impl Hit {
    /// Higher score first; among equal scores, the lower page id (URL order),
    /// so that results never depend on segment order.
    fn beats(&self, other: &Hit) -> bool {
        match self.score.total_cmp(&other.score) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => self.page < other.page,
        }
    }
}

/// One entry of rolled-up results.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The page shown: the best-scoring matching page of the principal copy
    /// when it has one, else the best-scoring matching page of the group.
    pub shown: Hit,
    /// The group's score: its best hit's.
    pub score: f32,
    /// Matching pages folded into this entry (itself included).
    pub hits: u32,
    /// Matching pages of the shown page's collection (itself included).
    pub collection_hits: u32,
}

/// What to fold by: a similar cluster, or a page on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Cluster(ClusterId),
    Page(PageId),
}

struct Accumulator {
    best: Hit,
    best_of_principal: Option<Hit>,
    hits: u32,
}

/// Folds `hits` (in any order) into groups, best first. `principal` gives
/// each cluster's principal collection.
pub fn fold(hits: &[Hit], principal: impl Fn(ClusterId) -> Option<CollectionId>) -> Vec<Group> {
    let mut per_collection: HashMap<CollectionId, u32> = HashMap::new();
    let mut groups: HashMap<Key, Accumulator> = HashMap::new();
    for hit in hits {
        if let Some(collection) = hit.collection {
            *per_collection.entry(collection).or_default() += 1;
        }
        let key = match hit.cluster {
            Some(cluster) => Key::Cluster(cluster),
            None => Key::Page(hit.page),
        };
        let of_principal = match (hit.cluster, hit.collection) {
            (Some(cluster), Some(collection)) => principal(cluster) == Some(collection),
            _ => false,
        };
        let accumulator = groups.entry(key).or_insert(Accumulator {
            best: *hit,
            best_of_principal: None,
            hits: 0,
        });
        accumulator.hits += 1;
        if hit.beats(&accumulator.best) {
            accumulator.best = *hit;
        }
        if of_principal
            && accumulator
                .best_of_principal
                .is_none_or(|best| hit.beats(&best))
        {
            accumulator.best_of_principal = Some(*hit);
        }
    }
    let mut folded: Vec<(Hit, Group)> = groups
        .into_values()
        .map(|accumulator| {
            let shown = accumulator.best_of_principal.unwrap_or(accumulator.best);
            let collection_hits = shown
                .collection
                .and_then(|collection| per_collection.get(&collection).copied())
                .unwrap_or(1);
            let group = Group {
                shown,
                score: accumulator.best.score,
                hits: accumulator.hits,
                collection_hits,
            };
            (accumulator.best, group)
        })
        .collect();
    folded.sort_by(|(first, _), (second, _)| {
        if first.beats(second) {
            std::cmp::Ordering::Less
        } else if second.beats(first) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    folded.into_iter().map(|(_, group)| group).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(score: f32, page: u32, collection: Option<u32>, cluster: Option<u32>) -> Hit {
        Hit {
            score,
            page: PageId(page),
            collection: collection.map(CollectionId),
            cluster: cluster.map(ClusterId),
            doc: DocAddress::new(0, page),
        }
    }

    /// cho Figure 14: the TechWeb pages on www.techweb.com (collection 0,
    /// principal) and techweb.cmp.com (collection 1) fold into one entry shown
    /// from the principal copy; an unrelated page stays on its own.
    #[test]
    fn collections_and_their_replicas_fold_into_one_entry_from_the_principal_copy() {
        let hits = [
            hit(9.0, 10, Some(1), Some(0)), // the mirror's copy scores best
            hit(8.5, 1, Some(0), Some(0)),
            hit(7.0, 2, Some(0), Some(0)),
            hit(6.0, 3, Some(0), Some(0)),
            hit(8.0, 50, None, None),
            hit(5.0, 11, Some(1), Some(0)),
        ];
        let groups = fold(&hits, |cluster| {
            (cluster == ClusterId(0)).then_some(CollectionId(0))
        });
        assert_eq!(groups.len(), 2);
        // The cluster ranks by its best hit, and shows the principal's best page.
        assert_eq!(groups[0].score, 9.0);
        assert_eq!(groups[0].shown.page, PageId(1));
        assert_eq!(groups[0].hits, 5);
        assert_eq!(groups[0].collection_hits, 3);
        assert_eq!(groups[1].shown.page, PageId(50));
        assert_eq!((groups[1].hits, groups[1].collection_hits), (1, 1));
    }

    #[test]
    fn without_a_matching_page_in_the_principal_copy_the_best_page_is_shown() {
        let hits = [hit(3.0, 7, Some(4), Some(2)), hit(4.0, 8, Some(5), Some(2))];
        let groups = fold(&hits, |_| Some(CollectionId(3)));
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].shown.page, PageId(8));
        assert_eq!(groups[0].collection_hits, 1);
        assert_eq!(groups[0].hits, 2);
    }

    #[test]
    fn a_stray_copy_folds_into_its_twins_cluster() {
        // Page 9 is outside every collection but carries its twins' cluster.
        let hits = [hit(2.0, 9, None, Some(1)), hit(1.0, 4, Some(6), Some(1))];
        let groups = fold(&hits, |_| Some(CollectionId(6)));
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].shown.page, PageId(4));
        assert_eq!(groups[0].score, 2.0);
    }

    #[test]
    fn ties_are_broken_by_page_id_whatever_the_input_order() {
        let mut hits = vec![
            hit(1.0, 5, None, None),
            hit(1.0, 2, None, None),
            hit(1.0, 9, None, None),
        ];
        let forward = fold(&hits, |_| None);
        hits.reverse();
        let backward = fold(&hits, |_| None);
        assert_eq!(forward, backward);
        let pages: Vec<u32> = forward.iter().map(|group| group.shown.page.0).collect();
        assert_eq!(pages, vec![2, 5, 9]);
    }

    #[test]
    fn every_hit_lands_in_exactly_one_group() {
        let hits: Vec<Hit> = (0..200u32)
            .map(|page| {
                let cluster = (page % 3 != 0).then_some(page % 7);
                let collection = cluster.map(|cluster| cluster * 2 + page % 2);
                hit((page % 13) as f32, page, collection, cluster)
            })
            .collect();
        let groups = fold(&hits, |cluster| Some(CollectionId(cluster.0 * 2)));
        let total: u32 = groups.iter().map(|group| group.hits).sum();
        assert_eq!(total as usize, hits.len());
        let mut clusters: Vec<u32> = groups
            .iter()
            .filter_map(|group| group.shown.cluster.map(|cluster| cluster.0))
            .collect();
        let before = clusters.len();
        clusters.sort_unstable();
        clusters.dedup();
        assert_eq!(clusters.len(), before, "no two groups of one cluster");
        assert!(groups.windows(2).all(|pair| pair[0].score >= pair[1].score));
    }
}
