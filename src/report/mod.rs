//! Reports for people and scripts: the `index` summary, `stats`, `similar`,
//! `clusters`, `mirrors` and `avoid`.
//!
//! Reads the current generation (manifest and page table) and the page store;
//! writes nothing.

mod avoid;
mod clusters;
mod mirrors;
mod similar;

use std::fmt;

use serde::Serialize;

use crate::collections::CollectionCounts;
use crate::datadir::{DataDir, Result};
use crate::pages::TableCounts;
use crate::pipeline::IndexOutcome;
use crate::similarity::SimilarityCounts;

pub use avoid::{AvoidEntry, AvoidKind, AvoidList};
pub use clusters::{ClusterEntry, ClusterFilter, ClustersReport, CollectionEntry};
pub use mirrors::{MirrorEntry, MirrorsReport, SubtreeEntry};
pub use similar::SimilarReport;

/// The text `mirrorscope index` prints when it is done.
pub fn index_summary(outcome: &IndexOutcome) -> String {
    let counts = &outcome.manifest.counts;
    let mut text = String::new();
    if outcome.rolled_back > 0 {
        text.push_str(&format!(
            "rolled back {} interrupted ingest(s)\n",
            outcome.rolled_back
        ));
    }
    if outcome.reused {
        text.push_str(&format!(
            "{} was ingested before: reused (its bodies are not stored again); its ingest report:\n",
            outcome.crawl_id
        ));
    } else {
        text.push_str(&format!("ingested {}\n", outcome.crawl_id));
    }
    text.push_str(&outcome.report.to_string());
    text.push_str(&format!(
        "\ngeneration {}: {} pages on {} hosts, {} distinct bodies, {} exact duplicate pages, {} links between crawled pages",
        outcome.manifest.generation, counts.pages, counts.hosts, counts.distinct_bodies, counts.exact_duplicate_pages, counts.links
    ));
    let similarity = &outcome.manifest.similarity;
    text.push_str(&format!(
        "\nsimilarity ({}): {} near-duplicate pages in {} trivial clusters",
        similarity.similarity_test, similarity.near_duplicate_pages, similarity.trivial_clusters
    ));
    let collections = &outcome.manifest.collections;
    text.push_str(&format!(
        "
collections: {} similar clusters, {} of them of collections of 2 pages or more ({} extended, {} small); {} pages in {} collections",
        collections.clusters,
        collections.collection_clusters,
        collections.extended_clusters,
        collections.small_clusters,
        collections.pages_in_collections,
        collections.collections
    ));
    let mirrors = &outcome.manifest.mirrors;
    text.push_str(&format!(
        "\nmirrors: {} ranked host pairs among {} hosts considered, {} of them mirrors (levels 1-5)",
        mirrors.ranked_pairs, mirrors.hosts_considered, mirrors.mirrored_pairs
    ));
    let index = &outcome.manifest.index;
    text.push_str(&format!(
        "\nsearch index: {} pages ({:.1} MB){}",
        index.documents,
        index.bytes as f64 / 1e6,
        if index.unreadable_bodies > 0 {
            format!(
                ", {} left out: stored body unreadable",
                index.unreadable_bodies
            )
        } else {
            String::new()
        }
    ));
    text
}

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
}

impl Stats {
    pub fn gather(data: &DataDir) -> Result<Stats> {
        let manifest = data.manifest()?;
        Ok(Stats {
            generation: manifest.generation,
            crawls: manifest.crawls.len(),
            counts: manifest.counts,
            similarity: manifest.similarity,
            collections: manifest.collections,
        })
    }
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
            "similar pairs          {} by shared chunks, {} by shared megashingle; {} boilerplate chunks set aside",
            similarity.chunk_pairs, similarity.megashingle_pairs, similarity.boilerplate_chunks
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
        Ok(())
    }
}
