//! HTML extraction alone, on one thread: what ingest does to each page
//! (`corpus::extract_html`: title, text lines, headings, links, language,
//! versions) and what the index stage does to a body whose text was not
//! kept (`extract_html_text_and_headings_within`, 1 MiB). The pages are the
//! HTML responses of the WARC files given (default: the shipped crawl),
//! read and decoded into memory first, at most 30,000 of them.
//!
//! `cargo bench --bench extract [-- PATH...]`
//!
//! Prints, best of 3 runs, pages/s and MB of HTML/s of each reading: the
//! stage's largest part on real pages (58% of ingest's samples on
//! development crawl 1), measured apart from reading and storing.

use std::sync::Arc;
use std::time::Instant;

use mirrorscope::corpus::{self, charset, ReadLimits, RecordOutcome, WarcReader};

mod support;

const RUNS: usize = 3;
const MOST_PAGES: usize = 30_000;

fn main() {
    let inputs = support::crawl_inputs();
    let files = corpus::list_warc_files(&inputs).expect("WARC files").files;
    let limits = ReadLimits {
        max_body_bytes: 64 << 20,
    };
    let mut pages: Vec<(url::Url, String)> = Vec::new();
    'files: for path in &files {
        let name: Arc<str> = Arc::from(path.display().to_string());
        let reader = WarcReader::open(path, 64 << 20).expect("a WARC file");
        for record in reader.flatten() {
            if let RecordOutcome::Page(page) = corpus::interpret_record(&record, &name, limits) {
                let Ok(url) = url::Url::parse(&page.info.url) else {
                    continue;
                };
                let decoded =
                    charset::decode_body(&page.body, page.headers.content_type.as_deref());
                pages.push((url, decoded.text.into_owned()));
                if pages.len() == MOST_PAGES {
                    break 'files;
                }
            }
        }
    }
    let megabytes = pages.iter().map(|(_, html)| html.len()).sum::<usize>() as f64 / 1e6;
    println!(
        "{} pages, {megabytes:.1} MB of HTML from {} WARC files; one thread, best of {RUNS}",
        pages.len(),
        files.len()
    );
    let measure = |name: &str, read: &dyn Fn(&url::Url, &str) -> usize| {
        let mut best = f64::INFINITY;
        let mut bytes = 0;
        for _ in 0..RUNS {
            let started = Instant::now();
            bytes = pages.iter().map(|(url, html)| read(url, html)).sum();
            best = best.min(started.elapsed().as_secs_f64());
        }
        println!(
            "{name:<44} {best:>7.3} s {:>9.0} pages/s {:>7.1} MB/s ({:.1} MB of text)",
            pages.len() as f64 / best,
            megabytes / best,
            bytes as f64 / 1e6
        );
    };
    measure("ingest's reading (extract_html)", &|url, html| {
        let extracted = corpus::extract_html(html, url);
        extracted.text.len() + extracted.links.len()
    });
    measure("index stage's reading (text and headings)", &|_, html| {
        corpus::extract_html_text_and_headings_within(html, 1 << 20)
            .0
            .len()
    });
}
