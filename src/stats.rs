//! What `mirrorscope stats` and the site's statistics page show: the counts
//! of a generation, its exact duplicates within and across crawls, its
//! largest near-duplicate clusters and every similar cluster's place in
//! cho-2000 Figure 12. Both the command line and the site use it, so it
//! depends on neither.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::Serialize;

use crate::collections::{ClusterKind, CollectionCounts, Collections};
use crate::generation::{Analysis, DataDir, DataError, Fingerprints, Manifest, Result};
use crate::mirrors::MirrorCounts;
use crate::pages::{PageTable, TableCounts};
use crate::similarity::{Similarity, SimilarityCounts};
use crate::store::Signature;

/// What `mirrorscope stats` shows: the counts of the current generation.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub generation: String,
    pub crawls: usize,
    #[serde(flatten)]
    pub counts: TableCounts,
    #[serde(flatten)]
    pub similarity: SimilarityCounts,
    pub collections: CollectionCounts,
    pub mirrors: MirrorCounts,
    /// Exact duplicates by where their first copy is.
    pub duplicates: CrawlDuplicates,
    /// The largest near-duplicate clusters (fetterly-2004 Table 1).
    pub largest_clusters: Vec<LargeCluster>,
    /// Every similar cluster's cardinality and size (cho-2000 Figure 12).
    pub similar_clusters: Vec<ClusterPoint>,
    /// Texts hosts answer many URLs with (soft 404s, parked domains, "not
    /// mirrored here" pages), most URLs first: no results, no copies.
    pub stand_ins: Vec<StandIn>,
}

/// One text a host serves in place of the pages it was asked for.
#[derive(Debug, Clone, Serialize)]
pub struct StandIn {
    pub host: String,
    /// URLs answered with it.
    pub urls: u64,
    /// Its title, as the pages give it.
    pub title: String,
    /// Its first URL.
    pub example: String,
}

/// Pages whose body was already stored: from the same crawl, or only from
/// an earlier one.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct CrawlDuplicates {
    pub within_crawls: u64,
    pub across_crawls: u64,
}

/// One near-duplicate cluster, as fetterly-2004 Table 1 shows it.
#[derive(Debug, Clone, Serialize)]
pub struct LargeCluster {
    pub urls: u64,
    pub hosts: u64,
    pub ip_addresses: u64,
    /// Its first page's URL.
    pub representative: String,
}

/// A similar cluster's place in cho-2000 Figure 12.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterPoint {
    pub id: String,
    pub cardinality: usize,
    pub size: u32,
    pub kind: ClusterKind,
}

/// Largest clusters listed.
pub const LARGEST_CLUSTERS: usize = 10;

impl Stats {
    pub fn gather(data: &DataDir) -> Result<Stats> {
        let generation = data.generation()?;
        let Analysis {
            manifest,
            table,
            similarity,
            collections,
            ..
        } = generation.analysis_without_fingerprints()?;
        let fingerprints = generation.fingerprints(&table)?;
        Stats::of(
            &manifest,
            &table,
            (&similarity, &fingerprints),
            &collections,
        )
    }

    /// The statistics of an analysis whose pages' fingerprints are read
    /// from `fingerprints` (only the stand-ins' are).
    pub fn of(
        manifest: &Manifest,
        table: &PageTable,
        (similarity, fingerprints): (&Similarity, &dyn Fingerprints<Error = DataError>),
        collections: &Collections,
    ) -> Result<Stats> {
        Ok(Stats {
            generation: manifest.generation.clone(),
            crawls: manifest.crawls.len(),
            counts: manifest.counts,
            similarity: manifest.similarity.clone(),
            collections: manifest.collections.clone(),
            mirrors: manifest.mirrors.clone(),
            duplicates: crawl_duplicates(table),
            largest_clusters: largest_clusters(table, similarity),
            similar_clusters: collections
                .clusters
                .iter()
                .map(|cluster| ClusterPoint {
                    id: cluster.id.to_string(),
                    cardinality: cluster.cardinality(),
                    size: cluster.size,
                    kind: cluster.kind,
                })
                .collect(),
            stand_ins: stand_ins(table, similarity, fingerprints)?,
        })
    }
}

/// The stand-ins of a generation, one per host and text, most URLs first.
/// A page counts with the larger of its two groups: the pages of its text,
/// or those of its echo signature (the same once the path a page names is
/// taken out, [`crate::fingerprint`]).
fn stand_ins(
    table: &PageTable,
    similarity: &Similarity,
    fingerprints: &dyn Fingerprints<Error = DataError>,
) -> Result<Vec<StandIn>> {
    type Key = (crate::pages::HostId, u128);
    let pages: Vec<usize> = (0..table.pages.len())
        .filter(|&page| similarity.is_stand_in(crate::pages::PageId(page as u32)))
        .collect();
    let mut stand_ins: Vec<(usize, Key, Key)> = Vec::with_capacity(pages.len());
    fingerprints.visit(&pages, &mut |page, print| {
        let host = table.pages[page].host;
        let text = print.map_or(0, |print| print.text_signature);
        let echo = print.map_or(0, |print| print.echo_signature);
        stand_ins.push((page, (host, text), (host, echo)));
    })?;
    // Visited in an order of the source's own: the first page of each
    // text is its lowest.
    stand_ins.sort_unstable_by_key(|&(page, _, _)| page);
    let mut sizes: HashMap<Key, u64> = HashMap::new();
    for &(_, text, echo) in &stand_ins {
        *sizes.entry(text).or_default() += 1;
        if echo != text {
            *sizes.entry(echo).or_default() += 1;
        }
    }
    let mut found: HashMap<Key, (u64, usize)> = HashMap::new();
    for (page, text, echo) in stand_ins {
        let key = if sizes[&echo] > sizes[&text] {
            echo
        } else {
            text
        };
        found.entry(key).or_insert((0, page)).0 += 1;
    }
    let mut listed: Vec<StandIn> = found
        .into_values()
        .map(|(urls, first)| {
            let page = &table.pages[first];
            StandIn {
                host: table.host_name(page.host).to_string(),
                urls,
                title: page.title.to_string(),
                example: page.url.to_string(),
            }
        })
        .collect();
    listed.sort_by(|x, y| y.urls.cmp(&x.urls).then_with(|| x.example.cmp(&y.example)));
    Ok(listed)
}

/// Exact duplicates within a crawl and across crawls (gomes-2006 Table 1):
/// crawls are taken in order; a page is a duplicate within its crawl when an
/// earlier page of that crawl has its body, across crawls when only an
/// earlier crawl has.
fn crawl_duplicates(table: &PageTable) -> CrawlDuplicates {
    let mut first_crawl: HashMap<Signature, u16> = HashMap::new();
    let mut pages: Vec<&crate::pages::Page> = table.pages.iter().collect();
    pages.sort_by_key(|page| (page.crawl, page.date.as_ref()));
    let mut seen_in_crawl: HashSet<(Signature, u16)> = HashSet::new();
    let mut duplicates = CrawlDuplicates::default();
    for page in pages {
        let Some(key) = &page.content_key else {
            continue;
        };
        let signature = key.signature;
        if !seen_in_crawl.insert((signature, page.crawl)) {
            duplicates.within_crawls += 1;
        } else if first_crawl
            .get(&signature)
            .is_some_and(|crawl| *crawl < page.crawl)
        {
            duplicates.across_crawls += 1;
        }
        first_crawl.entry(signature).or_insert(page.crawl);
    }
    duplicates
}

/// The largest trivial clusters of two pages or more, largest first.
fn largest_clusters(table: &PageTable, similarity: &Similarity) -> Vec<LargeCluster> {
    let sizes = similarity.trivial_cluster_sizes();
    let mut largest: Vec<usize> = (0..sizes.len()).filter(|&id| sizes[id] > 1).collect();
    largest.sort_by_key(|&id| std::cmp::Reverse(sizes[id]));
    largest.truncate(LARGEST_CLUSTERS);
    let mut members: HashMap<usize, Vec<&crate::pages::Page>> =
        largest.iter().map(|&id| (id, Vec::new())).collect();
    for (page, cluster) in table.pages.iter().zip(&similarity.trivial) {
        if let Some(pages) = members.get_mut(&(cluster.0 as usize)) {
            pages.push(page);
        }
    }
    largest
        .iter()
        .map(|id| {
            let pages = &members[id];
            let hosts: HashSet<_> = pages.iter().map(|page| page.host).collect();
            let ips: HashSet<_> = pages.iter().filter_map(|page| page.ip.as_deref()).collect();
            LargeCluster {
                urls: pages.len() as u64,
                hosts: hosts.len() as u64,
                ip_addresses: ips.len() as u64,
                representative: pages
                    .first()
                    .map(|page| page.url.to_string())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

impl fmt::Display for Stats {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counts = &self.counts;
        writeln!(formatter, "generation             {}", self.generation)?;
        writeln!(formatter, "crawls                 {}", self.crawls)?;
        writeln!(formatter, "pages                  {}", counts.pages)?;
        writeln!(formatter, "hosts                  {}", counts.hosts)?;
        writeln!(
            formatter,
            "pages with a body      {}",
            counts.pages_with_body
        )?;
        writeln!(
            formatter,
            "distinct bodies        {}",
            counts.distinct_bodies
        )?;
        writeln!(
            formatter,
            "exact duplicate pages  {}",
            counts.exact_duplicate_pages
        )?;
        writeln!(formatter, "links between pages    {}", counts.links)?;
        let similarity = &self.similarity;
        writeln!(
            formatter,
            "compared pages         {} (answered 200 with a body that has text), {} distinct texts",
            similarity.compared_pages, similarity.distinct_texts
        )?;
        writeln!(
            formatter,
            "near-duplicate pages   {} in {} trivial clusters of 2 or more (test: {})",
            similarity.near_duplicate_pages,
            similarity.trivial_clusters,
            similarity.similarity_test
        )?;
        writeln!(
            formatter,
            "similar pairs          {} by shared chunks, {} by shared megashingle; {} boilerplate chunks set aside; {} pairs in two languages left apart",
            similarity.chunk_pairs,
            similarity.megashingle_pairs,
            similarity.boilerplate_chunks,
            similarity.cross_language_pairs
        )?;
        let collections = &self.collections;
        writeln!(
            formatter,
            "similar clusters       {} ({} of collections of 2 pages or more, {} extended, {} small under {} pages)",
            collections.clusters,
            collections.collection_clusters,
            collections.extended_clusters,
            collections.small_clusters,
            collections.small_size
        )?;
        writeln!(
            formatter,
            "collections            {} holding {} pages ({} in collections of 2 pages or more)",
            collections.collections,
            collections.pages_in_collections,
            collections.pages_in_large_collections
        )?;
        let lineage = &collections.lineage;
        writeln!(
            formatter,
            "manuals                {} in all their versions ({} naming two versions or more; {} clusters joined as parts, {} as versions; {} pages only one copy has)",
            lineage.lineages,
            lineage.with_versions,
            lineage.parts,
            lineage.versions_joined,
            lineage.pages_added
        )?;
        writeln!(
            formatter,
            "cluster growing        {} LinkSummary rows with a = s, {} merge edges (a = s = d = b), {} extended (a = s > d = b), {} virtual links, {} second names",
            collections.link_summary_rows,
            collections.merge_edges,
            collections.extended_merge_edges,
            collections.virtual_links,
            collections.alias_pages
        )?;
        writeln!(
            formatter,
            "\npages by number of other copies (cho-2000 Figure 11)"
        )?;
        write!(
            formatter,
            "{:>8} {:>8} {:>8} {:>11} {:>8} {:>8}",
            "copies", "pages", "exact", "equivalent", "chunks", "minhash"
        )?;
        for row in &similarity.replica_histogram {
            write!(
                formatter,
                "\n{:>8} {:>8} {:>8} {:>11} {:>8} {:>8}",
                row.replicas, row.pages, row.exact, row.equivalent, row.chunks, row.minhash
            )?;
        }
        writeln!(
            formatter,
            "\n\nexact duplicates       {} within a crawl, {} of a page of an earlier crawl",
            self.duplicates.within_crawls, self.duplicates.across_crawls
        )?;
        writeln!(
            formatter,
            "mirrored host pairs    {} at levels 1-5 of {} ranked, among {} hosts considered",
            self.mirrors.mirrored_pairs, self.mirrors.ranked_pairs, self.mirrors.hosts_considered
        )?;
        write!(
            formatter,
            "\nlargest near-duplicate clusters (fetterly-2004 Table 1)\n{:>6} {:>6} {:>5}  representative URL",
            "URLs", "hosts", "IPs"
        )?;
        for cluster in &self.largest_clusters {
            write!(
                formatter,
                "\n{:>6} {:>6} {:>5}  {}",
                cluster.urls, cluster.hosts, cluster.ip_addresses, cluster.representative
            )?;
        }
        if !self.stand_ins.is_empty() {
            write!(
                formatter,
                "\n\nstand-ins: one text answering many URLs of a host (soft 404s, parked domains, \"not mirrored here\"), {} pages, never results or copies\n{:>6}  host: title (example URL)",
                self.similarity.stand_in_pages, "URLs"
            )?;
            for stand_in in &self.stand_ins {
                write!(
                    formatter,
                    "\n{:>6}  {}: {} ({})",
                    stand_in.urls, stand_in.host, stand_in.title, stand_in.example
                )?;
            }
        }
        Ok(())
    }
}
