//! The errors of the API: an HTTP status and a JSON body
//! `{"error": {"kind", "message", "line"?}}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

/// Why a request was refused or a run failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A short name of the kind of error (`bad_input`, `forbidden`,
    /// `not_found`, `simulation`, `cancelled`, `time_limit`, `busy`, …).
    pub kind: &'static str,
    /// The message (for a scenario: `path:line:column: …`).
    pub message: String,
    /// The line of the scenario file at fault, when there is one.
    pub line: Option<usize>,
}

impl ApiError {
    /// An error of `status` and `kind` with `message`.
    pub fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            kind,
            message: message.into(),
            line: None,
        }
    }

    /// Bad input (HTTP 400).
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_input", message)
    }

    /// A path outside the served folder (HTTP 403).
    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// No such file (HTTP 404).
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }
}

#[derive(Serialize)]
struct Body<'a> {
    error: Inner<'a>,
}

#[derive(Serialize)]
struct Inner<'a> {
    kind: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Body {
            error: Inner {
                kind: self.kind,
                message: &self.message,
                line: self.line,
            },
        };
        (self.status, Json(body)).into_response()
    }
}
