//! `nonsmooth serve [DIR]`: the browser workbench over the scenario files
//! under DIR (nonsmooth-serve, docs/serve.md), until Ctrl-C.

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use nonsmooth_serve::{Server, Settings};

/// Arguments of `nonsmooth serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The folder whose scenario files are served (nothing outside it is
    /// read, nothing in it written).
    #[arg(default_value = ".")]
    pub dir: PathBuf,

    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,

    /// Address to listen on. Anything but a loopback address lets other
    /// machines start runs: a warning is printed.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,

    /// Runs executing at once (default: one per core); more wait.
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,

    /// Runs that may wait for a worker; more are refused (HTTP 503).
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub queue: usize,

    /// Longest run or sweep, in seconds; it is stopped after that.
    #[arg(long = "max-run-time", value_name = "SECONDS", default_value_t = 60.0)]
    pub max_run_time: f64,

    /// Largest request body, in bytes.
    #[arg(long = "max-body", value_name = "BYTES", default_value_t = 64 * 1024)]
    pub max_body: usize,
}

/// Help shown after `--help`.
pub fn long_help() -> &'static str {
    "Open the address printed (http://127.0.0.1:8080/ by default) in a browser:\n\
     pick a scenario, set its parameters, run, compare runs, download a CSV,\n\
     sweep a grid. A link holds the scenario and the values set, e.g.\n  \
       http://127.0.0.1:8080/?path=examples/smc_double_integrator.toml&alpha=2&run=1\n\n\
     The page uses a JSON API (docs/serve.md). Only files under DIR are read;\n\
     POSTs from other web sites are refused; Ctrl-C stops the server.\n\n\
     Exit status: 0 after Ctrl-C, 2 for bad options (a missing DIR, a port in use)."
}

/// Runs `nonsmooth serve` until Ctrl-C.
pub fn run(args: &ServeArgs) -> ExitCode {
    let fail = |msg: String| {
        eprintln!("nonsmooth serve: error: {msg}");
        ExitCode::from(2)
    };
    if !(args.max_run_time.is_finite() && args.max_run_time > 0.0) {
        return fail(format!(
            "--max-run-time {}: give a positive number of seconds",
            args.max_run_time
        ));
    }
    if !args.dir.is_dir() {
        return fail(format!("{}: not a folder", args.dir.display()));
    }
    let mut settings = Settings::new(&args.dir);
    settings.host = args.host;
    settings.port = args.port;
    settings.queue = args.queue;
    settings.max_body = args.max_body;
    settings.max_run_time = Duration::from_secs_f64(args.max_run_time);
    if let Some(w) = args.workers {
        settings.workers = w.max(1);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot start the server's runtime: {e}")),
    };
    runtime.block_on(async {
        let server = match Server::bind(settings).await {
            Ok(s) => s,
            Err(e) => return fail(format!("cannot listen on {}:{}: {e}", args.host, args.port)),
        };
        let address = server.address();
        if !args.host.is_loopback() {
            eprintln!(
                "nonsmooth serve: warning: listening on {}, not a loopback address: other \
                 machines that reach it can read the scenario files under {} and start runs",
                args.host,
                args.dir.display()
            );
        }
        eprintln!(
            "nonsmooth serve: serving {} at http://{address}/ (Ctrl-C stops)",
            args.dir.display()
        );
        let stop = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        match server.run(stop).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(format!("the server stopped: {e}")),
        }
    })
}
