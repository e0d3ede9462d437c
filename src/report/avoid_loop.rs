//! `mirrorscope avoid --previous LIST`: the loop cho-2000 §5.1 ends with
//! and did not build. A crawl's avoid list is checked against the next
//! crawl: the entries that still hold (the same target skipping the same
//! URLs and bodies, whichever copy is kept), those that come off (what
//! they skipped is no longer crawled, changed, or lost its kept copy), and
//! the new ones; and a revisit schedule, the skipped URLs to fetch again so
//! that the next change is seen.
//!
//! The schedule follows fetterly-2004 §3: clusters of copies are stable
//! from one crawl to the next, so a crawler need not fetch every copy again,
//! only enough of each to notice that it changed. The loop measures how
//! many of the skipped pages sat under entries that changed between the
//! two crawls; each entry that holds is revisited with as many of its pages
//! as give a 95% chance of seeing a change at that rate.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use serde::Serialize;

use super::avoid::{covered, AvoidEntry, AvoidKind, AvoidList};
use crate::generation::{DataError, Result};
use crate::pages::PageTable;

/// The chance of seeing a change that the revisit schedule aims at.
const SEEN: f64 = 0.95;

/// One entry of the earlier list, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviousEntry {
    pub kind: AvoidKind,
    pub target: String,
    pub pages: u64,
    pub keep: String,
    /// Absent in lists written before the digest column.
    pub digest: Option<String>,
}

/// An earlier list: its entries and the lines that could not be read.
#[derive(Debug, Clone, Default)]
pub struct PreviousList {
    pub entries: Vec<PreviousEntry>,
    /// `line number: what is wrong`, for each line skipped.
    pub bad_lines: Vec<String>,
}

impl PreviousList {
    /// Reads a list `mirrorscope avoid` wrote (the prefix form). A line
    /// that is not an entry is skipped and counted; the rest are read.
    pub fn read(path: &Path) -> Result<PreviousList> {
        let text = std::fs::read_to_string(path).map_err(|source| DataError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let list = PreviousList::parse(&text);
        if list.entries.is_empty() && !list.bad_lines.is_empty() {
            return Err(DataError::Format {
                path: path.to_path_buf(),
                detail: format!(
                    "not an avoid list in the prefix form (`mirrorscope avoid`): {}",
                    list.bad_lines[0]
                ),
            });
        }
        Ok(list)
    }

    pub fn parse(text: &str) -> PreviousList {
        let mut list = PreviousList::default();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            match parse_line(line) {
                Ok(entry) => list.entries.push(entry),
                Err(what) => list.bad_lines.push(format!("line {}: {what}", number + 1)),
            }
        }
        list
    }
}

fn parse_line(line: &str) -> std::result::Result<PreviousEntry, String> {
    let fields: Vec<&str> = line.split('\t').collect();
    if fields.len() < 5 {
        return Err(format!(
            "{} tab-separated fields, an entry has 5 or 6",
            fields.len()
        ));
    }
    let kind =
        AvoidKind::from_name(fields[0]).ok_or_else(|| format!("unknown kind {:?}", fields[0]))?;
    let pages = fields[2]
        .parse()
        .map_err(|_| format!("pages {:?} is not a number", fields[2]))?;
    if fields[1].is_empty() {
        return Err("empty target".into());
    }
    Ok(PreviousEntry {
        kind,
        target: fields[1].to_string(),
        pages,
        keep: fields[4].to_string(),
        digest: fields
            .get(5)
            .filter(|digest| !digest.is_empty())
            .map(|digest| digest.to_string()),
    })
}

/// What became of an earlier entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The new list has it, skipping the same URLs and bodies (kept at
    /// the same place, or at another copy of them).
    Held,
    /// It skips no URL of the new crawl: the copy is gone or moved.
    Gone,
    /// What it skipped changed: other bodies, or pages that no longer have
    /// a copy kept.
    Changed,
    /// The same pages are skipped, by other entries.
    Reshaped,
}

/// One entry of the earlier list and what became of it.
#[derive(Debug, Clone, Serialize)]
pub struct LoopEntry {
    pub kind: AvoidKind,
    pub target: String,
    /// Pages it covered in the earlier crawl, and now.
    pub pages_before: u64,
    pub pages_now: u64,
    pub verdict: Verdict,
    pub reason: String,
}

/// The skipped URLs to fetch again.
#[derive(Debug, Clone, Serialize)]
pub struct Revisit {
    /// Pages under the earlier entries still crawled, and those under the
    /// entries that changed.
    pub pages_before: u64,
    pub pages_changed: u64,
    /// The chance a skipped page changed between the two crawls (add-one
    /// smoothed: never 0 from one quiet interval).
    pub change_rate: f64,
    /// Pages fetched again per entry that holds.
    pub per_entry: u64,
    pub urls: Vec<String>,
}

/// The answer of `avoid --previous`.
#[derive(Debug, Clone, Serialize)]
pub struct AvoidLoop {
    pub generation: String,
    pub previous: String,
    pub bad_lines: Vec<String>,
    /// The earlier list's entries, in its order.
    pub entries: Vec<LoopEntry>,
    /// Entries of the new list that no earlier entry held.
    pub new: Vec<AvoidEntry>,
    pub revisit: Revisit,
}

impl AvoidLoop {
    /// Checks `previous` against `list`, the list of the crawl in `table`.
    pub fn of(
        list: &AvoidList,
        table: &PageTable,
        previous: &PreviousList,
        previous_name: &str,
    ) -> AvoidLoop {
        let now: HashMap<(AvoidKind, &str), &AvoidEntry> = list
            .entries
            .iter()
            .map(|entry| ((entry.kind, entry.target.as_str()), entry))
            .collect();
        let skipped = list.skipped(table);
        let mut held: Vec<(&AvoidEntry, Vec<usize>)> = Vec::new();
        let mut entries = Vec::new();
        for old in &previous.entries {
            let probe = AvoidEntry {
                kind: old.kind,
                target: old.target.clone(),
                pages: old.pages,
                bytes: 0,
                keep: old.keep.clone(),
                digest: String::new(),
            };
            let pages = covered(table, &probe);
            let unkept = pages.iter().filter(|&&index| !skipped[index]).count();
            let (verdict, reason) = match now.get(&(old.kind, old.target.as_str())) {
                _ if pages.is_empty() => (Verdict::Gone, "no crawled URL is under it now".into()),
                Some(new) if old.digest.as_ref().is_some_and(|d| *d != new.digest) => (
                    Verdict::Changed,
                    format!(
                        "the URLs or bodies it skips changed ({} pages before, {} now)",
                        old.pages, new.pages
                    ),
                ),
                Some(new) => {
                    held.push((new, pages.clone()));
                    let reason = if new.keep == old.keep {
                        String::new()
                    } else {
                        // Another copy of the same bytes stands for it.
                        format!("kept at {} now, not {}", new.keep, old.keep)
                    };
                    (Verdict::Held, reason)
                }
                None if unkept > 0 => (
                    Verdict::Changed,
                    format!(
                        "{unkept} of its {} pages have no copy kept now",
                        pages.len()
                    ),
                ),
                None => (
                    Verdict::Reshaped,
                    "its pages are skipped by other entries".into(),
                ),
            };
            entries.push(LoopEntry {
                kind: old.kind,
                target: old.target.clone(),
                pages_before: old.pages,
                pages_now: pages.len() as u64,
                verdict,
                reason,
            });
        }
        let held_targets: std::collections::HashSet<(AvoidKind, &str)> = held
            .iter()
            .map(|(entry, _)| (entry.kind, entry.target.as_str()))
            .collect();
        let new = list
            .entries
            .iter()
            .filter(|entry| !held_targets.contains(&(entry.kind, entry.target.as_str())))
            .cloned()
            .collect();
        let revisit = revisit(table, &previous.entries, &entries, &held);
        AvoidLoop {
            generation: list.generation.clone(),
            previous: previous_name.to_string(),
            bad_lines: previous.bad_lines.clone(),
            entries,
            new,
            revisit,
        }
    }

    pub fn count(&self, verdict: Verdict) -> usize {
        self.entries
            .iter()
            .filter(|entry| entry.verdict == verdict)
            .count()
    }
}

/// The schedule: from the share of skipped pages whose entry changed, the
/// pages of each entry that holds to fetch again, spread over its URLs.
fn revisit(
    table: &PageTable,
    previous: &[PreviousEntry],
    entries: &[LoopEntry],
    held: &[(&AvoidEntry, Vec<usize>)],
) -> Revisit {
    let mut pages_before = 0;
    let mut pages_changed = 0;
    for (old, entry) in previous.iter().zip(entries) {
        if entry.verdict != Verdict::Gone {
            pages_before += old.pages;
        }
        if entry.verdict == Verdict::Changed {
            pages_changed += old.pages;
        }
    }
    let change_rate = (pages_changed as f64 + 1.0) / (pages_before as f64 + 2.0);
    let per_entry = pages_to_see(change_rate);
    let mut urls = Vec::new();
    for (_, pages) in held {
        let take = (per_entry as usize).min(pages.len());
        for n in 0..take {
            // Evenly over the entry's URLs: the first, then across.
            let index = pages[n * pages.len() / take];
            urls.push(table.pages[index].url.to_string());
        }
    }
    Revisit {
        pages_before,
        pages_changed,
        change_rate,
        per_entry,
        urls,
    }
}

/// How many pages, each changed with chance `rate`, show at least one
/// change with chance [`SEEN`].
fn pages_to_see(rate: f64) -> u64 {
    if rate >= 1.0 {
        return 1;
    }
    ((1.0 - SEEN).ln() / (1.0 - rate).ln()).ceil().max(1.0) as u64
}

impl fmt::Display for AvoidLoop {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            formatter,
            "# mirrorscope avoid --previous {}: generation {} (cho-2000 §5.1)",
            self.previous, self.generation
        )?;
        writeln!(
            formatter,
            "# {} earlier entries: {} held, {} changed, {} gone, {} reshaped; {} new entries{}",
            self.entries.len(),
            self.count(Verdict::Held),
            self.count(Verdict::Changed),
            self.count(Verdict::Gone),
            self.count(Verdict::Reshaped),
            self.new.len(),
            if self.bad_lines.is_empty() {
                String::new()
            } else {
                format!("; {} lines not read", self.bad_lines.len())
            }
        )?;
        for bad in &self.bad_lines {
            writeln!(formatter, "# not read: {bad}")?;
        }
        writeln!(
            formatter,
            "# revisit: {} of {} skipped pages were under entries that changed (rate {:.3}); fetch {} pages of each entry that holds again each crawl to see such a change with chance {SEEN}",
            self.revisit.pages_changed,
            self.revisit.pages_before,
            self.revisit.change_rate,
            self.revisit.per_entry
        )?;
        writeln!(
            formatter,
            "# verdict\tkind\ttarget\tpages before\tpages now\treason (held, changed, gone, reshaped: take the earlier entry off unless held); new\tkind\ttarget\tpages\tbytes\tkeep\tdigest; revisit\tURL"
        )?;
        for entry in &self.entries {
            writeln!(
                formatter,
                "{}\t{}\t{}\t{}\t{}\t{}",
                match entry.verdict {
                    Verdict::Held => "held",
                    Verdict::Gone => "gone",
                    Verdict::Changed => "changed",
                    Verdict::Reshaped => "reshaped",
                },
                entry.kind.name(),
                entry.target,
                entry.pages_before,
                entry.pages_now,
                entry.reason
            )?;
        }
        for entry in &self.new {
            writeln!(formatter, "new\t{entry}")?;
        }
        for url in &self.revisit.urls {
            writeln!(formatter, "revisit\t{url}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Capture;
    use crate::report::avoid::tests::{avoid, copy, manual};
    use crate::test_support::manuals::{all, serve};

    #[test]
    fn the_next_crawl_keeps_what_holds_takes_off_what_changed_and_adds_the_new() {
        let manual = manual();
        let crawl = |copies: &[crate::test_support::manuals::HostCopy]| -> Vec<Capture> {
            copies.iter().flat_map(|c| serve(&manual, c)).collect()
        };
        let first = crawl(&[
            copy("www.example.org", "/docs/", &[], &all),
            copy("mirror.example.net", "/pub/docs/", &[], &all),
            copy("gone.example.com", "/docs/", &[], &all),
            copy("old.example.net", "/v1/docs/", &["api/page1.html"], &all),
        ]);
        let (_, _, earlier) = avoid(&first);
        let previous = PreviousList::parse(&earlier.to_string());
        assert!(previous.bad_lines.is_empty(), "{:?}", previous.bad_lines);
        assert_eq!(previous.entries.len(), earlier.entries.len());
        // The next crawl: one mirror gone, the old version changed one page
        // more, a new mirror (which may be the copy kept now: one of the two
        // identical copies is new in the list).
        let second = crawl(&[
            copy("www.example.org", "/docs/", &[], &all),
            copy("mirror.example.net", "/pub/docs/", &[], &all),
            copy(
                "old.example.net",
                "/v1/docs/",
                &["api/page1.html", "api/page4.html"],
                &all,
            ),
            copy("new.example.org", "/docs/", &[], &all),
        ]);
        let (table, _, now) = avoid(&second);
        let answer = AvoidLoop::of(&now, &table, &previous, "earlier.txt");
        let verdict = |target: &str| {
            answer
                .entries
                .iter()
                .find(|entry| entry.target == target)
                .map(|entry| entry.verdict)
        };
        assert_eq!(
            verdict("http://mirror.example.net/pub/docs/"),
            Some(Verdict::Held),
            "{answer}"
        );
        assert_eq!(
            verdict("http://gone.example.com/docs/"),
            Some(Verdict::Gone),
            "{answer}"
        );
        // The entry that skipped the page that changed comes off; the old
        // version's other entries hold.
        for entry in &answer.entries {
            if entry.target.starts_with("http://old.example.net/") {
                let covers_change =
                    "http://old.example.net/v1/docs/api/page4.html".starts_with(&entry.target);
                assert_eq!(entry.verdict != Verdict::Held, covers_change, "{answer}");
            }
        }
        assert!(
            answer
                .new
                .iter()
                .any(|entry| entry.target == "http://new.example.org/docs/"
                    || entry.target == "http://www.example.org/docs/"),
            "{answer}"
        );
        assert!(!answer
            .new
            .iter()
            .any(|entry| entry.target == "http://mirror.example.net/pub/docs/"));
        // The pages to fetch again lie under entries that hold.
        assert!(!answer.revisit.urls.is_empty());
        for url in &answer.revisit.urls {
            let under = answer
                .entries
                .iter()
                .any(|entry| entry.verdict == Verdict::Held && url.starts_with(&entry.target));
            assert!(under, "{url} is under no entry that holds:\n{answer}");
        }
        assert!(answer.revisit.pages_changed > 0);
    }

    #[test]
    fn an_earlier_list_is_read_line_by_line_and_a_bad_line_is_counted() {
        let text = "# header\n\
            prefix\thttp://a.example/docs/\t3\t30\thttp://b.example/docs/\t00ff\n\
            host\talias.example\t2\t20\tb.example\n\
            prefix\thttp://a.example/x\tmany\t1\tkeep\n\
            folder\thttp://a.example/y/\t1\t1\tkeep\n\
            \n";
        let list = PreviousList::parse(text);
        assert_eq!(
            list.entries,
            [
                PreviousEntry {
                    kind: AvoidKind::Prefix,
                    target: "http://a.example/docs/".into(),
                    pages: 3,
                    keep: "http://b.example/docs/".into(),
                    digest: Some("00ff".into()),
                },
                PreviousEntry {
                    kind: AvoidKind::Host,
                    target: "alias.example".into(),
                    pages: 2,
                    keep: "b.example".into(),
                    digest: None,
                },
            ]
        );
        assert_eq!(list.bad_lines.len(), 2, "{:?}", list.bad_lines);
        assert!(list.bad_lines[0].starts_with("line 4: pages"));
        assert!(list.bad_lines[1].starts_with("line 5: unknown kind"));
    }

    #[test]
    fn the_pages_to_fetch_again_see_a_change_at_the_measured_rate() {
        // fetterly-2004's clusters change little: one page in twenty a
        // crawl wants 59 pages for a 95% chance; one in two wants 5.
        assert_eq!(pages_to_see(0.05), 59);
        assert_eq!(pages_to_see(0.5), 5);
        assert_eq!(pages_to_see(1.0), 1);
        for rate in [0.01, 0.1, 0.3, 0.7] {
            let n = pages_to_see(rate);
            let missed = (1.0 - rate).powi(n as i32);
            assert!(missed <= 1.0 - SEEN, "{rate}: {n} pages miss {missed}");
            assert!((1.0 - rate).powi(n as i32 - 1) > 1.0 - SEEN);
        }
    }
}
