//! The site's URLs for what the engine returns: the engine gives typed ids
//! (`search::CollectionLink` and the like), and only this module turns them
//! into links; the routes parse them back with the ids' `FromStr`.

use std::fmt::Display;

use crate::search::{CollectionLink, ReplicaLink, SiteLink};

/// A query as the value of `q=` (form encoding: a space is `+`).
pub fn query_value(query: &str) -> String {
    url::form_urlencoded::byte_serialize(query.as_bytes()).collect()
}

/// An entry's Collection expansion: the collection's matching pages but
/// the entry's own.
pub fn collection(link: &CollectionLink, query: &str) -> String {
    format!(
        "/collection/{}?q={}&not={}",
        link.id,
        query_value(query),
        link.entry
    )
}

/// A copy's Collection expansion in a Replica list. (Templates call it:
/// askama passes its arguments by reference.)
pub fn copy_collection(id: impl Display, query: impl AsRef<str>) -> String {
    format!("/collection/{id}?q={}", query_value(query.as_ref()))
}

/// An entry's Replica expansion, naming the entry's page.
pub fn replicas(link: &ReplicaLink, query: &str) -> String {
    format!(
        "/replicas/{}?q={}&hit={}",
        link.cluster,
        query_value(query),
        link.hit
    )
}

/// An entry's "more from this site", leaving out the host's shown pages.
pub fn site(link: &SiteLink, query: &str) -> String {
    let shown: Vec<String> = link.shown.iter().map(ToString::to_string).collect();
    format!(
        "/site/{}?q={}&not={}",
        link.host_id,
        query_value(query),
        shown.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collections::{ClusterId, CollectionId};
    use crate::pages::{HostId, PageId};

    #[test]
    fn links_carry_the_query_and_the_ids_the_routes_parse_back() {
        let query = "virtual host&c++";
        let collection = CollectionLink {
            id: CollectionId(12),
            matching_pages: 3,
            entry: PageId(7),
        };
        assert_eq!(
            super::collection(&collection, query),
            "/collection/12?q=virtual+host%26c%2B%2B&not=7"
        );
        let replicas = ReplicaLink {
            cluster: ClusterId(4),
            copies: 5,
            hit: PageId(7),
        };
        assert_eq!(super::replicas(&replicas, "x"), "/replicas/4?q=x&hit=7");
        let site = SiteLink {
            host_id: HostId(2),
            more: 9,
            shown: vec![PageId(1), PageId(3)],
        };
        assert_eq!(super::site(&site, "x"), "/site/2?q=x&not=1,3");
        // As a template calls it: arguments by reference.
        let (id, query) = (&CollectionId(8), &String::from("a b"));
        assert_eq!(copy_collection(id, query), "/collection/8?q=a+b");
    }
}
