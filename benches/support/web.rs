//! A generated web, written as WARC.gz, for measuring the whole pipeline at
//! scale through the real ingest path.
//!
//! Deterministic for a seed and a page count. The model:
//! - **Collections** (documentation sites) of 5 to 400 pages (log-uniform),
//!   in sections of up to 20 pages; each page links to the collection's
//!   root, its section's first page, the pages before and after it and two
//!   others of the collection; one page in 25 also links to another
//!   collection's root (on another host).
//! - **Text**: paragraphs of 30-90 words drawn from a 40,000-word vocabulary
//!   with Zipf-like frequencies (rank = V^u, u uniform: P(rank) ∝ 1/rank);
//!   200-1,500 words a page (log-uniform), about 6 KB of HTML, plus a host's
//!   navigation line (site chrome) on each page. A page's text is a function
//!   of its collection, its number and its version, so copies regenerate it
//!   instead of keeping it.
//! - **Hosts**: each original collection on a host of its own
//!   (`www.siteN.example`), one host in ten holding a second, unrelated one.
//! - **Replication**: a quarter of the collections have 1-4 copies on a pool
//!   of mirror machines (each mirroring many collections), each copy one of:
//!   exact (same paths, same bytes, on a virtual host `siteN.mirrorM.example`
//!   sharing the machine's address), other folder (same bytes under
//!   `/mirror/siteN/`), stale (an older version: one page in six has a
//!   paragraph rewritten), partial (only the first half of the sections, links
//!   to the rest pointing at the original) and banner (a line added at the
//!   top of each page).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use mirrorscope::corpus::warc_write::{OutRecord, WarcWriter};
use rayon::prelude::*;

use super::Draw;

/// Changes whenever the same seed and size would give another web, so that a
/// web kept on disk by an older bench is written again.
pub const VERSION: u32 = 2;

const VOCABULARY: f64 = 40_000.0;
const SYLLABLES: [&str; 24] = [
    "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "de", "pa", "ri", "xu", "ba", "co", "fe", "gu",
    "ha", "ji", "ko", "le", "mo", "nu", "pe", "zo",
];
/// About this much compressed WARC per file.
const FILE_PAGES: usize = 20_000;

/// A word of the vocabulary by rank (1-based): three to five syllables.
fn word(rank: u64, out: &mut String) {
    let mut value = rank.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (rank << 7);
    let syllables = 2 + (rank % 3) as usize + usize::from(rank > 500);
    for _ in 0..syllables {
        out.push_str(SYLLABLES[(value % SYLLABLES.len() as u64) as usize]);
        value /= SYLLABLES.len() as u64;
    }
}

/// A Zipf-like word rank.
fn rank(draw: &mut Draw) -> u64 {
    let uniform = (draw.next() >> 11) as f64 / (1u64 << 53) as f64;
    VOCABULARY.powf(uniform) as u64
}

fn log_uniform(draw: &mut Draw, low: f64, high: f64) -> usize {
    let uniform = (draw.next() >> 11) as f64 / (1u64 << 53) as f64;
    (low * (high / low).powf(uniform)) as usize
}

/// How a copy differs from its original.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyKind {
    Exact,
    OtherFolder,
    Stale,
    Partial,
    Banner,
}

const COPY_KINDS: [CopyKind; 5] = [
    CopyKind::Exact,
    CopyKind::OtherFolder,
    CopyKind::Stale,
    CopyKind::Partial,
    CopyKind::Banner,
];

/// One collection and where it is served.
#[derive(Debug, Clone)]
struct Collection {
    number: usize,
    pages: usize,
    host: String,
    prefix: String,
    copies: Vec<(CopyKind, String, String)>,
}

impl Collection {
    fn root(&self) -> String {
        format!("http://{}{}", self.host, self.prefix)
    }

    fn path(&self, page: usize) -> String {
        if page == 0 {
            String::new()
        } else {
            format!("s{}/p{}.html", page / 20, page)
        }
    }
}

/// What was generated.
#[derive(Debug, Clone, Default)]
pub struct Generated {
    pub files: Vec<PathBuf>,
    pub pages: u64,
    pub hosts: u64,
    pub collections: u64,
    pub replicated: u64,
    pub copies: u64,
    pub html_bytes: u64,
    pub warc_bytes: u64,
}

/// The plan: collections until `target_pages` pages (copies included).
fn plan(target_pages: usize, seed: u64) -> Vec<Collection> {
    let mut draw = Draw(seed | 1);
    let mirrors = (target_pages / 5_000).max(3);
    let mut collections = Vec::new();
    let mut pages = 0;
    let mut host_number = 0;
    while pages < target_pages {
        let number = collections.len();
        let size = log_uniform(&mut draw, 5.0, 400.0).max(5);
        // One host in ten also holds the next collection.
        let shares_host = number > 0 && draw.chance(10);
        if !shares_host {
            host_number += 1;
        }
        let host = format!("www.site{host_number}.example");
        let prefix = if shares_host {
            format!("/docs{number}/")
        } else {
            "/docs/".to_string()
        };
        let mut copies = Vec::new();
        if draw.chance(25) {
            for _ in 0..1 + draw.below(4) {
                let kind = COPY_KINDS[draw.below(COPY_KINDS.len())];
                // An exact copy keeps the paths, on a virtual host of the
                // mirror machine; the others sit in a folder of the mirror.
                let machine = draw.below(mirrors);
                let (mirror, copy_prefix) = match kind {
                    CopyKind::Exact => (
                        format!("site{number}.mirror{machine}.example"),
                        prefix.clone(),
                    ),
                    _ => (
                        format!("mirror{machine}.example"),
                        format!("/mirror/site{number}/"),
                    ),
                };
                if copies
                    .iter()
                    .any(|(_, host, prefix)| *host == mirror && *prefix == copy_prefix)
                {
                    continue;
                }
                copies.push((kind, mirror, copy_prefix));
            }
        }
        // A partial copy serves only the first half of the sections.
        let partial = (size / 20).div_ceil(2).max(1) * 20;
        pages += size
            + copies
                .iter()
                .map(|(kind, _, _)| match kind {
                    CopyKind::Partial => size.min(partial),
                    _ => size,
                })
                .sum::<usize>();
        collections.push(Collection {
            number,
            pages: size,
            host,
            prefix,
            copies,
        });
    }
    collections
}

/// The HTML of page `page` of `collection` as `kind` serves it (`None`: the
/// original) on `host`.
fn page_html(
    collection: &Collection,
    others: &[Collection],
    page: usize,
    kind: Option<CopyKind>,
    host: &str,
) -> String {
    let mut draw = Draw((collection.number as u64 + 1) * 0x1000_0000_0000 + page as u64 * 977 + 1);
    let words = log_uniform(&mut draw, 200.0, 1_500.0);
    let mut html = String::with_capacity(words * 8 + 1_000);
    html.push_str("<!DOCTYPE html>\n<html><head><title>");
    let mut title = String::new();
    for index in 0..3 {
        if index > 0 {
            title.push(' ');
        }
        word(rank(&mut draw), &mut title);
    }
    html.push_str(&title);
    html.push_str(&format!(
        " - site {}</title></head>\n<body>\n",
        collection.number
    ));
    if kind == Some(CopyKind::Banner) {
        html.push_str(&format!(
            "<div class=\"banner\">Mirrored from {} by {host}.</div>\n",
            collection.root()
        ));
    }
    // Links are relative, as in documentation trees, so that a copy's bytes
    // are the original's wherever it is served.
    let up = if page == 0 { "./" } else { "../" };
    html.push_str(&format!(
        "<div class=\"nav\"><a href=\"{up}\">Home</a> | site {} documentation | <a href=\"{up}s0/p1.html\">Start</a></div>\n<h1>{title}</h1>\n",
        collection.number
    ));
    // The stale copy rewrites one paragraph of one page in six.
    let stale = kind == Some(CopyKind::Stale) && page % 6 == 3;
    let mut written = 0;
    let mut paragraph = 0;
    while written < words {
        let length = 30 + draw.below(61);
        html.push_str("<p>");
        let mut other = Draw(draw.next() ^ 0x5bd1_e995);
        for index in 0..length {
            if index > 0 {
                html.push(' ');
            }
            // The rewritten paragraph draws its words elsewhere; the page's
            // own draws go on, so the paragraphs after it are the same.
            let original = rank(&mut draw);
            let chosen = if stale && paragraph == 1 {
                rank(&mut other)
            } else {
                original
            };
            word(chosen, &mut html);
        }
        html.push_str(".</p>\n");
        written += length;
        paragraph += 1;
    }
    // Links.
    let section_start = (page / 20 * 20).max(1);
    let mut targets = vec![
        0,
        section_start,
        page.saturating_sub(1),
        (page + 1) % collection.pages,
    ];
    targets.push(draw.below(collection.pages));
    targets.push(draw.below(collection.pages));
    html.push_str("<ul class=\"links\">\n");
    for target in targets {
        let inside = collection.path(target);
        let left_out = kind == Some(CopyKind::Partial) && target / 20 >= half_sections(collection);
        let href = if left_out {
            format!("{}{inside}", collection.root())
        } else {
            format!("{up}{inside}")
        };
        html.push_str(&format!("<li><a href=\"{href}\">page {target}</a></li>\n"));
    }
    if page % 25 == 7 && !others.is_empty() {
        let other = &others[draw.below(others.len())];
        html.push_str(&format!(
            "<li><a href=\"{}\">site {}</a></li>\n",
            other.root(),
            other.number
        ));
    }
    html.push_str("</ul>\n</body></html>\n");
    html
}

fn half_sections(collection: &Collection) -> usize {
    (collection.pages / 20).div_ceil(2).max(1)
}

/// The address of a host: the virtual hosts of one mirror machine share it.
fn ip(host: &str) -> String {
    let machine = host.rsplit('.').take(2).collect::<Vec<_>>();
    let hash = xxhash_rust::xxh3::xxh3_64(machine.join(".").as_bytes());
    format!(
        "10.{}.{}.{}",
        hash >> 16 & 255,
        hash >> 8 & 255,
        hash & 255 | 1
    )
}

/// Writes the generated web into `dir` as WARC.gz files, in parallel.
pub fn generate(dir: &Path, target_pages: usize, seed: u64) -> std::io::Result<Generated> {
    std::fs::create_dir_all(dir)?;
    let collections = plan(target_pages, seed);
    // Groups of collections of about FILE_PAGES pages, one file each.
    let mut groups: Vec<Vec<usize>> = vec![Vec::new()];
    let mut in_group = 0;
    for (index, collection) in collections.iter().enumerate() {
        if in_group >= FILE_PAGES {
            groups.push(Vec::new());
            in_group = 0;
        }
        if let Some(group) = groups.last_mut() {
            group.push(index);
        }
        in_group += collection.pages * (1 + collection.copies.len());
    }
    let parts: Vec<std::io::Result<Generated>> = groups
        .par_iter()
        .enumerate()
        .map(|(number, group)| write_file(dir, number, group, &collections))
        .collect();
    let mut total = Generated::default();
    let mut hosts = std::collections::HashSet::new();
    for collection in &collections {
        hosts.insert(collection.host.clone());
        for (_, host, _) in &collection.copies {
            hosts.insert(host.clone());
        }
        total.replicated += u64::from(!collection.copies.is_empty());
        total.copies += collection.copies.len() as u64;
    }
    for part in parts {
        let part = part?;
        total.files.extend(part.files);
        total.pages += part.pages;
        total.html_bytes += part.html_bytes;
        total.warc_bytes += part.warc_bytes;
    }
    total.hosts = hosts.len() as u64;
    total.collections = collections.len() as u64;
    Ok(total)
}

fn write_file(
    dir: &Path,
    number: usize,
    group: &[usize],
    collections: &[Collection],
) -> std::io::Result<Generated> {
    let path = dir.join(format!("web-{number:04}.warc.gz"));
    let mut writer = WarcWriter::new(BufWriter::new(File::create(&path)?), true);
    let mut generated = Generated::default();
    let mut record = 0u64;
    for &index in group {
        let collection = &collections[index];
        let mut servings = vec![(None, collection.host.clone(), collection.prefix.clone())];
        for (kind, host, prefix) in &collection.copies {
            servings.push((Some(*kind), host.clone(), prefix.clone()));
        }
        for (kind, host, prefix) in servings {
            let root = format!("http://{host}{prefix}");
            for page in 0..collection.pages {
                if kind == Some(CopyKind::Partial) && page / 20 >= half_sections(collection) {
                    continue;
                }
                let html = page_html(collection, collections, page, kind, &host);
                let url = format!("{root}{}", collection.path(page));
                let mut block = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
                    html.len()
                )
                .into_bytes();
                block.extend_from_slice(html.as_bytes());
                record += 1;
                writer.write_record(&OutRecord {
                    warc_type: "response",
                    headers: vec![
                        (
                            "WARC-Record-ID",
                            format!(
                                "<urn:uuid:00000000-0000-4000-8000-{:04x}{record:08x}>",
                                number
                            ),
                        ),
                        (
                            "WARC-Date",
                            format!(
                                "2026-10-{:02}T{:02}:{:02}:{:02}Z",
                                1 + number % 28,
                                record / 3600 % 24,
                                record / 60 % 60,
                                record % 60
                            ),
                        ),
                        ("WARC-Target-URI", url),
                        ("WARC-IP-Address", ip(&host)),
                        (
                            "Content-Type",
                            "application/http; msgtype=response".to_string(),
                        ),
                    ],
                    block: &block,
                })?;
                generated.pages += 1;
                generated.html_bytes += html.len() as u64;
            }
        }
    }
    writer.finish()?.flush()?;
    generated.warc_bytes = std::fs::metadata(&path)?.len();
    generated.files.push(path);
    Ok(generated)
}

/// Query terms for the generated web: words of several frequencies, and
/// two-word phrases.
pub fn queries() -> Vec<String> {
    let mut queries = Vec::new();
    for rank in [3u64, 12, 40, 150, 600, 2_500, 9_000, 30_000] {
        let mut text = String::new();
        word(rank, &mut text);
        queries.push(text);
    }
    for (first, second) in [(5u64, 20u64), (60, 300), (1_000, 4_000)] {
        let mut text = String::new();
        word(first, &mut text);
        text.push(' ');
        word(second, &mut text);
        queries.push(text);
    }
    queries
}
