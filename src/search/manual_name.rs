//! A manual's name as the facets show it. Its pages' titles name the
//! release they belong to ("PostgreSQL 15.20 Documentation", "Apache Tomcat
//! 10", "Apache HTTP Server Version 2.4"); a manual of several releases is
//! all of them, so its name leaves that release out, and each release of it
//! is named in the titles' own words ("PostgreSQL 13.23 Documentation").

/// A manual's name, and how to name one of its releases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManualName {
    /// Its name over its releases.
    name: String,
    /// The words of its titles before and after the release they name.
    around_release: Option<(String, String)>,
}

/// Words that only announce the release after them ("Version 2.4").
const RELEASE_WORDS: [&str; 4] = ["version", "release", "ver.", "rev."];

impl ManualName {
    /// The name of a manual whose pages' titles share `label`, whose
    /// principal copy is of `principal` (its version, if it names one) and
    /// whose copies name `releases`.
    pub fn of(label: String, principal: Option<&str>, releases: &[&str]) -> ManualName {
        let candidates: Vec<&str> = match principal {
            Some(version) => vec![version],
            None => releases.to_vec(),
        };
        let Some(word) = release_word(&label, &candidates) else {
            return ManualName {
                name: label,
                around_release: None,
            };
        };
        let around_release = Some((
            label[..word.release].to_string(),
            label[word.end..].to_string(),
        ));
        let name = if releases.len() > 1 {
            without_release(&label, &word)
        } else {
            label
        };
        ManualName {
            name,
            around_release,
        }
    }

    /// Its name over its releases.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name of its release `release`.
    pub fn release(&self, release: &str) -> String {
        match &self.around_release {
            Some((before, after)) => format!("{before}{release}{after}"),
            None if self.name.contains(release) => self.name.clone(),
            None => format!("{} {release}", self.name),
        }
    }
}

/// Where a title's name gives a release.
struct ReleaseWord {
    /// The word's start (a `v` before the release included).
    start: usize,
    /// The release's start.
    release: usize,
    end: usize,
}

/// The first word of `label` that names one of `releases`: the release
/// itself, the first parts of it (`10` of `10.1.60`), or it with more parts
/// (`15.20` of `15`); a leading `v` (`v2.4`) is kept before it.
fn release_word(label: &str, releases: &[&str]) -> Option<ReleaseWord> {
    let is_word_char = |c: char| c.is_alphanumeric() || c == '.';
    let mut start = 0;
    while start < label.len() {
        let rest = &label[start..];
        let Some(skip) = rest.find(is_word_char) else {
            break;
        };
        let word_start = start + skip;
        let length = label[word_start..]
            .find(|c: char| !is_word_char(c))
            .unwrap_or(label.len() - word_start);
        let word = label[word_start..word_start + length].trim_end_matches('.');
        let end = word_start + word.len();
        start = word_start + length;
        let (release_start, value) = match word.strip_prefix(['v', 'V']) {
            Some(value) if value.starts_with(|c: char| c.is_ascii_digit()) => {
                (word_start + 1, value)
            }
            _ => (word_start, word),
        };
        if !value.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let names = |release: &&str| {
            value == *release || dotted_prefix(value, release) || dotted_prefix(release, value)
        };
        if releases.iter().any(names) {
            return Some(ReleaseWord {
                start: word_start,
                release: release_start,
                end,
            });
        }
    }
    None
}

/// Whether `short` is the first dot-separated parts of `long`.
fn dotted_prefix(short: &str, long: &str) -> bool {
    long.strip_prefix(short)
        .is_some_and(|rest| rest.starts_with('.'))
}

/// `label` without the release `word` names, nor a word announcing it.
fn without_release(label: &str, word: &ReleaseWord) -> String {
    let mut before = label[..word.start].trim_end();
    if let Some(space) = before.rfind(char::is_whitespace) {
        let last = &before[space + 1..];
        if RELEASE_WORDS
            .iter()
            .any(|announcing| last.eq_ignore_ascii_case(announcing))
        {
            before = before[..space].trim_end();
        }
    }
    let after = label[word.end..].trim_start();
    let joined = match after.chars().next() {
        Some(c) if c.is_alphanumeric() || c == '(' => format!("{before} {after}"),
        _ => format!("{before}{after}"),
    };
    let name = joined
        .trim_matches(|c: char| c.is_whitespace() || matches!(c, '-' | '–' | '—' | ',' | ':'))
        .to_string();
    if name.is_empty() {
        label.to_string()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names and release names of real manuals' titles, with their
    /// copies' releases.
    #[test]
    fn a_manual_of_several_releases_is_named_without_one_and_each_release_in_its_words() {
        let postgres = ManualName::of(
            "PostgreSQL 15.20 Documentation".into(),
            Some("15.20"),
            &["15.20", "14.15", "13.23"],
        );
        assert_eq!(postgres.name(), "PostgreSQL Documentation");
        assert_eq!(postgres.release("13.23"), "PostgreSQL 13.23 Documentation");
        assert_eq!(postgres.release("15.20"), "PostgreSQL 15.20 Documentation");

        // The title names the major release only.
        let tomcat = ManualName::of(
            "Apache Tomcat 10".into(),
            Some("10.1.60"),
            &["10.1.60", "10.1.55", "9.0.98"],
        );
        assert_eq!(tomcat.name(), "Apache Tomcat");
        assert_eq!(tomcat.release("10.1.40"), "Apache Tomcat 10.1.40");

        // A word announcing the release goes with it.
        let httpd = ManualName::of(
            "Apache HTTP Server Version 2.4".into(),
            Some("2.4"),
            &["2.4", "2.2"],
        );
        assert_eq!(httpd.name(), "Apache HTTP Server");
        assert_eq!(httpd.release("2.2"), "Apache HTTP Server Version 2.2");

        let sqlalchemy = ManualName::of(
            "SQLAlchemy v1.4: Documentation".into(),
            Some("1.4"),
            &["2.0", "1.4"],
        );
        assert_eq!(sqlalchemy.name(), "SQLAlchemy: Documentation");
        assert_eq!(sqlalchemy.release("2.0"), "SQLAlchemy v2.0: Documentation");
    }

    #[test]
    fn a_manual_of_one_release_keeps_its_name() {
        let httpd = ManualName::of(
            "Apache HTTP Server Version 2.4".into(),
            Some("2.4"),
            &["2.4"],
        );
        assert_eq!(httpd.name(), "Apache HTTP Server Version 2.4");
        assert_eq!(httpd.release("2.4"), "Apache HTTP Server Version 2.4");
    }

    /// A name that does not give the release is the manual's whole name;
    /// its releases follow it.
    #[test]
    fn a_name_without_its_release_is_kept_and_releases_follow_it() {
        let flask = ManualName::of(
            "Flask Documentation".into(),
            Some("3.1.x"),
            &["3.1.x", "2.2.x"],
        );
        assert_eq!(flask.name(), "Flask Documentation");
        assert_eq!(flask.release("2.2.x"), "Flask Documentation 2.2.x");
        // Numbers that are no release of it stay: a man page's section,
        // a product's name.
        let git = ManualName::of("git(1)".into(), None, &["2.43.0", "2.39.2"]);
        assert_eq!(git.name(), "git(1)");
        let python = ManualName::of(
            "Python 3.12 documentation for MP3 files".into(),
            Some("3.12"),
            &["3.12", "3.11"],
        );
        assert_eq!(python.name(), "Python documentation for MP3 files");
        // A name that is only the release stays whole.
        let bare = ManualName::of("2.4".into(), Some("2.4"), &["2.4", "2.2"]);
        assert_eq!(bare.name(), "2.4");
    }
}
