//! Query-string parameters, parsed by hand so that every malformed value gets
//! the site's own 400 page naming it.

use crate::collections::{ClusterId, CollectionId};
use crate::pages::PageId;
use crate::search::{self, Rank, SearchRequest};

use super::error::AppError;

/// Most expansions one search URL may hold open.
const MAX_EXPANDED: usize = 20;

/// An expansion held open in a search URL (`expand=c12,r3-40`): the
/// Collection expansion of a collection, or the Replica expansion of a
/// cluster with its hit page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expanded {
    Collection(CollectionId),
    Replicas(ClusterId, Option<PageId>),
}

impl Expanded {
    /// Its token in `expand`.
    pub fn token(&self) -> String {
        match self {
            Expanded::Collection(id) => format!("c{id}"),
            Expanded::Replicas(id, None) => format!("r{id}"),
            Expanded::Replicas(id, Some(hit)) => format!("r{id}-{hit}"),
        }
    }

    fn parse(token: &str) -> Option<Expanded> {
        if let Some(id) = token.strip_prefix('c') {
            return search::parse_collection_id(id).map(Expanded::Collection);
        }
        let rest = token.strip_prefix('r')?;
        match rest.split_once('-') {
            Some((cluster, hit)) => Some(Expanded::Replicas(
                search::parse_cluster_id(cluster)?,
                Some(search::parse_page_id(hit)?),
            )),
            None => Some(Expanded::Replicas(search::parse_cluster_id(rest)?, None)),
        }
    }
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
}

impl Params {
    /// Reads a query string; unknown parameters are ignored, as browsers
    /// and scripts add their own.
    pub fn parse(query_string: &str) -> Params {
        let mut params = Params::default();
        for (name, value) in url::form_urlencoded::parse(query_string.as_bytes()) {
            let value = value.into_owned();
            match name.as_ref() {
                "q" => params.q = value,
                "page" => params.page = Some(value),
                "rollup" => params.rollup = Some(value),
                "rank" => params.rank = Some(value),
                "expand" => params.expand = Some(value),
                "hit" => params.hit = Some(value),
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
        })
    }

    /// The expansions held open, in order, without repeats.
    pub fn expanded(&self) -> Result<Vec<Expanded>, AppError> {
        let Some(list) = self.expand.as_deref() else {
            return Ok(Vec::new());
        };
        let mut expanded = Vec::new();
        for token in list.split(',').filter(|token| !token.is_empty()) {
            let parsed = Expanded::parse(token).ok_or_else(|| {
                AppError::BadRequest(format!(
                    "expand takes c<collection> and r<cluster>[-<page>] separated by commas, not {token:?}"
                ))
            })?;
            if !expanded.contains(&parsed) {
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
            Some(text) => search::parse_page_id(text).map(Some).ok_or_else(|| {
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
        let params = Params::parse("q=a+b&expand=c12%2Cr3-40,r5,c12");
        assert_eq!(params.q, "a b");
        let expanded = params.expanded().unwrap();
        assert_eq!(
            expanded,
            vec![
                Expanded::Collection(CollectionId(12)),
                Expanded::Replicas(ClusterId(3), Some(PageId(40))),
                Expanded::Replicas(ClusterId(5), None),
            ]
        );
        let tokens: Vec<String> = expanded.iter().map(Expanded::token).collect();
        assert_eq!(tokens, ["c12", "r3-40", "r5"]);
        for bad in [
            "x1",
            "c",
            "c-1",
            "c1.5",
            "r3-",
            "r-4",
            "c99999999999",
            "c+1",
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
