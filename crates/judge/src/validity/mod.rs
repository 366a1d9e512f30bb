//! Stage 5, validity: the one place that turns stored runs into valid / invalid-with-reasons.
//! Automatic rules (exit, timeout, suspend, missing or malformed metric, too short to time,
//! echoed configuration) and the declared `duration` rule are applied here, below the
//! statistics; the analysis uses only valid runs and the checks stage reports the judgement.

pub mod automatic;
mod derived;
mod duration;
pub mod impossible;
pub mod nodes;
mod printed;
mod reasons;
mod runs;

pub use duration::{DurationJudgement, HeldBack};
pub use lab_findings::runs::{RunValues, RunView, Usage};
pub use runs::{Rows, run_views};

use lab_config::{CheckKind, Experiment};
use lab_store::StoredSession;

/// Every finished run with its judgement, and what each declared duration rule found.
#[derive(Debug, Clone)]
pub struct Validity {
    /// Every finished run in execution order.
    pub runs: Vec<RunView>,
    pub durations: Vec<DurationJudgement>,
}

/// Judges every run of a stored session under the experiment it ran with, keeping the
/// session's rows or giving them up as `rows` says.
pub fn judge(exp: &Experiment, session: &mut StoredSession, rows: Rows) -> Validity {
    with_durations(exp, run_views(exp, session, rows))
}

/// The judged runs with what each declared duration rule found in them.
fn with_durations(exp: &Experiment, mut runs: Vec<RunView>) -> Validity {
    let durations = exp
        .checks
        .iter()
        .enumerate()
        .filter_map(|(i, spec)| match &spec.kind {
            CheckKind::Duration {
                expect,
                tolerance,
                metric,
            } => Some(duration::judge(
                i,
                spec,
                expect,
                *tolerance,
                metric.as_deref(),
                &mut runs,
            )),
            _ => None,
        })
        .collect();
    Validity { runs, durations }
}
