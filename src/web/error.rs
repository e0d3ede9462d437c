//! The site's errors: a friendly page (or JSON for the API) with the right
//! status; the query and every other input are escaped by the templates.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use askama::Template;
use serde::Serialize;

use super::pool::PoolError;
use super::views::ErrorPage;
use crate::search::SearchError;

/// What went wrong with a request.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// A parameter out of its range or malformed.
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    NotFound(String),
    #[error(transparent)]
    Pool(#[from] PoolError),
    #[error("{0}")]
    Internal(String),
}

impl From<SearchError> for AppError {
    fn from(error: SearchError) -> AppError {
        match error {
            SearchError::BadRequest(detail) => AppError::BadRequest(detail),
            SearchError::NotFound(detail) => AppError::NotFound(detail),
            other => {
                tracing::error!(error = %other, "search failed");
                AppError::Internal("the search failed; the server log says why".into())
            }
        }
    }
}

impl AppError {
    fn status(&self) -> StatusCode {
        match self {
            AppError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AppError::NotFound(_) => StatusCode::NOT_FOUND,
            AppError::Pool(PoolError::Busy) => StatusCode::SERVICE_UNAVAILABLE,
            AppError::Pool(PoolError::Failed) | AppError::Internal(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }

    fn page(&self) -> ErrorPage {
        let status = self.status();
        let (title, message, query) = match self {
            AppError::NotFound(detail) => ("Not found".into(), detail.clone(), String::new()),
            other => (
                status.canonical_reason().unwrap_or("Error").to_string(),
                other.to_string(),
                String::new(),
            ),
        };
        ErrorPage {
            status: status.as_u16(),
            title,
            message,
            query,
        }
    }
}

impl ResponseError for AppError {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    fn error_response(&self) -> HttpResponse {
        let page = self.page();
        match page.render() {
            Ok(body) => super::html(self.status(), body),
            Err(error) => {
                tracing::error!(%error, "cannot render the error page");
                super::with_headers(HttpResponse::build(self.status()))
                    .content_type("text/plain; charset=utf-8")
                    .body(page.message)
            }
        }
    }
}

/// An error of the JSON API: `{"error": "…", "status": 400}`.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ApiError(#[from] pub AppError);

impl From<SearchError> for ApiError {
    fn from(error: SearchError) -> ApiError {
        ApiError(error.into())
    }
}

impl From<PoolError> for ApiError {
    fn from(error: PoolError) -> ApiError {
        ApiError(error.into())
    }
}

#[derive(Serialize)]
struct ErrorBody {
    error: String,
    status: u16,
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.0.status()
    }

    fn error_response(&self) -> HttpResponse {
        super::with_headers(HttpResponse::build(self.0.status())).json(ErrorBody {
            error: self.0.to_string(),
            status: self.0.status().as_u16(),
        })
    }
}
