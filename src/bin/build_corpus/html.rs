//! A small, forgiving HTML tag scanner: enough to find links (with the byte
//! span of each attribute value, so copies can rewrite them in place), the
//! `<body>` tag and charset declarations. Comments, `<!...>`, `<?...?>`, end
//! tags and the contents of `<script>`/`<style>` are skipped.

/// One attribute; `span` is the byte range of its value in the document.
pub struct Attr {
    pub name: String,
    pub value: String,
    pub span: Option<(usize, usize)>,
}

/// One start tag, from `<` to just after `>`.
pub struct Tag {
    pub name: String,
    pub end: usize,
    pub attrs: Vec<Attr>,
}

impl Tag {
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|attr| attr.name == name)
    }
}

/// All start tags of `html` in document order.
pub fn scan(html: &[u8]) -> Vec<Tag> {
    let mut tags = Vec::new();
    let mut at = 0;
    while let Some(lt) = find(html, b"<", at) {
        match html.get(lt + 1) {
            Some(b'!') if html[lt..].starts_with(b"<!--") => {
                at = find(html, b"-->", lt + 4).map_or(html.len(), |end| end + 3);
            }
            Some(b'!' | b'?' | b'/') => {
                at = find(html, b">", lt + 1).map_or(html.len(), |end| end + 1);
            }
            Some(byte) if byte.is_ascii_alphabetic() => {
                let tag = parse_tag(html, lt);
                at = tag.end;
                if tag.name == "script" || tag.name == "style" {
                    let closing = format!("</{}", tag.name);
                    at = find_ignore_case(html, closing.as_bytes(), at).unwrap_or(html.len());
                }
                tags.push(tag);
            }
            _ => at = lt + 1,
        }
    }
    tags
}

fn parse_tag(html: &[u8], lt: usize) -> Tag {
    let len = html.len();
    let mut j = lt + 1;
    while j < len && (html[j].is_ascii_alphanumeric() || matches!(html[j], b'-' | b':')) {
        j += 1;
    }
    let name = String::from_utf8_lossy(&html[lt + 1..j]).to_ascii_lowercase();
    let mut attrs = Vec::new();
    loop {
        while j < len && (html[j].is_ascii_whitespace() || html[j] == b'/') {
            j += 1;
        }
        if j >= len {
            break;
        }
        if html[j] == b'>' {
            j += 1;
            break;
        }
        let name_start = j;
        while j < len && !html[j].is_ascii_whitespace() && !matches!(html[j], b'=' | b'>') {
            j += 1;
        }
        if j == name_start {
            j += 1; // a stray '='
            continue;
        }
        let attr_name = String::from_utf8_lossy(&html[name_start..j]).to_ascii_lowercase();
        let mut k = j;
        while k < len && html[k].is_ascii_whitespace() {
            k += 1;
        }
        if k < len && html[k] == b'=' {
            k += 1;
            while k < len && html[k].is_ascii_whitespace() {
                k += 1;
            }
            let (start, end, next) = if k < len && matches!(html[k], b'"' | b'\'') {
                let close = find(html, &[html[k]], k + 1).unwrap_or(len);
                (k + 1, close, (close + 1).min(len))
            } else {
                let start = k;
                while k < len && !html[k].is_ascii_whitespace() && html[k] != b'>' {
                    k += 1;
                }
                (start, k, k)
            };
            let value = decode_entities(&String::from_utf8_lossy(&html[start..end]));
            attrs.push(Attr {
                name: attr_name,
                value,
                span: Some((start, end)),
            });
            j = next;
        } else {
            attrs.push(Attr {
                name: attr_name,
                value: String::new(),
                span: None,
            });
            j = k;
        }
    }
    Tag {
        name,
        end: j,
        attrs,
    }
}

/// Decodes the character references that occur in URLs and charsets.
pub fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let Some(semi) = rest[..rest.len().min(12)].find(';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity.strip_prefix('#').and_then(|number| {
                let code = match number.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => number.parse().ok(),
                };
                code.and_then(char::from_u32)
            }),
        };
        match decoded {
            Some(ch) => {
                out.push(ch);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether a link leads to a page (followed when crawling) or to something a
/// page embeds (style sheet, icon, image: fetched only within a budget).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    Page,
    Embed,
}

pub struct Link {
    pub target: String,
    pub kind: LinkKind,
    /// Where the target is written, when it is a plain attribute value.
    pub span: Option<(usize, usize)>,
}

/// The links of a document in document order: `a`/`area` href, `frame` and
/// `iframe` src, `link` href, `img` src and `meta` refresh targets.
pub fn links(tags: &[Tag]) -> Vec<Link> {
    let mut out = Vec::new();
    for tag in tags {
        let (attr_name, kind) = match tag.name.as_str() {
            "a" | "area" => ("href", LinkKind::Page),
            "frame" | "iframe" => ("src", LinkKind::Page),
            "img" => ("src", LinkKind::Embed),
            "link" => {
                let rel = tag
                    .attr("rel")
                    .map(|rel| rel.value.to_ascii_lowercase())
                    .unwrap_or_default();
                let kind = if rel.contains("stylesheet") || rel.contains("icon") {
                    LinkKind::Embed
                } else {
                    LinkKind::Page
                };
                ("href", kind)
            }
            "meta" => {
                if let Some(target) = refresh_target(tag) {
                    out.push(Link {
                        target,
                        kind: LinkKind::Page,
                        span: None,
                    });
                }
                continue;
            }
            _ => continue,
        };
        if let Some(attr) = tag.attr(attr_name) {
            let target = attr.value.trim();
            if !target.is_empty() {
                out.push(Link {
                    target: target.to_string(),
                    kind,
                    span: attr.span,
                });
            }
        }
    }
    out
}

fn refresh_target(tag: &Tag) -> Option<String> {
    let equiv = tag.attr("http-equiv")?;
    if !equiv.value.eq_ignore_ascii_case("refresh") {
        return None;
    }
    let content = &tag.attr("content")?.value;
    let at = content.to_ascii_lowercase().find("url=")?;
    let target = content[at + 4..].trim().trim_matches(['\'', '"']);
    (!target.is_empty()).then(|| target.to_string())
}

/// A replacement of `html[start..end]` by `text`.
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: Vec<u8>,
}

/// Applies non-overlapping edits (in any order) to `html`.
pub fn apply_edits(html: &[u8], mut edits: Vec<Edit>) -> Vec<u8> {
    edits.sort_by_key(|edit| (edit.start, edit.end));
    let mut out =
        Vec::with_capacity(html.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut at = 0;
    for edit in edits {
        if edit.start < at {
            continue; // overlapping edit: keep the first
        }
        out.extend_from_slice(&html[at..edit.start]);
        out.extend_from_slice(&edit.text);
        at = edit.end;
    }
    out.extend_from_slice(&html[at..]);
    out
}

/// Where a banner goes: just after the `<body>` start tag (or at the start).
pub fn after_body_start(tags: &[Tag]) -> usize {
    tags.iter()
        .find(|tag| tag.name == "body")
        .map_or(0, |tag| tag.end)
}

/// Where a footer goes: just before the last `</body` (or at the end).
pub fn before_body_end(html: &[u8]) -> usize {
    let lower: Vec<u8> = html.to_ascii_lowercase();
    lower
        .windows(6)
        .rposition(|window| window == b"</body")
        .unwrap_or(html.len())
}

/// Edits that make every charset declaration (meta tags and an XML
/// declaration) say `charset`.
pub fn charset_edits(html: &[u8], tags: &[Tag], charset: &str) -> Vec<Edit> {
    let mut edits = Vec::new();
    for tag in tags.iter().filter(|tag| tag.name == "meta") {
        if let Some((start, end)) = tag.attr("charset").and_then(|attr| attr.span) {
            edits.push(Edit {
                start,
                end,
                text: charset.as_bytes().to_vec(),
            });
        }
        if let Some((start, end)) = tag.attr("content").and_then(|attr| attr.span) {
            let raw = &html[start..end];
            if let Some(at) = find_ignore_case(raw, b"charset=", 0) {
                let value_start = at + b"charset=".len();
                let value_end = raw[value_start..]
                    .iter()
                    .position(|&byte| byte == b';' || byte.is_ascii_whitespace())
                    .map_or(raw.len(), |n| value_start + n);
                edits.push(Edit {
                    start: start + value_start,
                    end: start + value_end,
                    text: charset.as_bytes().to_vec(),
                });
            }
        }
    }
    if html.starts_with(b"<?xml") {
        let decl_end = find(html, b"?>", 0).unwrap_or(0);
        if let Some(at) = find(&html[..decl_end], b"encoding=", 0) {
            let quote = at + b"encoding=".len();
            if let Some(&q) = html.get(quote) {
                if let Some(close) = find(&html[..decl_end], &[q], quote + 1) {
                    edits.push(Edit {
                        start: quote + 1,
                        end: close,
                        text: charset.as_bytes().to_vec(),
                    });
                }
            }
        }
    }
    edits
}

/// UTF-8 text re-encoded as ISO-8859-1, characters beyond U+00FF written as
/// numeric character references (what a Latin-1 mirror's converter does).
pub fn to_latin1(html: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(html);
    let mut out = Vec::with_capacity(html.len());
    for ch in text.chars() {
        let code = u32::from(ch);
        if code <= 0xFF {
            out.push(code as u8);
        } else {
            out.extend_from_slice(format!("&#{code};").as_bytes());
        }
    }
    out
}

/// LF line ends turned into CRLF (a copy made on Windows).
pub fn to_crlf(html: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(html.len() + html.len() / 40);
    let mut previous = 0u8;
    for &byte in html {
        if byte == b'\n' && previous != b'\r' {
            out.push(b'\r');
        }
        out.push(byte);
        previous = byte;
    }
    out
}

/// Escapes text for an HTML attribute value or element content.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from >= haystack.len() || needle.is_empty() {
        return None;
    }
    haystack[from..]
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|n| from + n)
}

fn find_ignore_case(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from >= haystack.len() || needle.is_empty() {
        return None;
    }
    haystack[from..]
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
        .map(|n| from + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_links_with_spans() {
        let html = br#"<html><head><META http-equiv="refresh" content="0; URL=en/index.html">
<link rel="stylesheet" href="a.css"><script>var x = "<a href='no'>";</script></head>
<!-- <a href="comment.html"> --><body class=x><a href=b.html>b</a><A HREF='c.html#top'>c</a>
<img src="i.png"/><a name="anchor">x</a></body></html>"#;
        let tags = scan(html);
        let found: Vec<(String, bool)> = links(&tags)
            .into_iter()
            .map(|l| (l.target, l.kind == LinkKind::Page))
            .collect();
        assert_eq!(
            found,
            vec![
                ("en/index.html".to_string(), true),
                ("a.css".to_string(), false),
                ("b.html".to_string(), true),
                ("c.html#top".to_string(), true),
                ("i.png".to_string(), false),
            ]
        );
        let body_end = after_body_start(&tags);
        assert!(html[..body_end].ends_with(b"<body class=x>"));
        let link = links(&tags)
            .into_iter()
            .find(|l| l.target == "b.html")
            .unwrap();
        let (start, end) = link.span.unwrap();
        assert_eq!(&html[start..end], b"b.html");
    }

    #[test]
    fn rewrites_charsets_and_encodings() {
        let html = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=UTF-8\"><meta charset=\"utf-8\"></head><body>caf\u{e9} \u{201c}x\u{201d}</body></html>";
        let tags = scan(html.as_bytes());
        let edited = apply_edits(
            html.as_bytes(),
            charset_edits(html.as_bytes(), &tags, "iso-8859-1"),
        );
        let latin = to_latin1(&edited);
        let text = String::from_utf8_lossy(&latin);
        assert!(text.contains("encoding=\"iso-8859-1\""));
        assert!(text.contains("charset=iso-8859-1\""));
        assert!(text.contains("<meta charset=\"iso-8859-1\">"));
        assert!(latin.contains(&0xE9));
        assert!(text.contains("&#8220;x&#8221;"));
        assert_eq!(to_crlf(b"a\nb\r\nc"), b"a\r\nb\r\nc");
        assert_eq!(decode_entities("m&#97;&#x69;l&amp;x&nbsp;"), "mail&x&nbsp;");
    }
}
