//! The simulation strategies a model can be integrated with; each is a
//! [`Simulation`](super::Simulation) (see [`super::driver`]).

use std::fmt;
use std::str::FromStr;

/// Which strategy simulates a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Moreau–Jean / Euler–Moreau time-stepping on a fixed step.
    #[default]
    TimeStepping,
    /// Smooth integration between located nonsmooth events.
    EventDriven,
}

impl Strategy {
    /// `time-stepping` or `event-driven`.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::TimeStepping => "time-stepping",
            Strategy::EventDriven => "event-driven",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "time-stepping" | "time_stepping" => Ok(Strategy::TimeStepping),
            "event-driven" | "event_driven" => Ok(Strategy::EventDriven),
            _ => Err(format!(
                "unknown strategy `{s}` (strategies: time-stepping, event-driven)"
            )),
        }
    }
}
