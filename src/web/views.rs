//! The askama views: one struct per template, each extending `_layout.html`.
//! askama escapes every value for HTML; nothing here is marked safe.

use askama::Template;

use crate::search::{
    CollectionView, HostView, PageView, ReplicaView, ResultGroup, Results, SiteView,
};

/// The links of a results page: previous, numbered, next.
pub struct Pager {
    pub previous: Option<String>,
    pub next: Option<String>,
    pub numbered: Vec<(usize, String, bool)>,
}

/// An expansion rendered in place under an entry.
pub enum Expansion {
    Collection(CollectionView),
    Replicas(ReplicaView),
    Site(SiteView),
}

/// A link to another page of an expansion's rows.
pub struct Step {
    /// Where it goes without the script: the results page with that page of
    /// the expansion open, or the expansion's own page.
    pub href: String,
    /// The expansion's own page, which the script fetches.
    pub src: String,
    /// The expansion's `expand` token on that page.
    pub token: String,
}

/// The controls at the end of an expansion.
pub struct ExpansionNav {
    /// The expansion's `expand` token as shown.
    pub token: String,
    pub previous: Option<Step>,
    pub next: Option<Step>,
    /// Where Close goes: the results without this expansion.
    pub close: String,
    /// The level of the expansion's heading: 3 under an entry, 2 on its
    /// own page.
    pub heading: u8,
}

/// One entry and the expansions open under it.
pub struct Entry {
    pub group: ResultGroup,
    /// The URL its title links to: the original page when it may be
    /// followed, else the stored copy.
    pub title_href: String,
    /// Its stored copy, with the query to highlight.
    pub stored_href: String,
    /// Its links' URLs.
    pub collection_href: Option<String>,
    pub replica_href: Option<String>,
    pub site_href: Option<String>,
    /// `expand` tokens of its links.
    pub collection_token: Option<String>,
    pub replica_token: Option<String>,
    pub site_token: Option<String>,
    /// The manual's other versions, each with the same search asking for
    /// it.
    pub other_versions: Vec<(String, String)>,
    pub open: Vec<(Expansion, ExpansionNav)>,
}

/// A count the templates give [`plural`] (askama passes values by
/// reference).
pub trait Counted {
    fn value(&self) -> u64;
}

impl Counted for u64 {
    fn value(&self) -> u64 {
        *self
    }
}

impl Counted for u32 {
    fn value(&self) -> u64 {
        u64::from(*self)
    }
}

impl Counted for usize {
    fn value(&self) -> u64 {
        *self as u64
    }
}

impl<T: Counted + ?Sized> Counted for &T {
    fn value(&self) -> u64 {
        (**self).value()
    }
}

/// "1 page", "2 pages".
pub fn plural(count: impl Counted, one: &str, many: &str) -> String {
    let count = count.value();
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

#[derive(Template)]
#[template(path = "home.html")]
pub struct HomePage {
    pub generation: String,
    pub pages: u64,
    pub hosts: u64,
    /// Clusters of copies of a page (as `/stats` counts them).
    pub trivial_clusters: u64,
    /// Clusters of collections and the collections in them.
    pub collection_clusters: u64,
    pub collections: u64,
    pub examples: Vec<String>,
}

#[derive(Template)]
#[template(path = "search.html")]
pub struct SearchPage {
    pub results: Results,
    pub entries: Vec<Entry>,
    pub pager: Pager,
    /// The same search with roll-up switched the other way.
    pub toggle_rollup: String,
    /// The same search ranked the other way.
    pub toggle_rank: String,
    /// The suggested query's results.
    pub suggestion_href: Option<String>,
    /// The query as typed, uncorrected, when the results are a correction's.
    pub as_typed_href: Option<String>,
    /// The facets the entries may be narrowed by.
    pub facets: Vec<FacetGroup>,
}

impl SearchPage {
    /// The facets' values applied, each with its facet's name.
    pub fn applied(&self) -> Vec<(&'static str, &FacetLink)> {
        self.facets
            .iter()
            .flat_map(|group| {
                group
                    .values
                    .iter()
                    .filter(|value| value.applied)
                    .map(move |value| (group.name, value))
            })
            .collect()
    }
}

/// A facet of a results page.
pub struct FacetGroup {
    /// Its name ("Manual").
    pub name: &'static str,
    /// Its parameter ("manual").
    pub param: &'static str,
    pub values: Vec<FacetLink>,
}

/// A facet's value as a link.
pub struct FacetLink {
    pub label: String,
    /// The entries the search shows with it applied.
    pub entries: u64,
    pub applied: bool,
    /// The search with it applied, or, applied, without it.
    pub href: String,
}

#[derive(Template)]
#[template(path = "collection.html")]
pub struct CollectionPage {
    pub view: CollectionView,
    pub nav: ExpansionNav,
    /// The Replica expansion of the collection's cluster, when it has copies.
    pub replicas_href: Option<String>,
}

#[derive(Template)]
#[template(path = "replicas.html")]
pub struct ReplicasPage {
    pub view: ReplicaView,
    pub nav: ExpansionNav,
}

#[derive(Template)]
#[template(path = "site.html")]
pub struct SitePage {
    pub view: SiteView,
    pub nav: ExpansionNav,
}

#[derive(Template)]
#[template(path = "page.html")]
pub struct PagePage {
    pub view: PageView,
    /// The query whose words are marked in the text.
    pub query: String,
}

#[derive(Template)]
#[template(path = "stats.html")]
pub struct StatsPage {
    pub stats: crate::stats::Stats,
    pub histogram: super::charts::Chart<super::charts::Bar>,
    pub scatter: super::charts::Chart<super::charts::Point>,
    pub series: [&'static str; 4],
    pub width: f64,
    pub height: f64,
    pub axes: (f64, f64, f64, f64),
    /// The stand-ins listed (most URLs first), and how many more there
    /// are: `stats --json` has them all.
    pub stand_ins: Vec<crate::stats::StandIn>,
    pub stand_ins_more: usize,
}

/// Stand-ins the statistics page lists.
pub const STAND_INS_SHOWN: usize = 50;

impl StatsPage {
    pub fn new(stats: crate::stats::Stats) -> StatsPage {
        StatsPage {
            histogram: super::charts::histogram(&stats),
            scatter: super::charts::scatter(&stats),
            series: super::charts::SERIES,
            width: super::charts::WIDTH,
            height: super::charts::HEIGHT,
            axes: super::charts::axes(),
            stand_ins: stats
                .stand_ins
                .iter()
                .take(STAND_INS_SHOWN)
                .cloned()
                .collect(),
            stand_ins_more: stats.stand_ins.len().saturating_sub(STAND_INS_SHOWN),
            stats,
        }
    }

    pub fn query(&self) -> &str {
        ""
    }
}

#[derive(Template)]
#[template(path = "host.html")]
pub struct HostPage {
    pub view: HostView,
}

#[derive(Template)]
#[template(path = "error.html")]
pub struct ErrorPage {
    pub status: u16,
    pub title: String,
    pub message: String,
    /// The query that failed, echoed (escaped) back.
    pub query: String,
}

// The layout's search box shows each page's `query()`.

impl SearchPage {
    pub fn query(&self) -> &str {
        &self.results.query
    }
}

impl CollectionPage {
    pub fn query(&self) -> &str {
        &self.view.query
    }
}

impl ReplicasPage {
    pub fn query(&self) -> &str {
        &self.view.query
    }
}

impl HomePage {
    pub fn query(&self) -> &str {
        ""
    }
}

impl PagePage {
    pub fn query(&self) -> &str {
        &self.query
    }
}

impl SitePage {
    pub fn query(&self) -> &str {
        &self.view.query
    }
}

impl HostPage {
    pub fn query(&self) -> &str {
        ""
    }
}

impl ErrorPage {
    pub fn query(&self) -> &str {
        &self.query
    }
}
