//! The event manager: every event source — the integration step, sensors,
//! observers, actuators, outputs — is scheduled on the exact clock of
//! [`super::clock`]. The k-th occurrence of a periodic source is at tick
//! offset + k·period (a product, never a running sum), so sources whose
//! instants coincide mathematically coincide exactly.
//!
//! Events at one instant are delivered in a fixed order: by [`EventKind`]
//! (time-discretisation → nonsmooth → sensor → observer → actuator → output),
//! then by registration order of their sources.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::clock::ClockError;

/// Kinds of events, in the order they are processed at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    /// The end of an integration step.
    TimeDiscretisation,
    /// A nonsmooth event (an impact, a switch) located inside a step.
    NonSmooth,
    /// A sensor takes a measurement.
    Sensor,
    /// An observer updates its estimate.
    Observer,
    /// An actuator applies a new input (zero-order hold until the next one).
    Actuator,
    /// Outputs are recorded.
    Output,
}

impl EventKind {
    /// Lowercase name, as written in event logs.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::TimeDiscretisation => "time_discretisation",
            EventKind::NonSmooth => "nonsmooth",
            EventKind::Sensor => "sensor",
            EventKind::Observer => "observer",
            EventKind::Actuator => "actuator",
            EventKind::Output => "output",
        }
    }
}

/// A handle to an event source registered with an [`EventManager`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceId(pub usize);

/// One occurrence of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Its instant, in ticks of the time base.
    pub tick: i64,
    /// Its kind.
    pub kind: EventKind,
    /// Its source.
    pub source: SourceId,
}

#[derive(Debug, Clone)]
struct Source {
    offset: i64,
    period: Option<i64>,
    /// Occurrences delivered so far.
    count: i64,
}

/// Schedules the events of all sources on the exact clock.
#[derive(Debug, Clone, Default)]
pub struct EventManager {
    sources: Vec<Source>,
    queue: BinaryHeap<Reverse<(i64, EventKind, usize)>>,
}

impl EventManager {
    /// An empty manager.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a periodic source: occurrences at offset + k·period ticks, k ≥ 0.
    pub fn add_periodic(
        &mut self,
        kind: EventKind,
        offset: i64,
        period: i64,
    ) -> Result<SourceId, ClockError> {
        if period <= 0 {
            return Err(ClockError::OutOfRange {
                what: "period (ticks)",
                value: period as f64,
                positive: true,
            });
        }
        if offset < 0 {
            return Err(ClockError::OutOfRange {
                what: "offset (ticks)",
                value: offset as f64,
                positive: false,
            });
        }
        Ok(self.push_source(kind, offset, Some(period)))
    }

    /// Registers a one-off event at `tick`.
    pub fn add_once(&mut self, kind: EventKind, tick: i64) -> SourceId {
        self.push_source(kind, tick, None)
    }

    fn push_source(&mut self, kind: EventKind, offset: i64, period: Option<i64>) -> SourceId {
        let id = self.sources.len();
        self.sources.push(Source {
            offset,
            period,
            count: 0,
        });
        self.queue.push(Reverse((offset, kind, id)));
        SourceId(id)
    }

    /// The instant of the next event, if any.
    pub fn next_tick(&self) -> Option<i64> {
        self.queue.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Removes and returns the next event in the documented order, scheduling
    /// the next occurrence of its source.
    pub fn pop(&mut self) -> Option<Event> {
        let Reverse((tick, kind, id)) = self.queue.pop()?;
        let src = &mut self.sources[id];
        src.count += 1;
        if let Some(p) = src.period {
            if let Some(next) = p
                .checked_mul(src.count)
                .and_then(|v| v.checked_add(src.offset))
            {
                self.queue.push(Reverse((next, kind, id)));
            }
        }
        Some(Event {
            tick,
            kind,
            source: SourceId(id),
        })
    }

    /// Moves every event of the next instant into `out` (cleared first), in
    /// the documented order, and returns that instant.
    pub fn pop_instant(&mut self, out: &mut Vec<Event>) -> Option<i64> {
        out.clear();
        let t = self.next_tick()?;
        while self.next_tick() == Some(t) {
            out.extend(self.pop());
        }
        Some(t)
    }
}

/// The schedule of an [`EventManager`] as plain data, to save and restore a
/// simulation's complete state: per source (offset, period, occurrences
/// delivered), and the pending queue as (tick, kind, source) in any order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventSchedule {
    /// (offset, period, count) of each source, in registration order.
    pub sources: Vec<(i64, Option<i64>, i64)>,
    /// Pending occurrences: (tick, kind, source index).
    pub queue: Vec<(i64, EventKind, usize)>,
}

impl EventManager {
    /// The schedule as plain data (see [`EventSchedule`]).
    pub fn schedule(&self) -> EventSchedule {
        let mut queue: Vec<(i64, EventKind, usize)> =
            self.queue.iter().map(|Reverse(e)| *e).collect();
        queue.sort_unstable();
        EventSchedule {
            sources: self
                .sources
                .iter()
                .map(|s| (s.offset, s.period, s.count))
                .collect(),
            queue,
        }
    }

    /// A manager with exactly this schedule. Fails (with a reason) when a
    /// queued event names a source that does not exist or a period is not
    /// positive.
    pub fn from_schedule(schedule: &EventSchedule) -> Result<EventManager, String> {
        let n = schedule.sources.len();
        if let Some(p) = schedule
            .sources
            .iter()
            .find(|s| s.1.is_some_and(|p| p <= 0))
        {
            return Err(format!("event source with period {:?}", p.1));
        }
        if let Some(e) = schedule.queue.iter().find(|e| e.2 >= n) {
            return Err(format!("queued event of source {} (only {n} sources)", e.2));
        }
        Ok(EventManager {
            sources: schedule
                .sources
                .iter()
                .map(|&(offset, period, count)| Source {
                    offset,
                    period,
                    count,
                })
                .collect(),
            queue: schedule.queue.iter().map(|&e| Reverse(e)).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coincident_events_follow_the_documented_order() {
        let mut m = EventManager::new();
        let act = m.add_periodic(EventKind::Actuator, 0, 10).unwrap();
        let sen = m.add_periodic(EventKind::Sensor, 0, 10).unwrap();
        let td = m.add_periodic(EventKind::TimeDiscretisation, 0, 1).unwrap();
        let obs = m.add_periodic(EventKind::Observer, 0, 5).unwrap();
        let mut out = Vec::new();
        assert_eq!(m.pop_instant(&mut out), Some(0));
        let order: Vec<SourceId> = out.iter().map(|e| e.source).collect();
        assert_eq!(order, vec![td, sen, obs, act]);
        assert_eq!(m.pop_instant(&mut out), Some(1));
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn bad_periods_are_refused() {
        let mut m = EventManager::new();
        assert!(m.add_periodic(EventKind::Sensor, 0, 0).is_err());
        assert!(m.add_periodic(EventKind::Sensor, -1, 3).is_err());
    }
}
