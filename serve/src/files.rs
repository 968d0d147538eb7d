//! The served folder: its scenario files, and the one way a request's
//! path becomes a file — relative, without `..`, inside the folder once
//! symbolic links are resolved. Files a scenario names (FMUs, meshes) must
//! be inside the folder too.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::error::ApiError;

/// Largest scenario file read, in bytes.
pub const MAX_SCENARIO_BYTES: u64 = 1 << 20;

/// Deepest folder level searched for scenario files.
const MAX_DEPTH: usize = 8;

/// Most scenario files listed.
const MAX_LISTED: usize = 2000;

/// The served folder, resolved once (symbolic links followed).
#[derive(Debug, Clone)]
pub struct Root {
    dir: PathBuf,
}

/// One scenario file of the folder, as `GET /api/scenarios` lists it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Listed {
    /// Path relative to the folder, `/`-separated.
    pub path: String,
    /// The scenario's name (none when the file does not read).
    pub name: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// Why it does not read, if it does not.
    pub error: Option<String>,
}

impl Root {
    /// The folder `dir`, which must exist.
    pub fn new(dir: &Path) -> std::io::Result<Root> {
        Ok(Root {
            dir: dir.canonicalize()?,
        })
    }

    /// The resolved folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of a request's `path`: relative, no `..`, `.toml`, and
    /// inside the folder after symbolic links are followed (403
    /// otherwise; 400 for a malformed path, 404 for a missing file).
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ApiError> {
        if path.is_empty() || path.len() > 4096 || path.contains('\0') || path.contains('\\') {
            return Err(ApiError::bad(format!("`{path}`: not a relative file path")));
        }
        let rel = Path::new(path);
        for c in rel.components() {
            match c {
                Component::Normal(_) | Component::CurDir => {}
                Component::ParentDir => {
                    return Err(ApiError::forbidden(format!(
                        "`{path}`: `..` is not allowed: only files under the served folder"
                    )))
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(ApiError::forbidden(format!(
                        "`{path}`: absolute paths are not allowed: give a path relative to the served folder"
                    )))
                }
            }
        }
        if rel.extension().and_then(|e| e.to_str()) != Some("toml") {
            return Err(ApiError::bad(format!(
                "`{path}`: not a scenario file (.toml)"
            )));
        }
        let full = self.dir.join(rel);
        let real = full
            .canonicalize()
            .map_err(|_| ApiError::not_found(format!("`{path}`: no such file")))?;
        if !real.starts_with(&self.dir) {
            return Err(ApiError::forbidden(format!(
                "`{path}`: leads outside the served folder (symbolic link)"
            )));
        }
        if !real.is_file() {
            return Err(ApiError::not_found(format!("`{path}`: not a file")));
        }
        Ok(real)
    }

    /// Reads a scenario file's text (at most [`MAX_SCENARIO_BYTES`]).
    pub fn read(&self, file: &Path, shown: &str) -> Result<String, ApiError> {
        let len = std::fs::metadata(file)
            .map_err(|e| ApiError::not_found(format!("{shown}: {e}")))?
            .len();
        if len > MAX_SCENARIO_BYTES {
            return Err(ApiError::bad(format!(
                "{shown}: {len} bytes, more than a scenario file may hold ({MAX_SCENARIO_BYTES})"
            )));
        }
        std::fs::read_to_string(file)
            .map_err(|e| ApiError::bad(format!("{shown}: cannot read the file: {e}")))
    }

    /// Checks that every file the scenario `text` (at `file`) names — an
    /// FMU's `path` in `[[fmus]]`, a mesh's `file` — is inside the folder
    /// (403 otherwise). Files that do not exist are left to the run's
    /// own error.
    pub fn check_references(&self, text: &str, file: &Path, shown: &str) -> Result<(), ApiError> {
        let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else {
            return Ok(()); // the scenario's reader reports the syntax error
        };
        let base = file.parent().unwrap_or(&self.dir);
        let mut named = Vec::new();
        collect_files(doc.as_item(), None, &mut named);
        for name in named {
            let p = Path::new(&name);
            let outside = p.is_absolute()
                || match base.join(p).canonicalize() {
                    Ok(real) => !real.starts_with(&self.dir),
                    // Missing: refuse a lexical escape all the same.
                    Err(_) => p.components().any(|c| c == Component::ParentDir),
                };
            if outside {
                return Err(ApiError::forbidden(format!(
                    "{shown}: names the file `{name}`, outside the served folder"
                )));
            }
        }
        Ok(())
    }

    /// The scenario files under the folder (`.toml` files with a
    /// `[simulation]` table), sorted by path; hidden folders and `target`
    /// are skipped, and so are symbolic links leading out.
    pub fn list(&self) -> Vec<Listed> {
        let mut out = Vec::new();
        self.walk(&self.dir, 0, &mut out);
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    fn walk(&self, dir: &Path, depth: usize, out: &mut Vec<Listed>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            if out.len() >= MAX_LISTED {
                return;
            }
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            let Ok(real) = e.path().canonicalize() else {
                continue;
            };
            if !real.starts_with(&self.dir) {
                continue;
            }
            if real.is_dir() {
                if depth < MAX_DEPTH {
                    self.walk(&e.path(), depth + 1, out);
                }
            } else if name.ends_with(".toml") {
                if let Some(listed) = self.listed(&e.path(), &real) {
                    out.push(listed);
                }
            }
        }
    }

    /// A listing entry for a file that looks like a scenario.
    fn listed(&self, path: &Path, real: &Path) -> Option<Listed> {
        let rel = path.strip_prefix(&self.dir).ok()?;
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let rel = rel.join("/");
        let text = self.read(real, &rel).ok()?;
        let doc = text.parse::<toml_edit::DocumentMut>().ok()?;
        doc.get("simulation")?;
        Some(match nonsmooth_scenario::Scenario::from_str(&text, &rel) {
            Ok(s) => Listed {
                path: rel,
                name: Some(s.name().to_string()),
                description: s.description().map(str::to_string),
                error: None,
            },
            Err(e) => Listed {
                path: rel,
                name: None,
                description: None,
                error: Some(e.to_string()),
            },
        })
    }

    /// `message` with the folder's absolute path taken out, so that files
    /// are named relative to it.
    pub fn relative_message(&self, message: &str) -> String {
        let prefix = format!("{}/", self.dir.display());
        message.replace(&prefix, "")
    }
}

/// The strings of `path` keys under `fmus` and of `file` keys anywhere.
fn collect_files(item: &toml_edit::Item, key: Option<&str>, out: &mut Vec<String>) {
    match item {
        toml_edit::Item::Value(v) => collect_value(v, key, out),
        toml_edit::Item::Table(t) => {
            for (k, v) in t.iter() {
                collect_files(v, Some(k), out);
            }
        }
        toml_edit::Item::ArrayOfTables(a) => {
            for t in a.iter() {
                for (k, v) in t.iter() {
                    let k = if key == Some("fmus") && k == "path" {
                        "file"
                    } else {
                        k
                    };
                    collect_files(v, Some(k), out);
                }
            }
        }
        toml_edit::Item::None => {}
    }
}

fn collect_value(v: &toml_edit::Value, key: Option<&str>, out: &mut Vec<String>) {
    match v {
        toml_edit::Value::String(s) if key == Some("file") => out.push(s.value().clone()),
        toml_edit::Value::Array(a) => {
            for v in a.iter() {
                collect_value(v, None, out);
            }
        }
        toml_edit::Value::InlineTable(t) => {
            for (k, v) in t.iter() {
                collect_value(v, Some(k), out);
            }
        }
        _ => {}
    }
}
