//! Once initialised, computing an input or updating an estimate does not
//! allocate, from the first instant on. A counting global allocator (per
//! thread, so the harness's other threads do not disturb it) checks it.

use nalgebra::dmatrix;
use nonsmooth::control::{Controller, ControllerSetup, LinearPlant, Observer, ObserverSetup};
use nonsmooth_controllers::{
    AntiWindup, ExplicitSmc, Gain, ImplicitSmc, ImprovedSmc, Luenberger, Ot2Smc, Pid,
    SlidingObserver, SuperTwisting, Twisting, TwistingVariant,
};

/// Runs `f` and counts the allocations (reallocations included) it made
/// on this thread, with the `allocation-counter` crate's global allocator.
fn counted<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    (out.expect("the measured closure ran"), info.count_total)
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

/// Measurements sweeping through reaching and sliding regions.
fn measurement(k: usize, dim: usize, out: &mut [f64]) {
    let s = 1.0 / (1.0 + k as f64);
    for (i, o) in out.iter_mut().enumerate().take(dim) {
        *o = s * ((k + 3 * i) as f64 * 0.7).sin();
    }
}

#[test]
fn controllers_compute_without_allocating() {
    let laws: Vec<(Box<dyn Controller>, usize)> = vec![
        (
            Box::new(
                Pid::new(Gain::Scalar(1.0), Gain::Scalar(0.5), Gain::Scalar(0.1))
                    .with_output_limits(Some(vec![-0.2]), Some(vec![0.2]))
                    .with_anti_windup(AntiWindup::Conditional),
            ),
            1,
        ),
        (Box::new(ImplicitSmc::new(dmatrix![1.0, 1.0], vec![1.0])), 2),
        (Box::new(ExplicitSmc::new(dmatrix![1.0, 1.0], vec![1.0])), 2),
        (
            Box::new(Ot2Smc::new(dmatrix![1.0, 1.0]).with_clamp(vec![1.0])),
            2,
        ),
        (
            Box::new(
                ImprovedSmc::new(dmatrix![1.0, 1.0], vec![1.0], 2).with_perturbation_bound(0.5),
            ),
            2,
        ),
        (
            Box::new(Twisting::new(TwistingVariant::Implicit, 3.0, 1.0)),
            2,
        ),
        (
            Box::new(Twisting::new(TwistingVariant::Regular, 3.0, 1.0)),
            2,
        ),
        (
            Box::new(Twisting::new(TwistingVariant::Explicit, 3.0, 1.0)),
            2,
        ),
        (Box::new(SuperTwisting::new(false, 2.0, 3.0)), 1),
        (Box::new(SuperTwisting::new(true, 2.0, 3.0)), 1),
    ];
    for (mut law, p) in laws {
        law.initialize(&setup(p)).unwrap();
        let (mut y, mut u) = ([0.0; 2], [0.0; 1]);
        let ((), allocated) = counted(|| {
            for k in 0..300 {
                measurement(k, p, &mut y);
                law.compute(k as f64 * 0.01, &y[..p], &mut u).unwrap();
            }
        });
        assert_eq!(allocated, 0, "{} allocates", law.law());
    }
}

#[test]
fn observers_update_without_allocating() {
    let setup = ObserverSetup {
        name: "obs".into(),
        period: 0.1,
        measurement_dim: 1,
        state_dim: 2,
        a: Some(dmatrix![0.0, 1.0; -1.0, 0.0]),
        x0: vec![0.0, 0.5],
        c: Some(dmatrix![1.0, 0.0]),
    };
    let (c, s) = (0.1f64.cos(), 0.1f64.sin());
    let laws: Vec<Box<dyn Observer>> = vec![
        Box::new(Luenberger::new(dmatrix![2.0 * c - 0.8; 0.5])),
        Box::new(SlidingObserver::new(
            dmatrix![0.0; (c - 0.5) / s],
            vec![0.05],
        )),
    ];
    for mut law in laws {
        law.initialize(&setup).unwrap();
        let mut y = [0.0; 1];
        let ((), allocated) = counted(|| {
            for k in 0..300 {
                measurement(k, 1, &mut y);
                law.update(k as f64 * 0.1, &y, &[0.0, 0.1]).unwrap();
            }
        });
        assert_eq!(allocated, 0, "{} allocates", law.law());
    }
}
