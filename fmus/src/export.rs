//! Writing an FMU: modelDescription.xml, the shared library as
//! `binaries/linux64/<modelIdentifier>.so` (FMI 2.0) or
//! `binaries/x86_64-linux/<modelIdentifier>.so` (FMI 3.0), and resources/
//! (the scenario file and `nonsmooth-fmu.json`), zipped (deflate).

use std::io::Write;
use std::path::{Path, PathBuf};

use nonsmooth_scenario::{Scenario, ScenarioError};
use thiserror::Error;
use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

use crate::config::{FmuConfig, CONFIG_FILE, SCENARIO_FILE};
use crate::instance::Standard;
use crate::model_description::model_description;
use crate::runner::{laws, quantity};
use crate::variables::{guid_of, Interface, VarKind};

/// The name of the shared library cargo builds from this crate.
pub const LIBRARY_FILE: &str = "libnonsmooth_fmus.so";

/// What to export.
#[derive(Debug, Clone)]
pub struct ExportRequest<'a> {
    /// The scenario file.
    pub scenario: &'a Path,
    /// `--set NAME=VALUE` overrides, in order.
    pub overrides: &'a [(String, String)],
    /// The shared library (the cdylib of this crate).
    pub library: &'a Path,
    /// The FMU file to write.
    pub output: &'a Path,
    /// The FMI version: 2 or 3 (event mode and early return); both run the
    /// strategy the scenario names.
    pub fmi_version: u32,
}

/// What was written.
#[derive(Debug, Clone)]
pub struct ExportSummary {
    /// The FMU file.
    pub path: PathBuf,
    /// Its model identifier.
    pub model_identifier: String,
    /// Its GUID.
    pub guid: String,
    /// Parameters (tunable among them), inputs, outputs.
    pub parameters: usize,
    /// Tunable parameters.
    pub tunable: usize,
    /// Inputs.
    pub inputs: usize,
    /// Outputs.
    pub outputs: usize,
    /// The newest glibc symbol version the shared library needs
    /// (`GLIBC_2.x`), if it names any.
    pub glibc: Option<String>,
}

/// Why an export failed.
#[derive(Debug, Error)]
pub enum ExportError {
    /// The scenario could not be read or built.
    #[error(transparent)]
    Scenario(#[from] Box<ScenarioError>),
    /// The shared library could not be read.
    #[error("cannot read the FMU runtime library {}: {source}", path.display())]
    Library {
        /// Its path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// An FMI version other than 2 or 3.
    #[error("FMI version {0} is not supported (2 or 3)")]
    Version(u32),
    /// The file is not an ELF shared library.
    #[error("{} is not an ELF shared library", path.display())]
    NotElf {
        /// Its path.
        path: PathBuf,
    },
    /// The FMU could not be written.
    #[error("cannot write {}: {message}", path.display())]
    Write {
        /// The FMU path.
        path: PathBuf,
        /// The cause.
        message: String,
    },
}

/// The newest `GLIBC_2.x[.y]` version named in a binary.
pub fn glibc_requirement(binary: &[u8]) -> Option<String> {
    let pat = b"GLIBC_2.";
    let mut best: Option<Vec<u32>> = None;
    let mut k = 0;
    while k + pat.len() <= binary.len() {
        if &binary[k..k + pat.len()] == pat {
            let mut j = k + pat.len();
            while j < binary.len() && (binary[j].is_ascii_digit() || binary[j] == b'.') {
                j += 1;
            }
            let tail = std::str::from_utf8(&binary[k + 6..j]).unwrap_or("");
            let v: Vec<u32> = tail
                .split('.')
                .filter(|s| !s.is_empty())
                .filter_map(|s| s.parse().ok())
                .collect();
            if v.len() >= 2 && best.as_ref().is_none_or(|b| v > *b) {
                best = Some(v);
            }
            k = j;
        } else {
            k += 1;
        }
    }
    best.map(|v| {
        format!(
            "GLIBC_{}",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(".")
        )
    })
}

/// Builds the scenario with the overrides, and writes the FMU.
pub fn export(req: &ExportRequest<'_>) -> Result<ExportSummary, ExportError> {
    let scenario = Scenario::from_file(req.scenario).map_err(Box::new)?;
    export_scenario(
        scenario,
        req.overrides,
        req.library,
        req.output,
        req.fmi_version,
    )
}

/// [`export`] of a scenario already read (e.g. from a text, with the
/// name its errors are reported under): applies the overrides (texts, as
/// `--set` values), builds it, and writes the FMU (FMI `fmi_version`, 2 or
/// 3) at `output` with the runtime `library` in it.
pub fn export_scenario(
    mut scenario: Scenario,
    overrides: &[(String, String)],
    library: &Path,
    output: &Path,
    fmi_version: u32,
) -> Result<ExportSummary, ExportError> {
    let v3 = match fmi_version {
        2 => false,
        3 => true,
        v => return Err(ExportError::Version(v)),
    };
    if let Some(at) = scenario.fmus_place() {
        return Err(ExportError::Scenario(Box::new(ScenarioError::Invalid {
            at,
            reason: "a co-simulation scenario ([[fmus]]) cannot be exported as an FMU: its \
                     plant is the FMUs it names; export the scenarios of those FMUs instead"
                .into(),
        })));
    }
    let scenario_path = scenario.path().to_path_buf();
    let req = ExportRequest {
        scenario: &scenario_path,
        overrides,
        library,
        output,
        fmi_version,
    };
    for (name, value) in req.overrides {
        scenario
            .set_parameter(name, quantity(value))
            .map_err(Box::new)?;
    }
    let built = scenario.build_with(laws()).map_err(Box::new)?;
    // The same check the runtime makes when it is instantiated: the
    // scenario's control loop on the strategy the scenario names (FMI 2.0
    // and 3.0 alike).
    built.control_loop().map_err(Box::new)?;
    let iface = Interface::new(&built);

    let library = std::fs::read(req.library).map_err(|source| ExportError::Library {
        path: req.library.to_path_buf(),
        source,
    })?;
    if !library.starts_with(b"\x7fELF") {
        return Err(ExportError::NotElf {
            path: req.library.to_path_buf(),
        });
    }

    let tool = format!("nonsmooth {}", env!("CARGO_PKG_VERSION"));
    let overrides_json =
        serde_json::to_string(req.overrides).expect("a list of string pairs serializes");
    let standard = if v3 { Standard::Fmi3 } else { Standard::Fmi2 };
    let describe = |token: &str| model_description(&iface, standard, token, &tool);
    let guid = guid_of(&[
        describe("").as_bytes(),
        scenario.text().as_bytes(),
        overrides_json.as_bytes(),
    ]);
    let xml = describe(&guid);
    let config = FmuConfig {
        format: 1,
        guid: guid.clone(),
        model_identifier: iface.model_identifier.clone(),
        scenario: SCENARIO_FILE.into(),
        overrides: req.overrides.to_vec(),
        fmi_version: req.fmi_version,
    };
    let config_json = serde_json::to_string_pretty(&config).expect("the configuration serializes");

    let write_err = |message: String| ExportError::Write {
        path: req.output.to_path_buf(),
        message,
    };
    let dir = req
        .output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| write_err(e.to_string()))?;
    let file_name = req
        .output
        .file_name()
        .ok_or_else(|| write_err("not a file name".into()))?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> Result<(), String> {
        let file = std::fs::File::create(&tmp).map_err(|e| e.to_string())?;
        let mut zip = zip::ZipWriter::new(file);
        let deflated = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Deflated)
            .unix_permissions(0o644);
        let entries: [(String, &[u8], u32); 4] = [
            ("modelDescription.xml".into(), xml.as_bytes(), 0o644),
            (
                format!(
                    "binaries/{}/{}.so",
                    if v3 { "x86_64-linux" } else { "linux64" },
                    iface.model_identifier
                ),
                &library,
                0o755,
            ),
            (
                format!("resources/{SCENARIO_FILE}"),
                scenario.text().as_bytes(),
                0o644,
            ),
            (
                format!("resources/{CONFIG_FILE}"),
                config_json.as_bytes(),
                0o644,
            ),
        ];
        for (name, data, mode) in entries {
            zip.start_file(name, deflated.unix_permissions(mode))
                .map_err(|e| e.to_string())?;
            zip.write_all(data).map_err(|e| e.to_string())?;
        }
        zip.finish().map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, req.output).map_err(|e| e.to_string())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(write_err(e));
    }
    let count =
        |f: &dyn Fn(&VarKind) -> bool| iface.variables.iter().filter(|v| f(&v.kind)).count();
    Ok(ExportSummary {
        path: req.output.to_path_buf(),
        model_identifier: iface.model_identifier.clone(),
        guid,
        parameters: iface.parameters,
        tunable: count(&|k| matches!(k, VarKind::Parameter { tunable: true, .. })),
        inputs: iface.inputs,
        outputs: iface.output_columns.len(),
        glibc: glibc_requirement(&library),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_glibc_version_is_found() {
        let bin = b"\0GLIBC_2.2.5\0GLIBC_2.34\0GLIBC_2.3\0GLIBC_PRIVATE\0";
        assert_eq!(glibc_requirement(bin).as_deref(), Some("GLIBC_2.34"));
        assert_eq!(glibc_requirement(b"nothing"), None);
    }
}
