//! `mirrorscope mirrors`: one ranking of host pairs with each pair's level.

use std::fmt;

use serde::Serialize;

use crate::generation::{Analysis, DataDir, Result};
use crate::mirrors::{Level, Mirrors, Outcome, PairReport, Ranker};
use crate::pages::PageTable;

/// A folder of `a` mirrored under a folder of `b`.
#[derive(Debug, Clone, Serialize)]
pub struct SubtreeEntry {
    pub a: String,
    pub b: String,
}

/// One pair, as `mirrors` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct MirrorEntry {
    pub rank: usize,
    pub a: String,
    pub b: String,
    pub score: f64,
    pub level: Level,
    /// Every ranker listing the pair (`combined` aside).
    pub rankers: Vec<Ranker>,
    /// The folders compared (`/` and `/` for whole hosts).
    pub subtrees: Vec<SubtreeEntry>,
    /// How many of Stage II's tests ended each way (`FM`, `TF`, ...).
    pub tests: Vec<(String, usize)>,
    pub shared_ip: Option<String>,
}

impl MirrorEntry {
    pub fn of(table: &PageTable, report: &PairReport, rank: usize, score: f64) -> MirrorEntry {
        let mut tests: Vec<(String, usize)> = Vec::new();
        for test in &report.tests {
            let code = test.outcome.code();
            match tests.iter_mut().find(|(seen, _)| seen == code) {
                Some((_, count)) => *count += 1,
                None => tests.push((code.to_string(), 1)),
            }
        }
        tests.sort_by_key(|(code, _)| outcome_order(code));
        MirrorEntry {
            rank,
            a: table.host_name(report.pair.a).to_string(),
            b: table.host_name(report.pair.b).to_string(),
            score,
            level: report.level,
            rankers: report.ranks.iter().map(|(ranker, _)| *ranker).collect(),
            subtrees: report
                .subtrees
                .iter()
                .map(|subtree| SubtreeEntry {
                    a: subtree.a.clone(),
                    b: subtree.b.clone(),
                })
                .collect(),
            tests,
            shared_ip: report.shared_ip.clone(),
        }
    }
}

fn outcome_order(code: &str) -> usize {
    [
        Outcome::FingerprintMatch,
        Outcome::FullSimilarity,
        Outcome::HighSimilarity,
        Outcome::TraceSimilarity,
        Outcome::NoSimilarity,
        Outcome::TargetFailure,
        Outcome::SourceFailure,
    ]
    .iter()
    .position(|outcome| outcome.code() == code)
    .unwrap_or(usize::MAX)
}

/// The answer of `mirrors`.
#[derive(Debug, Clone, Serialize)]
pub struct MirrorsReport {
    pub ranker: Ranker,
    pub hosts_considered: u64,
    /// Pairs in the whole ranking, before `--top`.
    pub ranked: usize,
    pub pairs: Vec<MirrorEntry>,
}

impl MirrorsReport {
    pub fn gather(data: &DataDir, ranker: Ranker, top: Option<usize>) -> Result<MirrorsReport> {
        let Analysis { table, mirrors, .. } = data.analysis()?;
        Ok(MirrorsReport::of(&table, &mirrors, ranker, top))
    }

    pub fn of(
        table: &PageTable,
        mirrors: &Mirrors,
        ranker: Ranker,
        top: Option<usize>,
    ) -> MirrorsReport {
        let ranking = mirrors
            .ranking(ranker)
            .map_or(&[][..], |ranking| &ranking.pairs);
        let pairs = ranking
            .iter()
            .take(top.unwrap_or(usize::MAX))
            .enumerate()
            .filter_map(|(index, ranked)| {
                let report = mirrors.pair(ranked.pair.a, ranked.pair.b)?;
                Some(MirrorEntry::of(table, report, index + 1, ranked.score))
            })
            .collect();
        MirrorsReport {
            ranker,
            hosts_considered: mirrors.counts.hosts_considered,
            ranked: ranking.len(),
            pairs,
        }
    }
}

impl fmt::Display for MirrorsReport {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            formatter,
            "ranking `{}`: {} host pairs among {} hosts considered{}",
            self.ranker,
            self.ranked,
            self.hosts_considered,
            if self.pairs.len() < self.ranked {
                format!(", the first {} shown", self.pairs.len())
            } else {
                String::new()
            }
        )?;
        if self.pairs.is_empty() {
            return Ok(());
        }
        let width = |pick: fn(&MirrorEntry) -> &str| {
            self.pairs
                .iter()
                .map(|entry| pick(entry).len())
                .max()
                .unwrap_or(0)
        };
        let (wa, wb) = (
            width(|entry| &entry.a).max(6),
            width(|entry| &entry.b).max(6),
        );
        writeln!(
            formatter,
            "\n{:>4}  {:<8}  {:>8}  {:<wa$}  {:<wb$}  rankers",
            "rank", "level", "score", "host a", "host b"
        )?;
        for entry in &self.pairs {
            writeln!(
                formatter,
                "{:>4}  {:<8}  {:>8.3}  {:<wa$}  {:<wb$}  {}",
                entry.rank,
                entry.level.name(),
                entry.score,
                entry.a,
                entry.b,
                entry
                    .rankers
                    .iter()
                    .map(|ranker| ranker.name())
                    .collect::<Vec<_>>()
                    .join(",")
            )?;
            let moved: Vec<String> = entry
                .subtrees
                .iter()
                .filter(|subtree| subtree.a != subtree.b)
                .map(|subtree| format!("{} ~ {}", subtree.a, subtree.b))
                .collect();
            if !moved.is_empty() {
                writeln!(formatter, "{:>28}folders: {}", "", moved.join(", "))?;
            }
        }
        writeln!(
            formatter,
            "\nlevels (bharat-broder-1999): 1 identical, 2 equivalent, 3 similar content under the same paths; 4 partial; 5 related content; mismatch; untested"
        )
    }
}
