//! `mirrorscope clusters`: the similar clusters of the current generation,
//! largest cardinality first, in the manner of cho-2000 Table 2.

use std::fmt;

use serde::Serialize;

use crate::collections::{Cluster, ClusterKind, ClusterVerdict, Collections, PrincipalEvidence};
use crate::generation::{Analysis, DataDir, Result};
use crate::pages::PageTable;

/// Which clusters to list.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClusterFilter {
    pub min_cardinality: usize,
    pub min_size: u32,
}

/// One copy of a collection, as `clusters` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct CollectionEntry {
    pub id: String,
    pub host: String,
    pub root: String,
    pub prefix: String,
    pub inlinks_from_other_hosts: u64,
    /// The version of the manual its pages name.
    pub version: Option<String>,
    pub pages: Vec<String>,
}

/// One similar cluster, as `clusters` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterEntry {
    pub id: String,
    pub cardinality: usize,
    pub size: u32,
    pub extended: bool,
    pub kind: ClusterKind,
    pub small: bool,
    /// The principal copy's collection id (also the first collection).
    pub principal: String,
    /// What told the principal copy from the next (`tie` when nothing did).
    pub principal_evidence: PrincipalEvidence,
    /// What the passes did to it: which rule formed it, what joined it,
    /// why it stayed apart ([`crate::collections::verdict`]).
    pub verdict: ClusterVerdict,
    /// The manual it is a copy of, in all its versions, and the version of
    /// each copy (by collection id) where it names one.
    pub lineage: Option<String>,
    pub collections: Vec<CollectionEntry>,
}

/// The answer of `clusters`.
#[derive(Debug, Clone, Serialize)]
pub struct ClustersReport {
    /// Clusters in the generation, before filtering.
    pub total: usize,
    pub clusters: Vec<ClusterEntry>,
}

impl ClustersReport {
    pub fn gather(data: &DataDir, filter: ClusterFilter) -> Result<ClustersReport> {
        let Analysis {
            table, collections, ..
        } = data.analysis()?;
        Ok(ClustersReport::of(&table, &collections, filter))
    }

    pub fn of(table: &PageTable, collections: &Collections, filter: ClusterFilter) -> Self {
        let clusters = collections
            .clusters
            .iter()
            .filter(|cluster| {
                cluster.cardinality() >= filter.min_cardinality && cluster.size >= filter.min_size
            })
            .map(|cluster| entry(table, collections, cluster))
            .collect();
        ClustersReport {
            total: collections.clusters.len(),
            clusters,
        }
    }
}

fn entry(table: &PageTable, collections: &Collections, cluster: &Cluster) -> ClusterEntry {
    let url = |page: crate::pages::PageId| table.pages[page.0 as usize].url.to_string();
    ClusterEntry {
        id: cluster.id.to_string(),
        cardinality: cluster.cardinality(),
        size: cluster.size,
        extended: cluster.extended,
        kind: cluster.kind,
        small: cluster.small,
        principal: cluster.principal().to_string(),
        principal_evidence: cluster.principal_evidence,
        verdict: cluster.verdict,
        lineage: collections
            .lineages
            .of_collection(collections, cluster.principal())
            .map(|lineage| lineage.to_string()),
        collections: cluster
            .collections
            .iter()
            .map(|&id| {
                let collection = &collections.collections[id.0 as usize];
                CollectionEntry {
                    id: id.to_string(),
                    host: table.host_name(collection.host).to_string(),
                    root: url(collection.root),
                    prefix: collection.prefix.clone(),
                    inlinks_from_other_hosts: collection.inlinks_from_other_hosts,
                    version: collections
                        .lineages
                        .copy_of(collections, id)
                        .and_then(|copy| copy.version.clone()),
                    pages: collection.pages.iter().map(|&page| url(page)).collect(),
                }
            })
            .collect(),
    }
}

impl fmt::Display for ClustersReport {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let of_collections = self
            .clusters
            .iter()
            .filter(|cluster| cluster.kind == ClusterKind::Collection)
            .count();
        writeln!(
            out,
            "{} similar clusters shown of {} ({} of collections, {} of copied pages)",
            self.clusters.len(),
            self.total,
            of_collections,
            self.clusters.len() - of_collections
        )?;
        if self.clusters.is_empty() {
            return Ok(());
        }
        writeln!(
            out,
            "{:>6} {:>11} {:>5}  {:<10} {:<15} principal copy",
            "id", "cardinality", "size", "kind", "flags"
        )?;
        for cluster in &self.clusters {
            let mut flags = Vec::new();
            if cluster.extended {
                flags.push("extended");
            }
            if cluster.small {
                flags.push("small");
            }
            writeln!(
                out,
                "{:>6} {:>11} {:>5}  {:<10} {:<15} {} ({})",
                cluster.id,
                cluster.cardinality,
                cluster.size,
                cluster.kind.to_string(),
                flags.join(","),
                cluster.collections[0].prefix,
                cluster.principal_evidence.sentence()
            )?;
            if cluster.kind == ClusterKind::Collection {
                writeln!(out, "{:>26}  {}", "how:", cluster.verdict.sentence())?;
                for collection in &cluster.collections {
                    let version = collection
                        .version
                        .as_ref()
                        .map_or_else(String::new, |version| format!("  version {version}"));
                    writeln!(
                        out,
                        "{:>26} pages  {}{version}",
                        collection.pages.len(),
                        collection.prefix
                    )?;
                }
            }
        }
        Ok(())
    }
}
