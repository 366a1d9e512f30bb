//! A bisection as `lab bisect` left it: the commits between a good one and a bad one, each
//! tried in a session of its own against the good one, and the first commit where the watched
//! cells got slower — or the commits that stay ambiguous where steps were inconclusive. Kept
//! as `data/NAME/bisect/GOOD..BAD.json` beside the sessions it names, and shown on the
//! chapter's Bisect page.

use crate::compare::CellChange;
use serde::{Deserialize, Serialize};

/// The folder under `data/NAME/` that holds an experiment's bisections.
pub const BISECT_FOLDER: &str = "bisect";

/// A commit as a bisection names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commit {
    pub commit: String,
    /// The first line of its message.
    pub subject: String,
}

/// One bisection of an experiment between two commits.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bisection {
    pub experiment: String,
    pub good: Commit,
    pub bad: Commit,
    /// Changes within ± this share count as the same.
    pub threshold: f64,
    /// The cells slower at the bad commit: each step judges these.
    pub cells: Vec<String>,
    /// In the order they were taken; the first tries the bad commit itself.
    pub steps: Vec<Step>,
    pub answer: Answer,
}

/// One commit tried against the good one, in a session of its own.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Step {
    pub tried: Commit,
    /// The session that measured it, under `data/NAME/`.
    pub session: String,
    pub verdict: StepVerdict,
    /// The watched cells' comparisons (every cell's at the first step).
    pub cells: Vec<CellChange>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepVerdict {
    /// A watched cell is slower beyond the threshold: the slowdown is at or before it.
    Slower,
    /// Every watched cell is the same or faster: the slowdown came after it.
    NotSlower,
    /// A watched cell could not be decided: the commit is skipped, as `git bisect skip` does.
    Skipped,
}

impl StepVerdict {
    pub fn words(self) -> &'static str {
        match self {
            StepVerdict::Slower => "slower",
            StepVerdict::NotSlower => "not slower",
            StepVerdict::Skipped => "skipped: inconclusive",
        }
    }
}

/// What the bisection found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "found")]
pub enum Answer {
    /// The first commit where a watched cell is slower.
    Culprit { commit: Commit },
    /// The first slower commit is one of these: the steps between them were inconclusive.
    Ambiguous { commits: Vec<Commit> },
    /// The bad commit is not slower than the good one: nothing to bisect.
    NotSlower,
}

impl Bisection {
    /// The answer in a sentence: "the first slower commit is 1a2b3c4d5e6f (Use a spin lock)".
    pub fn sentence(&self) -> String {
        match &self.answer {
            Answer::Culprit { commit } => format!(
                "the first slower commit is {} ({})",
                short(&commit.commit),
                commit.subject
            ),
            Answer::Ambiguous { commits } => format!(
                "the first slower commit is one of {}: the steps between them were inconclusive",
                commits
                    .iter()
                    .map(|c| format!("{} ({})", short(&c.commit), c.subject))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Answer::NotSlower => format!(
                "{} is not slower than {} beyond ±{:.1}%: nothing to bisect",
                short(&self.bad.commit),
                short(&self.good.commit),
                self.threshold * 100.0
            ),
        }
    }

    /// The file name the bisection is kept under: `GOOD..BAD.json`, each 12 characters.
    pub fn file_name(&self) -> String {
        format!(
            "{}..{}.json",
            short(&self.good.commit),
            short(&self.bad.commit)
        )
    }
}

/// The first 12 characters of a commit.
pub fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}
