//! The two expansions of an entry (cho-2000 §5.2): Collection rolls the
//! collection down to every page of it that matches the query; Replica lists
//! every copy of the collection, with the copy of the matched page on each.

use std::collections::HashMap;

use serde::Serialize;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::Term;

use super::collector::HitCollector;
use super::view::{encode, plain, PageLink, ReplicaLink, SnippetPart};
use super::{Engine, Result, SearchError};
use crate::collections::{ClusterId, ClusterKind, CollectionId};
use crate::index::IndexField;
use crate::pages::PageId;

/// A page of a Collection expansion.
#[derive(Debug, Clone, Serialize)]
pub struct ExpandedPage {
    #[serde(flatten)]
    pub page: PageLink,
    pub snippet: String,
    #[serde(skip)]
    pub snippet_parts: Vec<SnippetPart>,
    pub score: f32,
}

/// The Collection expansion: the collection's pages that match the query,
/// best first (all of its pages, in URL order, without a query).
#[derive(Debug, Clone, Serialize)]
pub struct CollectionView {
    pub id: String,
    pub cluster: String,
    pub host: String,
    pub root: String,
    pub prefix: String,
    /// Pages of the collection.
    pub size: usize,
    pub query: String,
    pub matching_pages: usize,
    pub pages: Vec<ExpandedPage>,
    /// More pages matched than an expansion lists (`search.max_expansion_pages`).
    pub truncated: bool,
    pub replicas: Option<ReplicaLink>,
}

/// One copy in a Replica expansion.
#[derive(Debug, Clone, Serialize)]
pub struct CopyView {
    pub collection: String,
    pub host: String,
    pub root: String,
    pub prefix: String,
    pub pages: usize,
    /// The principal copy (most in-links from other hosts, then newest).
    pub principal: bool,
    /// As many pages as the cluster's largest copy.
    pub complete: bool,
    /// Newest crawl date among its pages.
    pub crawled: String,
    /// Its pages matching the query (`None` without a query).
    pub matching_pages: Option<u32>,
    /// Its copy of the page the entry showed, when it has one.
    pub hit_copy: Option<PageLink>,
    /// The Collection expansion of this copy, when it has matching pages.
    pub href: Option<String>,
    /// How it mirrors the principal copy (bharat-broder-1999 levels);
    /// `None` for the principal copy and copies on its host.
    pub mirroring: Option<Mirroring>,
}

/// How a copy mirrors the principal copy (its folder against the
/// principal's, [`crate::mirrors::CopyLevel`]).
#[derive(Debug, Clone, Serialize)]
pub struct Mirroring {
    /// `1`..`5`, `mismatch` or `untested`.
    pub level: String,
    pub meaning: String,
    /// The page of the copy's host, with its mirrored hosts.
    pub href: String,
}

/// The Replica expansion: every copy of a collection.
#[derive(Debug, Clone, Serialize)]
pub struct ReplicaView {
    pub cluster: String,
    pub kind: ClusterKind,
    pub cardinality: usize,
    pub size: u32,
    pub extended: bool,
    pub query: String,
    /// The page the entry showed, when the link named one.
    pub hit: Option<PageLink>,
    pub copies: Vec<CopyView>,
    /// Copies of the hit page that are in none of these collections.
    pub other_copies: Vec<PageLink>,
}

impl Engine {
    fn filtered(&self, query: Box<dyn Query>, field: IndexField, value: u64) -> BooleanQuery {
        let term = Term::from_field_u64(self.index.fields().get(field), value);
        BooleanQuery::new(vec![
            (Occur::Must, query),
            (
                Occur::Must,
                Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
            ),
        ])
    }

    /// The Collection expansion of collection `id` for `query`.
    pub fn collection(&self, id: CollectionId, query: &str) -> Result<CollectionView> {
        let collection = self
            .collections
            .collection(id)
            .ok_or_else(|| SearchError::NotFound(format!("there is no collection {id}")))?;
        let query_text = self.check_query(query)?;
        let limit = self.config.max_expansion_pages;
        let mut pages = Vec::new();
        let matching_pages;
        if query_text.is_empty() {
            matching_pages = collection.pages.len();
            for &page in collection.pages.iter().take(limit) {
                if let Some(link) = self.page_link(page) {
                    pages.push(ExpandedPage {
                        page: link,
                        snippet: String::new(),
                        snippet_parts: Vec::new(),
                        score: 0.0,
                    });
                }
            }
        } else {
            let parsed = self.parse(query_text).query;
            let searcher = self.index.searcher();
            let snippets = self.snippet_generator(&searcher, &*parsed)?;
            let filtered = self.filtered(parsed, IndexField::CollectionId, u64::from(id.0));
            let top = TopDocs::with_limit(collection.pages.len().clamp(1, limit)).order_by_score();
            let (count, hits) = searcher.search(&filtered, &(tantivy::collector::Count, top))?;
            matching_pages = count;
            for (score, address) in hits {
                let hit = super::view::hit_at(&searcher, address, score)?;
                let shown = self.shown(&searcher, &snippets, address, hit.page)?;
                pages.push(ExpandedPage {
                    page: PageLink {
                        page_id: hit.page.to_string(),
                        url: shown.url,
                        title: shown.title,
                        host: shown.host,
                    },
                    snippet: plain(&shown.parts),
                    snippet_parts: shown.parts,
                    score,
                });
            }
        }
        let replicas = self.replica_link(collection.cluster, collection.root, &encode(query));
        Ok(CollectionView {
            id: id.to_string(),
            cluster: collection.cluster.to_string(),
            host: self.table.host_name(collection.host).to_string(),
            root: self
                .table
                .page(collection.root)
                .map(|page| page.url.clone())
                .unwrap_or_default(),
            prefix: collection.prefix.clone(),
            size: collection.pages.len(),
            query: query.to_string(),
            truncated: matching_pages > pages.len(),
            matching_pages,
            pages,
            replicas,
        })
    }

    /// The Replica expansion of cluster `id`, with each copy's copy of page
    /// `hit` and its pages matching `query`.
    pub fn replicas(&self, id: ClusterId, query: &str, hit: Option<PageId>) -> Result<ReplicaView> {
        let cluster = self
            .collections
            .cluster(id)
            .ok_or_else(|| SearchError::NotFound(format!("there is no cluster {id}")))?;
        if let Some(page) = hit {
            if self.table.page(page).is_none() {
                return Err(SearchError::NotFound(format!("there is no page {page}")));
            }
        }
        let query_text = self.check_query(query)?;
        let matching = if query_text.is_empty() {
            None
        } else {
            let parsed = self.parse(query_text).query;
            let filtered = self.filtered(parsed, IndexField::ClusterId, u64::from(id.0));
            let hits = self.index.searcher().search(
                &filtered,
                &HitCollector {
                    replication_boost: None,
                },
            )?;
            let mut counts: HashMap<CollectionId, u32> = HashMap::new();
            for hit in hits {
                if let Some(collection) = hit.collection {
                    *counts.entry(collection).or_default() += 1;
                }
            }
            Some(counts)
        };
        let hit_copies: &[PageId] = hit.map_or(&[], |page| self.copies_of(page));
        let q = encode(query);
        let mut listed: Vec<PageId> = Vec::new();
        let copies = cluster
            .collections
            .iter()
            .filter_map(|&collection_id| {
                let collection = self.collections.collection(collection_id)?;
                let host_name = self.table.host_name(collection.host);
                let mirroring = self
                    .mirrors()
                    .copy_level(collection_id)
                    .map(|copy| Mirroring {
                        level: copy.level.to_string(),
                        meaning: copy.level.meaning().to_string(),
                        href: format!("/host/{}", encode(host_name)),
                    });
                let hit_copy = hit.and_then(|page| {
                    if collection.pages.binary_search(&page).is_ok() {
                        return Some(page);
                    }
                    hit_copies
                        .iter()
                        .copied()
                        .find(|copy| collection.pages.binary_search(copy).is_ok())
                });
                listed.extend(hit_copy);
                let matching_pages = matching
                    .as_ref()
                    .map(|counts| counts.get(&collection_id).copied().unwrap_or(0));
                Some(CopyView {
                    collection: collection_id.to_string(),
                    host: self.table.host_name(collection.host).to_string(),
                    root: self
                        .table
                        .page(collection.root)
                        .map(|page| page.url.clone())
                        .unwrap_or_default(),
                    prefix: collection.prefix.clone(),
                    pages: collection.pages.len(),
                    principal: collection_id == cluster.principal(),
                    complete: collection.pages.len() >= cluster.size as usize,
                    crawled: collection
                        .pages
                        .iter()
                        .filter_map(|&page| self.table.page(page).map(|row| row.date.as_str()))
                        .max()
                        .unwrap_or_default()
                        .to_string(),
                    href: (cluster.kind == ClusterKind::Collection && matching_pages != Some(0))
                        .then(|| format!("/collection/{collection_id}?q={q}")),
                    matching_pages,
                    hit_copy: hit_copy.and_then(|page| self.page_link(page)),
                    mirroring,
                })
            })
            .collect();
        let other_copies = hit_copies
            .iter()
            .filter(|&&copy| {
                Some(copy) != hit
                    && !listed.contains(&copy)
                    && self.collections.cluster_of(copy) != Some(id)
            })
            .filter_map(|&copy| self.page_link(copy))
            .collect();
        Ok(ReplicaView {
            cluster: id.to_string(),
            kind: cluster.kind,
            cardinality: cluster.cardinality(),
            size: cluster.size,
            extended: cluster.extended,
            query: query.to_string(),
            hit: hit.and_then(|page| self.page_link(page)),
            copies,
            other_copies,
        })
    }
}
