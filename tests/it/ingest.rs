//! End to end: `mirrorscope index` and `stats` on small crawls, bad input of
//! every kind the issue names, and the guarantees of generations and the store.

use crate::common;

use std::path::Path;

use common::*;
use mirrorscope::datadir::DataDir;
use mirrorscope::pipeline::{run_index, IndexRequest};

fn index(
    inputs: &[&Path],
    data: &Path,
) -> mirrorscope::pipeline::Result<mirrorscope::pipeline::IndexOutcome> {
    run_index(&IndexRequest {
        inputs: inputs.iter().map(|path| path.to_path_buf()).collect(),
        data: data.to_path_buf(),
        progress: false,
        add: false,
        allow_shrink: false,
        parts: None,
        index_shards: None,
    })
}

/// A primary site and an exact mirror of it on another host, one WARC each.
fn mirrored_crawl(dir: &Path, gzip: bool) -> Vec<std::path::PathBuf> {
    let primary = site("www.primary.example", 5);
    let mut mirror = site("mirror.example", 5);
    // The mirror serves the same bytes: rewrite only the URL.
    for (copy, original) in mirror.iter_mut().zip(&primary) {
        copy.body = original.body.clone();
    }
    let name = |base: &str| {
        if gzip {
            format!("{base}.warc.gz")
        } else {
            format!("{base}.warc")
        }
    };
    let first = dir.join(name("primary"));
    let second = dir.join(name("mirror"));
    write_site(&first, gzip, &primary, 0);
    write_site(&second, gzip, &mirror, 10);
    vec![first, second]
}

/// A file that is no WARC (gzip of plain HTML), or a WARC without an HTML
/// page, gives nothing to index: `index` refuses, naming the file, and the
/// current generation, its crawls and the store stay as they were (issue 34:
/// it used to switch to a generation of 0 pages, emptying a running site).
#[test]
fn a_crawl_without_a_page_is_refused_and_the_current_generation_stays() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let good = mirrored_crawl(dir.path(), true);
    let paths: Vec<&Path> = good.iter().map(|path| path.as_path()).collect();
    index(&paths, &data).unwrap();
    let state = |data: &Path| {
        let mut crawls: Vec<String> = std::fs::read_dir(data.join("crawls"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        crawls.sort();
        (
            std::fs::read_to_string(data.join("CURRENT")).unwrap(),
            crawls,
        )
    };
    let before = state(&data);

    let html = dir.path().join("pages.warc.gz");
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gzip, b"<html><body>no record here</body></html>").unwrap();
    std::fs::write(&html, gzip.finish().unwrap()).unwrap();
    let stylesheet = TestPage {
        url: "http://www.primary.example/style.css".into(),
        head: "HTTP/1.1 200 OK\r\nContent-Type: text/css\r\n".into(),
        body: b"body { color: black }".to_vec(),
    };
    let css_only = dir.path().join("css.warc");
    write_site(&css_only, false, &[stylesheet], 0);

    for (input, said) in [(&html, "not a WARC file"), (&css_only, "non-html")] {
        let Err(error) = index(&[input.as_path()], &data) else {
            panic!("{} is refused", input.display());
        };
        let message = error.to_string();
        assert!(message.contains(&input.display().to_string()), "{message}");
        assert!(message.contains(said), "{message}");
        assert!(
            message.contains("the current generation stays"),
            "{message}"
        );
        assert_eq!(state(&data), before);
    }
    assert_eq!(
        DataDir::open(&data)
            .unwrap()
            .manifest()
            .unwrap()
            .counts
            .pages,
        10
    );
}

/// Issue 34: a crawl read from files of the names the current generation
/// was read from, holding under half its pages (a file cut short or replaced
/// by mistake), is refused with the current generation kept; a crawl that
/// loses a few pages, one from other files, and `--allow-shrink` go through.
#[test]
fn a_crawl_that_shrinks_by_mistake_needs_allow_shrink() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let crawl = dir.path().join("crawl.warc");
    let pages_of = |data: &Path| {
        DataDir::open(data)
            .unwrap()
            .manifest()
            .unwrap()
            .counts
            .pages
    };
    write_site(&crawl, false, &site("www.example.org", 10), 0);
    index(&[crawl.as_path()], &data).unwrap();
    assert_eq!(pages_of(&data), 10);

    // Recrawled with a page gone: fine.
    write_site(&crawl, false, &site("www.example.org", 9), 0);
    index(&[crawl.as_path()], &data).unwrap();
    assert_eq!(pages_of(&data), 9);

    // The same name, cut to 3 pages: refused, the generation stays.
    write_site(&crawl, false, &site("www.example.org", 3), 0);
    let current = std::fs::read_to_string(data.join("CURRENT")).unwrap();
    let Err(error) = index(&[crawl.as_path()], &data) else {
        panic!("a crawl of a third of the pages is refused");
    };
    let message = error.to_string();
    for said in ["3 pages", "has 9", "--allow-shrink", "stays current"] {
        assert!(message.contains(said), "{said:?} in {message}");
    }
    assert_eq!(
        std::fs::read_to_string(data.join("CURRENT")).unwrap(),
        current
    );
    assert_eq!(pages_of(&data), 9);

    // The same pages from a file of another name are another crawl.
    let other = dir.path().join("other.warc");
    std::fs::copy(&crawl, &other).unwrap();
    index(&[other.as_path()], &data).unwrap();
    assert_eq!(pages_of(&data), 3);

    // And a shrink the operator means goes through with --allow-shrink.
    write_site(&other, false, &site("www.example.org", 1), 0);
    assert!(index(&[other.as_path()], &data).is_err());
    run_index(&IndexRequest {
        inputs: vec![other.clone()],
        data: data.clone(),
        progress: false,
        add: false,
        allow_shrink: true,
        parts: None,
        index_shards: None,
    })
    .unwrap();
    assert_eq!(pages_of(&data), 1);
}

/// Issue 34: serving is reading. A data folder the serving user cannot write
/// (a read-only mount, a folder another user indexed) is served and checked
/// as any other: the index is opened without tantivy's lock file, and its
/// files are as readable as the others (tantivy wrote two of them 0600).
/// Run as root, the server runs as `nobody` (setpriv), from a copy of the
/// binary in a folder it can read; otherwise the folder is made read-only.
#[test]
fn a_folder_the_server_cannot_write_is_served_and_checked() {
    use std::os::unix::fs::PermissionsExt;
    // Under /tmp, which every user may traverse (TMPDIR may not be).
    let dir = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    let data = dir.path().join("data");
    let crawl = dir.path().join("crawl.warc");
    write_site(&crawl, false, &site("www.example.org", 5), 0);
    index(&[crawl.as_path()], &data).unwrap();
    let binary = dir.path().join("mirrorscope");
    std::fs::copy(env!("CARGO_BIN_EXE_mirrorscope"), &binary).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();

    let generation = std::fs::read_to_string(data.join("CURRENT")).unwrap();
    let index_dir = data
        .join("generations")
        .join(generation.trim())
        .join("index");
    for entry in std::fs::read_dir(&index_dir).unwrap() {
        let mode = entry.unwrap().metadata().unwrap().permissions().mode();
        assert_eq!(
            mode & 0o044,
            0o044,
            "{mode:o}: readable by the group and others"
        );
    }

    // SAFETY: geteuid only reads the process's user id.
    let root = unsafe { libc::geteuid() } == 0;
    let walk = |path: &Path, read_only: bool| {
        fn each(path: &Path, visit: &dyn Fn(&Path)) {
            visit(path);
            if path.is_dir() {
                for entry in std::fs::read_dir(path).unwrap() {
                    each(&entry.unwrap().path(), visit);
                }
            }
        }
        each(path, &|path| {
            let mut permissions = std::fs::metadata(path).unwrap().permissions();
            permissions.set_readonly(read_only);
            std::fs::set_permissions(path, permissions).unwrap();
        });
    };
    let command = |args: &[&str]| {
        let mut command = if root {
            let mut command = std::process::Command::new("setpriv");
            command.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
            command.arg(&binary);
            command
        } else {
            std::process::Command::new(&binary)
        };
        command.args(args).env("MIRRORSCOPE_LOG", "warn");
        command
    };
    let before = files_of(&data);
    if !root {
        walk(&data, true);
    }
    let data_arg = data.to_str().unwrap();
    let checked = command(&["check", "--data", data_arg]).output().unwrap();
    let (server, base) = common::serve_by(command(&[
        "serve",
        "--data",
        data_arg,
        "--bind",
        "127.0.0.1:0",
    ]));
    let (status, body) = common::http_get(&base, "/search?q=page");
    drop(server);
    if !root {
        walk(&data, false);
    }
    assert!(
        checked.status.success(),
        "check: {}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(status.contains("200"), "{status}");
    assert!(body.contains("www.example.org/doc/p"), "{body}");
    assert_eq!(files_of(&data), before, "the folder was only read");
}

/// Flips the last byte of block `key`'s data, in its pack's record (found by
/// the plain-text header that names the key) or its own file.
fn damage_block(store: &mirrorscope::store::PageStore, key: &mirrorscope::store::ContentKey) {
    let block = store
        .walk()
        .unwrap()
        .blocks
        .into_iter()
        .find(|block| block.key == *key)
        .unwrap();
    let mut bytes = std::fs::read(&block.path).unwrap();
    let named = format!("key: {key}\n");
    let last = match bytes
        .windows(named.len())
        .position(|window| window == named.as_bytes())
    {
        Some(at) => {
            let header = &bytes[at..];
            let data_at = at + header.windows(2).position(|pair| pair == b"\n\n").unwrap() + 2;
            let header = String::from_utf8_lossy(&bytes[at..data_at]).into_owned();
            let size: usize = header
                .lines()
                .find_map(|line| line.strip_prefix("data-size: "))
                .unwrap()
                .parse()
                .unwrap();
            data_at + size - 1
        }
        None => bytes.len() - 1,
    };
    bytes[last] ^= 0x55;
    std::fs::write(&block.path, bytes).unwrap();
}

/// Every file under `dir`, with its size and modification time.
fn files_of(dir: &Path) -> Vec<(std::path::PathBuf, u64, std::time::SystemTime)> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            let metadata = entry.metadata().unwrap();
            if metadata.is_dir() {
                folders.push(entry.path());
            } else {
                files.push((entry.path(), metadata.len(), metadata.modified().unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// Issue 34: records that repeat a WARC-Record-ID (a file read twice under
/// two names) are counted and said; each is read as any other.
#[test]
fn repeated_record_ids_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("a.warc");
    write_site(&first, false, &site("www.example.org", 4), 0);
    let second = dir.path().join("b.warc");
    std::fs::copy(&first, &second).unwrap();
    let once = index(&[first.as_path()], &dir.path().join("once")).unwrap();
    assert_eq!(once.report.duplicate_record_ids, 0);
    let twice = index(
        &[first.as_path(), second.as_path()],
        &dir.path().join("twice"),
    )
    .unwrap();
    assert_eq!(twice.report.duplicate_record_ids, 4);
    assert!(twice
        .report
        .to_string()
        .contains("records with a repeated id  4"));
}

/// Issue 34: a data folder named on the command line that does not exist is
/// a typing mistake: `serve` says so and creates nothing, where it used to
/// index the shipped crawl into it and serve that.
#[test]
fn serve_refuses_a_named_data_folder_that_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("dta");
    let output = common::serve_command(&typo).output().unwrap();
    assert!(!output.status.success());
    let said = common::stderr(&output);
    assert!(said.contains("no such data folder"), "{said}");
    assert!(said.contains(&typo.display().to_string()), "{said}");
    assert!(!typo.exists());
}

#[test]
fn exact_copies_are_stored_once_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let crawl = dir.path().join("crawl");
    std::fs::create_dir(&crawl).unwrap();
    mirrored_crawl(&crawl, true);
    let data = dir.path().join("data");
    let outcome = index(&[&crawl], &data).unwrap();
    assert_eq!(outcome.report.captures, 10);
    assert_eq!(outcome.report.distinct_bodies, 5);
    assert_eq!(outcome.report.new_blocks, 5);
    assert_eq!(outcome.report.duplicate_pages_eliminated, 5);
    assert!(outcome.report.bytes_saved > 0);
    assert_eq!(outcome.manifest.counts.pages, 10);
    assert_eq!(outcome.manifest.counts.hosts, 2);
    // Each page links to the next one of its own site: 10 links between crawled pages.
    assert_eq!(outcome.manifest.counts.links, 10);

    let data_dir = DataDir::open_existing(&data).unwrap();
    let table = data_dir.page_table().unwrap();
    let page = &table.pages[table
        .find_url("http://mirror.example/doc/p3.html")
        .unwrap()
        .0 as usize];
    assert_eq!(&*page.title, "Page 3");
    assert_eq!(page.ip.as_deref(), Some("192.0.2.10"));
    assert_eq!(
        &*table.pages[page.outlinks[0].0 as usize].url,
        "http://mirror.example/doc/p4.html"
    );
    // Every page's body reads back from the store, byte for byte.
    let config = mirrorscope::config::Config::of(&data_dir).unwrap().store;
    let store = data_dir.store(&config).unwrap();
    let body = store.get(&page.content_key.unwrap()).unwrap();
    assert!(String::from_utf8(body)
        .unwrap()
        .contains("page number 3 of the manual"));
    assert_eq!(store.references(&page.content_key.unwrap()).unwrap(), 2);

    let output = mirrorscope(
        dir.path(),
        &["stats", "--json", "--data", data.to_str().unwrap()],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let stats: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(stats["pages"], 10);
    assert_eq!(stats["distinct_bodies"], 5);
    assert_eq!(stats["exact_duplicate_pages"], 5);
}

#[test]
fn indexing_the_same_crawl_again_gives_the_same_table_and_the_same_store() {
    let dir = tempfile::tempdir().unwrap();
    let files = mirrored_crawl(dir.path(), false);
    let data = dir.path().join("data");
    let first = index(&[&files[0], &files[1]], &data).unwrap();
    let data_dir = DataDir::open_existing(&data).unwrap();
    let table_before = data_dir.page_table().unwrap();
    let store_before = data_dir
        .store(&mirrorscope::config::Config::of(&data_dir).unwrap().store)
        .unwrap()
        .stats()
        .unwrap();
    // The same files, named in another order.
    let second = index(&[&files[1], &files[0]], &data).unwrap();
    assert!(second.reused);
    assert_eq!(second.crawl_id, first.crawl_id);
    assert_ne!(second.manifest.generation, first.manifest.generation);
    assert_eq!(data_dir.page_table().unwrap(), table_before);
    assert_eq!(
        data_dir
            .store(&mirrorscope::config::Config::of(&data_dir).unwrap().store)
            .unwrap()
            .stats()
            .unwrap(),
        store_before
    );
}

#[test]
fn revisit_records_resolve_to_the_body_they_refer_to() {
    let dir = tempfile::tempdir().unwrap();
    let page = TestPage::html(
        "http://a.example/doc/",
        "Doc",
        "the documentation root",
        &["other.html"],
    );
    let original = record_bytes(
        "response",
        &page.url,
        0,
        &page.block(),
        &[("WARC-Payload-Digest", "sha1:AAAA".into())],
    );
    // A URL-agnostic revisit: another URL, same payload; its links resolve against its own URL.
    let revisit = record_bytes(
        "revisit",
        "http://alias.example/doc/",
        1,
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
        &[
            ("WARC-Payload-Digest", "sha1:AAAA".into()),
            (
                "WARC-Profile",
                "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest".into(),
            ),
            ("WARC-Refers-To-Target-URI", page.url.clone()),
        ],
    );
    let unresolved = record_bytes(
        "revisit",
        "http://b.example/x",
        2,
        b"HTTP/1.1 200 OK\r\n\r\n",
        &[("WARC-Payload-Digest", "sha1:ZZZZ".into())],
    );
    // The revisit comes first in the file: resolution must not depend on order.
    let path = dir.path().join("revisits.warc.gz");
    write_warc(&path, true, &[revisit, original, unresolved]);
    let data = dir.path().join("data");
    let outcome = index(&[&path], &data).unwrap();
    assert_eq!(outcome.report.revisits_resolved, 1);
    assert_eq!(outcome.report.skipped.get("unresolved-revisit"), Some(&1));
    let table = DataDir::open_existing(&data).unwrap().page_table().unwrap();
    let alias = &table.pages[table.find_url("http://alias.example/doc/").unwrap().0 as usize];
    let primary = &table.pages[table.find_url("http://a.example/doc/").unwrap().0 as usize];
    assert_eq!(alias.content_key, primary.content_key);
    assert_eq!(&*alias.title, "Doc");
    assert_eq!(alias.revisit_of.as_deref(), Some("http://a.example/doc/"));
    let store = DataDir::open_existing(&data).unwrap();
    let store = store
        .store(&mirrorscope::config::Config::of(&store).unwrap().store)
        .unwrap();
    assert_eq!(store.references(&primary.content_key.unwrap()).unwrap(), 2);
}

/// Every kind of bad input: one warning each, the record counted and skipped,
/// every good record kept, no panic.
#[test]
fn bad_records_are_counted_and_skipped_and_good_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let crawl = dir.path().join("crawl");
    std::fs::create_dir(&crawl).unwrap();
    let good: Vec<TestPage> = site("good.example", 4);
    let good_record = |index: usize| response_record(&good[index], index);

    // A record whose Content-Length is wrong, between good ones (plain file).
    let wrong_length = String::from_utf8(good_record(1)).unwrap();
    let declared = wrong_length
        .split("Content-Length: ")
        .nth(1)
        .unwrap()
        .split("\r\n")
        .next()
        .unwrap()
        .to_string();
    let wrong_length = wrong_length.replacen(
        &format!("Content-Length: {declared}"),
        &format!("Content-Length: {}", declared.parse::<usize>().unwrap() - 7),
        1,
    );
    write_warc(
        &crawl.join("a-wrong-length.warc"),
        false,
        &[good_record(0), wrong_length.into_bytes(), good_record(2)],
    );

    // An HTTP block without headers; a body over the cap; invalid UTF-8 declared UTF-8.
    let headless = record_bytes(
        "response",
        "http://bad.example/headless",
        20,
        b"<html><body>no HTTP head</body></html>",
        &[],
    );
    let huge_page = TestPage::html("http://bad.example/huge", "Huge", &"x".repeat(300_000), &[]);
    let huge = response_record(&huge_page, 21);
    let mut broken_utf8 = TestPage::html("http://bad.example/utf8", "Broken", "caf", &[]);
    broken_utf8.body.splice(60..60, [0xff, 0xfe, 0xc3]);
    let broken_utf8 = response_record(&broken_utf8, 22);
    write_warc(
        &crawl.join("b-bad-http.warc.gz"),
        true,
        &[headless, huge, broken_utf8, good_record(3)],
    );

    // A truncated gzip file: its last member is cut short.
    let truncated = crawl.join("c-truncated.warc.gz");
    let other = site("other.example", 3);
    write_site(&truncated, true, &other, 30);
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 40]).unwrap();

    // A file that is not WARC at all.
    std::fs::write(
        crawl.join("d-notes.warc"),
        "these are my notes about the crawl\nnot a WARC file\n",
    )
    .unwrap();

    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("config.json"),
        r#"{"ingest": {"max_body_bytes": 200000}}"#,
    )
    .unwrap();
    let output = mirrorscope(
        dir.path(),
        &[
            "index",
            crawl.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ],
    );
    let (out, err) = (stdout(&output), stderr(&output));
    assert!(output.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // One warning per bad record, naming file and offset.
    for expected in [
        "a-wrong-length.warc at offset",
        "b-bad-http.warc.gz at offset",
        "HTTP block has no status line and headers",
        "over the 200000-byte cap",
        "is not valid UTF-8 (declared by the HTTP Content-Type); first bad byte at body offset",
        "kept, bad bytes shown as U+FFFD",
        "c-truncated.warc.gz at offset",
        "d-notes.warc: not a WARC file",
    ] {
        assert!(err.contains(expected), "stderr lacks {expected:?}:\n{err}");
    }
    for expected in [
        "wrong-content-length 1",
        "no-http-headers 1",
        "too-large 1",
        "records kept after repair   1 (invalid-utf8 1)",
        "bad-gzip 1",
        "not-warc 1",
    ] {
        assert!(out.contains(expected), "summary lacks {expected:?}:\n{out}");
    }
    // Every good record is kept: the good.example pages but the one with a
    // wrong length, the page with a bad UTF-8 byte (repaired), and the 2
    // intact other.example ones.
    let table = DataDir::open_existing(&data).unwrap().page_table().unwrap();
    let urls: Vec<&str> = table.pages.iter().map(|page| page.url.as_ref()).collect();
    assert_eq!(
        urls,
        [
            "http://bad.example/utf8",
            "http://good.example/doc/p0.html",
            "http://good.example/doc/p2.html",
            "http://good.example/doc/p3.html",
            "http://other.example/doc/p0.html",
            "http://other.example/doc/p1.html",
        ]
    );
}

#[test]
fn a_missing_crawl_is_one_clear_error_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let files = mirrored_crawl(dir.path(), true);
    let data = dir.path().join("data");
    index(&[&files[0]], &data).unwrap();
    let before = DataDir::open_existing(&data)
        .unwrap()
        .current_generation()
        .unwrap();
    let output = mirrorscope(
        dir.path(),
        &[
            "index",
            "no-such-crawl.warc.gz",
            "--data",
            data.to_str().unwrap(),
        ],
    );
    assert!(!output.status.success());
    let err = stderr(&output);
    assert!(
        err.starts_with("mirrorscope: no-such-crawl.warc.gz: cannot read"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(
        DataDir::open_existing(&data)
            .unwrap()
            .current_generation()
            .unwrap(),
        before
    );
    // stats on a data directory without an index says so.
    let output = mirrorscope(dir.path(), &["stats", "--data", "empty"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("empty: no index yet"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_interrupted_ingest_is_rolled_back_on_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let files = mirrored_crawl(dir.path(), true);
    let data = dir.path().join("data");
    let first = index(&[&files[0]], &data).unwrap();
    let data_dir = DataDir::open_existing(&data).unwrap();
    let store = data_dir
        .store(&mirrorscope::config::Config::of(&data_dir).unwrap().store)
        .unwrap();
    let stats_before = store.stats().unwrap();
    // Simulate a crash in the middle of ingesting the mirror: it stored bodies
    // (each a second reference to a primary body) and journaled them, but
    // never completed.
    let table = data_dir.page_table().unwrap();
    let partial = data.join("crawls/crawl-0123456789abcdef.partial");
    std::fs::create_dir_all(&partial).unwrap();
    let mut journal = String::new();
    for page in &table.pages[..3] {
        let key = page.content_key.unwrap();
        store.add_reference(&key).unwrap();
        journal.push_str(&format!("{key}\n"));
    }
    journal.push_str("torn-li"); // the crash cut the last line
    std::fs::write(partial.join("references"), journal).unwrap();
    assert_ne!(store.stats().unwrap(), stats_before);

    let second = index(&[&files[0]], &data).unwrap();
    assert_eq!(second.rolled_back, 1);
    assert!(second.reused);
    assert_eq!(second.crawl_id, first.crawl_id);
    assert!(!partial.exists());
    assert_eq!(store.stats().unwrap(), stats_before);
}

#[test]
fn a_rollback_interrupted_itself_never_releases_a_reference_twice() {
    let dir = tempfile::tempdir().unwrap();
    let files = mirrored_crawl(dir.path(), true);
    let data = dir.path().join("data");
    index(&[&files[0]], &data).unwrap();
    let data_dir = DataDir::open_existing(&data).unwrap();
    let store = data_dir
        .store(&mirrorscope::config::Config::of(&data_dir).unwrap().store)
        .unwrap();
    let table = data_dir.page_table().unwrap();
    let keys: Vec<_> = table.pages[..3]
        .iter()
        .map(|page| page.content_key.unwrap())
        .collect();
    let before: Vec<u64> = keys
        .iter()
        .map(|key| store.references(key).unwrap())
        .collect();
    // An interrupted ingest took three references; a first rollback recorded
    // that it would release the first two, gave them back, and was itself
    // interrupted before it could remove the folder.
    let partial = data.join("crawls/crawl-00000000000000ff.partial");
    std::fs::create_dir_all(&partial).unwrap();
    for key in &keys {
        store.add_reference(key).unwrap();
    }
    let journal: String = keys.iter().map(|key| format!("{key}\n")).collect();
    std::fs::write(partial.join("references"), journal).unwrap();
    std::fs::write(partial.join("released"), "2\n").unwrap();
    for key in &keys[..2] {
        store.delete(key).unwrap();
    }
    store.flush().unwrap();

    let outcome = index(&[&files[0]], &data).unwrap();
    assert_eq!(outcome.rolled_back, 1);
    // Only the third is given back: a second release of the first two
    // would have removed bodies the crawl still holds.
    let after: Vec<u64> = keys
        .iter()
        .map(|key| store.references(key).unwrap())
        .collect();
    assert_eq!(after, before);
}

#[test]
fn a_revisit_resolves_against_an_earlier_crawl() {
    let dir = tempfile::tempdir().unwrap();
    let page = TestPage::html(
        "http://a.example/doc/",
        "Doc",
        "the documentation root",
        &[],
    );
    let earlier = dir.path().join("earlier.warc.gz");
    write_warc(
        &earlier,
        true,
        &[record_bytes(
            "response",
            &page.url,
            0,
            &page.block(),
            &[("WARC-Payload-Digest", "sha1:EARLIER".into())],
        )],
    );
    let later = dir.path().join("later.warc.gz");
    let revisit = record_bytes(
        "revisit",
        &page.url,
        1,
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
        &[("WARC-Payload-Digest", "sha1:EARLIER".into())],
    );
    write_warc(&later, true, &[revisit]);
    let data = dir.path().join("data");
    let first = index(&[&earlier], &data).unwrap();
    let second = index(&[&later], &data).unwrap();
    assert_eq!(second.report.revisits_resolved, 1);
    assert_eq!(second.report.new_blocks, 0);
    // The revisit's body is a page with a body, all of it saved.
    assert_eq!(second.report.pages_with_body, 1);
    assert!(second.report.body_bytes > 0);
    assert_eq!(second.report.bytes_saved, second.report.body_bytes);
    let table = DataDir::open_existing(&data).unwrap().page_table().unwrap();
    assert_eq!(table.pages.len(), 1);
    assert_eq!(&*table.pages[0].title, "Doc");
    assert_eq!(
        second.manifest.counts.distinct_bodies,
        first.manifest.counts.distinct_bodies
    );
}

#[test]
fn a_crawl_from_an_older_build_is_ingested_again_without_losing_a_body() {
    let dir = tempfile::tempdir().unwrap();
    let files = mirrored_crawl(dir.path(), true);
    let data = dir.path().join("data");
    let first = index(&[&files[0], &files[1]], &data).unwrap();
    let data_dir = DataDir::open_existing(&data).unwrap();
    let store = data_dir
        .store(&mirrorscope::config::Config::of(&data_dir).unwrap().store)
        .unwrap();
    let store_before = store.stats().unwrap();
    let table_before = data_dir.page_table().unwrap();
    // An older build wrote its captures without the format line.
    let captures = data
        .join("crawls")
        .join(&first.crawl_id)
        .join("captures.bin");
    let bytes = std::fs::read(&captures).unwrap();
    let start = bytes.iter().position(|&byte| byte == b'\n').unwrap() + 1;
    std::fs::write(&captures, &bytes[start..]).unwrap();
    assert!(!data_dir.crawl_is_current(&first.crawl_id).unwrap());

    // While it is ingested again, the old crawl keeps its references: a crash
    // here leaves every body of the current generation in the store.
    data_dir.set_aside_stale(&first.crawl_id).unwrap();
    for page in &table_before.pages {
        if let Some(key) = page.content_key {
            assert!(store.get(&key).is_ok(), "{} lost its body", page.url);
        }
    }
    // The next run puts it back (its new ingest never completed), then
    // ingests it again and gives the old references back.
    let second = index(&[&files[0], &files[1]], &data).unwrap();
    assert!(!second.reused);
    assert_eq!(second.crawl_id, first.crawl_id);
    assert!(data_dir.crawl_is_current(&first.crawl_id).unwrap());
    assert_eq!(data_dir.page_table().unwrap(), table_before);
    assert_eq!(store.stats().unwrap(), store_before);
    let leftovers: Vec<String> = std::fs::read_dir(data.join("crawls"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(leftovers, vec![first.crawl_id.clone()]);
}

#[test]
fn an_interrupted_removal_is_finished_by_the_next_writer_or_undone_if_still_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let files = mirrored_crawl(dir.path(), true);
    let data = dir.path().join("data");
    index(&[&files[0]], &data).unwrap();
    let data_dir = DataDir::open_existing(&data).unwrap();
    let store = data_dir
        .store(&mirrorscope::config::Config::of(&data_dir).unwrap().store)
        .unwrap();
    let before_add = store.stats().unwrap();
    let added = run_index(&IndexRequest {
        inputs: vec![files[1].clone()],
        data: data.clone(),
        progress: false,
        add: true,
        allow_shrink: false,
        parts: None,
        index_shards: None,
    })
    .unwrap();
    let with_both = store.stats().unwrap();
    assert_ne!(with_both, before_add, "the mirror's bodies took references");
    let crawl = data.join("crawls").join(&added.crawl_id);
    let set_aside = data
        .join("crawls")
        .join(format!("{}.removed", added.crawl_id));

    // Set aside while the current generation still uses it: put back.
    std::fs::rename(&crawl, &set_aside).unwrap();
    let outcome = index(&[&files[0]], &data).unwrap();
    assert_eq!(outcome.rolled_back, 0);
    assert!(crawl.is_dir() && !set_aside.exists());
    assert_eq!(store.stats().unwrap(), with_both);

    // The generation without it was written (indexing the primary alone
    // keeps the mirror's crawl ingested), then the removal was cut short
    // after setting it aside: the next writer gives its references back.
    std::fs::rename(&crawl, &set_aside).unwrap();
    index(&[&files[0]], &data).unwrap();
    assert!(!crawl.exists() && !set_aside.exists());
    assert_eq!(store.stats().unwrap(), before_add);
}

/// Issue 19's faults, one small WARC file each (`tests/fixtures/faults`,
/// written by its `make.py`): every good record around a fault is indexed,
/// and the one warning names the file, the offset and what was passed over.
#[test]
fn faults_in_a_warc_file_lose_no_good_record() {
    let fixtures = crate_dir().join("tests/fixtures/faults");
    let good = |numbers: &[u32]| -> Vec<String> {
        numbers
            .iter()
            .map(|number| format!("http://good.example/p{number}.html"))
            .collect()
    };
    // Each case: the file, the pages it keeps, the offset its warning
    // names and what the warning says after it.
    let cases: Vec<(&str, Vec<String>, u64, &str)> = vec![
        (
            "stray-bytes.warc",
            good(&[0, 1, 2]),
            485,
            "not a WARC record: expected a version line like WARC/1.1, found \"0123456789WARC/1.1\"; skipped 10 bytes (offsets 485-494) to the next record at offset 495",
        ),
        (
            "crash-then-append.warc",
            good(&[0, 2, 3]),
            485,
            "Content-Length 233 does not match the record (no record end after the block); skipped 291 bytes (offsets 485-775) to the next record at offset 776, record skipped",
        ),
        (
            "nul-padding.warc",
            good(&[0, 1]),
            485,
            "skipped 4096 bytes (offsets 485-4580) to the next record at offset 4581",
        ),
        (
            "random-bytes.warc",
            good(&[0, 1]),
            485,
            "skipped 1500 bytes (offsets 485-1984) to the next record at offset 1985",
        ),
        (
            "garbage-first.warc",
            good(&[0, 1]),
            0,
            "skipped 100 bytes (offsets 0-99) to the next record at offset 100",
        ),
        (
            "header-cut.warc",
            good(&[0, 1]),
            970,
            "record is truncated: the file ends inside its WARC header; skipped the last 31 bytes of the file (offsets 970-1000): no record follows, record skipped",
        ),
        (
            "many-http-headers.warc.gz",
            good(&[0, 1]),
            314,
            "HTTP head is longer than 65536 bytes (no blank line ends it there), record skipped",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (file, pages, offset, warning) in cases {
        let data = dir.path().join(file);
        let path = fixtures.join(file);
        let output = mirrorscope(
            dir.path(),
            &[
                "index",
                path.to_str().unwrap(),
                "--data",
                data.to_str().unwrap(),
            ],
        );
        let err = stderr(&output);
        assert!(output.status.success(), "{file}: {err}");
        let start = format!("{} at offset {offset}: ", path.display());
        assert!(
            err.lines()
                .any(|line| line.contains(&start) && line.ends_with(warning)),
            "{file}: no warning\n{start}…{warning}\n{err}"
        );
        assert!(
            stdout(&output).contains("bad records skipped         1 ("),
            "{file}: {}",
            stdout(&output)
        );
        let table = DataDir::open_existing(&data).unwrap().page_table().unwrap();
        let urls: Vec<&str> = table.pages.iter().map(|page| page.url.as_ref()).collect();
        assert_eq!(urls, pages, "{file}");
    }
}

/// A page declared UTF-8 with a bad byte is kept as a browser shows it
/// (U+FFFD) and counted; URLs keep raw bytes apart (percent-encoded), lose
/// their user name, keep a `>` of their own and lose only WARC 1.0's
/// angle brackets.
#[test]
fn bad_bytes_and_odd_urls_are_kept_apart_and_counted() {
    let fixtures = crate_dir().join("tests/fixtures/faults");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let inputs = [
        fixtures.join("invalid-utf8.warc"),
        fixtures.join("odd-urls.warc"),
    ];
    let output = mirrorscope(
        dir.path(),
        &[
            "index",
            inputs[0].to_str().unwrap(),
            inputs[1].to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ],
    );
    let (out, err) = (stdout(&output), stderr(&output));
    assert!(output.status.success(), "{err}");
    assert!(
        err.contains("invalid-utf8.warc at offset 485: http://utf8.example/cafe.html body is not valid UTF-8 (declared by the HTTP Content-Type); first bad byte at body offset 37; kept"),
        "{err}"
    );
    assert!(
        out.contains("records kept after repair   3 (invalid-utf8 3)"),
        "{out}"
    );
    assert!(out.contains("bad records skipped         0"), "{out}");
    let table = DataDir::open_existing(&data).unwrap().page_table().unwrap();
    let urls: Vec<&str> = table.pages.iter().map(|page| page.url.as_ref()).collect();
    assert_eq!(
        urls,
        [
            "http://angle.example/x",
            "http://bytes.example/caf%E8",
            "http://bytes.example/caf%E9",
            "http://good.example/p0.html",
            "http://gt.example/a",
            "http://gt.example/a%3E",
            "http://userinfo.example/page",
            "http://utf8.example/cafe.html",
        ]
    );
    assert!(
        table.hosts.iter().all(|host| !host.contains('@')),
        "{:?}",
        table.hosts
    );
    let title = &table.pages[7].title;
    assert_eq!(&**title, "Caf\u{fffd}");
}

/// Point 3: a dangling link, a FIFO, an empty file, a link to a folder and
/// files of other names in a crawl folder: each passed over with one
/// warning (or one line for the names), nothing opened that could block,
/// and the good file indexed. The run is bounded: a FIFO once hung it.
#[cfg(unix)]
#[test]
fn bad_entries_in_a_crawl_folder_are_passed_over() {
    use std::process::Command;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let crawl = dir.path().join("crawl");
    std::fs::create_dir(&crawl).unwrap();
    std::fs::copy(
        crate_dir().join("tests/fixtures/faults/stray-bytes.warc"),
        crawl.join("good.warc"),
    )
    .unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone.warc"), crawl.join("dangling.warc")).unwrap();
    std::os::unix::fs::symlink(dir.path(), crawl.join("folder-link.warc")).unwrap();
    let fifo = Command::new("mkfifo")
        .arg(crawl.join("pipe.warc"))
        .status()
        .expect("mkfifo runs");
    assert!(fifo.success());
    std::fs::write(crawl.join("empty.warc.gz"), b"").unwrap();
    std::fs::write(crawl.join("notes.txt"), b"my notes").unwrap();

    let data = dir.path().join("data");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mirrorscope"))
        .args([
            "index",
            crawl.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ])
        .env("MIRRORSCOPE_LOG", "info")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("index hung on a crawl folder with a FIFO");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = child.wait_with_output().unwrap();
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    let path = |name: &str| crawl.join(name).display().to_string();
    for expected in [
        format!(
            "{}: a link to nothing (dangling), file skipped",
            path("dangling.warc")
        ),
        format!(
            "{}: not a regular file (a FIFO), file skipped",
            path("pipe.warc")
        ),
        format!(
            "{}: not a regular file (a folder), file skipped",
            path("folder-link.warc")
        ),
        format!("{}: empty, file skipped", path("empty.warc.gz")),
        format!(
            "1 files not read for their name (not *.warc or *.warc.gz): {}",
            path("notes.txt")
        ),
    ] {
        assert!(err.contains(&expected), "stderr lacks {expected:?}:\n{err}");
    }
    let table = DataDir::open_existing(&data).unwrap().page_table().unwrap();
    assert_eq!(table.pages.len(), 3);
}

/// `mirrorscope check --data DATA EXTRA...` run from `dir`: whether it
/// found the folder consistent, and what it printed on each stream.
fn run_check(dir: &Path, data: &Path, extra: &[&str]) -> (bool, String, String) {
    let mut args = vec!["check", "--data", data.to_str().unwrap()];
    args.extend(extra);
    let output = mirrorscope(dir, &args);
    (output.status.success(), stdout(&output), stderr(&output))
}

/// Issue 34: a missing or garbled `CURRENT`, or one naming a generation that
/// is gone, is a problem `check` names; `--repair` points it to the newest
/// intact generation.
#[test]
fn check_repair_points_current_to_the_newest_intact_generation() {
    let dir = tempfile::tempdir().unwrap();
    let crawl = dir.path().join("site.warc");
    let data = dir.path().join("data");
    write_site(&crawl, false, &site("docs.example", 6), 0);
    index(&[&crawl], &data).unwrap();
    write_site(&crawl, false, &site("docs.example", 5), 0);
    let newest = index(&[&crawl], &data).unwrap().manifest.generation;
    let check = |extra: &[&str]| run_check(dir.path(), &data, extra);
    let current = data.join("CURRENT");
    for (case, broken) in [
        ("missing", None),
        ("garbled", Some("gen-0000zz\n")),
        ("gone", Some("gen-000077\n")),
    ] {
        match broken {
            None => std::fs::remove_file(&current).unwrap(),
            Some(text) => std::fs::write(&current, text).unwrap(),
        }
        let (clean, out, _) = check(&[]);
        assert!(!clean, "{case}: {out}");
        let (clean, out, err) = check(&["--repair"]);
        assert!(clean, "{case}: {out}{err}");
        assert!(
            out.contains(&format!("CURRENT set to              {newest}")),
            "{case}: {out}"
        );
        assert_eq!(
            std::fs::read_to_string(&current).unwrap(),
            format!("{newest}\n")
        );
    }
    // An intact CURRENT is left as it is.
    let (clean, out, _) = check(&["--repair"]);
    assert!(clean && !out.contains("CURRENT set to"), "{out}");
}

/// `check` finds a leaked reference, a block nobody holds, temporary files
/// and a corrupt block; `--repair` (refused while a writer holds the lock)
/// reclaims the first three, and a corrupt block keeps the check failing.
#[test]
fn check_finds_what_is_wrong_and_repair_reclaims_what_can_be() {
    let dir = tempfile::tempdir().unwrap();
    let crawl = dir.path().join("site.warc.gz");
    write_site(&crawl, true, &site("docs.example", 6), 0);
    let data = dir.path().join("data");
    index(&[&crawl], &data).unwrap();
    let check = |extra: &[&str]| run_check(dir.path(), &data, extra);
    let (clean, out, err) = check(&[]);
    assert!(clean, "{out}{err}");
    assert!(out.ends_with("consistent\n"), "{out}");

    let folder = DataDir::open_existing(&data).unwrap();
    let config = mirrorscope::config::Config::of(&folder).unwrap().store;
    let key = folder.page_table().unwrap().pages[0].content_key.unwrap();
    {
        let store = folder.store(&config).unwrap();
        store.add_reference(&key).unwrap();
        store.put(b"<p>a body no crawl holds</p>").unwrap();
        store.flush().unwrap();
    }
    std::fs::write(data.join("store/vol-0/.tmp-1-1-half"), b"half a block").unwrap();
    std::fs::create_dir(data.join("generations/.gen-000099.tmp")).unwrap();
    std::fs::write(data.join(".CURRENT.tmp-4242"), b"gen-0000").unwrap();
    let (clean, out, _) = check(&[]);
    assert!(!clean, "{out}");
    for expected in [
        "counts too high (leaks)     1",
        &format!("  {key}: 2 counted, 1 held"),
        "blocks nobody holds         1",
        "temporary files             3",
        "NOT consistent",
    ] {
        assert!(out.contains(expected), "lacks {expected:?}:\n{out}");
    }

    {
        let _writer = folder.lock_for_writing().unwrap();
        let (repaired, _, err) = check(&["--repair"]);
        assert!(!repaired);
        assert!(
            err.contains("another `mirrorscope index` is writing"),
            "{err}"
        );
    }
    let (clean, out, err) = check(&["--repair"]);
    assert!(clean, "{out}{err}");
    assert!(
        out.contains("repaired                    1 counts set to what is held, 1 orphan blocks removed (2 references reclaimed), 3 temporary files removed"),
        "{out}"
    );
    let store = folder.store_for_reading(&config).unwrap();
    assert_eq!(store.references(&key).unwrap(), 1);

    // A body that is not what its name says cannot be repaired.
    damage_block(&store, &key);
    for extra in [&[][..], &["--repair"][..]] {
        let (clean, out, _) = check(extra);
        assert!(!clean, "{out}");
        assert!(out.contains("corrupt blocks              1"), "{out}");
        assert!(out.contains("cannot be read"), "{out}");
    }
}

/// `check` finds a body the crawls hold but the store lost (the pages of
/// the current generation that cannot be read back named), and generation
/// files unlike their manifest: neither is something `--repair` can put
/// right.
#[test]
fn check_finds_a_missing_block_and_a_generation_unlike_its_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let crawl = dir.path().join("site.warc.gz");
    write_site(&crawl, true, &site("docs.example", 6), 0);
    let data = dir.path().join("data");
    index(&[&crawl], &data).unwrap();
    let check = |extra: &[&str]| {
        let (clean, out, _) = run_check(dir.path(), &data, extra);
        (clean, out)
    };
    assert!(check(&[]).0);

    // A generation whose manifest counts other pages than its files hold.
    let folder = DataDir::open_existing(&data).unwrap();
    let generation = folder.current_generation().unwrap();
    let manifest_path = data
        .join("generations")
        .join(&generation)
        .join("manifest.json");
    let manifest = std::fs::read_to_string(&manifest_path).unwrap();
    let mut parsed: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let pages = parsed["counts"]["pages"].as_u64().unwrap();
    parsed["counts"]["pages"] = (pages + 1).into();
    std::fs::write(&manifest_path, parsed.to_string()).unwrap();
    let (clean, out) = check(&[]);
    assert!(!clean, "{out}");
    assert!(out.contains("generation problems         1"), "{out}");
    assert!(
        out.contains(&format!(
            "pages.bin holds {pages} pages, the manifest says {}",
            pages + 1
        )),
        "{out}"
    );
    std::fs::write(&manifest_path, manifest).unwrap();
    assert!(check(&[]).0, "the manifest put back");

    // The pages' fingerprints cut short (a disk that lost their end).
    let fingerprints_path = manifest_path.with_file_name("fingerprints.bin");
    let fingerprints = std::fs::read(&fingerprints_path).unwrap();
    std::fs::write(&fingerprints_path, &fingerprints[..fingerprints.len() - 3]).unwrap();
    let (clean, out) = check(&[]);
    assert!(!clean, "{out}");
    assert!(out.contains("generation problems         1"), "{out}");
    assert!(out.contains("fingerprints.bin"), "{out}");
    assert!(out.contains("cut short or damaged"), "{out}");
    std::fs::write(&fingerprints_path, &fingerprints).unwrap();
    assert!(check(&[]).0, "the fingerprints put back");

    // A block the crawl holds, gone from the store.
    let config = mirrorscope::config::Config::of(&folder).unwrap().store;
    let table = folder.page_table().unwrap();
    let page = &table.pages[0];
    let key = page.content_key.unwrap();
    // In the packed store, a block is gone when the index no longer has it.
    folder
        .store(&config)
        .unwrap()
        .set_references(&key, 0)
        .unwrap();
    for extra in [&[][..], &["--repair"][..]] {
        let (clean, out) = check(extra);
        assert!(!clean, "{out}");
        assert!(out.contains("blocks missing              1"), "{out}");
        assert!(
            out.contains(&format!("{key}: held by a crawl, not in the store")),
            "{out}"
        );
        assert!(
            out.contains(&format!("the body of {} ({key}) cannot be read", page.url)),
            "{out}"
        );
    }
}
