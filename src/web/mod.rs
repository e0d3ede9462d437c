//! The search site: actix-web routes and askama views over a
//! [`crate::search::Engine`].
//!
//! Routes (DESIGN.md): `/`, `/search`, `/collection/{id}`,
//! `/replicas/{cluster}`, `/page/{id}`, `/api/search`, `/healthz`, and the
//! stylesheet and script under `/static/`. All are built by [`configure`],
//! which the server and the tests share. Searches run on a bounded
//! [`SearchPool`], never on the async workers. Every response carries a strict
//! Content-Security-Policy: only this site's own stylesheet and script run.

mod api;
mod charts;
mod error;
pub mod links;
mod params;
mod pool;
mod routes;
mod state;
mod views;

use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{web, App, HttpResponse, HttpResponseBuilder, HttpServer};

pub use error::{ApiError, AppError};
pub use params::{Expanded, Params};
pub use pool::{PoolError, SearchPool};
pub use state::{AppState, Settings};
pub use views::plural;

/// The policy every response carries: nothing but this site's own style,
/// script and requests; no frames, no plugins, no form posts elsewhere.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Adds the security headers to a response.
pub(crate) fn with_headers(mut builder: HttpResponseBuilder) -> HttpResponseBuilder {
    builder
        .insert_header(("Content-Security-Policy", CONTENT_SECURITY_POLICY))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header(("Referrer-Policy", "no-referrer"))
        .insert_header(("X-Frame-Options", "DENY"));
    builder
}

/// An HTML response.
pub(crate) fn html(status: StatusCode, body: String) -> HttpResponse {
    with_headers(HttpResponse::build(status))
        .content_type("text/html; charset=utf-8")
        .body(body)
}

/// Registers the state and every route. Each answers GET and HEAD; any
/// other method gets 405 with `Allow`.
pub fn configure(config: &mut web::ServiceConfig, state: web::Data<AppState>) {
    config.app_data(state);
    route(config, "/", routes::home);
    route(config, "/search", routes::search);
    route(config, "/api/search", routes::api_search);
    route(config, "/collection/{id}", routes::collection);
    route(config, "/replicas/{cluster}", routes::replicas);
    route(config, "/site/{host}", routes::site);
    route(config, "/page/{id}", routes::page);
    route(config, "/host/{name}", routes::host);
    route(config, "/stats", routes::stats);
    route(config, "/healthz", routes::healthz);
    route(config, "/static/style.css", routes::stylesheet);
    route(config, "/static/app.js", routes::script);
    route(config, "/favicon.ico", routes::favicon);
    config.default_service(web::to(routes::not_found));
}

/// The methods every route answers.
pub const ALLOWED_METHODS: &str = "GET, HEAD";

fn route<F, Args>(config: &mut web::ServiceConfig, path: &str, handler: F)
where
    F: actix_web::Handler<Args> + Clone,
    Args: actix_web::FromRequest + 'static,
    F::Output: actix_web::Responder + 'static,
{
    config.service(
        web::resource(path)
            .route(web::get().to(handler.clone()))
            .route(web::head().to(handler))
            .default_service(web::to(routes::method_not_allowed)),
    );
}

/// How `serve` runs.
#[derive(Clone)]
pub struct ServeOptions {
    pub data: PathBuf,
    /// Address to listen on (`127.0.0.1:8080`; port 0 picks a free one).
    pub bind: String,
    /// How often to look for a new generation.
    pub reload_every: Duration,
    /// HTTP worker threads (the async side; searches run on the pool).
    pub workers: usize,
    /// Where the search and store settings come from (`config.json`, read
    /// again with each generation: see [`Settings`]).
    pub settings: Settings,
}

/// Errors of starting the server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Search(#[from] crate::search::SearchError),
    #[error(transparent)]
    Data(#[from] crate::generation::DataError),
    /// The data folder's settings could not be read.
    #[error("{0}")]
    Settings(Box<dyn std::error::Error + Send + Sync>),
    #[error("cannot listen on {address}: {source}")]
    Bind {
        address: String,
        source: std::io::Error,
    },
    #[error("the server stopped: {0}")]
    Run(std::io::Error),
}

/// Serves the site until interrupted: indexes the shipped crawl first when
/// the data directory has no index yet, picks up new generations as `index`
/// writes them. `on_listening` is told the address once it listens.
pub fn serve(
    options: &ServeOptions,
    on_listening: impl FnOnce(std::net::SocketAddr),
) -> Result<(), ServeError> {
    let state = web::Data::new(AppState::open(&options.data, options.settings.clone())?);
    tracing::info!(
        generation = state.engine().generation(),
        search_threads = state.pool().threads(),
        "index loaded"
    );
    let listener = TcpListener::bind(&options.bind).map_err(|source| ServeError::Bind {
        address: options.bind.clone(),
        source,
    })?;
    let address = listener.local_addr().map_err(|source| ServeError::Bind {
        address: options.bind.clone(),
        source,
    })?;

    let watcher = state.clone();
    let every = options.reload_every;
    std::thread::Builder::new()
        .name("generation-watcher".into())
        .spawn(move || loop {
            std::thread::sleep(every);
            if let Err(error) = watcher.reload_if_changed() {
                tracing::warn!(%error, "cannot load the new generation; still serving the previous one");
            }
        })
        .map_err(ServeError::Run)?;

    let workers = options.workers.max(1);
    actix_web::rt::System::new().block_on(async move {
        let server = HttpServer::new(move || {
            let state = state.clone();
            App::new().configure(move |config| configure(config, state))
        })
        .workers(workers)
        .listen(listener)
        .map_err(|source| ServeError::Bind {
            address: address.to_string(),
            source,
        })?
        .run();
        on_listening(address);
        server.await.map_err(ServeError::Run)
    })
}
