//! A run watched from another thread: the time it has reached and a
//! request to stop it, both atomics the run's loop reads and writes once
//! per step (a server's progress reports and its cancel button, a bound
//! on run time).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Shared between a running [`run`](crate::run) (through
/// [`RunOptions::watch`](crate::RunOptions::watch)) and whoever watches it.
///
/// The run stores its time interval once it is built ([`RunWatch::span`])
/// and its time after every step ([`RunWatch::time`]); it checks
/// [`RunWatch::stop`] after every step and, when asked, ends with
/// [`RunError::Stopped`](crate::RunError::Stopped) at the instant reached.
#[derive(Debug)]
pub struct RunWatch {
    t0: AtomicU64,
    t_end: AtomicU64,
    t: AtomicU64,
    started: AtomicBool,
    stop: AtomicBool,
}

impl Default for RunWatch {
    fn default() -> RunWatch {
        RunWatch::new()
    }
}

impl RunWatch {
    /// A watch of a run not started yet.
    pub fn new() -> RunWatch {
        let nan = f64::NAN.to_bits();
        RunWatch {
            t0: AtomicU64::new(nan),
            t_end: AtomicU64::new(nan),
            t: AtomicU64::new(nan),
            started: AtomicBool::new(false),
            stop: AtomicBool::new(false),
        }
    }

    /// Asks the run to stop after its current step (or not to start).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// True once [`RunWatch::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// True once the run was built and began stepping.
    pub fn is_started(&self) -> bool {
        self.started.load(Ordering::Relaxed)
    }

    /// The run's interval [t₀, t_end] (NaN before it starts).
    pub fn span(&self) -> (f64, f64) {
        (
            f64::from_bits(self.t0.load(Ordering::Relaxed)),
            f64::from_bits(self.t_end.load(Ordering::Relaxed)),
        )
    }

    /// The time the run has reached (NaN before it starts).
    pub fn time(&self) -> f64 {
        f64::from_bits(self.t.load(Ordering::Relaxed))
    }

    /// The share of [t₀, t_end] done, (t − t₀)/(t_end − t₀) in [0, 1]
    /// (0 before the run starts).
    pub fn fraction(&self) -> f64 {
        let (t0, t_end) = self.span();
        let f = (self.time() - t0) / (t_end - t0);
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// Called by the run once built.
    pub(crate) fn start(&self, t0: f64, t_end: f64) {
        self.t0.store(t0.to_bits(), Ordering::Relaxed);
        self.t_end.store(t_end.to_bits(), Ordering::Relaxed);
        self.t.store(t0.to_bits(), Ordering::Relaxed);
        self.started.store(true, Ordering::Relaxed);
    }

    /// Called by the run after each step.
    pub(crate) fn reached(&self, t: f64) {
        self.t.store(t.to_bits(), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fraction_of_the_interval() {
        let w = RunWatch::new();
        assert_eq!(w.fraction(), 0.0);
        assert!(!w.is_started());
        w.start(1.0, 3.0);
        assert_eq!(w.fraction(), 0.0);
        w.reached(2.5);
        assert_eq!(w.fraction(), 0.75);
        assert_eq!(w.span(), (1.0, 3.0));
        assert!(!w.is_stopped());
        w.stop();
        assert!(w.is_stopped());
    }
}
