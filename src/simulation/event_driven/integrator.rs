//! The smooth integrator between events: one accepted step at a time, with
//! local error control and dense output, for either method of
//! [`OdeMethod`].
//!
//! Error norm (Hairer–Nørsett–Wanner): ‖e‖ = √(1/n Σ (eᵢ / sᵢ)²),
//! sᵢ = atol + rtol·max(|xᵢ|, |x₁ᵢ|); a step is accepted when ‖e‖ ≤ 1, and
//! the next step is h·min(5, max(0.2, 0.9‖e‖^(−1/(p+1)))) (p = 4 for
//! Dormand–Prince's estimate, 2 for TR-BDF2's), at most `max_step`, and
//! clipped so that a step never passes the stop time (an instant where the
//! inputs may change, or t_end), which it then reaches exactly.

use super::dopri::DormandPrince;
use super::settings::OdeMethod;
use super::trbdf2::{Attempt, TrBdf2};
use crate::simulation::error::SimulationError;

/// The right-hand side ẋ = f(t, x) of the smooth dynamics in the current mode.
pub(crate) trait OdeRhs {
    /// out ← f(t, x).
    fn rhs(&mut self, t: f64, x: &[f64], out: &mut [f64]) -> Result<(), SimulationError>;
}

/// √(1/n Σ (eᵢ / (atol + rtol·max(|aᵢ|, |bᵢ|)))²).
pub(crate) fn weighted_rms(e: &[f64], a: &[f64], b: &[f64], rtol: f64, atol: f64) -> f64 {
    if e.is_empty() {
        return 0.0;
    }
    let mut s = 0.0;
    for i in 0..e.len() {
        let sc = atol + rtol * a[i].abs().max(b[i].abs());
        let r = e[i] / sc;
        s += r * r;
    }
    (s / e.len() as f64).sqrt()
}

pub(super) enum Method {
    Dopri(Box<DormandPrince>),
    TrBdf2(Box<TrBdf2>),
}

/// Counters of the smooth integrator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntegratorStatistics {
    /// Accepted steps.
    pub accepted: u64,
    /// Rejected attempts (error too large, or Newton not converged).
    pub rejected: u64,
    /// Newton iterations of the implicit method.
    pub newton_iterations: u64,
}

/// The integrator state: time, state vector and the last accepted step.
pub(crate) struct Integrator {
    pub(super) method: Method,
    pub t: f64,
    pub x: Vec<f64>,
    /// Start and size of the last accepted step (dense output on [t_prev, t_prev + h]).
    pub t_prev: f64,
    pub h_last: f64,
    /// Proposed size of the next step (0: to be estimated).
    pub h_next: f64,
    rtol: f64,
    atol: f64,
    max_step: f64,
    pub stats: IntegratorStatistics,
    scratch: Vec<f64>,
}

impl Integrator {
    pub fn new(method: OdeMethod, n: usize, rtol: f64, atol: f64, max_step: f64) -> Self {
        Integrator {
            method: match method {
                OdeMethod::DormandPrince => Method::Dopri(Box::new(DormandPrince::new(n))),
                OdeMethod::TrBdf2 => Method::TrBdf2(Box::new(TrBdf2::new(n))),
            },
            t: 0.0,
            x: vec![0.0; n],
            t_prev: 0.0,
            h_last: 0.0,
            h_next: 0.0,
            rtol,
            atol,
            max_step,
            stats: IntegratorStatistics::default(),
            scratch: vec![0.0; n],
        }
    }

    /// Restarts from (t, x): f(t, x) (and the Jacobian) are re-evaluated;
    /// the step size proposed before is kept.
    pub fn restart(
        &mut self,
        f: &mut impl OdeRhs,
        t: f64,
        x: &[f64],
    ) -> Result<(), SimulationError> {
        self.t = t;
        self.t_prev = t;
        self.h_last = 0.0;
        self.x.copy_from_slice(x);
        match &mut self.method {
            Method::Dopri(m) => m.restart(f, t, x),
            Method::TrBdf2(m) => m.restart(f, t, x),
        }
    }

    fn order(&self) -> f64 {
        match self.method {
            Method::Dopri(_) => 4.0,
            Method::TrBdf2(_) => 2.0,
        }
    }

    fn f_start(&self) -> &[f64] {
        match &self.method {
            Method::Dopri(m) => m.f_start(),
            Method::TrBdf2(m) => m.f_start(),
        }
    }

    /// A first step size (Hairer's estimate from ‖x‖, ‖f‖ and a trial Euler step).
    fn initial_step(&mut self, f: &mut impl OdeRhs, span: f64) -> Result<f64, SimulationError> {
        let n = self.x.len();
        let (rtol, atol) = (self.rtol, self.atol);
        let f0 = self.f_start().to_vec();
        let d0 = weighted_rms(&self.x, &self.x, &self.x, rtol, atol);
        let d1 = weighted_rms(&f0, &self.x, &self.x, rtol, atol);
        let mut h0 = if d0 < 1e-5 || d1 < 1e-5 {
            1e-6
        } else {
            0.01 * d0 / d1
        };
        h0 = h0.min(span).min(self.max_step);
        for i in 0..n {
            self.scratch[i] = self.x[i] + h0 * f0[i];
        }
        let mut f1 = vec![0.0; n];
        f.rhs(self.t + h0, &self.scratch, &mut f1)?;
        for i in 0..n {
            f1[i] -= f0[i];
        }
        let d2 = weighted_rms(&f1, &self.x, &self.x, rtol, atol) / h0;
        let p = self.order() + 1.0;
        let h1 = if d1.max(d2) <= 1e-15 {
            (h0 * 1e-3).max(1e-6)
        } else {
            (0.01 / d1.max(d2)).powf(1.0 / p)
        };
        Ok((100.0 * h0).min(h1).min(span).min(self.max_step))
    }

    /// Takes one accepted step from `t`, not past `t_stop` (> t); returns
    /// the number of rejected attempts. The dense output then covers
    /// [t_prev, t].
    pub fn step(&mut self, f: &mut impl OdeRhs, t_stop: f64) -> Result<(), SimulationError> {
        let span = t_stop - self.t;
        debug_assert!(span > 0.0);
        if self.h_next <= 0.0 || !self.h_next.is_finite() {
            self.h_next = self.initial_step(f, span)?;
        }
        let p1 = 1.0 / (self.order() + 1.0);
        let mut h = self.h_next.min(self.max_step);
        loop {
            // Land exactly on t_stop: the last step of an interval is
            // stretched by up to 1 % rather than leaving a sliver.
            let last = h >= span * 0.99;
            if last {
                h = span;
            }
            let t = self.t;
            if h <= 4.0 * f64::EPSILON * t.abs().max(1e-300) || !h.is_finite() {
                return Err(SimulationError::StepSizeTooSmall { t, h });
            }
            let err = match &mut self.method {
                Method::Dopri(m) => Some(m.attempt(f, t, &self.x, h, self.rtol, self.atol)?),
                Method::TrBdf2(m) => match m.attempt(f, t, &self.x, h, self.rtol, self.atol)? {
                    Attempt::Done(e) => Some(e),
                    Attempt::NewtonFailed => {
                        m.refresh(f, t, &self.x)?;
                        None
                    }
                },
            };
            match err {
                Some(e) if e <= 1.0 => {
                    let fac = if e == 0.0 {
                        5.0
                    } else {
                        (0.9 * e.powf(-p1)).clamp(0.2, 5.0)
                    };
                    match &mut self.method {
                        Method::Dopri(m) => m.accept(&mut self.x, h),
                        Method::TrBdf2(m) => {
                            m.accept(&mut self.x, h);
                            self.stats.newton_iterations = m.newton_iterations;
                        }
                    }
                    self.t_prev = t;
                    self.h_last = h;
                    self.t = if last { t_stop } else { t + h };
                    // A stretched last step is not a measure of the next one.
                    self.h_next =
                        if last { self.h_next.max(h) } else { h * fac }.min(self.max_step);
                    self.stats.accepted += 1;
                    return Ok(());
                }
                Some(e) => {
                    self.stats.rejected += 1;
                    let fac = if e.is_finite() {
                        (0.9 * e.powf(-p1)).clamp(0.2, 0.9)
                    } else {
                        0.2
                    };
                    h *= fac;
                }
                None => {
                    self.stats.rejected += 1;
                    if let Method::TrBdf2(m) = &self.method {
                        self.stats.newton_iterations = m.newton_iterations;
                    }
                    h *= 0.25;
                }
            }
        }
    }

    /// x(t) on the last accepted step, t ∈ [t_prev, t].
    pub fn dense(&self, t: f64, out: &mut [f64]) {
        if t == self.t || self.h_last == 0.0 {
            out.copy_from_slice(&self.x);
            return;
        }
        let theta = ((t - self.t_prev) / self.h_last).clamp(0.0, 1.0);
        match &self.method {
            Method::Dopri(m) => m.dense(theta, out),
            Method::TrBdf2(m) => m.dense(theta, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fn1<F: FnMut(f64, &[f64], &mut [f64])>(F);
    impl<F: FnMut(f64, &[f64], &mut [f64])> OdeRhs for Fn1<F> {
        fn rhs(&mut self, t: f64, x: &[f64], out: &mut [f64]) -> Result<(), SimulationError> {
            (self.0)(t, x, out);
            Ok(())
        }
    }

    /// x' = 4t³ (solution t⁴), dense output at many θ.
    fn quartic(method: OdeMethod, tol: f64) {
        let mut f = Fn1(|t: f64, _x: &[f64], o: &mut [f64]| o[0] = 4.0 * t * t * t);
        let mut ig = Integrator::new(method, 1, 1e-9, 1e-9, 0.25);
        ig.restart(&mut f, 0.0, &[0.0]).unwrap();
        let mut out = [0.0];
        while ig.t < 1.0 {
            ig.step(&mut f, 1.0).unwrap();
            for k in 0..=8 {
                let t = ig.t_prev + ig.h_last * k as f64 / 8.0;
                ig.dense(t, &mut out);
                assert!(
                    (out[0] - t.powi(4)).abs() <= tol,
                    "{method:?} t = {t}: {} vs {}",
                    out[0],
                    t.powi(4)
                );
            }
        }
        assert_eq!(ig.t, 1.0);
    }

    #[test]
    fn dormand_prince_is_exact_on_quartics() {
        // Steps and dense output of order ≥ 4: exact up to rounding.
        quartic(OdeMethod::DormandPrince, 1e-15);
    }

    #[test]
    fn tr_bdf2_follows_quartics() {
        quartic(OdeMethod::TrBdf2, 1e-6);
    }

    /// x'' = −x as a system; error at t = 10 against cos, sin for
    /// decreasing tolerances: the global error follows the tolerance.
    fn oscillator(method: OdeMethod) -> Vec<f64> {
        [1e-4, 1e-6, 1e-8]
            .iter()
            .map(|&tol| {
                let mut f = Fn1(|_t: f64, x: &[f64], o: &mut [f64]| {
                    o[0] = x[1];
                    o[1] = -x[0];
                });
                let mut ig = Integrator::new(method, 2, tol, tol, f64::INFINITY);
                ig.restart(&mut f, 0.0, &[1.0, 0.0]).unwrap();
                while ig.t < 10.0 {
                    ig.step(&mut f, 10.0).unwrap();
                }
                ((ig.x[0] - 10f64.cos()).abs()).max((ig.x[1] + 10f64.sin()).abs())
            })
            .collect()
    }

    #[test]
    fn global_error_follows_the_tolerance() {
        // A method of order p with error-per-step control: the global error
        // scales like tol^(p/(p+1)), a factor 100^(4/5) ≈ 40 (Dormand–Prince)
        // or 100^(2/3) ≈ 22 (TR-BDF2) per hundredfold tolerance.
        for (m, factor, finest) in [
            (OdeMethod::DormandPrince, 20.0, 1e-6),
            (OdeMethod::TrBdf2, 10.0, 1e-4),
        ] {
            let e = oscillator(m);
            assert!(e[2] < finest, "{m:?} {e:?}");
            assert!(e[0] / e[1] > factor && e[1] / e[2] > factor, "{m:?} {e:?}");
        }
    }

    #[test]
    fn tr_bdf2_takes_large_steps_on_stiff_problems() {
        // x' = −1e6 (x − cos t): the solution follows cos t after a 1 µs
        // transient. An explicit method needs h ≲ 3e-6 throughout.
        let stiff = |_: ()| Fn1(|t: f64, x: &[f64], o: &mut [f64]| o[0] = -1e6 * (x[0] - t.cos()));
        let mut f = stiff(());
        let mut ig = Integrator::new(OdeMethod::TrBdf2, 1, 1e-6, 1e-6, f64::INFINITY);
        ig.restart(&mut f, 0.0, &[0.0]).unwrap();
        while ig.t < 2.0 {
            ig.step(&mut f, 2.0).unwrap();
        }
        // Exact: x = (1e12 cos t + 1e6 sin t)/(1e12 + 1) − 1e12/(1e12+1) e^{−1e6 t}.
        let exact = (1e12 * 2f64.cos() + 1e6 * 2f64.sin()) / (1e12 + 1.0);
        assert!((ig.x[0] - exact).abs() < 1e-5, "{} {exact}", ig.x[0]);
        assert!(ig.stats.accepted < 2000, "{:?}", ig.stats);
        let mut f = stiff(());
        let mut ex = Integrator::new(OdeMethod::DormandPrince, 1, 1e-6, 1e-6, f64::INFINITY);
        ex.restart(&mut f, 0.0, &[0.0]).unwrap();
        while ex.t < 2.0 {
            ex.step(&mut f, 2.0).unwrap();
        }
        assert!(ex.stats.accepted > 100_000, "{:?}", ex.stats);
    }
}
