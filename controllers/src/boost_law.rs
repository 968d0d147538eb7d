//! One law name for every way this crate drives a boost converter's gate
//! (law `boost_smc`), chosen by two words, so that one scenario file can
//! select the law and the sliding surface by parameters
//! (`--set law=explicit --set surface=current`, examples/boost_smc.toml).
//!
//! # Parameters
//!
//! * `law` (word): `explicit` — the sampled sign law u_k = 1 iff σ_k < 0
//!   ([`ExplicitBoostSmc`]); `implicit` — the one-step relay problem with PWM
//!   modulation ([`ImplicitBoostSmc`], module `boost_implicit`); `pwm` or
//!   `open_loop` (the same) — a fixed duty `duty` over `pwm_period` ([`Pwm`]).
//! * `surface` (word, for `explicit` and `implicit`): `current`,
//!   σ = i_L − i_ref; `voltage`, σ = i_L − i_ff + k (v − v_ref) + k_i ζ with
//!   ζ the integral of v − v_ref (`i_ref` is then the feed-forward i_ff).
//! * the numbers of the chosen law: `i_ref` (A); `v_ref` (V), `k` (A/V), `ki`
//!   (A/(V·s), default 0); `v_in` (V), `inductance` (H), `pwm_period` (s) for
//!   the implicit law; `duty`, `pwm_period` for the open loop.
//!
//! Keys that the chosen combination does not use are read and ignored, so
//! that a file can carry the parameters of every combination; a key that
//! none of them knows is still reported by the front end.
//!
//! The measurement is always (i_L, v) (a sensor with C = I on the circuit's
//! state (i(L1), v(C1))), the input one gate.
//!
//! # Signals
//!
//! `implicit`: `sigma`, `duty`, `i_ref` (as `current_smc_implicit`);
//! `explicit`: `sigma` (σ_k, A) and `i_ref` (i_ref,k, A) at every sample;
//! open loop: none (u only).

use nonsmooth::control::{ControlError, Controller, ControllerSetup, LawParams, StateReader};

use crate::boost_implicit::{BoostSurface, ImplicitBoostSmc};
use crate::converter::Pwm;

/// Every key a `boost_smc` law may be given (whatever the combination).
const KEYS: [&str; 10] = [
    "law",
    "surface",
    "i_ref",
    "v_ref",
    "k",
    "ki",
    "v_in",
    "inductance",
    "pwm_period",
    "duty",
];

/// The sampled sign law on a boost converter's current or voltage surface
/// (the `explicit` choice of `boost_smc`):
///
/// ```text
/// σ_k = i_L,k − i_ref,k,   u_k = 1 if σ_k < 0, else 0,
/// i_ref,k = i_ref                                   (current surface)
/// i_ref,k = i_ff − k (v_k − v_ref) − k_i ζ_k,  ζ_k = ζ_{k−1} + T_c (v_k − v_ref)   (voltage)
/// ```
///
/// with T_c the controller's period (ζ_0 = T_c (v_0 − v_ref)). On the
/// current surface it is `current_smc_explicit` reading (i_L, v).
#[derive(Debug, Clone)]
pub struct ExplicitBoostSmc {
    surface: BoostSurface,
    period: f64,
    integral: f64,
    started: bool,
    sigma: [f64; 1],
    i_ref: [f64; 1],
}

impl ExplicitBoostSmc {
    /// The sign law on `surface`.
    pub fn new(surface: BoostSurface) -> Self {
        ExplicitBoostSmc {
            surface,
            period: 0.0,
            integral: 0.0,
            started: false,
            sigma: [0.0],
            i_ref: [0.0],
        }
    }
}

impl Controller for ExplicitBoostSmc {
    fn law(&self) -> &'static str {
        "boost_smc"
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        check_dimensions(setup)?;
        self.period = setup.period;
        self.integral = 0.0;
        self.started = false;
        self.sigma = [0.0];
        self.i_ref = [0.0];
        Ok(())
    }

    fn compute(&mut self, _t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        let (i, v) = (y[0], y[1]);
        let i_ref = self
            .surface
            .reference(v, self.period, &mut self.integral, &mut self.started);
        self.sigma = [i - i_ref];
        self.i_ref = [i_ref];
        u[0] = if self.sigma[0] < 0.0 { 1.0 } else { 0.0 };
        Ok(())
    }

    fn signal_names(&self) -> &[&'static str] {
        &["sigma", "i_ref"]
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        match name {
            "sigma" => Some(&self.sigma[..]),
            "i_ref" => Some(&self.i_ref[..]),
            _ => None,
        }
    }

    fn save_state(&self, out: &mut Vec<f64>) {
        out.extend([
            self.integral,
            if self.started { 1.0 } else { 0.0 },
            self.sigma[0],
            self.i_ref[0],
        ]);
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let integral = r.take(1)?[0];
        let started = r.flag()?;
        let v = r.take(2)?;
        self.integral = integral;
        self.started = started;
        self.sigma = [v[0]];
        self.i_ref = [v[1]];
        Ok(r.consumed())
    }
}

/// The measurement (i_L, v) and one gate.
fn check_dimensions(setup: &ControllerSetup) -> Result<(), ControlError> {
    for (what, got, want, expected) in [
        ("measurement", setup.measurement_dim, 2, "2 (i_L, v)"),
        ("u", setup.input_dim, 1, "1 (one gate)"),
    ] {
        if got != want {
            return Err(ControlError::Dimension {
                object: setup.name.clone(),
                what: if what == "u" { "u" } else { "measurement" },
                got: got.to_string(),
                expected: expected.into(),
            });
        }
    }
    Ok(())
}

/// The law `boost_smc`: one of the boost converter's gate laws, chosen by
/// the words `law` and `surface` (module documentation).
pub struct BoostSmc {
    inner: Inner,
}

enum Inner {
    OpenLoop(Pwm),
    Explicit(ExplicitBoostSmc),
    Implicit(ImplicitBoostSmc),
}

impl BoostSmc {
    /// From the parameters (module documentation). An unknown `law` or
    /// `surface` word is an error naming the words accepted.
    pub fn from_params(p: &LawParams) -> Result<Self, ControlError> {
        let bad_word = |key: &str, got: &str, known: &str| {
            ControlError::BadReference(format!(
                "{}: `{key}` = `{got}` is not one of {known}",
                p.object()
            ))
        };
        let law = p
            .text("law")?
            .ok_or_else(|| {
                ControlError::BadReference(format!(
                    "{}: the law needs `law` (explicit, implicit, pwm or open_loop)",
                    p.object()
                ))
            })?
            .to_string();
        let surface = |p: &LawParams| -> Result<BoostSurface, ControlError> {
            match p.text("surface")? {
                Some("current") => Ok(BoostSurface::Current {
                    i_ref: p.require_scalar("i_ref", "the reference inductor current (A)")?,
                }),
                Some("voltage") => Ok(BoostSurface::Voltage {
                    v_ref: p.require_scalar("v_ref", "the output voltage reference (V)")?,
                    k: p.require_scalar("k", "the voltage gain of the surface (A/V)")?,
                    ki: p.scalar("ki")?.unwrap_or(0.0),
                    i_ff: p.scalar("i_ref")?.unwrap_or(0.0),
                }),
                Some(other) => Err(bad_word("surface", other, "current, voltage")),
                None => Err(ControlError::BadReference(format!(
                    "{}: the law needs `surface` (current or voltage)",
                    p.object()
                ))),
            }
        };
        // A surface word is checked even where the law does not use it.
        if let Some(w) = p.text("surface")? {
            if w != "current" && w != "voltage" {
                return Err(bad_word("surface", w, "current, voltage"));
            }
        }
        let inner = match law.as_str() {
            "pwm" | "open_loop" => Inner::OpenLoop(Pwm::from_params(p)?),
            "explicit" => Inner::Explicit(ExplicitBoostSmc::new(surface(p)?)),
            "implicit" => {
                let s = surface(p)?;
                Inner::Implicit(ImplicitBoostSmc::new(
                    s,
                    p.require_scalar("v_in", "the converter's input voltage (V)")?,
                    p.require_scalar("inductance", "the converter's inductance (H)")?,
                    p.require_scalar(
                        "pwm_period",
                        "the switching period, a multiple of the control period (s)",
                    )?,
                ))
            }
            other => return Err(bad_word("law", other, "explicit, implicit, pwm, open_loop")),
        };
        // The keys of the other combinations are accepted and ignored.
        for key in KEYS {
            // Reading marks the key used, whatever its kind.
            let _ = p.text(key);
        }
        Ok(BoostSmc { inner })
    }

    fn law_mut(&mut self) -> &mut dyn Controller {
        match &mut self.inner {
            Inner::OpenLoop(l) => l,
            Inner::Explicit(l) => l,
            Inner::Implicit(l) => l,
        }
    }

    fn law_ref(&self) -> &dyn Controller {
        match &self.inner {
            Inner::OpenLoop(l) => l,
            Inner::Explicit(l) => l,
            Inner::Implicit(l) => l,
        }
    }
}

impl Controller for BoostSmc {
    fn law(&self) -> &'static str {
        "boost_smc"
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        check_dimensions(setup)?;
        self.law_mut().initialize(setup)
    }

    fn compute(&mut self, t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        self.law_mut().compute(t, y, u)
    }

    fn signal_names(&self) -> &[&'static str] {
        self.law_ref().signal_names()
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        self.law_ref().signal(name)
    }

    fn save_state(&self, out: &mut Vec<f64>) {
        self.law_ref().save_state(out)
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        self.law_mut().restore_state(data)
    }
}

#[cfg(test)]
mod tests {
    use super::{BoostSmc, ExplicitBoostSmc};
    use crate::boost_implicit::BoostSurface;
    use crate::converter::CurrentSmc;
    use nonsmooth::control::{Controller, ControllerSetup, LawParams, LawValue};

    fn setup(measurement_dim: usize) -> ControllerSetup {
        ControllerSetup {
            name: "gate".into(),
            period: 1e-6,
            measurement_dim,
            input_dim: 1,
            state_dim: 2,
            plant: None,
            measurement_map: None,
        }
    }

    fn y(k: usize) -> [f64; 2] {
        [2.0 + 0.02 * (k as f64 * 0.7).sin(), 19.9 + 0.003 * k as f64]
    }

    /// On the current surface the explicit choice gives the gates and σ of
    /// `current_smc_explicit` fed with i_L alone.
    #[test]
    fn explicit_current_is_the_sign_law() {
        let mut a = ExplicitBoostSmc::new(BoostSurface::Current { i_ref: 2.0 });
        let mut b = CurrentSmc::new(2.0);
        a.initialize(&setup(2)).unwrap();
        b.initialize(&setup(1)).unwrap();
        let (mut ua, mut ub) = ([0.0], [0.0]);
        let mut both = [false; 2];
        for k in 0..50 {
            let yk = y(k);
            a.compute(k as f64 * 1e-6, &yk, &mut ua).unwrap();
            b.compute(k as f64 * 1e-6, &yk[..1], &mut ub).unwrap();
            assert_eq!(ua, ub);
            assert_eq!(a.signal("sigma"), b.signal("sigma"));
            both[ua[0] as usize] = true;
        }
        assert_eq!(both, [true, true], "both gate values seen");
    }

    /// The voltage surface's integral is summed every T_c:
    /// i_ref,k = i_ff − k e_k − k_i T_c Σ_{j≤k} e_j, written out here.
    #[test]
    fn explicit_voltage_surface_by_hand_and_restored() {
        let (v_ref, kp, ki, i_ff) = (20.0, 0.2, 400.0, 2.0);
        let mut law = ExplicitBoostSmc::new(BoostSurface::Voltage {
            v_ref,
            k: kp,
            ki,
            i_ff,
        });
        law.initialize(&setup(2)).unwrap();
        let mut zeta = 0.0;
        let mut u = [0.0];
        let mut saved = Vec::new();
        let mut after = Vec::new();
        for k in 0..40 {
            let yk = y(k);
            law.compute(k as f64 * 1e-6, &yk, &mut u).unwrap();
            let e = yk[1] - v_ref;
            zeta += 1e-6 * e;
            let i_ref = i_ff - kp * e - ki * zeta;
            assert!((law.signal("i_ref").unwrap()[0] - i_ref).abs() < 1e-12);
            assert_eq!(u[0], if yk[0] - i_ref < 0.0 { 1.0 } else { 0.0 });
            if k == 20 {
                law.save_state(&mut saved);
            }
            if k > 20 {
                after.push((u[0], law.signal("sigma").unwrap()[0]));
            }
        }
        assert_eq!(law.restore_state(&saved).unwrap(), saved.len());
        for (k, want) in (21..40).zip(after) {
            law.compute(k as f64 * 1e-6, &y(k), &mut u).unwrap();
            assert_eq!((u[0], law.signal("sigma").unwrap()[0]), want);
        }
    }

    /// Unknown words are refused, naming the words accepted; a measurement
    /// other than (i_L, v) is refused when the loop is built.
    #[test]
    fn bad_words_and_dimensions_are_refused() {
        let words = |law: &str, surface: &str| {
            LawParams::new(
                "gate",
                vec![
                    ("law".into(), LawValue::Text(law.into())),
                    ("surface".into(), LawValue::Text(surface.into())),
                    ("i_ref".into(), LawValue::Scalar(2.0)),
                    ("duty".into(), LawValue::Scalar(0.5)),
                    ("pwm_period".into(), LawValue::Scalar(1e-5)),
                ],
            )
        };
        let err = BoostSmc::from_params(&words("sliding", "current"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("sliding") && err.contains("open_loop"),
            "{err}"
        );
        let err = BoostSmc::from_params(&words("open_loop", "flux"))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("flux") && err.contains("voltage"), "{err}");
        let mut law = BoostSmc::from_params(&words("explicit", "current")).unwrap();
        assert!(law.initialize(&setup(1)).is_err());
        assert!(law.initialize(&setup(2)).is_ok());
    }
}
