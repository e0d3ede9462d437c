//! Host pair classification (bharat-broder-1999 §3.2, Table 1), with the
//! crawl standing in for the web: a page is "fetched" when the crawl holds
//! it answered `200` with a body.
//!
//! Tests: the pair of root pages, then up to
//! [`MirrorsConfig::sampled_paths`] paths of each host looked up on the
//! other (19 tests with the paper's 9). A host's paths are drawn from those
//! candidate detection sampled for it (bharat-broder-1999 §3.2 reuses Stage
//! I's), in the order of their hash, which plays the paper's random choice;
//! only pages with text are drawn (resemblance needs words), and when Stage
//! I sampled too few, other pages of the host fill in, in the same order.
//!
//! When the pair's shared pages sit under other folders on each host (a
//! [`Subtree`] found by the `clusters` evidence), the roots are those folders
//! and a path under one is looked up under the other: the mirrored subtree
//! is compared, as fetterly-2004 §2 defines mirrors of detached subtrees.
//! Otherwise the roots are `/` and paths are compared as they are.
//!
//! Outcomes of a test (the source side holds the path):
//! - `SF` the source page is not in the crawl (or not a `200`, or a
//!   stand-in: one text the host answers many URLs with);
//! - `TF` the target page is not (a path absent from a partial crawl is a
//!   failure, not a mismatch);
//! - `FM` byte-identical bodies; `FS` equivalent text (the same words in the
//!   same order: full similarity); `HS` resemblance at least
//!   [`MirrorsConfig::high_similarity`]; `TS` above 0; `NS` none, or the
//!   two pages are in different languages (a translation shares code and
//!   names with its original, not content).
//!
//! A mirror that renames paths (drops `.html`, lower-cases, flattens a
//! folder level into the name) has no page at the path looked up; its copy
//! of the page is found by content instead: the page of the same trivial
//! cluster on the target host whose name is the source's, renamed
//! ([`same_name_renamed`]). A page copied into another site under another
//! name (a content farm's) is no such copy, so it does not make the hosts
//! mirrors.
//!
//! Resemblance is estimated from the 84 min-hashes of 5-word shingles kept
//! for every page (the fraction that agree).
//!
//! A pair is classified in two steps, so that only the fingerprints of the
//! pages compared are read (a crawl's are a file too big to hold,
//! [`crate::generation::FingerprintFile`]): [`Classifier::plan`] finds each
//! test's pages by their paths, [`Compared::read`] reads the fingerprints of
//! every page some test compares, and [`Classifier::settle`] gives the
//! outcomes and the level.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use super::candidates::sample_paths;
use super::hosts::{HostData, Web};
use super::{HostPair, Level, MirrorsConfig, Subtree};
use crate::fingerprint::{Fingerprint, Fingerprints};
use crate::pages::{HostId, PageId};
use crate::similarity::TrivialClusterId;

/// What one test found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Outcome {
    #[serde(rename = "SF")]
    SourceFailure,
    #[serde(rename = "TF")]
    TargetFailure,
    #[serde(rename = "FM")]
    FingerprintMatch,
    #[serde(rename = "FS")]
    FullSimilarity,
    #[serde(rename = "HS")]
    HighSimilarity,
    #[serde(rename = "TS")]
    TraceSimilarity,
    #[serde(rename = "NS")]
    NoSimilarity,
}

impl Outcome {
    pub fn code(self) -> &'static str {
        match self {
            Outcome::SourceFailure => "SF",
            Outcome::TargetFailure => "TF",
            Outcome::FingerprintMatch => "FM",
            Outcome::FullSimilarity => "FS",
            Outcome::HighSimilarity => "HS",
            Outcome::TraceSimilarity => "TS",
            Outcome::NoSimilarity => "NS",
        }
    }

    pub fn meaning(self) -> &'static str {
        match self {
            Outcome::SourceFailure => "not in the crawl on the source host",
            Outcome::TargetFailure => "not in the crawl on the target host",
            Outcome::FingerprintMatch => "identical bytes",
            Outcome::FullSimilarity => "equivalent text",
            Outcome::HighSimilarity => "highly similar",
            Outcome::TraceSimilarity => "trace similarity",
            Outcome::NoSimilarity => "no similarity",
        }
    }
}

/// One comparison of Stage II.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathTest {
    /// The path is known on the pair's first host (else on its second).
    pub from_a: bool,
    pub path_a: String,
    pub path_b: String,
    pub outcome: Outcome,
    /// The estimated resemblance, when both pages have min-hashes.
    pub resemblance: Option<f32>,
}

/// Whether two paths name one page renamed as mirrors rename: the last
/// segments' names, in lower case and without their extension, are equal,
/// or one ends with the other after a separator (a folder level flattened
/// into the name: `guide/intro.html` as `guide_intro.html`).
pub fn same_name_renamed(first: &str, second: &str) -> bool {
    let name = |path: &str| -> String {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let last = path
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or_default();
        let stem = last.rsplit_once('.').map_or(last, |(stem, _)| stem);
        stem.to_lowercase()
    };
    let (first, second) = (name(first), name(second));
    if first.is_empty() || second.is_empty() {
        return false;
    }
    let (longer, shorter) = if first.len() >= second.len() {
        (&first, &second)
    } else {
        (&second, &first)
    };
    longer == shorter
        || longer
            .strip_suffix(shorter.as_str())
            .is_some_and(|head| head.ends_with(|c: char| !c.is_alphanumeric()))
}

/// Table 1 of bharat-broder-1999, read top to bottom.
pub fn level_of(outcomes: &[Outcome]) -> Level {
    use Outcome::*;
    let all = |allowed: &[Outcome]| outcomes.iter().all(|outcome| allowed.contains(outcome));
    let any = |wanted: &[Outcome]| outcomes.iter().any(|outcome| wanted.contains(outcome));
    if outcomes.is_empty() || all(&[SourceFailure]) {
        Level::Untested
    } else if all(&[SourceFailure, FingerprintMatch]) {
        Level::One
    } else if all(&[SourceFailure, FingerprintMatch, FullSimilarity]) {
        Level::Two
    } else if all(&[
        SourceFailure,
        FingerprintMatch,
        FullSimilarity,
        HighSimilarity,
    ]) {
        Level::Three
    } else if any(&[HighSimilarity, FingerprintMatch, FullSimilarity]) {
        // "Some tests show HS or FM"; an equivalent text (FS) is more than
        // highly similar, so it counts too.
        Level::Four
    } else if !any(&[TargetFailure]) && any(&[TraceSimilarity]) {
        Level::Five
    } else {
        Level::Mismatch
    }
}

/// Classifies pairs; the candidate paths of each host it is given are
/// ordered once.
pub struct Classifier<'w, 'a> {
    web: &'w Web<'a>,
    config: &'w MirrorsConfig,
    /// Per host: indices of its paths with text, Stage I's sample first,
    /// each part in hash order.
    drawn: HashMap<HostId, Vec<usize>>,
    /// The pages of each trivial cluster on each host of `drawn` (index of
    /// the path in its host's paths), to find a copy under another name.
    copies: HashMap<(TrivialClusterId, HostId), Vec<usize>>,
}

impl<'w, 'a> Classifier<'w, 'a> {
    /// A classifier for pairs of `hosts` (other hosts' pairs get no
    /// sampled paths, only their roots). Which of the hosts' pages have
    /// text, the only paths drawn, is read from `prints`.
    pub fn new<F: Fingerprints + Sync>(
        web: &'w Web<'a>,
        config: &'w MirrorsConfig,
        hosts: impl IntoIterator<Item = HostId>,
        prints: &F,
    ) -> Result<Classifier<'w, 'a>, F::Error> {
        let mut chosen: Vec<&HostData> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for id in hosts {
            if let (Some(host), true) = (web.host(id), seen.insert(id)) {
                chosen.push(host);
            }
        }
        let mut pages: Vec<usize> = chosen
            .iter()
            .flat_map(|host| host.pages.iter().map(|page| page.0 as usize))
            .collect();
        pages.sort_unstable();
        pages.dedup();
        let has_text = prints.map_pages(&pages, |_, print| {
            print.is_some_and(Fingerprint::has_minhash)
        })?;
        let with_text = |page: PageId| {
            pages
                .binary_search(&(page.0 as usize))
                .is_ok_and(|index| has_text[index])
        };
        let drawn: HashMap<HostId, Vec<usize>> = chosen
            .iter()
            .map(|host| (host.id, draw_order(web, host, &with_text)))
            .collect();
        // A page alone in its trivial cluster is nobody's copy.
        let sizes = web.similarity.trivial_cluster_sizes();
        let mut copies: HashMap<(TrivialClusterId, HostId), Vec<usize>> = HashMap::new();
        for &id in drawn.keys() {
            let Some(host) = web.host(id) else { continue };
            for (index, page) in host.pages.iter().enumerate() {
                let Some(&cluster) = web.similarity.trivial.get(page.0 as usize) else {
                    continue;
                };
                if sizes.get(cluster.index()).is_some_and(|&size| size > 1) {
                    copies.entry((cluster, id)).or_default().push(index);
                }
            }
        }
        Ok(Classifier {
            web,
            config,
            drawn,
            copies,
        })
    }

    /// The tests of a pair, their pages found and not yet compared, and the
    /// subtrees compared (`/` when `subtrees` is empty).
    pub fn plan(&self, pair: HostPair, subtrees: Vec<Subtree>) -> Planned {
        let subtrees = if subtrees.is_empty() {
            vec![Subtree {
                a: "/".into(),
                b: "/".into(),
                pages: 0,
            }]
        } else {
            subtrees
        };
        let mut planned = Planned {
            tests: Vec::new(),
            compared: Vec::new(),
            subtrees: Vec::new(),
        };
        let (Some(a), Some(b)) = (self.web.host(pair.a), self.web.host(pair.b)) else {
            planned.subtrees = subtrees;
            return planned;
        };
        let mut push = |(test, pages)| {
            planned.tests.push(test);
            planned.compared.push(pages);
        };
        for subtree in &subtrees {
            push(self.test(a, b, &subtree.a, &subtree.b, true));
        }
        let from_a = self.sampled(a, subtrees.iter().map(|s| (s.a.as_str(), s.b.as_str())));
        let from_b = self.sampled(b, subtrees.iter().map(|s| (s.b.as_str(), s.a.as_str())));
        for (path, translated) in from_a {
            push(self.test(a, b, &path, &translated, true));
        }
        for (path, translated) in from_b {
            push(self.test(b, a, &path, &translated, false));
        }
        planned.subtrees = subtrees;
        planned
    }

    /// The level of a pair [`Classifier::plan`]ned, its tests with their
    /// outcomes, and the subtrees compared; `prints` holds the fingerprints
    /// of the pages its tests compare.
    pub fn settle(
        &self,
        planned: Planned,
        prints: &Compared,
    ) -> (Level, Vec<PathTest>, Vec<Subtree>) {
        let Planned {
            mut tests,
            compared,
            subtrees,
        } = planned;
        for (test, pages) in tests.iter_mut().zip(compared) {
            if let Some((source, target)) = pages {
                let (outcome, resemblance) = self.compare(source, target, prints);
                test.outcome = outcome;
                test.resemblance = resemblance;
            }
        }
        let outcomes: Vec<Outcome> = tests.iter().map(|test| test.outcome).collect();
        (level_of(&outcomes), tests, subtrees)
    }

    /// Up to `sampled_paths` paths of `host` under a folder of `folders`
    /// (host's folder, the other's), each with its path on the other host.
    fn sampled<'f>(
        &self,
        host: &HostData,
        folders: impl Iterator<Item = (&'f str, &'f str)> + Clone,
    ) -> Vec<(String, String)> {
        let mut chosen = Vec::new();
        for &index in self.drawn.get(&host.id).map(Vec::as_slice).unwrap_or(&[]) {
            if chosen.len() == self.config.sampled_paths {
                break;
            }
            let path = &host.paths[index];
            // The deepest folder holding the path decides where it goes.
            let Some((from, to)) = folders
                .clone()
                .filter(|(from, _)| path.starts_with(from) && path.len() > from.len())
                .max_by_key(|(from, _)| from.len())
            else {
                continue;
            };
            chosen.push((path.clone(), format!("{to}{}", &path[from.len()..])));
        }
        chosen
    }

    /// A test of `source_path` on `source` against `target_path` on
    /// `target`: failed (`SF`, `TF`), or to settle by comparing the two
    /// pages given.
    fn test(
        &self,
        source: &HostData,
        target: &HostData,
        source_path: &str,
        target_path: &str,
        from_a: bool,
    ) -> (PathTest, Option<(PageId, PageId)>) {
        let (path_a, path_b) = if from_a {
            (source_path.to_string(), target_path.to_string())
        } else {
            (target_path.to_string(), source_path.to_string())
        };
        let mut test = PathTest {
            from_a,
            path_a,
            path_b,
            outcome: Outcome::SourceFailure,
            resemblance: None,
        };
        let Some(source_page) = self.fetched(source, source_path) else {
            return (test, None);
        };
        let found = self
            .fetched(target, target_path)
            .map(|page| (page, None))
            .or_else(|| self.renamed_copy(source_page, source_path, target));
        let Some((target_page, renamed)) = found else {
            test.outcome = Outcome::TargetFailure;
            return (test, None);
        };
        if let Some(renamed) = renamed {
            if from_a {
                test.path_b = renamed;
            } else {
                test.path_a = renamed;
            }
        }
        (test, Some((source_page, target_page)))
    }

    /// The copy of `source_page` (at `source_path`) on `target` under a
    /// renamed path: a page of its trivial cluster there, fetched, whose
    /// name is the source's renamed; with its path.
    fn renamed_copy(
        &self,
        source_page: PageId,
        source_path: &str,
        target: &HostData,
    ) -> Option<(PageId, Option<String>)> {
        let cluster = *self.web.similarity.trivial.get(source_page.0 as usize)?;
        self.copies
            .get(&(cluster, target.id))?
            .iter()
            .map(|&index| (&target.paths[index], target.pages[index]))
            .filter(|(path, _)| same_name_renamed(source_path, path))
            .find_map(|(path, _)| {
                self.fetched(target, path)
                    .map(|page| (page, Some(path.clone())))
            })
    }

    /// The page at `path` on `host` if the crawl got it with a body; a
    /// stand-in (a soft 404 or parked page answering whatever is asked) is
    /// no document, as a "not found" page is not.
    fn fetched(&self, host: &HostData, path: &str) -> Option<PageId> {
        let page = host.page_at(path)?;
        let record = self.web.table.page(page)?;
        (record.status == 200
            && record.content_key.is_some()
            && !self.web.stand_ins[page.0 as usize])
            .then_some(page)
    }

    fn compare(&self, first: PageId, second: PageId, prints: &Compared) -> (Outcome, Option<f32>) {
        let table = self.web.table;
        let (Some(x), Some(y)) = (table.page(first), table.page(second)) else {
            return (Outcome::NoSimilarity, None);
        };
        let (fx, fy) = (prints.get(first), prints.get(second));
        let resemblance = match (fx, fy) {
            (Some(fx), Some(fy)) => fx.resemblance(fy),
            _ => None,
        };
        let same_bytes = matches!((&x.content_key, &y.content_key), (Some(kx), Some(ky)) if kx.signature == ky.signature);
        let languages = &self.web.similarity.languages;
        let language_of = |page: PageId| languages.get(page.0 as usize).copied().flatten();
        // A translation shares code, commands and names with the page it
        // translates, whatever its resemblance (a command reference may be
        // the same bytes in every edition, its language that of its
        // folder): no similarity of content, as the similarity stage never
        // makes pages of two languages copies. Translations are neither
        // mirrors nor related.
        let outcome = if !crate::language::compatible(language_of(first), language_of(second)) {
            Outcome::NoSimilarity
        } else if same_bytes {
            Outcome::FingerprintMatch
        } else if matches!((fx, fy), (Some(fx), Some(fy)) if fx.text_signature == fy.text_signature && fx.words > 0)
        {
            Outcome::FullSimilarity
        } else {
            match resemblance {
                Some(value) if value >= self.config.high_similarity => Outcome::HighSimilarity,
                Some(value) if value > 0.0 => Outcome::TraceSimilarity,
                _ => Outcome::NoSimilarity,
            }
        };
        (outcome, resemblance.map(|value| value as f32))
    }
}

/// A pair's tests [`Classifier::plan`]ned: by test, the two pages
/// (source, target) it compares, `None` for a test failed already.
#[derive(Debug, Clone)]
pub struct Planned {
    tests: Vec<PathTest>,
    compared: Vec<Option<(PageId, PageId)>>,
    subtrees: Vec<Subtree>,
}

impl Planned {
    /// The pages the tests compare (page ids, with repeats).
    pub fn pages(&self) -> impl Iterator<Item = usize> + '_ {
        self.compared
            .iter()
            .flatten()
            .flat_map(|&(source, target)| [source.0 as usize, target.0 as usize])
    }
}

/// The fingerprints of the pages some test compares, without their line
/// hashes (comparing reads signatures and min-hashes,
/// [`Fingerprint::resemblance`]).
#[derive(Debug, Default)]
pub struct Compared {
    /// Page ids, sorted, unique.
    pages: Vec<usize>,
    prints: Vec<Option<Fingerprint>>,
}

impl Compared {
    /// Reads those of `pages` (page ids, in any order, with repeats) from
    /// `prints`.
    pub fn read<F: Fingerprints>(prints: &F, mut pages: Vec<usize>) -> Result<Compared, F::Error> {
        pages.sort_unstable();
        pages.dedup();
        let prints = prints.map_pages(&pages, |_, print| {
            print.map(|print| Fingerprint {
                lines: Vec::new(),
                minhash: print.minhash.clone(),
                ..*print
            })
        })?;
        Ok(Compared { pages, prints })
    }

    /// Pages held.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    fn get(&self, page: PageId) -> Option<&Fingerprint> {
        let index = self.pages.binary_search(&(page.0 as usize)).ok()?;
        self.prints[index].as_ref()
    }
}

/// A host's paths with text (`with_text` of their pages), Stage I's sample
/// first, each part in hash order.
fn draw_order(web: &Web<'_>, host: &HostData, with_text: &impl Fn(PageId) -> bool) -> Vec<usize> {
    let sorted: Vec<&str> = host.paths.iter().map(String::as_str).collect();
    let sampled: std::collections::HashSet<&str> = sample_paths(&sorted).into_iter().collect();
    let mut order: Vec<(bool, u64, usize)> = host
        .paths
        .iter()
        .enumerate()
        .filter(|(index, _)| {
            let page = host.pages[*index];
            with_text(page)
                && !web.stand_ins[page.0 as usize]
                && web
                    .table
                    .page(page)
                    .is_some_and(|record| record.status == 200)
        })
        .map(|(index, path)| {
            (
                !sampled.contains(path.as_str()),
                xxh3_64(path.as_bytes()),
                index,
            )
        })
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(_, _, index)| index).collect()
}

#[cfg(test)]
mod tests {
    use super::Outcome::*;
    use super::*;

    #[test]
    fn table_1_level_by_level() {
        assert_eq!(
            level_of(&[FingerprintMatch, SourceFailure, FingerprintMatch]),
            Level::One
        );
        assert_eq!(level_of(&[FingerprintMatch, FullSimilarity]), Level::Two);
        assert_eq!(
            level_of(&[FullSimilarity, HighSimilarity, SourceFailure]),
            Level::Three
        );
        assert_eq!(
            level_of(&[FingerprintMatch, TargetFailure, NoSimilarity]),
            Level::Four
        );
        assert_eq!(level_of(&[HighSimilarity, TraceSimilarity]), Level::Four);
        assert_eq!(
            level_of(&[TraceSimilarity, NoSimilarity, SourceFailure]),
            Level::Five
        );
        assert_eq!(level_of(&[TraceSimilarity, TargetFailure]), Level::Mismatch);
        assert_eq!(level_of(&[TargetFailure, NoSimilarity]), Level::Mismatch);
    }

    #[test]
    fn a_mirror_renames_a_path_as_mirrors_do() {
        for (original, renamed) in [
            ("/docs/Guide/Intro.html", "/docs/guide/intro"),
            ("/docs/guide/intro.html", "/k/guide_intro.html"),
            ("/docs/guide/intro.html", "/docs/guide/intro.htm"),
            ("/ref/api-Setup.html", "/mirror/ref-api-setup/"),
        ] {
            assert!(same_name_renamed(original, renamed), "{original} {renamed}");
            assert!(same_name_renamed(renamed, original), "{renamed} {original}");
        }
        // Another name is another page (a content farm's copy), and a
        // name that merely ends alike is no renaming.
        for (original, other) in [
            ("/docs/guide/intro.html", "/q/12345-how-to-start"),
            ("/docs/guide/intro.html", "/docs/guide/outro.html"),
            ("/docs/guide/setup.html", "/docs/guide/resetup.html"),
            ("/docs/", "/other/"),
        ] {
            assert!(!same_name_renamed(original, other), "{original} {other}");
        }
        assert_eq!(level_of(&[SourceFailure, SourceFailure]), Level::Untested);
        assert_eq!(level_of(&[]), Level::Untested);
        // "not all are SF" is what keeps level 1 from an empty test.
        assert_eq!(level_of(&[SourceFailure, FingerprintMatch]), Level::One);
    }
}
