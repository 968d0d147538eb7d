//! `POST /api/run`: one run through the queue, answered with its columns
//! (every number as `nonsmooth run` writes it to its CSV: the JSON number
//! is the shortest text that reads back to the same `f64`), its events and
//! its counts.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::Json;
use nonsmooth_runs::{Recording, RunOptions};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};

use super::{open, run_error, AppState};
use crate::error::ApiError;

/// The body of `POST /api/run`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// The scenario file, relative to the folder.
    pub path: String,
    /// Parameter values: numbers, or texts (expressions, words).
    #[serde(default)]
    pub set: BTreeMap<String, serde_json::Value>,
    /// Final time (none: the scenario's).
    pub t_end: Option<f64>,
    /// A name for progress (`GET /api/progress?id=`) and cancellation.
    pub id: Option<String>,
    /// Answer with the events (all but `time_discretisation`, the
    /// steps of the grid themselves).
    #[serde(default)]
    pub events: bool,
}

/// A number of a column: JSON numbers for finite values, the texts
/// `"NaN"`, `"Infinity"`, `"-Infinity"` otherwise (JSON has no such
/// numbers).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Number(pub f64);

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let x = self.0;
        if x.is_finite() {
            s.serialize_f64(x)
        } else if x.is_nan() {
            s.serialize_str("NaN")
        } else if x > 0.0 {
            s.serialize_str("Infinity")
        } else {
            s.serialize_str("-Infinity")
        }
    }
}

/// The columns of a recording, by name in header order, without copying
/// the row-major buffer.
struct Columns<'a>(&'a Recording);

/// Column `j` of a recording.
struct Column<'a>(&'a Recording, usize);

impl Serialize for Columns<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.header.len()))?;
        for (j, name) in self.0.header.iter().enumerate() {
            map.serialize_entry(name, &Column(self.0, j))?;
        }
        map.end()
    }
}

impl Serialize for Column<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = self.0.header.len();
        let mut seq = s.serialize_seq(Some(self.0.rows()))?;
        for x in self.0.data.iter().skip(self.1).step_by(n.max(1)) {
            seq.serialize_element(&Number(*x))?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct Event<'a> {
    t: Number,
    kind: &'a str,
    object: &'a str,
}

#[derive(Serialize)]
struct Stats {
    rows: usize,
    steps: u64,
    solver_iterations: u64,
    run_ms: f64,
}

#[derive(Serialize)]
struct RunBody<'a> {
    path: &'a str,
    header: &'a [String],
    columns: Columns<'a>,
    events: Vec<Event<'a>>,
    stats: Stats,
}

/// A JSON response already written (the columns are serialised once,
/// straight from the recording).
pub struct RawJson(pub String);

impl axum::response::IntoResponse for RawJson {
    fn into_response(self) -> axum::response::Response {
        (
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            self.0,
        )
            .into_response()
    }
}

/// `POST /api/run` (see the module documentation).
pub async fn run(
    State(shared): AppState,
    Json(req): Json<RunRequest>,
) -> Result<RawJson, ApiError> {
    let (scenario, _) = open(&shared, &req.path, &req.set)?;
    let t_end = req.t_end;
    let events = req.events;
    let done = shared
        .jobs
        .execute(req.id.clone(), move |watch| {
            let options = RunOptions {
                t_end,
                events,
                watch: Some(watch),
                ..RunOptions::default()
            };
            let started = Instant::now();
            let rec = nonsmooth_runs::run(&scenario, &options);
            (rec, started.elapsed())
        })
        .await?;
    if let Some(e) = done.stop_error() {
        return Err(e);
    }
    let (rec, elapsed) = done.value;
    let rec = rec.map_err(|e| run_error(&shared.root, &e))?;
    let path = req.path.clone();
    let root = Arc::clone(&shared);
    // Writing a few MB of JSON: off the async threads.
    tokio::task::spawn_blocking(move || encode(&path, &rec, elapsed.as_secs_f64() * 1e3))
        .await
        .map_err(|e| ApiError::bad(format!("{e}")))?
        .map(RawJson)
        .map_err(|e| ApiError::bad(root.root.relative_message(&e.to_string())))
}

/// The JSON of a run.
fn encode(path: &str, rec: &Recording, run_ms: f64) -> serde_json::Result<String> {
    let events = rec
        .events
        .iter()
        .filter(|e| e.kind != "time_discretisation")
        .map(|e| Event {
            t: Number(e.t),
            kind: e.kind,
            object: &rec.objects[e.object as usize],
        })
        .collect();
    serde_json::to_string(&RunBody {
        path,
        header: &rec.header,
        columns: Columns(rec),
        events,
        stats: Stats {
            rows: rec.rows(),
            steps: rec.steps,
            solver_iterations: rec.solver_iterations,
            run_ms,
        },
    })
}
