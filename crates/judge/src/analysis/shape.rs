//! The shape of a cell's data beyond its centre: modes across runs, drift against execution
//! position, steady state within runs, and the share of variance between runs.

use lab_findings::analysis::{Drift, RunSteadiness, SteadyStates};
use lab_stats::{self as stats, DesignEffect, DipTest, RunShape, SteadyState};
use rayon::prelude::*;

/// Fewest iterations in a run before its steady state is looked for.
pub const MIN_ITERATIONS_FOR_STEADY_STATE: usize = 10;
/// Significance level of the per-cell dip test shown in the report.
pub(super) const MODE_ALPHA: f64 = 0.05;

/// Run values reduced to each run's steady segment, with the classification that chose it.
/// Outlier iterations stay in the values: they are measurements, only kept out of the
/// segmentation.
pub(super) fn steady_segments(
    runs: Vec<Vec<f64>>,
    lower_is_better: bool,
) -> (Vec<Vec<f64>>, Option<SteadyStates>) {
    if runs
        .iter()
        .all(|r| r.len() < MIN_ITERATIONS_FOR_STEADY_STATE)
    {
        return (runs, None);
    }
    // Each run is classified on its own: in parallel, collected in the runs' order.
    let (records, kept): (Vec<RunSteadiness>, Vec<Vec<f64>>) = runs
        .into_par_iter()
        .map(|mut run| {
            let record = steadiness(&stats::classify(&run, lower_is_better), run.len());
            run.drain(..record.dropped);
            (record, run)
        })
        .unzip();
    let states: Vec<SteadyState> = records.iter().map(|r| r.state).collect();
    (
        kept,
        Some(SteadyStates {
            consistent: stats::consistent(&states),
            iterations_dropped: records.iter().map(|r| r.dropped).sum(),
            states,
            runs: records,
        }),
    )
}

/// The record of a run of `iterations` values classified as `shape`.
fn steadiness(shape: &RunShape, iterations: usize) -> RunSteadiness {
    let dropped = Some(shape.warmup_end)
        .filter(|&s| s < iterations)
        .unwrap_or(0);
    RunSteadiness {
        state: shape.state,
        iterations,
        steady_start: shape.steady_start,
        last_change: shape.segments.iter().skip(1).last().map(|s| s.start),
        dropped,
        outliers: shape.outliers.clone(),
    }
}

/// The dip test over one value per run (each run's mean).
pub(super) fn modes(run_means: &[f64]) -> Option<DipTest> {
    stats::dip_test(run_means, MODE_ALPHA)
}

/// Mann–Kendall and Theil–Sen of run values against their execution positions.
pub(super) fn drift(run_means: &[f64], positions: &[usize]) -> Option<Drift> {
    let test = stats::mann_kendall(run_means)?;
    let xs: Vec<f64> = positions.iter().map(|p| *p as f64).collect();
    let slope_per_position = stats::theil_sen_slope(&xs, run_means)?;
    Some(Drift {
        test,
        slope_per_position,
    })
}

/// How much of the variance lies between runs, when runs print several values.
pub(super) fn design(runs: &[Vec<f64>]) -> Option<DesignEffect> {
    if runs.iter().all(|r| r.len() < 2) {
        return None;
    }
    stats::design_effect(runs)
}

/// Each run's mean: the unit that modes and drift are judged on.
pub(super) fn run_means(runs: &[Vec<f64>]) -> Vec<f64> {
    runs.iter()
        .map(|r| r.iter().sum::<f64>() / r.len().max(1) as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of tests/fixtures/steady/iterations.sh: 30 warm-up iterations from 0.82 down,
    /// then 0.344 with a small deterministic wobble; `blip_at` makes one iteration take 1.0.
    fn warmup_run(blip_at: Option<usize>) -> Vec<f64> {
        let mut run: Vec<f64> = (0..100)
            .map(|i| {
                if i < 30 {
                    0.82 - 0.002 * i as f64
                } else {
                    0.344 + 0.002 * ((i * 7) % 5) as f64 - 0.004
                }
            })
            .collect();
        if let Some(i) = blip_at {
            run[i] = 1.0;
        }
        run
    }

    #[test]
    fn without_the_outlier_step_the_blip_hides_the_warmup() {
        // The issue: the blip makes changepoints in the final quarter, so the run reaches "no
        // steady state", nothing is dropped and the warm-up lifts the mean to about 0.485.
        let naive = stats::changepoint::classify_with(
            &warmup_run(Some(88)),
            &stats::changepoint::ClassifyConfig {
                exclude_outliers: false,
                ..Default::default()
            },
        );
        assert_eq!(naive.state, SteadyState::NoSteadyState, "{naive:?}");
        let mean = run_means(&[warmup_run(Some(88))])[0];
        assert!((mean - 0.4847).abs() < 1e-3, "{mean}");
    }

    #[test]
    fn a_late_blip_drops_the_same_warmup_and_stays_in_the_values() {
        let (clean, clean_states) = steady_segments(vec![warmup_run(None); 3], true);
        let (blipped, states) = steady_segments(vec![warmup_run(Some(88)); 3], true);
        let (clean_states, states) = (clean_states.unwrap(), states.unwrap());
        assert_eq!(states.states, vec![SteadyState::Warmup; 3]);
        assert_eq!(states.iterations_dropped, clean_states.iterations_dropped);
        assert_eq!(states.iterations_dropped, 90);
        let record = &states.runs[0];
        assert_eq!(
            (record.dropped, record.steady_start, record.outliers.clone()),
            (30, Some(30), vec![88])
        );
        assert_eq!(record.last_change, Some(30));
        // The blip is a measurement: left out of the segmentation, kept in the values.
        assert_eq!(blipped[0].len(), 70);
        assert_eq!(blipped[0][58], 1.0);
        assert_eq!(clean[0].len(), 70);
        assert_eq!(
            states.describe(),
            "3 warm-up (30 warm-up iterations dropped each, 1 outlier kept each)"
        );
        assert_eq!(
            clean_states.describe(),
            "3 warm-up (30 warm-up iterations dropped each)"
        );
    }
}
