//! The index schema: its fields as an enum, and the tantivy handles for them.

use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED, STRING,
};
use tantivy::TantivyDocument;

use super::tokenizer::TEXT_TOKENIZER;
use crate::pages::PageId;

/// Fields of the index.
const FIELDS: usize = 18;

/// The value of `collection_id` and `cluster_id` for a page in none.
pub const NONE: u64 = u64::MAX;

/// A field of the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexField {
    /// The page id (fast, indexed).
    PageId,
    /// The page's collection, or [`NONE`] (fast, indexed: the Collection
    /// expansion filters on it).
    CollectionId,
    /// The similar cluster the page is a copy in, or [`NONE`] (fast, indexed:
    /// the Replica expansion filters on it). A copy left outside every
    /// collection carries the cluster of its twins.
    ClusterId,
    /// The number of copies of the page in the crawl, itself included (fast).
    Replication,
    /// Links to the page from pages on other hosts (fast).
    InlinksFromOtherHosts,
    /// The title (stemmed English words with positions, stored; searched
    /// as `title:word`).
    Title,
    /// The page's headings and defined terms (`<h1>`-`<h6>`, `<dt>`) in its
    /// own text, one a line: what the page is about (stemmed English words
    /// with positions, not stored; the pages about a query are found in it
    /// and the title).
    Headings,
    /// What a query's words are looked up in and first scored by: the
    /// page's own visible text (its lines that are not site chrome, at most
    /// its first `index.max_text_bytes`), then its title, its headings and
    /// its URL's path, as the values of one field (stemmed English words
    /// with positions; stored, the own text first, for snippets). A word is
    /// one list of postings, so a query of several words is an intersection
    /// tantivy prunes by its blocks' best scores, and the pages that match
    /// are counted without a score; the title, the headings and the path add
    /// their own scores to the pages where they hold a word
    /// ([`super::SearchQuery`]). Not the URL's host: it names a site, the
    /// same on all its pages and different on each of its mirrors, not what
    /// a page is about (a mirror host's `mirror` is no page's subject);
    /// `url:word` looks its words up.
    Text,
    /// The path of the page's URL, as words (stemmed English words with
    /// positions, not stored): a file's name often names its subject
    /// (`mod_rewrite.html`), and its words weigh as the title's do, less.
    Path,
    /// The lines of the visible text the similarity stage set aside as site
    /// chrome (menus, sidebars, footers): searched, with a low weight, never
    /// shown.
    Chrome,
    /// The names its title gives the page ([`super::kind::title_names`]),
    /// each one exact term: a query that is one of them names the page.
    Name,
    /// The URL (its words, stored).
    Url,
    /// The host name (one term: `host:www.example.org`, stored).
    Host,
    /// The host's id in the page table (fast: results crowd by host).
    HostId,
    /// The manual the page is a page of, in any version, or [`NONE`] (fast,
    /// indexed: results show a manual once).
    LineageId,
    /// Its copy's position in its manual's copies, 0 the principal (fast,
    /// indexed: the version facet filters on it).
    LineageCopy,
    /// Its [`super::kind::PageKind`]: prose, front page or listing (fast:
    /// the roll-up weighs listings down).
    Kind,
    /// Its place in its manual, the same in every copy and version
    /// ([`super::kind::manual_page_key`]), or [`NONE`] (fast: a search
    /// within one manual shows each of its pages once).
    ManualPage,
}

impl IndexField {
    pub const ALL: [IndexField; FIELDS] = [
        IndexField::PageId,
        IndexField::CollectionId,
        IndexField::ClusterId,
        IndexField::Replication,
        IndexField::InlinksFromOtherHosts,
        IndexField::Title,
        IndexField::Headings,
        IndexField::Text,
        IndexField::Path,
        IndexField::Chrome,
        IndexField::Name,
        IndexField::Url,
        IndexField::Host,
        IndexField::HostId,
        IndexField::LineageId,
        IndexField::LineageCopy,
        IndexField::Kind,
        IndexField::ManualPage,
    ];

    /// The field's name in the schema (and in queries: `title:apache`).
    pub fn name(self) -> &'static str {
        match self {
            IndexField::PageId => "page_id",
            IndexField::CollectionId => "collection_id",
            IndexField::ClusterId => "cluster_id",
            IndexField::Replication => "replication",
            IndexField::InlinksFromOtherHosts => "inlinks_from_other_hosts",
            IndexField::Title => "title",
            IndexField::Headings => "headings",
            IndexField::Text => "text",
            IndexField::Path => "path",
            IndexField::Chrome => "chrome",
            IndexField::Name => "name",
            IndexField::Url => "url",
            IndexField::Host => "host",
            IndexField::HostId => "host_id",
            IndexField::LineageId => "lineage_id",
            IndexField::LineageCopy => "lineage_copy",
            IndexField::Kind => "kind",
            IndexField::ManualPage => "manual_page",
        }
    }

    fn position(self) -> usize {
        self as usize
    }
}

/// The tantivy handles of the fields, by [`IndexField`].
#[derive(Debug, Clone)]
pub struct Fields {
    handles: [Field; FIELDS],
}

/// One page's values, as indexed.
pub struct PageDocument<'a> {
    pub page: PageId,
    pub collection: u64,
    pub cluster: u64,
    pub replication: u64,
    pub inlinks_from_other_hosts: u64,
    pub host_id: u64,
    pub lineage: u64,
    pub lineage_copy: u64,
    pub kind: u64,
    pub manual_page: u64,
    pub title: &'a str,
    pub body: &'a str,
    pub headings: &'a str,
    pub chrome: &'a str,
    pub url: &'a str,
    pub host: &'a str,
}

impl Fields {
    pub fn get(&self, field: IndexField) -> Field {
        self.handles[field.position()]
    }

    /// The handles of an existing index's schema; why not, when a field is
    /// missing (an index written by another build).
    pub fn of(schema: &Schema) -> Result<Fields, String> {
        let mut handles = [Field::from_field_id(0); FIELDS];
        for field in IndexField::ALL {
            handles[field.position()] = schema
                .get_field(field.name())
                .map_err(|_| format!("the index has no field {:?}", field.name()))?;
        }
        Ok(Fields { handles })
    }

    pub fn document(&self, values: &PageDocument<'_>) -> TantivyDocument {
        let mut document = TantivyDocument::new();
        document.add_u64(self.get(IndexField::PageId), u64::from(values.page.0));
        document.add_u64(self.get(IndexField::CollectionId), values.collection);
        document.add_u64(self.get(IndexField::ClusterId), values.cluster);
        document.add_u64(self.get(IndexField::Replication), values.replication);
        document.add_u64(
            self.get(IndexField::InlinksFromOtherHosts),
            values.inlinks_from_other_hosts,
        );
        document.add_text(self.get(IndexField::Title), values.title);
        for name in super::kind::title_names(values.title) {
            document.add_text(self.get(IndexField::Name), name);
        }
        if !values.headings.is_empty() {
            document.add_text(self.get(IndexField::Headings), values.headings);
        }
        // The own text first: it is the stored value snippets are made from.
        let text = self.get(IndexField::Text);
        document.add_text(text, values.body);
        document.add_text(text, values.title);
        if !values.headings.is_empty() {
            document.add_text(text, values.headings);
        }
        if let Some(path) = crate::pages::url_path(values.url) {
            document.add_text(text, path);
            document.add_text(self.get(IndexField::Path), path);
        }
        if !values.chrome.is_empty() {
            document.add_text(self.get(IndexField::Chrome), values.chrome);
        }
        document.add_u64(self.get(IndexField::HostId), values.host_id);
        document.add_u64(self.get(IndexField::LineageId), values.lineage);
        document.add_u64(self.get(IndexField::LineageCopy), values.lineage_copy);
        document.add_u64(self.get(IndexField::Kind), values.kind);
        document.add_u64(self.get(IndexField::ManualPage), values.manual_page);
        document.add_text(self.get(IndexField::Url), values.url);
        document.add_text(self.get(IndexField::Host), values.host);
        document
    }
}

/// The schema and its field handles.
pub fn build() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text = |tokenizer: &str| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
    };
    let mut handles = [Field::from_field_id(0); FIELDS];
    for field in IndexField::ALL {
        let name = field.name();
        handles[field.position()] = match field {
            IndexField::PageId
            | IndexField::CollectionId
            | IndexField::ClusterId
            | IndexField::LineageId
            | IndexField::LineageCopy => builder.add_u64_field(name, FAST | INDEXED),
            IndexField::Replication
            | IndexField::InlinksFromOtherHosts
            | IndexField::HostId
            | IndexField::Kind
            | IndexField::ManualPage => builder.add_u64_field(name, FAST),
            // Positions in every text field: a word the analyzer makes
            // several tokens of is looked up as a phrase.
            IndexField::Title => builder.add_text_field(name, text(TEXT_TOKENIZER).set_stored()),
            IndexField::Text => builder.add_text_field(name, text(TEXT_TOKENIZER).set_stored()),
            IndexField::Headings | IndexField::Path | IndexField::Chrome => {
                builder.add_text_field(name, text(TEXT_TOKENIZER))
            }
            IndexField::Url => builder.add_text_field(name, text("default").set_stored()),
            IndexField::Host => builder.add_text_field(name, STRING | STORED),
            IndexField::Name => builder.add_text_field(name, STRING),
        };
    }
    (builder.build(), Fields { handles })
}
