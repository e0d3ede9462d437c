//! `mirrorscope avoid`: what a crawler can skip next time (cho-2000 §5.1).
//!
//! cho-2000 fed the Google crawler the widely replicated collections and the
//! machines with several names, and the next crawl's share of similar pages
//! fell from 48% to 13%. The list here holds:
//! - **prefix** entries: for every similar cluster of collections that is not
//!   small (its largest copy has `collections.small_size` pages or more, 10
//!   by default: cho §5.1's noise threshold), the folder of every copy but
//!   the principal one;
//! - **host** entries: host aliases, two names of one site: a pair of hosts
//!   crawled from one IP address whose pages under the same paths are copies
//!   (classified at levels 1 to 4 on whole hosts by the mirrors stage). Of
//!   each group of aliases the name kept is the one holding most principal
//!   copies, then most URLs, then the first; the others are avoided.
//!
//! Entries covered by another (a copy on an avoided host, a folder inside an
//! avoided folder) are left out. Each entry counts the pages of this crawl
//! it covers and their body bytes: what the next crawl saves.
//!
//! The text form, for crawlers: lines starting with `#` are comments; every
//! other line is tab-separated `kind target pages bytes keep`, where `kind` is
//! `prefix` (skip every URL starting with `target`) or `host` (skip every URL
//! whose host is `target`), and `keep` is where the same content is crawled
//! instead (the principal copy's folder, or the host kept).

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::Serialize;

use crate::collections::{ClusterKind, Collections};
use crate::datadir::{DataDir, Result};
use crate::mirrors::{Level, Mirrors};
use crate::pages::{HostId, PageTable};
use crate::union_find::UnionFind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AvoidKind {
    Host,
    Prefix,
}

/// One line of the list.
#[derive(Debug, Clone, Serialize)]
pub struct AvoidEntry {
    pub kind: AvoidKind,
    /// A URL prefix, or a host name.
    pub target: String,
    /// Pages of this crawl it covers, and their body bytes.
    pub pages: u64,
    pub bytes: u64,
    /// Where the same content stays crawled.
    pub keep: String,
}

/// The answer of `avoid`.
#[derive(Debug, Clone, Serialize)]
pub struct AvoidList {
    pub generation: String,
    pub pages: u64,
    pub bytes: u64,
    pub pages_saved: u64,
    pub bytes_saved: u64,
    pub entries: Vec<AvoidEntry>,
}

impl AvoidList {
    pub fn gather(data: &DataDir) -> Result<AvoidList> {
        let generation = data.generation()?;
        let manifest = generation.manifest()?;
        let table = generation.page_table()?;
        let collections = generation.collections(&table)?;
        let mirrors = generation.mirrors(&table)?;
        Ok(AvoidList::of(
            &manifest.generation,
            &table,
            &collections,
            &mirrors,
        ))
    }

    pub fn of(
        generation: &str,
        table: &PageTable,
        collections: &Collections,
        mirrors: &Mirrors,
    ) -> AvoidList {
        let mut entries = alias_entries(table, collections, mirrors);
        for cluster in collections
            .clusters
            .iter()
            .filter(|cluster| cluster.kind == ClusterKind::Collection && !cluster.small)
        {
            let Some(principal) = collections.collection(cluster.principal()) else {
                continue;
            };
            for &id in &cluster.collections[1..] {
                if let Some(copy) = collections.collection(id) {
                    entries.push(AvoidEntry {
                        kind: AvoidKind::Prefix,
                        target: copy.prefix.clone(),
                        pages: 0,
                        bytes: 0,
                        keep: principal.prefix.clone(),
                    });
                }
            }
        }
        // Hosts first, then prefixes in order: a covered entry follows what
        // covers it.
        entries.sort_by(|x, y| x.kind.cmp(&y.kind).then(x.target.cmp(&y.target)));
        let mut kept: Vec<AvoidEntry> = Vec::new();
        for entry in entries {
            let covered = kept.iter().any(|earlier| covers(earlier, &entry.target));
            if !covered {
                kept.push(entry);
            }
        }
        let mut by_host: HashMap<&str, (u64, u64)> = HashMap::new();
        for page in &table.pages {
            let totals = by_host.entry(table.host_name(page.host)).or_default();
            *totals = (totals.0 + 1, totals.1 + page.body_bytes);
        }
        for entry in &mut kept {
            let (pages, bytes) = match entry.kind {
                AvoidKind::Host => by_host
                    .get(entry.target.as_str())
                    .copied()
                    .unwrap_or_default(),
                AvoidKind::Prefix => under_prefix(table, &entry.target),
            };
            entry.pages = pages;
            entry.bytes = bytes;
        }
        AvoidList {
            generation: generation.to_string(),
            pages: table.pages.len() as u64,
            bytes: table.pages.iter().map(|page| page.body_bytes).sum(),
            pages_saved: kept.iter().map(|entry| entry.pages).sum(),
            bytes_saved: kept.iter().map(|entry| entry.bytes).sum(),
            entries: kept,
        }
    }

    /// Whether a crawler loading the list skips `url`.
    pub fn avoids(&self, url: &str) -> bool {
        self.entries.iter().any(|entry| covers(entry, url))
    }
}

/// Whether `entry` covers a URL or URL prefix.
fn covers(entry: &AvoidEntry, url: &str) -> bool {
    match entry.kind {
        AvoidKind::Prefix => url.starts_with(&entry.target),
        AvoidKind::Host => {
            crate::mirrors::split_url(url).is_some_and(|(host, _)| host == entry.target)
        }
    }
}

/// Pages of the table under a URL prefix, and their bytes.
fn under_prefix(table: &PageTable, prefix: &str) -> (u64, u64) {
    // Pages are sorted by URL: the prefix is one run.
    let start = table
        .pages
        .partition_point(|page| page.url.as_str() < prefix);
    table.pages[start..]
        .iter()
        .take_while(|page| page.url.starts_with(prefix))
        .fold((0, 0), |(count, bytes), page| {
            (count + 1, bytes + page.body_bytes)
        })
}

/// Host aliases: same address, copies under the same paths.
fn alias_entries(
    table: &PageTable,
    collections: &Collections,
    mirrors: &Mirrors,
) -> Vec<AvoidEntry> {
    let aliases: Vec<(HostId, HostId)> = mirrors
        .pairs
        .iter()
        .filter(|report| {
            report.shared_ip.is_some()
                && matches!(
                    report.level,
                    Level::One | Level::Two | Level::Three | Level::Four
                )
                && report.subtrees.iter().all(|subtree| subtree.a == subtree.b)
        })
        .map(|report| (report.pair.a, report.pair.b))
        .collect();
    if aliases.is_empty() {
        return Vec::new();
    }
    let mut principals: HashMap<HostId, u32> = HashMap::new();
    for cluster in &collections.clusters {
        if let Some(principal) = collections.collection(cluster.principal()) {
            *principals.entry(principal.host).or_default() += 1;
        }
    }
    let hosts = table.hosts.len();
    let mut groups = UnionFind::new(hosts);
    for (a, b) in &aliases {
        groups.union(a.0, b.0);
    }
    let labels = groups.labels();
    let mut members: BTreeMap<u32, Vec<HostId>> = BTreeMap::new();
    for (a, b) in &aliases {
        for host in [a, b] {
            let group = members.entry(labels[host.0 as usize]).or_default();
            if !group.contains(host) {
                group.push(*host);
            }
        }
    }
    let mut entries = Vec::new();
    for group in members.values() {
        let rank = |host: &HostId| {
            (
                principals.get(host).copied().unwrap_or(0),
                mirrors.host_urls.get(host.0 as usize).copied().unwrap_or(0),
                std::cmp::Reverse(table.host_name(*host).to_string()),
            )
        };
        let Some(keep) = group.iter().max_by_key(|host| rank(host)) else {
            continue;
        };
        for host in group.iter().filter(|host| *host != keep) {
            entries.push(AvoidEntry {
                kind: AvoidKind::Host,
                target: table.host_name(*host).to_string(),
                pages: 0,
                bytes: 0,
                keep: table.host_name(*keep).to_string(),
            });
        }
    }
    entries
}

impl fmt::Display for AvoidList {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let share = |part: u64, whole: u64| {
            if whole == 0 {
                0.0
            } else {
                100.0 * part as f64 / whole as f64
            }
        };
        writeln!(
            formatter,
            "# mirrorscope avoid list, generation {} (cho-2000 §5.1)",
            self.generation
        )?;
        writeln!(
            formatter,
            "# {} entries; a crawler following them skips {} of {} pages ({:.1}%) and {} of {} body bytes ({:.1}%)",
            self.entries.len(),
            self.pages_saved,
            self.pages,
            share(self.pages_saved, self.pages),
            self.bytes_saved,
            self.bytes,
            share(self.bytes_saved, self.bytes)
        )?;
        writeln!(
            formatter,
            "# kind\ttarget\tpages\tbytes\tkeep   (prefix: skip URLs starting with target; host: skip URLs on host target)"
        )?;
        for entry in &self.entries {
            writeln!(
                formatter,
                "{}\t{}\t{}\t{}\t{}",
                match entry.kind {
                    AvoidKind::Host => "host",
                    AvoidKind::Prefix => "prefix",
                },
                entry.target,
                entry.pages,
                entry.bytes,
                entry.keep
            )?;
        }
        Ok(())
    }
}
