//! The principal copy of a cluster: the one a person calls the original.
//!
//! cho-2000 §3.1 prefers as the entry point the copy with most links from
//! other sites, and §5.2 shows each cluster from one copy. Links alone do not
//! tell the original on a crawl of mirrored manuals: most mirrors are linked
//! from nowhere, and an older version, a partial mirror or a CDN serving an
//! exact copy can win a tie. The copies are compared on evidence a person
//! would accept, in this order; the first that tells two copies apart
//! decides, and it is kept as the cluster's [`PrincipalEvidence`]:
//!
//! 1. **Named by the other copies**: the number of other copies a quarter of
//!    whose pages name this copy's host, by a link (a partial mirror links
//!    the pages it lacks to the original, a banner says "mirror of"), by
//!    their `<link rel="canonical">`, or in their text (a note "a mirror of
//!    docs.example.org" without a link). A copy names its original on page
//!    after page; an original names its mirrors on one page at most (a list
//!    of mirrors, which its exact copies copy too). A name in the text counts
//!    only when the copy on the named host does not name itself alike (a
//!    quarter of its pages): text every copy carries, such as an original's
//!    footer with its own name or a list of mirrors on every page, is copied
//!    with the pages and says nothing of who copied whom.
//! 2. **Agreement**: for each page of the copy, the other copies holding a
//!    page with the same own text (site chrome such as a mirror's banner set
//!    aside, see [`crate::similarity::Similarity::own_text_signatures`]),
//!    summed. Mirrors copy the original, so the version most copies hold is
//!    the original's, and a complete copy agrees on more pages than a partial
//!    mirror or a partly crawled one. An older version agrees only with the
//!    other copies of that version, and a copy rewritten page by page (a
//!    per-page footer) with none.
//! 3. **https** over http: an original moves to https before its mirrors.
//! 4. **Links from other hosts** into the copy (cho §3.1).
//! 5. **First seen** in an earlier crawl of the generation: the original
//!    was there before its copies. (Within one crawl, the order pages were
//!    fetched in is chance, not evidence.)
//! 6. **Fewer other collections on its address**: a mirror operator serves
//!    copies of many collections from one machine, the original site its own.
//!
//! Copies that no evidence tells apart are a **tie**, reported as such; the
//! shortest root URL is then shown first, which says nothing of which is the
//! original (the crawl time, which earlier builds fell back on, is chance).

use std::cmp::{Ordering, Reverse};
use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::PageFacts;
use crate::pages::{HostId, PageId};

/// One copy of a cluster, as the principal choice sees it.
pub(super) struct Candidate<'a> {
    /// Its pages, sorted.
    pub pages: &'a [PageId],
    pub root: PageId,
    pub inlinks: u64,
}

/// What told the principal copy from the next one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrincipalEvidence {
    /// The cluster has one copy, or its copies are all on one host.
    #[default]
    Alone,
    /// More of the other copies name its host (links, canonical URLs, notes).
    NamedByCopies,
    /// More of the other copies hold its pages' own text.
    Agreement,
    /// It is served over https, the next one over http.
    Https,
    /// More links from other hosts lead to it.
    Inlinks,
    /// An earlier crawl saw it before its copies.
    FirstSeen,
    /// Fewer other collections are served from its address.
    OwnAddress,
    /// No evidence tells it from the next copy.
    Tie,
}

impl PrincipalEvidence {
    /// The evidence in a sentence, as the Replica list says it.
    pub fn sentence(self) -> &'static str {
        match self {
            PrincipalEvidence::Alone => "the only copy",
            PrincipalEvidence::NamedByCopies => {
                "the other copies name it (links to it, canonical URLs, a note saying whose copy they are)"
            }
            PrincipalEvidence::Agreement => "the other copies hold its text",
            PrincipalEvidence::Https => "served over https, its copies over http",
            PrincipalEvidence::Inlinks => "more links from other sites lead to it",
            PrincipalEvidence::FirstSeen => "an earlier crawl saw it before its copies",
            PrincipalEvidence::OwnAddress => "its address serves no other mirrored collection",
            PrincipalEvidence::Tie => "no evidence tells it from the next copy: a tie",
        }
    }
}

/// The principal copy of every cluster, by position, and what decided it.
pub(super) struct Chooser {
    principals: Vec<(usize, PrincipalEvidence)>,
}

/// A copy's evidence, each compared in the order of the module's list
/// (larger is better).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Evidence {
    named: usize,
    agreement: u64,
    https: bool,
    inlinks: u64,
    first_crawl: Reverse<u16>,
    own_address: Reverse<usize>,
}

impl Evidence {
    /// The first evidence on which `self` and `other` differ, and how.
    fn compare(&self, other: &Evidence) -> (Ordering, PrincipalEvidence) {
        let steps = [
            (
                self.named.cmp(&other.named),
                PrincipalEvidence::NamedByCopies,
            ),
            (
                self.agreement.cmp(&other.agreement),
                PrincipalEvidence::Agreement,
            ),
            (self.https.cmp(&other.https), PrincipalEvidence::Https),
            (self.inlinks.cmp(&other.inlinks), PrincipalEvidence::Inlinks),
            (
                self.first_crawl.cmp(&other.first_crawl),
                PrincipalEvidence::FirstSeen,
            ),
            (
                self.own_address.cmp(&other.own_address),
                PrincipalEvidence::OwnAddress,
            ),
        ];
        steps
            .into_iter()
            .find(|(order, _)| order.is_ne())
            .unwrap_or((Ordering::Equal, PrincipalEvidence::Tie))
    }
}

impl Chooser {
    pub fn new<'a>(
        facts: &PageFacts,
        hosts: &[HostId],
        clusters: impl Iterator<Item = Vec<Candidate<'a>>>,
    ) -> Chooser {
        let clusters: Vec<Vec<Candidate<'a>>> = clusters.collect();
        let address = |page: PageId| facts.addresses.get(page.0 as usize).copied().flatten();
        let host_of = |candidate: &Candidate| hosts[candidate.root.0 as usize];
        // Clusters with copies on two hosts or more, by address.
        let mut on_address: HashMap<&str, HashSet<usize>> = HashMap::new();
        for (index, candidates) in clusters.iter().enumerate() {
            let first_host = candidates.first().map(&host_of);
            if candidates.iter().all(|c| Some(host_of(c)) == first_host) {
                continue;
            }
            for candidate in candidates {
                if let Some(ip) = address(candidate.root) {
                    on_address.entry(ip).or_default().insert(index);
                }
            }
        }
        let principals = clusters
            .iter()
            .enumerate()
            .map(|(index, candidates)| {
                if candidates.len() < 2 {
                    return (0, PrincipalEvidence::Alone);
                }
                let agreement = agreement(facts, candidates);
                let named = named_by_copies(facts, candidates, &host_of);
                let evidence: Vec<Evidence> = candidates
                    .iter()
                    .enumerate()
                    .map(|(position, candidate)| Evidence {
                        named: named[position],
                        agreement: agreement[position],
                        https: facts.urls[candidate.root.0 as usize].starts_with("https://"),
                        inlinks: candidate.inlinks,
                        first_crawl: Reverse(
                            candidate
                                .pages
                                .iter()
                                .filter_map(|page| facts.first_crawl.get(page.0 as usize).copied())
                                .min()
                                .unwrap_or(u16::MAX),
                        ),
                        own_address: Reverse(address(candidate.root).map_or(0, |ip| {
                            on_address
                                .get(ip)
                                .map_or(0, |set| set.len() - usize::from(set.contains(&index)))
                        })),
                    })
                    .collect();
                // The best copy; the shortest root URL among equals.
                let url = |position: usize| facts.urls[candidates[position].root.0 as usize];
                let mut order: Vec<usize> = (0..candidates.len()).collect();
                order.sort_by(|&x, &y| {
                    evidence[y]
                        .compare(&evidence[x])
                        .0
                        .then(url(x).len().cmp(&url(y).len()))
                        .then(url(x).cmp(url(y)))
                });
                let (best, next) = (order[0], order[1]);
                let hosts_differ = host_of(&candidates[best]) != host_of(&candidates[next]);
                let decided = if hosts_differ {
                    evidence[best].compare(&evidence[next]).1
                } else {
                    PrincipalEvidence::Alone
                };
                (best, decided)
            })
            .collect();
        Chooser { principals }
    }

    /// The position of the principal copy among the cluster's collections.
    pub fn principal(&self, cluster: usize) -> usize {
        self.principals[cluster].0
    }

    /// What decided it.
    pub fn evidence(&self, cluster: usize) -> PrincipalEvidence {
        self.principals[cluster].1
    }
}

/// A copy names a host when one in this many of its pages does.
const NAMING_SHARE: usize = 4;

/// For each copy, how many other copies (on other hosts) name its host:
/// [`NAMING_SHARE`] of their pages link to it or give their canonical URL
/// there.
fn named_by_copies(
    facts: &PageFacts,
    candidates: &[Candidate],
    host_of: &impl Fn(&Candidate) -> HostId,
) -> Vec<usize> {
    let mut named = vec![0usize; candidates.len()];
    if facts.named_hosts.is_empty() {
        return named;
    }
    let position_of: HashMap<HostId, Vec<usize>> =
        candidates
            .iter()
            .enumerate()
            .fold(HashMap::new(), |mut map, (position, candidate)| {
                map.entry(host_of(candidate)).or_default().push(position);
                map
            });
    // Copies whose own text names their host on a quarter of their pages:
    // a name every copy carries, which text naming that host repeats.
    let names_itself: Vec<bool> = candidates
        .iter()
        .map(|candidate| {
            let own = host_of(candidate);
            let pages = candidate
                .pages
                .iter()
                .filter(|&&page| facts.text_hosts.get(page).contains(&own))
                .count();
            pages > 0 && pages * NAMING_SHARE >= candidate.pages.len()
        })
        .collect();
    let named_in_text = |host: &HostId| {
        position_of
            .get(host)
            .is_some_and(|positions| positions.iter().all(|&position| !names_itself[position]))
    };
    for (position, candidate) in candidates.iter().enumerate() {
        let own = host_of(candidate);
        // Pages naming each host: a banner or a canonical URL names the
        // original on every page, a partial mirror on most; one page that
        // lists mirrors (which a copy copies too) names each of them once.
        let mut pages_naming: HashMap<HostId, usize> = HashMap::new();
        for &page in candidate.pages {
            let index = page.0 as usize;
            let mut named_here: HashSet<HostId> = HashSet::new();
            named_here.extend(facts.named_hosts.get(index).copied().unwrap_or(&[]));
            named_here.extend(facts.canonical_hosts.get(index).copied().flatten());
            named_here.extend(
                facts
                    .text_hosts
                    .get(page)
                    .iter()
                    .filter(|host| named_in_text(host)),
            );
            for host in named_here {
                *pages_naming.entry(host).or_default() += 1;
            }
        }
        let names = pages_naming
            .into_iter()
            .filter(|&(host, pages)| host != own && pages * NAMING_SHARE >= candidate.pages.len())
            .map(|(host, _)| host);
        for host in names {
            for &other in position_of.get(&host).map_or(&[][..], Vec::as_slice) {
                if other != position {
                    named[other] += 1;
                }
            }
        }
    }
    named
}

/// For each copy, the pages of other copies with the same own text as one
/// of its pages, summed over its pages.
fn agreement(facts: &PageFacts, candidates: &[Candidate]) -> Vec<u64> {
    let mut agreement = vec![0u64; candidates.len()];
    if facts.own_text.is_empty() {
        return agreement;
    }
    // Own text -> copies holding it.
    let mut holders: HashMap<u64, Vec<usize>> = HashMap::new();
    for (position, candidate) in candidates.iter().enumerate() {
        for &page in candidate.pages {
            let text = facts.own_text.get(page.0 as usize).copied().unwrap_or(0);
            if text == 0 {
                continue;
            }
            let copies = holders.entry(text).or_default();
            if copies.last() != Some(&position) {
                copies.push(position);
            }
        }
    }
    for copies in holders.values() {
        for &position in copies {
            agreement[position] += copies.len() as u64 - 1;
        }
    }
    agreement
}

#[cfg(test)]
mod tests {
    use super::PrincipalEvidence;
    use crate::collections::{analyse, ClusterKind, CollectionsConfig};
    use crate::ingest::Capture;
    use crate::similarity::SimilarityConfig;
    use crate::test_support::manuals::{serve, tree, HostCopy, Tree};
    use crate::test_support::run;

    fn manual() -> Tree {
        tree("Widget", &[("guide", 6), ("api", 6)])
    }

    /// An exact copy of the manual on `host`, over `scheme`.
    fn copy(manual: &Tree, scheme: &str, host: &str, ip: &str) -> Vec<Capture> {
        let mut pages = serve(manual, &HostCopy::whole(host, "/widget/", ip));
        if scheme == "https" {
            let https = |url: &str| url.replacen("http://", "https://", 1);
            for page in &mut pages {
                page.info.url = https(&page.info.url);
                page.links = page.links.iter().map(&https).collect();
            }
        }
        pages
    }

    /// The principal copy's host and what decided it.
    fn principal(web: &[Capture]) -> (String, PrincipalEvidence) {
        let (table, similarity) = run(web, &SimilarityConfig::default());
        let collections = analyse(&table, &similarity, &CollectionsConfig::default());
        let cluster = collections
            .clusters
            .iter()
            .find(|cluster| cluster.kind == ClusterKind::Collection)
            .expect("the manual's cluster");
        let principal = collections.collection(cluster.principal()).unwrap();
        (
            table.host_name(principal.host).to_string(),
            cluster.principal_evidence,
        )
    }

    #[test]
    fn a_cdn_serving_an_exact_copy_is_not_the_original() {
        let manual = manual();
        // The CDN's copy is byte for byte the original's, on its own
        // address; a mirror's banner links to the original on every page.
        let mut web = copy(&manual, "http", "cdn.ex.net", "192.0.2.80");
        web.extend(copy(&manual, "http", "docs.widget.example", "192.0.2.10"));
        let mut mirror = copy(&manual, "http", "mirror.example.edu", "192.0.2.30");
        for page in &mut mirror {
            page.links.push("http://docs.widget.example/");
        }
        web.extend(mirror);
        // The original's root page is crawled too (the banner's target).
        web.push(crate::test_support::capture(
            "http://docs.widget.example/",
            "Widget project home, in words of its own",
        ));
        assert_eq!(
            principal(&web),
            (
                "docs.widget.example".into(),
                PrincipalEvidence::NamedByCopies
            )
        );
    }

    #[test]
    fn canonical_urls_name_the_original() {
        let manual = manual();
        let mut web = copy(&manual, "http", "docs.widget.example", "192.0.2.10");
        let mut cdn = copy(&manual, "http", "cdn.ex.net", "192.0.2.80");
        for page in &mut cdn {
            page.canonical = Some(
                page.info
                    .url
                    .replace("cdn.ex.net", "docs.widget.example")
                    .into(),
            );
        }
        web.extend(cdn);
        assert_eq!(
            principal(&web),
            (
                "docs.widget.example".into(),
                PrincipalEvidence::NamedByCopies
            )
        );
    }

    #[test]
    fn a_note_naming_the_original_counts_and_a_name_every_copy_carries_does_not() {
        let manual = manual();
        let named = |pages: &mut Vec<Capture>, host: &str| {
            for page in pages {
                let mut hosts = page.text_hosts.to_vec();
                hosts.push(host.into());
                page.text_hosts = hosts.into();
            }
        };
        // The mirror, over https, says in a note on every page whose mirror
        // it is, without a link: it is the copy.
        let original = copy(&manual, "http", "docs.widget.example", "192.0.2.10");
        let mut mirror = copy(&manual, "https", "mirror.example.net", "192.0.2.30");
        named(&mut mirror, "docs.widget.example");
        let web: Vec<Capture> = original.iter().chain(&mirror).cloned().collect();
        assert_eq!(
            principal(&web),
            (
                "docs.widget.example".into(),
                PrincipalEvidence::NamedByCopies
            )
        );
        // The original's footer names its own host on every page, and the
        // mirror copied the footer: a name every copy carries tells nothing,
        // and https decides.
        let mut original = original;
        named(&mut original, "docs.widget.example");
        let mut mirror = copy(&manual, "https", "mirror.example.net", "192.0.2.30");
        named(&mut mirror, "docs.widget.example");
        let web: Vec<Capture> = original.iter().chain(&mirror).cloned().collect();
        assert_eq!(
            principal(&web),
            ("mirror.example.net".into(), PrincipalEvidence::Https)
        );
    }

    #[test]
    fn https_tells_exact_copies_apart_and_nothing_else_is_a_tie() {
        let manual = manual();
        let mut web = copy(&manual, "http", "cdn.ex.net", "192.0.2.80");
        web.extend(copy(&manual, "https", "docs.widget.example", "192.0.2.10"));
        assert_eq!(
            principal(&web),
            ("docs.widget.example".into(), PrincipalEvidence::Https)
        );
        // Two exact copies over http, named by nothing: a tie, reported.
        let mut web = copy(&manual, "http", "a.mirror.example", "192.0.2.80");
        web.extend(copy(&manual, "http", "b.mirror.example", "192.0.2.10"));
        assert_eq!(principal(&web).1, PrincipalEvidence::Tie);
    }

    #[test]
    fn a_list_of_mirrors_copied_by_the_mirrors_names_none_of_them() {
        // The original has a page listing its mirrors, which the mirrors
        // copied: one page in many, naming each mirror once.
        let manual = manual();
        let with_list = |pages: &mut Vec<Capture>, scheme: &str, host: &str| {
            let mut list = crate::test_support::capture(
                &format!("{scheme}://{host}/widget/mirrors.html"),
                "Mirrors of the Widget manual around the world",
            );
            list.links = crate::pages::Links::from_iter([
                "http://a.mirror.example/widget/index.html",
                "http://b.mirror.example/widget/index.html",
            ]);
            pages.push(list);
        };
        let mut web = copy(&manual, "https", "docs.widget.example", "192.0.2.10");
        with_list(&mut web, "https", "docs.widget.example");
        for host in ["a.mirror.example", "b.mirror.example"] {
            let mut mirror = copy(&manual, "http", host, "192.0.2.30");
            with_list(&mut mirror, "http", host);
            web.extend(mirror);
        }
        let (host, evidence) = principal(&web);
        assert_eq!(host, "docs.widget.example");
        assert_ne!(evidence, PrincipalEvidence::NamedByCopies);
    }
}
