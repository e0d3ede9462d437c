//! HTML -> title, visible text and outlinks.
//!
//! A streaming pass over the tokens of the WHATWG tokenizer in `html5gum` (no
//! tree is built). Text inside `script`, `style`, `template`, `noscript` and
//! other raw-text elements is dropped; character references are decoded by the
//! tokenizer; block-level elements and `<br>` end a line, and `<pre>` keeps its
//! own line breaks, so that the text's lines are the page's real lines (line
//! chunking in `similarity/` depends on it, cho-2000 §2.1). Outlinks come from
//! `a` and `area` (`href`) and `frame` and `iframe` (`src`), resolved against
//! the first `<base href>` if any, else the page URL, and canonicalised.
//!
//! Besides, what the analysis reads of a page's head and header: the
//! language it declares (`lang` or `xml:lang` of `<html>`, a
//! `<meta http-equiv="content-language">`), its `<link rel="canonical">`,
//! its first `<h1>`, and the version strings that its title, first heading,
//! version metadata (`<meta>` attributes naming a version or channel) and
//! the `title` of its links home say (`PostgreSQL 15.20 Documentation`).

use std::borrow::Cow;

use html5gum::emitters::callback::{CallbackEmitter, CallbackEvent};
use html5gum::{Emitter, ForwardingEmitter, Span, Tokenizer};
use url::Url;

use super::canonical::canonical_url;

/// What a page says: its title, its visible text (one line per line of the
/// rendered page, no empty lines) and its outlinks (canonical, first
/// occurrence order, no duplicates, without the page itself).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    pub title: String,
    pub text: String,
    pub links: Vec<Url>,
    /// The languages the page declares, in order of precedence: `<html
    /// lang>`, `<html xml:lang>`, `<meta http-equiv="content-language">`.
    pub declared_languages: Vec<String>,
    /// Its `<link rel="canonical">`, resolved and canonical.
    pub canonical: Option<Url>,
    /// The text of its first `<h1>`, white space collapsed.
    pub heading: String,
    /// The text of its headings and defined terms (`<h1>`-`<h6>`, `<dt>`),
    /// one a line, white space collapsed: what the page is about
    /// ([`extract_html_text_and_headings_within`]).
    pub headings: String,
    /// Version strings its title, first heading, version metadata and links
    /// home say ([`version_strings`]), first occurrence order, unique.
    pub versions: Vec<String>,
}

// White space, including the no-break space of `&nbsp;`, separates words;
// runs of it collapse to one space as when the page is rendered.

/// Elements whose start and end break the line.
fn is_block(name: &[u8]) -> bool {
    matches!(
        name,
        b"address"
            | b"article"
            | b"aside"
            | b"blockquote"
            | b"body"
            | b"caption"
            | b"center"
            | b"dd"
            | b"details"
            | b"dialog"
            | b"dir"
            | b"div"
            | b"dl"
            | b"dt"
            | b"fieldset"
            | b"figcaption"
            | b"figure"
            | b"footer"
            | b"form"
            | b"frameset"
            | b"h1"
            | b"h2"
            | b"h3"
            | b"h4"
            | b"h5"
            | b"h6"
            | b"head"
            | b"header"
            | b"hgroup"
            | b"hr"
            | b"html"
            | b"legend"
            | b"li"
            | b"main"
            | b"menu"
            | b"nav"
            | b"ol"
            | b"option"
            | b"p"
            | b"pre"
            | b"section"
            | b"summary"
            | b"table"
            | b"tbody"
            | b"td"
            | b"tfoot"
            | b"th"
            | b"thead"
            | b"tr"
            | b"ul"
    )
}

/// Elements whose text is not shown.
fn is_hidden(name: &[u8]) -> bool {
    matches!(
        name,
        b"script"
            | b"style"
            | b"template"
            | b"noscript"
            | b"iframe"
            | b"noembed"
            | b"noframes"
            | b"xmp"
            | b"svg"
            | b"math"
    )
}

#[derive(Default)]
struct Collector {
    /// The text's lines so far, one after another, each on its own line.
    text: String,
    /// Bytes of the lines in `text` (its line breaks aside).
    line_bytes: usize,
    current_line: String,
    title: String,
    in_title: bool,
    /// Nesting of hidden elements; text is dropped while above zero.
    hidden_depth: usize,
    pre_depth: usize,
    tag_name: Vec<u8>,
    attribute_name: Vec<u8>,
    href: Option<String>,
    base_href: Option<String>,
    raw_links: Vec<String>,
    /// The current start tag's attributes, for the tags whose attributes
    /// beyond `href` and `src` are read (see [`reads_attributes`]).
    attributes: Vec<(Vec<u8>, String)>,
    html_lang: Option<String>,
    html_xml_lang: Option<String>,
    meta_language: Option<String>,
    canonical_href: Option<String>,
    /// Texts that may name the manual's version (metadata, link titles).
    version_texts: Vec<String>,
    heading: String,
    /// 0: before the first `<h1>`, 1: inside it, 2: after it.
    heading_state: u8,
    /// The text of every heading and defined term (`<h1>`-`<h6>`, `<dt>`),
    /// one a line, up to [`MAX_DEFINED_BYTES`]: what the page is about.
    defined: String,
    /// Nesting of those elements.
    defined_depth: usize,
    /// Only the text is wanted (lines, title, headings): attributes and
    /// links are not read.
    text_only: bool,
}

/// Elements whose text names what a page is about: its headings, and the
/// terms it defines (the signatures of a reference page, a glossary's
/// words).
fn defines(name: &[u8]) -> bool {
    matches!(name, b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" | b"dt")
}

/// Most text of headings and defined terms kept of a page.
const MAX_DEFINED_BYTES: usize = 256 * 1024;

/// Tags whose other attributes are read: the language of `<html>`,
/// `<meta>` and `<link>` for language, canonical and version, the `title`
/// of `<a>`.
fn reads_attributes(name: &[u8]) -> bool {
    matches!(name, b"html" | b"meta" | b"link" | b"a")
}

/// Whether `read_attributes` reads the attribute `attribute` of tag `tag`
/// (every one of `<meta>`, whose names may speak of a version): a link's
/// `class` and `id` are not kept.
fn reads_attribute(tag: &[u8], attribute: &[u8]) -> bool {
    match tag {
        b"html" => matches!(attribute, b"lang" | b"xml:lang"),
        b"meta" => true,
        b"link" => matches!(attribute, b"rel" | b"href" | b"title"),
        b"a" => matches!(attribute, b"href" | b"title"),
        _ => false,
    }
}

/// `bytes` as text, a bad byte sequence as U+FFFD. The tokenizer reads a
/// `str`, so what it hands over is UTF-8: checked by `from_utf8`, which
/// reads ASCII a word at a time, not by the character-by-character
/// reading of [`String::from_utf8_lossy`].
fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

impl Collector {
    fn end_line(&mut self) {
        let line = self.current_line.trim();
        if !line.is_empty() {
            self.line_bytes += line.len();
            if !self.text.is_empty() {
                self.text.push('\n');
            }
            self.text.push_str(line);
        }
        self.current_line.clear();
    }

    fn push_words(&mut self, text: &str) {
        for (index, word) in text.split_whitespace().enumerate() {
            if index > 0 {
                self.current_line.push(' ');
            }
            self.current_line.push_str(word);
        }
        // Keep a separating space when the text ends in white space, so that
        // `<b>a</b> <i>b</i>` stays two words and `a<b>b</b>` stays one.
        if text.ends_with(char::is_whitespace)
            && !self.current_line.is_empty()
            && !self.current_line.ends_with(' ')
        {
            self.current_line.push(' ');
        }
    }

    fn text(&mut self, value: &[u8]) {
        // A script's or a style's text is not read at all.
        if self.hidden_depth > 0 && !self.in_title {
            return;
        }
        let text = lossy(value);
        if self.in_title {
            self.title.push_str(&text);
            return;
        }
        if self.heading_state == 1 && self.heading.len() < MAX_HEADING_BYTES {
            self.heading.push_str(&text);
        }
        if self.defined_depth > 0 && self.defined.len() < MAX_DEFINED_BYTES {
            // One line a heading, whatever line breaks its source has.
            self.defined.extend(
                text.chars()
                    .map(|c| if c == '\n' || c == '\r' { ' ' } else { c }),
            );
        }
        if text.starts_with(char::is_whitespace)
            && !self.current_line.is_empty()
            && !self.current_line.ends_with(' ')
        {
            self.current_line.push(' ');
        }
        if self.pre_depth > 0 {
            let mut pieces = text.split('\n').peekable();
            while let Some(piece) = pieces.next() {
                self.push_words(piece);
                if pieces.peek().is_some() {
                    self.end_line();
                }
            }
        } else {
            self.push_words(&text);
        }
    }

    fn start_tag(&mut self, self_closing: bool) {
        let name = std::mem::take(&mut self.tag_name);
        let href = self.href.take();
        match name.as_slice() {
            b"title" => self.in_title = true,
            b"br" => self.end_line(),
            b"a" | b"area" | b"frame" | b"iframe" => {
                if let Some(href) = href {
                    self.raw_links.push(href);
                }
            }
            // Only the first <base> counts.
            b"base" if self.base_href.is_none() => self.base_href = href,
            b"h1" if self.heading_state == 0 && !self_closing => self.heading_state = 1,
            _ => {}
        }
        if reads_attributes(&name) {
            self.read_attributes(&name);
        }
        // `<svg/>` has no end tag to close it: only an open element hides.
        if is_hidden(&name) && !self_closing {
            self.hidden_depth += 1;
        }
        if defines(&name) && !self_closing {
            self.defined_depth += 1;
        }
        if (name.as_slice() == b"pre" || name.as_slice() == b"listing") && !self_closing {
            self.pre_depth += 1;
        }
        if is_block(&name) {
            self.end_line();
        }
    }

    fn end_tag(&mut self, name: &[u8]) {
        match name {
            b"title" => self.in_title = false,
            b"h1" if self.heading_state == 1 => self.heading_state = 2,
            b"pre" | b"listing" => self.pre_depth = self.pre_depth.saturating_sub(1),
            _ => {}
        }
        if is_hidden(name) {
            self.hidden_depth = self.hidden_depth.saturating_sub(1);
        }
        if defines(name) && self.defined_depth > 0 {
            self.defined_depth -= 1;
            if self.defined.len() < MAX_DEFINED_BYTES {
                self.defined.push('\n');
            }
        }
        if is_block(name) || name == b"br" {
            self.end_line();
        }
    }

    /// What the current start tag's attributes say of the page's language,
    /// canonical URL and version.
    fn read_attributes(&mut self, name: &[u8]) {
        let attributes = std::mem::take(&mut self.attributes);
        let value = |wanted: &[u8]| {
            attributes
                .iter()
                .find(|(attribute, _)| attribute.eq_ignore_ascii_case(wanted))
                .map(|(_, value)| value.as_str())
        };
        match name {
            b"html" => {
                if self.html_lang.is_none() {
                    self.html_lang = value(b"lang").map(str::to_string);
                }
                if self.html_xml_lang.is_none() {
                    self.html_xml_lang = value(b"xml:lang").map(str::to_string);
                }
            }
            b"meta" => {
                let http_equiv = value(b"http-equiv").unwrap_or("");
                if http_equiv.eq_ignore_ascii_case("content-language")
                    && self.meta_language.is_none()
                {
                    self.meta_language = value(b"content").map(str::to_string);
                }
                let names_version = |text: &str| {
                    let lower = text.to_ascii_lowercase();
                    lower.contains("version") || lower.contains("channel")
                };
                let label = value(b"name").or(value(b"property")).unwrap_or("");
                for (attribute, text) in &attributes {
                    let attribute = lossy(attribute);
                    if names_version(&attribute)
                        || (attribute.eq_ignore_ascii_case("content") && names_version(label))
                    {
                        self.version_texts.push(text.clone());
                    }
                }
            }
            b"link" => {
                let rel = value(b"rel").unwrap_or("").to_ascii_lowercase();
                let rels: Vec<&str> = rel.split_ascii_whitespace().collect();
                if rels.contains(&"canonical") && self.canonical_href.is_none() {
                    self.canonical_href = value(b"href").map(str::to_string);
                }
                if rels
                    .iter()
                    .any(|rel| ["home", "start", "top", "up", "contents"].contains(rel))
                {
                    self.version_texts
                        .extend(value(b"title").map(str::to_string));
                }
            }
            b"a" => {
                if let (Some(title), Some(href)) = (value(b"title"), value(b"href")) {
                    if links_home(href) {
                        self.version_texts.push(title.to_string());
                    }
                }
            }
            _ => {}
        }
    }

    fn attribute_value(&mut self, value: &[u8]) {
        if self.attributes.len() < MAX_ATTRIBUTES
            && reads_attribute(&self.tag_name, &self.attribute_name)
        {
            self.attributes
                .push((self.attribute_name.clone(), lossy(value).into_owned()));
        }
        let wanted: &[u8] = match self.tag_name.as_slice() {
            b"a" | b"area" | b"base" => b"href",
            b"frame" | b"iframe" => b"src",
            _ => return,
        };
        // The first occurrence of an attribute wins, as in the HTML spec.
        if self.attribute_name == wanted && self.href.is_none() {
            self.href = Some(lossy(value).into_owned());
        }
    }

    fn handle(&mut self, event: CallbackEvent<'_>) {
        match event {
            CallbackEvent::OpenStartTag { name } => {
                self.tag_name.clear();
                self.tag_name.extend_from_slice(name);
                self.href = None;
                self.attributes.clear();
            }
            CallbackEvent::AttributeName { .. } | CallbackEvent::AttributeValue { .. }
                if self.text_only => {}
            CallbackEvent::AttributeName { name } => {
                self.attribute_name.clear();
                self.attribute_name.extend_from_slice(name);
            }
            CallbackEvent::AttributeValue { value } => self.attribute_value(value),
            CallbackEvent::CloseStartTag { self_closing } => self.start_tag(self_closing),
            CallbackEvent::EndTag { name } => self.end_tag(name),
            CallbackEvent::String { value } => self.text(value),
            CallbackEvent::Comment { .. }
            | CallbackEvent::Doctype { .. }
            | CallbackEvent::Error(_) => {}
        }
    }
}

/// Extracts title, text lines and outlinks of an HTML page fetched from `page_url`.
pub fn extract_html(html: &str, page_url: &Url) -> Extracted {
    let collector = collect(html);

    let base = collector
        .base_href
        .as_deref()
        .and_then(|href| canonical_url(Some(page_url), href))
        .unwrap_or_else(|| page_url.clone());
    let mut page_without_fragment = page_url.clone();
    page_without_fragment.set_fragment(None);
    let mut seen = rustc_hash::FxHashSet::default();
    // A page names most of its links several times (menus, "next" above
    // and below): each href is resolved once.
    let mut hrefs = rustc_hash::FxHashSet::default();
    let mut links = Vec::new();
    for href in &collector.raw_links {
        if !hrefs.insert(href.as_str()) {
            continue;
        }
        // A link to a part of the page itself (`#section`, a heading's
        // permalink) is no outlink; without a `<base>`, it resolves
        // against the page, so it need not be parsed to be known.
        if collector.base_href.is_none() && href.trim_start().starts_with('#') {
            continue;
        }
        let Some(link) = canonical_url(Some(&base), href) else {
            continue;
        };
        if link == page_without_fragment {
            continue;
        }
        if seen.insert(link.as_str().to_string()) {
            links.push(link);
        }
    }
    let canonical = collector
        .canonical_href
        .as_deref()
        .and_then(|href| canonical_url(Some(&base), href));
    let title = title_of(&collector);
    let heading = collapse(&collector.heading);
    let headings = headings_of(&collector);
    let mut versions = Vec::new();
    for text in [title.as_str(), heading.as_str()]
        .into_iter()
        .chain(collector.version_texts.iter().map(String::as_str))
    {
        for version in version_strings(text) {
            if !versions.contains(&version) && versions.len() < MAX_VERSIONS {
                versions.push(version);
            }
        }
    }
    Extracted {
        title,
        text: collector.text,
        links,
        declared_languages: [
            collector.html_lang,
            collector.html_xml_lang,
            collector.meta_language,
        ]
        .into_iter()
        .flatten()
        .filter(|tag| !tag.trim().is_empty())
        .collect(),
        canonical,
        heading,
        headings,
        versions,
    }
}

/// Longest first heading kept, in bytes.
const MAX_HEADING_BYTES: usize = 512;
/// Attributes of one tag read at most: a tag with thousands of attributes
/// costs no more than this.
const MAX_ATTRIBUTES: usize = 32;
/// Version strings kept of a page at most.
const MAX_VERSIONS: usize = 8;

/// Host names kept of a page's text at most, the first it names: a mirror's
/// note ("a mirror of docs.example.org") is near the top or the bottom of a
/// page. Names of files and modules (`index.html`, `os.path`) have the same
/// form and count too, so on a page naming many of those first a note at
/// its end is not read (the other pages of the copy, a quarter of which
/// suffice, still say it).
pub const MAX_TEXT_HOSTS: usize = 16;

/// The host names a text names (`docs.example.org`, also inside a URL
/// written out), in lower case, first occurrence order, unique, at most
/// [`MAX_TEXT_HOSTS`]: words of dot-separated labels of letters, digits and
/// hyphens whose last label is two letters or more. A file name
/// (`index.html`) has that form too; the page table keeps only the names of
/// the crawl's hosts.
pub fn host_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    // By bytes: every byte of a name is ASCII, and a byte of a multi-byte
    // character, as the character, ends a word. Only the words around a
    // dot are looked at, found with `memchr`: splitting the whole text into
    // words cost 5% of ingest.
    let bytes = text.as_bytes();
    let in_word = |byte: &u8| byte.is_ascii_alphanumeric() || *byte == b'.' || *byte == b'-';
    let mut looked_at = 0;
    for dot in memchr::memchr_iter(b'.', bytes) {
        if dot < looked_at {
            continue;
        }
        if names.len() == MAX_TEXT_HOSTS {
            break;
        }
        let start = bytes[..dot]
            .iter()
            .rposition(|byte| !in_word(byte))
            .map_or(0, |before| before + 1);
        let end = bytes[dot..]
            .iter()
            .position(|byte| !in_word(byte))
            .map_or(bytes.len(), |after| dot + after);
        looked_at = end;
        let word = trim_dots_and_dashes(&bytes[start..end]);
        if !word.contains(&b'.') || word.len() > 253 {
            continue;
        }
        let labels_fit = word.split(|&byte| byte == b'.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with(b"-")
                && !label.ends_with(b"-")
        });
        let last = word.rsplit(|&byte| byte == b'.').next().unwrap_or_default();
        let top_level = last.len() >= 2 && last.iter().all(u8::is_ascii_alphabetic);
        if labels_fit && top_level {
            let name: String = word
                .iter()
                .map(|&byte| char::from(byte.to_ascii_lowercase()))
                .collect();
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// `word` without the dots and dashes it starts or ends with.
fn trim_dots_and_dashes(word: &[u8]) -> &[u8] {
    let edge = |byte: &u8| *byte == b'.' || *byte == b'-';
    let start = word
        .iter()
        .position(|byte| !edge(byte))
        .unwrap_or(word.len());
    let end = word
        .iter()
        .rposition(|byte| !edge(byte))
        .map_or(start, |last| last + 1);
    &word[start..end]
}

/// Whether a link leads to a folder's index page or a site's root (the
/// "Home" or "Up" link of a manual's pages, whose title names the manual).
fn links_home(href: &str) -> bool {
    let path = href.split(['?', '#']).next().unwrap_or("");
    let last = path.rsplit('/').next().unwrap_or("");
    let index_page = last.split_once('.').is_some_and(|(stem, _)| {
        stem.eq_ignore_ascii_case("index") || stem.eq_ignore_ascii_case("default")
    });
    last.is_empty() || index_page
}

/// Version strings in a text: numbers of two to four dotted parts
/// (`15.20`, `2.4.71`, `1.85.0`), the last part possibly `x` (`3.1.x`),
/// with an optional `v` before them, as whole words. Single numbers are
/// left out (chapter numbers, years), and so are numbers of more parts or
/// of parts longer than four digits (addresses, dates).
pub fn version_strings(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let is_word = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    let mut found = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        let word_start = index == 0 || !(is_word(bytes[index - 1]) || bytes[index - 1] == b'.');
        let start = if word_start && matches!(bytes[index], b'v' | b'V') {
            index + 1
        } else {
            index
        };
        if !word_start || !bytes.get(start).is_some_and(u8::is_ascii_digit) {
            index += 1;
            continue;
        }
        // Dotted parts of one to four digits, the last one possibly `x`.
        let mut end = start;
        let mut parts = 0;
        let mut well_formed = true;
        loop {
            let digits = bytes[end..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits == 0 && parts >= 2 && bytes.get(end) == Some(&b'x') {
                end += 1;
                parts += 1;
                break;
            }
            if digits == 0 || digits > 4 {
                well_formed &= digits <= 4;
                break;
            }
            end += digits;
            parts += 1;
            let another = bytes.get(end) == Some(&b'.')
                && bytes
                    .get(end + 1)
                    .is_some_and(|&next| next.is_ascii_digit() || next == b'x');
            if !another {
                break;
            }
            end += 1;
        }
        // The number ends the word: no letter follows, nor a dot and a digit
        // (a longer number, such as an address).
        let word_end = bytes.get(end).is_none_or(|&next| {
            let longer = next == b'.' && bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
            !is_word(next) && !longer
        });
        if well_formed && word_end && (2..=4).contains(&parts) {
            found.push(text[start..end].to_string());
        }
        index = end.max(index + 1);
    }
    found
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The title and text lines of [`extract_html`], without resolving links
/// (what the search index needs of a page already ingested).
pub fn extract_html_text(html: &str) -> (String, String) {
    extract_html_text_within(html, usize::MAX)
}

/// [`extract_html_text`] of the start of a page: reading stops once the text
/// lines hold `most_bytes` (the line that passes it is kept whole), so a
/// page of megabytes costs what its start does.
pub fn extract_html_text_within(html: &str, most_bytes: usize) -> (String, String) {
    let collector = collect_within(html, most_bytes, true);
    (title_of(&collector), collector.text)
}

/// The visible text of `html` as [`extract_html_text_within`] reads it,
/// and the text of its headings and defined terms (`<h1>`-`<h6>`, `<dt>`)
/// in that text, one a line: what the page is about.
pub fn extract_html_text_and_headings_within(html: &str, most_bytes: usize) -> (String, String) {
    let collector = collect_within(html, most_bytes, true);
    let headings = headings_of(&collector);
    (collector.text, headings)
}

/// The collector's headings and defined terms, one a line, white space
/// collapsed.
fn headings_of(collector: &Collector) -> String {
    collector
        .defined
        .lines()
        .map(collapse)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// An emitter that tells the tokenizer it wants no parse errors. Nothing
/// here reads them (the collector ignores `CallbackEvent::Error`), and
/// checking every character for them was html5gum's largest cost: 5.7% of
/// `index` on development crawl 1 (`perf`). Tokens are the same either way.
struct WithoutErrors<E>(E);

impl<E: Emitter> ForwardingEmitter for WithoutErrors<E> {
    type Token = E::Token;

    fn inner(&mut self) -> &mut impl Emitter<Token = Self::Token> {
        &mut self.0
    }

    #[inline]
    fn should_emit_errors(&mut self) -> bool {
        false
    }

    #[inline]
    fn emit_error(&mut self, _error: html5gum::Error) {}
}

/// Runs the tokenizer over `html` into a collector.
fn collect(html: &str) -> Collector {
    collect_within(html, usize::MAX, false)
}

/// Runs the tokenizer over `html` into a collector until its lines hold
/// `most_bytes`; with `text_only`, its attributes and links are not read
/// (what they would add is not wanted).
fn collect_within(html: &str, most_bytes: usize, text_only: bool) -> Collector {
    let reader = QuickRejects {
        input: html.as_bytes(),
    };
    collect_from(reader, most_bytes, text_only)
}

fn collect_from<'a>(
    reader: impl html5gum::Readable<'a>,
    most_bytes: usize,
    text_only: bool,
) -> Collector {
    let mut collector = Collector {
        text_only,
        ..Collector::default()
    };
    {
        let mut emitter =
            CallbackEmitter::new(|event: CallbackEvent<'_>, _span: Span<()>| -> Option<()> {
                collector.handle(event);
                (collector.line_bytes >= most_bytes).then_some(())
            });
        emitter.naively_switch_states(true);
        // The emitter yields (its first item) once the lines are full.
        let _full = Tokenizer::new_with_emitter(reader, WithoutErrors(emitter)).next();
    }
    collector.end_line();
    collector
}

/// What html5gum reads a page from: its own string reader's work, but
/// for a string it is asked to read that does not start with the next
/// byte, which is turned down before any comparison. Each `&name;` is
/// looked for by trying the HTML standard's names that start with its
/// first letter, longest first: `&lt;` tries 154 names, `&nbsp;` over
/// 100, each a call to compare slices, 4% of extraction on pages of
/// documentation full of code (`benches/extract.rs`).
struct QuickRejects<'a> {
    /// What has not been read yet.
    input: &'a [u8],
}

impl html5gum::Reader for QuickRejects<'_> {
    type Error = std::convert::Infallible;

    #[inline(always)]
    fn read_byte(&mut self) -> Result<Option<u8>, Self::Error> {
        let Some((&first, rest)) = self.input.split_first() else {
            return Ok(None);
        };
        self.input = rest;
        Ok(Some(first))
    }

    #[inline(always)]
    fn read_until<'b>(
        &'b mut self,
        needle: &[u8],
        _: &'b mut [u8; 4],
    ) -> Result<Option<&'b [u8]>, Self::Error> {
        if self.input.is_empty() {
            return Ok(None);
        }
        // html5gum asks for at most a handful of bytes (`<`, `&`, quotes,
        // white space, NUL...): one SIMD pass finds the first.
        let mut needles = [0u8; 16];
        let count = needle.len().min(16);
        needles[..count].copy_from_slice(&needle[..count]);
        let found = jetscii::Bytes::new(needles, count as i32, |byte| needle.contains(&byte))
            .find(self.input);
        // Up to the first needle; the needle alone when it comes first.
        let length = match found {
            Some(0) => 1,
            Some(at) => at,
            None => self.input.len(),
        };
        let (read, rest) = self.input.split_at(length);
        self.input = rest;
        Ok(Some(read))
    }

    #[inline(always)]
    fn try_read_string(&mut self, s: &[u8], case_sensitive: bool) -> Result<bool, Self::Error> {
        let (Some(&next), Some(&first)) = (self.input.first(), s.first()) else {
            return Ok(s.is_empty());
        };
        if next != first && (case_sensitive || !next.eq_ignore_ascii_case(&first)) {
            return Ok(false);
        }
        let Some(start) = self.input.get(..s.len()) else {
            return Ok(false);
        };
        if start == s || (!case_sensitive && start.eq_ignore_ascii_case(s)) {
            self.input = &self.input[s.len()..];
            return Ok(true);
        }
        Ok(false)
    }
}

fn title_of(collector: &Collector) -> String {
    collapse(&collector.title)
}

#[cfg(test)]
mod tests {

    /// The reader html5gum is given reads every page as html5gum's own
    /// string reader does: character references (named, with and without
    /// `;`, in text and attributes, of every case), doctypes and comments
    /// of any case, CDATA, raw text and end tags, a page cut mid-reference.
    #[test]
    fn the_quick_reader_reads_what_html5gums_own_reads() {
        let pages = [
            "<!DOCTYPE html><html lang=en><title>a &lt; b &amp c</title><p>x &LT; y &notin; z &noti; w &nbsp;&nbsp;v",
            "<!doctype HTML public \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\"><p>&gt;&gt &GT;",
            "<p title=\"&lt;a&gt;\" data-x='&amp;copy=1' href=\"?a=1&copy=2&lt=3\">link</p><!-- &lt; --><!--x-->",
            "<svg><![CDATA[ &lt; ]]></svg><script>if (a &lt; b) {}</SCRIPT ><style>&amp;</style><p>&#60;&#x3C;&#X3c;",
            "<textarea>&lt;b&gt;</textarea><pre>\r\n&quot;q&quot;</pre><h2>H &amp; I</h2>&unknownentity; &",
            "<p>cut at the end &l",
            "<p>cut at the end &",
            "<!DocType html SYSTEM 'about:legacy-compat'><p>one",
            "",
        ];
        for page in pages {
            // Every token, doctypes (named in any case) and errors too.
            let quick: Vec<_> = Tokenizer::new(QuickRejects {
                input: page.as_bytes(),
            })
            .collect();
            let own: Vec<_> = Tokenizer::new(page).collect();
            assert_eq!(quick, own, "{page}");
            for text_only in [false, true] {
                let quick = collect_within(page, usize::MAX, text_only);
                let own = collect_from(page, usize::MAX, text_only);
                assert_eq!(quick.text, own.text, "{page}");
                assert_eq!(quick.title, own.title, "{page}");
                assert_eq!(quick.raw_links, own.raw_links, "{page}");
                assert_eq!(quick.attributes, own.attributes, "{page}");
                assert_eq!(quick.html_lang, own.html_lang, "{page}");
            }
        }
        let read = collect_within("<p>a &lt; b &nbsp;c &amp d &notin; e", usize::MAX, true);
        assert_eq!(read.text.trim(), "a < b c & d \u{2209} e");
    }
    use super::*;

    /// Reading the text alone (the index stage's) gives the text, title
    /// and headings of the whole reading (ingest's), whatever the
    /// attributes and links around them.
    #[test]
    fn the_text_alone_is_the_whole_readings_text() {
        let html = "<html lang=en><head><meta name=docsearch:version content=3.1><title>Guide &mdash; Tool \
                    3.1</title><link rel=canonical href=/guide.html><base href=/docs/></head><body>\
                    <div class=nav id=top><a class=\"reference internal\" href=a.html title=\"Tool 3.1\">A</a> \
                    <a href=b.html data-x=1>B</a></div><h1 class=title>Guide<a class=headerlink href=#g>\u{b6}</a></h1>\
                    <p style=\"color: red\">Some <b>bold</b> text<br>on two lines.</p><dl><dt id=x>term</dt>\
                    <dd>meaning</dd></dl><img src=i.png alt=\"no text\"><iframe src=f.html></iframe></body></html>";
        let url = Url::parse("https://tool.example/docs/guide.html").unwrap();
        let whole = extract_html(html, &url);
        let (title, text) = extract_html_text(html);
        assert_eq!((&title, &text), (&whole.title, &whole.text));
        let (text, headings) = extract_html_text_and_headings_within(html, usize::MAX);
        assert_eq!(text, whole.text);
        assert_eq!(headings, "Guide\u{b6}\nterm");
        assert_eq!(whole.headings, headings);
        // What the attributes said is read in the whole reading only.
        assert_eq!(whole.links.len(), 4, "{:?}", whole.links);
        assert_eq!(whole.declared_languages, ["en"]);
        assert!(whole.canonical.is_some());
        assert!(
            whole.versions.contains(&"3.1".to_string()),
            "{:?}",
            whole.versions
        );
    }

    #[test]
    fn headings_and_defined_terms_are_what_a_page_is_about() {
        let html = "<title>T</title><h1>Sessions<a class=headerlink>\u{b6}</a></h1><p>Text of a \
                    paragraph.</p><dl><dt>flask.<span>send_file</span>\n(<em>path</em>)</dt><dd>Sends a file.</dd></dl>\
                    <h3>Notes</h3><script>var h = '<h2>no</h2>';</script>";
        let (text, headings) = extract_html_text_and_headings_within(html, usize::MAX);
        assert!(text.contains("Text of a paragraph."));
        assert_eq!(headings, "Sessions\u{b6}\nflask.send_file (path)\nNotes");
    }

    #[test]
    fn reading_the_start_of_a_page_stops_after_its_first_lines() {
        let html: String = std::iter::once("<title>Long</title>".to_string())
            .chain((0..1000).map(|line| format!("<p>line {line}</p>")))
            .collect();
        let (title, text) = extract_html_text_within(&html, 40);
        assert_eq!(title, "Long");
        // Lines of 6 bytes: the seventh reaches 40 and is the last.
        assert_eq!(
            text,
            "line 0\nline 1\nline 2\nline 3\nline 4\nline 5\nline 6"
        );
        assert_eq!(
            extract_html_text_within(&html, usize::MAX),
            extract_html_text(&html)
        );
        assert_eq!(extract_html_text(&html).1.lines().count(), 1000);
    }

    #[test]
    fn text_alone_is_the_text_of_the_full_extraction() {
        let html = "<html><head><title> A  page </title><base href=\"/x/\"></head>\
            <body><h1>Head</h1><p>One <a href=\"b.html\">link</a></p><div>Two</div></body></html>";
        let full = extract_html(html, &page());
        assert_eq!(extract_html_text(html), (full.title, full.text));
        assert!(!full.links.is_empty());
    }

    fn page() -> Url {
        Url::parse("http://www.example.org/manual/mod/index.html").unwrap()
    }

    #[test]
    fn title_text_lines_and_hidden_elements() {
        let html = r#"<!DOCTYPE html><html><head><title> Apache  &amp; Modules </title>
            <style>p { color: red }</style><script>var x = "<p>not text</p>";</script></head>
            <body><h1>Modules</h1><p>First <b>bold</b> para&nbsp;graph
            continues here.</p><div>Line one<br>Line two</div>
            <template><p>hidden template</p></template>
            <ul><li>item &lt;one&gt;</li><li>item two</li></ul>
            <pre>code line 1
    code line 2</pre><noscript>enable js</noscript>tail</body></html>"#;
        let extracted = extract_html(html, &page());
        assert_eq!(extracted.title, "Apache & Modules");
        assert_eq!(
            extracted.text,
            "Modules\nFirst bold para graph continues here.\nLine one\nLine two\nitem <one>\nitem two\ncode line 1\ncode line 2\ntail"
        );
    }

    #[test]
    fn self_closing_svg_does_not_hide_the_rest() {
        let html = r#"<p>before <svg class="icon"/> after</p><p>next <svg><title>hidden</title></svg> shown</p>"#;
        assert_eq!(extract_html(html, &page()).text, "before after\nnext shown");
    }

    #[test]
    fn inline_elements_do_not_split_words_or_lines() {
        let extracted = extract_html("<p>a<b>b</b>c <i>d</i> e</p>", &page());
        assert_eq!(extracted.text, "abc d e");
    }

    #[test]
    fn links_resolve_against_base_and_are_canonical_and_unique() {
        let html = r##"<head><base href="http://Mirror.Example.edu/pub/manual/"></head>
            <a href="mod/core.html#Directive">core</a><a href="mod/core.html">again</a>
            <area href="../images/map.html"><iframe src="frame.html"></iframe><frame src="/top.html">
            <a href="mailto:x@example.org">mail</a><a href="javascript:go()">js</a><a>no href</a>
            <a href="HTTP://OTHER.example:80/%7Eu/">other</a><a href="#top">same page</a>
            <a href="mod/core.html">a third time</a><a href="../images/map.html">the map again</a>"##;
        let links: Vec<String> = extract_html(html, &page())
            .links
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            links,
            vec![
                "http://mirror.example.edu/pub/manual/mod/core.html",
                "http://mirror.example.edu/pub/images/map.html",
                "http://mirror.example.edu/pub/manual/frame.html",
                "http://mirror.example.edu/top.html",
                "http://other.example/~u/",
                "http://mirror.example.edu/pub/manual/",
            ]
        );
    }

    #[test]
    fn links_without_base_resolve_against_the_page_and_skip_self_links() {
        let html = r##"<a href="../howto/">howto</a><a href="#x">self</a><a href="index.html">self too</a>"##;
        let links: Vec<String> = extract_html(html, &page())
            .links
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(links, vec!["http://www.example.org/manual/howto/"]);
    }

    #[test]
    fn version_strings_are_dotted_numbers_as_whole_words() {
        let found = |text: &str| version_strings(text);
        assert_eq!(found("PostgreSQL 15.20 Documentation"), ["15.20"]);
        assert_eq!(found("Apache Tomcat 10 (10.1.40) - Intro"), ["10.1.40"]);
        assert_eq!(found("Quickstart — Flask Documentation (3.1.x)"), ["3.1.x"]);
        assert_eq!(found("release v2.0.1, see 1.2.3.4.5"), ["2.0.1"]);
        assert_eq!(found("8.15. Arrays"), ["8.15"]);
        for none in [
            "Chapter 53",
            "2025-01-02",
            "x1.2",
            "1.2b",
            "12345.6",
            "a.1.2",
            "",
        ] {
            assert_eq!(found(none), Vec::<String>::new(), "{none:?}");
        }
    }

    #[test]
    fn a_text_names_hosts_in_notes_and_written_out_urls() {
        let text = "This site is a mirror of Docs.Quill.test, updated daily. \
                    See http://docs.quill.test/manual/ or mirror-2.example.org. \
                    Edit index.html, e.g. version 2.4.1, a-.b, -x.org-";
        assert_eq!(
            host_names(text),
            [
                "docs.quill.test",
                "mirror-2.example.org",
                "index.html",
                "x.org"
            ]
        );
        let many: String = (0..40).map(|n| format!("host{n}.example.org ")).collect();
        assert_eq!(host_names(&many).len(), MAX_TEXT_HOSTS);
        assert!(host_names("no names here, v1.2 and e.g. 3.x").is_empty());
        // A character outside ASCII ends a word, as any other.
        assert_eq!(host_names("voir café.example.org…"), ["example.org"]);
    }

    #[test]
    fn head_says_language_canonical_heading_and_version() {
        let html = r#"<html lang="fr-CA" xml:lang="fr"><head>
            <meta http-equiv="Content-Language" content="fr">
            <title>Guide — Manuel (4.2.x)</title>
            <link rel="Canonical" href="https://origin.example/manual/guide.html">
            <meta name="rustdoc-vars" data-channel="1.85.0" data-root-path="../">
            <meta name="docsearch:version" content="4.2">
            <link rel="home" href="index.html" title="Le manuel 4.2.1">
            </head><body><a href="../index.html" title="Manuel 4.2.0 Documentation">Home</a>
            <a href="other.html" title="Release 9.9.9">not home</a>
            <h1>Guide <b>de</b>   démarrage</h1><h1>Second 7.7</h1></body></html>"#;
        let extracted = extract_html(html, &page());
        assert_eq!(extracted.declared_languages, ["fr-CA", "fr", "fr"]);
        assert_eq!(
            extracted.canonical.map(String::from).as_deref(),
            Some("https://origin.example/manual/guide.html")
        );
        assert_eq!(extracted.heading, "Guide de démarrage");
        assert_eq!(
            extracted.versions,
            ["4.2.x", "1.85.0", "4.2", "4.2.1", "4.2.0"]
        );
        assert!(extracted.text.contains("Guide de démarrage"));
        let bare = extract_html("<p>text</p>", &page());
        assert!(bare.declared_languages.is_empty() && bare.canonical.is_none());
    }

    #[test]
    fn broken_markup_never_panics_and_keeps_text() {
        for html in [
            "<p>unclosed <b>bold",
            "</div></div>text<<<>>>",
            "<a href=",
            "<script>never closed",
            "<!--",
            "&#xFFFFFF;&bogus;",
        ] {
            let extracted = extract_html(html, &page());
            assert!(extracted.text.len() <= html.len() * 4);
        }
        assert_eq!(
            extract_html("<p>unclosed <b>bold", &page()).text,
            "unclosed bold"
        );
    }
}
