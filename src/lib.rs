//! mirrorscope: a search engine over a web crawl that knows which pages are
//! copies of which and which hyperlinked collections are mirrored on other
//! hosts. See `ARCHITECTURE.md` for how the stages fit together.
//!
//! Data flows one way: crawl ([`corpus`]) -> page store ([`store`]) and
//! captures ([`ingest`]) -> page table ([`pages`]) -> trivial clusters
//! ([`similarity`]) -> web graph and similar clusters of collections
//! ([`collections`]) -> search index ([`index`]) -> generation ([`datadir`])
//! -> search with roll-up ([`search`]) -> the site ([`web`]).

/// mimalloc allocates for the binary, the benches and the tests alike
/// ([`memory`] says why).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod atomic;
pub mod collections;
pub mod config;
pub mod corpus;
pub mod datadir;
pub mod dedup_warc;
pub mod eval;
pub mod export;
pub mod fingerprint;
pub mod generation;
pub mod import;
pub mod index;
pub mod ingest;
pub mod language;
pub mod memory;
pub mod mirrors;
pub mod pages;
pub mod pipeline;
pub mod report;
pub mod search;
pub mod share;
pub mod similarity;
pub mod stats;
pub mod store;
pub mod tabular;
mod union_find;
pub mod web;

#[cfg(test)]
mod test_support;

/// The server's settings as the binary reads them: the search and store
/// sections of the data folder's `config.json` (its defaults when absent).
/// Here, at the crate's root, so that the site needs no part of the
/// configuration of the stages that write.
pub fn settings_from_config() -> web::Settings {
    std::sync::Arc::new(|data: &generation::DataDir| {
        let config = config::Config::of(data)?;
        Ok((config.search, config.store))
    })
}
