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
//! (Heritrix reads SURT prefixes, which hold no exception, and compares them
//! with `https` read as `http` and in lower case: a prefix for an https copy
//! or a case-sensitive path would skip pages the list keeps. Its form waits
//! for a check of each prefix against the crawl in that reading.)

use std::fmt::Write;

use super::avoid::{AvoidEntry, AvoidKind, AvoidList, FolderRule};
use crate::similarity::aliases::Variation;

/// The forms of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AvoidFormat {
    Prefix,
    Wget,
    Browsertrix,
}

impl AvoidList {
    /// The regular expressions of the list (PCRE, JavaScript and Python
    /// read them alike): the folder rules, then the entries no folder rule
    /// covers.
    pub fn regexes(&self) -> Vec<String> {
        self.folders
            .iter()
            .map(folder_regex)
            .chain(self.outside_folders().map(entry_regex))
            .collect()
    }

    /// The list as one regular expression (wget reads one): the rules
    /// skipping URL prefixes share the prefixes' common folders, so that
    /// a copy's many single pages cost their names only; an empty list
    /// matches nothing.
    pub fn one_regex(&self) -> String {
        let mut trie = Trie::default();
        let mut others = Vec::new();
        for rule in &self.folders {
            trie.insert(&rule.folder, folder_tail(rule));
        }
        for entry in self.outside_folders() {
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

    /// The list in `format`.
    pub fn render(&self, format: AvoidFormat) -> String {
        let mut out = String::new();
        match format {
            AvoidFormat::Prefix => {
                let _ = write!(out, "{self}");
            }
            AvoidFormat::Wget => {
                let regexes = self.regexes();
                self.header(&mut out, "#", regexes.len());
                out.push_str(
                    "# wget --regex-type=pcre --reject-regex \"$(grep -v '^#' THIS_FILE)\" ...\n",
                );
                out.push_str(&self.one_regex());
                out.push('\n');
            }
            AvoidFormat::Browsertrix => {
                let regexes = self.regexes();
                self.header(&mut out, "#", regexes.len());
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

    fn header(&self, out: &mut String, comment: &str, rules: usize) {
        let _ = writeln!(
            out,
            "{comment} mirrorscope avoid list, generation {} (cho-2000 §5.1): {rules} rules for the {} entries of the prefix list; a crawler following them skips {} of {} pages",
            self.generation,
            self.entries.len(),
            self.pages_saved,
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
            pages_saved: 0,
            bytes_saved: 0,
            entries: Vec::new(),
            folders: Vec::new(),
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
    fn regexes_escape_what_a_url_holds() {
        assert_eq!(
            escape("http://a.b/c(1).html?x=1"),
            "http://a\\.b/c\\(1\\)\\.html\\?x=1"
        );
    }
}
