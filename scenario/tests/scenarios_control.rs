//! Control sections of scenario files: sensors, observers and controllers
//! built from a catalog of laws, their records, word parameters, and
//! located errors.

use std::sync::Arc;

use nonsmooth::control::*;
use nonsmooth::modelling::SystemId;
use nonsmooth::simulation::StepOutcome;
use nonsmooth_scenario::{Scenario, ScenarioError};

/// u = −k·y (k a matrix), or u = −k·y with k from a word `sign`.
struct Gain {
    k: nalgebra::DMatrix<f64>,
    negative: bool,
    last: Vec<f64>,
}

impl Controller for Gain {
    fn law(&self) -> &'static str {
        "gain"
    }
    fn initialize(&mut self, s: &ControllerSetup) -> Result<(), ControlError> {
        if self.k.nrows() != s.input_dim || self.k.ncols() != s.measurement_dim {
            return Err(ControlError::Dimension {
                object: s.name.clone(),
                what: "k",
                got: format!("{}×{}", self.k.nrows(), self.k.ncols()),
                expected: format!("{}×{}", s.input_dim, s.measurement_dim),
            });
        }
        self.last = vec![0.0; s.measurement_dim];
        Ok(())
    }
    fn compute(&mut self, _t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        let sign = if self.negative { -1.0 } else { 1.0 };
        for (i, ui) in u.iter_mut().enumerate() {
            *ui = sign * (0..y.len()).map(|j| self.k[(i, j)] * y[j]).sum::<f64>();
        }
        self.last.copy_from_slice(y);
        Ok(())
    }
    fn signal_names(&self) -> &[&'static str] {
        &["seen"]
    }
    fn signal(&self, name: &str) -> Option<&[f64]> {
        (name == "seen").then_some(self.last.as_slice())
    }
    fn save_state(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(&self.last);
    }
    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new("gain", data);
        let last = r.take(self.last.len())?;
        self.last.copy_from_slice(last);
        Ok(r.consumed())
    }
}

/// x̂ = the measurement itself (C = I).
struct Copy {
    x: Vec<f64>,
}

impl Observer for Copy {
    fn law(&self) -> &'static str {
        "copy"
    }
    fn initialize(&mut self, s: &ObserverSetup) -> Result<(), ControlError> {
        self.x = s.x0.clone();
        Ok(())
    }
    fn update(&mut self, _t: f64, y: &[f64], _g: &[f64]) -> Result<(), ControlError> {
        self.x.copy_from_slice(y);
        Ok(())
    }
    fn estimate(&self) -> &[f64] {
        &self.x
    }
    fn save_state(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(&self.x);
    }
    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new("copy", data);
        let x = r.take(self.x.len())?;
        self.x.copy_from_slice(x);
        Ok(r.consumed())
    }
}

struct TestLaws;

impl LawCatalog for TestLaws {
    fn controller_laws(&self) -> Vec<&'static str> {
        vec!["gain", "negative_gain"]
    }
    fn observer_laws(&self) -> Vec<&'static str> {
        vec!["copy"]
    }
    fn controller(&self, law: &str, p: &LawParams) -> Result<Box<dyn Controller>, ControlError> {
        let k = p.require_matrix("k", "the gain matrix")?;
        Ok(Box::new(Gain {
            k,
            negative: law == "negative_gain",
            last: Vec::new(),
        }))
    }
    fn observer(&self, _law: &str, _p: &LawParams) -> Result<Box<dyn Observer>, ControlError> {
        Ok(Box::new(Copy { x: Vec::new() }))
    }
}

const LOOP: &str = r#"
name = "loop"
[parameters]
law = "negative_gain"
gain = 2
period = 0.1
delay = 0
[simulation]
t_end = 1
step = 0.01
first_order_scheme = "zero_order_hold"
[[systems]]
name = "plant"
type = "first_order_linear"
x0 = [1]
A = [[0]]
[[sensors]]
name = "sensor"
system = "plant"
C = [[1]]
period = "period"
[[observers]]
name = "observer"
law = "copy"
sensor = "sensor"
period = "period"
x0 = [0.5]
[[controllers]]
name = "controller"
law = "law"
input = "observer"
system = "plant"
B = [[1]]
period = "period"
delay = "delay"
[controllers.params]
k = [["gain"]]
[output]
record = ["plant.x", "sensor.y", "observer.xhat", "controller.*"]
"#;

#[allow(clippy::result_large_err)]
fn build(text: &str) -> Result<nonsmooth_scenario::BuiltScenario, ScenarioError> {
    Scenario::from_str(text, "loop.toml")
        .unwrap()
        .build_with(Arc::new(TestLaws))
}

#[test]
fn a_scenario_loop_records_its_objects_and_matches_the_sampled_recursion() {
    let built = build(LOOP).unwrap();
    assert_eq!(
        built.header(),
        [
            "t",
            "plant.x[0]",
            "sensor.y[0]",
            "observer.xhat[0]",
            "controller.u[0]",
            "controller.seen[0]"
        ]
    );
    let rows = rows_of(&built);
    // ẋ = u, u_k = −2 x_k held over T = 0.1: x_{k+1} = (1 − 0.2) x_k.
    for (k, r) in rows.iter().enumerate().step_by(10) {
        let expect = 0.8f64.powi((k / 10) as i32);
        assert!(
            (r[1] - expect).abs() < 1e-12,
            "t = {}: {} vs {expect}",
            r[0],
            r[1]
        );
        assert_eq!(r[2], r[1], "the sensor reads x at its instants");
        assert_eq!(r[3], r[1], "the observer copies the measurement");
        assert_eq!(r[4], -2.0 * r[1]);
        assert_eq!(r[5], r[1]);
    }
}

#[test]
fn word_parameters_choose_the_law_and_can_be_overridden() {
    let run_end = |s: &Scenario| {
        let built = s.build_with(Arc::new(TestLaws)).unwrap();
        let mut cl = built.control_loop().unwrap();
        cl.run(|_| {}).unwrap();
        cl.plant().q(built.model.system_id("plant").unwrap())[0]
    };
    let mut s = Scenario::from_str(LOOP, "loop.toml").unwrap();
    let stable = run_end(&s);
    assert!((stable - 0.8f64.powi(10)).abs() < 1e-12);
    s.set_parameter("law", "gain").unwrap();
    let unstable = run_end(&s);
    assert!((unstable - 1.2f64.powi(10)).abs() < 1e-12);
}

fn assert_error(text: &str, line: usize, part: &str) {
    match build(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains(part), "`{part}` not in: {msg}");
            assert_eq!(e.line(), Some(line), "{msg}");
        }
    }
}

/// Every row of a run of the scenario's loop.
fn rows_of(built: &nonsmooth_scenario::BuiltScenario) -> Vec<Vec<f64>> {
    let mut cl = built.control_loop().unwrap();
    let mut row = vec![0.0; built.header().len()];
    let mut rows = Vec::new();
    while let StepOutcome::Advanced { .. } = cl.step().unwrap() {
        built.row(&cl, &mut row);
        rows.push(row.clone());
    }
    rows
}

/// As `assert_error`, at the first line of `text` holding `needle`.
fn assert_error_at(text: &str, needle: &str, part: &str) {
    let line = text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    assert_error(text, line, part);
}

#[test]
fn control_sections_report_located_errors() {
    let line_of = |needle: &str| LOOP.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let ctl = line_of("[[controllers]]");
    assert_error(
        &LOOP.replace("law = \"law\"", "law = \"pid\""),
        ctl,
        "unknown controller law `pid`",
    );
    assert_error(
        &LOOP.replace("k = [[\"gain\"]]", "k = [[\"gain\"]]\nkp = 3"),
        ctl,
        "does not use `kp`",
    );
    assert_error(
        &LOOP.replace("k = [[\"gain\"]]", "k = [[1, 2]]"),
        ctl,
        "k has size 1×2",
    );
    assert_error(
        &LOOP.replace("input = \"observer\"", "input = \"camera\""),
        line_of("input = \"observer\""),
        "no sensor or observer is named `camera`",
    );
    assert_error(&LOOP.replace("delay = 0\n", "delay = -0.1\n"), ctl, "delay");
    assert_error(
        &LOOP.replace("gain = 2", "gain = \"law + 1\""),
        line_of("gain = 2"),
        "is the word `negative_gain`",
    );
    // The scenario without laws says where laws come from.
    let err = Scenario::from_str(LOOP, "loop.toml")
        .unwrap()
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("nonsmooth-controllers"), "{err}");
}

#[test]
fn a_sensor_fed_from_an_fmi_input_reads_the_held_value_at_its_instants() {
    let text = format!(
        "{LOOP}\n[fmi]\ninputs = [{{ name = \"measured\", target = \"sensor.y[0]\", start = 3 }}]\n"
    );
    let built = build(&text).unwrap();
    let sensor = SensorId(0);
    assert_eq!(built.fmi.fed_sensors(), [sensor]);
    let mut cl = built.control_loop().unwrap();
    assert_eq!(cl.sensor_input(sensor), [3.0], "held at its start value");
    let c = cl.controller_id("controller").unwrap();
    // t0: the capture reads the start value, not x = 1.
    cl.step().unwrap();
    assert_eq!(cl.sensor_output(sensor), [3.0]);
    assert_eq!(cl.controller_input(c), [-6.0]);
    // A new value is read at the sensor's next instant (t = 0.1), not before.
    built.fmi.apply_inputs(&mut cl, &[5.0]).unwrap();
    for _ in 0..9 {
        cl.step().unwrap();
        assert_eq!(cl.sensor_output(sensor), [3.0]);
    }
    cl.step().unwrap();
    assert!((cl.time() - 0.1).abs() < 1e-15);
    assert_eq!(cl.sensor_output(sensor), [5.0]);
    assert_eq!(cl.controller_input(c), [-10.0]);
    // The plant integrated ẋ = u: −6 over the first period.
    assert!((cl.plant().q(SystemId(0))[0] - (1.0 - 0.6)).abs() < 1e-12);
    // The held value is part of the loop's state.
    let saved = cl.save_state().unwrap();
    built.fmi.apply_inputs(&mut cl, &[7.0]).unwrap();
    cl.restore_state(&saved).unwrap();
    assert_eq!(cl.sensor_input(sensor), [5.0]);
    // A sensor that measures its system refuses an input.
    let plain = build(LOOP).unwrap();
    let mut cl = plain.control_loop().unwrap();
    assert!(cl.set_sensor_input(sensor, &[1.0]).is_err());
    assert!(cl.sensor_input(sensor).is_empty());
}

#[test]
fn sensor_inputs_are_checked_and_located() {
    let two = LOOP
        .replace("x0 = [1]\nA = [[0]]", "x0 = [1, 0]\nA = [[0, 0], [0, 0]]")
        .replace("C = [[1]]", "C = [[1, 0], [0, 1]]")
        .replace("x0 = [0.5]", "x0 = [0.5, 0]")
        .replace("B = [[1]]", "B = [[1], [0]]")
        .replace("k = [[\"gain\"]]", "k = [[\"gain\", 0]]");
    assert!(build(&two).is_ok(), "{:?}", build(&two).err());
    let with = |inputs: &str| format!("{two}\n[fmi]\ninputs = [{inputs}]\n");
    let text = with("{ name = \"a\", target = \"sensor.y[0]\" }");
    let line = text.lines().count();
    assert_error(
        &text,
        line,
        "every component of its measurement must be an input (missing `sensor.y[1]`)",
    );
    let text = with("{ name = \"a\", target = \"sensor.y[2]\" }");
    assert_error(
        &text,
        line,
        "index 2 is out of range, sensor `sensor` measures 2 values",
    );
    let text = with("{ target = \"controller.y[0]\" }");
    assert_error(&text, line, "`y` is not an input");
    let text = with(
        "{ name = \"a\", target = \"sensor.y[0]\" }, { name = \"b\", target = \"sensor.y[1]\" }",
    );
    let built = build(&text).unwrap();
    let mut cl = built.control_loop().unwrap();
    built.fmi.apply_inputs(&mut cl, &[1.5, -2.5]).unwrap();
    assert_eq!(cl.sensor_input(SensorId(0)), [1.5, -2.5]);
}

#[test]
fn a_sensor_feedthrough_adds_d_times_the_held_input() {
    let text = LOOP.replace(
        "C = [[1]]\nperiod = \"period\"",
        "C = [[1]]\nD = [[0.5]]\nfeedthrough = \"controller\"\nperiod = \"period\"",
    );
    let built = build(&text).unwrap();
    let rows = rows_of(&built);
    // At a sensor instant the sensor acts before the actuator: it reads
    // the input held until then. x_{k+1} = x_k + 0.1 u_k,
    // y_k = x_k + 0.5 u_{k−1} (u_{−1} = 0), u_k = −2 y_k.
    let (mut x, mut u_held) = (1.0f64, 0.0f64);
    for (k, r) in rows.iter().enumerate().step_by(10) {
        let y = x + 0.5 * u_held;
        let u = -2.0 * y;
        assert!((r[1] - x).abs() < 1e-12, "t = {}: x {} vs {x}", r[0], r[1]);
        assert!((r[2] - y).abs() < 1e-12, "t = {}: y {} vs {y}", r[0], r[2]);
        assert!((r[4] - u).abs() < 1e-12, "t = {}: u {} vs {u}", r[0], r[4]);
        if k > 0 {
            assert!((r[2] - r[1]).abs() > 0.1, "D u shows in y at t = {}", r[0]);
        }
        x += 0.1 * u;
        u_held = u;
    }
}

#[test]
fn sensor_feedthrough_errors_are_located() {
    let with = |extra: &str| {
        LOOP.replace(
            "C = [[1]]\nperiod = \"period\"",
            &format!("C = [[1]]\n{extra}\nperiod = \"period\""),
        )
    };
    let text = with("D = [[0.5]]");
    assert_error_at(&text, "[[sensors]]", "`D` and `feedthrough` go together");
    let text = with("D = [[0.5]]\nfeedthrough = \"pump\"");
    assert_error_at(
        &text,
        "feedthrough = ",
        "no controller is named `pump` (controllers: controller)",
    );
    let text = with("D = [[0.5, 1]]\nfeedthrough = \"controller\"");
    assert_error_at(&text, "[[sensors]]", "D has size 1×2");
    let text = format!(
        "{}\n[fmi]\ninputs = [{{ name = \"measured\", target = \"sensor.y[0]\" }}]\n",
        with("D = [[0.5]]\nfeedthrough = \"controller\"")
    );
    assert_error_at(&text, "[[sensors]]", "has no feedthrough");
}

#[test]
fn a_nonlinear_input_map_is_evaluated_at_the_actuation_instants_and_held() {
    let text = LOOP
        .replace("delay = 0\n", "delay = 0\namp = 0.3\n")
        .replace("B = [[1]]", "g = [\"u0*x0 + amp*sin(t)\"]\ninputs = 1");
    let built = build(&text).unwrap();
    let rows = rows_of(&built);
    // u_k = −2 x_k; g_k = u_k x_k + 0.3 sin(t_k) held over T = 0.1:
    // x_{k+1} = x_k + 0.1 g_k.
    let mut x = 1.0f64;
    for (k, r) in rows.iter().enumerate().step_by(10) {
        let t = 0.1 * (k / 10) as f64;
        assert!((r[0] - t).abs() < 1e-12);
        assert!((r[1] - x).abs() < 1e-12, "t = {t}: x {} vs {x}", r[1]);
        let u = -2.0 * x;
        assert!((r[4] - u).abs() < 1e-12, "t = {t}: u {} vs {u}", r[4]);
        x += 0.1 * (u * x + 0.3 * t.sin());
    }
    // A Lagrangian plant: the map reads q and v (mass 2: v̇ = g/2).
    let text = LOOP
        .replace(
            "type = \"first_order_linear\"\nx0 = [1]\nA = [[0]]",
            "type = \"lagrangian_linear\"\nq0 = [1]\nv0 = [0.5]\nmass = [[2]]",
        )
        .replace("C = [[1]]", "C = [[1, 0], [0, 1]]")
        .replace("x0 = [0.5]", "x0 = [0.5, 0]")
        .replace("k = [[\"gain\"]]", "k = [[\"gain\", 0]]")
        .replace("B = [[1]]", "g = [\"u0 + v0 - q0\"]\ninputs = 1")
        .replace("\"plant.x\"", "\"plant.q\"");
    let built = build(&text).unwrap();
    let mut cl = built.control_loop().unwrap();
    let plant = built.model.system_id("plant").unwrap();
    let ctl = cl.controller_id("controller").unwrap();
    cl.step().unwrap();
    // At t0: u = −2 q = −2, g = −2 + 0.5 − 1.
    assert_eq!(cl.controller_input(ctl), [-2.0]);
    assert_eq!(cl.plant().system_input(plant), [-2.5]);
}

#[test]
fn input_map_errors_are_located() {
    let with = |g: &str| LOOP.replace("B = [[1]]", g);
    let text = with("g = [\"u0*y\"]\ninputs = 1");
    assert_error_at(
        &text,
        "g = ",
        "unknown name `y` (the map's variables: t, x0, u0;",
    );
    let text = with("g = [\"u1*x0\"]\ninputs = 1");
    assert_error_at(&text, "g = ", "unknown name `u1`");
    let text = with("g = [\"u0\", 0]\ninputs = 1");
    assert_error_at(
        &text,
        "g = ",
        "g has 2 components, the system `plant` has dimension 1",
    );
    let text = with("g = [\"u0\"]");
    assert_error_at(&text, "[[controllers]]", "`g` needs `inputs`");
    let text = with("B = [[1]]\ng = [\"u0\"]\ninputs = 1");
    assert_error_at(&text, "[[controllers]]", "not both");
    let text = with("");
    assert_error_at(&text, "[[controllers]]", "give one");
    let text = with("g = [\"u0\"]\ninputs = 0");
    assert_error_at(&text, "inputs = 0", "1 to 64, got 0");
    let text = with("g = [\"u0*x0\"]\ninputs = 1").replace("delay = 0\n", "delay = 0\nx0 = 2\n");
    assert_error_at(&text, "g = ", "`x0` is both a parameter and a variable");
}
