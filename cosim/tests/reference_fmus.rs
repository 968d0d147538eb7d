//! The Modelica Reference FMUs (FMI 2.0 co-simulation) imported and stepped
//! by this crate against FMPy's `simulate_fmu` of the same FMU with the
//! same communication step (an independent importer driving the same
//! binary), Feedthrough for every variable type, BouncingBall to its end,
//! several instances of one FMU, and state save / restore / serialisation.

mod common;

use nonsmooth_cosim::{CosimError, Fmu, Instance, StepResult, VarCausality};

/// Steps an instance from 0 to `stop` with step `h` (communication points
/// n·h computed as FMPy does, t0 + (n+1)·h), recording t and `outputs`.
fn run(model: &str, h: f64, stop: f64, outputs: &[&str]) -> Vec<Vec<f64>> {
    let fmu = Fmu::load(common::reference_fmus().join(format!("{model}.fmu"))).unwrap();
    let mut inst = Instance::new(&fmu, model).unwrap();
    inst.initialize(0.0, Some(stop)).unwrap();
    let vars: Vec<_> = outputs
        .iter()
        .map(|n| inst.variable(n).unwrap().clone())
        .collect();
    let mut rows = Vec::new();
    let mut row = |inst: &mut Instance| {
        let mut r = vec![inst.time()];
        for v in &vars {
            r.push(inst.get_as_real(v).unwrap());
        }
        rows.push(r);
    };
    row(&mut inst);
    let mut n = 0u32;
    loop {
        let t = inst.time();
        if t > stop || (stop - t).abs() <= 1e-9 * stop.abs().max(1.0) {
            break;
        }
        let next = (n + 1) as f64 * h;
        match inst.do_step(next - t, next).unwrap() {
            StepResult::Done => {}
            // As FMPy: a last row at the time the FMU stopped.
            StepResult::Terminated { .. } => {
                row(&mut inst);
                break;
            }
            StepResult::Discarded => panic!("{model}: step from {t} discarded"),
        }
        n += 1;
        row(&mut inst);
    }
    rows
}

fn compare(model: &str, h: f64, stop: f64, outputs: &[&str]) {
    let ours = run(model, h, stop, outputs);
    let path = common::reference_fmus().join(format!("{model}.fmu"));
    let theirs = common::fmpy_simulate(&path, h, stop, outputs);
    assert_eq!(
        ours.len(),
        theirs.len(),
        "{model}: number of communication points"
    );
    for (a, b) in ours.iter().zip(&theirs) {
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            // The same binary stepped with the same (t, h): the values agree
            // to rounding of the communication points.
            assert!(
                (x - y).abs() <= 1e-12 * (1.0 + y.abs()),
                "{model} at t = {}: column {k}: {x} vs FMPy {y}",
                b[0]
            );
        }
    }
}

#[test]
fn dahlquist_matches_fmpy() {
    compare("Dahlquist", 0.1, 10.0, &["x"]);
}

#[test]
fn van_der_pol_matches_fmpy() {
    compare("VanDerPol", 0.01, 20.0, &["x0", "x1"]);
}

#[test]
fn stair_matches_fmpy() {
    compare("Stair", 0.2, 10.0, &["counter"]);
}

#[test]
fn bouncing_ball_runs_to_its_end_and_matches_fmpy() {
    let rows = run("BouncingBall", 0.01, 3.0, &["h", "v"]);
    assert_eq!(rows.len(), 301);
    assert!((rows.last().unwrap()[0] - 3.0).abs() < 1e-12);
    // The ball never goes (noticeably) below the floor.
    assert!(rows.iter().all(|r| r[1] > -1e-3), "height below the floor");
    compare("BouncingBall", 0.01, 3.0, &["h", "v"]);
}

#[test]
fn description_is_read() {
    let fmu = Fmu::load(common::reference_fmus().join("VanDerPol.fmu")).unwrap();
    let d = fmu.description();
    assert_eq!(d.model_name, "Van der Pol oscillator");
    assert_eq!(d.model_identifier, "VanDerPol");
    assert!(d.capabilities.get_set_state && d.capabilities.serialize_state);
    assert!(d.capabilities.variable_step);
    assert_eq!(d.default_stop, Some(20.0));
    assert_eq!(d.default_step, Some(1e-2));
    let outputs: Vec<_> = d
        .with_causality(VarCausality::Output)
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(outputs, ["x0", "x1"]);
    let mu = d.variable("mu").unwrap();
    assert_eq!(mu.causality, VarCausality::Parameter);
    assert_eq!(mu.start, Some(nonsmooth_cosim::Start::Real(1.0)));
}

#[test]
fn feedthrough_passes_every_type() {
    let fmu = Fmu::load(common::reference_fmus().join("Feedthrough.fmu")).unwrap();
    let mut inst = Instance::new(&fmu, "ft").unwrap();
    inst.set_start("Float64_fixed_parameter", 2.5).unwrap();
    inst.initialize(0.0, None).unwrap();
    // A fixed parameter cannot change after initialisation; an output
    // cannot be set at all.
    assert!(matches!(
        inst.set_start("Float64_fixed_parameter", 1.0),
        Err(CosimError::Misuse { .. })
    ));
    assert!(matches!(
        inst.set_start("Float64_continuous_output", 1.0),
        Err(CosimError::Misuse { .. })
    ));
    assert!(matches!(
        inst.variable("no_such_variable"),
        Err(CosimError::UnknownVariable { .. })
    ));
    let vr = |inst: &Instance, n: &str| inst.variable(n).unwrap().value_reference;
    let cases = [
        (
            "Float64_continuous_input",
            "Float64_continuous_output",
            3.25,
        ),
        ("Float64_discrete_input", "Float64_discrete_output", -7.5),
        ("Int32_input", "Int32_output", -42.0),
        ("Boolean_input", "Boolean_output", 1.0),
        ("Enumeration_input", "Enumeration_output", 2.0),
    ];
    for (i, o, x) in cases {
        inst.set_start(i, x).unwrap();
        let _ = (vr(&inst, i), vr(&inst, o));
    }
    // Typed calls as well.
    let (ri, ro) = (
        vr(&inst, "Float64_continuous_input"),
        vr(&inst, "Float64_continuous_output"),
    );
    let (ii, io) = (vr(&inst, "Int32_input"), vr(&inst, "Int32_output"));
    let (bi, bo) = (vr(&inst, "Boolean_input"), vr(&inst, "Boolean_output"));
    let t = inst.time();
    assert_eq!(inst.do_step(0.1, t + 0.1).unwrap(), StepResult::Done);
    for (_, o, x) in cases {
        let v = inst.variable(o).unwrap().clone();
        assert_eq!(inst.get_as_real(&v).unwrap(), x, "{o}");
    }
    let p = inst.variable("Float64_fixed_parameter").unwrap().clone();
    assert_eq!(inst.get_as_real(&p).unwrap(), 2.5);
    inst.set_real(&[ri], &[1e300]).unwrap();
    inst.set_integer(&[ii], &[i32::MIN]).unwrap();
    inst.set_boolean(&[bi], &[false]).unwrap();
    let t = inst.time();
    inst.do_step(0.1, t + 0.1).unwrap();
    let (mut r, mut i, mut b) = ([0.0], [0], [true]);
    inst.get_real(&[ro], &mut r).unwrap();
    inst.get_integer(&[io], &mut i).unwrap();
    inst.get_boolean(&[bo], &mut b).unwrap();
    assert_eq!((r[0], i[0], b[0]), (1e300, i32::MIN, false));
    // Mismatched lengths are an error, not a read past the buffer.
    assert!(matches!(
        inst.get_real(&[ro, ro], &mut r),
        Err(CosimError::Misuse { .. })
    ));
}

#[test]
fn several_instances_are_independent() {
    let fmu = Fmu::load(common::reference_fmus().join("Dahlquist.fmu")).unwrap();
    let mut a = Instance::new(&fmu, "a").unwrap();
    let mut b = Instance::new(&fmu, "b").unwrap();
    a.set_start("k", 1.0).unwrap();
    b.set_start("k", 2.0).unwrap();
    a.initialize(0.0, None).unwrap();
    b.initialize(0.0, None).unwrap();
    let x = a.variable("x").unwrap().clone();
    for n in 1..=10 {
        let t = n as f64 * 0.1;
        a.do_step(0.1, t).unwrap();
        b.do_step(0.1, t).unwrap();
    }
    let (xa, xb) = (a.get_as_real(&x).unwrap(), b.get_as_real(&x).unwrap());
    // Forward Euler of ẋ = −k x inside the FMU (its fixed step 0.1 here):
    // x_n = (1 − k h)^n x0, a hand-written recursion.
    assert!((xa - 0.9f64.powi(10)).abs() < 1e-12, "{xa}");
    assert!((xb - 0.8f64.powi(10)).abs() < 1e-12, "{xb}");
}

#[test]
fn state_save_restore_and_serialise_are_bit_identical() {
    let fmu = Fmu::load(common::reference_fmus().join("VanDerPol.fmu")).unwrap();
    let mut inst = Instance::new(&fmu, "vdp").unwrap();
    inst.initialize(0.0, None).unwrap();
    let vrs = [1, 3];
    let h = 0.01;
    let mut t = 0.0;
    for _ in 0..100 {
        inst.do_step(h, t + h).unwrap();
        t += h;
    }
    let mut saved = inst.get_state().unwrap();
    let bytes = inst.serialize_state(&saved).unwrap();
    let t_saved = t;
    let mut first = Vec::new();
    for _ in 0..100 {
        inst.do_step(h, t + h).unwrap();
        t += h;
        let mut x = [0.0; 2];
        inst.get_real(&vrs, &mut x).unwrap();
        first.push(x);
    }
    let replay = |inst: &mut Instance| {
        let mut t = t_saved;
        let mut out = Vec::new();
        for _ in 0..100 {
            inst.do_step(h, t + h).unwrap();
            t += h;
            let mut x = [0.0; 2];
            inst.get_real(&vrs, &mut x).unwrap();
            out.push(x);
        }
        out
    };
    inst.set_state(&saved).unwrap();
    assert_eq!(inst.time(), t_saved);
    assert_eq!(replay(&mut inst), first);
    // A fresh instance from the serialised bytes.
    let mut other = Instance::new(&fmu, "vdp2").unwrap();
    other.initialize(0.0, None).unwrap();
    let s = other.deserialize_state(&bytes).unwrap();
    other.set_state(&s).unwrap();
    assert_eq!(other.time(), t_saved);
    assert_eq!(replay(&mut other), first);
    // A state of one instance is refused by another.
    assert!(matches!(
        other.set_state(&saved),
        Err(CosimError::Order { .. })
    ));
    // Reusing a slot.
    inst.update_state(&mut saved).unwrap();
    assert_eq!(saved.time(), inst.time());
}
