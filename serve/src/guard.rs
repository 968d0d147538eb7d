//! Requests from elsewhere than the page: the `Host` must be a loopback
//! name (or the address the server was asked to listen on), which defeats
//! DNS rebinding; a `POST` from a browser must come from the server's own
//! origin (`Origin: http://<Host>`), so that a web site open in the user's
//! browser cannot start runs on this machine.

use std::net::IpAddr;

use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Which hosts the server answers to.
#[derive(Debug, Clone)]
pub struct Hosts {
    /// Listening on every interface (0.0.0.0 or ::): any `Host`.
    any: bool,
    /// The host names accepted (without port).
    names: Vec<String>,
}

impl Hosts {
    /// The hosts of a server listening on `ip`.
    pub fn for_address(ip: IpAddr) -> Hosts {
        let mut names = vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "[::1]".to_string(),
        ];
        names.push(match ip {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        });
        Hosts {
            any: ip.is_unspecified(),
            names,
        }
    }

    /// True when `host` (a `Host` header: name and optional port) is one
    /// the server answers to.
    pub fn accepts(&self, host: &str) -> bool {
        if self.any {
            return true;
        }
        let name = match host.rfind(':') {
            // A port after the name (not a colon inside `[v6]`).
            Some(k) if !host[k..].contains(']') => &host[..k],
            _ => host,
        };
        self.names.iter().any(|n| n.eq_ignore_ascii_case(name))
    }
}

/// The check of every request (see the module documentation).
pub async fn check(State(hosts): State<Hosts>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !hosts.accepts(host) {
        return ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            "wrong_host",
            format!("`Host: {host}` is not this server's address"),
        )
        .into_response();
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let origin = request
            .headers()
            .get(header::ORIGIN)
            .map(|o| o.to_str().unwrap_or("?"));
        let cross_site = request
            .headers()
            .get("sec-fetch-site")
            .is_some_and(|s| s.as_bytes() == b"cross-site" || s.as_bytes() == b"same-site");
        let own = format!("http://{host}");
        let foreign = cross_site || origin.is_some_and(|o| !o.eq_ignore_ascii_case(&own));
        if foreign {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                "cross_origin",
                format!(
                    "a {} from `{}` is refused: only the server's own page ({own}) may send one",
                    request.method(),
                    origin.unwrap_or("another site")
                ),
            )
            .into_response();
        }
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn loopback_names_with_or_without_port() {
        let h = Hosts::for_address(IpAddr::V4(Ipv4Addr::LOCALHOST));
        for ok in [
            "127.0.0.1:8080",
            "localhost:1",
            "LOCALHOST",
            "[::1]:80",
            "[::1]",
        ] {
            assert!(h.accepts(ok), "{ok}");
        }
        for no in [
            "evil.example:8080",
            "127.0.0.2:8080",
            "",
            "localhost.evil:80",
        ] {
            assert!(!h.accepts(no), "{no}");
        }
        assert!(Hosts::for_address(IpAddr::V4(Ipv4Addr::UNSPECIFIED)).accepts("box:80"));
    }
}
