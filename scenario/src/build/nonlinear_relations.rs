//! Nonlinear relations of `[[interactions]]` entries, written as
//! expressions:
//!
//! - `lagrangian_scleronomous`: y = h(q), p = J(q)ᵀ λ, with `h` over
//!   `q0 … q{n−1}` (the positions of the linked systems, in order) and the
//!   optional `jacobian` J = ∂h/∂q (m × n);
//! - `first_order_nonlinear`: y = h(t, x, λ), r = g(t, x, λ), with `h` and
//!   `g` over `t`, `x0 … x{n−1}` and `lambda0 … lambda{m−1}`, and the
//!   optional Jacobians `C` = ∂h/∂x, `D` = ∂h/∂λ, `B` = ∂g/∂λ, `K` = ∂g/∂x.
//!
//! A Jacobian that is not given is computed by forward differences in the
//! core.

use std::sync::Arc;

use super::functions::{self, names, MatrixFn};
use super::{refuse, required, Kind};
use crate::error::Result;
use crate::schema::RelationTable;
use crate::values::Ctx;
use nonsmooth::modelling::functions::{
    PositionFn, PositionJacobianFn, RelationFn, RelationJacobianFn,
};
use nonsmooth::modelling::{FirstOrderNonlinearR, LagrangianScleronomous, Relation};

/// Refuses the keys of the nonlinear relations on a relation of another
/// type.
pub(super) fn refuse_keys(ctx: Ctx<'_>, r: &RelationTable, kind_name: &str) -> Result<()> {
    let kind = Kind {
        name: kind_name,
        what: "relation",
    };
    let keys = "see docs/scenarios.md";
    refuse(ctx, &r.h_fn, "h", kind, keys)?;
    refuse(ctx, &r.g, "g", kind, keys)?;
    refuse(ctx, &r.jacobian, "jacobian", kind, keys)?;
    refuse(ctx, &r.k, "K", kind, keys)
}

/// y = h(q), J = ∂h/∂q given or by forward differences.
pub(super) fn scleronomous(
    ctx: Ctx<'_>,
    r: &RelationTable,
    span: std::ops::Range<usize>,
    n: usize,
) -> Result<Relation> {
    let kind = "a lagrangian_scleronomous relation";
    let keys = "h, jacobian";
    for (m, key) in [
        (&r.h, "H"),
        (&r.c, "C"),
        (&r.b_matrix, "B"),
        (&r.d, "D"),
        (&r.f, "F"),
        (&r.k, "K"),
    ] {
        refuse(ctx, m, key, kind, keys)?;
    }
    for (v, key) in [(&r.b, "b"), (&r.e, "e"), (&r.g, "g")] {
        refuse(ctx, v, key, kind, keys)?;
    }
    refuse(ctx, &r.point, "point", kind, keys)?;
    let vars: Vec<String> = names("q", n).collect();
    let h_text = required(ctx, &r.h_fn, span, "h", kind)?;
    let m = h_text.get_ref().len();
    let h = functions::vector(ctx, h_text, "h", m, "the number of its rows", &vars)?;
    let jacobian = r
        .jacobian
        .as_ref()
        .map(|j| functions::matrix(ctx, j, "jacobian", (m, n), &vars))
        .transpose()?;
    let h: PositionFn = Arc::new(move |q, y| h.eval(|k| q[k], y));
    let jacobian =
        jacobian.map(|j| -> PositionJacobianFn { Arc::new(move |q, out| j.eval(|k| q[k], out)) });
    Ok(LagrangianScleronomous {
        output_dim: m,
        h,
        jacobian,
    }
    .into())
}

/// A relation function of (t, x, λ): slot 0 is t, then x, then λ.
fn relation_jacobian(j: MatrixFn, n: usize) -> RelationJacobianFn {
    Arc::new(move |t, x, l, out| j.eval(|k| slot(t, x, l, n, k), out))
}

#[inline]
fn slot(t: f64, x: &[f64], l: &[f64], n: usize, k: usize) -> f64 {
    if k == 0 {
        t
    } else if k <= n {
        x[k - 1]
    } else {
        l[k - 1 - n]
    }
}

/// y = h(t, x, λ), r = g(t, x, λ), the Jacobians given or by forward
/// differences.
pub(super) fn first_order(
    ctx: Ctx<'_>,
    r: &RelationTable,
    span: std::ops::Range<usize>,
    n: usize,
) -> Result<Relation> {
    let kind = "a first_order_nonlinear relation";
    let keys = "h, g, C, D, B, K";
    refuse(ctx, &r.h, "H", kind, keys)?;
    refuse(ctx, &r.f, "F", kind, keys)?;
    refuse(ctx, &r.jacobian, "jacobian", kind, keys)?;
    refuse(ctx, &r.b, "b", kind, keys)?;
    refuse(ctx, &r.e, "e", kind, keys)?;
    refuse(ctx, &r.point, "point", kind, keys)?;
    let h_text = required(ctx, &r.h_fn, span.clone(), "h", kind)?;
    let g_text = required(ctx, &r.g, span, "g", kind)?;
    let m = h_text.get_ref().len();
    // Slots: t, x0 … x{n−1}, lambda0 … lambda{m−1}.
    let vars: Vec<String> = std::iter::once("t".to_string())
        .chain(names("x", n))
        .chain(names("lambda", m))
        .collect();
    let h = functions::vector(ctx, h_text, "h", m, "the number of its rows", &vars)?;
    let g = functions::vector(
        ctx,
        g_text,
        "g",
        n,
        "the dimension of the linked systems",
        &vars,
    )?;
    debug_assert_eq!(g.len(), n);
    let jac = |v: &Option<crate::schema::SMat>, key: &str, shape: (usize, usize)| {
        v.as_ref()
            .map(|j| functions::matrix(ctx, j, key, shape, &vars).map(|j| relation_jacobian(j, n)))
            .transpose()
    };
    let jacobian_h_x = jac(&r.c, "C", (m, n))?;
    let jacobian_h_lambda = jac(&r.d, "D", (m, m))?;
    let jacobian_g_lambda = jac(&r.b_matrix, "B", (n, m))?;
    let jacobian_g_x = jac(&r.k, "K", (n, n))?;
    let h: RelationFn = Arc::new(move |t, x, l, y| h.eval(|k| slot(t, x, l, n, k), y));
    let g: RelationFn = Arc::new(move |t, x, l, out| g.eval(|k| slot(t, x, l, n, k), out));
    Ok(FirstOrderNonlinearR {
        output_dim: m,
        h,
        g,
        jacobian_h_x,
        jacobian_h_lambda,
        jacobian_g_lambda,
        jacobian_g_x,
    }
    .into())
}
