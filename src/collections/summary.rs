//! The LinkSummary table of cho-2000 Figure 8 and the merge conditions of
//! §3.1 and §4.
//!
//! For trivial clusters Ri and Rj joined by at least one link from a page of
//! Ri to a page of Rj: a = |Ri|, b = |Rj|, s = pages of Ri linking into Rj,
//! d = pages of Rj linked from Ri. It is the paper's relational group-by
//! over `link(src, dest)` joined twice with `trivial(rid, pid)`, done in
//! parallel: each page emits, once per distinct cluster it links into (for s)
//! or is linked from (for d), the key `(Ri, Rj)`; sorting the keys and
//! counting runs gives s and d. No pair of clusters is ever compared unless a
//! link joins them.
//!
//! Partial crawls and break points (cho §4 meets the first in practice, §2.2
//! describes the second): a page of Ri whose own copy of a link into Rj
//! leads to a page the crawl never fetched, or to a page that is no longer a
//! copy, has a *virtual* link into Rj, as the partial mirrors of §4 have; it
//! counts in s (never in d, and it attaches no page), so the copies that
//! are there still grow an extended cluster. A link is "the same" when its
//! relative form is ([`relative_link_key`]).

use rayon::prelude::*;

use super::graph::WebGraph;
use crate::pages::{relative_link_key, PageId};
use crate::similarity::TrivialClusterId;

/// One row of LinkSummary: `from` = Ri, `to` = Rj.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkSummaryRow {
    pub from: TrivialClusterId,
    pub to: TrivialClusterId,
    pub a: u32,
    pub b: u32,
    pub s: u32,
    pub d: u32,
}

impl LinkSummaryRow {
    /// cho-2000 §3.1: |Ri| = s = d = |Rj|; every page of Ri links into Rj
    /// and every page of Rj is linked from Ri.
    pub fn merges(&self) -> bool {
        self.a == self.s && self.s == self.d && self.d == self.b
    }

    /// cho-2000 §4 (extended clusters): |Ri| = s >= d = |Rj|; the pages of
    /// Rj are copied on fewer sites, and the pages of Ri that link to no copy
    /// of their own have "virtual" links into Rj.
    pub fn merges_extended(&self) -> bool {
        self.a == self.s && self.s >= self.d && self.d == self.b
    }
}

/// The trivial clusters each page links into only virtually: through a link
/// to a page that was not crawled or is not in that cluster, written the
/// same way as a link from another page of its cluster into that cluster.
#[derive(Debug, Clone, Default)]
pub struct VirtualLinks {
    /// (page, cluster), sorted, unique.
    pairs: Vec<(u32, TrivialClusterId)>,
}

impl VirtualLinks {
    /// `urls[page]` and `uncrawled[page]` (the [`relative_link_key`]s of
    /// its links to pages not crawled, sorted) by page.
    pub fn find(
        graph: &WebGraph,
        labels: &[TrivialClusterId],
        sizes: &[u32],
        urls: &[&str],
        uncrawled: &[&[u64]],
    ) -> VirtualLinks {
        let in_large = |page: usize| {
            labels[page] != TrivialClusterId::NONE && sizes[labels[page].index()] >= 2
        };
        // (Ri, relative link, Rj) for every real link between clusters.
        let mut written: Vec<(TrivialClusterId, u64, TrivialClusterId)> = (0..labels.len())
            .into_par_iter()
            .filter(|&page| in_large(page))
            .flat_map_iter(|page| {
                let from = labels[page];
                graph
                    .outlinks(PageId(page as u32))
                    .filter_map(move |target| {
                        let to = labels[target.0 as usize];
                        if to == TrivialClusterId::NONE || to == from {
                            return None;
                        }
                        let link = relative_link_key(urls[page], urls[target.0 as usize])?;
                        Some((from, link, to))
                    })
            })
            .collect();
        written.par_sort_unstable();
        written.dedup();
        let mut pairs: Vec<(u32, TrivialClusterId)> = (0..labels.len())
            .into_par_iter()
            .filter(|&page| in_large(page))
            .flat_map_iter(|page| {
                let from = labels[page];
                let written = &written;
                // Each link as written, and the cluster it really leads to.
                let crawled = graph
                    .outlinks(PageId(page as u32))
                    .filter_map(move |target| {
                        let link = relative_link_key(urls[page], urls[target.0 as usize])?;
                        Some((link, labels[target.0 as usize]))
                    });
                let links: Vec<(u64, TrivialClusterId)> = uncrawled[page]
                    .iter()
                    .map(|&link| (link, TrivialClusterId::NONE))
                    .chain(crawled)
                    .collect();
                links.into_iter().flat_map(move |(link, reached)| {
                    let start = written.partition_point(|entry| (entry.0, entry.1) < (from, link));
                    written[start..]
                        .iter()
                        .take_while(move |entry| (entry.0, entry.1) == (from, link))
                        .filter(move |entry| entry.2 != reached)
                        .map(move |entry| (page as u32, entry.2))
                })
            })
            .collect();
        pairs.par_sort_unstable();
        pairs.dedup();
        VirtualLinks { pairs }
    }

    /// The clusters `page` links into virtually.
    pub fn of(&self, page: PageId) -> impl Iterator<Item = TrivialClusterId> + '_ {
        let start = self.pairs.partition_point(|&(p, _)| p < page.0);
        self.pairs[start..]
            .iter()
            .take_while(move |&&(p, _)| p == page.0)
            .map(|&(_, cluster)| cluster)
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

/// LinkSummary rows, sorted by (from, to), for the pairs of clusters that
/// `keep(a, s)` accepts on their source side (`|_, _| true` for the whole
/// table; `a == s` for the rows a merge condition can hold on, which keeps the
/// memory to what growth needs).
///
/// `labels[page]` is the page's trivial cluster (dense from 0) or
/// [`TrivialClusterId::NONE`]; `sizes[cluster]` its number of pages.
pub fn link_summary(
    graph: &WebGraph,
    labels: &[TrivialClusterId],
    sizes: &[u32],
    virtual_links: &VirtualLinks,
    keep: impl Fn(u32, u32) -> bool + Sync,
) -> Vec<LinkSummaryRow> {
    let pages = labels.len();
    // s: for each source page, the distinct clusters it links into.
    let mut source_keys: Vec<u64> = (0..pages)
        .into_par_iter()
        .filter(|&page| labels[page] != TrivialClusterId::NONE)
        .flat_map_iter(|page| {
            let from = labels[page];
            let mut targets: Vec<TrivialClusterId> = graph
                .outlinks(PageId(page as u32))
                .map(|target| labels[target.0 as usize])
                .filter(|&to| to != TrivialClusterId::NONE && to != from)
                .chain(virtual_links.of(PageId(page as u32)))
                .collect();
            targets.sort_unstable();
            targets.dedup();
            targets.into_iter().map(move |to| key(from, to))
        })
        .collect();
    source_keys.par_sort_unstable();
    let mut rows: Vec<LinkSummaryRow> = runs(&source_keys)
        .filter_map(|(key, s)| {
            let (from, to) = unkey(key);
            let a = sizes[from.index()];
            keep(a, s).then_some(LinkSummaryRow {
                from,
                to,
                a,
                b: sizes[to.index()],
                s,
                d: 0,
            })
        })
        .collect();
    drop(source_keys);

    // d: for each target page, the distinct clusters linking to it, counted
    // only for the rows kept.
    let kept: Vec<u64> = rows.iter().map(|row| key(row.from, row.to)).collect();
    let mut target_keys: Vec<u64> = (0..pages)
        .into_par_iter()
        .filter(|&page| labels[page] != TrivialClusterId::NONE)
        .flat_map_iter(|page| {
            let to = labels[page];
            let mut sources: Vec<TrivialClusterId> = graph
                .inlinks(PageId(page as u32))
                .map(|source| labels[source.0 as usize])
                .filter(|&from| from != TrivialClusterId::NONE && from != to)
                .collect();
            sources.sort_unstable();
            sources.dedup();
            let kept = &kept;
            sources
                .into_iter()
                .map(move |from| key(from, to))
                .filter(move |key| kept.binary_search(key).is_ok())
        })
        .collect();
    target_keys.par_sort_unstable();
    // d counts real links only; a row whose links are all virtual has d = 0.
    let mut counted = runs(&target_keys).peekable();
    for row in &mut rows {
        if let Some(&(key_d, d)) = counted.peek() {
            if key_d == key(row.from, row.to) {
                row.d = d;
                counted.next();
            }
        }
    }
    rows
}

/// A pair of trivial clusters packed into one number, which sorts as the
/// pair does.
fn key(from: TrivialClusterId, to: TrivialClusterId) -> u64 {
    (u64::from(from.0) << 32) | u64::from(to.0)
}

/// The pair of trivial clusters a [`key`] packs.
fn unkey(key: u64) -> (TrivialClusterId, TrivialClusterId) {
    (
        TrivialClusterId((key >> 32) as u32),
        TrivialClusterId(key as u32),
    )
}

/// (value, length) of each run of equal values in a sorted slice.
fn runs(sorted: &[u64]) -> impl Iterator<Item = (u64, u32)> + '_ {
    sorted
        .chunk_by(|first, second| first == second)
        .map(|run| (run[0], run.len() as u32))
}
