//! Every path named in README.md and docs/*.md exists.
//!
//! A path is a backticked token with a `/` that looks like a file or folder
//! of the repository (`src/simulation/events.rs`, `examples/`), or the
//! target of a Markdown link that is not a web address or an anchor. It
//! resolves when it names a file or folder relative to the repository's
//! root or to the page's folder, or when it is the tail of a repository
//! path (pages write `build/bodies.rs` for `scenario/src/build/bodies.rs`
//! in a sentence that names the crate), unless it starts with a top-level
//! folder (`tests/x.rs` must be the root's). Tokens that are not paths of this
//! repository — files inside an exported FMU, output files a command
//! writes, placeholders — are listed in `docs/paths-not-in-repo.txt`, one
//! per line, each with the reason on the line above.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Files and folders under `root`, relative, with `/` separators; build
/// output, version control and virtual environments left out.
fn walk(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if matches!(
                name.as_str(),
                "target" | ".git" | "node_modules" | "__pycache__" | ".venv" | ".pytest_cache"
            ) {
                continue;
            }
            let path = rel.join(&name);
            let text = path.to_string_lossy().replace('\\', "/");
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                out.insert(format!("{text}/"));
                stack.push(path);
            }
            out.insert(text);
        }
    }
    out
}

/// The path-like tokens of one line: backticked tokens with a `/`, and
/// Markdown link targets.
fn tokens(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut parts = line.split('`');
    // Odd-numbered parts are inside backticks.
    let _ = parts.next();
    let mut inside = true;
    for part in parts {
        if inside && is_path_like(part) {
            out.push(part.to_string());
        }
        inside = !inside;
    }
    let mut rest = line;
    while let Some(k) = rest.find("](") {
        let after = &rest[k + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split('#').next().unwrap_or("");
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            out.push(target.to_string());
        }
        rest = &after[end..];
    }
    out
}

/// A token written like a repository path: word characters, `.`, `-`,
/// `_` and `/` only, at least one `/`, not a command line or an option.
fn is_path_like(token: &str) -> bool {
    token.contains('/')
        && !token.starts_with('/')
        && !token.starts_with("http")
        && !token.contains("//")
        && token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | '*'))
        && token.chars().any(|c| c.is_ascii_alphabetic())
}

#[test]
fn every_path_named_in_the_docs_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tree = walk(root);
    let top: BTreeSet<&str> = tree
        .iter()
        .filter(|p| !p.ends_with('/') && !p.contains('/'))
        .map(String::as_str)
        .collect();
    let allowed_text = fs::read_to_string(root.join("docs/paths-not-in-repo.txt"))
        .expect("docs/paths-not-in-repo.txt");
    let allowed: BTreeSet<&str> = allowed_text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let mut pages = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| PathBuf::from("docs").join(e.file_name()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    assert!(pages.len() > 10, "the docs were not found under {root:?}");

    let resolves = |page: &Path, token: &str| -> bool {
        if allowed.contains(token) {
            return true;
        }
        // A glob names its folder: that folder must exist.
        let token = match token.find('*') {
            Some(k) => &token[..token[..k].rfind('/').map_or(0, |s| s + 1)],
            None => token,
        };
        if token.is_empty() {
            return true;
        }
        let dir = page.parent().unwrap_or(Path::new(""));
        if root.join(token).exists() || root.join(dir).join(token).exists() {
            return true;
        }
        // A tail of a repository path, when the token does not start at a
        // top-level folder (`tests/x.rs` must be the root's tests/).
        let tail = token.trim_start_matches("./");
        let first = tail.split('/').next().unwrap_or("");
        !top.contains(first)
            && tree
                .iter()
                .any(|p| p == tail || p.ends_with(&format!("/{tail}")))
    };

    let mut missing = Vec::new();
    let mut seen = 0usize;
    for page in &pages {
        let text = fs::read_to_string(root.join(page)).expect("a page of the docs");
        for (n, line) in text.lines().enumerate() {
            for token in tokens(line) {
                seen += 1;
                if !resolves(page, &token) {
                    missing.push(format!("{}:{}: `{token}`", page.display(), n + 1));
                }
            }
        }
    }
    assert!(seen > 100, "only {seen} paths found: the scan is broken");
    assert!(
        missing.is_empty(),
        "paths named in the docs that do not exist (fix the page, or list a token that is \
         not a repository path in docs/paths-not-in-repo.txt with its reason):\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_scan_finds_paths_and_leaves_other_tokens() {
    assert_eq!(
        tokens("see `src/simulation/events.rs` and [the page](docs/fmi.md#export)"),
        ["src/simulation/events.rs", "docs/fmi.md"]
    );
    assert!(tokens("`cargo run --release -- run x.toml` `t_end` `a / b`").is_empty());
    assert!(tokens("[crate](https://crates.io/crates/fmi) and [here](#anchor)").is_empty());
}
