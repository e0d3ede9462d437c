//! One page under many URLs: the ways a host's URLs name one page, learnt
//! from the host's own pages.
//!
//! A crawler meets one page as `http://` and `https://`, as `dir/` and
//! `dir/index.html`, with a tracking or session parameter added (`?utm_source=`,
//! `?sid=`, `;jsessionid=`), in upper and lower case on a case-insensitive
//! server. Whether a difference between two URLs names one page is a fact of
//! the host, not of the parameter's name: `?page=2` and `?lang=de` name other
//! pages, and a site may serve other pages under `Foo.html` and `foo.html`. So
//! nothing here reads a list of names. Each URL is looked at with one
//! [`Variation`] taken out (its scheme, one query parameter, a last
//! `index.*` segment, one path parameter, its case); URLs of one host that
//! meet at the same place are a *group* of that variation. A variation is
//! the host's way of naming one page twice when its groups agree: at least
//! `alias_min_groups` of them, and at least `alias_share` of them with every
//! URL in one trivial cluster (one text, chrome aside). The pages of an
//! agreeing group of an accepted variation are one page: the plainest URL
//! (fewest query parameters, no path parameter, `https`, the shortest)
//! stands for the others, which are its *aliases*.
//!
//! A page under two file names in one folder (`ch07.html` and
//! `ch-the_default_configuration_file.html`) differs by no variation: the
//! same bytes there are one page on their own evidence, the plainer URL
//! (the one other pages link to, else the shorter) standing for the other,
//! with no rule (a stand-in excepted: an error page answered for many URLs
//! is no page).
//!
//! Different hosts are not looked at here: two names of one server are host
//! aliases, found by the mirrors stage from their addresses and paths.

use std::cmp::Reverse;
use std::collections::HashMap;

use serde::Serialize;

use crate::corpus::charset::EncodingName;
use crate::pages::{host_of_url, is_index_name, path_folder, url_path, HostId, PageId, PageTable};
use crate::store::ContentKey;
use crate::union_find::UnionFind;

use super::{Similarity, TrivialClusterId};

/// What two URLs of one page differ by.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "kebab-case")]
pub enum Variation {
    /// `http:` against `https:`.
    Scheme,
    /// A query parameter (by name; several joined by `&`, sorted) present
    /// in one URL, absent or of another value in the other.
    Parameter(String),
    /// `dir/` against `dir/index.html` (or another index file name).
    IndexFile,
    /// A path parameter (`;name=value`, by name) in the last segment.
    PathParameter(String),
    /// Letters of the path in another case.
    Case,
}

impl Variation {
    /// Where the avoid list says a skipped URL's page stays crawled.
    pub fn kept_as(&self) -> String {
        match self {
            Variation::Scheme => "the URL under https".into(),
            Variation::Parameter(names) => format!("the URL without ?{names}"),
            Variation::PathParameter(name) => format!("the URL without ;{name}"),
            Variation::IndexFile => "the folder's URL (dir/ for dir/index.html)".into(),
            Variation::Case => "the URL in lower case".into(),
        }
    }

    /// Whether `url` has what this variation adds to the plainest URL of a
    /// page: the parameters, the path parameter, the index file, an upper
    /// case letter in its path, `http:` (when `https:` is kept).
    pub fn shown_by(&self, url: &str) -> bool {
        let path = url_path(url).unwrap_or("/");
        let last = path.rsplit('/').next().unwrap_or_default();
        match self {
            Variation::Scheme => url.starts_with("http:"),
            Variation::Parameter(names) => {
                let query = url.split_once('?').map_or("", |(_, query)| query);
                names.split('&').all(|name| {
                    query
                        .split('&')
                        .any(|parameter| parameter.split('=').next() == Some(name))
                })
            }
            Variation::PathParameter(name) => last
                .split(';')
                .skip(1)
                .any(|parameter| parameter.split('=').next() == Some(name.as_str())),
            Variation::IndexFile => !last.is_empty() && is_index_name(last),
            Variation::Case => path.chars().any(|c| c.is_ascii_uppercase()),
        }
    }

    /// The avoid list's word for it: `?name` (several joined by `&`),
    /// `;name`, `index`, `case` or `http`.
    pub fn token(&self) -> String {
        match self {
            Variation::Scheme => "http".into(),
            Variation::Parameter(names) => format!("?{names}"),
            Variation::PathParameter(name) => format!(";{name}"),
            Variation::IndexFile => "index".into(),
            Variation::Case => "case".into(),
        }
    }

    /// Reads [`Variation::token`].
    pub fn from_token(token: &str) -> Option<Variation> {
        match token {
            "http" => Some(Variation::Scheme),
            "index" => Some(Variation::IndexFile),
            "case" => Some(Variation::Case),
            _ => {
                if let Some(names) = token.strip_prefix('?') {
                    (!names.is_empty()).then(|| Variation::Parameter(names.into()))
                } else {
                    let name = token.strip_prefix(';')?;
                    (!name.is_empty()).then(|| Variation::PathParameter(name.into()))
                }
            }
        }
    }
}

/// One variation a host was found to name pages by.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AliasRule {
    pub host: HostId,
    pub variation: Variation,
    /// Groups of the host's URLs that differ by it, and those whose URLs
    /// are all one text.
    pub groups: u32,
    pub agreeing: u32,
}

/// The URL aliases of a crawl.
#[derive(Debug, Clone, Default)]
pub struct UrlAliases {
    /// The variations each host names one page by, by host then variation.
    pub rules: Vec<AliasRule>,
    /// By page id: the page whose URL stands for it (itself when it is no
    /// alias).
    pub standing_for: Vec<PageId>,
}

impl UrlAliases {
    /// Finds the aliases of `table`'s pages from the trivial clusters of
    /// `similarity`, with its configuration's thresholds: the host's ways
    /// of naming one page, and its pages under two file names
    /// ([`UrlAliases::by_rules`] and the latter).
    pub fn find(table: &PageTable, similarity: &Similarity) -> UrlAliases {
        UrlAliases::found(table, similarity, true)
    }

    /// The aliases of the host's ways of naming one page alone (its
    /// rules), what a crawler can tell apart before fetching: for the
    /// avoid list, which skips URLs by rule.
    pub fn by_rules(table: &PageTable, similarity: &Similarity) -> UrlAliases {
        UrlAliases::found(table, similarity, false)
    }

    fn found(table: &PageTable, similarity: &Similarity, file_names: bool) -> UrlAliases {
        let config = &similarity.config;
        let page_count = table.pages.len();
        // A page's text: its trivial cluster (a stand-in's is no text).
        let text_of = |page: usize| -> Option<TrivialClusterId> {
            let cluster = *similarity.trivial.get(page)?;
            (cluster != TrivialClusterId::NONE && !similarity.stand_in[page]).then_some(cluster)
        };
        // (host, variation, the URL with it taken out, hashed) -> pages.
        let mut groups: HashMap<(HostId, Variation, u64), Vec<PageId>> = HashMap::new();
        let named = |page: &crate::pages::Page| page.status == 200 && page.content_key.is_some();
        for (index, page) in table
            .pages
            .iter()
            .enumerate()
            .filter(|(_, page)| named(page))
        {
            for (variation, place) in places(&page.url) {
                groups
                    .entry((page.host, variation, hash(&place)))
                    .or_default()
                    .push(PageId(index as u32));
            }
        }
        // A URL without the parameter is where its `?name=` and `;name=`
        // twins meet: the URL itself.
        let mut parameters_at: HashMap<(HostId, u64), Vec<Variation>> = HashMap::new();
        for (host, variation, place) in groups.keys() {
            if matches!(
                variation,
                Variation::Parameter(_) | Variation::PathParameter(_)
            ) {
                parameters_at
                    .entry((*host, *place))
                    .or_default()
                    .push(variation.clone());
            }
        }
        let mut plain_members = Vec::new();
        for (index, page) in table
            .pages
            .iter()
            .enumerate()
            .filter(|(_, page)| named(page))
        {
            let place = hash(&page.url);
            for variation in parameters_at.get(&(page.host, place)).into_iter().flatten() {
                plain_members.push((page.host, variation.clone(), place, index));
            }
        }
        for (host, variation, place, index) in plain_members {
            if let Some(members) = groups.get_mut(&(host, variation, place)) {
                members.push(PageId(index as u32));
            }
        }
        let mut tally: HashMap<(HostId, Variation), (u32, u32)> = HashMap::new();
        let mut agreeing_groups: Vec<(HostId, Variation, Vec<PageId>)> = Vec::new();
        for ((host, variation, _), pages) in groups {
            if pages.len() < 2 {
                continue;
            }
            let first = text_of(pages[0].0 as usize);
            let agrees =
                first.is_some() && pages.iter().all(|page| text_of(page.0 as usize) == first);
            let counts = tally.entry((host, variation.clone())).or_default();
            counts.0 += 1;
            if agrees {
                counts.1 += 1;
                agreeing_groups.push((host, variation, pages));
            }
        }
        let mut rules: Vec<AliasRule> = tally
            .into_iter()
            .filter(|(_, (groups, agreeing))| {
                *agreeing as usize >= config.alias_min_groups
                    && f64::from(*agreeing) >= config.alias_share * f64::from(*groups)
            })
            .map(|((host, variation), (groups, agreeing))| AliasRule {
                host,
                variation,
                groups,
                agreeing,
            })
            .collect();
        rules.sort_by(|x, y| (x.host, &x.variation).cmp(&(y.host, &y.variation)));
        let accepted = |host: HostId, variation: &Variation| {
            rules
                .binary_search_by(|rule| (rule.host, &rule.variation).cmp(&(host, variation)))
                .is_ok()
        };
        let mut pages = UnionFind::new(page_count);
        for (host, variation, members) in &agreeing_groups {
            if accepted(*host, variation) {
                for pair in members.windows(2) {
                    pages.union(pair[0].0, pair[1].0);
                }
            }
        }
        // One page under two file names: the same bytes in one folder of a
        // host (a manual's `ch07.html` and `ch-the_default_configuration_file.html`).
        // No URL rule relates such names, and none is needed: the bytes
        // are the evidence, so one pair is enough. The query is not looked
        // at: the same bytes are one page whatever names them. A page
        // without text is none (a stand-in, an error page a host answers
        // for many URLs, or a page without words). Bytes stored apart (the
        // store's `force-new` mode keeps each capture's) have keys apart.
        let mut twins: HashMap<(HostId, u64, ContentKey, EncodingName), PageId> = HashMap::new();
        for (index, page) in table
            .pages
            .iter()
            .enumerate()
            .filter(|(_, page)| file_names && named(page))
        {
            let (Some(key), Some(_)) = (page.content_key, text_of(index)) else {
                continue;
            };
            let folder = hash(path_folder(url_path(&page.url).unwrap_or("/")));
            let first = *twins
                .entry((page.host, folder, key, page.encoding))
                .or_insert(PageId(index as u32));
            pages.union(first.0, index as u32);
        }
        let linked_by = linked_by(table);
        let plainness_of = |page: usize| plainness(&table.pages[page].url, linked_by[page]);
        let mut plainest: HashMap<u32, PageId> = HashMap::new();
        for index in 0..page_count {
            let root = pages.find(index as u32);
            let entry = plainest.entry(root).or_insert(PageId(index as u32));
            if plainness_of(index) < plainness_of(entry.0 as usize) {
                *entry = PageId(index as u32);
            }
        }
        let standing_for = (0..page_count)
            .map(|index| plainest[&pages.find(index as u32)])
            .collect();
        UrlAliases {
            rules,
            standing_for,
        }
    }

    /// Whether `page` is an alias: another URL stands for it.
    pub fn is_alias(&self, page: PageId) -> bool {
        self.standing_for
            .get(page.0 as usize)
            .is_some_and(|&standing| standing != page)
    }

    /// The URLs of each page named more than once, by the page standing for
    /// them (itself included).
    pub fn groups(&self) -> HashMap<PageId, Vec<PageId>> {
        let mut groups: HashMap<PageId, Vec<PageId>> = HashMap::new();
        for (index, &standing) in self.standing_for.iter().enumerate() {
            if standing.0 as usize != index {
                groups.entry(standing).or_insert_with(|| vec![standing]);
                groups
                    .get_mut(&standing)
                    .expect("inserted")
                    .push(PageId(index as u32));
            }
        }
        groups
    }

    /// The number of pages that are aliases.
    pub fn alias_count(&self) -> usize {
        self.standing_for
            .iter()
            .enumerate()
            .filter(|&(index, page)| page.0 as usize != index)
            .count()
    }
}

/// A place's key: 64 bits instead of a URL per page and variation.
fn hash(place: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(place.as_bytes())
}

/// How plain a URL is, lower first: fewest query parameters, no path
/// parameter, `https`, no upper case letter in its path, a folder's own URL,
/// linked by the most other pages (`linked_by`), the shortest, then in text
/// order. Of two file names of one page, the one its site links to is its
/// name, as a canonical link would say: Exim's pages link
/// `ch-the_default_configuration_file.html`, none `ch07.html`.
fn plainness(url: &str, linked_by: u32) -> Plainness<'_> {
    let query = url.split_once('?').map_or("", |(_, query)| query);
    let parameters = query.split('&').filter(|part| !part.is_empty()).count();
    let path = url_path(url).unwrap_or("/");
    (
        parameters,
        path.contains(';'),
        !url.starts_with("https:"),
        path.chars().any(|c| c.is_ascii_uppercase()),
        // A folder's own URL before any file's (`dir/` before `dir/index.html`).
        !path.ends_with('/'),
        Reverse(linked_by),
        url.len(),
        url,
    )
}

/// How plain a URL is, plainest least: parameters, a path parameter, not
/// `https`, upper case, a file's name, fewer pages linking to it, length,
/// then the URL.
type Plainness<'u> = (usize, bool, bool, bool, bool, Reverse<u32>, usize, &'u str);

/// For each page, how many other pages link to it.
fn linked_by(table: &PageTable) -> Vec<u32> {
    let mut counts = vec![0u32; table.pages.len()];
    for (index, page) in table.pages.iter().enumerate() {
        for target in page.outlinks.iter() {
            if target.0 as usize != index {
                if let Some(count) = counts.get_mut(target.0 as usize) {
                    *count += 1;
                }
            }
        }
    }
    counts
}

/// Each variation a URL can be seen under, with the URL it leaves once
/// taken out.
pub(crate) fn places(url: &str) -> Vec<(Variation, String)> {
    let mut found = Vec::new();
    let Some((_, rest)) = url.split_once("://") else {
        return found;
    };
    found.push((Variation::Scheme, rest.to_string()));
    let host = host_of_url(url);
    let (before_query, query) = match url.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (url, None),
    };
    if let Some(query) = query {
        let parameters: Vec<&str> = query.split('&').collect();
        // The whole query, by its parameters' names: `?utm_source=&utm_medium=`
        // come together, and meet the URL without them.
        let mut names: Vec<&str> = parameters
            .iter()
            .map(|parameter| parameter.split('=').next().unwrap_or_default())
            .collect();
        names.sort_unstable();
        names.dedup();
        if parameters.len() > 1 && names.iter().all(|name| !name.is_empty()) {
            found.push((
                Variation::Parameter(names.join("&")),
                before_query.to_string(),
            ));
        }
        // Each parameter alone, beside the others.
        for (position, parameter) in parameters.iter().enumerate() {
            let name = parameter.split('=').next().unwrap_or_default();
            if name.is_empty() {
                continue;
            }
            let others: Vec<&str> = parameters
                .iter()
                .enumerate()
                .filter(|&(other, _)| other != position)
                .map(|(_, parameter)| *parameter)
                .collect();
            let place = if others.is_empty() {
                before_query.to_string()
            } else {
                format!("{before_query}?{}", others.join("&"))
            };
            found.push((Variation::Parameter(name.to_string()), place));
        }
    }
    let path = url_path(url).unwrap_or("/");
    let suffix = query.map_or(String::new(), |query| format!("?{query}"));
    // The others keep the scheme: a page under `http:` and `https:` is the
    // scheme's evidence, not theirs.
    let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
    let host = format!("{scheme}://{host}");
    let (folder, last) = path.rsplit_once('/').unwrap_or(("", path));
    if let Some((segment, path_parameters)) = last.split_once(';') {
        let name = path_parameters.split('=').next().unwrap_or_default();
        if !name.is_empty() {
            found.push((
                Variation::PathParameter(name.to_string()),
                format!("{host}{folder}/{segment}{suffix}"),
            ));
        }
    } else if last.is_empty() || is_index_name(last) {
        // `dir/` and `dir/index.html` meet at `dir/`.
        found.push((Variation::IndexFile, format!("{host}{folder}/{suffix}")));
    }
    let lower = path.to_lowercase();
    found.push((Variation::Case, format!("{host}{lower}{suffix}")));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::similarity::SimilarityConfig;
    use crate::test_support::{capture, run};

    /// A distinct text for page `n` of a site.
    fn text(site: &str, n: usize) -> String {
        (0..6)
            .map(|line| format!("{site} page {n} line {line} says something of its own"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn standing(table: &PageTable, aliases: &UrlAliases, url: &str) -> String {
        let page = table.find_url(url).expect("a crawled URL");
        table.pages[aliases.standing_for[page.0 as usize].0 as usize]
            .url
            .to_string()
    }

    #[test]
    fn tracking_parameters_schemes_and_index_files_name_one_page_on_the_evidence() {
        let mut captures = Vec::new();
        for n in 0..4 {
            let body = text("tool", n);
            let path = format!("docs/p{n}.html");
            captures.push(capture(&format!("http://tool.example/{path}"), &body));
            captures.push(capture(&format!("https://tool.example/{path}"), &body));
            captures.push(capture(
                &format!("http://tool.example/{path}?utm_source=news&utm_medium=mail"),
                &body,
            ));
        }
        for folder in ["a", "b"] {
            let body = text(folder, 9);
            captures.push(capture(&format!("https://tool.example/{folder}/"), &body));
            captures.push(capture(
                &format!("https://tool.example/{folder}/index.html"),
                &body,
            ));
        }
        let (table, similarity) = run(&captures, &SimilarityConfig::default());
        let aliases = UrlAliases::find(&table, &similarity);
        let variations: Vec<&Variation> =
            aliases.rules.iter().map(|rule| &rule.variation).collect();
        assert!(variations.contains(&&Variation::Scheme), "{variations:?}");
        assert!(variations.contains(&&Variation::Parameter("utm_medium&utm_source".into())));
        assert!(variations.contains(&&Variation::IndexFile));
        // The plainest URL stands for the others: https, no parameter, the folder.
        for url in [
            "http://tool.example/docs/p2.html",
            "http://tool.example/docs/p2.html?utm_source=news&utm_medium=mail",
        ] {
            assert_eq!(
                standing(&table, &aliases, url),
                "https://tool.example/docs/p2.html"
            );
        }
        assert_eq!(
            standing(&table, &aliases, "https://tool.example/a/index.html"),
            "https://tool.example/a/"
        );
        // 4 pages under 3 URLs, 2 folders under 2: 10 aliases.
        assert_eq!(aliases.alias_count(), 10);
        let page = table.find_url("https://tool.example/docs/p0.html").unwrap();
        assert_eq!(aliases.groups()[&page].len(), 3);
    }

    #[test]
    fn a_parameter_that_names_other_pages_is_no_alias() {
        // `?page=N` gives another text at each value: no group agrees.
        let mut captures = Vec::new();
        for n in 0..4 {
            let path = format!("http://list.example/items{n}.html");
            captures.push(capture(&path, &text("list", n)));
            for part in 2..4 {
                captures.push(capture(
                    &format!("{path}?page={part}"),
                    &text("list", 100 + 10 * n + part),
                ));
            }
        }
        let (table, similarity) = run(&captures, &SimilarityConfig::default());
        let aliases = UrlAliases::find(&table, &similarity);
        assert!(aliases.rules.is_empty(), "{:?}", aliases.rules);
        assert_eq!(aliases.alias_count(), 0);
    }

    /// A capture of `text` whose body's bytes are not `text`'s alone (other
    /// markup around one text).
    fn marked_up(url: &str, text: &str) -> crate::ingest::Capture {
        let mut page = capture(url, text);
        page.content_key = Some(ContentKey {
            signature: crate::store::signature_of(format!("<p>{text}</p>").as_bytes()),
            volume: 0,
            overflow: 0,
        });
        page
    }

    #[test]
    fn one_coincidence_is_no_evidence_and_most_groups_must_agree() {
        // Two pages that are one text (in other markup) under two case
        // variants, once: one group is below alias_min_groups.
        let once = vec![
            capture("http://site.example/Guide.html", &text("site", 1)),
            marked_up("http://site.example/guide.html", &text("site", 1)),
        ];
        let (table, similarity) = run(&once, &SimilarityConfig::default());
        assert_eq!(UrlAliases::find(&table, &similarity).alias_count(), 0);
        // The same bytes under the two names are one page, with no rule.
        let same_bytes = vec![
            capture("http://site.example/Guide.html", &text("site", 1)),
            capture("http://site.example/guide.html", &text("site", 1)),
        ];
        let (table, similarity) = run(&same_bytes, &SimilarityConfig::default());
        let aliases = UrlAliases::find(&table, &similarity);
        assert!(aliases.rules.is_empty(), "{:?}", aliases.rules);
        assert_eq!(aliases.alias_count(), 1);
        assert_eq!(UrlAliases::by_rules(&table, &similarity).alias_count(), 0);
        // `?view=` agrees in 2 groups of 4: below alias_share.
        let mut mixed = Vec::new();
        for n in 0..4 {
            let path = format!("http://site.example/p{n}.html");
            mixed.push(capture(&path, &text("mixed", n)));
            let other = if n < 2 { n } else { 100 + n };
            mixed.push(marked_up(
                &format!("{path}?view=full"),
                &text("mixed", other),
            ));
        }
        let (table, similarity) = run(&mixed, &SimilarityConfig::default());
        let aliases = UrlAliases::find(&table, &similarity);
        assert_eq!(aliases.alias_count(), 0, "{:?}", aliases.rules);
    }

    /// A manual that ships each chapter under two file names (Exim's
    /// `ch07.html` and `ch-the_default_configuration_file.html`): the same
    /// bytes in one folder of a host are one page, the plainer URL standing
    /// for the other, even once and with no rule. Not so: the same bytes
    /// in another folder, one text in other markup, another host's copy,
    /// or an error page the host answers for many URLs.
    #[test]
    fn one_page_under_two_file_names_is_one_page() {
        let folder = "https://mail.example/doc/spec";
        let mut captures = vec![
            capture(&format!("{folder}/ch01.html"), &text("exim", 1)),
            capture(&format!("{folder}/ch-introduction.html"), &text("exim", 1)),
            capture(&format!("{folder}/ch02.html"), &text("exim", 2)),
            marked_up(
                &format!("{folder}/ch-incorporated_code.html"),
                &text("exim", 2),
            ),
            capture("https://mail.example/doc/old/ch01.html", &text("exim", 1)),
            capture(&format!("{folder}/ch03.html"), &text("exim", 3)),
            capture(
                "https://mirror.example/doc/spec/ch03.html",
                &text("exim", 3),
            ),
        ];
        // The host's "not found" page, answered with 200 for any URL: a
        // stand-in (`similarity.stand_in_names`, 10 names or more).
        for missing in 0..12 {
            captures.push(capture(
                &format!("{folder}/missing-{missing}.html"),
                "Sorry, the page you asked for is not here",
            ));
        }
        let (table, similarity) = run(&captures, &SimilarityConfig::default());
        let aliases = UrlAliases::find(&table, &similarity);
        let missing = table.find_url(&format!("{folder}/missing-0.html")).unwrap();
        assert!(similarity.is_stand_in(missing));
        assert!(aliases.rules.is_empty(), "{:?}", aliases.rules);
        assert_eq!(
            standing(&table, &aliases, &format!("{folder}/ch-introduction.html")),
            format!("{folder}/ch01.html")
        );
        let page = table.find_url(&format!("{folder}/ch01.html")).unwrap();
        assert_eq!(aliases.groups()[&page].len(), 2);
        assert_eq!(aliases.alias_count(), 1, "{:?}", aliases.groups());
        // The avoid list's aliases are the rules' alone.
        assert_eq!(UrlAliases::by_rules(&table, &similarity).alias_count(), 0);
    }

    /// Of two file names of one page, the one other pages link to stands
    /// for it, however long: the site's own name for it.
    #[test]
    fn the_file_name_a_site_links_to_stands_for_its_page() {
        let folder = "https://mail.example/doc/spec";
        let mut captures = vec![
            capture(&format!("{folder}/ch01.html"), &text("exim", 1)),
            capture(&format!("{folder}/ch-introduction.html"), &text("exim", 1)),
            capture(&format!("{folder}/ch02.html"), &text("exim", 2)),
            capture(
                &format!("{folder}/ch-incorporated_code.html"),
                &text("exim", 2),
            ),
        ];
        // The table of contents links the long names; a stray link names
        // ch02.html once, and the page itself links its long name.
        let mut contents = capture(&format!("{folder}/index.html"), &text("exim", 0));
        contents.links = crate::pages::Links::from_iter([
            format!("{folder}/ch-introduction.html"),
            format!("{folder}/ch-incorporated_code.html"),
        ]);
        let mut chapter = capture(&format!("{folder}/ch03.html"), &text("exim", 3));
        chapter.links = crate::pages::Links::from_iter([
            format!("{folder}/ch-incorporated_code.html"),
            format!("{folder}/ch02.html"),
        ]);
        captures[0].links =
            crate::pages::Links::from_iter([format!("{folder}/ch-introduction.html")]);
        captures.extend([contents, chapter]);
        let (table, similarity) = run(&captures, &SimilarityConfig::default());
        let aliases = UrlAliases::find(&table, &similarity);
        // Linked twice (the contents, and its twin's link to it), ch01.html
        // by none.
        assert_eq!(
            standing(&table, &aliases, &format!("{folder}/ch01.html")),
            format!("{folder}/ch-introduction.html")
        );
        assert_eq!(
            standing(&table, &aliases, &format!("{folder}/ch02.html")),
            format!("{folder}/ch-incorporated_code.html")
        );
    }

    #[test]
    fn session_ids_in_the_path_and_case_name_one_page() {
        let mut captures = Vec::new();
        for n in 0..3 {
            let body = text("shop", n);
            captures.push(capture(
                &format!("http://shop.example/Cat/Item{n}.html"),
                &body,
            ));
            captures.push(capture(
                &format!("http://shop.example/cat/item{n}.html"),
                &body,
            ));
            captures.push(capture(
                &format!("http://shop.example/cat/item{n}.html;jsessionid=A{n}F"),
                &body,
            ));
        }
        let (table, similarity) = run(&captures, &SimilarityConfig::default());
        let aliases = UrlAliases::find(&table, &similarity);
        let variations: Vec<&Variation> =
            aliases.rules.iter().map(|rule| &rule.variation).collect();
        assert!(variations.contains(&&Variation::Case), "{variations:?}");
        assert!(variations.contains(&&Variation::PathParameter("jsessionid".into())));
        assert_eq!(
            standing(&table, &aliases, "http://shop.example/Cat/Item1.html"),
            "http://shop.example/cat/item1.html"
        );
        assert_eq!(
            standing(
                &table,
                &aliases,
                "http://shop.example/cat/item1.html;jsessionid=A1F"
            ),
            "http://shop.example/cat/item1.html"
        );
        assert_eq!(aliases.alias_count(), 6);
    }
}
