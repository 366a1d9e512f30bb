//! How a cell's data is shaped beyond its centre, as the analysis records it: drift against
//! execution position, and how each run settled when runs print many iterations.

use lab_basis::{MannKendall, SteadyState};
use serde::{Deserialize, Serialize};

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

/// A state's name as the page writes it.
fn state_name(state: SteadyState) -> &'static str {
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

#[cfg(test)]
mod tests {
    use super::*;

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
