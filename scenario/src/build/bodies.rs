//! Rigid bodies: `[rigid]`, `[[materials]]`, `[[bodies]]` and
//! `[[generators]]` (docs/rigid-scenarios.md), built into a [`RigidScene`]:
//! the bodies, their initial states and their colliders, run by
//! `nonsmooth_collision::RigidSimulation`.
//!
//! Conventions (world z up): a body's `position` is its centre of mass; its
//! shapes are placed in the body frame by `position` and `rotation`
//! (axis × angle); when the centre of mass of the shapes (from `density`,
//! or the shapes' volumes for `mass`) is not at the body frame's origin,
//! the shapes are shifted so that it is. Capsules and cylinders lie along
//! the shape's z axis; a height field or a grid mesh z = f(x, y) spans
//! `size` centred on the shape's origin (shapes are built in `shapes`). The inertia of a body of several shapes sums each
//! shape's inertia turned into the body frame, R I Rᵀ, moved to the common
//! centre by the parallel-axis term m (|d|² I₃ − d dᵀ).

use std::collections::HashMap;
use std::sync::Arc;

use nalgebra::{Isometry3, Matrix3, Point3, Translation3, UnitQuaternion, Vector3};
use nonsmooth::modelling::{Model, SystemId, TimeVector};
use nonsmooth::rigid::{BodyState, ContactOrder, ContactSettings, Load, RigidBody};
use nonsmooth::simulation::SimulationError;
use nonsmooth_collision::{
    lattice_positions, random_pile_positions, random_vectors, Collider, ContactDetector, Material,
    RigidClock, RigidSimulation, RigidWorld, ShapeDesc, WORLD_SYSTEM,
};

use super::shapes::{rotation, shape};
use super::{instance, instances};
use crate::error::{Place, Result, ScenarioError};
use crate::schema::{BodyEntry, GeneratorEntry, SStr, SVec, ScenarioFile, SQ};
use crate::settings::AllSettings;
use crate::values::Ctx;

/// The rigid bodies of a scenario, ready to run.
#[derive(Debug, Clone)]
pub struct RigidScene {
    /// The bodies.
    pub bodies: Arc<[RigidBody]>,
    /// Their initial states.
    pub states: Vec<BodyState>,
    /// Their shapes.
    pub colliders: Vec<Collider>,
    /// Their names (the stand-in systems of the model, in order).
    pub names: Vec<String>,
    /// Gravity (world frame).
    pub gravity: Vector3<f64>,
    /// Detection margin δ.
    pub margin: f64,
    /// The contact step's settings.
    pub contact: ContactSettings,
    /// A pose frame every this many output rows (0: none).
    pub frames_every: u64,
}

impl RigidScene {
    /// A fresh run on the stand-in `model`, with the clock of `settings`.
    pub fn simulation(
        &self,
        model: Arc<Model>,
        t0: f64,
        t_end: f64,
        step: f64,
        output_every: u64,
        extra: &[(&'static str, f64)],
    ) -> std::result::Result<RigidSimulation, SimulationError> {
        let imported = |e: Box<dyn std::error::Error + Send + Sync>| SimulationError::Imported(e);
        let detector = ContactDetector::new(self.colliders.clone(), self.margin)
            .map_err(|e| imported(Box::new(e)))?;
        let world = RigidWorld::new(
            Arc::clone(&self.bodies),
            self.states.clone(),
            detector,
            self.contact,
            self.gravity,
            t0,
        )
        .map_err(|e| imported(Box::new(e)))?;
        RigidSimulation::new(
            world,
            model,
            RigidClock {
                t0,
                t_end,
                step,
                output_every,
            },
            extra,
        )
    }

    /// The states of the bodies in a run, from its recorded values.
    pub fn states_of(
        &self,
        plant: &dyn nonsmooth::simulation::Simulation,
        out: &mut Vec<BodyState>,
    ) {
        out.clear();
        for b in 0..self.names.len() {
            let v = plant.q(SystemId(b));
            if v.len() < 13 {
                out.push(self.states[b]);
                continue;
            }
            out.push(BodyState {
                position: Vector3::new(v[0], v[1], v[2]),
                orientation: UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(
                    v[3], v[4], v[5], v[6],
                )),
                velocity: Vector3::new(v[7], v[8], v[9]),
                omega: Vector3::new(v[10], v[11], v[12]),
            });
        }
    }
}

pub(super) fn invalid(at: Place, reason: impl Into<String>) -> ScenarioError {
    ScenarioError::Invalid {
        at,
        reason: reason.into(),
    }
}

/// The frictional contact solver named by `name`, or an error at its place.
fn friction_solver_name(ctx: Ctx<'_>, name: &SStr) -> Result<&'static str> {
    let known = nonsmooth::numerics::friction::FRICTION_SOLVERS;
    known
        .split(", ")
        .find(|n| *n == name.get_ref().as_str())
        .ok_or_else(|| {
            invalid(
                ctx.at(name.span()),
                format!(
                    "rigid bodies take a frictional contact solver, not `{}` (solvers: {known})",
                    name.get_ref()
                ),
            )
        })
}

pub(super) fn vec3(ctx: Ctx<'_>, v: &SVec, what: &str) -> Result<Vector3<f64>> {
    let x = ctx.vector(v, what)?;
    if x.len() != 3 {
        return Err(ScenarioError::Shape {
            at: ctx.at(v.span()),
            what: what.to_string(),
            reason: format!("expected 3 components, got {}", x.len()),
        });
    }
    Ok(Vector3::new(x[0], x[1], x[2]))
}

pub(super) fn opt_vec3(ctx: Ctx<'_>, v: &Option<SVec>, what: &str) -> Result<Vector3<f64>> {
    v.as_ref()
        .map_or(Ok(Vector3::zeros()), |v| vec3(ctx, v, what))
}

pub(super) fn positive(ctx: Ctx<'_>, q: &SQ, what: &str) -> Result<f64> {
    let v = ctx.number(q, what)?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(invalid(
            ctx.at(q.span()),
            format!("{what} must be > 0, got {v}"),
        ))
    }
}

fn material_law(
    ctx: Ctx<'_>,
    friction: &Option<SQ>,
    restitution: &Option<SQ>,
    default: Material,
) -> Result<Material> {
    let mut m = default;
    if let Some(q) = friction {
        m.friction = ctx.number(q, "friction")?;
        if m.friction < 0.0 {
            return Err(invalid(
                ctx.at(q.span()),
                format!("friction must be ≥ 0, got {}", m.friction),
            ));
        }
    }
    if let Some(q) = restitution {
        m.restitution = ctx.number(q, "restitution")?;
        if !(0.0..=1.0).contains(&m.restitution) {
            return Err(invalid(
                ctx.at(q.span()),
                format!("restitution must lie in [0, 1], got {}", m.restitution),
            ));
        }
    }
    Ok(m)
}

/// The named materials and the default one.
struct Materials {
    default: Material,
    named: HashMap<String, Material>,
}

impl Materials {
    fn get(
        &self,
        ctx: Ctx<'_>,
        name: &Option<crate::schema::SStr>,
        or: Material,
    ) -> Result<Material> {
        let Some(n) = name else { return Ok(or) };
        self.named.get(n.get_ref()).copied().ok_or_else(|| {
            let mut known: Vec<&str> = self.named.keys().map(String::as_str).collect();
            known.sort_unstable();
            invalid(
                ctx.at(n.span()),
                format!(
                    "no material named `{}` (materials: {})",
                    n.get_ref(),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            )
        })
    }
}

/// Builds the rigid scene, or `None` when the file has no body.
pub(super) fn rigid_scene(
    ctx: Ctx<'_>,
    file: &ScenarioFile,
    all: &AllSettings,
) -> Result<Option<RigidScene>> {
    if file.bodies.is_empty() && file.generators.is_empty() {
        if let Some(r) = &file.rigid {
            return Err(invalid(
                ctx.at(r.span()),
                "[rigid] needs [[bodies]] or [[generators]]",
            ));
        }
        if let Some(m) = file.materials.first() {
            return Err(invalid(
                ctx.at(m.span()),
                "[[materials]] need [[bodies]] or [[generators]]",
            ));
        }
        if let Some(o) = file
            .output
            .as_ref()
            .and_then(|o| o.get_ref().frames.as_ref())
        {
            return Err(invalid(
                ctx.at(o.span()),
                "`frames` applies to rigid bodies only",
            ));
        }
        return Ok(None);
    }
    // Rigid bodies are a model of their own.
    let others = [
        file.systems.first().map(|e| (e.span(), "[[systems]]")),
        file.interactions
            .first()
            .map(|e| (e.span(), "[[interactions]]")),
        file.circuits.first().map(|e| (e.span(), "[[circuits]]")),
        file.observers.first().map(|e| (e.span(), "[[observers]]")),
        file.fmus.first().map(|e| (e.span(), "[[fmus]]")),
        file.fmi.as_ref().map(|e| (e.span(), "[fmi]")),
    ];
    if let Some((span, what)) = others.into_iter().flatten().next() {
        return Err(invalid(
            ctx.at(span),
            format!("{what} cannot be combined with rigid bodies ([[bodies]], [[generators]]) in one scenario"),
        ));
    }
    let sim = file.simulation.get_ref();
    if let Some(s) = &sim.strategy {
        if all.strategy != nonsmooth::simulation::Strategy::TimeStepping {
            return Err(invalid(
                ctx.at(s.span()),
                "rigid bodies are simulated by time-stepping only",
            ));
        }
    }
    // World settings.
    let mut gravity = Vector3::new(0.0, 0.0, -9.81);
    let mut margin = 1e-3;
    let mut default = Material::default();
    if let Some(r) = &file.rigid {
        let r = r.get_ref();
        if let Some(g) = &r.gravity {
            gravity = vec3(ctx, g, "gravity")?;
        }
        if let Some(m) = &r.margin {
            margin = ctx.number(m, "margin")?;
            if margin < 0.0 {
                return Err(invalid(
                    ctx.at(m.span()),
                    format!("margin must be ≥ 0, got {margin}"),
                ));
            }
        }
        default = material_law(ctx, &r.friction, &r.restitution, default)?;
    }
    let mut named = HashMap::new();
    for m in &file.materials {
        let e = m.get_ref();
        let law = material_law(ctx, &e.friction, &e.restitution, default)?;
        if named.insert(e.name.get_ref().clone(), law).is_some() {
            return Err(invalid(
                ctx.at(e.name.span()),
                format!("two materials are named `{}`", e.name.get_ref()),
            ));
        }
    }
    let materials = Materials { default, named };
    let mut scene = RigidScene {
        bodies: Arc::from(Vec::new()),
        states: Vec::new(),
        colliders: Vec::new(),
        names: Vec::new(),
        gravity,
        margin,
        contact: ContactSettings::default(),
        frames_every: 1,
    };
    let mut bodies = Vec::new();
    let mut seen: HashMap<String, ()> = HashMap::new();
    let mut add_name = |scene: &mut RigidScene, name: String, at: std::ops::Range<usize>| {
        if name == WORLD_SYSTEM {
            return Err(invalid(
                ctx.at(at),
                format!("a body may not be named `{WORLD_SYSTEM}` (it names the world's values)"),
            ));
        }
        if seen.insert(name.clone(), ()).is_some() {
            return Err(invalid(
                ctx.at(at),
                format!("two bodies are named `{name}`"),
            ));
        }
        scene.names.push(name);
        Ok(())
    };
    for entry in &file.bodies {
        let e = entry.get_ref();
        let (var, values) = instances(ctx, &e.repeat)?;
        for i in values {
            let ctx = instance(ctx, var.as_deref(), i);
            let name = ctx.render(&e.name, "the name")?;
            add_name(&mut scene, name, e.name.span())?;
            let b = bodies.len();
            let (body, state, colliders) = body(ctx, e, entry.span(), b, &materials)?;
            bodies.push(body);
            scene.states.push(state);
            scene.colliders.extend(colliders);
        }
    }
    for entry in &file.generators {
        let e = entry.get_ref();
        let start = bodies.len();
        let made = generate(ctx, e, entry.span(), start, &materials)?;
        for (k, (body, state, collider)) in made.into_iter().enumerate() {
            add_name(
                &mut scene,
                format!("{}{k}", e.name.get_ref()),
                e.name.span(),
            )?;
            bodies.push(body);
            scene.states.push(state);
            scene.colliders.push(collider);
        }
    }
    scene.bodies = Arc::from(bodies);
    // The contact step's settings: [simulation] keys when given, else the
    // defaults of the contact step (θ = 1, γ = ½, NSGS to 1e-10 in at most
    // 2000 sweeps).
    let ts = &all.time_stepping;
    if sim.theta.is_some() {
        scene.contact.scheme.theta = ts.theta;
    }
    if sim.activation_gamma.is_some() {
        scene.contact.gamma = ts.activation_gamma;
    }
    if sim.tolerance.is_some() {
        scene.contact.solver.tolerance = ts.solver_settings.tolerance;
    }
    if sim.max_iterations.is_some() {
        scene.contact.solver.max_iterations = ts.solver_settings.max_iterations;
    }
    if let Some(name) = &sim.solver {
        scene.contact.solver_name = friction_solver_name(ctx, name)?;
    }
    if sim.newton_tolerance.is_some() {
        scene.contact.scheme.newton_tolerance = ts.newton_tolerance;
    }
    if let Some(rigid) = file.rigid.as_ref().map(|r| r.get_ref()) {
        if let Some(b) = &rigid.islands {
            scene.contact.islands = *b.get_ref();
        }
        if let Some(o) = &rigid.order {
            scene.contact.order = ContactOrder::from_name(o.get_ref()).ok_or_else(|| {
                invalid(
                    ctx.at(o.span()),
                    format!(
                        "unknown contact order `{}` (orders: {})",
                        o.get_ref(),
                        ContactOrder::NAMES
                    ),
                )
            })?;
        }
        if let Some(name) = &rigid.fallback {
            scene.contact.fallback = Some(friction_solver_name(ctx, name)?);
        }
    }
    if let Some(a) = file
        .rigid
        .as_ref()
        .and_then(|r| r.get_ref().accept_error.as_ref())
    {
        let e = ctx.number(a, "accept_error")?;
        let tol = scene.contact.solver.tolerance;
        if !(e.is_finite() && e >= tol) {
            return Err(invalid(
                ctx.at(a.span()),
                format!("accept_error must be finite and at least the tolerance {tol}, got {e}"),
            ));
        }
        scene.contact.accept_error = Some(e);
    }
    if let Some(f) = file
        .output
        .as_ref()
        .and_then(|o| o.get_ref().frames.as_ref())
    {
        let k = ctx.integer(f, "frames")?;
        scene.frames_every = u64::try_from(k)
            .map_err(|_| invalid(ctx.at(f.span()), format!("frames must be ≥ 0, got {k}")))?;
    }
    Ok(Some(scene))
}

/// Mass, centre of mass and inertia (body frame) of shapes of density ρ.
fn mass_of(
    ctx: Ctx<'_>,
    shapes: &[(ShapeDesc, Isometry3<f64>)],
    density: f64,
    b: usize,
    at: &Place,
) -> Result<(f64, Vector3<f64>, Matrix3<f64>)> {
    let mut parts = Vec::new();
    for (desc, pose) in shapes {
        let mp = desc
            .mass_properties(density, b)
            .map_err(|e| invalid(at.clone(), e.to_string()))?;
        if let Some(mp) = mp {
            let r = pose.rotation.to_rotation_matrix();
            let c = pose * Point3::from(mp.center);
            parts.push((
                mp.mass,
                c.coords,
                r.matrix() * mp.inertia * r.matrix().transpose(),
            ));
        }
    }
    let _ = ctx;
    let m: f64 = parts.iter().map(|p| p.0).sum();
    if parts.is_empty() || m.is_nan() || m <= 0.0 {
        return Err(invalid(
            at.clone(),
            "a free body needs a solid shape (sphere, box, capsule, cylinder or convex_hull) for its mass",
        ));
    }
    let c = parts.iter().map(|p| p.0 * p.1).sum::<Vector3<f64>>() / m;
    let mut inertia = Matrix3::zeros();
    for (mi, ci, ii) in &parts {
        let d = ci - c;
        inertia += ii + *mi * (d.norm_squared() * Matrix3::identity() - d * d.transpose());
    }
    Ok((m, c, inertia))
}

fn load(ctx: Ctx<'_>, v: &Option<SVec>, what: &str) -> Result<Load> {
    let Some(v) = v else { return Ok(Load::None) };
    let tv = ctx.time_vector(v, what)?;
    if tv.dim() != 3 {
        return Err(ScenarioError::Shape {
            at: ctx.at(v.span()),
            what: what.to_string(),
            reason: format!("expected 3 components, got {}", tv.dim()),
        });
    }
    Ok(match tv {
        TimeVector::Constant(c) => Load::Constant(Vector3::new(c[0], c[1], c[2])),
        f => Load::Function(Arc::new(move |t| {
            let mut o = [0.0; 3];
            f.eval(t, &mut o);
            Vector3::from(o)
        })),
    })
}

type Built = (RigidBody, BodyState, Vec<Collider>);

/// One instance of a `[[bodies]]` entry (body index `b`).
fn body(
    ctx: Ctx<'_>,
    e: &BodyEntry,
    span: std::ops::Range<usize>,
    b: usize,
    materials: &Materials,
) -> Result<Built> {
    let at = ctx.at(span.clone());
    let fixed = e.fixed.as_ref().is_some_and(|f| *f.get_ref());
    let body_material = materials.get(ctx, &e.material, materials.default)?;
    let mut shapes = Vec::new();
    let mut laws = Vec::new();
    if e.shapes.get_ref().is_empty() {
        return Err(invalid(
            ctx.at(e.shapes.span()),
            "a body needs at least one shape",
        ));
    }
    for s in e.shapes.get_ref() {
        shapes.push(shape(ctx, s.get_ref(), s.span())?);
        laws.push(materials.get(ctx, &s.get_ref().material, body_material)?);
    }
    let position = opt_vec3(ctx, &e.position, "position")?;
    let orientation = match (&e.quaternion, &e.rotation) {
        (Some(_), Some(r)) => {
            return Err(invalid(
                ctx.at(r.span()),
                "give the orientation by `quaternion` or by `rotation`, not both",
            ))
        }
        (Some(q), None) => {
            let v = ctx.vector(q, "quaternion")?;
            let n = v.norm();
            if v.len() != 4 || n.is_nan() || n <= 0.0 {
                return Err(invalid(
                    ctx.at(q.span()),
                    "quaternion must be [w, x, y, z], not zero",
                ));
            }
            UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(v[0], v[1], v[2], v[3]))
        }
        (None, r) => rotation(ctx, r, "rotation")?,
    };
    let velocity = opt_vec3(ctx, &e.velocity, "velocity")?;
    let omega = opt_vec3(ctx, &e.omega, "omega")?;
    let mut offset = Vector3::zeros();
    let rigid = if fixed {
        for (key, sp) in [
            ("mass", e.mass.as_ref().map(|v| v.span())),
            ("density", e.density.as_ref().map(|v| v.span())),
            ("inertia", e.inertia.as_ref().map(|v| v.span())),
            (
                "inertia_diagonal",
                e.inertia_diagonal.as_ref().map(|v| v.span()),
            ),
            ("velocity", e.velocity.as_ref().map(|v| v.span())),
            ("omega", e.omega.as_ref().map(|v| v.span())),
            ("force", e.force.as_ref().map(|v| v.span())),
            ("torque", e.torque.as_ref().map(|v| v.span())),
        ] {
            if let Some(sp) = sp {
                return Err(ScenarioError::UnknownKey {
                    at: ctx.at(sp),
                    message: format!("`{key}` does not apply to a fixed body (it never moves)"),
                });
            }
        }
        RigidBody::fixed()
    } else {
        let (mass, inertia) = match (&e.mass, &e.density) {
            (Some(_), Some(d)) => {
                return Err(invalid(
                    ctx.at(d.span()),
                    "give `mass` or `density`, not both",
                ))
            }
            (None, None) => {
                return Err(invalid(at.clone(), "a free body needs `mass` or `density`"))
            }
            (None, Some(d)) => {
                let rho = positive(ctx, d, "density")?;
                let (m, c, i) = mass_of(ctx, &shapes, rho, b, &at)?;
                offset = c;
                (m, i)
            }
            (Some(mq), None) => {
                let m = positive(ctx, mq, "mass")?;
                let given = match (&e.inertia, &e.inertia_diagonal) {
                    (Some(_), Some(d)) => {
                        return Err(invalid(
                            ctx.at(d.span()),
                            "give `inertia` or `inertia_diagonal`, not both",
                        ))
                    }
                    (Some(i), None) => {
                        let mat = ctx.matrix(i, "inertia")?;
                        if mat.shape() != (3, 3) {
                            return Err(ScenarioError::Shape {
                                at: ctx.at(i.span()),
                                what: "inertia".into(),
                                reason: format!("expected 3 × 3, got {:?}", mat.shape()),
                            });
                        }
                        Some(Matrix3::from_iterator(mat.iter().copied()))
                    }
                    (None, Some(d)) => {
                        Some(Matrix3::from_diagonal(&vec3(ctx, d, "inertia_diagonal")?))
                    }
                    (None, None) => None,
                };
                match given {
                    Some(i) => (m, i),
                    None => {
                        // The shapes' inertia at unit density, scaled to m.
                        let (m1, c, i1) = mass_of(ctx, &shapes, 1.0, b, &at)?;
                        offset = c;
                        (m, i1 * (m / m1))
                    }
                }
            }
        };
        if e.density.is_some() {
            for (key, sp) in [
                ("inertia", e.inertia.as_ref().map(|v| v.span())),
                (
                    "inertia_diagonal",
                    e.inertia_diagonal.as_ref().map(|v| v.span()),
                ),
            ] {
                if let Some(sp) = sp {
                    return Err(invalid(
                        ctx.at(sp),
                        format!(
                            "`{key}` comes from the shapes with `density`; give `mass` to set it"
                        ),
                    ));
                }
            }
        }
        let mut body = RigidBody::new(mass, inertia);
        body.force = load(ctx, &e.force, "force")?;
        body.torque = load(ctx, &e.torque, "torque")?;
        body.validate(b)
            .map_err(|err| invalid(at.clone(), err.to_string()))?;
        body
    };
    let state = BodyState {
        position,
        orientation,
        velocity,
        omega,
    };
    let shift = Translation3::from(-offset);
    let mut colliders = Vec::with_capacity(shapes.len());
    for ((desc, pose), law) in shapes.into_iter().zip(laws) {
        colliders.push(
            Collider::new(b, fixed, desc, shift * pose, law)
                .map_err(|err| invalid(at.clone(), err.to_string()))?,
        );
    }
    Ok((rigid, state, colliders))
}

/// The spheres of a `[[generators]]` entry (first body index `start`).
fn generate(
    ctx: Ctx<'_>,
    e: &GeneratorEntry,
    span: std::ops::Range<usize>,
    start: usize,
    materials: &Materials,
) -> Result<Vec<(RigidBody, BodyState, Collider)>> {
    let at = ctx.at(span);
    let count = ctx.integer(&e.count, "count")?;
    let count = usize::try_from(count)
        .ok()
        .filter(|&n| n <= 10_000_000)
        .ok_or_else(|| {
            invalid(
                ctx.at(e.count.span()),
                format!("count must lie in 0 ..= 10000000, got {count}"),
            )
        })?;
    let radius = positive(ctx, &e.radius, "radius")?;
    let density = positive(ctx, &e.density, "density")?;
    let material = materials.get(ctx, &e.material, materials.default)?;
    let seed = match &e.seed {
        Some(q) => {
            let s = ctx.integer(q, "seed")?;
            u64::try_from(s)
                .map_err(|_| invalid(ctx.at(q.span()), format!("seed must be ≥ 0, got {s}")))?
        }
        None => 1,
    };
    let speed = match &e.speed {
        Some(q) => ctx.number(q, "speed")?,
        None => 0.0,
    };
    let fail = |err: nonsmooth_collision::CollisionError| invalid(at.clone(), err.to_string());
    let kind = e.kind.get_ref().as_str();
    let lattice_keys = [
        ("origin", e.origin.as_ref().map(|v| v.span())),
        ("spacing", e.spacing.as_ref().map(|v| v.span())),
        ("per_row", e.per_row.as_ref().map(|v| v.span())),
    ];
    let pile_keys = [
        ("min", e.min.as_ref().map(|v| v.span())),
        ("max", e.max.as_ref().map(|v| v.span())),
    ];
    let refuse_keys = |keys: &[(&str, Option<std::ops::Range<usize>>)], what: &str| -> Result<()> {
        for (key, sp) in keys {
            if let Some(sp) = sp {
                return Err(ScenarioError::UnknownKey {
                    at: ctx.at(sp.clone()),
                    message: format!("`{key}` does not apply to a {what} generator"),
                });
            }
        }
        Ok(())
    };
    let positions = match kind {
        "lattice" => {
            refuse_keys(&pile_keys, "lattice")?;
            let origin = opt_vec3(ctx, &e.origin, "origin")?;
            let spacing = match &e.spacing {
                Some(q) => ctx.number(q, "spacing")?,
                None => 0.0,
            };
            let per_row = match &e.per_row {
                Some(v) => {
                    let p = ctx.vector(v, "per_row")?;
                    if p.len() != 2 || p.iter().any(|x| x.fract() != 0.0 || *x < 1.0) {
                        return Err(invalid(
                            ctx.at(v.span()),
                            "per_row must be [nx, ny], integers ≥ 1",
                        ));
                    }
                    [p[0] as usize, p[1] as usize]
                }
                None => return Err(invalid(at.clone(), "a lattice generator needs `per_row`")),
            };
            if spacing < 0.0 {
                return Err(invalid(
                    at.clone(),
                    format!("spacing must be ≥ 0, got {spacing}"),
                ));
            }
            lattice_positions(count, origin, 2.0 * radius + spacing, per_row).map_err(fail)?
        }
        "random_pile" => {
            refuse_keys(&lattice_keys, "random_pile")?;
            let lo = match &e.min {
                Some(v) => vec3(ctx, v, "min")?,
                None => return Err(invalid(at.clone(), "a random_pile generator needs `min`")),
            };
            let hi = match &e.max {
                Some(v) => vec3(ctx, v, "max")?,
                None => return Err(invalid(at.clone(), "a random_pile generator needs `max`")),
            };
            random_pile_positions(count, radius, lo, hi, seed).map_err(fail)?
        }
        other => {
            return Err(invalid(
                ctx.at(e.kind.span()),
                format!("unknown generator type `{other}` (types: lattice, random_pile)"),
            ))
        }
    };
    let velocities = random_vectors(count, speed, seed.wrapping_add(0x5EED));
    let sphere = ShapeDesc::Sphere { radius };
    let mp = sphere
        .mass_properties(density, start)
        .map_err(fail)?
        .expect("a sphere is solid");
    let mut out = Vec::with_capacity(count);
    for (k, (p, v)) in positions.into_iter().zip(velocities).enumerate() {
        let b = start + k;
        out.push((
            RigidBody::new(mp.mass, mp.inertia),
            BodyState {
                position: p,
                orientation: UnitQuaternion::identity(),
                velocity: v,
                omega: Vector3::zeros(),
            },
            Collider::new(b, false, sphere.clone(), Isometry3::identity(), material)
                .map_err(fail)?,
        ));
    }
    Ok(out)
}
