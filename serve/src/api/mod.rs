//! The JSON API (docs/serve.md): the scenario files, a scenario's
//! parameters, runs and sweeps through the queue, their progress as
//! server-sent events, cancellation, the queue's counts.

mod progress;
mod run;
mod sweep;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::Json;
use nonsmooth_scenario::Scenario;
use serde::Deserialize;

use crate::describe::{describe, overrides, Description};
use crate::error::ApiError;
use crate::files::{Listed, Root};
use crate::jobs::{Jobs, Status};

pub use progress::progress;
pub use run::run;
pub use sweep::sweep;

/// What every handler shares.
#[derive(Debug)]
pub struct Shared {
    /// The served folder.
    pub root: Root,
    /// The run queue.
    pub jobs: Jobs,
    /// Most points of a sweep.
    pub max_sweep_points: usize,
}

/// The state of the handlers.
pub type AppState = State<Arc<Shared>>;

/// `?path=P`.
#[derive(Debug, Deserialize)]
pub struct PathQuery {
    path: String,
}

/// `{"id": ID}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdBody {
    id: String,
}

/// `GET /api/scenarios`: the scenario files under the folder.
pub async fn scenarios(State(shared): AppState) -> Result<Json<Vec<Listed>>, ApiError> {
    let s = Arc::clone(&shared);
    tokio::task::spawn_blocking(move || s.root.list())
        .await
        .map(Json)
        .map_err(|e| ApiError::bad(e.to_string()))
}

/// `GET /api/scenario?path=P`: its parameters, columns and plots (the
/// scenario is built with its defaults, through the queue).
pub async fn scenario(
    State(shared): AppState,
    Query(q): Query<PathQuery>,
) -> Result<Json<Description>, ApiError> {
    let (scenario, text) = open(&shared, &q.path, &BTreeMap::new())?;
    let root = shared.root.clone();
    let path = q.path.clone();
    let done = shared
        .jobs
        .execute(None, move |_| describe(&scenario, &text, &path))
        .await?;
    done.value.map(Json).map_err(|e| run_error(&root, &e))
}

/// `GET /api/status`: the queue's counts.
pub async fn status(State(shared): AppState) -> Json<Status> {
    Json(shared.jobs.status())
}

/// `POST /api/cancel` with `{"id": ID}`: stops the run of that id.
pub async fn cancel(
    State(shared): AppState,
    Json(body): Json<IdBody>,
) -> Result<Json<serde_json::Value>, ApiError> {
    if shared.jobs.cancel(&body.id) {
        Ok(Json(serde_json::json!({ "cancelled": body.id })))
    } else {
        Err(ApiError::not_found(format!(
            "id `{}`: no run of this id is queued or running",
            body.id
        )))
    }
}

/// Reads the scenario at the request's `path` (checked to be in the
/// folder, as are the files it names) with the overrides `set`.
pub(crate) fn open(
    shared: &Shared,
    path: &str,
    set: &BTreeMap<String, serde_json::Value>,
) -> Result<(Scenario, String), ApiError> {
    let file: PathBuf = shared.root.resolve(path)?;
    let text = shared.root.read(&file, path)?;
    shared.root.check_references(&text, &file, path)?;
    let located = |e: nonsmooth_scenario::ScenarioError| {
        let line = e.line();
        ApiError {
            line,
            ..ApiError::bad(shared.root.relative_message(&e.to_string()))
        }
    };
    let mut scenario = Scenario::from_str(&text, &file).map_err(located)?;
    for (name, value) in overrides(set).map_err(|e| ApiError::bad(format!("{path}: {e}")))? {
        scenario.set_parameter(&name, value).map_err(located)?;
    }
    Ok((scenario, text))
}

/// The API error of a run's error: 400 for bad input (with the line),
/// 422 for a simulation that failed.
pub(crate) fn run_error(root: &Root, e: &nonsmooth_runs::RunError) -> ApiError {
    let message = root.relative_message(&e.to_string());
    if e.is_bad_input() {
        ApiError {
            line: e.line(),
            ..ApiError::bad(message)
        }
    } else {
        ApiError::new(
            axum::http::StatusCode::UNPROCESSABLE_ENTITY,
            "simulation",
            message,
        )
    }
}
