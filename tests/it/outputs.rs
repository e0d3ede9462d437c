//! What users and scripts read, byte for byte: `stats`, `clusters`,
//! `mirrors`, `avoid` and `eval` of the shipped crawl, and `/api/search` for
//! the 20 queries of `tests/fixtures/outputs/queries.txt`, against the
//! outputs kept in `tests/fixtures/outputs/` (gzipped; `took_ms` set to 0).
//!
//! A change that is meant to change an output writes the new ones with
//! `MIRRORSCOPE_BLESS=1 cargo test --release --test it outputs::` and says why in
//! its commit. A change that is not (a restructuring) must leave them all.

use crate::common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use actix_web::{test as actix_test, web, App};

use common::{crate_dir, mirrorscope, stderr};
use mirrorscope::web::{configure, AppState};

fn fixtures() -> PathBuf {
    crate_dir().join("tests/fixtures/outputs")
}

fn blessing() -> bool {
    std::env::var_os("MIRRORSCOPE_BLESS").is_some()
}

/// `"took_ms":12.3` becomes `"took_ms":0`: the one field that differs from
/// run to run.
fn without_timing(text: &str) -> String {
    let key = "\"took_ms\":";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(key) {
        out.push_str(&rest[..at + key.len()]);
        out.push('0');
        rest = rest[at + key.len()..]
            .trim_start_matches(|c: char| c.is_ascii_digit() || "+-.eE".contains(c));
    }
    out.push_str(rest);
    out
}

/// Compares `actual` with the kept output `name`, or keeps it when blessing.
/// Returns a line saying how they differ, if they do.
fn compare(name: &str, actual: &str) -> Option<String> {
    let path = fixtures().join(format!("{name}.gz"));
    let mut expected = String::new();
    match std::fs::File::open(&path) {
        Ok(file) => {
            flate2::read::GzDecoder::new(file)
                .read_to_string(&mut expected)
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        }
        Err(error) if !blessing() => panic!("{}: {error}", path.display()),
        Err(_) => {}
    }
    if expected == actual {
        return None;
    }
    if blessing() {
        let file = std::fs::File::create(&path).unwrap();
        let mut encoder = flate2::write::GzEncoder::new(file, flate2::Compression::best());
        encoder.write_all(actual.as_bytes()).unwrap();
        encoder.finish().unwrap();
        eprintln!("kept the new {}", path.display());
        return None;
    }
    // Keep the new output beside the build for a diff.
    let written = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("outputs-{name}"));
    std::fs::write(&written, actual).unwrap();
    let line = expected
        .lines()
        .zip(actual.lines())
        .position(|(old, new)| old != new)
        .unwrap_or(expected.lines().count().min(actual.lines().count()));
    Some(format!(
        "{name}: differs from line {} on ({} bytes kept, {} now; now in {})",
        line + 1,
        expected.len(),
        actual.len(),
        written.display()
    ))
}

/// The shipped crawl, indexed once for the whole test run.
fn shipped_data() -> &'static Path {
    common::shipped_crawl().path()
}

#[test]
fn reports_of_the_shipped_crawl_are_unchanged() {
    let data = shipped_data().to_str().unwrap().to_string();
    let commands: [(&str, Vec<&str>); 7] = [
        ("stats.txt", vec!["stats"]),
        ("stats.json", vec!["stats", "--json"]),
        ("clusters.json", vec!["clusters", "--json"]),
        ("mirrors.json", vec!["mirrors", "--json"]),
        ("avoid.txt", vec!["avoid"]),
        ("avoid.json", vec!["avoid", "--json"]),
        (
            "eval.json",
            vec!["eval", "--truth", "corpus/truth.tsv", "--json"],
        ),
    ];
    let mut differences = Vec::new();
    for (name, mut args) in commands {
        args.extend(["--data", &data]);
        let output = mirrorscope(&crate_dir(), &args);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        let text = String::from_utf8(output.stdout).unwrap();
        differences.extend(compare(name, &text));
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[actix_web::test]
async fn api_answers_of_the_shipped_crawl_are_unchanged() {
    let state = web::Data::new(
        AppState::open(shipped_data(), mirrorscope::settings_from_config())
            .expect("the index opens"),
    );
    let app =
        actix_test::init_service(App::new().configure(|config| configure(config, state))).await;
    let queries = std::fs::read_to_string(fixtures().join("queries.txt")).unwrap();
    let queries: Vec<&str> = queries.lines().filter(|line| !line.is_empty()).collect();
    assert_eq!(queries.len(), 20);
    let mut differences = Vec::new();
    for (number, query) in queries.iter().enumerate() {
        let request = actix_test::TestRequest::get()
            .uri(&format!("/api/search?{query}"))
            .to_request();
        let body = actix_test::call_and_read_body(&app, request).await;
        let text = without_timing(std::str::from_utf8(&body).unwrap());
        assert!(text.starts_with('{'), "{query}: {text}");
        differences.extend(compare(&format!("api-{:02}.json", number + 1), &text));
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn timing_is_the_only_field_set_aside() {
    assert_eq!(
        without_timing(r#"{"took_ms":12.5e-3,"x":1,"took_ms":7}"#),
        r#"{"took_ms":0,"x":1,"took_ms":0}"#
    );
}
