//! Finding a page's character encoding and decoding it to UTF-8.
//!
//! Order of evidence, as browsers do it (WHATWG encoding sniffing, simplified):
//! a byte-order mark, then the `charset` of the HTTP Content-Type, then a
//! `<meta charset>` or `<meta http-equiv=Content-Type>` in the first 1024
//! bytes; with none of these, UTF-8 when the bytes are valid UTF-8 and
//! windows-1252 otherwise.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};

/// Where the encoding came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharsetSource {
    ByteOrderMark,
    HttpHeader,
    MetaTag,
    Sniffed,
}

impl std::fmt::Display for CharsetSource {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self {
            CharsetSource::ByteOrderMark => "its byte-order mark",
            CharsetSource::HttpHeader => "the HTTP Content-Type",
            CharsetSource::MetaTag => "a meta tag",
            CharsetSource::Sniffed => "sniffing",
        })
    }
}

/// Where a body declared UTF-8 is not.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("body is not valid {encoding} (declared by {declared_by}); first bad byte at body offset {offset}")]
pub struct CharsetProblem {
    pub encoding: &'static str,
    pub declared_by: CharsetSource,
    pub offset: usize,
}

/// The name of the encoding a body was decoded from (`UTF-8`,
/// `windows-1252`...; empty without a body): one of the WHATWG Encoding
/// Standard's names, held as the static string `encoding_rs` has for it,
/// so that a million pages hold no copy of "UTF-8" each. Written as the
/// plain string; a name read back is looked up as a label, and one that is
/// no encoding's reads as UTF-8, as [`decode_as`] decodes it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct EncodingName(&'static str);

impl EncodingName {
    /// No encoding: a capture without a body.
    pub const NONE: EncodingName = EncodingName("");

    /// The encoding named by `label` (any of its WHATWG labels), `UTF-8`
    /// for a label of none, [`EncodingName::NONE`] for an empty one.
    pub fn from_label(label: &str) -> EncodingName {
        if label.is_empty() {
            return EncodingName::NONE;
        }
        EncodingName(
            Encoding::for_label(label.as_bytes())
                .unwrap_or(UTF_8)
                .name(),
        )
    }

    pub fn as_str(&self) -> &'static str {
        self.0
    }
}

impl From<&str> for EncodingName {
    /// [`EncodingName::from_label`].
    fn from(label: &str) -> EncodingName {
        EncodingName::from_label(label)
    }
}

impl From<&'static Encoding> for EncodingName {
    fn from(encoding: &'static Encoding) -> EncodingName {
        EncodingName(encoding.name())
    }
}

impl std::ops::Deref for EncodingName {
    type Target = str;

    fn deref(&self) -> &str {
        self.0
    }
}

impl std::fmt::Display for EncodingName {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.0)
    }
}

impl serde::Serialize for EncodingName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> serde::Deserialize<'de> for EncodingName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<EncodingName, D::Error> {
        let label = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Ok(EncodingName::from_label(&label))
    }
}

/// A decoded page; borrows the body when it already is UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedText<'a> {
    pub text: Cow<'a, str>,
    pub encoding: EncodingName,
    pub source: CharsetSource,
    /// For a body declared UTF-8 that is not: its first bad byte (the bad
    /// sequences are U+FFFD in `text`).
    pub malformed: Option<CharsetProblem>,
}

/// Decodes a stored body with the encoding ingest found for it (a label of
/// the WHATWG Encoding Standard, as [`DecodedText::encoding`] names it). A
/// byte-order mark still wins, as it did at ingest; an unknown label decodes
/// as UTF-8 with replacement characters.
pub fn decode_as<'a>(body: &'a [u8], encoding: &str) -> Cow<'a, str> {
    let encoding = Encoding::for_label(encoding.as_bytes()).unwrap_or(UTF_8);
    encoding.decode(body).0
}

/// The `charset` parameter of a Content-Type value, if any.
pub fn charset_of_content_type(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']))
    })
}

/// Decodes `body` to UTF-8, as a browser shows it: every byte sequence
/// decodes, a bad one to U+FFFD. A body declared (by BOM, header or meta)
/// as UTF-8 that holds invalid UTF-8 says where in
/// [`DecodedText::malformed`], so that ingest can count and report it.
pub fn decode_body<'a>(body: &'a [u8], content_type: Option<&str>) -> DecodedText<'a> {
    let (encoding, source, start) = detect(body, content_type);
    let bytes = &body[start..];
    if encoding == UTF_8 {
        return match std::str::from_utf8(bytes) {
            Ok(text) => DecodedText {
                text: Cow::Borrowed(text),
                encoding: UTF_8.into(),
                source,
                malformed: None,
            },
            Err(error) => DecodedText {
                text: Cow::Owned(String::from_utf8_lossy(bytes).into_owned()),
                encoding: UTF_8.into(),
                source,
                malformed: Some(CharsetProblem {
                    encoding: UTF_8.name(),
                    declared_by: source,
                    offset: start + error.valid_up_to(),
                }),
            },
        };
    }
    let (text, _had_errors) = encoding.decode_without_bom_handling(bytes);
    DecodedText {
        text,
        encoding: encoding.into(),
        source,
        malformed: None,
    }
}

/// Chooses the encoding; returns it, where it came from, and how many leading
/// bytes (a BOM) to skip.
fn detect(body: &[u8], content_type: Option<&str>) -> (&'static Encoding, CharsetSource, usize) {
    if let Some((encoding, bom_length)) = Encoding::for_bom(body) {
        return (encoding, CharsetSource::ByteOrderMark, bom_length);
    }
    if let Some(encoding) = content_type
        .and_then(charset_of_content_type)
        .and_then(|label| Encoding::for_label(label.as_bytes()))
    {
        return (html_encoding(encoding), CharsetSource::HttpHeader, 0);
    }
    if let Some(encoding) = meta_charset(&body[..body.len().min(1024)]) {
        return (html_encoding(encoding), CharsetSource::MetaTag, 0);
    }
    if std::str::from_utf8(body).is_ok() {
        (UTF_8, CharsetSource::Sniffed, 0)
    } else {
        (WINDOWS_1252, CharsetSource::Sniffed, 0)
    }
}

/// HTML maps UTF-16 labels found in headers or meta tags (without a BOM) to
/// UTF-8, and x-user-defined to windows-1252.
fn html_encoding(encoding: &'static Encoding) -> &'static Encoding {
    if encoding == encoding_rs::UTF_16BE || encoding == encoding_rs::UTF_16LE {
        UTF_8
    } else if encoding == encoding_rs::X_USER_DEFINED {
        WINDOWS_1252
    } else {
        encoding
    }
}

/// A small prescan for `<meta charset=...>` and
/// `<meta http-equiv="Content-Type" content="...; charset=...">`.
fn meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let mut from = 0;
    while let Some(found) = find(&lower[from..], b"<meta") {
        let tag_start = from + found;
        let tag_end = lower[tag_start..]
            .iter()
            .position(|&byte| byte == b'>')
            .map_or(lower.len(), |end| tag_start + end);
        let tag = &lower[tag_start..tag_end];
        if let Some(position) = find(tag, b"charset") {
            let rest = &tag[position + b"charset".len()..];
            let rest = rest.trim_ascii_start();
            if let Some(rest) = rest.strip_prefix(b"=") {
                let rest = rest.trim_ascii_start();
                let rest = rest
                    .strip_prefix(b"\"")
                    .or_else(|| rest.strip_prefix(b"'"))
                    .unwrap_or(rest);
                let label_end = rest
                    .iter()
                    .position(|&byte| matches!(byte, b'"' | b'\'' | b';' | b'/' | b' ' | b'>'))
                    .unwrap_or(rest.len());
                if let Some(encoding) = Encoding::for_label(&rest[..label_end]) {
                    return Some(encoding);
                }
            }
        }
        from = tag_end.max(tag_start + 1);
        if from >= lower.len() {
            break;
        }
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_encoding_name_is_read_back_as_the_name_of_its_encoding() {
        for (label, name) in [
            ("UTF-8", "UTF-8"),
            ("latin1", "windows-1252"),
            ("Shift_JIS", "Shift_JIS"),
            ("no-such-charset", "UTF-8"),
            ("", ""),
        ] {
            let written = postcard::to_allocvec(&EncodingName::from_label(label)).unwrap();
            let read: EncodingName = postcard::from_bytes(&written).unwrap();
            assert_eq!(read.as_str(), name, "{label}");
        }
        // The bytes a String field wrote: captures files keep their format.
        let written = postcard::to_allocvec(&String::from("windows-1252")).unwrap();
        assert_eq!(
            postcard::from_bytes::<EncodingName>(&written).unwrap(),
            EncodingName::from(WINDOWS_1252)
        );
        assert_eq!(std::mem::size_of::<EncodingName>(), 16);
    }

    #[test]
    fn header_charset_wins_over_meta() {
        let body = b"<meta charset=utf-8><p>caf\xe9</p>";
        let decoded = decode_body(body, Some("text/html; charset=ISO-8859-1"));
        assert_eq!(decoded.text, "<meta charset=utf-8><p>caf\u{e9}</p>");
        assert_eq!(decoded.source, CharsetSource::HttpHeader);
        assert_eq!(decoded.encoding.as_str(), "windows-1252");
    }

    #[test]
    fn meta_charset_and_http_equiv() {
        let body = b"<html><head><META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=koi8-r\"></head>\xc1";
        let decoded = decode_body(body, Some("text/html"));
        assert_eq!(decoded.source, CharsetSource::MetaTag);
        assert_eq!(decoded.encoding.as_str(), "KOI8-R");
        assert!(decoded.text.ends_with('\u{430}'));
        let body = b"<meta charset='shift_jis'>\x82\xa0";
        let decoded = decode_body(body, None);
        assert_eq!(decoded.encoding.as_str(), "Shift_JIS");
        assert!(decoded.text.ends_with('\u{3042}'));
    }

    #[test]
    fn bom_wins_and_is_removed() {
        let body = b"\xef\xbb\xbf<p>x</p>";
        let decoded = decode_body(body, Some("text/html; charset=iso-8859-1"));
        assert_eq!(decoded.text, "<p>x</p>");
        assert_eq!(decoded.source, CharsetSource::ByteOrderMark);
        let utf16 = b"\xff\xfe<\x00p\x00>\x00";
        assert_eq!(decode_body(utf16, None).text, "<p>");
    }

    #[test]
    fn undeclared_bytes_are_sniffed() {
        assert_eq!(
            decode_body("<p>naïve</p>".as_bytes(), None)
                .encoding
                .as_str(),
            "UTF-8"
        );
        let decoded = decode_body(b"<p>na\xefve</p>", Some("text/html"));
        assert_eq!(decoded.encoding.as_str(), "windows-1252");
        assert_eq!(decoded.text, "<p>na\u{ef}ve</p>");
    }

    #[test]
    fn declared_utf8_with_invalid_bytes_decodes_as_a_browser_shows_it() {
        let decoded = decode_body(b"<p>ok</p>\xff\xfe bad", Some("text/html; charset=utf-8"));
        assert_eq!(decoded.text, "<p>ok</p>\u{fffd}\u{fffd} bad");
        let problem = decoded.malformed.unwrap();
        assert_eq!(problem.offset, 9);
        assert_eq!(problem.declared_by, CharsetSource::HttpHeader);
        let decoded = decode_body(b"<meta charset=\"utf-8\">\xc3", None);
        assert!(decoded.text.ends_with('\u{fffd}'));
        assert_eq!(
            decoded.malformed.unwrap().declared_by,
            CharsetSource::MetaTag
        );
        assert_eq!(decode_body(b"<p>fine</p>", None).malformed, None);
    }

    #[test]
    fn unknown_labels_fall_back_to_sniffing() {
        let decoded = decode_body(b"<p>plain</p>", Some("text/html; charset=no-such-charset"));
        assert_eq!(decoded.source, CharsetSource::Sniffed);
        assert_eq!(
            charset_of_content_type("text/html;CHARSET=\"utf-8\""),
            Some("utf-8")
        );
        assert_eq!(charset_of_content_type("text/html"), None);
    }
}
