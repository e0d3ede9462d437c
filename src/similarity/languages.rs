//! Each page's language as the similarity stage uses it: the language the
//! page declares, else the language of the pages around it, else the one
//! its text says ([`crate::language::decide`], at ingest, where the text of
//! one page in [`crate::language::DETECTION_SAMPLE`] and of every folder's
//! index page is detected: enough to tell a folder's language).
//!
//! A translated manual holds pages that say little of their language: a
//! command reference, a table of options, a page of code samples. Such a
//! page belongs to the edition whose folder it is in, and is nearly the same
//! text in every edition; taken as "unknown", it would be a copy of its
//! translations and chain the editions into one cluster. And detection on
//! such a page, or on a short page with a mirror's footer, can name a
//! language nobody wrote it in. So a page that declares no language takes
//! the language most of the compared pages of its folder on its host have
//! (declared or detected), when one language has more than half of them;
//! only in a folder of no clear language does its own detection count.

use std::collections::HashMap;

use crate::language::Language;
use crate::pages::{path_folder, url_path, HostId, PageTable};
use crate::share::more_than;

/// A folder's compared pages, and how many of them have each language.
type FolderLanguages = (usize, HashMap<Language, usize>);

/// By page: its language, or the one most pages of its folder have.
/// `compared` says which pages take part (only their languages count).
pub fn effective(table: &PageTable, compared: &[bool], folder_share: f64) -> Vec<Option<Language>> {
    let folder_of = |page: usize| {
        let entry = &table.pages[page];
        url_path(&entry.url).map(|path| (entry.host, path_folder(path)))
    };
    // (host, folder) -> (pages, counts by language).
    let mut folders: HashMap<(HostId, &str), FolderLanguages> = HashMap::new();
    for (page, _) in compared
        .iter()
        .enumerate()
        .filter(|(_, &compared)| compared)
    {
        let Some(folder) = folder_of(page) else {
            continue;
        };
        let entry = folders.entry(folder).or_default();
        entry.0 += 1;
        if let Some(language) = table.pages[page].language.language() {
            *entry.1.entry(language).or_default() += 1;
        }
    }
    let majority: HashMap<(HostId, &str), Language> = folders
        .into_iter()
        .filter_map(|(folder, (pages, counts))| {
            let (&language, &count) = counts
                .iter()
                .max_by_key(|&(language, count)| (*count, std::cmp::Reverse(*language)))?;
            more_than(count, pages, folder_share).then_some((folder, language))
        })
        .collect();
    (0..table.pages.len())
        .map(|page| {
            let own = table.pages[page].language;
            if own.is_declared() || !compared[page] {
                return own.language();
            }
            folder_of(page)
                .and_then(|folder| majority.get(&folder).copied())
                .or(own.language())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language::PageLanguage;
    use crate::test_support::capture;

    #[test]
    fn a_page_of_no_language_takes_its_folders() {
        let french = Language::from_code("fra");
        let english = Language::from_code("eng");
        let mut pages = Vec::new();
        for (host, language) in [("fr.example.org", french), ("en.example.org", english)] {
            for n in 0..5 {
                let mut page = capture(&format!("http://{host}/guide/p{n}.html"), "text");
                page.language = PageLanguage::Detected(language.unwrap());
                pages.push(page);
            }
            // A page detected as a language nobody wrote it in (a short
            // page with a mirror's footer) is of its folder's.
            let mut odd = capture(&format!("http://{host}/guide/odd.html"), "text");
            odd.language = PageLanguage::Detected(Language::from_code("lat").unwrap());
            pages.push(odd);
            // A declaration stands.
            let mut declared = capture(&format!("http://{host}/guide/de.html"), "text");
            declared.language = PageLanguage::Declared(Language::from_code("deu").unwrap());
            pages.push(declared);
            // The command reference says no language.
            pages.push(capture(&format!("http://{host}/guide/ref.html"), "ls -la"));
            // Nor does a page alone in its folder.
            pages.push(capture(&format!("http://{host}/misc/ref.html"), "ls -la"));
        }
        let table = PageTable::build(&[&pages]);
        let compared = vec![true; table.pages.len()];
        let found = effective(&table, &compared, 0.5);
        let language_of = |url: &str| found[table.find_url(url).unwrap().0 as usize];
        assert_eq!(language_of("http://fr.example.org/guide/ref.html"), french);
        assert_eq!(language_of("http://en.example.org/guide/ref.html"), english);
        assert_eq!(language_of("http://en.example.org/misc/ref.html"), None);
        assert_eq!(language_of("http://fr.example.org/guide/p1.html"), french);
        assert_eq!(language_of("http://en.example.org/guide/odd.html"), english);
        assert_eq!(
            language_of("http://en.example.org/guide/de.html"),
            Language::from_code("deu")
        );
    }

    #[test]
    fn no_language_has_more_than_half_of_a_mixed_folder() {
        let mut pages = Vec::new();
        for (n, code) in ["fra", "eng", "deu"].iter().enumerate() {
            let mut page = capture(&format!("http://example.org/mixed/p{n}.html"), "text");
            page.language = PageLanguage::Detected(Language::from_code(code).unwrap());
            pages.push(page);
        }
        pages.push(capture("http://example.org/mixed/ref.html", "ls -la"));
        let table = PageTable::build(&[&pages]);
        let found = effective(&table, &vec![true; table.pages.len()], 0.5);
        let language_of = |url: &str| found[table.find_url(url).unwrap().0 as usize];
        assert_eq!(language_of("http://example.org/mixed/ref.html"), None);
        // In a folder of no clear language, a page's own detection counts.
        assert_eq!(
            language_of("http://example.org/mixed/p1.html"),
            Language::from_code("eng")
        );
    }
}
