//! Helpers shared by the unit tests of several modules.

use crate::corpus::{CaptureInfo, RecordLocation};
use crate::ingest::Capture;
use crate::pages::PageTable;
use crate::similarity::{analyse, Fingerprint, Similarity, SimilarityConfig};
use crate::store::{signature_of, ContentKey};

/// A 200 capture of `url` whose body is `text` (one line per `\n`).
pub fn capture(url: &str, text: &str) -> Capture {
    capture_with_status(url, text, 200)
}

pub fn capture_with_status(url: &str, text: &str, status: u16) -> Capture {
    Capture {
        info: CaptureInfo {
            url: url.into(),
            date: "2026-11-20T12:00:00Z".into(),
            ip: None,
            payload_digest: None,
            status,
            location: RecordLocation {
                file: "test.warc".into(),
                offset: 0,
            },
        },
        content_key: Some(ContentKey {
            signature: signature_of(text.as_bytes()),
            volume: 0,
            overflow: 0,
        }),
        body_bytes: text.len() as u64,
        encoding: "UTF-8".into(),
        title: String::new(),
        links: crate::pages::Links::new(),
        revisit_of: None,
        fingerprint: Some(Box::new(Fingerprint::of_text(text))),
        language: Default::default(),
        canonical: None,
        versions: Box::default(),
        text_hosts: crate::pages::ThinList::new(),
        spilled: None,
    }
}

pub fn run(captures: &[Capture], config: &SimilarityConfig) -> (PageTable, Similarity) {
    let (table, fingerprints) = PageTable::build_with_fingerprints(&[captures]);
    let similarity = analyse(&table, fingerprints, config);
    (table, similarity)
}

/// Small synthetic webs of mirrored manuals, for the collections, mirrors
/// and avoid tests.
pub mod manuals {
    use super::capture;
    use crate::ingest::Capture;

    /// A documentation tree: its pages (paths below the manual's folder) and
    /// the links of each (paths too).
    pub struct Tree {
        /// Words every page of the manual's text has.
        pub name: &'static str,
        pub pages: Vec<(String, Vec<String>)>,
    }

    /// A manual: `index.html` linking to each section's `index.html`, which
    /// links to its pages, each linking back. A section named `a/b` is a
    /// sub-folder of section `a` and linked from `a/index.html` only.
    pub fn tree(name: &'static str, sections: &[(&str, usize)]) -> Tree {
        let mut pages = vec![("index.html".to_string(), Vec::new())];
        for &(section, count) in sections {
            let index = format!("{section}/index.html");
            let parent = match section.rsplit_once('/') {
                Some((parent, _)) => format!("{parent}/index.html"),
                None => "index.html".to_string(),
            };
            pages
                .iter_mut()
                .find(|(path, _)| *path == parent)
                .expect("sections are listed after their parent")
                .1
                .push(index.clone());
            let children: Vec<String> = (0..count)
                .map(|n| format!("{section}/page{n}.html"))
                .collect();
            pages.push((index.clone(), children.clone()));
            for child in children {
                pages.push((child, vec![index.clone()]));
            }
        }
        Tree { name, pages }
    }

    /// How one host serves a tree.
    pub struct HostCopy<'a> {
        pub host: &'a str,
        pub prefix: &'a str,
        pub ip: &'a str,
        /// Pages whose text this version changed (their own text differs).
        pub changed: &'a [&'a str],
        /// A mirror's line on every page.
        pub banner: Option<&'a str>,
        /// Which pages the crawl fetched (and, for a partial mirror, which the
        /// host holds).
        pub fetched: &'a dyn Fn(&str) -> bool,
    }

    impl<'a> HostCopy<'a> {
        /// A copy holding the whole manual in its current version, with no
        /// banner, every page fetched.
        pub fn whole(host: &'a str, prefix: &'a str, ip: &'a str) -> HostCopy<'a> {
            HostCopy {
                host,
                prefix,
                ip,
                changed: &[],
                banner: None,
                fetched: &all,
            }
        }
    }

    pub fn all(_: &str) -> bool {
        true
    }

    /// The text of a page: twelve lines of its own (a changed page has other
    /// lines), after a navigation bar every page of the manual shares.
    pub fn text(name: &str, path: &str, changed: bool, banner: Option<&str>) -> String {
        let mut lines: Vec<String> = banner.map(str::to_string).into_iter().collect();
        lines.extend((0..8).map(|n| format!("Navigation entry {n} of the {name} manual")));
        let topic = format!("{name} {}", path.replace(['/', '.'], " "));
        let edition = if changed { "revised" } else { "original" };
        lines
            .extend((0..12).map(|n| {
                format!("The {edition} {topic} explains point {n} in its own words here")
            }));
        lines.join("\n")
    }

    pub fn serve(tree: &Tree, copy: &HostCopy) -> Vec<Capture> {
        let url = |path: &str| format!("http://{}{}{path}", copy.host, copy.prefix);
        tree.pages
            .iter()
            .filter(|(path, _)| (copy.fetched)(path))
            .map(|(path, links)| {
                let mut page = capture(
                    &url(path),
                    &text(
                        tree.name,
                        path,
                        copy.changed.contains(&path.as_str()),
                        copy.banner,
                    ),
                );
                page.info.ip = Some(copy.ip.to_string());
                page.links = links.iter().map(|link| url(link)).collect();
                page
            })
            .collect()
    }
}
