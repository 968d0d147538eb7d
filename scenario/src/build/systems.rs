//! The `[[systems]]` entries: Lagrangian linear systems, first-order
//! linear and nonlinear systems and two-link arms.

use std::collections::HashMap;
use std::sync::Arc;

use nalgebra::{DMatrix, DVector};

use super::functions::{self, names};
use super::{instance, instances, model_error, refuse, required};
use crate::error::{Result, ScenarioError};
use crate::schema::{ScenarioFile, SystemEntry};
use crate::values::Ctx;
use crate::Places;
use nonsmooth::modelling::functions::{StateFn, StateJacobianFn};
use nonsmooth::modelling::models::TwoLinkArm;
use nonsmooth::modelling::{
    DynamicalSystem, FirstOrderLinear, FirstOrderNonlinear, LagrangianLinearTi, ModelBuilder,
    SystemId,
};

/// The systems added, by name, their dimensions, and the two-link arms
/// among them (whose height relations need their data).
#[derive(Default)]
pub(super) struct Systems {
    pub ids: HashMap<String, SystemId>,
    pub dims: HashMap<SystemId, usize>,
    pub arms: HashMap<SystemId, TwoLinkArm>,
}

/// Adds every instance of the `[[systems]]` entries to `builder`, noting
/// where each is in the file (one place per entry, shared by its
/// instances).
pub(super) fn add_systems(
    ctx: Ctx<'_>,
    file: &ScenarioFile,
    builder: &mut ModelBuilder,
    places: &mut Places,
) -> Result<Systems> {
    let mut out = Systems::default();
    for entry in &file.systems {
        let span = entry.span();
        let e = entry.get_ref();
        let at = ctx.at(span.clone());
        let (var, values) = instances(ctx, &e.repeat)?;
        out.ids.reserve(values.len());
        places.systems.reserve(values.len());
        for i in values {
            let ctx = instance(ctx, var.as_deref(), i);
            let name = ctx.render(&e.name, "the name")?;
            let (ds, arm) = system(ctx, e, span.clone())?;
            let dim = ds.dim();
            let id = builder
                .add_system(&name, ds)
                .map_err(|source| model_error(ctx, span.clone(), source))?;
            if let Some(arm) = arm {
                out.arms.insert(id, arm);
            }
            out.dims.insert(id, dim);
            places.systems.insert(name.clone(), at.clone());
            out.ids.insert(name, id);
        }
    }
    Ok(out)
}

const LAGRANGIAN_KEYS: &str = "q0, v0, mass or mass_diagonal, stiffness, damping, fext";
const FIRST_ORDER_KEYS: &str = "x0, A, b";
const NONLINEAR_KEYS: &str = "x0, f, jacobian";
const ARM_KEYS: &str = "q0, v0, lengths, masses, inertias, gravity";

/// Refuses the two-link arm's keys on another system type.
fn refuse_arm_keys(ctx: Ctx<'_>, e: &SystemEntry, kind: &str, keys: &str) -> Result<()> {
    for (v, key) in [
        (&e.lengths, "lengths"),
        (&e.masses, "masses"),
        (&e.inertias, "inertias"),
    ] {
        refuse(ctx, v, key, kind, keys)?;
    }
    refuse(ctx, &e.gravity, "gravity", kind, keys)
}

/// Refuses the first-order nonlinear system's keys on another system type.
fn refuse_nonlinear_keys(ctx: Ctx<'_>, e: &SystemEntry, kind: &str, keys: &str) -> Result<()> {
    refuse(ctx, &e.f, "f", kind, keys)?;
    refuse(ctx, &e.jacobian, "jacobian", kind, keys)
}

/// ẋ = f(t, x) from `x0`, `f` (expressions of `t`, `x0`, `x1`, …) and the
/// optional `jacobian` ∂f/∂x (forward differences when absent).
fn first_order_nonlinear(
    ctx: Ctx<'_>,
    e: &SystemEntry,
    span: std::ops::Range<usize>,
) -> Result<FirstOrderNonlinear> {
    let kind = "a first_order_nonlinear system";
    refuse_arm_keys(ctx, e, kind, NONLINEAR_KEYS)?;
    for (v, key) in [
        (&e.q0, "q0"),
        (&e.v0, "v0"),
        (&e.mass_diagonal, "mass_diagonal"),
        (&e.fext, "fext"),
        (&e.b, "b"),
    ] {
        refuse(ctx, v, key, kind, NONLINEAR_KEYS)?;
    }
    for (m, key) in [
        (&e.mass, "mass"),
        (&e.stiffness, "stiffness"),
        (&e.damping, "damping"),
        (&e.a, "A"),
    ] {
        refuse(ctx, m, key, kind, NONLINEAR_KEYS)?;
    }
    let x0 = ctx.vector(required(ctx, &e.x0, span.clone(), "x0", kind)?, "x0")?;
    let n = x0.len();
    // Slots: t, then x0 … x{n−1}.
    let vars: Vec<String> = std::iter::once("t".to_string())
        .chain(names("x", n))
        .collect();
    let f = functions::vector(
        ctx,
        required(ctx, &e.f, span, "f", kind)?,
        "f",
        n,
        "the length of x0",
        &vars,
    )?;
    let jacobian = e
        .jacobian
        .as_ref()
        .map(|j| functions::matrix(ctx, j, "jacobian", (n, n), &vars))
        .transpose()?;
    let f: StateFn = Arc::new(move |t, x, out| {
        f.eval(|k| if k == 0 { t } else { x[k - 1] }, out);
    });
    let jacobian = jacobian.map(|j| -> StateJacobianFn {
        Arc::new(move |t, x, out| j.eval(|k| if k == 0 { t } else { x[k - 1] }, out))
    });
    Ok(FirstOrderNonlinear { x0, f, jacobian })
}

/// A two-link arm's data from its entry: two values per vector.
fn arm_data(ctx: Ctx<'_>, e: &SystemEntry, span: std::ops::Range<usize>) -> Result<TwoLinkArm> {
    let kind = "a two_link_arm system";
    let pair = |key: &str, v: &Option<toml::Spanned<_>>| -> Result<[f64; 2]> {
        let v: &crate::schema::SVec = required(ctx, v, span.clone(), key, kind)?;
        let x = ctx.vector(v, key)?;
        if x.len() != 2 {
            return Err(ScenarioError::Invalid {
                at: ctx.at(v.span()),
                reason: format!("`{key}` of a two_link_arm has two values, got {}", x.len()),
            });
        }
        Ok([x[0], x[1]])
    };
    let lengths = pair("lengths", &e.lengths)?;
    let masses = pair("masses", &e.masses)?;
    let inertias = pair("inertias", &e.inertias)?;
    let gravity = match &e.gravity {
        Some(g) => ctx.number(g, "gravity")?,
        None => 9.81,
    };
    TwoLinkArm::new(lengths, masses, inertias, gravity).map_err(|source| ScenarioError::Model {
        at: ctx.at(span),
        source,
    })
}

fn system(
    ctx: Ctx<'_>,
    e: &SystemEntry,
    span: std::ops::Range<usize>,
) -> Result<(DynamicalSystem, Option<TwoLinkArm>)> {
    match e.kind.get_ref().as_str() {
        "first_order_nonlinear" => Ok((first_order_nonlinear(ctx, e, span)?.into(), None)),
        "two_link_arm" => {
            let kind = "a two_link_arm system";
            refuse_nonlinear_keys(ctx, e, kind, ARM_KEYS)?;
            refuse(ctx, &e.x0, "x0", kind, ARM_KEYS)?;
            refuse(ctx, &e.a, "A", kind, ARM_KEYS)?;
            refuse(ctx, &e.b, "b", kind, ARM_KEYS)?;
            refuse(ctx, &e.mass_diagonal, "mass_diagonal", kind, ARM_KEYS)?;
            refuse(ctx, &e.fext, "fext", kind, ARM_KEYS)?;
            for (m, key) in [
                (&e.mass, "mass"),
                (&e.stiffness, "stiffness"),
                (&e.damping, "damping"),
            ] {
                refuse(ctx, m, key, kind, ARM_KEYS)?;
            }
            let arm = arm_data(ctx, e, span.clone())?;
            let q0 = ctx.vector(required(ctx, &e.q0, span, "q0", kind)?, "q0")?;
            let v0 = match &e.v0 {
                Some(v) => ctx.vector(v, "v0")?,
                None => DVector::zeros(q0.len()),
            };
            Ok((arm.system(q0, v0).into(), Some(arm)))
        }
        "lagrangian_linear" => {
            let kind = "a lagrangian_linear system";
            refuse_nonlinear_keys(ctx, e, kind, LAGRANGIAN_KEYS)?;
            refuse_arm_keys(ctx, e, kind, LAGRANGIAN_KEYS)?;
            refuse(ctx, &e.x0, "x0", kind, LAGRANGIAN_KEYS)?;
            refuse(ctx, &e.a, "A", kind, LAGRANGIAN_KEYS)?;
            refuse(ctx, &e.b, "b", kind, LAGRANGIAN_KEYS)?;
            let q0 = ctx.vector(required(ctx, &e.q0, span.clone(), "q0", kind)?, "q0")?;
            let v0 = match &e.v0 {
                Some(v) => ctx.vector(v, "v0")?,
                None => DVector::zeros(q0.len()),
            };
            let mass = match (&e.mass, &e.mass_diagonal) {
                (Some(m), None) => ctx.matrix(m, "mass")?,
                (None, Some(d)) => DMatrix::from_diagonal(&ctx.vector(d, "mass_diagonal")?),
                (Some(_), Some(d)) => {
                    return Err(ScenarioError::Invalid {
                        at: ctx.at(d.span()),
                        reason: "give either `mass` or `mass_diagonal`, not both".into(),
                    })
                }
                (None, None) => {
                    return Err(ScenarioError::Invalid {
                        at: ctx.at(span),
                        reason: format!("{kind} needs `mass` or `mass_diagonal`"),
                    })
                }
            };
            let mut ds = LagrangianLinearTi::new(q0, v0, mass);
            if let Some(k) = &e.stiffness {
                ds = ds.with_stiffness(ctx.matrix(k, "stiffness")?);
            }
            if let Some(c) = &e.damping {
                ds = ds.with_damping(ctx.matrix(c, "damping")?);
            }
            if let Some(f) = &e.fext {
                ds = ds.with_fext(ctx.time_vector(f, "fext")?);
            }
            Ok((ds.into(), None))
        }
        "first_order_linear" => {
            let kind = "a first_order_linear system";
            refuse_nonlinear_keys(ctx, e, kind, FIRST_ORDER_KEYS)?;
            refuse_arm_keys(ctx, e, kind, FIRST_ORDER_KEYS)?;
            for (v, key) in [
                (&e.q0, "q0"),
                (&e.v0, "v0"),
                (&e.mass_diagonal, "mass_diagonal"),
                (&e.fext, "fext"),
            ] {
                refuse(ctx, v, key, kind, FIRST_ORDER_KEYS)?;
            }
            for (m, key) in [
                (&e.mass, "mass"),
                (&e.stiffness, "stiffness"),
                (&e.damping, "damping"),
            ] {
                refuse(ctx, m, key, kind, FIRST_ORDER_KEYS)?;
            }
            let x0 = ctx.vector(required(ctx, &e.x0, span.clone(), "x0", kind)?, "x0")?;
            let a = ctx.time_matrix(required(ctx, &e.a, span, "A", kind)?, "A")?;
            let mut ds = FirstOrderLinear::new(x0, DMatrix::zeros(0, 0)).with_a(a);
            if let Some(b) = &e.b {
                ds = ds.with_b(ctx.time_vector(b, "b")?);
            }
            Ok((ds.into(), None))
        }
        other => Err(ScenarioError::Invalid {
            at: ctx.at(e.kind.span()),
            reason: format!(
                "unknown system type `{other}` \
                 (types: lagrangian_linear, first_order_linear, first_order_nonlinear, \
                 two_link_arm)"
            ),
        }),
    }
}
