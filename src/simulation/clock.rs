//! An exact clock: instants are integer numbers of ticks of one time base, so
//! events that coincide in mathematics coincide in the program after any
//! number of steps.
//!
//! User periods and offsets arrive as decimal floats (1e-4, 1e-3, 0.05). Each is
//! turned into the rational p/q it denotes (the simplest fraction within a few
//! ulps of the float, by continued fractions), the tick is 1/lcm(q…), and every
//! period becomes an integer number of ticks. The time of tick k is computed as
//! k / lcm in one division — never by accumulating floating-point steps.

use thiserror::Error;

/// Errors of the clock: periods that are not positive, or that are not
/// (close to) a rational with a bounded denominator.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ClockError {
    /// A period must be finite and > 0; an offset finite and ≥ 0.
    #[error("{what} must be finite and {}, got {value}", if *.positive { "> 0" } else { "≥ 0" })]
    OutOfRange {
        /// Which quantity.
        what: &'static str,
        /// Its value.
        value: f64,
        /// Whether zero is refused too.
        positive: bool,
    },
    /// No fraction with denominator ≤ 10⁹ is within 4 ulps of the value
    /// (e.g. a period below one nanosecond).
    #[error("{what} = {value} is not a ratio of integers with denominator ≤ 1e9; give periods as decimal or simple fractions")]
    NotRational {
        /// Which quantity.
        what: &'static str,
        /// Its value.
        value: f64,
    },
    /// The common time base would need more than 2⁶² ticks per second.
    #[error("the periods need a time base finer than 2^62 ticks per second (denominators {0:?})")]
    TooFine(Vec<i64>),
}

/// A non-negative rational p/q in lowest terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rational {
    /// Numerator.
    pub num: i64,
    /// Denominator (> 0).
    pub den: i64,
}

fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

const MAX_DEN: i64 = 1_000_000_000;

impl Rational {
    /// The simplest fraction within 4 ulps of `x` (continued-fraction
    /// convergents, denominator ≤ 10⁹). 1e-4 gives 1/10000 exactly.
    pub fn from_f64(what: &'static str, x: f64) -> Result<Rational, ClockError> {
        if !x.is_finite() || x < 0.0 {
            return Err(ClockError::OutOfRange {
                what,
                value: x,
                positive: false,
            });
        }
        let tol = 4.0 * f64::EPSILON * x.max(f64::MIN_POSITIVE);
        let (mut p0, mut q0, mut p1, mut q1) = (0i64, 1i64, 1i64, 0i64);
        let mut r = x;
        for _ in 0..64 {
            let a = r.floor();
            if a > 1e18 {
                break;
            }
            let a = a as i64;
            let (Some(p2), Some(q2)) = (
                a.checked_mul(p1).and_then(|v| v.checked_add(p0)),
                a.checked_mul(q1).and_then(|v| v.checked_add(q0)),
            ) else {
                break;
            };
            if q2 > MAX_DEN {
                break;
            }
            (p0, q0, p1, q1) = (p1, q1, p2, q2);
            if ((p1 as f64) / (q1 as f64) - x).abs() <= tol {
                let g = gcd(p1, q1).max(1);
                return Ok(Rational {
                    num: p1 / g,
                    den: q1 / g,
                });
            }
            let frac = r - a as f64;
            if frac == 0.0 {
                break;
            }
            r = 1.0 / frac;
        }
        Err(ClockError::NotRational { what, value: x })
    }

    /// p/q as a float (one division).
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

/// The common time base of a simulation: `ticks_per_second` ticks in one
/// second, chosen so that every registered period and offset is an integer
/// number of ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeBase {
    ticks_per_second: i64,
}

impl TimeBase {
    /// The coarsest time base in which every value of `times` (periods,
    /// offsets, delays, the initial and final times, in seconds) is a whole
    /// number of ticks.
    pub fn for_times(times: &[(&'static str, f64)]) -> Result<TimeBase, ClockError> {
        let mut l: i64 = 1;
        let mut dens = Vec::new();
        for &(what, x) in times {
            let r = Rational::from_f64(what, x)?;
            dens.push(r.den);
            let g = gcd(l, r.den);
            l = (l / g)
                .checked_mul(r.den)
                .filter(|v| *v <= 1 << 62)
                .ok_or_else(|| ClockError::TooFine(dens.clone()))?;
        }
        Ok(TimeBase {
            ticks_per_second: l,
        })
    }

    /// Ticks in one second.
    pub fn ticks_per_second(self) -> i64 {
        self.ticks_per_second
    }

    /// The exact number of ticks of a value that [`TimeBase::for_times`] was given
    /// (or any value with the same denominators).
    pub fn ticks(self, what: &'static str, seconds: f64) -> Result<i64, ClockError> {
        let r = Rational::from_f64(what, seconds)?;
        if self.ticks_per_second % r.den != 0 {
            return Err(ClockError::TooFine(vec![self.ticks_per_second, r.den]));
        }
        r.num
            .checked_mul(self.ticks_per_second / r.den)
            .ok_or_else(|| ClockError::TooFine(vec![r.den]))
    }

    /// A period: as [`TimeBase::ticks`], and > 0.
    pub fn period(self, what: &'static str, seconds: f64) -> Result<i64, ClockError> {
        if !(seconds.is_finite() && seconds > 0.0) {
            return Err(ClockError::OutOfRange {
                what,
                value: seconds,
                positive: true,
            });
        }
        self.ticks(what, seconds)
    }

    /// The time of tick k in seconds: k / ticks_per_second, one rounding.
    pub fn seconds(self, tick: i64) -> f64 {
        tick as f64 / self.ticks_per_second as f64
    }
}

/// The clock of a run from `t0` to `t_end` with one periodic source
/// `period = (name, seconds)` (the integration step, or the output period),
/// on a time base in which the `extra` times are whole numbers of ticks too:
/// (time base, t₀ in ticks, the period in ticks, t_end in ticks).
pub fn run_clock(
    t0: f64,
    t_end: f64,
    period: (&'static str, f64),
    extra: &[(&'static str, f64)],
) -> Result<(TimeBase, i64, i64, i64), ClockError> {
    let mut times = vec![("t0", t0), ("t_end", t_end), period];
    times.extend_from_slice(extra);
    let base = TimeBase::for_times(&times)?;
    Ok((
        base,
        base.ticks("t0", t0)?,
        base.period(period.0, period.1)?,
        base.ticks("t_end", t_end)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_periods_become_exact_fractions() {
        assert_eq!(
            Rational::from_f64("h", 1e-4).unwrap(),
            Rational {
                num: 1,
                den: 10_000
            }
        );
        assert_eq!(
            Rational::from_f64("h", 0.05).unwrap(),
            Rational { num: 1, den: 20 }
        );
        assert_eq!(
            Rational::from_f64("h", 1.0 / 3.0).unwrap(),
            Rational { num: 1, den: 3 }
        );
        assert_eq!(
            Rational::from_f64("t", 0.0).unwrap(),
            Rational { num: 0, den: 1 }
        );
        // Any double has a convergent within a few ulps once q ≈ 1e8: π is
        // represented to the last bits; what the bound refuses is resolution
        // finer than a nanosecond.
        let pi = Rational::from_f64("h", std::f64::consts::PI).unwrap();
        assert!((pi.to_f64() - std::f64::consts::PI).abs() <= 16.0 * f64::EPSILON);
        assert!(matches!(
            Rational::from_f64("h", 1e-12),
            Err(ClockError::NotRational { .. })
        ));
        assert!(matches!(
            Rational::from_f64("h", f64::NAN),
            Err(ClockError::OutOfRange { .. })
        ));
    }

    #[test]
    fn time_base_is_the_lcm_of_denominators() {
        let tb =
            TimeBase::for_times(&[("h", 1e-4), ("control period", 1e-3), ("delay", 1.0 / 3.0)])
                .unwrap();
        assert_eq!(tb.ticks_per_second(), 30_000);
        assert_eq!(tb.period("h", 1e-4).unwrap(), 3);
        assert_eq!(tb.period("p", 1e-3).unwrap(), 30);
        assert!(matches!(
            tb.period("p", -1e-3),
            Err(ClockError::OutOfRange { .. })
        ));
        assert!(matches!(
            tb.period("p", 0.0),
            Err(ClockError::OutOfRange { .. })
        ));
    }
}

/// The events of a time-stepping run on its clock: a time-discretisation
/// event every `step` from t₀ + h (source 0) and an output event every
/// `output_every` steps from t₀ (source 1), both marked frequent.
#[derive(Debug)]
pub struct SteppingClock {
    /// The clock's time base.
    pub base: TimeBase,
    /// t₀ in ticks.
    pub t0_tick: i64,
    /// h in ticks.
    pub step_ticks: i64,
    /// t_end in ticks.
    pub end_tick: i64,
    /// The event manager holding the two sources.
    pub events: super::events::EventManager,
}

/// The [`SteppingClock`] of a run over [t₀, t_end] with step h, an output
/// every `output_every` steps, on a base in which the `extra` times are
/// whole numbers of ticks (see [`run_clock`]).
pub fn stepping_clock(
    t0: f64,
    t_end: f64,
    step: f64,
    output_every: u64,
    extra: &[(&'static str, f64)],
) -> Result<SteppingClock, super::SimulationError> {
    use super::events::{EventKind, EventManager};
    let (base, t0_tick, step_ticks, end_tick) = run_clock(t0, t_end, ("step", step), extra)?;
    let mut events = EventManager::new();
    events.add_periodic(
        EventKind::TimeDiscretisation,
        t0_tick + step_ticks,
        step_ticks,
    )?;
    let every = i64::try_from(output_every)
        .ok()
        .and_then(|e| e.checked_mul(step_ticks))
        .ok_or(super::SimulationError::InvalidSetting {
            what: "output_every",
            value: output_every as f64,
            reason: "too large",
        })?;
    events.add_periodic(EventKind::Output, t0_tick, every)?;
    Ok(SteppingClock {
        base,
        t0_tick,
        step_ticks,
        end_tick,
        events,
    })
}
