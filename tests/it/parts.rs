//! Ingest in parts (`ingest-part`, then `index --parts`), as the Spark job
//! `pipeline` runs it: the shipped crawl's files read by three parts give
//! the crawl `index` gives from the files themselves (its id, its ingest
//! report, its pages and analysis); a part run again is left as it was; a
//! file no part read is refused by name, and the next run recovers.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;

fn run(args: &[&str]) -> std::process::Output {
    mirrorscope(&crate_dir(), args)
}

/// The shipped crawl's WARC files, in name order.
fn crawl_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    files.sort();
    files
}

fn ingest_part(files: &[PathBuf], out: &Path) -> String {
    let mut args = vec!["ingest-part".to_string()];
    args.extend(files.iter().map(|path| path.display().to_string()));
    args.extend(["--out".into(), out.display().to_string()]);
    args.extend([
        "--data".into(),
        out.with_extension("no-data").display().to_string(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = run(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    stdout(&output)
}

/// `index` of the shipped crawl into `data`, its files taken from `parts`.
fn index_from_parts(data: &Path, parts: &Path) -> std::process::Output {
    run(&[
        "index",
        "corpus",
        "--data",
        data.to_str().unwrap(),
        "--parts",
        parts.to_str().unwrap(),
    ])
}

/// The crawl's report, without the time it took.
fn report(data: &Path) -> serde_json::Value {
    let crawls: Vec<PathBuf> = std::fs::read_dir(data.join("crawls"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(crawls.len(), 1, "{crawls:?}");
    let mut report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(crawls[0].join("report.json")).unwrap())
            .unwrap();
    report["elapsed_seconds"] = 0.into();
    report
}

fn manifest(data: &Path) -> serde_json::Value {
    let path = data.join("generations/gen-000001/manifest.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_crawl_ingested_in_parts_is_the_crawl_index_reads() {
    let single = index_shipped_crawl_into("parts-single");
    let root = single.parent().unwrap().to_path_buf();
    let files = crawl_files();
    assert!(files.len() >= 6);
    let parts = root.join("parts");
    let groups: Vec<&[PathBuf]> = files.chunks(files.len().div_ceil(3)).collect();
    for (number, group) in groups.iter().enumerate() {
        let printed = ingest_part(group, &parts.join(format!("part-{number}")));
        assert!(!printed.contains("written before"), "{printed}");
    }
    // A task run again finds its part done; a part of other files is
    // refused.
    assert!(ingest_part(groups[1], &parts.join("part-1")).contains("written before"));
    let mut args = vec!["ingest-part".to_string()];
    args.extend(groups[0].iter().map(|path| path.display().to_string()));
    args.extend(["--out".into(), parts.join("part-1").display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = run(&args);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("a part of other files"),
        "{}",
        stderr(&output)
    );

    let assembled = root.join("assembled");
    let output = index_from_parts(&assembled, &parts);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(report(&single), report(&assembled));

    // The parts' captures are Parquet tables any reader reads: a row for
    // each capture of a record the crawl's report counts, their links and their
    // fingerprints keyed by the capture's number in its part.
    let (mut captures, mut linked, mut fingerprinted) = (0, 0, 0);
    for (number, group) in groups.iter().enumerate() {
        let part = parts.join(format!("part-{number}"));
        let (columns, rows, _) = read_parquet(&part.join("captures.parquet"));
        assert_eq!(
            columns[..5],
            ["capture", "file", "warc_file", "offset", "url"]
        );
        assert!(rows
            .iter()
            .enumerate()
            .all(|(at, row)| row[0] == at.to_string()));
        // `file` is the file's place among the part's, `warc_file` its path.
        for row in &rows {
            let place: usize = row[1].parse().unwrap();
            assert_eq!(row[2], group[place].display().to_string());
        }
        captures += rows.len();
        let (columns, rows, _) = read_parquet(&part.join("links.parquet"));
        assert_eq!(columns, ["capture", "target"]);
        linked += rows.len();
        let (columns, rows, _) = read_parquet(&part.join("fingerprints.parquet"));
        assert_eq!(columns.len(), 4 + 84);
        fingerprinted += rows.len();
    }
    // (The report counts a revisit record resolved as a capture too; a
    // part keeps those records in part.bin, resolved across all parts.)
    let report = report(&single);
    let resolved = report["revisits_resolved"].as_u64().unwrap();
    assert!(resolved > 0);
    assert_eq!(
        captures as u64 + resolved,
        report["captures"].as_u64().unwrap()
    );
    assert!(linked > captures, "{linked} links");
    assert!(fingerprinted > 0 && fingerprinted <= captures);
    let (one, other) = (manifest(&single), manifest(&assembled));
    for part in ["crawls", "counts", "similarity", "collections", "mirrors"] {
        assert_eq!(one[part], other[part], "{part}");
    }
    assert_eq!(one["index"]["documents"], other["index"]["documents"]);
    // The index was built from the texts the parts kept, not from the
    // bodies read again: every one `index` itself keeps.
    let kept = one["index"]["kept_texts"].as_u64().unwrap();
    assert!(kept > 0);
    assert_eq!(other["index"]["kept_texts"], kept);
    // The same pages, with the same bodies read back.
    let export = |data: &Path, out: &Path| {
        let output = run(&[
            "export",
            "--data",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--tables",
            "pages,links",
        ]);
        assert!(output.status.success(), "{}", stderr(&output));
        ["pages", "links"]
            .map(|table| std::fs::read_to_string(out.join(format!("{table}.tsv"))).unwrap())
    };
    assert_eq!(
        export(&single, &root.join("single-tables")),
        export(&assembled, &root.join("assembled-tables"))
    );
    assert_consistent(&assembled);

    // Without the last part, its files are missing: refused by name.
    std::fs::remove_dir_all(parts.join("part-2")).unwrap();
    let fresh = root.join("fresh");
    let output = index_from_parts(&fresh, &parts);
    assert!(!output.status.success());
    let last = groups[2][0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    assert!(
        stderr(&output).contains(&last) && stderr(&output).contains("no part read it"),
        "{}",
        stderr(&output)
    );
    assert!(!fresh.join("CURRENT").exists());
    // With the part written again, the next run takes over what the
    // failed one left (its references given back) and ends consistent.
    ingest_part(groups[2], &parts.join("part-2"));
    let output = index_from_parts(&fresh, &parts);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_consistent(&fresh);
}

/// `index --parts --index-shards`, as the Spark job runs it: the texts the
/// parts kept reach the shards' tasks, which index from them rather than
/// reading each body again, and serve what `index` alone serves; the
/// published generation keeps no texts.
#[test]
fn shards_index_the_texts_the_parts_kept() {
    let single = index_shipped_crawl_into("parts-shards-single");
    let root = single.parent().unwrap().to_path_buf();
    let files = crawl_files();
    let parts = root.join("parts");
    for (number, group) in files.chunks(files.len().div_ceil(2)).enumerate() {
        ingest_part(group, &parts.join(format!("part-{number}")));
    }
    let sharded = root.join("sharded");
    let data = sharded.to_str().unwrap();
    let output = run(&[
        "index",
        "corpus",
        "--data",
        data,
        "--parts",
        parts.to_str().unwrap(),
        "--index-shards",
        "2",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = stdout(&output);
    let staged = printed
        .split_whitespace()
        .find(|word| word.starts_with("staged-"))
        .unwrap_or_else(|| panic!("{printed}"))
        .trim_end_matches([':', ','])
        .to_string();
    let staged_dir = sharded.join("generations").join(&staged);
    assert!(staged_dir.join("texts.bin").is_file());
    let leftovers: Vec<_> = std::fs::read_dir(sharded.join("generations"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().to_string())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    for shard in ["0", "1"] {
        let output = crate::shards::index_shard(&staged, (shard, "2"), data);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let output = run(&["publish", &staged, "--data", data]);
    assert!(output.status.success(), "{}", stderr(&output));
    let published = manifest(&sharded);
    let kept = manifest(&single)["index"]["kept_texts"].as_u64().unwrap();
    assert!(kept > 0);
    assert_eq!(published["index"]["kept_texts"], kept);
    let generation = sharded.join("generations/gen-000001");
    assert!(!generation.join("texts.bin").exists());
    assert!(!generation.join("texts.table").exists());
    assert_consistent(&sharded);
    crate::shards::serve_alike(&single, &sharded);
}

/// What a crawl folder holds besides plain WARC files: a FIFO with a WARC
/// name (opening it would block), a link naming a file already there. A
/// part reads what `index` reads of them, and a file changed after its
/// part read it is refused, not taken with its old content.
#[test]
fn a_part_reads_what_index_reads_and_a_changed_file_is_refused() {
    let root = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("parts-odd");
    let _ = std::fs::remove_dir_all(&root);
    let crawl = root.join("crawl");
    std::fs::create_dir_all(&crawl).unwrap();
    let files = crawl_files();
    let smallest = files
        .iter()
        .min_by_key(|path| std::fs::metadata(path).unwrap().len())
        .unwrap();
    let copy = crawl.join("a.warc.gz");
    std::fs::copy(smallest, &copy).unwrap();
    std::os::unix::fs::symlink(&copy, crawl.join("b-link.warc.gz")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(crawl.join("c-fifo.warc.gz"))
        .status()
        .unwrap();
    assert!(made.success());

    let parts = root.join("parts");
    let printed = ingest_part(std::slice::from_ref(&crawl), &parts.join("part-0"));
    assert!(printed.contains("2 file(s)"), "{printed}");
    assert!(printed.contains("1 passed over"), "{printed}");

    let single = root.join("single");
    let output = run(&[
        "index",
        crawl.to_str().unwrap(),
        "--data",
        single.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let index_from = |data: &Path| {
        run(&[
            "index",
            crawl.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
            "--parts",
            parts.to_str().unwrap(),
        ])
    };
    let assembled = root.join("assembled");
    let output = index_from(&assembled);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(report(&single), report(&assembled));
    // The file and its link, each read; the FIFO passed over.
    assert_eq!(report(&assembled)["files"], 2, "{}", report(&assembled));

    // The same bytes written again: the file is not as its part read it.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&copy, std::fs::read(&copy).unwrap()).unwrap();
    let output = index_from(&root.join("changed"));
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("a.warc.gz") && stderr(&output).contains("changed since the part"),
        "{}",
        stderr(&output)
    );
    // As it says: its task run again reads the files again, and the part
    // is taken.
    let printed = ingest_part(std::slice::from_ref(&crawl), &parts.join("part-0"));
    assert!(!printed.contains("written before"), "{printed}");
    let again = root.join("read-again");
    let output = index_from(&again);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(report(&single), report(&again));
}
