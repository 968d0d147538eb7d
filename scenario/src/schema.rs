//! The TOML schema of scenario files, as read by serde. Every value keeps
//! its span in the file so errors found later can name its line. Unknown
//! keys are refused. See docs/scenarios.md for the meaning of each key.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use toml::Spanned;

/// A number, or an expression string evaluated with the parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Quantity {
    /// A TOML integer or float.
    Number(f64),
    /// An expression such as `"2/5*mass*radius^2"` or `"sin(50*t)"`.
    Expression(String),
}

impl From<f64> for Quantity {
    fn from(x: f64) -> Self {
        Quantity::Number(x)
    }
}

impl From<&str> for Quantity {
    fn from(s: &str) -> Self {
        Quantity::Expression(s.to_string())
    }
}

impl From<String> for Quantity {
    fn from(s: String) -> Self {
        Quantity::Expression(s)
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or an expression string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity::Number(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity::Number(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
                Ok(Quantity::Number(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
                Ok(Quantity::Expression(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// The `inputs` of a controller: the size of u (with `g`), or the names of
/// the gated switches of a circuit it drives.
#[derive(Debug, Clone, PartialEq)]
pub enum Inputs {
    /// The size of u.
    Size(Quantity),
    /// Switch names, one per component of u.
    Gates(Vec<String>),
}

impl<'de> Deserialize<'de> for Inputs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Inputs;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("the size of u, or a list of switch names")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Inputs, E> {
                Ok(Inputs::Size(Quantity::Number(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Inputs, E> {
                Ok(Inputs::Size(Quantity::Number(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Inputs, E> {
                Ok(Inputs::Size(Quantity::Number(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Inputs, E> {
                Ok(Inputs::Size(Quantity::Expression(v.to_string())))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Inputs, A::Error> {
                let mut names = Vec::new();
                while let Some(n) = seq.next_element::<String>()? {
                    names.push(n);
                }
                Ok(Inputs::Gates(names))
            }
        }
        d.deserialize_any(V)
    }
}

/// A quantity with its span.
pub type SQ = Spanned<Quantity>;
/// A vector of quantities.
pub type SVec = Spanned<Vec<SQ>>;
/// A matrix, as a list of rows.
pub type SMat = Spanned<Vec<Vec<SQ>>>;
/// A string with its span.
pub type SStr = Spanned<String>;
/// `repeat = { i = "0 .. n" }`.
pub type Repeat = Spanned<BTreeMap<String, SStr>>;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Name of the scenario, and of its CSV file.
    pub name: SStr,
    /// Free text.
    pub description: Option<String>,
    /// Named scalars.
    pub parameters: Option<Spanned<BTreeMap<String, SQ>>>,
    /// Simulation settings.
    pub simulation: Spanned<SimulationTable>,
    /// Dynamical systems.
    #[serde(default)]
    pub systems: Vec<Spanned<SystemEntry>>,
    /// Circuits given as netlists (docs/circuits.md).
    #[serde(default)]
    pub circuits: Vec<Spanned<CircuitEntry>>,
    /// Interactions.
    #[serde(default)]
    pub interactions: Vec<Spanned<InteractionEntry>>,
    /// Sensors.
    #[serde(default)]
    pub sensors: Vec<Spanned<SensorEntry>>,
    /// Observers.
    #[serde(default)]
    pub observers: Vec<Spanned<ObserverEntry>>,
    /// Controllers, each with its actuator.
    #[serde(default)]
    pub controllers: Vec<Spanned<ControllerEntry>>,
    /// What is recorded.
    pub output: Option<Spanned<OutputTable>>,
    /// Plots of recorded columns.
    #[serde(default)]
    pub plots: Vec<Spanned<PlotEntry>>,
    /// FMI export: inputs, outputs, tunable parameters, units.
    pub fmi: Option<Spanned<FmiTable>>,
    /// Imported co-simulation FMUs (docs/cosimulation.md).
    #[serde(default)]
    pub fmus: Vec<Spanned<FmuEntry>>,
    /// Connections between imported FMUs, and between FMUs and the
    /// native model.
    #[serde(default)]
    pub connections: Vec<Spanned<ConnectionEntry>>,
    /// Co-simulation settings (the coupling of connections).
    pub cosimulation: Option<Spanned<CosimulationTable>>,
    /// Rigid bodies: world settings (docs/rigid-scenarios.md).
    pub rigid: Option<Spanned<RigidTable>>,
    /// Rigid bodies: surface materials.
    #[serde(default)]
    pub materials: Vec<Spanned<MaterialEntry>>,
    /// Rigid bodies with their shapes.
    #[serde(default)]
    pub bodies: Vec<Spanned<BodyEntry>>,
    /// Many rigid bodies at once (a lattice, a random pile).
    #[serde(default)]
    pub generators: Vec<Spanned<GeneratorEntry>>,
}

/// `[rigid]`: the world of rigid bodies.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RigidTable {
    /// Gravity g (m/s², world frame; default [0, 0, -9.81]).
    pub gravity: Option<SVec>,
    /// Contact detection margin δ (m; default 1e-3).
    pub margin: Option<SQ>,
    /// Friction μ of surfaces without a material (default 0).
    pub friction: Option<SQ>,
    /// Restitution e of surfaces without a material (default 0).
    pub restitution: Option<SQ>,
    /// The largest solver error of a step kept when the frictional solver
    /// stops at its iteration limit (default: none, such a step stops the
    /// run); at least `[simulation] tolerance`.
    pub accept_error: Option<SQ>,
    /// Solve each island of the contact graph on its own (default false).
    pub islands: Option<Spanned<bool>>,
    /// The order of the contacts in each problem: `detection` (default),
    /// `top-down` or `bottom-up` along gravity, or `layers` (top-down by
    /// layers, each layer by position).
    pub order: Option<SStr>,
    /// A frictional solver run from the solver's point on an island it
    /// leaves short of the tolerance (default: none).
    pub fallback: Option<SStr>,
}

/// One `[[materials]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialEntry {
    /// Name, used by bodies, shapes and generators.
    pub name: SStr,
    /// Coulomb friction μ ≥ 0.
    pub friction: Option<SQ>,
    /// Newton restitution e ∈ [0, 1].
    pub restitution: Option<SQ>,
}

/// One shape of a body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeEntry {
    /// `sphere`, `box`, `capsule`, `cylinder`, `convex_hull`, `plane`,
    /// `height_field` or `mesh`.
    #[serde(rename = "type")]
    pub kind: SStr,
    /// Sphere, capsule, cylinder: radius.
    pub radius: Option<SQ>,
    /// Box: half extents.
    pub half_extents: Option<SVec>,
    /// Capsule, cylinder: half length along the shape's z axis.
    pub half_height: Option<SQ>,
    /// Convex hull: points (one row each).
    pub points: Option<SMat>,
    /// Plane: outward normal (the solid is {x : n·(x − p) ≤ 0}).
    pub normal: Option<SVec>,
    /// Height field, grid mesh: z = f(x, y), an expression of `x` and `y`.
    pub height: Option<SStr>,
    /// Height field, grid mesh: extent along x and y, centred on the
    /// shape's origin.
    pub size: Option<SVec>,
    /// Height field, grid mesh: samples along x and y (≥ 2 each).
    pub samples: Option<SVec>,
    /// Mesh: a Wavefront OBJ or STL file, relative to the scenario file.
    pub file: Option<SStr>,
    /// Position of the shape in the body frame.
    pub position: Option<SVec>,
    /// Rotation of the shape in the body frame, axis × angle (rad).
    pub rotation: Option<SVec>,
    /// Material of this shape (default: the body's).
    pub material: Option<SStr>,
}

/// One `[[bodies]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyEntry {
    /// Name (a template when `repeat` is given).
    pub name: SStr,
    /// Instantiate the entry for each value of an index.
    pub repeat: Option<Repeat>,
    /// A fixed body (ground, walls, terrain) never moves.
    pub fixed: Option<Spanned<bool>>,
    /// Its shapes.
    pub shapes: Spanned<Vec<Spanned<ShapeEntry>>>,
    /// Mass (kg); or `density`.
    pub mass: Option<SQ>,
    /// Density (kg/m³): mass and inertia from the shapes.
    pub density: Option<SQ>,
    /// Inertia about the centre of mass, body frame (3 × 3).
    pub inertia: Option<SMat>,
    /// Principal moments of inertia along the body axes.
    pub inertia_diagonal: Option<SVec>,
    /// Position of the centre of mass (world frame).
    pub position: Option<SVec>,
    /// Orientation as a unit quaternion [w, x, y, z] (normalised).
    pub quaternion: Option<SVec>,
    /// Orientation as a rotation vector, axis × angle (rad).
    pub rotation: Option<SVec>,
    /// Velocity of the centre of mass (world frame).
    pub velocity: Option<SVec>,
    /// Angular velocity, body frame.
    pub omega: Option<SVec>,
    /// External force (world frame; may use `t`), gravity apart.
    pub force: Option<SVec>,
    /// External torque about the centre of mass (world frame; may use `t`).
    pub torque: Option<SVec>,
    /// Material of its shapes.
    pub material: Option<SStr>,
}

/// One `[[generators]]` entry: many equal spheres.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorEntry {
    /// Prefix of the bodies' names: `<name>0`, `<name>1`, ….
    pub name: SStr,
    /// `lattice` or `random_pile`.
    #[serde(rename = "type")]
    pub kind: SStr,
    /// Number of spheres.
    pub count: SQ,
    /// Sphere radius.
    pub radius: SQ,
    /// Density (kg/m³).
    pub density: SQ,
    /// Lattice: centre of the first sphere.
    pub origin: Option<SVec>,
    /// Lattice: gap between neighbours (surface to surface, default 0).
    pub spacing: Option<SQ>,
    /// Lattice: spheres per row along x and rows along y per layer.
    pub per_row: Option<SVec>,
    /// Random pile: the region's lower corner.
    pub min: Option<SVec>,
    /// Random pile: the region's upper corner.
    pub max: Option<SVec>,
    /// Seed of the random positions and velocities (default 1).
    pub seed: Option<SQ>,
    /// Each initial velocity component uniform in [−speed, speed] (default 0).
    pub speed: Option<SQ>,
    /// Material of the spheres.
    pub material: Option<SStr>,
}

/// One `[[fmus]]` entry: an FMI 2.0 co-simulation FMU run as a plant.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FmuEntry {
    /// Name, used by connections, sensors, controllers and records.
    pub name: SStr,
    /// The `.fmu` file, relative to the scenario file.
    pub path: SStr,
    /// Communication step (a parameter expression).
    pub step: SQ,
    /// Values set before initialisation, by variable name.
    pub parameters: Option<Spanned<BTreeMap<String, SQ>>>,
}

/// One `[[connections]]` entry: `from = "a.y"`, `to = "b.u"`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionEntry {
    /// `<fmu>.<output>`, or a native model's recorded variable
    /// (`<system>.x[i]`, `<interaction>.y[i]`, …).
    pub from: SStr,
    /// `<fmu>.<input>`, or a native model's held input (`<system>.g[i]`,
    /// `<interaction>.u[i]`).
    pub to: SStr,
}

/// `[cosimulation]`: how the connections are coupled.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CosimulationTable {
    /// `"jacobi"` (default) or `"gauss-seidel"`.
    pub coupling: Option<SStr>,
}

/// `[simulation]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationTable {
    /// Final time.
    pub t_end: SQ,
    /// Time step.
    pub step: SQ,
    /// θ of the schemes.
    pub theta: Option<SQ>,
    /// Initial time.
    pub t0: Option<SQ>,
    /// γ of the activation test.
    pub activation_gamma: Option<SQ>,
    /// `euler_moreau` or `zero_order_hold`.
    pub first_order_scheme: Option<SStr>,
    /// Lagrangian scheme: `moreau_jean` (default), `schatzman_paoli` or
    /// `d1_minus_linear` (a word, or a word parameter's name).
    pub scheme: Option<SStr>,
    /// Schatzman–Paoli start: `taylor` (default) or `siconos`.
    pub schatzman_paoli_start: Option<SStr>,
    /// D1-minus-linear: |ẏ| below which a closed contact is at rest.
    pub rest_velocity: Option<SQ>,
    /// One-step solver name.
    pub solver: Option<SStr>,
    /// One-step solver tolerance.
    pub tolerance: Option<SQ>,
    /// One-step solver iteration limit.
    pub max_iterations: Option<SQ>,
    /// Newton loop tolerance.
    pub newton_tolerance: Option<SQ>,
    /// Newton loop iteration limit.
    pub newton_max_iterations: Option<SQ>,
    /// `time-stepping` (default) or `event-driven`.
    pub strategy: Option<SStr>,
    /// Event-driven: `dormand_prince` (default) or `tr_bdf2`.
    pub method: Option<SStr>,
    /// Event-driven: relative tolerance of the error control.
    pub rtol: Option<SQ>,
    /// Event-driven: absolute tolerance of the error control.
    pub atol: Option<SQ>,
    /// Event-driven: largest integrator step.
    pub max_step: Option<SQ>,
    /// Event-driven: most integrator steps between two instants.
    pub max_steps: Option<SQ>,
    /// Event-driven: width of the event-location bracket (s).
    pub event_tolerance: Option<SQ>,
    /// Event-driven: accumulation rule, velocity threshold.
    pub accumulation_velocity: Option<SQ>,
    /// Event-driven: accumulation rule, free-flight time threshold (s).
    pub accumulation_time: Option<SQ>,
    /// Event-driven: also an output row after each nonsmooth event.
    pub output_at_events: Option<Spanned<bool>>,
}

/// One `[[systems]]` entry; which keys apply depends on `type`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemEntry {
    /// Name (a template when `repeat` is given).
    pub name: SStr,
    /// `lagrangian_linear`, `first_order_linear`, `first_order_nonlinear`
    /// or `two_link_arm`.
    #[serde(rename = "type")]
    pub kind: SStr,
    /// Instantiate the entry for each value of an index.
    pub repeat: Option<Repeat>,
    /// Lagrangian: initial position.
    pub q0: Option<SVec>,
    /// Lagrangian: initial velocity.
    pub v0: Option<SVec>,
    /// Lagrangian: mass matrix.
    pub mass: Option<SMat>,
    /// Lagrangian: diagonal of the mass matrix.
    pub mass_diagonal: Option<SVec>,
    /// Lagrangian: stiffness K.
    pub stiffness: Option<SMat>,
    /// Lagrangian: damping C.
    pub damping: Option<SMat>,
    /// Lagrangian: external force (may use `t`).
    pub fext: Option<SVec>,
    /// First order: initial state.
    pub x0: Option<SVec>,
    /// First order: A (may use `t`).
    #[serde(rename = "A")]
    pub a: Option<SMat>,
    /// First order: b (may use `t`).
    pub b: Option<SVec>,
    /// First order nonlinear: f(t, x), expressions of `t`, `x0`, `x1`, ….
    pub f: Option<SVec>,
    /// First order nonlinear: ∂f/∂x (n × n), expressions of `t`, `x0`, ….
    pub jacobian: Option<SMat>,
    /// Two-link arm: l₁, l₂ (m).
    pub lengths: Option<SVec>,
    /// Two-link arm: m₁, m₂ (kg).
    pub masses: Option<SVec>,
    /// Two-link arm: I₁, I₂ about the links' centres of mass (kg·m²).
    pub inertias: Option<SVec>,
    /// Two-link arm: g (m/s²).
    pub gravity: Option<SQ>,
}

/// One `[[circuits]]` entry: a netlist, one SPICE-like line per element
/// (docs/circuits.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CircuitEntry {
    /// Name of the circuit: its system is `<name>`, its diodes'
    /// interaction `<name>_diodes`.
    pub name: SStr,
    /// The element lines, e.g. `"L1 in sw inductance"`.
    pub elements: Spanned<Vec<SStr>>,
}

/// One `[[interactions]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InteractionEntry {
    /// Name (a template when `repeat` is given).
    pub name: SStr,
    /// One or two system names (templates).
    pub systems: Spanned<Vec<SStr>>,
    /// Instantiate the entry for each value of an index.
    pub repeat: Option<Repeat>,
    /// The relation.
    pub relation: Spanned<RelationTable>,
    /// The nonsmooth law.
    pub law: Spanned<LawTable>,
}

/// `relation = { type = …, … }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelationTable {
    /// `lagrangian_linear`, `lagrangian_scleronomous`, `first_order_linear`,
    /// `first_order_nonlinear`, `two_link_arm_height` or `two_link_arm_contact`.
    #[serde(rename = "type")]
    pub kind: SStr,
    /// Nonlinear: h(q) (scleronomous) or h(t, x, λ) (first order), one
    /// expression per row of y.
    #[serde(rename = "h")]
    pub h_fn: Option<SVec>,
    /// First order nonlinear: g(t, x, λ), one expression per state.
    pub g: Option<SVec>,
    /// Lagrangian scleronomous: J = ∂h/∂q (m × n).
    pub jacobian: Option<SMat>,
    /// First order nonlinear: K = ∂g/∂x (n × n).
    #[serde(rename = "K")]
    pub k: Option<SMat>,
    /// Lagrangian: H.
    #[serde(rename = "H")]
    pub h: Option<SMat>,
    /// Lagrangian: b.
    pub b: Option<SVec>,
    /// First order: C (nonlinear: ∂h/∂x).
    #[serde(rename = "C")]
    pub c: Option<SMat>,
    /// First order: B (nonlinear: ∂g/∂λ).
    #[serde(rename = "B")]
    pub b_matrix: Option<SMat>,
    /// First order: D (nonlinear: ∂h/∂λ).
    #[serde(rename = "D")]
    pub d: Option<SMat>,
    /// First order: F.
    #[serde(rename = "F")]
    pub f: Option<SMat>,
    /// First order: e.
    pub e: Option<SVec>,
    /// Two-link arm height or contact: `tip` or `elbow`.
    pub point: Option<SStr>,
}

/// `law = { type = …, … }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LawTable {
    /// `complementarity`, `newton_impact`, `newton_impact_friction`,
    /// `relay`, `equality` or `mixed_complementarity`.
    #[serde(rename = "type")]
    pub kind: SStr,
    /// Newton impact (with or without friction): restitution coefficient.
    pub restitution: Option<SQ>,
    /// Newton impact–friction: friction coefficient μ.
    pub friction: Option<SQ>,
    /// Newton impact–friction: contact dimension, 2 or 3.
    pub dimension: Option<SQ>,
    /// Newton impact–friction: tangential restitution e_T (default 0).
    pub tangential_restitution: Option<SQ>,
    /// Relay: lower bounds.
    pub lb: Option<SVec>,
    /// Relay: upper bounds.
    pub ub: Option<SVec>,
    /// Mixed complementarity: number of equality rows (first).
    pub equalities: Option<SQ>,
}

/// `[output]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputTable {
    /// Column selectors.
    pub record: Option<Spanned<Vec<SStr>>>,
    /// Record every k-th step.
    pub every: Option<SQ>,
    /// Rigid bodies: a pose frame file every this many output rows
    /// (default 1; 0 writes none).
    pub frames: Option<SQ>,
}

/// One `[[plots]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotEntry {
    /// Title.
    pub title: Option<String>,
    /// Abscissa column (default `t`).
    pub x: Option<SStr>,
    /// Ordinate columns.
    pub y: Spanned<Vec<SStr>>,
    /// Output file, relative to the output directory.
    pub output: SStr,
}

/// Law parameters: numbers, expressions, words, vectors and matrices.
pub type LawParamTable = Spanned<BTreeMap<String, Spanned<toml::Value>>>;

/// One `[[sensors]]` entry: y = C x, x the state of `system` ((q, v) for
/// Lagrangian systems).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SensorEntry {
    /// Name.
    pub name: SStr,
    /// The measured system (or FMU).
    pub system: SStr,
    /// C: y = C x for a native system; for an FMU, y = C (its `outputs`)
    /// (default: the identity).
    #[serde(rename = "C")]
    pub c: Option<SMat>,
    /// An FMU's measured variables, by name (docs/cosimulation.md).
    pub outputs: Option<Spanned<Vec<SStr>>>,
    /// Interactions whose λ follow C x in the measurement.
    pub contacts: Option<Spanned<Vec<SStr>>>,
    /// Feedthrough D (p × m) of a controller's applied input: y = C x + D u.
    #[serde(rename = "D")]
    pub d: Option<SMat>,
    /// The controller whose applied input `D` multiplies.
    pub feedthrough: Option<SStr>,
    /// Sampling period.
    pub period: SQ,
    /// First instant after t0.
    pub offset: Option<SQ>,
    /// Measurement delay.
    pub delay: Option<SQ>,
}

/// One `[[observers]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObserverEntry {
    /// Name.
    pub name: SStr,
    /// The observer law.
    pub law: SStr,
    /// The sensor it reads.
    pub sensor: SStr,
    /// Its period.
    pub period: SQ,
    /// First instant after t0.
    pub offset: Option<SQ>,
    /// Initial estimate.
    pub x0: Option<SVec>,
    /// Parameters of the law.
    pub params: Option<LawParamTable>,
}

/// One `[[controllers]]` entry: a law and its actuator.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerEntry {
    /// Name.
    pub name: SStr,
    /// The control law.
    pub law: SStr,
    /// The sensor or observer it reads (none for open-loop laws).
    pub input: Option<SStr>,
    /// The actuated system.
    pub system: SStr,
    /// The input matrix B (n × m): g = B u.
    #[serde(rename = "B")]
    pub b: Option<SMat>,
    /// Or a nonlinear input map g = G(t, state, u), one expression per
    /// component of g.
    pub g: Option<SVec>,
    /// The size m of u, with `g`; or the gated switches of a circuit the
    /// controller drives (`inputs = ["S1"]`, without `B` and `g`).
    pub inputs: Option<Spanned<Inputs>>,
    /// Control period.
    pub period: SQ,
    /// First instant after t0.
    pub offset: Option<SQ>,
    /// Actuation delay.
    pub delay: Option<SQ>,
    /// Input held before the first application.
    pub u0: Option<SVec>,
    /// A nominal linear plant ẋ = A x + B u given to a model-based law in
    /// place of the system's own model (needed around an FMU, whose
    /// equations are hidden).
    pub nominal: Option<Spanned<NominalTable>>,
    /// Parameters of the law.
    pub params: Option<LawParamTable>,
}

/// `nominal = { A = …, B = … }` of a controller.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NominalTable {
    /// A (n × n).
    #[serde(rename = "A")]
    pub a: SMat,
    /// B (n × m).
    #[serde(rename = "B")]
    pub b: SMat,
}

/// `[fmi]`: how the scenario appears as an FMU (docs/fmi.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FmiTable {
    /// The FMU's model identifier (default: from the scenario name).
    pub model_identifier: Option<SStr>,
    /// Output selectors (default: the recorded columns).
    pub outputs: Option<Spanned<Vec<SStr>>>,
    /// Parameters that may change between communication steps.
    pub tunable: Option<Spanned<Vec<SStr>>>,
    /// Declared inputs.
    #[serde(default)]
    pub inputs: Vec<Spanned<FmiInputEntry>>,
    /// Units of parameters, inputs and outputs.
    pub units: Option<Spanned<BTreeMap<String, SStr>>>,
}

/// One `[[fmi.inputs]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FmiInputEntry {
    /// The variable name (default: the target).
    pub name: Option<SStr>,
    /// `<system>.g[i]` or `<interaction>.u[i]`.
    pub target: SStr,
    /// Value held until the host sets one (default 0).
    pub start: Option<SQ>,
    /// Free text.
    pub description: Option<String>,
}
