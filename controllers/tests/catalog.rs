//! The catalog: every law by name from its documented parameter keys,
//! unused keys reported, bad kinds and values refused with typed errors.

use nalgebra::dmatrix;
use nonsmooth::control::{
    ControlError, ControllerSetup, LawCatalog, LawParams, LawValue, LinearPlant, ObserverSetup,
};
use nonsmooth_controllers::{Catalog, CONTROLLER_LAWS, OBSERVER_LAWS};

fn params(entries: &[(&str, LawValue)]) -> LawParams {
    LawParams::new(
        "ctl",
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

use LawValue::{Matrix, Scalar, Text, Vector};

/// Minimal parameters of each law, and the measurement size it needs on the
/// double integrator.
fn minimal(law: &str) -> (Vec<(&'static str, LawValue)>, usize) {
    let cs = || ("csurface", Matrix(dmatrix![1.0, 1.0]));
    match law {
        "pid" => (vec![("kp", Scalar(1.0))], 1),
        "smc_implicit" | "smc_explicit" => (vec![cs(), ("alpha", Scalar(1.0))], 2),
        "smc_ot2" => (vec![cs()], 2),
        "smc_improved" => (
            vec![cs(), ("alpha", Scalar(1.0)), ("order", Scalar(2.0))],
            2,
        ),
        "twisting_implicit" | "twisting_regular" | "twisting_explicit" => {
            (vec![("a", Scalar(3.0)), ("b", Scalar(1.0))], 2)
        }
        "super_twisting_explicit" | "super_twisting_implicit" => {
            (vec![("lambda", Scalar(2.0)), ("w", Scalar(3.0))], 1)
        }
        // Measured on a two-link arm: (θ, θ̇, contact impulse).
        "manipulator_switching" => (
            vec![
                ("lengths", Vector(vec![0.5, 0.5])),
                ("masses", Vector(vec![1.0, 1.0])),
                ("inertias", Vector(vec![1.0, 1.0])),
            ],
            5,
        ),
        "pwm" => (vec![("duty", Scalar(0.5)), ("pwm_period", Scalar(0.4))], 1),
        "current_smc_explicit" => (vec![("i_ref", Scalar(1.0))], 1),
        "current_smc_implicit" => (
            vec![
                ("i_ref", Scalar(1.0)),
                ("v_in", Scalar(10.0)),
                ("inductance", Scalar(1e-3)),
                ("pwm_period", Scalar(0.1)),
            ],
            2,
        ),
        "voltage_smc_implicit" => (
            vec![
                ("v_ref", Scalar(20.0)),
                ("k", Scalar(0.5)),
                ("v_in", Scalar(10.0)),
                ("inductance", Scalar(1e-3)),
                ("pwm_period", Scalar(0.1)),
            ],
            2,
        ),
        "boost_smc" => (
            vec![
                ("law", Text("explicit".into())),
                ("surface", Text("current".into())),
                ("i_ref", Scalar(1.0)),
            ],
            2,
        ),
        "current_smc_exact" => (
            vec![
                ("i_ref", Scalar(1.0)),
                ("v_in", Scalar(10.0)),
                ("inductance", Scalar(1e-3)),
                ("capacitance", Scalar(1e-4)),
                ("resistance", Scalar(20.0)),
                ("step", Scalar(1e-3)),
                ("theta", Scalar(0.5)),
            ],
            2,
        ),
        _ => unreachable!("{law}"),
    }
}

fn setup(measurement_dim: usize) -> ControllerSetup {
    ControllerSetup {
        name: "ctl".into(),
        period: 0.01,
        measurement_dim,
        input_dim: 1,
        state_dim: 2,
        plant: Some(LinearPlant {
            a: dmatrix![0.0, 1.0; 0.0, 0.0],
            b: dmatrix![0.0; 1.0],
        }),
        measurement_map: None,
    }
}

#[test]
fn every_law_is_created_by_name_and_initialises() {
    assert_eq!(Catalog.controller_laws(), CONTROLLER_LAWS.to_vec());
    assert_eq!(Catalog.observer_laws(), OBSERVER_LAWS.to_vec());
    for law in CONTROLLER_LAWS {
        let (entries, p) = minimal(law);
        let params = params(&entries);
        let mut c = Catalog.controller(law, &params).unwrap();
        assert_eq!(c.law(), law);
        assert!(params.unused().is_empty(), "{law}: {:?}", params.unused());
        if law == "manipulator_switching" {
            let arm = ControllerSetup {
                input_dim: 2,
                state_dim: 4,
                plant: None,
                ..setup(p)
            };
            c.initialize(&arm).unwrap();
            let mut u = [0.0; 2];
            c.compute(0.0, &[0.9, -1.6, 0.0, 0.0, 0.0], &mut u).unwrap();
            assert!(u.iter().all(|x| x.is_finite()));
            // The double integrator is refused.
            let mut c = Catalog.controller(law, &params).unwrap();
            assert!(c.initialize(&setup(2)).is_err());
            continue;
        }
        c.initialize(&setup(p)).unwrap();
        let mut u = [0.0];
        c.compute(0.0, &[0.3, -0.1][..p], &mut u).unwrap();
        assert!(u[0].is_finite());
        for name in c.signal_names() {
            assert!(c.signal(name).is_some());
        }
    }
    let (c, s) = (0.1f64.cos(), 0.1f64.sin());
    let obs_setup = ObserverSetup {
        name: "obs".into(),
        period: 0.1,
        measurement_dim: 1,
        state_dim: 2,
        a: Some(dmatrix![0.0, 1.0; -1.0, 0.0]),
        x0: vec![0.0, 0.0],
        c: Some(dmatrix![1.0, 0.0]),
    };
    let l = Matrix(dmatrix![2.0 * c - 0.8; 0.5]);
    let cases = [
        ("luenberger", vec![("L", l)]),
        (
            "sliding_observer",
            vec![
                ("L", Matrix(dmatrix![0.0; (c - 0.5) / s])),
                ("M", Scalar(1.0)),
            ],
        ),
    ];
    for (law, entries) in cases {
        let params = params(&entries);
        let mut o = Catalog.observer(law, &params).unwrap();
        assert_eq!(o.law(), law);
        assert!(params.unused().is_empty());
        o.initialize(&obs_setup).unwrap();
        assert_eq!(o.estimate().len(), 2);
    }
}

#[test]
fn full_pid_parameters() {
    let p = params(&[
        ("kp", Vector(vec![0.25])),
        ("ki", Scalar(0.125)),
        ("kd", Matrix(dmatrix![2.0])),
        ("reference", Scalar(1.0)),
        ("u_min", Scalar(-1.0)),
        ("u_max", Vector(vec![1.0])),
        ("anti_windup", Text("back_calculation".into())),
        ("tracking_gain", Scalar(5.0)),
        ("typo", Scalar(1.0)),
    ]);
    let mut c = Catalog.controller("pid", &p).unwrap();
    assert_eq!(p.unused(), vec!["typo"]);
    c.initialize(&setup(1)).unwrap();
    let mut u = [0.0];
    c.compute(0.0, &[-100.0], &mut u).unwrap();
    assert_eq!(u[0], 1.0);
}

#[test]
fn bad_names_kinds_and_values_are_typed_errors() {
    let e = Catalog.controller("lqr", &params(&[])).err().unwrap();
    assert!(matches!(e, ControlError::BadReference(ref m) if m.contains("smc_implicit")));
    let e = Catalog.observer("kalman", &params(&[])).err().unwrap();
    assert!(matches!(e, ControlError::BadReference(_)));
    // Missing required keys.
    let e = Catalog
        .controller("smc_implicit", &params(&[("alpha", Scalar(1.0))]))
        .err()
        .unwrap();
    assert!(matches!(e, ControlError::BadReference(ref m) if m.contains("csurface")));
    let e = Catalog
        .controller("twisting_implicit", &params(&[("a", Scalar(1.0))]))
        .err()
        .unwrap();
    assert!(matches!(e, ControlError::BadReference(ref m) if m.contains("`b`")));
    // Wrong kinds.
    let e = Catalog
        .controller("pid", &params(&[("kp", Text("big".into()))]))
        .err()
        .unwrap();
    assert!(matches!(e, ControlError::BadReference(_)));
    let e = Catalog
        .controller("pid", &params(&[("anti_windup", Text("clamp".into()))]))
        .err()
        .unwrap();
    assert!(matches!(e, ControlError::BadReference(ref m) if m.contains("conditional")));
    let e = Catalog
        .controller("pid", &params(&[("tracking_gain", Scalar(1.0))]))
        .err()
        .unwrap();
    assert!(matches!(e, ControlError::BadReference(_)));
    // Values out of range: refused at construction or when the loop is built.
    let (mut entries, _) = minimal("smc_improved");
    entries[2] = ("order", Scalar(1.5));
    let e = Catalog
        .controller("smc_improved", &params(&entries))
        .err()
        .unwrap();
    assert!(matches!(e, ControlError::InvalidValue { ref what, .. } if what == "order"));
    let bad = [
        (
            "twisting_implicit",
            vec![("a", Scalar(1.0)), ("b", Scalar(2.0))],
            2,
            "a",
        ),
        (
            "twisting_explicit",
            vec![("a", Scalar(1.0)), ("b", Scalar(-2.0))],
            2,
            "b",
        ),
        (
            "super_twisting_implicit",
            vec![("lambda", Scalar(-1.0)), ("w", Scalar(1.0))],
            1,
            "lambda",
        ),
        (
            "super_twisting_explicit",
            vec![
                ("lambda", Scalar(1.0)),
                ("w", Scalar(1.0)),
                ("input_gain", Scalar(0.0)),
            ],
            1,
            "input_gain",
        ),
        (
            "smc_explicit",
            vec![
                ("csurface", Matrix(dmatrix![1.0, 1.0])),
                ("alpha", Scalar(1.0)),
                ("boundary_layer", Scalar(-0.1)),
            ],
            2,
            "boundary_layer",
        ),
        (
            "smc_improved",
            vec![
                ("csurface", Matrix(dmatrix![1.0, 1.0])),
                ("alpha", Scalar(1.0)),
                ("perturbation_bound", Scalar(0.0)),
            ],
            2,
            "perturbation_bound",
        ),
    ];
    for (law, entries, p, key) in bad {
        let mut c = Catalog.controller(law, &params(&entries)).unwrap();
        let e = c.initialize(&setup(p)).err().unwrap();
        assert!(
            matches!(e, ControlError::InvalidValue { ref what, .. } if what == key),
            "{law}: {e:?}"
        );
    }
    // Wrong measurement sizes.
    let mut c = Catalog
        .controller(
            "twisting_implicit",
            &params(&minimal("twisting_implicit").0),
        )
        .unwrap();
    assert!(matches!(
        c.initialize(&setup(1)),
        Err(ControlError::Dimension {
            what: "measurement",
            ..
        })
    ));
    let mut c = Catalog
        .controller(
            "super_twisting_implicit",
            &params(&minimal("super_twisting_implicit").0),
        )
        .unwrap();
    assert!(matches!(
        c.initialize(&setup(2)),
        Err(ControlError::Dimension {
            what: "measurement",
            ..
        })
    ));
    // Non-finite values are refused by the parameter reader.
    let e = Catalog
        .controller(
            "smc_ot2",
            &params(&[("csurface", Matrix(dmatrix![f64::NAN, 1.0]))]),
        )
        .err()
        .unwrap();
    assert!(matches!(e, ControlError::InvalidValue { .. }));
}
