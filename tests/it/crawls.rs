//! Crawls over time through the command line: `index --add` keeps the
//! current crawls and reports the new one against the previous one
//! (gomes-2006 Table 1); `index --remove` gives the crawl's references back,
//! so the store returns to its earlier state block for block; bad requests
//! change nothing.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;

/// Every block of the store: its key, reference count and body, as the
/// store reads them (the packs and the index's own bytes change with every
/// commit; what a user relies on is this).
fn store_snapshot(data: &Path) -> BTreeMap<String, (u64, Vec<u8>)> {
    let store = mirrorscope::store::PageStore::open_for_reading(
        &data.join("store"),
        mirrorscope::store::StoreConfig::default(),
    )
    .unwrap();
    store
        .walk()
        .unwrap()
        .blocks
        .into_iter()
        .map(|block| {
            let references = block.header.as_ref().unwrap().references;
            let body = store.get(&block.key).unwrap();
            (block.key.to_string(), (references, body))
        })
        .collect()
}

fn current(data: &Path) -> String {
    std::fs::read_to_string(data.join("CURRENT")).unwrap()
}

#[test]
fn a_crawl_added_then_removed_leaves_the_store_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data_arg = data.to_str().unwrap();
    // Crawl A: 30 pages. Crawl B: 10 of A's pages again (same URLs, same
    // bodies), 5 of A's bodies under new URLs, and 10 new pages.
    let first = site("docs.example", 30);
    let again = |page: &TestPage, url: String| TestPage {
        url,
        head: page.head.clone(),
        body: page.body.clone(),
    };
    let mut second: Vec<TestPage> = first[..10]
        .iter()
        .map(|page| again(page, page.url.clone()))
        .collect();
    for page in &first[20..25] {
        second.push(again(
            page,
            page.url.replace("docs.example", "copy.example"),
        ));
    }
    for index in 0..10 {
        second.push(TestPage::html(
            &format!("http://new.example/n{index}.html"),
            &format!("New {index}"),
            &format!("A page the first crawl never saw, number {index}."),
            &[],
        ));
    }
    let (a, b) = (dir.path().join("a.warc.gz"), dir.path().join("b.warc.gz"));
    write_site(&a, true, &first, 0);
    write_site(&b, true, &second, 100);

    let output = mirrorscope(
        dir.path(),
        &["index", a.to_str().unwrap(), "--data", data_arg],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let before = store_snapshot(&data);
    assert!(!before.is_empty());

    let output = mirrorscope(
        dir.path(),
        &["index", "--add", b.to_str().unwrap(), "--data", data_arg],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stdout(&output);
    // 15 of B's 25 bodies were in A: 10 at the same URLs, 5 elsewhere.
    assert!(
        summary.contains("0 duplicates within this crawl, 15 of a body of the previous crawl"),
        "{summary}"
    );
    assert!(
        summary.contains("URL persistence 33.3% (10 of its 30 URLs"),
        "{summary}"
    );
    let stats = json(&mirrorscope(
        dir.path(),
        &["stats", "--data", data_arg, "--json"],
    ));
    assert_eq!(stats["crawls"], 2);
    // A's 30 URLs and B's 15 new ones.
    assert_eq!(stats["pages"], 45);
    let added = store_snapshot(&data);
    assert!(added != before);
    assert_eq!(added.len(), before.len() + 10, "B's ten new bodies");
    let crawl_id = summary
        .lines()
        .find_map(|line| line.strip_prefix("ingested "))
        .unwrap()
        .trim()
        .to_string();

    // Bad removals change nothing.
    let generation = current(&data);
    for bad in ["crawl-0000000000000000", "../store"] {
        let output = mirrorscope(dir.path(), &["index", "--remove", bad, "--data", data_arg]);
        assert!(!output.status.success());
        let message = stderr(&output);
        assert!(
            message.contains("is not a crawl of generation"),
            "{message}"
        );
        assert!(!message.contains("panicked"));
    }
    assert_eq!(current(&data), generation);
    assert!(
        store_snapshot(&data) == added,
        "a refused removal changes nothing"
    );

    let output = mirrorscope(
        dir.path(),
        &["index", "--remove", &crawl_id, "--data", data_arg],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("25 store references given back"),
        "{}",
        stdout(&output)
    );
    assert_eq!(
        store_snapshot(&data),
        before,
        "the store is as it was before --add"
    );
    let stats = json(&mirrorscope(
        dir.path(),
        &["stats", "--data", data_arg, "--json"],
    ));
    assert_eq!(stats["crawls"], 1);
    assert_eq!(stats["pages"], 30);
    assert!(!data.join("crawls").join(&crawl_id).exists());

    // The last crawl cannot be removed; a failed --add keeps the generation.
    let only = mirrorscope(
        dir.path(),
        &["index", "--remove", &stats_crawl(&data), "--data", data_arg],
    );
    assert!(!only.status.success());
    assert!(
        stderr(&only).contains("is the only crawl"),
        "{}",
        stderr(&only)
    );
    let generation = current(&data);
    let missing = mirrorscope(
        dir.path(),
        &["index", "--add", "nowhere.warc.gz", "--data", data_arg],
    );
    assert!(!missing.status.success());
    assert_eq!(current(&data), generation);
    assert!(store_snapshot(&data) == before);
}

/// The id of the current generation's only crawl.
fn stats_crawl(data: &Path) -> String {
    let generation = current(data);
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            data.join("generations")
                .join(generation.trim())
                .join("manifest.json"),
        )
        .unwrap(),
    )
    .unwrap();
    manifest["crawls"][0]["id"].as_str().unwrap().to_string()
}

/// Issue 32: a data folder whose store an older build wrote (a file per
/// body) is upgraded to packs by the next `index`: every body the first
/// crawl stored reads back with its count, `check` is clean, and no block
/// file is left.
#[test]
fn an_older_data_folder_is_upgraded_to_packs_by_the_next_index() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data_arg = data.to_str().unwrap();
    let (a, b) = (dir.path().join("a.warc.gz"), dir.path().join("b.warc.gz"));
    write_site(&a, true, &site("docs.example", 12), 0);
    write_site(&b, true, &site("other.example", 6), 100);
    // As an older build left it: the file layout.
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("config.json"),
        r#"{"store": {"format": "files"}}"#,
    )
    .unwrap();
    let output = mirrorscope(
        dir.path(),
        &["index", a.to_str().unwrap(), "--data", data_arg],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let store_json = || std::fs::read_to_string(data.join("store/store.json")).unwrap();
    assert!(
        store_json().contains("\"format_version\": 1"),
        "{}",
        store_json()
    );
    assert!(!data.join("store/index").exists());
    let before = store_snapshot(&data);
    assert_eq!(before.len(), 12);

    // The older build's configuration had no `format`: the default applies.
    std::fs::write(data.join("config.json"), r#"{"store": {}}"#).unwrap();
    let output = mirrorscope(
        dir.path(),
        &["index", "--add", b.to_str().unwrap(), "--data", data_arg],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        store_json().contains("\"format_version\": 2"),
        "{}",
        store_json()
    );
    let after = store_snapshot(&data);
    // Every body as it was; B's pages share some of them (`check` below
    // compares every count with what the crawls hold).
    for (key, (references, body)) in &before {
        let (now, read) = after.get(key).unwrap();
        assert_eq!(read, body, "{key} as it was");
        assert!(now >= references);
    }
    assert!(after.len() >= before.len());
    // Only packs, the index and lock files remain under the volumes.
    let mut folders = vec![data.join("store")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                assert!(name == "index" || name.starts_with("vol-"), "{path:?} left");
                folders.push(path);
            } else if folder
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("vol-")
            {
                assert!(
                    name.starts_with("pack-") || name == ".lock",
                    "{path:?} left"
                );
            }
        }
    }
    assert_consistent(&data);
    let stats = json(&mirrorscope(
        dir.path(),
        &["stats", "--data", data_arg, "--json"],
    ));
    assert_eq!(
        (stats["crawls"].as_u64(), stats["pages"].as_u64()),
        (Some(2), Some(18))
    );
}
