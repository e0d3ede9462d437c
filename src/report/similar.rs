//! `mirrorscope similar URL`: a page's copies and why they are grouped.

use std::fmt;

use serde::Serialize;

use crate::collections::{ClusterVerdict, PrincipalEvidence};
use crate::corpus;
use crate::generation::{Analysis, DataDir, DataError};
use crate::similarity::{Evidence, Relation, SimilarityTest};

/// One other page of the trivial cluster.
#[derive(Debug, Clone, Serialize)]
pub struct Copy {
    pub url: String,
    pub page_id: u32,
    pub host: String,
    #[serde(flatten)]
    pub evidence: Evidence,
}

/// The answer of `similar`.
#[derive(Debug, Clone, Serialize)]
pub struct SimilarReport {
    pub url: String,
    pub page_id: u32,
    pub status: u16,
    /// The trivial cluster and its size (this page included).
    pub cluster: u32,
    pub cluster_size: usize,
    pub test: SimilarityTest,
    /// Whether the page takes part in similarity (answered 200 with text).
    pub compared: bool,
    /// Chunks of this page that count (not boilerplate).
    pub chunks: u32,
    pub copies: Vec<Copy>,
    /// A text its host serves at many URLs in place of pages (a soft 404):
    /// no document, and a copy of nothing.
    pub stand_in: bool,
    /// The similar cluster of replicated collections the page is in, if any.
    pub replicated: Option<Replicated>,
}

/// The page's place among replicated collections, as the passes decided it.
#[derive(Debug, Clone, Serialize)]
pub struct Replicated {
    pub cluster: String,
    pub cardinality: usize,
    /// The folder of the page's collection.
    pub collection: String,
    /// The folder of the cluster's principal copy, and what told it.
    pub principal: String,
    pub principal_evidence: PrincipalEvidence,
    /// What the passes did to the cluster, and the same in a sentence.
    pub verdict: ClusterVerdict,
    pub how: String,
}

/// What stops `similar`, in the terms of what was asked.
#[derive(Debug, thiserror::Error)]
pub enum SimilarError {
    #[error("{0:?} is not a URL")]
    NotAUrl(String),
    #[error("{0} is not a page of the current generation (run `mirrorscope index` with a crawl that has it)")]
    NotAPage(String),
    #[error(transparent)]
    Data(#[from] DataError),
}

impl SimilarReport {
    /// Looks `url` up in the current generation.
    pub fn gather(data: &DataDir, url: &str) -> Result<SimilarReport, SimilarError> {
        let Analysis {
            table,
            similarity,
            collections,
            ..
        } = data.analysis()?;
        let canonical = corpus::canonical_url_string(url)
            .ok_or_else(|| SimilarError::NotAUrl(url.to_string()))?;
        let page = table
            .find_url(&canonical)
            .ok_or_else(|| SimilarError::NotAPage(canonical.clone()))?;
        let members = similarity.cluster_members(page);
        let own = similarity.evidence(&table, page, page);
        let mut copies: Vec<Copy> = members
            .iter()
            .filter(|&&other| other != page)
            .filter_map(|&other| {
                let entry = table.page(other)?;
                Some(Copy {
                    url: entry.url.to_string(),
                    page_id: other.0,
                    host: table.host_name(entry.host).to_string(),
                    evidence: similarity.evidence(&table, page, other)?,
                })
            })
            .collect();
        copies.sort_by(|a, b| {
            (
                a.evidence.relation as u8,
                std::cmp::Reverse(a.evidence.shared_chunks),
                &a.url,
            )
                .cmp(&(
                    b.evidence.relation as u8,
                    std::cmp::Reverse(b.evidence.shared_chunks),
                    &b.url,
                ))
        });
        let replicated = collections
            .collection_of
            .get(page.0 as usize)
            .copied()
            .flatten()
            .and_then(|id| collections.collection(id))
            .and_then(|collection| {
                let cluster = collections.cluster(collection.cluster)?;
                let principal = collections.collection(cluster.principal())?;
                Some(Replicated {
                    cluster: cluster.id.to_string(),
                    cardinality: cluster.cardinality(),
                    collection: collection.prefix.clone(),
                    principal: principal.prefix.clone(),
                    principal_evidence: cluster.principal_evidence,
                    verdict: cluster.verdict,
                    how: cluster.verdict.sentence(),
                })
            });
        let entry = &table.pages[page.0 as usize];
        Ok(SimilarReport {
            stand_in: similarity.is_stand_in(page),
            replicated,
            url: entry.url.to_string(),
            page_id: page.0,
            status: entry.status,
            cluster: similarity.cluster_of(page).map_or(0, |cluster| cluster.0),
            cluster_size: members.len(),
            test: similarity.config.test,
            compared: crate::similarity::is_compared(
                &table,
                &similarity.fingerprints,
                page.0 as usize,
            ),
            chunks: own.map_or(0, |evidence| evidence.chunks.0),
            copies,
        })
    }
}

fn relation_name(relation: Relation) -> &'static str {
    match relation {
        Relation::Exact => "exact",
        Relation::Equivalent => "equivalent",
        Relation::Similar => "similar",
        Relation::Transitive => "transitive",
        Relation::Unrelated => "unrelated",
    }
}

impl fmt::Display for SimilarReport {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            formatter,
            "{} (page {}, status {})",
            self.url, self.page_id, self.status
        )?;
        if self.stand_in {
            return write!(
                formatter,
                "a stand-in: its host serves this text at many URLs in place of pages (a soft 404, a \"not mirrored here\" page); no document, and a copy of nothing"
            );
        }
        if !self.compared {
            return write!(
                formatter,
                "not compared: only pages answered 200 with a body that has text are (this one is its own trivial cluster {})",
                self.cluster
            );
        }
        if self.copies.is_empty() {
            write!(
                formatter,
                "no copies: trivial cluster {} holds only this page ({} chunks that count, test: {})",
                self.cluster, self.chunks, self.test
            )?;
            return self.write_replicated(formatter);
        }
        writeln!(
            formatter,
            "trivial cluster {}: {} pages (test: {}); this page has {} chunks that count",
            self.cluster, self.cluster_size, self.test, self.chunks
        )?;
        write!(
            formatter,
            "{:<11} {:>11} {:>14} {:>11}  url",
            "relation", "resemblance", "shared chunks", "megashingle"
        )?;
        for copy in &self.copies {
            let evidence = &copy.evidence;
            let resemblance = evidence
                .resemblance
                .map_or("-".to_string(), |value| format!("{value:.2}"));
            write!(
                formatter,
                "\n{:<11} {:>11} {:>14} {:>11}  {}",
                relation_name(evidence.relation),
                resemblance,
                format!("{}/{}", evidence.shared_chunks, evidence.required_chunks),
                if evidence.shared_megashingle {
                    "yes"
                } else {
                    "no"
                },
                copy.url
            )?;
        }
        write!(
            formatter,
            "\n(shared chunks: shared / needed for direct similarity; resemblance: share of the 84 min-hashes that agree)"
        )?;
        self.write_replicated(formatter)
    }
}

impl SimilarReport {
    fn write_replicated(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(replicated) = &self.replicated {
            write!(
                formatter,
                "\nin collection {} of similar cluster {} ({} copies; principal copy {}: {})\nhow: {}",
                replicated.collection,
                replicated.cluster,
                replicated.cardinality,
                replicated.principal,
                replicated.principal_evidence.sentence(),
                replicated.how
            )?;
        }
        Ok(())
    }
}
