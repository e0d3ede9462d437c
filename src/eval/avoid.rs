//! `eval`'s `avoid`: the crawl-avoid list against the truth, as a crawler
//! following it would fare. A page is lost when every crawled URL of its
//! truth page (the same collection and page) is skipped; a page the truth
//! does not list has no copy, and skipping it loses it too, unless a page
//! with the same bytes stays crawled (one page under two URLs of its host,
//! a folder and its `index.html`, which a truth of replicas does not list). The ideal list
//! skips every copy of a truth page but one.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::Serialize;

use super::{ratio, shown, Truth};
use crate::pages::PageTable;
use crate::report::AvoidList;

/// How a crawler following the list fares against the truth.
#[derive(Debug, Clone, Serialize)]
pub struct AvoidScores {
    /// Pages answered 200.
    pub pages: u64,
    /// Of them, those the list skips.
    pub pages_skipped: u64,
    /// Truth pages (collection and page) with a crawled URL.
    pub distinct_pages: u64,
    /// Of them, those whose every crawled URL is skipped.
    pub distinct_pages_lost: u64,
    /// Skipped pages the truth does not list (no copy anywhere).
    pub unreplicated_pages_skipped: u64,
    /// What the ideal list skips: every crawled URL of a truth page but one.
    pub ideal_saving: u64,
    /// Skipped pages whose truth page stays crawled under another URL.
    pub safe_saving: u64,
    pub saving_vs_ideal: Option<f64>,
    /// Up to 10 URLs of lost pages, then up to 10 unreplicated pages skipped.
    pub lost_examples: Vec<String>,
    pub unreplicated_examples: Vec<String>,
}

pub fn score(table: &PageTable, list: &AvoidList, truth: &Truth) -> AvoidScores {
    let skipped = list.skipped(table);
    let mut key_of: Vec<Option<(&str, &str)>> = vec![None; table.pages.len()];
    for (url, row) in &truth.rows {
        if let Some(page) = table.find_url(url) {
            key_of[page.0 as usize] = Some((row.collection.as_str(), row.page.as_str()));
        }
    }
    let answered: Vec<usize> = (0..table.pages.len())
        .filter(|&index| table.pages[index].status == 200)
        .collect();
    let mut urls_of_key: HashMap<(&str, &str), u64> = HashMap::new();
    let mut kept_keys: HashSet<(&str, &str)> = HashSet::new();
    for &index in &answered {
        if let Some(key) = key_of[index] {
            *urls_of_key.entry(key).or_default() += 1;
            if !skipped[index] {
                kept_keys.insert(key);
            }
        }
    }
    let kept_bodies: HashSet<_> = answered
        .iter()
        .filter(|&&index| !skipped[index])
        .filter_map(|&index| table.pages[index].content_key)
        .collect();
    let (mut pages_skipped, mut lost, mut unreplicated) = (0, 0, 0);
    let (mut lost_examples, mut unreplicated_examples) = (Vec::new(), Vec::new());
    let mut lost_keys: HashSet<(&str, &str)> = HashSet::new();
    for &index in &answered {
        if !skipped[index] {
            continue;
        }
        pages_skipped += 1;
        let url = &table.pages[index].url;
        match key_of[index] {
            Some(key) if !kept_keys.contains(&key) => {
                lost += 1;
                if lost_keys.insert(key) && lost_examples.len() < 10 {
                    lost_examples.push(url.to_string());
                }
            }
            Some(_) => {}
            None if table.pages[index]
                .content_key
                .is_some_and(|key| kept_bodies.contains(&key)) => {}
            None => {
                unreplicated += 1;
                if unreplicated_examples.len() < 10 {
                    unreplicated_examples.push(url.to_string());
                }
            }
        }
    }
    let ideal: u64 = urls_of_key.values().map(|urls| urls - 1).sum();
    let safe = pages_skipped - lost - unreplicated;
    AvoidScores {
        pages: answered.len() as u64,
        pages_skipped,
        distinct_pages: urls_of_key.len() as u64,
        distinct_pages_lost: lost_keys.len() as u64,
        unreplicated_pages_skipped: unreplicated,
        ideal_saving: ideal,
        safe_saving: safe,
        saving_vs_ideal: ratio(safe, ideal),
        lost_examples,
        unreplicated_examples,
    }
}

impl fmt::Display for AvoidScores {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(out, "\navoid (the crawl-avoid list against the truth)")?;
        writeln!(
            out,
            "  pages skipped {} of {}; truth pages lost {} of {}; pages without a copy skipped {}",
            self.pages_skipped,
            self.pages,
            self.distinct_pages_lost,
            self.distinct_pages,
            self.unreplicated_pages_skipped
        )?;
        writeln!(
            out,
            "  saving {} of the ideal list's {} ({})",
            self.safe_saving,
            self.ideal_saving,
            shown(self.saving_vs_ideal)
        )?;
        for url in &self.lost_examples {
            writeln!(out, "    lost: {url}")?;
        }
        for url in &self.unreplicated_examples {
            writeln!(out, "    skipped without a copy: {url}")?;
        }
        Ok(())
    }
}
