//! The shape of a cell's data beyond its centre: modes across runs, drift against execution
//! position, steady state within runs, and the share of variance between runs.

use lab_stats::{self as stats, DesignEffect, DipTest, MannKendall, RunShape, SteadyState};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Fewest iterations in a run before its steady state is looked for.
pub const MIN_ITERATIONS_FOR_STEADY_STATE: usize = 10;
/// Significance level of the per-cell dip test shown in the report.
pub(super) const MODE_ALPHA: f64 = 0.05;

/// Drift of run values against execution position.
#[derive(Debug, Clone, Serialize)]
pub struct Drift {
    pub test: MannKendall,
    /// Theil–Sen slope: change of the metric per run position.
    pub slope_per_position: f64,
}

/// How each run of a cell settled, when runs print many iterations.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SteadyStates {
    /// One state per run, in execution order.
    pub states: Vec<SteadyState>,
    /// All runs reached the same kind of state (Barrett et al. 2017, "consistent" cells).
    pub consistent: bool,
    /// Iterations dropped before the steady segment, summed over runs.
    pub iterations_dropped: usize,
    /// One record per run, in execution order: the order of the cell's `run_ids`.
    #[serde(default)]
    pub runs: Vec<RunSteadiness>,
}

/// How one run settled: its state, what was dropped and why, and its outlier iterations.
/// Indices count the iterations the classification saw, after the metric's declared
/// `warmup_iterations`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSteadiness {
    pub state: SteadyState,
    /// Iterations classified.
    pub iterations: usize,
    /// First iteration of the steady segment; `None` when the run reached no steady state.
    pub steady_start: Option<usize>,
    /// Where the run last changed: the start of its last segment, `None` with one segment.
    pub last_change: Option<usize>,
    /// Iterations dropped before the steady segment (warm-up, or the faster start of a
    /// slowdown); the rest of the run is what the statistics use.
    pub dropped: usize,
    /// Outlier iterations (Barrett et al. 2017 §4.1): left out of the changepoint
    /// segmentation, kept in the statistics.
    pub outliers: Vec<usize>,
}

impl RunSteadiness {
    /// The record of a run of `iterations` values classified as `shape`.
    pub fn of(shape: &RunShape, iterations: usize) -> Self {
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
}

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
            let record = RunSteadiness::of(&stats::classify(&run, lower_is_better), run.len());
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

impl SteadyStates {
    /// What the runs did, grouped by state in order of first appearance: "5 warm-up (30 warm-up
    /// iterations dropped each, 1 outlier kept each)". Records read from an older analysis
    /// without per-run detail give the counts alone.
    pub fn describe(&self) -> String {
        let mut groups: Vec<(SteadyState, Vec<Option<&RunSteadiness>>)> = Vec::new();
        for (i, state) in self.states.iter().enumerate() {
            let record = self.runs.get(i).filter(|r| r.state == *state);
            match groups.iter_mut().find(|(s, _)| s == state) {
                Some((_, members)) => members.push(record),
                None => groups.push((*state, vec![record])),
            }
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(state, members)| describe_group(*state, members))
            .collect();
        let inconsistent = if self.consistent {
            ""
        } else {
            " (inconsistent)"
        };
        format!("{}{inconsistent}", parts.join(", "))
    }
}

/// A state's name as the page writes it.
pub(super) fn state_name(state: SteadyState) -> &'static str {
    match state {
        SteadyState::Flat => "flat",
        SteadyState::Warmup => "warm-up",
        SteadyState::Slowdown => "slowdown",
        SteadyState::NoSteadyState => "no steady state",
    }
}

/// "5 warm-up (30 warm-up iterations dropped each, 1 outlier kept each)".
fn describe_group(state: SteadyState, members: &[Option<&RunSteadiness>]) -> String {
    let head = format!("{} {}", members.len(), state_name(state));
    let Some(records) = members.iter().copied().collect::<Option<Vec<_>>>() else {
        return head;
    };
    let details: Vec<String> = [dropped_detail(state, &records), outlier_detail(&records)]
        .into_iter()
        .flatten()
        .collect();
    if details.is_empty() {
        head
    } else {
        format!("{head} ({})", details.join(", "))
    }
}

/// How many iterations the runs of one state dropped, and why; `None` when they dropped none
/// for a reason not worth a word (flat runs).
fn dropped_detail(state: SteadyState, records: &[&RunSteadiness]) -> Option<String> {
    let what = match state {
        SteadyState::NoSteadyState if records.iter().all(|r| r.dropped == 0) => {
            return Some("no steady segment, nothing dropped".into());
        }
        SteadyState::NoSteadyState => ("warm-up iteration", "warm-up iterations"),
        SteadyState::Warmup => ("warm-up iteration", "warm-up iterations"),
        SteadyState::Slowdown => (
            "iteration before the slowdown",
            "iterations before the slowdown",
        ),
        SteadyState::Flat => ("iteration", "iterations"),
    };
    let per_run: Vec<usize> = records.iter().map(|r| r.dropped).collect();
    let (lo, hi) = (*per_run.iter().min()?, *per_run.iter().max()?);
    if hi == 0 {
        return None;
    }
    Some(match (lo == hi, records.len()) {
        (true, 1) => format!("{} dropped", count(lo, what)),
        (true, _) => format!("{} dropped each", count(lo, what)),
        (false, _) => format!("{lo}–{hi} {} dropped", what.1),
    })
}

/// How many outlier iterations the runs of one state kept; `None` when there were none.
fn outlier_detail(records: &[&RunSteadiness]) -> Option<String> {
    let per_run: Vec<usize> = records.iter().map(|r| r.outliers.len()).collect();
    let total: usize = per_run.iter().sum();
    let same = per_run.windows(2).all(|w| w[0] == w[1]);
    let what = ("outlier", "outliers");
    match (total, same && records.len() > 1) {
        (0, _) => None,
        (_, true) => Some(format!("{} kept each", count(per_run[0], what))),
        (_, false) => Some(format!("{} kept", count(total, what))),
    }
}

/// "1 outlier", "3 outliers": `what` is the (singular, plural) noun.
fn count(k: usize, what: (&str, &str)) -> String {
    format!("{k} {}", if k == 1 { what.0 } else { what.1 })
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

    fn record(state: SteadyState, dropped: usize, outliers: usize) -> RunSteadiness {
        RunSteadiness {
            state,
            iterations: 100,
            steady_start: (state != SteadyState::NoSteadyState).then_some(dropped),
            last_change: None,
            dropped,
            outliers: (0..outliers).collect(),
        }
    }

    #[test]
    fn the_description_says_what_each_group_dropped_and_why() {
        use SteadyState::*;
        let runs = vec![
            record(Warmup, 28, 0),
            record(Flat, 0, 2),
            record(Warmup, 31, 1),
            record(NoSteadyState, 0, 0),
            record(Slowdown, 1, 0),
        ];
        let states = SteadyStates {
            states: runs.iter().map(|r| r.state).collect(),
            consistent: false,
            iterations_dropped: 60,
            runs,
        };
        assert_eq!(
            states.describe(),
            "2 warm-up (28–31 warm-up iterations dropped, 1 outlier kept), 1 flat (2 outliers \
             kept), 1 no steady state (no steady segment, nothing dropped), 1 slowdown \
             (1 iteration before the slowdown dropped) (inconsistent)"
        );
    }

    #[test]
    fn an_older_analysis_without_run_records_still_reads_and_describes() {
        let old =
            r#"{"states": ["Warmup", "Warmup"], "consistent": true, "iterations_dropped": 20}"#;
        let states: SteadyStates = serde_json::from_str(old).unwrap();
        assert!(states.runs.is_empty());
        assert_eq!(states.describe(), "2 warm-up");
    }
}
