//! The crawl seen host by host: each considered host's paths, pages and IP
//! addresses, and the lookups the rankers and the classification share.

use std::collections::HashMap;

use crate::pages::{HostId, PageId, PageTable};
use crate::similarity::Similarity;

use super::candidates::HostUrls;
use super::{HostPair, MirrorsConfig};

/// One host with enough URLs to be considered.
#[derive(Debug, Clone)]
pub struct HostData {
    pub id: HostId,
    pub name: String,
    /// Every path of the host in the crawl (after the host name, query
    /// included), sorted, unique.
    pub paths: Vec<String>,
    /// The page of each path, in the same order.
    pub pages: Vec<PageId>,
    /// The addresses the host was crawled from, sorted, unique.
    pub ips: Vec<String>,
}

impl HostData {
    pub fn page_at(&self, path: &str) -> Option<PageId> {
        self.paths
            .binary_search_by(|candidate| candidate.as_str().cmp(path))
            .ok()
            .map(|index| self.pages[index])
    }

    pub fn url_count(&self) -> usize {
        self.paths.len()
    }
}

/// The hosts of a crawl: those considered, which the rankers read, and the
/// others, which only classification looks up (a copy of a collection on a
/// small host still gets its level).
pub struct Web<'a> {
    pub table: &'a PageTable,
    pub similarity: &'a Similarity,
    /// Hosts with at least `min_urls` URLs.
    pub hosts: Vec<HostData>,
    /// Hosts with fewer (and at least one).
    others: Vec<HostData>,
    /// URLs (distinct paths) of every host of the table, by host id.
    pub url_counts: Vec<u32>,
    /// By page: a stand-in (one text answering many URLs of its host, see
    /// [`crate::similarity::stand_ins`]), which is no document.
    pub stand_ins: Vec<bool>,
    /// Where each host is: considered or not, and its place there.
    position: HashMap<HostId, (bool, usize)>,
}

impl<'a> Web<'a> {
    pub fn new(
        table: &'a PageTable,
        similarity: &'a Similarity,
        config: &MirrorsConfig,
    ) -> Web<'a> {
        // (path, fetched first, page): of the pages of one path (under http
        // and https, say), the one answered 200 with a body is kept.
        let mut by_host: Vec<Vec<(String, bool, PageId)>> = vec![Vec::new(); table.hosts.len()];
        let mut ips: Vec<Vec<String>> = vec![Vec::new(); table.hosts.len()];
        for (index, page) in table.pages.iter().enumerate() {
            let Some((_, path)) = split_url(&page.url) else {
                continue;
            };
            let host = page.host.0 as usize;
            if host >= by_host.len() {
                continue;
            }
            let fetched = page.status == 200 && page.content_key.is_some();
            by_host[host].push((path.to_string(), !fetched, PageId(index as u32)));
            if let Some(ip) = &page.ip {
                ips[host].push(ip.to_string());
            }
        }
        let (mut hosts, mut others) = (Vec::new(), Vec::new());
        let mut url_counts = vec![0u32; table.hosts.len()];
        for (index, mut entries) in by_host.into_iter().enumerate() {
            // One page per path: the same path under http and https counts once.
            entries.sort();
            entries.dedup_by(|later, earlier| later.0 == earlier.0);
            url_counts[index] = entries.len() as u32;
            if entries.is_empty() {
                continue;
            }
            let considered = entries.len() >= config.min_urls as usize;
            let mut host_ips = std::mem::take(&mut ips[index]);
            host_ips.sort();
            host_ips.dedup();
            let (paths, pages) = entries
                .into_iter()
                .map(|(path, _, page)| (path, page))
                .unzip();
            let data = HostData {
                id: HostId(index as u32),
                name: table.hosts[index].clone(),
                paths,
                pages,
                ips: host_ips,
            };
            if considered {
                hosts.push(data);
            } else {
                others.push(data);
            }
        }
        let place = |considered: bool| {
            move |(position, host): (usize, &HostData)| (host.id, (considered, position))
        };
        let position = hosts
            .iter()
            .enumerate()
            .map(place(true))
            .chain(others.iter().enumerate().map(place(false)))
            .collect();
        Web {
            table,
            similarity,
            hosts,
            others,
            url_counts,
            position,
            stand_ins: similarity.stand_ins().to_vec(),
        }
    }

    pub fn host(&self, id: HostId) -> Option<&HostData> {
        self.position.get(&id).map(|&(considered, position)| {
            if considered {
                &self.hosts[position]
            } else {
                &self.others[position]
            }
        })
    }

    pub fn is_considered(&self, id: HostId) -> bool {
        self.position
            .get(&id)
            .is_some_and(|(considered, _)| *considered)
    }

    /// An address both hosts were crawled from.
    pub fn shared_ip(&self, pair: HostPair) -> Option<String> {
        let (a, b) = (self.host(pair.a)?, self.host(pair.b)?);
        a.ips
            .iter()
            .find(|ip| b.ips.binary_search(ip).is_ok())
            .cloned()
    }

    /// The input of candidate detection: every considered host's paths.
    pub fn candidate_inputs(&self) -> Vec<HostUrls<'_>> {
        self.hosts
            .iter()
            .map(|host| HostUrls {
                id: host.id,
                name: &host.name,
                paths: host.paths.iter().map(String::as_str).collect(),
            })
            .collect()
    }
}

/// A URL's host and path (from the `/` after the host, query included; `/`
/// when there is none). `None` without a `scheme://`.
pub fn split_url(url: &str) -> Option<(&str, &str)> {
    let (_, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..end];
    let path = rest[end..].split('#').next().unwrap_or("");
    Some((host, if path.is_empty() { "/" } else { path }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_host_and_path() {
        assert_eq!(
            split_url("http://www.example.org/a/b.html?x=1#top"),
            Some(("www.example.org", "/a/b.html?x=1"))
        );
        assert_eq!(
            split_url("https://www.example.org"),
            Some(("www.example.org", "/"))
        );
        assert_eq!(split_url("www.example.org/a"), None);
    }
}
