//! Candidate detection (bharat-broder-1999 §3.1, ranker `bigrams`) on a
//! generated URL list: `cargo bench --bench mirrors [URLS] [HOSTS]`
//! (default 10,000,000 URLs over 100,000 hosts).
//!
//! The list (deterministic, seeded): each host draws a site layout, folders
//! named from a vocabulary of 5,000 words, 2 to 4 deep, with numbered pages
//! in them; host sizes vary from 10 to about 1,000 URLs. A tenth of the
//! hosts mirror another host's layout (all of it, or a part, with some
//! pages of their own), so the ranking has real pairs to find. Prints the
//! time and peak memory of detection (features and matching) over the whole
//! list, and how many of the planted mirror pairs came out among the
//! candidates.

use std::collections::HashSet;
use std::time::Instant;

use mirrorscope::mirrors::candidates::{rank_hosts, HostUrls};
use mirrorscope::mirrors::HostPair;
use mirrorscope::pages::HostId;

mod support;
use mirrorscope::memory;
use support::Draw;

const VOCABULARY: usize = 5_000;
const SYLLABLES: [&str; 16] = [
    "ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "dar", "fen", "gil", "hum", "jor", "pex",
    "quin", "wal",
];

fn word(index: usize) -> String {
    let mut word = String::new();
    let mut rest = index + 1;
    while rest > 0 {
        word.push_str(SYLLABLES[rest % SYLLABLES.len()]);
        rest /= SYLLABLES.len();
    }
    word
}

/// All URLs' paths in one buffer: `(start, end)` per path, hosts' ranges.
struct UrlList {
    text: String,
    paths: Vec<(u32, u32)>,
    hosts: Vec<(String, usize, usize)>,
    planted: Vec<(usize, usize)>,
}

fn layout(draw: &mut Draw, words: &[String], urls: usize) -> Vec<String> {
    let folders: Vec<String> = (0..(urls / 25).clamp(2, 40))
        .map(|_| {
            let depth = 2 + draw.below(3);
            (0..depth)
                .map(|_| words[draw.below(words.len())].as_str())
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect();
    (0..urls)
        .map(|index| {
            let folder = &folders[draw.below(folders.len())];
            format!("/{folder}/page-{index}.html")
        })
        .collect()
}

fn generate(total_urls: usize, host_count: usize) -> UrlList {
    let mut draw = Draw(0x2545_F491_4F6C_DD1D);
    let vocabulary: Vec<String> = (0..VOCABULARY).map(word).collect();
    let mut list = UrlList {
        text: String::with_capacity(total_urls * 40),
        paths: Vec::with_capacity(total_urls),
        hosts: Vec::with_capacity(host_count),
        planted: Vec::new(),
    };
    let mean = total_urls / host_count;
    let mut layouts: Vec<Vec<String>> = Vec::new();
    for host in 0..host_count {
        let urls = 10 + draw.below(2 * mean.saturating_sub(10).max(1));
        let mirror_of = (host > 0 && draw.below(10) == 0).then(|| draw.below(layouts.len()));
        let mut paths = match mirror_of {
            Some(original) => {
                list.planted.push((original, host));
                let mut copy = layouts[original].clone();
                if draw.below(2) == 0 {
                    copy.truncate(copy.len() / 2 + 1);
                }
                copy
            }
            None => {
                let words: Vec<String> = (0..8)
                    .map(|_| vocabulary[draw.below(VOCABULARY)].clone())
                    .collect();
                layout(&mut draw, &words, urls)
            }
        };
        layouts.push(paths.clone());
        paths.sort();
        paths.dedup();
        let start = list.paths.len();
        for path in &paths {
            let begin = list.text.len() as u32;
            list.text.push_str(path);
            list.paths.push((begin, list.text.len() as u32));
        }
        let name = format!(
            "www.{}-{host}.{}",
            vocabulary[draw.below(VOCABULARY)],
            ["com", "org", "net", "de", "example"][draw.below(5)]
        );
        list.hosts.push((name, start, list.paths.len()));
    }
    list
}

fn main() {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .filter_map(|arg| arg.replace('_', "").parse().ok())
        .collect();
    let urls = numbers.first().copied().unwrap_or(10_000_000);
    let hosts = numbers.get(1).copied().unwrap_or(100_000);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!("candidate detection on a generated URL list ({cores} cores available)");
    let started = Instant::now();
    let list = generate(urls, hosts);
    let generated = started.elapsed().as_secs_f64();
    let memory_before = memory::resident_mb().unwrap_or(f64::NAN);
    println!(
        "generated {} URLs on {} hosts ({} planted mirrors) in {generated:.1} s; {memory_before:.0} MB resident",
        list.paths.len(),
        list.hosts.len(),
        list.planted.len()
    );
    memory::reset_peak();

    let started = Instant::now();
    let inputs: Vec<HostUrls<'_>> = list
        .hosts
        .iter()
        .enumerate()
        .map(|(index, (name, start, end))| HostUrls {
            id: HostId(index as u32),
            name,
            paths: list.paths[*start..*end]
                .iter()
                .map(|&(begin, end)| &list.text[begin as usize..end as usize])
                .collect(),
        })
        .collect();
    let ranking = rank_hosts(&inputs);
    let seconds = started.elapsed().as_secs_f64();
    let peak = memory::peak_mb().unwrap_or(f64::NAN);
    let found: HashSet<HostPair> = ranking.iter().map(|ranked| ranked.pair).collect();
    let recovered = list
        .planted
        .iter()
        .filter(|(a, b)| found.contains(&HostPair::new(HostId(*a as u32), HostId(*b as u32))))
        .count();
    println!(
        "detection: {seconds:.1} s ({:.0} URLs/s), peak resident memory {peak:.0} MB (the URL list itself {memory_before:.0} MB)",
        list.paths.len() as f64 / seconds
    );
    println!(
        "candidates: {} pairs; {recovered} of {} planted mirror pairs among them",
        ranking.len(),
        list.planted.len()
    );
}
