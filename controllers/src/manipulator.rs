//! Switching tracking control of a two-link arm whose end effector follows
//! a circle that leaves the admissible domain y ≥ 0: free motion, transition
//! (impacts), constrained motion along the ground, and back.
//!
//! # Plant and measurement
//!
//! The arm of [`TwoLinkArm`] (θ₁ from the horizontal, θ₂ relative, base at
//! the origin on the ground line y = 0). The law reads
//! y = (θ₁, θ₂, θ̇₁, θ̇₂, P) — the arm's state and the impulse P ≥ 0 of its
//! tip contact over the last step (a sensor with `C = I₄` and
//! `contacts = ["<the tip interaction>"]`) — and writes the joint torques
//! u = τ (actuator B = I₂). Its model of the arm is given by the same
//! parameters as the plant (`lengths`, `masses`, `inertias`, `gravity`).
//!
//! # The tracking law (Slotine–Li, in task coordinates)
//!
//! With p = (x, y) the tip, J = ∂p/∂θ, a reference p_d(t) and the gains
//! γ₁ (velocity error) and γ₂ (so that γ₁γ₂ weighs the position error):
//!
//! ```text
//! p̃ = p − p_d,  ṗ_r = ṗ_d − γ₂ p̃,  p̈_r = p̈_d − γ₂(ṗ − ṗ_d),  s = ṗ − ṗ_r
//! θ̇_r = J⁻¹ ṗ_r,  θ̈_r = J⁻¹(p̈_r − J̇ θ̇_r)
//! τ = M(θ) θ̈_r + C(θ, θ̇) θ̇_r + G(θ) − γ₁ Jᵀ s  [− F_d ∇yᵀ in the constrained phase]
//! ```
//!
//! C is the Christoffel form (Ṁ − 2C skew), so that with
//! V = ½ s_θᵀ M s_θ + γ₁γ₂ p̃ᵀp̃ (s_θ = θ̇ − θ̇_r) the closed loop is passive;
//! −γ₁ Jᵀ s = −γ₁ Jᵀ(ṗ − ṗ_d) − γ₁γ₂ Jᵀ p̃ is a damper γ₁ and a spring γ₁γ₂
//! between the tip and the reference point.
//!
//! # Phases (one cycle [kT_c, (k+1)T_c) of period T_c = `cycle`)
//!
//! The circle is p_c(t) = centre + R (cos ωt, sin ωt), ω = 2π/T_c; it is
//! outside the domain for t mod T_c ∈ (T_c/2, T_c), leaving it at
//! x_out = centre_x − R and re-entering at x_in = centre_x + R.
//!
//! * **0, free**: p_d = p_c.
//! * **1, transition**, from τ₀ = kT_c + T_c/2 − `lead`: p_d goes from
//!   (p_c(τ₀), ṗ_c(τ₀)) to the point (x_out, −`depth`) under the ground, at
//!   rest, along a cubic in time over `lead` seconds, and stays there. The
//!   tip hits the ground and the impacts accumulate. An impact is a step
//!   whose impulse P > 0 follows one with P = 0; the phase ends, at t_c,
//!   when P > 0 at two successive instants (the contact stays closed).
//! * **2, constrained**, from t_c to the end t_e of the cycle in which t_c
//!   falls: x_d goes from the tip's x(t_c) to x_in along a cubic with zero
//!   end velocities; y_d = 0; the law presses the ground with the force
//!   F_d = `contact_force` (N).
//! * **back to 0** at t_e, when the complementarity problem of the contact
//!   at acceleration level, for the free-motion torque τ₀ (y = ẏ = 0),
//!   0 ≤ ÿ = ∇y M⁻¹(τ₀ − Cθ̇ − G + ∇yᵀλ) + (d∇y/dt)θ̇ ⊥ λ ≥ 0,
//!   has λ = 0: the contact opens. Until it does, the constrained law goes on
//!   with x_d = x_in.
//!
//! # Signals
//!
//! `phase` (0, 1, 2), `reference` (x_d, y_d), `impacts` (impacts of the
//! current or last transition), `transition` (start τ₀ and end t_c of the
//! last transition; NaN until known), `first_impact` (time of the first
//! impact of the last transition).

use nonsmooth::control::{ControlError, Controller, ControllerSetup, LawParams, StateReader};
use nonsmooth::modelling::models::TwoLinkArm;

use crate::linalg::{dim_err, invalid};

/// The switching tracking controller (law `manipulator_switching`).
#[derive(Debug, Clone)]
pub struct ManipulatorSwitching {
    arm: TwoLinkArm,
    gamma1: f64,
    gamma2: f64,
    centre: [f64; 2],
    radius: f64,
    cycle: f64,
    lead: f64,
    depth: f64,
    contact_force: f64,
    name: String,
    // Memory.
    phase: u8,
    /// Transition: start time and the reference's position and velocity then.
    tau0: f64,
    p0: [f64; 2],
    v0: [f64; 2],
    /// Constrained: start time, x at the start, end of the cycle.
    tc: f64,
    xc: f64,
    te: f64,
    contact_before: bool,
    impacts: f64,
    first_impact: f64,
    // Signals.
    phase_sig: [f64; 1],
    reference: [f64; 2],
    impacts_sig: [f64; 1],
    transition: [f64; 2],
    first_impact_sig: [f64; 1],
}

/// A cubic from (a, va) at s = 0 to (b, 0) at s = d: value, rate, second rate.
fn cubic(a: f64, va: f64, b: f64, d: f64, s: f64) -> (f64, f64, f64) {
    if s >= d {
        return (b, 0.0, 0.0);
    }
    let s = s.max(0.0);
    // p(s) = a + va s + c2 s² + c3 s³ with p(d) = b, p'(d) = 0.
    let c2 = (3.0 * (b - a) - 2.0 * va * d) / (d * d);
    let c3 = (-2.0 * (b - a) + va * d) / (d * d * d);
    (
        a + s * (va + s * (c2 + s * c3)),
        va + s * (2.0 * c2 + 3.0 * c3 * s),
        2.0 * c2 + 6.0 * c3 * s,
    )
}

/// 2×2 solve by Cramer's rule; None when singular.
fn solve2(m: &[[f64; 2]; 2], b: [f64; 2]) -> Option<[f64; 2]> {
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    let scale = (m[0][0].abs() + m[0][1].abs()) * (m[1][0].abs() + m[1][1].abs());
    if det.abs() <= 1e-12 * scale || det.is_nan() {
        return None;
    }
    Some([
        (b[0] * m[1][1] - m[0][1] * b[1]) / det,
        (m[0][0] * b[1] - m[1][0] * b[0]) / det,
    ])
}

fn mul2(m: &[[f64; 2]; 2], x: [f64; 2]) -> [f64; 2] {
    [
        m[0][0] * x[0] + m[0][1] * x[1],
        m[1][0] * x[0] + m[1][1] * x[1],
    ]
}

fn mul2t(m: &[[f64; 2]; 2], x: [f64; 2]) -> [f64; 2] {
    [
        m[0][0] * x[0] + m[1][0] * x[1],
        m[0][1] * x[0] + m[1][1] * x[1],
    ]
}

impl ManipulatorSwitching {
    /// A controller for `arm` with gains γ₁ (1/s·kg-ish: velocity error) and
    /// γ₂ (1/s), and the study's task: circle centre (0.65, 0) m, radius
    /// 0.1 m, cycle 5 s, lead 0.1 s, depth 0.005 m, contact force 5 N.
    pub fn new(arm: TwoLinkArm, gamma1: f64, gamma2: f64) -> Self {
        ManipulatorSwitching {
            arm,
            gamma1,
            gamma2,
            centre: [0.65, 0.0],
            radius: 0.1,
            cycle: 5.0,
            lead: 0.1,
            depth: 0.005,
            contact_force: 5.0,
            name: String::new(),
            phase: 0,
            tau0: f64::NAN,
            p0: [0.0; 2],
            v0: [0.0; 2],
            tc: f64::NAN,
            xc: 0.0,
            te: f64::NAN,
            contact_before: false,
            impacts: 0.0,
            first_impact: f64::NAN,
            phase_sig: [0.0],
            reference: [0.0; 2],
            impacts_sig: [0.0],
            transition: [f64::NAN; 2],
            first_impact_sig: [f64::NAN],
        }
    }

    /// From catalog parameters: `lengths`, `masses`, `inertias` (required,
    /// two values each), `gravity` (9.81), `gamma1` (25), `gamma2` (30),
    /// `centre` ([0.65, 0]), `radius` (0.1), `cycle` (5), `lead` (0.1),
    /// `depth` (0.005), `contact_force` (5).
    pub fn from_params(p: &LawParams) -> Result<Self, ControlError> {
        let pair = |key: &str| -> Result<[f64; 2], ControlError> {
            let v = p.require_vector(key, "two values")?;
            if v.len() != 2 {
                return Err(dim_err(
                    p.object(),
                    "parameter",
                    v.len().to_string(),
                    "2".into(),
                ));
            }
            Ok([v[0], v[1]])
        };
        let arm = TwoLinkArm::new(
            pair("lengths")?,
            pair("masses")?,
            pair("inertias")?,
            p.scalar("gravity")?.unwrap_or(9.81),
        )
        .map_err(|e| ControlError::BadReference(format!("{}: {e}", p.object())))?;
        let mut c = ManipulatorSwitching::new(
            arm,
            p.scalar("gamma1")?.unwrap_or(25.0),
            p.scalar("gamma2")?.unwrap_or(30.0),
        );
        if let Some(v) = p.vector("centre")? {
            if v.len() != 2 {
                return Err(dim_err(
                    p.object(),
                    "centre",
                    v.len().to_string(),
                    "2".into(),
                ));
            }
            c.centre = [v[0], v[1]];
        }
        let set = |key: &str, slot: &mut f64| -> Result<(), ControlError> {
            if let Some(v) = p.scalar(key)? {
                *slot = v;
            }
            Ok(())
        };
        set("radius", &mut c.radius)?;
        set("cycle", &mut c.cycle)?;
        set("lead", &mut c.lead)?;
        set("depth", &mut c.depth)?;
        set("contact_force", &mut c.contact_force)?;
        c.check(p.object())?;
        Ok(c)
    }

    fn check(&self, name: &str) -> Result<(), ControlError> {
        let positive = [
            ("gamma1", self.gamma1),
            ("gamma2", self.gamma2),
            ("radius", self.radius),
            ("cycle", self.cycle),
            ("lead", self.lead),
        ];
        for (what, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(invalid(name, what, v, "must be positive and finite"));
            }
        }
        for (what, v) in [("depth", self.depth), ("contact_force", self.contact_force)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(invalid(name, what, v, "must be finite and ≥ 0"));
            }
        }
        if self.lead >= 0.5 * self.cycle {
            return Err(invalid(
                name,
                "lead",
                self.lead,
                "must be shorter than half a cycle",
            ));
        }
        if !self.centre.iter().all(|x| x.is_finite()) {
            return Err(invalid(name, "centre", f64::NAN, "must be finite"));
        }
        Ok(())
    }

    /// The circle's point, velocity and acceleration at t.
    fn circle(&self, t: f64) -> ([f64; 2], [f64; 2], [f64; 2]) {
        let w = 2.0 * std::f64::consts::PI / self.cycle;
        let (s, c) = (w * t).sin_cos();
        let r = self.radius;
        (
            [self.centre[0] + r * c, self.centre[1] + r * s],
            [-r * w * s, r * w * c],
            [-r * w * w * c, -r * w * w * s],
        )
    }

    /// The reference (p_d, ṗ_d, p̈_d) of the current phase at t.
    fn reference_at(&self, t: f64) -> ([f64; 2], [f64; 2], [f64; 2]) {
        match self.phase {
            0 => self.circle(t),
            1 => {
                let target = [self.centre[0] - self.radius, -self.depth];
                let s = t - self.tau0;
                let (x, vx, ax) = cubic(self.p0[0], self.v0[0], target[0], self.lead, s);
                let (y, vy, ay) = cubic(self.p0[1], self.v0[1], target[1], self.lead, s);
                ([x, y], [vx, vy], [ax, ay])
            }
            _ => {
                let x_in = self.centre[0] + self.radius;
                let (x, vx, ax) = cubic(self.xc, 0.0, x_in, self.te - self.tc, t - self.tc);
                ([x, 0.0], [vx, 0.0], [ax, 0.0])
            }
        }
    }

    /// τ of the tracking law for the reference of the current phase.
    fn torque(&self, t: f64, q: &[f64], v: &[f64]) -> Result<[f64; 2], ControlError> {
        let arm = &self.arm;
        let (pd, vd, ad) = self.reference_at(t);
        let p = arm.tip(q);
        let j = arm.tip_jacobian(q);
        let jd = arm.tip_jacobian_rate(q, v);
        let pv = mul2(&j, [v[0], v[1]]);
        let g2 = self.gamma2;
        let vr = [vd[0] - g2 * (p[0] - pd[0]), vd[1] - g2 * (p[1] - pd[1])];
        let ar = [ad[0] - g2 * (pv[0] - vd[0]), ad[1] - g2 * (pv[1] - vd[1])];
        let sing = || ControlError::LawFailed {
            t,
            object: self.name.clone(),
            reason: format!(
                "the arm is at a singular configuration (θ₂ = {:.3e} rad): J is not invertible",
                q[1]
            ),
        };
        let wr = solve2(&j, vr).ok_or_else(sing)?;
        let jdw = mul2(&jd, wr);
        let wdr = solve2(&j, [ar[0] - jdw[0], ar[1] - jdw[1]]).ok_or_else(sing)?;
        let m = arm.mass(q);
        let c = arm.coriolis(q, v);
        let g = arm.gravity_torque(q);
        let s = [pv[0] - vr[0], pv[1] - vr[1]];
        let js = mul2t(&j, s);
        let mw = mul2(&m, wdr);
        let cw = mul2(&c, wr);
        let mut tau = [
            mw[0] + cw[0] + g[0] - self.gamma1 * js[0],
            mw[1] + cw[1] + g[1] - self.gamma1 * js[1],
        ];
        if self.phase == 2 {
            // Press the ground: task force (0, −F_d), torque −F_d ∇yᵀ.
            tau[0] -= self.contact_force * j[1][0];
            tau[1] -= self.contact_force * j[1][1];
        }
        Ok(tau)
    }

    /// The contact force λ of the acceleration-level complementarity problem
    /// for the torque τ, the tip on the ground with ẏ = 0.
    fn contact_force_for(&self, q: &[f64], v: &[f64], tau: [f64; 2]) -> f64 {
        let arm = &self.arm;
        let m = arm.mass(q);
        let n = arm.gyroscopic(q, v);
        let g = arm.gravity_torque(q);
        let grad = arm.tip_jacobian(q)[1];
        let rate = arm.tip_jacobian_rate(q, v)[1];
        let f = [tau[0] - n[0] - g[0], tau[1] - n[1] - g[1]];
        let (Some(a), Some(b)) = (solve2(&m, f), solve2(&m, grad)) else {
            return f64::INFINITY;
        };
        let free = grad[0] * a[0] + grad[1] * a[1] + rate[0] * v[0] + rate[1] * v[1];
        let delassus = grad[0] * b[0] + grad[1] * b[1];
        (-free / delassus).max(0.0)
    }

    /// The end of the cycle containing t.
    fn cycle_end(&self, t: f64) -> f64 {
        ((t / self.cycle).floor() + 1.0) * self.cycle
    }
}

impl Controller for ManipulatorSwitching {
    fn law(&self) -> &'static str {
        "manipulator_switching"
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        self.name = setup.name.clone();
        if setup.measurement_dim != 5 {
            return Err(dim_err(
                &setup.name,
                "measurement",
                setup.measurement_dim.to_string(),
                "5: (θ₁, θ₂, θ̇₁, θ̇₂) and the tip contact's impulse (sensor C = I₄, \
                 contacts = [the tip interaction])"
                    .into(),
            ));
        }
        if setup.input_dim != 2 {
            return Err(dim_err(
                &setup.name,
                "input",
                setup.input_dim.to_string(),
                "2 joint torques".into(),
            ));
        }
        if setup.state_dim != 4 {
            return Err(dim_err(
                &setup.name,
                "plant state",
                setup.state_dim.to_string(),
                "4 (a two-link arm)".into(),
            ));
        }
        self.check(&setup.name)?;
        Ok(())
    }

    fn compute(&mut self, t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        let (q, v) = (&y[0..2], &y[2..4]);
        let contact = y[4] > 0.0;
        let half = 0.5 * self.cycle;
        match self.phase {
            0 => {
                let k = (t / self.cycle).floor();
                let start = k * self.cycle + half - self.lead;
                if t >= start && t < k * self.cycle + half {
                    let (p, pv, _) = self.circle(t);
                    self.phase = 1;
                    self.tau0 = t;
                    self.p0 = p;
                    self.v0 = pv;
                    self.impacts = 0.0;
                    self.first_impact = f64::NAN;
                    self.transition = [t, f64::NAN];
                }
            }
            1 => {
                if contact && !self.contact_before {
                    self.impacts += 1.0;
                    if self.first_impact.is_nan() {
                        self.first_impact = t;
                    }
                } else if contact && self.contact_before {
                    self.phase = 2;
                    self.tc = t;
                    self.xc = self.arm.tip(q)[0];
                    self.te = self.cycle_end(t);
                    self.transition[1] = t;
                }
            }
            _ => {}
        }
        if self.phase == 2 && t >= self.te {
            // Leave the ground when the free-motion torque opens the contact.
            self.phase = 0;
            let free = self.torque(t, q, v)?;
            if self.contact_force_for(q, v, free) > 0.0 {
                self.phase = 2;
            }
        }
        self.contact_before = contact;
        let tau = self.torque(t, q, v)?;
        if !(tau[0].is_finite() && tau[1].is_finite()) {
            return Err(ControlError::LawFailed {
                t,
                object: self.name.clone(),
                reason: format!("non-finite torque {tau:?}"),
            });
        }
        u[0] = tau[0];
        u[1] = tau[1];
        self.phase_sig[0] = f64::from(self.phase);
        self.reference = self.reference_at(t).0;
        self.impacts_sig[0] = self.impacts;
        self.first_impact_sig[0] = self.first_impact;
        Ok(())
    }

    fn signal_names(&self) -> &[&'static str] {
        &[
            "phase",
            "reference",
            "impacts",
            "transition",
            "first_impact",
        ]
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        match name {
            "phase" => Some(&self.phase_sig),
            "reference" => Some(&self.reference),
            "impacts" => Some(&self.impacts_sig),
            "transition" => Some(&self.transition),
            "first_impact" => Some(&self.first_impact_sig),
            _ => None,
        }
    }

    /// The phase, the transition's start and reference, the constrained
    /// phase's start, x and end, the last contact flag, the impact count and
    /// first impact, and the signals.
    fn save_state(&self, out: &mut Vec<f64>) {
        out.push(f64::from(self.phase));
        out.push(self.tau0);
        out.extend_from_slice(&self.p0);
        out.extend_from_slice(&self.v0);
        out.extend_from_slice(&[self.tc, self.xc, self.te]);
        out.push(f64::from(u8::from(self.contact_before)));
        out.push(self.impacts);
        out.push(self.first_impact);
        out.push(self.phase_sig[0]);
        out.extend_from_slice(&self.reference);
        out.push(self.impacts_sig[0]);
        out.extend_from_slice(&self.transition);
        out.push(self.first_impact_sig[0]);
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let phase = r.count(2)? as u8;
        let tau0 = r.take(1)?[0];
        let p0 = r.take(2)?;
        let v0 = r.take(2)?;
        let c = r.take(3)?;
        let contact = r.flag()?;
        let rest = r.take(9)?;
        self.phase = phase;
        self.tau0 = tau0;
        self.p0.copy_from_slice(p0);
        self.v0.copy_from_slice(v0);
        (self.tc, self.xc, self.te) = (c[0], c[1], c[2]);
        self.contact_before = contact;
        self.impacts = rest[0];
        self.first_impact = rest[1];
        self.phase_sig[0] = rest[2];
        self.reference.copy_from_slice(&rest[3..5]);
        self.impacts_sig[0] = rest[5];
        self.transition.copy_from_slice(&rest[6..8]);
        self.first_impact_sig[0] = rest[8];
        Ok(r.consumed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cubic_meets_its_end_conditions() {
        let (a, va, b, d) = (0.3, -0.2, -0.1, 0.4);
        let (p0, v0, _) = cubic(a, va, b, d, 0.0);
        let (p1, v1, a1) = cubic(a, va, b, d, d - 1e-12);
        assert!((p0 - a).abs() < 1e-15 && (v0 - va).abs() < 1e-15);
        assert!((p1 - b).abs() < 1e-12 && v1.abs() < 1e-10 && a1.is_finite());
        // Rate and second rate are the derivatives of the value.
        let e = 1e-6;
        let (pm, vm, _) = cubic(a, va, b, d, 0.2 - e);
        let (pp, vp, _) = cubic(a, va, b, d, 0.2 + e);
        let (_, v, acc) = cubic(a, va, b, d, 0.2);
        assert!(((pp - pm) / (2.0 * e) - v).abs() < 1e-8);
        assert!(((vp - vm) / (2.0 * e) - acc).abs() < 1e-6);
    }

    #[test]
    fn tracking_torque_on_the_reference_is_the_inverse_dynamics() {
        // On the reference (p = p_d, ṗ = ṗ_d): s = 0 and τ = M θ̈_d + C θ̇_d + G,
        // the torque that makes the arm follow the circle exactly.
        let arm = TwoLinkArm::study();
        let c = ManipulatorSwitching::new(arm, 25.0, 30.0);
        let t = 0.7;
        let (pd, vd, ad) = c.circle(t);
        // Inverse kinematics, elbow down (θ₂ < 0).
        let [l1, l2] = arm.lengths;
        let r2 = pd[0] * pd[0] + pd[1] * pd[1];
        let th2 = -((r2 - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)).acos();
        let th1 = pd[1].atan2(pd[0]) - (l2 * th2.sin()).atan2(l1 + l2 * th2.cos());
        let q = [th1, th2];
        let tip = arm.tip(&q);
        assert!((tip[0] - pd[0]).abs() < 1e-12 && (tip[1] - pd[1]).abs() < 1e-12);
        let j = arm.tip_jacobian(&q);
        let w = solve2(&j, vd).unwrap();
        let jd = arm.tip_jacobian_rate(&q, &w);
        let jdw = mul2(&jd, w);
        let wd = solve2(&j, [ad[0] - jdw[0], ad[1] - jdw[1]]).unwrap();
        let m = arm.mass(&q);
        let n = arm.gyroscopic(&q, &w);
        let g = arm.gravity_torque(&q);
        let mw = mul2(&m, wd);
        let tau = c.torque(t, &q, &w).unwrap();
        for i in 0..2 {
            assert!((tau[i] - (mw[i] + n[i] + g[i])).abs() < 1e-9, "{tau:?}");
        }
    }
}
