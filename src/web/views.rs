//! The askama views: one struct per template, each extending `_layout.html`.
//! askama escapes every value for HTML; nothing here is marked safe.

use askama::Template;

use crate::search::{CollectionView, HostView, PageView, ReplicaView, ResultGroup, Results};

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
}

/// One entry and the expansions open under it.
pub struct Entry {
    pub group: ResultGroup,
    /// `expand` tokens of its two links.
    pub collection_token: Option<String>,
    pub replica_token: Option<String>,
    pub open: Vec<(String, Expansion)>,
}

#[derive(Template)]
#[template(path = "home.html")]
pub struct HomePage {
    pub generation: String,
    pub pages: u64,
    pub hosts: u64,
    pub clusters: u64,
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
}

#[derive(Template)]
#[template(path = "collection.html")]
pub struct CollectionPage {
    pub view: CollectionView,
}

#[derive(Template)]
#[template(path = "replicas.html")]
pub struct ReplicasPage {
    pub view: ReplicaView,
}

#[derive(Template)]
#[template(path = "page.html")]
pub struct PagePage {
    pub view: PageView,
}

#[derive(Template)]
#[template(path = "stats.html")]
pub struct StatsPage {
    pub stats: crate::report::Stats,
    pub histogram: super::charts::Chart<super::charts::Bar>,
    pub scatter: super::charts::Chart<super::charts::Point>,
    pub series: [&'static str; 4],
    pub width: f64,
    pub height: f64,
    pub axes: (f64, f64, f64, f64),
}

impl StatsPage {
    pub fn new(stats: crate::report::Stats) -> StatsPage {
        StatsPage {
            histogram: super::charts::histogram(&stats),
            scatter: super::charts::scatter(&stats),
            series: super::charts::SERIES,
            width: super::charts::WIDTH,
            height: super::charts::HEIGHT,
            axes: super::charts::axes(),
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
        ""
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
