//! Stand-ins: a text a host serves in place of the pages it was asked for.
//!
//! A soft 404 ("page not found" answered with 200), a parked domain, a
//! partial mirror's "this document is not mirrored here", a retired host's
//! "moved" page: one text at many URLs of one host. They are no documents:
//! never a search result, never a copy of anything, never a reason to pair
//! two hosts or to skip a URL.
//!
//! One text means one echo signature (`crate::fingerprint`): a soft 404
//! naming the path it was asked for is one text at all its URLs.
//!
//! A manual can hold identical pages too (redirect stubs, generated
//! operator pages, "see the index" placeholders), and on a host crawled
//! completely as many of them as a soft 404 answers on a host crawled in
//! part. So the decision is taken on the whole crawl, not on one host's
//! count: a text that one host serves at `stand_in_names` URLs or more is a
//! stand-in on that host *unless* it is a page of a manual on another host,
//! which is to say that another host serves the same text at the same
//! places (most of the places, by their last two path arcs) among pages of
//! other texts in the same folders, as a copy of the manual serves the
//! manual's stubs. Two parked domains answering the same requests alike
//! serve nothing else in those folders, and stay stand-ins.

use std::collections::{HashMap, HashSet};

use crate::pages::{page_arcs, path_folder, url_path, HostId, PageTable};

use super::{compared_with, PageText, SimilarityConfig};
use crate::share::more_than;

/// The place of a page within a manual, as copies under other prefixes
/// share it: the last two arcs of its path (a folder and its index page
/// being one page).
fn place(url: &str) -> Option<String> {
    let arcs = page_arcs(url_path(url)?);
    let start = arcs.len().saturating_sub(2);
    Some(arcs[start..].join("/"))
}

/// By page: whether it is a stand-in, by the thresholds of `config`
/// (`stand_in_names`, `stand_in_places_share`, `stand_in_folder_share`).
/// A page is one by its text or by its echo signature: the pages of one
/// text stay together whatever path some of them happen to name.
pub fn find(table: &PageTable, texts: &[PageText], config: &SimilarityConfig) -> Vec<bool> {
    let mut stand_in = find_by(table, texts, config, |text| text.text);
    // Most crawls have no page that says its own path: then the echo
    // signatures are the text signatures, and the answer is the same.
    let echoes = texts.iter().any(|text| text.echo != text.text);
    if echoes {
        let by_echo = find_by(table, texts, config, |text| text.echo);
        for (flag, echo) in stand_in.iter_mut().zip(by_echo) {
            *flag |= echo;
        }
    }
    stand_in
}

/// [`find`] with one signature as a page's text.
fn find_by(
    table: &PageTable,
    texts: &[PageText],
    config: &SimilarityConfig,
    signature: impl Fn(&PageText) -> u128,
) -> Vec<bool> {
    let names = config.stand_in_names;
    let mut stand_in = vec![false; table.pages.len()];
    let text_of = |page: usize| {
        compared_with(table, page, texts[page].words).then(|| signature(&texts[page]))
    };
    // Pages of each (host, text).
    let mut served: HashMap<(HostId, u128), Vec<usize>> = HashMap::new();
    for page in 0..table.pages.len() {
        if let Some(text) = text_of(page) {
            served
                .entry((table.pages[page].host, text))
                .or_default()
                .push(page);
        }
    }
    let candidates: Vec<(HostId, u128)> = served
        .iter()
        .filter(|(_, pages)| pages.len() >= names)
        .map(|(&key, _)| key)
        .collect();
    if candidates.is_empty() {
        return stand_in;
    }
    let texts: HashSet<u128> = candidates.iter().map(|&(_, text)| text).collect();
    // Hosts serving each candidate text.
    let mut hosts_of: HashMap<u128, Vec<HostId>> = HashMap::new();
    for &(host, text) in served.keys() {
        if texts.contains(&text) {
            hosts_of.entry(text).or_default().push(host);
        }
    }
    // Compared pages per folder of each host serving a candidate text.
    let involved: HashSet<HostId> = hosts_of.values().flatten().copied().collect();
    let mut folder_pages: HashMap<(HostId, &str), usize> = HashMap::new();
    for page in 0..table.pages.len() {
        let entry = &table.pages[page];
        if involved.contains(&entry.host) && text_of(page).is_some() {
            if let Some(path) = url_path(&entry.url) {
                *folder_pages
                    .entry((entry.host, path_folder(path)))
                    .or_default() += 1;
            }
        }
    }
    let places_of = |pages: &[usize]| -> HashSet<String> {
        pages
            .iter()
            .filter_map(|&page| place(&table.pages[page].url))
            .collect()
    };
    // Whether the text's pages on a host sit among other pages, as a
    // manual's pages do: fewer than `stand_in_folder_share` of the pages of
    // their folders.
    let among_other_pages = |host: HostId, pages: &[usize]| {
        let folders: HashSet<&str> = pages
            .iter()
            .filter_map(|&page| url_path(&table.pages[page].url).map(path_folder))
            .collect();
        let in_folders: usize = folders
            .iter()
            .map(|folder| folder_pages.get(&(host, *folder)).copied().unwrap_or(0))
            .sum();
        (pages.len() as f64) < config.stand_in_folder_share * in_folders as f64
    };
    for (host, text) in candidates {
        let pages = &served[&(host, text)];
        let places = places_of(pages);
        let in_a_manual = hosts_of[&text].iter().any(|&other| {
            if other == host {
                return false;
            }
            let theirs = &served[&(other, text)];
            let shared = places_of(theirs).intersection(&places).count();
            more_than(shared, places.len(), config.stand_in_places_share)
                && among_other_pages(other, theirs)
        });
        if !in_a_manual {
            for &page in pages {
                stand_in[page] = true;
            }
        }
    }
    stand_in
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Capture;
    use crate::test_support::capture;

    fn stand_ins(captures: &[Capture]) -> Vec<String> {
        let (table, fingerprints) = PageTable::build_with_fingerprints(&[captures]);
        let texts: Vec<PageText> = fingerprints
            .iter()
            .map(|print| PageText::of(print.as_ref()))
            .collect();
        let flags = find(&table, &texts, &SimilarityConfig::default());
        table
            .pages
            .iter()
            .zip(flags)
            .filter(|(_, flag)| *flag)
            .map(|(page, _)| page.url.to_string())
            .collect()
    }

    /// A manual of `pages` pages with 12 identical stubs, on `host`, of
    /// which the crawl fetched the pages `fetched` says.
    fn manual_with_stubs(host: &str, fetched: impl Fn(usize) -> bool) -> Vec<Capture> {
        let mut pages = Vec::new();
        for n in 0..60 {
            if fetched(n) {
                pages.push(capture(
                    &format!("http://{host}/docs/ref/page{n}.html"),
                    &format!("Reference page {n}\nIts own text, number {n}, explains one thing."),
                ));
            }
        }
        for n in 0..12 {
            if fetched(100 + n) {
                pages.push(capture(
                    &format!("http://{host}/docs/ref/op{n}.html"),
                    "Operator\nThis operator is described in the main reference.",
                ));
            }
        }
        pages
    }

    #[test]
    fn a_manuals_identical_stubs_are_its_pages_on_every_host_however_crawled() {
        // Crawled completely on one host (12 stubs), four in five pages on
        // the other (10 stubs): the same treatment on both.
        let mut web = manual_with_stubs("docs.example.org", |_| true);
        web.extend(manual_with_stubs("mirror.example.net", |n| n % 5 != 3));
        assert_eq!(stand_ins(&web), Vec::<String>::new());
        // On one host alone, 12 identical pages are one text at many URLs.
        let alone = manual_with_stubs("docs.example.org", |_| true);
        assert_eq!(stand_ins(&alone).len(), 12);
    }

    #[test]
    fn a_soft_404_echoing_the_path_asked_for_is_a_stand_in() {
        let mut web = manual_with_stubs("docs.example.org", |n| n < 100);
        // The manual's links to pages it does not have lead to one answer
        // naming each path: no two answers share their bytes.
        for n in 0..15 {
            let path = format!("/docs/ref/missing-{n}.html");
            let text = format!("Page not found\nThe page {path} was not found on this server.");
            let mut page = capture(&format!("http://docs.example.org{path}"), &text);
            page.fingerprint = Some(Box::new(crate::fingerprint::Fingerprint::of_page_at(
                Some(&path),
                "",
                &text,
            )));
            web.push(page);
        }
        let found = stand_ins(&web);
        assert_eq!(found.len(), 15, "{found:?}");
        assert!(found.iter().all(|url| url.contains("/missing-")));
    }

    #[test]
    fn one_text_stays_one_stand_in_whatever_path_a_page_of_it_names() {
        // A parked domain answers every URL with one page that names
        // /buy.html; at /buy.html itself its echo signature is another.
        let text = "Domain reserved\nThis domain is for sale: see /buy.html";
        let web: Vec<Capture> = ["/buy.html".to_string()]
            .into_iter()
            .chain((0..11).map(|n| format!("/docs/page{n}.html")))
            .map(|path| {
                let mut page = capture(&format!("http://parked.example{path}"), text);
                page.fingerprint = Some(Box::new(crate::fingerprint::Fingerprint::of_page_at(
                    Some(&path),
                    "",
                    text,
                )));
                page
            })
            .collect();
        let print = web[0].fingerprint.as_ref().unwrap();
        assert_ne!(print.echo_signature, print.text_signature);
        assert_eq!(stand_ins(&web).len(), 12);
    }

    #[test]
    fn soft_404s_and_not_mirrored_pages_are_stand_ins() {
        let mut web = manual_with_stubs("docs.example.org", |n| n < 100);
        // A partial mirror answers the URLs it does not hold with one page.
        for n in 0..60 {
            let text = if n < 20 {
                format!("Reference page {n}\nIts own text, number {n}, explains one thing.")
            } else {
                "Not mirrored\nThis document is not mirrored here.".to_string()
            };
            web.push(capture(
                &format!("http://partial.example.net/docs/ref/page{n}.html"),
                &text,
            ));
        }
        // A retired host answers every URL with "page not found".
        for n in 0..30 {
            web.push(capture(
                &format!("http://old.example.org/docs/ref/page{n}.html"),
                "Page not found\nThe page you asked for does not exist.",
            ));
        }
        let found = stand_ins(&web);
        assert_eq!(found.len(), 40 + 30);
        assert!(found
            .iter()
            .all(|url| url.starts_with("http://partial.") || url.starts_with("http://old.")));
    }

    #[test]
    fn parked_domains_answering_alike_stay_stand_ins() {
        let mut web = Vec::new();
        for host in ["parked-one.example", "parked-two.example"] {
            for n in 0..15 {
                web.push(capture(
                    &format!("http://{host}/docs/page{n}.html"),
                    "This domain is for sale\nBuy it today.",
                ));
            }
        }
        assert_eq!(stand_ins(&web).len(), 30);
    }
}
