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

use html5gum::emitters::callback::{CallbackEmitter, CallbackEvent};
use html5gum::{Span, Tokenizer};
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
    lines: Vec<String>,
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
}

impl Collector {
    fn end_line(&mut self) {
        let line = self.current_line.trim();
        if !line.is_empty() {
            self.lines.push(line.to_string());
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
        let text = String::from_utf8_lossy(value);
        if self.in_title {
            self.title.push_str(&text);
            return;
        }
        if self.hidden_depth > 0 {
            return;
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
            _ => {}
        }
        // `<svg/>` has no end tag to close it: only an open element hides.
        if is_hidden(&name) && !self_closing {
            self.hidden_depth += 1;
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
            b"pre" | b"listing" => self.pre_depth = self.pre_depth.saturating_sub(1),
            _ => {}
        }
        if is_hidden(name) {
            self.hidden_depth = self.hidden_depth.saturating_sub(1);
        }
        if is_block(name) || name == b"br" {
            self.end_line();
        }
    }

    fn attribute_value(&mut self, value: &[u8]) {
        let wanted: &[u8] = match self.tag_name.as_slice() {
            b"a" | b"area" | b"base" => b"href",
            b"frame" | b"iframe" => b"src",
            _ => return,
        };
        // The first occurrence of an attribute wins, as in the HTML spec.
        if self.attribute_name == wanted && self.href.is_none() {
            self.href = Some(String::from_utf8_lossy(value).into_owned());
        }
    }

    fn handle(&mut self, event: CallbackEvent<'_>) {
        match event {
            CallbackEvent::OpenStartTag { name } => {
                self.tag_name.clear();
                self.tag_name.extend_from_slice(name);
                self.href = None;
            }
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
    let mut seen = std::collections::HashSet::new();
    let mut links = Vec::new();
    for href in &collector.raw_links {
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
    Extracted {
        title: title_of(&collector),
        text: collector.lines.join("\n"),
        links,
    }
}

/// The title and text lines of [`extract_html`], without resolving links
/// (what the search index needs of a page already ingested).
pub fn extract_html_text(html: &str) -> (String, String) {
    let collector = collect(html);
    (title_of(&collector), collector.lines.join("\n"))
}

/// Runs the tokenizer over `html` into a collector.
fn collect(html: &str) -> Collector {
    let mut collector = Collector::default();
    {
        let mut emitter =
            CallbackEmitter::new(|event: CallbackEvent<'_>, _span: Span<()>| -> Option<()> {
                collector.handle(event);
                None
            });
        emitter.naively_switch_states(true);
        for _ in Tokenizer::new_with_emitter(html, emitter) {}
    }
    collector.end_line();
    collector
}

fn title_of(collector: &Collector) -> String {
    collector
        .title
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

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
            <a href="HTTP://OTHER.example:80/%7Eu/">other</a><a href="#top">same page</a>"##;
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
