//! Scenario files: a model, its simulation settings, what to record and what
//! to plot, in TOML (the schema is in docs/scenarios.md).
//!
//! ```
//! use nonsmooth_scenario::Scenario;
//!
//! let text = r#"
//! name = "fall"
//! [parameters]
//! g = 9.81
//! [simulation]
//! t_end = 0.1
//! step = 0.01
//! [[systems]]
//! name = "body"
//! type = "lagrangian_linear"
//! q0 = [1]
//! mass = [[1]]
//! fext = ["-g"]
//! "#;
//! let mut scenario = Scenario::from_str(text, "fall.toml").unwrap();
//! scenario.set_parameter("g", 1.62).unwrap();
//! let built = scenario.build().unwrap();
//! assert_eq!(built.header(), ["t", "body.q[0]", "body.v[0]"]);
//! let mut run = built.control_loop().unwrap();
//! let mut row = vec![0.0; built.header().len()];
//! run.run(|cl| built.row(cl, &mut row)).unwrap();
//! assert!(row[1] < 1.0);
//! ```

mod build;
mod control;
pub mod cosim_build;
pub mod cosim_native;
pub mod cosim_plan;
pub mod error;
pub mod expr;
pub mod fmi;
mod nominal;
mod params;
mod parsed;
mod ports;
pub mod record;
pub mod schema;
mod settings;
mod tape;
mod values;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use build::bodies::RigidScene;
pub use control::ControlPlan;
pub use cosim_build::{CosimBuild, FmuCausality, FmuInterface, FmuVariables};
pub use cosim_native::{NativeInput, NativePart, NativeSource, NativeTarget};
pub use cosim_plan::{ConnectionPlan, CosimPlan, CouplingChoice, Endpoint, FmuPlan};
pub use error::{Place, Result, ScenarioError};
pub use fmi::{FmiInput, FmiSpec, InputTarget};
pub use nominal::WithNominalPlant;
pub use parsed::BuildCache;
pub use record::{Column, Variable, DEFAULT_COLUMN_LIMIT};
pub use schema::Quantity;

use self::error::Source;
use self::schema::ScenarioFile;
use nonsmooth::control::{ControlLoop, LawCatalog, NoLaws};
use nonsmooth::modelling::Model;
use nonsmooth::simulation::{EventDrivenSettings, Simulation, Strategy, TimeSteppingSettings};

/// A plot of recorded columns, as given by a `[[plots]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotSpec {
    /// Title (none: no title).
    pub title: Option<String>,
    /// Abscissa column (`t` unless given).
    pub x: String,
    /// Ordinate columns, one curve each.
    pub y: Vec<String>,
    /// Output file, relative to the output directory.
    pub output: PathBuf,
}

/// A scenario file, read and checked against the schema but not yet
/// evaluated: parameters can still be changed with
/// [`Scenario::set_parameter`] before [`Scenario::build`].
///
/// A clone shares the text and the read file (behind `Arc`s) and copies
/// only the overrides: a parameter sweep reads the file once and runs a
/// clone per point, each with its own values.
#[derive(Debug, Clone)]
pub struct Scenario {
    source: Arc<Source>,
    file: Arc<ScenarioFile>,
    overrides: BTreeMap<String, Quantity>,
}

impl Scenario {
    /// Reads a scenario file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Scenario> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Scenario::from_str(&text, path)
    }

    /// Reads a scenario from text; `path` names it in messages.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, path: impl AsRef<Path>) -> Result<Scenario> {
        let source = Source::new(text, path.as_ref());
        let file: ScenarioFile = toml::from_str(text).map_err(|e| {
            let at = source.at(e.span().map_or(0, |s| s.start));
            let message = e.message().trim().to_string();
            if message.starts_with("unknown field") {
                ScenarioError::UnknownKey { at, message }
            } else {
                ScenarioError::Toml { at, message }
            }
        })?;
        let name = file.name.get_ref();
        let valid = !name.is_empty()
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !valid {
            return Err(ScenarioError::Invalid {
                at: source.span(file.name.span()),
                reason: format!(
                    "the scenario name `{name}` names the CSV file: use letters, digits, `_`, `-` and `.`, not starting with `.`"
                ),
            });
        }
        Ok(Scenario {
            source: Arc::new(source),
            file: Arc::new(file),
            overrides: BTreeMap::new(),
        })
    }

    /// The scenario's name (its CSV file is `<name>.csv`).
    pub fn name(&self) -> &str {
        self.file.name.get_ref()
    }

    /// The description, if any.
    pub fn description(&self) -> Option<&str> {
        self.file.description.as_deref()
    }

    /// The file the scenario was read from (or the name given to
    /// [`Scenario::from_str`]).
    pub fn path(&self) -> &Path {
        self.source.path()
    }

    /// The names of the `[parameters]`, in alphabetical order.
    pub fn parameter_names(&self) -> Vec<&str> {
        self.file
            .parameters
            .as_ref()
            .map(|p| p.get_ref().keys().map(|k| k.as_str()).collect())
            .unwrap_or_default()
    }

    /// Replaces the value of a `[parameters]` entry by a number or an
    /// expression (which may use the other parameters). Unknown names are
    /// refused; the value is checked by [`Scenario::build`].
    pub fn set_parameter(&mut self, name: &str, value: impl Into<Quantity>) -> Result<()> {
        let names = self.parameter_names();
        if !names.contains(&name) {
            return Err(ScenarioError::NoSuchParameter {
                path: self.source.path().to_path_buf(),
                name: name.to_string(),
                known: expr::list(&names),
            });
        }
        self.overrides.insert(name.to_string(), value.into());
        Ok(())
    }

    /// The values given with [`Scenario::set_parameter`], by name.
    pub fn overrides(&self) -> &BTreeMap<String, Quantity> {
        &self.overrides
    }

    /// The parameter values, after overrides.
    pub fn parameters(&self) -> Result<BTreeMap<String, f64>> {
        params::parameters(&self.source, &self.file, &self.overrides)
    }

    /// The word parameters (e.g. `law = "smc_implicit"`), after overrides:
    /// the values [`Scenario::parameters`] leaves out.
    pub fn words(&self) -> Result<BTreeMap<String, String>> {
        Ok(params::parameters_and_words(&self.source, &self.file, &self.overrides)?.1)
    }

    /// True when the file declares `[[fmus]]`: a co-simulation, built
    /// around its FMUs ([`Scenario::cosim_plan`],
    /// [`Scenario::build_cosim_with`]), which [`Scenario::build`] refuses.
    pub fn is_cosim(&self) -> bool {
        !self.file.fmus.is_empty()
    }

    /// Where the first `[[fmus]]` entry is (none when the file declares no
    /// FMU), to locate errors about a co-simulation as a whole.
    pub fn fmus_place(&self) -> Option<Place> {
        self.file.fmus.first().map(|f| self.source.span(f.span()))
    }

    /// Evaluates everything and builds the model, the settings, the recorded
    /// columns and the plots. Errors name the line of the offending value
    /// or entry. Scenarios with controllers or observers need a catalog of
    /// laws: see [`Scenario::build_with`].
    pub fn build(&self) -> Result<BuiltScenario> {
        self.build_with(Arc::new(NoLaws))
    }

    /// As [`Scenario::build`], creating the control laws named in the file
    /// from `catalog` (e.g. `nonsmooth_controllers::Catalog`).
    pub fn build_with(&self, catalog: Arc<dyn LawCatalog>) -> Result<BuiltScenario> {
        cosim_plan::refuse_native(&self.source, &self.file)?;
        build::build(
            &self.source,
            &self.file,
            &self.overrides,
            Catalog(catalog),
            None,
        )
    }

    /// As [`Scenario::build_with`], parsing the expressions through a
    /// batch's `cache`: the builds of a sweep's points (the same file,
    /// other parameter values) parse each text once. The result is the
    /// build [`Scenario::build_with`] gives, bit for bit (see
    /// [`BuildCache`]).
    pub fn build_cached(
        &self,
        catalog: Arc<dyn LawCatalog>,
        cache: &BuildCache,
    ) -> Result<BuiltScenario> {
        cosim_plan::refuse_native(&self.source, &self.file)?;
        build::build(
            &self.source,
            &self.file,
            &self.overrides,
            Catalog(catalog),
            Some(cache),
        )
    }

    /// The `[[fmus]]` and `[[connections]]` sections, evaluated with the
    /// parameters (after overrides) and checked as far as the file allows
    /// (see [`cosim_plan`]); none when the file declares no FMU. Such a
    /// scenario is a co-simulation: [`Scenario::build`] refuses it.
    pub fn cosim_plan(&self) -> Result<Option<CosimPlan>> {
        cosim_plan::plan(&self.source, &self.file, &self.overrides)
    }

    /// Builds a co-simulation scenario around its FMUs (see
    /// [`cosim_build`]): `plan` is [`Scenario::cosim_plan`]'s, `vars` the
    /// variables of each FMU in plan order (read by the caller from the
    /// FMUs). Returns the built scenario — its model holds the native
    /// systems, then one interface system per FMU — what each FMU must
    /// expose, in the order of its system's entries, and the native model
    /// with the connections that read or drive it. Its loop runs on the
    /// caller's co-simulation: [`BuiltScenario::control_loop_on`].
    pub fn build_cosim_with(
        &self,
        catalog: Arc<dyn LawCatalog>,
        plan: &CosimPlan,
        vars: &[FmuVariables],
    ) -> Result<CosimBuild> {
        self.build_cosim_cached(catalog, plan, vars, None)
    }

    /// As [`Scenario::build_cosim_with`], parsing the expressions through
    /// a batch's `cache` when given (see [`Scenario::build_cached`]).
    pub fn build_cosim_cached(
        &self,
        catalog: Arc<dyn LawCatalog>,
        plan: &CosimPlan,
        vars: &[FmuVariables],
        cache: Option<&BuildCache>,
    ) -> Result<CosimBuild> {
        cosim_build::build(
            &self.source,
            &self.file,
            &self.overrides,
            Catalog(catalog),
            plan,
            vars,
            cache,
        )
    }

    /// The text of the file.
    pub fn text(&self) -> &str {
        self.source.text()
    }
}

/// Where the settings and systems are in the file, to locate errors of the
/// simulation set-up.
#[derive(Debug, Clone)]
struct Places {
    simulation: Place,
    settings: HashMap<&'static str, Place>,
    systems: HashMap<String, Place>,
}

/// The laws a built scenario creates its controllers from.
#[derive(Clone)]
pub struct Catalog(pub Arc<dyn LawCatalog>);

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("controllers", &self.0.controller_laws())
            .field("observers", &self.0.observer_laws())
            .finish()
    }
}

/// A built scenario: what a run needs.
#[derive(Debug, Clone)]
pub struct BuiltScenario {
    /// The scenario's name.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// The parameter values used.
    pub parameters: BTreeMap<String, f64>,
    /// The word parameters (e.g. a law name) used.
    pub words: BTreeMap<String, String>,
    /// The model.
    pub model: Arc<Model>,
    /// The time-stepping settings (`t0`, `t_end`, the step…).
    pub settings: TimeSteppingSettings,
    /// The strategy `[simulation] strategy` asks for.
    pub strategy: Strategy,
    /// The event-driven settings (outputs every `step` × `every`).
    pub event_driven: EventDrivenSettings,
    /// The recorded columns, after `t`.
    pub columns: Vec<Column>,
    /// The plots.
    pub plots: Vec<PlotSpec>,
    /// Sensors, observers and controllers.
    pub control: ControlPlan,
    catalog: Catalog,
    /// What an exported FMU exposes (`[fmi]`, see docs/fmi.md).
    pub fmi: FmiSpec,
    places: Places,
    /// Built by [`Scenario::build_cosim_with`]: the plant is the caller's
    /// co-simulation.
    cosim: bool,
    /// The rigid bodies (`[[bodies]]`, `[[generators]]`), when the
    /// scenario has some: its model is then the stand-in naming their
    /// values (see `nonsmooth_collision::RigidSimulation`).
    pub rigid: Option<Arc<RigidScene>>,
}

impl BuiltScenario {
    /// The CSV header: `t`, then the column names.
    pub fn header(&self) -> Vec<&str> {
        std::iter::once("t")
            .chain(self.columns.iter().map(|c| c.name.as_str()))
            .collect()
    }

    /// The CSV file name, `<name>.csv`.
    pub fn csv_file_name(&self) -> String {
        format!("{}.csv", self.name)
    }

    /// Sets up the run: the plant's simulation with fresh instances of the
    /// sensors, observers and controllers around it (a scenario without
    /// them gives a loop that only integrates the plant). The loop is the
    /// one driver of every run: the command line, the FMU runtime and
    /// library users step it and read their rows from it
    /// ([`BuiltScenario::row`]).
    /// The declared `[fmi]` inputs are held at their start values.
    pub fn control_loop(&self) -> Result<ControlLoop> {
        self.control_loop_with(self.strategy)
    }

    /// As [`BuiltScenario::control_loop`], with the given strategy for the
    /// plant (the scenario's own is [`BuiltScenario::strategy`]).
    pub fn control_loop_with(&self, strategy: Strategy) -> Result<ControlLoop> {
        if self.cosim {
            return Err(ScenarioError::Invalid {
                at: self.places.simulation.clone(),
                reason: "a co-simulation scenario runs on its FMUs: its loop is built on the master (BuiltScenario::control_loop_on)".into(),
            });
        }
        if self.settings.lagrangian_scheme != nonsmooth::simulation::LagrangianScheme::MoreauJean {
            let refuse = |reason: &str| ScenarioError::Invalid {
                at: self
                    .places
                    .settings
                    .get("scheme")
                    .unwrap_or(&self.places.simulation)
                    .clone(),
                reason: reason.into(),
            };
            if strategy == Strategy::EventDriven {
                return Err(refuse(
                    "the Schatzman–Paoli and D1-minus-linear schemes are time-stepping schemes; \
                     the event-driven strategy locates impacts instead",
                ));
            }
            if self.rigid.is_some() {
                return Err(refuse(
                    "rigid bodies are integrated by their own Moreau–Jean contact step; \
                     `scheme` applies to [[systems]] models",
                ));
            }
        }
        if let Some(scene) = &self.rigid {
            return self.rigid_loop(scene, strategy);
        }
        let mut cl = control::instantiate(
            &self.control,
            &self.model,
            strategy,
            &self.settings,
            &self.event_driven,
            self.catalog.0.as_ref(),
            &self.places,
            &self.fmi.fed_sensors(),
            None,
        )?;
        if self.fmi.inputs.iter().any(|i| i.start != 0.0) {
            self.fmi
                .apply_inputs(&mut cl, &self.fmi.input_starts())
                .map_err(|e| ScenarioError::Invalid {
                    at: self.places.simulation.clone(),
                    reason: e.to_string(),
                })?;
        }
        Ok(cl)
    }

    /// Sets up the run on a given plant simulation of this scenario's model
    /// (a co-simulation of its FMUs, built with the periods, offsets and
    /// delays of [`ControlPlan::times`] in its time base): fresh sensors,
    /// observers and controllers around it.
    pub fn control_loop_on(&self, plant: Box<dyn Simulation>) -> Result<ControlLoop> {
        control::instantiate(
            &self.control,
            &self.model,
            self.strategy,
            &self.settings,
            &self.event_driven,
            self.catalog.0.as_ref(),
            &self.places,
            &[],
            Some(plant),
        )
    }

    /// True for a co-simulation scenario (built by
    /// [`Scenario::build_cosim_with`]).
    pub fn is_cosim(&self) -> bool {
        self.cosim
    }

    /// The loop around a rigid world (time-stepping only), with the
    /// scenario's sensors and controllers on its bodies.
    fn rigid_loop(&self, scene: &RigidScene, strategy: Strategy) -> Result<ControlLoop> {
        if strategy != Strategy::TimeStepping {
            return Err(ScenarioError::Invalid {
                at: self.places.simulation.clone(),
                reason: "rigid bodies are simulated by time-stepping only".into(),
            });
        }
        build::rigid_control::rigid_loop(
            scene,
            &self.model,
            &self.control,
            &self.settings,
            &self.event_driven,
            self.catalog.0.as_ref(),
            &self.places,
        )
    }

    /// Writes the current row (t, then the columns) of a run of this
    /// scenario ([`BuiltScenario::control_loop`]) into `out`, whose length
    /// must be `header().len()`.
    pub fn row(&self, cl: &ControlLoop, out: &mut [f64]) {
        out[0] = cl.time();
        for (o, c) in out[1..].iter_mut().zip(&self.columns) {
            *o = c.value(cl);
        }
    }
}
