//! The crawl of the mechanisms the development crawls lack
//! (`tests/crawlgen/make_crawl.py`: versions on three hosts, a CDN copy, a
//! partial mirror's "not mirrored" page, translations under the same paths,
//! identical stubs crawled whole and in part, sibling manuals, one page
//! under several URLs, a soft 404 echoing the path, a mirror in ISO-8859-1
//! and a gzip-encoded mirror of it), written with its truth
//! in the development crawl's format and measured with its `checks.py`.
//! What "right to the eye" asks of these mechanisms is checked here, and so
//! are the sibling manuals (their own pages stay apart), the echoing soft
//! 404 (no error page on page 1) and the URLs of one page (one result under
//! the plainest URL, one avoid entry per way the host names a page twice,
//! a `?page=` that names other pages kept apart), a mirror naming its
//! original by `rel=canonical` and a note, and a content farm's copies of
//! single pages, of the open issue on the web's URL mess.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::devcrawl::{run_checks, shared_devcrawl};
use common::*;

/// The crawl `make_crawl.py ARGS` writes, indexed: its folder (kept while
/// the returned one lives), the crawl and the data folder.
pub(crate) fn generated_and_indexed(args: &[&str]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let built = Command::new("python3")
        .arg(crate_dir().join("tests/crawlgen/make_crawl.py"))
        .args(["--out", dir.path().to_str().unwrap()])
        .args(args)
        .output()
        .expect("python3 runs make_crawl.py");
    assert!(built.status.success(), "{}", stderr(&built));
    let crawl = dir.path().join("crawl1");
    let data = dir.path().join("data");
    index_into(&crawl, &data);
    (dir, crawl, data)
}

/// The avoid list of `data`, saved in `dir` and read by checks.py against
/// `crawl`: it loses no distinct page and skips no page without a copy.
/// Returns the list and checks.py's figures.
fn avoid_lost_nothing(
    checker: &Path,
    dir: &Path,
    crawl: &Path,
    data: &Path,
) -> (String, serde_json::Value) {
    let avoid = mirrorscope(&crate_dir(), &["avoid", "--data", data.to_str().unwrap()]);
    assert!(avoid.status.success(), "{}", stderr(&avoid));
    let list = dir.join("avoid.txt");
    std::fs::write(&list, stdout(&avoid)).unwrap();
    let checked = run_checks(
        checker,
        &["avoid", crawl.to_str().unwrap(), list.to_str().unwrap()],
    );
    assert_eq!(checked["distinct_truth_pages_lost"], 0, "{checked}");
    assert_eq!(checked["unreplicated_pages_skipped"], 0, "{checked}");
    (stdout(&avoid), checked)
}

#[test]
fn the_mechanisms_crawl_meets_what_a_person_expects_of_them() {
    let Some(checker) = shared_devcrawl("checks.py") else {
        return;
    };
    let (dir, crawl, data) = generated_and_indexed(&[]);
    let (crawl_arg, data_arg) = (crawl.to_str().unwrap(), data.to_str().unwrap());

    let eval = json(&eval_truth(&crawl.join("truth.tsv"), data_arg, &["--json"]));
    // Copies page by page, and mirrored hosts: the translations are in no
    // pair (the truth has none), the CDN copy and the versions are.
    for part in ["page_pairs", "mirrors"] {
        for figure in ["precision", "recall"] {
            assert!(
                eval[part][figure].as_f64().unwrap() >= 0.98,
                "{part}: {}",
                eval[part]
            );
        }
    }
    // The manual in three versions, its CDN copy and its partial mirror is
    // one cluster of five copies; the manual with 12 identical stubs is one
    // cluster of its two copies, crawled whole and in part; the French
    // manual, its ISO-8859-1 mirror and the gzip-encoded mirror of that
    // mirror (an older state) are one cluster of three, compared decoded;
    // the manual mirrored under renamed paths (no `.html` and lower case, a
    // folder level flattened) is one cluster of three, its hosts mirrors.
    let manuals = eval["collections"]["truth_collections"].as_array().unwrap();
    for (name, copies) in [
        ("widget", 5),
        ("toolkit", 2),
        ("lumiere", 3),
        ("kettle", 3),
        ("quill", 3),
        ("inkwell", 2),
    ] {
        let manual = manuals
            .iter()
            .find(|manual| manual["collection"] == name)
            .unwrap();
        assert_eq!(manual["clusters"], 1, "{manual}");
        assert_eq!(manual["copies_found"], copies, "{manual}");
        assert_eq!(manual["pages_in_no_cluster"], 0, "{manual}");
    }

    // Beta, alpha's sibling manual on alpha's host, keeps its own pages out
    // of alpha's cluster: only the pages both manuals share (and beta's
    // index, which they link to) are with alpha. Beta's 20 own pages growing
    // in one by one took collections precision to 0.90. The content farm's
    // copies of single pages are copies of those pages, in no collection:
    // with the manual's, they cut the widget manual in four clusters.
    let precision = eval["collections"]["precision"].as_f64().unwrap();
    assert!(precision >= 0.98, "{}", eval["collections"]);
    // The farm's host is no mirror of any manual's (mirrors.tsv pairs it
    // with none; reported, it would be a wrong pair).
    let wrong = eval["mirrors"]["wrong"].to_string();
    assert!(!wrong.contains("stackfarm"), "{wrong}");
    // Pytool, one manual on one host under several URLs a page, is no
    // replicated collection: nothing of it is missed.
    let recall = eval["collections"]["recall"].as_f64().unwrap();
    assert!(recall >= 0.98, "{}", eval["collections"]);

    // The avoid list loses nothing.
    let (text, checked) = avoid_lost_nothing(&checker, dir.path(), &crawl, &data);
    // Pytool's tracking parameter, session id and index files are one entry
    // each; `http:` is not skipped, since the change log's parts were
    // crawled under `http:` only, and `?page=` names other pages.
    let pytool: Vec<String> = text
        .lines()
        .filter(|line| line.contains("www.pytool.test"))
        .map(|line| line.split('\t').take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        pytool,
        [
            "alias www.pytool.test ;jsessionid",
            "alias www.pytool.test ?utm_source",
            "alias www.pytool.test index"
        ]
    );

    // The list as printed holds at most one entry per ten pages (its
    // budget): the partial mirror's and the older version's pages that are
    // copies sit between pages that are not, one entry each, and the ones
    // skipping the fewest pages are left out (67 entries without a bound).
    let entries = checked["rules"].as_u64().unwrap();
    let pages = checked["pages"].as_u64().unwrap();
    assert!(entries * 10 <= pages, "{entries} entries for {pages} pages");
    assert!(text.contains("more entries, skipping"), "{text}");

    // The crawlers' forms skip what the list skips, URL for URL: the wget
    // regular expression (read by Python's `re`, which reads look-aheads as
    // PCRE does) against `AvoidList::avoids` on every crawled URL, both
    // without a bound. Each copy's entries are one rule, its pages that
    // stay the exceptions, so the rules are at most a tenth of the pages
    // with no entry left out.
    let list = mirrorscope::report::AvoidList::gather(
        &mirrorscope::datadir::DataDir::open_existing(&data).unwrap(),
        Some(0),
    )
    .unwrap();
    let wget = mirrorscope(
        &crate_dir(),
        &[
            "avoid",
            "--data",
            data_arg,
            "--format",
            "wget",
            "--max-entries",
            "0",
        ],
    );
    assert!(wget.status.success(), "{}", stderr(&wget));
    let wget = stdout(&wget);
    let regex = wget.lines().find(|line| !line.starts_with('#')).unwrap();
    let urls: Vec<String> = std::fs::read_to_string(crawl.join("pages.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|line| mirrorscope::corpus::canonical_url_string(line.split('\t').next()?))
        .collect();
    let (regex_file, urls_file) = (dir.path().join("regex.txt"), dir.path().join("urls.txt"));
    std::fs::write(&regex_file, regex).unwrap();
    std::fs::write(&urls_file, urls.join("\n")).unwrap();
    let matched = Command::new("python3")
        .args([
            "-c",
            "import re, sys\n\
             r = re.compile(open(sys.argv[1]).read().strip())\n\
             for u in open(sys.argv[2]).read().split('\\n'):\n    \
                 print(1 if r.search(u) else 0)",
            regex_file.to_str().unwrap(),
            urls_file.to_str().unwrap(),
        ])
        .output()
        .expect("python3 reads the regular expression");
    assert!(matched.status.success(), "{}", stderr(&matched));
    let matched: Vec<bool> = stdout(&matched).lines().map(|line| line == "1").collect();
    assert_eq!(matched.len(), urls.len());
    for (url, matched) in urls.iter().zip(matched) {
        assert_eq!(matched, list.avoids(url), "{url}");
    }
    let rules = list.regexes().len() as u64;
    assert!(rules * 10 <= pages, "{rules} rules for {pages} pages");
    assert!(list.entries.len() as u64 > rules, "{}", list.entries.len());

    // Heritrix's form, read as Heritrix reads SURT prefixes (written here
    // in Python from its `SURT.fromURI` and `SurtPrefixSet`: the host's
    // labels reversed, `https` as `http`, all in lower case), skips only
    // URLs the printed list skips: the kettle mirror lower-cases paths and
    // quill's mirrors are on https.
    let printed = mirrorscope::report::AvoidList::gather(
        &mirrorscope::datadir::DataDir::open_existing(&data).unwrap(),
        None,
    )
    .unwrap();
    let heritrix = mirrorscope(
        &crate_dir(),
        &["avoid", "--data", data_arg, "--format", "heritrix"],
    );
    assert!(heritrix.status.success(), "{}", stderr(&heritrix));
    let heritrix = stdout(&heritrix);
    let surts_file = dir.path().join("surts.txt");
    std::fs::write(&surts_file, &heritrix).unwrap();
    let read = Command::new("python3")
        .args([
            "-c",
            "import re, sys\n\
             def surt(u):\n    \
                 scheme, rest = u.split('://', 1)\n    \
                 authority, path = re.match(r'([^/?#]*)(.*)', rest).groups()\n    \
                 host, _, port = authority.partition(':')\n    \
                 labels = ''.join(label + ',' for label in reversed(host.split('.')))\n    \
                 s = scheme + '://(' + labels + (':' + port if port else '') + ')' + path\n    \
                 s = s.lower()\n    \
                 return 'http' + s[5:] if s.startswith('https://') else s\n\
             prefixes = [l[1:].strip().lower() for l in open(sys.argv[1]) if l.startswith('+')]\n\
             for u in open(sys.argv[2]).read().split('\\n'):\n    \
                 print(1 if any(surt(u).startswith(p) for p in prefixes) else 0)",
            surts_file.to_str().unwrap(),
            urls_file.to_str().unwrap(),
        ])
        .output()
        .expect("python3 reads the SURT prefixes");
    assert!(read.status.success(), "{}", stderr(&read));
    let read: Vec<bool> = stdout(&read).lines().map(|line| line == "1").collect();
    assert_eq!(read.len(), urls.len());
    let mut skipped = 0;
    for (url, read) in urls.iter().zip(read) {
        if read {
            assert!(
                printed.avoids(url),
                "Heritrix would skip {url}:\n{heritrix}"
            );
            skipped += 1;
        }
    }
    // Only the aliases are left out (pytool's three ways of naming a page).
    assert!(heritrix.contains("\n# 3 entries left out"), "{heritrix}");
    assert!(
        skipped * 10 >= printed.pages_saved * 8,
        "{skipped}\n{heritrix}"
    );

    // Page 1: each manual once in any version, from its original, nothing
    // refused.
    let (_server, base) = serve(&data);
    let checked = run_checks(&checker, &["search", crawl_arg, &base]);
    assert_eq!(checked["refused"], serde_json::json!([]), "{checked}");
    assert_eq!(checked["manual_again_share"], 0.0, "{checked}");
    // Every entry is from its manual's original. `not mirrored`, a query
    // made for the partial mirror's stand-in, has its words only in the
    // banners of quill's and inkwell's mirrors ("a mirror of
    // docs.quill.test", "this site mirrors docs.inkwell.test"): a mirror's
    // site chrome is its own, not the manual's, and is not searched (it
    // showed those two manuals from their mirrors: 34 entries in 36).
    let primary = checked["primary_share_any_version"].as_f64().unwrap();
    assert_eq!(primary, 1.0, "{checked}");
    // No error page: the soft 404 naming each path asked for is a stand-in
    // (checks.py leaves the count out when it is 0).
    assert_eq!(checked.get("error_pages"), None, "{checked}");
    // A pytool page is one result, under its plainest URL.
    let fetch = |path: &str| {
        let fetched = Command::new("python3")
            .args([
                "-c",
                "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())",
                &format!("{base}{path}"),
            ])
            .output()
            .expect("python3 fetches the answer");
        assert!(fetched.status.success(), "{}", stderr(&fetched));
        fetched
    };
    // Quill's original is named by its mirrors' canonical URLs and notes,
    // though one mirror is on https and was crawled first.
    let answer = json(&fetch("/api/search?q=quill"));
    let first = answer["groups"][0]["url"].as_str().unwrap().to_string();
    assert!(
        first.starts_with("http://docs.quill.test/manual/"),
        "{first}"
    );
    // Inkwell's original is named only by its mirror's note (no link, the
    // mirror's canonical URLs its own), though the mirror is on https and
    // was crawled first.
    let answer = json(&fetch("/api/search?q=inkwell"));
    let first = answer["groups"][0]["url"].as_str().unwrap().to_string();
    assert!(first.starts_with("http://docs.inkwell.test/"), "{first}");
    // A page the farm copied is one entry, shown from the manual's original;
    // the farm's copy says what it is.
    let farmed: Vec<(String, String)> = std::fs::read_to_string(crawl.join("pages.tsv"))
        .unwrap()
        .lines()
        .filter(|line| line.split('\t').nth(7) == Some("farm-copy"))
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            (fields[4].to_string(), fields[6].to_string())
        })
        .collect();
    assert_eq!(farmed.len(), 6);
    let queries = std::fs::read_to_string(crawl.join("queries.tsv")).unwrap();
    for (collection, path) in &farmed {
        let (query, source) = queries
            .lines()
            .map(|line| line.split('\t').collect::<Vec<&str>>())
            .find(|row| row[2] == collection && row[3].ends_with(&format!("/{path}")))
            .map(|row| (row[0].replace(' ', "+"), row[3].to_string()))
            .expect("a query for each farmed page");
        let answer = json(&fetch(&format!("/api/search?q={query}")));
        let groups = answer["groups"].as_array().unwrap();
        assert_eq!(groups[0]["url"], source.as_str(), "{query}");
        assert!(
            groups
                .iter()
                .all(|group| !group["url"].to_string().contains("stackfarm")),
            "{query}: {groups:?}"
        );
        let narrowed = json(&fetch(&format!(
            "/api/search?q={query}&host=answers.stackfarm.test"
        )));
        let copy = &narrowed["groups"][0];
        assert!(copy["url"].to_string().contains("stackfarm"), "{copy}");
        let view = stdout(&fetch(&format!(
            "/page/{}",
            copy["page_id"].as_str().unwrap()
        )));
        assert!(
            view.contains("alone on this host: a copy of that page, not a mirror of the manual"),
            "{view}"
        );
    }

    let answer = json(&fetch("/api/search?q=xenbanor+fibledro"));
    let first = &answer["groups"][0];
    assert_eq!(
        first["url"], "https://www.pytool.test/howto/xenbanor-fibledro.html",
        "{first}"
    );
    assert_eq!(first["hits"], 1, "{first}");
    // Its page lists the other URLs it was crawled under.
    let page = stdout(&fetch(&format!(
        "/page/{}",
        first["page_id"].as_str().unwrap()
    )));
    let (_, others) = page
        .split_once("The same page under other URLs of this host")
        .expect("the page view lists the page's other URLs");
    for url in [
        "http://www.pytool.test/howto/xenbanor-fibledro.html",
        "http://www.pytool.test/howto/xenbanor-fibledro.html?utm_source=newsletter",
    ] {
        assert!(others.contains(url), "{url}");
    }
}

/// The larger mixed crawl: every mechanism four times over, each instance's
/// hosts, addresses, manuals and words its own (`make_crawl.py --instances
/// 4`: 2,624 responses, 112 hosts). Manuals of one name and template on
/// many hosts, sites of one software numbering their own posts, the same
/// soft 404 on many servers: what holds on one instance holds beside the
/// others.
#[test]
fn the_mixed_crawl_of_four_instances_holds_as_one_does() {
    let Some(checker) = shared_devcrawl("checks.py") else {
        return;
    };
    let (dir, crawl, data) = generated_and_indexed(&["--instances", "4"]);
    let (crawl_arg, data_arg) = (crawl.to_str().unwrap(), data.to_str().unwrap());

    let eval = json(&eval_truth(&crawl.join("truth.tsv"), data_arg, &["--json"]));
    for part in ["page_pairs", "collections", "mirrors"] {
        for figure in ["precision", "recall"] {
            assert!(
                eval[part][figure].as_f64().unwrap() >= 0.98,
                "{part} {figure}: {}",
                eval[part]
            );
        }
    }
    let (_, checked) = avoid_lost_nothing(&checker, dir.path(), &crawl, &data);
    let wget = mirrorscope(
        &crate_dir(),
        &["avoid", "--data", data_arg, "--format", "wget"],
    );
    // Its first line: "# ... (cho-2000 §5.1): N rules for the M entries ...".
    let rules: u64 = stdout(&wget)
        .lines()
        .next()
        .and_then(|line| line.split("): ").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|count| count.parse().ok())
        .expect("the wget form says how many rules it has");
    let pages = checked["pages"].as_u64().unwrap();
    assert!(rules * 10 <= pages, "{rules} rules for {pages} pages");

    let (_server, base) = serve(&data);
    let checked = run_checks(&checker, &["search", crawl_arg, &base]);
    assert_eq!(checked["refused"], serde_json::json!([]), "{checked}");
    assert_eq!(checked["manual_again_share"], 0.0, "{checked}");
    assert_eq!(checked["family_repeat_share"], 0.0, "{checked}");
    assert_eq!(checked["primary_share_any_version"], 1.0, "{checked}");
    assert_eq!(checked.get("error_pages"), None, "{checked}");
}
