//! mirrorscope: a search engine over a web crawl that knows which pages are
//! copies of which and which hyperlinked collections are mirrored on other
//! hosts. See `ARCHITECTURE.md` for how the stages fit together.
//!
//! Data flows one way: crawl ([`corpus`]) -> page store ([`store`]) and
//! captures ([`ingest`]) -> page table ([`pages`]) -> trivial clusters
//! ([`similarity`]) -> generation ([`datadir`]).

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

#[cfg(test)]
mod test_support;
