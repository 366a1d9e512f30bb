//! After stage 7, in a sampled session (`repetitions = { min, max }`): whether
//! to add runs and to which cells, or why sampling stopped. It reads the goal, the plan, the
//! analysis and the findings; the plan stage makes the runs.
//!
//! Every cell the goal depends on grows together, look by look, along the schedule of
//! [`lab_stats::sequential`], and the session stops at the first look where the goal holds
//! for all of them at once. In a session across revisions the goal is each cell's comparison
//! decided, and only the cells still inconclusive grow. So every interval reported is one of the intervals read at a look,
//! at that look's level, and the union bound over the looks keeps the stated error rate.

use crate::analysis::{Analysis, CellStats};
use crate::checks::{self, Findings};
use crate::compare;
use lab_config::format::percent;
use lab_config::plan::{CellKey, Plan};
use lab_config::{CheckClass, Experiment, Goal, REV_PARAM, Sampling};
use lab_stats::relative_half_width;
use lab_stats::sequential::{look_levels, schedule};

pub mod forecast;

pub use lab_findings::stopping::{Next, OpenHypothesis, Standing};

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
    let Open {
        mut unmet,
        cells,
        likely_more_s,
        outlooks,
        nearest_first,
    } = open(exp, sampling, analysis, findings, levels[index]);
    let time_stop = analysis.manifest.time_stop.filter(|stop| stop.look == look);
    let failing = failing_cells(exp, analysis, &cells);
    let next = if unmet.is_empty() {
        Next::GoalMet
    } else if !failing.is_empty() {
        unmet.extend(failing);
        Next::NothingToAdd
    } else if let Some(stop) = time_stop {
        Next::TimeSpent(stop)
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
        likely_more_s,
        outlooks,
        nearest_first,
    })
}

/// What the goal still needs after a look read at `look_level`, and the cells that can grow.
fn open(
    exp: &Experiment,
    sampling: &Sampling,
    analysis: &Analysis,
    findings: &Findings,
    look_level: f64,
) -> Open {
    match &sampling.goal {
        Goal::RevisionsDecided { threshold } => undecided(exp, analysis, *threshold, look_level),
        // From analysis 3 on, only the cells of the hypotheses still open grow.
        Goal::Decided if analysis.manifest.keeps_disturbed() => {
            open_hypotheses(exp, sampling, analysis, findings)
        }
        _ => Open {
            unmet: unmet(sampling, analysis, findings),
            cells: goal_cells(exp, sampling, &analysis.cell_keys),
            ..Open::default()
        },
    }
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
#[derive(Default)]
struct Open {
    unmet: Vec<String>,
    cells: Vec<CellKey>,
    /// See [`Standing::likely_more_s`].
    likely_more_s: Option<f64>,
    /// See [`Standing::outlooks`].
    outlooks: Vec<String>,
    /// See [`Standing::nearest_first`].
    nearest_first: Vec<OpenHypothesis>,
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
        return Open::default();
    };
    let pairs = compare::revision_pairs(exp, analysis, [base, head], metric);
    let level = pairs.level(look_level);
    let changes = pairs.changes(metric.better, threshold, exp.seed, level);
    let mut open = Open::default();
    for ((b, h, _), change) in pairs.pairs.iter().zip(&changes) {
        if !change.verdict.decided() {
            open.unmet.push(change.line(threshold));
            open.cells.extend([b.cell.clone(), h.cell.clone()]);
        }
    }
    open
}

/// The hypotheses still open and the cells they read, which alone grow: a hypothesis decided
/// (or at its threshold) keeps the look it was decided at.
fn open_hypotheses(
    exp: &Experiment,
    sampling: &Sampling,
    analysis: &Analysis,
    findings: &Findings,
) -> Open {
    let max = sampling.max;
    let mut open = Open {
        likely_more_s: Some(0.0),
        ..Open::default()
    };
    let undecided = findings
        .checks
        .iter()
        .filter(|c| c.class == CheckClass::Hypothesis && !c.verdict.decided());
    for check in undecided {
        let Some(spec) = exp.checks.iter().find(|s| s.name == check.name) else {
            continue;
        };
        let read = checks::cells_read(spec, &analysis.cell_keys);
        let (now, round_s) = forecast::of_cells(&read, analysis);
        let margin = match &spec.kind {
            lab_config::CheckKind::Agree { margin, .. } => Some(*margin),
            kind => kind.threshold_margin(),
        };
        let outlook = forecast::outlook(check, now, round_s, max, margin);
        open.unmet.push(check.name.clone());
        // A check not run says why in the cells that failed, listed after.
        let said = check.verdict != checks::Verdict::NotRun;
        open.outlooks
            .push(if said { outlook.words } else { String::new() });
        // One that more runs likely will not decide keeps the session going to `max`.
        let session_s = outlook
            .seconds
            .unwrap_or(f64::from(max.saturating_sub(now)) * round_s);
        open.likely_more_s = open.likely_more_s.map(|most| most.max(session_s));
        open.nearest_first.push(OpenHypothesis {
            cells: read.clone(),
            likely_s: outlook.seconds,
        });
        for key in read {
            if !open.cells.contains(&key) {
                open.cells.push(key);
            }
        }
    }
    // Those likely decided soonest first; those no number of runs likely decides last.
    open.nearest_first.sort_by(|a, b| {
        a.likely_s
            .unwrap_or(f64::INFINITY)
            .total_cmp(&b.likely_s.unwrap_or(f64::INFINITY))
    });
    if open.unmet.is_empty() {
        // The goal is met: the cells it depended on, which nothing adds to.
        open.cells = goal_cells(exp, sampling, &analysis.cell_keys);
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
            .filter(|c| !c.verdict.decided())
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

#[cfg(test)]
#[path = "allocation_tests.rs"]
mod allocation_tests;
