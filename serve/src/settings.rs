//! What a server is given: the folder it serves, where it listens, and
//! its bounds (request bodies, runs in parallel and waiting, run time).

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::time::Duration;

/// The settings of a server (`nonsmooth serve` sets them from its
/// options; [`Settings::new`] gives the defaults).
#[derive(Debug, Clone)]
pub struct Settings {
    /// The folder whose scenario files are served; nothing outside it is
    /// read, nothing inside it written.
    pub root: PathBuf,
    /// The address to listen on (127.0.0.1 unless asked).
    pub host: IpAddr,
    /// The port (0: any free port, reported once bound).
    pub port: u16,
    /// Largest request body, in bytes.
    pub max_body: usize,
    /// Runs (or sweeps) that execute at once; more wait in the queue.
    pub workers: usize,
    /// Runs that may wait for a worker; a request beyond is refused
    /// (HTTP 503).
    pub queue: usize,
    /// Longest run (or sweep) once it has a worker; it is stopped after
    /// this (HTTP 503).
    pub max_run_time: Duration,
    /// Largest number of points of one sweep.
    pub max_sweep_points: usize,
}

impl Settings {
    /// The defaults for serving `root`: 127.0.0.1:8080, bodies up to
    /// 64 KiB, one worker per core, 64 waiting runs, 60 s per run, 1000
    /// points per sweep.
    pub fn new(root: impl Into<PathBuf>) -> Settings {
        Settings {
            root: root.into(),
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 8080,
            max_body: 64 * 1024,
            workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            queue: 64,
            max_run_time: Duration::from_secs(60),
            max_sweep_points: 1000,
        }
    }
}
