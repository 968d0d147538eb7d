//! Metrics: one number from a recorded run.
//!
//! Written as in `nonsmooth sweep --metric NAME=EXPR` and in the Python
//! package's built-in metrics:
//!
//! * `final(COL)` — the value of column COL at the last output instant;
//! * `max_abs_after(COL, T)` — max |COL(tᵢ)| over the output instants
//!   tᵢ ≥ T (NaN when there is none);
//! * `reaching_time(COL, TOL)` — the first output instant t_r from which
//!   |COL(tᵢ)| ≤ TOL at every later output instant tᵢ ≥ t_r, i.e. the time
//!   a sliding variable reaches (and stays in) the band |σ| ≤ TOL; NaN when
//!   the last value is outside the band.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use super::recording::Recording;

/// A metric of a run (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub enum Metric {
    /// `final(COL)`.
    Final {
        /// The column.
        column: String,
    },
    /// `max_abs_after(COL, T)`.
    MaxAbsAfter {
        /// The column.
        column: String,
        /// From this time on.
        after: f64,
    },
    /// `reaching_time(COL, TOL)`.
    ReachingTime {
        /// The column.
        column: String,
        /// Width of the band |COL| ≤ TOL.
        tol: f64,
    },
}

/// A metric that cannot be read or evaluated.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum MetricError {
    /// The text is not one of the metric forms.
    #[error("metric `{text}`: {reason} (expected final(COL), max_abs_after(COL, T) or reaching_time(COL, TOL))")]
    Syntax {
        /// The text given.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// The run has no such column.
    #[error("metric `{metric}`: the run records no column `{column}` (it records {known})")]
    NoColumn {
        /// The metric.
        metric: String,
        /// The column asked for.
        column: String,
        /// The recorded columns.
        known: String,
    },
}

impl Metric {
    /// The column the metric reads.
    pub fn column(&self) -> &str {
        match self {
            Metric::Final { column }
            | Metric::MaxAbsAfter { column, .. }
            | Metric::ReachingTime { column, .. } => column,
        }
    }

    /// The metric's value on a recorded run.
    pub fn evaluate(&self, rec: &Recording) -> Result<f64, MetricError> {
        let j = rec
            .column_index(self.column())
            .ok_or_else(|| MetricError::NoColumn {
                metric: self.to_string(),
                column: self.column().to_string(),
                known: rec.header.join(", "),
            })?;
        let n = rec.rows();
        let value = |i: usize| rec.row(i)[j];
        let time = |i: usize| rec.row(i)[0];
        Ok(match self {
            Metric::Final { .. } => {
                if n == 0 {
                    f64::NAN
                } else {
                    value(n - 1)
                }
            }
            Metric::MaxAbsAfter { after, .. } => (0..n)
                .filter(|&i| time(i) >= *after)
                .map(|i| value(i).abs())
                .fold(f64::NAN, f64::max),
            Metric::ReachingTime { tol, .. } => {
                // Walk back from the end while the value is in the band.
                let mut first = None;
                for i in (0..n).rev() {
                    if value(i).abs() <= *tol {
                        first = Some(i);
                    } else {
                        break;
                    }
                }
                first.map_or(f64::NAN, time)
            }
        })
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Metric::Final { column } => write!(f, "final({column})"),
            Metric::MaxAbsAfter { column, after } => write!(f, "max_abs_after({column}, {after})"),
            Metric::ReachingTime { column, tol } => write!(f, "reaching_time({column}, {tol})"),
        }
    }
}

impl FromStr for Metric {
    type Err = MetricError;

    fn from_str(text: &str) -> Result<Metric, MetricError> {
        let bad = |reason: &str| MetricError::Syntax {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        let t = text.trim();
        let (name, rest) = t
            .split_once('(')
            .ok_or_else(|| bad("no `(` after the metric's name"))?;
        let inner = rest
            .trim_end()
            .strip_suffix(')')
            .ok_or_else(|| bad("no closing `)`"))?;
        let args: Vec<&str> = inner.split(',').map(str::trim).collect();
        let column = args[0].to_string();
        if column.is_empty() {
            return Err(bad("no column"));
        }
        let number = |k: usize, what: &str| -> Result<f64, MetricError> {
            let s = args
                .get(k)
                .ok_or_else(|| bad(&format!("no {what} after the column")))?;
            s.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| bad(&format!("{what} `{s}` is not a finite number")))
        };
        let expect = |count: usize| {
            if args.len() == count {
                Ok(())
            } else {
                Err(bad(&format!(
                    "{} takes {count} argument(s), {} given",
                    name.trim(),
                    args.len()
                )))
            }
        };
        match name.trim() {
            "final" => {
                expect(1)?;
                Ok(Metric::Final { column })
            }
            "max_abs_after" => {
                expect(2)?;
                Ok(Metric::MaxAbsAfter {
                    column,
                    after: number(1, "time")?,
                })
            }
            "reaching_time" => {
                expect(2)?;
                let tol = number(1, "tolerance")?;
                if tol < 0.0 {
                    return Err(bad("the tolerance must not be negative"));
                }
                Ok(Metric::ReachingTime { column, tol })
            }
            other => Err(bad(&format!("unknown metric `{other}`"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// t, a: a hand-written table.
    fn table() -> Recording {
        let rows = [
            [0.0, 1.0],
            [0.5, -0.6],
            [1.0, 0.0],
            [1.5, 0.2],
            [2.0, 1e-10],
            [2.5, -1e-10],
        ];
        Recording {
            header: vec!["t".into(), "a".into()],
            data: rows.iter().flatten().copied().collect(),
            ..Recording::default()
        }
    }

    #[test]
    fn metrics_on_a_hand_written_table() {
        let r = table();
        let m = |s: &str| s.parse::<Metric>().unwrap().evaluate(&r).unwrap();
        assert_eq!(m("final(a)"), -1e-10);
        assert_eq!(m("max_abs_after(a, 0.5)"), 0.6);
        assert_eq!(m("max_abs_after(a, 0.6)"), 0.2);
        assert!(m("max_abs_after(a, 3)").is_nan());
        // In the band at 1.0, out at 1.5, in from 2.0 on.
        assert_eq!(m("reaching_time(a, 1e-9)"), 2.0);
        assert_eq!(m("reaching_time(a, 0.25)"), 1.0);
        assert!(m("reaching_time(a, 0)").is_nan());
        assert_eq!(m(" final( t ) "), 2.5);
    }

    #[test]
    fn bad_metrics_are_errors() {
        for bad in [
            "final",
            "final(a",
            "final()",
            "final(a, 1)",
            "max_abs_after(a)",
            "max_abs_after(a, x)",
            "reaching_time(a, -1)",
            "mean(a)",
        ] {
            assert!(bad.parse::<Metric>().is_err(), "{bad}");
        }
        let e = "final(b)"
            .parse::<Metric>()
            .unwrap()
            .evaluate(&table())
            .unwrap_err();
        assert!(e.to_string().contains("no column `b`"), "{e}");
        let r = "max_abs_after(a, 1.5)".parse::<Metric>().unwrap();
        assert_eq!(r.to_string().parse::<Metric>().unwrap(), r);
    }
}
