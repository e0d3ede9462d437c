//! The expansions of an entry (cho-2000 §5.2): Collection rolls the
//! collection down to every page of it that matches the query; Replica lists
//! every copy of the collection, with the copy of the matched page on each;
//! a host's other matching pages in no cluster fold under its last entry
//! ("more from this site"). Each shows [`EXPANSION_ROWS`] rows at a time, in
//! pages (Solr's `expand.rows`, Elasticsearch's `inner_hits` size and from),
//! and never lists the page its entry already shows.

use std::collections::HashMap;

use serde::Serialize;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::Term;

use super::collector::HitCollector;
use super::view::{as_text, plain, PageLink, ReplicaLink, SnippetPart};
use super::{Engine, Result, SearchError};
use crate::collections::lineage::LineageCopy;
use crate::collections::{Cluster, ClusterId, ClusterKind, Collection, CollectionId, Collections};
use crate::index::{IndexField, NONE};
use crate::mirrors::Mirrors;
use crate::pages::{HostId, PageId};

/// Rows an expansion shows at a time.
pub const EXPANSION_ROWS: usize = 10;

/// Which rows of an expansion are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Paging {
    /// From 1.
    pub page: usize,
    pub pages: usize,
    /// Rows in all (the entry's own page left out).
    pub rows: usize,
    /// The first and last row shown, from 1 (0 and 0 when none is).
    pub first: usize,
    pub last: usize,
}

impl Paging {
    /// Page `page` of `rows` rows, brought within the pages there are.
    pub fn of(rows: usize, page: usize) -> Paging {
        let pages = rows.div_ceil(EXPANSION_ROWS).max(1);
        let page = page.clamp(1, pages);
        let first = (page - 1) * EXPANSION_ROWS;
        let last = (first + EXPANSION_ROWS).min(rows);
        Paging {
            page,
            pages,
            rows,
            first: if rows == 0 { 0 } else { first + 1 },
            last,
        }
    }

    /// Rows to skip before the shown ones.
    pub fn skip(&self) -> usize {
        self.first.saturating_sub(1)
    }

    pub fn has_next(&self) -> bool {
        self.page < self.pages
    }

    pub fn has_previous(&self) -> bool {
        self.page > 1
    }
}

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
/// best first (all of its pages, in reading order, without a query).
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
    /// Pages of the collection matching the query (all of them without a
    /// query), the entry's own page included.
    pub matching_pages: usize,
    /// The entry's own page, left out of the rows.
    pub excluded: Option<String>,
    pub paging: Paging,
    pub pages: Vec<ExpandedPage>,
    /// More pages matched than an expansion lists (`search.max_expansion_pages`).
    pub truncated: bool,
    pub replicas: Option<ReplicaLink>,
}

/// More from a site: a host's matching pages in no cluster beyond those its
/// entries show.
#[derive(Debug, Clone, Serialize)]
pub struct SiteView {
    pub host_id: String,
    pub host: String,
    pub query: String,
    /// The host's pages in no cluster that match, its entries' included.
    pub matching_pages: usize,
    /// The pages its entries show, left out of the rows.
    pub excluded: Vec<String>,
    pub paging: Paging,
    pub pages: Vec<ExpandedPage>,
    pub truncated: bool,
}

/// A page of an expansion's rows, and what they were taken from.
struct Rows {
    /// Matching pages, the excluded included.
    matching_pages: usize,
    paging: Paging,
    pages: Vec<ExpandedPage>,
    /// More matched than an expansion may list.
    truncated: bool,
}

/// One copy in a Replica expansion: a host and folder holding the
/// collection (fragments of one copy, collections of the cluster under the
/// same folder of the same host, are one row).
#[derive(Debug, Clone, Serialize)]
pub struct CopyView {
    /// Its largest collection (the principal when the row holds it).
    #[serde(serialize_with = "as_text")]
    pub collection: CollectionId,
    pub host: String,
    pub root: String,
    pub prefix: String,
    pub pages: usize,
    /// Collections of the cluster the row holds.
    pub parts: usize,
    /// The principal copy.
    pub principal: bool,
    /// As many pages as the cluster's largest copy.
    pub complete: bool,
    /// Newest crawl date among its pages.
    pub crawled: String,
    /// Its pages matching the query (`None` without a query).
    pub matching_pages: Option<u32>,
    /// Its copy of the page the entry showed, when it has one; else its
    /// page at the same place (the page in another version).
    pub hit_copy: Option<PageLink>,
    /// Whether `hit_copy` is a copy of the page (not another version's).
    pub hit_is_copy: bool,
    /// Whether this copy has a Collection expansion: a collection of
    /// pages with pages matching the query (or no query).
    pub expandable: bool,
    /// How its host mirrors the principal copy's host: the level of the
    /// pair on the host page (bharat-broder-1999); `None` on the principal's
    /// host and for hosts the mirror stage did not pair.
    pub mirroring: Option<Mirroring>,
    /// The version of the manual its pages name.
    pub version: Option<String>,
    /// Other names of its server (host aliases) holding the same copy at
    /// the same paths: one row, "also as …".
    pub also_as: Vec<String>,
    /// What kind of copy it is, in plain words ("the original", "exact
    /// copy", "older version 3.2", "part of the manual: library/ only").
    pub kind: String,
    /// For the original: why it is taken as the original.
    pub why: Option<String>,
    /// How much of the manual it holds ("all 312 pages", "40% (125 of 312
    /// pages)").
    pub share: String,
    /// When it was crawled, as a person reads a date ("21 Nov 2026").
    pub crawled_on: String,
    /// The original URL of its copy of the page, when a browser may follow
    /// it.
    pub hit_link: Option<String>,
}

/// A copy of another version of the manual (or a copy outside the
/// cluster), in a Replica expansion.
#[derive(Debug, Clone, Serialize)]
pub struct VersionView {
    pub host: String,
    pub prefix: String,
    pub version: Option<String>,
    pub pages: u32,
    /// Its page at the place of the page the entry showed, when it has one.
    pub hit_copy: Option<PageLink>,
}

/// How a copy's host mirrors the principal copy's host.
#[derive(Debug, Clone, Serialize)]
pub struct Mirroring {
    /// `1`..`5` or `none`, as the host page gives it.
    pub level: String,
    pub meaning: String,
}

/// The Replica expansion: every copy of a collection.
#[derive(Debug, Clone, Serialize)]
pub struct ReplicaView {
    pub cluster: String,
    pub kind: ClusterKind,
    /// Copies: rows of host and folder.
    pub cardinality: usize,
    pub size: u32,
    /// Some copy is partial (a partial mirror or another version).
    pub differ: bool,
    pub query: String,
    /// The page the entry showed, when the link named one.
    pub hit: Option<PageLink>,
    pub paging: Paging,
    /// The rows shown, the principal copy first.
    pub copies: Vec<CopyView>,
    /// Copies of the hit page that are in none of these collections.
    pub other_copies: Vec<PageLink>,
    /// The manual's copies outside this cluster: its other versions, newest
    /// first (at most [`EXPANSION_ROWS`]).
    pub versions: Vec<VersionView>,
    /// Those copies left out of `versions` (it shows [`EXPANSION_ROWS`]).
    pub more_versions: usize,
    /// The version of the principal copy.
    pub version: Option<String>,
}

/// One copy: its collections (the principal or the largest first, which
/// names the row) and their pages in all.
pub(super) struct CopyRow<'c> {
    members: Vec<&'c Collection>,
    pages: usize,
    /// Other names of its server holding the same copy ([`fold_aliases`]).
    also: Vec<HostId>,
}

/// `rows` with each copy on a host alias of an earlier row's host, at the
/// same paths, folded into that row: one server under two names is one
/// copy.
pub(super) fn fold_aliases<'c>(rows: Vec<CopyRow<'c>>, mirrors: &Mirrors) -> Vec<CopyRow<'c>> {
    let path = |row: &CopyRow| -> String {
        let prefix = &row.members[0].prefix;
        let after_scheme = prefix
            .split_once("://")
            .map_or(prefix.as_str(), |(_, rest)| rest);
        after_scheme
            .find('/')
            .map_or("/", |slash| &after_scheme[slash..])
            .to_string()
    };
    let mut kept: Vec<CopyRow<'c>> = Vec::with_capacity(rows.len());
    for row in rows {
        let host = row.members[0].host;
        let same = kept.iter_mut().find(|kept| {
            mirrors.are_aliases(kept.members[0].host, host) && path(kept) == path(&row)
        });
        match same {
            Some(kept) => kept.also.push(host),
            None => kept.push(row),
        }
    }
    kept
}

/// A crawl date as a person reads it: `2026-11-21T10:22:33Z` is
/// "21 Nov 2026" (the text as it is when it is no such date).
pub fn readable_date(date: &str) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let day = date.get(..10).unwrap_or_default();
    let mut parts = day.split('-');
    let (Some(year), Some(month), Some(day_of_month)) = (parts.next(), parts.next(), parts.next())
    else {
        return date.to_string();
    };
    let month = month
        .parse::<usize>()
        .ok()
        .and_then(|month| MONTHS.get(month.checked_sub(1)?));
    match (month, day_of_month.parse::<u32>()) {
        (Some(month), Ok(day_of_month)) if year.len() == 4 => {
            format!("{day_of_month} {month} {year}")
        }
        _ => date.to_string(),
    }
}

/// How one copy's page relates to the original's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageRelation {
    /// The same bytes.
    Exact,
    /// The same text, other markup.
    SameText,
    /// Similar text.
    Changed,
}

/// What kind of copy a row is, in plain words: the original; another
/// version; a part of the manual (the folder it holds, when it holds one);
/// else what its copy of the page (or, without one, the mirror level of
/// its host) says of its text.
pub fn copy_kind(
    principal: bool,
    (version, original_version): (Option<&str>, Option<&str>),
    (complete, part): (bool, Option<&str>),
    relation: Option<PageRelation>,
    level: Option<crate::mirrors::Level>,
) -> String {
    use crate::collections::lineage::{compare_versions, same_release};
    use crate::mirrors::Level;
    if principal {
        return "the original".into();
    }
    if let (Some(version), Some(original)) = (version, original_version) {
        if !same_release(version, original) {
            return match compare_versions(version, original) {
                std::cmp::Ordering::Greater => format!("newer version {version}"),
                _ => format!("older version {version}"),
            };
        }
    }
    if !complete {
        return match part {
            Some(folder) => format!("part of the manual: {folder} only"),
            None => "part of the manual".into(),
        };
    }
    match (relation, level) {
        (Some(PageRelation::Exact), _) | (None, Some(Level::One)) => "exact copy".into(),
        (Some(PageRelation::SameText), _) | (None, Some(Level::Two)) => {
            "same text, other markup (such as rewritten links)".into()
        }
        (Some(PageRelation::Changed), _) | (None, Some(Level::Three)) => {
            "copy with changes (such as a banner)".into()
        }
        (None, Some(Level::Four)) => "copy with some pages under other paths".into(),
        (None, Some(Level::Five)) => "related text (such as a translation)".into(),
        _ => "copy".into(),
    }
}

/// The folder of the original a partial copy holds, from one page's path
/// below the original's folder and its copy's path below the copy's
/// (`library/os.html` and `os.html`: `library/`); `None` when the copy's
/// folder is the original's top.
pub fn part_folder(in_original: &str, in_copy: &str) -> Option<String> {
    let folder = in_original.strip_suffix(in_copy)?;
    (!folder.is_empty() && folder.ends_with('/')).then(|| folder.to_string())
}

/// How much of a manual of `size` pages a copy of `pages` holds.
pub fn share_of(pages: usize, size: usize) -> String {
    if pages >= size {
        return match size {
            1 => "all of its one page".into(),
            _ => format!("all {size} pages"),
        };
    }
    let percent = (pages * 100).checked_div(size).unwrap_or(0).max(1);
    format!("{percent}% ({pages} of {size} pages)")
}

/// A cluster's collections grouped into copies: by host, and on one host
/// by folder (a collection under another's folder is a fragment of it); the
/// principal copy first, then the larger ones, a collection's pages counted
/// by `pages_of`.
pub(super) fn copy_rows<'c>(
    collections: &'c Collections,
    cluster: &Cluster,
    pages_of: impl Fn(&Collection) -> usize,
) -> Vec<CopyRow<'c>> {
    let mut members: Vec<&Collection> = cluster
        .collections
        .iter()
        .filter_map(|&id| collections.collection(id))
        .collect();
    // Host, then the shortest folder first so that it takes in those below.
    members.sort_by(|first, second| {
        (first.host, first.prefix.len(), &first.prefix, first.id).cmp(&(
            second.host,
            second.prefix.len(),
            &second.prefix,
            second.id,
        ))
    });
    let mut rows: Vec<CopyRow> = Vec::new();
    for member in members {
        let holder = rows.iter_mut().find(|row| {
            row.members[0].host == member.host && member.prefix.starts_with(&row.members[0].prefix)
        });
        match holder {
            Some(row) => {
                row.members.push(member);
                row.pages += pages_of(member);
            }
            None => rows.push(CopyRow {
                members: vec![member],
                pages: pages_of(member),
                also: Vec::new(),
            }),
        }
    }
    let principal = cluster.principal();
    let holds_principal = |row: &CopyRow| row.members.iter().any(|member| member.id == principal);
    rows.sort_by_key(|row| (!holds_principal(row), std::cmp::Reverse(row.pages)));
    for row in &mut rows {
        row.members.sort_by_key(|member| {
            (
                member.id != principal,
                std::cmp::Reverse(member.pages.len()),
                member.id,
            )
        });
    }
    rows
}

impl Engine {
    /// The term of a u64 field (an id) for a filter.
    fn id_term(&self, field: IndexField, value: u64) -> Term {
        Term::from_field_u64(self.index.fields().get(field), value)
    }

    /// `query` restricted to the documents holding every one of `filters`.
    fn filtered(&self, query: Box<dyn Query>, filters: Vec<Term>) -> BooleanQuery {
        let mut clauses = vec![(Occur::Must, query)];
        for term in filters {
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(term, IndexRecordOption::Basic)) as Box<dyn Query>,
            ));
        }
        BooleanQuery::new(clauses)
    }

    /// The rows of page `page` of the documents matching `query` and
    /// holding every one of `filters`, best first, pages in `exclude` left out.
    fn ranked_rows(
        &self,
        query_text: &str,
        filters: Vec<Term>,
        exclude: &[PageId],
        page: usize,
    ) -> Result<Rows> {
        let parsed = self.parse(query_text, self.scope_of(query_text)?).query;
        let searcher = self.index.searcher();
        let snippets = self.snippets(
            &searcher,
            &parsed,
            std::time::Instant::now() + self.config.budget(),
        )?;
        let filtered = self.filtered(Box::new(parsed), filters);
        // Enough of the best for the page asked; a page past the last is
        // brought back to the last, whose rows are among them.
        let listable = self.config.max_expansion_pages + exclude.len();
        let limit = (page.saturating_mul(EXPANSION_ROWS) + exclude.len()).clamp(1, listable);
        let (count, hits) = searcher.search(
            &filtered,
            &(
                tantivy::collector::Count,
                TopDocs::with_limit(limit).order_by_score(),
            ),
        )?;
        // The excluded pages are entries' own, which matched.
        let rows = count
            .saturating_sub(exclude.len())
            .min(self.config.max_expansion_pages);
        let paging = Paging::of(rows, page);
        let mut pages = Vec::new();
        for (score, address) in hits {
            let hit = super::view::hit_at(&searcher, address, score)?;
            if exclude.contains(&hit.page) {
                continue;
            }
            pages.push((score, address, hit.page));
        }
        let mut shown = Vec::new();
        for (score, address, page) in pages.into_iter().skip(paging.skip()).take(EXPANSION_ROWS) {
            let view = self.shown(&searcher, &snippets, address, page)?;
            shown.push(ExpandedPage {
                page: PageLink {
                    page_id: page,
                    link: super::view::followable(&view.url),
                    url: view.url,
                    title: view.title,
                    host: view.host,
                },
                snippet: plain(&view.parts),
                snippet_parts: view.parts,
                score,
            });
        }
        Ok(Rows {
            matching_pages: count,
            paging,
            pages: shown,
            truncated: count > self.config.max_expansion_pages,
        })
    }

    /// The Collection expansion of collection `id` for `query`: page `page`
    /// of its matching pages, best first (of all its pages in reading order
    /// without a query), page `exclude` (the entry's own) left out.
    pub fn collection(
        &self,
        id: CollectionId,
        query: &str,
        page: usize,
        exclude: Option<PageId>,
    ) -> Result<CollectionView> {
        let collection = self
            .collections
            .collection(id)
            .ok_or_else(|| SearchError::NotFound(format!("there is no collection {id}")))?;
        let query_text = self.check_query(query)?;
        let exclude: Vec<PageId> = exclude
            .filter(|page| collection.pages.binary_search(page).is_ok())
            .into_iter()
            .collect();
        // A page under two URLs is listed and counted once, by its
        // standing URL (the one the index holds).
        let size = self.collection_size(collection);
        let rows = if query_text.is_empty() {
            let mut listed: Vec<PageId> = self
                .reading_order(collection)
                .into_iter()
                .filter(|page| !exclude.contains(page))
                .collect();
            let listable = listed.len();
            listed.truncate(self.config.max_expansion_pages);
            let paging = Paging::of(listed.len(), page);
            let pages = listed
                .iter()
                .skip(paging.skip())
                .take(EXPANSION_ROWS)
                .filter_map(|&page| {
                    Some(ExpandedPage {
                        page: self.page_link(page)?,
                        snippet: String::new(),
                        snippet_parts: Vec::new(),
                        score: 0.0,
                    })
                })
                .collect();
            Rows {
                matching_pages: size,
                paging,
                pages,
                truncated: listable > listed.len(),
            }
        } else {
            self.ranked_rows(
                query_text,
                vec![self.id_term(IndexField::CollectionId, u64::from(id.0))],
                &exclude,
                page,
            )?
        };
        let replicas = self.replica_link(collection.cluster, collection.root);
        Ok(CollectionView {
            id: id.to_string(),
            cluster: collection.cluster.to_string(),
            host: self.table.host_name(collection.host).to_string(),
            root: self
                .table
                .page(collection.root)
                .map(|page| page.url.to_string())
                .unwrap_or_default(),
            prefix: collection.prefix.clone(),
            size,
            query: query.to_string(),
            matching_pages: rows.matching_pages,
            excluded: exclude.first().map(ToString::to_string),
            paging: rows.paging,
            pages: rows.pages,
            truncated: rows.truncated,
            replicas,
        })
    }

    /// The pages of `collection` (a page under two URLs once) in the order
    /// a reader meets them: its front page ([`super::front_page`]), the
    /// pages it links to in the order it links them (read from its stored
    /// body), then the pages those link to, breadth first (in URL order);
    /// pages no link of the collection reaches follow in URL order.
    /// A manual's table of contents is its reading order, which its file
    /// names' order need not be (Exim's `ch-access_control_lists.html`
    /// comes before `ch-introduction.html`).
    fn reading_order(&self, collection: &Collection) -> Vec<PageId> {
        let pages = &collection.pages;
        let own =
            |page: PageId| pages.binary_search(&page).is_ok() && self.is_own_page(page, pages);
        let mut seen = vec![false; pages.len()];
        let mut mark = |page: PageId| match pages.binary_search(&page) {
            Ok(at) if !seen[at] => {
                seen[at] = true;
                true
            }
            _ => false,
        };
        let front = super::front_page(&self.table, collection);
        let mut order: Vec<PageId> = Vec::with_capacity(pages.len());
        if own(front) && mark(front) {
            order.push(front);
        }
        // A link to a second URL reaches the page it names.
        let standing = |page: PageId| {
            self.standing_for
                .get(page.0 as usize)
                .copied()
                .unwrap_or(page)
        };
        // The front page's links in the order it gives them (the page
        // table keeps a page's links in URL order).
        if let Some(extracted) = self
            .table
            .page(front)
            .filter(|_| order.first() == Some(&front))
            .and_then(|page| crate::index::page_extract(&self.store, page))
        {
            for link in &extracted.links {
                let Some(target) = self.table.find_url(link.as_str()).map(standing) else {
                    continue;
                };
                if own(target) && mark(target) {
                    order.push(target);
                }
            }
        }
        // Past what an expansion lists, the order is not read: the walk
        // stops there (a request's work stays bounded).
        let mut next = 0;
        while next < order.len() && order.len() < self.config.max_expansion_pages {
            let Some(page) = self.table.page(order[next]) else {
                next += 1;
                continue;
            };
            for &target in page.outlinks.iter() {
                let target = standing(target);
                if own(target) && mark(target) {
                    order.push(target);
                }
            }
            next += 1;
        }
        order.extend(
            pages
                .iter()
                .copied()
                .filter(|&page| own(page) && mark(page)),
        );
        order
    }

    /// More from a site: page `page` of the pages of `host` in no cluster and
    /// no manual that match `query`, best first, the pages its entries show
    /// left out.
    pub fn site(
        &self,
        host: HostId,
        query: &str,
        page: usize,
        exclude: &[PageId],
    ) -> Result<SiteView> {
        let name = self
            .table
            .hosts
            .get(host.0 as usize)
            .ok_or_else(|| SearchError::NotFound(format!("there is no host {host}")))?;
        let query_text = self.check_query(query)?;
        if query_text.is_empty() {
            return Err(SearchError::BadRequest(
                "more from a site needs a query (q)".into(),
            ));
        }
        let host_term = Term::from_field_text(self.index.fields().get(IndexField::Host), name);
        let rows = self.ranked_rows(
            query_text,
            vec![
                host_term,
                self.id_term(IndexField::ClusterId, NONE),
                self.id_term(IndexField::LineageId, NONE),
            ],
            exclude,
            page,
        )?;
        Ok(SiteView {
            host_id: host.to_string(),
            host: name.to_string(),
            query: query.to_string(),
            matching_pages: rows.matching_pages,
            excluded: exclude.iter().map(ToString::to_string).collect(),
            paging: rows.paging,
            pages: rows.pages,
            truncated: rows.truncated,
        })
    }

    /// The Replica expansion of cluster `id`: page `page` of its copies, the
    /// principal first, each with its copy of page `hit` and its pages
    /// matching `query`.
    pub fn replicas(
        &self,
        id: ClusterId,
        query: &str,
        hit: Option<PageId>,
        page: usize,
    ) -> Result<ReplicaView> {
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
            let parsed = self.parse(query_text, self.scope_of(query_text)?).query;
            let filtered = self.filtered(
                Box::new(parsed),
                vec![self.id_term(IndexField::ClusterId, u64::from(id.0))],
            );
            let hits = self.index.searcher().search(
                &filtered,
                &HitCollector {
                    replication_boost: None,
                    about: std::sync::Arc::default(),
                    fields: std::sync::Arc::clone(&self.rollup_fields),
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
        // The hit's path below the folder of its collection.
        let hit_place: Option<String> = hit.and_then(|page| {
            let collection = self
                .collections
                .collection(self.collections.collection_of[page.0 as usize]?)?;
            let url = &self.table.page(page)?.url;
            url.strip_prefix(collection.prefix.as_str())
                .map(str::to_string)
        });
        let principal_host = self
            .collections
            .collection(cluster.principal())
            .map(|collection| collection.host);
        let rows = fold_aliases(
            copy_rows(&self.collections, cluster, |collection| {
                self.collection_size(collection)
            }),
            self.mirrors(),
        );
        let size = self.cluster_size(cluster);
        let paging = Paging::of(rows.len(), page);
        let principal_collection = self.collections.collection(cluster.principal());
        let original_version = self.version_of(cluster.principal());
        // The original's copy of the page, which the others are compared with.
        let original_hit = hit.and_then(|page| {
            let principal = principal_collection?;
            std::iter::once(page)
                .chain(self.copies_of(page).iter().copied())
                .find(|copy| principal.pages.binary_search(copy).is_ok())
        });
        let mut listed: Vec<PageId> = Vec::new();
        let mut copies = Vec::new();
        for row in rows.iter().skip(paging.skip()).take(EXPANSION_ROWS) {
            let members = &row.members;
            let named = members[0];
            let host_name = self.table.host_name(named.host);
            let mirroring = principal_host
                .filter(|&principal| principal != named.host)
                .map(|principal| {
                    let level = self
                        .mirrors()
                        .pair(named.host, principal)
                        .map(|report| report.level);
                    Mirroring {
                        level: level.map_or("none", |level| level.name()).to_string(),
                        meaning: level
                            .map_or(
                                "not paired with the principal copy's host by the mirror stage",
                                |level| level.meaning(),
                            )
                            .to_string(),
                    }
                });
            let holds = |page: &PageId| {
                members
                    .iter()
                    .any(|member| member.pages.binary_search(page).is_ok())
            };
            let copy_of_hit = hit.and_then(|page| {
                if holds(&page) {
                    return Some(page);
                }
                hit_copies.iter().copied().find(|copy| holds(copy))
            });
            // No copy: the page at the same place (another version's text).
            let same_place = hit_place
                .as_ref()
                .filter(|_| copy_of_hit.is_none())
                .and_then(|place| {
                    members.iter().find_map(|member| {
                        self.table.find_url(&format!("{}{place}", member.prefix))
                    })
                });
            let hit_copy = copy_of_hit.or(same_place);
            listed.extend(hit_copy);
            let relation = copy_of_hit
                .zip(original_hit)
                .map(|(copy, original)| self.page_relation(copy, original));
            let is_principal = named.id == cluster.principal();
            let complete = row.pages >= size;
            let part = (!complete && !is_principal)
                .then(|| {
                    self.folder_in_original((named.root, &named.prefix), principal_collection?)
                })
                .flatten();
            let version = self.version_of(named.id);
            let level = principal_host
                .filter(|&principal| principal != named.host)
                .and_then(|principal| self.mirrors().pair(named.host, principal))
                .map(|report| report.level);
            let kind = copy_kind(
                is_principal,
                (version.as_deref(), original_version.as_deref()),
                (complete, part.as_deref()),
                relation,
                level,
            );
            let matching_pages = matching.as_ref().map(|counts| {
                members
                    .iter()
                    .map(|member| counts.get(&member.id).copied().unwrap_or(0))
                    .sum::<u32>()
            });
            let pages = row.pages;
            let crawled = members
                .iter()
                .flat_map(|member| member.pages.iter())
                .filter_map(|&page| self.table.page(page).map(|row| row.date.as_ref()))
                .max()
                .unwrap_or_default()
                .to_string();
            copies.push(CopyView {
                collection: named.id,
                host: host_name.to_string(),
                root: self
                    .table
                    .page(named.root)
                    .map(|page| page.url.to_string())
                    .unwrap_or_default(),
                prefix: named.prefix.clone(),
                pages,
                parts: members.len(),
                principal: is_principal,
                complete,
                crawled_on: readable_date(&crawled),
                crawled,
                expandable: cluster.kind == ClusterKind::Collection && matching_pages != Some(0),
                matching_pages,
                hit_link: hit_copy
                    .and_then(|page| self.table.page(page))
                    .and_then(|page| super::view::followable(&page.url)),
                hit_copy: hit_copy.and_then(|page| self.page_link(page)),
                hit_is_copy: copy_of_hit.is_some(),
                mirroring,
                version,
                also_as: row
                    .also
                    .iter()
                    .map(|&host| self.table.host_name(host).to_string())
                    .collect(),
                kind,
                why: is_principal.then(|| cluster.principal_evidence.sentence().to_string()),
                share: share_of(pages, size),
            });
        }
        let other_copies = hit_copies
            .iter()
            .filter(|&&copy| {
                Some(copy) != hit
                    && !listed.contains(&copy)
                    && self.collections.cluster_of(copy) != Some(id)
            })
            .take(EXPANSION_ROWS)
            .filter_map(|&copy| self.page_link(copy))
            .collect();
        let differ = rows.iter().any(|row| row.pages < size);
        let versions = self.other_versions(id, cluster, hit);
        let more_versions = self.copies_outside(id, cluster).count() - versions.len();
        Ok(ReplicaView {
            cluster: id.to_string(),
            kind: cluster.kind,
            cardinality: rows.len(),
            size: size as u32,
            differ,
            query: query.to_string(),
            hit: hit.and_then(|page| self.page_link(page)),
            paging,
            copies,
            other_copies,
            versions,
            more_versions,
            version: self.version_of(cluster.principal()),
        })
    }

    /// The version collection `id` is of, where its pages name one.
    /// How page `copy` relates to page `original` ([`PageRelation`]).
    fn page_relation(&self, copy: PageId, original: PageId) -> PageRelation {
        let (Some(copy_page), Some(original_page)) =
            (self.table.page(copy), self.table.page(original))
        else {
            return PageRelation::Changed;
        };
        if copy_page.content_key.is_some() && copy_page.content_key == original_page.content_key {
            return PageRelation::Exact;
        }
        if self.copies_of(original).contains(&copy) {
            return PageRelation::SameText;
        }
        PageRelation::Changed
    }

    /// The folder of the original `principal` that a copy's folder
    /// `prefix` holds (`library/`), found by the copy's page `root` and its
    /// twin in the original: the twin's path below the original's folder
    /// ends with the page's path below the copy's, and what comes before is
    /// that folder. `None` when the copy's folder is the original's top (a
    /// copy missing pages here and there, not a part).
    fn folder_in_original(
        &self,
        (root, prefix): (PageId, &str),
        principal: &Collection,
    ) -> Option<String> {
        let twin = std::iter::once(root)
            .chain(self.copies_of(root).iter().copied())
            .find(|page| principal.pages.binary_search(page).is_ok())?;
        let in_original = self
            .table
            .page(twin)?
            .url
            .strip_prefix(principal.prefix.as_str())?;
        let in_copy = self.table.page(root)?.url.strip_prefix(prefix)?;
        part_folder(in_original, in_copy)
    }

    fn version_of(&self, id: CollectionId) -> Option<String> {
        self.collections
            .lineages
            .copy_of(&self.collections, id)?
            .version
            .clone()
    }

    /// The copies of cluster `id`'s manual, in all its versions, that lie
    /// outside the cluster (other versions, and copies of them), newest
    /// version first; none when the manual has no lineage.
    pub(super) fn copies_outside<'e>(
        &'e self,
        id: ClusterId,
        cluster: &Cluster,
    ) -> impl Iterator<Item = &'e LineageCopy> + 'e {
        let lineages = &self.collections.lineages;
        let lineage = lineages
            .of_collection(&self.collections, cluster.principal())
            .and_then(|lineage| lineages.lineage(lineage));
        lineage
            .into_iter()
            .flat_map(|lineage| lineage.copies.iter())
            .filter(move |copy| {
                copy.collection
                    .and_then(|collection| self.collections.collection(collection))
                    .is_none_or(|collection| collection.cluster != id)
            })
    }

    /// The copies of cluster `id`'s manual outside the cluster
    /// ([`Engine::copies_outside`]), each with its page at the place of
    /// `hit`.
    fn other_versions(
        &self,
        id: ClusterId,
        cluster: &Cluster,
        hit: Option<PageId>,
    ) -> Vec<VersionView> {
        let lineages = &self.collections.lineages;
        let Some(lineage) = lineages
            .of_collection(&self.collections, cluster.principal())
            .and_then(|lineage| lineages.lineage(lineage))
        else {
            return Vec::new();
        };
        // The hit's path below its copy's folder.
        let place = hit.and_then(|page| {
            let at = lineages.of(page)?;
            let copy = lineage.copies.get(at.copy as usize)?;
            let url = &self.table.page(page)?.url;
            url.strip_prefix(copy.prefix.as_str()).map(str::to_string)
        });
        self.copies_outside(id, cluster)
            .take(EXPANSION_ROWS)
            .map(|copy| VersionView {
                host: self.table.host_name(copy.host).to_string(),
                prefix: copy.prefix.clone(),
                version: copy.version.clone(),
                // Its pages, a page under two URLs counted once.
                pages: copy.pages.saturating_sub(
                    copy.collection
                        .and_then(|id| self.collections.collection(id))
                        .map_or(0, |collection| {
                            collection.pages.len() - self.collection_size(collection)
                        }) as u32,
                ),
                hit_copy: place
                    .as_ref()
                    .and_then(|place| self.table.find_url(&format!("{}{place}", copy.prefix)))
                    .and_then(|page| self.page_link(page)),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_said_in_plain_words() {
        use crate::mirrors::Level;
        assert_eq!(
            copy_kind(true, (None, None), (true, None), None, None),
            "the original"
        );
        assert_eq!(
            copy_kind(false, (Some("3.2"), Some("3.12")), (true, None), None, None),
            "older version 3.2"
        );
        assert_eq!(
            copy_kind(
                false,
                (Some("3.1.x"), Some("3.1.2")),
                (true, None),
                Some(PageRelation::Exact),
                None
            ),
            "exact copy"
        );
        assert_eq!(
            copy_kind(
                false,
                (None, None),
                (false, Some("library/")),
                None,
                Some(Level::One)
            ),
            "part of the manual: library/ only"
        );
        assert_eq!(
            copy_kind(
                false,
                (None, None),
                (true, None),
                Some(PageRelation::Changed),
                Some(Level::One)
            ),
            "copy with changes (such as a banner)"
        );
        assert_eq!(
            copy_kind(false, (None, None), (true, None), None, Some(Level::Two)),
            "same text, other markup (such as rewritten links)"
        );
        assert_eq!(
            part_folder("library/os.html", "os.html").as_deref(),
            Some("library/")
        );
        assert_eq!(part_folder("io/index.html", "io/index.html"), None);
        assert_eq!(part_folder("library/os.html", "s.html"), None);
        assert_eq!(share_of(312, 312), "all 312 pages");
        assert_eq!(share_of(125, 312), "40% (125 of 312 pages)");
        assert_eq!(readable_date("2026-11-21T10:22:33Z"), "21 Nov 2026");
        assert_eq!(readable_date("2026-01-05"), "5 Jan 2026");
        assert_eq!(readable_date("yesterday"), "yesterday");
    }
}
