//! The avoid list in the forms crawlers read (`mirrorscope avoid --format`).
//!
//! - `prefix`: the list as it is ([`AvoidList`]'s text), one entry a line;
//! - `wget`: one regular expression for `wget --regex-type=pcre
//!   --reject-regex`, each copy's entries one rule with its exceptions as a
//!   negative look-ahead ([`super::avoid::FolderRule`]);
//! - `browsertrix`: the same rules as browsertrix-crawler's `exclude` list
//!   (YAML, one JavaScript regular expression each).
//!
//! Both forms skip the same crawled URLs as the list: the look-ahead keeps
//! exactly the URLs of the crawl under a folder that no entry skips. A URL
//! the crawl did not see under a folder rule's folder is skipped by the
//! rule and not by the list's entries (the folder is a copy's; a page added
//! to it later is most likely the copy's too).
//!
//! - `heritrix`: the list's entries as SURT prefixes for a Heritrix
//!   `SurtPrefixedDecideRule` (decision `REJECT`, `surtsSourceFile`), one
//!   `+prefix` a line ([`AvoidList::render_heritrix`]).
//!
//! Heritrix compares SURT prefixes, which hold no exception, with `https`
//! read as `http` and every SURT in lower case (its `SurtPrefixSet` and
//! `SURT.fromURI`): so the `heritrix` form is the prefix list, each entry
//! checked in that reading against the crawl's URLs and left out when its
//! prefix would also skip a URL the list keeps (an https copy whose http
//! twin is crawled, a path differing from a kept one in case only). An
//! `alias` entry names no prefix and is left out too. It skips a part of
//! what the list skips, never more.

use std::fmt::Write;

use super::avoid::{covered, seeds, under_prefix, AvoidEntry, AvoidKind, AvoidList, FolderRule};
use crate::corpus::surt;
use crate::pages::PageTable;
use crate::similarity::aliases::Variation;

/// The forms of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AvoidFormat {
    Prefix,
    Wget,
    Browsertrix,
    Heritrix,
}

/// The rules of a compact form: folder rules, then the entries no folder
/// rule covers; within the list's budget, the rules skipping the most pages.
struct Compact<'l> {
    folders: Vec<&'l FolderRule>,
    entries: Vec<&'l AvoidEntry>,
    pages: u64,
}

impl Compact<'_> {
    /// [`AvoidList::regexes`].
    fn regexes(&self) -> Vec<String> {
        self.folders
            .iter()
            .map(|rule| folder_regex(rule))
            .chain(self.entries.iter().map(|entry| entry_regex(entry)))
            .collect()
    }

    /// [`AvoidList::one_regex`].
    fn one_regex(&self) -> String {
        let mut trie = Trie::default();
        let mut others = Vec::new();
        for rule in &self.folders {
            trie.insert(&rule.folder, folder_tail(rule));
        }
        for entry in &self.entries {
            match entry.kind {
                AvoidKind::Prefix => trie.insert(&entry.target, String::new()),
                _ => others.push(entry_regex(entry)),
            }
        }
        let mut alternatives: Vec<String> = Vec::new();
        if !trie.is_empty() {
            alternatives.push(format!("^{}", trie.render()));
        }
        alternatives.extend(others);
        match alternatives.len() {
            0 => "(?!)".into(),
            1 => alternatives.remove(0),
            _ => alternatives
                .iter()
                .map(|alternative| format!("(?:{alternative})"))
                .collect::<Vec<_>>()
                .join("|"),
        }
    }
}

impl AvoidList {
    fn compact(&self) -> Compact<'_> {
        let mut rules: Vec<(u64, u64, Result<&FolderRule, &AvoidEntry>)> = self
            .folders
            .iter()
            .map(|rule| (rule.pages, rule.bytes, Ok(rule)))
            .chain(
                self.outside_folders()
                    .map(|entry| (entry.pages, entry.bytes, Err(entry))),
            )
            .collect();
        if let Some(budget) = self.budget.filter(|&budget| rules.len() > budget) {
            // Stable: among equals the folder rules, then the list's order.
            rules.sort_by_key(|(pages, bytes, _)| std::cmp::Reverse((*pages, *bytes)));
            rules.truncate(budget);
        }
        let mut compact = Compact {
            folders: Vec::new(),
            entries: Vec::new(),
            pages: rules.iter().map(|(pages, ..)| pages).sum(),
        };
        for (.., rule) in rules {
            match rule {
                Ok(folder) => compact.folders.push(folder),
                Err(entry) => compact.entries.push(entry),
            }
        }
        compact.folders.sort_by(|x, y| x.folder.cmp(&y.folder));
        compact
            .entries
            .sort_by(|x, y| x.kind.cmp(&y.kind).then(x.target.cmp(&y.target)));
        compact
    }

    /// By page of `table`: whether a crawler loading the compact form
    /// (`wget`, `browsertrix`) skips it.
    pub fn compact_skipped(&self, table: &PageTable) -> Vec<bool> {
        let compact = self.compact();
        let mut skipped = vec![false; table.pages.len()];
        for rule in compact.folders {
            for index in under_prefix(table, &rule.folder) {
                if !rule
                    .except
                    .iter()
                    .any(|url| *url == *table.pages[index].url)
                {
                    skipped[index] = true;
                }
            }
        }
        for entry in compact.entries {
            for index in covered(table, entry) {
                skipped[index] = true;
            }
        }
        skipped
    }

    /// The pages a crawler loading the list in `format` must seed: the
    /// ones it keeps that only pages it skips link to ([`seeds`]).
    pub fn seeds(&self, table: &PageTable, format: AvoidFormat) -> Vec<String> {
        match format {
            AvoidFormat::Wget | AvoidFormat::Browsertrix => {
                seeds(table, &self.compact_skipped(table))
            }
            AvoidFormat::Prefix | AvoidFormat::Heritrix => seeds(table, &self.skipped(table)),
        }
    }

    /// The regular expressions of the list (PCRE, JavaScript and Python
    /// read them alike): the folder rules, then the entries no folder rule
    /// covers, within the budget.
    pub fn regexes(&self) -> Vec<String> {
        self.compact().regexes()
    }

    /// The list as one regular expression (wget reads one): the rules
    /// skipping URL prefixes share the prefixes' common folders, so that
    /// a copy's many single pages cost their names only; an empty list
    /// matches nothing.
    pub fn one_regex(&self) -> String {
        self.compact().one_regex()
    }

    /// The list in Heritrix's form: a SURT prefix for each entry that,
    /// read as Heritrix reads it (`https` as `http`, in lower case), skips
    /// no URL of `table`, the crawl the list was made from, that the list
    /// keeps; the others are left out and counted in the header.
    pub fn render_heritrix(&self, table: &PageTable) -> String {
        let skipped = self.skipped(table);
        // Every crawled URL in Heritrix's reading, sorted, with whether the
        // list skips it.
        let mut crawled: Vec<(String, bool)> = table
            .pages
            .iter()
            .zip(&skipped)
            .filter_map(|(page, &skipped)| Some((surt::heritrix(&page.url)?, skipped)))
            .collect();
        crawled.sort_unstable();
        // Whether every crawled URL a prefix starts is one the list skips.
        let skips_only_skipped = |prefix: &str| {
            let start = crawled.partition_point(|(surt, _)| surt.as_str() < prefix);
            crawled[start..]
                .iter()
                .take_while(|(surt, _)| surt.starts_with(prefix))
                .all(|&(_, skipped)| skipped)
        };
        let mut prefixes: Vec<String> = Vec::new();
        let mut left_out = 0;
        for entry in &self.entries {
            let prefix = match entry.kind {
                AvoidKind::Prefix => surt::heritrix(&entry.target),
                AvoidKind::Host => surt::heritrix(&format!("http://{}/", entry.target))
                    .and_then(|surt| surt.find(')').map(|end| surt[..=end].to_string())),
                AvoidKind::Alias => None,
            };
            match prefix {
                Some(prefix) if skips_only_skipped(&prefix) => prefixes.push(prefix),
                _ => left_out += 1,
            }
        }
        prefixes.sort_unstable();
        prefixes.dedup();
        let mut covered = vec![false; crawled.len()];
        for prefix in &prefixes {
            let start = crawled.partition_point(|(surt, _)| surt < prefix);
            for (flag, _) in covered[start..]
                .iter_mut()
                .zip(&crawled[start..])
                .take_while(|(_, (surt, _))| surt.starts_with(prefix.as_str()))
            {
                *flag = true;
            }
        }
        let pages = covered.iter().filter(|&&covered| covered).count();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# mirrorscope avoid list, generation {} (cho-2000 §5.1): {} SURT prefixes for the {} entries of the prefix list; a crawler following them skips {pages} of {} pages",
            self.generation,
            prefixes.len(),
            self.entries.len(),
            self.pages
        );
        let _ = writeln!(
            out,
            "# Heritrix 3: a SurtPrefixedDecideRule with decision REJECT and surtsSourceFile THIS_FILE (a `+` line is a SURT prefix; https is read as http, all in lower case)"
        );
        let _ = writeln!(
            out,
            "# {left_out} entries left out: an alias names no prefix, and a prefix read that way would also skip a crawled URL the list keeps"
        );
        for prefix in prefixes {
            let _ = writeln!(out, "+{prefix}");
        }
        out
    }

    /// The list in `format`.
    pub fn render(&self, format: AvoidFormat) -> String {
        let mut out = String::new();
        match format {
            AvoidFormat::Prefix | AvoidFormat::Heritrix => {
                let _ = write!(out, "{self}");
            }
            AvoidFormat::Wget => {
                let compact = self.compact();
                self.header(&mut out, &compact);
                out.push_str(
                    "# wget --regex-type=pcre --reject-regex \"$(grep -v '^#' THIS_FILE)\" ...\n",
                );
                out.push_str(&compact.one_regex());
                out.push('\n');
            }
            AvoidFormat::Browsertrix => {
                let compact = self.compact();
                self.header(&mut out, &compact);
                let regexes = compact.regexes();
                out.push_str(
                    "# browsertrix-crawler --config THIS_FILE (or merge into a crawl config)\n",
                );
                out.push_str(if regexes.is_empty() {
                    "exclude: []\n"
                } else {
                    "exclude:\n"
                });
                for regex in regexes {
                    // A single-quoted YAML string: backslashes are literal,
                    // a quote is doubled.
                    let _ = writeln!(out, "  - '{}'", regex.replace('\'', "''"));
                }
            }
        }
        out
    }

    fn header(&self, out: &mut String, compact: &Compact<'_>) {
        let found = self.entries.len() + self.beyond.len();
        let _ = writeln!(
            out,
            "# mirrorscope avoid list, generation {} (cho-2000 §5.1): {} rules for the {found} entries found; a crawler following them skips {} of {} pages",
            self.generation,
            compact.folders.len() + compact.entries.len(),
            compact.pages,
            self.pages
        );
    }
}

/// A regular expression for a folder rule: the folder, unless the rest of
/// the URL is one of the exceptions.
fn folder_regex(rule: &FolderRule) -> String {
    format!("^{}{}", escape(&rule.folder), folder_tail(rule))
}

/// What follows a folder rule's folder: unless the rest of the URL is one of
/// the exceptions.
fn folder_tail(rule: &FolderRule) -> String {
    if rule.except.is_empty() {
        return String::new();
    }
    let rests: Vec<String> = rule
        .except
        .iter()
        .filter_map(|url| url.strip_prefix(&rule.folder))
        .map(escape)
        .collect();
    format!("(?!(?:{})$)", rests.join("|"))
}

/// URL prefixes by their segments (each up to and with its `/`), each rule
/// ending at a node with what follows its prefix (a look-ahead, or nothing:
/// any rest).
#[derive(Default)]
struct Trie {
    children: std::collections::BTreeMap<String, Trie>,
    tails: Vec<String>,
}

impl Trie {
    fn is_empty(&self) -> bool {
        self.children.is_empty() && self.tails.is_empty()
    }

    fn insert(&mut self, prefix: &str, tail: String) {
        let mut node = self;
        for segment in prefix.split_inclusive('/') {
            node = node.children.entry(segment.to_string()).or_default();
        }
        node.tails.push(tail);
    }

    /// The expression matching what follows this node's prefix.
    fn render(&self) -> String {
        // A rule skipping every rest covers the others here.
        if self.tails.iter().any(String::is_empty) {
            return String::new();
        }
        let mut alternatives: Vec<String> = self.tails.clone();
        alternatives.extend(
            self.children
                .iter()
                .map(|(segment, child)| format!("{}{}", escape(segment), child.render())),
        );
        match alternatives.len() {
            1 => alternatives.remove(0),
            _ => format!("(?:{})", alternatives.join("|")),
        }
    }
}

/// The scheme and host (with its port, as the list names hosts) of a
/// host's URLs.
fn host_regex(host: &str) -> String {
    format!("^https?://{}", escape(host))
}

/// A regular expression matching exactly the URLs an entry covers.
fn entry_regex(entry: &AvoidEntry) -> String {
    match entry.kind {
        AvoidKind::Prefix => format!("^{}", escape(&entry.target)),
        AvoidKind::Host => format!("{}(?:[/?#]|$)", host_regex(&entry.target)),
        AvoidKind::Alias => {
            let Some((name, token)) = entry.target.split_once(' ') else {
                return String::from("^$");
            };
            let host = host_regex(name);
            match Variation::from_token(token) {
                Some(Variation::Parameter(names)) => {
                    let present: String = names
                        .split('&')
                        .map(|name| format!("(?=(?:[^#]*&)?{}(?:[=&#]|$))", escape(name)))
                        .collect();
                    format!("{host}/[^?#]*\\?{present}")
                }
                Some(Variation::PathParameter(name)) => format!(
                    "{host}/(?:[^?#]*/)?[^/?#;]*(?:;[^/?#;]*)*;{}(?:=[^/?#;]*)?(?:;[^/?#;]*)*(?:[?#].*)?$",
                    escape(&name)
                ),
                Some(Variation::IndexFile) => format!(
                    "{host}/(?:[^?#]*/)?(?:[Ii][Nn][Dd][Ee][Xx]|[Dd][Ee][Ff][Aa][Uu][Ll][Tt])\\.[A-Za-z0-9]+(?:[?#].*)?$"
                ),
                Some(Variation::Case) => format!("{host}/[^?#]*[A-Z]"),
                Some(Variation::Scheme) => format!("^http://{}[/?#:]", escape(name)),
                None => String::from("^$"),
            }
        }
    }
}

/// Escapes what regular expressions read as syntax.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.^$*+?()[]{}|".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_list_skips_nothing_in_every_form() {
        let list = AvoidList {
            generation: "gen-test".into(),
            pages: 3,
            bytes: 30,
            documents: 3,
            budget: None,
            pages_saved: 0,
            bytes_saved: 0,
            entries: Vec::new(),
            left_out: Default::default(),
            folders: Vec::new(),
            beyond: Vec::new(),
            seeds: Vec::new(),
        };
        let wget = list.render(AvoidFormat::Wget);
        assert_eq!(wget.lines().last(), Some("(?!)"), "{wget}");
        let browsertrix = list.render(AvoidFormat::Browsertrix);
        assert!(browsertrix.ends_with("exclude: []\n"), "{browsertrix}");
    }

    #[test]
    fn a_host_entry_is_that_host_and_port_only() {
        let entry = |kind, target: &str| AvoidEntry {
            kind,
            target: target.into(),
            pages: 1,
            bytes: 1,
            keep: String::new(),
            digest: String::new(),
        };
        assert_eq!(
            entry_regex(&entry(AvoidKind::Host, "www.example.org")),
            "^https?://www\\.example\\.org(?:[/?#]|$)"
        );
        assert_eq!(
            entry_regex(&entry(AvoidKind::Alias, "example.org:8080 ;jsessionid")),
            "^https?://example\\.org:8080/(?:[^?#]*/)?[^/?#;]*(?:;[^/?#;]*)*;jsessionid(?:=[^/?#;]*)?(?:;[^/?#;]*)*(?:[?#].*)?$"
        );
    }

    #[test]
    fn heritrix_gets_only_the_prefixes_that_skip_nothing_kept_in_its_reading() {
        use crate::ingest::Capture;
        use crate::report::avoid::tests::{avoid, copy, manual};
        use crate::test_support::capture;
        use crate::test_support::manuals::{all, serve};

        // The manual, an exact mirror, and a mirror under `/Docs/` whose
        // host serves a page of its own under `/docs/`: Heritrix reads every
        // SURT in lower case and would skip that page.
        let manual = manual();
        let mut captures: Vec<Capture> = [
            copy("www.example.org", "/docs/", &[], &all),
            copy("mirror.example.net", "/docs/", &[], &all),
            copy("upper.example.com", "/Docs/", &[], &all),
        ]
        .iter()
        .flat_map(|c| serve(&manual, c))
        .collect();
        captures.push(capture(
            "http://upper.example.com/docs/notes.html",
            "Release notes of the upper host\nNothing of the manual is here",
        ));
        let (table, _, list) = avoid(&captures);
        let targets: Vec<&str> = list.entries.iter().map(|e| e.target.as_str()).collect();
        assert!(
            targets.contains(&"http://upper.example.com/Docs/"),
            "{list}"
        );
        let heritrix = list.render_heritrix(&table);
        let prefixes: Vec<&str> = heritrix
            .lines()
            .filter_map(|line| line.strip_prefix('+'))
            .collect();
        assert!(
            !prefixes.contains(&"http://(com,example,upper,)/docs/"),
            "{heritrix}"
        );
        assert_eq!(prefixes.len(), list.entries.len() - 1, "{heritrix}");
        // Read as Heritrix reads it, the form skips only what the list skips.
        for page in &table.pages {
            let read = surt::heritrix(&page.url).unwrap();
            if prefixes.iter().any(|prefix| read.starts_with(prefix)) {
                assert!(list.avoids(&page.url), "{} is kept", page.url);
            }
        }
        assert!(heritrix.contains("1 entries left out"), "{heritrix}");
    }

    #[test]
    fn regexes_escape_what_a_url_holds() {
        assert_eq!(
            escape("http://a.b/c(1).html?x=1"),
            "http://a\\.b/c\\(1\\)\\.html\\?x=1"
        );
    }
}
