//! The event manager: every event source — the integration step, sensors,
//! observers, actuators, outputs — is scheduled on the exact clock of
//! [`super::clock`]. The k-th occurrence of a periodic source is at tick
//! offset + k·period (a product, never a running sum), so sources whose
//! instants coincide mathematically coincide exactly.
//!
//! Events at one instant are delivered in a fixed order: by [`EventKind`]
//! (time-discretisation → communication → nonsmooth → sensor → observer → actuator → output),
//! then by registration order of their sources.

use std::cmp::Reverse;
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

/// A pending source of the lane: the tick of its next occurrence, its
/// period (0 for a one-off source), its kind and its index.
#[derive(Debug, Clone, Copy)]
struct LaneEntry {
    next: i64,
    period: i64,
    kind: EventKind,
    id: usize,
}

/// Pending sources scanned in order at each instant (see [`EventManager`]);
/// beyond this many, further sources wait in the binary heap.
const LANE_CAPACITY: usize = 16;

/// Schedules the events of all sources on the exact clock.
///
/// A simulation has few sources (the integration step, the outputs, a few
/// sensors and actuators) and most instants hold only the integration step,
/// so the first 16 sources are kept in a *lane*: a list in
/// delivery order (kind, then registration), each with the tick of its next
/// occurrence. The next instant is the smallest of these ticks (cached),
/// and delivering an instant is one pass over the lane: every source whose
/// next tick is the instant emits its event, in lane order, and moves on to
/// its next occurrence. Sources registered beyond the lane's capacity wait
/// in a binary heap keyed by (tick, kind, source); the events of an instant
/// that come from both are merged into the same order. The state is plain
/// data — the registered sources and the pending tick of each (lane or
/// heap) — so the manager is `Clone`; a source's occurrence count is
/// (pending tick − offset) / period.
#[derive(Debug, Clone, Default)]
pub struct EventManager {
    sources: Vec<Source>,
    /// Pending lane sources, sorted by (kind, source).
    lane: Vec<LaneEntry>,
    /// The smallest next tick of the lane.
    lane_next: Option<i64>,
    /// Pending occurrences of the other sources.
    queue: BinaryHeap<Reverse<(i64, EventKind, usize)>>,
    /// The sources that fire at most instants (see [`EventManager::set_frequent`]).
    frequent: Option<[usize; 2]>,
    /// The current quiet run, when one is known.
    quiet: Option<QuietRun>,
}

/// A run of instants at which only the two frequent sources can be due:
/// their lane positions (in lane order) and the first tick of any other
/// source, in the lane (`lane_until`) and in the lane or the heap
/// (`until`); `i64::MAX` when there is none.
#[derive(Debug, Clone, Copy)]
struct QuietRun {
    first: usize,
    second: usize,
    lane_until: i64,
    until: i64,
}

/// An instant delivered by [`EventManager::pop_quiet_instant`]: its tick
/// and the number of time-discretisation events among its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueInstant {
    /// The instant, in ticks.
    pub tick: i64,
    /// How many of its events are time-discretisation events.
    pub steps: usize,
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
        self.quiet = None;
        self.sources.push(Source { offset, period });
        if self.lane.len() < LANE_CAPACITY {
            // A new source has the largest id: it goes after every source of
            // its kind or an earlier one.
            let at = self.lane.partition_point(|e| e.kind <= kind);
            self.lane.insert(
                at,
                LaneEntry {
                    next: offset,
                    period: period.unwrap_or(0),
                    kind,
                    id,
                },
            );
            self.lane_next = Some(self.lane_next.map_or(offset, |t| t.min(offset)));
        } else {
            self.queue.push(Reverse((offset, kind, id)));
        }
        SourceId(id)
    }

    /// The instant of the next event, if any.
    #[inline]
    pub fn next_tick(&self) -> Option<i64> {
        match (self.lane_next, self.queue.peek()) {
            (Some(a), Some(Reverse((b, _, _)))) => Some(a.min(*b)),
            (Some(a), None) => Some(a),
            (None, b) => b.map(|Reverse((t, _, _))| *t),
        }
    }

    /// The tick of the next occurrence of a source, `None` once it has no
    /// further occurrence (or for an unknown source).
    pub fn pending_tick(&self, id: SourceId) -> Option<i64> {
        match self.lane.iter().find(|e| e.id == id.0) {
            Some(e) => Some(e.next),
            None => self
                .queue
                .iter()
                .find(|Reverse((_, _, s))| *s == id.0)
                .map(|Reverse((t, _, _))| *t),
        }
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

    fn period(&self, id: usize) -> i64 {
        self.sources[id].period.unwrap_or(0)
    }

    /// Removes and returns the next event in the documented order, scheduling
    /// the next occurrence of its source.
    pub fn pop(&mut self) -> Option<Event> {
        self.quiet = None;
        let t = self.next_tick()?;
        // The first lane source due at t, and the heap's top if due at t:
        // the event is the smaller in (kind, source) order.
        let lane_pos = self.lane.iter().position(|e| e.next == t);
        let from_heap = match (lane_pos, self.queue.peek()) {
            (_, Some(Reverse((ht, hk, hid)))) if *ht == t => match lane_pos {
                Some(k) => (*hk, *hid) < (self.lane[k].kind, self.lane[k].id),
                None => true,
            },
            _ => false,
        };
        let (kind, id) = if from_heap {
            let Reverse((_, kind, id)) = self.queue.pop().expect("peeked");
            if let Some(next) = following(t, self.period(id)) {
                self.queue.push(Reverse((next, kind, id)));
            }
            (kind, id)
        } else {
            let k = lane_pos.expect("an event is due at t");
            let LaneEntry {
                period, kind, id, ..
            } = self.lane[k];
            match following(t, period) {
                Some(next) => self.lane[k].next = next,
                None => {
                    self.lane.remove(k);
                }
            }
            self.lane_next = self.lane.iter().map(|e| e.next).min();
            (kind, id)
        };
        Some(Event {
            tick: t,
            kind,
            source: SourceId(id),
        })
    }

    /// Moves every event of the next instant into `out` (cleared first), in
    /// the documented order, and returns that instant.
    #[inline]
    pub fn pop_instant(&mut self, out: &mut Vec<Event>) -> Option<i64> {
        if let Some(t) = self.pop_quiet_until(i64::MAX, out) {
            return Some(t);
        }
        out.clear();
        let t = self.next_tick()?;
        let mut found = None;
        if self.lane_next == Some(t) {
            found = self.deliver_lane(t, out);
        }
        if !self.queue.is_empty() {
            self.deliver_heap(t, out);
        }
        self.quiet = match found {
            Some(parts) => self.quiet_from(parts),
            None => self.quiet_run(),
        };
        Some(t)
    }

    /// The quiet run from what [`EventManager::deliver_lane`] found on its
    /// pass: as [`EventManager::quiet_run`], without a second pass.
    #[inline(always)]
    fn quiet_from(&self, (pa, pb, lane_until): (usize, usize, i64)) -> Option<QuietRun> {
        if self.lane[pa].period == 0 || self.lane[pb].period == 0 {
            return None;
        }
        let heap_next = self.queue.peek().map_or(i64::MAX, |Reverse((t, _, _))| *t);
        Some(QuietRun {
            first: pa.min(pb),
            second: pa.max(pb),
            lane_until,
            until: lane_until.min(heap_next),
        })
    }

    /// Names the two sources that fire at most instants (a simulation's
    /// integration step and its outputs). While no other source is due,
    /// [`EventManager::pop_instant`] delivers their instants without a pass
    /// over the lane: the same events in the same order, in constant time.
    pub fn set_frequent(&mut self, a: SourceId, b: SourceId) {
        self.frequent = (a != b).then_some([a.0, b.0]);
        self.quiet = self.quiet_run();
    }

    /// The quiet run from the current schedule: `None` unless both
    /// frequent sources are periodic lane sources.
    fn quiet_run(&self) -> Option<QuietRun> {
        let [a, b] = self.frequent?;
        let pa = self.lane.iter().position(|e| e.id == a)?;
        let pb = self.lane.iter().position(|e| e.id == b)?;
        if self.lane[pa].period == 0 || self.lane[pb].period == 0 {
            return None;
        }
        let lane_until = self
            .lane
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != pa && k != pb)
            .map(|(_, e)| e.next)
            .min()
            .unwrap_or(i64::MAX);
        let heap_next = self.queue.peek().map_or(i64::MAX, |Reverse((t, _, _))| *t);
        Some(QuietRun {
            first: pa.min(pb),
            second: pa.max(pb),
            lane_until,
            until: lane_until.min(heap_next),
        })
    }

    /// As [`EventManager::pop_instant`] when the next instant is one of
    /// the frequent sources only (a quiet instant) and not after `limit`;
    /// otherwise `None`, and nothing changes.
    #[inline(always)]
    pub fn pop_quiet_until(&mut self, limit: i64, out: &mut Vec<Event>) -> Option<i64> {
        self.pop_quiet_instant(limit, out).map(|due| due.tick)
    }

    /// As [`EventManager::pop_quiet_until`], with the number of
    /// time-discretisation events among those delivered (the integration
    /// steps that end at the instant), known from the two frequent sources
    /// without a pass over the events.
    #[inline(always)]
    pub fn pop_quiet_instant(&mut self, limit: i64, out: &mut Vec<Event>) -> Option<DueInstant> {
        let run = self.quiet?;
        self.pop_quiet(run, limit, out)
    }

    /// The next instant when it falls in the quiet run: the due frequent
    /// sources (one or both, in lane order) emit their events and move on
    /// by their periods. `None`, with nothing changed, otherwise (another
    /// source is due, the instant is after `limit`, or a next occurrence
    /// would pass the range of ticks).
    #[inline(always)]
    fn pop_quiet(&mut self, run: QuietRun, limit: i64, out: &mut Vec<Event>) -> Option<DueInstant> {
        let (e1, e2) = (self.lane[run.first], self.lane[run.second]);
        let t = e1.next.min(e2.next);
        if t >= run.until || t > limit {
            return None;
        }
        let (due1, due2) = (e1.next == t, e2.next == t);
        let n1 = if due1 {
            t.checked_add(e1.period)?
        } else {
            e1.next
        };
        let n2 = if due2 {
            t.checked_add(e2.period)?
        } else {
            e2.next
        };
        out.clear();
        if due1 {
            out.push(Event {
                tick: t,
                kind: e1.kind,
                source: SourceId(e1.id),
            });
        }
        if due2 {
            out.push(Event {
                tick: t,
                kind: e2.kind,
                source: SourceId(e2.id),
            });
        }
        self.lane[run.first].next = n1;
        self.lane[run.second].next = n2;
        self.lane_next = Some(n1.min(n2).min(run.lane_until));
        let td =
            |due: bool, kind: EventKind| usize::from(due && kind == EventKind::TimeDiscretisation);
        Some(DueInstant {
            tick: t,
            steps: td(due1, e1.kind) + td(due2, e2.kind),
        })
    }

    /// One pass over the lane: the sources due at t (the lane is in
    /// delivery order) emit their events and move on; the lane's next
    /// instant is found on the way. Returns, when both frequent sources are
    /// in the lane and none left it, their positions and the smallest next
    /// tick of the other lane sources (the parts of the quiet run).
    #[inline(always)]
    fn deliver_lane(&mut self, t: i64, out: &mut Vec<Event>) -> Option<(usize, usize, i64)> {
        let mut next_min = i64::MAX;
        let mut exhausted = false;
        let [fa, fb] = self.frequent.unwrap_or([usize::MAX; 2]);
        let (mut pa, mut pb, mut others) = (usize::MAX, usize::MAX, i64::MAX);
        for (k, e) in self.lane.iter_mut().enumerate() {
            if e.next == t {
                out.push(Event {
                    tick: t,
                    kind: e.kind,
                    source: SourceId(e.id),
                });
                match following(t, e.period) {
                    Some(n) => e.next = n,
                    None => exhausted = true,
                }
            }
            next_min = next_min.min(e.next);
            if e.id == fa {
                pa = k;
            } else if e.id == fb {
                pb = k;
            } else {
                others = others.min(e.next);
            }
        }
        if exhausted {
            // Drop the sources that have no further occurrence (their entry
            // still holds t).
            self.lane
                .retain(|e| e.next != t || following(t, e.period).is_some());
            next_min = self.lane.iter().map(|e| e.next).min().unwrap_or(i64::MAX);
        }
        self.lane_next = (!self.lane.is_empty()).then_some(next_min);
        (!exhausted && pa != usize::MAX && pb != usize::MAX).then_some((pa, pb, others))
    }

    /// The heap's events at t, merged with the lane's already in `out`.
    fn deliver_heap(&mut self, t: i64, out: &mut Vec<Event>) {
        let from_lane = out.len();
        while let Some(Reverse((ht, kind, id))) = self.queue.peek().copied() {
            if ht != t {
                break;
            }
            self.queue.pop();
            if let Some(next) = following(t, self.period(id)) {
                self.queue.push(Reverse((next, kind, id)));
            }
            out.push(Event {
                tick: t,
                kind,
                source: SourceId(id),
            });
        }
        if from_lane > 0 && out.len() > from_lane {
            out.sort_unstable_by_key(|e| (e.kind, e.source));
        }
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
        let mut queue: Vec<(i64, EventKind, usize)> = self
            .lane
            .iter()
            .map(|e| (e.next, e.kind, e.id))
            .chain(self.queue.iter().map(|Reverse(e)| *e))
            .collect();
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
        let mut m = EventManager {
            sources: schedule
                .sources
                .iter()
                .map(|&(offset, period, _)| Source { offset, period })
                .collect(),
            ..EventManager::default()
        };
        for &(next, kind, id) in &pending {
            if m.lane.len() < LANE_CAPACITY {
                m.lane.push(LaneEntry {
                    next,
                    period: m.period(id),
                    kind,
                    id,
                });
            } else {
                m.queue.push(Reverse((next, kind, id)));
            }
        }
        m.lane.sort_unstable_by_key(|e| (e.kind, e.id));
        m.lane_next = m.lane.iter().map(|e| e.next).min();
        Ok(m)
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
    fn lane_and_heap_deliver_the_documented_order() {
        // More sources than the lane holds, of every kind, periodic and
        // one-off, registered in no particular order of kind.
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

    /// The quiet path (two frequent sources delivered without a pass over
    /// the lane) gives the instants of the plain pass, event for event,
    /// whatever the other sources (lane or heap, periodic or one-off,
    /// registered midway) and the pending ticks stay those of the plain
    /// manager at every instant.
    #[test]
    fn quiet_instants_equal_the_plain_pass() {
        let kinds = [
            EventKind::Sensor,
            EventKind::Actuator,
            EventKind::Observer,
            EventKind::Output,
            EventKind::TimeDiscretisation,
        ];
        for others in [0usize, 1, 3, 20] {
            for (step, out_every, out_offset) in [(1, 1, 0), (2, 6, 0), (3, 3, 3), (5, 10, 5)] {
                let build = |frequent: bool| {
                    let mut m = EventManager::new();
                    let a = m
                        .add_periodic(EventKind::TimeDiscretisation, step, step)
                        .unwrap();
                    let b = m
                        .add_periodic(EventKind::Output, out_offset, out_every)
                        .unwrap();
                    for i in 0..others {
                        let kind = kinds[i % kinds.len()];
                        if i % 4 == 3 {
                            m.add_once(kind, 7 * i as i64 + 4);
                        } else {
                            m.add_periodic(kind, 3 * i as i64, 10 + 7 * i as i64)
                                .unwrap();
                        }
                    }
                    if frequent {
                        m.set_frequent(a, b);
                    }
                    m
                };
                let (mut plain, mut quiet) = (build(false), build(true));
                let (mut out_p, mut out_q) = (Vec::new(), Vec::new());
                let mut quiet_instants = 0;
                for k in 0..400 {
                    if k == 150 {
                        // A source registered midway ends the quiet run.
                        for m in [&mut plain, &mut quiet] {
                            let t = m.next_tick().unwrap();
                            m.add_periodic(EventKind::Sensor, t + 1, 13).unwrap();
                        }
                    }
                    if let Some(due) = quiet.pop_quiet_instant(i64::MAX, &mut out_q) {
                        quiet_instants += 1;
                        let steps = out_q
                            .iter()
                            .filter(|e| e.kind == EventKind::TimeDiscretisation)
                            .count();
                        assert_eq!(due.steps, steps, "instant {k}");
                        assert!(out_q.iter().all(|e| e.tick == due.tick), "instant {k}");
                    } else {
                        quiet.pop_instant(&mut out_q).unwrap();
                    }
                    plain.pop_instant(&mut out_p).unwrap();
                    assert_eq!(out_q, out_p, "instant {k}");
                    assert_eq!(quiet.next_tick(), plain.next_tick(), "instant {k}");
                    assert_eq!(quiet.schedule(), plain.schedule(), "instant {k}");
                }
                assert!(quiet_instants > 0, "the quiet path was taken");
                // `limit` holds the quiet path back, changing nothing.
                let before = quiet.schedule();
                let t = quiet.next_tick().unwrap();
                assert_eq!(quiet.pop_quiet_until(t - 1, &mut out_q), None);
                assert_eq!(quiet.schedule(), before);
            }
        }
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
