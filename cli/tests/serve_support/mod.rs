//! A `nonsmooth serve` started from the built binary for a test (README's
//! command, on a free port), HTTP requests to it, and the CLI's CSV of the
//! same run to compare with.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub fn manifest() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .canonicalize()
        .unwrap()
}

/// A server process, killed when dropped.
pub struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    agent: ureq::Agent,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response: status and body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| {
            panic!("not JSON ({e}): {}", &self.body[..self.body.len().min(300)])
        })
    }

    /// The error object's kind and message.
    pub fn error(&self) -> (String, String) {
        let v = self.json();
        (
            v["error"]["kind"].as_str().unwrap_or("").to_string(),
            v["error"]["message"].as_str().unwrap_or("").to_string(),
        )
    }
}

impl Served {
    /// `nonsmooth serve DIR --port 0 ARGS…`, run from the repository's
    /// root, once it prints its address.
    pub fn start(dir: &Path, args: &[&str]) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
            .arg("serve")
            .arg(dir)
            .args(["--port", "0"])
            .args(args)
            .current_dir(manifest())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the nonsmooth binary starts");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut base = None;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(k) = line.find("http://") {
                let url = line[k..].split_whitespace().next().unwrap();
                base = Some(url.trim_end_matches('/').to_string());
                break;
            }
        }
        let base = base.expect("the server prints its address");
        // Keep reading stderr so that the server never blocks on it.
        std::thread::spawn(move || for _ in lines {});
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into();
        Served { child, base, agent }
    }

    pub fn port(&self) -> u16 {
        self.base.rsplit(':').next().unwrap().parse().unwrap()
    }

    fn reply(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Reply {
        let mut r = r.expect("the server answers");
        let status = r.status().as_u16();
        let body = r
            .body_mut()
            .with_config()
            .limit(1 << 30)
            .read_to_string()
            .unwrap();
        Reply { status, body }
    }

    pub fn get(&self, path: &str) -> Reply {
        Served::reply(self.agent.get(format!("{}{path}", self.base)).call())
    }

    /// A POST of `body` (JSON) with extra headers.
    pub fn post_with(&self, path: &str, body: &str, headers: &[(&str, &str)]) -> Reply {
        let mut req = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Content-Type", "application/json");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        Served::reply(req.send(body))
    }

    pub fn post(&self, path: &str, body: &serde_json::Value) -> Reply {
        self.post_with(path, &body.to_string(), &[])
    }
}

/// A column's number as the server sends it (a JSON number, or a text
/// for a value JSON cannot hold).
pub fn number(v: &serde_json::Value) -> f64 {
    match v {
        serde_json::Value::Number(n) => n.as_f64().unwrap(),
        serde_json::Value::String(s) => match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            s => panic!("not a number: {s}"),
        },
        v => panic!("not a number: {v}"),
    }
}

/// The CSV of `nonsmooth run FILE --set …` (header, columns), or the
/// error message when the run fails.
pub fn cli_run(file: &str, set: &[(&str, &str)]) -> Result<(Vec<String>, Vec<Vec<f64>>), String> {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nonsmooth"));
    cmd.args(["run", file, "--quiet", "--out"])
        .arg(out.path())
        .current_dir(manifest());
    for (k, v) in set {
        cmd.args(["--set", &format!("{k}={v}")]);
    }
    let o = cmd.output().unwrap();
    if !o.status.success() {
        let e = String::from_utf8_lossy(&o.stderr).trim().to_string();
        return Err(e
            .strip_prefix("nonsmooth run: error: ")
            .unwrap_or(&e)
            .to_string());
    }
    let csv = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "csv"))
        .expect("a CSV was written");
    Ok(read_csv(&std::fs::read_to_string(csv).unwrap()))
}

/// A CSV's header and columns (Rust's `f64` parsing: exact).
pub fn read_csv(text: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let mut cols = vec![Vec::new(); header.len()];
    for l in lines {
        for (c, x) in cols.iter_mut().zip(l.split(',')) {
            c.push(x.parse::<f64>().unwrap_or_else(|_| panic!("{x}")));
        }
    }
    (header, cols)
}

/// Asserts that `a` and `b` hold the same numbers bit for bit (NaN equal
/// to NaN).
pub fn assert_bits(what: &str, a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
            "{what}[{i}]: {x:e} != {y:e}"
        );
    }
}

impl Served {
    /// A POST of `body` as a form (the content type a cross-site form may
    /// send without asking): the status.
    pub fn agent_form_post(&self, body: &str) -> u16 {
        Served::reply(
            self.agent
                .post(format!("{}/api/run", self.base))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .send(body),
        )
        .status
    }

    /// The first `n` server-sent events of `path`, as JSON.
    pub fn get_first_events(&self, path: &str, n: usize) -> Vec<serde_json::Value> {
        use std::io::BufRead;
        let mut r = self
            .agent
            .get(format!("{}{path}", self.base))
            .call()
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let reader = std::io::BufReader::new(r.body_mut().as_reader());
        let mut out = vec![];
        for line in reader.lines() {
            let line = line.unwrap();
            if let Some(data) = line.strip_prefix("data:") {
                out.push(serde_json::from_str(data.trim()).unwrap());
                if out.len() == n {
                    break;
                }
            }
        }
        out
    }
}

/// The records of a CSV text (quoted fields read as the `csv` crate reads
/// them).
pub fn csv_rows(text: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}
