//! `mirrorscope avoid`: what a crawler can skip next time without losing a
//! page (cho-2000 §5.1).
//!
//! cho-2000 fed the Google crawler the widely replicated collections and the
//! machines with several names, and the next crawl's share of similar pages
//! fell from 48% to 13%. A list that skips a whole copy loses whatever that
//! copy holds and the kept one does not (the pages of an older version, the
//! pages the kept copy's crawl missed), so the list here is built page by
//! page and says only what is safe:
//!
//! - a page is **kept elsewhere** when a page that stays crawled is its copy:
//!   in the same trivial cluster, at the same place in the manual (the same
//!   path below the copies' folders, else the name a mirror renamed it to:
//!   [`same_name_renamed`]), and with the same bytes; or the same
//!   own text (a mirror's banner or footer aside), when the two copies hold
//!   one version of the manual ([`super::versions`]); or, across versions,
//!   highly similar beyond doubt (bharat-broder-1999 §3.2's resemblance of
//!   50%, `mirrors.high_similarity`, plus two standard errors of its
//!   estimate from 84 min-hashes: 0.61). A page whose text changed more
//!   (an older version's rewritten page) is not skipped;
//! - **host** entries: a host alias (two names of one server, crawled from
//!   one address, copies under the same paths by the mirrors stage) is
//!   skipped whole only when every page crawled on it has the same bytes at
//!   the same path on the name kept (the one holding most principal copies,
//!   then most URLs, then the first name);
//! - **prefix** entries: in every similar cluster of collections that is
//!   not small (cho §5.1's noise threshold, `collections.small_size`), the
//!   principal copy is kept whole; the other copies are taken in turn, the
//!   largest first, and each of their pages is skipped when a page kept so
//!   far (of the principal, or of a copy taken earlier) is its copy, and
//!   kept otherwise. The folders of a copy whose every crawled page is
//!   skipped are listed, the highest such folder only; a skipped page in a
//!   folder that also holds kept pages is listed by its URL.
//!
//! - **alias** entries: a way a host names one page under several URLs
//!   (a tracking or session parameter, an index file, case; `http:` beside
//!   `https:` is a prefix entry), learnt from the host's pages
//!   ([`crate::similarity::aliases`]), is one entry when every crawled URL
//!   of the host showing it is the alias of a crawled URL that does not.
//!
//! So no entry skips a page that is not kept under another URL, no entry
//! keeps what an entry skips, and every entry covers exactly the crawled
//! pages it counts. Each entry counts those pages and their body bytes:
//! what the next crawl saves.
//!
//! **The budget.** A crawler checks every URL it meets against every entry,
//! and an entry naming one page saves one fetch. `avoid` prints at most one
//! entry per ten documents of the crawl ([`AvoidList::within`]; the
//! documents are the compared pages that are no stand-in, a page named by
//! several URLs once), or `--max-entries`: when the list is longer, the
//! entries skipping the fewest pages are left out (those pages stay
//! crawled, so nothing is lost) and the header says what they would have
//! saved. Entries are disjoint, so the entries kept are the most a list of
//! that many entries can skip without skipping a page the crawl keeps.
//!
//! The text form, for crawlers: lines starting with `#` are comments; every
//! other line is tab-separated `kind target pages bytes keep`, where `kind` is
//! `prefix` (skip every URL starting with `target`), `host` (skip every URL
//! whose host is `target`) or `alias` (`target` is a host and a variation:
//! skip the host's URLs showing it, [`Variation::token`]), and `keep` is where the same content is crawled
//! instead (a folder or page of the kept copy, or the host kept).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use serde::Serialize;

use crate::collections::{ClusterKind, Collections};
use crate::generation::{Analysis, DataDir, Result};
use crate::mirrors::{same_name_renamed, Mirrors};
use crate::pages::host_of_url;
use crate::pages::{folder_prefix, url_path, HostId, PageId, PageTable};
use crate::similarity::aliases::{AliasRule, UrlAliases, Variation};
use crate::similarity::{is_compared, Similarity, TrivialClusterId, MINHASH_FUNCTIONS};
use crate::union_find::UnionFind;

use super::versions::{same_version, texts_by_place};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AvoidKind {
    Host,
    Prefix,
    Alias,
}

impl AvoidKind {
    /// The kind as the list's first column names it.
    pub fn name(self) -> &'static str {
        match self {
            AvoidKind::Host => "host",
            AvoidKind::Prefix => "prefix",
            AvoidKind::Alias => "alias",
        }
    }

    /// The kind a list's first column names.
    pub fn from_name(name: &str) -> Option<AvoidKind> {
        [AvoidKind::Host, AvoidKind::Prefix, AvoidKind::Alias]
            .into_iter()
            .find(|kind| kind.name() == name)
    }
}

/// One line of the list.
#[derive(Debug, Clone, Serialize)]
pub struct AvoidEntry {
    pub kind: AvoidKind,
    /// A URL prefix, a host name, or a host and a variation's token.
    pub target: String,
    /// Pages of this crawl it covers, and their body bytes.
    pub pages: u64,
    pub bytes: u64,
    /// Where the same content stays crawled.
    pub keep: String,
    /// A digest of what it skips (each covered URL, relative to the target,
    /// with its body's signature): `avoid --previous` tells by it whether
    /// the copy changed between two crawls.
    pub digest: String,
}

/// A copy's folder skipped but for the crawled pages under it that stay
/// crawled: the entries of one copy in one rule, for crawlers that read
/// exceptions (a regular expression's look-ahead), when most of the
/// folder's crawled pages are skipped. Among the crawled URLs it skips
/// exactly what the entries skip; a URL the crawl did not see under the
/// folder it skips too (a page added to a copy's folder is most likely the
/// copy's).
#[derive(Debug, Clone, Serialize)]
pub struct FolderRule {
    /// A URL ending in `/`.
    pub folder: String,
    /// URLs under the folder that stay crawled, sorted.
    pub except: Vec<String>,
    /// Pages of this crawl it covers, and their body bytes.
    pub pages: u64,
    pub bytes: u64,
    /// The entries of the list it stands for.
    pub entries: usize,
    /// Where most of the same content stays crawled.
    pub keep: String,
}

/// The answer of `avoid`.
#[derive(Debug, Clone, Serialize)]
pub struct AvoidList {
    pub generation: String,
    pub pages: u64,
    pub bytes: u64,
    /// Compared pages that are no stand-in, each page named by several
    /// URLs counted once: the measure of the budget.
    pub documents: u64,
    /// At most this many entries (and as many rules in the compact forms);
    /// `None`: no bound.
    pub budget: Option<usize>,
    pub pages_saved: u64,
    pub bytes_saved: u64,
    pub entries: Vec<AvoidEntry>,
    /// What the entries beyond the budget would have skipped.
    pub left_out: LeftOut,
    /// The same list with each copy's entries in one rule where most of
    /// its folder is skipped ([`FolderRule`]), made from every entry found,
    /// the budget's left-out ones too; the entries no folder rule covers
    /// stand as they are.
    pub folders: Vec<FolderRule>,
    /// The entries beyond the budget (for the compact forms, where a folder
    /// rule holds them at no cost).
    #[serde(skip)]
    pub beyond: Vec<AvoidEntry>,
    /// Pages the list keeps that only pages it skips link to: a crawler
    /// loading the list seeds them ([`seeds`]).
    pub seeds: Vec<String>,
}

/// The entries a budget leaves out: how many, and the pages and bytes they
/// would have skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    pub entries: u64,
    pub pages: u64,
    pub bytes: u64,
}

/// The default budget: one entry per ten documents (at least one).
pub fn default_budget(documents: u64) -> usize {
    (documents / 10).max(1) as usize
}

impl AvoidList {
    /// The list of the current generation of `data`, within `budget`
    /// entries (`None`: [`default_budget`]; `Some(0)`: no bound).
    pub fn gather(data: &DataDir, budget: Option<usize>) -> Result<AvoidList> {
        Ok(AvoidList::gather_with_table(data, budget)?.0)
    }

    /// The list (as [`AvoidList::gather`]) and the page table it was made
    /// from.
    pub fn gather_with_table(
        data: &DataDir,
        budget: Option<usize>,
    ) -> Result<(AvoidList, PageTable)> {
        let Analysis {
            manifest,
            table,
            similarity,
            collections,
            mirrors,
            ..
        } = data.analysis()?;
        let list = AvoidList::of(
            &manifest.generation,
            &table,
            &similarity,
            &collections,
            &mirrors,
        )
        .within_default(budget);
        let list = AvoidList {
            seeds: seeds(&table, &list.skipped(&table)),
            ..list
        };
        Ok((list, table))
    }

    /// The list within `budget` entries: `None`, [`default_budget`] of its
    /// documents; `Some(0)`, no bound.
    pub fn within_default(self, budget: Option<usize>) -> AvoidList {
        match budget {
            Some(0) => self,
            Some(budget) => self.within(budget),
            None => {
                let budget = default_budget(self.documents);
                self.within(budget)
            }
        }
    }

    /// The list cut to its `budget` entries skipping the most pages (then
    /// bytes): the others stay crawled, counted in [`AvoidList::left_out`].
    /// The folder rules, made from every entry, stay as they are.
    pub fn within(mut self, budget: usize) -> AvoidList {
        self.budget = Some(budget);
        if self.entries.len() <= budget {
            return self;
        }
        self.entries.sort_by(|x, y| {
            (y.pages, y.bytes)
                .cmp(&(x.pages, x.bytes))
                .then(x.kind.cmp(&y.kind))
                .then(x.target.cmp(&y.target))
        });
        let beyond = self.entries.split_off(budget);
        self.left_out = LeftOut {
            entries: beyond.len() as u64,
            pages: beyond.iter().map(|entry| entry.pages).sum(),
            bytes: beyond.iter().map(|entry| entry.bytes).sum(),
        };
        self.pages_saved -= self.left_out.pages;
        self.bytes_saved -= self.left_out.bytes;
        self.beyond = beyond;
        self.entries
            .sort_by(|x, y| x.kind.cmp(&y.kind).then(x.target.cmp(&y.target)));
        self
    }

    pub fn of(
        generation: &str,
        table: &PageTable,
        similarity: &Similarity,
        collections: &Collections,
        mirrors: &Mirrors,
    ) -> AvoidList {
        let mut plan = Plan::new(table, similarity, collections, mirrors);
        let mut entries = plan.alias_entries();
        let aliases = UrlAliases::by_rules(table, similarity);
        entries.extend(url_alias_entries(table, &aliases));
        let documents = (0..table.pages.len())
            .filter(|&index| {
                is_compared(table, &similarity.fingerprints, index)
                    && !similarity.stand_in.get(index).copied().unwrap_or(false)
                    && !aliases.is_alias(PageId(index as u32))
            })
            .count() as u64;
        plan.skip_copies();
        entries.extend(plan.prefix_entries());
        entries.sort_by(|x, y| x.kind.cmp(&y.kind).then(x.target.cmp(&y.target)));
        for entry in &mut entries {
            entry.digest = digest(table, entry);
        }
        let mut list = AvoidList {
            generation: generation.to_string(),
            pages: table.pages.len() as u64,
            bytes: table.pages.iter().map(|page| page.body_bytes).sum(),
            documents,
            budget: None,
            pages_saved: entries.iter().map(|entry| entry.pages).sum(),
            bytes_saved: entries.iter().map(|entry| entry.bytes).sum(),
            entries,
            left_out: LeftOut::default(),
            folders: Vec::new(),
            beyond: Vec::new(),
            seeds: Vec::new(),
        };
        list.folders = folder_rules(table, &list, &plan.copy_entries);
        list
    }

    /// The entries no folder rule covers, the budget's left-out ones too.
    pub fn outside_folders(&self) -> impl Iterator<Item = &AvoidEntry> {
        self.entries.iter().chain(&self.beyond).filter(|entry| {
            entry.kind != AvoidKind::Prefix
                || !self
                    .folders
                    .iter()
                    .any(|rule| entry.target.starts_with(&rule.folder))
        })
    }

    /// Whether a crawler loading the list skips `url`.
    pub fn avoids(&self, url: &str) -> bool {
        self.entries.iter().any(|entry| covers(entry, url))
    }

    /// By page of `table`: whether a crawler loading the list skips it.
    pub fn skipped(&self, table: &PageTable) -> Vec<bool> {
        let mut skipped = vec![false; table.pages.len()];
        for entry in &self.entries {
            match entry.kind {
                AvoidKind::Prefix => {
                    for index in under_prefix(table, &entry.target) {
                        skipped[index] = true;
                    }
                }
                AvoidKind::Host => {
                    for (index, page) in table.pages.iter().enumerate() {
                        if table.host_name(page.host) == entry.target {
                            skipped[index] = true;
                        }
                    }
                }
                AvoidKind::Alias => {
                    for (index, page) in table.pages.iter().enumerate() {
                        if covers(entry, &page.url) {
                            skipped[index] = true;
                        }
                    }
                }
            }
        }
        skipped
    }
}

/// The pages a crawler skipping `skipped` would no longer reach by links:
/// crawled pages it keeps that crawled pages link to, but only pages it
/// skips (an older version's changed page, linked from its unchanged index
/// and chapters). A crawler loading the list seeds them, or loses them.
/// Sorted URLs.
pub fn seeds(table: &PageTable, skipped: &[bool]) -> Vec<String> {
    let mut linked = vec![false; table.pages.len()];
    let mut reached = vec![false; table.pages.len()];
    for (index, page) in table.pages.iter().enumerate() {
        for target in &page.outlinks {
            let target = target.0 as usize;
            if target == index {
                continue;
            }
            linked[target] = true;
            if !skipped[index] {
                reached[target] = true;
            }
        }
    }
    let mut seeds: Vec<String> = (0..table.pages.len())
        .filter(|&index| linked[index] && !reached[index] && !skipped[index])
        .map(|index| table.pages[index].url.to_string())
        .collect();
    seeds.sort_unstable();
    seeds
}

/// Each copy's entries as one folder rule, where most crawled URLs under the
/// copy's folder are skipped (a folder most of whose pages stay crawled is
/// not a copy with exceptions, and a page added to it later is more likely
/// its own than a copy's): one rule for several entries, naming fewer
/// URLs than the pages it skips. The rule skips exactly what the entries skip among the crawled URLs: every URL
/// under the folder that no entry skips is an exception. A rule under
/// another rule's folder is left out (the outer one covers it).
fn folder_rules(
    table: &PageTable,
    list: &AvoidList,
    copy_entries: &[(String, Vec<String>)],
) -> Vec<FolderRule> {
    let skipped = list.skipped(table);
    let keep_of: HashMap<&str, &str> = list
        .entries
        .iter()
        .map(|entry| (entry.target.as_str(), entry.keep.as_str()))
        .collect();
    let mut rules: Vec<FolderRule> = copy_entries
        .iter()
        .filter(|(_, targets)| targets.len() >= 2)
        .filter_map(|(folder, targets)| {
            let range = under_prefix(table, folder);
            let except: Vec<String> = range
                .clone()
                .filter(|&index| !skipped[index])
                .map(|index| table.pages[index].url.to_string())
                .collect();
            // A folder most of whose pages stay crawled is no copy.
            if except.len() * 2 >= range.len() {
                return None;
            }
            let mut keeps: HashMap<&str, usize> = HashMap::new();
            for target in targets {
                if let Some(keep) = keep_of.get(target.as_str()) {
                    *keeps.entry(keep).or_default() += 1;
                }
            }
            let keep = keeps
                .into_iter()
                .max_by_key(|&(keep, count)| (count, std::cmp::Reverse(keep)))
                .map(|(keep, _)| keep.to_string())
                .unwrap_or_default();
            let covered = || range.clone().filter(|&index| skipped[index]);
            Some(FolderRule {
                folder: folder.clone(),
                pages: covered().count() as u64,
                bytes: covered().map(|index| table.pages[index].body_bytes).sum(),
                except,
                entries: targets.len(),
                keep,
            })
        })
        .collect();
    rules.sort_by(|x, y| x.folder.cmp(&y.folder));
    let mut outer: Vec<FolderRule> = Vec::new();
    for rule in rules {
        if !outer
            .iter()
            .any(|kept| rule.folder.starts_with(&kept.folder))
        {
            outer.push(rule);
        }
    }
    outer
}

/// The pages of `table` an entry covers, in URL order.
pub(crate) fn covered(table: &PageTable, entry: &AvoidEntry) -> Vec<usize> {
    match entry.kind {
        AvoidKind::Prefix => under_prefix(table, &entry.target).collect(),
        AvoidKind::Host | AvoidKind::Alias => (0..table.pages.len())
            .filter(|&index| covers(entry, &table.pages[index].url))
            .collect(),
    }
}

/// [`AvoidEntry::digest`]: xxh3 of each covered URL (after the target, for
/// a prefix) and its body's signature, in URL order, as 16 hex digits.
fn digest(table: &PageTable, entry: &AvoidEntry) -> String {
    let mut bytes = Vec::new();
    for index in covered(table, entry) {
        let page = &table.pages[index];
        let url = match entry.kind {
            AvoidKind::Prefix => &page.url[entry.target.len()..],
            _ => page.url.as_ref(),
        };
        bytes.extend_from_slice(url.as_bytes());
        bytes.push(0);
        if let Some(key) = &page.content_key {
            bytes.extend_from_slice(&key.signature.to_be_bytes());
        }
        bytes.push(b'\n');
    }
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes))
}

/// Whether `entry` covers a URL or URL prefix.
fn covers(entry: &AvoidEntry, url: &str) -> bool {
    match entry.kind {
        AvoidKind::Prefix => url.starts_with(&entry.target),
        AvoidKind::Host => {
            crate::mirrors::split_url(url).is_some_and(|(host, _)| host == entry.target)
        }
        AvoidKind::Alias => {
            let Some((host, token)) = entry.target.split_once(' ') else {
                return false;
            };
            host_of_url(url) == host
                && Variation::from_token(token).is_some_and(|variation| variation.shown_by(url))
        }
    }
}

/// One entry per way a host names one page under several URLs
/// ([`UrlAliases`]), when every crawled URL of the host showing it (and not
/// skipped by an entry before) is a page that holds nothing (a redirect) or
/// one with another URL that stays crawled: `http` is a prefix entry of the
/// host's `http://` URLs, the others `alias` entries. The ways covering the
/// most URLs are taken first; one that would leave a page with no URL
/// crawled is left out.
fn url_alias_entries(table: &PageTable, aliases: &UrlAliases) -> Vec<AvoidEntry> {
    let mut by_host: HashMap<HostId, Vec<usize>> = HashMap::new();
    for rule in &aliases.rules {
        by_host.entry(rule.host).or_default();
    }
    for (index, page) in table.pages.iter().enumerate() {
        if let Some(pages) = by_host.get_mut(&page.host) {
            pages.push(index);
        }
    }
    // Each way with the host's URLs showing it, the widest first.
    let mut rules: Vec<(&AliasRule, Vec<usize>)> = aliases
        .rules
        .iter()
        .map(|rule| {
            let shown = by_host[&rule.host]
                .iter()
                .copied()
                .filter(|&index| rule.variation.shown_by(&table.pages[index].url))
                .collect();
            (rule, shown)
        })
        .collect();
    rules.sort_by(|(x, x_shown), (y, y_shown)| {
        (y_shown.len(), x.host, &x.variation).cmp(&(x_shown.len(), y.host, &y.variation))
    });
    let groups = aliases.groups();
    let mut skipped = vec![false; table.pages.len()];
    let mut entries = Vec::new();
    for (rule, shown) in rules {
        let shown: Vec<usize> = shown.into_iter().filter(|&index| !skipped[index]).collect();
        if shown.is_empty() {
            continue;
        }
        for &index in &shown {
            skipped[index] = true;
        }
        let still_named = |index: usize| {
            let standing = aliases.standing_for[index];
            groups
                .get(&standing)
                .is_some_and(|names| names.iter().any(|name| !skipped[name.0 as usize]))
        };
        let safe = shown
            .iter()
            .all(|&index| table.pages[index].content_key.is_none() || still_named(index));
        if !safe {
            for &index in &shown {
                skipped[index] = false;
            }
            continue;
        }
        let host = table.host_name(rule.host);
        let (kind, target, keep) = match &rule.variation {
            Variation::Scheme => (
                AvoidKind::Prefix,
                format!("http://{host}/"),
                format!("https://{host}/"),
            ),
            other => (
                AvoidKind::Alias,
                format!("{host} {}", other.token()),
                other.kept_as(),
            ),
        };
        entries.push(AvoidEntry {
            kind,
            target,
            pages: shown.len() as u64,
            bytes: shown
                .iter()
                .map(|&index| table.pages[index].body_bytes)
                .sum(),
            keep,
            digest: String::new(),
        });
    }
    entries
}

/// The pages under a URL prefix: one run of the table, sorted by URL.
pub(super) fn under_prefix(table: &PageTable, prefix: &str) -> std::ops::Range<usize> {
    let start = table
        .pages
        .partition_point(|page| page.url.as_ref() < prefix);
    let length = table.pages[start..]
        .iter()
        .take_while(|page| page.url.starts_with(prefix))
        .count();
    start..start + length
}

/// Which pages are skipped, and by which kept page each is covered.
struct Plan<'a> {
    table: &'a PageTable,
    similarity: &'a Similarity,
    collections: &'a Collections,
    mirrors: &'a Mirrors,
    own_text: Vec<u64>,
    /// By page: the kept page it is a copy of, when skipped.
    cover: Vec<Option<PageId>>,
    /// Pages skipped with their whole host.
    on_skipped_host: Vec<bool>,
    /// Each copy with skipped pages: its folder and the targets of its
    /// prefix entries.
    copy_entries: Vec<(String, Vec<String>)>,
}

impl<'a> Plan<'a> {
    fn new(
        table: &'a PageTable,
        similarity: &'a Similarity,
        collections: &'a Collections,
        mirrors: &'a Mirrors,
    ) -> Plan<'a> {
        Plan {
            table,
            similarity,
            collections,
            mirrors,
            own_text: similarity.own_text_signatures(),
            cover: vec![None; table.pages.len()],
            on_skipped_host: vec![false; table.pages.len()],
            copy_entries: Vec::new(),
        }
    }

    /// Whether `page` is a copy of `kept`: the same trivial cluster, and the
    /// same bytes, the same own text in copies of one version, or a
    /// resemblance that is high beyond doubt.
    fn is_copy(&self, page: PageId, kept: PageId, one_version: bool) -> bool {
        let (p, k) = (page.0 as usize, kept.0 as usize);
        if self.similarity.trivial[p] != self.similarity.trivial[k] {
            return false;
        }
        let (first, second) = (&self.table.pages[p], &self.table.pages[k]);
        if first.content_key.is_some() && first.content_key == second.content_key {
            return true;
        }
        if one_version && self.own_text[p] != 0 && self.own_text[p] == self.own_text[k] {
            return true;
        }
        let bar = skip_resemblance(self.mirrors.config.high_similarity);
        match (
            &self.similarity.fingerprints[p],
            &self.similarity.fingerprints[k],
        ) {
            (Some(a), Some(b)) => a
                .resemblance(b)
                .is_some_and(|resemblance| resemblance >= bar),
            _ => false,
        }
    }

    /// Host aliases skipped whole: every page has the same bytes at the same
    /// path on the name kept.
    fn alias_entries(&mut self) -> Vec<AvoidEntry> {
        let (table, collections, mirrors) = (self.table, self.collections, self.mirrors);
        let aliases: Vec<(HostId, HostId)> = mirrors.aliases();
        if aliases.is_empty() {
            return Vec::new();
        }
        let mut principals: HashMap<HostId, u32> = HashMap::new();
        for cluster in &collections.clusters {
            if let Some(principal) = collections.collection(cluster.principal()) {
                *principals.entry(principal.host).or_default() += 1;
            }
        }
        let mut groups = UnionFind::new(table.hosts.len());
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
        let mut pages_of: HashMap<HostId, Vec<usize>> = HashMap::new();
        for (index, page) in table.pages.iter().enumerate() {
            pages_of.entry(page.host).or_default().push(index);
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
            let Some(&keep) = group.iter().max_by_key(|host| rank(host)) else {
                continue;
            };
            let kept_paths: HashMap<&str, usize> = pages_of
                .get(&keep)
                .into_iter()
                .flatten()
                .filter_map(|&index| Some((url_path(&table.pages[index].url)?, index)))
                .collect();
            for &host in group.iter().filter(|&&host| host != keep) {
                let pages = pages_of.get(&host).map_or(&[][..], Vec::as_slice);
                let twins: Option<Vec<usize>> = pages
                    .iter()
                    .map(|&index| {
                        let page = &table.pages[index];
                        let twin = *kept_paths.get(url_path(&page.url)?)?;
                        let other = &table.pages[twin];
                        (other.status == page.status && other.content_key == page.content_key)
                            .then_some(twin)
                    })
                    .collect();
                let Some(twins) = twins else { continue };
                if pages.is_empty() {
                    continue;
                }
                for (&index, &twin) in pages.iter().zip(&twins) {
                    self.cover[index] = Some(PageId(twin as u32));
                    self.on_skipped_host[index] = true;
                }
                entries.push(AvoidEntry {
                    kind: AvoidKind::Host,
                    target: table.host_name(host).to_string(),
                    pages: pages.len() as u64,
                    bytes: pages
                        .iter()
                        .map(|&index| table.pages[index].body_bytes)
                        .sum(),
                    keep: table.host_name(keep).to_string(),
                    digest: String::new(),
                });
            }
        }
        entries
    }

    /// The copies of each cluster worth avoiding, principal first, then the
    /// largest.
    fn clusters(&self) -> Vec<Vec<usize>> {
        let collections = self.collections;
        collections
            .clusters
            .iter()
            .filter(|cluster| cluster.kind == ClusterKind::Collection && !cluster.small)
            .map(|cluster| {
                let mut copies: Vec<usize> =
                    cluster.collections.iter().map(|id| id.0 as usize).collect();
                copies[1..].sort_by_key(|&index| {
                    (
                        std::cmp::Reverse(collections.collections[index].pages.len()),
                        index,
                    )
                });
                copies
            })
            .collect()
    }

    /// Decides, copy by copy, which pages are skipped.
    fn skip_copies(&mut self) {
        for copies in self.clusters() {
            let collections = self.collections;
            // Which copies hold one version of the manual.
            let texts: Vec<HashMap<&str, u64>> = copies
                .iter()
                .map(|&copy| {
                    texts_by_place(self.table, &collections.collections[copy], &self.own_text)
                })
                .collect();
            let one_version: Vec<Vec<bool>> = texts
                .iter()
                .map(|mine| {
                    texts
                        .iter()
                        .map(|theirs| same_version(mine, theirs))
                        .collect()
                })
                .collect();
            // The places of the principal copy, every tail of each at a
            // folder boundary, and its pages' texts: a copy most of whose
            // pages with a copy in the principal are at none of those
            // places renames its paths.
            let principal = &collections.collections[copies[0]];
            let principal_places: HashSet<&str> = {
                let folder = url_path(&principal.prefix).unwrap_or("/");
                principal
                    .pages
                    .iter()
                    .flat_map(|&page| {
                        arc_tails(place(&self.table.pages[page.0 as usize].url, folder))
                    })
                    .collect()
            };
            let principal_texts: HashSet<TrivialClusterId> = principal
                .pages
                .iter()
                .map(|&page| self.similarity.trivial[page.0 as usize])
                .collect();
            // Trivial cluster -> kept pages with their place in the manual
            // and the position of their copy.
            let mut kept: HashMap<TrivialClusterId, Vec<(PageId, &str, usize)>> = HashMap::new();
            for (position, &copy) in copies.iter().enumerate() {
                let collection = &collections.collections[copy];
                let folder = url_path(&collection.prefix).unwrap_or("/");
                let renames = renames_paths(
                    collection
                        .pages
                        .iter()
                        .filter(|&&page| {
                            principal_texts.contains(&self.similarity.trivial[page.0 as usize])
                        })
                        .map(|&page| place(&self.table.pages[page.0 as usize].url, folder)),
                    &principal_places,
                );
                for &page in &collection.pages {
                    let place = place(&self.table.pages[page.0 as usize].url, folder);
                    let label = self.similarity.trivial[page.0 as usize];
                    if self.cover[page.0 as usize].is_some() {
                        continue;
                    }
                    // A copy at the same place, else under a name a
                    // mirror renamed it to (`page` for `page.html`, a
                    // folder level flattened into the name).
                    let cover = (position > 0)
                        .then(|| {
                            let candidates = kept.get(&label)?;
                            let copy_where = |placed: &dyn Fn(&str) -> bool| {
                                candidates
                                    .iter()
                                    .find(|&&(other, other_place, other_copy)| {
                                        placed(other_place)
                                            && self.is_copy(
                                                page,
                                                other,
                                                one_version[position][other_copy],
                                            )
                                    })
                                    .map(|&(other, _, _)| other)
                            };
                            copy_where(&|other_place| same_place(place, other_place)).or_else(
                                || {
                                    // Only a mirror renaming its paths: a
                                    // page another version moved is
                                    // another page.
                                    if !renames {
                                        return None;
                                    }
                                    copy_where(&|other_place| {
                                        same_name_renamed(&as_page(place), &as_page(other_place))
                                    })
                                },
                            )
                        })
                        .flatten();
                    match cover {
                        Some(other) => self.cover[page.0 as usize] = Some(other),
                        None => kept.entry(label).or_default().push((page, place, position)),
                    }
                }
            }
        }
    }

    /// The prefix entries: each copy's highest folders whose every crawled
    /// page is skipped, then the skipped pages left, one by one.
    fn prefix_entries(&mut self) -> Vec<AvoidEntry> {
        let mut entries = Vec::new();
        let collections = self.collections;
        for copies in self.clusters() {
            for &copy in &copies[1..] {
                let collection = &collections.collections[copy];
                let skipped: Vec<PageId> = collection
                    .pages
                    .iter()
                    .copied()
                    .filter(|page| {
                        self.cover[page.0 as usize].is_some()
                            && !self.on_skipped_host[page.0 as usize]
                    })
                    .collect();
                if !skipped.is_empty() {
                    let first = entries.len();
                    self.list(&collection.prefix, &skipped, &mut entries);
                    let targets = entries[first..]
                        .iter()
                        .map(|entry| entry.target.clone())
                        .collect::<Vec<String>>();
                    if !targets.is_empty() {
                        self.copy_entries.push((collection.prefix.clone(), targets));
                    }
                }
            }
        }
        // A skipped page no entry lists stays crawled.
        let listed: HashSet<usize> = entries
            .iter()
            .flat_map(|entry| under_prefix(self.table, &entry.target))
            .collect();
        for (index, cover) in self.cover.iter_mut().enumerate() {
            if !self.on_skipped_host[index] && !listed.contains(&index) {
                *cover = None;
            }
        }
        entries
    }

    /// Lists the skipped pages of one copy, under its `folder` (a URL
    /// ending in `/`), with the fewest prefixes that skip no other crawled
    /// URL: the folder itself when every page under it is skipped, else one
    /// entry for each maximal set of skipped pages that some prefix longer
    /// than the folder names alone. A prefix names a run of the URL order
    /// (the table is sorted by URL), so each maximal run of skipped pages is
    /// cut where its first and last URLs stop sharing a prefix that no kept
    /// URL around the run starts with; each entry is the longest prefix its
    /// pages share (a single page is its URL). An older version whose
    /// changed pages lie between unchanged ones is then one entry for each
    /// stretch of unchanged names, not one for each page.
    fn list(&self, folder: &str, skipped: &[PageId], entries: &mut Vec<AvoidEntry>) {
        let range = under_prefix(self.table, folder);
        let pure = |index: usize| self.cover[index].is_some() && !self.on_skipped_host[index];
        if range.is_empty() {
            return;
        }
        if range.clone().all(pure) {
            entries.push(self.entry(folder, range));
            return;
        }
        let mine: HashSet<usize> = skipped.iter().map(|page| page.0 as usize).collect();
        let mut start = range.start;
        while start < range.end {
            if !pure(start) {
                start += 1;
                continue;
            }
            let end = (start..range.end)
                .find(|&index| !pure(index))
                .unwrap_or(range.end);
            if (start..end).any(|index| mine.contains(&index)) {
                self.cover_run(folder, start..end, range.end, entries);
            }
            start = end;
        }
    }

    /// Entries for the run `run` of skipped pages under `folder`, whose
    /// neighbours in the URL order (up to `folder_end`) stay crawled.
    fn cover_run(
        &self,
        folder: &str,
        run: std::ops::Range<usize>,
        folder_end: usize,
        entries: &mut Vec<AvoidEntry>,
    ) {
        let url = |index: usize| self.table.pages[index].url.as_ref();
        let before = (run.start > 0).then(|| url(run.start - 1));
        let after = (run.end < folder_end).then(|| url(run.end));
        let mut index = run.start;
        while index < run.end {
            let page = url(index);
            // The shortest prefix of the page's URL that neither kept
            // neighbour starts with, and never shorter than the folder.
            let shared = [before, after]
                .into_iter()
                .flatten()
                .map(|other| common_prefix(page, other).len() + 1)
                .max()
                .unwrap_or(0)
                .max(folder.len());
            if shared > page.len() {
                // A kept URL starts with this one (`page.html?print=1`):
                // no prefix skips the page alone, so it stays crawled.
                index += 1;
                continue;
            }
            let mut length = shared;
            while !page.is_char_boundary(length) {
                length += 1;
            }
            let named = under_prefix(self.table, &page[..length]);
            let last = url(named.end - 1);
            let target = common_prefix(page, last);
            entries.push(self.entry(target, named.clone()));
            index = named.end;
        }
    }

    /// The entry skipping `target`, which covers the pages of `range`.
    fn entry(&self, target: &str, range: std::ops::Range<usize>) -> AvoidEntry {
        let table = self.table;
        // Kept where most of the covering pages are: their common folder on
        // the host holding most of them.
        let mut by_host: HashMap<HostId, Vec<&str>> = HashMap::new();
        for index in range.clone() {
            if let Some(cover) = self.cover[index] {
                let page = &table.pages[cover.0 as usize];
                by_host.entry(page.host).or_default().push(&page.url);
            }
        }
        let keep = by_host
            .into_iter()
            .max_by_key(|(host, urls)| (urls.len(), std::cmp::Reverse(*host)))
            .map(|(_, urls)| {
                if urls.len() == 1 && range.len() == 1 && !target.ends_with('/') {
                    urls[0].to_string()
                } else {
                    folder_prefix(urls.iter().copied())
                }
            })
            .unwrap_or_default();
        AvoidEntry {
            kind: AvoidKind::Prefix,
            target: target.to_string(),
            pages: range.len() as u64,
            bytes: range.map(|index| table.pages[index].body_bytes).sum(),
            keep,
            digest: String::new(),
        }
    }
}

/// The resemblance estimate from which a page is skipped as a copy of a kept
/// one: the papers' "highly similar" (`high`) plus two standard errors of the
/// estimate from [`MINHASH_FUNCTIONS`] values there, as skipping a page that
/// is no copy loses it while keeping a copy costs one fetch.
fn skip_resemblance(high: f64) -> f64 {
    let error = (high * (1.0 - high) / MINHASH_FUNCTIONS as f64).sqrt();
    (high + 2.0 * error).min(1.0)
}

/// A page's path below its copy's folder.
fn place<'u>(url: &'u str, folder: &str) -> &'u str {
    let path = url_path(url).unwrap_or(url);
    path.strip_prefix(folder).unwrap_or(path)
}

/// Two places are the same page when one ends with the other at an arc
/// boundary (a partial copy's folder can be deeper than a full copy's).
fn same_place(first: &str, second: &str) -> bool {
    let (short, long) = if first.len() <= second.len() {
        (first, second)
    } else {
        (second, first)
    };
    long.ends_with(short)
        && (long.len() == short.len() || long.as_bytes()[long.len() - short.len() - 1] == b'/')
}

/// Every tail of a place at a folder boundary, the place included
/// (`a/b.html`, `b.html`).
fn arc_tails(place: &str) -> impl Iterator<Item = &str> {
    std::iter::once(place).chain(
        place
            .match_indices('/')
            .map(move |(slash, _)| &place[slash + 1..])
            .filter(|tail| !tail.is_empty()),
    )
}

/// Whether a copy renames its paths: fewer than half of its pages that have
/// a copy in the principal (`places`) sit at a place of the principal copy
/// or share its last arcs with one (`guide/x.html` and `x.html`, `a/x.html`
/// and `b/x.html`: a loose test, which only keeps more copies crawled). A mirror that drops `.html` or flattens a
/// folder renames nearly every page; another version that moved a module
/// moves a few, and its moved pages are other pages.
fn renames_paths<'p>(places: impl Iterator<Item = &'p str>, principal: &HashSet<&str>) -> bool {
    let (mut pages, mut placed) = (0usize, 0usize);
    for place in places {
        pages += 1;
        placed += usize::from(arc_tails(place).any(|tail| principal.contains(tail)));
    }
    placed * 2 < pages
}

/// A place naming a folder (`guide/`, or the copy's own folder: an empty
/// place) as the folder's index page, which a mirror may serve under either.
fn as_page(place: &str) -> std::borrow::Cow<'_, str> {
    if place.is_empty() || place.ends_with('/') {
        format!("{place}index").into()
    } else {
        place.into()
    }
}

/// The longest prefix two strings share, ending at a character boundary.
fn common_prefix<'s>(first: &'s str, second: &str) -> &'s str {
    let mut length = first
        .bytes()
        .zip(second.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !first.is_char_boundary(length) {
        length -= 1;
    }
    &first[..length]
}

/// The entry's line of the list, without its line end.
impl fmt::Display for AvoidEntry {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{}\t{}\t{}\t{}\t{}\t{}",
            self.kind.name(),
            self.target,
            self.pages,
            self.bytes,
            self.keep,
            self.digest
        )
    }
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
        let hosts = self
            .entries
            .iter()
            .filter(|entry| entry.kind == AvoidKind::Host)
            .count();
        let folders = self
            .entries
            .iter()
            .filter(|entry| entry.kind == AvoidKind::Prefix && entry.target.ends_with('/'))
            .count();
        let aliases = self
            .entries
            .iter()
            .filter(|entry| entry.kind == AvoidKind::Alias)
            .count();
        let single = self
            .entries
            .iter()
            .filter(|entry| {
                entry.kind == AvoidKind::Prefix && !entry.target.ends_with('/') && entry.pages == 1
            })
            .count();
        writeln!(
            formatter,
            "# {} entries ({hosts} hosts, {folders} folders, {aliases} ways of naming a page twice, {} stretches of names in a folder, {single} single pages); a crawler following them skips {} of {} pages ({:.1}%) and {} of {} body bytes ({:.1}%)",
            self.entries.len(),
            self.entries.len() - hosts - folders - aliases - single,
            self.pages_saved,
            self.pages,
            share(self.pages_saved, self.pages),
            self.bytes_saved,
            self.bytes,
            share(self.bytes_saved, self.bytes)
        )?;
        if let Some(budget) = self.budget {
            let LeftOut {
                entries,
                pages,
                bytes,
            } = self.left_out;
            let documents = self.documents;
            if entries == 0 {
                writeln!(
                    formatter,
                    "# budget: at most {budget} entries (the crawl holds {documents} documents); none left out"
                )?;
            } else {
                writeln!(
                    formatter,
                    "# budget: at most {budget} entries (the crawl holds {documents} documents); {entries} more entries, skipping {pages} pages and {bytes} bytes, left out (their pages stay crawled; `--max-entries 0` lists them, the wget and browsertrix forms hold them in their folder rules)"
                )?;
            }
        }
        writeln!(
            formatter,
            "# kind\ttarget\tpages\tbytes\tkeep\tdigest   (digest: of the URLs and bodies it skips, for `avoid --previous`; prefix: skip URLs starting with target, a folder, a page or the start of the names of several pages; host: skip URLs on host target)"
        )?;
        writeln!(
            formatter,
            "# alias: skip URLs on the target's host showing its variation: ?a&b (carrying query parameters a and b), ;a (path parameter a), index (a folder's index file, the folder kept), case (an upper case letter in the path)"
        )?;
        writeln!(
            formatter,
            "# no entry skips a page that is not kept under another URL: a page differing from every kept copy stays crawled"
        )?;
        for entry in &self.entries {
            writeln!(formatter, "{entry}")?;
        }
        write_seeds(formatter, &self.seeds)
    }
}

/// The seeds as comment lines closing a list: `# seed URL`.
pub fn write_seeds(out: &mut impl fmt::Write, seeds: &[String]) -> fmt::Result {
    if !seeds.is_empty() {
        writeln!(
            out,
            "# {} pages kept are linked only from pages skipped: seed them (`avoid --seeds` lists them), or a crawler following the list misses them",
            seeds.len()
        )?;
    }
    for seed in seeds {
        writeln!(out, "# seed\t{seed}")?;
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::collections::CollectionsConfig;
    use crate::ingest::Capture;
    use crate::mirrors::MirrorsConfig;
    use crate::similarity::SimilarityConfig;
    use crate::test_support::manuals::{all, serve, tree, HostCopy, Tree};
    use crate::test_support::{capture, run};

    /// The avoid list of a web, and its page table.
    pub(in crate::report) fn avoid(captures: &[Capture]) -> (PageTable, Similarity, AvoidList) {
        let (table, similarity) = run(captures, &SimilarityConfig::default());
        let collections =
            crate::collections::analyse(&table, &similarity, &CollectionsConfig::default());
        let mirrors =
            crate::mirrors::analyse(&table, &similarity, &collections, &MirrorsConfig::default());
        let list = AvoidList::of("gen-test", &table, &similarity, &collections, &mirrors);
        (table, similarity, list)
    }

    /// What every list must hold: no entry keeps what an entry skips, and
    /// every skipped page has a copy at the same place that stays crawled.
    fn check_invariants(table: &PageTable, similarity: &Similarity, list: &AvoidList) {
        for entry in &list.entries {
            assert!(
                !list.avoids(&entry.keep),
                "{} keeps {}, which is skipped",
                entry.target,
                entry.keep
            );
            assert!(entry.pages > 0, "{} skips nothing", entry.target);
        }
        let skipped = list.skipped(table);
        for (index, page) in table.pages.iter().enumerate() {
            if !skipped[index] {
                continue;
            }
            let name = page.url.rsplit('/').next().unwrap_or("");
            let kept = (0..table.pages.len()).any(|other| {
                let url = &table.pages[other].url;
                !skipped[other]
                    && other != index
                    && similarity.trivial[other] == similarity.trivial[index]
                    && (url.ends_with(&format!("/{name}"))
                        || same_name_renamed(&as_page(url), &as_page(&page.url)))
            });
            assert!(kept, "{} is skipped and kept nowhere", page.url);
        }
    }

    #[test]
    fn one_page_under_many_urls_is_one_entry_per_way_the_host_names_it() {
        let mut captures = Vec::new();
        for n in 0..5 {
            let text = format!("tool page {n}\nits own words {n}\nand more of page {n}");
            let path = format!("docs/p{n}.html");
            captures.push(capture(&format!("http://tool.example/{path}"), &text));
            captures.push(capture(&format!("https://tool.example/{path}"), &text));
            captures.push(capture(
                &format!("https://tool.example/{path}?utm_source=news"),
                &text,
            ));
        }
        // `?page=` names other pages: never an entry.
        for n in 0..3 {
            captures.push(capture(
                &format!("https://tool.example/list.html?page={n}"),
                &format!("list part {n}\nentries {n}"),
            ));
        }
        captures.push(capture(
            "https://tool.example/list.html",
            "the list\nfirst entries",
        ));
        let (table, _, list) = avoid(&captures);
        let lines: Vec<(AvoidKind, &str, u64)> = list
            .entries
            .iter()
            .map(|entry| (entry.kind, entry.target.as_str(), entry.pages))
            .collect();
        assert_eq!(
            lines,
            [
                (AvoidKind::Prefix, "http://tool.example/", 5),
                (AvoidKind::Alias, "tool.example ?utm_source", 5),
            ]
        );
        let skipped = list.skipped(&table);
        for (index, page) in table.pages.iter().enumerate() {
            let plain = page.url.starts_with("https:") && !page.url.contains("utm_source");
            assert_eq!(skipped[index], !plain, "{}", page.url);
        }
        assert!(list.avoids("http://tool.example/docs/new.html"));
        assert!(list.avoids("https://tool.example/docs/new.html?x=1&utm_source=feed"));
        assert!(!list.avoids("https://tool.example/list.html?page=7"));
    }

    pub(in crate::report) fn copy<'a>(
        host: &'a str,
        prefix: &'a str,
        changed: &'a [&'a str],
        fetched: &'a dyn Fn(&str) -> bool,
    ) -> HostCopy<'a> {
        HostCopy {
            changed,
            fetched,
            ..HostCopy::whole(host, prefix, host)
        }
    }

    pub(in crate::report) fn manual() -> Tree {
        tree("avoided", &[("intro", 5), ("api", 8), ("guide", 5)])
    }

    #[test]
    fn an_exact_mirror_is_skipped_by_its_folder_and_the_original_never() {
        let manual = manual();
        let copies = [
            copy("www.example.org", "/docs/", &[], &all),
            copy("mirror.example.net", "/pub/docs/", &[], &all),
            copy("copy.example.com", "/docs/", &[], &all),
        ];
        let captures: Vec<Capture> = copies.iter().flat_map(|c| serve(&manual, c)).collect();
        let (table, similarity, list) = avoid(&captures);
        check_invariants(&table, &similarity, &list);
        let targets: Vec<&str> = list.entries.iter().map(|e| e.target.as_str()).collect();
        assert_eq!(
            targets,
            [
                "http://copy.example.com/docs/",
                "http://mirror.example.net/pub/docs/"
            ],
            "{list}"
        );
        assert!(list
            .entries
            .iter()
            .all(|e| e.keep == "http://www.example.org/docs/"));
        assert_eq!(list.pages_saved as usize, 2 * manual.pages.len());
    }

    #[test]
    fn an_older_version_is_skipped_only_where_it_is_a_copy() {
        // The old version rewrote two pages of the api section, and has a
        // page of its own.
        let manual = manual();
        let changed = ["api/page1.html", "api/page2.html"];
        let copies = [
            copy("www.example.org", "/docs/", &[], &all),
            copy("old.example.net", "/docs/", &changed, &all),
            copy("other.example.com", "/docs/", &[], &all),
        ];
        let mut captures: Vec<Capture> = copies.iter().flat_map(|c| serve(&manual, c)).collect();
        captures.push(capture(
            "http://old.example.net/docs/api/removed.html",
            "A page the newer version no longer has\nIt explains an old feature",
        ));
        let (table, similarity, list) = avoid(&captures);
        check_invariants(&table, &similarity, &list);
        for kept in [
            "http://old.example.net/docs/api/page1.html",
            "http://old.example.net/docs/api/page2.html",
            "http://old.example.net/docs/api/removed.html",
            "http://www.example.org/docs/index.html",
            "http://www.example.org/docs/api/page1.html",
        ] {
            assert!(!list.avoids(kept), "{kept} is skipped:\n{list}");
        }
        assert!(list.avoids("http://old.example.net/docs/intro/"), "{list}");
        assert!(
            list.avoids("http://old.example.net/docs/api/page3.html"),
            "{list}"
        );
        assert!(list.avoids("http://other.example.com/docs/"), "{list}");
    }

    #[test]
    fn an_older_version_names_each_stretch_of_unchanged_pages_once() {
        // The old version changed `birch` and `dogwood`: between them, the
        // unchanged names sort together, and a prefix names each stretch
        // where no kept URL starts with it (`api/a` is alder and aspen; `api/`
        // would skip birch).
        let names = [
            "alder", "aspen", "birch", "cedar", "cherry", "dogwood", "elm", "fir",
        ];
        let mut manual = manual();
        let renamed = |path: &str| {
            names
                .iter()
                .enumerate()
                .fold(path.to_string(), |path, (n, name)| {
                    path.replace(&format!("api/page{n}.html"), &format!("api/{name}.html"))
                })
        };
        for (path, links) in &mut manual.pages {
            *path = renamed(path);
            for link in links.iter_mut() {
                *link = renamed(link);
            }
        }
        let changed = ["api/birch.html", "api/dogwood.html"];
        let copies = [
            copy("www.example.org", "/docs/", &[], &all),
            copy("old.example.net", "/v1/docs/", &changed, &all),
        ];
        let captures: Vec<Capture> = copies.iter().flat_map(|c| serve(&manual, c)).collect();
        let (table, similarity, list) = avoid(&captures);
        check_invariants(&table, &similarity, &list);
        let api: Vec<&str> = list
            .entries
            .iter()
            .filter_map(|entry| {
                entry
                    .target
                    .strip_prefix("http://old.example.net/v1/docs/api/")
            })
            .collect();
        assert_eq!(
            api,
            ["a", "c", "elm.html", "fir.html", "index.html"],
            "{list}"
        );
        for name in names {
            let url = format!("http://old.example.net/v1/docs/api/{name}.html");
            let changed = name == "birch" || name == "dogwood";
            assert_eq!(list.avoids(&url), !changed, "{url}:\n{list}");
        }
        // Every unchanged page is still skipped: the list is as long as the
        // stretches, not the pages.
        let old_pages = table
            .pages
            .iter()
            .filter(|page| page.url.starts_with("http://old.example.net/"))
            .count() as u64;
        assert_eq!(list.pages_saved, old_pages - changed.len() as u64, "{list}");
    }

    #[test]
    fn a_mirror_that_renames_paths_is_skipped_by_its_folder() {
        // One mirror flattens the folders into the names (`api_page1.html`),
        // one drops `.html`, lower-cases and serves each folder for its
        // index (`api/` for `api/index.html`): cho-2000 finds the copies by
        // their text and links, and the list skips them by the same mapping.
        let manual = manual();
        let rename =
            |captures: Vec<Capture>, from: &str, to: &str, renamed: &dyn Fn(&str) -> String| {
                let moved = |url: &str| match url.strip_prefix(from) {
                    Some(path) => format!("{to}{}", renamed(path)),
                    None => url.to_string(),
                };
                captures
                    .into_iter()
                    .map(|mut page| {
                        page.info.url = moved(&page.info.url);
                        page.links = page.links.iter().map(&moved).collect();
                        page
                    })
                    .collect::<Vec<Capture>>()
            };
        let mut captures = serve(&manual, &copy("www.example.org", "/docs/", &[], &all));
        captures.extend(rename(
            serve(&manual, &copy("flat.example.net", "/k/", &[], &all)),
            "http://flat.example.net/k/",
            "http://flat.example.net/k/",
            &|path| path.replace('/', "_"),
        ));
        captures.extend(rename(
            serve(&manual, &copy("plain.example.com", "/docs/", &[], &all)),
            "http://plain.example.com/docs/",
            "http://plain.example.com/docs/",
            &|path| match path.strip_suffix("index.html") {
                Some(folder) => folder.to_string(),
                None => path.trim_end_matches(".html").to_lowercase(),
            },
        ));
        let (table, similarity, list) = avoid(&captures);
        check_invariants(&table, &similarity, &list);
        // Nothing here tells the original from its copies: one is kept
        // whole, the two others are skipped whole, by their folders.
        let folders = [
            "http://www.example.org/docs/",
            "http://flat.example.net/k/",
            "http://plain.example.com/docs/",
        ];
        let kept: Vec<&str> = folders
            .into_iter()
            .filter(|folder| list.entries.iter().all(|entry| entry.target != *folder))
            .collect();
        assert_eq!(kept.len(), 1, "{list}");
        assert_eq!(list.entries.len(), 2, "{list}");
        for entry in &list.entries {
            assert!(folders.contains(&entry.target.as_str()), "{list}");
            assert_eq!(entry.pages, manual.pages.len() as u64, "{list}");
            assert_eq!(entry.keep, kept[0], "{list}");
        }
    }

    #[test]
    fn a_page_another_version_moved_is_another_page() {
        // The old version holds the api pages one folder deeper, the same
        // text: a release that moved a module, not a mirror renaming its
        // paths. The moved pages stay crawled, the rest of the copy is
        // skipped.
        let manual = manual();
        let changed = ["guide/page1.html"];
        let mut captures = serve(&manual, &copy("www.example.org", "/docs/", &[], &all));
        let moved = |url: &str| url.replace("/docs/api/page", "/docs/api/old/page");
        captures.extend(
            serve(&manual, &copy("old.example.net", "/docs/", &changed, &all))
                .into_iter()
                .map(|mut page| {
                    page.info.url = moved(&page.info.url);
                    page.links = page.links.iter().map(&moved).collect();
                    page
                }),
        );
        let (table, similarity, list) = avoid(&captures);
        check_invariants(&table, &similarity, &list);
        // Nothing tells the original here: whichever copy is kept, a moved
        // page and its twin both stay crawled, and the intro folder, at the
        // same place in both, is skipped on one host.
        for n in 0..8 {
            for url in [
                format!("http://old.example.net/docs/api/old/page{n}.html"),
                format!("http://www.example.org/docs/api/page{n}.html"),
            ] {
                assert!(!list.avoids(&url), "{url}:\n{list}");
            }
        }
        assert!(
            list.avoids("http://old.example.net/docs/intro/")
                || list.avoids("http://www.example.org/docs/intro/"),
            "{list}"
        );
    }

    /// Whether the compact form (folder rules, then the entries outside
    /// them) skips `url`.
    fn compact_avoids(list: &AvoidList, url: &str) -> bool {
        let by_folder = list
            .folders
            .iter()
            .any(|rule| url.starts_with(&rule.folder) && !rule.except.iter().any(|e| e == url));
        by_folder || list.outside_folders().any(|entry| covers(entry, url))
    }

    #[test]
    fn an_older_version_is_one_folder_rule_with_its_changed_pages_as_exceptions() {
        let manual = manual();
        let changed = ["api/page1.html", "api/page2.html", "guide/page3.html"];
        let copies = [
            copy("www.example.org", "/docs/", &[], &all),
            copy("old.example.net", "/v1/docs/", &changed, &all),
        ];
        let mut captures: Vec<Capture> = copies.iter().flat_map(|c| serve(&manual, c)).collect();
        captures.push(capture(
            "http://old.example.net/v1/docs/api/removed.html",
            "A page the newer version no longer has\nIt explains an old feature",
        ));
        let (table, similarity, list) = avoid(&captures);
        check_invariants(&table, &similarity, &list);
        // The exact list names each skipped page of the mixed folders; the
        // compact form is one rule, the pages that stay its exceptions.
        assert!(list.entries.len() > 4, "{list}");
        assert_eq!(list.folders.len(), 1, "{:?}", list.folders);
        let rule = &list.folders[0];
        assert_eq!(rule.folder, "http://old.example.net/v1/docs/");
        let mut except: Vec<&str> = rule.except.iter().map(String::as_str).collect();
        except.sort_unstable();
        assert_eq!(
            except,
            [
                "http://old.example.net/v1/docs/api/page1.html",
                "http://old.example.net/v1/docs/api/page2.html",
                "http://old.example.net/v1/docs/api/removed.html",
                "http://old.example.net/v1/docs/guide/page3.html",
            ]
        );
        assert_eq!(rule.entries, list.entries.len());
        assert_eq!(list.outside_folders().count(), 0);
        // It skips what the list skips, no more, no less.
        for page in &table.pages {
            assert_eq!(
                compact_avoids(&list, &page.url),
                list.avoids(&page.url),
                "{}",
                page.url
            );
        }
        assert_eq!(rule.pages, list.pages_saved);
        // And in the crawlers' forms: one regular expression, its
        // exceptions a look-ahead.
        let regexes = list.regexes();
        assert_eq!(regexes.len(), 1);
        assert!(
            regexes[0].starts_with("^http://old\\.example\\.net/v1/docs/(?!(?:"),
            "{}",
            regexes[0]
        );
    }

    #[test]
    fn a_budget_keeps_the_entries_skipping_the_most_pages() {
        // An older version whose changed pages sit among unchanged ones:
        // its folders that are copies whole, and a stretch or a page
        // between each changed page.
        let manual = manual();
        let changed = ["api/page1.html", "api/page4.html", "guide/page2.html"];
        let copies = [
            copy("www.example.org", "/docs/", &[], &all),
            copy("old.example.net", "/v1/docs/", &changed, &all),
        ];
        let captures: Vec<Capture> = copies.iter().flat_map(|c| serve(&manual, c)).collect();
        let (table, similarity, whole) = avoid(&captures);
        check_invariants(&table, &similarity, &whole);
        // Every page is a document: no stand-in, no URL naming another's page.
        assert_eq!(whole.documents, table.pages.len() as u64);
        assert_eq!(default_budget(whole.documents), table.pages.len() / 10);
        assert!(whole.entries.len() > 3, "{whole}");

        let budget = 3;
        let list = whole.clone().within(budget);
        check_invariants(&table, &similarity, &list);
        assert_eq!(list.entries.len(), budget, "{list}");
        // The kept entries skip the most pages: none left out skips more.
        let least = list.entries.iter().map(|entry| entry.pages).min().unwrap();
        assert!(list.beyond.iter().all(|entry| entry.pages <= least));
        assert_eq!(list.left_out.entries, (whole.entries.len() - budget) as u64);
        assert_eq!(list.pages_saved + list.left_out.pages, whole.pages_saved);
        assert_eq!(list.bytes_saved + list.left_out.bytes, whole.bytes_saved);
        // The pages of the entries left out stay crawled.
        for entry in &list.beyond {
            for index in covered(&table, entry) {
                assert!(!list.avoids(&table.pages[index].url), "{entry}");
            }
        }
        let text = list.to_string();
        assert!(
            text.contains(&format!("at most {budget} entries")),
            "{text}"
        );
        // The compact forms hold as many rules: here one folder rule holds
        // every entry, so nothing is left out of them.
        assert!(list.regexes().len() <= budget);
        assert_eq!(list.regexes(), whole.regexes());
        // A budget the list is within changes nothing but the header.
        let roomy = whole.clone().within(whole.entries.len());
        assert_eq!(roomy.entries.len(), whole.entries.len());
        assert_eq!(roomy.left_out, LeftOut::default());
    }

    #[test]
    fn a_kept_page_linked_only_from_skipped_pages_is_a_seed() {
        // The old version changed two api pages: its index and chapters are
        // skipped, so nothing a crawler still fetches links to the changed
        // pages, and it must seed them; the pages of the original are
        // linked from its own kept index.
        let manual = manual();
        let changed = ["api/page1.html", "api/page2.html"];
        let copies = [
            copy("www.example.org", "/docs/", &[], &all),
            copy("old.example.net", "/v1/docs/", &changed, &all),
        ];
        let captures: Vec<Capture> = copies.iter().flat_map(|c| serve(&manual, c)).collect();
        let (table, _, list) = avoid(&captures);
        let skipped = list.skipped(&table);
        assert!(
            list.avoids("http://old.example.net/v1/docs/index.html"),
            "{list}"
        );
        assert_eq!(
            seeds(&table, &skipped),
            [
                "http://old.example.net/v1/docs/api/page1.html",
                "http://old.example.net/v1/docs/api/page2.html"
            ],
            "{list}"
        );
        // Nothing skipped, nothing to seed.
        assert!(seeds(&table, &vec![false; table.pages.len()]).is_empty());
    }

    #[test]
    fn an_alias_is_skipped_whole_only_when_it_serves_the_same_bytes() {
        let manual = manual();
        let shared = |host: &'static str| HostCopy {
            ip: "192.0.2.7",
            ..copy(host, "/docs/", &[], &all)
        };
        let mut captures: Vec<Capture> = [
            shared("www.example.org"),
            shared("example.org"),
            copy("mirror.example.net", "/docs/", &[], &all),
        ]
        .iter()
        .flat_map(|c| serve(&manual, c))
        .collect();
        let (table, similarity, list) = avoid(&captures);
        check_invariants(&table, &similarity, &list);
        // One name of the server is skipped whole in favour of the other.
        let host = list.entries.iter().find(|e| e.kind == AvoidKind::Host);
        let names = ["example.org", "www.example.org"];
        assert!(
            host.is_some_and(|e| names.contains(&e.target.as_str())
                && names.contains(&e.keep.as_str())
                && e.target != e.keep),
            "{list}"
        );

        // One page only the skipped name serves: it is no longer skipped
        // whole, and that page stays crawled.
        let skipped = host.map(|e| e.target.clone()).unwrap_or_default();
        let news = format!("http://{skipped}/docs/news.html");
        let mut page = capture(&news, "News of the example site only here");
        page.info.ip = Some("192.0.2.7".into());
        captures.push(page);
        let (table, similarity, list) = avoid(&captures);
        check_invariants(&table, &similarity, &list);
        assert!(
            list.entries.iter().all(|e| e.kind != AvoidKind::Host),
            "{list}"
        );
        assert!(!list.avoids(&news), "{list}");
    }

    #[test]
    fn translations_are_not_skipped_as_copies() {
        let manual = manual();
        let german: Vec<&str> = manual.pages.iter().map(|(path, _)| path.as_str()).collect();
        let captures: Vec<Capture> = [
            copy("www.example.org", "/docs/en/", &[], &all),
            copy("www.example.org", "/docs/de/", &german, &all),
            copy("mirror.example.net", "/docs/en/", &[], &all),
            copy("mirror.example.net", "/docs/de/", &german, &all),
        ]
        .iter()
        .flat_map(|c| serve(&manual, c))
        .collect();
        let (table, similarity, list) = avoid(&captures);
        check_invariants(&table, &similarity, &list);
        for entry in &list.entries {
            let language = |url: &str| if url.contains("/de/") { "de" } else { "en" };
            assert_eq!(language(&entry.target), language(&entry.keep), "{list}");
        }
        // One copy of each language stays crawled whole.
        let crawled = |prefix: &str| {
            manual
                .pages
                .iter()
                .all(|(path, _)| !list.avoids(&format!("{prefix}{path}")))
        };
        assert!(
            crawled("http://www.example.org/docs/en/")
                || crawled("http://mirror.example.net/docs/en/")
        );
        assert!(
            crawled("http://www.example.org/docs/de/")
                || crawled("http://mirror.example.net/docs/de/")
        );
    }
}
