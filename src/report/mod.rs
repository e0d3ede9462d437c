//! Reports for people and scripts: the `index` summary, `stats`, `similar`,
//! `clusters`, `mirrors`, `avoid` and `evolve`.
//!
//! Reads the current generation (manifest and page table) and the page store;
//! writes nothing.

mod avoid;
mod avoid_loop;
mod clusters;
mod crawler_rules;
mod evolve;
mod evolve_summary;
mod mirrors;
mod similar;
mod versions;

use crate::pipeline::{IndexOutcome, RemoveOutcome};

pub use avoid::{
    default_budget, seeds, write_seeds, AvoidEntry, AvoidKind, AvoidList, FolderRule, LeftOut,
};
pub use avoid_loop::{AvoidLoop, PreviousList, Verdict};
pub use clusters::{ClusterEntry, ClusterFilter, ClustersReport, CollectionEntry};
pub use crawler_rules::AvoidFormat;
pub use evolve::Evolution;
pub use mirrors::{MirrorEntry, MirrorsReport, SubtreeEntry};
pub use similar::{SimilarError, SimilarReport};

/// The line saying interrupted ingests were rolled back, if any were.
fn rolled_back(count: usize) -> String {
    if count > 0 {
        format!("rolled back {count} interrupted ingest(s)\n")
    } else {
        String::new()
    }
}

/// The stages' times, peak memory and memory held after each, on one line.
fn stage_line(stages: &crate::pipeline::Stages) -> String {
    let parts: Vec<String> = stages
        .0
        .iter()
        .map(|stage| match (stage.peak_mb, stage.held_mb) {
            (Some(peak), Some(held)) => format!(
                "{} {:.2} s ({peak:.0} MB, {held:.0} MB after)",
                stage.stage, stage.seconds
            ),
            (Some(peak), None) => format!("{} {:.2} s ({peak:.0} MB)", stage.stage, stage.seconds),
            _ => format!("{} {:.2} s", stage.stage, stage.seconds),
        })
        .collect();
    format!(
        "\ntime by stage (peak memory, memory held after): {}",
        parts.join(", ")
    )
}

/// The text `mirrorscope index` prints when it is done.
pub fn index_summary(outcome: &IndexOutcome) -> String {
    let counts = &outcome.manifest.counts;
    let mut text = rolled_back(outcome.rolled_back);
    if outcome.reused {
        text.push_str(&format!(
            "{} was ingested before: reused (its bodies are not stored again); its ingest report:\n",
            outcome.crawl_id
        ));
    } else {
        text.push_str(&format!("ingested {}\n", outcome.crawl_id));
    }
    text.push_str(&outcome.report.to_string());
    if let Some(change) = &outcome.change {
        let persistence = if change.previous_urls == 0 {
            0.0
        } else {
            100.0 * change.urls_persisting as f64 / change.previous_urls as f64
        };
        text.push_str(&format!(
            "\nagainst the previous crawl {} (gomes-2006 Table 1): {} duplicates within this crawl, {} of a body of the previous crawl; URL persistence {:.1}% ({} of its {} URLs crawled again)",
            change.previous,
            change.duplicates_within,
            change.duplicates_of_previous,
            persistence,
            change.urls_persisting,
            change.previous_urls
        ));
    }
    text.push_str(&format!(
        "\ngeneration {}: {} pages on {} hosts, {} distinct bodies, {} exact duplicate pages, {} links between crawled pages",
        outcome.manifest.generation, counts.pages, counts.hosts, counts.distinct_bodies, counts.exact_duplicate_pages, counts.links
    ));
    text.push_str(&analysis_lines(&outcome.manifest));
    if let Some(staged) = &outcome.staged {
        text.push_str(&format!("\n{}", shards_to_build(staged)));
    }
    text.push_str(&stage_line(&outcome.stages));
    if !outcome.reused {
        text.push_str(&throughput_line(&outcome.report, &outcome.stages));
    }
    text.push_str(&peak_line(&outcome.stages));
    text
}

/// The run's peak memory: the highest stage's peak (each is reset when its
/// stage starts; what a step between two stages keeps is counted in the
/// next one). Empty where the system gives no peak.
fn peak_line(stages: &crate::pipeline::Stages) -> String {
    let highest = stages
        .0
        .iter()
        .filter_map(|stage| Some((stage.peak_mb?, stage.stage)))
        .max_by(|first, second| first.0.total_cmp(&second.0));
    match highest {
        Some((peak_mb, stage)) => format!("\npeak memory: {peak_mb:.0} MB ({stage})"),
        None => String::new(),
    }
}

/// The whole run's pace: HTML pages and megabytes of HTML (bodies as
/// decompressed, revisits' included) a second, over every stage's time,
/// the figure issue 32 measures `index` by.
fn throughput_line(
    report: &crate::ingest::IngestReport,
    stages: &crate::pipeline::Stages,
) -> String {
    let seconds: f64 = stages.0.iter().map(|stage| stage.seconds).sum();
    let megabytes = report.body_bytes as f64 / 1e6;
    let per_second = |amount: f64| amount / seconds.max(1e-9);
    format!(
        "\nthroughput: {} pages, {megabytes:.1} MB of HTML in {seconds:.2} s: {:.0} pages/s, {:.1} MB of HTML/s",
        report.captures,
        per_second(report.captures as f64),
        per_second(megabytes)
    )
}

/// The lines of a generation's analysis: trivial clusters, collections,
/// mirrors and the search index.
fn analysis_lines(manifest: &crate::datadir::Manifest) -> String {
    let mut text = String::new();
    let similarity = &manifest.similarity;
    text.push_str(&format!(
        "\nsimilarity ({}): {} near-duplicate pages in {} trivial clusters",
        similarity.similarity_test, similarity.near_duplicate_pages, similarity.trivial_clusters
    ));
    let collections = &manifest.collections;
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
    let mirrors = &manifest.mirrors;
    text.push_str(&format!(
        "\nmirrors: {} ranked host pairs among {} hosts considered, {} of them mirrors (levels 1-5)",
        mirrors.ranked_pairs, mirrors.hosts_considered, mirrors.mirrored_pairs
    ));
    let index = &manifest.index;
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

/// The text `mirrorscope import-analysis` prints when it is done.
pub fn import_summary(
    manifest: &crate::datadir::Manifest,
    stages: &crate::pipeline::Stages,
    files: &[std::path::PathBuf],
) -> String {
    let mut text = format!(
        "imported the analysis of {} file(s): {}\ngeneration {}: its crawls and page table, the rest of the collections stage, the mirrors and the search index computed again on it",
        files.len(),
        files
            .iter()
            .map(|file| file.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        manifest.generation
    );
    text.push_str(&analysis_lines(manifest));
    text.push_str(&stage_line(stages));
    text
}

/// The text `mirrorscope import-analysis --index-shards` prints: the staged
/// generation's name alone on the first line (what scripts read), then what
/// to run.
pub fn staged_summary(
    staged: &crate::datadir::StagedGeneration,
    stages: &crate::pipeline::Stages,
    files: &[std::path::PathBuf],
) -> String {
    let mut text = format!(
        "{}\nimported the analysis of {} file(s); {}",
        staged.name,
        files.len(),
        shards_to_build(staged)
    );
    text.push_str(&stage_line(stages));
    text
}

/// What a staged generation waits for, and what to run.
fn shards_to_build(staged: &crate::datadir::StagedGeneration) -> String {
    let data = staged
        .path
        .parent()
        .and_then(std::path::Path::parent)
        .unwrap_or(std::path::Path::new("."));
    format!(
        "staged {name}: its tables written, its search index to be built in {shards} shard(s):\n  mirrorscope index-shard {name} --shard K --of {shards} --data {data}   (K from 0 to {last}, any order, at once)\n  mirrorscope publish {name} --data {data}",
        name = staged.name,
        shards = staged.shards,
        last = staged.shards - 1,
        data = data.display(),
    )
}

/// The text `mirrorscope index --remove` prints when it is done.
pub fn remove_summary(outcome: &RemoveOutcome) -> String {
    let counts = &outcome.manifest.counts;
    let mut text = rolled_back(outcome.rolled_back);
    text.push_str(&format!(
        "removed {}: {} store references given back (bodies nothing else refers to deleted)\ngeneration {}: {} crawl(s), {} pages on {} hosts, {} distinct bodies",
        outcome.crawl_id,
        outcome.released_references,
        outcome.manifest.generation,
        outcome.manifest.crawls.len(),
        counts.pages,
        counts.hosts,
        counts.distinct_bodies
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{StageTime, Stages};

    #[test]
    fn throughput_is_over_every_stage() {
        let report = crate::ingest::IngestReport {
            captures: 300,
            body_bytes: 45_000_000,
            ..Default::default()
        };
        let stage = |stage, seconds| StageTime {
            stage,
            seconds,
            peak_mb: None,
            held_mb: None,
        };
        let stages = Stages(vec![stage("ingest and store", 2.0), stage("index", 1.0)]);
        let measured = Stages(vec![
            StageTime {
                peak_mb: Some(300.4),
                held_mb: Some(120.0),
                ..stage("ingest and store", 2.0)
            },
            StageTime {
                peak_mb: Some(90.0),
                ..stage("index", 1.0)
            },
        ]);
        assert_eq!(
            stage_line(&measured),
            "\ntime by stage (peak memory, memory held after): ingest and store 2.00 s (300 MB, 120 MB after), index 1.00 s (90 MB)"
        );
        assert_eq!(
            throughput_line(&report, &stages),
            "\nthroughput: 300 pages, 45.0 MB of HTML in 3.00 s: 100 pages/s, 15.0 MB of HTML/s"
        );
        // The highest stage's peak, whichever comes first.
        assert_eq!(
            peak_line(&measured),
            "\npeak memory: 300 MB (ingest and store)"
        );
        assert_eq!(peak_line(&stages), "");
    }
}
