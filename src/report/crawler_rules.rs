//! The avoid list in the forms crawlers read (`mirrorscope avoid --format`).
//!
//! - `prefix`: the list as it is ([`AvoidList`]'s text), one entry a line;
//! - `wget`: one regular expression for `wget --regex-type=pcre
//!   --reject-regex`, each copy's entries one rule with its exceptions as a
//!   negative look-ahead ([`super::avoid::FolderRule`]);
//! - `browsertrix`: the same rules as browsertrix-crawler's `exclude` list
//!   (YAML, one JavaScript regular expression each);
//! - `heritrix`: SURT prefixes for a Heritrix `SurtPrefixedDecideRule`
//!   reject file. A SURT prefix holds no exception nor query parameter, so
//!   it lists the prefix and host entries one by one, and the ways a host
//!   names a page twice as comments.
//!
//! Every form skips the same crawled URLs: the look-ahead keeps exactly the
//! URLs of the crawl under a folder that no entry skips.

use std::fmt::Write;

use super::avoid::{AvoidEntry, AvoidKind, AvoidList, FolderRule};
use crate::similarity::aliases::Variation;

/// The forms of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AvoidFormat {
    Prefix,
    Wget,
    Browsertrix,
    Heritrix,
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
                let joined: Vec<String> = regexes.iter().map(|r| format!("(?:{r})")).collect();
                out.push_str(&joined.join("|"));
                out.push('\n');
            }
            AvoidFormat::Browsertrix => {
                let regexes = self.regexes();
                self.header(&mut out, "#", regexes.len());
                out.push_str(
                    "# browsertrix-crawler --config THIS_FILE (or merge into a crawl config)\n",
                );
                out.push_str("exclude:\n");
                for regex in regexes {
                    // A single-quoted YAML string: backslashes are literal,
                    // a quote is doubled.
                    let _ = writeln!(out, "  - '{}'", regex.replace('\'', "''"));
                }
            }
            AvoidFormat::Heritrix => {
                let lines: Vec<String> = self.entries.iter().flat_map(surt_lines).collect();
                let prefixes = lines.iter().filter(|line| !line.starts_with('#')).count();
                self.header(&mut out, "#", prefixes);
                out.push_str("# SURT prefixes to reject (Heritrix SurtPrefixedDecideRule, decision REJECT)\n");
                for line in lines {
                    out.push_str(&line);
                    out.push('\n');
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
    let mut regex = format!("^{}", escape(&rule.folder));
    if !rule.except.is_empty() {
        let rests: Vec<String> = rule
            .except
            .iter()
            .filter_map(|url| url.strip_prefix(&rule.folder))
            .map(escape)
            .collect();
        let _ = write!(regex, "(?!(?:{})$)", rests.join("|"));
    }
    regex
}

/// The scheme, host and port of a host's URLs.
fn host_regex(host: &str) -> String {
    let port = if host.contains(':') {
        ""
    } else {
        "(?::[0-9]+)?"
    };
    format!("^https?://{}{port}", escape(host))
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

/// The SURT form of a URL prefix: `http://(org,example,www,)/docs/`.
fn surt(prefix: &str) -> Option<String> {
    let (scheme, rest) = prefix.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => (host, Some(port)),
        _ => (authority, None),
    };
    let mut surt = format!("{}://(", scheme.to_ascii_lowercase());
    for label in host.to_ascii_lowercase().split('.').rev() {
        surt.push_str(label);
        surt.push(',');
    }
    if let Some(port) = port {
        surt.push(':');
        surt.push_str(port);
    }
    surt.push(')');
    surt.push_str(path);
    Some(surt)
}

/// An entry's lines in a Heritrix SURT-prefix file.
fn surt_lines(entry: &AvoidEntry) -> Vec<String> {
    match entry.kind {
        AvoidKind::Prefix => surt(&entry.target).into_iter().collect(),
        AvoidKind::Host => ["http", "https"]
            .iter()
            .filter_map(|scheme| surt(&format!("{scheme}://{}/", entry.target)))
            .map(|line| line.trim_end_matches('/').to_string())
            .collect(),
        AvoidKind::Alias => vec![format!(
            "# not a prefix, left to the crawler's URL canonicalization: {} ({})",
            entry.target, entry.keep
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surt_prefixes_reverse_the_host() {
        assert_eq!(
            surt("http://www.Example.org/docs/").as_deref(),
            Some("http://(org,example,www,)/docs/")
        );
        assert_eq!(
            surt("https://mirror.example.net:8080/pub/").as_deref(),
            Some("https://(net,example,mirror,:8080)/pub/")
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
