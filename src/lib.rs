//! mirrorscope: a search engine over a web crawl that knows which pages are
//! copies of which and which hyperlinked collections are mirrored on other
//! hosts. See `ARCHITECTURE.md` for how the stages fit together.
//!
//! Data flows one way: crawl ([`corpus`]) -> page store ([`store`]) and
//! captures ([`ingest`]) -> page table ([`pages`]) -> trivial clusters
//! ([`similarity`]) -> web graph and similar clusters of collections
//! ([`collections`]) -> search index ([`index`]) -> generation ([`datadir`])
//! -> search with roll-up ([`search`]) -> the site ([`web`]).

pub mod atomic;
pub mod collections;
pub mod config;
pub mod corpus;
pub mod datadir;
pub mod eval;
pub mod export;
pub mod fingerprint;
pub mod index;
pub mod ingest;
pub mod memory;
pub mod mirrors;
pub mod pages;
pub mod pipeline;
pub mod report;
pub mod search;
pub mod similarity;
pub mod stats;
pub mod store;
mod union_find;
pub mod web;

#[cfg(test)]
mod test_support;
