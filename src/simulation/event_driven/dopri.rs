//! Dormand–Prince 5(4): the explicit embedded Runge–Kutta pair of Dormand
//! and Prince (1980) with the fourth-order continuous extension of Hairer,
//! Nørsett and Wanner (Solving ODEs I, §II.6).
//!
//! One step from (t, x) with k₁ = f(t, x):
//!
//! kᵢ = f(t + cᵢh, x + h Σⱼ aᵢⱼ kⱼ), i = 2…7, x₁ = x + h Σ bᵢ kᵢ (b = 7th row of a,
//! so k₇ = f(t + h, x₁) is the next step's k₁: "first same as last").
//! The local error estimate is h Σ eᵢ kᵢ (the difference with the embedded
//! fourth-order solution). The dense output on θ ∈ [0, 1] is
//! x(t + θh) = r₁ + θ(r₂ + (1 − θ)(r₃ + θ(r₄ + (1 − θ) r₅))), with
//! r₁ = x, r₂ = x₁ − x, r₃ = h k₁ − r₂, r₄ = r₂ − h k₇ − r₃,
//! r₅ = h Σ dᵢ kᵢ; it is of order 4 and exact for polynomial solutions of
//! degree ≤ 4 (up to rounding).

use super::integrator::{weighted_rms, OdeRhs};
use crate::simulation::error::SimulationError;

const C2: f64 = 1.0 / 5.0;
const C3: f64 = 3.0 / 10.0;
const C4: f64 = 4.0 / 5.0;
const C5: f64 = 8.0 / 9.0;
const A21: f64 = 1.0 / 5.0;
const A31: f64 = 3.0 / 40.0;
const A32: f64 = 9.0 / 40.0;
const A41: f64 = 44.0 / 45.0;
const A42: f64 = -56.0 / 15.0;
const A43: f64 = 32.0 / 9.0;
const A51: f64 = 19372.0 / 6561.0;
const A52: f64 = -25360.0 / 2187.0;
const A53: f64 = 64448.0 / 6561.0;
const A54: f64 = -212.0 / 729.0;
const A61: f64 = 9017.0 / 3168.0;
const A62: f64 = -355.0 / 33.0;
const A63: f64 = 46732.0 / 5247.0;
const A64: f64 = 49.0 / 176.0;
const A65: f64 = -5103.0 / 18656.0;
const A71: f64 = 35.0 / 384.0;
const A73: f64 = 500.0 / 1113.0;
const A74: f64 = 125.0 / 192.0;
const A75: f64 = -2187.0 / 6784.0;
const A76: f64 = 11.0 / 84.0;
const E1: f64 = 71.0 / 57600.0;
const E3: f64 = -71.0 / 16695.0;
const E4: f64 = 71.0 / 1920.0;
const E5: f64 = -17253.0 / 339200.0;
const E6: f64 = 22.0 / 525.0;
const E7: f64 = -1.0 / 40.0;
const D1: f64 = -12715105075.0 / 11282082432.0;
const D3: f64 = 87487479700.0 / 32700410799.0;
const D4: f64 = -10690763975.0 / 1880347072.0;
const D5: f64 = 701980252875.0 / 199316789632.0;
const D6: f64 = -1453857185.0 / 822651844.0;
const D7: f64 = 69997945.0 / 29380423.0;

/// Stage and dense-output buffers of Dormand–Prince, sized once.
pub(crate) struct DormandPrince {
    pub(super) k: [Vec<f64>; 7],
    tmp: Vec<f64>,
    /// The solution at the end of the last attempted step.
    pub x1: Vec<f64>,
    pub(super) r: [Vec<f64>; 5],
}

impl DormandPrince {
    pub fn new(n: usize) -> Self {
        let v = || vec![0.0; n];
        DormandPrince {
            k: [v(), v(), v(), v(), v(), v(), v()],
            tmp: v(),
            x1: v(),
            r: [v(), v(), v(), v(), v()],
        }
    }

    /// k₁ ← f(t, x), at a (re)start.
    pub fn restart(
        &mut self,
        f: &mut impl OdeRhs,
        t: f64,
        x: &[f64],
    ) -> Result<(), SimulationError> {
        f.rhs(t, x, &mut self.k[0])
    }

    /// f(t, x) of the current step start.
    pub fn f_start(&self) -> &[f64] {
        &self.k[0]
    }

    /// Attempts a step of size h from (t, x); returns the weighted RMS norm
    /// of the local error estimate (≤ 1: acceptable). `x1` holds the result.
    pub fn attempt(
        &mut self,
        f: &mut impl OdeRhs,
        t: f64,
        x: &[f64],
        h: f64,
        rtol: f64,
        atol: f64,
    ) -> Result<f64, SimulationError> {
        let n = x.len();
        macro_rules! stage {
            ($dst:expr, $c:expr, [$(($a:expr, $j:expr)),*]) => {{
                for i in 0..n {
                    self.tmp[i] = x[i] + h * (0.0 $(+ $a * self.k[$j][i])*);
                }
                let (head, tail) = self.k.split_at_mut($dst);
                let _ = head;
                f.rhs(t + $c * h, &self.tmp, &mut tail[0])?;
            }};
        }
        stage!(1, C2, [(A21, 0)]);
        stage!(2, C3, [(A31, 0), (A32, 1)]);
        stage!(3, C4, [(A41, 0), (A42, 1), (A43, 2)]);
        stage!(4, C5, [(A51, 0), (A52, 1), (A53, 2), (A54, 3)]);
        stage!(5, 1.0, [(A61, 0), (A62, 1), (A63, 2), (A64, 3), (A65, 4)]);
        for i in 0..n {
            self.x1[i] = x[i]
                + h * (A71 * self.k[0][i]
                    + A73 * self.k[2][i]
                    + A74 * self.k[3][i]
                    + A75 * self.k[4][i]
                    + A76 * self.k[5][i]);
        }
        f.rhs(t + h, &self.x1, &mut self.k[6])?;
        for i in 0..n {
            self.tmp[i] = h
                * (E1 * self.k[0][i]
                    + E3 * self.k[2][i]
                    + E4 * self.k[3][i]
                    + E5 * self.k[4][i]
                    + E6 * self.k[5][i]
                    + E7 * self.k[6][i]);
        }
        Ok(weighted_rms(&self.tmp, x, &self.x1, rtol, atol))
    }

    /// Accepts the last attempt from x: prepares the dense output of the
    /// step, sets x ← x₁ and k₁ ← k₇.
    pub fn accept(&mut self, x: &mut [f64], h: f64) {
        let n = x.len();
        let [r1, r2, r3, r4, r5] = &mut self.r;
        let k = &self.k;
        for i in 0..n {
            let dx = self.x1[i] - x[i];
            let bspl = h * k[0][i] - dx;
            r1[i] = x[i];
            r2[i] = dx;
            r3[i] = bspl;
            r4[i] = dx - h * k[6][i] - bspl;
            r5[i] = h
                * (D1 * k[0][i]
                    + D3 * k[2][i]
                    + D4 * k[3][i]
                    + D5 * k[4][i]
                    + D6 * k[5][i]
                    + D7 * k[6][i]);
        }
        x.copy_from_slice(&self.x1);
        self.k.swap(0, 6);
    }

    /// x(t + θh) of the last accepted step, θ ∈ [0, 1].
    pub fn dense(&self, theta: f64, out: &mut [f64]) {
        let t1 = 1.0 - theta;
        let [r1, r2, r3, r4, r5] = &self.r;
        for i in 0..out.len() {
            out[i] = r1[i] + theta * (r2[i] + t1 * (r3[i] + theta * (r4[i] + t1 * r5[i])));
        }
    }
}
