//! What the checks decided: each check's verdict with the evidence that decided it, and the
//! rules by which a failed validity check makes a hypothesis untrusted.

pub mod multiplicity;
mod verdict;

pub use crate::automatic::{BUSY, INTACT};
pub use verdict::{CheckFigure, CheckResult, CorrelationEvidence, RatioEvidence, Tally, Verdict};

use serde::Serialize;

/// Every verdict on one analysed session, in report order, and the multiplicity note.
#[derive(Debug, Clone, Serialize)]
pub struct Findings {
    pub checks: Vec<CheckResult>,
    /// When several hypothesis checks were decided: how many could have passed by chance.
    pub multiplicity: Option<String>,
}

/// Validity checks whose failure concerns the whole session, whatever runs it names: the
/// machine slept, or a run changed the session's own files.
const SESSION_WIDE: [&str; 2] = [crate::automatic::SUSPEND, INTACT];

/// Whether a failed validity check concerns the whole session rather than some cells: it
/// names no cell, or is one of [`SESSION_WIDE`].
pub fn session_wide(validity: &CheckResult) -> bool {
    validity.cells.is_empty() || SESSION_WIDE.contains(&validity.name.as_str())
}

/// Whether the failed validity check `validity` makes `hypothesis` untrusted: it concerns the
/// whole session, or a cell the hypothesis read (a hypothesis that names no cell read all).
pub fn distrusts(validity: &CheckResult, hypothesis: &CheckResult) -> bool {
    session_wide(validity)
        || hypothesis.cells.is_empty()
        || hypothesis.cells.iter().any(|c| validity.cells.contains(c))
}

/// Whether `a` and `b` name the same check: equal names, or the quiet-machine check of
/// sessions that discarded disturbed timings and the check that took its place, so that notes
/// written for one read the other.
pub fn names_the_same_check(a: &str, b: &str) -> bool {
    let quiet = crate::automatic::QUIET;
    a == b || (a == quiet && b == BUSY) || (a == BUSY && b == quiet)
}
