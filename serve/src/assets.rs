//! The page and its files, embedded in the binary (no build step, no npm
//! at build time): `GET /` is the page, `GET /assets/NAME` its modules, its
//! style sheet and the vendored libraries (`serve/assets/vendor/`, each
//! with its licence and version).

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

/// One embedded file: its name under `/assets/`, its type and its bytes.
struct Asset {
    name: &'static str,
    mime: &'static str,
    bytes: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $mime:literal) => {
        Asset {
            name: $name,
            mime: $mime,
            bytes: include_bytes!(concat!("../assets/", $name)),
        }
    };
}

/// The embedded files.
const ASSETS: &[Asset] = &[
    asset!("app.js", "text/javascript; charset=utf-8"),
    asset!("api.js", "text/javascript; charset=utf-8"),
    asset!("plots.js", "text/javascript; charset=utf-8"),
    asset!("state.js", "text/javascript; charset=utf-8"),
    asset!("style.css", "text/css; charset=utf-8"),
    asset!(
        "vendor/uplot-1.6.32/uPlot.iife.min.js",
        "text/javascript; charset=utf-8"
    ),
    asset!(
        "vendor/uplot-1.6.32/uPlot.min.css",
        "text/css; charset=utf-8"
    ),
    asset!("vendor/uplot-1.6.32/LICENSE", "text/plain; charset=utf-8"),
];

/// The page.
const INDEX: &str = include_str!("../assets/index.html");

/// The total size of the page and its files, in bytes.
pub fn total_bytes() -> usize {
    INDEX.len() + ASSETS.iter().map(|a| a.bytes.len()).sum::<usize>()
}

/// `GET /`: the page.
pub async fn index() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        INDEX,
    )
        .into_response()
}

/// `GET /assets/NAME`.
pub async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(a) => (
            [
                (header::CONTENT_TYPE, a.mime),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            a.bytes,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}
