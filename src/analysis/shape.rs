//! The shape of a cell's data beyond its centre: modes across runs, drift against execution
//! position, steady state within runs, and the share of variance between runs.

use crate::stats::{self, DesignEffect, DipTest, MannKendall, SteadyState};
use serde::Serialize;

/// Fewest iterations in a run before its steady state is looked for.
pub const MIN_ITERATIONS_FOR_STEADY_STATE: usize = 10;
/// Significance level of the per-cell dip test shown in the report.
pub const MODE_ALPHA: f64 = 0.05;

/// Drift of run values against execution position.
#[derive(Debug, Clone, Serialize)]
pub struct Drift {
    pub test: MannKendall,
    /// Theil–Sen slope: change of the metric per run position.
    pub slope_per_position: f64,
}

/// How each run of a cell settled, when runs print many iterations.
#[derive(Debug, Clone, Serialize)]
pub struct SteadyStates {
    /// One state per run, in execution order.
    pub states: Vec<SteadyState>,
    /// All runs reached the same kind of state (Barrett et al. 2017, "consistent" cells).
    pub consistent: bool,
    /// Iterations dropped before the steady segment, summed over runs.
    pub iterations_dropped: usize,
}

/// Run values reduced to each run's steady segment, with the classification that chose it.
pub fn steady_segments(
    runs: Vec<Vec<f64>>,
    lower_is_better: bool,
) -> (Vec<Vec<f64>>, Option<SteadyStates>) {
    if runs
        .iter()
        .all(|r| r.len() < MIN_ITERATIONS_FOR_STEADY_STATE)
    {
        return (runs, None);
    }
    let mut states = Vec::with_capacity(runs.len());
    let mut dropped = 0;
    let kept = runs
        .into_iter()
        .map(|run| {
            let shape = stats::classify(&run, lower_is_better);
            states.push(shape.state);
            match shape.steady_start {
                Some(start) if start < run.len() => {
                    dropped += start;
                    run[start..].to_vec()
                }
                _ => run,
            }
        })
        .collect();
    let consistent = stats::consistent(&states);
    (
        kept,
        Some(SteadyStates {
            states,
            consistent,
            iterations_dropped: dropped,
        }),
    )
}

/// The dip test over one value per run (each run's mean).
pub fn modes(run_means: &[f64]) -> Option<DipTest> {
    stats::dip_test(run_means, MODE_ALPHA)
}

/// Mann–Kendall and Theil–Sen of run values against their execution positions.
pub fn drift(run_means: &[f64], positions: &[usize]) -> Option<Drift> {
    let test = stats::mann_kendall(run_means)?;
    let xs: Vec<f64> = positions.iter().map(|p| *p as f64).collect();
    let slope_per_position = stats::theil_sen_slope(&xs, run_means)?;
    Some(Drift {
        test,
        slope_per_position,
    })
}

/// How much of the variance lies between runs, when runs print several values.
pub fn design(runs: &[Vec<f64>]) -> Option<DesignEffect> {
    if runs.iter().all(|r| r.len() < 2) {
        return None;
    }
    stats::design_effect(runs)
}

/// Each run's mean: the unit that modes and drift are judged on.
pub fn run_means(runs: &[Vec<f64>]) -> Vec<f64> {
    runs.iter()
        .map(|r| r.iter().sum::<f64>() / r.len().max(1) as f64)
        .collect()
}
