//! Sensors and actuators on systems with named ports, whose values are
//! not a state the user writes C and B over: an FMU's interface system
//! (its exposed outputs, then inputs; `crate::cosim_build`) and a rigid
//! body's stand-in system (`nonsmooth_collision::RigidSimulation`: its 13
//! values x_G, Q, v_G, Ω, then its held force and torque).
//!
//! A sensor names what it measures (`outputs`) and a controller what it
//! drives (`inputs`); S is the selection of those entries among the
//! system's, so that the loop's C is `C · S` (C p × k, default the
//! identity) and its B is `S · B` (B k × m, default the identity).
//!
//! On a rigid body the names are `position`, `quaternion` (w, x, y, z),
//! `velocity`, `omega` (body frame) for sensors and `force` (world frame,
//! N, through the centre of mass) and `torque` (body frame, N·m) for
//! controllers, each whole or one component (`position[2]`); on the
//! system `world`, its recorded values (`kinetic_energy`, …) for sensors.

use nalgebra::DMatrix;

use crate::cosim_build::FmuInterface;
use crate::error::{Place, Result, ScenarioError};
use crate::schema::{ControllerEntry, Inputs, SensorEntry};
use crate::values::Ctx;
use nonsmooth_collision::{BODY_DIM, BODY_INPUTS, BODY_LAYOUT, WORLD_LAYOUT, WORLD_SYSTEM};

fn invalid(at: Place, reason: String) -> ScenarioError {
    ScenarioError::Invalid { at, reason }
}

/// The ports of a rigid scene's system: (name, offset, size) of what a
/// sensor reads and of what a controller drives, and the system's size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ports {
    outputs: &'static [(&'static str, usize, usize)],
    inputs: &'static [(&'static str, usize, usize)],
    dim: usize,
}

/// The ports of system `name` of a rigid scene of `bodies` (none when it is
/// not one of its systems).
pub(crate) fn rigid_ports(bodies: &[String], name: &str) -> Option<Ports> {
    if bodies.iter().any(|b| b == name) {
        Some(Ports {
            outputs: &BODY_LAYOUT,
            inputs: &BODY_INPUTS,
            dim: BODY_DIM,
        })
    } else if !bodies.is_empty() && name == WORLD_SYSTEM {
        Some(Ports {
            outputs: &WORLD_LAYOUT,
            inputs: &[],
            dim: WORLD_LAYOUT.len(),
        })
    } else {
        None
    }
}

/// The entries a port name stands for: `name` (every component) or
/// `name[i]`; `None` when `list` has no such port or component.
fn entries(list: &[(&str, usize, usize)], text: &str) -> Option<Vec<usize>> {
    let text = text.trim();
    let (name, index) = match text.split_once('[') {
        Some((n, rest)) => {
            let i: usize = rest.strip_suffix(']')?.trim().parse().ok()?;
            (n.trim(), Some(i))
        }
        None => (text, None),
    };
    let &(_, offset, size) = list.iter().find(|p| p.0 == name)?;
    match index {
        None => Some((offset..offset + size).collect()),
        Some(i) if i < size => Some(vec![offset + i]),
        Some(_) => None,
    }
}

fn known(list: &[(&str, usize, usize)]) -> String {
    let names: Vec<String> = list
        .iter()
        .map(|&(n, _, k)| {
            if k == 1 {
                n.to_string()
            } else {
                format!("{n}[0..{k}]")
            }
        })
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// A sensor's C on a rigid scene's system: `outputs` names the values
/// measured, C (default I) acts on them.
pub(crate) fn rigid_sensor_c(
    ctx: Ctx<'_>,
    e: &SensorEntry,
    ports: Ports,
    at: &Place,
) -> Result<DMatrix<f64>> {
    let system = e.system.get_ref();
    if let Some(c) = &e.contacts {
        return Err(invalid(
            ctx.at(c.span()),
            format!("`contacts`: the rigid system `{system}` has no interactions to measure"),
        ));
    }
    let Some(outputs) = &e.outputs else {
        return Err(invalid(
            at.clone(),
            format!(
                "a sensor on `{system}` names the values it measures: outputs = [\"…\"] (of {})",
                known(ports.outputs)
            ),
        ));
    };
    let mut rows = Vec::new();
    for name in outputs.get_ref() {
        let found = entries(ports.outputs, name.get_ref()).ok_or_else(|| {
            invalid(
                ctx.at(name.span()),
                format!(
                    "`{}` is not a value of `{system}` (its values: {})",
                    name.get_ref(),
                    known(ports.outputs)
                ),
            )
        })?;
        rows.extend(found);
    }
    if rows.is_empty() {
        return Err(invalid(ctx.at(outputs.span()), "`outputs` is empty".into()));
    }
    let mut s = DMatrix::zeros(rows.len(), ports.dim);
    for (i, &k) in rows.iter().enumerate() {
        s[(i, k)] = 1.0;
    }
    match &e.c {
        None => Ok(s),
        Some(c) => {
            let c_at = ctx.at(c.span());
            let c = ctx.matrix(c, "C")?;
            if c.ncols() != rows.len() {
                return Err(invalid(
                    c_at,
                    format!(
                        "C has {} columns; the sensor measures {} values",
                        c.ncols(),
                        rows.len()
                    ),
                ));
            }
            Ok(c * s)
        }
    }
}

/// A controller's input matrix on a rigid body: `inputs` names the
/// components driven (`force[2]`, `torque`), u enters them through `B`
/// (default I).
pub(crate) fn rigid_input(
    ctx: Ctx<'_>,
    e: &ControllerEntry,
    ports: Ports,
    at: &Place,
) -> Result<DMatrix<f64>> {
    let system = e.system.get_ref();
    if ports.inputs.is_empty() {
        return Err(invalid(
            ctx.at(e.system.span()),
            format!("`{system}` takes no input: controllers act on bodies (`force`, `torque`)"),
        ));
    }
    if let Some(g) = &e.g {
        return Err(invalid(
            ctx.at(g.span()),
            "a rigid body's inputs are driven through `inputs` (and an optional `B`), not `g`"
                .into(),
        ));
    }
    let example = format!("inputs = [\"force[2]\"] (of {})", known(ports.inputs));
    let (names, names_at) = match e.inputs.as_ref().map(|i| (i, i.get_ref())) {
        Some((i, Inputs::Gates(names))) if !names.is_empty() => (names, ctx.at(i.span())),
        Some((i, _)) => {
            return Err(invalid(
                ctx.at(i.span()),
                format!("on the body `{system}`, `inputs` lists what u drives, e.g. {example}"),
            ))
        }
        None => {
            return Err(invalid(
                at.clone(),
                format!("a controller on the body `{system}` names what it drives: {example}"),
            ))
        }
    };
    let mut cols = Vec::new();
    for name in names {
        let found = entries(ports.inputs, name).ok_or_else(|| {
            invalid(
                names_at.clone(),
                format!(
                    "`{name}` is not an input of the body `{system}` (its inputs: {})",
                    known(ports.inputs)
                ),
            )
        })?;
        cols.extend(found);
    }
    let mut s = DMatrix::zeros(ports.dim, cols.len());
    for (j, &k) in cols.iter().enumerate() {
        s[(k, j)] = 1.0;
    }
    match &e.b {
        None => Ok(s),
        Some(b) => {
            let b_at = ctx.at(b.span());
            let b = ctx.matrix(b, "B")?;
            if b.nrows() != cols.len() {
                return Err(invalid(
                    b_at,
                    format!(
                        "B has {} rows; the controller drives {} inputs of `{system}`",
                        b.nrows(),
                        cols.len()
                    ),
                ));
            }
            Ok(s * b)
        }
    }
}

/// A sensor's C over its system's state: `C` for a native system; for an
/// FMU, C (default I) times the selection of its `outputs` among the
/// FMU system's entries (exposed outputs, then inputs).
pub(crate) fn sensor_c(
    ctx: Ctx<'_>,
    e: &SensorEntry,
    fmu: Option<&FmuInterface>,
    at: &Place,
) -> Result<DMatrix<f64>> {
    let Some(f) = fmu else {
        if let Some(o) = &e.outputs {
            return Err(invalid(
                ctx.at(o.span()),
                format!(
                    "`outputs` names variables of an FMU; `{}` is a native system: give `C`",
                    e.system.get_ref()
                ),
            ));
        }
        let c =
            e.c.as_ref()
                .ok_or_else(|| invalid(at.clone(), "a sensor needs `C` (y = C x)".into()))?;
        return ctx.matrix(c, "C");
    };
    let Some(outputs) = &e.outputs else {
        return Err(invalid(
            at.clone(),
            format!(
                "a sensor on the FMU `{}` names the variables it measures: `outputs = [\"…\"]`",
                f.name
            ),
        ));
    };
    if let Some(c) = &e.contacts {
        return Err(invalid(
            ctx.at(c.span()),
            "an FMU has no contacts to measure".into(),
        ));
    }
    let names = outputs.get_ref();
    if names.is_empty() {
        return Err(invalid(ctx.at(outputs.span()), "`outputs` is empty".into()));
    }
    let n = f.dim();
    let mut s = DMatrix::zeros(names.len(), n);
    for (i, name) in names.iter().enumerate() {
        let k = f
            .outputs
            .iter()
            .position(|o| o == name.get_ref())
            .ok_or_else(|| {
                invalid(
                    ctx.at(name.span()),
                    format!(
                        "`{}` is not an exposed output of the FMU `{}`",
                        name.get_ref(),
                        f.name
                    ),
                )
            })?;
        s[(i, k)] = 1.0;
    }
    match &e.c {
        None => Ok(s),
        Some(c) => {
            let c_at = ctx.at(c.span());
            let c = ctx.matrix(c, "C")?;
            if c.ncols() != names.len() {
                return Err(invalid(
                    c_at,
                    format!(
                        "C has {} columns; the sensor measures {} outputs",
                        c.ncols(),
                        names.len()
                    ),
                ));
            }
            Ok(c * s)
        }
    }
}

/// A controller's input matrix on an FMU: `inputs` names the FMU inputs
/// it drives, u enters them through `B` (default I): g = S B u, S placing
/// the named inputs among the FMU system's entries.
pub(crate) fn fmu_input(
    ctx: Ctx<'_>,
    e: &ControllerEntry,
    f: &FmuInterface,
    at: &Place,
) -> Result<DMatrix<f64>> {
    if let Some(g) = &e.g {
        return Err(invalid(
            ctx.at(g.span()),
            "an FMU's inputs are driven through `inputs` (and an optional `B`), not `g`".into(),
        ));
    }
    let names = match e.inputs.as_ref().map(|i| (i, i.get_ref())) {
        Some((_, Inputs::Gates(names))) if !names.is_empty() => names,
        Some((i, _)) => {
            return Err(invalid(
                ctx.at(i.span()),
                format!(
                    "on the FMU `{}`, `inputs` is the list of the FMU inputs driven, e.g. inputs = [\"u\"]",
                    f.name
                ),
            ))
        }
        None => {
            return Err(invalid(
                at.clone(),
                format!(
                    "a controller on the FMU `{}` names the inputs it drives: `inputs = [\"…\"]`",
                    f.name
                ),
            ))
        }
    };
    let n = f.dim();
    let mut s = DMatrix::zeros(n, names.len());
    for (j, name) in names.iter().enumerate() {
        let k = f.inputs.iter().position(|i| i == name).ok_or_else(|| {
            invalid(
                at.clone(),
                format!("`{name}` is not an exposed input of the FMU `{}`", f.name),
            )
        })?;
        s[(f.outputs.len() + k, j)] = 1.0;
    }
    match &e.b {
        None => Ok(s),
        Some(b) => {
            let b_at = ctx.at(b.span());
            let b = ctx.matrix(b, "B")?;
            if b.nrows() != names.len() {
                return Err(invalid(
                    b_at,
                    format!(
                        "B has {} rows; the controller drives {} FMU inputs",
                        b.nrows(),
                        names.len()
                    ),
                ));
            }
            Ok(s * b)
        }
    }
}
