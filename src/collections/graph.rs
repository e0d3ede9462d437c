//! The web graph (cho-2000 Definition 1): a node per crawled page, an edge
//! per hyperlink between crawled pages.
//!
//! Stored as two petgraph compressed-sparse-row graphs (links and reversed
//! links), whose node numbers are page ids; petgraph's indices never leave
//! this type, callers see [`PageId`]s.

use petgraph::csr::Csr;
use rayon::prelude::*;

use crate::pages::{HostId, PageId, PageTable};

type Adjacency = Csr<(), (), petgraph::Directed, u32>;

/// The links between the pages of a crawl, in both directions.
pub struct WebGraph {
    forward: Adjacency,
    backward: Adjacency,
    hosts: Vec<HostId>,
    external_inlinks: Vec<u32>,
}

impl WebGraph {
    /// A graph of `hosts.len()` pages (page `i` on `hosts[i]`) and the given
    /// links; self-links and repeated links are dropped, links to pages
    /// outside the graph are ignored.
    pub fn new(hosts: Vec<HostId>, links: Vec<(PageId, PageId)>) -> WebGraph {
        let pages = hosts.len();
        let mut forward: Vec<(u32, u32)> = links
            .into_iter()
            .filter(|(from, to)| from != to && (from.0 as usize) < pages && (to.0 as usize) < pages)
            .map(|(from, to)| (from.0, to.0))
            .collect();
        forward.par_sort_unstable();
        forward.dedup();
        let mut backward: Vec<(u32, u32)> = forward.par_iter().map(|&(a, b)| (b, a)).collect();
        backward.par_sort_unstable();
        let external_inlinks = {
            let mut counts = vec![0u32; pages];
            for &(from, to) in &forward {
                if hosts[from as usize] != hosts[to as usize] {
                    counts[to as usize] += 1;
                }
            }
            counts
        };
        WebGraph {
            forward: adjacency(&forward, pages),
            backward: adjacency(&backward, pages),
            hosts,
            external_inlinks,
        }
    }

    /// The graph of a page table. A link to a redirect counts as a link to
    /// the page the redirect leads to (when that page was crawled), through
    /// at most `redirect_hops` redirects.
    pub fn from_table(table: &PageTable, redirect_hops: usize) -> WebGraph {
        let resolve = |mut target: PageId| -> PageId {
            for _ in 0..redirect_hops {
                let page = &table.pages[target.0 as usize];
                match page.outlinks.as_ref() {
                    [next] if (300..400).contains(&page.status) => target = *next,
                    _ => break,
                }
            }
            target
        };
        let links: Vec<(PageId, PageId)> = table
            .pages
            .par_iter()
            .enumerate()
            .flat_map_iter(|(index, page)| {
                let from = PageId(index as u32);
                let redirect = (300..400).contains(&page.status);
                page.outlinks
                    .iter()
                    .filter(move |_| !redirect)
                    .map(move |&target| (from, resolve(target)))
            })
            .collect();
        WebGraph::new(table.pages.iter().map(|page| page.host).collect(), links)
    }

    /// The same graph with each `(alias, page)` pair made one page: links
    /// to the alias lead to the page, the alias links nowhere.
    pub fn merge_aliases(&self, aliases: &[(PageId, PageId)]) -> WebGraph {
        let mut same: Vec<u32> = (0..self.page_count() as u32).collect();
        for &(alias, page) in aliases {
            same[alias.0 as usize] = page.0;
        }
        let links: Vec<(PageId, PageId)> = (0..self.page_count() as u32)
            .into_par_iter()
            .filter(|&page| same[page as usize] == page)
            .flat_map_iter(|page| {
                let same = &same;
                self.outlinks(PageId(page))
                    .map(move |target| (PageId(page), PageId(same[target.0 as usize])))
            })
            .collect();
        WebGraph::new(self.hosts.clone(), links)
    }

    pub fn page_count(&self) -> usize {
        self.hosts.len()
    }

    pub fn link_count(&self) -> usize {
        self.forward.edge_count()
    }

    pub fn host(&self, page: PageId) -> HostId {
        self.hosts[page.0 as usize]
    }

    /// The pages `page` links to, in page order.
    pub fn outlinks(&self, page: PageId) -> impl ExactSizeIterator<Item = PageId> + '_ {
        self.forward
            .neighbors_slice(page.0)
            .iter()
            .map(|&index| PageId(index))
    }

    /// Whether `from` links to `to`.
    pub fn links_to(&self, from: PageId, to: PageId) -> bool {
        self.forward.contains_edge(from.0, to.0)
    }

    /// The pages that link to `page`, in page order.
    pub fn inlinks(&self, page: PageId) -> impl ExactSizeIterator<Item = PageId> + '_ {
        self.backward
            .neighbors_slice(page.0)
            .iter()
            .map(|&index| PageId(index))
    }

    /// How many pages on other hosts link to `page`.
    pub fn inlinks_from_other_hosts(&self, page: PageId) -> u32 {
        self.external_inlinks[page.0 as usize]
    }

    /// Bytes held by the graph's tables (for the benchmarks).
    pub fn heap_bytes(&self) -> usize {
        let links = self.forward.edge_count() * 2 * std::mem::size_of::<u32>();
        let rows = 2 * (self.hosts.len() + 1) * std::mem::size_of::<usize>();
        links + rows + self.hosts.len() * 2 * std::mem::size_of::<u32>()
    }
}

/// A CSR graph of `pages` nodes from links sorted by (from, to), unique.
fn adjacency(sorted: &[(u32, u32)], pages: usize) -> Adjacency {
    let mut graph = Adjacency::from_sorted_edges(sorted).expect("links are sorted and unique");
    while graph.node_count() < pages {
        graph.add_node(());
    }
    graph
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_unique_without_self_links_and_both_ways() {
        let hosts = vec![HostId(0), HostId(0), HostId(1), HostId(1)];
        let links = vec![
            (PageId(0), PageId(1)),
            (PageId(0), PageId(1)),
            (PageId(1), PageId(1)),
            (PageId(2), PageId(1)),
            (PageId(3), PageId(1)),
            (PageId(1), PageId(9)),
        ];
        let graph = WebGraph::new(hosts, links);
        assert_eq!(graph.page_count(), 4);
        assert_eq!(graph.link_count(), 3);
        assert_eq!(graph.outlinks(PageId(0)).collect::<Vec<_>>(), [PageId(1)]);
        assert_eq!(graph.outlinks(PageId(3)).collect::<Vec<_>>(), [PageId(1)]);
        assert_eq!(
            graph.inlinks(PageId(1)).collect::<Vec<_>>(),
            [PageId(0), PageId(2), PageId(3)]
        );
        assert_eq!(graph.inlinks(PageId(3)).count(), 0);
        assert_eq!(graph.inlinks_from_other_hosts(PageId(1)), 2);
        assert_eq!(graph.inlinks_from_other_hosts(PageId(0)), 0);
    }

    #[test]
    fn links_through_redirects_reach_the_target() {
        use crate::test_support::{capture, capture_with_status};
        let mut redirect = capture_with_status("http://a.example/docs", "", 301);
        redirect.links = crate::pages::Links::from_iter(["http://a.example/docs/"]);
        let mut start = capture("http://a.example/", "start page");
        start.links = crate::pages::Links::from_iter(["http://a.example/docs"]);
        let target = capture("http://a.example/docs/", "the docs");
        let table = PageTable::build(&[&[start, redirect, target]]);
        let graph = WebGraph::from_table(
            &table,
            crate::collections::CollectionRules::default().redirect_hops,
        );
        let id = |url: &str| table.find_url(url).unwrap();
        assert_eq!(
            graph.outlinks(id("http://a.example/")).collect::<Vec<_>>(),
            [id("http://a.example/docs/")]
        );
        // The redirect itself is not a page that links anywhere.
        assert_eq!(graph.outlinks(id("http://a.example/docs")).count(), 0);
    }
}
