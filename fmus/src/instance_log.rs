//! The log of one FMU instance, FMI 2.0 and FMI 3.0 alike: which of the
//! categories of [`LOG_CATEGORIES`] the host switched on, the messages that
//! explain a status, and what a [`RunnerError`] means for the instance.
//!
//! The status categories (logStatusError, logStatusWarning,
//! logStatusDiscard) start enabled, so every non-OK status comes with its
//! message unless the host turns its category off; logEvents and logCalls
//! start as the host's `loggingOn`.

use crate::instance::{LogFn, Status};
use crate::runner::RunnerError;

/// The log categories of every instance, with their descriptions (declared
/// in modelDescription.xml).
pub const LOG_CATEGORIES: [(&str, &str); 5] = [
    (
        "logStatusError",
        "errors: bad calls from the host, failed simulation steps",
    ),
    ("logStatusWarning", "warnings"),
    ("logStatusDiscard", "discarded steps (past the stop time)"),
    (
        "logEvents",
        "simulation progress: communication steps, located transitions, state saves and restores",
    ),
    ("logCalls", "every FMI function call"),
];

const ERRORS: usize = 0;
const DISCARDS: usize = 2;
const EVENTS: usize = 3;
const CALLS: usize = 4;

/// What a runner error does to the instance's state machine, besides the
/// status it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consequence {
    /// Nothing: the call was refused and the instance is as it was.
    Refused,
    /// The step went past the stop time: it is discarded, and the instance
    /// reports that the simulation is over.
    PastStop,
    /// The simulation failed: the instance moves to its error phase.
    Failed,
}

/// The log of one instance.
pub struct InstanceLog {
    log_fn: LogFn,
    /// Which of [`LOG_CATEGORIES`] are delivered.
    enabled: [bool; LOG_CATEGORIES.len()],
}

impl InstanceLog {
    /// A log delivering through `log_fn`; `logging_on` enables the
    /// categories that do not explain a status.
    pub fn new(log_fn: LogFn, logging_on: bool) -> Self {
        InstanceLog {
            log_fn,
            enabled: [true, true, true, logging_on, logging_on],
        }
    }

    /// Logs in a category, when it is enabled.
    pub fn log(&self, status: Status, cat: usize, message: &str) {
        if self.enabled[cat] {
            (self.log_fn)(status, LOG_CATEGORIES[cat].0, message);
        }
    }

    /// Logs an error of `func` and returns `Error`.
    pub fn error(&self, func: &str, message: &str) -> Status {
        self.log(Status::Error, ERRORS, &format!("{func}: {message}"));
        Status::Error
    }

    /// Logs an FMI call (category logCalls); `text` runs only when the
    /// category is on.
    pub fn call(&self, text: impl FnOnce() -> String) {
        if self.enabled[CALLS] {
            self.log(Status::Ok, CALLS, &text());
        }
    }

    /// Logs an event (category logEvents); `text` runs only when the
    /// category is on.
    pub fn event(&self, text: impl FnOnce() -> String) {
        if self.enabled[EVENTS] {
            self.log(Status::Ok, EVENTS, &text());
        }
    }

    /// The error of a call made in a phase that does not accept it.
    pub fn refuse_phase(&self, func: &str, phase: &str, allowed: &str) -> Status {
        self.error(
            func,
            &format!("not allowed in the {phase} state (allowed: {allowed})"),
        )
    }

    /// fmi2SetDebugLogging / fmi3SetDebugLogging (`func`): `categories`
    /// empty applies `on` to all; an unknown name changes nothing.
    pub fn set_debug_logging(&mut self, func: &str, on: bool, categories: &[&str]) -> Status {
        if categories.is_empty() {
            self.enabled = [on; LOG_CATEGORIES.len()];
            return Status::Ok;
        }
        let mut idx = Vec::with_capacity(categories.len());
        for c in categories {
            match LOG_CATEGORIES.iter().position(|(n, _)| n == c) {
                Some(k) => idx.push(k),
                None => {
                    let known: Vec<&str> = LOG_CATEGORIES.iter().map(|(n, _)| *n).collect();
                    return self.error(
                        func,
                        &format!(
                            "unknown log category `{c}` (categories: {})",
                            known.join(", ")
                        ),
                    );
                }
            }
        }
        for k in idx {
            self.enabled[k] = on;
        }
        Status::Ok
    }

    /// Logs a runner error of `func` and says what it means: a refused call
    /// or a bad input is an error that leaves the instance as it was, a step
    /// past the stop time is discarded, and a failure to build or simulate
    /// is an error after which only a state restore or a reset helps.
    pub fn runner_error(&self, func: &str, e: RunnerError) -> (Status, Consequence) {
        match e {
            RunnerError::Refused(m) | RunnerError::State(m) => {
                (self.error(func, &m), Consequence::Refused)
            }
            RunnerError::Input(e) => (self.error(func, &e.to_string()), Consequence::Refused),
            RunnerError::PastStop(m) => {
                self.log(Status::Discard, DISCARDS, &format!("{func}: {m}"));
                (Status::Discard, Consequence::PastStop)
            }
            e @ (RunnerError::Build(_)
            | RunnerError::Structure(_)
            | RunnerError::Simulation { .. }) => {
                (self.error(func, &e.to_string()), Consequence::Failed)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    type Seen = Arc<Mutex<Vec<(Status, String, String)>>>;

    fn log(logging_on: bool) -> (InstanceLog, Seen) {
        let seen: Seen = Arc::default();
        let s = seen.clone();
        let f: LogFn = Box::new(move |status, cat, msg| {
            s.lock()
                .unwrap()
                .push((status, cat.to_string(), msg.to_string()))
        });
        (InstanceLog::new(f, logging_on), seen)
    }

    #[test]
    fn status_categories_start_on_and_calls_follow_logging_on() {
        let (l, seen) = log(false);
        l.call(|| unreachable!("logCalls is off"));
        l.event(|| unreachable!("logEvents is off"));
        assert_eq!(l.error("fmi2DoStep", "bad"), Status::Error);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].1, "logStatusError");
        assert_eq!(seen[0].2, "fmi2DoStep: bad");
    }

    #[test]
    fn an_unknown_category_is_an_error_and_changes_nothing() {
        let (mut l, seen) = log(false);
        let s = l.set_debug_logging("fmi3SetDebugLogging", true, &["logCalls", "nope"]);
        assert_eq!(s, Status::Error);
        l.call(|| unreachable!("logCalls must still be off"));
        let msg = seen.lock().unwrap()[0].2.clone();
        assert!(msg.starts_with("fmi3SetDebugLogging: unknown log category `nope`"));
        assert!(msg.contains("logEvents"), "{msg}");
        assert_eq!(
            l.set_debug_logging("fmi3SetDebugLogging", true, &["logCalls"]),
            Status::Ok
        );
        l.call(|| "called".into());
        assert_eq!(seen.lock().unwrap().last().unwrap().2, "called");
    }

    #[test]
    fn runner_errors_map_to_their_consequence() {
        let (l, seen) = log(false);
        assert_eq!(
            l.runner_error("f", RunnerError::Refused("no".into())),
            (Status::Error, Consequence::Refused)
        );
        assert_eq!(
            l.runner_error("f", RunnerError::PastStop("past".into())),
            (Status::Discard, Consequence::PastStop)
        );
        assert_eq!(
            l.runner_error("f", RunnerError::Structure("other".into())),
            (Status::Error, Consequence::Failed)
        );
        let seen = seen.lock().unwrap();
        assert_eq!(seen[1].1, "logStatusDiscard");
        assert_eq!(seen[1].2, "f: past");
    }
}
