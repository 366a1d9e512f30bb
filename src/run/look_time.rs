//! The time decisions of a sampled session between two looks: which cells the next look grows
//! within the time budget, when the session will likely end, and how progress says so.

use super::estimate;
use lab_config::Experiment;
use lab_config::plan::{self, CellKey, PlannedRun};
use lab_exec::Progress;
use lab_judge::stopping::{self, Next};
use lab_store as store;

/// Says what look `standing` left open and what the next look, of `added` runs, adds; the
/// session will likely end `likely_s` from now.
pub(super) fn say_look(
    progress: &Progress,
    standing: &stopping::Standing,
    added: usize,
    next: &str,
    likely_s: f64,
) {
    progress.planned_more(
        added,
        &format!(
            "look {} ({} runs per cell, intervals at {}) leaves {} open: {}; {next}",
            standing.look,
            standing.runs_per_cell,
            lab_config::format::level(standing.level),
            standing.unmet.len(),
            standing.open_list(),
        ),
    );
    progress.expect(
        standing.unmet.len(),
        std::time::Duration::from_secs_f64(likely_s),
    );
}

/// What a look's time decisions read, once per look: the experiment and its plan so far, the
/// standing after the look (whose next step is more runs), the time budget and the seconds
/// its runs have taken, and each cell's mean run time so far.
pub(super) struct LookTime<'a> {
    pub(super) exp: &'a Experiment,
    pub(super) planned: &'a [PlannedRun],
    pub(super) standing: &'a stopping::Standing,
    pub(super) budget_s: Option<f64>,
    pub(super) used_s: f64,
    pub(super) measured: std::collections::BTreeMap<CellKey, f64>,
}

impl LookTime<'_> {
    /// The next look's runs for `cells`.
    pub(super) fn coming(&self, cells: &[CellKey]) -> Vec<PlannedRun> {
        match self.standing.next {
            Next::More {
                look,
                runs_per_cell,
            } => plan::look_runs(self.exp, self.planned, look, runs_per_cell, cells),
            _ => Vec::new(),
        }
    }

    /// The seconds the runs `coming` will likely take.
    fn seconds(&self, coming: &[PlannedRun]) -> f64 {
        estimate::expected_seconds(self.exp, coming, &self.measured)
    }

    /// Where the runs `coming` would carry the session's runs past its time budget: why no
    /// look follows this one.
    fn over_budget(&self, coming: &[PlannedRun]) -> Option<store::TimeStop> {
        let budget = self.budget_s?;
        let next_look = self.seconds(coming);
        (self.used_s + next_look > budget).then_some(store::TimeStop {
            look: self.standing.look,
            budget_s: budget,
            used_s: self.used_s,
            next_look_s: next_look,
        })
    }

    /// The cells the next look grows within the time budget: every open hypothesis's, else
    /// those of the most open hypotheses, likely decided soonest first, whose look fits (the
    /// runs go where they decide the most per second), with how many; else why no look
    /// follows.
    pub(super) fn cells_within_budget(
        &self,
    ) -> std::result::Result<(Vec<CellKey>, Option<usize>), store::TimeStop> {
        let standing = self.standing;
        let Some(stop) = self.over_budget(&self.coming(&standing.cells)) else {
            return Ok((standing.cells.clone(), None));
        };
        let fits = (1..standing.nearest_first.len()).rev().find_map(|k| {
            let mut cells: Vec<CellKey> = Vec::new();
            for key in standing.nearest_first[..k].iter().flat_map(|h| &h.cells) {
                if !cells.contains(key) {
                    cells.push(key.clone());
                }
            }
            let coming = self.coming(&cells);
            (!coming.is_empty() && self.over_budget(&coming).is_none()).then_some((cells, Some(k)))
        });
        fits.ok_or(stop)
    }

    /// When the session's runs will likely end, in seconds from now, and in words with the
    /// latest: "ends in about 4 min 10 s, at most 8 min 30 s (the budget)". Likely: the next
    /// look's runs `coming`, or what the open hypotheses likely still need if that is more;
    /// at most: the budget.
    pub(super) fn outlook(&self, coming: &[PlannedRun]) -> (f64, String) {
        let next_look = self.seconds(coming);
        let likely = self
            .standing
            .likely_more_s
            .map_or(next_look, |s| s.max(next_look));
        let left = self
            .budget_s
            .map_or(f64::INFINITY, |b| (b - self.used_s).max(0.0));
        let latest = match self.budget_s {
            Some(b) => format!(
                "at most {} (the budget)",
                lab_config::format::minutes(b - self.used_s)
            ),
            None => "no time budget".to_string(),
        };
        let likely = likely.min(left);
        (
            likely,
            format!(
                "ends in about {}, {latest}",
                lab_config::format::minutes(likely)
            ),
        )
    }
}
