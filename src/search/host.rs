//! `/host/{name}`: a host's mirrors, each with its level and the evidence
//! behind it (the rankers that listed the pair, the folders compared, and
//! every test of the classification).

use serde::Serialize;

use super::{Engine, Result, SearchError};
use crate::mirrors::{Level, PairReport};
use crate::pages::HostId;

/// The longest host name accepted (DNS allows 253 characters; a port adds a
/// few).
const MAX_HOST_NAME: usize = 300;
/// Pairs shown per section of a host page (mirrors, then the others).
pub const MAX_HOST_PAIRS: usize = 200;

/// One test of the classification, seen from the host of the page.
#[derive(Debug, Clone, Serialize)]
pub struct TestView {
    /// The path was sampled on this host (else on the other).
    pub from_here: bool,
    pub path_here: String,
    pub path_there: String,
    pub outcome: &'static str,
    pub meaning: &'static str,
    pub resemblance: Option<String>,
}

/// One ranked pair of the host.
#[derive(Debug, Clone, Serialize)]
pub struct HostMirrorView {
    pub other: String,
    pub level: Level,
    pub meaning: &'static str,
    pub mirror: bool,
    /// `ranker #rank`, for every ranker listing the pair.
    pub rankers: Vec<String>,
    /// (folder here, folder there).
    pub subtrees: Vec<(String, String)>,
    pub tests: Vec<TestView>,
    pub shared_ip: Option<String>,
    /// Pages here and there in near-duplicate clusters with the other.
    pub clustered_pages: (u32, u32),
}

/// The host page.
#[derive(Debug, Clone, Serialize)]
pub struct HostView {
    pub name: String,
    pub urls: usize,
    /// Whether the host had enough URLs to be ranked.
    pub considered: bool,
    pub min_urls: u32,
    pub mirrors: Vec<HostMirrorView>,
    pub others: Vec<HostMirrorView>,
    /// Pairs of each section left out beyond [`MAX_HOST_PAIRS`].
    pub more_mirrors: usize,
    pub more_others: usize,
}

/// Whether `name` can be a host name at all (checked before any lookup).
pub fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_HOST_NAME
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b".-_:[]".contains(&byte))
}

impl Engine {
    /// The id of a host, by its name in any case (host names are
    /// case-insensitive; the table holds them lower-cased).
    pub fn host_id(&self, name: &str) -> Option<HostId> {
        if !is_host_name(name) {
            return None;
        }
        let name = name.to_ascii_lowercase();
        // The host list is sorted.
        self.table()
            .hosts
            .binary_search_by(|host| host.as_str().cmp(&name))
            .ok()
            .map(|index| HostId(index as u32))
    }

    pub fn host(&self, name: &str) -> Result<HostView> {
        let id = self.host_id(name).ok_or_else(|| {
            SearchError::NotFound(format!("there is no host {name:?} in the crawl"))
        })?;
        let urls = self
            .table()
            .pages
            .iter()
            .filter(|page| page.host == id)
            .count();
        let mirrors = self.mirrors();
        let (mirrored, others): (Vec<&PairReport>, Vec<&PairReport>) = mirrors
            .of_host(id)
            .into_iter()
            .partition(|report| report.level.is_mirror());
        let view = |report: &PairReport| self.host_mirror_view(id, report);
        Ok(HostView {
            name: name.to_string(),
            urls,
            considered: mirrors.is_considered(id),
            min_urls: mirrors.config.min_urls,
            more_mirrors: mirrored.len().saturating_sub(MAX_HOST_PAIRS),
            more_others: others.len().saturating_sub(MAX_HOST_PAIRS),
            mirrors: mirrored
                .into_iter()
                .take(MAX_HOST_PAIRS)
                .map(view)
                .collect(),
            others: others.into_iter().take(MAX_HOST_PAIRS).map(view).collect(),
        })
    }

    fn host_mirror_view(&self, here: HostId, report: &PairReport) -> HostMirrorView {
        let here_is_a = report.pair.a == here;
        let other = report.pair.other(here);
        HostMirrorView {
            other: self.table().host_name(other).to_string(),
            level: report.level,
            meaning: report.level.meaning(),
            mirror: report.level.is_mirror(),
            rankers: report
                .ranks
                .iter()
                .map(|(ranker, rank)| format!("{ranker} #{rank}"))
                .collect(),
            subtrees: report
                .subtrees
                .iter()
                .map(|subtree| {
                    if here_is_a {
                        (subtree.a.clone(), subtree.b.clone())
                    } else {
                        (subtree.b.clone(), subtree.a.clone())
                    }
                })
                .collect(),
            tests: report
                .tests
                .iter()
                .map(|test| {
                    let (path_here, path_there) = if here_is_a {
                        (test.path_a.clone(), test.path_b.clone())
                    } else {
                        (test.path_b.clone(), test.path_a.clone())
                    };
                    TestView {
                        from_here: test.from_a == here_is_a,
                        path_here,
                        path_there,
                        outcome: test.outcome.code(),
                        meaning: test.outcome.meaning(),
                        resemblance: test.resemblance.map(|value| format!("{value:.2}")),
                    }
                })
                .collect(),
            shared_ip: report.shared_ip.clone(),
            clustered_pages: if here_is_a {
                report.clustered_pages
            } else {
                (report.clustered_pages.1, report.clustered_pages.0)
            },
        }
    }
}
