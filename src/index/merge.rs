//! Which of the index's segments tantivy merges while the index stage writes
//! them: segments of about one size, a few at a time, never into a segment
//! past a bound.
//!
//! tantivy's default (`LogMergePolicy`) merges every level of eight or more
//! segments of about one size, whatever their size: a million-page crawl's
//! index is written again at each level, and at the end its last merge maps
//! the whole index (4.4 GB of the 7.1 GB peak of a 1,000,446-page crawl's
//! index stage). Here a merge's inputs are at most
//! `index.max_segment_mib` together, so what a merge maps and each page's
//! rewrites stop growing with the crawl. A search opens every segment
//! anyway; a few more of them cost a term lookup each.

use std::path::{Path, PathBuf};

use tantivy::index::{SegmentComponent, SegmentId, SegmentMeta};
use tantivy::indexer::{MergeCandidate, MergePolicy};

/// A merge takes at least this many segments, unless it makes a finished one
/// (at least half the bound): as tantivy's default, each merge then at least
/// octuples what it rewrites, so a page is rewritten a few times at most.
const LEAST_SEGMENTS: usize = 8;

/// Segments within this factor of the largest one left are of one level:
/// segments of very different sizes are not merged, which would rewrite the
/// big one for a small gain.
const LEVEL_FACTOR: u64 = 4;

/// tantivy's merge policy for the index stage ([`plan`]), reading each
/// segment's size from its files in `dir`.
#[derive(Debug)]
pub(super) struct BoundedMerges {
    pub dir: PathBuf,
    pub most_bytes: u64,
}

impl MergePolicy for BoundedMerges {
    fn compute_merge_candidates(&self, segments: &[SegmentMeta]) -> Vec<MergeCandidate> {
        let sized: Vec<(u64, SegmentId)> = segments
            .iter()
            .map(|segment| (segment_bytes(&self.dir, segment), segment.id()))
            .collect();
        plan(&sized, self.most_bytes)
            .into_iter()
            .map(MergeCandidate)
            .collect()
    }
}

/// The bytes of `segment`'s files in `dir` (a file not there counts 0).
fn segment_bytes(dir: &Path, segment: &SegmentMeta) -> u64 {
    [
        SegmentComponent::Postings,
        SegmentComponent::Positions,
        SegmentComponent::Terms,
        SegmentComponent::Store,
        SegmentComponent::TempStore,
        SegmentComponent::FastFields,
        SegmentComponent::FieldNorms,
    ]
    .into_iter()
    .filter_map(|component| std::fs::metadata(dir.join(segment.relative_path(component))).ok())
    .map(|metadata| metadata.len())
    .sum()
}

/// The merges to make of `segments` (bytes, id), each a list of ids:
/// - a segment of at least half of `most_bytes` is finished and left alone;
/// - the others fall in levels: from the largest left, the segments at
///   least a [`LEVEL_FACTOR`]th of its size;
/// - a level's segments, smallest first, are taken in runs of at most
///   `most_bytes` together, and a run is merged when it holds
///   [`LEAST_SEGMENTS`] segments or makes a finished segment (two or more).
pub(super) fn plan<Id: Copy>(segments: &[(u64, Id)], most_bytes: u64) -> Vec<Vec<Id>> {
    let mut open: Vec<(u64, Id)> = segments
        .iter()
        .copied()
        .filter(|&(bytes, _)| bytes < most_bytes / 2)
        .collect();
    open.sort_by_key(|&(bytes, _)| std::cmp::Reverse(bytes));
    let mut merges = Vec::new();
    let mut rest = open.as_slice();
    while let Some(&(largest, _)) = rest.first() {
        let level_end = rest
            .iter()
            .position(|&(bytes, _)| bytes.saturating_mul(LEVEL_FACTOR) < largest)
            .unwrap_or(rest.len());
        let (level, after) = rest.split_at(level_end);
        let mut run: Vec<Id> = Vec::new();
        let mut run_bytes = 0u64;
        for &(bytes, id) in level.iter().rev() {
            if run_bytes + bytes > most_bytes {
                if merges_now(run.len(), run_bytes, most_bytes) {
                    merges.push(std::mem::take(&mut run));
                } else {
                    run.clear();
                }
                run_bytes = 0;
            }
            run.push(id);
            run_bytes += bytes;
        }
        if merges_now(run.len(), run_bytes, most_bytes) {
            merges.push(run);
        }
        rest = after;
    }
    merges
}

fn merges_now(segments: usize, bytes: u64, most_bytes: u64) -> bool {
    segments >= LEAST_SEGMENTS || (segments >= 2 && bytes >= most_bytes / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn sizes(plan: &[Vec<usize>], segments: &[(u64, usize)]) -> Vec<u64> {
        plan.iter()
            .map(|merge| merge.iter().map(|&id| segments[id].0).sum())
            .collect()
    }

    fn numbered(bytes: &[u64]) -> Vec<(u64, usize)> {
        bytes.iter().copied().zip(0..).collect()
    }

    #[test]
    fn eight_small_segments_of_one_level_merge_and_seven_wait() {
        let segments = numbered(&[10 * MIB; 7]);
        assert!(plan(&segments, 512 * MIB).is_empty());
        let segments = numbered(&[10 * MIB; 8]);
        assert_eq!(
            plan(&segments, 512 * MIB),
            vec![(0..8).rev().collect::<Vec<_>>()]
        );
    }

    #[test]
    fn no_merge_takes_more_than_the_bound_and_finished_segments_stay() {
        // Twenty segments of 100 MiB and one finished one: runs of at most
        // 512 MiB, each a finished segment of five.
        let mut bytes = vec![100 * MIB; 20];
        bytes.push(300 * MIB);
        let segments = numbered(&bytes);
        let merges = plan(&segments, 512 * MIB);
        assert_eq!(sizes(&merges, &segments), vec![500 * MIB; 4]);
        assert!(merges.iter().all(|merge| !merge.contains(&20)));
    }

    #[test]
    fn segments_of_very_different_sizes_are_not_merged_together() {
        // Eight of 1 MiB and two of 40 MiB: the big ones are a level of two
        // (no merge), the small ones one of eight.
        let mut bytes = vec![40 * MIB; 2];
        bytes.extend([MIB; 8]);
        let segments = numbered(&bytes);
        assert_eq!(sizes(&plan(&segments, 512 * MIB), &segments), vec![8 * MIB]);
    }

    #[test]
    fn a_whole_crawl_ends_in_finished_segments_and_few_small_ones() {
        // What the index stage sees: segments of 20 MiB as indexing threads
        // flush them, merged as the policy says, until nothing is left to
        // merge. Every merge's inputs stay within the bound, and every byte
        // is rewritten a few times at most.
        let most = 512 * MIB;
        let mut segments: Vec<u64> = Vec::new();
        let mut rewritten = 0u64;
        for _ in 0..250 {
            segments.push(20 * MIB);
            loop {
                let listed = numbered(&segments);
                let merges = plan(&listed, most);
                if merges.is_empty() {
                    break;
                }
                let mut merged = Vec::new();
                for merge in &merges {
                    let bytes: u64 = merge.iter().map(|&id| segments[id]).sum();
                    assert!(bytes <= most);
                    rewritten += bytes;
                    merged.push(bytes);
                }
                let gone: Vec<usize> = merges.concat();
                segments = (0..segments.len())
                    .filter(|id| !gone.contains(id))
                    .map(|id| segments[id])
                    .chain(merged)
                    .collect();
            }
        }
        let total: u64 = segments.iter().sum();
        assert_eq!(total, 250 * 20 * MIB);
        assert!(rewritten <= 3 * total, "rewritten {rewritten} of {total}");
        let unfinished = segments.iter().filter(|&&bytes| bytes < most / 2).count();
        assert!(unfinished < 2 * LEAST_SEGMENTS, "{segments:?}");
    }
}
