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
mod values;

pub use duration::DurationJudgement;
use runs::run_views_releasing;
pub use runs::{RunView, Usage, run_views};
pub use values::RunValues;

use crate::config::{CheckKind, Experiment};
use crate::store::StoredSession;

/// Every finished run with its judgement, and what each declared duration rule found.
#[derive(Debug, Clone)]
pub struct Validity {
    /// Every finished run in execution order.
    pub runs: Vec<RunView>,
    pub durations: Vec<DurationJudgement>,
}

/// Judges every run of a stored session under the experiment it ran with.
pub fn judge(exp: &Experiment, session: &StoredSession) -> Validity {
    with_durations(exp, run_views(exp, session))
}

/// [`judge`], giving up the session's rows and samples as the runs are judged: for a caller
/// that needs only the judged runs after, not the rows they were judged from.
pub fn judge_releasing(exp: &Experiment, session: &mut StoredSession) -> Validity {
    with_durations(exp, run_views_releasing(exp, session))
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
