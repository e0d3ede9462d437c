//! HTTP responses inside WARC records: the status line, the header fields, and
//! the entity body with its transfer coding (chunked) and content coding
//! (gzip, deflate, br) undone.
//!
//! The head parser is our own and tolerant on purpose: real crawls hold status
//! lines without a reason phrase, `HTTP/2` versions, bare LF line ends and
//! headers in odd cases.

use std::io::Read;

/// A parsed HTTP response with its body decoded to the bytes the server meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body says it is chunked and starts with a chunk size, but its
    /// chunk sizes do not add up: it is kept as it was sent.
    pub broken_chunking: bool,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        super::warc::header_value(&self.headers, name)
    }
}

/// The head of a response: status and fields, and where the body starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpHead {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body_offset: usize,
}

/// Why an HTTP block could not be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HttpProblem {
    #[error("HTTP block has no status line and headers (no blank line ends a head)")]
    NoHead,
    #[error("HTTP head is longer than {MAX_HEAD_BYTES} bytes (no blank line ends it there)")]
    HeadTooLong,
    #[error("bad HTTP status line {0:?}")]
    BadStatusLine(String),
    #[error("cannot undo content coding {coding:?}: {detail}")]
    BadContentCoding { coding: String, detail: String },
    #[error("decoded body is over the {cap}-byte cap")]
    TooLarge { cap: u64 },
}

impl HttpProblem {
    pub fn reason(&self) -> &'static str {
        match self {
            HttpProblem::NoHead => "no-http-headers",
            HttpProblem::HeadTooLong => "http-head-too-long",
            HttpProblem::BadStatusLine(_) => "bad-http-status",
            HttpProblem::BadContentCoding { .. } => "bad-content-coding",
            HttpProblem::TooLarge { .. } => "too-large",
        }
    }
}

/// Longest head we look through for its end.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Parses the status line and header fields of an HTTP response block.
pub fn parse_head(block: &[u8]) -> Result<HttpHead, HttpProblem> {
    let searched = &block[..block.len().min(MAX_HEAD_BYTES)];
    let (head_end, body_offset) =
        find_head_end(searched).ok_or(if block.len() > MAX_HEAD_BYTES {
            HttpProblem::HeadTooLong
        } else {
            HttpProblem::NoHead
        })?;
    let head = String::from_utf8_lossy(&block[..head_end]);
    let mut lines = head.split('\n').map(|line| line.trim_end_matches('\r'));
    let status_line = lines.next().unwrap_or_default();
    let status = parse_status_line(status_line)?;
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in lines {
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = headers.last_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
            continue;
        }
        // Lines without a colon are ignored, as browsers do.
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
    }
    Ok(HttpHead {
        status,
        headers,
        body_offset,
    })
}

fn find_head_end(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'\n' {
            if bytes.get(index + 1) == Some(&b'\n') {
                return Some((index, index + 2));
            }
            if bytes.get(index + 1) == Some(&b'\r') && bytes.get(index + 2) == Some(&b'\n') {
                return Some((index, index + 3));
            }
        }
        index += 1;
    }
    None
}

fn parse_status_line(line: &str) -> Result<u16, HttpProblem> {
    let bad = || HttpProblem::BadStatusLine(line.chars().take(60).collect());
    let mut parts = line.split_whitespace();
    let version = parts.next().ok_or_else(bad)?;
    if !version.to_ascii_uppercase().starts_with("HTTP/") {
        return Err(if line.trim().is_empty() {
            HttpProblem::NoHead
        } else {
            bad()
        });
    }
    let code = parts.next().ok_or_else(bad)?;
    if code.len() != 3 {
        return Err(bad());
    }
    let status: u16 = code.parse().map_err(|_| bad())?;
    if !(100..=599).contains(&status) {
        return Err(bad());
    }
    Ok(status)
}

/// Parses a response block and decodes its body (chunked transfer coding,
/// then gzip / deflate / br content coding). Bodies are cut off nowhere: a
/// body whose decoded size passes `max_body_bytes` is refused.
pub fn parse_response(block: &[u8], max_body_bytes: u64) -> Result<HttpResponse, HttpProblem> {
    let head = parse_head(block)?;
    let raw_body = &block[head.body_offset..];
    let headers = head.headers;
    let chunked = super::warc::header_value(&headers, "Transfer-Encoding")
        .is_some_and(|value| value.to_ascii_lowercase().contains("chunked"));
    // Crawlers disagree on whether they store the body de-chunked: when the
    // body is not valid chunked coding, it is taken as already de-chunked.
    let mut broken_chunking = false;
    let body = match chunked.then(|| decode_chunked(raw_body)).flatten() {
        Some(dechunked) => dechunked,
        None => {
            // Stored de-chunked, or chunked with sizes that lie.
            broken_chunking = chunked && starts_with_chunk_size(raw_body);
            raw_body.to_vec()
        }
    };
    let codings: Vec<String> = super::warc::header_value(&headers, "Content-Encoding")
        .map(|value| {
            value
                .split(',')
                .map(|coding| coding.trim().to_ascii_lowercase())
                .filter(|coding| !coding.is_empty() && coding != "identity")
                .collect()
        })
        .unwrap_or_default();
    let mut body = body;
    // Codings are listed in the order they were applied: undo them backwards.
    for coding in codings.iter().rev() {
        body = decode_content(coding, &body, max_body_bytes)?;
    }
    if body.len() as u64 > max_body_bytes {
        return Err(HttpProblem::TooLarge {
            cap: max_body_bytes,
        });
    }
    Ok(HttpResponse {
        status: head.status,
        headers,
        body,
        broken_chunking,
    })
}

/// Whether `bytes` start as chunked coding does: a hexadecimal size, perhaps
/// chunk extensions, then a line end (an HTML body starts otherwise).
fn starts_with_chunk_size(bytes: &[u8]) -> bool {
    let line_end = bytes.iter().take(80).position(|&byte| byte == b'\n');
    let Some(end) = line_end else {
        return false;
    };
    let line = bytes[..end].strip_suffix(b"\r").unwrap_or(&bytes[..end]);
    let size = line.split(|&byte| byte == b';').next().unwrap_or_default();
    let size = size.trim_ascii();
    !size.is_empty() && size.len() <= 16 && size.iter().all(u8::is_ascii_hexdigit)
}

/// Undoes chunked transfer coding; `None` when the bytes are not chunked.
pub fn decode_chunked(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut position = 0;
    loop {
        let line_end = position + bytes[position..].iter().position(|&byte| byte == b'\n')?;
        let size_line = std::str::from_utf8(&bytes[position..line_end]).ok()?;
        let size_text = size_line.trim().split(';').next()?.trim();
        let size = usize::from_str_radix(size_text, 16).ok()?;
        position = line_end + 1;
        if size == 0 {
            // Trailers, if any, are dropped.
            return Some(decoded);
        }
        let chunk_end = position.checked_add(size)?;
        decoded.extend_from_slice(bytes.get(position..chunk_end)?);
        position = chunk_end;
        // The CRLF after the chunk data.
        if bytes.get(position) == Some(&b'\r') {
            position += 1;
        }
        if bytes.get(position) == Some(&b'\n') {
            position += 1;
        } else {
            return None;
        }
        if position >= bytes.len() {
            // A missing last chunk: keep what came.
            return Some(decoded);
        }
    }
}

fn read_limited<R: Read>(reader: R, max_body_bytes: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut output = Vec::new();
    reader
        .take(max_body_bytes.saturating_add(1))
        .read_to_end(&mut output)?;
    if output.len() as u64 > max_body_bytes {
        return Ok(None);
    }
    Ok(Some(output))
}

fn decode_content(coding: &str, body: &[u8], max_body_bytes: u64) -> Result<Vec<u8>, HttpProblem> {
    let failed = |detail: String| HttpProblem::BadContentCoding {
        coding: coding.to_string(),
        detail,
    };
    let decoded = match coding {
        "gzip" | "x-gzip" => {
            if !body.starts_with(&[0x1f, 0x8b]) {
                // Stored already decoded by the crawler.
                return Ok(body.to_vec());
            }
            read_limited(flate2::read::MultiGzDecoder::new(body), max_body_bytes)
        }
        "deflate" => {
            // "deflate" is zlib-wrapped by the standard and raw by many servers.
            match read_limited(flate2::read::ZlibDecoder::new(body), max_body_bytes) {
                Ok(decoded) => Ok(decoded),
                Err(_) => read_limited(flate2::read::DeflateDecoder::new(body), max_body_bytes),
            }
        }
        "br" => read_limited(
            brotli_decompressor::Decompressor::new(body, 4096),
            max_body_bytes,
        ),
        other => return Err(failed(format!("unknown coding {other:?}"))),
    };
    match decoded {
        Ok(Some(decoded)) => Ok(decoded),
        Ok(None) => Err(HttpProblem::TooLarge {
            cap: max_body_bytes,
        }),
        Err(error) => {
            if looks_like_text(body) {
                // The crawler stored the decoded body but kept the header.
                Ok(body.to_vec())
            } else {
                Err(failed(error.to_string()))
            }
        }
    }
}

/// True when the first bytes look like markup or text rather than compressed data.
fn looks_like_text(body: &[u8]) -> bool {
    let sample = &body[..body.len().min(512)];
    let trimmed = sample.trim_ascii_start();
    trimmed.starts_with(b"<") || (!sample.is_empty() && std::str::from_utf8(sample).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn block(head: &str, body: &[u8]) -> Vec<u8> {
        let mut bytes = head.as_bytes().to_vec();
        bytes.extend_from_slice(body);
        bytes
    }

    #[test]
    fn status_line_without_reason_and_bare_lf() {
        let response =
            parse_response(b"HTTP/1.1 200\nContent-Type: text/html\n\n<p>x</p>", 1000).unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.header("content-type"), Some("text/html"));
        assert_eq!(response.body, b"<p>x</p>");
        let response = parse_response(b"HTTP/2 404 \r\n\r\n", 1000).unwrap();
        assert_eq!(response.status, 404);
        assert!(response.body.is_empty());
    }

    #[test]
    fn block_without_headers_is_refused() {
        assert_eq!(
            parse_response(b"<html>no head at all</html>", 1000),
            Err(HttpProblem::NoHead)
        );
        assert_eq!(parse_response(b"", 1000), Err(HttpProblem::NoHead));
        // 100,000 header fields: the head is too long, not missing.
        let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
        for field in 0..100_000 {
            many.extend_from_slice(format!("X-Field-{field}: v\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n<p>x</p>");
        let problem = parse_response(&many, 10_000_000).unwrap_err();
        assert_eq!(problem, HttpProblem::HeadTooLong);
        assert!(problem.to_string().contains("longer than 65536 bytes"));
        assert!(matches!(
            parse_response(b"<html>\r\n\r\nbody", 1000),
            Err(HttpProblem::BadStatusLine(_))
        ));
    }

    #[test]
    fn chunk_sizes_that_do_not_add_up_are_told_from_a_body_stored_dechunked() {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        let parsed = |body: &str| parse_response(&block(head, body.as_bytes()), 1000).unwrap();
        // Valid chunks: decoded.
        let valid = parsed("5\r\nhello\r\n0\r\n\r\n");
        assert_eq!(
            (valid.body.as_slice(), valid.broken_chunking),
            (&b"hello"[..], false)
        );
        // Stored de-chunked, the header kept (crawlers do): as it is, no fault.
        let stored = parsed("<html><body>hello</body></html>");
        assert!(!stored.broken_chunking);
        // A size that lies: kept as sent, and said.
        let lying = parsed("ff\r\nhello\r\n0\r\n\r\n");
        assert_eq!(lying.body, b"ff\r\nhello\r\n0\r\n\r\n");
        assert!(lying.broken_chunking);
    }

    #[test]
    fn chunked_then_gzip() {
        let text = b"<html><body>hello chunked gzip world</body></html>";
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(text).unwrap();
        let gzipped = encoder.finish().unwrap();
        let mut chunked = Vec::new();
        for piece in gzipped.chunks(7) {
            chunked.extend_from_slice(format!("{:x};ext=1\r\n", piece.len()).as_bytes());
            chunked.extend_from_slice(piece);
            chunked.extend_from_slice(b"\r\n");
        }
        chunked.extend_from_slice(b"0\r\n\r\n");
        let bytes = block(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n",
            &chunked,
        );
        assert_eq!(parse_response(&bytes, 1000).unwrap().body, text);
    }

    #[test]
    fn deflate_both_flavours_and_brotli() {
        let text = b"<p>deflated text, deflated text, deflated text</p>".to_vec();
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        zlib.write_all(&text).unwrap();
        let mut raw =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        raw.write_all(&text).unwrap();
        for body in [zlib.finish().unwrap(), raw.finish().unwrap()] {
            let bytes = block(
                "HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\n\r\n",
                &body,
            );
            assert_eq!(parse_response(&bytes, 1000).unwrap().body, text);
        }
        // A brotli stream of "hello" produced by the reference encoder (quality 11).
        let brotli_hello = [0x0b, 0x02, 0x80, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x03];
        let bytes = block(
            "HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n",
            &brotli_hello,
        );
        assert_eq!(parse_response(&bytes, 1000).unwrap().body, b"hello");
    }

    #[test]
    fn already_decoded_bodies_are_kept() {
        let bytes = block(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n",
            b"<html>stored decoded</html>",
        );
        assert_eq!(
            parse_response(&bytes, 1000).unwrap().body,
            b"<html>stored decoded</html>"
        );
    }

    #[test]
    fn corrupt_gzip_body_and_decompression_bomb_are_refused() {
        let bytes = block(
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n",
            &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff],
        );
        assert_eq!(
            parse_response(&bytes, 1000).unwrap_err().reason(),
            "bad-content-coding"
        );
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(&vec![b'a'; 100_000]).unwrap();
        let bomb = block(
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n",
            &encoder.finish().unwrap(),
        );
        assert_eq!(
            parse_response(&bomb, 10_000),
            Err(HttpProblem::TooLarge { cap: 10_000 })
        );
    }
}
