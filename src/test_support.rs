//! Helpers shared by the unit tests of several modules.

use crate::corpus::{CaptureInfo, RecordLocation};
use crate::ingest::Capture;
use crate::pages::PageTable;
use crate::similarity::{analyse, Fingerprint, Similarity, SimilarityConfig};
use crate::store::{signature_of, ContentKey};

/// A 200 capture of `url` whose body is `text` (one line per `\n`).
pub fn capture(url: &str, text: &str) -> Capture {
    capture_with_status(url, text, 200)
}

pub fn capture_with_status(url: &str, text: &str, status: u16) -> Capture {
    Capture {
        info: CaptureInfo {
            url: url.into(),
            date: "2026-11-20T12:00:00Z".into(),
            ip: None,
            payload_digest: None,
            status,
            content_type: Some("text/html".into()),
            location: RecordLocation {
                file: "test.warc".into(),
                offset: 0,
            },
        },
        content_key: Some(ContentKey {
            signature: signature_of(text.as_bytes()),
            volume: 0,
            overflow: 0,
        }),
        body_bytes: text.len() as u64,
        encoding: "UTF-8".into(),
        title: String::new(),
        links: Vec::new(),
        revisit_of: None,
        fingerprint: Some(Fingerprint::of_text(text)),
    }
}

pub fn run(captures: &[Capture], config: &SimilarityConfig) -> (PageTable, Similarity) {
    let (table, fingerprints) = PageTable::build_with_fingerprints(&[captures]);
    let similarity = analyse(&table, fingerprints, config);
    (table, similarity)
}
