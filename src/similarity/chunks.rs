//! Directly similar pairs by shared line chunks: cho-2000 §3.2's iceberg
//! over the table of shared chunks, computed without materialising it.
//!
//! The table `DocChunks(document, chunk)` is sorted by chunk, which groups
//! each chunk's documents (its posting list). Two kinds of chunk are set
//! aside before any pair is counted:
//!
//! - **site chrome**: a chunk found on more than `boilerplate_pages_per_host`
//!   different texts of one host. Navigation bars, sidebars, licence footers
//!   and "previous / next" lines repeat on every page of a manual on its
//!   host, while a line of real content appears on one page of a host (or on
//!   the few URLs of one page, which are one text here). The test looks at
//!   hosts, not at the crawl as a whole, so a line copied to 50 mirrors is
//!   still content, and chrome shared by 300 pages of one manual is not.
//! - **overly common**: a chunk on more than `max_chunk_pages` texts in all.
//!   It bounds the work (a posting list of n texts yields n^2/2 pair counts)
//!   and catches chrome spread thinly over many hosts.
//!
//! Then, for each document in parallel, the documents sharing its remaining
//! chunks are counted in a local map (the iceberg's group-by, partitioned by
//! the first document of each pair), and the pairs at or over the threshold
//! are kept. Work is the sum of squared posting lengths, which the two
//! filters keep near linear in the crawl.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::pages::HostId;

use super::SimilarityConfig;

/// What the chunk test found.
#[derive(Debug, Default)]
pub struct ChunkPairs {
    /// `(first, second, shared chunks)` with `first < second`, sorted.
    pub pairs: Vec<(u32, u32, u32)>,
    /// Chunks set aside as site chrome or overly common, sorted.
    pub boilerplate: Vec<u64>,
}

/// How many shared chunks make two texts with `first` and `second` counted
/// chunks directly similar: `shared_fraction` of the smaller one and
/// `larger_fraction` of the larger one, rounded up, and never fewer than T
/// (`shared_chunks`).
pub fn required_shared(config: &SimilarityConfig, first: u32, second: u32) -> u32 {
    let smaller = first.min(second) as f64;
    let larger = first.max(second) as f64;
    let relative = (config.shared_fraction * smaller).ceil() as u32;
    let of_larger = (config.larger_fraction * larger).ceil() as u32;
    relative.max(of_larger).max(config.shared_chunks)
}

/// The table `DocChunks(document, chunk)` of the module's documentation,
/// filled a text at a time (in their order), so that a caller need not hold
/// every text's chunks beside it: 16 bytes a chunk, and 4 a text.
#[derive(Debug, Default)]
pub struct ChunkTable {
    /// (chunk, text).
    entries: Vec<(u64, u32)>,
    /// By text: its chunks.
    chunks: Vec<u32>,
}

impl ChunkTable {
    /// A table that will hold `chunks` chunks of `texts` texts without
    /// growing (more can be pushed).
    pub fn with_capacity(chunks: usize, texts: usize) -> ChunkTable {
        ChunkTable {
            entries: Vec::with_capacity(chunks),
            chunks: Vec::with_capacity(texts),
        }
    }

    /// Adds the next text, its chunk hashes sorted and unique.
    pub fn push(&mut self, chunks: &[u64]) {
        let text = self.chunks.len() as u32;
        self.entries
            .extend(chunks.iter().map(|&chunk| (chunk, text)));
        self.chunks.push(chunks.len() as u32);
    }

    /// The directly similar pairs of the texts pushed, `hosts` giving each
    /// text's hosts (sorted, unique).
    pub fn similar_pairs(self, hosts: &[&[HostId]], config: &SimilarityConfig) -> ChunkPairs {
        similar_pairs_in(self.entries, self.chunks, hosts, config)
    }
}

fn similar_pairs_in(
    mut table: Vec<(u64, u32)>,
    mut counted_chunks: Vec<u32>,
    hosts: &[&[HostId]],
    config: &SimilarityConfig,
) -> ChunkPairs {
    assert_eq!(hosts.len(), counted_chunks.len(), "hosts for every text");
    table.par_sort_unstable();

    // Posting lists: runs of one chunk in the sorted table. A chunk on one
    // text shares nothing: its run is not kept (most chunks of a crawl are
    // such).
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for index in 1..=table.len() {
        if index == table.len() || table[index].0 != table[start].0 {
            if index - start > 1 {
                runs.push((start, index));
            }
            start = index;
        }
    }

    let verdicts: Vec<Verdict> = runs
        .par_iter()
        .map(|&(start, end)| judge(&table[start..end], hosts, config))
        .collect();

    let mut boilerplate = Vec::new();
    let mut postings: Vec<&[(u64, u32)]> = Vec::new();
    for (&(start, end), verdict) in runs.iter().zip(&verdicts) {
        match verdict {
            Verdict::Boilerplate => boilerplate.push(table[start].0),
            Verdict::Shared => postings.push(&table[start..end]),
            Verdict::Alone => {}
        }
    }

    // For each document, how many of its chunks are not boilerplate.
    let documents = hosts;
    let mut postings_of: Vec<Vec<u32>> = vec![Vec::new(); documents.len()];
    for (&(start, end), verdict) in runs.iter().zip(&verdicts) {
        if matches!(verdict, Verdict::Boilerplate) {
            for &(_, document) in &table[start..end] {
                counted_chunks[document as usize] -= 1;
            }
        }
    }
    for (posting, entries) in postings.iter().enumerate() {
        for &(_, document) in *entries {
            postings_of[document as usize].push(posting as u32);
        }
    }

    let mut pairs: Vec<(u32, u32, u32)> = (0..documents.len())
        .into_par_iter()
        .flat_map_iter(|first| {
            let mut shared: HashMap<u32, u32> = HashMap::new();
            for &posting in &postings_of[first] {
                for &(_, second) in postings[posting as usize] {
                    if second as usize > first {
                        *shared.entry(second).or_default() += 1;
                    }
                }
            }
            let counted = &counted_chunks;
            shared
                .into_iter()
                .filter(move |&(second, count)| {
                    count >= required_shared(config, counted[first], counted[second as usize])
                })
                .map(move |(second, count)| (first as u32, second, count))
                .collect::<Vec<_>>()
        })
        .collect();
    pairs.par_sort_unstable();
    ChunkPairs { pairs, boilerplate }
}

enum Verdict {
    /// On one text only: shares nothing.
    Alone,
    /// Counts towards similarity.
    Shared,
    /// Site chrome or overly common: counts for nothing.
    Boilerplate,
}

fn judge(run: &[(u64, u32)], hosts: &[&[HostId]], config: &SimilarityConfig) -> Verdict {
    if run.len() < 2 {
        return Verdict::Alone;
    }
    if run.len() > config.max_chunk_pages as usize {
        return Verdict::Boilerplate;
    }
    let mut hosts: Vec<HostId> = run
        .iter()
        .flat_map(|&(_, document)| hosts[document as usize].iter().copied())
        .collect();
    hosts.sort_unstable();
    let mut longest = 0;
    let mut start = 0;
    for index in 1..=hosts.len() {
        if index == hosts.len() || hosts[index] != hosts[start] {
            longest = longest.max(index - start);
            start = index;
        }
    }
    if longest > config.boilerplate_pages_per_host as usize {
        Verdict::Boilerplate
    } else {
        Verdict::Shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_pushed_one_at_a_time_pair_by_their_shared_chunks() {
        let config = SimilarityConfig::default();
        let mut table = ChunkTable::with_capacity(0, 0);
        let own = |seed: u64| (0..20).map(move |index| seed * 1000 + index);
        let mut first: Vec<u64> = own(1).collect();
        let mut second: Vec<u64> = own(1).take(18).chain(own(2).take(2)).collect();
        let third: Vec<u64> = own(3).collect();
        first.sort_unstable();
        second.sort_unstable();
        // Grows past its capacity as texts are pushed.
        table.push(&first);
        table.push(&third);
        table.push(&second);
        let hosts = [HostId(0), HostId(1), HostId(2)];
        let hosts: Vec<&[HostId]> = hosts.iter().map(std::slice::from_ref).collect();
        let found = table.similar_pairs(&hosts, &config);
        assert_eq!(found.pairs, vec![(0, 2, 18)]);
        assert!(found.boilerplate.is_empty());
    }

    #[test]
    fn a_line_on_every_text_of_a_host_is_its_chrome() {
        let config = SimilarityConfig::default();
        let texts = config.boilerplate_pages_per_host as u64 + 1;
        let mut table = ChunkTable::default();
        for text in 0..texts {
            table.push(&[7, 100 + text]);
        }
        let host = [HostId(0)];
        let hosts = vec![&host[..]; texts as usize];
        let found = table.similar_pairs(&hosts, &config);
        assert_eq!(found.boilerplate, vec![7]);
        assert!(found.pairs.is_empty());
    }
}
