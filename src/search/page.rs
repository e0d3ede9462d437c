//! The stored copy of a page, with where and when it was crawled and why it
//! was grouped. The page is shown as its extracted text, never as its HTML:
//! nothing a crawled page carries (scripts, styles, frames) reaches a browser.

use serde::Serialize;

use super::view::{PageLink, SnippetPart};
use super::{Engine, Result, SearchError};
use crate::collections::ClusterKind;
use crate::index;
use crate::pages::PageId;
use crate::similarity::Relation;

/// Most characters of a page's text the view shows.
const MAX_TEXT_CHARS: usize = 200_000;
/// Most copies of a page the view explains.
const MAX_COPIES: usize = 100;

/// One copy of the page and the evidence that makes it one.
#[derive(Debug, Clone, Serialize)]
pub struct CopyEvidence {
    #[serde(flatten)]
    pub page: PageLink,
    pub relation: Relation,
    /// Min-hash estimate of the resemblance of the two pages' shingles.
    pub resemblance: Option<f64>,
    pub shared_chunks: u32,
    pub required_chunks: u32,
}

impl CopyEvidence {
    /// The relation in words.
    pub fn relation_name(&self) -> &'static str {
        match self.relation {
            Relation::Exact => "identical bytes",
            Relation::Equivalent => "same words",
            Relation::Similar => "similar text",
            Relation::Transitive => "through other copies",
            Relation::Unrelated => "unrelated",
        }
    }
}

/// The page's collection and cluster.
#[derive(Debug, Clone, Serialize)]
pub struct Grouping {
    pub cluster: String,
    pub kind: ClusterKind,
    pub cardinality: usize,
    pub size: u32,
    pub extended: bool,
    /// Its collection, when it is in one (a copy left outside collections
    /// is only in the cluster of its copies).
    pub collection: Option<String>,
    pub collection_root: Option<String>,
    pub collection_prefix: Option<String>,
    pub collection_pages: Option<usize>,
    pub principal: bool,
}

/// The page view.
#[derive(Debug, Clone, Serialize)]
pub struct PageView {
    pub page_id: String,
    pub url: String,
    pub host: String,
    pub title: String,
    pub status: u16,
    /// WARC-Date of the capture.
    pub crawled: String,
    pub crawl: String,
    /// The WARC file's name (never its folder on the server).
    pub warc_file: String,
    pub warc_offset: u64,
    pub encoding: String,
    pub body_bytes: u64,
    pub revisit_of: Option<String>,
    pub inlinks_from_other_hosts: u32,
    /// Visible text, one line per rendered line, the query's words marked.
    pub lines: Vec<Vec<SnippetPart>>,
    pub text_truncated: bool,
    /// The stored body could not be read back.
    pub body_missing: bool,
    pub copies: Vec<CopyEvidence>,
    /// The same page under the other URLs of its host (a tracking
    /// parameter, `http:`, its folder...: [`crate::similarity::aliases`]).
    pub other_urls: Vec<PageLink>,
    /// Copies in all (the view lists at most 100).
    pub copies_total: usize,
    pub grouping: Option<Grouping>,
}

impl Engine {
    /// The page view of page `id`, the words of `query` marked in its text.
    pub fn page(&self, id: PageId, query: &str) -> Result<PageView> {
        let query_text = self.check_query(query)?;
        let marked = self.marked_terms(query_text);
        let mut analyzer = index::text_analyzer();
        let page = self
            .table
            .page(id)
            .ok_or_else(|| SearchError::NotFound(format!("there is no page {id}")))?;
        let extracted = page
            .content_key
            .as_ref()
            .and_then(|_| index::page_extract(&self.store, page));
        let body_missing = page.content_key.is_some() && extracted.is_none();
        let (title, text) = match extracted {
            Some(extracted) => (extracted.title, extracted.text),
            None => (page.title.clone(), String::new()),
        };
        let mut characters = 0usize;
        let mut text_truncated = false;
        let mut lines = Vec::new();
        for line in text.lines() {
            characters += line.chars().count();
            if characters > MAX_TEXT_CHARS {
                text_truncated = true;
                break;
            }
            lines.push(mark(&mut analyzer, &marked, line));
        }
        let copies_all = self.copies_of(id);
        let copies = copies_all
            .iter()
            .filter(|&&copy| copy != id)
            .take(MAX_COPIES)
            .filter_map(|&copy| {
                let evidence = self.similarity.evidence(&self.table, id, copy)?;
                Some(CopyEvidence {
                    page: self.page_link(copy)?,
                    relation: evidence.relation,
                    resemblance: evidence.resemblance,
                    shared_chunks: evidence.shared_chunks,
                    required_chunks: evidence.required_chunks,
                })
            })
            .collect();
        let collection = self.collections.collection_of[id.0 as usize]
            .and_then(|collection| self.collections.collection(collection));
        let cluster_id = collection
            .map(|collection| collection.cluster)
            .or_else(|| self.stray_cluster(id));
        let grouping = cluster_id
            .and_then(|cluster| self.collections.cluster(cluster))
            .map(|cluster| Grouping {
                cluster: cluster.id.to_string(),
                kind: cluster.kind,
                cardinality: cluster.cardinality(),
                size: cluster.size,
                extended: cluster.extended,
                collection: collection.map(|collection| collection.id.to_string()),
                collection_root: collection
                    .and_then(|collection| self.table.page(collection.root))
                    .map(|root| root.url.clone()),
                collection_prefix: collection.map(|collection| collection.prefix.clone()),
                collection_pages: collection.map(|collection| collection.pages.len()),
                principal: collection
                    .is_some_and(|collection| collection.id == cluster.principal()),
            });
        Ok(PageView {
            page_id: id.to_string(),
            url: page.url.clone(),
            host: self.table.host_name(page.host).to_string(),
            title,
            status: page.status,
            crawled: page.date.clone(),
            crawl: self
                .manifest
                .crawls
                .get(page.crawl as usize)
                .map(|crawl| crawl.id.clone())
                .unwrap_or_default(),
            warc_file: std::path::Path::new(&*page.location.file)
                .file_name()
                .map_or_else(String::new, |name| name.to_string_lossy().into_owned()),
            warc_offset: page.location.offset,
            encoding: page.encoding.clone(),
            body_bytes: page.body_bytes,
            revisit_of: page.revisit_of.clone(),
            inlinks_from_other_hosts: self.collections.inlinks_from_other_hosts[id.0 as usize],
            lines,
            text_truncated,
            body_missing,
            copies_total: copies_all.len().saturating_sub(1),
            other_urls: self
                .url_names(id)
                .iter()
                .filter(|&&name| name != id)
                .take(MAX_COPIES)
                .filter_map(|&name| self.page_link(name))
                .collect(),
            copies,
            grouping,
        })
    }
}

impl Engine {
    /// The index terms of a query's title and body words (stems), to mark.
    fn marked_terms(&self, query_text: &str) -> std::collections::HashSet<String> {
        let mut terms = std::collections::HashSet::new();
        if query_text.is_empty() {
            return terms;
        }
        let fields = self.index.fields();
        let text_fields = [
            fields.get(index::IndexField::Title),
            fields.get(index::IndexField::Body),
        ];
        let parsed = self.parse(query_text, crate::index::Scope::OwnText).query;
        parsed.query_terms(&mut |term, _| {
            if text_fields.contains(&term.field()) {
                if let Some(text) = term.value().as_str() {
                    terms.insert(text.to_string());
                }
            }
        });
        terms
    }
}

/// A line of text in parts, the words whose index term is in `terms` marked.
fn mark(
    analyzer: &mut tantivy::tokenizer::TextAnalyzer,
    terms: &std::collections::HashSet<String>,
    line: &str,
) -> Vec<SnippetPart> {
    let mut ranges = Vec::new();
    if !terms.is_empty() {
        let mut stream = analyzer.token_stream(line);
        while stream.advance() {
            let token = stream.token();
            if terms.contains(&token.text) {
                ranges.push(token.offset_from..token.offset_to);
            }
        }
    }
    super::view::marked_parts(line, ranges.into_iter(), |text| SnippetPart {
        text: text.to_string(),
        highlighted: false,
    })
}
