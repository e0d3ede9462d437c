//! `/api/search`'s JSON (DESIGN.md): the engine's results, with the links
//! to their expansions that the site builds ([`super::links`]).

use serde::Serialize;

use super::links;
use crate::search::{CollectionLink, Facets, Rank, ReplicaLink, ResultGroup, Results, SiteLink};

/// A page of results as the API gives it.
#[derive(Serialize)]
pub struct ApiResults<'r> {
    query: &'r str,
    page: usize,
    pages: usize,
    total_hits: u64,
    total_groups: u64,
    took_ms: f64,
    suggestion: &'r Option<String>,
    showing_for: &'r Option<String>,
    most_words: bool,
    rollup: bool,
    rank: Rank,
    searched_words: &'r Option<String>,
    lenient: bool,
    chrome_searched: bool,
    facets: &'r Facets,
    groups: Vec<ApiGroup<'r>>,
}

/// One entry: the engine's fields, then its links.
#[derive(Serialize)]
struct ApiGroup<'r> {
    #[serde(flatten)]
    group: &'r ResultGroup,
    collection: Option<Linked<&'r CollectionLink>>,
    replicas: Option<Linked<&'r ReplicaLink>>,
    site: Option<Linked<&'r SiteLink>>,
}

/// A link's fields and where it leads.
#[derive(Serialize)]
struct Linked<T> {
    #[serde(flatten)]
    link: T,
    href: String,
}

impl<'r> ApiResults<'r> {
    pub fn of(results: &'r Results) -> ApiResults<'r> {
        let query = results.query.as_str();
        ApiResults {
            query,
            page: results.page,
            pages: results.pages,
            total_hits: results.total_hits,
            total_groups: results.total_groups,
            took_ms: results.took_ms,
            suggestion: &results.suggestion,
            showing_for: &results.showing_for,
            most_words: results.most_words,
            rollup: results.rollup,
            rank: results.rank,
            searched_words: &results.searched_words,
            lenient: results.lenient,
            chrome_searched: results.chrome_searched,
            facets: &results.facets,
            groups: results
                .groups
                .iter()
                .map(|group| ApiGroup {
                    group,
                    collection: group.collection.as_ref().map(|link| Linked {
                        href: links::collection(link, query),
                        link,
                    }),
                    replicas: group.replicas.as_ref().map(|link| Linked {
                        href: links::replicas(link, query),
                        link,
                    }),
                    site: group.site.as_ref().map(|link| Linked {
                        href: links::site(link, query),
                        link,
                    }),
                })
                .collect(),
        }
    }
}
