//! What kind of page a result is, for ranking: a page of prose, a front
//! page, or a listing (a source listing, a generated index, a search page).
//!
//! A documentation search shows the page that is about the term: a query
//! naming a function finds its reference page, not the source listing that
//! defines it nor the generated index that lists it. Documentation
//! generators name these pages by convention, and a page made of links
//! gives itself away by its shape; both are read here, at index time, into
//! the `kind` fast field the roll-up weighs scores by.

use std::hash::{Hash, Hasher};

/// A page's kind, as the index keeps it (`kind`, a fast field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PageKind {
    /// A page of text: what results are made of.
    Prose = 0,
    /// A manual's or a folder's front page (its collection's start page, or
    /// a folder's index): what a query naming the manual wants.
    Front = 1,
    /// A source listing, a generated index or a search page: a page about
    /// every term it lists, and so about none.
    Listing = 2,
}

impl PageKind {
    pub fn from_u64(value: u64) -> PageKind {
        match value {
            1 => PageKind::Front,
            2 => PageKind::Listing,
            _ => PageKind::Prose,
        }
    }

    pub fn is_listing(self) -> bool {
        self == PageKind::Listing
    }
}

/// Folder segments documentation generators put source listings and
/// indexes in: Sphinx's highlighted module sources (`_modules/`) and page
/// sources (`_sources/`), Javadoc's source pages (`src-html/`) and split
/// index (`index-files/`).
const LISTING_FOLDERS: [&str; 4] = ["_modules", "_sources", "src-html", "index-files"];

/// File names (without their extension) of generated indexes and search
/// pages: Sphinx (`genindex`, `py-modindex`, `search`), Javadoc
/// (`index-all`, `allclasses`, `allpackages-index`, `overview-tree`,
/// `package-tree`, `deprecated-list`), DocBook (`bookindex`), rustdoc
/// (`all`).
const LISTING_FILES: [&str; 12] = [
    "genindex",
    "py-modindex",
    "modindex",
    "search",
    "index-all",
    "allclasses",
    "allclasses-index",
    "allpackages-index",
    "overview-tree",
    "package-tree",
    "deprecated-list",
    "bookindex",
];

/// A page with at least this many links, and fewer than
/// [`WORDS_PER_LINK`] words of its own text per link, is a list of links
/// (an index, a site map): a page of prose has a few dozen links and
/// hundreds of words.
pub const LISTING_LINKS: usize = 150;

/// See [`LISTING_LINKS`].
pub const WORDS_PER_LINK: usize = 4;

/// The kind of the page at `url`, whose own text (site chrome set aside)
/// is `own`, with `links` links, `front` when it is its collection's start
/// page. The words of `own` are counted only for a page with
/// [`LISTING_LINKS`] links or more, the only ones they decide: counting
/// every page's words cost the index stage more than all else it does to
/// make a page's document (a quarter of it on the generated 100k web,
/// `perf`).
pub fn classify(url: &str, own: &str, links: usize, front: bool) -> PageKind {
    let path = path_of(url);
    let mut segments = path.split('/').filter(|segment| !segment.is_empty());
    let file = if path.ends_with('/') {
        ""
    } else {
        path.rsplit('/').next().unwrap_or("")
    };
    if segments.any(|segment| LISTING_FOLDERS.contains(&segment)) {
        return PageKind::Listing;
    }
    let stem = file.split('.').next().unwrap_or("").to_ascii_lowercase();
    // Generated indexes of one letter or part (`genindex-A`), and
    // module indexes of any domain (`py-modindex`, `c-modindex`).
    let generated = LISTING_FILES.contains(&stem.as_str())
        || stem.starts_with("genindex-")
        || stem.ends_with("-modindex")
        || stem.starts_with("allclasses")
        || stem.ends_with("_source")
        || file.ends_with(".rs.html");
    if generated {
        return PageKind::Listing;
    }
    if links >= LISTING_LINKS && own.split_whitespace().count() < links * WORDS_PER_LINK {
        return PageKind::Listing;
    }
    if front || is_folder_index(file) {
        return PageKind::Front;
    }
    PageKind::Prose
}

/// A folder's own page: its URL ends in `/` or names `index.*` or
/// `default.*`.
fn is_folder_index(file: &str) -> bool {
    let stem = file.split('.').next().unwrap_or("").to_ascii_lowercase();
    file.is_empty() || stem == "index" || stem == "default"
}

/// The path of a URL, without its query and fragment.
fn path_of(url: &str) -> &str {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = after_scheme
        .find('/')
        .map_or("/", |slash| &after_scheme[slash..]);
    path.split(['?', '#']).next().unwrap_or(path)
}

/// Separators of a title's parts: a page's own name and its manual's or
/// site's name ("Sessions — Flask Documentation", "Apache Tomcat 10.1 -
/// Logging", "Architecture (The Libgcrypt Reference Manual)").
const TITLE_SEPARATORS: [&str; 8] = [" — ", " – ", " - ", " | ", " · ", " : ", "(", ")"];

/// The names a title gives its page: each of its parts, as
/// [`name_key`] reads it (`48. Message processing — Exim` names
/// `message processing` and `exim`). A query that is one of them names the
/// page (`name`, a field of exact terms).
pub fn title_names(title: &str) -> Vec<String> {
    let mut parts = vec![title];
    for separator in TITLE_SEPARATORS {
        parts = parts
            .into_iter()
            .flat_map(|part| part.split(separator))
            .collect();
    }
    let mut names: Vec<String> = Vec::new();
    for part in parts {
        let name = name_key(part);
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// A text's words, lower-case and space-separated, without a leading
/// chapter or section number (`48.`, `3.2`).
pub fn name_key(text: &str) -> String {
    let words = super::tokenizer::words(text);
    let first = words
        .iter()
        .position(|word| !word.chars().all(|c| c.is_ascii_digit()))
        .unwrap_or(words.len());
    words[first..].join(" ")
}

/// The page's place in its manual, the same for its copies and versions:
/// its path below its copy's folder `prefix` (a folder's index as the
/// folder), with the manual. Keys the entries of a search within one
/// manual (`manual_page`, a fast field).
pub fn manual_page_key(lineage: u32, prefix: &str, url: &str) -> u64 {
    let below = url.strip_prefix(prefix).unwrap_or_else(|| path_of(url));
    let below = below.split(['?', '#']).next().unwrap_or(below);
    let below = match below.rsplit_once('/') {
        Some((folder, file)) if is_folder_index(file) => folder,
        None if is_folder_index(below) => "",
        _ => below,
    };
    let mut hasher = rustc_hash::FxHasher::default();
    lineage.hash(&mut hasher);
    below.hash(&mut hasher);
    // The index's "none" is u64::MAX: a key never takes it.
    hasher.finish().min(u64::MAX - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documentation_generators_listings_and_indexes_are_listings() {
        for url in [
            "https://docs.example.org/3.12/_modules/os.html",
            "https://docs.example.org/3.12/_sources/library/os.rst.txt",
            "https://docs.example.org/api/src-html/org/example/Foo.html",
            "https://docs.example.org/api/index-files/index-1.html",
            "https://docs.example.org/3.12/genindex.html",
            "https://docs.example.org/3.12/genindex-A.html",
            "https://docs.example.org/3.12/py-modindex.html",
            "https://docs.example.org/3.12/search.html?q=os",
            "https://docs.example.org/api/index-all.html",
            "https://docs.example.org/api/allclasses-noframe.html",
            "https://docs.example.org/docs/current/bookindex.html",
            "https://docs.example.org/doxygen/foo_8c_source.html",
            "https://docs.example.org/rust/src/core/option.rs.html",
        ] {
            assert_eq!(
                classify(url, &words(2000), 40, false),
                PageKind::Listing,
                "{url}"
            );
        }
    }

    /// A text of `count` words.
    fn words(count: usize) -> String {
        vec!["word"; count].join(" ")
    }

    #[test]
    fn a_page_made_of_links_is_a_listing_and_a_page_of_text_is_not() {
        let url = "https://docs.example.org/manual/Concept-Index.html";
        assert_eq!(classify(url, &words(900), 400, false), PageKind::Listing);
        // Many links, but a text to go with them.
        assert_eq!(classify(url, &words(9000), 400, false), PageKind::Prose);
        // Few links, whatever the text.
        assert_eq!(classify(url, &words(100), 60, false), PageKind::Prose);
    }

    #[test]
    fn start_pages_and_folder_indexes_are_front_pages() {
        assert_eq!(
            classify("https://flask.example/en/3.0.x/", &words(500), 80, false),
            PageKind::Front
        );
        assert_eq!(
            classify(
                "https://flask.example/en/3.0.x/index.html",
                &words(500),
                80,
                false
            ),
            PageKind::Front
        );
        assert_eq!(
            classify(
                "https://flask.example/en/3.0.x/quickstart.html",
                &words(500),
                80,
                true
            ),
            PageKind::Front
        );
        assert_eq!(
            classify(
                "https://flask.example/en/3.0.x/quickstart.html",
                &words(500),
                80,
                false
            ),
            PageKind::Prose
        );
        assert_eq!(
            classify("https://flask.example", &words(500), 80, false),
            PageKind::Front
        );
    }

    #[test]
    fn a_title_names_its_page_by_each_of_its_parts() {
        assert_eq!(
            title_names("48. Message processing — Exim Specification"),
            ["message processing", "exim specification"]
        );
        assert_eq!(
            title_names("Architecture (The Libgcrypt Reference Manual)"),
            ["architecture", "the libgcrypt reference manual"]
        );
        assert_eq!(
            title_names("Apache Tomcat 10.1 (10.1.60) - Logging in Tomcat"),
            ["apache tomcat 10 1", "logging in tomcat"]
        );
        assert_eq!(name_key("Message  Processing"), "message processing");
        assert_eq!(name_key("3.2"), "");
    }

    #[test]
    fn a_page_has_one_key_in_every_copy_and_version_of_its_manual() {
        let key = |prefix: &str, url: &str| manual_page_key(7, prefix, url);
        let here = key(
            "https://a.example/docs/3.1/",
            "https://a.example/docs/3.1/library/os.html",
        );
        let mirror = key(
            "http://b.example/mirror/",
            "http://b.example/mirror/library/os.html",
        );
        assert_eq!(here, mirror);
        assert_ne!(
            here,
            key(
                "https://a.example/docs/3.1/",
                "https://a.example/docs/3.1/library/io.html"
            )
        );
        assert_ne!(
            here,
            manual_page_key(
                8,
                "http://b.example/mirror/",
                "http://b.example/mirror/library/os.html"
            )
        );
        assert_eq!(
            key(
                "https://a.example/docs/",
                "https://a.example/docs/index.html"
            ),
            key("http://b.example/d/", "http://b.example/d/")
        );
        assert_eq!(
            key(
                "https://a.example/docs/",
                "https://a.example/docs/library/index.html"
            ),
            key("http://b.example/d/", "http://b.example/d/library/")
        );
    }
}
