//! The stored copy of a page, with where and when it was crawled and why it
//! was grouped. The page is shown as its extracted text, never as its HTML:
//! nothing a crawled page carries (scripts, styles, frames) reaches a browser.

use serde::Serialize;

use super::view::{PageLink, SnippetPart};
use super::{Engine, Result, SearchError};
use crate::collections::ClusterKind;
use crate::generation::Fingerprints;
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
    /// The URL as a link, when it is one a browser may follow (http, https).
    pub link: Option<String>,
    /// Why the page is grouped with others, in plain words ("A page of
    /// “Alembic 1.7.7 documentation”, crawled in 4 copies …"); the numbers
    /// behind it are the view's other fields.
    pub summary: String,
}

/// What the plain-words summary of a page's grouping says.
struct Said<'a> {
    /// The page's copies elsewhere in the crawl (its trivial cluster, itself
    /// aside).
    copies: usize,
    /// Its manual, when it is a page of a collection: its name (the front
    /// page's title in quotes, or "the manual under" its folder), the copies
    /// crawled and whether they differ.
    manual: Option<(&'a str, usize, bool)>,
    /// Whether it is the original (principal copy); the original's host.
    original: Option<(bool, &'a str)>,
    /// Its copy's version and the newest version of the manual crawled.
    versions: (Option<&'a str>, Option<&'a str>),
    /// For a page in no collection whose copies are pages of a manual (a
    /// page a content farm copied): that manual's name and its original's
    /// host.
    copy_of_a_page_of: Option<(&'a str, &'a str)>,
}

/// The summary sentence of [`PageView::summary`].
fn summary(said: &Said<'_>) -> String {
    let others = |count: usize| match count {
        1 => "1 other URL".to_string(),
        count => format!("{count} other URLs"),
    };
    let mut text = match said.manual {
        Some((manual, copies, differ)) => {
            let mut text = format!("A page of {manual}, crawled in {copies} copies");
            if differ {
                text.push_str(" that are not all alike");
            }
            text.push('.');
            match said.original {
                Some((true, _)) => text.push_str(
                    " This copy is the original: results show it and list the others under Replica.",
                ),
                Some((false, host)) => {
                    text.push_str(&format!(" This copy is a mirror; the original is on {host}."))
                }
                None => {}
            }
            text
        }
        None if said.copies > 0 && said.copy_of_a_page_of.is_some() => {
            let (manual, host) = said.copy_of_a_page_of.unwrap_or_default();
            format!(
                "A copy of a page of {manual} (the original is on {host}), alone on this host: \
                 a copy of that page, not a mirror of the manual. The same text is at {}.",
                others(said.copies)
            )
        }
        None if said.copies > 0 => format!(
            "The same text is at {}; it is in no manual the crawl holds in several copies.",
            others(said.copies)
        ),
        None => "No copy of this page was found in the crawl.".to_string(),
    };
    match said.versions {
        (Some(version), Some(newest)) if version != newest => text.push_str(&format!(
            " It is an older version, {version}; the newest crawled is {newest}."
        )),
        (Some(version), _) => text.push_str(&format!(" Version {version}.")),
        _ => {}
    }
    if said.manual.is_some() && said.copies > 0 {
        text.push_str(&format!(
            " This page's text is at {} too.",
            others(said.copies)
        ));
    }
    text
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
            None => (page.title.to_string(), String::new()),
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
        let shown: Vec<PageId> = copies_all
            .iter()
            .copied()
            .filter(|&copy| copy != id)
            .take(MAX_COPIES)
            .collect();
        let mut wanted: Vec<usize> = shown.iter().map(|copy| copy.0 as usize).collect();
        wanted.push(id.0 as usize);
        // A block of the fingerprints that cannot be read (`check` names
        // it) costs the copies their evidence, not the page its view.
        let prints = self.fingerprints.of_pages(&wanted).unwrap_or_else(|error| {
            tracing::warn!("page {id}: the copies' evidence cannot be read: {error}");
            Vec::new()
        });
        let (own, prints) = prints.split_last().unwrap_or((&None, &[][..]));
        let copies = shown
            .iter()
            .zip(prints)
            .filter_map(|(&copy, print)| {
                let evidence = self.similarity.evidence_of(
                    &self.table,
                    (id, own.as_ref()),
                    (copy, print.as_ref()),
                )?;
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
                size: self.cluster_size(cluster) as u32,
                extended: cluster.extended,
                collection: collection.map(|collection| collection.id.to_string()),
                collection_root: collection
                    .and_then(|collection| self.table.page(collection.root))
                    .map(|root| root.url.to_string()),
                collection_prefix: collection.map(|collection| collection.prefix.clone()),
                collection_pages: collection.map(|collection| self.collection_size(collection)),
                principal: collection
                    .is_some_and(|collection| collection.id == cluster.principal()),
            });
        let copies_total = copies_all.len().saturating_sub(1);
        let cluster = cluster_id.and_then(|cluster| self.collections.cluster(cluster));
        let name_of = |collection: &crate::collections::Collection| match self
            .table
            .page(super::front_page(&self.table, collection))
            .map(|front| front.title.trim())
        {
            Some(title) if !title.is_empty() => format!("“{title}”"),
            _ => format!("the manual under {}", collection.prefix),
        };
        // A stray copy on a host where its cluster has no copy (a page a
        // content farm copied): its manual, the cluster's principal copy.
        let stray_manual = cluster
            .filter(|_| collection.is_none())
            .filter(|cluster| {
                !cluster.collections.iter().any(|&other| {
                    self.collections
                        .collection(other)
                        .and_then(|other| self.table.page(other.root))
                        .is_some_and(|root| root.host == page.host)
                })
            })
            .and_then(|cluster| self.collections.collection(cluster.principal()))
            .map(name_of);
        let manual_name = collection.map(name_of);
        let original_host = cluster
            .and_then(|cluster| self.collections.collection(cluster.principal()))
            .and_then(|principal| self.table.page(principal.root))
            .map(|root| self.table.host_name(root.host).to_string());
        let lineages = &self.collections.lineages;
        let version = collection.and_then(|collection| {
            lineages
                .copy_of(&self.collections, collection.id)?
                .version
                .clone()
        });
        let newest = lineages
            .of(id)
            .and_then(|place| lineages.lineage(place.lineage))
            .and_then(|lineage| lineage.copies.first()?.version.clone());
        let summary = summary(&Said {
            copies: copies_total,
            manual: manual_name
                .as_deref()
                .zip(cluster)
                .map(|(name, cluster)| (name, cluster.cardinality(), cluster.extended)),
            original: grouping
                .as_ref()
                .filter(|grouping| grouping.collection.is_some())
                .zip(original_host.as_deref())
                .map(|(grouping, host)| (grouping.principal, host)),
            versions: (version.as_deref(), newest.as_deref()),
            copy_of_a_page_of: stray_manual.as_deref().zip(original_host.as_deref()),
        });
        Ok(PageView {
            page_id: id.to_string(),
            link: crate::search::followable(&page.url),
            summary,
            url: page.url.to_string(),
            host: self.table.host_name(page.host).to_string(),
            title,
            status: page.status,
            crawled: page.date.to_string(),
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
            encoding: page.encoding.to_string(),
            body_bytes: page.body_bytes,
            revisit_of: page.revisit_of.as_deref().map(String::from),
            inlinks_from_other_hosts: self.collections.inlinks_from_other_hosts[id.0 as usize],
            lines,
            text_truncated,
            body_missing,
            copies_total,
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
            fields.get(index::IndexField::Text),
        ];
        let parsed = self.parse(query_text, crate::index::Scope::OwnText).query;
        parsed.matching.query_terms(&mut |term, _| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_in_words_what_the_numbers_say() {
        let said = |copies, manual, original, versions| {
            summary(&Said {
                copies,
                manual,
                original,
                versions,
                copy_of_a_page_of: None,
            })
        };
        assert_eq!(
            said(0, None, None, (None, None)),
            "No copy of this page was found in the crawl."
        );
        assert_eq!(
            said(1, None, None, (None, None)),
            "The same text is at 1 other URL; it is in no manual the crawl holds in several copies."
        );
        assert_eq!(
            summary(&Said {
                copies: 3,
                manual: None,
                original: None,
                versions: (None, None),
                copy_of_a_page_of: Some(("“Widget 4.2 Documentation”", "docs.widget.test")),
            }),
            "A copy of a page of “Widget 4.2 Documentation” (the original is on docs.widget.test), alone on this host: a copy of that page, not a mirror of the manual. The same text is at 3 other URLs."
        );
        assert_eq!(
            said(
                4,
                Some(("“Alembic 1.7.7 documentation”", 5, false)),
                Some((false, "alembic.example")),
                (Some("1.7.7"), Some("1.13.1"))
            ),
            "A page of “Alembic 1.7.7 documentation”, crawled in 5 copies. This copy is a mirror; the original is on alembic.example. It is an older version, 1.7.7; the newest crawled is 1.13.1. This page's text is at 4 other URLs too."
        );
        assert_eq!(
            said(
                0,
                Some(("the manual under http://flask.example/docs/", 3, true)),
                Some((true, "flask.example")),
                (Some("3.0"), Some("3.0"))
            ),
            "A page of the manual under http://flask.example/docs/, crawled in 3 copies that are not all alike. This copy is the original: results show it and list the others under Replica. Version 3.0."
        );
    }
}
