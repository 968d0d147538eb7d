//! When a sensor, observer or controller acts: period, offset and delay.

use super::error::ControlError;

/// The instants of a sampled object: it acts at t₀ + offset + k·period
/// (k ≥ 0); a sensor's measurement reaches its readers `delay` seconds
/// later, a controller's input reaches the plant `delay` seconds later.
/// The delay may exceed the period: values in transit wait in order.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Timing {
    /// Sampling period T > 0, seconds.
    pub period: f64,
    /// First instant after t₀, seconds (≥ 0).
    pub offset: f64,
    /// Delay d ≥ 0, seconds.
    pub delay: f64,
}

impl Timing {
    /// Period T, no offset, no delay.
    pub fn periodic(period: f64) -> Self {
        Timing {
            period,
            offset: 0.0,
            delay: 0.0,
        }
    }

    /// The same with an offset.
    pub fn with_offset(mut self, offset: f64) -> Self {
        self.offset = offset;
        self
    }

    /// The same with a delay.
    pub fn with_delay(mut self, delay: f64) -> Self {
        self.delay = delay;
        self
    }

    /// Checks T > 0 and offset, delay ≥ 0, all finite.
    pub fn validate(&self, object: &str) -> Result<(), ControlError> {
        let bad = |what: &str, value: f64, reason: &str| {
            Err(ControlError::InvalidValue {
                object: object.to_string(),
                what: what.to_string(),
                value,
                reason: reason.to_string(),
            })
        };
        if !(self.period.is_finite() && self.period > 0.0) {
            return bad(
                "period",
                self.period,
                "must be a finite number of seconds > 0",
            );
        }
        if !(self.offset.is_finite() && self.offset >= 0.0) {
            return bad(
                "offset",
                self.offset,
                "must be a finite number of seconds ≥ 0",
            );
        }
        if !(self.delay.is_finite() && self.delay >= 0.0) {
            return bad(
                "delay",
                self.delay,
                "must be a finite number of seconds ≥ 0",
            );
        }
        Ok(())
    }
}
