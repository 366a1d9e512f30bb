//! The automatic check of a session that randomised the memory layout (`layout =
//! "randomized"`): the primary metric must not depend on the padding of the environment.
//!
//! The environment's size moves a program's initial stack; Mytkowicz et al. (ASPLOS 2009)
//! saw it alone change results by 10% and more. Each cell's valid runs are split at half the
//! range of paddings (2,048 bytes; the plan draws as many runs of a cell in each half, see
//! [`crate::plan::layout::padding`]); the ratio of the median of the runs padded more to the
//! median of those padded less, with its percentile bootstrap interval (Efron & Tibshirani
//! 1993, ch. 13; the resampling every ratio in lab uses), is set against the band
//! `1 ± layout_tolerance` by the shared interval rule. Pass when every cell's interval lies
//! inside the band, fail when some cell's lies wholly outside, inconclusive otherwise.
//!
//! It sees an effect that grows or shrinks with the padding. One that comes and goes with the
//! padding's alignment (within a cache line, say) splits each half alike and is not seen as a
//! difference: randomising turns it from a bias every run shares into spread between runs,
//! which every interval of the session then carries.

use super::MIN_RUNS;
use super::rule::{Rule, worst};
use super::verdict::{CheckResult, Verdict};
use crate::analysis::{Analysis, CellStats, Resampling, RunView, stream_label};
use crate::config::{CheckClass, DEFAULT_LAYOUT_TOLERANCE, Experiment, Metric};
use crate::format::{grouped, percent};
use crate::plan::layout::PAD_SPLIT;
use crate::stats::{self, Interval, Statistic};
use std::collections::HashMap;

/// Units whose values are durations.
const TIME_UNITS: [&str; 6] = ["s", "ms", "us", "µs", "ns", "min"];

/// The check's name, as the report lists it.
pub const LAYOUT: &str = "the primary metric does not depend on the memory layout";

/// One cell's runs with larger paddings set against those with smaller ones.
struct CellEffect {
    label: String,
    ratio: f64,
    interval: Interval,
    verdict: Verdict,
    /// The cell's runs that took part, by id.
    runs: Vec<String>,
}

/// The check's result for a session whose runs recorded a padding; `None` for a session that
/// left the layout as it was (its report does not list the check).
pub fn layout_result(exp: &Experiment, analysis: &Analysis) -> Option<CheckResult> {
    judge(exp, &analysis.cells, &analysis.runs, analysis.resampling)
}

/// [`layout_result`] from the cells' statistics and the runs.
fn judge(
    exp: &Experiment,
    cells: &[CellStats],
    runs: &[RunView],
    resampling: Resampling,
) -> Option<CheckResult> {
    if runs.iter().all(|r| r.env_padding.is_none()) {
        return None;
    }
    let tolerance = exp.layout.map_or(DEFAULT_LAYOUT_TOLERANCE, |l| l.tolerance);
    let Some(metric) = exp.primary_metric() else {
        return Some(not_run("the experiment has no numeric metric"));
    };
    let paddings: HashMap<&str, u32> = runs
        .iter()
        .filter_map(|r| Some((r.id.as_str(), r.env_padding?)))
        .collect();
    let (mut judged, mut unjudged) = (Vec::new(), Vec::new());
    for cell in cells.iter().filter(|c| c.metric == metric.name) {
        let rule = Rule::Within(1.0 - tolerance, 1.0 + tolerance);
        match effect(cell, &paddings, resampling, rule) {
            Ok(e) => judged.push(e),
            Err(why) => unjudged.push(why),
        }
    }
    Some(decided(
        &judged,
        &unjudged,
        metric,
        tolerance,
        resampling.level,
    ))
}

/// The effect of the padding in one cell, or why the cell cannot be judged.
fn effect(
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
    let values = |side: &[&(u32, &str, &Vec<f64>)]| -> Vec<Vec<f64>> {
        side.iter().map(|(_, _, v)| (*v).clone()).collect()
    };
    let mut rng = r.stream(&stream_label(&cell.cell, &cell.metric, "layout"));
    let estimate = stats::ratio_ci(
        &values(&larger),
        &values(&smaller),
        Statistic::Median,
        r.resamples,
        r.level,
        &mut rng,
    )
    .ok_or_else(|| {
        format!(
            "{}: the ratio is undefined (a median is zero or negative)",
            cell.label
        )
    })?;
    Ok(CellEffect {
        label: cell.label.clone(),
        ratio: estimate.ratio,
        verdict: rule.decide(&estimate.interval),
        interval: estimate.interval,
        runs: runs.iter().map(|(_, id, _)| id.to_string()).collect(),
    })
}

/// The verdict over every cell: the worst judged one, and never a pass while some cell could
/// not be judged.
fn decided(
    judged: &[CellEffect],
    unjudged: &[String],
    metric: &Metric,
    tolerance: f64,
    level: f64,
) -> CheckResult {
    if judged.is_empty() {
        return not_run(&unjudged.join("; "));
    }
    let verdict = match worst(judged.iter().map(|e| e.verdict)) {
        Verdict::Pass if !unjudged.is_empty() => Verdict::Inconclusive,
        v => v,
    };
    let reading = match verdict {
        Verdict::Fail => failing_reading(judged, metric),
        Verdict::Inconclusive => open_reading(judged, unjudged, tolerance),
        _ => passing_reading(judged, tolerance),
    };
    let mut result = CheckResult::new(LAYOUT, "automatic", CheckClass::Validity, verdict)
        .evidence(evidence(judged, tolerance, level))
        .reading(reading);
    result.automatic = true;
    if verdict == Verdict::Fail {
        result.runs = judged
            .iter()
            .filter(|e| e.verdict == Verdict::Fail)
            .flat_map(|e| e.runs.iter().cloned())
            .collect();
    }
    result
}

fn not_run(why: &str) -> CheckResult {
    let mut result =
        CheckResult::new(LAYOUT, "automatic", CheckClass::Validity, Verdict::NotRun).reading(why);
    result.automatic = true;
    result
}

/// "x=1: larger/smaller padding 1.079 [1.061, 1.098]; …; 95% CI, tolerance ±2.0%".
fn evidence(judged: &[CellEffect], tolerance: f64, level: f64) -> String {
    let cells: Vec<String> = judged
        .iter()
        .map(|e| {
            format!(
                "{}: larger/smaller padding {}",
                e.label,
                crate::format::ratio_interval_fine(e.ratio, e.interval.lo, e.interval.hi)
            )
        })
        .collect();
    format!(
        "{}; {} CI, tolerance ±{}",
        cells.join("; "),
        crate::format::level(level),
        percent(tolerance)
    )
}

/// "cell x=1: runs with ≥ 2,048 bytes of padding are 7.9% [6.1%, 9.8%] slower".
fn failing_reading(judged: &[CellEffect], metric: &Metric) -> String {
    judged
        .iter()
        .filter(|e| e.verdict == Verdict::Fail)
        .map(|e| {
            format!(
                "cell {}: runs with ≥ {} bytes of padding are {}",
                e.label,
                grouped(u64::from(PAD_SPLIT)),
                sized(e, metric)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// "7.9% [6.1%, 9.8%] slower": the effect's size and direction, its interval in the same
/// direction.
fn sized(e: &CellEffect, metric: &Metric) -> String {
    // A metric in a unit of time reads as speed: a time that grows is slower. Any other (a
    // throughput, a count) is only higher or lower: `better` defaults to higher, so it cannot
    // tell a time declared without it from a throughput.
    let (up, down) = if TIME_UNITS.contains(&metric.unit.as_str()) {
        ("slower", "faster")
    } else {
        ("higher", "lower")
    };
    let (lo, hi) = (e.interval.lo, e.interval.hi);
    if e.ratio >= 1.0 {
        format!(
            "{} [{}, {}] {up}",
            percent(e.ratio - 1.0),
            percent(lo - 1.0),
            percent(hi - 1.0)
        )
    } else {
        format!(
            "{} [{}, {}] {down}",
            percent(1.0 - e.ratio),
            percent(1.0 - hi),
            percent(1.0 - lo)
        )
    }
}

/// "in all 4 cells the runs with larger paddings are within ±2.0% of those with smaller ones".
fn passing_reading(judged: &[CellEffect], tolerance: f64) -> String {
    format!(
        "in {} the runs with larger paddings are within ±{} of those with smaller ones",
        match judged.len() {
            1 => "the one cell".to_string(),
            2 => "both cells".to_string(),
            n => format!("all {n} cells"),
        },
        percent(tolerance)
    )
}

/// Which cells' intervals reach past the band, and which cells had too few runs.
fn open_reading(judged: &[CellEffect], unjudged: &[String], tolerance: f64) -> String {
    let open: Vec<&str> = judged
        .iter()
        .filter(|e| e.verdict == Verdict::Inconclusive)
        .map(|e| e.label.as_str())
        .collect();
    let mut parts = Vec::new();
    if !open.is_empty() {
        let (intervals, reach) = if open.len() == 1 {
            ("interval", "reaches")
        } else {
            ("intervals", "reach")
        };
        parts.push(format!(
            "the {intervals} of {} {reach} past ±{}: more runs would decide",
            open.join(", "),
            percent(tolerance)
        ));
    }
    parts.extend(unjudged.iter().cloned());
    parts.join("; ")
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
