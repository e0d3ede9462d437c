//! The simulated crawler: for each host, fetch `robots.txt`, then pages
//! breadth-first from the seed in document order, staying on the host; write
//! a `request` and a `response` (or `revisit`) record per fetch; rotate the
//! output into files of about [`ROTATE_BYTES`]; collect the ground truth.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::{Context, Result};
use mirrorscope::corpus::warc_write::{OutRecord, WarcWriter};
use url::Url;

use crate::digest::{choose, record_id, warc_sha1};
use crate::html;
use crate::http::{self, Coding};
use crate::plan::{Host, Schedule};
use crate::site::{self, Served};
use crate::sources::Tree;
use crate::time::{unix, warc_date};

/// A new WARC file is started (between fetches) once the current one is this big.
pub const ROTATE_BYTES: u64 = 2_000_000;
/// Style sheets, icons and images fetched per host (the first distinct ones met).
pub const EMBEDS_PER_HOST: usize = 4;
const USER_AGENT: &str =
    "Mozilla/5.0 (compatible; mirrorscope-democrawl/0.1; +http://crawler.mirrorscope.example/)";
const REVISIT_PROFILE: &str = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// A row of `truth.tsv`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TruthRow {
    pub url: String,
    pub collection: String,
    pub replica: String,
    pub page: String,
}

/// Counts per host, for the summary.
#[derive(Default, Clone)]
pub struct HostStats {
    pub name: String,
    pub ip: String,
    pub role: String,
    pub html_pages: usize,
    pub other_ok: usize,
    pub redirects: usize,
    pub not_found: usize,
    pub revisits: usize,
    pub encoded: usize,
    pub bytes: u64,
}

/// One written WARC file.
pub struct FileStats {
    pub name: String,
    pub records: usize,
    pub bytes: u64,
}

/// Where an earlier capture was archived (target of a revisit).
#[derive(Clone)]
struct Archived {
    uri: String,
    date: String,
    id: String,
    payload_digest: String,
}

/// A `Write` that counts bytes into a shared counter (all files together).
struct Counting {
    inner: BufWriter<File>,
    total: Rc<Cell<u64>>,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(buf)?;
        self.total.set(self.total.get() + written as u64);
        Ok(written)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

struct OpenFile {
    writer: WarcWriter<Counting>,
    warcinfo_id: String,
    start_total: u64,
    records: usize,
    name: String,
}

pub struct Crawler<'a> {
    trees: &'a BTreeMap<&'a str, Tree>,
    schedule: Schedule,
    out_dir: PathBuf,
    file: Option<OpenFile>,
    total: Rc<Cell<u64>>,
    pub files: Vec<FileStats>,
    clock: i64,
    sequence: u64,
    by_digest: BTreeMap<String, Archived>,
    by_url: BTreeMap<String, Archived>,
    pub truth: BTreeSet<TruthRow>,
    pub hosts: Vec<HostStats>,
    pub records: BTreeMap<&'static str, usize>,
}

/// Why a URL is fetched.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Visit {
    First,
    Again,
}

impl<'a> Crawler<'a> {
    pub fn new(
        trees: &'a BTreeMap<&'a str, Tree>,
        out_dir: &Path,
        schedule: Schedule,
    ) -> Crawler<'a> {
        Crawler {
            trees,
            schedule,
            out_dir: out_dir.to_path_buf(),
            file: None,
            total: Rc::new(Cell::new(0)),
            files: Vec::new(),
            clock: {
                let (year, month, day, hour) = schedule.start;
                unix(year, month, day, hour, 0, 0)
            },
            sequence: 0,
            by_digest: BTreeMap::new(),
            by_url: BTreeMap::new(),
            truth: BTreeSet::new(),
            hosts: Vec::new(),
            records: BTreeMap::new(),
        }
    }

    /// Crawls every host in order, then fetches a few pages of some hosts a
    /// second time (the next day).
    pub fn run(&mut self, hosts: &[Host]) -> Result<()> {
        let mut first_pages: Vec<Vec<Url>> = Vec::new();
        for host in hosts {
            first_pages.push(self.crawl_host(host)?);
            self.clock += 97;
        }
        let (year, month, day, hour) = self.schedule.recrawl;
        self.clock = unix(year, month, day, hour, 0, 0);
        for (host_index, (host, pages)) in hosts.iter().zip(&first_pages).enumerate() {
            for url in pages.iter().take(host.recrawl) {
                let before = self.total.get();
                self.fetch(host, host_index, url, Visit::Again)?;
                self.hosts[host_index].bytes += self.total.get() - before;
            }
        }
        self.close_file()?;
        Ok(())
    }

    fn crawl_host(&mut self, host: &Host) -> Result<Vec<Url>> {
        let host_index = self.hosts.len();
        self.hosts.push(HostStats {
            name: host.name.to_string(),
            ip: host.ip.to_string(),
            role: host.role.to_string(),
            ..HostStats::default()
        });
        let before = self.total.get();
        let base = Url::parse(&format!("http://{}/", host.name))
            .with_context(|| format!("bad host name {}", host.name))?;
        let mut queue: VecDeque<Url> = VecDeque::new();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for path in ["/robots.txt", host.seed] {
            let url = base.join(path)?;
            seen.insert(url.to_string());
            queue.push_back(url);
        }
        let mut embeds_left = EMBEDS_PER_HOST;
        let mut mount_fetches = vec![0usize; host.mounts.len()];
        let mut pages = Vec::new();
        while let Some(url) = queue.pop_front() {
            if let Some((index, mount)) = host.mount_for(url.path()) {
                if mount
                    .max_fetches
                    .is_some_and(|max| mount_fetches[index] >= max)
                {
                    continue; // the crawl of this copy stopped
                }
                mount_fetches[index] += 1;
            }
            let served = self.fetch(host, host_index, &url, Visit::First)?;
            if url.path() == "/robots.txt" {
                continue;
            }
            if served.status == 200 && served.html {
                pages.push(url.clone());
                for (target, is_embed) in outlinks(&url, &served) {
                    if target.host_str() != Some(host.name) || target.scheme() != "http" {
                        continue;
                    }
                    if host.robots.is_some_and(|disallowed| {
                        disallowed.iter().any(|p| target.path().starts_with(p))
                    }) {
                        continue;
                    }
                    if is_embed && embeds_left == 0 {
                        continue;
                    }
                    if seen.insert(target.to_string()) {
                        if is_embed {
                            embeds_left -= 1;
                        }
                        queue.push_back(target);
                    }
                }
            }
            if let Some(location) = served.location.as_deref().and_then(|l| url.join(l).ok()) {
                if location.host_str() == Some(host.name) && seen.insert(location.to_string()) {
                    queue.push_back(location);
                }
            }
        }
        self.hosts[host_index].bytes += self.total.get() - before;
        Ok(pages)
    }

    /// Fetches `url` from `host`, writes its records, returns what was served.
    fn fetch(&mut self, host: &Host, host_index: usize, url: &Url, visit: Visit) -> Result<Served> {
        self.clock += 1 + choose(url.as_str(), "delay", 3) as i64;
        let date = warc_date(self.clock);
        let served = site::serve(host, self.trees, url);
        let coding = choose_coding(host, url, &served);
        let wire = http::respond(&host.server, &served, self.clock, coding)?;
        let payload_digest = warc_sha1(&wire.entity);
        let uri = url.to_string();

        self.ensure_file()?;
        let response_id = self.next_id("response", &uri);
        let request_id = self.next_id("request", &uri);
        let request = request_block(url, host);
        let warcinfo_id = self.warcinfo_id();
        self.write(
            "request",
            vec![
                ("WARC-Record-ID", request_id),
                ("WARC-Date", date.clone()),
                ("WARC-Target-URI", uri.clone()),
                ("WARC-IP-Address", host.ip.to_string()),
                ("WARC-Warcinfo-ID", warcinfo_id.clone()),
                ("WARC-Concurrent-To", response_id.clone()),
                (
                    "Content-Type",
                    "application/http; msgtype=request".to_string(),
                ),
            ],
            &request,
        )?;

        let earlier = match visit {
            Visit::Again => self
                .by_url
                .get(&uri)
                .filter(|earlier| earlier.payload_digest == payload_digest)
                .cloned(),
            Visit::First if host.dedup && served.status == 200 => {
                self.by_digest.get(&payload_digest).cloned()
            }
            Visit::First => None,
        };
        let stats = &mut self.hosts[host_index];
        if let Some(earlier) = earlier {
            stats.revisits += 1;
            self.write(
                "revisit",
                vec![
                    ("WARC-Record-ID", response_id),
                    ("WARC-Date", date),
                    ("WARC-Target-URI", uri.clone()),
                    ("WARC-IP-Address", host.ip.to_string()),
                    ("WARC-Warcinfo-ID", warcinfo_id),
                    ("WARC-Profile", REVISIT_PROFILE.to_string()),
                    ("WARC-Refers-To", earlier.id),
                    ("WARC-Refers-To-Target-URI", earlier.uri),
                    ("WARC-Refers-To-Date", earlier.date),
                    ("WARC-Payload-Digest", payload_digest),
                    ("WARC-Block-Digest", warc_sha1(&wire.head)),
                    (
                        "Content-Type",
                        "application/http; msgtype=response".to_string(),
                    ),
                ],
                &wire.head,
            )?;
        } else {
            let block = wire.block();
            if coding != Coding::Identity {
                stats.encoded += 1;
            }
            let archived = Archived {
                uri: uri.clone(),
                date: date.clone(),
                id: response_id.clone(),
                payload_digest: payload_digest.clone(),
            };
            self.by_digest
                .entry(payload_digest.clone())
                .or_insert_with(|| archived.clone());
            self.by_url.entry(uri.clone()).or_insert(archived);
            self.write(
                "response",
                vec![
                    ("WARC-Record-ID", response_id),
                    ("WARC-Date", date),
                    ("WARC-Target-URI", uri.clone()),
                    ("WARC-IP-Address", host.ip.to_string()),
                    ("WARC-Warcinfo-ID", warcinfo_id),
                    ("WARC-Payload-Digest", payload_digest),
                    ("WARC-Block-Digest", warc_sha1(&block)),
                    (
                        "Content-Type",
                        "application/http; msgtype=response".to_string(),
                    ),
                ],
                &block,
            )?;
        }
        if visit == Visit::First {
            self.count(host, host_index, &uri, &served);
        }
        Ok(served)
    }

    fn count(&mut self, host: &Host, host_index: usize, uri: &str, served: &Served) {
        let stats = &mut self.hosts[host_index];
        match (served.status, served.html) {
            (200, true) => stats.html_pages += 1,
            (200, false) => stats.other_ok += 1,
            (301, _) => stats.redirects += 1,
            _ => stats.not_found += 1,
        }
        let Some(page) = &served.page else {
            return;
        };
        let mount = &host.mounts[page.mount];
        if let (Some(collection), Some(replica)) = (mount.collection, mount.replica(host.name)) {
            self.truth.insert(TruthRow {
                url: uri.to_string(),
                collection: collection.to_string(),
                replica,
                page: page.path.clone(),
            });
        }
    }

    fn next_id(&mut self, kind: &str, target: &str) -> String {
        self.sequence += 1;
        record_id(self.schedule.salt, self.sequence, kind, target)
    }

    fn warcinfo_id(&self) -> String {
        self.file
            .as_ref()
            .map(|file| file.warcinfo_id.clone())
            .unwrap_or_default()
    }

    fn write(
        &mut self,
        warc_type: &'static str,
        headers: Vec<(&str, String)>,
        block: &[u8],
    ) -> Result<()> {
        let file = self.file.as_mut().context("no open WARC file")?;
        file.writer
            .write_record(&OutRecord {
                warc_type,
                headers,
                block,
            })
            .with_context(|| format!("cannot write to {}", file.name))?;
        file.records += 1;
        *self.records.entry(warc_type).or_insert(0) += 1;
        Ok(())
    }

    /// Opens the first file, or the next one once the current is full.
    fn ensure_file(&mut self) -> Result<()> {
        if let Some(file) = &self.file {
            if self.total.get() - file.start_total < ROTATE_BYTES {
                return Ok(());
            }
        }
        self.close_file()?;
        let name = format!("crawl-{:02}.warc.gz", self.files.len());
        let path = self.out_dir.join(&name);
        let handle =
            File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        let writer = WarcWriter::new(
            Counting {
                inner: BufWriter::new(handle),
                total: self.total.clone(),
            },
            true,
        );
        let warcinfo_id = self.next_id("warcinfo", &name);
        self.file = Some(OpenFile {
            writer,
            warcinfo_id: warcinfo_id.clone(),
            start_total: self.total.get(),
            records: 0,
            name: name.clone(),
        });
        let info = format!(
            "software: mirrorscope build-corpus {}\r\n\
            format: WARC File Format 1.1\r\n\
            conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n\
            isPartOf: mirrorscope-demo-crawl\r\n\
            description: simulated crawl of mirrored documentation hosts, built from the archives in shared/sources\r\n\
            robots: obey\r\nhttp-header-user-agent: {USER_AGENT}\r\n\
            operator: mirrorscope demo corpus builder\r\n",
            env!("CARGO_PKG_VERSION")
        );
        self.write(
            "warcinfo",
            vec![
                ("WARC-Record-ID", warcinfo_id),
                ("WARC-Date", warc_date(self.clock)),
                ("WARC-Filename", name),
                ("Content-Type", "application/warc-fields".to_string()),
            ],
            info.as_bytes(),
        )?;
        Ok(())
    }

    /// Writes a `resource` record (not a page: readers must skip or keep it
    /// apart) into the current file.
    pub fn write_resource(&mut self, uri: &str, content_type: &str, text: &str) -> Result<()> {
        self.ensure_file()?;
        let id = self.next_id("resource", uri);
        let headers = vec![
            ("WARC-Record-ID", id),
            ("WARC-Date", warc_date(self.clock)),
            ("WARC-Target-URI", uri.to_string()),
            ("WARC-Warcinfo-ID", self.warcinfo_id()),
            ("WARC-Block-Digest", warc_sha1(text.as_bytes())),
            ("Content-Type", content_type.to_string()),
        ];
        self.write("resource", headers, text.as_bytes())
    }

    fn close_file(&mut self) -> Result<()> {
        if let Some(file) = self.file.take() {
            let mut counting = file
                .writer
                .finish()
                .with_context(|| format!("cannot finish {}", file.name))?;
            counting.flush()?;
            self.files.push(FileStats {
                name: file.name,
                records: file.records,
                bytes: self.total.get() - file.start_total,
            });
        }
        Ok(())
    }
}

/// The links of a fetched HTML page, resolved, without fragments; `true`
/// marks embeds.
fn outlinks(url: &Url, served: &Served) -> Vec<(Url, bool)> {
    let tags = html::scan(&served.body);
    html::links(&tags)
        .into_iter()
        .filter_map(|link| {
            let mut target = url.join(&link.target).ok()?;
            target.set_fragment(None);
            Some((target, link.kind == html::LinkKind::Embed))
        })
        .collect()
}

/// Deterministic choice of the few responses sent compressed or chunked.
fn choose_coding(host: &Host, url: &Url, served: &Served) -> Coding {
    if served.status != 200 || host.server.encoded_percent == 0 {
        return Coding::Identity;
    }
    if choose(url.as_str(), "encoded", 100) >= host.server.encoded_percent {
        return Coding::Identity;
    }
    match choose(url.as_str(), "coding", 3) {
        0 => Coding::Gzip,
        1 => Coding::Chunked,
        _ => Coding::GzipChunked,
    }
}

fn request_block(url: &Url, host: &Host) -> Vec<u8> {
    let mut target = url.path().to_string();
    if let Some(query) = url.query() {
        target.push('?');
        target.push_str(query);
    }
    format!(
        "GET {target} HTTP/1.1\r\nHost: {}\r\n\
        User-Agent: {USER_AGENT}\r\nAccept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n\
        Accept-Encoding: gzip\r\nConnection: close\r\n\
        \r\n",
        host.name
    )
    .into_bytes()
}
