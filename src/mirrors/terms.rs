//! The term-vector rankers of bharat-2000: `hosts`, `paths`, `prefix`,
//! `shingles` (§3.2) and `hconn1`, `hconn2` (§3.4).
//!
//! Each host is a vector of terms; a pair's score is the dot product of the
//! two weighted vectors (a term's component is its weight, whatever its
//! frequency on the host: "many hosts tend to be poorly sampled"), times a
//! size normalisation for `prefix` and `shingles`. Terms on too many hosts
//! are rejected (see [`MirrorsConfig::max_term_hosts`]); a term on more than
//! 25 hosts enters the vectors of 25 of them only, chosen at random (here by
//! a fixed hash). Logarithms are base 10.

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64;

use super::hosts::{HostData, Web};
use super::{ranked, HostPair, MirrorsConfig, Ranked};

/// A term on more hosts than this enters only this many vectors.
const RESTRICTED_HOSTS: u32 = 25;

/// `hosts` (§3.2.1): the substrings of the host name between dots (or, for
/// an address, its first two, three and four octets), weighted
/// `log(len) / (1 + log(df))`, len being the term's number of parts.
pub fn hosts(web: &Web<'_>, config: &MirrorsConfig) -> Vec<Ranked> {
    let vectors: Vec<Vec<String>> = web
        .hosts
        .iter()
        .map(|host| host_terms(&host.name))
        .collect();
    let parts: HashMap<u64, usize> = vectors
        .iter()
        .flatten()
        .map(|term| (xxh3_64(term.as_bytes()), term.split('.').count()))
        .collect();
    let hashed = hash_all(&vectors);
    match_terms(
        web,
        hashed,
        config.term_df_limit(web.hosts.len()),
        |term, df, _| {
            let length = parts.get(&term).copied().unwrap_or(1) as f64;
            length.log10() / (1.0 + f64::from(df).log10())
        },
        |_, _| 1.0,
    )
}

/// The terms of a host name for `hosts`.
pub fn host_terms(name: &str) -> Vec<String> {
    let parts: Vec<&str> = name.split('.').filter(|part| !part.is_empty()).collect();
    let is_address = parts.len() == 4 && parts.iter().all(|part| part.parse::<u8>().is_ok());
    if is_address {
        return (2..=4).map(|count| parts[..count].join(".")).collect();
    }
    let mut terms = Vec::new();
    for start in 0..parts.len() {
        for end in start + 1..=parts.len() {
            terms.push(parts[start..end].join("."));
        }
    }
    terms
}

/// `paths` (§3.2.2): each whole path is a term, weighted
/// `1 + log(maxdf / df)`.
pub fn paths(web: &Web<'_>, config: &MirrorsConfig) -> Vec<Ranked> {
    let vectors: Vec<Vec<u64>> = web
        .hosts
        .iter()
        .map(|host| {
            host.paths
                .iter()
                .map(|path| xxh3_64(path.as_bytes()))
                .collect()
        })
        .collect();
    let limit = config.term_df_limit(web.hosts.len());
    match_terms(web, vectors, limit, idf_weight, |_, _| 1.0)
}

/// `prefix` (§3.2.3): the prefixes of paths that end in `/` or end the
/// path, the `10 log p` most frequent of each host; weighted as `paths`,
/// and the pair's score multiplied by `1 / (0.1 + 0.15 (log n1 + log n2))`.
pub fn prefix(web: &Web<'_>, config: &MirrorsConfig) -> Vec<Ranked> {
    let vectors: Vec<Vec<u64>> = web
        .hosts
        .iter()
        .map(|host| most_frequent(host, host.paths.iter().flat_map(|path| path_prefixes(path))))
        .collect();
    let limit = config.term_df_limit(web.hosts.len());
    match_terms(web, vectors, limit, idf_weight, size_factor)
}

/// `shingles` (§3.2.4): positional word bigrams of the paths (no stop
/// terms), selected, weighted and normalised as `prefix`. Paths are cut at
/// `/` and `.` as the paper says, and also at the `?`, `&`, `=` and `;` of
/// a query, which are separators of the same kind.
pub fn shingles(web: &Web<'_>, config: &MirrorsConfig) -> Vec<Ranked> {
    let vectors: Vec<Vec<u64>> = web
        .hosts
        .iter()
        .map(|host| {
            most_frequent(
                host,
                host.paths.iter().flat_map(|path| positional_bigrams(path)),
            )
        })
        .collect();
    let limit = config.term_df_limit(web.hosts.len());
    match_terms(web, vectors, limit, idf_weight, size_factor)
}

/// The prefixes of a path for `prefix`: `/a/b.html` gives `/`, `/a/` and
/// `/a/b.html`.
pub fn path_prefixes(path: &str) -> Vec<String> {
    let mut prefixes: Vec<String> = path
        .match_indices('/')
        .map(|(at, _)| path[..=at].to_string())
        .collect();
    if !path.ends_with('/') {
        prefixes.push(path.to_string());
    }
    prefixes
}

/// bharat-2000 §3.2.4's positional word bigrams: the path cut at `/` and
/// `.`, words normalised (digit runs as `*`), every stop word kept.
pub fn positional_bigrams(path: &str) -> Vec<String> {
    let words = super::candidates::terms(path);
    words
        .windows(2)
        .enumerate()
        .map(|(position, pair)| format!("{}_{}_{}", pair[0], pair[1], position))
        .collect()
}

/// `hconn1` and `hconn2` (§3.4): each host's out-edges in the host graph
/// (a link from a page of A to a page of B makes an edge A -> B weighted by
/// the number of such links), the `10 log p` heaviest kept; the hosts
/// pointed to are the terms, weighted 1 up to in-degree 25, `25 / in` up to
/// 125 and `min(1/5, 200 / in)` beyond; `hconn2` multiplies that by
/// `1 + log(maxin / in)`. Only links between crawled pages are known to the
/// page table, so hosts the crawl did not visit are not nodes. A pair's
/// score is the sum of its shared targets' squared weights; a target on
/// more than 25 hosts is shared by a random 25 (or `min(200, in / 5)`) of
/// them only, which the paper used to approximate these weights and which
/// here bounds the work.
pub fn hconn(web: &Web<'_>, with_idf: bool) -> Vec<Ranked> {
    let table = web.table;
    let vectors: Vec<Vec<u64>> = web
        .hosts
        .iter()
        .map(|host| {
            let mut edges: HashMap<u32, u64> = HashMap::new();
            for page in &host.pages {
                let Some(page) = table.page(*page) else {
                    continue;
                };
                for target in &page.outlinks {
                    let Some(target) = table.page(*target) else {
                        continue;
                    };
                    if target.host != host.id {
                        *edges.entry(target.host.0).or_default() += 1;
                    }
                }
            }
            let mut edges: Vec<(u32, u64)> = edges.into_iter().collect();
            edges.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
            edges.truncate(selected_terms(host));
            edges
                .into_iter()
                .map(|(target, _)| u64::from(target))
                .collect()
        })
        .collect();
    let mut indegree: HashMap<u64, u32> = HashMap::new();
    for vector in &vectors {
        for target in vector {
            *indegree.entry(*target).or_default() += 1;
        }
    }
    let max_in = indegree.values().copied().max().unwrap_or(1);
    let mut scores: HashMap<HostPair, f64> = HashMap::new();
    let mut holders: HashMap<u64, Vec<usize>> = HashMap::new();
    for (index, vector) in vectors.iter().enumerate() {
        for target in vector {
            holders.entry(*target).or_default().push(index);
        }
    }
    let mut holders: Vec<(u64, Vec<usize>)> = holders.into_iter().collect();
    holders.sort_unstable();
    for (target, mut hosts) in holders {
        let degree = indegree[&target];
        let mut weight = hconn_weight(degree);
        if with_idf {
            weight *= 1.0 + (f64::from(max_in) / f64::from(degree)).log10();
        }
        // The paper's way of applying these weights cheaply, kept to bound
        // the pairs a popular target makes: it enters the vectors of 25
        // hosts (in-degree up to 125) or min(200, in / 5) beyond, chosen at
        // random (by a fixed hash).
        let cap = if degree <= 125 {
            25
        } else {
            (degree / 5).min(200)
        } as usize;
        if hosts.len() > cap {
            hosts.sort_by_key(|host| {
                xxh3_64(&[target.to_le_bytes(), (*host as u64).to_le_bytes()].concat())
            });
            hosts.truncate(cap);
            hosts.sort_unstable();
        }
        for (position, &first) in hosts.iter().enumerate() {
            for &second in &hosts[position + 1..] {
                *scores
                    .entry(HostPair::new(web.hosts[first].id, web.hosts[second].id))
                    .or_default() += weight * weight;
            }
        }
    }
    ranked(scores)
}

/// hconn1's weight of a host pointed to by `indegree` hosts.
pub fn hconn_weight(indegree: u32) -> f64 {
    let degree = f64::from(indegree.max(1));
    if indegree <= 25 {
        1.0
    } else if indegree <= 125 {
        25.0 / degree
    } else {
        (1.0 / 5.0f64).min(200.0 / degree)
    }
}

fn idf_weight(_term: u64, df: u32, max_df: u32) -> f64 {
    1.0 + (f64::from(max_df) / f64::from(df)).log10()
}

/// prefix's and shingles' `1 / (0.1 + 0.15 (log n1 + log n2))`.
fn size_factor(first: &HostData, second: &HostData) -> f64 {
    let log = |host: &HostData| (host.url_count().max(1) as f64).log10();
    1.0 / (0.1 + 0.15 * (log(first) + log(second)))
}

/// How many terms a host of p URLs keeps: `10 log p`, at least 1.
fn selected_terms(host: &HostData) -> usize {
    ((10.0 * (host.url_count().max(1) as f64).log10()).round() as usize).max(1)
}

/// The host's `10 log p` most frequent terms (ties by the term), hashed.
fn most_frequent(host: &HostData, terms: impl Iterator<Item = String>) -> Vec<u64> {
    let mut frequency: HashMap<String, u32> = HashMap::new();
    for term in terms {
        *frequency.entry(term).or_default() += 1;
    }
    let mut terms: Vec<(String, u32)> = frequency.into_iter().collect();
    terms.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    terms.truncate(selected_terms(host));
    terms
        .into_iter()
        .map(|(term, _)| xxh3_64(term.as_bytes()))
        .collect()
}

fn hash_all(vectors: &[Vec<String>]) -> Vec<Vec<u64>> {
    vectors
        .iter()
        .map(|terms| terms.iter().map(|term| xxh3_64(term.as_bytes())).collect())
        .collect()
}

/// Scores every pair of hosts sharing a term: Σ weight², times
/// `normalise(first, second)`. `weight(term, df, maxdf)`; terms on `limit`
/// hosts or more are rejected.
fn match_terms(
    web: &Web<'_>,
    vectors: Vec<Vec<u64>>,
    limit: u32,
    weight: impl Fn(u64, u32, u32) -> f64,
    normalise: impl Fn(&HostData, &HostData) -> f64,
) -> Vec<Ranked> {
    let mut tuples: Vec<(u64, u32)> = vectors
        .into_iter()
        .enumerate()
        .flat_map(|(host, terms)| terms.into_iter().map(move |term| (term, host as u32)))
        .collect();
    tuples.sort_unstable();
    tuples.dedup();
    let groups: Vec<&[(u64, u32)]> = tuples
        .chunk_by(|x, y| x.0 == y.0)
        .filter(|group| (group.len() as u32) < limit)
        .collect();
    let max_df = groups
        .iter()
        .map(|group| group.len() as u32)
        .max()
        .unwrap_or(1);
    let mut scores: HashMap<(u32, u32), f64> = HashMap::new();
    for group in groups {
        let term = group[0].0;
        let df = group.len() as u32;
        let term_weight = weight(term, df, max_df);
        if term_weight <= 0.0 || df < 2 {
            continue;
        }
        let mut members: Vec<u32> = group.iter().map(|(_, host)| *host).collect();
        if df > RESTRICTED_HOSTS {
            members.sort_by_key(|host| {
                xxh3_64(&[term.to_le_bytes(), u64::from(*host).to_le_bytes()].concat())
            });
            members.truncate(RESTRICTED_HOSTS as usize);
            members.sort_unstable();
        }
        for (position, &first) in members.iter().enumerate() {
            for &second in &members[position + 1..] {
                *scores.entry((first, second)).or_default() += term_weight * term_weight;
            }
        }
    }
    ranked(
        scores
            .into_iter()
            .map(|((first, second), score)| {
                let (first, second) = (&web.hosts[first as usize], &web.hosts[second as usize]);
                (
                    HostPair::new(first.id, second.id),
                    score * normalise(first, second),
                )
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_host_terms() {
        // bharat-2000 §3.2.1: substrings between dots or the ends.
        let mut terms = host_terms("www.infoseek.com");
        terms.sort();
        assert_eq!(
            terms,
            vec![
                "com",
                "infoseek",
                "infoseek.com",
                "www",
                "www.infoseek",
                "www.infoseek.com"
            ]
        );
        assert_eq!(
            host_terms("192.0.2.17"),
            vec!["192.0", "192.0.2", "192.0.2.17"]
        );
    }

    #[test]
    fn the_papers_positional_bigrams() {
        // bharat-2000 §3.2.4, word for word.
        assert_eq!(
            positional_bigrams("conferences/dl99/advanceprogram.html"),
            vec![
                "conferences_dl*_0",
                "dl*_advanceprogram_1",
                "advanceprogram_html_2"
            ]
        );
    }

    #[test]
    fn prefixes_end_in_a_slash_or_end_the_path() {
        assert_eq!(
            path_prefixes("/a/b/c.html"),
            vec!["/", "/a/", "/a/b/", "/a/b/c.html"]
        );
        assert_eq!(path_prefixes("/a/"), vec!["/", "/a/"]);
    }

    #[test]
    fn hconn_weights_follow_the_in_degree_steps() {
        assert_eq!(hconn_weight(1), 1.0);
        assert_eq!(hconn_weight(25), 1.0);
        assert!((hconn_weight(50) - 0.5).abs() < 1e-12);
        assert!((hconn_weight(125) - 0.2).abs() < 1e-12);
        assert!((hconn_weight(500) - 0.2).abs() < 1e-12);
        assert!((hconn_weight(2000) - 0.1).abs() < 1e-12);
    }
}
