//! What an FMU's resources/ folder holds besides the scenario file:
//! `nonsmooth-fmu.json`, written by the export and read by the shared
//! library at fmi2Instantiate.

use std::path::{Path, PathBuf};

use nonsmooth_scenario::Scenario;
use serde::{Deserialize, Serialize};

use crate::runner::{quantity, RunnerError, ScenarioRunner};

/// The file name of the configuration in resources/.
pub const CONFIG_FILE: &str = "nonsmooth-fmu.json";

/// The file name of the scenario in resources/.
pub const SCENARIO_FILE: &str = "scenario.toml";

/// The contents of `nonsmooth-fmu.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FmuConfig {
    /// Format version (1).
    pub format: u32,
    /// The FMU's GUID, as in modelDescription.xml.
    pub guid: String,
    /// The model identifier.
    pub model_identifier: String,
    /// The scenario file, relative to resources/.
    pub scenario: String,
    /// Parameter values given at export (`--set NAME=VALUE`), in order.
    pub overrides: Vec<(String, String)>,
    /// The FMI version of the export: 2 (the default when absent) or 3; the
    /// instantiation of the other version's entry points is refused.
    #[serde(default = "fmi2", skip_serializing_if = "is_fmi2")]
    pub fmi_version: u32,
}

fn fmi2() -> u32 {
    2
}

fn is_fmi2(v: &u32) -> bool {
    *v == 2
}

/// The resources folder of a `file:` URI (`file:///path`, `file:/path`,
/// `file://localhost/path`), percent-decoded.
pub fn resource_dir(uri: &str) -> Result<PathBuf, String> {
    let path = if let Some(rest) = uri.strip_prefix("file://") {
        if let Some(p) = rest.strip_prefix("localhost") {
            p
        } else if rest.starts_with('/') {
            rest
        } else {
            return Err(format!(
                "fmuResourceLocation `{uri}`: only local file URIs are supported"
            ));
        }
    } else if let Some(rest) = uri.strip_prefix("file:") {
        rest
    } else {
        return Err(format!("fmuResourceLocation `{uri}` is not a file: URI"));
    };
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut k = 0;
    while k < bytes.len() {
        if bytes[k] == b'%' {
            let hex = bytes
                .get(k + 1..k + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("fmuResourceLocation `{uri}`: bad %-escape"))?;
            out.push(hex);
            k += 3;
        } else {
            out.push(bytes[k]);
            k += 1;
        }
    }
    use std::os::unix::ffi::OsStringExt;
    Ok(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

/// Reads the configuration and the scenario from a resources folder.
pub fn load(dir: &Path) -> Result<(FmuConfig, String, PathBuf), String> {
    let cfg_path = dir.join(CONFIG_FILE);
    let text = std::fs::read_to_string(&cfg_path)
        .map_err(|e| format!("cannot read {}: {e}", cfg_path.display()))?;
    let cfg: FmuConfig =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", cfg_path.display()))?;
    if cfg.format != 1 {
        return Err(format!(
            "{}: format {} is not supported by this runtime (1)",
            cfg_path.display(),
            cfg.format
        ));
    }
    let scenario_path = dir.join(&cfg.scenario);
    let scenario = std::fs::read_to_string(&scenario_path)
        .map_err(|e| format!("cannot read {}: {e}", scenario_path.display()))?;
    Ok((cfg, scenario, scenario_path))
}

/// The runner of the scenario text with the export's overrides.
pub fn make_runner(
    cfg: &FmuConfig,
    text: &str,
    path: &Path,
) -> Result<ScenarioRunner, RunnerError> {
    let mut scenario = Scenario::from_str(text, path)?;
    for (name, value) in &cfg.overrides {
        scenario.set_parameter(name, quantity(value))?;
    }
    ScenarioRunner::new(scenario, &cfg.guid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris() {
        for (uri, path) in [
            ("file:///tmp/a%20b/resources/", "/tmp/a b/resources/"),
            ("file:/tmp/x", "/tmp/x"),
            ("file://localhost/tmp/x", "/tmp/x"),
        ] {
            assert_eq!(resource_dir(uri).unwrap(), PathBuf::from(path), "{uri}");
        }
        for bad in ["http://x/y", "file://host/x", "/tmp/x", "file:///a%2"] {
            assert!(resource_dir(bad).is_err(), "{bad}");
        }
    }
}
