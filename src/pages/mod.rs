//! The page table: every page of a generation, one per canonical URL.
//!
//! Reads the captures of the generation's crawls (written by `ingest`);
//! writes nothing itself (`datadir` persists it). Page ids are positions in
//! URL order, so the same crawls always give the same ids. When a URL was
//! captured more than once, the newest capture (by WARC-Date, then by crawl
//! order, then by position in the crawl) is the page.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::corpus::charset::EncodingName;
use crate::corpus::{CaptureInfo, RecordLocation};
use crate::fingerprint::Fingerprint;
use crate::language::PageLanguage;
use crate::store::ContentKey;

mod links;
mod sparse;

pub use links::Links;
pub use sparse::{HostLists, ThinList, NO_HOST_LISTS};

/// One HTML capture of a crawl: what the page table is built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capture {
    pub info: CaptureInfo,
    /// The stored body; `None` for a redirect without an HTML body.
    pub content_key: Option<ContentKey>,
    /// Length of the decoded body in bytes.
    pub body_bytes: u64,
    /// The encoding the body was decoded from (`UTF-8`, `windows-1252`...).
    pub encoding: EncodingName,
    pub title: String,
    /// Canonical outlinks, in document order, unique.
    pub links: Links,
    /// For a revisit record: the URL of the capture whose body it reuses.
    pub revisit_of: Option<String>,
    /// The text's fingerprint; `None` without a body.
    pub fingerprint: Option<Box<Fingerprint>>,
    /// Its language as it declares or says it ([`crate::language::decide`]).
    pub language: PageLanguage,
    /// Its `<link rel="canonical">`, canonical.
    pub canonical: Option<Box<str>>,
    /// Version strings its title, first heading and metadata say.
    pub versions: Box<[Box<str>]>,
    /// Host names its text names ([`crate::corpus::host_names`]): a
    /// mirror's note naming its original. Almost always empty.
    pub text_hosts: ThinList<Box<str>>,
    /// Where ingest set the fingerprint aside for the page table stage
    /// ([`crate::fingerprint::FingerprintSpill`]), `fingerprint` then
    /// `None`. Never written: a captures file holds the fingerprint
    /// itself.
    #[serde(skip)]
    pub spilled: Option<crate::fingerprint::Spilled>,
}

/// A page's position in the page table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PageId(pub u32);

/// A host's position in the host list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct HostId(pub u32);

impl fmt::Display for PageId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.0)
    }
}

impl fmt::Display for HostId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.0)
    }
}

/// Text that is not an id: ids are written as plain decimal numbers that
/// fit 32 bits ("0" to "4294967295"; no sign, space or leading "+").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an id (a decimal number below 2^32)")]
pub struct NotAnId(pub String);

/// Parses an id as [`NotAnId`] says ids are written.
pub fn parse_decimal_id(text: &str) -> Result<u32, NotAnId> {
    let decimal =
        !text.is_empty() && text.len() <= 10 && text.bytes().all(|byte| byte.is_ascii_digit());
    decimal
        .then(|| text.parse().ok())
        .flatten()
        .ok_or_else(|| NotAnId(text.chars().take(32).collect()))
}

impl std::str::FromStr for PageId {
    type Err = NotAnId;

    fn from_str(text: &str) -> Result<PageId, NotAnId> {
        parse_decimal_id(text).map(PageId)
    }
}

impl std::str::FromStr for HostId {
    type Err = NotAnId;

    fn from_str(text: &str) -> Result<HostId, NotAnId> {
        parse_decimal_id(text).map(HostId)
    }
}

/// One page of the crawl.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    pub url: Box<str>,
    pub host: HostId,
    pub ip: Option<Box<str>>,
    /// WARC-Date of the capture.
    pub date: Box<str>,
    pub status: u16,
    pub title: Box<str>,
    /// The body in the page store; `None` for a redirect without a body.
    pub content_key: Option<ContentKey>,
    pub body_bytes: u64,
    pub encoding: EncodingName,
    /// Links to pages of this table (targets that were crawled), sorted, unique.
    pub outlinks: Box<[PageId]>,
    /// Links on the same host whose target was not crawled, as
    /// [`relative_link_key`]s, sorted, unique: where a partly crawled copy
    /// links to pages its crawl never reached.
    pub uncrawled_links: Box<[u64]>,
    /// Index into the generation's crawl list.
    pub crawl: u16,
    pub location: RecordLocation,
    /// For a capture from a revisit record, the URL whose body it reuses.
    pub revisit_of: Option<Box<str>>,
    /// Its language ([`Capture::language`]).
    pub language: PageLanguage,
    /// Its `<link rel="canonical">`, canonical.
    pub canonical: Option<Box<str>>,
    /// Version strings its title, heading and metadata say.
    pub versions: Box<[Box<str>]>,
    /// The earliest of the generation's crawls (their position) that
    /// captured it.
    pub first_crawl: u16,
    /// Other hosts of the table that its links name, whether or not the
    /// page linked to was crawled: sorted, unique.
    pub linked_hosts: Box<[HostId]>,
}

/// The capture of a URL the page table keeps: the newest (by date, then
/// crawl, then position), and the first crawl that captured the URL at all.
#[derive(Debug, Clone, Copy)]
struct Chosen {
    crawl: u16,
    first_crawl: u16,
    index: usize,
}

/// What a page takes from the table rather than its capture: the first
/// crawl that captured its URL, its host and its links, resolved.
struct Resolved {
    first_crawl: u16,
    host: HostId,
    outlinks: Box<[PageId]>,
    uncrawled_links: Box<[u64]>,
    linked_hosts: Box<[HostId]>,
}

/// The crawls' captures in one array, crawl after crawl: a single crawl's
/// as it is, several crawls' each let go once moved.
fn one_array(mut crawls: Vec<Vec<Capture>>) -> Vec<Capture> {
    if crawls.len() == 1 {
        return crawls.pop().unwrap_or_default();
    }
    let mut all = Vec::with_capacity(crawls.iter().map(Vec::len).sum());
    for mut crawl in crawls {
        all.append(&mut crawl);
    }
    all
}

/// Moves each item to the position `ids` gives it (a permutation of the
/// positions), by following its cycles: no second array.
fn put_in_order<T>(items: &mut [T], mut ids: Vec<u32>) {
    debug_assert_eq!(items.len(), ids.len());
    for position in 0..items.len() {
        loop {
            let target = ids[position] as usize;
            if target == position {
                break;
            }
            items.swap(position, target);
            ids.swap(position, target);
        }
    }
}

/// What the table needs of the captures before they move into it.
struct Resolution {
    hosts: Vec<String>,
    /// Which page each capture becomes, by crawl and position.
    slots: Vec<Vec<Option<PageId>>>,
    /// By page id.
    pages: Vec<Resolved>,
    text_hosts: HostLists,
}

/// Every page of a generation and the hosts they are on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageTable {
    pub hosts: Vec<String>,
    pub pages: Vec<Page>,
    /// Hosts of the table that each page's text names, its own included
    /// ([`Capture::text_hosts`]): sorted, unique; only the few pages that
    /// name one have a list.
    pub text_hosts: HostLists,
}

/// Counts over a page table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableCounts {
    pub pages: u64,
    pub hosts: u64,
    pub pages_with_body: u64,
    pub distinct_bodies: u64,
    /// Pages whose body is byte-identical to a page earlier in URL order.
    pub exact_duplicate_pages: u64,
    pub links: u64,
}

impl PageTable {
    /// Makes the pages read from one WARC file share one allocation of its
    /// name: a table or captures read back from disk give each page its own.
    pub fn share_record_files(&mut self) {
        let mut names: HashSet<Arc<str>> = HashSet::new();
        for page in &mut self.pages {
            match names.get(&page.location.file) {
                Some(name) => page.location.file = Arc::clone(name),
                None => {
                    names.insert(Arc::clone(&page.location.file));
                }
            }
        }
    }

    /// Moves the table into fresh memory: serialized, let go, and read
    /// back. A table built from captures keeps its strings where the
    /// captures had them, scattered over the allocator's pages among the
    /// blocks the captures freed, and a page with one live block stays
    /// resident: after the page table stage of the 1M generated web, the
    /// process held 0.94 GB with the table as built, 0.68 GB compacted.
    /// Fails (the table then empty) only if it cannot be serialized or
    /// read back, which would be a bug.
    pub fn compact(&mut self) -> Result<(), postcard::Error> {
        let bytes = postcard::to_allocvec(&*self)?;
        *self = PageTable::default();
        crate::memory::release_free();
        *self = postcard::from_bytes(&bytes)?;
        drop(bytes);
        self.share_record_files();
        Ok(())
    }

    /// Builds the table from the captures of each crawl, in crawl order.
    pub fn build(crawls: &[&[Capture]]) -> PageTable {
        PageTable::build_with_fingerprints(crawls).0
    }

    /// Builds the table, and gives each page's fingerprint (by page id).
    pub fn build_with_fingerprints(crawls: &[&[Capture]]) -> (PageTable, Vec<Option<Fingerprint>>) {
        PageTable::from_captures(crawls.iter().map(|crawl| crawl.to_vec()).collect())
    }

    /// Builds the table from the captures, taking them: what a page keeps
    /// of its capture (URL, title, dates, ...) moves into it rather than
    /// being copied, and each crawl's captures go once read. Gives each
    /// page's fingerprint (by page id).
    pub fn from_captures(crawls: Vec<Vec<Capture>>) -> (PageTable, Vec<Option<Fingerprint>>) {
        PageTable::from_captures_keeping(crawls, |_, capture| {
            capture.fingerprint.take().map(|print| *print)
        })
    }

    /// As [`PageTable::from_captures`], giving by page id what `keep`
    /// takes of each page's capture (told its crawl and its position in
    /// that crawl's captures) before the page is made of it; pages are
    /// made in crawl order, then capture order.
    pub fn from_captures_keeping<K: Default>(
        crawls: Vec<Vec<Capture>>,
        mut keep: impl FnMut((usize, usize), &mut Capture) -> K,
    ) -> (PageTable, Vec<K>) {
        // The captures' links (most of their memory once their fingerprints
        // are set aside) are taken out, each let go as soon as it is
        // resolved to page ids.
        let mut crawls = crawls;
        let link_lists: Vec<Vec<Links>> = crawls
            .iter_mut()
            .map(|captures| {
                captures
                    .iter_mut()
                    .map(|capture| std::mem::take(&mut capture.links))
                    .collect()
            })
            .collect();
        let Resolution {
            hosts,
            slots,
            pages: links,
            text_hosts,
        } = PageTable::resolve(&crawls, link_lists);
        // Each page is made where its capture was (the captures' array
        // becomes the pages', `collect` reusing it in place: a page is no
        // larger than a capture), then the pages are put in id order.
        let lengths: Vec<usize> = crawls.iter().map(Vec::len).collect();
        let captures = one_array(crawls);
        let mut kept: Vec<K> = Vec::new();
        kept.resize_with(links.len(), K::default);
        let mut links = links.into_iter().map(Some).collect::<Vec<_>>();
        let mut ids: Vec<u32> = Vec::with_capacity(links.len());
        let origins = lengths
            .iter()
            .enumerate()
            .flat_map(|(crawl, &length)| (0..length).map(move |at| (crawl, at)));
        let mut pages: Vec<Page> = captures
            .into_iter()
            .zip(origins)
            .zip(slots.into_iter().flatten())
            .filter_map(|((mut capture, (crawl_index, at)), slot)| {
                let page = slot?;
                let index = page.0 as usize;
                let resolved = links[index]
                    .take()
                    .expect("one capture is chosen for each page");
                kept[index] = keep((crawl_index, at), &mut capture);
                ids.push(page.0);
                let info = capture.info;
                Some(Page {
                    url: info.url.into_boxed_str(),
                    host: resolved.host,
                    ip: info.ip.map(String::into_boxed_str),
                    date: info.date.into_boxed_str(),
                    status: info.status,
                    title: capture.title.into_boxed_str(),
                    content_key: capture.content_key,
                    body_bytes: capture.body_bytes,
                    encoding: capture.encoding,
                    outlinks: resolved.outlinks,
                    uncrawled_links: resolved.uncrawled_links,
                    crawl: crawl_index as u16,
                    location: info.location,
                    revisit_of: capture.revisit_of.map(String::into_boxed_str),
                    language: capture.language,
                    canonical: capture.canonical,
                    versions: capture.versions,
                    first_crawl: resolved.first_crawl,
                    linked_hosts: resolved.linked_hosts,
                })
            })
            .collect();
        assert_eq!(pages.len(), links.len(), "every URL has its chosen capture");
        drop(links);
        put_in_order(&mut pages, ids);
        let mut table = PageTable {
            hosts,
            pages,
            text_hosts,
        };
        // Captures of an earlier crawl are read back from its captures file.
        table.share_record_files();
        (table, kept)
    }

    /// What the table needs of the captures' URLs, before they move: the
    /// hosts, which capture becomes which page (by crawl, by position; the
    /// newest capture of a URL, by date, then crawl, then position), and
    /// each page's links resolved (by page id; `link_lists` holds each
    /// capture's links, by crawl and position), and the hosts the pages'
    /// texts name.
    fn resolve(crawls: &[Vec<Capture>], mut link_lists: Vec<Vec<Links>>) -> Resolution {
        // Newest capture per URL, and the first crawl that captured it (one
        // map: a second one over every URL cost megabytes a 100,000 pages).
        let mut chosen: HashMap<&str, Chosen> = HashMap::new();
        for (crawl_index, captures) in crawls.iter().enumerate() {
            for (capture_index, capture) in captures.iter().enumerate() {
                let url = capture.info.url.as_str();
                let here = Chosen {
                    crawl: crawl_index as u16,
                    first_crawl: crawl_index as u16,
                    index: capture_index,
                };
                match chosen.entry(url) {
                    Entry::Vacant(vacant) => {
                        vacant.insert(here);
                    }
                    Entry::Occupied(mut occupied) => {
                        let best = *occupied.get();
                        let best_capture = &crawls[best.crawl as usize][best.index];
                        if (capture.info.date.as_str(), here.crawl, here.index)
                            >= (best_capture.info.date.as_str(), best.crawl, best.index)
                        {
                            occupied.insert(Chosen {
                                first_crawl: best.first_crawl,
                                ..here
                            });
                        }
                    }
                }
            }
        }
        // By URL, the map let go before the next is built.
        let mut chosen: Vec<(&str, Chosen)> = chosen.into_iter().collect();
        chosen.sort_unstable_by_key(|&(url, _)| url);
        let urls: Vec<&str> = chosen.iter().map(|&(url, _)| url).collect();
        let id_of: HashMap<&str, PageId> = urls
            .iter()
            .enumerate()
            .map(|(index, url)| (*url, PageId(index as u32)))
            .collect();
        let mut host_names: Vec<&str> = urls.iter().map(|url| host_of_url(url)).collect();
        host_names.sort_unstable();
        host_names.dedup();
        let hosts: Vec<String> = host_names.into_iter().map(str::to_string).collect();
        let host_id: HashMap<&str, HostId> = hosts
            .iter()
            .enumerate()
            .map(|(index, host)| (host.as_str(), HostId(index as u32)))
            .collect();

        let mut slots: Vec<Vec<Option<PageId>>> = crawls
            .iter()
            .map(|captures| vec![None; captures.len()])
            .collect();
        let mut text_hosts = HostLists::new();
        let resolved = urls
            .iter()
            .enumerate()
            .map(|(index, url)| {
                let Chosen {
                    crawl,
                    first_crawl,
                    index: capture_index,
                } = chosen[index].1;
                slots[crawl as usize][capture_index] = Some(PageId(index as u32));
                let capture = &crawls[crawl as usize][capture_index];
                let links = std::mem::take(&mut link_lists[crawl as usize][capture_index]);
                // Each link looked up once: a page of the crawl, or a link
                // out of it.
                let (mut crawled, mut uncrawled_links) = (Vec::new(), Vec::new());
                for link in links.iter() {
                    match id_of.get(link) {
                        Some(&id) => crawled.push(id),
                        None => uncrawled_links.extend(relative_link_key(url, link)),
                    }
                }
                uncrawled_links.sort_unstable();
                uncrawled_links.dedup();
                let mut outlinks: Vec<PageId> = crawled
                    .into_iter()
                    .filter(|target| target.0 as usize != index)
                    .collect();
                outlinks.sort_unstable();
                outlinks.dedup();
                let host = host_id[host_of_url(url)];
                let mut linked_hosts: Vec<HostId> = links
                    .iter()
                    .filter_map(|link| host_id.get(host_of_url(link)).copied())
                    .filter(|&linked| linked != host)
                    .collect();
                linked_hosts.sort_unstable();
                linked_hosts.dedup();
                let mut named: Vec<HostId> = capture
                    .text_hosts
                    .iter()
                    .filter_map(|name| host_id.get(&**name).copied())
                    .collect();
                named.sort_unstable();
                named.dedup();
                text_hosts.push(PageId(index as u32), &named);
                Resolved {
                    first_crawl,
                    host,
                    outlinks: outlinks.into(),
                    uncrawled_links: uncrawled_links.into(),
                    linked_hosts: linked_hosts.into(),
                }
            })
            .collect();
        Resolution {
            hosts,
            slots,
            pages: resolved,
            text_hosts,
        }
    }

    pub fn page(&self, id: PageId) -> Option<&Page> {
        self.pages.get(id.0 as usize)
    }

    pub fn host_name(&self, id: HostId) -> &str {
        self.hosts.get(id.0 as usize).map_or("", String::as_str)
    }

    /// The page with this canonical URL.
    pub fn find_url(&self, url: &str) -> Option<PageId> {
        self.pages
            .binary_search_by(|page| page.url.as_ref().cmp(url))
            .ok()
            .map(|index| PageId(index as u32))
    }

    pub fn counts(&self) -> TableCounts {
        let mut keys: Vec<ContentKey> = self
            .pages
            .iter()
            .filter_map(|page| page.content_key)
            .collect();
        let pages_with_body = keys.len() as u64;
        keys.sort_unstable();
        keys.dedup();
        TableCounts {
            pages: self.pages.len() as u64,
            hosts: self.hosts.len() as u64,
            pages_with_body,
            distinct_bodies: keys.len() as u64,
            exact_duplicate_pages: pages_with_body - keys.len() as u64,
            links: self
                .pages
                .iter()
                .map(|page| page.outlinks.len() as u64)
                .sum(),
        }
    }
}

/// The host part of a canonical URL string (`http://host:port/...` -> `host:port`).
/// A link from `from` to `to` as the same relative link would be written
/// on any copy of the page: the path from `from`'s folder to `to` (with
/// `../` steps and the query), hashed. `None` when the two are on different
/// hosts, where a copy's link would not be relative. Copies of a page under
/// other hosts or prefixes give their links the same keys.
pub fn relative_link_key(from: &str, to: &str) -> Option<u64> {
    let (from_rest, to_rest) = (after_scheme(from), after_scheme(to));
    let (from_host, to_host) = (host_of_url(from), host_of_url(to));
    if from_host != to_host {
        return None;
    }
    let from_path = &from_rest[from_host.len()..];
    let to_path = &to_rest[to_host.len()..];
    let from_path = from_path.split(['?', '#']).next().unwrap_or("");
    let folder = from_path.rsplit_once('/').map_or("", |(folder, _)| folder);
    let (to_only_path, query) = match to_path.find('?') {
        Some(at) => (&to_path[..at], &to_path[at..]),
        None => (to_path, ""),
    };
    let folders: Vec<&str> = folder.split('/').filter(|s| !s.is_empty()).collect();
    let targets: Vec<&str> = to_only_path.split('/').skip(1).collect();
    let common = folders
        .iter()
        .zip(&targets)
        .take_while(|(a, b)| a == b)
        .count()
        .min(targets.len().saturating_sub(1));
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for _ in common..folders.len() {
        hasher.update(b"../");
    }
    hasher.update(targets[common..].join("/").as_bytes());
    hasher.update(query.as_bytes());
    Some(hasher.digest())
}

/// The path of an absolute URL, without its query and fragment (`/` when
/// the URL has none); `None` when the string is not an absolute URL.
pub fn url_path(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let start = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let path = rest[start..].split(['?', '#']).next().unwrap_or("");
    Some(if path.is_empty() { "/" } else { path })
}

/// The folder of a path: everything up to and including its last `/`.
pub fn path_folder(path: &str) -> &str {
    path.rfind('/').map_or("/", |slash| &path[..=slash])
}

/// The arcs that name a page: the path's segments, with a last `index.*` or
/// `default.*` dropped, as a folder URL and its index page are one page
/// under two names (`/docs/` and `/docs/index.html`).
pub fn page_arcs(path: &str) -> Vec<&str> {
    let mut arcs: Vec<&str> = path.split('/').filter(|arc| !arc.is_empty()).collect();
    if arcs.last().is_some_and(|last| is_index_name(last)) {
        arcs.pop();
    }
    arcs
}

/// Whether a file name is a folder's default page (`index.html`,
/// `default.htm`, `index.php`...).
pub fn is_index_name(name: &str) -> bool {
    name.split_once('.').is_some_and(|(stem, extension)| {
        (stem.eq_ignore_ascii_case("index") || stem.eq_ignore_ascii_case("default"))
            && !extension.is_empty()
            && extension.bytes().all(|byte| byte.is_ascii_alphanumeric())
    })
}

/// The longest common prefix of some URLs that ends in `/` (after the
/// host), or the first URL's host root when they share no folder.
pub fn folder_prefix<'a>(mut urls: impl Iterator<Item = &'a str>) -> String {
    let Some(first) = urls.next() else {
        return String::new();
    };
    let mut common = first.len();
    for url in urls {
        common = first
            .bytes()
            .zip(url.bytes())
            .take(common)
            .take_while(|(a, b)| a == b)
            .count();
    }
    let shared = &first[..common];
    let host_end = first.find("://").map_or(0, |at| {
        at + 3 + first[at + 3..].find('/').unwrap_or(first.len() - at - 3)
    });
    match shared.rfind('/') {
        Some(slash) if slash >= host_end => first[..=slash].to_string(),
        _ => format!("{}/", &first[..host_end]),
    }
}

/// How many arcs two arc lists share at their end.
pub fn common_suffix<T: PartialEq>(first: &[T], second: &[T]) -> usize {
    first
        .iter()
        .rev()
        .zip(second.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

fn after_scheme(url: &str) -> &str {
    url.split_once("://").map_or(url, |(_, rest)| rest)
}

/// The host (and port) of a URL, as the page table names hosts.
pub fn host_of_url(url: &str) -> &str {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let end = after_scheme
        .find(['/', '?', '#'])
        .unwrap_or(after_scheme.len());
    &after_scheme[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::CaptureInfo;
    use crate::store::{ContentKey, Signature};

    fn capture(url: &str, date: &str, body: u128, links: &[&str]) -> Capture {
        Capture {
            info: CaptureInfo {
                url: url.into(),
                date: date.into(),
                ip: Some("192.0.2.1".into()),
                payload_digest: None,
                status: 200,
                location: RecordLocation {
                    file: "f".into(),
                    offset: 0,
                },
            },
            content_key: Some(ContentKey {
                signature: Signature(body),
                volume: 0,
                overflow: 0,
            }),
            body_bytes: 10,
            encoding: "UTF-8".into(),
            title: format!("title of {url}"),
            links: links.iter().map(|link| link.to_string()).collect(),
            revisit_of: None,
            fingerprint: None,
            language: PageLanguage::Unknown,
            canonical: None,
            versions: Box::default(),
            text_hosts: ThinList::new(),
            spilled: None,
        }
    }

    #[test]
    fn pages_read_from_one_warc_file_share_its_name() {
        // Each capture has its own allocation of "f", as captures read back
        // from a captures file do.
        let captures = vec![
            capture("http://a.example/1", "2026-10-01T00:00:00Z", 1, &[]),
            capture("http://a.example/2", "2026-10-01T00:00:00Z", 2, &[]),
        ];
        assert!(!Arc::ptr_eq(
            &captures[0].info.location.file,
            &captures[1].info.location.file
        ));
        let table = PageTable::build(&[&captures]);
        let [first, second] = &table.pages[..] else {
            panic!("two pages");
        };
        assert!(Arc::ptr_eq(&first.location.file, &second.location.file));
        assert_eq!(&*first.location.file, "f");
    }

    #[test]
    fn items_move_to_the_positions_their_ids_give() {
        // Cycles of one, two and five, and an empty list.
        let ids = vec![0, 2, 1, 4, 5, 6, 7, 3];
        let mut items: Vec<String> = ids.iter().map(|id| format!("item {id}")).collect();
        put_in_order(&mut items, ids);
        let expected: Vec<String> = (0..8).map(|id| format!("item {id}")).collect();
        assert_eq!(items, expected);
        let mut none: Vec<String> = Vec::new();
        put_in_order(&mut none, Vec::new());
        assert!(none.is_empty());
    }

    #[test]
    fn a_compacted_table_is_the_same_table() {
        let captures = vec![
            capture(
                "http://a.example/1",
                "2026-10-01T00:00:00Z",
                1,
                &["http://a.example/2"],
            ),
            capture(
                "http://a.example/2",
                "2026-10-01T00:00:00Z",
                2,
                &["http://else.example/"],
            ),
            capture(
                "http://b.example/",
                "2026-10-02T00:00:00Z",
                1,
                &["http://a.example/1"],
            ),
        ];
        let built = PageTable::build(&[&captures]);
        let mut compacted = built.clone();
        compacted.compact().unwrap();
        assert_eq!(compacted, built);
        // Its pages still share their WARC file's name.
        assert!(Arc::ptr_eq(
            &compacted.pages[0].location.file,
            &compacted.pages[2].location.file
        ));
    }

    #[test]
    fn ids_follow_url_order_links_resolve_and_newest_capture_wins() {
        let first = vec![
            capture(
                "http://b.example/",
                "2026-10-01T00:00:00Z",
                1,
                &[
                    "http://a.example/x",
                    "http://nowhere.example/",
                    "http://b.example/missing",
                ],
            ),
            capture(
                "http://a.example/x",
                "2026-10-01T00:00:00Z",
                2,
                &["http://b.example/", "http://a.example/x"],
            ),
        ];
        let second = vec![capture(
            "http://a.example/x",
            "2026-10-02T00:00:00Z",
            1,
            &[],
        )];
        let table = PageTable::build(&[&first, &second]);
        assert_eq!(table.hosts, vec!["a.example", "b.example"]);
        assert_eq!(table.pages.len(), 2);
        let a = table.find_url("http://a.example/x").unwrap();
        let b = table.find_url("http://b.example/").unwrap();
        assert_eq!((a, b), (PageId(0), PageId(1)));
        // The newer capture from the second crawl won: no links, body 1, crawl 1.
        assert!(table.pages[0].outlinks.is_empty());
        assert_eq!(table.pages[0].crawl, 1);
        assert_eq!(*table.pages[1].outlinks, [PageId(0)]);
        // Only the link on its own host that was not crawled is kept.
        assert_eq!(
            *table.pages[1].uncrawled_links,
            [relative_link_key("http://b.example/", "http://b.example/missing").unwrap()]
        );
        let counts = table.counts();
        assert_eq!(
            (
                counts.pages,
                counts.distinct_bodies,
                counts.exact_duplicate_pages
            ),
            (2, 1, 1)
        );
        assert_eq!(table.host_name(table.pages[1].host), "b.example");
    }

    #[test]
    fn building_twice_gives_the_same_table() {
        let captures: Vec<Capture> = (0..50)
            .map(|index| {
                capture(
                    &format!("http://h{}.example/p{index}", index % 7),
                    "2026-10-01T00:00:00Z",
                    index % 5,
                    &["http://h1.example/p1"],
                )
            })
            .collect();
        assert_eq!(
            PageTable::build(&[&captures]),
            PageTable::build(&[&captures])
        );
    }

    #[test]
    fn relative_link_key_is_the_hash_of_the_relative_link() {
        // spark/tests/test_growth.py checks its port against this value.
        let key = relative_link_key(
            "http://a.example/docs/guide/intro.html",
            "http://a.example/docs/api/index.html?x=1",
        );
        assert_eq!(
            key,
            Some(xxhash_rust::xxh3::xxh3_64(b"../api/index.html?x=1"))
        );
        assert_eq!(key.map(|key| key as i64), Some(-4939720349677312645));
    }

    #[test]
    fn relative_link_keys_agree_between_copies_under_other_prefixes() {
        let key = relative_link_key;
        let primary = key(
            "http://a.example/docs/2.4/en/mod/core.html",
            "http://a.example/docs/2.4/en/index.html",
        );
        let mirror = key(
            "http://m.example/pub/apache/docs/2.4/en/mod/core.html",
            "http://m.example/pub/apache/docs/2.4/en/index.html",
        );
        assert!(primary.is_some());
        assert_eq!(primary, mirror);
        // The folder's own URL and its index page link alike.
        assert_eq!(
            key(
                "http://a.example/docs/",
                "http://a.example/docs/en/bind.html"
            ),
            key(
                "http://a.example/docs/index.html",
                "http://a.example/docs/en/bind.html"
            ),
        );
        assert_ne!(
            key(
                "http://a.example/docs/x.html",
                "http://a.example/docs/y.html"
            ),
            key(
                "http://a.example/docs/x.html",
                "http://a.example/docs/y.html?v=2"
            ),
        );
        assert_ne!(
            key(
                "http://a.example/docs/en/x.html",
                "http://a.example/docs/y.html"
            ),
            key(
                "http://a.example/docs/x.html",
                "http://a.example/docs/y.html"
            ),
        );
        assert_eq!(key("http://a.example/x", "http://b.example/x"), None);
        // A link to the site's root or to a folder.
        assert!(key("http://a.example/docs/x.html", "http://a.example/").is_some());
        assert_ne!(
            key("http://a.example/docs/x.html", "http://a.example/docs/"),
            key("http://a.example/docs/x.html", "http://a.example/"),
        );
    }

    #[test]
    fn paths_folders_and_page_arcs() {
        assert_eq!(
            url_path("http://a.example/x/y.html?q=1#f"),
            Some("/x/y.html")
        );
        assert_eq!(url_path("https://a.example"), Some("/"));
        assert_eq!(url_path("https://a.example?q"), Some("/"));
        assert_eq!(url_path("a'"), None);
        assert_eq!(path_folder("/x/y.html"), "/x/");
        assert_eq!(path_folder("/x/"), "/x/");
        assert_eq!(page_arcs("/docs/2.4/index.html"), ["docs", "2.4"]);
        assert_eq!(page_arcs("/docs/2.4/"), ["docs", "2.4"]);
        assert_eq!(page_arcs("/docs/Default.HTM"), ["docs"]);
        assert_eq!(page_arcs("/docs/indexes.html"), ["docs", "indexes.html"]);
        assert_eq!(page_arcs("/docs/index.html.en"), ["docs", "index.html.en"]);
        assert_eq!(
            common_suffix(&["pub", "std", "a.html"], &["stable", "std", "a.html"]),
            2
        );
    }

    #[test]
    fn host_of_url_keeps_the_port() {
        assert_eq!(host_of_url("http://a.example:8080/x?y"), "a.example:8080");
        assert_eq!(host_of_url("https://a.example"), "a.example");
    }
}
