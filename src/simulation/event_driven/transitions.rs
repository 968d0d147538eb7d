//! Processing of a nonsmooth event at the located time: the impact law
//! with the accumulation rule, the contact-force LCP and the first-order
//! mode LCPs, and the transitions they make.

use super::dynamics::{Family, RelayMode};
use super::{EventDriven, Transition, TransitionKind};
use crate::modelling::model::InteractionId;
use crate::simulation::error::SimulationError;

impl EventDriven {
    /// Processes the nonsmooth event at (t, xc): impacts of the closed
    /// contacts, contact forces, first-order modes. Fills `transitions`.
    pub(super) fn process_event(&mut self, t: f64, initial: bool) -> Result<(), SimulationError> {
        self.transitions.clear();
        self.impulse.iter_mut().for_each(|p| *p = 0.0);
        self.problems.event_count += 1;
        if !initial {
            self.ev_stats.events += 1;
        }
        self.contact_event(t)?;
        self.lcs_event(t)?;
        self.relay_event(t)?;
        Ok(())
    }

    pub(super) fn contact_event(&mut self, t: f64) -> Result<(), SimulationError> {
        let d = &mut self.dynamics;
        let contact_rows: Vec<usize> = (0..d.rows).filter(|&r| d.is_contact_row(r)).collect();
        if contact_rows.is_empty() {
            return Ok(());
        }
        let mut x = std::mem::take(&mut self.xc);
        d.free_accelerations(t, &x)?;
        let dt = self
            .settings
            .event_tolerance
            .max(4.0 * f64::EPSILON * t.abs().max(1.0));
        // I₁: contacts in persistent contact, and closed ones.
        let mut closed = Vec::new();
        let mut ydot = Vec::new();
        for &r in &contact_rows {
            let (y, yd) = d.gap(r, &x);
            if d.active[r] || y <= d.gap_noise(r, &x) + yd.abs() * 2.0 * dt {
                closed.push(r);
                ydot.push(yd);
            }
        }
        let mut acc_free = vec![0.0; closed.len()];
        d.free_output_acceleration(&closed, &mut acc_free);
        let scale = ydot.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let vtol = 1e-10 * scale.max(1e-300) + 1e-14;
        let mut plastic = vec![false; closed.len()];
        let mut after = ydot.clone();
        if ydot.iter().any(|&v| v < -vtol) {
            let out = self.problems.impact(
                d,
                &closed,
                &ydot,
                &acc_free,
                (
                    self.settings.accumulation_velocity,
                    self.settings.accumulation_time,
                ),
                t,
                &mut x,
            )?;
            for (i, &r) in closed.iter().enumerate() {
                self.impulse[r] = out.impulse[i];
                if out.impulse[i] > 0.0 {
                    self.transitions.push(Transition {
                        kind: TransitionKind::Impact,
                        interaction: InteractionId(d.row_inter[r]),
                        row: r - d.inters[d.row_inter[r]].row0,
                    });
                    self.ev_stats.impacts += 1;
                }
                if out.plastic[i] {
                    self.ev_stats.accumulations += 1;
                }
            }
            plastic = out.plastic;
            after = out.ydot_after;
        }
        // Contacts at rest: the contact-force LCP decides which stay closed.
        let mut cand = Vec::new();
        let mut cand_acc = Vec::new();
        for (i, &r) in closed.iter().enumerate() {
            if after[i] <= vtol || plastic[i] {
                cand.push(r);
                cand_acc.push(acc_free[i]);
            }
        }
        let lam = if cand.is_empty() {
            Vec::new()
        } else {
            self.problems.contact_forces(d, &cand, &cand_acc, t)?
        };
        let new_set: Vec<usize> = cand
            .iter()
            .zip(&lam)
            .filter(|(_, &l)| l > 0.0)
            .map(|(&r, _)| r)
            .collect();
        for &r in &contact_rows {
            let (was, is) = (d.active[r], new_set.contains(&r));
            let kind = match (was, is) {
                (true, false) => TransitionKind::TakeOff,
                (false, true) => TransitionKind::Contact,
                _ => continue,
            };
            if kind == TransitionKind::TakeOff {
                self.ev_stats.take_offs += 1;
            }
            self.transitions.push(Transition {
                kind,
                interaction: InteractionId(d.row_inter[r]),
                row: r - d.inters[d.row_inter[r]].row0,
            });
        }
        // Persistent contacts start at rest exactly: ẏ = 0 up to the LCP's rounding.
        d.set_contacts(&new_set, t)?;
        self.xc = x;
        Ok(())
    }

    pub(super) fn lcs_event(&mut self, t: f64) -> Result<(), SimulationError> {
        let lcs: Vec<usize> = (0..self.dynamics.inters.len())
            .filter(|&k| self.dynamics.inters[k].family == Family::Lcs)
            .collect();
        if lcs.is_empty() {
            return Ok(());
        }
        let n = self.dynamics.dim;
        // λ at x: the mode LCP of each interaction, then ẋ with those λ.
        let mut f = vec![0.0; n];
        let mut lams = Vec::with_capacity(lcs.len());
        for &k in &lcs {
            let m = self.dynamics.inters[k].m;
            let mut c = vec![0.0; m];
            self.dynamics.lcs_free_output(k, &self.xc, &mut c);
            let (lam, _) = self
                .problems
                .lcs(self.dynamics.inters[k].d.as_ref(), &c, t)?;
            lams.push(lam);
        }
        // ẋ of the first-order systems with those multipliers.
        self.dynamics.first_order_field(t, &self.xc, &mut f)?;
        for (i, &k) in lcs.iter().enumerate() {
            self.dynamics.add_lcs_input(k, &lams[i], &mut f);
        }
        let h = if self.ig.h_last > 0.0 {
            self.ig.h_last
        } else if self.ig.h_next > 0.0 && self.ig.h_next.is_finite() {
            self.ig.h_next
        } else {
            1e-3 * self.settings.output_step
        };
        let delta = 1e-6 * h;
        let xd: Vec<f64> = self.xc.iter().zip(&f).map(|(x, v)| x + delta * v).collect();
        for &k in &lcs {
            let m = self.dynamics.inters[k].m;
            let mut c = vec![0.0; m];
            self.dynamics.lcs_free_output(k, &xd, &mut c);
            let (z, w) = self
                .problems
                .lcs(self.dynamics.inters[k].d.as_ref(), &c, t)?;
            let active: Vec<bool> = z.iter().zip(&w).map(|(z, w)| z > w).collect();
            let row0 = self.dynamics.inters[k].row0;
            let before = &self.dynamics.active[row0..row0 + m];
            if before != active.as_slice() {
                self.transitions.push(Transition {
                    kind: TransitionKind::ModeSwitch,
                    interaction: InteractionId(k),
                    row: 0,
                });
                self.ev_stats.mode_switches += 1;
            }
            self.dynamics.set_lcs_mode(k, &active, t)?;
        }
        Ok(())
    }

    /// Relay modes at (t, xc): rows with y ≠ 0 take the bound of their
    /// side; rows with y = 0 (up to rounding) solve the relay problem at the
    /// level of ẏ, ẏ_S = (C B)_SS λ_S + C_S (f + B λ_fixed), −ẏ_S ∈ N(λ_S):
    /// λ inside its bounds means sliding, at a bound the side ẏ points to.
    pub(super) fn relay_event(&mut self, t: f64) -> Result<(), SimulationError> {
        let relays: Vec<usize> = (0..self.dynamics.inters.len())
            .filter(|&k| self.dynamics.inters[k].family == Family::Relay)
            .collect();
        if relays.is_empty() {
            return Ok(());
        }
        let n = self.dynamics.dim;
        let mut f = vec![0.0; n];
        self.dynamics.first_order_field(t, &self.xc, &mut f)?;
        for k in relays {
            let w = &self.dynamics.inters[k];
            let m = w.m;
            let mut c = vec![0.0; m];
            self.dynamics.lcs_free_output(k, &self.xc, &mut c);
            let w = &self.dynamics.inters[k];
            // |y| below the rounding of C x + e counts as y = 0.
            let mut scale = vec![0.0; m];
            for (j, &s) in w.systems.iter().enumerate() {
                let b = &self.dynamics.sys[s];
                for col in 0..b.n {
                    for r in 0..m {
                        scale[r] += (w.out[j][(r, col)] * self.xc[b.off + col]).abs();
                    }
                }
            }
            let mut modes = vec![RelayMode::Lower; m];
            let mut on = Vec::new();
            for r in 0..m {
                let tol = 1e-12 * (1.0 + scale[r] + w.e[r].abs());
                if c[r].abs() <= tol {
                    on.push(r);
                } else if c[r] < 0.0 {
                    modes[r] = RelayMode::Upper;
                }
            }
            if !on.is_empty() {
                let fixed: Vec<f64> = (0..m)
                    .map(|r| match modes[r] {
                        RelayMode::Upper => w.ub[r],
                        _ => w.lb[r],
                    })
                    .collect();
                // (C f)_r + Σ_{fixed} (C B)_{r,c} λ_c over the rows on the surface.
                let mut q = vec![0.0; on.len()];
                for (i, &r) in on.iter().enumerate() {
                    let mut v = 0.0;
                    for (j, &s) in w.systems.iter().enumerate() {
                        let b = &self.dynamics.sys[s];
                        for col in 0..b.n {
                            v += w.out[j][(r, col)] * f[b.off + col];
                        }
                    }
                    for cc in 0..m {
                        if !on.contains(&cc) {
                            v += w.cb[(r, cc)] * fixed[cc];
                        }
                    }
                    q[i] = v;
                }
                let mm =
                    nalgebra::DMatrix::from_fn(on.len(), on.len(), |i, j| w.cb[(on[i], on[j])]);
                let lb: Vec<f64> = on.iter().map(|&r| w.lb[r]).collect();
                let ub: Vec<f64> = on.iter().map(|&r| w.ub[r]).collect();
                let (lam, ydot) = self.problems.relay(mm, q, lb.clone(), ub.clone(), t)?;
                for (i, &r) in on.iter().enumerate() {
                    let tol = 1e-9 * (ub[i] - lb[i]).max(f64::MIN_POSITIVE);
                    modes[r] = if lam[i] > lb[i] + tol && lam[i] < ub[i] - tol {
                        RelayMode::Sliding
                    } else if ydot[i] > 0.0 {
                        RelayMode::Lower
                    } else if ydot[i] < 0.0 {
                        RelayMode::Upper
                    } else {
                        RelayMode::Sliding
                    };
                }
            }
            if self.dynamics.inters[k].relay_mode != modes {
                self.transitions.push(Transition {
                    kind: TransitionKind::ModeSwitch,
                    interaction: InteractionId(k),
                    row: 0,
                });
                self.ev_stats.mode_switches += 1;
            }
            self.dynamics.set_relay_mode(k, &modes, t)?;
        }
        Ok(())
    }
}
