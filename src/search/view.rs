//! What a results page shows, as the JSON API gives it and the templates
//! render it.

use std::cell::Cell;
use std::time::Instant;

use serde::Serialize;
use tantivy::schema::Value;
use tantivy::snippet::{Snippet, SnippetGenerator};
use tantivy::tokenizer::{TextAnalyzer, TokenStream};
use tantivy::{DocAddress, Score, Searcher, TantivyDocument};

use super::rollup::{Group, Hit};
use super::{Engine, Rank, Result};
use crate::collections::{ClusterId, CollectionId};
use crate::index::{IndexField, NONE};
use crate::pages::{HostId, PageId};

/// A page of results. (`web::api` gives it as JSON.)
#[derive(Debug, Clone)]
pub struct Results {
    pub query: String,
    pub page: usize,
    /// Pages of results (of groups when rolled up, of hits when flat).
    pub pages: usize,
    /// Matching pages.
    pub total_hits: u64,
    /// Entries in all (groups when rolled up, hits when flat).
    pub total_groups: u64,
    /// Time the search took, in milliseconds.
    pub took_ms: f64,
    /// A query with each word the index does not know replaced by the
    /// closest one it knows well, when the query found little.
    pub suggestion: Option<String>,
    /// The corrected query whose results these are, when the query as typed
    /// found nothing (`query` stays as typed).
    pub showing_for: Option<String>,
    /// No page holds every word of the query: these hold most of them.
    pub most_words: bool,
    pub rollup: bool,
    pub rank: Rank,
    /// When the query was not valid query syntax: the words searched
    /// instead (each required).
    pub searched_words: Option<String>,
    /// The query was not valid query syntax and was read leniently: what
    /// could not be read was left out.
    pub lenient: bool,
    /// Few pages say the words in their own text: site chrome (menus,
    /// sidebars, footers) was searched too, and found more.
    pub chrome_searched: bool,
    /// The values the entries may be narrowed to, each with the number of
    /// entries it leaves (rolled up; empty for the flat list).
    pub facets: Facets,
    pub groups: Vec<ResultGroup>,
}

/// The facets of a search: by manual (a manual in all its versions), by
/// version and by host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facets {
    pub manual: Vec<FacetValue>,
    pub version: Vec<FacetValue>,
    pub host: Vec<FacetValue>,
}

impl Facets {
    pub fn is_empty(&self) -> bool {
        self.manual.is_empty() && self.version.is_empty() && self.host.is_empty()
    }
}

/// A facet's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FacetValue {
    /// What the search's parameter takes (`manual=3`, `version=3.1.x`,
    /// `host=docs.example.org`).
    pub value: String,
    /// What a person reads (the manual's name).
    pub label: String,
    /// The entries the search shows with this value chosen.
    pub entries: u64,
    /// Whether the search is narrowed to it.
    pub applied: bool,
}

/// A piece of a snippet: text, highlighted where it matched the query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnippetPart {
    pub text: String,
    pub highlighted: bool,
}

/// One entry of results.
#[derive(Debug, Clone, Serialize)]
pub struct ResultGroup {
    #[serde(serialize_with = "as_text")]
    pub page_id: PageId,
    pub url: String,
    /// The URL, when it is one a browser may follow (http or https).
    pub link: Option<String>,
    pub title: String,
    pub host: String,
    /// Plain text around the matched words.
    pub snippet: String,
    #[serde(skip)]
    pub snippet_parts: Vec<SnippetPart>,
    pub score: f32,
    /// Matching pages this entry stands for (itself included).
    pub hits: u32,
    /// The similar cluster the page is a copy in, if any (for
    /// `data-cluster`; also given with `rollup=off`).
    #[serde(serialize_with = "as_optional_text")]
    pub cluster: Option<ClusterId>,
    /// The page's collection, if any (for `data-collection`).
    #[serde(serialize_with = "as_optional_text")]
    pub collection_id: Option<CollectionId>,
    /// The version of the manual the page is shown from, where its copy
    /// names one.
    pub version: Option<String>,
    /// The manual's other versions in the crawl, newest first (the Replica
    /// expansion lists their copies).
    pub other_versions: Vec<String>,
    /// The Collection expansion, when the page's collection has other
    /// matching pages. (Links are serialised by the site's API, with the
    /// URL it builds for them.)
    #[serde(skip)]
    pub collection: Option<CollectionLink>,
    /// The Replica expansion, when the page's collection has copies.
    #[serde(skip)]
    pub replicas: Option<ReplicaLink>,
    /// More from this site, on the last entry of a host's pages in no
    /// cluster when it has more that match.
    #[serde(skip)]
    pub site: Option<SiteLink>,
    /// Other pages of the entry that match about as well, best first: title
    /// links under it.
    pub sitelinks: Vec<Sitelink>,
}

/// A page of an entry shown under it as a title link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sitelink {
    pub url: String,
    pub title: String,
    #[serde(serialize_with = "as_text")]
    pub page_id: PageId,
    /// The URL, when it is one a browser may follow (http or https).
    #[serde(skip)]
    pub link: Option<String>,
    /// Its title without the ending it shares with the entry's (the
    /// manual's name: "Session Basics", not "Session Basics — SQLAlchemy
    /// 1.4 Documentation").
    #[serde(skip)]
    pub label: String,
}

/// `title` without the part after its first separator (` — `, ` - `,
/// ` | `, ` · `, ` : `) that `other` ends with too: the site's or manual's
/// name two pages of one manual share.
pub fn without_shared_ending(title: &str, other: &str) -> String {
    const SEPARATORS: [&str; 5] = [" — ", " - ", " | ", " · ", " : "];
    let cut = SEPARATORS
        .iter()
        .filter_map(|separator| {
            let at = title.find(separator)?;
            let ending = &title[at..];
            (at > 0 && other.ends_with(ending) && other.len() > ending.len()).then_some(at)
        })
        .min();
    match cut {
        Some(at) => title[..at].trim().to_string(),
        None => title.to_string(),
    }
}

/// The "more from this site" link of an entry. (The site builds its URL:
/// `web::links`.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiteLink {
    #[serde(serialize_with = "as_text")]
    pub host_id: HostId,
    /// Matching pages of the host in no cluster besides its entries.
    pub more: u32,
    /// The pages the host's entries show (left out of the expansion).
    #[serde(serialize_with = "as_texts")]
    pub shown: Vec<PageId>,
}

/// The Collection link of an entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CollectionLink {
    #[serde(serialize_with = "as_text")]
    pub id: CollectionId,
    /// Pages of the collection that match the query, the shown one included
    /// (the link says "N more": this minus one).
    pub matching_pages: u32,
    /// The entry's own page, which the expansion leaves out.
    #[serde(skip)]
    pub entry: PageId,
}

impl CollectionLink {
    pub fn more(&self) -> u32 {
        self.matching_pages.saturating_sub(1)
    }
}

/// The Replica link of an entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplicaLink {
    #[serde(serialize_with = "as_text")]
    pub cluster: ClusterId,
    /// The copies the Replica list shows, this one included: the
    /// cluster's (a server under two names once) and those of the manual's
    /// other versions.
    pub copies: usize,
    /// The entry's page, whose copy on each host the expansion names.
    #[serde(skip)]
    pub hit: PageId,
}

/// A page named in an expansion.
#[derive(Debug, Clone, Serialize)]
pub struct PageLink {
    #[serde(serialize_with = "as_text")]
    pub page_id: PageId,
    pub url: String,
    /// The URL, when a browser may follow it (http or https).
    pub link: Option<String>,
    pub title: String,
    pub host: String,
}

/// An id as the JSON API gives it: as text (`"12"`).
pub(super) fn as_text<T: std::fmt::Display, S: serde::Serializer>(
    id: &T,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_str(id)
}

pub(super) fn as_optional_text<T: std::fmt::Display, S: serde::Serializer>(
    id: &Option<T>,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    match id {
        Some(id) => serializer.serialize_some(&id.to_string()),
        None => serializer.serialize_none(),
    }
}

pub(super) fn as_texts<T: std::fmt::Display, S: serde::Serializer>(
    ids: &[T],
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_seq(ids.iter().map(ToString::to_string))
}

/// The ellipsis marking where a snippet's text is cut.
const ELLIPSIS: &str = "…";

/// The parts of a snippet, or the start of the text when the body did not
/// match (a title or URL match); an ellipsis where the text is cut, lines
/// joined by " · ".
pub(super) fn snippet_parts(
    (snippet, offset): (&Snippet, usize),
    body: &str,
    limit: usize,
) -> Vec<SnippetPart> {
    let plain_part = |text: &str| SnippetPart {
        text: text.replace('\n', " · "),
        highlighted: false,
    };
    if snippet.is_empty() {
        let start: String = body.chars().take(limit).collect();
        let start = start.trim_end();
        if start.is_empty() {
            return Vec::new();
        }
        let mut text = start.to_string();
        if start.len() < body.trim_end().len() {
            text = format!("{} {ELLIPSIS}", cut_at_word(&text));
        }
        return vec![plain_part(&text)];
    }
    let fragment = snippet.fragment();
    let range = snippet.fragment_range();
    let range = range.start + offset..range.end + offset;
    let mut parts = Vec::new();
    if range.start > 0
        && !body
            .get(..range.start)
            .is_some_and(|before| before.ends_with('\n'))
    {
        parts.push(plain_part(&format!("{ELLIPSIS} ")));
    }
    parts.extend(marked_parts(
        fragment,
        snippet.highlighted().iter().cloned(),
        plain_part,
    ));
    if range.end < body.trim_end().len()
        && !body
            .get(range.end..)
            .is_some_and(|after| after.starts_with('\n'))
    {
        parts.push(plain_part(&format!(" {ELLIPSIS}")));
    }
    parts
}

/// `text` in parts, the byte `ranges` (in order; overlapping or misplaced
/// ones skipped) highlighted, the text between them made by `plain`.
pub(super) fn marked_parts(
    text: &str,
    ranges: impl Iterator<Item = std::ops::Range<usize>>,
    plain: impl Fn(&str) -> SnippetPart,
) -> Vec<SnippetPart> {
    let mut parts = Vec::new();
    let mut position = 0;
    for range in ranges {
        let (start, end) = (range.start.min(text.len()), range.end.min(text.len()));
        if start < position || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            continue;
        }
        if start > position {
            parts.push(plain(&text[position..start]));
        }
        parts.push(SnippetPart {
            text: text[start..end].to_string(),
            highlighted: true,
        });
        position = end;
    }
    if position < text.len() {
        parts.push(plain(&text[position..]));
    }
    parts
}

/// `text` without a last word that may have been cut.
fn cut_at_word(text: &str) -> &str {
    match text.rfind(char::is_whitespace) {
        Some(space) if space > text.len() / 2 => text[..space].trim_end(),
        _ => text,
    }
}

/// A URL a results page may link to: http and https only (never
/// `javascript:` or `data:`, whatever a crawl holds).
pub fn followable(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    matches!(parsed.scheme(), "http" | "https").then(|| parsed.to_string())
}

pub(super) fn plain(parts: &[SnippetPart]) -> String {
    parts.iter().map(|part| part.text.as_str()).collect()
}

fn stored_text(document: &TantivyDocument, field: tantivy::schema::Field) -> &str {
    document
        .get_first(field)
        .and_then(|value| value.as_str())
        .unwrap_or_default()
}

/// The snippets of one request: made until its time is up, then empty (the
/// entry shows the start of its page's text).
pub(super) struct Snippets {
    generator: SnippetGenerator,
    /// The query's words as indexed (stems), lower case.
    terms: Vec<String>,
    /// The body's analyzer, which made them.
    analyzer: TextAnalyzer,
    until: Instant,
    /// Whether an entry went without its snippet.
    pub cut: Cell<bool>,
}

/// Bytes of a long text a snippet is looked for in: tokenizing a text costs
/// its length, and a page's text may be a megabyte.
const SNIPPET_WINDOW: usize = 8 * 1024;

/// The span in which the window's best place counts the query's words.
const WORDS_SPAN: usize = 1024;

impl Snippets {
    pub fn new(
        generator: SnippetGenerator,
        (terms, analyzer): (Vec<String>, TextAnalyzer),
        until: Instant,
    ) -> Snippets {
        Snippets {
            generator,
            terms,
            analyzer,
            until,
            cut: Cell::new(false),
        }
    }

    /// The snippet of `text`, and the text it was made from: the
    /// sentences of its window ([`readable_lines`]) where they hold a query
    /// word, else all its lines, permalink marks and repeated lines left
    /// out either way.
    fn of(&self, text: &str) -> (Snippet, String) {
        let window = snippet_window(text, &self.terms, &mut self.analyzer.clone());
        let (sentences, lines) = readable_lines(&text[window]);
        if Instant::now() >= self.until {
            self.cut.set(true);
            return (Snippet::empty(), lines);
        }
        // The generator reads (and stems) all the text it is given: the
        // sentences only when a word of the query may be in them.
        let lower = sentences.to_ascii_lowercase();
        if self.terms.iter().any(|term| lower.contains(term.as_str())) {
            let snippet = self.generator.snippet(&sentences);
            if !snippet.highlighted().is_empty() {
                return (snippet, sentences);
            }
        }
        let snippet = self.generator.snippet(&lines);
        if !snippet.highlighted().is_empty() || sentences.is_empty() {
            return (snippet, lines);
        }
        // No word of the query in the text (a title or URL match): the
        // start of its sentences.
        (Snippet::empty(), sentences)
    }
}

/// Marks a page's headings carry as links to themselves (Sphinx's and
/// MkDocs' `¶`, link symbols): never words of a snippet.
const PERMALINK_MARKS: [char; 3] = ['\u{b6}', '\u{1f517}', '\u{f0c1}'];

/// A line of this many words or more is a sentence (of a snippet), as is
/// a line of three words or more that ends as a sentence ends; a shorter
/// line is a heading, a menu's or a table of contents' entry.
const SENTENCE_WORDS: usize = 12;

/// What a line of navigation says ("Next: Introduction, Previous: Top,
/// Up: (dir)"; "Previous topic … Next topic").
const NAVIGATION: [&str; 4] = ["next:", "previous:", "prev:", "up:"];

/// Whether a short line is navigation ([`NAVIGATION`], or "previous" and
/// "next" together), in any case.
fn is_navigation(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    NAVIGATION.iter().any(|said| lower.contains(said))
        || (lower.contains("previous") && lower.contains("next"))
}

/// The lines of a page's text a snippet reads, twice: its sentences only
/// ([`SENTENCE_WORDS`]), and all its lines. Either way without permalink marks
/// ([`PERMALINK_MARKS`]), without a line said before (a title repeated as
/// its heading), and without a "Previous … Next" line of navigation:
/// around a match a searcher wants sentences, not headings, menus and
/// tables of contents.
pub(super) fn readable_lines(text: &str) -> (String, String) {
    let mut seen: rustc_hash::FxHashSet<std::borrow::Cow<'_, str>> =
        rustc_hash::FxHashSet::default();
    let (mut sentences, mut lines) = (String::new(), String::new());
    for line in text.lines() {
        let line: std::borrow::Cow<'_, str> = if line.contains(PERMALINK_MARKS) {
            line.chars()
                .filter(|c| !PERMALINK_MARKS.contains(c))
                .collect::<String>()
                .trim()
                .to_string()
                .into()
        } else {
            line.trim().into()
        };
        if line.is_empty() || !seen.insert(line.clone()) {
            continue;
        }
        let line = line.as_ref();
        let words = line.split_whitespace().count();
        let ends_sentence = line.ends_with(['.', '!', '?', ':']);
        if words <= SENTENCE_WORDS && !ends_sentence && is_navigation(line) {
            continue;
        }
        for (kept, wanted) in [
            (
                &mut sentences,
                words >= SENTENCE_WORDS || (words >= 3 && ends_sentence),
            ),
            (&mut lines, true),
        ] {
            if wanted {
                if !kept.is_empty() {
                    kept.push('\n');
                }
                kept.push_str(line);
            }
        }
    }
    (sentences, lines)
}

/// Where in `text` to look for a snippet: all of a short text; of a long one,
/// [`SNIPPET_WINDOW`] bytes around the place where most of `terms` are found
/// together (the first such place), or its start when no term is found. A
/// term is looked for by a plain scan of the text in ASCII lower case, and
/// found where a word starts with it and `analyzer` makes the word that term
/// (`virtually` is `virtual`, `hostname` is not `host`). The window is on
/// character boundaries.
pub(super) fn snippet_window(
    text: &str,
    terms: &[String],
    analyzer: &mut TextAnalyzer,
) -> std::ops::Range<usize> {
    if text.len() <= SNIPPET_WINDOW {
        return 0..text.len();
    }
    let lower = text.to_ascii_lowercase();
    let mut found: Vec<(usize, usize)> = Vec::new();
    for (number, term) in terms.iter().enumerate() {
        if term.is_empty() {
            continue;
        }
        found.extend(
            lower
                .match_indices(term.as_str())
                .map(|(place, _)| place)
                .filter(|&place| {
                    let starts_word = !text[..place]
                        .chars()
                        .next_back()
                        .is_some_and(char::is_alphanumeric);
                    starts_word
                        && first_token(analyzer, &text[place..]).as_deref() == Some(term.as_str())
                })
                .take(4096)
                .map(|place| (place, number)),
        );
    }
    found.sort_unstable();
    // The span of WORDS_SPAN bytes holding the most different terms.
    let mut counts = vec![0usize; terms.len()];
    let (mut distinct, mut first) = (0, 0);
    let mut best: Option<(usize, usize)> = None;
    for &(place, term) in &found {
        counts[term] += 1;
        if counts[term] == 1 {
            distinct += 1;
        }
        while found[first].0 + WORDS_SPAN < place {
            let gone = found[first].1;
            counts[gone] -= 1;
            if counts[gone] == 0 {
                distinct -= 1;
            }
            first += 1;
        }
        if best.is_none_or(|(most, _)| distinct > most) {
            best = Some((distinct, found[first].0));
        }
    }
    let around = best.map_or(0, |(_, place)| place);
    let mut start = around.saturating_sub(SNIPPET_WINDOW / 4);
    let mut end = (start + SNIPPET_WINDOW).min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

/// What an entry shows of a stored document.
pub(super) struct Shown {
    pub page: PageId,
    pub title: String,
    pub url: String,
    pub host: String,
    pub parts: Vec<SnippetPart>,
}

impl Engine {
    /// Title, URL, host and snippet of a document.
    pub(super) fn shown(
        &self,
        searcher: &Searcher,
        snippets: &Snippets,
        address: DocAddress,
        page: PageId,
    ) -> Result<Shown> {
        let document = self.stored(searcher, address)?;
        let fields = self.index.fields();
        let body = stored_text(&document, fields.get(IndexField::Text));
        let (snippet, source) = snippets.of(body);
        let url = stored_text(&document, fields.get(IndexField::Url)).to_string();
        let title = match stored_text(&document, fields.get(IndexField::Title)).trim() {
            "" => url.clone(),
            title => title.to_string(),
        };
        Ok(Shown {
            page,
            title,
            host: stored_text(&document, fields.get(IndexField::Host)).to_string(),
            url,
            parts: snippet_parts((&snippet, 0), &source, self.config.snippet_chars),
        })
    }

    /// A rolled-up group as shown.
    pub(super) fn group_view(
        &self,
        searcher: &Searcher,
        snippets: &Snippets,
        group: &Group,
    ) -> Result<ResultGroup> {
        let hit: &Hit = &group.shown;
        let shown = self.shown(searcher, snippets, hit.doc, hit.page)?;
        let collection = hit.collection.and_then(|id| {
            let size = self.collection_size(self.collections.collection(id)?);
            (size > 1 && group.collection_hits > 1).then_some(CollectionLink {
                id,
                matching_pages: group.collection_hits,
                entry: hit.page,
            })
        });
        let site = (group.site_more > 0).then(|| SiteLink {
            host_id: HostId(hit.host),
            more: group.site_more,
            shown: group.site_shown.clone(),
        });
        let replicas = self.entry_replica_link(hit);
        let mut entry =
            self.result_group(shown, group.score, group.hits, hit, collection, replicas);
        entry.site = site;
        entry.sitelinks = self.sitelinks(&entry.title, &group.sitelinks);
        if let Some(place) = hit.lineage {
            let lineage = self.collections.lineages.lineage(place.lineage);
            entry.version = lineage
                .and_then(|lineage| lineage.copies.get(place.copy as usize))
                .and_then(|copy| copy.version.clone());
            entry.other_versions = lineage
                .map(|lineage| {
                    lineage
                        .versions()
                        .into_iter()
                        .filter(|version| {
                            entry.version.as_deref().is_none_or(|shown| {
                                !crate::collections::lineage::same_release(shown, version)
                            })
                        })
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
        }
        Ok(entry)
    }

    /// A hit of the flat list as shown: its own group, without expansions.
    pub(super) fn flat_view(
        &self,
        searcher: &Searcher,
        snippets: &Snippets,
        score: Score,
        address: DocAddress,
    ) -> Result<ResultGroup> {
        let hit = hit_at(searcher, address, score)?;
        let shown = self.shown(searcher, snippets, address, hit.page)?;
        Ok(self.result_group(shown, score, 1, &hit, None, None))
    }

    fn result_group(
        &self,
        shown: Shown,
        score: f32,
        hits: u32,
        hit: &Hit,
        collection: Option<CollectionLink>,
        replicas: Option<ReplicaLink>,
    ) -> ResultGroup {
        ResultGroup {
            page_id: shown.page,
            link: followable(&shown.url),
            url: shown.url,
            title: shown.title,
            host: shown.host,
            snippet: plain(&shown.parts),
            snippet_parts: shown.parts,
            score,
            hits,
            cluster: hit.cluster,
            collection_id: hit.collection,
            version: None,
            other_versions: Vec::new(),
            collection,
            replicas,
            site: None,
            sitelinks: Vec::new(),
        }
    }

    /// The sitelinks of an entry titled `title`: each title once, and not
    /// the entry's own.
    fn sitelinks(&self, title: &str, hits: &[Hit]) -> Vec<Sitelink> {
        let mut titles = vec![title.trim().to_string()];
        let mut sitelinks = Vec::new();
        for hit in hits {
            let Some(page) = self.table.page(hit.page) else {
                continue;
            };
            let title = page.title.trim();
            if title.is_empty() || titles.iter().any(|seen| seen == title) {
                continue;
            }
            titles.push(title.to_string());
            sitelinks.push(Sitelink {
                url: page.url.to_string(),
                label: without_shared_ending(title, &titles[0]),
                title: title.to_string(),
                page_id: hit.page,
                link: followable(&page.url),
            });
        }
        sitelinks
    }

    /// The Replica link of an entry: its page's cluster's, counting the
    /// copies its list shows ([`Engine::replica_link`]); for a page of a
    /// manual in no cluster (a version only one host has), the manual's
    /// principal cluster's.
    fn entry_replica_link(&self, hit: &Hit) -> Option<ReplicaLink> {
        let lineage = hit
            .lineage
            .and_then(|place| self.collections.lineages.lineage(place.lineage));
        let cluster = hit.cluster.or_else(|| {
            lineage?.copies.iter().find_map(|copy| {
                let collection = self.collections.collection(copy.collection?)?;
                Some(collection.cluster)
            })
        })?;
        self.replica_link(cluster, hit.page)
    }

    /// The Replica link for a page shown from cluster `id`, when the
    /// Replica list has more than one copy to show. It counts what the list
    /// shows: the cluster's copies (a server under two names is one) and
    /// the copies of the manual's other versions.
    pub(super) fn replica_link(&self, id: ClusterId, page: PageId) -> Option<ReplicaLink> {
        let cluster = self.collections.cluster(id)?;
        let copies = super::expand::fold_aliases(
            super::expand::copy_rows(&self.collections, cluster, |collection| {
                self.collection_size(collection)
            }),
            &self.mirrors,
        )
        .len()
            + self.copies_outside(id, cluster).count();
        (cluster.cardinality() > 1 && copies > 1).then_some(ReplicaLink {
            cluster: id,
            copies,
            hit: page,
        })
    }

    /// A page as named in an expansion.
    pub(super) fn page_link(&self, page: PageId) -> Option<PageLink> {
        let row = self.table.page(page)?;
        Some(PageLink {
            page_id: page,
            link: followable(&row.url),
            url: row.url.to_string(),
            title: if row.title.trim().is_empty() {
                row.url.to_string()
            } else {
                row.title.to_string()
            },
            host: self.table.host_name(row.host).to_string(),
        })
    }
}

/// The roll-up fields of the document at `address`, from its fast fields.
pub(super) fn hit_at(searcher: &Searcher, address: DocAddress, score: Score) -> Result<Hit> {
    let fast = searcher.segment_reader(address.segment_ord).fast_fields();
    let value = |field: IndexField| -> Result<Option<u64>> {
        Ok(fast
            .u64(field.name())?
            .first(address.doc_id)
            .filter(|&value| value != NONE))
    };
    let copy = value(IndexField::LineageCopy)?.unwrap_or_default();
    Ok(Hit {
        score,
        page: PageId(value(IndexField::PageId)?.unwrap_or_default() as u32),
        collection: value(IndexField::CollectionId)?.map(|id| CollectionId(id as u32)),
        cluster: value(IndexField::ClusterId)?.map(|id| ClusterId(id as u32)),
        lineage: value(IndexField::LineageId)?.map(|id| crate::collections::LineagePlace {
            lineage: crate::collections::LineageId(id as u32),
            copy: copy.min(u64::from(u16::MAX)) as u16,
        }),
        host: value(IndexField::HostId)?.unwrap_or_default() as u32,
        listing: crate::index::kind::PageKind::from_u64(
            value(IndexField::Kind)?.unwrap_or_default(),
        )
        .is_listing(),
        doc: address,
    })
}

/// The first token `analyzer` makes of the word that starts `text`.
fn first_token(analyzer: &mut TextAnalyzer, text: &str) -> Option<String> {
    let word = text.split(char::is_whitespace).next().unwrap_or_default();
    let mut stream = analyzer.token_stream(crate::index::text_prefix(word, 64));
    stream.advance().then(|| stream.token().text.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_reads_sentences_without_permalinks_repeats_or_navigation() {
        let text = "MemorySSA\nMemorySSA\u{b6}\nIntroduction\u{b6}\n\
                    MemorySSA is an analysis that reasons about memory operations.\n\
                    Previous topic Next topic\nNext: Introduction, Up: (dir) [Contents]\n\
                    Virtual Hosts (An IP address for each web site)\nSee also:\nShort line";
        let (sentences, lines) = readable_lines(text);
        assert_eq!(
            sentences,
            "MemorySSA is an analysis that reasons about memory operations."
        );
        assert_eq!(
            lines,
            "MemorySSA\nIntroduction\nMemorySSA is an analysis that reasons about memory operations.\n\
             Virtual Hosts (An IP address for each web site)\nSee also:\nShort line"
        );
    }

    #[test]
    fn a_sitelink_drops_the_manual_name_its_entry_carries_too() {
        assert_eq!(
            without_shared_ending(
                "Session Basics — SQLAlchemy 1.4 Documentation",
                "Using the Session — SQLAlchemy 1.4 Documentation"
            ),
            "Session Basics"
        );
        assert_eq!(
            without_shared_ending("mod_lua - Apache HTTP Server Version 2.4", "Apache Tomcat"),
            "mod_lua - Apache HTTP Server Version 2.4"
        );
        assert_eq!(
            without_shared_ending("Quickstart | Flask", "Flask"),
            "Quickstart | Flask"
        );
    }

    #[test]
    fn a_long_texts_snippet_is_looked_for_where_the_words_are() {
        let filler = "Nothing to see on this line at all.\n".repeat(2000);
        // A short text is read whole.
        let analyzer = &mut crate::index::text_analyzer();
        assert_eq!(
            snippet_window("a short text", &["text".into()], analyzer),
            0..12
        );
        // A long one around the place with most of the words: "vector"
        // alone early, "vector" and "size" together late.
        // ("vectorised" is not "vector").
        let text = format!(
            "{filler}A Vector here.\n{filler}Vectorised sizes.\n{filler}The vector size is its length.\n{filler}"
        );
        let terms = vec!["vector".to_string(), "size".to_string()];
        let window = snippet_window(&text, &terms, analyzer);
        assert_eq!(window.len(), SNIPPET_WINDOW);
        assert!(text[window].contains("The vector size is its length."));
        // Without any of the words, the text's start.
        assert_eq!(snippet_window(&text, &["absent".into()], analyzer).start, 0);
        // Never inside a character.
        let wide = format!("{}vector", "é ".repeat(6000));
        let window = snippet_window(&wide, &["vector".to_string()], analyzer);
        assert!(wide.is_char_boundary(window.start) && wide.is_char_boundary(window.end));
        assert!(wide[window].ends_with("vector"));
    }
}
