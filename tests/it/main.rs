//! The end-to-end tests, in one binary (as ripgrep and meilisearch keep
//! theirs): one link instead of one per file, and the shipped crawl indexed
//! once for every test that only reads it (`common::shipped_crawl`).
//!
//! `cargo test --test it http::` runs one file's tests; `.ci/run` runs them
//! all in the `ci` profile with `MIRRORSCOPE_SLOW_TESTS=1`.

mod common;

mod browser;
mod collections;
mod corpus;
mod crashes;
mod crawlgen;
mod crawls;
mod dedup_warc;
mod devcrawl;
mod evolve;
mod export;
mod http;
mod import;
mod ingest;
mod mechanisms;
mod mirrors;
mod outputs;
mod parts;
mod shards;
mod similarity;
mod spark;
mod spark_cluster;
mod structure;
mod wget;
