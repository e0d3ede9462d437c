//! `mirrorscope eval`: quality against a ground-truth file.
//!
//! Reads a truth file in the format of `corpus/truth.tsv` (header
//! `url collection replica page`, tab-separated) and the current generation;
//! writes nothing. Parts: `page_pairs` (is a page grouped with its copies?),
//! `collections` (are copies of a collection in one similar cluster?) and
//! `mirrors` (are hosts holding copies of one collection found as mirrors?
//! see [`mirrors`]).
//!
//! **page_pairs.** Two URLs are copies when the truth gives them the same
//! collection and page. A found pair is two compared pages in one trivial
//! cluster. Precision: found pairs that are copies, over found pairs the
//! truth can judge (a pair is judged unless neither URL is in the truth: the
//! truth lists only replicated collections, so two identical soft-404 pages,
//! say, are neither right nor wrong). Recall: copies on different replicas
//! found in one cluster, over those whose text differs only by banners,
//! footers, link rewrites or small edits: at most 2 differing lines, or at
//! most 10% of their lines (Jaccard distance of the line sets). Recall is also
//! given for every level of difference, older versions included.
//!
//! **collections.** Two crawled pages belong together when the truth puts
//! them in copies of the same collection (any page of any copy); a found
//! pair is two pages in one similar cluster. Precision and recall as above,
//! pairs counted per cluster without being listed. Each truth collection is
//! matched with the cluster holding most of its pages; collections of two
//! pages or more in clusters that match no truth collection are cho-2000
//! §4's "problem collections".

mod avoid;
mod collections;
mod mirrors;

pub use avoid::AvoidScores;
pub use collections::{Break, CollectionScores, FoundCopy, ProblemCollection, TruthCollection};
pub use mirrors::{truth_pairs, MirrorScores, RankerScores};

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::generation::{Analysis, DataDir};
use crate::pages::{PageId, PageTable};
use crate::similarity::{is_compared, Fingerprint, Similarity};

/// Errors of `eval`.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {detail}")]
    Format { path: PathBuf, detail: String },
    #[error(transparent)]
    Data(#[from] crate::generation::DataError),
}

/// Runs `eval` on the current generation of `data`.
pub fn evaluate(data: &DataDir, truth_path: &Path) -> Result<EvalReport, EvalError> {
    let truth = Truth::read(truth_path)?;
    let Analysis {
        manifest,
        table,
        similarity,
        collections,
        mirrors,
        ..
    } = data.analysis()?;
    // Scored as `avoid` prints it, within its default budget.
    let list = crate::report::AvoidList::of(
        &manifest.generation,
        &table,
        &similarity,
        &collections,
        &mirrors,
    )
    .within_default(None);
    Ok(EvalReport {
        truth: truth_path.display().to_string(),
        truth_rows: truth.rows.len() as u64,
        truth_bad_lines: truth.bad_lines,
        page_pairs: page_pairs(&table, &similarity, &truth),
        collections: Some(collections::score(
            &table,
            &similarity,
            &collections,
            &truth,
        )),
        mirrors: Some(mirrors::score(&table, &mirrors, &truth)),
        avoid: Some(avoid::score(&table, &list, &truth)),
    })
}

/// What the truth says of one URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthRow {
    pub collection: String,
    pub replica: String,
    pub page: String,
}

/// A ground-truth file, read.
#[derive(Debug, Clone, Default)]
pub struct Truth {
    pub rows: HashMap<String, TruthRow>,
    /// Lines that could not be used (skipped with a warning).
    pub bad_lines: u64,
    /// The mirrored host pairs of a `mirrors.tsv` beside the truth file,
    /// where there is one ([`Truth::read_mirrors`]).
    pub mirror_pairs: Option<BTreeSet<(String, String)>>,
}

/// The header of a `mirrors.tsv` (the development crawls' format).
pub const MIRRORS_HEADER: [&str; 3] = ["host_a", "host_b", "relation"];

pub const TRUTH_HEADER: [&str; 4] = ["url", "collection", "replica", "page"];

/// A tab-separated file's first line must be `expected`.
fn check_header(line: Option<&str>, expected: &[&str], path: &Path) -> Result<(), EvalError> {
    let header: Vec<&str> = line.unwrap_or("").split('\t').collect();
    if header == expected {
        return Ok(());
    }
    Err(EvalError::Format {
        path: path.to_path_buf(),
        detail: format!(
            "line 1: the header must be `{}` (tab-separated)",
            expected.join(" ")
        ),
    })
}

impl Truth {
    /// Reads a truth file, and the `mirrors.tsv` beside it when there is one.
    pub fn read(path: &Path) -> Result<Truth, EvalError> {
        let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut truth = Truth::parse(&text, path)?;
        let mirrors = path.with_file_name("mirrors.tsv");
        if mirrors.is_file() {
            truth.read_mirrors(&mirrors)?;
        }
        Ok(truth)
    }

    /// Takes the mirrored host pairs from a `mirrors.tsv` (`host_a host_b
    /// relation`, a row for every pair of hosts serving one collection, as
    /// the development crawls write it). Without one, the hosts holding
    /// copies of one collection are its pairs; a crawl whose truth lists a
    /// page copied alone (a content farm's copy in its own template) says
    /// here that its host mirrors nothing. Bad lines are skipped, counted
    /// in `bad_lines`.
    pub fn read_mirrors(&mut self, path: &Path) -> Result<(), EvalError> {
        let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut lines = text.lines();
        check_header(lines.next(), &MIRRORS_HEADER, path)?;
        let mut pairs = BTreeSet::new();
        for (index, line) in lines.enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            match fields[..] {
                [a, b, _] if !a.is_empty() && !b.is_empty() && a != b => {
                    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
                    pairs.insert(if a <= b { (a, b) } else { (b, a) });
                }
                _ => {
                    tracing::warn!(
                        "{}: line {}: not two hosts and a relation, line skipped",
                        path.display(),
                        index + 2
                    );
                    self.bad_lines += 1;
                }
            }
        }
        self.mirror_pairs = Some(pairs);
        Ok(())
    }

    pub fn parse(text: &str, path: &Path) -> Result<Truth, EvalError> {
        let mut lines = text.lines();
        check_header(lines.next(), &TRUTH_HEADER, path)?;
        let mut truth = Truth::default();
        for (index, line) in lines.enumerate() {
            let number = index + 2;
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let problem = if fields.len() != 4 {
                Some(format!("{} fields instead of 4", fields.len()))
            } else if fields.iter().any(|field| field.trim().is_empty()) {
                Some("an empty field".to_string())
            } else {
                None
            };
            if let Some(problem) = problem {
                tracing::warn!("{}: line {number}: {problem}, line skipped", path.display());
                truth.bad_lines += 1;
                continue;
            }
            let url = crate::corpus::canonical_url_string(fields[0])
                .unwrap_or_else(|| fields[0].to_string());
            let row = TruthRow {
                collection: fields[1].to_string(),
                replica: fields[2].to_string(),
                page: fields[3].to_string(),
            };
            if truth.rows.insert(url, row).is_some() {
                tracing::warn!(
                    "{}: line {number}: URL listed twice, the last row kept",
                    path.display()
                );
            }
        }
        Ok(truth)
    }
}

/// How much two copies' texts differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Difference {
    /// The same lines.
    SameText,
    /// At most 2 lines differ, or at most 10% of them.
    SmallEdits,
    /// Up to 30% of the lines differ.
    Moderate,
    /// Up to 60%.
    Large,
    /// More.
    Different,
}

impl Difference {
    pub const ALL: [Difference; 5] = [
        Difference::SameText,
        Difference::SmallEdits,
        Difference::Moderate,
        Difference::Large,
        Difference::Different,
    ];

    /// Compares the sets of lines of two texts.
    pub fn between(first: &Fingerprint, second: &Fingerprint) -> Difference {
        let mut a = first.lines.clone();
        let mut b = second.lines.clone();
        a.sort_unstable();
        a.dedup();
        b.sort_unstable();
        b.dedup();
        let common = a
            .iter()
            .filter(|line| b.binary_search(line).is_ok())
            .count();
        let union = a.len() + b.len() - common;
        let differing = union - common;
        if differing == 0 {
            return Difference::SameText;
        }
        let distance = differing as f64 / union as f64;
        if differing <= 2 || distance <= 0.10 {
            Difference::SmallEdits
        } else if distance <= 0.30 {
            Difference::Moderate
        } else if distance <= 0.60 {
            Difference::Large
        } else {
            Difference::Different
        }
    }

    pub fn is_close(self) -> bool {
        self <= Difference::SmallEdits
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Difference::SameText => "same text",
            Difference::SmallEdits => "small edits (<= 2 lines or 10%)",
            Difference::Moderate => "moderate (<= 30% of lines)",
            Difference::Large => "large (<= 60% of lines)",
            Difference::Different => "different (> 60% of lines)",
        })
    }
}

/// Recall for one level of difference.
#[derive(Debug, Clone, Serialize)]
pub struct RecallRow {
    pub difference: Difference,
    pub pairs: u64,
    pub found: u64,
}

/// A wrongly grouped pair, for the reader to look at.
#[derive(Debug, Clone, Serialize)]
pub struct WrongPair {
    pub first: String,
    pub second: String,
}

/// The `page_pairs` part of `eval`.
#[derive(Debug, Clone, Serialize)]
pub struct PagePairs {
    /// `null` when no found pair could be judged.
    pub precision: Option<f64>,
    /// Over copies on different replicas whose text is the same or differs
    /// by small edits; `null` when the truth has no such pair here.
    pub recall: Option<f64>,
    /// Over all copies on different replicas, older versions included.
    pub recall_all_copies: Option<f64>,
    pub found_pairs: u64,
    pub correct_pairs: u64,
    pub wrong_pairs: u64,
    /// Found pairs of which neither page is in the truth (not judged).
    pub unjudged_pairs: u64,
    pub close_copy_pairs: u64,
    pub close_copy_pairs_found: u64,
    pub recall_by_difference: Vec<RecallRow>,
    /// Truth URLs that are not compared pages of the generation.
    pub truth_urls_missing: u64,
    /// Up to 10 wrong pairs.
    pub wrong_examples: Vec<WrongPair>,
    /// Up to 10 close copies that were not grouped.
    pub missed_examples: Vec<WrongPair>,
}

/// `None` when there is nothing to measure.
fn ratio(numerator: u64, denominator: u64) -> Option<f64> {
    (denominator > 0).then(|| numerator as f64 / denominator as f64)
}

fn shown(value: Option<f64>) -> String {
    value.map_or("n/a".to_string(), |value| format!("{value:.4}"))
}

/// Scores the trivial clusters against the truth.
pub fn page_pairs(table: &PageTable, similarity: &Similarity, truth: &Truth) -> PagePairs {
    let compared = |page: usize| is_compared(table, &similarity.fingerprints, page);
    // Truth key of each compared page.
    let mut key_of: Vec<Option<(&str, &str)>> = vec![None; table.pages.len()];
    let mut truth_urls_missing = 0;
    for (url, row) in &truth.rows {
        match table.find_url(url) {
            Some(page) if compared(page.0 as usize) => {
                key_of[page.0 as usize] = Some((row.collection.as_str(), row.page.as_str()));
            }
            _ => truth_urls_missing += 1,
        }
    }

    // Found pairs, counted per cluster without listing them.
    let mut members: HashMap<u32, Vec<usize>> = HashMap::new();
    for page in 0..table.pages.len() {
        if compared(page) {
            members
                .entry(similarity.trivial[page].0)
                .or_default()
                .push(page);
        }
    }
    let pairs_of = |count: u64| count * count.saturating_sub(1) / 2;
    let (mut found, mut correct, mut unjudged) = (0u64, 0u64, 0u64);
    let mut wrong_examples = Vec::new();
    let mut clusters: Vec<&Vec<usize>> = members.values().collect();
    clusters.sort();
    for pages in clusters {
        found += pairs_of(pages.len() as u64);
        let mut by_key: HashMap<Option<(&str, &str)>, u64> = HashMap::new();
        for &page in pages {
            *by_key.entry(key_of[page]).or_default() += 1;
        }
        for (key, count) in &by_key {
            if key.is_some() {
                correct += pairs_of(*count);
            } else {
                unjudged += pairs_of(*count);
            }
        }
        if wrong_examples.len() < 10 && by_key.len() > 1 && by_key.keys().any(Option::is_some) {
            // One example per wrong cluster: its first page with the first
            // page of another truth key.
            let first = pages[0];
            if let Some(&second) = pages.iter().find(|&&other| key_of[other] != key_of[first]) {
                wrong_examples.push(WrongPair {
                    first: table.pages[first].url.to_string(),
                    second: table.pages[second].url.to_string(),
                });
            }
        }
    }
    let wrong = found - correct - unjudged;

    // Recall over the truth's pairs of copies on different replicas.
    let mut groups: HashMap<(&str, &str), Vec<(usize, &str)>> = HashMap::new();
    for (url, row) in &truth.rows {
        if let Some(page) = table.find_url(url) {
            if compared(page.0 as usize) {
                groups
                    .entry((row.collection.as_str(), row.page.as_str()))
                    .or_default()
                    .push((page.0 as usize, row.replica.as_str()));
            }
        }
    }
    let mut rows: Vec<RecallRow> = Difference::ALL
        .iter()
        .map(|&difference| RecallRow {
            difference,
            pairs: 0,
            found: 0,
        })
        .collect();
    let mut missed_examples = Vec::new();
    let mut group_list: Vec<Vec<(usize, &str)>> = groups.into_values().collect();
    for group in &mut group_list {
        group.sort_unstable();
    }
    group_list.sort();
    for group in &group_list {
        for (index, &(first, first_replica)) in group.iter().enumerate() {
            for &(second, second_replica) in &group[index + 1..] {
                if first_replica == second_replica {
                    continue;
                }
                let (Some(a), Some(b)) = (
                    similarity.fingerprints[first].as_ref(),
                    similarity.fingerprints[second].as_ref(),
                ) else {
                    continue;
                };
                let difference = Difference::between(a, b);
                let row = &mut rows[difference as usize];
                row.pairs += 1;
                if similarity.cluster_of(PageId(first as u32))
                    == similarity.cluster_of(PageId(second as u32))
                {
                    row.found += 1;
                } else if difference.is_close() && missed_examples.len() < 10 {
                    missed_examples.push(WrongPair {
                        first: table.pages[first].url.to_string(),
                        second: table.pages[second].url.to_string(),
                    });
                }
            }
        }
    }
    let close: (u64, u64) = rows
        .iter()
        .filter(|row| row.difference.is_close())
        .fold((0, 0), |(pairs, found), row| {
            (pairs + row.pairs, found + row.found)
        });
    let all: (u64, u64) = rows.iter().fold((0, 0), |(pairs, found), row| {
        (pairs + row.pairs, found + row.found)
    });
    PagePairs {
        precision: ratio(correct, correct + wrong),
        recall: ratio(close.1, close.0),
        recall_all_copies: ratio(all.1, all.0),
        found_pairs: found,
        correct_pairs: correct,
        wrong_pairs: wrong,
        unjudged_pairs: unjudged,
        close_copy_pairs: close.0,
        close_copy_pairs_found: close.1,
        recall_by_difference: rows,
        truth_urls_missing,
        wrong_examples,
        missed_examples,
    }
}

/// The answer of `eval`.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub truth: String,
    pub truth_rows: u64,
    pub truth_bad_lines: u64,
    pub page_pairs: PagePairs,
    pub collections: Option<CollectionScores>,
    pub mirrors: Option<MirrorScores>,
    pub avoid: Option<AvoidScores>,
}

impl fmt::Display for EvalReport {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            formatter,
            "truth {}: {} rows ({} lines skipped)",
            self.truth, self.truth_rows, self.truth_bad_lines
        )?;
        let pairs = &self.page_pairs;
        writeln!(
            formatter,
            "\npage pairs (trivial clusters against the truth)"
        )?;
        writeln!(
            formatter,
            "  precision {}  ({} right, {} wrong of {} found pairs; {} pairs outside the truth not judged)",
            shown(pairs.precision), pairs.correct_pairs, pairs.wrong_pairs, pairs.found_pairs, pairs.unjudged_pairs
        )?;
        writeln!(
            formatter,
            "  recall    {}  ({} of {} pairs of copies on different replicas with the same text or small edits)",
            shown(pairs.recall), pairs.close_copy_pairs_found, pairs.close_copy_pairs
        )?;
        writeln!(
            formatter,
            "  recall over all pairs of copies, older versions included: {}",
            shown(pairs.recall_all_copies)
        )?;
        writeln!(
            formatter,
            "\n  {:<34} {:>7} {:>7} {:>7}",
            "texts differ", "pairs", "found", "recall"
        )?;
        for row in &pairs.recall_by_difference {
            writeln!(
                formatter,
                "  {:<34} {:>7} {:>7} {:>7}",
                row.difference.to_string(),
                row.pairs,
                row.found,
                ratio(row.found, row.pairs)
                    .map_or("n/a".to_string(), |value| format!("{value:.3}"))
            )?;
        }
        if pairs.truth_urls_missing > 0 {
            writeln!(
                formatter,
                "\n  {} truth URLs are not compared pages of this generation (not crawled, not answered 200, or without text)",
                pairs.truth_urls_missing
            )?;
        }
        if !pairs.wrong_examples.is_empty() {
            writeln!(formatter, "\n  wrongly grouped, for example:")?;
            for example in &pairs.wrong_examples {
                writeln!(formatter, "    {}  ~  {}", example.first, example.second)?;
            }
        }
        if !pairs.missed_examples.is_empty() {
            writeln!(formatter, "\n  close copies not grouped, for example:")?;
            for example in &pairs.missed_examples {
                writeln!(formatter, "    {}  ~  {}", example.first, example.second)?;
            }
        }
        if let Some(collections) = &self.collections {
            write!(formatter, "{collections}")?;
        }
        if let Some(mirrors) = &self.mirrors {
            write!(formatter, "{mirrors}")?;
        }
        if let Some(avoid) = &self.avoid {
            write!(formatter, "{avoid}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
