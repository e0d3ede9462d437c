//! Query-string parameters, parsed by hand so that every malformed value gets
//! the site's own 400 page naming it.

use crate::collections::{ClusterId, CollectionId, LineageId};
use crate::pages::{HostId, PageId};
use crate::search::{Filters, Rank, SearchRequest};

use super::error::AppError;

/// Most expansions one search URL may hold open.
const MAX_EXPANDED: usize = 20;

/// What an expansion expands: the Collection expansion of a collection,
/// the Replica expansion of a cluster with its hit page, or more from a
/// site (a host's other matching pages in no cluster).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Collection(CollectionId),
    Replicas(ClusterId, Option<PageId>),
    Site(HostId),
}

/// An expansion held open in a search URL (`expand=c12,r3-40p2,s7`): its
/// target and which page of its rows is shown (`p2`; the first when absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expanded {
    pub target: Target,
    /// From 1.
    pub page: usize,
}

impl Target {
    /// Its token in `expand`, for the first page.
    pub fn token(&self) -> String {
        match self {
            Target::Collection(id) => format!("c{id}"),
            Target::Replicas(id, None) => format!("r{id}"),
            Target::Replicas(id, Some(hit)) => format!("r{id}-{hit}"),
            Target::Site(host) => format!("s{host}"),
        }
    }

    fn parse(token: &str) -> Option<Target> {
        if let Some(id) = token.strip_prefix('c') {
            return id.parse::<CollectionId>().ok().map(Target::Collection);
        }
        if let Some(id) = token.strip_prefix('s') {
            return id.parse::<HostId>().ok().map(Target::Site);
        }
        let rest = token.strip_prefix('r')?;
        match rest.split_once('-') {
            Some((cluster, hit)) => Some(Target::Replicas(
                cluster.parse::<ClusterId>().ok()?,
                Some(hit.parse::<PageId>().ok()?),
            )),
            None => Some(Target::Replicas(rest.parse::<ClusterId>().ok()?, None)),
        }
    }
}

impl Expanded {
    pub fn first(target: Target) -> Expanded {
        Expanded { target, page: 1 }
    }

    /// Its token in `expand`.
    pub fn token(&self) -> String {
        match self.page {
            1 => self.target.token(),
            page => format!("{}p{page}", self.target.token()),
        }
    }

    fn parse(token: &str) -> Option<Expanded> {
        let (target, page) = match token.rsplit_once('p') {
            Some((target, page)) => (target, parse_page(page)?),
            None => (token, 1),
        };
        Some(Expanded {
            target: Target::parse(target)?,
            page,
        })
    }
}

/// A page number of an expansion: decimal, from 1, at most 100,000.
fn parse_page(text: &str) -> Option<usize> {
    if text.is_empty() || text.len() > 6 || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse()
        .ok()
        .filter(|page| (1..=100_000).contains(page))
}

/// The parameters of any route.
#[derive(Debug, Clone, Default)]
pub struct Params {
    pub q: String,
    pub page: Option<String>,
    pub rollup: Option<String>,
    pub rank: Option<String>,
    pub expand: Option<String>,
    pub hit: Option<String>,
    /// Pages an expansion leaves out (its entry's own).
    pub not: Option<String>,
    /// `as_typed=1`: no correction of a query that finds nothing.
    pub as_typed: bool,
    /// The facets' values chosen.
    pub manual: Option<String>,
    pub version: Option<String>,
    pub host: Option<String>,
}

/// Longest version a `version` filter names.
const LONGEST_VERSION: usize = 64;

/// Longest host name (RFC 1035).
const LONGEST_HOST: usize = 253;

impl Params {
    /// Reads a query string; unknown parameters are ignored, as browsers
    /// and scripts add their own.
    pub fn parse(query_string: &str) -> Params {
        let mut params = Params::default();
        for (name, value) in url::form_urlencoded::parse(query_string.as_bytes()) {
            let value = value.into_owned();
            match name.as_ref() {
                "q" => params.q = value,
                "as_typed" => params.as_typed = value == "1",
                "page" => params.page = Some(value),
                "rollup" => params.rollup = Some(value),
                "rank" => params.rank = Some(value),
                "expand" => params.expand = Some(value),
                "hit" => params.hit = Some(value),
                "not" => params.not = Some(value),
                "manual" => params.manual = Some(value),
                "version" => params.version = Some(value),
                "host" => params.host = Some(value),
                _ => {}
            }
        }
        params
    }

    pub fn search_request(&self) -> Result<SearchRequest, AppError> {
        let page = match self.page.as_deref() {
            None | Some("") => 1,
            Some(text) => text
                .parse::<usize>()
                .ok()
                .filter(|&page| page >= 1)
                .ok_or_else(|| {
                    AppError::BadRequest(format!("page must be a number from 1, not {text:?}"))
                })?,
        };
        let rollup = match self.rollup.as_deref() {
            None | Some("") | Some("on") => true,
            Some("off") => false,
            Some(other) => {
                return Err(AppError::BadRequest(format!(
                    "rollup must be on or off, not {other:?}"
                )))
            }
        };
        let rank = match self.rank.as_deref() {
            None | Some("") | Some("relevance") => Rank::Relevance,
            Some("replication") => Rank::Replication,
            Some(other) => {
                return Err(AppError::BadRequest(format!(
                    "rank must be relevance or replication, not {other:?}"
                )))
            }
        };
        Ok(SearchRequest {
            query: self.q.clone(),
            page,
            rollup,
            rank,
            as_typed: self.as_typed,
            filters: self.filters()?,
        })
    }

    /// The facets' values chosen: a manual by its number, a version and a
    /// host by name; an empty value is none.
    fn filters(&self) -> Result<Filters, AppError> {
        fn given(value: &Option<String>) -> Option<&str> {
            value.as_deref().map(str::trim).filter(|v| !v.is_empty())
        }
        let manual = match given(&self.manual) {
            None => None,
            Some(text) => Some(text.parse::<LineageId>().map_err(|_| {
                AppError::BadRequest(format!("manual must be a manual's number, not {text:?}"))
            })?),
        };
        let version = given(&self.version).map(str::to_string);
        if version
            .as_ref()
            .is_some_and(|version| version.len() > LONGEST_VERSION)
        {
            return Err(AppError::BadRequest(format!(
                "version must be at most {LONGEST_VERSION} bytes"
            )));
        }
        let host = given(&self.host).map(str::to_ascii_lowercase);
        if host.as_ref().is_some_and(|host| host.len() > LONGEST_HOST) {
            return Err(AppError::BadRequest(format!(
                "host must be at most {LONGEST_HOST} bytes"
            )));
        }
        Ok(Filters {
            manual,
            version,
            host,
        })
    }

    /// The page of an expansion's own route (`page`, from 1).
    pub fn expansion_page(&self) -> Result<usize, AppError> {
        match self.page.as_deref() {
            None | Some("") => Ok(1),
            Some(text) => parse_page(text).ok_or_else(|| {
                AppError::BadRequest(format!(
                    "page must be a number from 1 to 100000, not {text:?}"
                ))
            }),
        }
    }

    /// The pages an expansion leaves out (`not=12,40`), at most
    /// [`MAX_EXPANDED`].
    pub fn excluded(&self) -> Result<Vec<PageId>, AppError> {
        let Some(list) = self.not.as_deref() else {
            return Ok(Vec::new());
        };
        let pages: Option<Vec<PageId>> = list
            .split(',')
            .filter(|id| !id.is_empty())
            .map(|text| text.parse::<PageId>().ok())
            .collect();
        match pages {
            Some(pages) if pages.len() <= MAX_EXPANDED => Ok(pages),
            _ => Err(AppError::BadRequest(format!(
                "not takes up to {MAX_EXPANDED} page ids separated by commas, not {list:?}"
            ))),
        }
    }

    /// The expansions held open, in order, one per target.
    pub fn expanded(&self) -> Result<Vec<Expanded>, AppError> {
        let Some(list) = self.expand.as_deref() else {
            return Ok(Vec::new());
        };
        let mut expanded = Vec::new();
        for token in list.split(',').filter(|token| !token.is_empty()) {
            let parsed = Expanded::parse(token).ok_or_else(|| {
                AppError::BadRequest(format!(
                    "expand takes c<collection>, r<cluster>[-<page>] and s<host>, each with an optional p<page>, separated by commas, not {token:?}"
                ))
            })?;
            if !expanded
                .iter()
                .any(|open: &Expanded| open.target == parsed.target)
            {
                expanded.push(parsed);
            }
        }
        if expanded.len() > MAX_EXPANDED {
            return Err(AppError::BadRequest(format!(
                "at most {MAX_EXPANDED} expansions can be open at once"
            )));
        }
        Ok(expanded)
    }

    /// The `hit` page of a Replica link.
    pub fn hit(&self) -> Result<Option<PageId>, AppError> {
        match self.hit.as_deref() {
            None | Some("") => Ok(None),
            Some(text) => text.parse::<PageId>().ok().map(Some).ok_or_else(|| {
                AppError::BadRequest(format!("hit must be a page id, not {text:?}"))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansions_round_trip_and_bad_tokens_are_refused() {
        let params = Params::parse("q=a+b&expand=c12%2Cr3-40p2,r5,c12p3,s7p10");
        assert_eq!(params.q, "a b");
        let expanded = params.expanded().unwrap();
        assert_eq!(
            expanded,
            vec![
                Expanded::first(Target::Collection(CollectionId(12))),
                Expanded {
                    target: Target::Replicas(ClusterId(3), Some(PageId(40))),
                    page: 2
                },
                Expanded::first(Target::Replicas(ClusterId(5), None)),
                Expanded {
                    target: Target::Site(HostId(7)),
                    page: 10
                },
            ],
            "one expansion per target: the first c12 wins"
        );
        let tokens: Vec<String> = expanded.iter().map(Expanded::token).collect();
        assert_eq!(tokens, ["c12", "r3-40p2", "r5", "s7p10"]);
        assert_eq!(
            Params::parse("not=12,40").excluded().unwrap(),
            [PageId(12), PageId(40)]
        );
        assert!(Params::parse("not=12,x").excluded().is_err());
        for bad in [
            "x1",
            "c",
            "c-1",
            "c1.5",
            "r3-",
            "r-4",
            "c99999999999",
            "c+1",
            "c1p0",
            "c1p",
            "c1p1000001",
            "s",
            "sp2",
        ] {
            assert!(
                Params::parse(&format!("expand={bad}")).expanded().is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn page_rollup_and_rank_are_checked() {
        let request = Params::parse("q=x&page=3&rollup=off&rank=replication")
            .search_request()
            .unwrap();
        assert_eq!(
            (request.page, request.rollup, request.rank),
            (3, false, Rank::Replication)
        );
        for bad in [
            "page=0",
            "page=-1",
            "page=two",
            "rollup=maybe",
            "rank=pagerank",
        ] {
            assert!(Params::parse(bad).search_request().is_err(), "{bad}");
        }
        assert!(Params::parse("hit=12a").hit().is_err());
        assert_eq!(Params::parse("hit=12").hit().unwrap(), Some(PageId(12)));
    }
}
