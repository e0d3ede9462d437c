//! What the generated-data benchmarks share: a seeded random source and the
//! process's memory figures.

#![allow(dead_code)]

pub mod search;
pub mod web;

/// The WARC files or folders named on the command line (words starting
/// with `--` aside), else the shipped crawl.
pub fn crawl_inputs() -> Vec<std::path::PathBuf> {
    let inputs: Vec<std::path::PathBuf> = std::env::args()
        .skip(1)
        .filter(|argument| !argument.starts_with("--"))
        .map(std::path::PathBuf::from)
        .collect();
    if inputs.is_empty() {
        vec![mirrorscope::pipeline::default_corpus_dir()]
    } else {
        inputs
    }
}

/// xorshift64: deterministic draws from a seed.
pub struct Draw(pub u64);

impl Draw {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}
