//! The route handlers. Each parses its input, runs the engine on the search
//! pool, and renders a view; failures become [`AppError`] pages.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use super::error::{ApiError, AppError};
use super::params::{Expanded, Params};
use super::state::AppState;
use super::views::{
    CollectionPage, Entry, ErrorPage, Expansion, HomePage, HostPage, PagePage, Pager, ReplicasPage,
    SearchPage, StatsPage,
};
use crate::search::{self, Engine, Rank, Results, SearchRequest};

type Html = Result<HttpResponse, AppError>;

fn render(template: &impl Template) -> Html {
    template
        .render()
        .map(|body| super::html(StatusCode::OK, body))
        .map_err(|error| AppError::Internal(format!("cannot render the page: {error}")))
}

/// Words that find replicated collections on the shipped crawl; on another
/// crawl, the titles of its largest clusters' principal roots.
fn examples(engine: &Engine) -> Vec<String> {
    let collections = engine.collections();
    collections
        .clusters
        .iter()
        .filter(|cluster| cluster.kind == crate::collections::ClusterKind::Collection)
        .take(4)
        .filter_map(|cluster| {
            let collection = collections.collection(cluster.principal())?;
            let title = &engine.table().page(collection.root)?.title;
            let words: Vec<&str> = title.split_whitespace().take(3).collect();
            (!words.is_empty()).then(|| words.join(" "))
        })
        .collect()
}

pub async fn home(state: web::Data<AppState>) -> Html {
    let engine = state.engine();
    let manifest = engine.manifest();
    render(&HomePage {
        generation: engine.generation().to_string(),
        pages: manifest.counts.pages,
        hosts: manifest.counts.hosts,
        clusters: manifest.collections.clusters,
        collections: manifest.collections.collections,
        examples: examples(&engine),
    })
}

/// `/search?…` with some parameters replaced.
fn search_href(
    request: &SearchRequest,
    page: usize,
    rollup: bool,
    rank: Rank,
    expand: &[String],
) -> String {
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    serializer.append_pair("q", &request.query);
    if page > 1 {
        serializer.append_pair("page", &page.to_string());
    }
    if !rollup {
        serializer.append_pair("rollup", "off");
    }
    if rank == Rank::Replication {
        serializer.append_pair("rank", "replication");
    }
    if !expand.is_empty() {
        serializer.append_pair("expand", &expand.join(","));
    }
    format!("/search?{}", serializer.finish())
}

fn pager(request: &SearchRequest, results: &Results) -> Pager {
    let href = |page: usize| search_href(request, page, request.rollup, request.rank, &[]);
    let first = results.page.saturating_sub(4).max(1);
    let last = (first + 9).min(results.pages);
    Pager {
        previous: (results.page > 1).then(|| href(results.page - 1)),
        next: (results.page < results.pages).then(|| href(results.page + 1)),
        numbered: (first..=last)
            .map(|page| (page, href(page), page == results.page))
            .collect(),
    }
}

/// Builds the entries of a results page, with the expansions `open` names
/// rendered under the entries they belong to.
fn entries(engine: &Engine, results: &Results, open: &[Expanded]) -> Result<Vec<Entry>, AppError> {
    let mut entries = Vec::with_capacity(results.groups.len());
    for group in &results.groups {
        let collection = group
            .collection
            .as_ref()
            .and_then(|link| search::parse_collection_id(&link.id));
        let replicas = group.replicas.as_ref().and_then(|link| {
            let cluster = search::parse_cluster_id(&link.cluster)?;
            Some(Expanded::Replicas(
                cluster,
                search::parse_page_id(&group.page_id),
            ))
        });
        let collection = collection.map(Expanded::Collection);
        let mut expansions = Vec::new();
        for expanded in open {
            if Some(*expanded) == collection {
                if let Expanded::Collection(id) = expanded {
                    let view = engine.collection(*id, &results.query)?;
                    expansions.push((expanded.token(), Expansion::Collection(view)));
                }
            } else if Some(*expanded) == replicas {
                if let Expanded::Replicas(id, hit) = expanded {
                    let view = engine.replicas(*id, &results.query, *hit)?;
                    expansions.push((expanded.token(), Expansion::Replicas(view)));
                }
            }
        }
        entries.push(Entry {
            group: group.clone(),
            collection_token: collection.map(|expanded| expanded.token()),
            replica_token: replicas.map(|expanded| expanded.token()),
            open: expansions,
        });
    }
    Ok(entries)
}

pub async fn search(state: web::Data<AppState>, http: HttpRequest) -> Html {
    let params = Params::parse(http.query_string());
    let request = params.search_request()?;
    let open = params.expanded()?;
    let engine = state.engine();
    let page = state
        .pool()
        .run(move || -> Result<SearchPage, AppError> {
            let results = engine.search(&request)?;
            let entries = entries(&engine, &results, &open)?;
            let expand: Vec<String> = open.iter().map(Expanded::token).collect();
            Ok(SearchPage {
                pager: pager(&request, &results),
                toggle_rollup: search_href(&request, 1, !request.rollup, request.rank, &[]),
                toggle_rank: search_href(
                    &request,
                    1,
                    request.rollup,
                    match request.rank {
                        Rank::Relevance => Rank::Replication,
                        Rank::Replication => Rank::Relevance,
                    },
                    &expand,
                ),
                results,
                entries,
            })
        })
        .await??;
    render(&page)
}

pub async fn api_search(
    state: web::Data<AppState>,
    http: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let params = Params::parse(http.query_string());
    let request = params.search_request()?;
    let engine = state.engine();
    let results = state.pool().run(move || engine.search(&request)).await??;
    Ok(super::with_headers(HttpResponse::Ok()).json(results))
}

pub async fn collection(
    state: web::Data<AppState>,
    path: web::Path<String>,
    http: HttpRequest,
) -> Html {
    let id = search::parse_collection_id(&path)
        .ok_or_else(|| AppError::NotFound(format!("there is no collection {:?}", path.as_str())))?;
    let params = Params::parse(http.query_string());
    let engine = state.engine();
    let view = state
        .pool()
        .run(move || engine.collection(id, &params.q))
        .await??;
    render(&CollectionPage { view })
}

pub async fn replicas(
    state: web::Data<AppState>,
    path: web::Path<String>,
    http: HttpRequest,
) -> Html {
    let id = search::parse_cluster_id(&path)
        .ok_or_else(|| AppError::NotFound(format!("there is no cluster {:?}", path.as_str())))?;
    let params = Params::parse(http.query_string());
    let hit = params.hit()?;
    let engine = state.engine();
    let view = state
        .pool()
        .run(move || engine.replicas(id, &params.q, hit))
        .await??;
    render(&ReplicasPage { view })
}

pub async fn page(state: web::Data<AppState>, path: web::Path<String>) -> Html {
    let id = search::parse_page_id(&path)
        .ok_or_else(|| AppError::NotFound(format!("there is no page {:?}", path.as_str())))?;
    let engine = state.engine();
    let view = state.pool().run(move || engine.page(id)).await??;
    render(&PagePage { view })
}

pub async fn host(state: web::Data<AppState>, path: web::Path<String>) -> Html {
    let name = path.into_inner();
    if !search::is_host_name(&name) {
        return Err(AppError::NotFound(format!("there is no host {name:?}")));
    }
    let engine = state.engine();
    let view = state.pool().run(move || engine.host(&name)).await??;
    render(&HostPage { view })
}

pub async fn stats(state: web::Data<AppState>) -> Html {
    let engine = state.engine();
    let stats = state.pool().run(move || engine.stats()).await?;
    render(&StatsPage::new(stats))
}

pub async fn healthz(state: web::Data<AppState>) -> HttpResponse {
    super::with_headers(HttpResponse::Ok())
        .content_type("text/plain; charset=utf-8")
        .body(format!("ok {}\n", state.engine().generation()))
}

fn asset(content_type: &str, body: &'static str) -> HttpResponse {
    super::with_headers(HttpResponse::Ok())
        .content_type(content_type)
        .insert_header(("Cache-Control", "public, max-age=3600"))
        .body(body)
}

pub async fn stylesheet() -> HttpResponse {
    asset(
        "text/css; charset=utf-8",
        include_str!("../../static/style.css"),
    )
}

pub async fn script() -> HttpResponse {
    asset(
        "text/javascript; charset=utf-8",
        include_str!("../../static/app.js"),
    )
}

pub async fn not_found(http: HttpRequest) -> HttpResponse {
    let page = ErrorPage {
        status: 404,
        title: "Not found".into(),
        message: format!("there is nothing at {}", http.path()),
        query: String::new(),
    };
    match page.render() {
        Ok(body) => super::html(StatusCode::NOT_FOUND, body),
        Err(_) => super::with_headers(HttpResponse::NotFound()).finish(),
    }
}
