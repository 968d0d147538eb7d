//! Guards of the current mode: their values at the ends of each accepted
//! step, the detection of a crossing (including a gap that dips below zero
//! inside a step) and its location on the dense output.

use super::integrator::OdeRhs;
use super::roots;
use super::EventDriven;
use super::Root;
use crate::simulation::error::SimulationError;

impl EventDriven {
    /// Guard values at the state x, from the last right-hand side
    /// evaluation (which must have been at x).
    pub(super) fn guard_values(&self, x: &[f64], g: &mut [f64], gd: &mut [f64]) {
        let d = &self.dynamics;
        for r in 0..d.rows {
            if !self.is_guard[r] {
                continue;
            }
            gd[r] = 0.0;
            g[r] = if let Some(v) = d.relay_guard(r) {
                v
            } else if d.active[r] {
                d.lam[r]
            } else if d.is_contact_row(r) {
                let (y, yd) = d.gap(r, x);
                gd[r] = yd;
                y
            } else {
                d.y_lcs[r]
            };
        }
    }

    /// After an accepted step: looks for guards that crossed zero in it
    /// and locates the earliest crossing. A guard triggers when it was
    /// positive at the step start (armed) and is ≤ 0 at its end; a gap
    /// also when it dips to ≤ 0 between positive ends (a minimum inside the
    /// step, found where ẏ changes sign), or, just released at 0, when it
    /// rises and falls back below 0 within the step.
    pub(super) fn watch_guards(&mut self) -> Result<(), SimulationError> {
        let rows = self.dynamics.rows;
        if rows == 0 {
            return Ok(());
        }
        let mut x_end = std::mem::take(&mut self.xbuf);
        x_end.copy_from_slice(&self.ig.x);
        let mut g_end = std::mem::take(&mut self.g_end);
        let mut gd_end = std::mem::take(&mut self.gd_end);
        self.guard_values(&x_end, &mut g_end, &mut gd_end);
        self.xbuf = x_end;
        let mut earliest: Option<f64> = None;
        let (t_a, t_b) = (self.ig.t_prev, self.ig.t);
        for r in 0..rows {
            if !self.is_guard[r] {
                continue;
            }
            let gap = !self.dynamics.active[r] && self.dynamics.is_contact_row(r);
            let (ga, gb, armed) = (self.g_start[r], g_end[r], self.armed[r]);
            let bracket = if armed && gb <= 0.0 {
                Some((t_a, ga, t_b, gb))
            } else if gap {
                let (da, db) = (self.gd_start[r], gd_end[r]);
                if armed && da < 0.0 && db > 0.0 {
                    // A minimum inside: −ẏ goes from > 0 to < 0.
                    let tm = self.locate(r, 2, t_a, -da, t_b, -db)?;
                    let ym = self.guard_at(r, tm, 0)?;
                    (ym <= 0.0).then_some((t_a, ga, tm, ym))
                } else if !armed && gb <= 0.0 && da > 0.0 && db < 0.0 {
                    // Released at 0: up to a maximum, then down through 0.
                    let tm = self.locate(r, 1, t_a, da, t_b, db)?;
                    let ym = self.guard_at(r, tm, 0)?;
                    (ym > 0.0 && tm < t_b).then_some((tm, ym, t_b, gb))
                } else {
                    None
                }
            } else {
                None
            };
            if let Some((a, fa, b, fb)) = bracket {
                if earliest.is_some_and(|e| a >= e) {
                    continue;
                }
                let tr = self.locate(r, 0, a, fa, b, fb)?;
                if earliest.is_none_or(|e| tr < e) {
                    earliest = Some(tr);
                }
            }
        }
        if let Some(t) = earliest {
            self.pending = Some(Root { t });
        } else {
            for r in 0..rows {
                self.armed[r] = self.is_guard[r] && (self.armed[r] || g_end[r] > 0.0);
            }
            self.g_start.copy_from_slice(&g_end);
            self.gd_start.copy_from_slice(&gd_end);
        }
        self.g_end = g_end;
        self.gd_end = gd_end;
        Ok(())
    }

    /// Locates the root of `what` (0: the guard, 1: ẏ, 2: −ẏ) of row r in [a, b].
    pub(super) fn locate(
        &mut self,
        r: usize,
        what: u8,
        a: f64,
        fa: f64,
        b: f64,
        fb: f64,
    ) -> Result<f64, SimulationError> {
        let tol = self.settings.event_tolerance;
        let mut iters = 0u64;
        let (t, _) = roots::locate(
            |t| {
                iters += 1;
                self.guard_and_slope_at(r, t, what)
            },
            a,
            fa,
            b,
            fb,
            tol,
        )?;
        self.ev_stats.root_iterations += iters;
        Ok(t)
    }

    /// At time t of the last step (dense output): guard r (`what` = 0), or
    /// ẏ (1) or −ẏ (2) of a gap guard.
    pub(super) fn guard_at(&mut self, r: usize, t: f64, what: u8) -> Result<f64, SimulationError> {
        self.guard_and_slope_at(r, t, what).map(|(g, _)| g)
    }

    /// As [`Self::guard_at`], with the derivative of a gap (ẏ) when known.
    pub(super) fn guard_and_slope_at(
        &mut self,
        r: usize,
        t: f64,
        what: u8,
    ) -> Result<(f64, Option<f64>), SimulationError> {
        let mut x = std::mem::take(&mut self.gx);
        self.ig.dense(t, &mut x);
        let d = &mut self.dynamics;
        let g = if !d.active[r] && d.is_contact_row(r) {
            let (y, yd) = d.gap(r, &x);
            match what {
                0 => (y, Some(yd)),
                1 => (yd, None),
                _ => (-yd, None),
            }
        } else {
            let mut f = std::mem::take(&mut self.fbuf);
            let res = d.rhs(t, &x, &mut f);
            self.fbuf = f;
            res?;
            let g = if let Some(v) = d.relay_guard(r) {
                v
            } else if d.active[r] {
                d.lam[r]
            } else {
                d.y_lcs[r]
            };
            (g, None)
        };
        self.gx = x;
        Ok(g)
    }
}
