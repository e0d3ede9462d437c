//! The canonical form of a URL: the one spelling under which a page is known.
//!
//! Page URLs (WARC-Target-URI) and every outlink go through [`canonical_url`],
//! so that two spellings of one address meet. The WHATWG parser of the `url`
//! crate lower-cases the scheme and host, applies IDNA (Unicode host names
//! become Punycode), drops the default port and resolves dot segments; on top
//! of that we drop the fragment, drop an empty query, decode percent-escapes of
//! unreserved characters (`%7E` -> `~`) and upper-case the hex digits of the
//! escapes that stay (`%2f` -> `%2F`), as RFC 3986 §6.2.2 describes.

use std::borrow::Cow;

use url::Url;

/// Schemes whose pages we crawl; links to anything else are not page links.
fn is_web_scheme(url: &Url) -> bool {
    matches!(url.scheme(), "http" | "https")
}

/// Canonicalises an absolute URL, or `href` resolved against `base`.
/// Returns `None` for what is not an http(s) URL with a host.
pub fn canonical_url(base: Option<&Url>, href: &str) -> Option<Url> {
    let href = href.trim();
    let mut url = match base {
        Some(base) => base.join(href).ok()?,
        None => Url::parse(href).ok()?,
    };
    if !is_web_scheme(&url) || url.host_str().is_none_or(str::is_empty) {
        return None;
    }
    url.set_fragment(None);
    // A user name and password (`http://user:pw@host/`) say who asked, not
    // which page: the page is the host's.
    if !url.username().is_empty() || url.password().is_some() {
        let _ = url.set_username("");
        let _ = url.set_password(None);
    }
    if let Cow::Owned(path) = normalise_percent_encoding(url.path()) {
        if path != url.path() {
            url.set_path(&path);
        }
    }
    match url.query() {
        Some("") => url.set_query(None),
        Some(query) => {
            if let Cow::Owned(normalised) = normalise_percent_encoding(query) {
                if normalised != query {
                    url.set_query(Some(&normalised));
                }
            }
        }
        None => {}
    }
    Some(url)
}

/// Canonical form of an absolute URL as a string.
pub fn canonical_url_string(href: &str) -> Option<String> {
    canonical_url(None, href).map(String::from)
}

fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

/// Decodes escapes of unreserved characters and upper-cases the rest.
fn normalise_percent_encoding(text: &str) -> Cow<'_, str> {
    if !text.contains('%') {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut output = String::with_capacity(text.len());
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        if byte == b'%'
            && index + 2 < bytes.len()
            && bytes[index + 1].is_ascii_hexdigit()
            && bytes[index + 2].is_ascii_hexdigit()
        {
            let high = (bytes[index + 1] as char).to_digit(16).unwrap_or(0) as u8;
            let low = (bytes[index + 2] as char).to_digit(16).unwrap_or(0) as u8;
            let decoded = high * 16 + low;
            if is_unreserved(decoded) {
                output.push(decoded as char);
            } else {
                output.push('%');
                output.push(bytes[index + 1].to_ascii_uppercase() as char);
                output.push(bytes[index + 2].to_ascii_uppercase() as char);
            }
            index += 3;
            continue;
        }
        // Multi-byte UTF-8 cannot occur here (the url crate escapes it), but
        // copy whole characters to stay correct if it ever does.
        let character_length = utf8_length(byte);
        output.push_str(&text[index..index + character_length]);
        index += character_length;
    }
    Cow::Owned(output)
}

fn utf8_length(first_byte: u8) -> usize {
    match first_byte {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// The host of a canonical URL (lower-case, Punycode), or "" when it has none.
pub fn host_of(url: &Url) -> &str {
    url.host_str().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(href: &str) -> Option<String> {
        canonical_url_string(href)
    }

    #[test]
    fn scheme_and_host_are_lower_cased_and_default_port_dropped() {
        assert_eq!(
            canonical("HTTP://WWW.Example.ORG:80/Manual/").as_deref(),
            Some("http://www.example.org/Manual/")
        );
        assert_eq!(
            canonical("https://example.org:443/").as_deref(),
            Some("https://example.org/")
        );
        assert_eq!(
            canonical("http://example.org:8080/").as_deref(),
            Some("http://example.org:8080/")
        );
        assert_eq!(
            canonical("http://example.org").as_deref(),
            Some("http://example.org/")
        );
    }

    #[test]
    fn user_names_and_passwords_are_no_part_of_the_page() {
        assert_eq!(
            canonical("http://test@example.com/a").as_deref(),
            Some("http://example.com/a")
        );
        assert_eq!(
            canonical("https://user:secret@Example.com:443/a?b").as_deref(),
            Some("https://example.com/a?b")
        );
    }

    #[test]
    fn idna_hosts_become_punycode() {
        assert_eq!(
            canonical("http://Bücher.example/a").as_deref(),
            Some("http://xn--bcher-kva.example/a")
        );
        assert_eq!(
            canonical("http://xn--bcher-kva.example/a").as_deref(),
            Some("http://xn--bcher-kva.example/a")
        );
    }

    #[test]
    fn fragment_and_empty_query_are_dropped_dot_segments_resolved() {
        assert_eq!(
            canonical("http://a.example/x/./y/../z.html#part").as_deref(),
            Some("http://a.example/x/z.html")
        );
        assert_eq!(
            canonical("http://a.example/p?").as_deref(),
            Some("http://a.example/p")
        );
        assert_eq!(
            canonical("http://a.example/p?b=2&a=1").as_deref(),
            Some("http://a.example/p?b=2&a=1")
        );
        assert_eq!(
            canonical("http://a.example/../../x").as_deref(),
            Some("http://a.example/x")
        );
    }

    #[test]
    fn percent_encoding_is_normalised() {
        assert_eq!(
            canonical("http://a.example/%7euser/%41b%2fc").as_deref(),
            Some("http://a.example/~user/Ab%2Fc")
        );
        assert_eq!(
            canonical("http://a.example/a b").as_deref(),
            Some("http://a.example/a%20b")
        );
        assert_eq!(
            canonical("http://a.example/?q=%e2%82%ac%2D").as_deref(),
            Some("http://a.example/?q=%E2%82%AC-")
        );
        assert_eq!(
            canonical("http://a.example/caf\u{e9}").as_deref(),
            Some("http://a.example/caf%C3%A9")
        );
        assert_eq!(
            canonical("http://a.example/100%").as_deref(),
            Some("http://a.example/100%")
        );
    }

    #[test]
    fn relative_links_resolve_against_the_base() {
        let base = Url::parse("http://mirror.example.edu/pub/manual/mod/index.html").unwrap();
        let resolve = |href| canonical_url(Some(&base), href).map(String::from);
        assert_eq!(
            resolve("../howto/cgi.html#top").as_deref(),
            Some("http://mirror.example.edu/pub/manual/howto/cgi.html")
        );
        assert_eq!(resolve("/").as_deref(), Some("http://mirror.example.edu/"));
        assert_eq!(
            resolve("//OTHER.example:80/x").as_deref(),
            Some("http://other.example/x")
        );
        assert_eq!(resolve("mailto:someone@example.org"), None);
        assert_eq!(resolve("javascript:void(0)"), None);
        assert_eq!(
            resolve("#only-a-fragment").as_deref(),
            Some("http://mirror.example.edu/pub/manual/mod/index.html")
        );
    }

    #[test]
    fn canonical_form_is_idempotent() {
        for href in [
            "HTTP://A.example:80/%7e/./b/../c?%61=1#f",
            "http://Bücher.example/x%2fy",
            "https://a.example/a%20b?",
        ] {
            let once = canonical(href).unwrap();
            assert_eq!(canonical(&once).unwrap(), once, "{href}");
        }
    }
}
