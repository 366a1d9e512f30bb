//! After stage 7, in a sampled session (`repetitions = { min, max }`): whether
//! to add runs and to which cells, or why sampling stopped. It reads the goal, the plan, the
//! analysis and the findings; the plan stage makes the runs.
//!
//! Every cell the goal depends on grows together, look by look, along the schedule of
//! [`crate::stats::sequential`], and the session stops at the first look where the goal holds
//! for all of them at once. In a session across revisions the goal is each cell's comparison
//! decided, and only the cells still inconclusive grow. So every interval reported is one of the intervals read at a look,
//! at that look's level, and the union bound over the looks keeps the stated error rate.

use crate::analysis::{Analysis, CellStats};
use crate::checks::{self, Findings, Verdict};
use crate::compare;
use crate::config::{CheckClass, Experiment, Goal, REV_PARAM, Sampling};
use crate::format::{level, percent};
use crate::plan::{CellKey, Plan};
use crate::stats::relative_half_width;
use crate::stats::sequential::{look_levels, schedule};
use serde::Serialize;

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
}

/// What comes after a look.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "step")]
pub enum Next {
    /// The goal holds at this look.
    GoalMet,
    /// The goal does not hold and the budget of runs per cell is spent.
    BudgetSpent,
    /// The goal does not hold, but no cell it depends on could take more runs.
    NothingToAdd,
    /// Bring every cell in [`Standing::cells`] to `runs_per_cell` runs for look `look`.
    More { look: u32, runs_per_cell: u32 },
}

/// The standing of a sampled session after its latest look; `None` for a fixed one.
pub fn standing(
    exp: &Experiment,
    plan: &Plan,
    analysis: &Analysis,
    findings: &Findings,
) -> Option<Standing> {
    let sampling = exp.sampling.as_ref()?;
    let looks = schedule(exp.repetitions, sampling.max);
    let levels = look_levels(crate::analysis::LEVEL, &looks);
    let look = plan.runs.iter().map(|r| r.look).max().unwrap_or(1).max(1);
    let index = (look as usize - 1).min(looks.len() - 1);
    let Open { mut unmet, cells } = match &sampling.goal {
        Goal::RevisionsDecided { threshold } => undecided(exp, analysis, *threshold, levels[index]),
        _ => Open {
            unmet: unmet(sampling, analysis, findings),
            cells: goal_cells(exp, sampling, &analysis.cell_keys),
        },
    };
    let failing = failing_cells(exp, analysis, &cells);
    let next = if unmet.is_empty() {
        Next::GoalMet
    } else if !failing.is_empty() {
        unmet.extend(failing);
        Next::NothingToAdd
    } else if index + 1 >= looks.len() {
        Next::BudgetSpent
    } else if cells.is_empty() {
        Next::NothingToAdd
    } else {
        Next::More {
            look: look + 1,
            runs_per_cell: looks[index + 1],
        }
    };
    Some(Standing {
        look,
        looks: looks.len() as u32,
        runs_per_cell: looks[index],
        level: levels[index],
        unmet,
        cells,
        next,
    })
}

/// The cells among `cells` none of whose runs gave a valid value of the primary metric, for a
/// reason more runs would not change (they failed, not the machine): "every run of fast
/// n=1 failed (exit 3)". More runs cannot decide what such a cell takes part in.
fn failing_cells(exp: &Experiment, analysis: &Analysis, cells: &[CellKey]) -> Vec<String> {
    let Some(metric) = exp.primary_metric() else {
        return Vec::new();
    };
    analysis
        .cells
        .iter()
        .filter(|c| c.metric == metric.name && cells.contains(&c.cell))
        .filter(|c| c.n == 0 && c.invalid_runs > 0 && c.busy_runs == 0)
        .map(|c| {
            let why = analysis.first_problem(&c.cell).unwrap_or_default();
            format!("every run of {} failed ({why})", c.label)
        })
        .collect()
}

/// What a look leaves open, and the cells that grow for the next look.
struct Open {
    unmet: Vec<String>,
    cells: Vec<CellKey>,
}

/// A session across revisions at a look read at `look_level`: each compared cell's line while
/// it is inconclusive (or has too few runs), and both revisions' cells of it, which grow. The
/// Bonferroni share of the look's level over the compared cells keeps all of them, over all
/// looks, within the session's error rate.
fn undecided(exp: &Experiment, analysis: &Analysis, threshold: f64, look_level: f64) -> Open {
    let revisions: Vec<String> = exp
        .param(REV_PARAM)
        .map(|p| p.values.iter().map(ToString::to_string).collect())
        .unwrap_or_default();
    let (Some(metric), [base, head]) = (exp.primary_metric(), revisions.as_slice()) else {
        return Open {
            unmet: Vec::new(),
            cells: Vec::new(),
        };
    };
    let pairs = compare::revision_pairs(exp, analysis, [base, head], metric);
    let level = pairs.level(look_level);
    let changes = pairs.changes(metric.better, threshold, exp.seed, level);
    let mut open = Open {
        unmet: Vec::new(),
        cells: Vec::new(),
    };
    for ((b, h, _), change) in pairs.pairs.iter().zip(&changes) {
        if !change.verdict.decided() {
            open.unmet.push(change.line(threshold));
            open.cells.extend([b.cell.clone(), h.cell.clone()]);
        }
    }
    open
}

/// The cells of `keys` the goal depends on: those the hypothesis checks read, every cell for
/// a precision goal, or every cell of a session across revisions (at most, when none is
/// decided).
pub fn goal_cells(exp: &Experiment, sampling: &Sampling, keys: &[CellKey]) -> Vec<CellKey> {
    match &sampling.goal {
        Goal::Decided => keys
            .iter()
            .filter(|k| {
                exp.checks
                    .iter()
                    .filter(|c| c.class == CheckClass::Hypothesis)
                    .any(|c| checks::cells_read(c, keys).contains(k))
            })
            .cloned()
            .collect(),
        Goal::HalfWidth { .. } | Goal::RevisionsDecided { .. } => keys.to_vec(),
    }
}

/// What the goal still lacks.
fn unmet(sampling: &Sampling, analysis: &Analysis, findings: &Findings) -> Vec<String> {
    match &sampling.goal {
        Goal::Decided => findings
            .checks
            .iter()
            .filter(|c| c.class == CheckClass::Hypothesis)
            .filter(|c| !matches!(c.verdict, Verdict::Pass | Verdict::Fail))
            .map(|c| c.name.clone())
            .collect(),
        Goal::HalfWidth { fraction, metric } => analysis
            .cells
            .iter()
            .filter(|c| c.metric == *metric)
            .filter_map(|c| too_wide(c, *fraction))
            .collect(),
        Goal::RevisionsDecided { .. } => Vec::new(),
    }
}

/// "fair threads=4: ±7.1% (needs ±2.0%)", when a cell's interval of the median is wider
/// than ± `fraction` of it or missing.
fn too_wide(cell: &CellStats, fraction: f64) -> Option<String> {
    let median = cell.median()?;
    let Some(ci) = &cell.median_ci else {
        return Some(format!("{}: no interval yet", cell.label));
    };
    let half = relative_half_width(ci.lo, ci.hi, median);
    (half > fraction).then(|| {
        format!(
            "{}: ±{} (needs ±{})",
            cell.label,
            percent(half),
            percent(fraction)
        )
    })
}

impl Standing {
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
                self.unmet.join("; ")
            ),
            Next::NothingToAdd => format!(
                "Sampling stopped at {at}: the goal ({goal}) is not met, and no cell it depends on can take more runs; still open: {}.",
                self.unmet.join("; ")
            ),
            Next::More { .. } => format!(
                "Sampling had reached {at} when the session ended; still open: {}.",
                self.unmet.join("; ")
            ),
        }
    }
}
