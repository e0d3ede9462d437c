//! Ranker `collections` (cho-2000 §5.1): host pairs holding copies of one
//! replicated collection.
//!
//! The collections stage knows which folder of which host holds a copy of
//! which manual; two hosts holding copies in one similar cluster mirror
//! those folders, whatever their size (cho's crawler avoided mirrored
//! collections whatever the host). Every pair of copies on two hosts counts
//! the pages of the smaller copy; a pair's score is that count summed over
//! the clusters the two hosts share, and each pair of folders is a
//! [`Subtree`] that classification compares (the copies' own folders, also
//! for hosts too small to be ranked otherwise).

use std::collections::HashMap;

use super::{HostPair, Ranked, Subtree};
use crate::collections::{ClusterKind, Collections};
use crate::pages::url_path;

/// Pages of copies two hosts share, by pair of folders (on a, on b).
type Folders = HashMap<(String, String), u32>;

/// What the collections say of every pair of hosts holding copies of one.
pub struct CopyEvidence {
    /// Pair -> (score, folders).
    pairs: HashMap<HostPair, (f64, Folders)>,
}

pub fn evidence(collections: &Collections) -> CopyEvidence {
    let mut pairs: HashMap<HostPair, (f64, Folders)> = HashMap::new();
    for cluster in collections
        .clusters
        .iter()
        .filter(|cluster| cluster.kind == ClusterKind::Collection)
    {
        let copies: Vec<_> = cluster
            .collections
            .iter()
            .filter_map(|&id| collections.collection(id))
            .collect();
        for (index, first) in copies.iter().enumerate() {
            for second in &copies[index + 1..] {
                if first.host == second.host {
                    continue;
                }
                let pair = HostPair::new(first.host, second.host);
                let (on_a, on_b) = if pair.a == first.host {
                    (first, second)
                } else {
                    (second, first)
                };
                let shared = first.pages.len().min(second.pages.len()) as u32;
                let folder = |prefix: &str| url_path(prefix).unwrap_or("/").to_string();
                let entry = pairs.entry(pair).or_default();
                entry.0 += f64::from(shared);
                *entry
                    .1
                    .entry((folder(&on_a.prefix), folder(&on_b.prefix)))
                    .or_default() += shared;
            }
        }
    }
    CopyEvidence { pairs }
}

impl CopyEvidence {
    /// Pairs by pages of copies they share, most first.
    pub fn ranking(&self) -> Vec<Ranked> {
        super::ranked(
            self.pairs
                .iter()
                .map(|(pair, (score, _))| (*pair, *score))
                .collect(),
        )
    }

    /// The folders the pair's copies sit in, most pages first.
    pub fn subtrees(&self, pair: HostPair) -> Vec<Subtree> {
        let Some((_, folders)) = self.pairs.get(&pair) else {
            return Vec::new();
        };
        Subtree::ranked(folders.iter())
    }
}
