//! The operator's summary of `evolve`: what happened to each host and to
//! each replicated manual between the two crawls, before the measures.
//!
//! Each copy of a manual in B is matched with the copy on the same host in
//! the cluster of A it continues (the clusters are matched as `index`
//! matches them, [`crate::collections::continuity`]), and their pages by URL:
//! - a copy's **version** is the set of other copies holding the same own
//!   text (a mirror's banner aside) at nine in ten of the places both hold:
//!   its peers. A copy whose bytes changed on a tenth of its pages or more
//!   and whose peers changed (fewer than half of them still peers, counted
//!   among hosts holding copies in both crawls) moved to another version.
//!   Own texts are only compared within one crawl (what counts as a site's
//!   chrome depends on the crawl); pages across crawls by their bytes;
//! - a copy whose pages changed otherwise was **resynchronised** (it took
//!   the original's changes, or rewrote its banner's date); the principal
//!   copy's changes are the original's **pages changed**; a copy that moved
//!   to another version was resynchronised too, and both are said;
//! - a copy on the original's own server or site (its address, or its
//!   domain under another name: an alias, a second server) **changed with**
//!   the original: it is the original under another name, not a mirror that
//!   copied it again;
//! - a copy of the original's version (the same own text at nine in ten of
//!   the places both hold) that holds the original's old text at places
//!   where the original changed since is **behind**; a copy of an older
//!   version is another version, never behind;
//! - hosts and copies found on one side only **appeared** or
//!   **disappeared**; mirrored host pairs whose level of content changed
//!   (1, 2, 3 or 5; level 4 comes and goes with the pages each crawl
//!   sampled) are listed.
//!
//! Hosts holding no manual report their changed pages; hosts that changed
//! nothing seen are named last, as **unchanged**.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

use serde::Serialize;

use super::evolve::{mirrored_pairs, principal_prefix, ClusterPairs, Side};
use super::versions::{same_version, texts_by_place};
use crate::collections::{ClusterId, ClusterKind, Collection};
use crate::mirrors::Level;
use crate::pages::url_path;

/// What changed on one host.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostChangeKind {
    Appeared,
    Disappeared,
    CopyAppeared,
    CopyDisappeared,
    VersionChanged,
    Resynchronised,
    PagesChanged,
    Behind,
    ChangedWith,
    LevelChanged,
    Unchanged,
}

impl HostChangeKind {
    pub fn name(&self) -> &'static str {
        match self {
            HostChangeKind::Appeared => "appeared",
            HostChangeKind::Disappeared => "disappeared",
            HostChangeKind::CopyAppeared => "copy appeared",
            HostChangeKind::CopyDisappeared => "copy disappeared",
            HostChangeKind::VersionChanged => "version changed",
            HostChangeKind::Resynchronised => "resynchronised",
            HostChangeKind::PagesChanged => "pages changed",
            HostChangeKind::Behind => "behind",
            HostChangeKind::ChangedWith => "changed with",
            HostChangeKind::LevelChanged => "level changed",
            HostChangeKind::Unchanged => "unchanged",
        }
    }
}

/// One change of one host.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct HostChange {
    pub kind: HostChangeKind,
    pub host: String,
    /// The manual concerned (its principal copy's folder), if any.
    pub manual: Option<String>,
    /// Pages concerned (changed, behind, of the copy...).
    pub pages: u64,
    pub detail: String,
}

/// What changed in one manual.
#[derive(Debug, Clone, Serialize)]
pub struct ManualChange {
    /// The principal copy's folder (in B when the manual is there).
    pub manual: String,
    pub copies: (u64, u64),
    /// Pages the original (the principal copy) changed.
    pub original_pages_changed: u64,
    /// Hosts of its copies by kind of change (unchanged ones left out).
    pub hosts: BTreeMap<String, Vec<String>>,
}

/// The summary: one line per host and kind of change, most important kind
/// first, and one entry per manual that changed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub hosts: Vec<HostChange>,
    pub manuals: Vec<ManualChange>,
}

/// A copy of a manual on one side.
struct CopyView<'s> {
    side: &'s Side,
    collection: &'s Collection,
    own_text: &'s [u64],
}

impl CopyView<'_> {
    fn host(&self) -> &str {
        self.side.table.host_name(self.collection.host)
    }

    /// Own text by place (path below the copy's folder).
    fn texts(&self) -> HashMap<&str, u64> {
        texts_by_place(&self.side.table, self.collection, self.own_text)
    }
}

/// A copy's pages of both crawls by place: (place, body in A, body in B).
fn matched<'s>(
    earlier: &CopyView<'s>,
    later: &CopyView<'s>,
) -> Vec<(String, Option<u128>, Option<u128>)> {
    let (a, b) = (earlier.side, later.side);
    let folder = url_path(&later.collection.prefix).unwrap_or("/");
    later
        .collection
        .pages
        .iter()
        .filter_map(|&page| {
            let page_b = &b.table.pages[page.0 as usize];
            let before = a.table.find_url(&page_b.url)?;
            if a.collections.collection_of[before.0 as usize] != Some(earlier.collection.id) {
                return None;
            }
            let page_a = &a.table.pages[before.0 as usize];
            let place = url_path(&page_b.url)?.strip_prefix(folder)?.to_string();
            let body = |page: &crate::pages::Page| page.content_key.map(|key| key.signature.0);
            Some((place, body(page_a), body(page_b)))
        })
        .collect()
}

/// The places of a copy held in both crawls.
fn common_places(earlier: &CopyView, later: &CopyView) -> u64 {
    matched(earlier, later).len() as u64
}

/// The places of a copy whose bytes changed between the crawls.
fn changed_places(earlier: &CopyView, later: &CopyView) -> HashSet<String> {
    matched(earlier, later)
        .into_iter()
        .filter(|(_, before, after)| before != after)
        .map(|(place, _, _)| place)
        .collect()
}

/// The copies of a cluster of collections (none for a cluster of copies of
/// one page).
fn views<'s>(side: &'s Side, own: &'s [u64], id: ClusterId) -> Vec<CopyView<'s>> {
    let Some(cluster) = side.collections.cluster(id) else {
        return Vec::new();
    };
    if cluster.kind != ClusterKind::Collection {
        return Vec::new();
    }
    cluster
        .collections
        .iter()
        .filter_map(|&copy| side.collections.collection(copy))
        .map(|collection| CopyView {
            side,
            collection,
            own_text: own,
        })
        .collect()
}

/// Whether a copy is the original under another name: on its address, or
/// on its site (the same domain once a first label such as `www` or `www2`
/// is set aside).
fn same_site(copy: &CopyView, original: &CopyView) -> bool {
    let address = |view: &CopyView| {
        view.collection
            .pages
            .first()
            .and_then(|&page| view.side.table.page(page))
            .and_then(|page| page.ip.clone())
    };
    if address(copy).is_some() && address(copy) == address(original) {
        return true;
    }
    let site = |host: &str| -> String {
        let labels: Vec<&str> = host.split('.').collect();
        // A first label is set aside only where two remain (`www.x.org`,
        // not `x.org`).
        if labels.len() > 2 {
            labels[1..].join(".")
        } else {
            host.to_string()
        }
    };
    site(copy.host()) == site(original.host())
}

/// The hosts of the copies agreeing with `copy` on nine in ten of the places
/// both hold or more (its version's other holders: a copy a few changes
/// behind stays one, another release of the manual does not).
fn peers(copy: &CopyView, others: &[CopyView]) -> BTreeSet<String> {
    let mine = copy.texts();
    others
        .iter()
        .filter(|other| other.collection.id != copy.collection.id)
        .filter(|other| same_version(&mine, &other.texts()))
        .map(|other| other.host().to_string())
        .collect()
}

pub(super) fn summarise(a: &Side, b: &Side, pairs: &ClusterPairs) -> Summary {
    let own_a = a.similarity.own_text_signatures();
    let own_b = b.similarity.own_text_signatures();
    let hosts_of = |side: &Side| -> BTreeSet<String> {
        side.table
            .pages
            .iter()
            .map(|page| side.table.host_name(page.host).to_string())
            .collect()
    };
    let (hosts_a, hosts_b) = (hosts_of(a), hosts_of(b));

    let mut changes: Vec<HostChange> = Vec::new();
    let mut manuals: Vec<ManualChange> = Vec::new();
    for &(id_a, id_b) in &pairs.pairs {
        // A part of a manual (a sub-tree that is a cluster of its own) comes
        // and goes with the manual's copies: not a copy of its own.
        let part = |side: &Side, id: Option<ClusterId>| {
            id.is_some_and(|id| side.collections.lineages.is_part(&side.collections, id))
        };
        if part(a, id_a) || part(b, id_b) {
            continue;
        }
        let copies_a = id_a.map_or_else(Vec::new, |id| views(a, &own_a, id));
        let copies_b = id_b.map_or_else(Vec::new, |id| views(b, &own_b, id));
        if copies_a.len() < 2 && copies_b.len() < 2 {
            continue;
        }
        let manual = match id_b {
            Some(id) if !copies_b.is_empty() => principal_prefix(b, id),
            _ => id_a.map_or_else(String::new, |id| principal_prefix(a, id)),
        };
        let principal_b = id_b
            .and_then(|id| b.collections.cluster(id))
            .map(|cluster| cluster.principal());
        let hosts_in_both: BTreeSet<String> = copies_a
            .iter()
            .map(|copy| copy.host().to_string())
            .filter(|host| copies_b.iter().any(|copy| copy.host() == host))
            .collect();
        let mut entry = ManualChange {
            manual: manual.clone(),
            copies: (copies_a.len() as u64, copies_b.len() as u64),
            original_pages_changed: 0,
            hosts: BTreeMap::new(),
        };
        let mut note = |kind: HostChangeKind,
                        host: &str,
                        pages: u64,
                        detail: String,
                        entry: &mut ManualChange| {
            entry
                .hosts
                .entry(kind.name().to_string())
                .or_default()
                .push(host.to_string());
            changes.push(HostChange {
                kind,
                host: host.to_string(),
                manual: Some(manual.clone()),
                pages,
                detail,
            });
        };
        // The original in each crawl (the principal copy of B, on its host).
        let original_b = copies_b
            .iter()
            .find(|copy| Some(copy.collection.id) == principal_b);
        let original_a = original_b
            .and_then(|original| copies_a.iter().find(|copy| copy.host() == original.host()));
        let original_texts = (
            original_a.map(CopyView::texts).unwrap_or_default(),
            original_b.map(CopyView::texts).unwrap_or_default(),
        );
        // The original's places whose bytes changed, and its bodies in A.
        let original_changed: HashSet<String> = match (original_a, original_b) {
            (Some(before), Some(after)) => changed_places(before, after),
            _ => HashSet::new(),
        };
        let original_old_bodies: HashMap<String, u128> = match (original_a, original_b) {
            (Some(before), Some(after)) => matched(before, after)
                .into_iter()
                .filter_map(|(place, body_a, _)| Some((place, body_a?)))
                .collect(),
            _ => HashMap::new(),
        };
        for copy in &copies_b {
            let host = copy.host().to_string();
            let earlier = copies_a.iter().find(|other| other.host() == host);
            let Some(earlier) = earlier else {
                let kind = if hosts_a.contains(&host) {
                    HostChangeKind::CopyAppeared
                } else {
                    HostChangeKind::Appeared
                };
                note(
                    kind,
                    &host,
                    copy.collection.pages.len() as u64,
                    format!(
                        "a copy of {} pages in {}",
                        copy.collection.pages.len(),
                        copy.collection.prefix
                    ),
                    &mut entry,
                );
                continue;
            };
            // Pages of both crawls, by URL.
            let changed = changed_places(earlier, copy);
            let common = common_places(earlier, copy);
            let bytes_changed = changed.len() as u64;
            let is_original = Some(copy.collection.id) == principal_b;
            let (peers_a, peers_b) = (peers(earlier, &copies_a), peers(copy, &copies_b));
            let kept: Vec<&String> = peers_a
                .iter()
                .filter(|peer| hosts_in_both.contains(*peer))
                .collect();
            let now: Vec<&String> = peers_b
                .iter()
                .filter(|peer| hosts_in_both.contains(*peer))
                .collect();
            let still = kept.iter().filter(|peer| now.contains(peer)).count();
            let union = kept.len() + now.len() - still;
            let peers_changed = union > 0 && still * 2 < union;
            let same_site =
                !is_original && original_b.is_some_and(|original| same_site(copy, original));
            if !is_original && common > 0 && bytes_changed * 10 >= common && peers_changed {
                let describe = |peers: &BTreeSet<String>| {
                    if peers.is_empty() {
                        "no other copy".to_string()
                    } else {
                        peers.iter().cloned().collect::<Vec<_>>().join(", ")
                    }
                };
                note(
                    HostChangeKind::VersionChanged,
                    &host,
                    bytes_changed,
                    format!(
                        "{bytes_changed} of {common} pages changed; it held the text of {} and now holds that of {}",
                        describe(&peers_a),
                        describe(&peers_b)
                    ),
                    &mut entry,
                );
                // Taking another version is copying the manual again.
                note(
                    HostChangeKind::Resynchronised,
                    &host,
                    bytes_changed,
                    "copied again, in its new version".to_string(),
                    &mut entry,
                );
            } else if bytes_changed > 0 {
                let kind = if is_original {
                    entry.original_pages_changed = bytes_changed;
                    HostChangeKind::PagesChanged
                } else if same_site {
                    HostChangeKind::ChangedWith
                } else {
                    HostChangeKind::Resynchronised
                };
                let detail = match kind {
                    HostChangeKind::PagesChanged => {
                        format!("{bytes_changed} of {common} pages changed (the original)")
                    }
                    HostChangeKind::ChangedWith => format!(
                        "{bytes_changed} of {common} pages changed with the original on {} (the same server or site under another name)",
                        original_b.map_or("", |original| original.host())
                    ),
                    _ => format!("{bytes_changed} of {common} pages changed"),
                };
                note(kind, &host, bytes_changed, detail, &mut entry);
            }
            // Behind: a copy of the original's version that holds, where
            // the original changed since A, the original's text of A (it did
            // not change there and held that text in A, or it holds the very
            // bytes the original had in A). An older version is not behind.
            let now = copy.texts();
            let of_the_originals_version = !is_original
                && !same_site
                && !original_changed.is_empty()
                && same_version(&now, &original_texts.1);
            if of_the_originals_version {
                let then = earlier.texts();
                let bodies_now: HashMap<String, u128> = matched(earlier, copy)
                    .into_iter()
                    .filter_map(|(place, _, body_b)| Some((place, body_b?)))
                    .collect();
                let behind = original_changed
                    .iter()
                    .filter(|place| {
                        let place = place.as_str();
                        let unchanged_old_text = !changed.contains(place)
                            && then.contains_key(place)
                            && then.get(place) == original_texts.0.get(place);
                        let old_bytes = bodies_now.contains_key(place)
                            && bodies_now.get(place) == original_old_bodies.get(place);
                        (unchanged_old_text || old_bytes)
                            && now.contains_key(place)
                            && now.get(place) != original_texts.1.get(place)
                    })
                    .count() as u64;
                if behind > 0 {
                    note(
                        HostChangeKind::Behind,
                        &host,
                        behind,
                        format!(
                            "still the original's old text on {behind} of the {} pages it changed",
                            original_changed.len()
                        ),
                        &mut entry,
                    );
                }
            }
        }
        for copy in &copies_a {
            let host = copy.host().to_string();
            if copies_b.iter().any(|other| other.host() == host) {
                continue;
            }
            let kind = if hosts_b.contains(&host) {
                HostChangeKind::CopyDisappeared
            } else {
                HostChangeKind::Disappeared
            };
            note(
                kind,
                &host,
                copy.collection.pages.len() as u64,
                format!(
                    "its copy of {} pages in {} is gone",
                    copy.collection.pages.len(),
                    copy.collection.prefix
                ),
                &mut entry,
            );
        }
        if !entry.hosts.is_empty() {
            manuals.push(entry);
        }
    }

    // Hosts gone or new without a manual, and pages changed elsewhere.
    let mentioned: HashSet<String> = changes.iter().map(|change| change.host.clone()).collect();
    for host in hosts_a.difference(&hosts_b) {
        if !mentioned.contains(host) {
            changes.push(HostChange {
                kind: HostChangeKind::Disappeared,
                host: host.clone(),
                manual: None,
                pages: 0,
                detail: "no page of it in B".into(),
            });
        }
    }
    for host in hosts_b.difference(&hosts_a) {
        if !mentioned.contains(host) {
            changes.push(HostChange {
                kind: HostChangeKind::Appeared,
                host: host.clone(),
                manual: None,
                pages: 0,
                detail: "no page of it in A".into(),
            });
        }
    }
    let mut changed_pages: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for page in &b.table.pages {
        let Some(before) = a.table.find_url(&page.url).and_then(|id| a.table.page(id)) else {
            continue;
        };
        let host = b.table.host_name(page.host).to_string();
        let entry = changed_pages.entry(host).or_default();
        entry.1 += 1;
        let body = |p: &crate::pages::Page| p.content_key.map(|key| key.signature);
        if body(before) != body(page) || before.status != page.status {
            entry.0 += 1;
        }
    }
    for (host, (changed, pages)) in &changed_pages {
        if *changed > 0 && !mentioned.contains(host) {
            changes.push(HostChange {
                kind: HostChangeKind::PagesChanged,
                host: host.clone(),
                manual: None,
                pages: *changed,
                detail: format!("{changed} of {pages} pages changed"),
            });
        }
    }
    // Mirrored pairs whose level changed between levels of content (1, 2,
    // 3, 5): level 4 (partial) comes and goes with which sampled paths each
    // crawl fetched, so changes to or from it are left to the details.
    let (before, after) = (mirrored_pairs(a), mirrored_pairs(b));
    for (pair, level) in &before {
        if let Some(now) = after
            .get(pair)
            .filter(|now| *now != level && **now != Level::Four && *level != Level::Four)
        {
            for host in [&pair.0, &pair.1] {
                changes.push(HostChange {
                    kind: HostChangeKind::LevelChanged,
                    host: host.clone(),
                    manual: None,
                    pages: 0,
                    detail: format!(
                        "{} ~ {}: level {} -> {}",
                        pair.0,
                        pair.1,
                        level.name(),
                        now.name()
                    ),
                });
            }
        }
    }
    let mentioned: HashSet<String> = changes.iter().map(|change| change.host.clone()).collect();
    for host in hosts_a.intersection(&hosts_b) {
        if !mentioned.contains(host) {
            changes.push(HostChange {
                kind: HostChangeKind::Unchanged,
                host: host.clone(),
                manual: None,
                pages: 0,
                detail: String::new(),
            });
        }
    }
    changes.sort_by(|x, y| {
        x.kind
            .cmp(&y.kind)
            .then(y.pages.cmp(&x.pages))
            .then(x.host.cmp(&y.host))
            .then(x.manual.cmp(&y.manual))
    });
    manuals.sort_by(|x, y| {
        (y.copies.0.max(y.copies.1), &x.manual).cmp(&(x.copies.0.max(x.copies.1), &y.manual))
    });
    Summary {
        hosts: changes,
        manuals,
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let changed = self
            .hosts
            .iter()
            .filter(|change| change.kind != HostChangeKind::Unchanged);
        writeln!(out, "\nBy host:")?;
        for change in changed {
            let manual = change
                .manual
                .as_ref()
                .map_or_else(String::new, |manual| format!(" [{manual}]"));
            writeln!(
                out,
                "  {:<16} {}{}: {}",
                change.kind.name(),
                change.host,
                manual,
                change.detail
            )?;
        }
        let unchanged: Vec<&str> = self
            .hosts
            .iter()
            .filter(|change| change.kind == HostChangeKind::Unchanged)
            .map(|change| change.host.as_str())
            .collect();
        if !unchanged.is_empty() {
            writeln!(out, "  {:<16} {}", "unchanged", unchanged.join(", "))?;
        }
        writeln!(out, "\nBy manual:")?;
        for manual in &self.manuals {
            let hosts: Vec<String> = manual
                .hosts
                .iter()
                .map(|(kind, hosts)| format!("{kind}: {}", hosts.join(", ")))
                .collect();
            writeln!(
                out,
                "  {} (copies {} -> {}, the original changed {} pages)",
                manual.manual, manual.copies.0, manual.copies.1, manual.original_pages_changed
            )?;
            for line in hosts {
                writeln!(out, "    {line}")?;
            }
        }
        Ok(())
    }
}
