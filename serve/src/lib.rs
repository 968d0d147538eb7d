//! `nonsmooth serve`: a local browser workbench over the scenario files of
//! a folder. An HTTP server (tokio, axum) serves a page and a JSON API
//! (docs/serve.md): the scenario files, a scenario's parameters, runs
//! (`nonsmooth_runs::run`, the loop and the numbers of `nonsmooth run`)
//! and sweeps through a bounded queue, their progress as server-sent
//! events, their cancellation.
//!
//! It listens on 127.0.0.1 unless asked otherwise; it reads only files
//! under its folder and writes none; a `POST` from another origin than its
//! own page is refused; bodies, run times, parallel and waiting runs are
//! bounded ([`Settings`]).
//!
//! ```no_run
//! # async fn serve() -> std::io::Result<()> {
//! let server = nonsmooth_serve::Server::bind(nonsmooth_serve::Settings::new("examples")).await?;
//! println!("http://{}/", server.address());
//! server.run(std::future::pending()).await
//! # }
//! ```

mod api;
mod assets;
pub mod describe;
pub mod error;
pub mod files;
mod guard;
pub mod jobs;
mod settings;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;

pub use assets::total_bytes as page_bytes;
pub use error::ApiError;
pub use settings::Settings;

/// The routes of a server of `settings`, with the host and origin checks
/// and the body bound (its root folder must exist).
pub fn router(settings: &Settings) -> std::io::Result<Router> {
    let shared = Arc::new(api::Shared {
        root: files::Root::new(&settings.root)?,
        jobs: jobs::Jobs::new(settings.workers, settings.queue, settings.max_run_time),
        max_sweep_points: settings.max_sweep_points,
    });
    let hosts = guard::Hosts::for_address(settings.host);
    Ok(Router::new()
        .route("/", get(assets::index))
        .route("/assets/{*name}", get(assets::asset))
        .route("/api/scenarios", get(api::scenarios))
        .route("/api/scenario", get(api::scenario))
        .route("/api/run", post(api::run))
        .route("/api/sweep", post(api::sweep))
        .route("/api/progress", get(api::progress))
        .route("/api/cancel", post(api::cancel))
        .route("/api/status", get(api::status))
        .with_state(shared)
        .layer(DefaultBodyLimit::max(settings.max_body))
        .layer(axum::middleware::from_fn_with_state(hosts, guard::check)))
}

/// A server bound to its address, not yet answering.
pub struct Server {
    listener: tokio::net::TcpListener,
    router: Router,
}

impl Server {
    /// Binds the address of `settings` (port 0: any free port).
    pub async fn bind(settings: Settings) -> std::io::Result<Server> {
        let router = router(&settings)?;
        let listener =
            tokio::net::TcpListener::bind(SocketAddr::new(settings.host, settings.port)).await?;
        Ok(Server { listener, router })
    }

    /// The address bound.
    pub fn address(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// Answers requests until `shutdown` completes.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        axum::serve(self.listener, self.router)
            .with_graceful_shutdown(shutdown)
            .await
    }
}
