//! The manual is the collection: similar clusters joined by the folders
//! their copies sit in, and each copy completed with the pages of its tree.
//!
//! Cho's growth (cho-2000 §3-§4) is strict on purpose: a similar cluster
//! only grows along links that every copy has, so a sub-folder whose pages
//! link mostly among themselves, a page that differs between two versions
//! (a break point, §2.2), a child whose parent one copy lacks, or a page
//! nothing links to, each stop it. On a crawl of mirrored manuals one
//! manual then falls into hundreds of clusters, each a correct similar
//! cluster and none what a reader calls the manual. Cho names the remedy
//! ("a second phase that tries to combine similar collections", §2.2);
//! this module is that phase, with the folder as its evidence: a copy of a
//! manual is a folder of a host, and a copy of a part of the manual is a
//! folder inside it (fetterly-2004 §2's mirrored subtrees).
//!
//! 1. **Copies.** Each grown collection is a copy in the folder that holds
//!    its pages (their longest common folder). Two collections of one
//!    cluster on one host, one inside the other's folder, are one copy
//!    (growth from a second start page can root a second collection on a
//!    host that already has one).
//! 2. **Parts join their manual.** Clusters are taken largest first; each
//!    joins the manuals formed so far where the folders say it belongs:
//!    - a cluster whose copies lie on two hosts or more is *held* by a
//!      manual when more than half of its copies (by default; the shares
//!      are in [`super::CollectionRules`]) each lie inside the folder of
//!      one of the manual's copies on the same host; it joins the largest
//!      manual holding it. Each of its other copies must sit at the same
//!      place in the manual: most of its pages end with the path their
//!      copies have inside the manual's folders elsewhere (the URL-suffix
//!      test of fetterly-2004 §2), which gives its folder (a partial mirror
//!      of a sub-folder, under a folder of its own). If one of them fails,
//!      the cluster joins nothing;
//!    - a cluster *holding* more than half of a manual's copies (the
//!      manual's front page, above sections that grew apart) takes that
//!      manual in.
//!
//!    A mirror site carrying several manuals in folders of its own keeps
//!    them apart: no manual's copies lie inside another's. Translations in
//!    sibling folders are apart for the same reason; under a common page
//!    above them (a language choice) they are one collection of the site,
//!    as cho's growth makes them, and their pages are never copies of each
//!    other. Clusters on one host, and clusters mostly of stand-ins (a soft
//!    404 answering many URLs, [`crate::similarity::stand_ins`]), take
//!    no part.
//! 3. **Completion.** A page that no cluster holds (it has no copy in the
//!    crawl: a page of one version only, a page nothing links to, a page the
//!    other copies' crawls missed) joins the copy of a manual on its host
//!    whose folder holds it, when its own folder already holds pages of that
//!    copy, and when such pages are the exceptions in that copy (no more of
//!    them than it holds already: two sibling manuals that share a licence
//!    and an install page are not each other's copies). A second name of a
//!    page never joins.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::pages::{path_folder, url_path, HostId, PageId};

use super::grow::Grown;
use super::verdict::{Apart, ClusterVerdict, Formed};
use crate::share::more_than;
use crate::similarity::TrivialClusterId;
use crate::union_find::UnionFind;

/// What joining by folders needs to know of each page, by page id.
pub struct PageFolders<'a> {
    pub urls: &'a [&'a str],
    pub hosts: &'a [HostId],
    /// Trivial cluster of each page ([`TrivialClusterId::NONE`]: not
    /// compared).
    pub labels: &'a [TrivialClusterId],
    /// Whether each page is a stand-in (empty: none is).
    pub stand_ins: &'a [bool],
    /// The thresholds of the rules.
    pub rules: &'a super::CollectionRules,
}

impl PageFolders<'_> {
    fn path(&self, page: PageId) -> Option<&str> {
        url_path(self.urls[page.0 as usize])
    }

    fn host(&self, page: PageId) -> HostId {
        self.hosts[page.0 as usize]
    }

    fn is_stand_in(&self, page: PageId) -> bool {
        self.stand_ins
            .get(page.0 as usize)
            .copied()
            .unwrap_or(false)
    }
}

/// One copy: the pages of one collection, in the folder that holds them.
#[derive(Debug, Clone)]
struct Copy {
    host: HostId,
    folder: String,
    /// Its root first.
    pages: Vec<PageId>,
}

/// A cluster being built: its copies, the trivial clusters it holds and
/// what the passes did to it.
#[derive(Debug, Clone)]
struct Manual {
    copies: Vec<Copy>,
    trivial: Vec<TrivialClusterId>,
    verdict: ClusterVerdict,
}

/// The longest common folder of some paths.
pub(super) fn common_folder<'a>(paths: impl Iterator<Item = &'a str>) -> String {
    let mut common: Option<&str> = None;
    for path in paths {
        let folder = path_folder(path);
        common = Some(match common {
            None => folder,
            Some(so_far) => {
                let shared = so_far
                    .bytes()
                    .zip(folder.bytes())
                    .take_while(|(x, y)| x == y)
                    .count();
                let cut = so_far[..shared].rfind('/').map_or(0, |slash| slash + 1);
                &so_far[..cut]
            }
        });
    }
    match common {
        Some(folder) if !folder.is_empty() => folder.to_string(),
        _ => "/".to_string(),
    }
}

/// The cluster's collections as copies, collections nested in another of
/// the same host joined to it; `None` when a page has no URL path.
fn copies_of(cluster: &Grown, pages: &PageFolders) -> Option<Vec<Copy>> {
    let mut copies = Vec::with_capacity(cluster.collections.len());
    for collection in &cluster.collections {
        let paths: Option<Vec<&str>> = collection.iter().map(|&page| pages.path(page)).collect();
        copies.push(Copy {
            host: pages.host(*collection.first()?),
            folder: common_folder(paths?.into_iter()),
            pages: collection.clone(),
        });
    }
    Some(join_nested(copies))
}

/// Copies of one cluster on one host, one inside the other's folder, joined
/// into the outer one (its pages, and so its root, first).
fn join_nested(copies: Vec<Copy>) -> Vec<Copy> {
    let mut copies = copies;
    // Shallowest folder first on each host, so a copy finds the one it is in.
    let mut order: Vec<usize> = (0..copies.len()).collect();
    order.sort_by_key(|&index| (copies[index].host, copies[index].folder.len(), index));
    let mut joined: Vec<Copy> = Vec::with_capacity(copies.len());
    for index in order {
        let copy = std::mem::replace(
            &mut copies[index],
            Copy {
                host: HostId(0),
                folder: String::new(),
                pages: Vec::new(),
            },
        );
        match joined
            .iter_mut()
            .find(|outer| outer.host == copy.host && copy.folder.starts_with(&outer.folder))
        {
            Some(outer) => outer.pages.extend(copy.pages),
            None => joined.push(copy),
        }
    }
    joined
}

/// Joins the clusters that are parts of others (steps 1 and 2 of the
/// module's description). Clusters whose pages have no URL path are kept as
/// grown.
pub fn join_parts(grown: Vec<Grown>, pages: &PageFolders) -> Vec<Grown> {
    let mut kept: Vec<Grown> = Vec::new();
    let mut parts: Vec<Manual> = Vec::new();
    for mut cluster in grown {
        // Clusters on one host, and those mostly of stand-ins, stay as grown.
        let first_host = cluster.collections[0].first().map(|&page| pages.host(page));
        let spans = cluster
            .collections
            .iter()
            .any(|collection| collection.first().map(|&page| pages.host(page)) != first_host);
        let stand_ins = cluster
            .collections
            .iter()
            .flatten()
            .filter(|&&page| pages.is_stand_in(page))
            .count();
        let stand_in = more_than(
            stand_ins,
            cluster.collections.iter().map(Vec::len).sum::<usize>(),
            pages.rules.stand_in_share,
        );
        let apart = if !spans {
            Some(Apart::OneHost)
        } else if stand_in {
            Some(Apart::StandIns)
        } else {
            None
        };
        match copies_of(&cluster, pages).filter(|_| apart.is_none()) {
            Some(copies) => parts.push(Manual {
                copies,
                trivial: cluster.trivial,
                verdict: cluster.verdict,
            }),
            None => {
                cluster.verdict.apart = Some(apart.unwrap_or(Apart::NoPath));
                kept.push(cluster);
            }
        }
    }
    let size = |manual: &Manual| manual.copies.iter().map(|c| c.pages.len()).sum::<usize>();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&index| (std::cmp::Reverse(size(&parts[index])), index));

    let mut joiner = Joiner {
        manuals: Vec::new(),
        sets: UnionFind::new(parts.len()),
        folders: HashMap::new(),
        pages: Vec::new(),
        indexed: Vec::new(),
        refusals: Vec::new(),
    };
    let mut parts: Vec<Option<Manual>> = parts.into_iter().map(Some).collect();
    for index in order {
        let part = parts[index].take().expect("each part once");
        joiner.add(part, pages);
    }
    let Joiner {
        manuals,
        mut sets,
        refusals,
        ..
    } = joiner;
    let mut whole: HashMap<u32, Manual> = HashMap::new();
    let mut roots: Vec<u32> = Vec::new();
    for (id, manual) in manuals.into_iter().enumerate() {
        let Some(mut manual) = manual else { continue };
        let root = sets.find(id as u32);
        match whole.get_mut(&root) {
            Some(joined) => {
                joined.copies.extend(manual.copies);
                joined.trivial.extend(manual.trivial);
                joined.verdict.parts_joined += 1 + manual.verdict.parts_joined;
                joined.verdict.apart = None;
                // A manual grown along links is what took in one page's
                // copies, whichever is larger.
                if joined.verdict.formed == Formed::OnePage {
                    joined.verdict.formed = manual.verdict.formed;
                }
            }
            None => {
                manual.verdict.apart = refusals[id];
                roots.push(root);
                whole.insert(root, manual);
            }
        }
    }
    kept.extend(
        roots
            .into_iter()
            .filter_map(|root| whole.remove(&root))
            .map(|manual| Grown {
                collections: join_nested(manual.copies)
                    .into_iter()
                    .map(|copy| copy.pages)
                    .collect(),
                trivial: manual.trivial,
                verdict: manual.verdict,
            }),
    );
    kept
}

fn spans_hosts(manual: &Manual) -> bool {
    manual
        .copies
        .iter()
        .any(|copy| copy.host != manual.copies[0].host)
}

/// The manuals formed so far, and where their copies are.
struct Joiner {
    /// By id: each part as it came (joined ones are found through `sets`).
    manuals: Vec<Option<Manual>>,
    sets: UnionFind,
    /// Host -> folder -> ids of the parts with a copy there (of those
    /// spanning two hosts or more; not a copy inside one of its manual's).
    folders: HashMap<HostId, BTreeMap<String, Vec<u32>>>,
    /// By manual root: its pages, and its copies in `folders`.
    pages: Vec<usize>,
    indexed: Vec<u32>,
    /// By id: why the part joined no manual when it came (`None`: it
    /// joined one).
    refusals: Vec<Option<Apart>>,
}

impl Joiner {
    fn add(&mut self, part: Manual, pages: &PageFolders) {
        let id = self.manuals.len() as u32;
        self.pages
            .push(part.copies.iter().map(|copy| copy.pages.len()).sum());
        self.indexed.push(0);
        if !spans_hosts(&part) {
            self.refusals.push(Some(Apart::OneHost));
            self.manuals.push(Some(part));
            return;
        }
        let mut part = part;
        // 1. A part held by a manual joins it.
        match self.holder_of(&part, pages) {
            Ok((manual, refolded)) => {
                for (copy, folder) in refolded {
                    part.copies[copy].folder = folder;
                }
                self.join(id, manual);
                self.refusals.push(None);
            }
            // A part no manual holds any copy of is a manual of its own,
            // not one kept apart.
            Err(Apart::NotHeld { held: 0, .. }) => self.refusals.push(None),
            Err(apart) => self.refusals.push(Some(apart)),
        }
        // 2. A part holding manuals takes them in (a manual's front page
        //    above the sections that grew apart).
        for manual in self.held_by(&part, pages.rules) {
            self.join(id, manual);
        }
        let root = self.sets.find(id);
        for copy in &part.copies {
            let nested = self.folders.get(&copy.host).is_some_and(|holders| {
                ancestors(&copy.folder).any(|folder| {
                    holders
                        .get(folder)
                        .is_some_and(|ids| ids.iter().any(|&other| self.sets.find(other) == root))
                })
            });
            if !nested {
                self.folders
                    .entry(copy.host)
                    .or_default()
                    .entry(copy.folder.clone())
                    .or_default()
                    .push(id);
                self.indexed[root as usize] += 1;
            }
        }
        self.manuals.push(Some(part));
    }

    /// Joins two manuals, adding up their figures at the new root.
    fn join(&mut self, first: u32, second: u32) {
        let (first, second) = (self.sets.find(first), self.sets.find(second));
        if first == second {
            return;
        }
        self.sets.union(first, second);
        let root = self.sets.find(first) as usize;
        let (first, second) = (first as usize, second as usize);
        self.pages[root] = self.pages[first] + self.pages[second];
        self.indexed[root] = self.indexed[first] + self.indexed[second];
    }

    /// The manual holding more than `held_copies_share` of the part's copies (the largest
    /// if several do), with the folders of the part's other copies found by
    /// their paths; why not, if none does or a copy cannot be placed.
    fn holder_of(
        &mut self,
        part: &Manual,
        pages: &PageFolders,
    ) -> Result<(u32, Vec<(usize, String)>), Apart> {
        let mut held: HashMap<u32, usize> = HashMap::new();
        let mut holders_of_copy: Vec<HashMap<u32, String>> = Vec::with_capacity(part.copies.len());
        for copy in &part.copies {
            let mut deepest: HashMap<u32, String> = HashMap::new();
            if let Some(host_folders) = self.folders.get(&copy.host) {
                for folder in ancestors(&copy.folder) {
                    for &other in host_folders.get(folder).into_iter().flatten() {
                        let root = self.sets.find(other);
                        deepest.entry(root).or_insert_with(|| folder.to_string());
                    }
                }
            }
            for &root in deepest.keys() {
                *held.entry(root).or_default() += 1;
            }
            holders_of_copy.push(deepest);
        }
        let copies = part.copies.len();
        let not_held = |held: usize| Apart::NotHeld {
            held: held as u32,
            copies: copies as u32,
        };
        let (&manual, &count) = held
            .iter()
            .max_by_key(|&(&root, &count)| {
                (count, self.pages[root as usize], std::cmp::Reverse(root))
            })
            .ok_or(not_held(0))?;
        if !more_than(count, copies, pages.rules.held_copies_share) {
            return Err(not_held(count));
        }
        // Where the held copies' pages sit inside the manual: trivial
        // cluster -> paths relative to the holding folder.
        let mut inside: HashMap<TrivialClusterId, HashSet<&str>> = HashMap::new();
        let mut loose = Vec::new();
        for (index, (copy, holders)) in part.copies.iter().zip(&holders_of_copy).enumerate() {
            let Some(folder) = holders.get(&manual) else {
                loose.push(index);
                continue;
            };
            note_places(&mut inside, copy, folder, pages);
        }
        let mut refolded = Vec::with_capacity(loose.len());
        let not_placed = Apart::NotPlaced {
            loose: loose.len() as u32,
        };
        for index in loose {
            let folder = root_by_suffix(&part.copies[index], &inside, pages).ok_or(not_placed)?;
            refolded.push((index, folder));
        }
        Ok((manual, refolded))
    }

    /// The manuals more than `holding_copies_share` of whose copies lie inside the part's
    /// copies.
    fn held_by(&mut self, part: &Manual, rules: &super::CollectionRules) -> Vec<u32> {
        let mut inside: HashMap<u32, u32> = HashMap::new();
        for copy in &part.copies {
            let Some(host_folders) = self.folders.get(&copy.host) else {
                continue;
            };
            let below = host_folders
                .range::<str, _>((
                    std::ops::Bound::Included(copy.folder.as_str()),
                    std::ops::Bound::Unbounded,
                ))
                .take_while(|(folder, _)| folder.starts_with(copy.folder.as_str()));
            for (_, ids) in below {
                for &other in ids {
                    *inside.entry(self.sets.find(other)).or_default() += 1;
                }
            }
        }
        let mut held: Vec<u32> = inside
            .into_iter()
            .filter(|&(root, count)| {
                more_than(
                    count as usize,
                    self.indexed[root as usize] as usize,
                    rules.holding_copies_share,
                )
            })
            .map(|(root, _)| root)
            .collect();
        held.sort_unstable();
        held
    }
}

/// A folder and every folder above it, deepest first: `/a/b/`, `/a/`, `/`.
fn ancestors(folder: &str) -> impl Iterator<Item = &str> {
    let mut next = Some(folder);
    std::iter::from_fn(move || {
        let current = next?;
        next = current[..current.len().saturating_sub(1)]
            .rfind('/')
            .map(|slash| &current[..=slash]);
        Some(current)
    })
}

/// Notes where the pages of a copy lying in `folder` sit inside it: trivial
/// cluster -> paths relative to the folder.
fn note_places<'p>(
    inside: &mut HashMap<TrivialClusterId, HashSet<&'p str>>,
    copy: &Copy,
    folder: &str,
    pages: &'p PageFolders,
) {
    for &page in &copy.pages {
        let label = pages.labels[page.0 as usize];
        if let (Some(path), true) = (pages.path(page), label != TrivialClusterId::NONE) {
            inside
                .entry(label)
                .or_default()
                .insert(&path[folder.len()..]);
        }
    }
}

/// The folder a copy would have inside the manual, found from the paths its
/// pages have inside the manual elsewhere, when most of its pages end with
/// one of them.
fn root_by_suffix(
    copy: &Copy,
    inside: &HashMap<TrivialClusterId, HashSet<&str>>,
    pages: &PageFolders,
) -> Option<String> {
    let mut roots: HashMap<&str, usize> = HashMap::new();
    let mut matched = 0;
    for &page in &copy.pages {
        let (Some(path), Some(relatives)) =
            (pages.path(page), inside.get(&pages.labels[page.0 as usize]))
        else {
            continue;
        };
        let root = relatives
            .iter()
            .filter(|relative| {
                path.len() > relative.len()
                    && path.ends_with(*relative)
                    && path.as_bytes()[path.len() - relative.len() - 1] == b'/'
            })
            .map(|relative| &path[..path.len() - relative.len()])
            .min_by_key(|root| (root.len(), *root));
        if let Some(root) = root {
            matched += 1;
            *roots.entry(root).or_default() += 1;
        }
    }
    if !more_than(matched, copy.pages.len(), pages.rules.suffix_pages_share) {
        return None;
    }
    roots
        .into_iter()
        .max_by_key(|&(root, count)| (count, std::cmp::Reverse(root)))
        .map(|(root, _)| root.to_string())
}

/// Adds to each copy of a cluster spanning two hosts or more the pages no
/// cluster holds that lie in its tree, when they are the exceptions there
/// (step 3 of the module's description).
/// `placed[page]` says whether a page is in a cluster already; `names` are
/// pages that are second names of another page, which never join.
pub fn complete(
    grown: &mut [Grown],
    placed: &[bool],
    names: &HashSet<PageId>,
    pages: &PageFolders,
) -> u64 {
    struct Tree {
        cluster: usize,
        collection: usize,
        folder: String,
        folders: HashSet<String>,
    }
    let mut trees: HashMap<HostId, Vec<Tree>> = HashMap::new();
    for (cluster, grown_cluster) in grown.iter().enumerate() {
        let first_host = grown_cluster
            .collections
            .first()
            .and_then(|pages_of| pages_of.first())
            .map(|&page| pages.host(page));
        let spans = grown_cluster
            .collections
            .iter()
            .any(|collection| collection.first().map(|&page| pages.host(page)) != first_host);
        if !spans {
            continue;
        }
        for (collection, members) in grown_cluster.collections.iter().enumerate() {
            let paths: Option<Vec<&str>> = members.iter().map(|&page| pages.path(page)).collect();
            let (Some(paths), Some(&first)) = (paths, members.first()) else {
                continue;
            };
            trees.entry(pages.host(first)).or_default().push(Tree {
                cluster,
                collection,
                folder: common_folder(paths.iter().copied()),
                folders: paths
                    .iter()
                    .map(|path| path_folder(path).to_string())
                    .collect(),
            });
        }
    }
    let mut candidates: HashMap<(usize, usize), Vec<PageId>> = HashMap::new();
    for (index, &is_placed) in placed.iter().enumerate() {
        let page = PageId(index as u32);
        if is_placed
            || pages.labels[index] == TrivialClusterId::NONE
            || names.contains(&page)
            || pages.is_stand_in(page)
        {
            continue;
        }
        let (Some(path), Some(host_trees)) = (pages.path(page), trees.get(&pages.host(page)))
        else {
            continue;
        };
        let tree = host_trees
            .iter()
            .filter(|tree| path.starts_with(&tree.folder))
            .max_by_key(|tree| tree.folder.len());
        if let Some(tree) = tree.filter(|tree| tree.folders.contains(path_folder(path))) {
            candidates
                .entry((tree.cluster, tree.collection))
                .or_default()
                .push(page);
        }
    }
    // A copy takes the pages of its tree that are the exceptions, no more
    // of them than it holds (`completion_ratio`): the pages of one version,
    // the pages the other crawls missed. A few pages two manuals share (a
    // licence, an install page of sibling projects) do not make the rest of
    // either's folder theirs.
    let ratio = pages.rules.completion_ratio;
    let mut added = 0;
    let mut candidates: Vec<((usize, usize), Vec<PageId>)> = candidates.into_iter().collect();
    candidates.sort_unstable();
    for ((cluster, collection), exceptions) in candidates {
        let grown_cluster = &mut grown[cluster];
        let copy = &mut grown_cluster.collections[collection];
        if exceptions.len() as f64 <= ratio * copy.len() as f64 {
            added += exceptions.len() as u64;
            grown_cluster.verdict.pages_completed += exceptions.len() as u32;
            copy.extend(exceptions);
        }
    }
    added
}

/// A copy's folder as a URL.
fn copy_url(copy: &Copy, pages: &PageFolders) -> String {
    let Some(&page) = copy.pages.first() else {
        return copy.folder.clone();
    };
    let url = pages.urls[page.0 as usize];
    let start = url
        .split_once("://")
        .map(|(scheme, rest)| scheme.len() + 3 + rest.find('/').unwrap_or(rest.len()))
        .unwrap_or(0);
    format!("{}{}", &url[..start], copy.folder)
}

/// Why cluster `part` did not join cluster `manual` (both of the final
/// clusters), in the words of the rules above: for `eval`, which explains
/// where a collection of the truth broke apart.
pub fn why_apart(
    collections: &super::Collections,
    manual: super::ClusterId,
    part: super::ClusterId,
    pages: &PageFolders,
) -> String {
    let copies = |id: super::ClusterId| -> Vec<Copy> {
        let Some(cluster) = collections.cluster(id) else {
            return Vec::new();
        };
        cluster
            .collections
            .iter()
            .filter_map(|&collection| collections.collection(collection))
            .map(|collection| Copy {
                host: collection.host,
                folder: url_path(&collection.prefix).unwrap_or("/").to_string(),
                pages: collection.pages.clone(),
            })
            .collect()
    };
    let (whole, piece) = (copies(manual), copies(part));
    // What the passes decided about the part, as they kept it.
    let verdict = collections.cluster(part).map(|cluster| cluster.verdict);
    match verdict.and_then(|verdict| verdict.apart) {
        Some(Apart::NotHeld { .. } | Apart::NotPlaced { .. }) | None => {}
        Some(apart) => return apart.sentence(),
    }
    if piece.is_empty() {
        return "the cluster is empty".into();
    }
    let holder = |copy: &Copy| {
        whole
            .iter()
            .filter(|outer| {
                outer.host == copy.host && copy.folder.starts_with(outer.folder.as_str())
            })
            .max_by_key(|outer| outer.folder.len())
    };
    let held: Vec<&Copy> = piece.iter().filter(|copy| holder(copy).is_some()).collect();
    if !more_than(held.len(), piece.len(), pages.rules.held_copies_share) {
        let outside: Vec<String> = piece
            .iter()
            .filter(|copy| holder(copy).is_none())
            .take(3)
            .map(|copy| copy_url(copy, pages))
            .collect();
        let holding = whole
            .iter()
            .filter(|outer| {
                piece.iter().any(|copy| {
                    copy.host == outer.host && outer.folder.starts_with(copy.folder.as_str())
                })
            })
            .count();
        return format!(
            "{} of its {} copies lie inside a folder of cluster {manual}'s copies on their host (more than {:.0}% needed), and it holds {holding} of that cluster's {} copies (more than {:.0}% needed); not inside: {}",
            held.len(),
            piece.len(),
            pages.rules.held_copies_share * 100.0,
            whole.len(),
            pages.rules.holding_copies_share * 100.0,
            outside.join(", ")
        );
    }
    let mut inside: HashMap<TrivialClusterId, HashSet<&str>> = HashMap::new();
    for copy in &held {
        if let Some(outer) = holder(copy) {
            note_places(&mut inside, copy, &outer.folder, pages);
        }
    }
    for copy in piece.iter().filter(|copy| holder(copy).is_none()) {
        if root_by_suffix(copy, &inside, pages).is_none() {
            return format!(
                "its copy in {} sits at no place of cluster {manual}: most of its pages' paths do not end as their copies' paths do inside that cluster's folders",
                copy_url(copy, pages)
            );
        }
    }
    format!("it passes the folder tests against cluster {manual}, which it was not compared with (another cluster held it first)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_folders() {
        let folder = |paths: &[&str]| common_folder(paths.iter().copied());
        assert_eq!(folder(&["/a/b/c.html", "/a/b/d/e.html"]), "/a/b/");
        assert_eq!(folder(&["/a/bc/x.html", "/a/bd/y.html"]), "/a/");
        assert_eq!(folder(&["/x.html", "/a/y.html"]), "/");
        assert_eq!(folder(&["/a/b/"]), "/a/b/");
    }
}
