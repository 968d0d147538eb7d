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

/// One end of a connection: `<fmu>.<variable>`, or `<object>.<variable>`
/// of the native model when the first name is no declared FMU.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// The FMU's name (declared in `[[fmus]]`), or the native object's
    /// (a system or an interaction) when `native`.
    pub fmu: String,
    /// The variable's name in the FMU (not checked here), or the native
    /// object's variable with its index (`x[0]`, `g[1]`).
    pub variable: String,
    /// Where the end is written.
    pub place: Place,
    /// True when the end names the native model, not an FMU (resolved
    /// against the model when the scenario is built).
    pub native: bool,
}

/// One `[[connections]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionPlan {
    /// The output end.
    pub from: Endpoint,
    /// The input end.
    pub to: Endpoint,
}

/// How connections between FMUs are coupled (`[cosimulation] coupling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CouplingChoice {
    /// `"jacobi"` (default): a connected input at t_k is the source's
    /// output published at its last communication point ≤ t_k.
    #[default]
    Jacobi,
    /// `"gauss-seidel"`: FMUs due at t_k step in declaration order; an
    /// input from an FMU declared before takes the output it just
    /// computed at t_k + T.
    GaussSeidel,
}

/// The FMUs of a scenario and their connections, in file order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CosimPlan {
    /// The FMUs.
    pub fmus: Vec<FmuPlan>,
    /// The connections.
    pub connections: Vec<ConnectionPlan>,
    /// The coupling of connections between FMUs.
    pub coupling: CouplingChoice,
    /// Where `coupling` is written (none when defaulted).
    pub coupling_place: Option<Place>,
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
        refuse_without_fmus(src, file)?;
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
    for entry in &file.connections {
        let c = entry.get_ref();
        let native = !file.systems.is_empty();
        let from = endpoint(src, &c.from, &names, native)?;
        let to = endpoint(src, &c.to, &names, native)?;
        if from.native && to.native {
            let mut known: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
            known.sort_unstable();
            return Err(ScenarioError::Invalid {
                at: src.span(entry.span()),
                reason: format!(
                    "a connection has an FMU at one end at least; neither `{}` nor `{}` names one (FMUs: {})",
                    c.from.get_ref(),
                    c.to.get_ref(),
                    known.join(", ")
                ),
            });
        }
        plan.connections.push(ConnectionPlan { from, to });
    }
    if let Some(t) = &file.cosimulation {
        if let Some(c) = &t.get_ref().coupling {
            let at = src.span(c.span());
            plan.coupling = match c.get_ref().as_str() {
                "jacobi" => CouplingChoice::Jacobi,
                "gauss-seidel" => CouplingChoice::GaussSeidel,
                other => {
                    return Err(ScenarioError::Invalid {
                        at,
                        reason: format!(
                            "unknown coupling `{other}` (couplings: \"jacobi\", \"gauss-seidel\")"
                        ),
                    })
                }
            };
            plan.coupling_place = Some(at);
        }
    }
    Ok(Some(plan))
}

/// `[[connections]]` and `[cosimulation]` need FMUs.
fn refuse_without_fmus(src: &Source, file: &ScenarioFile) -> Result<()> {
    if let Some(c) = file.connections.first() {
        return Err(ScenarioError::Invalid {
            at: src.span(c.span()),
            reason: "a connection needs FMUs: the file has no [[fmus]] entry".into(),
        });
    }
    if let Some(c) = &file.cosimulation {
        return Err(ScenarioError::Invalid {
            at: src.span(c.span()),
            reason: "[cosimulation] needs FMUs: the file has no [[fmus]] entry".into(),
        });
    }
    Ok(())
}

/// `<fmu>.<variable>`, the FMU declared, or `<object>.<variable>` of the
/// native model when the first name is no FMU. The variable may itself
/// hold dots (Modelica names such as `body.x`): the FMU's name ends at the
/// first dot. Without a native model (`native` false) the first name must
/// be an FMU's.
pub(super) fn endpoint(
    src: &Source,
    s: &SStr,
    names: &HashSet<String>,
    native: bool,
) -> Result<Endpoint> {
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
    if !native && !names.contains(fmu) {
        let mut known: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
        known.sort_unstable();
        return Err(ScenarioError::Invalid {
            at: place,
            reason: format!(
                "no FMU named `{fmu}` (FMUs: {}; the file has no native [[systems]])",
                known.join(", ")
            ),
        });
    }
    Ok(Endpoint {
        fmu: fmu.to_string(),
        variable: variable.to_string(),
        place,
        native: !names.contains(fmu),
    })
}

/// The refusal of the native builder: a scenario with FMUs is built by
/// nonsmooth-cosim.
pub(super) fn refuse_native(src: &Source, file: &ScenarioFile) -> Result<()> {
    let first: Option<&Spanned<_>> = file.fmus.first();
    if first.is_none() {
        refuse_without_fmus(src, file)?;
    }
    match first {
        Some(f) => Err(ScenarioError::Invalid {
            at: src.span(f.span()),
            reason: "a scenario with [[fmus]] is a co-simulation, built by nonsmooth-cosim, not by Scenario::build".into(),
        }),
        None => Ok(()),
    }
}
