//! The event manager: every event source — the integration step, sensors,
//! observers, actuators, outputs — is scheduled on the exact clock of
//! [`super::clock`]. The k-th occurrence of a periodic source is at tick
//! offset + k·period (a product, never a running sum), so sources whose
//! instants coincide mathematically coincide exactly.
//!
//! Events at one instant are delivered in a fixed order: by [`EventKind`]
//! (time-discretisation → communication → nonsmooth → sensor → observer → actuator → output),
//! then by registration order of their sources.

use std::cmp::Ordering;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;

use super::clock::{ClockError, TimeBase};
use super::error::SimulationError;

/// Kinds of events. They are processed at one instant in the order of
/// [`EventKind::rank`] (time-discretisation → communication → nonsmooth →
/// sensor → observer → actuator → output), which is what `Ord` compares.
///
/// The declaration order is the serialised numbering of saved states
/// (postcard writes the variant index): `Communication`, added with the
/// co-simulation crate, is declared last so that states saved by earlier
/// builds keep their numbering. New kinds go at the end too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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
    /// An FMU's communication point (co-simulation, crate
    /// nonsmooth-cosim): its step ending here is over and its outputs at
    /// this instant are published. Processed right after
    /// `TimeDiscretisation` (see [`EventKind::rank`]).
    Communication,
}

impl PartialOrd for EventKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for EventKind {
    /// Processing order at one instant: by [`EventKind::rank`].
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl EventKind {
    /// Position in the processing order at one instant (0 first), apart
    /// from the declaration order, which is the serialised numbering.
    pub const fn rank(self) -> u8 {
        match self {
            EventKind::TimeDiscretisation => 0,
            EventKind::Communication => 1,
            EventKind::NonSmooth => 2,
            EventKind::Sensor => 3,
            EventKind::Observer => 4,
            EventKind::Actuator => 5,
            EventKind::Output => 6,
        }
    }

    /// Lowercase name, as written in event logs.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::TimeDiscretisation => "time_discretisation",
            EventKind::Communication => "communication",
            EventKind::NonSmooth => "nonsmooth",
            EventKind::Sensor => "sensor",
            EventKind::Observer => "observer",
            EventKind::Actuator => "actuator",
            EventKind::Output => "output",
        }
    }
}

/// A handle to an event source registered with an [`EventManager`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct SourceId(pub usize);

/// One occurrence of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Event {
    /// Its instant, in ticks of the time base.
    pub tick: i64,
    /// Its kind.
    pub kind: EventKind,
    /// Its source.
    pub source: SourceId,
}

/// A registered source: its first tick and its period (`None` for a
/// one-off event).
#[derive(Debug, Clone)]
struct Source {
    offset: i64,
    period: Option<i64>,
}

/// The occurrence after one at `tick` of a source of period `period` (0
/// for a one-off source): `tick + period`, or `None` when there is none (a
/// one-off source, or a tick beyond i64). Ticks are integers, so the k-th
/// occurrence is exactly offset + k·period, and it is missing exactly when
/// that product overflows.
#[inline]
fn following(tick: i64, period: i64) -> Option<i64> {
    if period > 0 {
        tick.checked_add(period)
    } else {
        None
    }
}

/// A pending occurrence: its tick, its kind (with the kind's rank, which
/// orders it) and its source. Ordered so that the greatest is the earliest
/// in (tick, rank, source), the next event of the documented order at the
/// top of [`BinaryHeap`] (a max-heap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pending {
    tick: i64,
    rank: u8,
    id: usize,
    kind: EventKind,
}

impl Pending {
    fn new(tick: i64, kind: EventKind, id: usize) -> Self {
        Pending {
            tick,
            rank: kind.rank(),
            id,
            kind,
        }
    }
}

impl Ord for Pending {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.tick, other.rank, other.id).cmp(&(self.tick, self.rank, self.id))
    }
}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Schedules the events of all sources on the exact clock.
///
/// The pending occurrence of every source waits in a binary heap keyed by
/// (tick, kind, source): the top is the next event in the documented order,
/// and an instant is every event at the top's tick. Delivering an event
/// pushes its source's next occurrence (always later), so an instant is
/// delivered by popping until the tick changes. The state is plain data —
/// the registered sources and the pending tick of each — so the manager is
/// `Clone`; a source's occurrence count is (pending tick − offset) / period.
#[derive(Debug, Clone, Default)]
pub struct EventManager {
    sources: Vec<Source>,
    /// The pending occurrence of each source that has one.
    queue: BinaryHeap<Pending>,
}

/// The instants t₀ + k·h of a time-stepping clock, in ticks of its
/// [`TimeBase`]: where such a clock may place events.
#[derive(Debug, Clone, Copy)]
pub struct TickGrid {
    /// The base the ticks count in.
    pub base: TimeBase,
    /// t₀, in ticks.
    pub t0_tick: i64,
    /// h, in ticks (> 0).
    pub step_ticks: i64,
    /// h, in seconds (as the user gave it; for error messages).
    pub step: f64,
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

    /// Registers a source of a time-stepping clock: occurrences at
    /// `offset + k·period` ticks (k ≥ 0; once when `period` is `None`), each
    /// of which must be an instant t₀ + j·h of `grid` and not before `now`
    /// (ticks). Otherwise [`SimulationError::OffGrid`] names the first
    /// instant or the period that is off the grid, and
    /// [`SimulationError::BadArgument`] a first instant in the past; nothing
    /// is registered then.
    pub fn add_on_grid(
        &mut self,
        grid: &TickGrid,
        now: i64,
        kind: EventKind,
        offset: i64,
        period: Option<i64>,
        name: &str,
    ) -> Result<SourceId, SimulationError> {
        let secs = |ticks: i64| grid.base.seconds(ticks);
        let off_grid = |what: String, value: f64| SimulationError::OffGrid {
            what,
            value,
            step: grid.step,
        };
        if (offset - grid.t0_tick) % grid.step_ticks != 0 {
            return Err(off_grid(
                format!("event '{name}' first instant"),
                secs(offset),
            ));
        }
        if offset < now {
            return Err(SimulationError::BadArgument(format!(
                "event '{name}': first instant {} s is before the current time {} s",
                secs(offset),
                secs(now)
            )));
        }
        match period {
            Some(p) if p % grid.step_ticks != 0 => {
                Err(off_grid(format!("event '{name}' period"), secs(p)))
            }
            Some(p) => Ok(self.add_periodic(kind, offset, p)?),
            None => Ok(self.add_once(kind, offset)),
        }
    }

    /// Registers a one-off event at `tick`.
    pub fn add_once(&mut self, kind: EventKind, tick: i64) -> SourceId {
        self.push_source(kind, tick, None)
    }

    fn push_source(&mut self, kind: EventKind, offset: i64, period: Option<i64>) -> SourceId {
        let id = self.sources.len();
        self.sources.push(Source { offset, period });
        self.queue.push(Pending::new(offset, kind, id));
        SourceId(id)
    }

    /// The instant of the next event, if any.
    #[inline]
    pub fn next_tick(&self) -> Option<i64> {
        self.queue.peek().map(|p| p.tick)
    }

    /// The tick of the next occurrence of a source, `None` once it has no
    /// further occurrence (or for an unknown source).
    pub fn pending_tick(&self, id: SourceId) -> Option<i64> {
        self.queue.iter().find(|p| p.id == id.0).map(|p| p.tick)
    }

    /// Occurrences of a source delivered so far: (pending tick − offset) /
    /// period, 1 for a one-off source already delivered (`None` for an
    /// unknown source or a periodic one past the range of ticks).
    pub fn delivered(&self, id: SourceId) -> Option<i64> {
        let src = self.sources.get(id.0)?;
        match (self.pending_tick(id), src.period) {
            (Some(t), Some(p)) => Some((t - src.offset) / p),
            (Some(_), None) => Some(0),
            (None, None) => Some(1),
            (None, Some(_)) => None,
        }
    }

    /// Removes and returns the next event in the documented order, scheduling
    /// the next occurrence of its source.
    pub fn pop(&mut self) -> Option<Event> {
        let mut top = self.queue.peek_mut()?;
        let Pending { tick, id, kind, .. } = *top;
        match following(tick, self.sources[id].period.unwrap_or(0)) {
            // The top moves on to its next occurrence, sifted down once.
            Some(next) => top.tick = next,
            None => {
                PeekMut::pop(top);
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
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct EventSchedule {
    /// (offset, period, count) of each source, in registration order.
    pub sources: Vec<(i64, Option<i64>, i64)>,
    /// Pending occurrences: (tick, kind, source index).
    pub queue: Vec<(i64, EventKind, usize)>,
}

impl EventManager {
    /// The schedule as plain data (see [`EventSchedule`]); a source's count
    /// is the number of its occurrences delivered so far.
    pub fn schedule(&self) -> EventSchedule {
        let mut queue: Vec<(i64, EventKind, usize)> =
            self.queue.iter().map(|p| (p.tick, p.kind, p.id)).collect();
        queue.sort_unstable();
        EventSchedule {
            sources: self
                .sources
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let count = self.delivered(SourceId(k)).unwrap_or(i64::MAX);
                    (s.offset, s.period, count)
                })
                .collect(),
            queue,
        }
    }

    /// A manager with exactly this schedule. Fails (with a reason) when a
    /// queued event names a source that does not exist or is queued twice,
    /// or a period is not positive. The pending occurrences are the state;
    /// the counts are not needed to rebuild it.
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
        let mut pending = schedule.queue.clone();
        pending.sort_unstable_by_key(|e| e.2);
        if pending.windows(2).any(|w| w[0].2 == w[1].2) {
            return Err("a source is queued twice".into());
        }
        Ok(EventManager {
            sources: schedule
                .sources
                .iter()
                .map(|&(offset, period, _)| Source { offset, period })
                .collect(),
            queue: pending
                .into_iter()
                .map(|(tick, kind, id)| Pending::new(tick, kind, id))
                .collect(),
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

    /// Every event up to `end` by brute force: (tick, kind, source) sorted.
    fn reference(
        specs: &[(EventKind, i64, Option<i64>)],
        end: i64,
    ) -> Vec<(i64, EventKind, usize)> {
        let mut all = Vec::new();
        for (id, &(kind, offset, period)) in specs.iter().enumerate() {
            match period {
                None => all.push((offset, kind, id)),
                Some(p) => {
                    let mut k = 0;
                    while offset + k * p <= end {
                        all.push((offset + k * p, kind, id));
                        k += 1;
                    }
                }
            }
        }
        all.retain(|e| e.0 <= end);
        all.sort_unstable();
        all
    }

    #[test]
    fn instants_and_single_events_deliver_the_documented_order() {
        // Many sources of every kind, periodic and one-off, registered in no particular order of kind.
        let kinds = [
            EventKind::Output,
            EventKind::Sensor,
            EventKind::TimeDiscretisation,
            EventKind::Actuator,
            EventKind::Observer,
            EventKind::NonSmooth,
        ];
        let mut specs = Vec::new();
        for i in 0..40i64 {
            let kind = kinds[(i * 7 % 6) as usize];
            let period = if i % 5 == 3 {
                None
            } else {
                Some(1 + i % 4 * 3)
            };
            specs.push((kind, i % 7 * 2, period));
        }
        let end = 60;
        let expected = reference(&specs, end);
        let build = || {
            let mut m = EventManager::new();
            for &(kind, offset, period) in &specs {
                match period {
                    Some(p) => m.add_periodic(kind, offset, p).unwrap(),
                    None => m.add_once(kind, offset),
                };
            }
            m
        };
        // Instant by instant.
        let mut m = build();
        let mut got = Vec::new();
        let mut out = Vec::new();
        while m.next_tick().is_some_and(|t| t <= end) {
            let t = m.pop_instant(&mut out).unwrap();
            assert!(out.iter().all(|e| e.tick == t));
            got.extend(out.iter().map(|e| (e.tick, e.kind, e.source.0)));
        }
        assert_eq!(got, expected);
        for (id, &(_, offset, period)) in specs.iter().enumerate() {
            let delivered = got.iter().filter(|e| e.2 == id).count() as i64;
            assert_eq!(m.delivered(SourceId(id)), Some(delivered), "source {id}");
            let pending = period.map(|p| offset + delivered * p);
            assert_eq!(m.pending_tick(SourceId(id)), pending, "source {id}");
        }
        // Event by event, from a clone taken midway.
        let mut m = build();
        let mut got = Vec::new();
        while m.next_tick().is_some_and(|t| t <= end / 2) {
            let e = m.pop().unwrap();
            got.push((e.tick, e.kind, e.source.0));
        }
        let mut m = m.clone();
        while m.next_tick().is_some_and(|t| t <= end) {
            let e = m.pop().unwrap();
            got.push((e.tick, e.kind, e.source.0));
        }
        assert_eq!(got, expected);
    }

    #[test]
    fn one_off_sources_run_out() {
        let mut m = EventManager::new();
        m.add_once(EventKind::Sensor, 3);
        let mut out = Vec::new();
        assert_eq!(m.pop_instant(&mut out), Some(3));
        assert_eq!(out.len(), 1);
        assert_eq!(m.next_tick(), None);
        assert_eq!(m.pop_instant(&mut out), None);
        assert!(out.is_empty());
        assert_eq!(m.pop(), None);
    }

    #[test]
    fn bad_periods_are_refused() {
        let mut m = EventManager::new();
        assert!(m.add_periodic(EventKind::Sensor, 0, 0).is_err());
        assert!(m.add_periodic(EventKind::Sensor, -1, 3).is_err());
    }

    #[test]
    fn serialised_numbering_is_the_declaration_order_of_earlier_builds() {
        // Before the co-simulation crate: TimeDiscretisation=0 … Output=5.
        let earlier = [
            EventKind::TimeDiscretisation,
            EventKind::NonSmooth,
            EventKind::Sensor,
            EventKind::Observer,
            EventKind::Actuator,
            EventKind::Output,
        ];
        for (index, kind) in earlier.iter().enumerate() {
            assert_eq!(postcard::to_stdvec(kind).unwrap(), vec![index as u8]);
        }
        assert_eq!(
            postcard::to_stdvec(&EventKind::Communication).unwrap(),
            vec![6]
        );
        // Processing order is unchanged: communication right after the step.
        assert!(EventKind::TimeDiscretisation < EventKind::Communication);
        assert!(EventKind::Communication < EventKind::NonSmooth);
        assert!(EventKind::Actuator < EventKind::Output);
    }
}
