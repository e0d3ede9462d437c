//! The route handlers. Each parses its input, runs the engine on the search
//! pool, and renders a view; failures become [`AppError`] pages.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use super::api::ApiResults;
use super::error::{ApiError, AppError};
use super::links;
use super::params::{Expanded, Params, Target};
use super::state::AppState;
use super::views::{
    CollectionPage, Entry, ErrorPage, Expansion, ExpansionNav, FacetGroup, FacetLink, HomePage,
    HostPage, PagePage, Pager, ReplicasPage, SearchPage, SitePage, StatsPage, Step,
};
use crate::collections::{ClusterId, CollectionId};
use crate::pages::{HostId, PageId};
use crate::search::{self, Engine, FacetValue, Filters, Paging, Rank, Results, SearchRequest};

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
        trivial_clusters: manifest.similarity.trivial_clusters,
        collection_clusters: manifest.collections.collection_clusters,
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
    search_href_for(&request.query, &request.filters, page, rollup, rank, expand)
}

fn search_href_for(
    query: &str,
    filters: &Filters,
    page: usize,
    rollup: bool,
    rank: Rank,
    expand: &[String],
) -> String {
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    serializer.append_pair("q", query);
    if let Some(manual) = filters.manual {
        serializer.append_pair("manual", &manual.to_string());
    }
    if let Some(version) = &filters.version {
        serializer.append_pair("version", version);
    }
    if let Some(host) = &filters.host {
        serializer.append_pair("host", host);
    }
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

/// The facets of a results page, each value a link that applies it (or,
/// applied, removes it); none for the flat list, or when no facet has a
/// choice to make.
fn facet_links(request: &SearchRequest, results: &Results) -> Vec<FacetGroup> {
    if !request.rollup || results.total_groups == 0 {
        return Vec::new();
    }
    let link = |value: &FacetValue, with: &dyn Fn(&mut Filters, Option<String>)| {
        let mut filters = request.filters.clone();
        with(&mut filters, (!value.applied).then(|| value.value.clone()));
        FacetLink {
            label: value.label.clone(),
            entries: value.entries,
            applied: value.applied,
            href: search_href_for(
                &request.query,
                &filters,
                1,
                request.rollup,
                request.rank,
                &[],
            ),
        }
    };
    let group = |name: &'static str,
                 param: &'static str,
                 values: &[FacetValue],
                 with: &dyn Fn(&mut Filters, Option<String>)| FacetGroup {
        name,
        param,
        values: values.iter().map(|value| link(value, with)).collect(),
    };
    let facets = &results.facets;
    [
        group("Manual", "manual", &facets.manual, &|filters, value| {
            filters.manual = value.and_then(|value| value.parse().ok());
            filters.version = None;
        }),
        group("Version", "version", &facets.version, &|filters, value| {
            filters.version = value;
        }),
        group("Host", "host", &facets.host, &|filters, value| {
            filters.host = value;
        }),
    ]
    .into_iter()
    .filter(|group| group.values.len() > 1 || group.values.iter().any(|value| value.applied))
    .collect()
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

/// An expansion's own page: its route with `q`, `page` and what it needs.
fn expansion_src(target: Target, query: &str, page: usize, exclude: &[String]) -> String {
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    serializer.append_pair("q", query);
    let path = match target {
        Target::Collection(id) => format!("/collection/{id}"),
        Target::Replicas(id, hit) => {
            if let Some(hit) = hit {
                serializer.append_pair("hit", &hit.to_string());
            }
            format!("/replicas/{id}")
        }
        Target::Site(host) => format!("/site/{host}"),
    };
    if page > 1 {
        serializer.append_pair("page", &page.to_string());
    }
    if !exclude.is_empty() {
        serializer.append_pair("not", &exclude.join(","));
    }
    format!("{path}?{}", serializer.finish())
}

/// Previous, next and close of an expansion; `href` gives where a link to
/// another state of it goes without the script (`None`: closed).
fn expansion_nav(
    expanded: Expanded,
    paging: &Paging,
    query: &str,
    exclude: &[String],
    href: impl Fn(Option<Expanded>) -> String,
) -> ExpansionNav {
    let step = |page: usize| {
        let moved = Expanded {
            target: expanded.target,
            page,
        };
        Step {
            href: href(Some(moved)),
            src: expansion_src(expanded.target, query, page, exclude),
            token: moved.token(),
        }
    };
    ExpansionNav {
        token: Expanded {
            target: expanded.target,
            page: paging.page,
        }
        .token(),
        previous: paging.has_previous().then(|| step(paging.page - 1)),
        next: paging.has_next().then(|| step(paging.page + 1)),
        close: href(None),
        heading: 3,
    }
}

/// Builds the entries of a results page, with the expansions `open` names
/// rendered under the entries they belong to.
fn entries(
    engine: &Engine,
    request: &SearchRequest,
    results: &Results,
    open: &[Expanded],
) -> Result<Vec<Entry>, AppError> {
    // The results page with `expanded`'s token replaced by `now` (removed
    // when `None`).
    let href = |expanded: Expanded, now: Option<Expanded>| {
        let expand: Vec<String> = open
            .iter()
            .filter_map(|other| {
                if other.target == expanded.target {
                    now.map(|now| now.token())
                } else {
                    Some(other.token())
                }
            })
            .collect();
        search_href(request, results.page, request.rollup, request.rank, &expand)
    };
    let mut entries = Vec::with_capacity(results.groups.len());
    for group in &results.groups {
        let page = Some(group.page_id);
        let collection = group
            .collection
            .as_ref()
            .map(|link| Target::Collection(link.id));
        let replicas = group
            .replicas
            .as_ref()
            .map(|link| Target::Replicas(link.cluster, page));
        let site = group.site.as_ref().map(|link| Target::Site(link.host_id));
        let mut expansions = Vec::new();
        for &expanded in open {
            let target = Some(expanded.target);
            let query = &results.query;
            if target == collection {
                if let Target::Collection(id) = expanded.target {
                    let view = engine.collection(id, query, expanded.page, page)?;
                    let exclude: Vec<String> = view.excluded.iter().cloned().collect();
                    let nav = expansion_nav(expanded, &view.paging, query, &exclude, |now| {
                        href(expanded, now)
                    });
                    expansions.push((Expansion::Collection(view), nav));
                }
            } else if target == replicas {
                if let Target::Replicas(id, hit) = expanded.target {
                    let view = engine.replicas(id, query, hit, expanded.page)?;
                    let nav = expansion_nav(expanded, &view.paging, query, &[], |now| {
                        href(expanded, now)
                    });
                    expansions.push((Expansion::Replicas(view), nav));
                }
            } else if target == site {
                if let (Target::Site(host), Some(link)) = (expanded.target, &group.site) {
                    let view = engine.site(host, query, expanded.page, &link.shown)?;
                    let shown: Vec<String> = link.shown.iter().map(ToString::to_string).collect();
                    let nav = expansion_nav(expanded, &view.paging, query, &shown, |now| {
                        href(expanded, now)
                    });
                    expansions.push((Expansion::Site(view), nav));
                }
            }
        }
        let stored_href = stored_href(group.page_id, &results.query);
        let query = results.query.as_str();
        entries.push(Entry {
            collection_href: group
                .collection
                .as_ref()
                .map(|link| links::collection(link, query)),
            replica_href: group
                .replicas
                .as_ref()
                .map(|link| links::replicas(link, query)),
            site_href: group.site.as_ref().map(|link| links::site(link, query)),
            title_href: group.link.clone().unwrap_or_else(|| stored_href.clone()),
            stored_href,
            group: group.clone(),
            collection_token: collection.map(|target| target.token()),
            replica_token: replicas.map(|target| target.token()),
            site_token: site.map(|target| target.token()),
            other_versions: group
                .other_versions
                .iter()
                .map(|version| {
                    let asked = asking_for_version(query, version);
                    let filters = Filters {
                        version: None,
                        ..request.filters.clone()
                    };
                    let href =
                        search_href_for(&asked, &filters, 1, request.rollup, request.rank, &[]);
                    (version.clone(), href)
                })
                .collect(),
            open: expansions,
        });
    }
    Ok(entries)
}

/// The query asking for `version` instead of any version it names.
fn asking_for_version(query: &str, version: &str) -> String {
    let mut words: Vec<&str> = query
        .split_whitespace()
        .filter(|word| crate::corpus::html::version_strings(word).is_empty())
        .collect();
    words.push(version);
    words.join(" ")
}

/// A page's stored copy, with the query whose words it marks.
fn stored_href(page_id: PageId, query: &str) -> String {
    if query.trim().is_empty() {
        return format!("/page/{page_id}");
    }
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    serializer.append_pair("q", query);
    format!("/page/{page_id}?{}", serializer.finish())
}

pub async fn search(state: web::Data<AppState>, http: HttpRequest) -> Html {
    let params = Params::parse(http.query_string());
    // No words: the home page, with its examples, not an empty result.
    if params.q.trim().is_empty() {
        return home(state).await;
    }
    let request = params.search_request()?;
    let open = params.expanded()?;
    let engine = state.engine();
    let page = state
        .pool()
        .run(move || -> Result<Result<SearchPage, String>, AppError> {
            let results = engine.search(&request)?;
            if results.page > results.pages && results.pages > 0 {
                // Past the last page: go to the last one.
                return Ok(Err(search_href(
                    &request,
                    results.pages,
                    request.rollup,
                    request.rank,
                    &[],
                )));
            }
            let entries = entries(&engine, &request, &results, &open)?;
            let expand: Vec<String> = open.iter().map(Expanded::token).collect();
            Ok(Ok(SearchPage {
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
                suggestion_href: results.suggestion.as_ref().map(|suggestion| {
                    search_href_for(
                        suggestion,
                        &request.filters,
                        1,
                        request.rollup,
                        request.rank,
                        &[],
                    )
                }),
                as_typed_href: results.showing_for.as_ref().map(|_| {
                    format!(
                        "{}&as_typed=1",
                        search_href_for(
                            &request.query,
                            &request.filters,
                            1,
                            request.rollup,
                            request.rank,
                            &[]
                        )
                    )
                }),
                facets: facet_links(&request, &results),
                results,
                entries,
            }))
        })
        .await??;
    match page {
        Ok(page) => render(&page),
        Err(last) => Ok(super::with_headers(HttpResponse::SeeOther())
            .insert_header((actix_web::http::header::LOCATION, last))
            .finish()),
    }
}

pub async fn api_search(
    state: web::Data<AppState>,
    http: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let params = Params::parse(http.query_string());
    let request = params.search_request()?;
    let engine = state.engine();
    let results = state.pool().run(move || engine.search(&request)).await??;
    Ok(super::with_headers(HttpResponse::Ok()).json(ApiResults::of(&results)))
}

/// The results page an expansion's own page goes back to.
fn back_to_results(query: &str) -> String {
    search_href_for(query, &Filters::default(), 1, true, Rank::Relevance, &[])
}

/// A route's `{name}` segment as sent (still percent-encoded): a malformed
/// one is then refused by the id's own parser with the site's 404 page.
fn segment<'r>(http: &'r HttpRequest, name: &str) -> &'r str {
    http.match_info().query(name)
}

pub async fn collection(state: web::Data<AppState>, http: HttpRequest) -> Html {
    let path = segment(&http, "id");
    let id = path
        .parse::<CollectionId>()
        .ok()
        .ok_or_else(|| AppError::NotFound(format!("there is no collection {path:?}")))?;
    let params = Params::parse(http.query_string());
    let page = params.expansion_page()?;
    let exclude = params.excluded()?;
    let engine = state.engine();
    let view = state
        .pool()
        .run(move || engine.collection(id, &params.q, page, exclude.first().copied()))
        .await??;
    let expanded = Expanded::first(Target::Collection(id));
    let exclude: Vec<String> = view.excluded.iter().cloned().collect();
    let nav = standalone_nav(expanded, &view.paging, &view.query, &exclude);
    let replicas_href = view
        .replicas
        .as_ref()
        .map(|link| links::replicas(link, &view.query));
    render(&CollectionPage {
        view,
        nav,
        replicas_href,
    })
}

/// The controls of an expansion on its own page: its other pages, and back
/// to the results.
fn standalone_nav(
    expanded: Expanded,
    paging: &Paging,
    query: &str,
    exclude: &[String],
) -> ExpansionNav {
    let mut nav = expansion_nav(expanded, paging, query, exclude, |now| match now {
        Some(now) => expansion_src(now.target, query, now.page, exclude),
        None => back_to_results(query),
    });
    nav.heading = 2;
    nav
}

pub async fn replicas(state: web::Data<AppState>, http: HttpRequest) -> Html {
    let path = segment(&http, "cluster");
    let id = path
        .parse::<ClusterId>()
        .ok()
        .ok_or_else(|| AppError::NotFound(format!("there is no cluster {path:?}")))?;
    let params = Params::parse(http.query_string());
    let hit = params.hit()?;
    let page = params.expansion_page()?;
    let engine = state.engine();
    let view = state
        .pool()
        .run(move || engine.replicas(id, &params.q, hit, page))
        .await??;
    let nav = standalone_nav(
        Expanded::first(Target::Replicas(id, hit)),
        &view.paging,
        &view.query,
        &[],
    );
    render(&ReplicasPage { view, nav })
}

pub async fn site(state: web::Data<AppState>, http: HttpRequest) -> Html {
    let path = segment(&http, "host");
    let host = path
        .parse::<HostId>()
        .ok()
        .ok_or_else(|| AppError::NotFound(format!("there is no host {path:?}")))?;
    let params = Params::parse(http.query_string());
    let page = params.expansion_page()?;
    let exclude = params.excluded()?;
    let engine = state.engine();
    let view = state
        .pool()
        .run(move || engine.site(host, &params.q, page, &exclude))
        .await??;
    let nav = standalone_nav(
        Expanded::first(Target::Site(host)),
        &view.paging,
        &view.query,
        &view.excluded,
    );
    render(&SitePage { view, nav })
}

pub async fn page(state: web::Data<AppState>, http: HttpRequest) -> Html {
    let path = segment(&http, "id");
    let id = path
        .parse::<PageId>()
        .ok()
        .ok_or_else(|| AppError::NotFound(format!("there is no page {path:?}")))?;
    let params = Params::parse(http.query_string());
    let engine = state.engine();
    let query = params.q.clone();
    let view = state
        .pool()
        .run(move || engine.page(id, &params.q))
        .await??;
    render(&PagePage { view, query })
}

pub async fn host(state: web::Data<AppState>, http: HttpRequest) -> Html {
    let raw = segment(&http, "name");
    let name = percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| AppError::NotFound(format!("there is no host {raw:?}")))?
        .to_ascii_lowercase();
    if !search::is_host_name(&name) {
        return Err(AppError::NotFound(format!("there is no host {name:?}")));
    }
    let engine = state.engine();
    let view = state.pool().run(move || engine.host(&name)).await??;
    render(&HostPage { view })
}

pub async fn stats(state: web::Data<AppState>) -> Html {
    let engine = state.engine();
    let stats = state.pool().run(move || engine.stats()).await??;
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

/// The site's icon: the brand's two letters' colour as a 16-pixel square.
pub async fn favicon() -> HttpResponse {
    super::with_headers(HttpResponse::Ok())
        .content_type("image/x-icon")
        .insert_header(("Cache-Control", "public, max-age=86400"))
        .body(&include_bytes!("../../static/favicon.ico")[..])
}

/// Any method but GET and HEAD.
pub async fn method_not_allowed(http: HttpRequest) -> HttpResponse {
    let page = ErrorPage {
        status: 405,
        title: "Method not allowed".into(),
        message: format!(
            "{} is not answered here; this site answers {}",
            http.method(),
            super::ALLOWED_METHODS
        ),
        query: String::new(),
    };
    let mut response = match page.render() {
        Ok(body) => super::html(StatusCode::METHOD_NOT_ALLOWED, body),
        Err(_) => super::with_headers(HttpResponse::MethodNotAllowed()).finish(),
    };
    response.headers_mut().insert(
        actix_web::http::header::ALLOW,
        actix_web::http::header::HeaderValue::from_static(super::ALLOWED_METHODS),
    );
    response
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
