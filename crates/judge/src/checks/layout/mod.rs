//! The automatic check of a session that randomised the memory layout (`layout =
//! "randomized"`): the primary metric must depend neither on the padding of the environment
//! nor on where within a cache line the heap lands.
//!
//! The environment's size moves a program's initial stack; Mytkowicz et al. (ASPLOS 2009)
//! saw it alone change results by 10% and more. Each cell's valid runs are split at half the
//! range of paddings (2,048 bytes; the plan draws as many runs of a cell in each half, see
//! [`lab_config::plan::layout::padding`]); the ratio of the median of the runs padded more to the
//! median of those padded less, with its percentile bootstrap interval (Efron & Tibshirani
//! 1993, ch. 13; the resampling every ratio in lab uses), is set against the band
//! `1 ± layout_tolerance` by the shared interval rule. The runs whose heap was shifted are set
//! apart by the position the shift gives the heap within a cache line, each position against
//! the others ([`heap`]). Pass when every comparison's interval lies inside the band, fail
//! when one lies wholly outside, inconclusive otherwise.
//!
//! The padding's halves see an effect that grows or shrinks with the padding; one that comes
//! and goes with the stack's alignment splits each half alike and is not seen as a difference:
//! randomising turns it from a bias every run shares into spread between runs, which every
//! interval of the session then carries. The heap's positions see the alignment itself.

mod effect;
mod heap;
mod reading;

use super::MIN_RUNS;
use super::rule::{Rule, worst};
use crate::analysis::{Analysis, CellStats, Resampling, RunView};
use effect::{CellEffect, Sides, Split, compare};
use lab_config::format::grouped;
use lab_config::plan::layout::PAD_SPLIT;
use lab_config::{CheckClass, DEFAULT_LAYOUT_TOLERANCE, Experiment};
use lab_findings::checks::{CheckResult, Verdict};
use std::collections::HashMap;

/// The check's name, as the report lists it.
pub const LAYOUT: &str = "the primary metric does not depend on the memory layout";

/// The check's short name, as lab.toml turns it off.
pub const KEY: &str = "layout";

/// The check's result for a session whose runs recorded a padding; `None` for a session that
/// left the layout as it was (its report does not list the check).
pub(super) fn layout_result(exp: &Experiment, analysis: &Analysis) -> Option<CheckResult> {
    let session = Session {
        cells: &analysis.cells,
        runs: &analysis.runs,
        resampling: analysis.resampling,
        unshifted: &analysis.manifest.heap_unshifted,
    };
    judge(exp, &session)
}

/// What the check reads of a session.
struct Session<'a> {
    cells: &'a [CellStats],
    runs: &'a [RunView],
    resampling: Resampling,
    /// Why some runs' heaps were not shifted (the manifest's `heap_unshifted`).
    unshifted: &'a [String],
}

/// [`layout_result`] from the cells' statistics and the runs.
fn judge(exp: &Experiment, s: &Session<'_>) -> Option<CheckResult> {
    if s.runs.iter().all(|r| r.env_padding.is_none()) {
        return None;
    }
    let tolerance = exp.layout.map_or(DEFAULT_LAYOUT_TOLERANCE, |l| l.tolerance);
    let Some(metric) = exp.primary_metric() else {
        return Some(reading::not_run("the experiment has no numeric metric"));
    };
    let by_id = |field: fn(&RunView) -> Option<u32>| -> HashMap<&str, u32> {
        s.runs
            .iter()
            .filter_map(|r| Some((r.id.as_str(), field(r)?)))
            .collect()
    };
    let (paddings, shifts) = (by_id(|r| r.env_padding), by_id(|r| r.heap_shift));
    let rule = Rule::Within(1.0 - tolerance, 1.0 + tolerance);
    let (mut judged, mut unjudged) = (Vec::new(), Vec::new());
    for cell in s.cells.iter().filter(|c| c.metric == metric.name) {
        match padding_effect(cell, &paddings, s.resampling, rule) {
            Ok(e) => judged.push(e),
            Err(why) => unjudged.push(why),
        }
        match heap::effects(cell, (&shifts, &paddings), (s.resampling, rule)) {
            Ok(e) => judged.extend(e),
            Err(why) => unjudged.push(why),
        }
    }
    let context = reading::Context {
        metric,
        tolerance,
        level: s.resampling.level,
        unshifted: s.unshifted,
    };
    Some(decided(&judged, &unjudged, &context))
}

/// The effect of the padding in one cell, or why the cell cannot be judged.
fn padding_effect(
    cell: &CellStats,
    paddings: &HashMap<&str, u32>,
    r: Resampling,
    rule: Rule,
) -> Result<CellEffect, String> {
    let runs: Vec<(u32, &str, &Vec<f64>)> = cell
        .run_ids
        .iter()
        .zip(&cell.runs)
        .filter_map(|(id, values)| Some((*paddings.get(id.as_str())?, id.as_str(), values)))
        .collect();
    let (larger, smaller): (Vec<_>, Vec<_>) = runs.iter().partition(|(p, _, _)| *p >= PAD_SPLIT);
    if larger.len().min(smaller.len()) < MIN_RUNS {
        return Err(format!(
            "{} has {} valid runs padded with fewer than {} bytes and {} with more; {MIN_RUNS} of each are needed",
            cell.label,
            smaller.len(),
            grouped(u64::from(PAD_SPLIT)),
            larger.len()
        ));
    }
    let sides = Sides {
        these: larger.iter().map(|(_, _, v)| *v).collect(),
        others: smaller.iter().map(|(_, _, v)| *v).collect(),
        runs: runs.iter().map(|(_, id, _)| id.to_string()).collect(),
    };
    compare(cell, Split::Padding, sides, (r, r.level, "layout"), rule)
}

/// The verdict over every comparison: the worst judged one, and never a pass while some cell
/// could not be judged.
fn decided(judged: &[CellEffect], unjudged: &[String], cx: &reading::Context<'_>) -> CheckResult {
    if judged.is_empty() {
        return reading::not_run(&reading::with_unshifted(unjudged.join("; "), cx));
    }
    let verdict = match worst(judged.iter().map(|e| e.verdict)) {
        Verdict::Pass if !unjudged.is_empty() => Verdict::Inconclusive,
        v => v,
    };
    let said = match verdict {
        Verdict::Fail => reading::failing(judged, cx.metric),
        Verdict::Inconclusive => reading::open(judged, unjudged, cx.tolerance),
        _ => reading::passing(judged, cx.tolerance),
    };
    let mut result = CheckResult::new(LAYOUT, "automatic", CheckClass::Validity, verdict)
        .evidence(reading::evidence(judged, cx))
        .reading(reading::with_unshifted(said, cx));
    result.automatic = true;
    if verdict == Verdict::Fail {
        // A cell's heap positions each list all its runs: each run is named once.
        let mut named = std::collections::HashSet::new();
        result.runs = judged
            .iter()
            .filter(|e| e.verdict == Verdict::Fail)
            .flat_map(|e| e.runs.iter())
            .filter(|id| named.insert(id.as_str()))
            .cloned()
            .collect();
    }
    result
}

#[cfg(test)]
mod tests;
