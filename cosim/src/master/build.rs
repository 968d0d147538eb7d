//! Construction of a [`CoSimulation`]: FMU specifications, connections,
//! settings, and their checks.

use std::sync::Arc;

use nalgebra::{DMatrix, DVector};
use nonsmooth::modelling::{FirstOrderLinear, Model, ModelBuilder, SystemId};
use nonsmooth::simulation::clock::run_clock;
use nonsmooth::simulation::{EventKind, EventManager};

use super::native::{Native, NativeSpec};
use super::{CoSimulation, EndWatch, Slave, Src};
use crate::error::CosimError;
use crate::import::{Fmu, Instance, VarCausality, VarType, Variable};

/// One FMU of a co-simulation.
#[derive(Debug, Clone)]
pub struct FmuSpec {
    /// The instance name (the system's name in the model, in records and
    /// connections).
    pub name: String,
    /// The loaded FMU (several specs may share one).
    pub fmu: Arc<Fmu>,
    /// The communication step Tᵢ in seconds.
    pub step: f64,
    /// Parameters (and start values) set before initialisation.
    pub parameters: Vec<(String, f64)>,
    /// Outputs exposed as the first entries of the system's q.
    pub outputs: Vec<String>,
    /// Inputs exposed as the last entries of q and set from g.
    pub inputs: Vec<String>,
}

/// A direct connection of an FMU output to an FMU input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    /// (FMU name, output variable).
    pub from: (String, String),
    /// (FMU name, input variable).
    pub to: (String, String),
}

/// How connected inputs are taken at a communication point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coupling {
    /// From the outputs published at the last point (default).
    #[default]
    Jacobi,
    /// In declaration order, from the outputs of FMUs already stepped at
    /// this point.
    GaussSeidel,
}

/// Times and coupling of a co-simulation.
#[derive(Debug, Clone)]
pub struct MasterSettings {
    /// Start time.
    pub t0: f64,
    /// Final time.
    pub t_end: f64,
    /// Coupling of connections.
    pub coupling: Coupling,
    /// Output period in seconds (None: the smallest FMU step).
    pub output_period: Option<f64>,
    /// Retry discarded steps as two half steps from the state saved before
    /// the step (for FMUs that can handle variable steps and get and set
    /// their state; it costs one fmi2GetFMUstate per step). When false, or
    /// for other FMUs, a discarded step stops the run.
    pub retry_discards: bool,
}

fn misuse(fmu: &str, variable: &str, reason: impl Into<String>) -> CosimError {
    CosimError::Misuse {
        fmu: fmu.to_string(),
        variable: variable.to_string(),
        reason: reason.into(),
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn with_causality(
    inst: &Instance,
    name: &str,
    want: VarCausality,
    what: &str,
) -> Result<Variable, CosimError> {
    let v = inst.variable(name)?.clone();
    if v.causality != want {
        return Err(misuse(
            inst.name(),
            name,
            format!("is not {what} (its causality is {:?})", v.causality),
        ));
    }
    if v.kind == VarType::String {
        return Err(misuse(
            inst.name(),
            name,
            "is a string: strings are not exchanged",
        ));
    }
    Ok(v)
}

impl CoSimulation {
    /// Instantiates, parameterises and initialises the FMUs, checks the
    /// connections (an output to an input, each input driven once) and
    /// builds the clock: a time base in which t0, t_end, every FMU step and
    /// the `extra` times (periods, offsets, delays of the loop around it)
    /// are whole numbers of ticks.
    pub fn new(
        fmus: Vec<FmuSpec>,
        connections: &[Connection],
        settings: &MasterSettings,
        extra: &[(&'static str, f64)],
    ) -> Result<CoSimulation, CosimError> {
        Self::build(fmus, connections, settings, extra, None)
    }

    /// As [`CoSimulation::new`], with a native model beside the FMUs
    /// (module documentation, "Native model"). Its step h must divide
    /// every FMU step; the master's grid is then h. The native simulation's
    /// clock must be the master's: built from t0, t_end, h, the FMU steps,
    /// the output period and `extra` ([`CoSimulation::clock_times`]).
    pub fn with_native(
        fmus: Vec<FmuSpec>,
        connections: &[Connection],
        settings: &MasterSettings,
        extra: &[(&'static str, f64)],
        native: NativeSpec,
    ) -> Result<CoSimulation, CosimError> {
        Self::build(fmus, connections, settings, extra, Some(native))
    }

    /// The times the master's clock is built from besides t0, t_end and
    /// the first FMU step: every FMU step, the output period, `extra`
    /// (and the native step when there is one).
    pub fn clock_times(
        fmus: &[FmuSpec],
        settings: &MasterSettings,
        extra: &[(&'static str, f64)],
    ) -> Vec<(&'static str, f64)> {
        let mut times: Vec<(&'static str, f64)> =
            fmus.iter().map(|f| ("FMU step", f.step)).collect();
        if let Some(p) = settings.output_period {
            times.push(("output period", p));
        }
        times.extend_from_slice(extra);
        times
    }

    fn build(
        fmus: Vec<FmuSpec>,
        connections: &[Connection],
        settings: &MasterSettings,
        extra: &[(&'static str, f64)],
        native: Option<NativeSpec>,
    ) -> Result<CoSimulation, CosimError> {
        let order = |reason: String| CosimError::Order {
            fmu: "(master)".into(),
            reason,
        };
        if fmus.is_empty() {
            return Err(order("no FMU to run".into()));
        }
        let mut times = Self::clock_times(&fmus, settings, extra);
        if let Some(n) = &native {
            times.push(("step", n.step));
        }
        let (base, t0_tick, first_step, end_tick) = run_clock(
            settings.t0,
            settings.t_end,
            ("FMU step", fmus[0].step),
            &times,
        )
        .map_err(|e| order(e.to_string()))?;
        let native_ticks = match &native {
            Some(n) => Some(
                base.period("step", n.step)
                    .map_err(|e| order(e.to_string()))?,
            ),
            None => None,
        };
        let mut builder = ModelBuilder::new();
        let mut slaves: Vec<Slave> = Vec::with_capacity(fmus.len());
        let mut grid = first_step;
        for spec in &fmus {
            if slaves.iter().any(|s| s.inst.name() == spec.name) {
                return Err(order(format!("two FMUs named '{}'", spec.name)));
            }
            let mut inst = Instance::new(&spec.fmu, &spec.name)?;
            for (p, x) in &spec.parameters {
                inst.set_start(p, *x)?;
            }
            let mut reads = Vec::new();
            for o in &spec.outputs {
                let v = inst.variable(o)?.clone();
                if !matches!(
                    v.causality,
                    VarCausality::Output
                        | VarCausality::Local
                        | VarCausality::Parameter
                        | VarCausality::CalculatedParameter
                ) {
                    return Err(misuse(
                        &spec.name,
                        o,
                        "is an input: it cannot be measured as an output",
                    ));
                }
                if v.kind == VarType::String {
                    return Err(misuse(
                        &spec.name,
                        o,
                        "is a string: strings are not exchanged",
                    ));
                }
                reads.push(v);
            }
            let inputs = spec
                .inputs
                .iter()
                .map(|i| with_causality(&inst, i, VarCausality::Input, "an input"))
                .collect::<Result<Vec<_>, _>>()?;
            let step_ticks = base
                .period("FMU step", spec.step)
                .map_err(|e| order(e.to_string()))?;
            grid = gcd(grid, step_ticks);
            if let Some(h) = native_ticks {
                if step_ticks % h != 0 {
                    return Err(CosimError::Order {
                        fmu: spec.name.clone(),
                        reason: format!(
                            "the FMU step {} is not a whole number of native steps h = {}",
                            spec.step,
                            native.as_ref().map_or(0.0, |n| n.step)
                        ),
                    });
                }
            }
            let n = reads.len() + inputs.len();
            if n == 0 {
                return Err(order(format!(
                    "FMU '{}' exposes no output and no input",
                    spec.name
                )));
            }
            builder
                .add_system(
                    &spec.name,
                    FirstOrderLinear::new(DVector::zeros(n), DMatrix::zeros(n, n)),
                )
                .map_err(|e| order(e.to_string()))?;
            let n_out = reads.len();
            slaves.push(Slave {
                inst,
                step_ticks,
                point: t0_tick,
                next: t0_tick,
                reads,
                n_out,
                inputs,
                values: Vec::new(),
                pending: Vec::new(),
                q: vec![0.0; n],
                g: vec![0.0; n],
                connected: Vec::new(),
                retry: None,
                source: 0,
                stepped: false,
            });
        }
        // Connections: sources become reads of their FMU.
        for c in connections {
            let find = |name: &str| {
                slaves
                    .iter()
                    .position(|s| s.inst.name() == name)
                    .ok_or_else(|| {
                        order(format!(
                            "connection {}.{} → {}.{}: no FMU named '{name}'",
                            c.from.0, c.from.1, c.to.0, c.to.1
                        ))
                    })
            };
            let (a, b) = (find(&c.from.0)?, find(&c.to.0)?);
            let out = with_causality(
                &slaves[a].inst,
                &c.from.1,
                VarCausality::Output,
                "an output",
            )?;
            let inp = with_causality(&slaves[b].inst, &c.to.1, VarCausality::Input, "an input")?;
            if slaves[b].inputs.iter().any(|v| v.name == inp.name)
                || slaves[b].connected.iter().any(|(v, _)| v.name == inp.name)
            {
                return Err(misuse(
                    &c.to.0,
                    &c.to.1,
                    "is driven twice (by two connections, or by a connection and an actuator)",
                ));
            }
            if settings.coupling == Coupling::GaussSeidel
                && slaves[a].step_ticks != slaves[b].step_ticks
            {
                return Err(order(format!(
                    "Gauss–Seidel coupling of '{}' and '{}' needs equal communication steps",
                    c.from.0, c.to.0
                )));
            }
            let k = read_index(&mut slaves[a], out);
            slaves[b].connected.push((inp, Src::Fmu(a, k)));
        }
        let (native, model, n_native) = match native {
            Some(spec) => {
                let h = native_ticks.unwrap_or(1);
                grid = h;
                let (native, model) = connect_native(spec, &mut slaves, base, h)?;
                let n = native.n_systems;
                (Some(native), Some(model), n)
            }
            None => (None, None, 0),
        };
        // Initialise, read the initial values.
        let mut events = EventManager::new();
        let mut names = Vec::new();
        let mut slave_of_source = Vec::new();
        for (i, s) in slaves.iter_mut().enumerate() {
            s.inst.initialize(settings.t0, Some(settings.t_end))?;
            s.values = vec![0.0; s.reads.len()];
            for (k, v) in s.reads.iter().enumerate() {
                s.values[k] = s.inst.get_as_real(v)?;
            }
            s.pending = s.values.clone();
            s.q[..s.n_out].copy_from_slice(&s.values[..s.n_out]);
            let caps = s.inst.description().capabilities;
            if settings.retry_discards && caps.variable_step && caps.get_set_state {
                s.retry = Some(s.inst.get_state()?);
            }
            let id = events
                .add_periodic(
                    EventKind::Communication,
                    t0_tick + s.step_ticks,
                    s.step_ticks,
                )
                .map_err(|e| order(e.to_string()))?;
            s.source = id.0;
            names.push(s.inst.name().to_string());
            slave_of_source.push(Some(i));
        }
        let out_ticks = match settings.output_period {
            Some(p) => base
                .period("output period", p)
                .map_err(|e| order(e.to_string()))?,
            None => slaves.iter().map(|s| s.step_ticks).min().unwrap_or(1),
        };
        events
            .add_periodic(EventKind::Output, t0_tick, out_ticks)
            .map_err(|e| order(e.to_string()))?;
        names.push("output".into());
        slave_of_source.push(None);
        let model = model.unwrap_or_else(|| Arc::new(builder.build()));
        let mut master = CoSimulation {
            model,
            slaves,
            coupling: settings.coupling,
            base,
            t0_tick,
            grid_ticks: grid,
            end_tick,
            planned_end_tick: end_tick,
            ended: None,
            watch: EndWatch::default(),
            tick: t0_tick,
            events,
            instant: Vec::new(),
            names,
            slave_of_source,
            output: false,
            steps: 0,
            empty: Vec::new(),
            native,
            n_native,
        };
        master
            .hold_native_inputs()
            .map_err(|e| order(e.to_string()))?;
        Ok(master)
    }
}

/// The index of `v` in the slave's reads (added if absent).
fn read_index(s: &mut Slave, v: Variable) -> usize {
    match s.reads.iter().position(|r| r.name == v.name) {
        Some(k) => k,
        None => {
            s.reads.push(v);
            s.reads.len() - 1
        }
    }
}

/// Checks the native part against the master (clock, model) and adds its
/// connections to the slaves.
fn connect_native(
    spec: NativeSpec,
    slaves: &mut [Slave],
    base: nonsmooth::simulation::TimeBase,
    h_ticks: i64,
) -> Result<(Native, Arc<Model>), CosimError> {
    let order = |reason: String| CosimError::Order {
        fmu: "(master)".into(),
        reason,
    };
    let (tick, native_base) = spec.sim.tick();
    if native_base != base || spec.sim.grid().map(|g| g.0) != Some(h_ticks) {
        return Err(order(format!(
            "the native simulation's clock (time base {native_base:?}, grid {:?}) is not the \
             master's (time base {base:?}, step {h_ticks} ticks): build it from \
             CoSimulation::clock_times",
            spec.sim.grid()
        )));
    }
    let _ = tick;
    let mut native = Native::new(spec.sim);
    let n = native.n_systems;
    let model = spec.model;
    if model.systems().len() != n + slaves.len()
        || slaves
            .iter()
            .enumerate()
            .any(|(i, s)| model.system(SystemId(n + i)).name != s.inst.name())
    {
        return Err(order(
            "the model is not the native systems followed by one system per FMU, in order".into(),
        ));
    }
    let find = |slaves: &[Slave], name: &str| {
        slaves
            .iter()
            .position(|s| s.inst.name() == name)
            .ok_or_else(|| order(format!("a connection names no FMU '{name}'")))
    };
    for (read, (fmu, var)) in &spec.to_fmus {
        let b = find(slaves, fmu)?;
        let inp = with_causality(&slaves[b].inst, var, VarCausality::Input, "an input")?;
        if slaves[b].inputs.iter().any(|v| v.name == inp.name)
            || slaves[b].connected.iter().any(|(v, _)| v.name == inp.name)
        {
            return Err(misuse(
                fmu,
                var,
                "is driven twice (by two connections, or by a connection and an actuator)",
            ));
        }
        slaves[b].connected.push((inp, Src::Native(*read)));
    }
    for ((fmu, var), input) in &spec.from_fmus {
        let a = find(slaves, fmu)?;
        let out = with_causality(&slaves[a].inst, var, VarCausality::Output, "an output")?;
        let k = read_index(&mut slaves[a], out);
        native.targets.push((a, k, *input));
    }
    Ok((native, model))
}
