//! Co-simulation scenarios (files with `[[fmus]]`): built around their
//! FMUs by nonsmooth-cosim, as `nonsmooth run` builds them, with the
//! options of a run applied before the FMUs are set up (the master's
//! clock and the FMUs' stop time take the final time).

use nonsmooth::control::ControlLoop;
use nonsmooth::simulation::Strategy;
use nonsmooth_cosim::scenario::{build_batched, BuildError, OpenFmus};
use nonsmooth_cosim::EndWatch;
use nonsmooth_scenario::{BuiltScenario, Scenario};

use super::error::RunError;
use super::point::Batch;
use super::recording::RunOptions;

/// Builds a co-simulation scenario and its loop on the FMUs. A strategy
/// other than time-stepping is refused (the FMUs are stepped at their
/// communication points); `t_end` replaces the scenario's final time. In
/// a batch, the FMUs stay open from point to point and the expressions
/// are parsed once ([`Batch`]). The [`EndWatch`] tells whether an FMU
/// ended the run early.
pub(crate) fn build(
    scenario: &Scenario,
    options: &RunOptions,
    batch: Option<&mut Batch>,
) -> Result<(BuiltScenario, ControlLoop, EndWatch), RunError> {
    let path = scenario.path();
    if let Some(s) = options.strategy.filter(|&s| s != Strategy::TimeStepping) {
        return Err(RunError::Option {
            path: path.to_path_buf(),
            reason: format!(
                "strategy {s}: a co-simulation steps its FMUs at their communication points \
                 (time-stepping only)"
            ),
        });
    }
    let built = match batch {
        Some(b) => build_batched(
            scenario,
            super::laws(),
            options.t_end,
            &mut b.fmus,
            Some(&b.parses),
        ),
        None => build_batched(
            scenario,
            super::laws(),
            options.t_end,
            &mut OpenFmus::default(),
            None,
        ),
    };
    built.map_err(|e| match e {
        BuildError::Input(e) => RunError::from(e),
        BuildError::Fmu { .. } => RunError::FmuSetup {
            path: path.to_path_buf(),
            message: e.to_string(),
        },
        BuildError::EndTime { .. } | BuildError::NotCosim(_) => RunError::Option {
            path: path.to_path_buf(),
            reason: e.to_string(),
        },
    })
}
