//! The `[[interactions]]` entries: relations and nonsmooth laws.

use super::nonlinear_relations as nonlinear;
use super::systems::Systems;
use super::{instance, instances, model_error, refuse, required, Kind};
use crate::error::{Result, ScenarioError};
use crate::expr;
use crate::schema::{InteractionEntry, LawTable, RelationTable, ScenarioFile};
use crate::values::Ctx;
use nonsmooth::modelling::models::{ArmPoint, TwoLinkArm};
use nonsmooth::modelling::{
    FirstOrderLinearTi, LagrangianLinearTiR, ModelBuilder, NonsmoothLaw, Relation,
};

/// Adds every instance of the `[[interactions]]` entries to `builder`,
/// on the systems already added.
pub(super) fn add_interactions(
    ctx: Ctx<'_>,
    file: &ScenarioFile,
    builder: &mut ModelBuilder,
    systems: &Systems,
) -> Result<()> {
    for entry in &file.interactions {
        let span = entry.span();
        let e = entry.get_ref();
        let (var, values) = instances(ctx, &e.repeat)?;
        for i in values {
            let ctx = instance(ctx, var.as_deref(), i);
            interaction(ctx, builder, systems, e, span.clone())?;
        }
    }
    Ok(())
}

fn relation(
    ctx: Ctx<'_>,
    r: &toml::Spanned<RelationTable>,
    arm: Option<TwoLinkArm>,
    n: usize,
) -> Result<Relation> {
    let span = r.span();
    let r = r.get_ref();
    let kind_name = r.kind.get_ref().as_str();
    match kind_name {
        "lagrangian_scleronomous" => return nonlinear::scleronomous(ctx, r, span, n),
        "first_order_nonlinear" => return nonlinear::first_order(ctx, r, span, n),
        _ => nonlinear::refuse_keys(ctx, r, kind_name)?,
    }
    if kind_name != "two_link_arm_height" && kind_name != "two_link_arm_contact" {
        let kind = Kind {
            name: kind_name,
            what: "relation",
        };
        refuse(ctx, &r.point, "point", kind, "see docs/scenarios.md")?;
    }
    match kind_name {
        "two_link_arm_height" | "two_link_arm_contact" => {
            let kind = format!("a {kind_name} relation");
            let kind = kind.as_str();
            let keys = "point";
            for (m, key) in [
                (&r.h, "H"),
                (&r.c, "C"),
                (&r.b_matrix, "B"),
                (&r.d, "D"),
                (&r.f, "F"),
            ] {
                refuse(ctx, m, key, kind, keys)?;
            }
            refuse(ctx, &r.b, "b", kind, keys)?;
            refuse(ctx, &r.e, "e", kind, keys)?;
            let Some(arm) = arm else {
                return Err(ScenarioError::Invalid {
                    at: ctx.at(r.kind.span()),
                    reason: format!(
                        "a {kind_name} relation acts on one system of type two_link_arm"
                    ),
                });
            };
            let point = match &r.point {
                None => ArmPoint::Tip,
                Some(p) => match ctx.render(p, "point")?.as_str() {
                    "tip" => ArmPoint::Tip,
                    "elbow" => ArmPoint::Elbow,
                    other => {
                        return Err(ScenarioError::Invalid {
                            at: ctx.at(p.span()),
                            reason: format!("point `{other}`: expected `tip` or `elbow`"),
                        })
                    }
                },
            };
            Ok(if kind_name == "two_link_arm_contact" {
                arm.contact_relation(point).into()
            } else {
                arm.height_relation(point).into()
            })
        }
        "lagrangian_linear" => {
            let kind = "a lagrangian_linear relation";
            let keys = "H, b";
            for (m, key) in [(&r.c, "C"), (&r.b_matrix, "B"), (&r.d, "D"), (&r.f, "F")] {
                refuse(ctx, m, key, kind, keys)?;
            }
            refuse(ctx, &r.e, "e", kind, keys)?;
            let h = ctx.matrix(required(ctx, &r.h, span, "H", kind)?, "H")?;
            let mut rel = LagrangianLinearTiR::new(h);
            if let Some(b) = &r.b {
                rel = rel.with_b(ctx.vector(b, "b")?);
            }
            Ok(rel.into())
        }
        "first_order_linear" => {
            let kind = "a first_order_linear relation";
            let keys = "C, B, D, F, e";
            refuse(ctx, &r.h, "H", kind, keys)?;
            refuse(ctx, &r.b, "b", kind, keys)?;
            let c = ctx.matrix(required(ctx, &r.c, span.clone(), "C", kind)?, "C")?;
            let b = ctx.matrix(required(ctx, &r.b_matrix, span, "B", kind)?, "B")?;
            let mut rel = FirstOrderLinearTi::new(c, b);
            if let Some(d) = &r.d {
                rel = rel.with_d(ctx.matrix(d, "D")?);
            }
            if let Some(f) = &r.f {
                rel = rel.with_f(ctx.matrix(f, "F")?);
            }
            if let Some(e) = &r.e {
                rel = rel.with_e(ctx.vector(e, "e")?);
            }
            Ok(rel.into())
        }
        other => Err(ScenarioError::Invalid {
            at: ctx.at(r.kind.span()),
            reason: format!(
                "unknown relation type `{other}` \
                 (types: lagrangian_linear, lagrangian_scleronomous, first_order_linear, \
                 first_order_nonlinear, two_link_arm_height, two_link_arm_contact)"
            ),
        }),
    }
}

fn law(ctx: Ctx<'_>, l: &toml::Spanned<LawTable>, size: usize) -> Result<NonsmoothLaw> {
    let span = l.span();
    let l = l.get_ref();
    let kind_name = l.kind.get_ref().as_str();
    let kind = Kind {
        name: kind_name,
        what: "law",
    };
    let none = |keys: &str| -> Result<()> {
        if !keys.starts_with("restitution") {
            refuse(ctx, &l.restitution, "restitution", kind, keys)?;
        }
        if keys != "lb, ub" {
            refuse(ctx, &l.lb, "lb", kind, keys)?;
            refuse(ctx, &l.ub, "ub", kind, keys)?;
        }
        if keys != "equalities" {
            refuse(ctx, &l.equalities, "equalities", kind, keys)?;
        }
        if !keys.contains("friction") {
            refuse(ctx, &l.friction, "friction", kind, keys)?;
            refuse(ctx, &l.dimension, "dimension", kind, keys)?;
            let t = &l.tangential_restitution;
            refuse(ctx, t, "tangential_restitution", kind, keys)?;
        }
        Ok(())
    };
    match kind_name {
        "complementarity" => {
            none("none")?;
            Ok(NonsmoothLaw::Complementarity { size })
        }
        "equality" => {
            none("none")?;
            Ok(NonsmoothLaw::Equality { size })
        }
        "newton_impact" => {
            none("restitution")?;
            let e = required(ctx, &l.restitution, span, "restitution", kind)?;
            Ok(NonsmoothLaw::NewtonImpact {
                size,
                restitution: ctx.number(e, "restitution")?,
            })
        }
        "newton_impact_friction" => {
            let keys = "restitution, friction, dimension, tangential_restitution";
            none(keys)?;
            let e = required(ctx, &l.restitution, span.clone(), "restitution", kind)?;
            let mu = required(ctx, &l.friction, span.clone(), "friction", kind)?;
            let d = required(ctx, &l.dimension, span, "dimension", kind)?;
            let dimension = ctx.integer(d, "dimension")?;
            if dimension != 2 && dimension != 3 {
                return Err(ScenarioError::Invalid {
                    at: ctx.at(d.span()),
                    reason: format!("dimension = {dimension}: a contact has dimension 2 or 3"),
                });
            }
            if dimension as usize != size {
                return Err(ScenarioError::Invalid {
                    at: ctx.at(d.span()),
                    reason: format!(
                        "dimension = {dimension} but the relation has {size} rows \
                         (one normal row, then {} tangent rows)",
                        dimension - 1
                    ),
                });
            }
            let tangential_restitution = match &l.tangential_restitution {
                Some(t) => ctx.number(t, "tangential_restitution")?,
                None => 0.0,
            };
            Ok(NonsmoothLaw::NewtonImpactFriction {
                dimension: dimension as usize,
                restitution: ctx.number(e, "restitution")?,
                tangential_restitution,
                friction: ctx.number(mu, "friction")?,
            })
        }
        "relay" => {
            none("lb, ub")?;
            let lb = ctx.vector(required(ctx, &l.lb, span.clone(), "lb", kind)?, "lb")?;
            let ub = ctx.vector(required(ctx, &l.ub, span, "ub", kind)?, "ub")?;
            Ok(NonsmoothLaw::Relay {
                lb: lb.as_slice().to_vec(),
                ub: ub.as_slice().to_vec(),
            })
        }
        "mixed_complementarity" => {
            none("equalities")?;
            let q = required(ctx, &l.equalities, span, "equalities", kind)?;
            let k = ctx.integer(q, "equalities")?;
            if k < 0 || k as usize > size {
                return Err(ScenarioError::Invalid {
                    at: ctx.at(q.span()),
                    reason: format!(
                        "equalities = {k} must lie in 0 ..= {size}, the size of the relation"
                    ),
                });
            }
            let k = k as usize;
            Ok(NonsmoothLaw::MixedComplementarity {
                equalities: k,
                inequalities: size - k,
            })
        }
        other => Err(ScenarioError::Invalid {
            at: ctx.at(l.kind.span()),
            reason: format!(
                "unknown law type `{other}` (types: complementarity, newton_impact, \
                 newton_impact_friction, relay, equality, mixed_complementarity)"
            ),
        }),
    }
}

fn interaction(
    ctx: Ctx<'_>,
    b: &mut ModelBuilder,
    Systems { ids, dims, arms }: &Systems,
    e: &InteractionEntry,
    span: std::ops::Range<usize>,
) -> Result<()> {
    let name = ctx.render(&e.name, "the name")?;
    let list = e.systems.get_ref();
    if list.is_empty() || list.len() > 2 {
        return Err(ScenarioError::Invalid {
            at: ctx.at(e.systems.span()),
            reason: format!(
                "interaction `{name}`: systems lists {} names; it must list one or two",
                list.len()
            ),
        });
    }
    let mut systems = Vec::with_capacity(2);
    for s in list {
        let sys = ctx.render(s, "a system name")?;
        match ids.get(&sys) {
            Some(&id) => systems.push(id),
            None => {
                let mut known: Vec<&str> = ids.keys().map(|k| k.as_str()).collect();
                known.sort_unstable();
                return Err(ScenarioError::UnknownSystem {
                    at: ctx.at(s.span()),
                    interaction: name,
                    system: sys,
                    known: expr::list(&known),
                });
            }
        }
    }
    let arm = match systems.as_slice() {
        [one] => arms.get(one).copied(),
        _ => None,
    };
    let n = systems
        .iter()
        .map(|s| dims.get(s).copied().unwrap_or(0))
        .sum();
    let rel = relation(ctx, &e.relation, arm, n)?;
    let law = law(ctx, &e.law, rel.output_dim())?;
    b.add_interaction(&name, &systems, rel, law)
        .map_err(|source| model_error(ctx, span, source))?;
    Ok(())
}

/// Event-driven runs do not handle frictional contacts: the first
/// `newton_impact_friction` law is an error at its `type`.
pub(super) fn refuse_friction_event_driven(ctx: Ctx<'_>, file: &ScenarioFile) -> Result<()> {
    for e in &file.interactions {
        let kind = &e.get_ref().law.get_ref().kind;
        if kind.get_ref() == "newton_impact_friction" {
            return Err(ScenarioError::Invalid {
                at: ctx.at(kind.span()),
                reason: "the event-driven strategy does not handle frictional contacts \
                         (newton_impact_friction); use strategy = \"time_stepping\""
                    .into(),
            });
        }
    }
    Ok(())
}
