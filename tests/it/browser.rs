//! The site in a real browser: headless Chromium driven through WebDriver
//! (chromedriver), against `mirrorscope serve` on a free loopback port.
//! Clicks a Collection link and a Replica link, checks the expansions appear
//! in place and in the URL, goes back, and saves a screenshot to
//! `target/browser-artifacts/`. A second test runs axe-core (WCAG 2.2 A and
//! AA rules) on every kind of page at desktop and phone widths. Without
//! Chromium (or axe-core) a test is skipped, except under CI (`CI=true`),
//! where a missing tool is a failure; `.ci/run` installs them.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

use common::{serve, Running};

fn find_program(variable: &str, candidates: &[&str]) -> Option<PathBuf> {
    if let Ok(path) = std::env::var(variable) {
        return Some(PathBuf::from(path));
    }
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP/1.1 exchange with `Connection: close`; returns the body.
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> Value {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("chromedriver listens");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let payload = body.map(Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
        payload.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    // Read the head, then as many bytes as Content-Length says (chromedriver
    // may keep the connection open), or to the end.
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let lower = head.to_ascii_lowercase();
    let length = lower
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok());
    let mut bytes = Vec::new();
    match length {
        Some(length) => {
            bytes.resize(length, 0);
            reader.read_exact(&mut bytes).unwrap();
        }
        None => {
            reader.read_to_end(&mut bytes).unwrap();
        }
    }
    let rest = String::from_utf8_lossy(&bytes).into_owned();
    let body = if lower.contains("transfer-encoding: chunked") {
        dechunk(&rest)
    } else {
        rest
    };
    serde_json::from_str(&body).unwrap_or_else(|error| panic!("{error}: {head}\n{body}"))
}

fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        body.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    body
}

/// A WebDriver session.
struct Browser {
    port: u16,
    session: String,
    _driver: Running,
}

impl Browser {
    fn start(chromium: &Path, chromedriver: &Path, profile: &Path) -> Browser {
        let port = free_port();
        let driver = Running(
            Command::new(chromedriver)
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("chromedriver starts"),
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen");
            std::thread::sleep(Duration::from_millis(100));
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium.to_str().unwrap(),
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--disable-quic", "--window-size=1366,900",
                    format!("--user-data-dir={}", profile.display()),
                ]
            }
        }}});
        let answer = http(port, "POST", "/session", Some(&capabilities));
        let session = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_string();
        Browser {
            port,
            session,
            _driver: driver,
        }
    }

    fn command(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let answer = http(
            self.port,
            method,
            &format!("/session/{}{path}", self.session),
            body.as_ref(),
        );
        if answer["value"].get("error").is_some() {
            panic!("{method} {path}: {answer}");
        }
        answer["value"].clone()
    }

    fn go(&self, url: &str) {
        self.command("POST", "/url", Some(json!({ "url": url })));
    }

    fn run(&self, script: &str) -> Value {
        self.command(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    /// Runs `script` with WebDriver's callback as its last argument and
    /// returns what it passes to the callback.
    fn run_async(&self, script: &str) -> Value {
        self.command(
            "POST",
            "/execute/async",
            Some(json!({"script": script, "args": []})),
        )
    }

    fn resize(&self, width: u32, height: u32) {
        self.command(
            "POST",
            "/window/rect",
            Some(json!({"width": width, "height": height})),
        );
    }

    fn click(&self, css: &str) {
        let found = self.command(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        let id = found
            .as_object()
            .and_then(|object| object.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}"))
            .to_string();
        self.command("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    /// Waits until `script` returns true.
    fn wait_for(&self, what: &str, script: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.run(script) != json!(true) {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn screenshot(&self, path: &Path) {
        let encoded = self.command("GET", "/screenshot", None);
        let png = base64::engine::general_purpose::STANDARD
            .decode(encoded.as_str().unwrap())
            .unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(|| {
            http(
                self.port,
                "DELETE",
                &format!("/session/{}", self.session),
                None,
            )
        });
    }
}

/// A tool a test needs: found, or `None` after saying why the test is
/// skipped. Under CI a missing tool fails the test instead.
fn required(tool: Option<PathBuf>, what: &str, install: &str) -> Option<PathBuf> {
    if tool.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but {what} is missing (.ci/run installs it)"
        );
        eprintln!("skipped: no {what} ({install})");
    }
    tool
}

/// Chromium and chromedriver, when both are installed.
fn chromium() -> Option<(PathBuf, PathBuf)> {
    let chromium = find_program(
        "CHROMIUM",
        &["/usr/bin/chromium", "/usr/bin/chromium-browser"],
    );
    let chromedriver = find_program("CHROMEDRIVER", &["/usr/bin/chromedriver"]);
    let install = "apt-get install chromium chromium-driver";
    let chromium = required(chromium, "Chromium", install)?;
    let chromedriver = required(chromedriver, "chromedriver", install)?;
    Some((chromium, chromedriver))
}

/// The shipped crawl, indexed once for the whole test run.
fn shipped_data() -> &'static Path {
    common::shipped_crawl().path()
}

/// A browser on a server of the shipped crawl; `name` keeps each test's
/// browser profile apart.
fn session(name: &str) -> Option<(Running, String, Browser)> {
    let (chromium, chromedriver) = chromium()?;
    let data = shipped_data();
    let (server, base) = serve(data);
    let profile = data.parent().unwrap().join(format!("chromium-{name}"));
    let browser = Browser::start(&chromium, &chromedriver, &profile);
    Some((server, base, browser))
}

/// At a desktop's and a phone's size: the Collection and Replica links
/// expand in place and in the URL, ten rows at a time with More and Close;
/// the title leads to the original page; a lenient query is searched; no
/// page scrolls sideways.
#[test]
fn collection_and_replica_links_expand_in_place_in_chromium() {
    let Some((_server, base, browser)) = session("expand") else {
        return;
    };
    for (width, height) in [(1366, 900), (390, 844)] {
        browser.resize(width, height);
        expand_in_place(&browser, &base, width);
    }
}

fn expand_in_place(browser: &Browser, base: &str, width: u32) {
    browser.go(&format!("{base}/search?q=virtual+host"));
    browser.wait_for(
        "results",
        "return document.querySelectorAll('li.result').length > 0;",
    );
    let promised = browser.run(
        "const link = document.querySelector('li.result a.collection-link');
         return parseInt(link.textContent.match(/(\\d+) more/)[1], 10);",
    );
    let promised = promised.as_u64().expect("a Collection link with a count");

    // Collection: the matching pages appear under the entry, the URL says so.
    browser.click("li.result a.collection-link");
    browser.wait_for(
        "the collection expansion",
        "return document.querySelectorAll('li.result .collection-expansion .expanded-page').length > 0;",
    );
    let listed = browser.run(
        "return document.querySelector('li.result').querySelectorAll('.collection-expansion .expanded-page').length;",
    );
    assert_eq!(
        listed.as_u64(),
        Some(promised.min(10)),
        "the best ten of the N more, never the shown page again"
    );
    // The title leads to the original page; the stored copy is its own link.
    let title = browser.run("return document.querySelector('li.result h2 a.title').href;");
    assert!(title.as_str().unwrap().starts_with("http"), "{title}");
    assert!(!title.as_str().unwrap().contains("/page/"), "{title}");
    let url = browser.run("return location.href;");
    assert!(url.as_str().unwrap().contains("expand=c"), "{url}");

    // Replica: every copy, with the copy of the matched page on each host.
    let copies = browser.run(
        "const link = document.querySelector('li.result a.replica-link');
         return Math.min(10, parseInt(link.textContent.match(/(\\d+) cop/)[1], 10));",
    );
    browser.click("li.result a.replica-link");
    browser.wait_for(
        "the replica expansion",
        "return document.querySelectorAll('li.result .replica-expansion li.copy').length > 0;",
    );
    let listed = browser.run(
        "return document.querySelector('li.result').querySelectorAll('.replica-expansion li.copy').length;",
    );
    assert_eq!(listed, copies);
    let with_copy = browser.run(
        "return document.querySelectorAll('li.result .replica-expansion .hit-copy a').length;",
    );
    assert!(with_copy.as_u64().unwrap() >= 1);
    // Each row in plain words: the original first, with why; what kind of
    // copy, how much of the manual, the day it was crawled; this page
    // linked to its original URL, its stored copy apart.
    let rows = browser.run(
        "return [...document.querySelectorAll('li.result .replica-expansion li.copy')].map(row => [
             row.querySelector('.copy-kind .badge').textContent,
             row.querySelector('.copy-kind').textContent,
             row.querySelector('.copy-kind time') !== null,
             row.querySelector('.why') !== null,
             row.querySelector('a.copy-original') ? row.querySelector('a.copy-original').href : '',
             row.querySelector('a.copy-stored') ? row.querySelector('a.copy-stored').href : '']);",
    );
    let rows = rows.as_array().unwrap();
    assert_eq!(rows[0][0], json!("the original"), "{rows:?}");
    assert_eq!(rows[0][3], json!(true), "the original says why: {rows:?}");
    for row in rows {
        let said = row[1].as_str().unwrap();
        assert!(
            said.contains("pages") && said.contains(" · crawled "),
            "{row}"
        );
        assert_eq!(row[2], json!(true), "{row}");
        assert!(!said.contains("mirror level"), "{row}");
        if let (Some(original), Some(stored)) = (row[4].as_str(), row[5].as_str()) {
            if !original.is_empty() {
                assert!(original.starts_with("http") && !original.contains("/page/"));
                assert!(stored.contains("/page/"), "{row}");
            }
        }
    }
    assert!(rows[1..].iter().all(|row| row[0] != json!("the original")));
    assert_eq!(
        browser.run(
            "return document.querySelectorAll('.collection-link[aria-expanded=\"true\"]').length;"
        ),
        json!(1)
    );
    browser.screenshot(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "target/browser-artifacts/search-expanded-{width}.png"
    )));

    // Back closes the Replica expansion, forward opens it again.
    browser.run("history.back(); return true;");
    browser.wait_for(
        "back to one expansion",
        "return document.querySelectorAll('.replica-expansion').length === 0
             && document.querySelectorAll('.collection-expansion').length === 1;",
    );
    browser.run("history.forward(); return true;");
    browser.wait_for(
        "forward to both expansions",
        "return document.querySelectorAll('.replica-expansion').length === 1;",
    );

    // A shared URL opens with the expansions rendered by the server.
    let shared = browser.run("return location.href;");
    browser.go(shared.as_str().unwrap());
    browser.wait_for(
        "a shared URL's expansions",
        "return document.querySelectorAll('.collection-expansion').length === 1
             && document.querySelectorAll('.replica-expansion').length === 1;",
    );

    // More: the next ten rows replace these, in place and in the URL;
    // Close removes the expansion.
    if promised > 10 {
        browser.click("li.result .collection-expansion a.expansion-step[rel=next]");
        browser.wait_for(
            "the second page of the expansion",
            "return /p2$/.test(document.querySelector('.collection-expansion').dataset.expand)
                 && /expand=c\\d+p2/.test(decodeURIComponent(location.href));",
        );
        browser.click("li.result .collection-expansion a.expansion-close");
        browser.wait_for(
            "the expansion closed",
            "return document.querySelectorAll('.collection-expansion').length === 0
                 && !/expand=c/.test(decodeURIComponent(location.href));",
        );
    }

    // Sitelinks: the manual's other pages that match as well, one line of
    // title links under the entry, without the manual's name they share.
    browser.go(&format!("{base}/search?q=flask+blueprint"));
    let sitelinks = browser.run(
        "return [...document.querySelectorAll('li.result:first-child ul.sitelinks a.sitelink')]
                 .map(a => [a.textContent, a.href, a.title]);",
    );
    let sitelinks = sitelinks.as_array().unwrap();
    assert!(sitelinks.len() >= 2, "{sitelinks:?}");
    for sitelink in sitelinks {
        let label = sitelink[0].as_str().unwrap();
        assert!(
            !label.is_empty() && !label.contains("Flask Documentation"),
            "{sitelink}"
        );
        assert!(sitelink[1]
            .as_str()
            .unwrap()
            .starts_with("http://www.flask-framework.example/"));
        assert!(sitelink[2].as_str().unwrap().starts_with(label));
    }
    browser.screenshot(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("target/browser-artifacts/sitelinks-{width}.png")),
    );

    // Facets: a manual applied, its count the entries then shown, and
    // removed again; kept in the URL.
    browser.go(&format!("{base}/search?q=session"));
    browser.click("details.facets > summary");
    let value = browser.run(
        "const a = document.querySelector('.facet[data-facet=manual] a.facet-value');
         return [a.href, Number(a.dataset.entries), a.getBoundingClientRect().height > 0];",
    );
    assert_eq!(value[2], json!(true), "the facets open: {value}");
    browser.click(".facet[data-facet=manual] a.facet-value");
    browser.wait_for(
        "the narrowed results",
        "return document.querySelector('.note.narrowed') !== null
             && /[?&]manual=\\d+/.test(location.href);",
    );
    let shown = browser.run(
        "const counts = document.querySelector('p.counts').textContent;
         return Number(counts.match(/^([\\d,]+) entr/)[1].replace(/,/g, ''));",
    );
    assert_eq!(shown, value[1], "the count is the entries shown");
    browser.screenshot(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("target/browser-artifacts/facet-{width}.png")),
    );
    browser.click(".note.narrowed a.facet-remove");
    browser.wait_for(
        "the facet removed",
        "return document.querySelector('.note.narrowed') === null
             && !/manual=/.test(location.href);",
    );

    // A misspelling that finds nothing shows its correction's results; a
    // long question no page holds every word of finds the pages holding
    // most.
    browser.go(&format!("{base}/search?q=virtual+hsot"));
    let corrected = browser.run(
        "return [document.querySelector('.suggestion.correction') !== null,
                 document.querySelectorAll('li.result').length];",
    );
    assert_eq!(corrected[0], json!(true), "{corrected}");
    assert!(corrected[1].as_u64().unwrap() > 0, "{corrected}");
    browser.go(&format!(
        "{base}/search?q=how+can+I+get+apache+to+serve+several+different+websites+from+one+single+machine+please"
    ));
    let answered = browser.run("return document.querySelectorAll('li.result').length;");
    assert!(
        answered.as_u64().unwrap() > 0,
        "no result for a long question"
    );

    // The page view links the original and says why the page is grouped
    // in a sentence.
    browser.go(&format!("{base}/search?q=virtual+host"));
    browser.click("li.result a.stored");
    browser.wait_for(
        "the page view",
        "return document.querySelector('a.original-link') !== null;",
    );
    let said = browser.run(
        "return [document.querySelector('a.original-link').href,
                 document.querySelector('.grouping .summary').textContent];",
    );
    assert!(said[0].as_str().unwrap().starts_with("http://"), "{said}");
    assert!(
        said[1].as_str().unwrap().starts_with("A page of "),
        "{said}"
    );

    // A query that is not valid syntax is searched all the same.
    browser.go(&format!("{base}/search?q=std%3A%3Avector+%22virtual"));
    browser.wait_for(
        "a lenient query's page",
        "return document.querySelector('h1.results-title') !== null;",
    );

    // Nothing scrolls sideways: results with both expansions open, an
    // expansion's own page, a host page and a stored copy.
    let inner = browser.run("return window.innerWidth;");
    assert!(inner.as_u64().unwrap() <= u64::from(width), "{inner}");
    let mut pages = vec![shared.as_str().unwrap().to_string()];
    browser.go(shared.as_str().unwrap());
    let links = browser.run(
        "return [document.querySelector('li.result a.collection-link').href,
                 document.querySelector('li.result .copy .host a').href,
                 document.querySelector('li.result a.stored').href];",
    );
    for link in links.as_array().unwrap() {
        pages.push(link.as_str().unwrap().to_string());
    }
    for page in &pages {
        browser.go(page);
        browser.wait_for("the page", "return document.readyState === 'complete';");
        let overflow = browser.run(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth;",
        );
        assert!(
            overflow.as_i64().unwrap() <= 0,
            "{page} scrolls sideways by {overflow} px at {width} px"
        );
    }
    browser.screenshot(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("target/browser-artifacts/stored-copy-{width}.png")),
    );
}

/// axe-core's script: `AXE_CORE_JS`, or where `.ci/run` installs it.
fn axe_core() -> Option<String> {
    let path = find_program(
        "AXE_CORE_JS",
        &[concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/target/axe/node_modules/axe-core/axe.min.js"
        )],
    );
    let path = required(path, "axe-core", "npm install --prefix target/axe axe-core")?;
    Some(std::fs::read_to_string(path).expect("axe-core's script reads"))
}

/// The WCAG 2.2 A and AA violations axe-core finds on the page as it is
/// now, one line each: rule, impact, help and the first elements.
fn axe_violations(browser: &Browser, axe: &str, page: &str) -> Vec<String> {
    browser.wait_for("the page", "return document.readyState === 'complete';");
    browser.run(&format!("{axe}\n;return typeof axe === 'object';"));
    let found = browser.run_async(
        "const done = arguments[arguments.length - 1];
         axe.run(document, {runOnly: {type: 'tag',
             values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']}})
           .then(result => done(result.violations.map(v =>
               v.id + ' (' + v.impact + '): ' + v.help + ' at ' +
               v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', '))))
           .catch(error => done(['axe-core failed: ' + error]));",
    );
    found
        .as_array()
        .unwrap_or_else(|| panic!("axe-core answered {found}"))
        .iter()
        .map(|line| format!("{page}: {}", line.as_str().unwrap_or_default()))
        .collect()
}

/// WCAG 2.2 AA, as axe-core checks it, on every kind of page the site has,
/// at a desktop and a phone width: results with expansions opened in place
/// and rendered by the server, an expansion's own pages (collection,
/// replicas, site), a host, a stored copy, statistics, a query with a
/// suggestion and nothing found, and the error page.
#[test]
fn every_kind_of_page_passes_axe_core() {
    let Some(axe) = axe_core() else {
        return;
    };
    let Some((_server, base, browser)) = session("axe") else {
        return;
    };

    // The pages' addresses, read off the results of two queries.
    let search = format!("{base}/search?q=virtual+host");
    browser.go(&search);
    let links = browser.run(
        "const first = document.querySelector('li.result');
         return [first.querySelector('a.collection-link').href,
                 first.querySelector('a.replica-link').href,
                 first.querySelector('a.stored').href];",
    );
    let mut pages: Vec<String> = links
        .as_array()
        .unwrap()
        .iter()
        .map(|link| link.as_str().unwrap().to_string())
        .collect();
    let crowded = ["install", "module", "configuration"]
        .iter()
        .map(|query| format!("{base}/search?q={query}"))
        .find(|page| {
            browser.go(page);
            browser.run("return document.querySelector('a.site-link') !== null;") == json!(true)
        })
        .expect("a query of the shipped crawl with a 'More from this site' entry");
    let site = browser.run("return document.querySelector('a.site-link').href;");
    pages.push(site.as_str().unwrap().to_string());
    browser.go(&pages[1]);
    let host = browser.run("return document.querySelector('main a[href^=\"/host/\"]').href;");
    pages.push(host.as_str().unwrap().to_string());
    pages.extend(
        [
            "/",
            "/stats",
            "/search?q=virtual+hsot",
            "/search?q=flask+blueprint",
            "/search?q=session&manual=1",
            "/no/such/page",
        ]
        .iter()
        .map(|path| format!("{base}{path}")),
    );

    let mut violations = Vec::new();
    for (width, height) in [(1366, 900), (390, 844)] {
        browser.resize(width, height);
        let at = |page: &str| format!("{width}px {}", page.trim_start_matches(&base));

        // Expansions opened in place by the script, then the same URL
        // rendered by the server.
        browser.go(&search);
        browser.click("li.result a.collection-link");
        browser.click("li.result a.replica-link");
        browser.wait_for(
            "both expansions",
            "return document.querySelectorAll('li.result .collection-expansion, li.result .replica-expansion').length === 2
                 && document.querySelectorAll('[aria-busy=\"true\"]').length === 0;",
        );
        let opened = browser.run("return location.href;");
        let opened = opened.as_str().unwrap().to_string();
        violations.extend(axe_violations(&browser, &axe, &at("in place")));
        browser.go(&crowded);
        browser.click("a.site-link");
        browser.wait_for(
            "the site expansion",
            "return document.querySelectorAll('.site-expansion').length === 1;",
        );
        violations.extend(axe_violations(&browser, &axe, &at("site in place")));

        for page in std::iter::once(&opened).chain(&pages) {
            browser.go(page);
            violations.extend(axe_violations(&browser, &axe, &at(page)));
        }
    }
    assert!(
        violations.is_empty(),
        "axe-core, WCAG 2.2 AA:\n{}",
        violations.join("\n")
    );
}
