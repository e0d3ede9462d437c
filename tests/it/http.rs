//! The search site through `actix_web::test`, on the shipped crawl: roll-up
//! against the flat list and the clusters, the two expansions, JSON against
//! HTML, bad input, and a generation switch under load.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::OnceLock;

use actix_web::http::StatusCode;
use actix_web::{test, web, App};
use serde_json::Value;

use mirrorscope::web::{configure, AppState, CONTENT_SECURITY_POLICY};

/// The shipped crawl, indexed once for the whole test run.
fn shipped_data() -> &'static Path {
    common::shipped_crawl().path()
}

fn shipped_state() -> web::Data<AppState> {
    static STATE: OnceLock<web::Data<AppState>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            web::Data::new(
                AppState::open(shipped_data(), mirrorscope::settings_from_config())
                    .expect("the index opens"),
            )
        })
        .clone()
}

/// The shipped crawl's store, page table and similarity stage, as the
/// index stage read them.
fn shipped_analysis() -> (
    mirrorscope::store::PageStore,
    mirrorscope::pages::PageTable,
    mirrorscope::similarity::Similarity,
) {
    let data = mirrorscope::datadir::DataDir::open(shipped_data()).unwrap();
    let config = mirrorscope::config::Config::of(&data).unwrap().store;
    let store = data.store_for_reading(&config).unwrap();
    let generation = data.generation().unwrap();
    let table = generation.page_table().unwrap();
    let similarity = generation.similarity(&table).unwrap();
    (store, table, similarity)
}

struct Answer {
    status: StatusCode,
    content_type: String,
    csp: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|error| panic!("{error}: {}", self.body))
    }
}

async fn get_from(state: &web::Data<AppState>, path: &str) -> Answer {
    let app =
        test::init_service(App::new().configure(|config| configure(config, state.clone()))).await;
    let response = test::call_service(&app, test::TestRequest::get().uri(path).to_request()).await;
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let (status, content_type, csp) = (
        response.status(),
        header("content-type"),
        header("content-security-policy"),
    );
    let body = String::from_utf8(test::read_body(response).await.to_vec()).unwrap();
    Answer {
        status,
        content_type,
        csp,
        body,
    }
}

async fn get(path: &str) -> Answer {
    get_from(&shipped_state(), path).await
}

/// Every page of `/api/search` results for `query` with `extra` parameters.
async fn all_groups(query: &str, extra: &str) -> (Value, Vec<Value>) {
    let first = get(&format!("/api/search?q={query}{extra}")).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let first = first.json();
    let pages = first["pages"].as_u64().unwrap();
    let mut groups: Vec<Value> = first["groups"].as_array().unwrap().clone();
    for page in 2..=pages {
        let answer = get(&format!("/api/search?q={query}{extra}&page={page}")).await;
        assert_eq!(answer.status, StatusCode::OK);
        let json = answer.json();
        let page_groups = json["groups"].as_array().unwrap();
        assert!(!page_groups.is_empty() && page_groups.len() <= 10);
        if page < pages {
            assert_eq!(
                page_groups.len(),
                10,
                "group pages are never short but the last"
            );
        }
        groups.extend(page_groups.iter().cloned());
    }
    (first, groups)
}

fn text(value: &Value) -> String {
    value.as_str().map(str::to_string).unwrap_or_default()
}

/// The flat list comes in the same order whatever segments the index wrote
/// its pages to: higher score first, then the lower page id, as the roll-up
/// breaks its ties. (Identical copies score the same, so ties are common.)
#[actix_web::test]
async fn the_flat_list_breaks_ties_by_page_id() {
    for extra in ["&rollup=off", "&rollup=off&rank=replication"] {
        let (_, flat) = all_groups("virtual+host", extra).await;
        let mut ties = 0;
        for pair in flat.windows(2) {
            let score = |group: &Value| group["score"].as_f64().unwrap();
            let page = |group: &Value| text(&group["page_id"]).parse::<u32>().unwrap();
            assert!(score(&pair[0]) >= score(&pair[1]), "{extra}: {pair:?}");
            if score(&pair[0]) == score(&pair[1]) {
                ties += 1;
                assert!(page(&pair[0]) < page(&pair[1]), "{extra}: {pair:?}");
            }
        }
        assert!(ties > 10, "{extra}: the query has ties to break ({ties})");
    }
}

/// A query whose flat results repeat copies comes back rolled up: fewer
/// entries, no two of one cluster, and counts that are exactly what the flat
/// list and the clusters say.
#[actix_web::test]
async fn rolled_up_results_agree_with_the_flat_list_and_the_clusters() {
    let query = "virtual+host";
    let (flat_first, flat) = all_groups(query, "&rollup=off").await;
    let (rolled_first, rolled) = all_groups(query, "").await;
    let total = flat_first["total_hits"].as_u64().unwrap();
    assert_eq!(flat.len() as u64, total);
    assert_eq!(rolled_first["total_hits"].as_u64().unwrap(), total);

    // The flat first page repeats copies: several hits of one cluster.
    let mut first_page_clusters: HashMap<String, usize> = HashMap::new();
    for group in flat.iter().take(10) {
        if let Some(cluster) = group["cluster"].as_str() {
            *first_page_clusters.entry(cluster.to_string()).or_default() += 1;
        }
        assert!(group["collection"].is_null() && group["replicas"].is_null());
    }
    assert!(
        first_page_clusters.values().any(|&count| count >= 2),
        "{first_page_clusters:?}"
    );

    // Fewer entries, and never two from one cluster on any page.
    assert!(
        rolled.len() * 5 < flat.len(),
        "{} entries for {} hits",
        rolled.len(),
        flat.len()
    );
    let mut seen_clusters = BTreeSet::new();
    for group in &rolled {
        if let Some(cluster) = group["cluster"].as_str() {
            assert!(
                seen_clusters.insert(cluster.to_string()),
                "cluster {cluster} twice"
            );
        }
    }

    // Counts: the hits each entry stands for are the flat hits of its cluster
    // (or itself); the Collection count is the flat hits of that collection.
    let mut flat_per_cluster: HashMap<String, u64> = HashMap::new();
    let mut flat_per_collection: HashMap<String, u64> = HashMap::new();
    for hit in &flat {
        if let Some(cluster) = hit["cluster"].as_str() {
            *flat_per_cluster.entry(cluster.to_string()).or_default() += 1;
        }
        if let Some(collection) = hit["collection_id"].as_str() {
            *flat_per_collection
                .entry(collection.to_string())
                .or_default() += 1;
        }
    }
    let clusters = cluster_cardinalities();
    let mut folded = 0;
    for group in &rolled {
        let hits = group["hits"].as_u64().unwrap();
        folded += hits;
        match group["cluster"].as_str() {
            Some(cluster) => assert_eq!(hits, flat_per_cluster[cluster]),
            // A page in no cluster, with its host's other such pages when
            // it is the host's last entry.
            None => assert_eq!(hits, 1 + group["site"]["more"].as_u64().unwrap_or(0)),
        }
        if !group["collection"].is_null() {
            let id = text(&group["collection"]["id"]);
            let matching = group["collection"]["matching_pages"].as_u64().unwrap();
            assert_eq!(matching, flat_per_collection[&id], "collection {id}");
            assert!(matching >= 2);
            assert_eq!(text(&group["collection_id"]), id);
        }
        if !group["replicas"].is_null() {
            // The link's count is its list's (one server under two names
            // once: the_replica_link_counts_the_copies_its_list_shows).
            let cluster = text(&group["replicas"]["cluster"]);
            assert!(group["replicas"]["copies"].as_u64().unwrap() >= 2);
            assert!(clusters[&cluster] >= 2);
        }
    }
    assert_eq!(folded, total, "every hit is in exactly one entry");
    // Roll-up ranks by each group's best hit: scores never increase.
    let scores: Vec<f64> = rolled
        .iter()
        .map(|group| group["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|pair| pair[0] >= pair[1]));
    assert_eq!(scores[0], flat[0]["score"].as_f64().unwrap());
}

/// Cluster id -> cardinality, from `mirrorscope clusters --json`.
fn cluster_cardinalities() -> BTreeMap<String, u64> {
    let output = common::mirrorscope(
        &common::crate_dir(),
        &[
            "clusters",
            "--json",
            "--data",
            shipped_data().to_str().unwrap(),
        ],
    );
    let json = common::json(&output);
    json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cluster| {
            (
                text(&cluster["id"]),
                cluster["cardinality"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The shipped crawl's five mirrored manuals each come back as one entry
/// shown from their principal copy, with a Replica link to every copy.
#[actix_web::test]
async fn a_mirrored_manual_is_one_entry_from_its_principal_copy() {
    let answer = get("/api/search?q=mod_rewrite").await.json();
    let groups = answer["groups"].as_array().unwrap();
    let apache: Vec<&Value> = groups
        .iter()
        .filter(|group| {
            text(&group["url"]).contains("/docs/2.4/") || text(&group["url"]).contains("httpd")
        })
        .collect();
    assert_eq!(apache.len(), 1, "{groups:#?}");
    assert_eq!(text(&apache[0]["host"]), "httpd.apache-project.example");
    assert_eq!(apache[0]["replicas"]["copies"].as_u64(), Some(5));
}

fn count(body: &str, needle: &str) -> usize {
    body.matches(needle).count()
}

/// The Collection expansion lists exactly the collection's matching pages;
/// the Replica expansion lists every copy with the matched page's copy.
#[actix_web::test]
async fn the_expansions_list_what_their_links_promise() {
    let answer = get("/api/search?q=virtual+host").await.json();
    let groups = answer["groups"].as_array().unwrap();
    let group = groups
        .iter()
        .find(|group| !group["collection"].is_null() && !group["replicas"].is_null())
        .expect("an entry with both links");

    let collection = get(&text(&group["collection"]["href"])).await;
    assert_eq!(collection.status, StatusCode::OK);
    let matching = group["collection"]["matching_pages"].as_u64().unwrap() as usize;
    // The best ten of the others: never the entry's own page again.
    assert_eq!(
        count(&collection.body, "class=\"expanded-page\""),
        (matching - 1).min(10)
    );
    assert!(!collection
        .body
        .contains(&format!("data-page=\"{}\"", text(&group["page_id"]))));
    assert!(
        collection.body.contains("<mark>"),
        "snippets highlight the query"
    );
    // Without a query: every page of the collection.
    let id = text(&group["collection"]["id"]);
    let whole = get(&format!("/collection/{id}")).await;
    let listed = count(&whole.body, "class=\"expanded-page\"");
    assert!(
        listed == 10 || !whole.body.contains("rel=\"next\""),
        "{listed}"
    );

    let replicas = get(&text(&group["replicas"]["href"])).await;
    assert_eq!(replicas.status, StatusCode::OK);
    let copies = group["replicas"]["copies"].as_u64().unwrap() as usize;
    assert_eq!(count(&replicas.body, "<li class=\"copy"), copies);
    assert_eq!(
        count(
            &replicas.body,
            "<span class=\"badge original\">the original</span>"
        ),
        1
    );
    assert_eq!(
        count(&replicas.body, "<p class=\"why\">Taken as the original: "),
        1
    );
    // The hit page on its own host, and a copy of it on most others.
    assert!(replicas
        .body
        .contains(&format!("/page/{}\"", text(&group["page_id"]))));
    assert!(count(&replicas.body, "class=\"hit-copy\"") >= copies - 1);
    let hosts: BTreeSet<&str> = replicas
        .body
        .split("<strong class=\"host\"><a href=\"/host/")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert_eq!(hosts.len(), copies, "one copy per host: {hosts:?}");
    // Every copy says in plain words what it is, how much of the manual it
    // holds and when it was crawled; none speaks of mirror levels.
    assert_eq!(count(&replicas.body, "<p class=\"copy-kind\">"), copies);
    assert_eq!(
        count(&replicas.body, " · crawled <time datetime=\""),
        copies
    );
    assert!(!replicas.body.contains("mirror level"));
    // This page on each host links its original URL, its stored copy apart.
    assert!(count(&replicas.body, "class=\"copy-original\" href=\"http") >= copies - 1);
    assert!(count(&replicas.body, "class=\"copy-stored\" href=\"/page/") >= copies - 1);
}

/// The Replica link's count is what its list shows: the cluster's copies
/// (a server under two names once) and the copies of the manual's other
/// versions. Counting a lineage's copies instead said one copy more than
/// the list wherever a server answers under two names.
#[actix_web::test]
async fn the_replica_link_counts_the_copies_its_list_shows() {
    let mut checked = 0;
    for query in [
        "install",
        "manual",
        "configuration",
        "virtual+host",
        "module",
    ] {
        let answer = get(&format!("/api/search?q={query}")).await.json();
        for group in answer["groups"].as_array().unwrap() {
            let Some(copies) = group["replicas"]["copies"].as_u64() else {
                continue;
            };
            let list = get(&text(&group["replicas"]["href"])).await;
            assert_eq!(list.status, StatusCode::OK);
            let heading = list
                .body
                .split("class=\"expansion-title\">")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|number| number.parse::<u64>().ok())
                .expect("the list says how many copies");
            let more = list
                .body
                .split("more-versions\">and ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .map_or(0, |number| {
                    number.parse::<u64>().expect("a number of copies")
                });
            let versions = count(&list.body, "<li class=\"version-copy\"") as u64 + more;
            assert_eq!(
                copies,
                heading + versions,
                "{query}: page {} says {copies} copies, its list {heading} and {versions} other versions",
                text(&group["page_id"])
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} entries with a Replica link");
}

/// A page a folder holds under two URLs (the same bytes under two file
/// names, a folder's `/` and its `index.html`) is one page of its
/// collection: the Collection view lists it once, by the URL the index
/// holds, and counts it once; the Replica list sizes the manual the same
/// way. Counting URLs said "53 of 138 pages" of a manual of 70 chapters.
#[actix_web::test]
async fn a_page_under_two_urls_is_listed_and_counted_once() {
    let (_, table, similarity) = shipped_analysis();
    let aliases = mirrorscope::similarity::aliases::UrlAliases::find(&table, &similarity);
    let collections = mirrorscope::datadir::DataDir::open(shipped_data())
        .unwrap()
        .generation()
        .unwrap()
        .collections(&table)
        .unwrap();
    let mut with_second_names = 0;
    for cluster in &collections.clusters {
        let mut largest = 0;
        for &id in &cluster.collections {
            let collection = collections.collection(id).unwrap();
            let second_names = collection
                .pages
                .iter()
                .filter(|&&page| {
                    let standing = aliases.standing_for[page.0 as usize];
                    standing != page && collection.pages.binary_search(&standing).is_ok()
                })
                .count();
            with_second_names += usize::from(second_names > 0);
            let pages = collection.pages.len() - second_names;
            largest = largest.max(pages);

            let first = get(&format!("/collection/{id}")).await;
            assert_eq!(first.status, StatusCode::OK);
            assert!(
                first.body.contains(&format!(
                    "{pages} of {pages} page{} listed",
                    if pages == 1 { "" } else { "s" }
                )),
                "collection {id}: {pages} pages of {} URLs",
                collection.pages.len()
            );
            let mut listed = Vec::new();
            let mut page = 1;
            loop {
                let answer = get(&format!("/collection/{id}?page={page}")).await;
                listed.extend(
                    answer
                        .body
                        .split("data-page=\"")
                        .skip(1)
                        .filter_map(|rest| rest.split('"').next())
                        .map(|page| mirrorscope::pages::PageId(page.parse().unwrap())),
                );
                if !answer.body.contains("rel=\"next\"") {
                    break;
                }
                page += 1;
            }
            assert_eq!(listed.len(), pages, "collection {id}");
            for page in &listed {
                assert_eq!(
                    aliases.standing_for[page.0 as usize], *page,
                    "collection {id} lists page {page}, a second URL"
                );
            }
        }
        if cluster.kind == mirrorscope::collections::ClusterKind::Collection {
            let replicas = get(&format!("/replicas/{}", cluster.id)).await;
            assert!(
                replicas
                    .body
                    .contains(&format!("of a collection of {largest} pages</h")),
                "cluster {}: largest copy of {largest} pages",
                cluster.id
            );
        }
    }
    assert!(
        with_second_names >= 5,
        "{with_second_names} collections with a page under two URLs"
    );
}

/// A collection listed without a query reads as its manual does: its front
/// page, then the pages its table of contents links, in that order (Exim's
/// chapters 1, 2, 3 ..., whose file names sort otherwise; Tomcat's
/// "Introduction" and "Tomcat Setup" first).
#[actix_web::test]
async fn a_collection_without_a_query_is_listed_in_reading_order() {
    let titles = |body: &str| -> Vec<String> {
        body.split("class=\"title\" href=\"")
            .skip(1)
            .filter_map(|rest| rest.split_once("\">"))
            .filter_map(|(_, rest)| rest.split('<').next())
            .map(str::to_string)
            .collect()
    };
    let mut exim = 0;
    let mut tomcat = 0;
    for id in 0.. {
        let answer = get(&format!("/collection/{id}")).await;
        if answer.status == StatusCode::NOT_FOUND {
            break;
        }
        let listed = titles(&answer.body);
        if listed.first().map(String::as_str)
            == Some("Specification of the Exim Mail Transfer Agent")
        {
            let chapters: Vec<u32> = listed[1..]
                .iter()
                .map(|title| title.split('.').next().unwrap().parse().unwrap())
                .collect();
            assert_eq!(
                chapters,
                (1..=9).collect::<Vec<_>>(),
                "collection {id}: {listed:?}"
            );
            exim += 1;
        }
        if listed
            .first()
            .is_some_and(|title| title.contains("Documentation Index"))
            && listed[0].starts_with("Apache Tomcat")
        {
            assert!(listed[1].ends_with("- Introduction"), "{listed:?}");
            assert!(listed[2].ends_with("- Tomcat Setup"), "{listed:?}");
            tomcat += 1;
        }
    }
    assert!(
        exim >= 3 && tomcat >= 3,
        "{exim} Exim and {tomcat} Tomcat copies"
    );
}

/// `/host/{name}`: the host's mirrors with level and evidence, pairs that
/// were ranked but are not mirrors apart, and the level of each copy in the
/// Replica expansion.
#[actix_web::test]
async fn the_host_page_lists_mirrors_with_levels_and_evidence() {
    let tomcat = get("/host/tomcat.apache-project.example").await;
    assert_eq!(tomcat.status, StatusCode::OK);
    assert_eq!(tomcat.csp, CONTENT_SECURITY_POLICY);
    // Host names are case-insensitive.
    let shouted = get("/host/Tomcat.Apache-Project.EXAMPLE").await;
    assert_eq!(shouted.status, StatusCode::OK);
    assert!(shouted.body == tomcat.body, "/host/ names differ by case");
    let mirrors = tomcat.body.split("Ranked, but not mirrors").next().unwrap();
    for host in [
        "apache.mirror.nordu.example",
        "mirror.uni-kiel.example",
        "tomcat.mirror.jp-ix.example",
        "www.webserver-guides.example",
    ] {
        assert!(
            mirrors.contains(&format!("data-host=\"{host}\"")),
            "{host} is a mirror of tomcat: {}",
            tomcat.body
        );
    }
    assert!(tomcat.body.contains("Listed by"));
    assert!(
        tomcat.body.contains("class=\"outcome-HS\"")
            || tomcat.body.contains("class=\"outcome-FM\"")
    );
    // The prefix copy was compared on its folder, shown from this host's
    // side: folder here first, and the paths sampled here are this host's.
    let kiel = tomcat
        .body
        .split("<details")
        .find(|block| block.contains("data-host=\"mirror.uni-kiel.example\""))
        .unwrap();
    assert!(
        kiel.contains("<code>/</code> ~ <code>/pub/apache/tomcat/</code>"),
        "{kiel}"
    );
    let sampled_here: Vec<&str> = kiel
        .split("<tr class=\"outcome-")
        .skip(1)
        .filter(|row| row.contains("<td>this host</td>"))
        .collect();
    assert!(!sampled_here.is_empty());
    for row in sampled_here {
        let here = row.split("<code>").nth(1).unwrap();
        let there = row.split("<code>").nth(2).unwrap();
        assert!(here.starts_with("/tomcat-10.1-doc/"), "{row}");
        assert!(
            there.starts_with("/pub/apache/tomcat/tomcat-10.1-doc/"),
            "{row}"
        );
    }

    // Two manuals on one shared address: ranked by ip4, not mirrors.
    let shared = get("/host/libgcrypt.docs-hosting.example").await;
    assert_eq!(shared.status, StatusCode::OK);
    assert!(shared.body.contains("No mirrors found"));
    let others = shared
        .body
        .split("Ranked, but not mirrors")
        .nth(1)
        .expect("ranked pairs");
    assert!(others.contains("data-host=\"ncurses.docs-hosting.example\" data-level=\"mismatch\""));
    assert!(others.contains("ip4 #"));

    for path in [
        "/host/nosuch.example",
        "/host/%3Cscript%3Ealert(1)%3C%2Fscript%3E",
        "/host/a%20b",
    ] {
        let answer = get(path).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
        assert!(!answer.body.contains("<script>alert"), "{path}");
    }
    let long = get(&format!("/host/{}", "a".repeat(400))).await;
    assert_eq!(long.status, StatusCode::NOT_FOUND);

    // The Apache manual's copies: the exact mirrors are level 1.
    let answer = get("/api/search?q=mod_rewrite").await.json();
    let group = &answer["groups"][0];
    let replicas = get(&text(&group["replicas"]["href"])).await;
    let nordu = replicas
        .body
        .split("<li class=\"copy")
        .find(|copy| copy.contains("apache.mirror.nordu.example"))
        .unwrap();
    // The copy says what it is in plain words; the host page gives the
    // pair's level.
    assert!(
        [
            "exact copy",
            "same text",
            "copy with changes",
            "part of the manual"
        ]
        .iter()
        .any(|kind| nordu.contains(kind)),
        "{nordu}"
    );
    let host = get("/host/apache.mirror.nordu.example").await;
    assert!(
        host.body
            .contains("data-host=\"httpd.apache-project.example\" data-level=\"4\""),
        "{}",
        host.body
    );
}

/// The search page shows what the API gives, in the same order, with the
/// classes and attributes the contract names; expansions named in the URL
/// are rendered in place.
#[actix_web::test]
async fn the_html_page_shows_the_json_groups() {
    let json = get("/api/search?q=configuration").await.json();
    let html = get("/search?q=configuration").await;
    assert_eq!(html.status, StatusCode::OK);
    assert!(html.content_type.starts_with("text/html"));
    let groups = json["groups"].as_array().unwrap();
    assert_eq!(count(&html.body, "<li class=\"result\""), groups.len());
    let mut position = 0;
    for group in groups {
        let marker = format!(
            "<li class=\"result\" data-page=\"{}\"",
            text(&group["page_id"])
        );
        let at = html.body[position..]
            .find(&marker)
            .expect("groups in the same order")
            + position;
        let end = html.body[at..]
            .find("</li>\n")
            .map_or(html.body.len(), |end| at + end);
        let entry = &html.body[at..end];
        assert!(entry.contains(&format!(
            "data-collection=\"{}\"",
            group["collection_id"].as_str().unwrap_or("")
        )));
        assert!(entry.contains(&format!(
            "data-cluster=\"{}\"",
            group["cluster"].as_str().unwrap_or("")
        )));
        if let Some(more) = group["collection"]["matching_pages"].as_u64() {
            assert!(entry.contains(&format!("Collection: {} more matching pages", more - 1)));
            assert!(entry.contains("class=\"collection-link\""));
        }
        if let Some(copies) = group["replicas"]["copies"].as_u64() {
            assert!(entry.contains(&format!("Replica: {copies} copies")));
            assert!(entry.contains("class=\"replica-link\""));
        }
        position = at + 1;
    }
    let first = groups
        .iter()
        .find(|group| !group["collection"].is_null())
        .expect("an entry with a Collection link");
    let token = format!("c{}", text(&first["collection"]["id"]));
    let expanded = get(&format!("/search?q=configuration&expand={token}")).await;
    assert_eq!(
        count(&expanded.body, "class=\"expansion collection-expansion\""),
        1
    );
    assert!(expanded.body.contains(&format!("data-expand=\"{token}\"")));
}

/// Bad input gets the site's own pages with the right status, and nothing
/// from the query reaches the page unescaped.
#[actix_web::test]
async fn bad_input_gets_clear_400_and_404_pages() {
    // Text that is not valid query syntax is still searched, as its words,
    // and the page says so; the query never reaches the page unescaped.
    let unparsable = get("/search?q=%22%3Cscript%3Ealert(1)%3C%2Fscript%3E").await;
    assert_eq!(unparsable.status, StatusCode::OK);
    assert!(
        unparsable
            .body
            .contains("Showing results for the words <q>script alert 1 script</q>"),
        "{}",
        unparsable.body
    );
    assert!(unparsable
        .body
        .contains("&#34;&#60;script&#62;alert(1)&#60;/script&#62;"));
    assert!(!unparsable.body.contains("<script>alert"));
    assert_eq!(unparsable.csp, CONTENT_SECURITY_POLICY);

    for (path, status) in [
        ("/search?q=apache&page=0", StatusCode::BAD_REQUEST),
        ("/search?q=apache&page=99999", StatusCode::BAD_REQUEST),
        ("/search?q=apache&rollup=sideways", StatusCode::BAD_REQUEST),
        ("/search?q=apache&expand=z9", StatusCode::BAD_REQUEST),
        ("/replicas/0?q=apache&hit=abc", StatusCode::BAD_REQUEST),
        ("/page/abc", StatusCode::NOT_FOUND),
        ("/page/4294967296", StatusCode::NOT_FOUND),
        ("/page/99999", StatusCode::NOT_FOUND),
        ("/page/-1", StatusCode::NOT_FOUND),
        ("/collection/99999", StatusCode::NOT_FOUND),
        ("/replicas/99999", StatusCode::NOT_FOUND),
        ("/replicas/0?hit=99999", StatusCode::NOT_FOUND),
        ("/nothing/here", StatusCode::NOT_FOUND),
    ] {
        let answer = get(path).await;
        assert_eq!(answer.status, status, "{path}: {}", answer.body);
        assert!(answer.content_type.starts_with("text/html"), "{path}");
        assert!(answer.body.contains("class=\"error\""), "{path}");
    }
    let long = format!("/search?q={}", "a".repeat(2000));
    assert_eq!(get(&long).await.status, StatusCode::BAD_REQUEST);

    // Searched as words (a stray quote, a field that does not exist), or
    // read leniently (what is left is valid syntax).
    for (query, words, lenient) in [
        ("%22open", Some("open"), false),
        ("std%3A%3Avec", Some("std vec"), false),
        ("unbalanced%20(", None, true),
        ("virtual%20AND", None, true),
    ] {
        let api = get(&format!("/api/search?q={query}")).await;
        assert_eq!(api.status, StatusCode::OK, "{query}");
        assert!(api.content_type.starts_with("application/json"));
        let json = api.json();
        assert_eq!(json["searched_words"].as_str(), words, "{query}");
        assert_eq!(json["lenient"], lenient, "{query}");
    }
    let valid = get("/api/search?q=%22virtual%20host%22").await.json();
    assert!(valid["searched_words"].is_null());
    assert!(valid["total_hits"].as_u64().unwrap() > 0);

    // Issue 31: the empty query is the home page.
    let empty = get("/search?q=").await;
    assert_eq!(empty.status, StatusCode::OK);
    assert_eq!(empty.body, get("/").await.body);
    let health = get("/healthz").await;
    assert_eq!(health.status, StatusCode::OK);
    assert!(health.body.starts_with("ok gen-"));
}

/// Issue 31: a misspelled query that finds nothing shows the results of its
/// correction, with a link to the words as typed; the words as typed find
/// nothing and suggest the correction; a query that finds results gets no
/// suggestion.
#[actix_web::test]
async fn a_misspelling_shows_the_results_of_its_correction() {
    let corrected = get("/api/search?q=virtual+hsot").await.json();
    assert_eq!(corrected["query"], "virtual hsot");
    assert_eq!(corrected["showing_for"], "virtual host");
    assert!(corrected["suggestion"].is_null());
    let right = get("/api/search?q=virtual+host").await.json();
    assert_eq!(corrected["total_groups"], right["total_groups"]);
    assert_eq!(corrected["groups"][0]["url"], right["groups"][0]["url"]);
    assert!(right["suggestion"].is_null() && right["showing_for"].is_null());

    let page = get("/search?q=virtual+hsot").await;
    assert!(
        page.body.contains(
            "Showing results for <strong>virtual host</strong>; search instead for <a href=\"/search?q=virtual+hsot&#38;as_typed=1\">virtual hsot</a>"
        ),
        "{}",
        page.body
    );
    let as_typed = get("/api/search?q=virtual+hsot&as_typed=1").await.json();
    assert_eq!(as_typed["total_groups"], 0);
    assert_eq!(as_typed["suggestion"], "virtual host");
    assert!(as_typed["showing_for"].is_null());
}

/// Issue 31: a question of many words that no page holds all of shows the
/// pages holding most of them, and says so; a short query does not.
#[actix_web::test]
async fn a_long_question_finds_the_pages_with_most_of_its_words() {
    let question = "how+do+i+configure+a+virtual+host+for+zqxwvj";
    let all = get(&format!("/api/search?q={question}&as_typed=1"))
        .await
        .json();
    assert_eq!(all["total_groups"], 0, "no page has every word");
    let most = get(&format!("/api/search?q={question}")).await.json();
    assert_eq!(most["most_words"], true);
    assert!(most["total_groups"].as_u64().unwrap() > 0);
    assert!(most["showing_for"].is_null());
    let page = get(&format!("/search?q={question}")).await;
    assert!(page.body.contains("No page has every word of the query"));
    let short = get("/api/search?q=virtual+host+zqxwvj").await.json();
    assert_eq!(
        (
            short["total_groups"].as_u64(),
            short["most_words"].as_bool()
        ),
        (Some(0), Some(false))
    );
}

/// Issue 31's relevance on the shipped crawl: for 30 documentation queries
/// a reviewer wrote with the page a person expects
/// (`tests/relevance/corpus-queries.tsv`), that page (or its copy in
/// another copy or version of the manual, by `corpus/truth.tsv`) is the
/// first entry's page or one of its sitelinks for at least 90% of them; and
/// no entry of any of them is shown from a source listing or a generated
/// index while a page of prose of it matches.
#[actix_web::test]
async fn the_page_a_person_expects_comes_first() {
    let read = |path: &str| -> Vec<BTreeMap<String, String>> {
        let text = std::fs::read_to_string(common::crate_dir().join(path)).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
        lines
            .map(|line| {
                header
                    .iter()
                    .zip(line.split('\t'))
                    .map(|(name, value)| (name.to_string(), value.to_string()))
                    .collect()
            })
            .collect()
    };
    let truth: BTreeMap<String, (String, String)> = read("corpus/truth.tsv")
        .into_iter()
        .map(|row| {
            (
                row["url"].clone(),
                (row["collection"].clone(), row["page"].clone()),
            )
        })
        .collect();
    let key = |url: &str| {
        truth
            .get(url)
            .cloned()
            .unwrap_or_else(|| (String::new(), url.to_string()))
    };
    let queries = read("tests/relevance/corpus-queries.tsv");
    assert_eq!(queries.len(), 30);
    let mut found = 0;
    let mut missed = Vec::new();
    for row in &queries {
        let query =
            url::form_urlencoded::byte_serialize(row["query"].as_bytes()).collect::<String>();
        let answer = get(&format!("/api/search?q={query}")).await.json();
        let groups = answer["groups"].as_array().unwrap();
        let wanted = key(&row["source_url"]);
        let first: Vec<&str> = groups
            .first()
            .map(|group| {
                std::iter::once(group["url"].as_str().unwrap())
                    .chain(
                        group["sitelinks"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|link| link["url"].as_str().unwrap()),
                    )
                    .collect()
            })
            .unwrap_or_default();
        if first.iter().any(|url| key(url) == wanted) {
            found += 1;
        } else {
            missed.push(row["query"].clone());
        }
        for group in groups {
            let url = group["url"].as_str().unwrap();
            let listing = [
                "/_modules/",
                "/_sources/",
                "/src-html/",
                "genindex",
                "py-modindex",
            ]
            .iter()
            .any(|mark| url.contains(mark));
            assert!(
                !listing || group["hits"] == 1,
                "{}: {url} stands for {} pages",
                row["query"],
                group["hits"]
            );
        }
    }
    assert!(
        found * 10 >= queries.len() * 9,
        "{found} of 30; missed {missed:?}"
    );
}

/// Issue 31: `/api/search` gives facets by manual, version and host; each
/// value's count is the number of entries the search shows with it
/// applied, and removing it gives the search back. The results page links
/// each value, and says what it is narrowed to.
#[actix_web::test]
async fn facets_count_the_entries_they_leave() {
    let whole = get("/api/search?q=session").await.json();
    let facets = &whole["facets"];
    for facet in ["manual", "version", "host"] {
        let values = facets[facet].as_array().unwrap();
        assert!(values.len() >= 2, "{facet}: {values:?}");
        for value in values.iter().take(4) {
            let parameter = value["value"].as_str().unwrap();
            let entries = value["entries"].as_u64().unwrap();
            assert_eq!(value["applied"], false);
            let narrowed = get(&format!("/api/search?q=session&{facet}={parameter}"))
                .await
                .json();
            assert_eq!(
                narrowed["total_groups"].as_u64(),
                Some(entries),
                "{facet}={parameter}"
            );
            let applied: Vec<&Value> = narrowed["facets"][facet]
                .as_array()
                .unwrap()
                .iter()
                .filter(|value| value["applied"] == true)
                .collect();
            assert_eq!(applied.len(), 1, "{facet}={parameter}");
            assert_eq!(applied[0]["entries"].as_u64(), Some(entries));
        }
    }
    // A manual chosen: each of its pages is an entry, once in all its
    // copies and versions.
    let manual = facets["manual"][0]["value"].as_str().unwrap();
    let within = get(&format!("/api/search?q=session&manual={manual}"))
        .await
        .json();
    let mut urls = BTreeSet::new();
    for group in within["groups"].as_array().unwrap() {
        assert!(urls.insert(group["url"].as_str().unwrap().to_string()));
    }
    assert!(within["total_hits"].as_u64() <= whole["total_hits"].as_u64());

    // The page: links that apply a value and, applied, remove it.
    let page = get(&format!("/search?q=session&manual={manual}")).await;
    assert!(
        page.body.contains("class=\"note narrowed\""),
        "{}",
        page.body
    );
    assert!(page.body.contains("class=\"facet-value applied\""));
    assert!(
        page.body.contains("href=\"/search?q=session\""),
        "the removing link"
    );
    let plain = get("/search?q=session").await;
    assert!(plain
        .body
        .contains(&format!("href=\"/search?q=session&#38;manual={manual}\"")));

    // The flat list has no facets; a bad value is refused.
    let flat = get("/api/search?q=session&rollup=off").await.json();
    assert!(flat["facets"]["manual"].as_array().unwrap().is_empty());
    assert_eq!(
        get("/api/search?q=session&manual=x1").await.status,
        StatusCode::BAD_REQUEST
    );
    let nowhere = get("/api/search?q=session&host=no.such.host").await.json();
    assert_eq!(nowhere["total_groups"], 0);
}

/// The stored copy is shown as text, with where it was crawled and why it is
/// grouped; a crawled page's markup never reaches the browser as markup.
#[actix_web::test]
async fn the_page_view_shows_text_provenance_and_grouping() {
    let json = get("/api/search?q=mod_rewrite").await.json();
    let page_id = text(&json["groups"][0]["page_id"]);
    let page = get(&format!("/page/{page_id}")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains(".warc.gz</code> at offset"));
    assert!(page.body.contains("Why it is grouped"));
    assert!(page.body.contains("copies of this page"));
    assert!(page.body.contains("identical bytes") || page.body.contains("similar text"));
    // Issue 31: the original URL is a link, and why it is grouped is said in
    // a sentence, the numbers folded under "Details".
    let url = text(&json["groups"][0]["url"]);
    assert!(
        page.body.contains(&format!(
            "<a class=\"original-link\" href=\"{url}\" rel=\"noopener noreferrer nofollow\">{url}</a>"
        )),
        "{}",
        page.body
    );
    let summary = page
        .body
        .split("<p class=\"summary\">")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .expect("a summary");
    assert!(summary.starts_with("A page of "), "{summary}");
    assert!(summary.contains(", crawled in "), "{summary}");
    assert!(
        summary.contains("This copy is the original") || summary.contains("the original is on"),
        "{summary}"
    );
    assert!(
        !summary.contains("Cluster") && !summary.contains("chunk"),
        "{summary}"
    );
    assert!(page
        .body
        .contains("<details class=\"grouping-details\">\n    <summary>Details</summary>"));
    // Only the layout's own script tag; the page's text is escaped.
    assert_eq!(count(&page.body, "<script"), 1);
    assert_eq!(page.csp, CONTENT_SECURITY_POLICY);
}

/// `rank=replication` moves replicated pages up (cho-2000 §1).
#[actix_web::test]
async fn ranking_by_replication_lifts_copied_pages() {
    let copies_on_top = |json: &Value| -> u64 {
        json["groups"]
            .as_array()
            .unwrap()
            .iter()
            .take(5)
            .map(|group| group["replicas"]["copies"].as_u64().unwrap_or(1))
            .sum()
    };
    let relevance = get("/api/search?q=install").await.json();
    let replication = get("/api/search?q=install&rank=replication").await.json();
    assert_eq!(replication["rank"], "replication");
    assert_eq!(relevance["total_hits"], replication["total_hits"]);
    assert!(copies_on_top(&replication) >= copies_on_top(&relevance));
    let flat = get("/api/search?q=install&rank=replication&rollup=off")
        .await
        .json();
    assert_eq!(flat["total_hits"], relevance["total_hits"]);
}

/// When `index` switches to a new generation, the server picks it up without
/// a restart, and requests running meanwhile all succeed.
#[actix_web::test]
async fn a_new_generation_is_served_without_failing_a_request() {
    let data = common::index_shipped_crawl_into("http-reload");
    let state = web::Data::new(AppState::open(&data, mirrorscope::settings_from_config()).unwrap());
    let before = state.engine().generation().to_string();
    let answer = get_from(&state, "/api/search?q=zanzibarian").await.json();
    assert_eq!(answer["total_hits"], 0);

    // A second crawl with a word the first lacks, indexed by the binary.
    let crawl = data.parent().unwrap().join("more.warc");
    let mut pages = common::site("reload.example", 3);
    for page in &mut pages {
        let text = String::from_utf8(page.body.clone()).unwrap();
        page.body = text
            .replace("own text", "own zanzibarian text")
            .into_bytes();
    }
    common::write_site(&crawl, false, &pages, 0);
    let output = common::mirrorscope(
        &common::crate_dir(),
        &[
            "index",
            crawl.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", common::stderr(&output));

    let reloader = {
        let state = state.clone();
        std::thread::spawn(move || state.reload_if_changed())
    };
    let mut answered = 0;
    while !reloader.is_finished() || answered == 0 {
        let answer = get_from(&state, "/api/search?q=manual").await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        answered += 1;
    }
    assert!(
        reloader.join().unwrap().unwrap(),
        "the new generation was loaded"
    );
    assert_ne!(state.engine().generation(), before);
    let answer = get_from(&state, "/api/search?q=zanzibarian").await.json();
    assert_eq!(answer["total_hits"], 3);
    assert!(
        !state.reload_if_changed().unwrap(),
        "nothing new the second time"
    );
}

/// `/stats`: the figures of `stats`, the histogram and the scatter drawn as
/// SVG on the server (no script needed), the largest clusters.
#[actix_web::test]
async fn the_statistics_page_draws_its_charts_on_the_server() {
    let page = get("/stats").await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(page.csp, CONTENT_SECURITY_POLICY);
    // Five buckets under four tests, and one legend swatch per test.
    assert_eq!(count(&page.body, "<rect class=\"bar "), 5 * 4 + 4);
    // One point per similar cluster.
    let clusters = cluster_cardinalities().len();
    assert_eq!(count(&page.body, "<circle class=\"point "), clusters);
    assert!(page.body.contains("<svg class=\"histogram\""));
    assert!(page.body.contains("<svg class=\"scatter\""));
    assert!(!page.body.contains("style=\""), "no inline style (CSP)");
    // The histogram's table agrees with `stats --json`.
    let stats = mirrorscope::stats::Stats::gather(
        &mirrorscope::datadir::DataDir::open_existing(shipped_data()).unwrap(),
    )
    .unwrap();
    for row in &stats.similarity.replica_histogram {
        assert!(page.body.contains(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td>",
            row.replicas.replace('>', "&#62;"),
            row.pages,
            row.exact
        )));
    }
    let largest = &stats.largest_clusters[0];
    assert!(page.body.contains(&format!(
        "<tr><td>{}</td><td>{}</td><td>{}</td>",
        largest.urls, largest.hosts, largest.ip_addresses
    )));
    assert_eq!(
        stats.duplicates.within_crawls,
        stats.counts.exact_duplicate_pages
    );
    // The stand-ins, read from the fingerprints' file by the server, are
    // those `stats` finds reading them all: the shipped crawl's mirror
    // answering the pages it lacks with one "Page not found".
    assert!(!stats.stand_ins.is_empty());
    for stand_in in &stats.stand_ins {
        assert!(
            page.body.contains(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td>",
                stand_in.urls, stand_in.host, stand_in.title
            )),
            "{stand_in:?}"
        );
    }
}

/// A request with any method, with the response's headers.
async fn request(
    method: actix_web::http::Method,
    path: &str,
) -> (StatusCode, Vec<(String, String)>, String) {
    let state = shipped_state();
    let app =
        test::init_service(App::new().configure(|config| configure(config, state.clone()))).await;
    let response = test::call_service(
        &app,
        test::TestRequest::default()
            .method(method)
            .uri(path)
            .to_request(),
    )
    .await;
    let status = response.status();
    let headers = response
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_string(),
                value.to_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let body = String::from_utf8_lossy(&test::read_body(response).await).into_owned();
    (status, headers, body)
}

fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

/// Issue 34, point 4: no query string is a server error. Queries are
/// generated from the pieces of tantivy's syntax (fields known and unknown,
/// `*`, `:`, operators, quotes, brackets, ranges, boosts) and words; each
/// answers 200 on the results page and the API.
#[actix_web::test]
async fn no_generated_query_is_a_server_error() {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;
    let piece = proptest::prop_oneof![
        proptest::sample::select(vec![
            "title:", "url:", "host:", "text:", "body:", "chrome:", "page:", "id:", "lang:",
        ])
        .prop_map(str::to_string),
        proptest::sample::select(vec![
            "*", "?", ":", "+", "-", "!", "\"", "(", ")", "[", "]", "{", "}", "~", "^", "2",
            " TO ", " AND ", " OR ", " NOT ", "\\", "/", "'", "#", "++", ".", "&", "%", " ", " ",
            ":*", ":* ",
        ])
        .prop_map(str::to_string),
        "[a-z]{1,8}",
        proptest::sample::select(vec!["virtual", "host", "module", "c++", "é", "😀"])
            .prop_map(str::to_string),
    ];
    let query = proptest::collection::vec(piece, 1..8).prop_map(|pieces| pieces.concat());
    let mut runner = TestRunner::deterministic();
    for _ in 0..300 {
        let typed = query.new_tree(&mut runner).unwrap().current();
        let encoded: String = url::form_urlencoded::byte_serialize(typed.as_bytes()).collect();
        for route in ["/search", "/api/search"] {
            let answer = get(&format!("{route}?q={encoded}")).await;
            assert_eq!(
                answer.status,
                StatusCode::OK,
                "{route} {typed:?}: {}",
                answer.body
            );
        }
    }
}

/// Point 1 of issue 18: whatever is typed is searched, never refused.
#[actix_web::test]
async fn any_text_typed_is_searched() {
    let odd = [
        "std::advance",
        "std::vector",
        "CMAKE_CXX_FLAGS:",
        "unbalanced (",
        "a AND",
        "-",
        "\\",
        "\"virtual host",
        "javascript:alert(1)",
        "<script>alert(1)</script>",
        "https://httpd.apache-project.example/docs/2.4/vhosts/",
        "c++",
        "C#",
        "title:",
        ":",
        "((((",
        "))",
        "AND OR NOT",
        "+",
        "+-+-",
        "*",
        "virtual~2",
        "host^",
        "[a TO",
        "{}",
        "'quoted'",
        "%00",
        "😀 emoji",
        "field:value:other",
        "   ",
        // Whether a field exists: tantivy answers it only for fast fields.
        "title:*",
        "url:*",
        "host:*",
        "text:*",
        "page:*",
        "id:*",
        "+title:* -url:*",
        "(body:*)",
    ];
    for query in odd {
        let encoded: String = url::form_urlencoded::byte_serialize(query.as_bytes()).collect();
        for route in ["/search", "/api/search"] {
            let answer = get(&format!("{route}?q={encoded}")).await;
            assert_eq!(
                answer.status,
                StatusCode::OK,
                "{route} {query:?}: {}",
                answer.body
            );
        }
    }
    // Syntax that parses keeps working: a phrase, an exclusion.
    let phrase = get("/api/search?q=%22virtual+host%22").await.json();
    assert_eq!(phrase["lenient"], false);
    assert!(phrase["searched_words"].is_null());
    let lenient = get("/api/search?q=virtual+host+AND").await.json();
    assert!(lenient["total_hits"].as_u64().unwrap() > 0, "{lenient}");
    // A stray quote: the words are searched, and the page says so quietly.
    let quote = get("/search?q=%22virtual+host").await;
    assert!(quote
        .body
        .contains("Showing results for the words <q>virtual host</q>"));
}

/// `c++`, `c#` and `c` are different words of the index.
#[actix_web::test]
async fn languages_with_a_suffix_are_different_terms() {
    assert_eq!(
        mirrorscope::index::query_words("C++ and C# or c"),
        "c++ and c# or c"
    );
    assert_eq!(
        mirrorscope::index::escape_language_suffixes("c++ +must"),
        "c\\+\\+ +must"
    );
}

/// Point 4: an expansion shows ten rows, pages in the URL, never repeats
/// its entry's own page, and ends with Close.
#[actix_web::test]
async fn expansions_are_bounded_and_paged() {
    let answer = get("/api/search?q=module").await.json();
    let group = answer["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|group| group["collection"]["matching_pages"].as_u64().unwrap_or(0) > 12)
        .expect("an entry whose collection has more than 12 matching pages")
        .clone();
    let own = text(&group["page_id"]);
    let more = group["collection"]["matching_pages"].as_u64().unwrap() as usize - 1;
    let first = get(&text(&group["collection"]["href"])).await;
    assert_eq!(count(&first.body, "class=\"expanded-page\""), 10);
    assert!(first.body.contains("class=\"expansion-step\" rel=\"next\""));
    assert!(first.body.contains("class=\"expansion-close\""));
    let mut seen = BTreeSet::new();
    let pages = more.div_ceil(10);
    for page in 1..=pages {
        let answer = get(&format!(
            "{}&page={page}",
            text(&group["collection"]["href"])
        ))
        .await;
        assert_eq!(answer.status, StatusCode::OK);
        for row in answer
            .body
            .split("<li class=\"expanded-page\" data-page=\"")
            .skip(1)
        {
            let id = row.split('"').next().unwrap().to_string();
            assert_ne!(id, own, "the entry's own page is not listed again");
            assert!(seen.insert(id), "no row twice");
        }
    }
    assert_eq!(seen.len(), more, "every other matching page, once");
    // Held open in the search URL, page 2 of it, with a link back.
    let id = text(&group["collection"]["id"]);
    let page = get(&format!("/search?q=module&expand=c{id}p2")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains(&format!("data-expand=\"c{id}p2\"")));
    assert!(page.body.contains("class=\"expansion-step\" rel=\"prev\""));
    // Beyond the last page: the last.
    let beyond = get(&format!("{}&page=999", text(&group["collection"]["href"]))).await;
    assert_eq!(beyond.status, StatusCode::OK);
    assert!(!beyond.body.contains("rel=\"next\""));
}

/// Point 7: counts of entries and time; past the last page goes to the last;
/// singular words for one.
#[actix_web::test]
async fn counts_paging_and_plurals() {
    let json = get("/api/search?q=module").await.json();
    let pages = json["pages"].as_u64().unwrap();
    assert!(json["total_groups"].as_u64().unwrap() > 10);
    assert!(json["took_ms"].as_f64().unwrap() >= 0.0);
    let page = get("/search?q=module").await;
    assert!(page.body.contains(&format!(
        "{} entries for {} matching pages",
        json["total_groups"], json["total_hits"]
    )));
    assert!(page.body.contains(" ms</p>"));
    let (status, headers, _) =
        request(actix_web::http::Method::GET, "/search?q=module&page=999").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(
        header(&headers, "location"),
        Some(format!("/search?q=module&page={pages}").as_str())
    );
    for body in [page.body, get("/").await.body] {
        for wrong in [
            " 1 pages",
            " 1 copies",
            " 1 more matching pages",
            " 1 entries",
            " 1 hosts",
        ] {
            assert!(!body.contains(wrong), "{wrong}");
        }
    }
    // The home page counts what /stats counts.
    let home = get("/").await.body;
    let stats = get("/api/search?q=").await;
    assert_eq!(stats.status, StatusCode::OK);
    let manifest = get("/stats").await.body;
    let clusters = manifest
        .split("pages in ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .to_string();
    assert!(
        home.contains(&format!("{clusters} clusters of copies")),
        "{clusters}"
    );
}

/// Point 11: HEAD on every route, 405 with Allow for other methods, the
/// site's own error page (with its headers) for a path actix cannot decode,
/// and an icon.
#[actix_web::test]
async fn every_route_answers_head_and_names_its_methods() {
    use actix_web::http::Method;
    for path in [
        "/",
        "/search?q=module",
        "/api/search?q=module",
        "/stats",
        "/healthz",
        "/static/style.css",
        "/static/app.js",
        "/favicon.ico",
        "/page/0",
    ] {
        let (status, headers, _) = request(Method::HEAD, path).await;
        assert_eq!(status, StatusCode::OK, "HEAD {path}");
        assert!(header(&headers, "content-security-policy").is_some());
        let (status, headers, body) = request(Method::POST, path).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "POST {path}");
        assert_eq!(header(&headers, "allow"), Some("GET, HEAD"));
        assert!(body.contains("POST is not answered here"));
        assert!(header(&headers, "content-security-policy").is_some());
    }
    let (status, headers, body) = request(Method::GET, "/page/%FF%FE").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(header(&headers, "content-security-policy").is_some());
    assert!(body.contains("there is no page"), "{body}");
    let (status, headers, _) = request(Method::GET, "/favicon.ico").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, "content-type"), Some("image/x-icon"));
}

/// Point 2: on the shipped crawl, no snippet on the first page of ten common
/// queries holds a line the similarity stage set aside as site chrome.
#[actix_web::test]
async fn snippets_hold_no_site_chrome() {
    use mirrorscope::pages::PageId;
    let (store, table, similarity) = shipped_analysis();
    assert!(!similarity.boilerplate.is_empty());
    let mut checked = 0;
    for query in [
        "install",
        "configuration",
        "module",
        "logging",
        "security",
        "proxy",
        "database",
        "template",
        "cache",
        "error",
    ] {
        let answer = get(&format!("/api/search?q={query}")).await.json();
        for group in answer["groups"].as_array().unwrap() {
            let snippet = text(&group["snippet"]);
            let id: u32 = text(&group["page_id"]).parse().unwrap();
            let page = table.page(PageId(id)).unwrap();
            let body = mirrorscope::index::page_text(&store, page).unwrap();
            let (_, chrome) = similarity.split_chrome(&page.title, &body);
            let chrome: BTreeSet<&str> = chrome.lines().map(str::trim).collect();
            // The snippet's lines are joined by " · "; a cut one ends or
            // starts with an ellipsis.
            for line in snippet.split(" · ") {
                let line = line.trim_matches(|c: char| c == '…' || c.is_whitespace());
                assert!(
                    !chrome.contains(line),
                    "{query}: the snippet of {} holds the chrome line {line:?}: {snippet}",
                    page.url
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "snippet lines checked: {checked}");
}

/// Words are looked up in a page's title, own text and URL; site chrome
/// is searched too only when fewer than a results page's worth of pages say
/// them there, and an expansion reads the query as its search did.
#[actix_web::test]
async fn own_text_first_then_chrome_when_it_finds_little() {
    use mirrorscope::search::CHROME_BELOW;

    let common = get("/api/search?q=install").await.json();
    assert_eq!(common["chrome_searched"], false);
    assert!(common["total_hits"].as_u64().unwrap() >= CHROME_BELOW);

    // A word of some site's chrome that few pages say themselves, found
    // on pages of a collection through their chrome.
    let (store, table, similarity) = shipped_analysis();
    let mut tried = BTreeSet::new();
    let mut found = None;
    'pages: for page in table.pages.iter().step_by(7) {
        let Some(body) = mirrorscope::index::page_text(&store, page) else {
            continue;
        };
        let (_, chrome) = similarity.split_chrome(&page.title, &body);
        for word in mirrorscope::index::query_words(&chrome).split(' ') {
            if tried.len() >= 400 {
                break 'pages;
            }
            let plain = word.len() >= 4 && word.chars().all(|c| c.is_ascii_lowercase());
            if !plain || !tried.insert(word.to_string()) {
                continue;
            }
            let answer = get(&format!("/api/search?q={word}")).await.json();
            let expandable = answer["groups"]
                .as_array()
                .unwrap()
                .iter()
                .find(|group| group["collection"]["matching_pages"].as_u64().unwrap_or(0) > 1);
            if answer["chrome_searched"] == true {
                if let Some(group) = expandable {
                    found = Some((word.to_string(), group.clone()));
                    break 'pages;
                }
            }
        }
    }
    let (word, group) = found.expect("a chrome word of the shipped crawl found through chrome");
    let page = get(&format!("/search?q={word}")).await;
    assert!(
        page.body
            .contains("site menus and footers were searched too"),
        "{word}"
    );
    // The Collection expansion lists the pages its link counts, read the
    // same way (with chrome).
    let matching = group["collection"]["matching_pages"].as_u64().unwrap() as usize;
    let collection = get(&text(&group["collection"]["href"])).await;
    assert_eq!(
        count(&collection.body, "class=\"expanded-page\""),
        (matching - 1).min(10),
        "{word}"
    );
}

/// Sends one raw request to a running server; returns the status line, the
/// head and the body (read to the end: the request asks to close).
fn raw_exchange(base: &str, request: &[u8]) -> (String, String, String) {
    use std::io::{Read, Write};
    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    // The server may answer and close before it has read all of a long
    // request: a failed write is part of what is tested.
    let _ = stream.write_all(request);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.lines().next().unwrap_or_default().to_string();
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// Point 11 over a real socket: a long request line that actix reads gets
/// the site's own page with its headers. Before any of the site's code
/// runs, actix refuses a request target the `http` crate cannot hold (64
/// KiB: 400) and a request head over its buffer (128 KiB: 431), both with
/// no body, so nothing is rendered that headers would have to guard; the
/// server goes on serving.
#[actix_web::test]
async fn long_request_lines_get_an_answer_and_the_server_goes_on() {
    let (_server, base) = common::serve(shipped_data());
    let long_query = "a".repeat(60 * 1024);
    let (status, head, body) = raw_exchange(
        &base,
        format!("GET /search?q={long_query} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    );
    assert!(status.contains(" 400 "), "{status}");
    assert!(head.contains("content-security-policy:"), "{head}");
    assert!(body.contains("longer than 1000 bytes"), "{body}");

    for (kilobytes, refused) in [(70, " 400 "), (200, " 431 ")] {
        let path = "b".repeat(kilobytes * 1024);
        let (status, _, body) = raw_exchange(
            &base,
            format!("GET /{path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        );
        // A server that closes before reading all may reset the connection
        // before its answer is read: no status line.
        assert!(status.is_empty() || status.contains(refused), "{status}");
        assert!(body.is_empty(), "{body}");
    }

    let (status, _, body) = raw_exchange(
        &base,
        b"GET /search?q=module HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(status.contains(" 200 "), "{status}");
    assert!(body.contains("class=\"result\""));
}

/// Issue 19, point 7: `serve` on an empty data folder while another writer
/// holds its lock waits, saying so, and indexes the shipped crawl once the
/// lock is free (or serves the generation the writer made).
#[actix_web::test]
async fn serve_waits_for_a_writer_that_holds_the_lock() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let folder = mirrorscope::datadir::DataDir::open(&data).unwrap();
    let lock = folder.lock_for_writing().unwrap();
    let child = common::serve_command(&data)
        .env("MIRRORSCOPE_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut server = common::Running(child);
    // The message comes while the lock is held, and the server keeps waiting.
    let mut stderr = BufReader::new(server.0.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "serve exited");
        if line.contains("is held by another `mirrorscope index`; waiting") {
            break;
        }
    }
    // Whatever else it logs must not fill the pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert!(server.0.try_wait().unwrap().is_none(), "serve gave up");
    drop(lock);
    let stdout = server.0.stdout.take().unwrap();
    let mut first = String::new();
    BufReader::new(stdout).read_line(&mut first).unwrap();
    assert!(
        first.starts_with("mirrorscope: serving http://127.0.0.1:"),
        "{first:?}"
    );
}
