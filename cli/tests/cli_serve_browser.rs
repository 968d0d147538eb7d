//! `nonsmooth serve` in a real browser: Debian's chromium, headless,
//! driven through chromedriver (WebDriver, the fantoccini crate). The page
//! is opened on examples/smc_double_integrator.toml, alpha is set to 2 in
//! its form, Run is clicked, and the series the charts plot (read back
//! from the page) equal `nonsmooth run --set alpha=2`'s CSV bit for bit;
//! the link the page writes reproduces the run. Screenshots and the
//! click-to-curves times are kept under `target/tmp/serve-artifacts/`.
//!
//! Needs `chromium` and `chromium-driver` (Debian packages; `.ci/run`
//! installs them): without them the test fails saying so.

mod serve_support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{json, Value};
use serve_support::*;

/// A chromedriver process, killed when dropped.
struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn driver() -> Driver {
    let port = free_port();
    let child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "chromedriver does not start ({e}): install Debian's chromium and \
                 chromium-driver (`apt-get install -y chromium chromium-driver`)"
            )
        });
    let d = Driver { child, port };
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "chromedriver does not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    d
}

fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn browser(driver: &Driver, profile: &std::path::Path) -> Client {
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("Debian's chromium (/usr/bin/chromium) is installed");
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".to_string(),
        json!({
            "binary": chromium,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--window-size=1280,1000",
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    ClientBuilder::new(HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("a WebDriver session of chromium")
}

/// Evaluates `expr` in the page until it is true (within 30 s).
async fn until(c: &Client, expr: &str) {
    let t0 = Instant::now();
    loop {
        let v = c
            .execute(&format!("return !!({expr});"), vec![])
            .await
            .unwrap();
        if v == Value::Bool(true) {
            return;
        }
        let error = c
            .execute(
                "return window.__nonsmooth && window.__nonsmooth.error;",
                vec![],
            )
            .await
            .unwrap();
        assert!(error.is_null(), "the page says: {error}");
        assert!(t0.elapsed() < Duration::from_secs(30), "waiting for {expr}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The series labelled `label` in the first chart, and its abscissa.
async fn plotted(c: &Client, label: &str) -> (Vec<f64>, Vec<f64>) {
    // JSON (WebDriver's transport) has no −0, NaN or ±∞: those as texts.
    let plots = c
        .execute(
            "return window.__nonsmooth.plotted().map((p) => ({ labels: p.labels, \
             data: p.data.map((a) => Array.from(a, (x) => \
               Object.is(x, -0) ? '-0' : Number.isFinite(x) ? x : String(x))) }));",
            vec![],
        )
        .await
        .unwrap();
    let first = &plots[0];
    let labels: Vec<&str> = first["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let k = labels
        .iter()
        .position(|l| *l == label)
        .unwrap_or_else(|| panic!("no series {label} in {labels:?}"));
    let col = |j: usize| -> Vec<f64> {
        first["data"][j]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| match x {
                Value::String(s) if s == "-0" => -0.0,
                Value::String(s) if s == "NaN" => f64::NAN,
                Value::String(s) if s == "Infinity" => f64::INFINITY,
                Value::String(s) if s == "-Infinity" => f64::NEG_INFINITY,
                x => x.as_f64().expect("a plotted number"),
            })
            .collect()
    };
    (col(0), col(k))
}

async fn save_screenshot(c: &Client, name: &str) -> PathBuf {
    let png = c.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    let path = artifacts().join(name);
    std::fs::write(&path, png).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_runs_smc_with_alpha_2_and_plots_the_cli_numbers() {
    let server = Served::start(&manifest(), &[]);
    let driver = driver();
    let profile = tempfile::tempdir().unwrap();
    let c = browser(&driver, profile.path()).await;
    let path = "examples/smc_double_integrator.toml";
    let (header, cols) = cli_run(path, &[("alpha", "2")]).unwrap();
    let column = |name: &str| cols[header.iter().position(|h| h == name).unwrap()].clone();

    // Open the page on the scenario, set alpha = 2 in the form, run.
    c.goto(&format!("{}/?path={path}", server.base))
        .await
        .unwrap();
    until(&c, "window.__nonsmooth && window.__nonsmooth.ready").await;
    let alpha = c.find(Locator::Css("#p-alpha")).await.unwrap();
    alpha.clear().await.unwrap();
    alpha.send_keys("2").await.unwrap();
    c.find(Locator::Css("#run"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(&c, "window.__nonsmooth.runCount === 1").await;

    // The plotted series are the CLI's numbers.
    for name in ["controller.sigma[0]", "controller.u[0]"] {
        let (t, y) = plotted(&c, &format!("{name} · alpha=2")).await;
        assert_bits("t", &t, &column("t"));
        assert_bits(name, &y, &column(name));
    }
    let shot = save_screenshot(&c, "smc_double_integrator_alpha2.png").await;
    eprintln!("screenshot: {}", shot.display());

    // The link the page wrote reproduces the run.
    let url = c.current_url().await.unwrap();
    let query: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    assert!(query.contains(&("path".into(), path.into())), "{url}");
    assert!(query.contains(&("alpha".into(), "2".into())), "{url}");
    assert!(query.contains(&("run".into(), "1".into())), "{url}");
    c.goto(url.as_str()).await.unwrap();
    until(
        &c,
        "window.__nonsmooth && window.__nonsmooth.runCount === 1",
    )
    .await;
    let (_, sigma) = plotted(&c, "controller.sigma[0] · alpha=2").await;
    assert_bits(
        "sigma from the link",
        &sigma,
        &column("controller.sigma[0]"),
    );

    // Click-to-curves times: five runs, one run shown at a time.
    c.find(Locator::Css("#overlay"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let mut times = vec![];
    for k in 2..7 {
        c.find(Locator::Css("#run"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        until(&c, &format!("window.__nonsmooth.runCount === {k}")).await;
        let ms = c
            .execute(
                "return [window.__nonsmooth.lastRunMs, window.__nonsmooth.lastServerMs];",
                vec![],
            )
            .await
            .unwrap();
        times.push((ms[0].as_f64().unwrap(), ms[1].as_f64().unwrap()));
    }
    let mut click: Vec<f64> = times.iter().map(|t| t.0).collect();
    click.sort_by(f64::total_cmp);
    let report =
        format!(
        "click on Run to curves drawn, examples/smc_double_integrator.toml alpha=2 (ms): {:?}\n\
         median {:.1} ms; the run itself on the server (ms): {:?}\nload average: {}",
        times.iter().map(|t| t.0.round()).collect::<Vec<_>>(),
        click[click.len() / 2],
        times.iter().map(|t| (t.1 * 10.0).round() / 10.0).collect::<Vec<_>>(),
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim()
    );
    eprintln!("{report}");
    std::fs::write(artifacts().join("click_to_curves.txt"), report).unwrap();
    let (_, sigma) = plotted(&c, "controller.sigma[0] · alpha=2").await;
    assert_bits(
        "sigma after five runs",
        &sigma,
        &column("controller.sigma[0]"),
    );
    c.close().await.unwrap();
}
