//! Coincidence on the exact clock over a long run: 10⁷ steps of h = 1e-4 with
//! a sensor of period 1e-3 must coincide with every tenth step, to the tick,
//! and the time of step k must be exactly the double nearest k·h as computed
//! in one division.

use nonsmooth::simulation::{EventKind, EventManager, TimeBase};

#[test]
fn ten_million_steps_stay_coincident_with_a_periodic_event() {
    let h = 1e-4;
    let period = 1e-3;
    let tb = TimeBase::for_times(&[("step", h), ("sensor period", period)]).unwrap();
    let h_ticks = tb.period("step", h).unwrap();
    let p_ticks = tb.period("sensor period", period).unwrap();
    let mut m = EventManager::new();
    let step = m
        .add_periodic(EventKind::TimeDiscretisation, 0, h_ticks)
        .unwrap();
    let sensor = m.add_periodic(EventKind::Sensor, 0, p_ticks).unwrap();
    let mut out = Vec::with_capacity(4);
    let steps: i64 = 10_000_000;
    let mut sensor_events = 0;
    for k in 0..=steps {
        let t = m
            .pop_instant(&mut out)
            .expect("periodic sources never run out");
        assert_eq!(t, k * h_ticks, "step {k} is not at its tick");
        assert_eq!(out[0].source, step);
        let with_sensor = out.len() == 2 && out[1].source == sensor;
        assert_eq!(
            with_sensor,
            k % 10 == 0,
            "step {k}: sensor coincidence broken"
        );
        assert_eq!(out.len(), if k % 10 == 0 { 2 } else { 1 });
        sensor_events += with_sensor as i64;
    }
    assert_eq!(sensor_events, steps / 10 + 1);
    // The final instant is exactly 1000 s, with no accumulated rounding.
    assert_eq!(tb.seconds(steps * h_ticks), 1000.0);
    // A float accumulation would have drifted: show the clock does not.
    let mut acc = 0.0f64;
    for _ in 0..steps {
        acc += h;
    }
    assert_ne!(
        acc, 1000.0,
        "float accumulation drifts, which is why the clock counts ticks"
    );
}
