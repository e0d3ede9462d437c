//! A real crawler loading the avoid list: Debian's wget, recursive across
//! hosts, fetching the mechanisms crawl (`tests/crawlgen/make_crawl.py`)
//! through a proxy in this test that answers each URL with the response its
//! WARC file holds (http only: wget would need `CONNECT` for https). Run once
//! without the list and once with `avoid --format wget`: the second fetches
//! exactly the first's URLs minus those the list skips, and reaches every
//! distinct page of the truth the first reached.

use crate::common;

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::*;

/// The responses of a WARC file by target URI, and the URLs asked for.
struct Proxy {
    port: u16,
    asked: Arc<Mutex<BTreeSet<String>>>,
}

impl Proxy {
    fn serving(warc: &Path) -> Proxy {
        let mut responses: HashMap<String, Vec<u8>> = HashMap::new();
        let reader = mirrorscope::corpus::warc::WarcReader::open(warc, 1 << 26).unwrap();
        for record in reader {
            let record = record.unwrap();
            if record.warc_type() != "response" {
                continue;
            }
            let url = record.header("WARC-Target-URI").unwrap().to_string();
            responses.insert(url, record.block);
        }
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let asked = Arc::new(Mutex::new(BTreeSet::new()));
        let log = Arc::clone(&asked);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                answer(stream, &responses, &log);
            }
        });
        Proxy { port, asked }
    }
}

/// One request (a proxy's: the absolute URL), then the connection closes.
fn answer(
    stream: TcpStream,
    responses: &HashMap<String, Vec<u8>>,
    asked: &Mutex<BTreeSet<String>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line == "\r\n" || line == "\n" => break,
            Ok(_) => {}
        }
    }
    let url = request.split(' ').nth(1).unwrap_or("").to_string();
    asked.lock().unwrap().insert(url.clone());
    let mut stream = stream;
    let _ = match responses.get(&url) {
        Some(block) => stream.write_all(block),
        None => stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
    };
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// The URLs wget asks the proxy for, recursing from `seeds` across hosts
/// and rejecting what `reject` matches.
fn wget(dir: &Path, seeds: &[String], reject: &str) -> BTreeSet<String> {
    let Proxy { port, asked } = Proxy::serving(&dir.join("crawl1/crawl.warc.gz"));
    let seeds_file = dir.join("seeds.txt");
    std::fs::write(&seeds_file, seeds.join("\n")).unwrap();
    let output = Command::new("wget")
        .args([
            "--recursive",
            "--level=inf",
            "--span-hosts",
            "--delete-after",
            "--no-verbose",
            // The proxy answers one request a connection.
            "--no-http-keep-alive",
            "--tries=1",
            "--timeout=10",
            "--compression=auto",
            "--execute=robots=off",
            "--execute=use_proxy=on",
            &format!("--execute=http_proxy=http://127.0.0.1:{port}/"),
            "--regex-type=pcre",
            &format!("--reject-regex={reject}"),
            &format!("--directory-prefix={}", dir.join("wget").display()),
            &format!("--input-file={}", seeds_file.display()),
        ])
        .output()
        .expect("wget runs");
    // wget exits 8 when a server answered an error (the 404s of links to
    // pages the crawl did not fetch): the log says which.
    assert!(
        matches!(output.status.code(), Some(0 | 8)),
        "wget exited with {:?}: {}",
        output.status.code(),
        stderr(&output)
    );
    let asked = asked.lock().unwrap().clone();
    asked
}

#[test]
fn wget_loading_the_list_fetches_the_crawl_minus_what_it_skips() {
    if Command::new("wget").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "wget is missing (.ci/run installs it)"
        );
        eprintln!("wget is missing: the crawler test is skipped");
        return;
    }
    let (dir, crawl, data) = crate::crawlgen::generated_and_indexed(&[]);

    // The crawl's http URLs, and its entry points: the http pages no other
    // http page links to (the seeds of the crawl, as far as a proxy that
    // answers http alone lets wget see it).
    let pages = std::fs::read_to_string(crawl.join("pages.tsv")).unwrap();
    let urls: Vec<&str> = pages
        .lines()
        .skip(1)
        .filter_map(|line| line.split('\t').next())
        .filter(|url| url.starts_with("http://"))
        .collect();
    let (list, table) = mirrorscope::report::AvoidList::gather_with_table(
        &mirrorscope::datadir::DataDir::open_existing(&data).unwrap(),
        None,
    )
    .unwrap();
    let http = |index: usize| table.pages[index].url.starts_with("http://");
    let mut linked = vec![false; table.pages.len()];
    for (index, page) in table.pages.iter().enumerate() {
        if http(index) {
            for target in &page.outlinks {
                if target.0 as usize != index {
                    linked[target.0 as usize] = true;
                }
            }
        }
    }
    let mut seeds: BTreeSet<String> = (0..table.pages.len())
        .filter(|&index| http(index) && !linked[index])
        .map(|index| table.pages[index].url.to_string())
        .collect();
    // And each site's entry page: the shortest URL under each first folder
    // of each host (a manual's index).
    let mut entry: HashMap<(&str, &str), &str> = HashMap::new();
    for &url in &urls {
        let mut parts = url.splitn(5, '/');
        let host = parts.nth(2).unwrap();
        let folder = parts.next().unwrap_or("");
        let shortest = entry.entry((host, folder)).or_insert(url);
        if (url.len(), url) < (shortest.len(), *shortest) {
            *shortest = url;
        }
    }
    seeds.extend(entry.values().map(|url| url.to_string()));
    let seeds: Vec<String> = seeds.into_iter().collect();

    // `avoid --format wget`, and with `--seeds` the pages to seed.
    let wget_form = |seeds: &[&str]| {
        let data = data.to_str().unwrap();
        let mut args = vec!["avoid", "--data", data, "--format", "wget"];
        args.extend(seeds);
        let output = mirrorscope(&crate_dir(), &args);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    let regex = wget_form(&[])
        .lines()
        .find(|line| !line.starts_with('#'))
        .unwrap()
        .to_string();
    // What the wget form skips (its folder rules hold the entries the
    // prefix list's bound leaves out).
    let skips: std::collections::HashSet<&str> = table
        .pages
        .iter()
        .zip(list.compact_skipped(&table))
        .filter(|(_, skipped)| *skipped)
        .map(|(page, _)| page.url.as_ref())
        .collect();
    // wget fetches the URLs it is given whatever it rejects: a crawler
    // loading the list leaves the seeds it skips out too, and adds the
    // pages the list keeps that only skipped pages link to (an older
    // version's changed pages, linked from its unchanged index).
    let mut kept_seeds: Vec<String> = seeds
        .iter()
        .filter(|seed| !skips.contains(seed.as_str()))
        .cloned()
        .collect();
    let added: Vec<String> = wget_form(&["--seeds"]).lines().map(String::from).collect();
    assert!(!added.is_empty());
    let added_count = added.len();
    kept_seeds.extend(added);
    let https = "^https:";
    let without = wget(dir.path(), &seeds, https);
    let with = wget(dir.path(), &kept_seeds, &format!("{https}|(?:{regex})"));

    let crawled: BTreeSet<&str> = urls.iter().copied().collect();
    let in_crawl = |set: &BTreeSet<String>| -> BTreeSet<String> {
        set.iter()
            .filter(|url| crawled.contains(url.as_str()))
            .cloned()
            .collect()
    };
    let (without, with) = (in_crawl(&without), in_crawl(&with));
    assert!(without.len() > 400, "{} URLs reached", without.len());
    for url in &with {
        assert!(
            !skips.contains(url.as_str()),
            "wget fetched {url}, which the list skips"
        );
    }
    let missed: Vec<&String> = without
        .iter()
        .filter(|url| !with.contains(*url) && !skips.contains(url.as_str()))
        .collect();
    assert!(missed.is_empty(), "kept but not fetched: {missed:#?}");

    // No content lost: every page of the truth wget reached without the
    // list it reaches with it, under some URL.
    let truth = std::fs::read_to_string(crawl.join("truth.tsv")).unwrap();
    let key_of: HashMap<&str, (&str, &str)> = truth
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            Some((*fields.first()?, (*fields.get(1)?, *fields.get(3)?)))
        })
        .collect();
    let keys = |set: &BTreeSet<String>| -> BTreeSet<(&str, &str)> {
        set.iter()
            .filter_map(|url| key_of.get(url.as_str()).copied())
            .collect()
    };
    let lost: Vec<_> = keys(&without).difference(&keys(&with)).copied().collect();
    assert!(lost.is_empty(), "pages lost: {lost:?}");
    assert!(
        with.len() < without.len(),
        "{} of {}",
        with.len(),
        without.len()
    );
    eprintln!(
        "wget fetched {} of the crawl's URLs without the list, {} with it ({} seeds added)",
        without.len(),
        with.len(),
        added_count
    );
}
