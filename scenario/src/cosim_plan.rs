//! The `[[fmus]]` and `[[connections]]` sections of a scenario file,
//! evaluated and checked as far as the file alone allows: names unique and
//! well formed, FMU files present (paths relative to the scenario file),
//! steps positive, parameter values finite, connection ends naming a
//! declared FMU. Whether a variable exists in an FMU and has the right
//! causality is known only once the FMU is opened: that check belongs to
//! the crate that opens it (nonsmooth-cosim), which receives the places of
//! the names here to locate its errors.
//!
//! The scenario crate does not depend on nonsmooth-cosim: the FMU export
//! runtime (nonsmooth-fmus) builds on this crate, and an exported FMU must
//! not carry an FMU importer (the `fmi` crate, libclang at build time).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::error::{Place, Result, ScenarioError, Source};
use super::expr::Scope;
use super::params::parameters_and_words;
use super::schema::{Quantity, SStr, ScenarioFile};
use super::values::{is_identifier, Ctx};

/// One FMU of a scenario, evaluated.
#[derive(Debug, Clone, PartialEq)]
pub struct FmuPlan {
    /// Its name in the scenario.
    pub name: String,
    /// Where its name is.
    pub name_place: Place,
    /// The `.fmu` file (the scenario file's directory joined with `path`).
    pub path: PathBuf,
    /// Communication step, > 0.
    pub step: f64,
    /// Values to set before initialisation: variable, value, place.
    pub parameters: Vec<(String, f64, Place)>,
}

/// One end of a connection: `<fmu>.<variable>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// The FMU's name (declared in `[[fmus]]`).
    pub fmu: String,
    /// The variable's name in the FMU (not checked here).
    pub variable: String,
    /// Where the end is written.
    pub place: Place,
}

/// One `[[connections]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionPlan {
    /// The output end.
    pub from: Endpoint,
    /// The input end.
    pub to: Endpoint,
}

/// The FMUs of a scenario and their connections, in file order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CosimPlan {
    /// The FMUs.
    pub fmus: Vec<FmuPlan>,
    /// The connections.
    pub connections: Vec<ConnectionPlan>,
}

impl CosimPlan {
    /// The FMU named `name`, if declared.
    pub fn fmu(&self, name: &str) -> Option<&FmuPlan> {
        self.fmus.iter().find(|f| f.name == name)
    }
}

/// Evaluates the two sections (none when the file has no `[[fmus]]`).
pub(super) fn plan(
    src: &Source,
    file: &ScenarioFile,
    overrides: &BTreeMap<String, Quantity>,
) -> Result<Option<CosimPlan>> {
    if file.fmus.is_empty() {
        if let Some(c) = file.connections.first() {
            return Err(ScenarioError::Invalid {
                at: src.span(c.span()),
                reason: "a connection needs FMUs: the file has no [[fmus]] entry".into(),
            });
        }
        return Ok(None);
    }
    let (params, _) = parameters_and_words(src, file, overrides)?;
    let ctx = Ctx {
        src,
        scope: Scope::constant(&params),
        t0: 0.0,
    };
    let dir = src.path().parent().unwrap_or(Path::new(""));
    let mut plan = CosimPlan::default();
    let mut names = HashSet::new();
    for entry in &file.fmus {
        let e = entry.get_ref();
        let name = e.name.get_ref();
        let name_place = src.span(e.name.span());
        if !is_identifier(name) {
            return Err(ScenarioError::Invalid {
                at: name_place,
                reason: format!(
                    "the FMU name `{name}` must be an identifier (letters, digits, `_`)"
                ),
            });
        }
        if !names.insert(name.clone()) {
            return Err(ScenarioError::Invalid {
                at: name_place,
                reason: format!("a second FMU named `{name}`"),
            });
        }
        let path = dir.join(e.path.get_ref());
        if !path.is_file() {
            return Err(ScenarioError::Invalid {
                at: src.span(e.path.span()),
                reason: format!("no FMU file {}", path.display()),
            });
        }
        let step = ctx.number(&e.step, &format!("the step of FMU `{name}`"))?;
        if step <= 0.0 {
            return Err(ScenarioError::Invalid {
                at: src.span(e.step.span()),
                reason: format!("the step of FMU `{name}` is {step}; it must be > 0"),
            });
        }
        let mut parameters = Vec::new();
        if let Some(table) = &e.parameters {
            for (variable, q) in table.get_ref() {
                let value = ctx.number(q, &format!("parameter `{variable}` of FMU `{name}`"))?;
                parameters.push((variable.clone(), value, src.span(q.span())));
            }
        }
        plan.fmus.push(FmuPlan {
            name: name.clone(),
            name_place,
            path,
            step,
            parameters,
        });
    }
    for c in &file.connections {
        let c = c.get_ref();
        let from = endpoint(src, &c.from, &names)?;
        let to = endpoint(src, &c.to, &names)?;
        plan.connections.push(ConnectionPlan { from, to });
    }
    Ok(Some(plan))
}

/// `<fmu>.<variable>`, the FMU declared. The variable may itself hold dots
/// (Modelica names such as `body.x`): the FMU's name ends at the first dot.
pub(super) fn endpoint(src: &Source, s: &SStr, names: &HashSet<String>) -> Result<Endpoint> {
    let text = s.get_ref();
    let place = src.span(s.span());
    let Some((fmu, variable)) = text
        .split_once('.')
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
    else {
        return Err(ScenarioError::Invalid {
            at: place,
            reason: format!("`{text}` is no `<fmu>.<variable>`"),
        });
    };
    if !names.contains(fmu) {
        let mut known: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
        known.sort_unstable();
        return Err(ScenarioError::Invalid {
            at: place,
            reason: format!("no FMU named `{fmu}` (FMUs: {})", known.join(", ")),
        });
    }
    Ok(Endpoint {
        fmu: fmu.to_string(),
        variable: variable.to_string(),
        place,
    })
}

/// The refusal of the native builder: a scenario with FMUs is built by
/// nonsmooth-cosim.
pub(super) fn refuse_native(src: &Source, file: &ScenarioFile) -> Result<()> {
    let first: Option<&Spanned<_>> = file.fmus.first();
    match first {
        Some(f) => Err(ScenarioError::Invalid {
            at: src.span(f.span()),
            reason: "a scenario with [[fmus]] is a co-simulation, built by nonsmooth-cosim, not by Scenario::build".into(),
        }),
        None => Ok(()),
    }
}
