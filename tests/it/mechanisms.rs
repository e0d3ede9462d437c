//! What a person sees, end to end, on a small web written for the
//! mechanisms the development crawls lack (issue "right to the eye"): one
//! manual in three versions on three hosts, a soft-404 host and a partial
//! mirror's "not mirrored here" page, a handbook translated on two hosts
//! under the same paths, a CDN serving an exact copy of a manual from its own
//! address, and a single-host manual publishing one sub-tree twice. Each is
//! indexed from WARC by the binary and searched through the site's API.

use crate::common;

use std::path::Path;

use actix_web::{test, web, App};
use serde_json::Value;

use common::{json, mirrorscope, TestPage};
use mirrorscope::web::{configure, AppState};

/// A page whose `<html>` declares `lang`, with a heading and one paragraph
/// per line of `text`, and links.
fn page(url: &str, lang: &str, title: &str, text: &[String], links: &[String]) -> TestPage {
    let paragraphs: String = text.iter().map(|line| format!("<p>{line}</p>\n")).collect();
    let anchors: String = links
        .iter()
        .map(|link| format!("<a href=\"{link}\">{link}</a>\n"))
        .collect();
    let body = format!(
        "<!DOCTYPE html><html lang=\"{lang}\"><head><title>{title}</title></head><body><h1>{title}</h1>\n{paragraphs}{anchors}</body></html>"
    );
    TestPage {
        url: url.to_string(),
        head: "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n".to_string(),
        body: body.into_bytes(),
    }
}

/// Topics of the Widget manual.
const TOPICS: [&str; 12] = [
    "install",
    "configure",
    "frobnicate",
    "logging",
    "network",
    "storage",
    "security",
    "upgrade",
    "plugins",
    "metrics",
    "backup",
    "faq",
];

/// Widget's page on `topic` in a release: twelve lines of its own, a third
/// of them rewritten by each release (`edit`: which third, `None` for the
/// newest), every page linking to the front page and the front page to all.
fn widget(base: &str, version: &str, edit: Option<usize>) -> Vec<TestPage> {
    let mut pages = Vec::new();
    let url = |topic: &str| format!("{base}{topic}.html");
    for topic in std::iter::once("index").chain(TOPICS) {
        let lines: Vec<String> = (0..12)
            .map(|n| {
                if edit.is_some_and(|third| n % 3 == third) {
                    format!("Widget {topic} was reworded at point {n} for release {version} only")
                } else {
                    format!(
                        "Widget {topic} explains step {n} of the {topic} chapter in plain words"
                    )
                }
            })
            .collect();
        let links: Vec<String> = if topic == "index" {
            TOPICS.iter().map(|topic| url(topic)).collect()
        } else {
            vec![url("index")]
        };
        pages.push(page(
            &url(topic),
            "en",
            &format!("{topic} - Widget {version} Documentation"),
            &lines,
            &links,
        ));
    }
    pages
}

/// The web, as one WARC file, indexed into `data`.
fn index_web(dir: &Path) -> std::path::PathBuf {
    let mut pages = Vec::new();
    // One manual in three versions on three hosts.
    pages.extend(widget("https://docs.widget.example/manual/", "4.2", None));
    pages.extend(widget("http://mirror.one.example/widget/", "3.2", Some(0)));
    pages.extend(widget("http://old.two.example/pub/widget/", "2.2", Some(1)));
    // A partial mirror of 4.2: five pages, the rest "not mirrored here".
    let mut partial = widget("http://partial.three.example/manual/", "4.2", None);
    partial.truncate(5);
    pages.extend(partial);
    for n in 0..20 {
        pages.push(page(
            &format!("http://partial.three.example/manual/missing{n}.html"),
            "en",
            "Not mirrored",
            &["This document is not mirrored here; ask the original site".to_string()],
            &[],
        ));
    }
    // A retired host answering every URL with one "page not found".
    for n in 0..30 {
        pages.push(page(
            &format!("http://gone.example/docs/page{n}.html"),
            "en",
            "Page not found",
            &["The page you asked for cannot be found on this server".to_string()],
            &[],
        ));
    }
    // A handbook in English and in French under the same paths; the
    // command reference is the same text in both.
    for (host, lang, words) in [
        (
            "en.gadget.example",
            "en",
            "the gadget handbook explains how to assemble the parts",
        ),
        (
            "fr.gadget.example",
            "fr",
            "le manuel du gadget explique comment assembler les pièces",
        ),
    ] {
        let base = format!("http://{host}/handbook/");
        for chapter in 0..8 {
            let lines: Vec<String> = (0..10)
                .map(|n| format!("{words}, chapitre {chapter}, point {n}"))
                .collect();
            pages.push(page(
                &format!("{base}chapter{chapter}.html"),
                lang,
                &format!("Gadget {chapter}"),
                &lines,
                &[format!("{base}commands.html")],
            ));
        }
        let commands: Vec<String> = (0..10)
            .map(|n| format!("gadget --assemble --part {n} --verbose --output /dev/null"))
            .collect();
        pages.push(page(
            &format!("{base}commands.html"),
            lang,
            "gadget(1)",
            &commands,
            &(0..8)
                .map(|chapter| format!("{base}chapter{chapter}.html"))
                .collect::<Vec<_>>(),
        ));
    }
    // A manual on its original host and, byte for byte, on a CDN's own
    // address (a shorter name); a mirror's banner names the original.
    for (base, banner) in [
        ("https://www.gizmo-project.example/docs/", None),
        ("http://cdn.example/docs/", None),
        (
            "http://mirror.four.example/gizmo/",
            Some("https://www.gizmo-project.example/docs/"),
        ),
    ] {
        for topic in 0..10 {
            let mut lines: Vec<String> = (0..10)
                .map(|n| {
                    format!("Gizmo reference topic {topic} describes the sprocket setting {n}")
                })
                .collect();
            let mut links: Vec<String> = (0..10)
                .filter(|&other| other != topic)
                .map(|other| format!("{base}topic{other}.html"))
                .collect();
            if let Some(original) = banner {
                lines.insert(0, format!("This is a mirror of {original}"));
                links.push(original.to_string());
            }
            pages.push(page(
                &format!("{base}topic{topic}.html"),
                "en",
                &format!("Gizmo topic {topic}"),
                &lines,
                &links,
            ));
        }
    }
    // A single-host manual publishing its parameter pages twice.
    let base = "http://docs.sprocket.example/";
    let mut params: Vec<String> = Vec::new();
    for folder in ["fo", "html"] {
        for n in 0..4 {
            params.push(format!("{base}{folder}/param{n}.html"));
        }
    }
    pages.push(page(
        &format!("{base}index.html"),
        "en",
        "Sprocket manual",
        &["The sprocket manual lists every parameter in two formats".to_string()],
        &params,
    ));
    for folder in ["fo", "html"] {
        for n in 0..4 {
            pages.push(page(
                &format!("{base}{folder}/param{n}.html"),
                "en",
                &format!("Parameter {n}"),
                &[format!(
                    "The sprocket parameter {n} sets the torque of wheel {n}"
                )],
                &[format!("{base}index.html")],
            ));
        }
    }
    let crawl = dir.join("mechanisms.warc.gz");
    common::write_site(&crawl, true, &pages, 0);
    let data = dir.join("data");
    let output = mirrorscope(
        dir,
        &[
            "index",
            crawl.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", common::stderr(&output));
    data
}

/// The body `path` (a search, `query` its words) answers with.
async fn body(state: &web::Data<AppState>, path: &str, query: &str) -> Vec<u8> {
    let app =
        test::init_service(App::new().configure(|config| configure(config, state.clone()))).await;
    let uri = format!("{path}?q={}", query.replace(' ', "+"));
    let response = test::call_service(&app, test::TestRequest::get().uri(&uri).to_request()).await;
    assert!(response.status().is_success());
    test::read_body(response).await.to_vec()
}

async fn api(state: &web::Data<AppState>, query: &str) -> Value {
    serde_json::from_slice(&body(state, "/api/search", query).await).unwrap()
}

async fn results_page(state: &web::Data<AppState>, query: &str) -> String {
    String::from_utf8(body(state, "/search", query).await).unwrap()
}

fn groups(answer: &Value) -> Vec<&Value> {
    answer["groups"].as_array().unwrap().iter().collect()
}

fn host(group: &Value) -> &str {
    group["host"].as_str().unwrap()
}

#[actix_web::test]
async fn what_a_person_sees_on_a_web_of_the_mechanisms() {
    let dir = tempfile::tempdir().unwrap();
    let data = index_web(dir.path());
    let state = web::Data::new(AppState::open(&data, mirrorscope::settings_from_config()).unwrap());

    // Three versions: one entry, from the newest original, versions said.
    let answer = api(&state, "widget frobnicate").await;
    let widget: Vec<&Value> = groups(&answer)
        .into_iter()
        .filter(|group| group["title"].as_str().unwrap().contains("Widget"))
        .collect();
    assert_eq!(widget.len(), 1, "{answer:#}");
    assert_eq!(host(widget[0]), "docs.widget.example");
    assert_eq!(widget[0]["version"], "4.2");
    assert_eq!(
        widget[0]["other_versions"],
        serde_json::json!(["3.2", "2.2"])
    );
    // The results page links each other version to the same search asking
    // for it, which shows the entry from that version.
    let html = results_page(&state, "widget frobnicate").await;
    assert!(
        html.contains(r#"also in <a class="version-link" href="/search?q=widget+frobnicate+3.2">3.2</a>, <a class="version-link" href="/search?q=widget+frobnicate+2.2">2.2</a>"#),
        "{html}"
    );
    let answer = api(&state, "widget frobnicate 3.2").await;
    assert_eq!(host(groups(&answer)[0]), "mirror.one.example", "{answer:#}");
    // Asked from an older version, the others are asked for instead of it.
    let html = results_page(&state, "widget frobnicate 3.2").await;
    assert!(
        html.contains(r#"href="/search?q=widget+frobnicate+4.2">4.2</a>"#),
        "{html}"
    );

    // Error pages are no results.
    for query in ["not mirrored", "page not found", "cannot be found"] {
        let answer = api(&state, query).await;
        assert!(
            groups(&answer)
                .iter()
                .all(|group| host(group) != "gone.example"
                    && !group["title"].as_str().unwrap().contains("Not mirrored")),
            "{query}: {answer:#}"
        );
    }

    // The translations are two manuals, the English one for an English
    // query; their command references are no copies.
    let answer = api(&state, "gadget handbook assemble").await;
    assert_eq!(host(groups(&answer)[0]), "en.gadget.example", "{answer:#}");
    let answer = api(&state, "gadget verbose").await;
    let gadget: Vec<&Value> = groups(&answer).into_iter().collect();
    assert_eq!(gadget.len(), 2, "{answer:#}");
    assert!(
        gadget.iter().all(|group| group["replicas"].is_null()),
        "{answer:#}"
    );

    // The CDN's exact copy is not the original.
    let answer = api(&state, "gizmo sprocket setting").await;
    let gizmo = groups(&answer);
    assert_eq!(gizmo.len(), 1, "{answer:#}");
    assert_eq!(host(gizmo[0]), "www.gizmo-project.example");

    // The parameter pages published twice: one entry, no replicas.
    let answer = api(&state, "sprocket torque").await;
    let sprocket = groups(&answer);
    assert_eq!(sprocket.len(), 1, "{answer:#}");
    assert!(sprocket[0]["replicas"].is_null(), "{answer:#}");

    // And the reports agree: no cluster of the translations, none of one
    // host, the CDN's cluster names its original by the banner's evidence,
    // the stand-ins are named, and no mirrored pair of copies joins the
    // translations.
    let clusters = json(&mirrorscope(
        dir.path(),
        &["clusters", "--data", data.to_str().unwrap(), "--json"],
    ));
    for cluster in clusters["clusters"].as_array().unwrap() {
        let hosts: Vec<&str> = cluster["collections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|collection| collection["host"].as_str().unwrap())
            .collect();
        assert!(!hosts.contains(&"fr.gadget.example"), "{cluster:#}");
        assert!(!hosts.contains(&"docs.sprocket.example"), "{cluster:#}");
        if hosts.contains(&"cdn.example") {
            assert_eq!(hosts[0], "www.gizmo-project.example");
            assert_eq!(cluster["principal_evidence"], "named-by-copies");
        }
    }
    let stats = json(&mirrorscope(
        dir.path(),
        &["stats", "--data", data.to_str().unwrap(), "--json"],
    ));
    let stand_ins: Vec<(&str, u64)> = stats["stand_ins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|stand_in| {
            (
                stand_in["host"].as_str().unwrap(),
                stand_in["urls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        stand_ins,
        [("gone.example", 30), ("partial.three.example", 20)]
    );
    let mirrors = json(&mirrorscope(
        dir.path(),
        &["mirrors", "--data", data.to_str().unwrap(), "--json"],
    ));
    for pair in mirrors["pairs"].as_array().unwrap() {
        let hosts = [pair["a"].as_str().unwrap(), pair["b"].as_str().unwrap()];
        // Translations are no mirror pair at any level, not even "related"
        // (level 5: the same paths, some shared shingles).
        let mirror = ["1", "2", "3", "4", "5"].contains(&pair["level"].as_str().unwrap());
        assert!(
            !(hosts.contains(&"en.gadget.example")
                && hosts.contains(&"fr.gadget.example")
                && mirror),
            "{pair:#}"
        );
    }
}
