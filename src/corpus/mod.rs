//! Reading crawls: WARC records, HTTP payloads, HTML -> title/text/links, URL
//! canonical form.
//!
//! Reads WARC files (see [`warc`]) and turns each record into what the rest of
//! mirrorscope needs ([`interpret_record`]): an HTML page with its decoded
//! body, a revisit to resolve against an earlier capture, or a counted skip.
//! Writes nothing; `ingest` stores what this module reads.

pub mod canonical;
pub mod charset;
pub mod digest;
pub mod html;
pub mod http;
pub mod surt;
pub mod warc;
pub mod warc_write;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use url::Url;

pub use canonical::{canonical_url, canonical_url_string};
pub use html::{
    extract_html, extract_html_text, extract_html_text_and_headings_within,
    extract_html_text_within, host_names, Extracted, MAX_TEXT_HOSTS,
};
pub use warc::{RecordProblem, Skip, WarcError, WarcReader, WarcRecord};

/// Where a record sits: file and byte offset.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecordLocation {
    /// The WARC file's name, one allocation shared by all its records.
    pub file: Arc<str>,
    pub offset: u64,
}

/// The WARC fields every capture keeps.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CaptureInfo {
    /// Canonical URL.
    pub url: String,
    /// WARC-Date as written (ISO 8601, UTC).
    pub date: String,
    pub ip: Option<String>,
    pub payload_digest: Option<String>,
    pub status: u16,
    pub location: RecordLocation,
}

/// The HTTP headers a body is read by: needed to decode and extract it,
/// not kept with the capture afterwards.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BodyHeaders {
    pub content_type: Option<String>,
    /// The HTTP `Content-Language` header, as sent.
    pub content_language: Option<String>,
}

/// An HTML response with its body decoded.
#[derive(Debug, Clone)]
pub struct FetchedPage {
    pub info: CaptureInfo,
    pub headers: BodyHeaders,
    /// The entity body with transfer and content codings undone: what is stored.
    pub body: Vec<u8>,
    /// The `Location` of a redirect, canonical.
    pub redirect_to: Option<String>,
    /// Chunked with chunk sizes that do not add up: kept as sent
    /// ([`http::HttpResponse::broken_chunking`]).
    pub broken_chunking: bool,
}

/// A revisit record: the same payload as an earlier capture.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Revisit {
    pub info: CaptureInfo,
    pub headers: BodyHeaders,
    pub refers_to_uri: Option<String>,
    pub refers_to_date: Option<String>,
}

/// What one WARC record turned out to be.
#[derive(Debug)]
pub enum RecordOutcome {
    Page(FetchedPage),
    Revisit(Revisit),
    /// A record of a kind we do not index (request, metadata, warcinfo,
    /// non-HTML...): counted, no warning.
    Ignored(&'static str),
    /// A record that should have been a page but is broken: counted, warned.
    Bad {
        reason: &'static str,
        detail: String,
    },
}

/// Limits applied while reading.
#[derive(Debug, Clone, Copy)]
pub struct ReadLimits {
    pub max_body_bytes: u64,
}

/// True for Content-Type values of HTML pages.
pub fn is_html_content_type(content_type: &str) -> bool {
    let media_type = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    media_type == "text/html" || media_type == "application/xhtml+xml"
}

/// For a response without Content-Type: does the body start like HTML?
fn looks_like_html(body: &[u8]) -> bool {
    let start = &body[..body.len().min(512)];
    let start = start
        .strip_prefix(b"\xef\xbb\xbf")
        .unwrap_or(start)
        .trim_ascii_start();
    let lower: Vec<u8> = start.iter().take(15).map(u8::to_ascii_lowercase).collect();
    lower.starts_with(b"<!doctype html")
        || lower.starts_with(b"<html")
        || lower.starts_with(b"<head")
}

fn target_uri(record: &WarcRecord) -> Option<String> {
    let raw = record.header("WARC-Target-URI")?.trim();
    // WARC 1.0 writers sometimes wrap the URI in angle brackets; a `>` of
    // the URL itself stays (escaped as `%3E` by the URL parser).
    let raw = raw
        .strip_prefix('<')
        .and_then(|inner| inner.strip_suffix('>'))
        .unwrap_or(raw);
    canonical_url_string(raw)
}

fn capture_info(record: &WarcRecord, file: &Arc<str>, url: String, status: u16) -> CaptureInfo {
    CaptureInfo {
        url,
        date: record.header("WARC-Date").unwrap_or_default().to_string(),
        ip: record.header("WARC-IP-Address").map(str::to_string),
        payload_digest: record.header("WARC-Payload-Digest").map(str::to_string),
        status,
        location: RecordLocation {
            file: Arc::clone(file),
            offset: record.offset,
        },
    }
}

/// Interprets one WARC record read from `file`.
pub fn interpret_record(record: &WarcRecord, file: &Arc<str>, limits: ReadLimits) -> RecordOutcome {
    let warc_type = record.warc_type();
    match warc_type.as_str() {
        "response" | "revisit" => {}
        "request" => return RecordOutcome::Ignored("request"),
        "metadata" => return RecordOutcome::Ignored("metadata"),
        "warcinfo" => return RecordOutcome::Ignored("warcinfo"),
        "resource" => return RecordOutcome::Ignored("resource"),
        "conversion" | "continuation" => {
            return RecordOutcome::Ignored("conversion-or-continuation")
        }
        _ => {
            return RecordOutcome::Bad {
                reason: "unknown-warc-type",
                detail: format!("unknown WARC-Type {warc_type:?}"),
            }
        }
    }
    let is_http = record
        .header("Content-Type")
        .is_some_and(|value| value.to_ascii_lowercase().starts_with("application/http"));
    let Some(url) = target_uri(record) else {
        let shown = record.header("WARC-Target-URI").unwrap_or("(none)");
        if !is_http && record.header("WARC-Target-URI").is_some() {
            // dns:, ftp:... responses.
            return RecordOutcome::Ignored("not-http");
        }
        return RecordOutcome::Bad {
            reason: "bad-target-uri",
            detail: format!("WARC-Target-URI {shown:?} is not an http(s) URL"),
        };
    };
    if warc_type == "revisit" {
        let (status, content_type, content_language) = match http::parse_head(&record.block) {
            Ok(head) => (
                head.status,
                warc::header_value(&head.headers, "Content-Type").map(str::to_string),
                warc::header_value(&head.headers, "Content-Language").map(str::to_string),
            ),
            // Revisits may carry no HTTP head at all.
            Err(_) => (200, None, None),
        };
        if content_type
            .as_deref()
            .is_some_and(|value| !is_html_content_type(value))
        {
            return RecordOutcome::Ignored("non-html");
        }
        return RecordOutcome::Revisit(Revisit {
            info: capture_info(record, file, url, status),
            headers: BodyHeaders {
                content_type,
                content_language,
            },
            refers_to_uri: record
                .header("WARC-Refers-To-Target-URI")
                .and_then(canonical_url_string),
            refers_to_date: record.header("WARC-Refers-To-Date").map(str::to_string),
        });
    }
    let response = match http::parse_response(&record.block, limits.max_body_bytes) {
        Ok(response) => response,
        Err(problem) => {
            return RecordOutcome::Bad {
                reason: problem.reason(),
                detail: problem.to_string(),
            }
        }
    };
    let content_type = response.header("Content-Type").map(str::to_string);
    let html = match content_type.as_deref() {
        Some(value) => is_html_content_type(value),
        None => looks_like_html(&response.body),
    };
    let redirect_to = (300..400)
        .contains(&response.status)
        .then(|| response.header("Location"))
        .flatten()
        .and_then(|location| {
            Url::parse(&url)
                .ok()
                .and_then(|base| canonical_url(Some(&base), location))
        })
        .map(String::from);
    if !html && redirect_to.is_none() {
        return RecordOutcome::Ignored("non-html");
    }
    let content_language = response.header("Content-Language").map(str::to_string);
    let broken_chunking = response.broken_chunking;
    let body = if html { response.body } else { Vec::new() };
    RecordOutcome::Page(FetchedPage {
        info: capture_info(record, file, url, response.status),
        headers: BodyHeaders {
            content_type,
            content_language,
        },
        body,
        redirect_to,
        broken_chunking,
    })
}

/// The WARC files under some inputs, and what was passed over.
#[derive(Debug, Default)]
pub struct WarcFiles {
    /// Readable regular files, sorted: those with a WARC name (`*.warc`,
    /// `*.warc.gz`, any case) in folders, and every file named as an input.
    pub files: Vec<PathBuf>,
    /// Entries with a WARC name (or named as inputs) that cannot be read as
    /// a file, with why: a dangling link, a FIFO or device (opening one
    /// could block), a file that cannot be opened, an empty file.
    pub skipped: Vec<(PathBuf, String)>,
    /// Files in folders passed over for their name.
    pub other_names: Vec<PathBuf>,
}

/// Expands files and folders into the sorted list of WARC files under them.
/// Only a missing or unreadable input (a path named on the command line) is
/// an error; a bad entry inside a folder is passed over and said in
/// [`WarcFiles::skipped`]. Nothing that is not a regular file is opened, so
/// nothing blocks; links to folders are not followed (no cycles).
pub fn list_warc_files(inputs: &[PathBuf]) -> Result<WarcFiles, WarcError> {
    let mut found = WarcFiles::default();
    for input in inputs {
        let metadata = std::fs::metadata(input).map_err(|source| WarcError::Open {
            path: input.clone(),
            source,
        })?;
        if metadata.is_dir() {
            collect_warc_files(input, &mut found)?;
        } else {
            take_if_readable(input.clone(), &mut found);
        }
    }
    found.files.sort();
    found.files.dedup();
    found.skipped.sort();
    found.other_names.sort();
    Ok(found)
}

fn is_warc_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    name.ends_with(".warc") || name.ends_with(".warc.gz")
}

/// Takes `path` when it is a readable, non-empty regular file (following a
/// link); otherwise says why not.
fn take_if_readable(path: PathBuf, found: &mut WarcFiles) {
    let reason = match std::fs::metadata(&path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            "a link to nothing (dangling)".to_string()
        }
        Err(error) => format!("cannot read: {error}"),
        Ok(metadata) if !metadata.is_file() => {
            format!("not a regular file ({})", file_kind(&metadata))
        }
        Ok(metadata) if metadata.len() == 0 => "empty".to_string(),
        // A regular file: opening it cannot block.
        Ok(_) => match File::open(&path) {
            Ok(_) => {
                found.files.push(path);
                return;
            }
            Err(error) => format!("cannot open: {error}"),
        },
    };
    found.skipped.push((path, reason));
}

fn file_kind(metadata: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = metadata.file_type();
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    if metadata.is_dir() {
        "a folder"
    } else {
        "not a file"
    }
}

fn collect_warc_files(folder: &Path, found: &mut WarcFiles) -> Result<(), WarcError> {
    let entries = std::fs::read_dir(folder).map_err(|source| WarcError::Open {
        path: folder.to_path_buf(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| WarcError::Open {
            path: folder.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect_warc_files(&path, found)?,
            Ok(_) if is_warc_name(&path) => take_if_readable(path, found),
            Ok(_) => found.other_names.push(path),
            Err(error) => found.skipped.push((path, format!("cannot read: {error}"))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(warc_type: &str, uri: &str, block: &[u8]) -> WarcRecord {
        WarcRecord {
            offset: 7,
            version: "WARC/1.1".into(),
            headers: vec![
                ("WARC-Type".into(), warc_type.into()),
                ("WARC-Target-URI".into(), uri.into()),
                ("WARC-Date".into(), "2026-10-03T12:00:05Z".into()),
                ("WARC-IP-Address".into(), "192.0.2.7".into()),
                (
                    "Content-Type".into(),
                    "application/http; msgtype=response".into(),
                ),
            ],
            block: block.to_vec(),
        }
    }

    const LIMITS: ReadLimits = ReadLimits {
        max_body_bytes: 1 << 20,
    };

    #[test]
    fn html_response_becomes_a_page_with_its_fields() {
        let outcome = interpret_record(
            &record(
                "response",
                "<HTTP://A.example:80/x#f>",
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>x</p>",
            ),
            &Arc::from("f.warc"),
            LIMITS,
        );
        let RecordOutcome::Page(page) = outcome else {
            panic!("{outcome:?}")
        };
        assert_eq!(page.info.url, "http://a.example/x");
        assert_eq!(page.info.ip.as_deref(), Some("192.0.2.7"));
        assert_eq!(
            page.info.location,
            RecordLocation {
                file: "f.warc".into(),
                offset: 7
            }
        );
        assert_eq!(page.body, b"<p>x</p>");
    }

    #[test]
    fn non_html_and_other_record_types_are_ignored() {
        let css = record(
            "response",
            "http://a.example/s.css",
            b"HTTP/1.1 200 OK\r\nContent-Type: text/css\r\n\r\np{}",
        );
        assert!(matches!(
            interpret_record(&css, &Arc::from("f"), LIMITS),
            RecordOutcome::Ignored("non-html")
        ));
        let request = record("request", "http://a.example/", b"GET / HTTP/1.1\r\n\r\n");
        assert!(matches!(
            interpret_record(&request, &Arc::from("f"), LIMITS),
            RecordOutcome::Ignored("request")
        ));
        let untyped = record(
            "response",
            "http://a.example/",
            b"HTTP/1.1 200 OK\r\n\r\n<!DOCTYPE html><p>x</p>",
        );
        assert!(matches!(
            interpret_record(&untyped, &Arc::from("f"), LIMITS),
            RecordOutcome::Page(_)
        ));
    }

    #[test]
    fn redirects_keep_their_target_and_bad_blocks_are_bad() {
        let redirect = record(
            "response",
            "http://a.example/dir",
            b"HTTP/1.1 301 Moved\r\nLocation: /dir/\r\n\r\n",
        );
        let RecordOutcome::Page(page) = interpret_record(&redirect, &Arc::from("f"), LIMITS) else {
            panic!()
        };
        assert_eq!(page.redirect_to.as_deref(), Some("http://a.example/dir/"));
        let headless = record(
            "response",
            "http://a.example/",
            b"<html>no http head</html>",
        );
        assert!(matches!(
            interpret_record(&headless, &Arc::from("f"), LIMITS),
            RecordOutcome::Bad {
                reason: "no-http-headers",
                ..
            }
        ));
    }

    #[test]
    fn revisit_keeps_its_reference() {
        let mut revisit = record(
            "revisit",
            "http://b.example/x",
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
        );
        revisit.headers.push((
            "WARC-Refers-To-Target-URI".into(),
            "http://a.example/x".into(),
        ));
        revisit
            .headers
            .push(("WARC-Payload-Digest".into(), "sha1:ABC".into()));
        let RecordOutcome::Revisit(revisit) = interpret_record(&revisit, &Arc::from("f"), LIMITS)
        else {
            panic!()
        };
        assert_eq!(revisit.refers_to_uri.as_deref(), Some("http://a.example/x"));
        assert_eq!(revisit.info.payload_digest.as_deref(), Some("sha1:ABC"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Whatever a crawl holds, reading it never panics: arbitrary HTTP
        /// blocks (with and without a plausible head) and arbitrary markup.
        #[test]
        fn arbitrary_records_and_markup_never_panic(
            head in proptest::sample::select(vec![
                "",
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n",
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n",
                "HTTP/1.0 301 Moved\r\nLocation: ../../%zz/\u{e9}\r\n\r\n",
                "HTTP/1.1 200\nContent-Type: text/html; charset=shift_jis\n\n",
            ]),
            body in proptest::collection::vec(proptest::num::u8::ANY, 0..600),
            markup in "(<[a-z/!?]{0,8}( [a-z]{1,5}(=[\"']?[ -~]{0,12}[\"']?)?)?>|&[a-z#0-9]{0,6};?|[ -~\n\u{e9}\u{3042}]{0,12}){0,40}",
        ) {
            let mut block = head.as_bytes().to_vec();
            block.extend_from_slice(&body);
            let _ = interpret_record(&record("response", "http://a.example/x/y", &block), &Arc::from("f"), LIMITS);
            let mut block = head.as_bytes().to_vec();
            block.extend_from_slice(markup.as_bytes());
            let _ = interpret_record(&record("response", "http://a.example/x/y", &block), &Arc::from("f"), LIMITS);
            let base = Url::parse("http://a.example/x/y").unwrap();
            let extracted = extract_html(&markup, &base);
            proptest::prop_assert!(extracted.links.iter().all(|link| link.fragment().is_none()));
            let _ = charset::decode_body(&body, Some("text/html; charset=utf-8"));
            let _ = charset::decode_body(&body, None);
        }
    }
}
