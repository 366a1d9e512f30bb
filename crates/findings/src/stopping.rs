//! Where a sampled session (`repetitions = { min, max }`) stands after a look: what its goal
//! still lacks, the cells that grow together, and what comes next.

use lab_config::format::{level, percent};
use lab_config::plan::CellKey;
use lab_config::{Experiment, Goal};
use serde::{Deserialize, Serialize};

/// Where a sampled session stands after one look.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standing {
    /// 1-based number of the look just taken.
    pub look: u32,
    /// Looks the budget allows.
    pub looks: u32,
    /// Runs per cell this look planned.
    pub runs_per_cell: u32,
    /// The level this look reads its intervals at.
    pub level: f64,
    /// What the goal still lacks, one line each (a check's name, a cell's half-width).
    pub unmet: Vec<String>,
    /// The cells the goal depends on, which grow together.
    pub cells: Vec<CellKey>,
    pub next: Next,
    /// The seconds of runs the open hypotheses likely still need (the slowest of them; one
    /// more runs likely would not decide, all the runs up to `max`), where the goal is every
    /// hypothesis decided (from analysis 3 on).
    #[serde(skip)]
    pub likely_more_s: Option<f64>,
    /// Parallel to `unmet`, where the goal is every hypothesis decided (from analysis 3 on):
    /// what more runs would likely do for each (the judgement's
    /// `stopping::forecast::Outlook::words`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outlooks: Vec<String>,
    /// Each open hypothesis's cells and the seconds of runs it likely still needs, soonest
    /// decided first (from analysis 3 on): where a look of all of them would not fit in the
    /// time budget, the runs go to those likely decided soonest.
    #[serde(skip)]
    pub nearest_first: Vec<OpenHypothesis>,
}

/// One open hypothesis: the cells it reads, and the seconds of runs that would likely decide
/// it (`None` where none likely would).
#[derive(Debug, Clone, PartialEq)]
pub struct OpenHypothesis {
    pub cells: Vec<CellKey>,
    pub likely_s: Option<f64>,
}

/// What comes after a look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "step")]
pub enum Next {
    /// The goal holds at this look.
    GoalMet,
    /// The goal does not hold and the budget of runs per cell is spent.
    BudgetSpent,
    /// The goal does not hold, but no cell it depends on could take more runs.
    NothingToAdd,
    /// The goal does not hold, and the next look would not fit in the time budget left.
    TimeSpent(lab_store::TimeStop),
    /// Bring every cell in [`Standing::cells`] to `runs_per_cell` runs for look `look`.
    More { look: u32, runs_per_cell: u32 },
}

impl Standing {
    /// What the goal still lacks, each with what more runs would likely do for it where that
    /// is known: "A (1.13 [0.903, 1.21] now: about 8 runs per cell, 12 s more, …); B".
    pub fn open_list(&self) -> String {
        let with = |i: usize, name: &String| match self.outlooks.get(i) {
            Some(outlook) if !outlook.is_empty() => format!("{name} ({outlook})"),
            _ => name.clone(),
        };
        let listed: Vec<String> = self
            .unmet
            .iter()
            .enumerate()
            .map(|(i, n)| with(i, n))
            .collect();
        listed.join("; ")
    }

    /// What more runs would likely do for the open hypothesis `name`, where that is known.
    pub fn outlook_of(&self, name: &str) -> Option<String> {
        let i = self.unmet.iter().position(|u| u == name)?;
        self.outlooks.get(i).filter(|o| !o.is_empty()).cloned()
    }

    /// Why sampling stopped (or goes on), in one sentence for the chapter and the terminal.
    pub fn sentence(&self, exp: &Experiment) -> String {
        let goal = match exp.sampling.as_ref().map(|s| &s.goal) {
            Some(Goal::HalfWidth { fraction, metric }) => format!(
                "every cell's interval of the median {metric} within ±{}",
                percent(*fraction)
            ),
            Some(Goal::RevisionsDecided { threshold }) => format!(
                "every cell compared between the revisions faster, slower or the same within ±{}",
                percent(*threshold)
            ),
            _ => "every hypothesis decided".into(),
        };
        let at = match exp.sampling.as_ref().map(|s| &s.goal) {
            Some(Goal::RevisionsDecided { .. }) => format!(
                "look {} of up to {} (up to {} runs per cell and revision, intervals at {} over all compared cells)",
                self.look,
                self.looks,
                self.runs_per_cell,
                level(self.level)
            ),
            _ => format!(
                "look {} of up to {} ({} runs per cell in the {} cells it depends on, intervals at {})",
                self.look,
                self.looks,
                self.runs_per_cell,
                self.cells.len(),
                level(self.level)
            ),
        };
        match &self.next {
            Next::GoalMet => format!("Sampling stopped at {at}: the goal ({goal}) was met."),
            Next::BudgetSpent => format!(
                "Sampling stopped at {at}: the budget was spent before the goal ({goal}) was met; still open: {}.",
                self.open_list()
            ),
            Next::NothingToAdd => format!(
                "Sampling stopped at {at}: the goal ({goal}) is not met, and no cell it depends on can take more runs; still open: {}.",
                self.open_list()
            ),
            Next::TimeSpent(stop) => format!(
                "Sampling stopped at {at}: the time budget ({}) had {} left, and the next look would have taken about {}; still open: {}.",
                lab_config::format::minutes(stop.budget_s),
                lab_config::format::minutes((stop.budget_s - stop.used_s).max(0.0)),
                lab_config::format::minutes(stop.next_look_s),
                self.open_list()
            ),
            Next::More { .. } => format!(
                "Sampling had reached {at} when the session ended; still open: {}.",
                self.open_list()
            ),
        }
    }
}
