//! HTTP/1.1 framing of a simulated answer: status line, headers in the
//! server's style, and the body as sent on the wire (identity, gzip,
//! chunked, or both).

use std::io::Write;

use anyhow::Result;
use flate2::write::GzEncoder;
use flate2::Compression;

use crate::plan::ServerStyle;
use crate::site::Served;
use crate::time::http_date;

/// How a body travels.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Coding {
    Identity,
    Gzip,
    Chunked,
    GzipChunked,
}

/// An HTTP response as archived.
pub struct Wire {
    /// Status line and headers, ending with the blank line.
    pub head: Vec<u8>,
    /// The message body as transferred (chunked framing included).
    pub body: Vec<u8>,
    /// The entity body (transfer coding removed, content coding kept): what
    /// `WARC-Payload-Digest` covers.
    pub entity: Vec<u8>,
}

impl Wire {
    pub fn block(&self) -> Vec<u8> {
        let mut block = Vec::with_capacity(self.head.len() + self.body.len());
        block.extend_from_slice(&self.head);
        block.extend_from_slice(&self.body);
        block
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        404 => "Not Found",
        _ => "Unknown",
    }
}

/// Frames `served` as `style` would send it at time `date`.
pub fn respond(style: &ServerStyle, served: &Served, date: i64, coding: Coding) -> Result<Wire> {
    let entity = match coding {
        Coding::Gzip | Coding::GzipChunked => {
            let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
            encoder.write_all(&served.body)?;
            encoder.finish()?
        }
        Coding::Identity | Coding::Chunked => served.body.clone(),
    };
    let chunked = matches!(coding, Coding::Chunked | Coding::GzipChunked);
    let mut headers: Vec<(&str, String)> = vec![
        ("Date", http_date(date)),
        ("Server", style.software.to_string()),
    ];
    if let Some(modified) = served.last_modified {
        headers.push(("Last-Modified", http_date(modified)));
        if style.etag {
            headers.push((
                "ETag",
                format!("\"{:x}-{:x}\"", served.body.len(), modified * 1_000_000),
            ));
            headers.push(("Accept-Ranges", "bytes".to_string()));
        }
    }
    if let Some(location) = &served.location {
        headers.push(("Location", location.clone()));
    }
    if matches!(coding, Coding::Gzip | Coding::GzipChunked) {
        headers.push(("Vary", "Accept-Encoding".to_string()));
        headers.push(("Content-Encoding", "gzip".to_string()));
    }
    if chunked {
        headers.push(("Transfer-Encoding", "chunked".to_string()));
    } else {
        headers.push(("Content-Length", entity.len().to_string()));
    }
    if style.software == "Microsoft-IIS/10.0" {
        headers.push(("X-Powered-By", "ASP.NET".to_string()));
    }
    if style.software == "envoy" {
        headers.push(("X-Envoy-Upstream-Service-Time", "2".to_string()));
    }
    headers.push(("Connection", "close".to_string()));
    headers.push(("Content-Type", served.content_type.clone()));

    let mut head = if style.reason_phrase {
        format!("HTTP/1.1 {} {}\r\n", served.status, reason(served.status))
    } else {
        format!("HTTP/1.1 {}\r\n", served.status)
    };
    for (name, value) in headers {
        let name = if style.lowercase_names {
            name.to_ascii_lowercase()
        } else {
            name.to_string()
        };
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let body = if chunked {
        chunk(&entity)
    } else {
        entity.clone()
    };
    Ok(Wire {
        head: head.into_bytes(),
        body,
        entity,
    })
}

/// Chunked transfer coding with 4 KiB chunks (hex sizes, final empty chunk).
fn chunk(entity: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entity.len() + entity.len() / 512 + 16);
    for piece in entity.chunks(4096) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}
