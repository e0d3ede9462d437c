//! `eval`'s `mirrors`: the host-pair rankings against the truth.
//!
//! A true mirror pair is two hosts holding copies of one truth collection.
//! - **Each ranker** (bharat-2000 §4.2): precision at rank k (the share of
//!   its first k pairs that are true; a shorter list is taken whole) and
//!   relative recall at rank k: the true pairs in its first k over the pool
//!   of true pairs known at k. The pool is the union of every ranking's first
//!   k pairs, judged (§4.1.2's pooling), grown by transitive inference
//!   (MIRROR(A,B) and MIRROR(B,C) give MIRROR(A,C)) and kept to pairs the
//!   truth confirms: two hosts can each share a collection with a third
//!   without sharing one with each other. bharat-2000 used inference to spare
//!   tests, and counted in the pool only pairs some ranking listed; here the
//!   inferred pairs count too, so the pool is every true pair the rankings
//!   together reveal at k, and no ranking need reach 1.
//! - **combined**, the whole ranking: precision and recall (against every
//!   true pair), as bharat-2000's Figure 4 reads its last point.
//! - **The headline** (`precision`, `recall`): what `mirrors` reports as
//!   mirrored, i.e. the pairs of `combined` that Stage II classifies at
//!   levels 1 to 5, against every true pair.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

use serde::Serialize;

use super::{ratio, shown, Truth};
use crate::mirrors::{Mirrors, Ranker};
use crate::pages::PageTable;
use crate::union_find::UnionFind;

/// One ranker's figures.
#[derive(Debug, Clone, Serialize)]
pub struct RankerScores {
    pub ranker: Ranker,
    pub listed: usize,
    pub correct: usize,
    /// Over its whole list.
    pub precision: Option<f64>,
    /// Against every true pair.
    pub recall: Option<f64>,
    /// (k, precision at k) for every cut-off.
    pub precision_at: Vec<(usize, Option<f64>)>,
    /// (k, relative recall at k).
    pub relative_recall_at: Vec<(usize, Option<f64>)>,
}

/// The answer of `eval`'s `mirrors`.
#[derive(Debug, Clone, Serialize)]
pub struct MirrorScores {
    /// Of the pairs `mirrors` reports as mirrored (combined, levels 1-5).
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub reported: usize,
    pub reported_correct: usize,
    pub truth_pairs: usize,
    /// Where the true pairs come from: `mirrors.tsv`, or `collections` (the
    /// hosts holding copies of one collection).
    pub truth_pairs_from: &'static str,
    /// Hosts of the truth left out for having too few URLs.
    pub truth_hosts_not_considered: Vec<String>,
    pub cutoffs: Vec<usize>,
    pub rankers: Vec<RankerScores>,
    /// True pairs `mirrors` does not report, and reported pairs that are not.
    pub missed: Vec<(String, String)>,
    pub wrong: Vec<(String, String)>,
}

type NamePair = (String, String);
/// A ranker's figure at each cut-off: (k, value).
type AtRank = Vec<(usize, Option<f64>)>;

fn name_pair(first: &str, second: &str) -> NamePair {
    if first <= second {
        (first.to_string(), second.to_string())
    } else {
        (second.to_string(), first.to_string())
    }
}

/// The truth's mirror pairs: those of its `mirrors.tsv`, or else the hosts
/// holding copies of one collection.
pub fn truth_pairs(truth: &Truth) -> BTreeSet<NamePair> {
    if let Some(pairs) = &truth.mirror_pairs {
        return pairs.clone();
    }
    let mut hosts: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (url, row) in &truth.rows {
        if let Some((host, _)) = crate::mirrors::split_url(url) {
            hosts
                .entry(row.collection.as_str())
                .or_default()
                .insert(host.to_string());
        }
    }
    let mut pairs = BTreeSet::new();
    for hosts in hosts.values() {
        let hosts: Vec<&String> = hosts.iter().collect();
        for (index, first) in hosts.iter().enumerate() {
            for second in &hosts[index + 1..] {
                pairs.insert(name_pair(first, second));
            }
        }
    }
    pairs
}

/// Rank cut-offs 1, 2, 5, 10, 20, 50, ... up to the longest list.
fn cutoffs(longest: usize) -> Vec<usize> {
    let mut cutoffs = Vec::new();
    let mut scale = 1;
    'outer: loop {
        for step in [1, 2, 5] {
            let k = step * scale;
            if k >= longest {
                cutoffs.push(longest.max(1));
                break 'outer;
            }
            cutoffs.push(k);
        }
        scale *= 10;
    }
    cutoffs.dedup();
    cutoffs
}

pub fn score(table: &PageTable, mirrors: &Mirrors, truth: &Truth) -> MirrorScores {
    let truth_pairs_from = if truth.mirror_pairs.is_some() {
        "mirrors.tsv"
    } else {
        "collections"
    };
    let truth = truth_pairs(truth);
    let names = |ranker: Ranker| -> Vec<NamePair> {
        mirrors.ranking(ranker).map_or_else(Vec::new, |ranking| {
            ranking
                .pairs
                .iter()
                .map(|ranked| {
                    name_pair(
                        table.host_name(ranked.pair.a),
                        table.host_name(ranked.pair.b),
                    )
                })
                .collect()
        })
    };
    let lists: Vec<(Ranker, Vec<NamePair>)> = Ranker::ALL
        .iter()
        .map(|&ranker| (ranker, names(ranker)))
        .collect();
    let longest = lists.iter().map(|(_, list)| list.len()).max().unwrap_or(0);
    let cutoffs = cutoffs(longest);
    let pools: Vec<HashSet<NamePair>> = cutoffs.iter().map(|&k| pool(&lists, k, &truth)).collect();
    let rankers = lists
        .iter()
        .map(|(ranker, list)| {
            let correct = list.iter().filter(|pair| truth.contains(*pair)).count();
            let correct_at = |k: usize| {
                list.iter()
                    .take(k)
                    .filter(|pair| truth.contains(*pair))
                    .count()
            };
            RankerScores {
                ranker: *ranker,
                listed: list.len(),
                correct,
                precision: ratio(correct as u64, list.len() as u64),
                recall: ratio(correct as u64, truth.len() as u64),
                precision_at: cutoffs
                    .iter()
                    .map(|&k| (k, ratio(correct_at(k) as u64, k.min(list.len()) as u64)))
                    .collect(),
                relative_recall_at: cutoffs
                    .iter()
                    .zip(&pools)
                    .map(|(&k, pool)| (k, ratio(correct_at(k) as u64, pool.len() as u64)))
                    .collect(),
            }
        })
        .collect();
    let reported: BTreeSet<NamePair> = mirrors
        .ranking(Ranker::Combined)
        .map(|ranking| {
            ranking
                .pairs
                .iter()
                .filter(|ranked| {
                    mirrors
                        .pair(ranked.pair.a, ranked.pair.b)
                        .is_some_and(|report| report.level.is_mirror())
                })
                .map(|ranked| {
                    name_pair(
                        table.host_name(ranked.pair.a),
                        table.host_name(ranked.pair.b),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let reported_correct = reported.intersection(&truth).count();
    let truth_hosts: BTreeSet<&String> = truth.iter().flat_map(|(a, b)| [a, b]).collect();
    MirrorScores {
        precision: ratio(reported_correct as u64, reported.len() as u64),
        recall: ratio(reported_correct as u64, truth.len() as u64),
        reported: reported.len(),
        reported_correct,
        truth_pairs: truth.len(),
        truth_pairs_from,
        truth_hosts_not_considered: truth_hosts
            .into_iter()
            .filter(|host| {
                !table
                    .hosts
                    .binary_search(host)
                    .is_ok_and(|index| mirrors.is_considered(crate::pages::HostId(index as u32)))
            })
            .cloned()
            .collect(),
        cutoffs,
        rankers,
        missed: truth.difference(&reported).cloned().collect(),
        wrong: reported.difference(&truth).cloned().collect(),
    }
}

/// The true pairs known from every ranking's first `k` (`combined`'s too: its
/// first k can hold pairs its members list further down), with what
/// transitive inference adds and the truth confirms.
fn pool(
    lists: &[(Ranker, Vec<NamePair>)],
    k: usize,
    truth: &BTreeSet<NamePair>,
) -> HashSet<NamePair> {
    let found: HashSet<&NamePair> = lists
        .iter()
        .flat_map(|(_, list)| list.iter().take(k))
        .filter(|pair| truth.contains(*pair))
        .collect();
    let mut hosts: HashMap<&str, u32> = HashMap::new();
    for (a, b) in &found {
        for host in [a, b] {
            let next = hosts.len() as u32;
            hosts.entry(host.as_str()).or_insert(next);
        }
    }
    let mut components = UnionFind::new(hosts.len());
    for (a, b) in &found {
        components.union(hosts[a.as_str()], hosts[b.as_str()]);
    }
    let labels = components.labels();
    truth
        .iter()
        .filter(
            |(a, b)| match (hosts.get(a.as_str()), hosts.get(b.as_str())) {
                (Some(&x), Some(&y)) => labels[x as usize] == labels[y as usize],
                _ => false,
            },
        )
        .cloned()
        .collect()
}

impl fmt::Display for MirrorScores {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            formatter,
            "\nmirrors (host pairs against the truth: {} pairs of hosts {})",
            self.truth_pairs,
            if self.truth_pairs_from == "mirrors.tsv" {
                "mirrors.tsv lists"
            } else {
                "holding copies of one collection"
            }
        )?;
        writeln!(
            formatter,
            "  precision {}  ({} right of {} pairs `mirrors` reports at levels 1-5)",
            shown(self.precision),
            self.reported_correct,
            self.reported
        )?;
        writeln!(
            formatter,
            "  recall    {}  ({} of {} true pairs)",
            shown(self.recall),
            self.reported_correct,
            self.truth_pairs
        )?;
        if !self.truth_hosts_not_considered.is_empty() {
            writeln!(
                formatter,
                "  truth hosts with too few URLs to be considered: {}",
                self.truth_hosts_not_considered.join(", ")
            )?;
        }
        let table = |formatter: &mut fmt::Formatter<'_>,
                     title: &str,
                     pick: fn(&RankerScores) -> &AtRank|
         -> fmt::Result {
            writeln!(formatter, "\n  {title}")?;
            write!(formatter, "  {:>6}", "rank")?;
            for ranker in &self.rankers {
                write!(formatter, " {:>8}", ranker.ranker.name())?;
            }
            writeln!(formatter)?;
            for (row, k) in self.cutoffs.iter().enumerate() {
                write!(formatter, "  {k:>6}")?;
                for ranker in &self.rankers {
                    let value = pick(ranker).get(row).and_then(|(_, value)| *value);
                    write!(
                        formatter,
                        " {:>8}",
                        value.map_or("-".to_string(), |value| format!("{value:.2}"))
                    )?;
                }
                writeln!(formatter)?;
            }
            Ok(())
        };
        table(
            formatter,
            "precision at rank (bharat-2000 Figure 1)",
            |ranker| &ranker.precision_at,
        )?;
        table(
            formatter,
            "relative recall at rank, pooled with transitive inference (bharat-2000 Figure 3)",
            |ranker| &ranker.relative_recall_at,
        )?;
        writeln!(
            formatter,
            "\n  whole lists: {:>8} {:>8} {:>9} {:>7}",
            "listed", "right", "precision", "recall"
        )?;
        for ranker in &self.rankers {
            writeln!(
                formatter,
                "  {:<11} {:>8} {:>8} {:>9} {:>7}",
                ranker.ranker.name(),
                ranker.listed,
                ranker.correct,
                ranker
                    .precision
                    .map_or("n/a".into(), |value| format!("{value:.3}")),
                ranker
                    .recall
                    .map_or("n/a".into(), |value| format!("{value:.3}"))
            )?;
        }
        if !self.missed.is_empty() {
            writeln!(formatter, "\n  true pairs not reported:")?;
            for (a, b) in &self.missed {
                writeln!(formatter, "    {a}  ~  {b}")?;
            }
        }
        if !self.wrong.is_empty() {
            writeln!(formatter, "\n  reported pairs that are not true:")?;
            for (a, b) in &self.wrong {
                writeln!(formatter, "    {a}  ~  {b}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutoffs_step_one_two_five() {
        assert_eq!(cutoffs(94), vec![1, 2, 5, 10, 20, 50, 94]);
        assert_eq!(cutoffs(20), vec![1, 2, 5, 10, 20]);
        assert_eq!(cutoffs(0), vec![1]);
    }

    #[test]
    fn the_pool_grows_by_transitive_inference_within_the_truth() {
        let pair = |a: &str, b: &str| name_pair(a, b);
        let truth: BTreeSet<NamePair> = [
            pair("a", "b"),
            pair("b", "c"),
            pair("a", "c"),
            pair("c", "d"),
        ]
        .into_iter()
        .collect();
        // One ranker found a~b and b~c; another c~d but only at rank 2.
        let lists = vec![
            (Ranker::Paths, vec![pair("a", "b"), pair("b", "c")]),
            (Ranker::Ip4, vec![pair("x", "y"), pair("c", "d")]),
        ];
        let at_1 = pool(&lists, 1, &truth);
        assert_eq!(at_1, [pair("a", "b")].into_iter().collect());
        let at_2 = pool(&lists, 2, &truth);
        // a~c is inferred; with c~d found, a~d and b~d would be inferred too
        // but the truth does not confirm them.
        assert_eq!(
            at_2,
            [
                pair("a", "b"),
                pair("b", "c"),
                pair("a", "c"),
                pair("c", "d")
            ]
            .into_iter()
            .collect()
        );
    }
}
