//! Sensors and controllers on rigid bodies in scenario files (outputs
//! `<body>.position`, `.quaternion`, `.velocity`, `.omega`; inputs
//! `<body>.force`, world frame, and `<body>.torque`, body frame, held over
//! the control period), against independent oracles:
//!
//! * a cube held at a height by a PD law through `cube.force[2]`: the
//!   sampled closed loop equals a hand-written recursion of the θ-scheme
//!   with the zero-order-held force (1e-12); the steady state is the
//!   analytic z* = z_ref − m g / k_p; the 2 % settling time is within 5 %
//!   of that of the continuous second-order system
//!   (ω_n = √(k_p/m), ζ = k_d / (2 √(k_p m))), computed from its closed-form
//!   step response;
//! * a free body spun by a constant body-frame torque about a principal
//!   axis: Ω(t) = τ t / I, and the rotation angle τ t² / (2 I) about that
//!   axis, fixed in the world (θ = ½);
//! * save and restore through the control loop (`ControlLoop::save_state`,
//!   bytes, a fresh loop) across a contact change: bit-identical rows.

use std::sync::Arc;

use nonsmooth::control::{
    ControlError, ControlLoop, ControlLoopState, Controller, ControllerSetup, LawCatalog,
    LawParams, Observer,
};
use nonsmooth_controllers::Catalog;
use nonsmooth_scenario::{BuiltScenario, Scenario};

const G: f64 = 9.81;

fn build(text: &str, catalog: Arc<dyn LawCatalog>) -> BuiltScenario {
    Scenario::from_str(text, "test.toml")
        .unwrap()
        .build_with(catalog)
        .unwrap()
}

/// Every row of a run (t, then the columns).
fn rows(built: &BuiltScenario) -> Vec<Vec<f64>> {
    let mut cl = built.control_loop().unwrap();
    let mut out = Vec::new();
    let mut row = vec![0.0; built.header().len()];
    cl.run(|cl| {
        built.row(cl, &mut row);
        out.push(row.clone());
    })
    .unwrap();
    out
}

fn column(built: &BuiltScenario, name: &str) -> usize {
    built
        .header()
        .iter()
        .position(|c| *c == name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", built.header()))
}

// --- PD law on a cube -------------------------------------------------------

const M: f64 = 2.0;
const KP: f64 = 200.0;
const KD: f64 = 20.0;
const Z_REF: f64 = 1.0;
const H: f64 = 1e-3;

fn pd_scenario(t_end: f64) -> String {
    format!(
        r#"
name = "pd_cube"
[simulation]
t_end = {t_end}
step = {H}
[[bodies]]
name = "ground"
fixed = true
shapes = [{{ type = "plane", normal = [0, 0, 1] }}]
[[bodies]]
name = "cube"
mass = {M}
shapes = [{{ type = "box", half_extents = [0.05, 0.05, 0.05] }}]
position = [0, 0, {Z_REF}]
[[sensors]]
name = "height"
system = "cube"
outputs = ["position[2]", "velocity[2]"]
period = {H}
[[controllers]]
name = "lift"
law = "pid"
input = "height"
system = "cube"
inputs = ["force[2]"]
period = {H}
[controllers.params]
kp = [[{KP}, {KD}]]
ki = [[0, 0]]
kd = [[0, 0]]
reference = [{Z_REF}, 0]
[output]
record = ["cube.position[2]", "cube.velocity[2]", "cube.force[2]", "lift.u", "cube.position[0]", "world.contacts"]
"#
    )
}

/// The continuous closed loop's error e(t) = z(t) − z* from rest:
/// e₀ e^{−ζωt} (cos ω_d t + ζ/√(1−ζ²) sin ω_d t).
fn continuous_error(t: f64) -> f64 {
    let (w, z) = ((KP / M).sqrt(), KD / (2.0 * (KP * M).sqrt()));
    let wd = w * (1.0 - z * z).sqrt();
    let e0 = M * G / KP;
    e0 * (-z * w * t).exp() * ((wd * t).cos() + z / (1.0 - z * z).sqrt() * (wd * t).sin())
}

/// The 2 % settling time of the continuous response: the last crossing of
/// the band |e| = 0.02 e₀ (a scan every 10 µs, then bisection).
fn continuous_settling_time() -> f64 {
    let band = 0.02 * M * G / KP;
    let dt = 1e-5;
    let mut last = 0;
    for k in 0..400_000 {
        if continuous_error(k as f64 * dt).abs() >= band {
            last = k;
        }
    }
    let (mut a, mut b) = (last as f64 * dt, (last + 1) as f64 * dt);
    for _ in 0..60 {
        let m = 0.5 * (a + b);
        if continuous_error(m).abs() >= band {
            a = m;
        } else {
            b = m;
        }
    }
    0.5 * (a + b)
}

#[test]
fn a_pd_law_holds_a_cube_at_the_analytic_height_and_settles_as_predicted() {
    let built = build(&pd_scenario(5.0), Arc::new(Catalog));
    let rows = rows(&built);
    let (iz, iv, iforce, iu) = (
        column(&built, "cube.position[2]"),
        column(&built, "cube.velocity[2]"),
        column(&built, "cube.force[2]"),
        column(&built, "lift.u[0]"),
    );
    // The hand-written recursion of the sampled loop, θ = 1 (the rigid
    // default): u_k = k_p (z_ref − z_k) − k_d v_k held over the step,
    // v_{k+1} = v_k − h g + (h/m) u_k, z_{k+1} = z_k + h v_{k+1}.
    let (mut z, mut v) = (Z_REF, 0.0f64);
    let mut worst = 0.0f64;
    for (k, r) in rows.iter().enumerate() {
        assert!(
            (r[0] - k as f64 * H).abs() < 1e-12,
            "row {k} at t = {}",
            r[0]
        );
        let u = KP * (Z_REF - z) + KD * (0.0 - v);
        worst = worst.max((r[iz] - z).abs()).max((r[iv] - v).abs());
        assert!((r[iu] - u).abs() <= 1e-9 * u.abs().max(1.0), "u at row {k}");
        assert_eq!(r[iforce], r[iu], "the held force is the applied input");
        // In the scheme's order: (v + h g) + (h/m) F.
        v = v + H * -G + (H / M) * u;
        z += H * v;
    }
    assert!(
        worst < 1e-12,
        "the loop departs from the recursion by {worst:e}"
    );
    // No contact, no sideways motion.
    let last = rows.last().unwrap();
    assert_eq!(last[column(&built, "world.contacts[0]")], 0.0);
    assert_eq!(last[column(&built, "cube.position[0]")], 0.0);

    // Steady state: z* = z_ref − m g / k_p (no integral part).
    let z_star = Z_REF - M * G / KP;
    let z_end = last[iz];
    assert!(
        (z_end - z_star).abs() < 1e-9,
        "z(5) = {z_end}, z* = {z_star}"
    );
    assert!(
        (last[iforce] - M * G).abs() < 1e-6,
        "the force holds the weight"
    );

    // Settling time (2 % of the initial error) against the continuous
    // second-order system.
    let band = 0.02 * (Z_REF - z_star);
    let k_last = rows
        .iter()
        .rposition(|r| (r[iz] - z_star).abs() >= band)
        .unwrap();
    let ts_run = rows[k_last + 1][0];
    let ts = continuous_settling_time();
    let (w, zeta) = ((KP / M).sqrt(), KD / (2.0 * (KP * M).sqrt()));
    println!(
        "PD cube: z(5) = {z_end:.15} (z* = {z_star:.15}, |Δ| = {:.2e}); settling time 2 %: run {ts_run:.4} s, \
         continuous {ts:.4} s ({:+.2} %), 4/(ζ ω_n) = {:.4} s; ω_n = {w}, ζ = {zeta}",
        (z_end - z_star).abs(),
        100.0 * (ts_run / ts - 1.0),
        4.0 / (zeta * w)
    );
    assert!(
        (ts_run / ts - 1.0).abs() < 0.05,
        "settling time {ts_run} s against {ts} s"
    );
}

// --- A constant torque about a principal axis -----------------------------

/// u = c, a constant (a law written here: the torque test needs an input
/// that depends on nothing).
struct Constant(Vec<f64>);

impl Controller for Constant {
    fn law(&self) -> &'static str {
        "constant"
    }
    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        assert_eq!(setup.input_dim, self.0.len());
        Ok(())
    }
    fn compute(&mut self, _: f64, _: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        u.copy_from_slice(&self.0);
        Ok(())
    }
    fn save_state(&self, _: &mut Vec<f64>) {}
    fn restore_state(&mut self, _: &[f64]) -> Result<usize, ControlError> {
        Ok(0)
    }
}

struct ConstantLaw;

impl LawCatalog for ConstantLaw {
    fn controller_laws(&self) -> Vec<&'static str> {
        vec!["constant"]
    }
    fn observer_laws(&self) -> Vec<&'static str> {
        Vec::new()
    }
    fn controller(&self, _: &str, p: &LawParams) -> Result<Box<dyn Controller>, ControlError> {
        Ok(Box::new(Constant(p.require_vector("value", "the input")?)))
    }
    fn observer(&self, _: &str, p: &LawParams) -> Result<Box<dyn Observer>, ControlError> {
        Err(ControlError::BadReference(format!(
            "{}: no observers",
            p.object()
        )))
    }
}

#[test]
fn a_constant_body_frame_torque_spins_a_free_body_at_tau_t_over_i() {
    const TAU: f64 = 0.25;
    const I3: f64 = 0.5;
    let text = format!(
        r#"
name = "spin"
[simulation]
t_end = 1
step = 1e-3
theta = 0.5
[rigid]
gravity = [0, 0, 0]
[[bodies]]
name = "top"
mass = 3
inertia_diagonal = [0.2, 0.3, {I3}]
shapes = [{{ type = "box", half_extents = [0.1, 0.2, 0.3] }}]
rotation = [0, "pi/2", 0]
[[controllers]]
name = "motor"
law = "constant"
system = "top"
inputs = ["torque[2]"]
period = 0.01
[controllers.params]
value = [{TAU}]
[output]
record = ["top.omega", "top.quaternion", "top.torque", "top.force", "top.position"]
"#
    );
    let built = build(&text, Arc::new(ConstantLaw));
    let rows = rows(&built);
    assert_eq!(rows.len(), 1001);
    let w = column(&built, "top.omega[0]");
    let q = column(&built, "top.quaternion[0]");
    let tq = column(&built, "top.torque[0]");
    let x = column(&built, "top.position[0]");
    let mut worst = (0.0f64, 0.0f64);
    for r in &rows {
        let t = r[0];
        // Ω (body frame) = (0, 0, τ t / I₃); the other components stay 0.
        assert_eq!(&r[w..w + 2], &[0.0, 0.0]);
        worst.0 = worst.0.max((r[w + 2] - TAU * t / I3).abs());
        // Q = R_y(π/2) ⊗ R_z(φ), φ = τ t² / (2 I₃): the body turns about
        // its own z axis, which stays along the world x axis.
        let phi = TAU * t * t / (2.0 * I3);
        let (c, s) = (
            (std::f64::consts::FRAC_PI_4).cos(),
            (std::f64::consts::FRAC_PI_4).sin(),
        );
        let (cp, sp) = ((phi / 2.0).cos(), (phi / 2.0).sin());
        // (c, 0, s, 0) ⊗ (cp, 0, 0, sp) = (c cp, s sp, s cp, c sp).
        let expected = [c * cp, s * sp, s * cp, c * sp];
        for (got, want) in r[q..q + 4].iter().zip(expected) {
            worst.1 = worst.1.max((got - want).abs());
        }
        assert_eq!(&r[tq..tq + 3], &[0.0, 0.0, TAU]);
        assert_eq!(&r[x..x + 3], &[0.0, 0.0, 0.0], "no force: the centre stays");
    }
    println!(
        "torque: max |Ω₃ − τt/I| = {:.2e}, max quaternion error = {:.2e}",
        worst.0, worst.1
    );
    assert!(worst.0 < 1e-12, "Ω₃ departs from τ t / I by {:e}", worst.0);
    assert!(worst.1 < 1e-12, "the orientation departs by {:e}", worst.1);
}

// --- Save and restore through the control loop ----------------------------

/// A cube resting on the ground, lifted off by the PD law from t = 0.2 s
/// (its contacts vanish), with a sideways push.
fn lift_scenario() -> String {
    r#"
name = "lift"
[simulation]
t_end = 0.8
step = 1e-3
[rigid]
friction = 0.5
[[bodies]]
name = "ground"
fixed = true
shapes = [{ type = "plane", normal = [0, 0, 1] }]
[[bodies]]
name = "cube"
mass = 2
shapes = [{ type = "box", half_extents = [0.05, 0.05, 0.05] }]
position = [0, 0, 0.0505]
[[sensors]]
name = "pose"
system = "cube"
outputs = ["position[2]", "velocity[2]", "omega"]
period = 2e-3
delay = 1e-3
[[controllers]]
name = "lift"
law = "pid"
input = "pose"
system = "cube"
inputs = ["force[2]", "force[0]", "torque"]
B = [[1, 0], [0, 1], [0, 0], [0, 0], [0, 1]]
period = 4e-3
offset = 0.2
[controllers.params]
kp = [[400, 40, 0, 0, 0], [0, 0, 0, 0, 0]]
ki = [[50, 0, 0, 0, 0], [0, 0, 0, 0, 0]]
kd = [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]
reference = [0.3, 0, 0, 0, 0]
u_min = [-100, 0.5]
u_max = [100, 0.5]
"#
    .to_string()
}

#[test]
fn a_control_loop_on_rigid_bodies_saved_across_a_contact_change_replays_bit_for_bit() {
    let built = build(&lift_scenario(), Arc::new(Catalog));
    let contacts = column(&built, "world.contacts[0]");
    let mut cl = built.control_loop().unwrap();
    let mut row = vec![0.0; built.header().len()];
    let run_to = |cl: &mut ControlLoop, t: f64, row: &mut Vec<f64>| -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        while cl.time() < t - 1e-12 {
            cl.step().unwrap();
            built.row(cl, row);
            out.push(row.iter().map(|x| x.to_bits()).collect());
        }
        out
    };
    run_to(&mut cl, 0.15, &mut row);
    built.row(&cl, &mut row);
    assert!(row[contacts] >= 4.0, "resting on the ground at the save");
    let saved = cl.save_state().unwrap();
    let first = run_to(&mut cl, 0.8, &mut row);
    assert_eq!(
        f64::from_bits(first.last().unwrap()[contacts]),
        0.0,
        "lifted off"
    );

    cl.restore_state(&saved).unwrap();
    assert_eq!(run_to(&mut cl, 0.8, &mut row), first, "restored in place");

    let bytes = saved.to_bytes();
    let read = ControlLoopState::from_bytes(&bytes).unwrap();
    let mut fresh = built.control_loop().unwrap();
    fresh.restore_state(&read).unwrap();
    assert_eq!(
        run_to(&mut fresh, 0.8, &mut row),
        first,
        "restored from bytes"
    );
}

// --- Errors ----------------------------------------------------------------

fn error(text: &str) -> String {
    match Scenario::from_str(text, "bad.toml")
        .unwrap()
        .build_with(Arc::new(Catalog))
    {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn sensors_and_controllers_on_bodies_name_what_they_use() {
    let base = pd_scenario(0.01);
    let cases = [
        (
            "outputs = [\"position[2]\", \"velocity[2]\"]",
            "outputs = [\"spin\"]",
            "`spin` is not a value of `cube`",
        ),
        (
            "outputs = [\"position[2]\", \"velocity[2]\"]",
            "outputs = [\"position[3]\"]",
            "`position[3]` is not a value of `cube`",
        ),
        (
            "outputs = [\"position[2]\", \"velocity[2]\"]",
            "C = [[1, 0]]",
            "names the values it measures",
        ),
        (
            "inputs = [\"force[2]\"]",
            "inputs = [\"thrust\"]",
            "`thrust` is not an input of the body `cube`",
        ),
        (
            "inputs = [\"force[2]\"]",
            "B = [[1]]",
            "names what it drives",
        ),
        (
            "inputs = [\"force[2]\"]",
            "inputs = [\"force[2]\"]\nB = [[1], [2]]",
            "B has 2 rows",
        ),
        (
            "system = \"cube\"\ninputs",
            "system = \"world\"\ninputs",
            "`world` takes no input",
        ),
        (
            "inputs = [\"force[2]\"]",
            "inputs = [\"force[2]\"]\ng = [\"u0\"]",
            "not `g`",
        ),
    ];
    for (from, to, expected) in cases {
        assert!(base.contains(from), "{from}");
        let text = base.replacen(from, to, 1);
        let e = error(&text);
        assert!(e.contains(expected), "{to}: {e}");
        println!("{to} → {e}");
        assert!(e.contains("bad.toml:"), "located: {e}");
    }
    // A law that needs a linear plant is refused on a body (its stand-in
    // system is no plant model) unless given a nominal one.
    let params = base.find("[controllers.params]").unwrap();
    let output = base.find("[output]").unwrap();
    let smc = format!(
        "{}[controllers.params]\ncsurface = [[1, 1]]\nalpha = 1\n{}",
        &base[..params],
        &base[output..]
    )
    .replace("law = \"pid\"", "law = \"smc_implicit\"");
    let e = error(&smc);
    assert!(e.contains("linear"), "{e}");
    // Observers need a plant model: refused beside rigid bodies.
    let obs = format!(
        "{base}\n[[observers]]\nname = \"o\"\nlaw = \"luenberger\"\nsensor = \"height\"\nperiod = 1e-3\n"
    );
    assert!(error(&obs).contains("cannot be combined with rigid bodies"));
}
