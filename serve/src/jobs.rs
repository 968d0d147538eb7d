//! The run queue: at most `workers` runs at once on blocking threads, at
//! most `queue` more waiting, each stopped after the run-time bound, each
//! watched by its id for progress and cancellation.
//!
//! A run's slot is held by its blocking thread until the run has really
//! ended, so a cancelled or timed-out run frees its worker only once its
//! current step is done. A request whose client goes away stops its run.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;
use nonsmooth_runs::RunWatch;
use serde::Serialize;
use tokio::sync::Semaphore;

use crate::error::ApiError;

/// One job the queue knows: its watch, and whether it has a worker.
#[derive(Debug, Default)]
pub struct Job {
    /// The run's time and its stop request.
    pub watch: Arc<RunWatch>,
    running: AtomicBool,
    timed_out: AtomicBool,
}

impl Job {
    /// True once the job has a worker.
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::Relaxed)
    }
}

/// The queue's counts, as `GET /api/status` reports them.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Status {
    /// Runs that may execute at once.
    pub workers: usize,
    /// Runs executing now.
    pub running: usize,
    /// Runs waiting for a worker.
    pub waiting: usize,
    /// Most runs that may wait.
    pub queue: usize,
}

/// The queue (see the module documentation).
#[derive(Debug)]
pub struct Jobs {
    slots: Arc<Semaphore>,
    workers: usize,
    queue: usize,
    admitted: AtomicUsize,
    running: Arc<AtomicUsize>,
    max_run_time: Duration,
    ids: Mutex<HashMap<String, Arc<Job>>>,
}

/// Stops the run when the request that started it is dropped before the
/// run ended (the client went away), and forgets its id.
struct Guard<'a> {
    jobs: &'a Jobs,
    job: Arc<Job>,
    id: Option<String>,
    done: bool,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.job.watch.stop();
        }
        if let Some(id) = &self.id {
            let mut ids = self.jobs.ids.lock().unwrap_or_else(|e| e.into_inner());
            if ids.get(id).is_some_and(|j| Arc::ptr_eq(j, &self.job)) {
                ids.remove(id);
            }
        }
        self.jobs.admitted.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Jobs {
    /// A queue of `workers` (at least 1) parallel runs and `queue` waiting
    /// ones, each run stopped after `max_run_time`.
    pub fn new(workers: usize, queue: usize, max_run_time: Duration) -> Jobs {
        let workers = workers.max(1);
        Jobs {
            slots: Arc::new(Semaphore::new(workers)),
            workers,
            queue,
            admitted: AtomicUsize::new(0),
            running: Arc::new(AtomicUsize::new(0)),
            max_run_time,
            ids: Mutex::new(HashMap::new()),
        }
    }

    /// The counts now.
    pub fn status(&self) -> Status {
        let admitted = self.admitted.load(Ordering::Relaxed);
        let running = self.running.load(Ordering::Relaxed);
        Status {
            workers: self.workers,
            running,
            waiting: admitted.saturating_sub(running),
            queue: self.queue,
        }
    }

    /// The job of id `id`, while it is queued or running.
    pub fn job(&self, id: &str) -> Option<Arc<Job>> {
        self.ids
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
    }

    /// Asks the job `id` to stop; false when there is no such job.
    pub fn cancel(&self, id: &str) -> bool {
        match self.job(id) {
            Some(job) => {
                job.watch.stop();
                true
            }
            None => false,
        }
    }

    /// Runs `work` on a blocking thread once a worker is free, under the
    /// run-time bound; `id` (when given) names it for progress and
    /// cancellation. Refused with 503 when the queue is full, 409 when the
    /// id is in use. `work` gets the watch to hand to its runs.
    pub async fn execute<T: Send + 'static>(
        &self,
        id: Option<String>,
        work: impl FnOnce(Arc<RunWatch>) -> T + Send + 'static,
    ) -> Result<Finished<T>, ApiError> {
        if let Some(id) = &id {
            let ok = !id.is_empty()
                && id.len() <= 64
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !ok {
                return Err(ApiError::bad(format!(
                    "id `{id}`: use 1 to 64 letters, digits, `-` and `_`"
                )));
            }
        }
        let limit = self.workers + self.queue;
        if self
            .admitted
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < limit).then_some(n + 1)
            })
            .is_err()
        {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                format!(
                    "the server is busy: {} runs executing and {} waiting; try again later",
                    self.workers, self.queue
                ),
            ));
        }
        let job = Arc::new(Job::default());
        let mut guard = Guard {
            jobs: self,
            job: Arc::clone(&job),
            id: None,
            done: false,
        };
        if let Some(id) = id {
            let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
            if ids.contains_key(&id) {
                return Err(ApiError::new(
                    StatusCode::CONFLICT,
                    "id_in_use",
                    format!("id `{id}`: a run of this id is already queued or running"),
                ));
            }
            ids.insert(id.clone(), Arc::clone(&job));
            guard.id = Some(id);
        }
        let permit = Arc::clone(&self.slots)
            .acquire_owned()
            .await
            .map_err(|_| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "busy", "shutting down"))?;
        job.running.store(true, Ordering::Relaxed);
        self.running.fetch_add(1, Ordering::Relaxed);
        let running = Arc::clone(&self.running);
        let watch = Arc::clone(&job.watch);
        let mut handle = tokio::task::spawn_blocking(move || {
            let out = work(watch);
            running.fetch_sub(1, Ordering::Relaxed);
            drop(permit);
            out
        });
        let out = tokio::select! {
            out = &mut handle => out,
            _ = tokio::time::sleep(self.max_run_time) => {
                job.timed_out.store(true, Ordering::Relaxed);
                job.watch.stop();
                handle.await
            }
        };
        guard.done = true;
        let value = out.map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                format!("the run's thread failed: {e}"),
            )
        })?;
        Ok(Finished {
            value,
            cancelled: job.watch.is_stopped(),
            timed_out: job.timed_out.load(Ordering::Relaxed),
            max_run_time: self.max_run_time,
        })
    }
}

/// What a job gave, and whether it was stopped.
#[derive(Debug)]
pub struct Finished<T> {
    /// The work's result.
    pub value: T,
    /// Stopped (cancelled, timed out or its client gone).
    pub cancelled: bool,
    /// Stopped by the run-time bound.
    pub timed_out: bool,
    /// The bound.
    pub max_run_time: Duration,
}

impl<T> Finished<T> {
    /// The error of a stopped job (none when it was not stopped).
    pub fn stop_error(&self) -> Option<ApiError> {
        if self.timed_out {
            Some(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "time_limit",
                format!(
                    "the run was stopped after {:.3} s, the server's bound on run time (--max-run-time)",
                    self.max_run_time.as_secs_f64()
                ),
            ))
        } else if self.cancelled {
            Some(ApiError::new(
                StatusCode::CONFLICT,
                "cancelled",
                "the run was cancelled",
            ))
        } else {
            None
        }
    }
}
