//! Rankers `ip4` and `ip3` (bharat-2000 §3.1), from the addresses the crawl
//! recorded (`WARC-IP-Address`).
//!
//! Hosts are clustered by address (`ip4`) or by its first three octets
//! (`ip3`; for IPv6, its first three groups). The larger a cluster, the less
//! likely all its hosts are mirrors (virtual hosting puts thousands of sites
//! on one address), so clusters are listed smallest first, with at most 200
//! pairs from each for `ip4` and 5 for `ip3`, chosen at random (here: by a
//! fixed hash, so runs agree) when a cluster has more. A pair's score is
//! 1 / (hosts in its cluster - 1).

use std::collections::{BTreeMap, HashSet};
use std::net::IpAddr;

use xxhash_rust::xxh3::xxh3_64;

use super::hosts::Web;
use super::{HostPair, Ranked};
use crate::pages::HostId;

const IP4_PAIRS_PER_CLUSTER: usize = 200;
const IP3_PAIRS_PER_CLUSTER: usize = 5;

pub fn ip4(web: &Web<'_>) -> Vec<Ranked> {
    by_key(web, |ip| Some(ip.to_string()), IP4_PAIRS_PER_CLUSTER)
}

pub fn ip3(web: &Web<'_>) -> Vec<Ranked> {
    by_key(web, subnet, IP3_PAIRS_PER_CLUSTER)
}

/// The first three octets of an IPv4 address (also one written as IPv6,
/// `::ffff:a.b.c.d`), the first three groups (48 bits) of an IPv6 one.
fn subnet(ip: &str) -> Option<String> {
    let address: IpAddr = ip.trim_matches(['[', ']']).parse().ok()?;
    let address = match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    Some(match address {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            format!("{a}.{b}.{c}")
        }
        IpAddr::V6(v6) => {
            let [a, b, c, ..] = v6.segments();
            format!("{a:x}:{b:x}:{c:x}")
        }
    })
}

fn by_key(web: &Web<'_>, key: impl Fn(&str) -> Option<String>, cap: usize) -> Vec<Ranked> {
    let mut clusters: BTreeMap<String, Vec<HostId>> = BTreeMap::new();
    for host in &web.hosts {
        let keys: HashSet<String> = host.ips.iter().filter_map(|ip| key(ip)).collect();
        for key in keys {
            clusters.entry(key).or_default().push(host.id);
        }
    }
    let mut clusters: Vec<(String, Vec<HostId>)> = clusters
        .into_iter()
        .filter(|(_, hosts)| hosts.len() > 1)
        .collect();
    clusters.sort_by(|x, y| x.1.len().cmp(&y.1.len()).then(x.0.cmp(&y.0)));
    let mut seen = HashSet::new();
    let mut ranking = Vec::new();
    for (key, hosts) in clusters {
        let mut pairs: Vec<HostPair> = Vec::new();
        for (index, &first) in hosts.iter().enumerate() {
            for &second in &hosts[index + 1..] {
                pairs.push(HostPair::new(first, second));
            }
        }
        if pairs.len() > cap {
            pairs
                .sort_by_key(|pair| xxh3_64(format!("{key} {} {}", pair.a.0, pair.b.0).as_bytes()));
            pairs.truncate(cap);
            pairs.sort();
        }
        let score = 1.0 / (hosts.len() - 1) as f64;
        for pair in pairs {
            if seen.insert(pair) {
                ranking.push(Ranked { pair, score });
            }
        }
    }
    ranking
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnets_of_both_families() {
        assert_eq!(subnet("203.0.113.40").as_deref(), Some("203.0.113"));
        assert_eq!(subnet("2001:db8:1:2::1").as_deref(), Some("2001:db8:1"));
        // Written two ways, one subnet.
        assert_eq!(subnet("2001:db8::1"), subnet("2001:0db8:0000:ffff::2"));
        assert_eq!(subnet("::ffff:192.0.2.7").as_deref(), Some("192.0.2"));
        assert_eq!(subnet("bogus"), None);
    }
}
