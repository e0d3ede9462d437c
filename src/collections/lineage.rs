//! A manual's lineage: every copy of it in every version, so that search
//! shows a manual once, from its newest complete original, and offers the
//! other versions.
//!
//! cho-2000's similar clusters hold copies of the same pages; a mirror that
//! carries an older release of a manual (4.2 on the original, 3.2 and 2.2 on
//! mirrors) differs on too many pages to be a copy, so its pages form other
//! clusters, or none. A reader calls all of them the same manual. A lineage
//! gathers, by mechanism:
//!
//! 1. **Replicas**: the collections of one similar cluster.
//! 2. **Parts**: a cluster whose copies lie, more than half of them, inside
//!    the folders of a lineage's copies on the same hosts (a sub-tree that
//!    grew apart, a sub-tree a manual publishes twice) is of that manual.
//! 3. **Pages only one copy has**: a page in no cluster of collections,
//!    under the folder of a copy on its host, is a page of that copy (a page
//!    of one version only, a page the other copies' crawls missed).
//! 4. **Versions**: a unit (a cluster, or the pages of one top folder of a
//!    host that are in no collection) most of whose pages have, in another
//!    unit, a page at the same place (its path below its copy's folder, so
//!    that `/manual/x.html` and `/pub/widget/x.html` are one place, as
//!    fetterly-2004 §2 confirms mirrored pages by URL suffix) that resembles
//!    them (min-hash resemblance, the same title once version numbers are
//!    set aside), is a version of the same manual. Pages of two languages
//!    never match (translations are other manuals); a handful of shared
//!    pages (a licence, an install page of sibling projects) is no majority.
//!
//! Each copy names its version where its folder or its pages say it (a
//! version in the path, else the version string most of its pages carry in
//! their titles, headings or metadata). The principal copy of a lineage is
//! the newest version's original: among the copies of the newest version
//! named, the principal copy of its cluster (see `principal.rs`), then the
//! largest.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{ClusterKind, CollectionId, Collections};
use crate::corpus::html::version_strings;
use crate::fingerprint::{minhash_resemblance, Fingerprints};
use crate::pages::{page_arcs, parse_decimal_id, url_path, HostId, NotAnId, PageId, PageTable};
use crate::share::at_least;
use crate::similarity::Similarity;
use crate::union_find::UnionFind;

/// Settings of the lineage pass.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LineageConfig {
    /// Join versions of one manual (rule 4). Off: a lineage holds one
    /// cluster, its parts and the pages only its copies have.
    pub versions: bool,
    /// Two pages at the same place are versions of one page from this
    /// min-hash resemblance. Default 0.3: the development crawl's truth
    /// counts pages of two releases as copies from 0.5; a release further
    /// apart still shares about a third of its 5-word shingles on most
    /// pages, while two different pages of one template (an operator table,
    /// an exception class) share their boilerplate only, under 0.2.
    pub resemblance: f64,
    /// With the same title (version numbers set aside), from this
    /// resemblance: a rewritten page keeps its title.
    pub titled_resemblance: f64,
    /// A unit joins another when more than this share of its pages match
    /// there (the "most of its own text" of a version).
    pub share: f64,
    /// And at least this many of its pages (two manuals that happen to
    /// share an index page and a licence are not versions of one).
    pub min_pages: usize,
    /// Pages at one place compared at most, per unit (a place every manual
    /// has, such as `index.html`, costs no more than this).
    pub max_candidates: usize,
    /// A place that more units than this hold (`index.html`, `search.html`,
    /// `page1.html`) tells nothing of which manual a page is a version of,
    /// and is not compared: the work stays linear in the pages.
    pub max_units_per_place: usize,
    /// A copy's pages name its version when at least this share of them
    /// carry the most common version string (titles, headers, `<meta>`).
    /// A third: a manual says its version in the title of most pages, but
    /// a page that quotes another release (a changelog, "new in 2.1") or a
    /// page without the theme's header is common; fewer than a third is
    /// chance.
    pub version_share: f64,
    /// A more precise version string of the same release (`10.1.60` for
    /// `10.1`) is the copy's version when it is carried by at least this
    /// share as many pages as the common one: the manual's name says
    /// `10.1` on every page, its titles `10.1.60`.
    pub precise_version_share: f64,
}

impl Default for LineageConfig {
    fn default() -> Self {
        LineageConfig {
            versions: true,
            resemblance: 0.3,
            titled_resemblance: 0.1,
            share: 0.5,
            min_pages: 3,
            max_candidates: 8,
            max_units_per_place: 16,
            version_share: 1.0 / 3.0,
            precise_version_share: 0.5,
        }
    }
}

impl LineageConfig {
    /// Why these values cannot be used, if they cannot.
    pub fn problem(&self) -> Option<String> {
        let unit = |value: f64| (0.0..=1.0).contains(&value);
        if ![
            self.resemblance,
            self.titled_resemblance,
            self.share,
            self.version_share,
            self.precise_version_share,
        ]
        .into_iter()
        .all(unit)
        {
            return Some(
                "collections.lineage.resemblance, titled_resemblance, share, version_share and precise_version_share must be from 0 to 1"
                    .into(),
            );
        }
        if self.max_candidates == 0 || self.max_units_per_place < 2 {
            return Some(
                "collections.lineage.max_candidates must be at least 1 and max_units_per_place at least 2"
                    .into(),
            );
        }
        None
    }
}

/// A lineage's number in a generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LineageId(pub u32);

impl fmt::Display for LineageId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.0)
    }
}

impl std::str::FromStr for LineageId {
    type Err = NotAnId;

    fn from_str(text: &str) -> Result<LineageId, NotAnId> {
        parse_decimal_id(text).map(LineageId)
    }
}

/// One copy of a manual in its lineage: a folder of a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineageCopy {
    pub host: HostId,
    /// The folder holding its pages (a URL ending in `/`).
    pub prefix: String,
    /// The version its folder or its pages name.
    pub version: Option<String>,
    /// The collection it is, when it is one (a version in no cluster is
    /// none).
    pub collection: Option<CollectionId>,
    /// Its pages, those only it has included.
    pub pages: u32,
}

/// A manual in all its versions and copies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lineage {
    pub id: LineageId,
    /// The principal copy first (the newest version's original), then the
    /// other copies, newest version first, larger first.
    pub copies: Vec<LineageCopy>,
}

impl Lineage {
    /// The principal copy.
    pub fn principal(&self) -> &LineageCopy {
        &self.copies[0]
    }

    /// The releases its copies name, newest first, each once as its most
    /// precise name (`10.1` and `10.1.60` are one release).
    pub fn versions(&self) -> Vec<&str> {
        let mut versions: Vec<&str> = self
            .copies
            .iter()
            .filter_map(|copy| copy.version.as_deref())
            .collect();
        // Most precise first within a release, newest release first.
        versions.sort_by(|x, y| {
            compare_versions(y, x).then(y.split('.').count().cmp(&x.split('.').count()))
        });
        let mut releases: Vec<&str> = Vec::new();
        for version in versions {
            if !releases.iter().any(|kept| same_release(kept, version)) {
                releases.push(version);
            }
        }
        releases
    }
}

/// Where a page is in the lineages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineagePlace {
    pub lineage: LineageId,
    /// Its copy's position in [`Lineage::copies`].
    pub copy: u16,
}

/// The lineage pass's output.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Lineages {
    /// By lineage id: those of more than one copy, or of a cluster.
    pub lineages: Vec<Lineage>,
    /// By page id: its lineage and copy.
    pub of_page: Vec<Option<LineagePlace>>,
    pub counts: LineageCounts,
}

/// The lineage pass's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineageCounts {
    pub lineages: u64,
    /// Lineages whose copies name two versions or more.
    pub with_versions: u64,
    /// Clusters that joined another's lineage as a part (rule 2).
    pub parts: u64,
    /// Clusters and folders that joined a lineage as a version (rule 4).
    pub versions_joined: u64,
    /// Pages in no collection that are pages of a copy (rule 3 and the
    /// folders of rule 4).
    pub pages_added: u64,
}

impl Lineages {
    pub fn lineage(&self, id: LineageId) -> Option<&Lineage> {
        self.lineages.get(id.0 as usize)
    }

    pub fn of(&self, page: PageId) -> Option<LineagePlace> {
        self.of_page.get(page.0 as usize).copied().flatten()
    }

    /// The lineage a collection is a copy in.
    pub fn of_collection(&self, collections: &Collections, id: CollectionId) -> Option<LineageId> {
        let root = collections.collection(id)?.root;
        self.of(root).map(|place| place.lineage)
    }

    /// The manual's copy that is collection `id`, when it is one (a part of
    /// a copy is none).
    pub fn copy_of(&self, collections: &Collections, id: CollectionId) -> Option<&LineageCopy> {
        let lineage = self.lineage(self.of_collection(collections, id)?)?;
        lineage
            .copies
            .iter()
            .find(|copy| copy.collection == Some(id))
    }

    /// Whether a cluster is a part of another cluster's manual (its copies
    /// lie inside that cluster's copies): a sub-tree of a manual, not a
    /// collection of its own.
    pub fn is_part(&self, collections: &Collections, id: super::ClusterId) -> bool {
        let Some(cluster) = collections.cluster(id) else {
            return false;
        };
        let Some(lineage) = self
            .of_collection(collections, cluster.principal())
            .and_then(|lineage| self.lineage(lineage))
        else {
            return false;
        };
        !lineage.copies.iter().any(|copy| {
            copy.collection
                .is_some_and(|collection| cluster.collections.contains(&collection))
        })
    }

    /// Why these lineages cannot belong to a page table of `pages` pages.
    pub fn problem(&self, pages: usize) -> Option<String> {
        if self.of_page.len() != pages {
            return Some(format!(
                "lineages cover {} pages, the page table has {pages}",
                self.of_page.len()
            ));
        }
        for (index, lineage) in self.lineages.iter().enumerate() {
            if lineage.id.0 as usize != index || lineage.copies.is_empty() {
                return Some(format!("lineage {index} is malformed"));
            }
        }
        for place in self.of_page.iter().flatten() {
            let copies = self
                .lineage(place.lineage)
                .map_or(0, |lineage| lineage.copies.len());
            if place.copy as usize >= copies {
                return Some(format!(
                    "a page is in copy {} of lineage {}, which has {copies}",
                    place.copy, place.lineage
                ));
            }
        }
        None
    }
}

/// Orders two version strings: dotted parts compared as numbers (`x`, a
/// wildcard, as 0), a version that goes on after the other's parts newer.
pub fn compare_versions(first: &str, second: &str) -> Ordering {
    let parts = |text: &str| -> Vec<u64> {
        text.trim_start_matches(['v', 'V'])
            .split('.')
            .map(|part| part.parse::<u64>().unwrap_or(0))
            .collect()
    };
    parts(first).cmp(&parts(second))
}

/// Whether two version strings name the same release as precisely as the
/// less precise of them does (`10.1` and `10.1.60`, `3.1.x` and `3.1.1`).
pub fn same_release(first: &str, second: &str) -> bool {
    let parts = |text: &str| -> Vec<String> {
        text.trim_start_matches(['v', 'V'])
            .split('.')
            .map(str::to_string)
            .collect()
    };
    let (first, second) = (parts(first), parts(second));
    first
        .iter()
        .zip(&second)
        .all(|(x, y)| x == y || x == "x" || y == "x")
}

/// A title with its version numbers and case set aside: two versions of a
/// page keep their title, the release number in it aside.
fn title_key(title: &str) -> String {
    let mut key = title.to_lowercase();
    for version in version_strings(title) {
        key = key.replace(&version.to_lowercase(), " ");
    }
    key.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The place of a page in its copy: its path below the copy's folder `prefix`
/// (a URL path ending in `/`), a folder and its index page being one page.
/// Copies under other folders (`/manual/`, `/pub/widget/`) share it.
fn place(url: &str, prefix: &str) -> Option<String> {
    let relative = url_path(url)?.strip_prefix(prefix)?;
    Some(page_arcs(relative).join("/"))
}

/// A unit of rule 4: a cluster's copies or a host folder's loose pages.
struct Unit {
    /// Its pages that take part (compared, not stand-ins), each with its
    /// place in its copy.
    pages: Vec<(PageId, String)>,
    /// Pages a version must match more than `share` of: the largest copy's
    /// for a cluster, all for a folder.
    size: usize,
}

/// The pages of one copy that take part, with their places below the
/// copy's folder (the longest common folder of their paths).
fn placed(table: &PageTable, pages: &[PageId]) -> Vec<(PageId, String)> {
    let url = |page: &PageId| table.pages[page.0 as usize].url.as_ref();
    let folder = super::manuals::common_folder(pages.iter().filter_map(|page| url_path(url(page))));
    pages
        .iter()
        .filter_map(|page| Some((*page, place(url(page), &folder)?)))
        .collect()
}

/// Finds the lineages of a generation's collections.
///
/// `documents` says by page whether it may be of a collection (compared by
/// similarity, no stand-in); the min-hashes rule 4 compares are read from
/// `prints`. Fails only when they cannot be read.
pub fn find<F: Fingerprints + Sync>(
    table: &PageTable,
    (similarity, prints): (&Similarity, &F),
    documents: &[bool],
    collections: &Collections,
    config: &LineageConfig,
) -> Result<Lineages, F::Error> {
    let pages = table.pages.len();
    let takes_part = |page: usize| documents[page];
    // Clusters of collections by position.
    let clusters: Vec<usize> = (0..collections.clusters.len())
        .filter(|&position| collections.clusters[position].kind == ClusterKind::Collection)
        .collect();
    let in_a_copy = |page: usize| {
        collections.collection_of[page]
            .and_then(|id| collections.collection(id))
            .and_then(|collection| collections.cluster(collection.cluster))
            .is_some_and(|cluster| cluster.kind == ClusterKind::Collection)
    };

    // Units: clusters first (by position), then loose folders.
    let mut units: Vec<Unit> = clusters
        .iter()
        .map(|&position| {
            let cluster = &collections.clusters[position];
            let copies: Vec<&[PageId]> = cluster
                .collections
                .iter()
                .filter_map(|&id| collections.collection(id))
                .map(|collection| collection.pages.as_slice())
                .collect();
            Unit {
                pages: copies
                    .iter()
                    .flat_map(|pages| placed(table, pages))
                    .filter(|(page, _)| takes_part(page.0 as usize))
                    .collect(),
                size: copies.iter().map(|pages| pages.len()).max().unwrap_or(0),
            }
        })
        .collect();
    let cluster_units = units.len();
    let mut sets = UnionFind::new(cluster_units);

    // Rule 2: clusters inside the copies of a larger cluster.
    let copy_folders: Vec<Vec<(HostId, &str)>> = clusters
        .iter()
        .map(|&position| {
            collections.clusters[position]
                .collections
                .iter()
                .filter_map(|&id| collections.collection(id))
                .map(|collection| (collection.host, collection.prefix.as_str()))
                .collect()
        })
        .collect();
    let mut parts = 0;
    for (unit, folders) in copy_folders.iter().enumerate() {
        // The first (largest) other cluster holding most of its copies.
        // A copy is inside another cluster's copy on its host: below its
        // folder, or in the same folder when that cluster comes first.
        let inside = |(host, prefix): &(HostId, &str), other: usize| {
            copy_folders[other]
                .iter()
                .any(|(other_host, other_prefix)| {
                    other_host == host
                        && prefix.starts_with(other_prefix)
                        && (prefix.len() > other_prefix.len() || other < unit)
                })
        };
        let holder = (0..cluster_units).find(|&other| {
            other != unit
                && folders
                    .iter()
                    .filter(|folder| inside(folder, other))
                    .count()
                    * 2
                    > folders.len()
        });
        if let Some(holder) = holder {
            if sets.find(unit as u32) != sets.find(holder as u32) {
                sets.union(unit as u32, holder as u32);
                parts += 1;
            }
        }
    }

    // Rule 3: loose pages under a copy's folder belong to it; the others
    // make units of their host's top folders.
    let mut copy_prefixes: HashMap<HostId, Vec<(&str, CollectionId)>> = HashMap::new();
    for &position in &clusters {
        for &id in &collections.clusters[position].collections {
            if let Some(collection) = collections.collection(id) {
                copy_prefixes
                    .entry(collection.host)
                    .or_default()
                    .push((collection.prefix.as_str(), id));
            }
        }
    }
    for prefixes in copy_prefixes.values_mut() {
        // Deepest first, so a page finds the innermost copy.
        prefixes.sort_by(|x, y| y.0.len().cmp(&x.0.len()).then(x.1.cmp(&y.1)));
    }
    let mut loose_of: HashMap<CollectionId, Vec<PageId>> = HashMap::new();
    let mut loose: Vec<PageId> = Vec::new();
    for page in 0..pages {
        if in_a_copy(page) || !takes_part(page) {
            continue;
        }
        let entry = &table.pages[page];
        let holder = copy_prefixes.get(&entry.host).and_then(|prefixes| {
            prefixes
                .iter()
                .find(|(prefix, _)| entry.url.starts_with(prefix))
                .map(|&(_, id)| id)
        });
        match holder {
            Some(id) => loose_of.entry(id).or_default().push(PageId(page as u32)),
            None => loose.push(PageId(page as u32)),
        }
    }
    // A copy holds the loose pages of its folder when they are the
    // exceptions (no more of them than its own pages): a few pages copied
    // from a manual (a licence, an install page) do not make the rest of a
    // host's folder theirs.
    loose_of.retain(|&id, pages| {
        let own = collections.collection(id).map_or(0, |c| c.pages.len());
        if pages.len() > own {
            loose.append(pages);
            false
        } else {
            true
        }
    });
    loose.sort_unstable();
    let mut folders: BTreeMap<(HostId, String), Vec<PageId>> = BTreeMap::new();
    for page in loose {
        let entry = &table.pages[page.0 as usize];
        let Some(path) = url_path(&entry.url) else {
            continue;
        };
        let top = match path.trim_start_matches('/').split_once('/') {
            Some((top, _)) => format!("/{top}/"),
            None => "/".to_string(),
        };
        folders.entry((entry.host, top)).or_default().push(page);
    }
    let folder_keys: Vec<(HostId, String)> = folders.keys().cloned().collect();
    for pages in folders.into_values() {
        let size = pages.len();
        units.push(Unit {
            pages: placed(table, &pages),
            size,
        });
    }
    let mut sets = {
        let mut grown = UnionFind::new(units.len());
        for unit in 0..cluster_units {
            grown.union(unit as u32, sets.find(unit as u32));
        }
        grown
    };

    // Rule 4: versions.
    let mut versions_joined = 0;
    if config.versions {
        versions_joined = join_versions(table, (similarity, prints), &units, &mut sets, config)?;
    }

    // Lineages: each set holding a cluster, or two units or more.
    let mut members: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for unit in 0..units.len() {
        members
            .entry(sets.find(unit as u32))
            .or_default()
            .push(unit);
    }
    let mut lineages = Vec::new();
    let mut of_page: Vec<Option<LineagePlace>> = vec![None; pages];
    let mut pages_added = 0u64;
    let mut sets_in_order: Vec<Vec<usize>> = members
        .into_values()
        .filter(|units| units.len() > 1 || units[0] < cluster_units)
        .collect();
    // In order of their first unit: clusters by position, then folders.
    sets_in_order.sort_by_key(|units| units[0]);
    for set in sets_in_order {
        // The copies: each collection of its clusters, each folder.
        let mut copies: Vec<(LineageCopy, Vec<PageId>, bool)> = Vec::new();
        for &unit in &set {
            if unit < cluster_units {
                let cluster = &collections.clusters[clusters[unit]];
                for (rank, &id) in cluster.collections.iter().enumerate() {
                    let Some(collection) = collections.collection(id) else {
                        continue;
                    };
                    copies.push((
                        LineageCopy {
                            host: collection.host,
                            prefix: collection.prefix.clone(),
                            version: None,
                            collection: Some(id),
                            pages: 0,
                        },
                        collection.pages.clone(),
                        rank == 0,
                    ));
                }
            } else {
                let (host, _) = &folder_keys[unit - cluster_units];
                let pages: Vec<PageId> = units[unit].pages.iter().map(|(page, _)| *page).collect();
                let prefix = crate::pages::folder_prefix(
                    pages
                        .iter()
                        .map(|page| table.pages[page.0 as usize].url.as_ref()),
                );
                copies.push((
                    LineageCopy {
                        host: *host,
                        prefix,
                        version: None,
                        collection: None,
                        pages: 0,
                    },
                    pages,
                    false,
                ));
            }
        }
        // Loose pages under a collection's folder.
        for (copy, pages, _) in &mut copies {
            if let Some(loose) = copy.collection.and_then(|id| loose_of.remove(&id)) {
                pages_added += loose.len() as u64;
                pages.extend(loose);
            }
        }
        for (copy, pages, _) in &mut copies {
            copy.pages = pages.len() as u32;
            copy.version = version_of(table, &copy.prefix, pages, config);
            if copy.collection.is_none() {
                pages_added += pages.len() as u64;
            }
        }
        let mut copies = fold_nested(copies);
        order_copies(&mut copies);
        let id = LineageId(lineages.len() as u32);
        for (index, (_, pages, _)) in copies.iter().enumerate() {
            for page in pages {
                of_page[page.0 as usize] = Some(LineagePlace {
                    lineage: id,
                    copy: index.min(u16::MAX as usize) as u16,
                });
            }
        }
        lineages.push(Lineage {
            id,
            copies: copies.into_iter().map(|(copy, _, _)| copy).collect(),
        });
    }
    let counts = LineageCounts {
        lineages: lineages.len() as u64,
        with_versions: lineages
            .iter()
            .filter(|lineage| lineage.versions().len() > 1)
            .count() as u64,
        parts,
        versions_joined,
        pages_added,
    };
    Ok(Lineages {
        lineages,
        of_page,
        counts,
    })
}

/// Copies inside another copy's folder on the same host (a part that grew
/// apart, a sub-tree published twice) are pieces of that copy: folded into
/// it, their pages with its.
fn fold_nested(
    copies: Vec<(LineageCopy, Vec<PageId>, bool)>,
) -> Vec<(LineageCopy, Vec<PageId>, bool)> {
    let mut copies = copies;
    // Shallowest folder first on each host, so a copy finds the one it is in.
    copies.sort_by(|(x, _, x_principal), (y, _, y_principal)| {
        (x.host, x.prefix.len(), !x_principal, &x.prefix).cmp(&(
            y.host,
            y.prefix.len(),
            !y_principal,
            &y.prefix,
        ))
    });
    let mut folded: Vec<(LineageCopy, Vec<PageId>, bool)> = Vec::with_capacity(copies.len());
    for (copy, pages, principal) in copies {
        match folded
            .iter_mut()
            .find(|(outer, _, _)| outer.host == copy.host && copy.prefix.starts_with(&outer.prefix))
        {
            Some((_, outer_pages, outer_principal)) => {
                outer_pages.extend(pages);
                *outer_principal |= principal;
            }
            None => folded.push((copy, pages, principal)),
        }
    }
    folded
}

/// The principal copy first: of the newest version named (all copies when
/// none names one), the principal copy of its cluster, then the largest;
/// then the others, newest version first, larger first, by folder.
fn order_copies(copies: &mut [(LineageCopy, Vec<PageId>, bool)]) {
    let newest = copies
        .iter()
        .filter_map(|(copy, _, _)| copy.version.as_deref())
        .max_by(|x, y| compare_versions(x, y))
        .map(str::to_string);
    // Of the newest release as precisely as both name it: a copy whose
    // pages say `10.1` is of release `10.1.60` too.
    let of_newest = |copy: &LineageCopy| match (&newest, &copy.version) {
        (None, _) => true,
        (Some(newest), Some(version)) => same_release(newest, version),
        (Some(_), None) => false,
    };
    copies.sort_by(|(x, x_pages, x_principal), (y, y_pages, y_principal)| {
        of_newest(y)
            .cmp(&of_newest(x))
            .then(y_principal.cmp(x_principal))
            .then_with(|| match (&x.version, &y.version) {
                (Some(xv), Some(yv)) => compare_versions(yv, xv),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            })
            .then(y_pages.len().cmp(&x_pages.len()))
            .then_with(|| x.prefix.cmp(&y.prefix))
    });
}

/// The version a copy names: one in its folder's path (made more precise by
/// its pages, below), else the version string that most of its pages
/// carry, when `version_share` of them or more do.
fn version_of(
    table: &PageTable,
    prefix: &str,
    pages: &[PageId],
    config: &LineageConfig,
) -> Option<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for page in pages {
        for version in &table.pages[page.0 as usize].versions {
            *counts.entry(&**version).or_default() += 1;
        }
    }
    // The folder's path names the release when it names one (`/tomcat-10.1-doc/`),
    // and the pages may say which of it (`10.1.60` in most titles): a
    // version the pages say as often as they must to name one is taken
    // when it is a more precise version of the path's.
    if let Some(version) = url_path(prefix).and_then(|path| version_strings(path).pop()) {
        let named = counts
            .iter()
            .filter(|(_, &count)| at_least(count, pages.len(), config.version_share))
            .map(|(&other, &count)| (other, count));
        return Some(most_precise(&version, named).to_string());
    }
    let (version, count) = counts
        .iter()
        .map(|(&version, &count)| (version, count))
        .max_by(|(x, x_count), (y, y_count)| x_count.cmp(y_count).then(y.cmp(x)))?;
    if !at_least(count, pages.len(), config.version_share) {
        return None;
    }
    // The most precise of the versions that name the same release: the
    // manual's name says `10.1` on every page, its titles `10.1.60`.
    let named = counts
        .iter()
        .filter(|(_, &other_count)| at_least(other_count, count, config.precise_version_share))
        .map(|(&other, &other_count)| (other, other_count));
    Some(most_precise(version, named).to_string())
}

/// Of `version` and the `candidates` (with how many pages say each) that
/// are more precise versions of it (`10.1.60` of `10.1`), the one with the
/// most parts, then said most often, then the least; `version` when none is.
fn most_precise<'a>(
    version: &'a str,
    candidates: impl Iterator<Item = (&'a str, usize)>,
) -> &'a str {
    let parts = |text: &str| text.split('.').count();
    candidates
        .filter(|(other, _)| {
            other.starts_with(version) && other.as_bytes().get(version.len()) == Some(&b'.')
        })
        .max_by(|(x, x_count), (y, y_count)| {
            parts(x)
                .cmp(&parts(y))
                .then(x_count.cmp(y_count))
                .then(y.cmp(x))
        })
        .map_or(version, |(other, _)| other)
}

/// Rule 4: units most of whose pages have a version at the same place in
/// another unit join its lineage. Returns how many joined.
fn join_versions<F: Fingerprints + Sync>(
    table: &PageTable,
    (similarity, prints): (&Similarity, &F),
    units: &[Unit],
    sets: &mut UnionFind,
    config: &LineageConfig,
) -> Result<u64, F::Error> {
    // Place -> (unit, page), at most `max_candidates` pages a unit.
    let mut at_place: HashMap<String, Vec<(usize, PageId)>> = HashMap::new();
    for (unit, members) in units.iter().enumerate() {
        let mut per_place: HashMap<&str, usize> = HashMap::new();
        for (page, key) in &members.pages {
            let seen = per_place.entry(key.as_str()).or_default();
            if *seen < config.max_candidates {
                *seen += 1;
                at_place.entry(key.clone()).or_default().push((unit, *page));
            }
        }
    }
    // Places too common to tell manuals apart.
    at_place.retain(|_, holders| {
        let mut units: Vec<usize> = holders.iter().map(|&(unit, _)| unit).collect();
        units.dedup();
        units.len() <= config.max_units_per_place
    });
    // The min-hashes of the pages at a place of two units or more (a
    // place's holders are in the order of their units): the only ones
    // compared.
    let of_two_units =
        |holders: &Vec<(usize, PageId)>| holders.windows(2).any(|pair| pair[0].0 != pair[1].0);
    let mut compared: Vec<usize> = units
        .iter()
        .flat_map(|unit| unit.pages.iter())
        .filter(|(_, key)| at_place.get(key).is_some_and(of_two_units))
        .map(|(page, _)| page.0 as usize)
        .collect();
    compared.sort_unstable();
    compared.dedup();
    let minhashes: HashMap<PageId, Vec<u32>> = compared
        .iter()
        .zip(prints.map_pages(&compared, |_, print| {
            print.map(|print| print.minhash.clone())
        })?)
        .filter_map(|(&page, minhash)| Some((PageId(page as u32), minhash?)))
        .collect();
    let titles: HashMap<PageId, String> = units
        .iter()
        .flat_map(|unit| unit.pages.iter())
        .map(|&(page, _)| (page, title_key(&table.pages[page.0 as usize].title)))
        .collect();
    let resembles = |first: PageId, second: PageId| {
        if !crate::language::compatible(
            similarity.languages[first.0 as usize],
            similarity.languages[second.0 as usize],
        ) {
            return false;
        }
        let (Some(a), Some(b)) = (minhashes.get(&first), minhashes.get(&second)) else {
            return false;
        };
        let resemblance = minhash_resemblance(a, b).unwrap_or(0.0);
        let same_title = !titles[&first].is_empty() && titles[&first] == titles[&second];
        resemblance >= config.resemblance
            || (same_title && resemblance >= config.titled_resemblance)
    };
    let mut joined = 0;
    for (unit, members) in units.iter().enumerate() {
        // Its pages matched in each other unit.
        let mut matched: HashMap<usize, usize> = HashMap::new();
        for (page, key) in &members.pages {
            let page = *page;
            let Some(candidates) = at_place.get(key) else {
                continue;
            };
            let mut found: Vec<usize> = Vec::new();
            for &(other, other_page) in candidates {
                if other != unit && !found.contains(&other) && resembles(page, other_page) {
                    found.push(other);
                }
            }
            for other in found {
                *matched.entry(other).or_default() += 1;
            }
        }
        // Of its pages, those at a place a version could be compared at.
        let comparable = members
            .pages
            .iter()
            .filter(|(_, key)| at_place.contains_key(key))
            .count();
        let size = members.size.min(comparable.max(1));
        let needed = (size as f64 * config.share).floor() as usize + 1;
        let best = matched
            .into_iter()
            .filter(|&(_, count)| count >= needed.max(config.min_pages))
            .max_by(|(x, x_count), (y, y_count)| x_count.cmp(y_count).then(y.cmp(x)));
        if let Some((other, _)) = best {
            if sets.find(unit as u32) != sets.find(other as u32) {
                sets.union(unit as u32, other as u32);
                joined += 1;
            }
        }
    }
    Ok(joined)
}

#[cfg(test)]
mod tests;
