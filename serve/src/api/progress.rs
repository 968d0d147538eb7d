//! `GET /api/progress?id=ID`: server-sent events of a run's progress,
//! ten a second: `{"state": "waiting" | "running", "t", "fraction"}` while
//! it is queued or running, then `{"state": "done"}` (or `"unknown"` when
//! no run of that id appeared within two seconds), and the stream ends.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use serde::Deserialize;

use super::{AppState, Shared};

/// `?id=ID`.
#[derive(Debug, Deserialize)]
pub struct IdQuery {
    id: String,
}

/// Interval between two reports.
const EVERY: Duration = Duration::from_millis(100);

/// How long to wait for a run of the id to appear.
const APPEAR: Duration = Duration::from_secs(2);

struct Watching {
    shared: Arc<Shared>,
    id: String,
    since: Instant,
    seen: bool,
    over: bool,
}

/// `GET /api/progress` (see the module documentation).
pub async fn progress(
    State(shared): AppState,
    Query(q): Query<IdQuery>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let start = Watching {
        shared,
        id: q.id,
        since: Instant::now(),
        seen: false,
        over: false,
    };
    let stream = stream::unfold(start, |mut w| async move {
        if w.over {
            return None;
        }
        if w.seen {
            // The first report at once, then one every EVERY.
            tokio::time::sleep(EVERY).await;
        }
        loop {
            let data = match w.shared.jobs.job(&w.id) {
                Some(job) => {
                    w.seen = true;
                    let state = if job.is_running() {
                        "running"
                    } else {
                        "waiting"
                    };
                    let t = job.watch.time();
                    serde_json::json!({
                        "state": state,
                        "t": if t.is_finite() { Some(t) } else { None },
                        "fraction": job.watch.fraction(),
                    })
                }
                None if w.seen => {
                    w.over = true;
                    serde_json::json!({ "state": "done" })
                }
                None if w.since.elapsed() > APPEAR => {
                    w.over = true;
                    serde_json::json!({ "state": "unknown" })
                }
                None => {
                    tokio::time::sleep(EVERY / 4).await;
                    continue;
                }
            };
            return Some((Ok(Event::default().data(data.to_string())), w));
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
