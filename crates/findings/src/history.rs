//! An experiment's sessions in time order, as the history found them: per cell, the median
//! of a metric in every session with its interval, and the steps between sessions beyond a
//! noise threshold, each judged a regression or an improvement.

use serde::Serialize;

/// The history of one metric across an experiment's sessions.
#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub experiment: String,
    pub metric: String,
    pub unit: String,
    pub better: String,
    /// Steps within ± this share are not reported.
    pub threshold: f64,
    /// Oldest first.
    pub sessions: Vec<SessionMark>,
    pub cells: Vec<CellHistory>,
    /// Some cell stepped the wrong way at the newest session.
    pub regressed_latest: bool,
}

/// A session on the history's time axis.
#[derive(Debug, Clone, Serialize)]
pub struct SessionMark {
    /// 1-based position in time order, as the chart's x axis shows it.
    pub number: usize,
    pub name: String,
    pub started_utc: String,
    /// The commit, marked "(dirty)" for uncommitted changes, or "not a git checkout".
    pub commit: String,
    pub label: Option<String>,
    pub profile: String,
    /// How its machine differs from the newest session's ("kernel: 6.1 → 6.2"); empty when
    /// alike.
    pub unlike_newest: Vec<String>,
}

/// One cell across sessions.
#[derive(Debug, Clone, Serialize)]
pub struct CellHistory {
    pub cell: String,
    pub variant: String,
    pub points: Vec<HistoryPoint>,
    pub steps: Vec<Step>,
}

/// The cell in one session.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryPoint {
    /// The session's number.
    pub session: usize,
    pub median: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    pub runs: usize,
    /// The interval's confidence level.
    pub level: f64,
    /// Each valid run's median value, in execution order.
    #[serde(skip)]
    pub run_values: Vec<f64>,
}

/// A change in level between two sessions.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The number of the first session at the new level.
    pub session: usize,
    pub session_name: String,
    pub commit: String,
    /// Level after / level before (weighted geometric means of the sessions' medians).
    pub ratio: f64,
    pub kind: StepKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    Regression,
    Improvement,
}

impl StepKind {
    pub fn word(self) -> &'static str {
        match self {
            StepKind::Regression => "regression",
            StepKind::Improvement => "improvement",
        }
    }
}

/// Fewest sessions with an interval before a step is looked for: with two, a step cannot be
/// told from the spread between sessions (the chapter's comparison answers that question).
pub const MIN_SESSIONS: usize = 3;
