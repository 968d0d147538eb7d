//! `nonsmooth serve` through its HTTP API, started from the built binary
//! as README says: every example's run equals `nonsmooth run`'s CSV bit
//! for bit; bad input, paths out of the folder, other origins, big bodies
//! are refused; runs are queued, bounded in time, cancellable; a sweep
//! equals `nonsmooth sweep`'s table.

mod serve_support;

use std::time::{Duration, Instant};

use serde_json::json;
use serve_support::*;

/// The runs of `nonsmooth serve` are those of `nonsmooth run`: every
/// example under examples/ (as the server lists them) gives the CLI's
/// header and columns, each number bit-identical; an example the CLI
/// cannot run (a co-simulation whose FMUs are not exported) is refused by
/// the server with the CLI's message.
#[test]
fn every_example_runs_as_the_cli_writes_it() {
    // The larger examples (box_stack.toml) take a minute or more on a
    // loaded machine: no run-time bound short of the test's own.
    let server = Served::start(&manifest(), &["--max-run-time", "1800"]);
    let list = server.get("/api/scenarios");
    assert_eq!(list.status, 200);
    let list = list.json();
    let paths: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap().to_string())
        .filter(|p| p.starts_with("examples/"))
        .collect();
    let on_disk = std::fs::read_dir(manifest().join("examples"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "toml")
        })
        .count();
    assert_eq!(paths.len(), on_disk, "{paths:?}");
    let mut compared = 0;
    for path in &paths {
        let started = Instant::now();
        // The two largest examples run smaller here (the same sizes on both
        // sides): at their defaults they take minutes, which belongs in a
        // benchmark, not a test.
        let set: &[(&str, &str)] = match path.as_str() {
            "examples/spheres_in_box.toml" => &[("spheres", "40"), ("t_end", "0.2")],
            "examples/box_stack.toml" => &[("t_end", "1")],
            _ => &[],
        };
        let set_json: serde_json::Map<String, serde_json::Value> = set
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v.parse::<f64>().unwrap())))
            .collect();
        let reply = server.post("/api/run", &json!({ "path": path, "set": set_json }));
        match cli_run(path, set) {
            Ok((header, cols)) => {
                assert_eq!(reply.status, 200, "{path}: {}", reply.body);
                let v = reply.json();
                let got: Vec<String> = v["header"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|h| h.as_str().unwrap().to_string())
                    .collect();
                assert_eq!(got, header, "{path}");
                for (name, col) in header.iter().zip(&cols) {
                    let served: Vec<f64> = v["columns"][name]
                        .as_array()
                        .unwrap_or_else(|| panic!("{path}: no column {name}"))
                        .iter()
                        .map(number)
                        .collect();
                    assert_bits(&format!("{path} {name}"), &served, col);
                }
                assert_eq!(v["stats"]["rows"], cols[0].len(), "{path}");
                compared += 1;
            }
            Err(message) => {
                assert!(
                    reply.status == 400 || reply.status == 422,
                    "{path}: the CLI failed ({message}) but the server answered {}",
                    reply.status
                );
                assert_eq!(reply.error().1, message, "{path}");
            }
        }
        eprintln!("{path}: {:.2} s", started.elapsed().as_secs_f64());
    }
    assert!(compared >= 25, "only {compared} examples compared");
}

/// A bad parameter value is HTTP 400 with the message `nonsmooth run
/// --set` gives (the file and the parameter named); a fault in the file
/// gives its line.
#[test]
fn bad_input_is_a_400_with_the_located_message() {
    let server = Served::start(&manifest(), &[]);
    let path = "examples/smc_double_integrator.toml";
    for (name, value) in [
        ("alpha", "2 *"),
        ("no_such", "1"),
        ("law", "no_such_law"),
        ("step", "-1"),
    ] {
        let reply = server.post("/api/run", &json!({ "path": path, "set": { name: value } }));
        assert_eq!(reply.status, 400, "{name}={value}: {}", reply.body);
        let (kind, message) = reply.error();
        assert_eq!(kind, "bad_input");
        let cli = cli_run(path, &[(name, value)]).unwrap_err();
        assert_eq!(message, cli, "{name}={value}");
        assert!(message.contains(path), "{message}");
    }
    // A number given as a JSON number is the same as its text.
    let a = server.post("/api/run", &json!({ "path": path, "set": { "alpha": 2 } }));
    let b = server.post(
        "/api/run",
        &json!({ "path": path, "set": { "alpha": "2" } }),
    );
    assert_eq!(a.status, 200);
    assert_eq!(a.json()["columns"], b.json()["columns"]);
    // Neither a number nor a text.
    let reply = server.post(
        "/api/run",
        &json!({ "path": path, "set": { "alpha": [2] } }),
    );
    assert_eq!(reply.status, 400);
    // A fault in the file: its line.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(manifest().join(path)).unwrap();
    std::fs::write(
        dir.path().join("broken.toml"),
        text.replace("alpha = 1\n", "alpha = \"1 +\"\n"),
    )
    .unwrap();
    let server = Served::start(dir.path(), &[]);
    let reply = server.post("/api/run", &json!({ "path": "broken.toml" }));
    assert_eq!(reply.status, 400, "{}", reply.body);
    let line = text.lines().position(|l| l == "alpha = 1").unwrap() + 1;
    assert_eq!(reply.json()["error"]["line"], line);
    let message = reply.error().1;
    assert!(
        message.starts_with(&format!("broken.toml:{line}:")),
        "{message}"
    );
    // Unknown keys of the request.
    let reply = server.post_with("/api/run", r#"{"path": "broken.toml", "sett": {}}"#, &[]);
    assert_eq!(reply.status, 422, "{}", reply.body);
}

/// Nothing outside the folder is read: `..`, absolute paths, symbolic
/// links leading out (to a file or a folder) and scenarios naming an FMU
/// outside are refused with 403, and not listed.
#[cfg(unix)]
#[test]
fn paths_outside_the_folder_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    let smc =
        std::fs::read_to_string(manifest().join("examples/smc_double_integrator.toml")).unwrap();
    std::fs::write(outside.path().join("secret.toml"), &smc).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("served");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/ok.toml"), &smc).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.toml"), root.join("out.toml")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
    std::os::unix::fs::symlink(root.join("sub/ok.toml"), root.join("in.toml")).unwrap();
    let fmu = std::fs::read_to_string(manifest().join("examples/fmu_plant_smc.toml")).unwrap();
    std::fs::write(
        root.join("fmu_out.toml"),
        fmu.replace("\"double_integrator_plant.fmu\"", "\"../plant.fmu\""),
    )
    .unwrap();
    let server = Served::start(&root, &[]);
    let listed: Vec<String> = server
        .get("/api/scenarios")
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, ["fmu_out.toml", "in.toml", "sub/ok.toml"]);
    assert_eq!(server.get("/api/scenario?path=sub/ok.toml").status, 200);
    assert_eq!(server.get("/api/scenario?path=in.toml").status, 200);
    let secret = outside.path().join("secret.toml");
    let absolute = secret.to_str().unwrap();
    for bad in [
        "../outside.toml",
        "sub/../../served/sub/ok.toml",
        absolute,
        "out.toml",
        "link/secret.toml",
        "fmu_out.toml",
    ] {
        let q = format!("/api/scenario?path={}", bad.replace('/', "%2F"));
        let reply = server.get(&q);
        assert_eq!(reply.status, 403, "{bad}: {}", reply.body);
        assert!(!reply.body.contains(outside.path().to_str().unwrap()) || bad == absolute);
        let reply = server.post("/api/run", &json!({ "path": bad }));
        assert_eq!(reply.status, 403, "{bad}: {}", reply.body);
    }
    for missing in ["nothing.toml", "sub"] {
        assert!(server.get(&format!("/api/scenario?path={missing}")).status >= 400);
    }
    assert_eq!(server.get("/assets/..%2F..%2FCargo.toml").status, 404);
    // Nothing was written in the folder.
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["fmu_out.toml", "in.toml", "link", "out.toml", "sub"]
    );
}

/// A POST from another origin (a web site in the user's browser) or to
/// another host name (DNS rebinding) is refused; the page's own origin
/// and clients without an Origin are served.
#[test]
fn posts_from_other_origins_are_refused() {
    let server = Served::start(&manifest(), &[]);
    let body = r#"{"path": "examples/bouncing_ball.toml"}"#;
    let own = format!("http://127.0.0.1:{}", server.port());
    assert_eq!(
        server
            .post_with("/api/run", body, &[("Origin", &own)])
            .status,
        200
    );
    assert_eq!(server.post_with("/api/run", body, &[]).status, 200);
    for headers in [
        vec![("Origin", "http://evil.example")],
        vec![("Origin", "null")],
        vec![("Origin", "http://127.0.0.1:1")],
        vec![("Sec-Fetch-Site", "cross-site")],
    ] {
        let reply = server.post_with("/api/run", body, &headers);
        assert_eq!(reply.status, 403, "{headers:?}: {}", reply.body);
        assert_eq!(reply.error().0, "cross_origin");
    }
    let reply = server.post_with("/api/run", body, &[("Host", "evil.example:8080")]);
    assert_eq!(reply.status, 421, "{}", reply.body);
    // A form post (not JSON) is refused as well.
    let reply = server.agent_form_post(body);
    assert_eq!(reply, 415);
}

/// Bodies beyond `--max-body` are refused (413).
#[test]
fn request_bodies_are_bounded() {
    let server = Served::start(&manifest(), &["--max-body", "1000"]);
    let pad = "x".repeat(2000);
    let body = json!({ "path": "examples/bouncing_ball.toml", "id": pad }).to_string();
    assert_eq!(server.post_with("/api/run", &body, &[]).status, 413);
    let body = json!({ "path": "examples/bouncing_ball.toml" }).to_string();
    assert_eq!(server.post_with("/api/run", &body, &[]).status, 200);
}

/// A long run reports its progress (server-sent events), is cancelled
/// mid-way, and frees its only worker for the next run; a run beyond the
/// time bound is stopped; a full queue refuses more.
#[test]
fn runs_are_queued_cancelled_and_bounded_in_time() {
    let server = std::sync::Arc::new(Served::start(
        &manifest(),
        &["--workers", "1", "--queue", "1"],
    ));
    let long = json!({
        "path": "examples/smc_double_integrator.toml",
        "t_end": 1e6,
        "id": "long",
    });
    let s = server.clone();
    let first = std::thread::spawn(move || s.post("/api/run", &long));
    // Wait until it runs and has advanced.
    let t0 = Instant::now();
    loop {
        let st = server.get("/api/status").json();
        if st["running"] == 1 {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "{st}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let events = server.get_first_events("/api/progress?id=long", 2);
    assert_eq!(events[0]["state"], "running", "{events:?}");
    assert!(events[1]["t"].as_f64().unwrap() > 0.0, "{events:?}");
    assert!(events[1]["fraction"].as_f64().unwrap() < 0.5);
    // One more waits; a third is refused.
    let s = server.clone();
    let second = std::thread::spawn(move || {
        s.post(
            "/api/run",
            &json!({ "path": "examples/bouncing_ball.toml", "id": "second" }),
        )
    });
    loop {
        if server.get("/api/status").json()["waiting"] == 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let third = server.post(
        "/api/run",
        &json!({ "path": "examples/bouncing_ball.toml" }),
    );
    assert_eq!(third.status, 503, "{}", third.body);
    assert_eq!(third.error().0, "busy");
    // Cancel the long run: it ends, the waiting one gets the worker.
    let cancelled_at = Instant::now();
    assert_eq!(
        server.post("/api/cancel", &json!({ "id": "long" })).status,
        200
    );
    let first = first.join().unwrap();
    assert_eq!(first.status, 409, "{}", first.body);
    assert_eq!(first.error().0, "cancelled");
    assert!(cancelled_at.elapsed() < Duration::from_secs(5));
    let second = second.join().unwrap();
    assert_eq!(second.status, 200, "{}", second.body);
    let status = server.get("/api/status").json();
    assert_eq!(status["running"], 0, "{status}");
    assert_eq!(status["waiting"], 0, "{status}");
    assert_eq!(
        server.post("/api/cancel", &json!({ "id": "long" })).status,
        404
    );
    drop(server);

    let server = Served::start(&manifest(), &["--max-run-time", "0.3"]);
    let started = Instant::now();
    let reply = server.post(
        "/api/run",
        &json!({ "path": "examples/smc_double_integrator.toml", "t_end": 1e6 }),
    );
    assert_eq!(reply.status, 503, "{}", reply.body);
    assert_eq!(reply.error().0, "time_limit");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(server.get("/api/status").json()["running"], 0);
}

/// 50 runs at once (queued over the workers) all complete, each equal to
/// the same run made alone.
#[test]
fn fifty_concurrent_runs_complete() {
    let server = std::sync::Arc::new(Served::start(&manifest(), &[]));
    let alphas: Vec<f64> = (0..50).map(|k| 0.5 + 0.05 * k as f64).collect();
    let threads: Vec<_> = alphas
        .iter()
        .map(|&a| {
            let s = server.clone();
            std::thread::spawn(move || {
                s.post(
                    "/api/run",
                    &json!({ "path": "examples/smc_double_integrator.toml", "set": { "alpha": a } }),
                )
            })
        })
        .collect();
    let replies: Vec<Reply> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    for (a, r) in alphas.iter().zip(&replies) {
        assert_eq!(r.status, 200, "alpha = {a}: {}", r.body);
    }
    for k in [0, 17, 49] {
        let alone = server.post(
            "/api/run",
            &json!({ "path": "examples/smc_double_integrator.toml", "set": { "alpha": alphas[k] } }),
        );
        assert_eq!(alone.json()["columns"], replies[k].json()["columns"]);
    }
}

/// `POST /api/sweep` gives the table of `nonsmooth sweep` (same grid
/// order, metrics bit-identical, failed points with their error).
#[test]
fn a_sweep_equals_the_cli_sweep() {
    let server = Served::start(&manifest(), &[]);
    let reply = server.post(
        "/api/sweep",
        &json!({
            "path": "examples/smc_double_integrator.toml",
            "grid": [
                { "name": "alpha", "values": [0.5, 1, "2", "no"] },
                { "name": "control_period", "values": [0.01, 0.005] }
            ],
            "metrics": ["reach=reaching_time(controller.sigma[0], 1e-9)", "final(plant.x[0])"],
        }),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let v = reply.json();
    assert_eq!(v["metrics"], json!(["reach", "final(plant.x[0])"]));
    let out = tempfile::tempdir().unwrap();
    let table = out.path().join("t.csv");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args([
            "sweep",
            "examples/smc_double_integrator.toml",
            "--grid",
            "alpha=0.5,1,2,no",
            "--grid",
            "control_period=0.01,0.005",
            "--metric",
            "reach=reaching_time(controller.sigma[0], 1e-9)",
            "--metric",
            "final(plant.x[0])",
            "-q",
            "-o",
        ])
        .arg(&table)
        .current_dir(manifest())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "one point fails");
    let text = std::fs::read_to_string(&table).unwrap();
    let mut rows = csv_rows(&text);
    rows.remove(0);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), rows.len());
    for (p, row) in points.iter().zip(&rows) {
        let values: Vec<String> = p["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| match x {
                serde_json::Value::String(s) => s.clone(),
                x => x.to_string(),
            })
            .collect();
        assert_eq!(values, row[..2], "{p}");
        for (k, m) in p["metrics"].as_array().unwrap().iter().enumerate() {
            let cli: f64 = row[2 + k].parse().unwrap();
            assert_bits(&format!("{p}"), &[number(m)], &[cli]);
        }
        assert_eq!(p["error"].as_str().unwrap_or(""), row[4], "{p}");
    }
}

/// `GET /api/scenario`: the parameters as written (kind, default, value,
/// comment, choices of a law), the columns of the CSV header, the plots.
#[test]
fn a_scenario_is_described() {
    let server = Served::start(&manifest(), &[]);
    let path = "examples/smc_double_integrator.toml";
    let d = server.get(&format!("/api/scenario?path={path}")).json();
    assert_eq!(d["name"], "smc_double_integrator");
    let p = d["parameters"].as_array().unwrap();
    let names: Vec<&str> = p.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "law",
            "alpha",
            "step",
            "control_period",
            "sensor_delay",
            "actuator_delay",
            "t_end"
        ]
    );
    assert_eq!(p[0]["kind"], "word");
    assert_eq!(p[0]["default"], "smc_implicit");
    assert!(p[0]["choices"]
        .as_array()
        .unwrap()
        .contains(&json!("smc_explicit")));
    assert_eq!(p[1]["kind"], "number");
    assert_eq!(p[1]["default"], "1");
    assert_eq!(p[1]["value"], 1.0);
    assert_eq!(p[2]["default"], "0.001");
    let (header, _) = cli_run(path, &[]).unwrap();
    let columns: Vec<String> = d["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert_eq!(columns, header);
    assert_eq!(
        d["plots"],
        json!([{ "title": "sliding variable and input", "x": "t",
                 "y": ["controller.sigma[0]", "controller.u[0]"] }])
    );
    assert_eq!(d["t_end"], 5.0);
    assert_eq!(d["rigid"], false);
    assert_eq!(
        server
            .get("/api/scenario?path=examples/cube_on_plane.toml")
            .json()["rigid"],
        true
    );
}

/// The page and its files: served, and under 600 KB together.
#[test]
fn the_page_and_its_assets_are_small() {
    let server = Served::start(&manifest(), &[]);
    let page = server.get("/");
    assert_eq!(page.status, 200);
    let mut total = page.body.len();
    let mut files = vec![];
    for part in page.body.split("\"/assets/").skip(1) {
        files.push(part.split('"').next().unwrap().to_string());
    }
    // The modules the page's module imports.
    for module in ["api.js", "plots.js", "state.js"] {
        files.push(module.to_string());
    }
    for f in &files {
        let r = server.get(&format!("/assets/{f}"));
        assert_eq!(r.status, 200, "{f}");
        total += r.body.len();
    }
    eprintln!("page and assets: {total} bytes");
    assert!(total < 600 * 1024, "{total} bytes");
}
