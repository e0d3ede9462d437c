//! Mirrored hosts: which hosts hold the same documents under the same paths
//! (bharat-broder-1999, bharat-broder-dean-henzinger-2000, fetterly-2004 §2).
//!
//! Reads the page table (URLs, IP addresses, links), the similarity stage's
//! fingerprints and trivial clusters; writes, into the generation,
//! [`Mirrors`]: one ranking of host pairs per [`Ranker`], the `combined`
//! ranking, and the classification of every ranked pair into the levels of
//! bharat-broder-1999 §2 (Table 1 of §3.2).
//!
//! Two stages, as in the papers:
//! - **ranking** (Stage I): cheap evidence, mostly URL strings, lists likely
//!   pairs in order: candidate detection by positional word bigrams
//!   ([`candidates`], bharat-broder-1999 §3.1, ranker `bigrams`), the rankers
//!   of bharat-2000 §3 (`ip4`, `ip3`, `hosts`, `paths`, `prefix`, `shingles`,
//!   `conn`, `hconn1`, `hconn2`), the cluster-based method of fetterly-2004 §2
//!   (`clusters`), and `combined`, the union of several rankings ordered by
//!   how many list a pair, ties by its best rank (bharat-2000 §4.2.2);
//! - **classification** (Stage II, [`classify`]): root pages and sampled paths
//!   of each side looked up on the other side, in the crawl instead of on the
//!   live web, compared by their fingerprints, and the pair given a level.
//!
//! Hosts with fewer than [`MirrorsConfig::min_urls`] URLs in the crawl are
//! left out of every ranking, as the papers do (they used 100 URLs on a crawl
//! of 179 million).

pub mod candidates;
mod classify;
mod clusters;
mod conn;
mod copies;
mod hosts;
mod ip;
mod terms;

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::collections::{ClusterKind, CollectionId, Collections};
use crate::fingerprint::Fingerprints;
use crate::pages::{HostId, PageTable};
use crate::similarity::Similarity;

pub use classify::{level_of, same_name_renamed, Outcome, PathTest};
pub use hosts::split_url;

/// A way of listing likely mirrored host pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ranker {
    /// bharat-broder-1999 §3.1: sampled paths, positional word bigrams and
    /// host bigrams, IDF-weighted.
    Bigrams,
    /// bharat-2000 §3.1: the same IP address.
    Ip4,
    /// bharat-2000 §3.1: the same first three octets.
    Ip3,
    /// bharat-2000 §3.2.1: host name substrings.
    Hosts,
    /// bharat-2000 §3.2.2: whole paths.
    Paths,
    /// bharat-2000 §3.2.3: path prefixes.
    Prefix,
    /// bharat-2000 §3.2.4: positional word bigrams of paths.
    Shingles,
    /// bharat-2000 §3.3: `paths` filtered by out-link agreement.
    Conn,
    /// bharat-2000 §3.4: out-edges in the host graph.
    Hconn1,
    /// bharat-2000 §3.4: `hconn1` with an IDF factor.
    Hconn2,
    /// fetterly-2004 §2: pages in the same near-duplicate clusters,
    /// confirmed by URL suffixes.
    Clusters,
    /// cho-2000 §5.1: copies of one replicated collection.
    Collections,
    /// bharat-2000 §4.2.2: the union of several rankings.
    Combined,
}

impl Ranker {
    pub const ALL: [Ranker; 13] = [
        Ranker::Bigrams,
        Ranker::Ip4,
        Ranker::Ip3,
        Ranker::Hosts,
        Ranker::Paths,
        Ranker::Prefix,
        Ranker::Shingles,
        Ranker::Conn,
        Ranker::Hconn1,
        Ranker::Hconn2,
        Ranker::Clusters,
        Ranker::Collections,
        Ranker::Combined,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Ranker::Bigrams => "bigrams",
            Ranker::Ip4 => "ip4",
            Ranker::Ip3 => "ip3",
            Ranker::Hosts => "hosts",
            Ranker::Paths => "paths",
            Ranker::Prefix => "prefix",
            Ranker::Shingles => "shingles",
            Ranker::Conn => "conn",
            Ranker::Hconn1 => "hconn1",
            Ranker::Hconn2 => "hconn2",
            Ranker::Clusters => "clusters",
            Ranker::Collections => "collections",
            Ranker::Combined => "combined",
        }
    }

    /// The ranker of this name (as `--ranker` takes it).
    pub fn from_name(name: &str) -> Option<Ranker> {
        Ranker::ALL
            .into_iter()
            .find(|ranker| ranker.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for Ranker {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// How far two hosts mirror each other (bharat-broder-1999 §2, assigned by
/// the criteria of Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    /// Same structure, identical content.
    #[serde(rename = "1")]
    One,
    /// Same structure, equivalent content.
    #[serde(rename = "2")]
    Two,
    /// Same structure, similar content.
    #[serde(rename = "3")]
    Three,
    /// Structure partly replicated; where it is, content similar.
    #[serde(rename = "4")]
    Four,
    /// Same structure, related content.
    #[serde(rename = "5")]
    Five,
    #[serde(rename = "mismatch")]
    Mismatch,
    /// Nothing could be tested: no sampled page of either side was crawled.
    #[serde(rename = "untested")]
    Untested,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::One => "1",
            Level::Two => "2",
            Level::Three => "3",
            Level::Four => "4",
            Level::Five => "5",
            Level::Mismatch => "mismatch",
            Level::Untested => "untested",
        }
    }

    /// Levels 1 to 5: the hosts mirror each other to some degree.
    pub fn is_mirror(self) -> bool {
        matches!(
            self,
            Level::One | Level::Two | Level::Three | Level::Four | Level::Five
        )
    }

    /// What the level means, in a few words (bharat-broder-1999 §2).
    pub fn meaning(self) -> &'static str {
        match self {
            Level::One => "same structure, identical content",
            Level::Two => "same structure, equivalent content",
            Level::Three => "same structure, similar content",
            Level::Four => "partial structural match, similar content",
            Level::Five => "same structure, related content",
            Level::Mismatch => "not mirrors",
            Level::Untested => "no sampled page could be tested",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// Parameters of the mirrors stage. The papers' constants (feature weights,
/// the 20-host cut of candidate detection, conn's f, n and m, hconn's
/// in-degree steps, the IP pair caps) are fixed in the code where they are
/// used, each with its section.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct MirrorsConfig {
    /// Hosts with fewer URLs in the crawl are not considered. The papers
    /// used 100 on 179 million URLs, where smaller hosts were mostly
    /// misspellings; a documentation mirror crawled in part can have a few
    /// dozen pages, so the default is 20.
    pub min_urls: u32,
    /// Longest ranking kept per ranker, and so merged into `combined`
    /// (bharat-2000 tested the top 30,000 of each and merged the top
    /// 100,000).
    pub max_pairs: usize,
    /// A term of the term-vector rankers (`hosts`, `paths`, `prefix`,
    /// `shingles`) found on this many hosts or more is rejected
    /// (bharat-2000 §3.2: 100); see `max_term_host_share`.
    pub max_term_hosts: u32,
    /// ... and so is a term on more than this share of the considered hosts
    /// (and on 5 hosts at least): on a crawl of a few dozen hosts, a term such as
    /// `/` or `/robots.txt` is on every one of them and says nothing, though
    /// far fewer than 100 hosts hold it.
    pub max_term_host_share: f64,
    /// Resemblance from which two pages are highly similar
    /// (bharat-broder-1999 §3.2: 50%).
    pub high_similarity: f64,
    /// Paths sampled per host for classification, besides the root
    /// (bharat-broder-1999 §3.2: 9, for 19 tests a pair).
    pub sampled_paths: usize,
    /// Pages each host of a pair must have in clusters with a member on the
    /// other, and pages confirmed by URL suffix (fetterly-2004 §2: 10).
    pub cluster_pages: u32,
    /// The rankings `combined` merges. bharat-2000 combined ip4, prefix,
    /// hconn2, paths and hosts; those see only URLs and links and cannot
    /// find a copy under another path, so `clusters`, which looks at the
    /// pages, and `collections`, which knows the copies of each replicated
    /// collection (on hosts of any size), join them by default.
    pub combined: Vec<Ranker>,
}

impl Default for MirrorsConfig {
    fn default() -> Self {
        MirrorsConfig {
            min_urls: 20,
            max_pairs: 30_000,
            max_term_hosts: 100,
            max_term_host_share: 0.5,
            high_similarity: 0.5,
            sampled_paths: 9,
            cluster_pages: 10,
            combined: vec![
                Ranker::Ip4,
                Ranker::Prefix,
                Ranker::Hconn2,
                Ranker::Paths,
                Ranker::Hosts,
                Ranker::Clusters,
                Ranker::Collections,
            ],
        }
    }
}

impl MirrorsConfig {
    /// Why these values cannot be used, if they cannot.
    pub fn problem(&self) -> Option<String> {
        if self.max_pairs == 0 {
            return Some("mirrors.max_pairs must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.max_term_host_share) {
            return Some("mirrors.max_term_host_share must be from 0 to 1".into());
        }
        if !(self.high_similarity > 0.0 && self.high_similarity <= 1.0) {
            return Some("mirrors.high_similarity must be above 0 and at most 1".into());
        }
        if self.combined.is_empty() || self.combined.contains(&Ranker::Combined) {
            return Some(
                "mirrors.combined must name at least one ranker, and not `combined`".into(),
            );
        }
        None
    }

    /// The document frequency from which a term is rejected.
    fn term_df_limit(&self, hosts: usize) -> u32 {
        let share = (self.max_term_host_share * hosts as f64).floor() as u32 + 1;
        self.max_term_hosts.min(share.max(5))
    }
}

/// A pair of hosts, the smaller id first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct HostPair {
    pub a: HostId,
    pub b: HostId,
}

impl HostPair {
    pub fn new(first: HostId, second: HostId) -> HostPair {
        if first <= second {
            HostPair {
                a: first,
                b: second,
            }
        } else {
            HostPair {
                a: second,
                b: first,
            }
        }
    }

    pub fn other(&self, host: HostId) -> HostId {
        if self.a == host {
            self.b
        } else {
            self.a
        }
    }
}

/// One place in a ranking.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ranked {
    pub pair: HostPair,
    /// The ranker's own score: higher is likelier (for `combined`, the share
    /// of the merged rankings that list the pair).
    pub score: f64,
}

/// One ranker's list, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    pub ranker: Ranker,
    pub pairs: Vec<Ranked>,
}

/// A folder of one host mirrored under another folder of the other
/// (fetterly-2004 §2's detached subtrees): `a` on the pair's first host,
/// `b` on its second. A pair of whole hosts is `/` and `/`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Subtree {
    pub a: String,
    pub b: String,
    /// Pages whose URLs end the same way under the two folders.
    pub pages: u32,
}

impl Subtree {
    /// Subtrees from pages counted by pair of folders, most pages first,
    /// then by folder.
    fn ranked<'a>(counts: impl Iterator<Item = (&'a (String, String), &'a u32)>) -> Vec<Subtree> {
        let mut subtrees: Vec<Subtree> = counts
            .map(|((a, b), pages)| Subtree {
                a: a.clone(),
                b: b.clone(),
                pages: *pages,
            })
            .collect();
        subtrees.sort_by(|x, y| {
            y.pages
                .cmp(&x.pages)
                .then(x.a.cmp(&y.a))
                .then(x.b.cmp(&y.b))
        });
        subtrees
    }
}

/// Everything known of one ranked pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairReport {
    pub pair: HostPair,
    pub level: Level,
    /// The rankers listing the pair (`combined` not included), and where.
    pub ranks: Vec<(Ranker, u32)>,
    /// The folders tested against each other.
    pub subtrees: Vec<Subtree>,
    /// The tests of Stage II, in the order they were made.
    pub tests: Vec<PathTest>,
    /// An IP address both hosts were crawled from.
    pub shared_ip: Option<String>,
    /// Pages of the two hosts in near-duplicate clusters with a member on
    /// the other host (fetterly-2004 §2), first host then second.
    pub clustered_pages: (u32, u32),
}

impl PairReport {
    /// Whether the pair is two names of one server ([`Mirrors::aliases`]).
    pub fn is_alias(&self) -> bool {
        self.shared_ip.is_some()
            && matches!(
                self.level,
                Level::One | Level::Two | Level::Three | Level::Four
            )
            && self.subtrees.iter().all(|subtree| subtree.a == subtree.b)
    }
}

/// Counts shown by `index` and kept in the manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MirrorCounts {
    /// Hosts with at least `min_urls` URLs.
    pub hosts_considered: u64,
    /// Distinct pairs in any ranking.
    pub ranked_pairs: u64,
    /// Of them, classified at levels 1 to 5.
    pub mirrored_pairs: u64,
    /// Pairs per level, in level order.
    pub levels: Vec<(Level, u64)>,
}

/// How one copy of a replicated collection mirrors the cluster's principal
/// copy: Stage II run on the two copies' folders only, so that a host
/// holding other things besides (a mirror of several collections) does not
/// hide how faithful this copy is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopyLevel {
    pub collection: CollectionId,
    pub principal: CollectionId,
    pub level: Level,
    pub tests: Vec<PathTest>,
}

/// The mirrors stage's output, stored in the generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mirrors {
    pub config: MirrorsConfig,
    pub rankings: Vec<Ranking>,
    /// Every pair of any ranking, sorted by pair.
    pub pairs: Vec<PairReport>,
    /// Every copy of a replicated collection on another host than its
    /// principal copy, sorted by collection.
    pub copies: Vec<CopyLevel>,
    /// URLs (distinct paths) of every host, by host id: a host is
    /// considered when it has `config.min_urls`.
    pub host_urls: Vec<u32>,
    pub counts: MirrorCounts,
}

/// Runs every ranker, merges them, classifies every ranked pair, and every
/// copy of a replicated collection against its principal copy.
pub fn analyse(
    table: &PageTable,
    similarity: &Similarity,
    collections: &Collections,
    config: &MirrorsConfig,
) -> Mirrors {
    analyse_with(table, similarity, collections, config, &[])
}

/// [`analyse_reading`] with the similarity's fingerprints held.
pub fn analyse_with(
    table: &PageTable,
    similarity: &Similarity,
    collections: &Collections,
    config: &MirrorsConfig,
    imported: &[Ranking],
) -> Mirrors {
    let held = (similarity, &similarity.fingerprints);
    match analyse_reading(table, held, collections, config, imported) {
        Ok(mirrors) => mirrors,
        Err(never) => match never {},
    }
}

/// [`analyse`], with the rankings of some rankers computed elsewhere (the
/// Spark jobs, read by `import-analysis`; see [`imported_ranking`]) in place
/// of their own, and the pages' fingerprints read from `prints` (the file
/// the pipeline wrote them to, the similarity holding none): only those of
/// the pages classification compares, and which pages have text. The
/// evidence classification reads of the `clusters` ranker (its pairs'
/// subtrees and clustered pages) is still gathered here. Fails only when
/// `prints` cannot be read.
pub fn analyse_reading<F: Fingerprints + Sync>(
    table: &PageTable,
    (similarity, prints): (&Similarity, &F),
    collections: &Collections,
    config: &MirrorsConfig,
    imported: &[Ranking],
) -> Result<Mirrors, F::Error> {
    let imported_pairs = |ranker: Ranker| {
        imported
            .iter()
            .find(|ranking| ranking.ranker == ranker)
            .map(|ranking| ranking.pairs.clone())
    };
    let web = hosts::Web::new(table, similarity, config);
    let bigrams = candidates::rank_hosts(&web.candidate_inputs());
    let paths = terms::paths(&web, config);
    let cluster_evidence = clusters::evidence(&web, config);
    let copy_evidence = copies::evidence(collections);
    // conn filters paths' ranking as far as it is kept (bharat-2000 §3.3).
    let conn = conn::filter(&web, &paths[..paths.len().min(config.max_pairs)]);
    let mut rankings: Vec<Ranking> = [
        (Ranker::Bigrams, bigrams),
        (Ranker::Ip4, ip::ip4(&web)),
        (Ranker::Ip3, ip::ip3(&web)),
        (Ranker::Hosts, terms::hosts(&web, config)),
        (Ranker::Conn, conn),
        (Ranker::Paths, paths),
        (
            Ranker::Prefix,
            imported_pairs(Ranker::Prefix).unwrap_or_else(|| terms::prefix(&web, config)),
        ),
        (Ranker::Shingles, terms::shingles(&web, config)),
        (Ranker::Hconn1, terms::hconn(&web, false)),
        (Ranker::Hconn2, terms::hconn(&web, true)),
        (
            Ranker::Clusters,
            imported_pairs(Ranker::Clusters).unwrap_or_else(|| cluster_evidence.ranking()),
        ),
        (Ranker::Collections, copy_evidence.ranking()),
    ]
    .into_iter()
    .map(|(ranker, pairs)| Ranking { ranker, pairs })
    .collect();
    for ranking in &mut rankings {
        ranking.pairs.truncate(config.max_pairs);
    }
    let combined = combine(&rankings, &config.combined);
    rankings.push(Ranking {
        ranker: Ranker::Combined,
        pairs: combined,
    });
    rankings.sort_by_key(|ranking| ranking.ranker);

    let mut ranks: HashMap<HostPair, Vec<(Ranker, u32)>> = HashMap::new();
    for ranking in &rankings {
        if ranking.ranker == Ranker::Combined {
            continue;
        }
        for (position, ranked) in ranking.pairs.iter().enumerate() {
            ranks
                .entry(ranked.pair)
                .or_default()
                .push((ranking.ranker, position as u32 + 1));
        }
    }
    let mut listed: Vec<(HostPair, Vec<(Ranker, u32)>)> = ranks.into_iter().collect();
    listed.sort_by_key(|(pair, _)| *pair);
    // The hosts of ranked pairs and of collection copies: those Stage II
    // samples paths of.
    let classified_hosts = listed.iter().flat_map(|(pair, _)| [pair.a, pair.b]).chain(
        collections
            .collections
            .iter()
            .map(|collection| collection.host),
    );
    let classifier = classify::Classifier::new(&web, config, classified_hosts, prints)?;
    let planned: Vec<_> = listed
        .into_iter()
        .map(|(pair, ranks)| {
            let subtrees = merge_subtrees(
                cluster_evidence.subtrees(pair),
                copy_evidence.subtrees(pair),
            );
            (pair, ranks, classifier.plan(pair, subtrees))
        })
        .collect();
    let planned_copies = plan_copy_levels(collections, &classifier);
    let compared = classify::Compared::read(
        prints,
        planned
            .iter()
            .map(|(_, _, planned)| planned)
            .chain(planned_copies.iter().map(|(_, _, planned)| planned))
            .flat_map(classify::Planned::pages)
            .collect(),
    )?;
    tracing::debug!(
        pages = compared.page_count(),
        "fingerprints read to classify"
    );
    let pairs: Vec<PairReport> = planned
        .into_iter()
        .map(|(pair, ranks, planned)| {
            let (level, tests, subtrees) = classifier.settle(planned, &compared);
            PairReport {
                pair,
                level,
                ranks,
                subtrees,
                tests,
                shared_ip: web.shared_ip(pair),
                clustered_pages: cluster_evidence.clustered_pages(pair),
            }
        })
        .collect();
    let counts = MirrorCounts {
        hosts_considered: web.hosts.len() as u64,
        ranked_pairs: pairs.len() as u64,
        mirrored_pairs: pairs
            .iter()
            .filter(|report| report.level.is_mirror())
            .count() as u64,
        levels: level_counts(&pairs),
    };
    let mut copies: Vec<CopyLevel> = planned_copies
        .into_iter()
        .map(|(collection, principal, planned)| {
            let (level, tests, _) = classifier.settle(planned, &compared);
            CopyLevel {
                collection,
                principal,
                level,
                tests,
            }
        })
        .collect();
    copies.sort_by_key(|copy| copy.collection);
    Ok(Mirrors {
        config: config.clone(),
        rankings,
        pairs,
        copies,
        host_urls: web.url_counts.clone(),
        counts,
    })
}

/// The folders a pair is compared under: those of shared near-duplicate
/// pages and those of shared collection copies, most pages first, at most
/// eight.
fn merge_subtrees(mut subtrees: Vec<Subtree>, more: Vec<Subtree>) -> Vec<Subtree> {
    for subtree in more {
        match subtrees
            .iter_mut()
            .find(|known| known.a == subtree.a && known.b == subtree.b)
        {
            Some(known) => known.pages = known.pages.max(subtree.pages),
            None => subtrees.push(subtree),
        }
    }
    subtrees.sort_by(|x, y| {
        y.pages
            .cmp(&x.pages)
            .then(x.a.cmp(&y.a))
            .then(x.b.cmp(&y.b))
    });
    subtrees.truncate(8);
    subtrees
}

/// Plans the classification of each copy of a collection cluster against
/// its principal copy, on their folders (every host counts here, however
/// few its URLs): (the copy, its principal, the tests planned).
fn plan_copy_levels(
    collections: &Collections,
    classifier: &classify::Classifier<'_, '_>,
) -> Vec<(CollectionId, CollectionId, classify::Planned)> {
    let folder =
        |prefix: &str| split_url(prefix).map_or("/".to_string(), |(_, path)| path.to_string());
    let mut copies = Vec::new();
    for cluster in collections
        .clusters
        .iter()
        .filter(|cluster| cluster.kind == ClusterKind::Collection)
    {
        let Some(principal) = collections.collection(cluster.principal()) else {
            continue;
        };
        for &id in &cluster.collections {
            let Some(copy) = collections.collection(id) else {
                continue;
            };
            if copy.host == principal.host {
                continue;
            }
            let pair = HostPair::new(principal.host, copy.host);
            let (on_a, on_b) = if pair.a == principal.host {
                (&principal.prefix, &copy.prefix)
            } else {
                (&copy.prefix, &principal.prefix)
            };
            let subtree = Subtree {
                a: folder(on_a),
                b: folder(on_b),
                pages: 0,
            };
            copies.push((id, principal.id, classifier.plan(pair, vec![subtree])));
        }
    }
    copies
}

fn level_counts(pairs: &[PairReport]) -> Vec<(Level, u64)> {
    let mut counts: Vec<(Level, u64)> = Vec::new();
    for report in pairs {
        match counts.iter_mut().find(|(level, _)| *level == report.level) {
            Some((_, count)) => *count += 1,
            None => counts.push((report.level, 1)),
        }
    }
    counts.sort();
    counts
}

/// bharat-2000 §4.2.2: the union of the rankings, ordered by how many list a
/// pair, ties broken by its best (lowest) rank in any of them, then by pair.
pub fn combine(rankings: &[Ranking], members: &[Ranker]) -> Vec<Ranked> {
    let mut found: HashMap<HostPair, (u32, usize)> = HashMap::new();
    let mut merged = 0u32;
    for ranking in rankings
        .iter()
        .filter(|ranking| members.contains(&ranking.ranker))
    {
        merged += 1;
        for (position, ranked) in ranking.pairs.iter().enumerate() {
            let entry = found.entry(ranked.pair).or_insert((0, usize::MAX));
            entry.0 += 1;
            entry.1 = entry.1.min(position);
        }
    }
    let mut pairs: Vec<(HostPair, u32, usize)> = found
        .into_iter()
        .map(|(pair, (count, best))| (pair, count, best))
        .collect();
    pairs.sort_by(|x, y| y.1.cmp(&x.1).then(x.2.cmp(&y.2)).then(x.0.cmp(&y.0)));
    pairs
        .into_iter()
        .map(|(pair, count, _)| Ranked {
            pair,
            score: f64::from(count) / f64::from(merged.max(1)),
        })
        .collect()
}

/// Sorts scored pairs best first (ties by pair, so the order is the same on
/// every run) and drops pairs without a positive score.
/// A ranking as read from elsewhere (the Spark jobs' tables).
#[derive(Debug, Clone, PartialEq)]
pub struct RankingRows {
    pub ranker: Ranker,
    /// (host id, host id, score), in any order.
    pub rows: Vec<(u64, u64, f64)>,
}

/// A ranking computed elsewhere, over `hosts` hosts: in the order every
/// ranking has (highest score first, then by pair). Says what is wrong when
/// it cannot be a ranking of these hosts: a host id out of range, a host
/// paired with itself, a pair listed twice, a score that is not a positive
/// number.
pub fn imported_ranking(read: &RankingRows, hosts: usize) -> Result<Ranking, String> {
    let mut scores: HashMap<HostPair, f64> = HashMap::new();
    for &(first, second, score) in &read.rows {
        let host = |id: u64| {
            u32::try_from(id)
                .ok()
                .filter(|&id| (id as usize) < hosts)
                .map(HostId)
                .ok_or_else(|| format!("host {id} is not one of the generation's {hosts} hosts"))
        };
        let (first, second) = (host(first)?, host(second)?);
        if first == second {
            return Err(format!("host {} is paired with itself", first.0));
        }
        if !(score.is_finite() && score > 0.0) {
            return Err(format!(
                "hosts {} and {}: the score {score} is not a positive number",
                first.0, second.0
            ));
        }
        if scores.insert(HostPair::new(first, second), score).is_some() {
            return Err(format!(
                "hosts {} and {} are listed twice",
                first.0, second.0
            ));
        }
    }
    Ok(Ranking {
        ranker: read.ranker,
        pairs: ranked(scores),
    })
}

fn ranked(scores: HashMap<HostPair, f64>) -> Vec<Ranked> {
    let mut pairs: Vec<Ranked> = scores
        .into_iter()
        .filter(|(_, score)| *score > 0.0)
        .map(|(pair, score)| Ranked { pair, score })
        .collect();
    pairs.sort_by(|x, y| y.score.total_cmp(&x.score).then(x.pair.cmp(&y.pair)));
    pairs
}

impl Mirrors {
    /// Why this cannot be the mirrors of a table of `hosts` hosts, if it
    /// cannot.
    pub fn problem(&self, hosts: usize) -> Option<String> {
        let bad = |pair: &HostPair| pair.a.0 as usize >= hosts || pair.b.0 as usize >= hosts;
        if self.pairs.iter().any(|report| bad(&report.pair))
            || self
                .rankings
                .iter()
                .any(|ranking| ranking.pairs.iter().any(|ranked| bad(&ranked.pair)))
        {
            return Some(format!(
                "a host pair names a host beyond the {hosts} of the page table"
            ));
        }
        None
    }

    /// How a copy of a collection mirrors its principal copy.
    pub fn copy_level(&self, collection: CollectionId) -> Option<&CopyLevel> {
        self.copies
            .binary_search_by_key(&collection, |copy| copy.collection)
            .ok()
            .map(|index| &self.copies[index])
    }

    /// Whether a host had enough URLs to be ranked.
    pub fn is_considered(&self, host: HostId) -> bool {
        self.host_urls
            .get(host.0 as usize)
            .is_some_and(|urls| *urls >= self.config.min_urls && *urls > 0)
    }

    pub fn ranking(&self, ranker: Ranker) -> Option<&Ranking> {
        self.rankings
            .iter()
            .find(|ranking| ranking.ranker == ranker)
    }

    /// What is known of a ranked pair.
    pub fn pair(&self, first: HostId, second: HostId) -> Option<&PairReport> {
        let pair = HostPair::new(first, second);
        self.pairs
            .binary_search_by(|report| report.pair.cmp(&pair))
            .ok()
            .map(|index| &self.pairs[index])
    }

    /// Host aliases: two names of one server, crawled from one address, the
    /// mirrors stage finding copies under the same paths (levels 1 to 4,
    /// every subtree at the same path on both).
    pub fn aliases(&self) -> Vec<(HostId, HostId)> {
        self.pairs
            .iter()
            .filter(|report| report.is_alias())
            .map(|report| (report.pair.a, report.pair.b))
            .collect()
    }

    /// Whether `first` and `second` are two names of one server
    /// ([`Mirrors::aliases`]).
    pub fn are_aliases(&self, first: HostId, second: HostId) -> bool {
        first != second && self.pair(first, second).is_some_and(PairReport::is_alias)
    }

    /// The ranked pairs of one host: mirrors first (by level), then the rest.
    pub fn of_host(&self, host: HostId) -> Vec<&PairReport> {
        let mut reports: Vec<&PairReport> = self
            .pairs
            .iter()
            .filter(|report| report.pair.a == host || report.pair.b == host)
            .collect();
        reports.sort_by_key(|report| {
            (
                report.level,
                std::cmp::Reverse(report.ranks.len()),
                report.pair,
            )
        });
        reports
    }
}

#[cfg(test)]
mod tests;
