//! Cluster growing on a generated web: `cargo bench --bench collections`.
//!
//! The web (deterministic, seeded): replicated collections (tree-shaped
//! manuals of 20 to 400 pages with extra links, copied on 2 to 8 hosts;
//! some copies partial or crawled in part, some with changed pages), and
//! unrelated single-site pages, about ten links per page, some of them from
//! other hosts. Prints the time and memory of building the web graph and of
//! growing the clusters (LinkSummary, merging, numbering), and what was
//! found. Argument: pages (default 1,000,000).

use std::time::Instant;

use mirrorscope::collections::{build, CollectionsConfig, PageFacts, WebGraph};
use mirrorscope::pages::{relative_link_key, HostId, PageId};
use mirrorscope::similarity::TrivialClusterId;

mod support;
use mirrorscope::memory::{self, reset_peak};
use support::Draw;

struct Web {
    hosts: Vec<HostId>,
    labels: Vec<TrivialClusterId>,
    urls: Vec<String>,
    links: Vec<(PageId, PageId)>,
    uncrawled: Vec<Vec<u64>>,
    labels_used: usize,
    templates: usize,
    copies: usize,
}

const LINKS_PER_PAGE: usize = 10;

fn generate(pages: usize) -> Web {
    let mut draw = Draw(0x9E37_79B9_7F4A_7C15);
    let mut web = Web {
        hosts: Vec::with_capacity(pages),
        labels: Vec::with_capacity(pages),
        urls: Vec::with_capacity(pages),
        links: Vec::with_capacity(pages * LINKS_PER_PAGE),
        uncrawled: Vec::with_capacity(pages),
        labels_used: 0,
        templates: 0,
        copies: 0,
    };
    let mut next_host = 0u32;
    let mut primaries: Vec<PageId> = Vec::new();
    // 40% of the pages in copies of replicated collections.
    while web.hosts.len() < pages * 2 / 5 {
        let size = 20 + draw.below(380);
        let mut template_links: Vec<(usize, usize)> = Vec::new();
        for child in 1..size {
            template_links.push((draw.below(child), child));
        }
        for _ in 0..size * (LINKS_PER_PAGE - 1) {
            let (from, to) = (draw.below(size), draw.below(size));
            if from != to {
                template_links.push((from, to));
            }
        }
        let first_label = web.labels_used as u32;
        web.labels_used += size;
        web.templates += 1;
        let copies = 2 + draw.below(7);
        for copy in 0..copies {
            let host = HostId(next_host);
            next_host += 1;
            web.copies += 1;
            let partial = copy > 0 && draw.chance(20);
            let stale = copy > 0 && draw.chance(20);
            let mut page_of: Vec<Option<PageId>> = vec![None; size];
            for (index, slot) in page_of.iter_mut().enumerate() {
                if index > 0 && partial && draw.chance(30) {
                    continue;
                }
                let id = PageId(web.hosts.len() as u32);
                *slot = Some(id);
                web.hosts.push(host);
                web.urls
                    .push(format!("http://h{}.example/manual/p{index}.html", host.0));
                web.uncrawled.push(Vec::new());
                web.labels
                    .push(TrivialClusterId(if stale && draw.chance(10) {
                        web.labels_used += 1;
                        web.labels_used as u32 - 1
                    } else {
                        first_label + index as u32
                    }));
                if copy == 0 {
                    primaries.push(id);
                }
            }
            for &(from, to) in &template_links {
                match (page_of[from], page_of[to]) {
                    (Some(from), Some(to)) => web.links.push((from, to)),
                    (Some(from), None) => {
                        let target = format!("http://h{}.example/manual/p{to}.html", host.0);
                        let key = relative_link_key(&web.urls[from.0 as usize], &target);
                        web.uncrawled[from.0 as usize].extend(key);
                    }
                    _ => {}
                }
            }
        }
    }
    // The rest: unrelated sites of 100 pages, a few links to primaries.
    while web.hosts.len() < pages {
        let host = HostId(next_host);
        next_host += 1;
        let start = web.hosts.len();
        let size = 100.min(pages - start);
        for index in 0..size {
            web.hosts.push(host);
            web.urls
                .push(format!("http://h{}.example/site/p{index}.html", host.0));
            web.uncrawled.push(Vec::new());
            web.labels.push(TrivialClusterId(web.labels_used as u32));
            web.labels_used += 1;
        }
        for index in 0..size {
            let from = PageId((start + index) as u32);
            if index > 0 {
                web.links
                    .push((PageId((start + draw.below(index)) as u32), from));
            }
            for _ in 1..LINKS_PER_PAGE {
                web.links
                    .push((from, PageId((start + draw.below(size)) as u32)));
            }
            if !primaries.is_empty() && draw.chance(20) {
                web.links
                    .push((from, primaries[draw.below(primaries.len())]));
            }
        }
    }
    for keys in &mut web.uncrawled {
        keys.sort_unstable();
        keys.dedup();
    }
    web
}

/// The process's peak resident memory since the last reset, in MB.
fn peak_rss_mb() -> f64 {
    memory::peak_mb().unwrap_or(f64::NAN)
}

fn current_rss_mb() -> f64 {
    memory::resident_mb().unwrap_or(f64::NAN)
}

fn main() {
    let pages: usize = std::env::args()
        .skip(1)
        .find(|arg| !arg.starts_with('-'))
        .and_then(|arg| arg.replace('_', "").parse().ok())
        .unwrap_or(1_000_000);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!("cluster growing on a generated web ({cores} cores available)");
    let started = Instant::now();
    let mut web = generate(pages);
    println!(
        "generated {} pages on {} hosts, {} links, {} collections copied {} times, in {:.1} s",
        web.hosts.len(),
        web.hosts.last().map_or(0, |host| host.0 + 1),
        web.links.len(),
        web.templates,
        web.copies,
        started.elapsed().as_secs_f64()
    );

    let facts = PageFacts {
        urls: web.urls.iter().map(String::as_str).collect(),
        uncrawled_links: web.uncrawled.iter().map(Vec::as_slice).collect(),
        own_text: Vec::new(),
        addresses: Vec::new(),
        stand_ins: Vec::new(),
        ..PageFacts::default()
    };
    let labels = std::mem::take(&mut web.labels);
    let links = std::mem::take(&mut web.links);
    let base = current_rss_mb();
    reset_peak();
    let started = Instant::now();
    let graph = WebGraph::new(web.hosts.clone(), links);
    let graph_seconds = started.elapsed().as_secs_f64();
    let graph_peak = peak_rss_mb() - base;
    println!(
        "\nweb graph: {:.2} s, {} links kept, {:.0} MB of tables, peak +{:.0} MB",
        graph_seconds,
        graph.link_count(),
        graph.heap_bytes() as f64 / 1e6,
        graph_peak
    );

    for (name, config) in [
        ("extended (default)", CollectionsConfig::default()),
        (
            "strict a = s = d = b",
            CollectionsConfig {
                extended: false,
                ..CollectionsConfig::default()
            },
        ),
    ] {
        let base = current_rss_mb();
        reset_peak();
        let started = Instant::now();
        let found = build(&graph, &labels, web.labels_used, &config, &facts);
        let seconds = started.elapsed().as_secs_f64();
        let peak = peak_rss_mb() - base;
        let counts = &found.counts;
        println!(
            "\ngrowing, {name}: {seconds:.2} s ({:.0} pages/s), peak {:.0} MB for the process ({base:.0} MB of graph and inputs, +{peak:.0} MB for growing)",
            web.hosts.len() as f64 / seconds,
            base + peak
        );
        println!(
            "  {} LinkSummary rows with a = s, {} merge edges, {} extended edges, {} virtual links",
            counts.link_summary_rows,
            counts.merge_edges,
            counts.extended_merge_edges,
            counts.virtual_links
        );
        println!(
            "  {} clusters of collections ({} extended) for {} generated collections; {} pages in {} collections",
            counts.collection_clusters,
            counts.extended_clusters,
            web.templates,
            counts.pages_in_collections,
            counts.collections
        );
    }
}
