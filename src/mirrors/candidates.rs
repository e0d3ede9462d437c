//! Candidate pair detection (bharat-broder-1999 §3.1, ranker `bigrams`).
//!
//! Each host is described by features of its name and of a coordinated
//! sample of its paths; hosts sharing rare features are likely mirrors.
//! - **Sampling**: a host's paths, sorted, are kept when their hash is 0 mod
//!   m; m starts at 5 and doubles after 20 samples, then at every doubling of
//!   the sample count (40, 80, ...), so the sample grows sub-linearly with the
//!   host. A mirror's paths hash the same, so the same paths are picked on
//!   both sides.
//! - **Terms**: a string is cut at `/` and `.` (and at the `?`, `&`, `=`, `;`
//!   of a query); each term is lower-cased, stripped of what is not a letter or a
//!   digit, and every run of digits becomes `*`. Stop terms (`htm`, `html`,
//!   `txt`, `main`, `index`, `home`, `bin`, `cgi`) are dropped, and a URL with
//!   a word left by site-generating tools (`nph`, `dynaweb`, `zyview`) is not
//!   used.
//! - **Features**: word bigrams of the host name (`(www, infoseek)`,
//!   `(infoseek, com)`) and positional word bigrams of each sampled path
//!   (`conferences_dl*_0`); a path feature is kept only when it occurs at
//!   least twice on the host, which drops leaf names that are not part of a
//!   pattern.
//! - **Matching**: a feature on N(f) hosts adds S(f)/N(f) to the score of
//!   every pair of them, S = 4 for host features (a shared rare name part says
//!   the hosts are one organisation's) and 1 for path features; features on
//!   more than 20 hosts are skipped. The score is divided by
//!   `1 + 0.1 (log N1 + log N2)` (N: URLs of each host; log base 10, the
//!   base under which bharat-2000 §3.2.3's "1000 URLs" gives its factor 1),
//!   and pairs sharing only one feature, or no path feature, are dropped.

use std::collections::HashMap;

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use crate::pages::HostId;

use super::{ranked, HostPair, Ranked};

/// Terms that say nothing about a path (bharat-broder-1999 §3.1).
pub const STOP_TERMS: [&str; 8] = ["htm", "html", "txt", "main", "index", "home", "bin", "cgi"];
/// Words of URLs made by site-generating tools, whose standard names match
/// across unrelated sites.
pub const TOOL_TERMS: [&str; 3] = ["nph", "dynaweb", "zyview"];
/// Features on more hosts than this are skipped.
pub const MAX_FEATURE_HOSTS: usize = 20;
/// S(f) of a host-name feature; a path feature's is 1.
pub const HOST_FEATURE_SIGNIFICANCE: f64 = 4.0;
/// The first sampling modulus, and the samples taken before it doubles.
const FIRST_MODULUS: u64 = 5;
const FIRST_DOUBLING: usize = 20;

/// One host's URLs, as candidate detection reads them.
#[derive(Debug, Clone)]
pub struct HostUrls<'a> {
    pub id: HostId,
    pub name: &'a str,
    /// The host's paths, sorted.
    pub paths: Vec<&'a str>,
}

/// A string cut into normalised terms, stop terms included.
pub fn terms(text: &str) -> Vec<String> {
    text.split(['/', '.', '?', '&', '=', ';'])
        .filter_map(normalise)
        .collect()
}

/// A term lower-cased, without non-alphanumerics, digit runs as `*`; `None`
/// when nothing is left.
fn normalise(word: &str) -> Option<String> {
    let mut term = String::with_capacity(word.len());
    let mut in_digits = false;
    for character in word.chars() {
        if character.is_ascii_digit() {
            if !in_digits {
                term.push('*');
            }
            in_digits = true;
        } else if character.is_alphanumeric() {
            term.extend(character.to_lowercase());
            in_digits = false;
        }
    }
    (!term.is_empty()).then_some(term)
}

/// Whether a path comes from a site-generating tool.
pub fn is_tool_generated(path: &str) -> bool {
    path.split(|character: char| !character.is_ascii_alphanumeric())
        .any(|word| {
            TOOL_TERMS
                .iter()
                .any(|tool| word.eq_ignore_ascii_case(tool))
        })
}

fn without_stop_terms(terms: Vec<String>) -> Vec<String> {
    terms
        .into_iter()
        .filter(|term| !STOP_TERMS.contains(&term.as_str()))
        .collect()
}

/// The word bigrams of a host name: `www.infoseek.com` gives
/// `(www, infoseek)` and `(infoseek, com)`.
pub fn host_bigrams(name: &str) -> Vec<(String, String)> {
    let terms = without_stop_terms(terms(name));
    terms
        .windows(2)
        .map(|pair| (pair[0].clone(), pair[1].clone()))
        .collect()
}

/// The positional word bigrams of a path, stop terms dropped:
/// `conferences/dl99/advanceprogram.html` gives `conferences_dl*_0` and
/// `dl*_advanceprogram_1`.
pub fn path_bigrams(path: &str) -> Vec<String> {
    let terms = without_stop_terms(terms(path));
    terms
        .windows(2)
        .enumerate()
        .map(|(position, pair)| format!("{}_{}_{}", pair[0], pair[1], position))
        .collect()
}

/// The coordinated sample of a host's sorted paths.
pub fn sample_paths<'p>(sorted_paths: &[&'p str]) -> Vec<&'p str> {
    let mut modulus = FIRST_MODULUS;
    let mut next_doubling = FIRST_DOUBLING;
    let mut sample = Vec::new();
    for path in sorted_paths {
        if !xxh3_64(path.as_bytes()).is_multiple_of(modulus) {
            continue;
        }
        sample.push(*path);
        if sample.len() == next_doubling {
            modulus *= 2;
            next_doubling *= 2;
        }
    }
    sample
}

/// A host's features, hashed: the top bit marks path features.
#[derive(Debug, Clone, Default)]
pub struct HostFeatures {
    pub features: Vec<u64>,
    pub urls: usize,
}

const PATH_FEATURE: u64 = 1 << 63;

fn feature_hash(kind: u64, text: &str) -> u64 {
    (xxh3_64(text.as_bytes()) & !PATH_FEATURE) | kind
}

/// The features of one host (§3.1 "Feature Generation").
pub fn features_of(host: &HostUrls<'_>) -> HostFeatures {
    let mut features: Vec<u64> = host_bigrams(host.name)
        .iter()
        .map(|(first, second)| feature_hash(0, &format!("{first} {second}")))
        .collect();
    let mut path_features: Vec<u64> = sample_paths(&host.paths)
        .into_iter()
        .filter(|path| !is_tool_generated(path))
        .flat_map(path_bigrams)
        .map(|bigram| feature_hash(PATH_FEATURE, &bigram))
        .collect();
    path_features.sort_unstable();
    // Kept only when seen at least twice on the host.
    let mut twice: Vec<u64> = path_features
        .windows(2)
        .filter(|pair| pair[0] == pair[1])
        .map(|pair| pair[0])
        .collect();
    twice.dedup();
    features.sort_unstable();
    features.dedup();
    features.extend(twice);
    HostFeatures {
        features,
        urls: host.paths.len(),
    }
}

/// Stage I: the candidate pairs, likeliest first.
pub fn rank_hosts(hosts: &[HostUrls<'_>]) -> Vec<Ranked> {
    let features: Vec<HostFeatures> = hosts.par_iter().map(features_of).collect();
    rank_features(hosts, &features)
}

#[derive(Default, Clone, Copy)]
struct Shared {
    score: f64,
    features: u32,
    path_feature: bool,
}

/// Feature matching on precomputed features.
pub fn rank_features(hosts: &[HostUrls<'_>], features: &[HostFeatures]) -> Vec<Ranked> {
    let mut tuples: Vec<(u64, u32)> = features
        .iter()
        .enumerate()
        .flat_map(|(host, features)| {
            features
                .features
                .iter()
                .map(move |&feature| (feature, host as u32))
        })
        .collect();
    tuples.par_sort_unstable();
    let mut shared: HashMap<(u32, u32), Shared> = HashMap::new();
    for group in tuples.chunk_by(|x, y| x.0 == y.0) {
        let count = group.len();
        if !(2..=MAX_FEATURE_HOSTS).contains(&count) {
            continue;
        }
        let is_path = group[0].0 & PATH_FEATURE != 0;
        let significance = if is_path {
            1.0
        } else {
            HOST_FEATURE_SIGNIFICANCE
        };
        let weight = significance / count as f64;
        for (index, &(_, first)) in group.iter().enumerate() {
            for &(_, second) in &group[index + 1..] {
                let entry = shared.entry((first, second)).or_default();
                entry.score += weight;
                entry.features += 1;
                entry.path_feature |= is_path;
            }
        }
    }
    let scores: HashMap<HostPair, f64> = shared
        .into_iter()
        .filter(|(_, shared)| shared.features > 1 && shared.path_feature)
        .map(|((first, second), shared)| {
            let urls = |host: u32| (features[host as usize].urls.max(1) as f64).log10();
            let normalised = shared.score / (1.0 + 0.1 * (urls(first) + urls(second)));
            (
                HostPair::new(hosts[first as usize].id, hosts[second as usize].id),
                normalised,
            )
        })
        .collect();
    ranked(scores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_host_bigrams() {
        // bharat-broder-1999 §3.1: www.infoseek.com.
        assert_eq!(
            host_bigrams("www.infoseek.com"),
            vec![
                ("www".to_string(), "infoseek".to_string()),
                ("infoseek".to_string(), "com".to_string())
            ]
        );
    }

    #[test]
    fn the_papers_path_bigrams_without_stop_terms() {
        // bharat-2000 §3.2.4's path; bharat-broder-1999 drops `html` as a
        // stop term, so its third bigram goes.
        assert_eq!(
            path_bigrams("conferences/dl99/advanceprogram.html"),
            vec!["conferences_dl*_0", "dl*_advanceprogram_1"]
        );
        assert_eq!(
            terms("/Conferences/DL99/advance-program.HTML"),
            vec!["conferences", "dl*", "advanceprogram", "html"]
        );
    }

    #[test]
    fn tool_generated_urls_are_recognised() {
        assert!(is_tool_generated("/cgi-bin/nph-proxy/x"));
        assert!(is_tool_generated("/dynaweb/manuals/a"));
        assert!(!is_tool_generated("/docs/nphotos/a.html"));
    }

    #[test]
    fn sampling_is_coordinated_and_sublinear() {
        let paths: Vec<String> = (0..20_000)
            .map(|i| format!("/d{}/page-{i}.html", i % 37))
            .collect();
        let sorted = {
            let mut sorted: Vec<&str> = paths.iter().map(String::as_str).collect();
            sorted.sort();
            sorted
        };
        let sample = sample_paths(&sorted);
        // 20 at m=5, 20 at 10, 40 at 20, 80 at 40, ...: far fewer than 1 in 5.
        assert!(sample.len() > 40 && sample.len() < 400, "{}", sample.len());
        // Coordinated: a path is picked for its hash, not its place, so a
        // mirror missing half of the paths that were not picked (a partial
        // crawl) picks exactly the same ones. Picking every 5th path in order
        // would not.
        let sampled: std::collections::HashSet<&str> = sample.iter().copied().collect();
        let partial: Vec<&str> = sorted
            .iter()
            .enumerate()
            .filter(|(index, path)| sampled.contains(*path) || index % 2 == 0)
            .map(|(_, path)| *path)
            .collect();
        assert!(partial.len() < sorted.len() * 3 / 4);
        assert_eq!(sample_paths(&partial), sample);
        assert!(sample
            .iter()
            .all(|path| xxh3_64(path.as_bytes()).is_multiple_of(5)));
    }

    fn host<'a>(id: u32, name: &'a str, paths: &[&'a str]) -> HostUrls<'a> {
        let mut paths = paths.to_vec();
        paths.sort();
        HostUrls {
            id: HostId(id),
            name,
            paths,
        }
    }

    #[test]
    fn mirrors_share_weighted_features_and_strangers_do_not() {
        let site: Vec<String> = (0..400)
            .map(|i| format!("/manual/section{}/topic-{i}.html", i % 8))
            .collect();
        let other: Vec<String> = (0..400)
            .map(|i| format!("/shop/aisle{}/item-{i}.html", i % 8))
            .collect();
        let site_paths: Vec<&str> = site.iter().map(String::as_str).collect();
        let other_paths: Vec<&str> = other.iter().map(String::as_str).collect();
        let hosts = vec![
            host(0, "www.example.org", &site_paths),
            host(1, "mirror.example.net", &site_paths),
            host(2, "www.shop.example", &other_paths),
        ];
        let ranking = rank_hosts(&hosts);
        assert_eq!(ranking.len(), 1, "{ranking:?}");
        assert_eq!(ranking[0].pair, HostPair::new(HostId(0), HostId(1)));
        // Weight: every shared path feature is on 2 hosts (1/2 each); the
        // host bigram (example, org) is not shared.
        let features = features_of(&hosts[0]);
        let path_features = features
            .features
            .iter()
            .filter(|f| **f & PATH_FEATURE != 0)
            .count();
        let expected = 0.5 * path_features as f64 / (1.0 + 0.1 * 2.0 * 400f64.log10());
        assert!(
            (ranking[0].score - expected).abs() < 1e-9,
            "{} vs {expected}",
            ranking[0].score
        );
    }

    #[test]
    fn a_shared_host_name_alone_is_not_a_candidate() {
        let a: Vec<String> = (0..100).map(|i| format!("/a{}/x-{i}", i % 4)).collect();
        let b: Vec<String> = (0..100).map(|i| format!("/b{}/y-{i}", i % 4)).collect();
        let a_paths: Vec<&str> = a.iter().map(String::as_str).collect();
        let b_paths: Vec<&str> = b.iter().map(String::as_str).collect();
        let hosts = vec![
            host(0, "www.rare-name.example", &a_paths),
            host(1, "ftp.rare-name.example", &b_paths),
        ];
        // (rarename, example) is shared, but no path feature is.
        assert!(rank_hosts(&hosts).is_empty());
    }
}
