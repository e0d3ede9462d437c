//! mirrorscope: a search engine over a web crawl that knows which pages are
//! copies of which and which hyperlinked collections are mirrored on other
//! hosts. See `ARCHITECTURE.md` for how the stages fit together.
//!
//! Data flows one way: crawl ([`corpus`]) -> page store ([`store`]) and
//! captures ([`ingest`]) -> page table ([`pages`]) -> trivial clusters
//! ([`similarity`]) -> web graph and similar clusters of collections
//! ([`collections`]) -> generation ([`datadir`]).

pub mod collections;
pub mod config;
pub mod corpus;
pub mod datadir;
pub mod eval;
pub mod ingest;
pub mod pages;
pub mod pipeline;
pub mod report;
pub mod similarity;
pub mod store;
mod union_find;

#[cfg(test)]
mod test_support;
