//! Stage 6: every declared and automatic check → pass | fail | inconclusive | not run.
//! Validity checks come first; a failed one marks every hypothesis verdict untrusted.

pub mod automatic;
mod compare;
mod duration;
mod verdict;

pub use compare::decide;
pub use verdict::{CheckResult, RatioEvidence, Verdict};

use crate::analysis::{CellStats, Resampling, RunView};
use crate::config::{CheckClass, CheckKind, CheckSpec, Experiment};

/// Fewest valid runs per cell for a check that compares cells.
pub const MIN_RUNS: usize = 3;

/// The automatic checks, one result each, judged on every finished run (warm-ups included).
pub fn automatic_results(runs: &[RunView]) -> Vec<CheckResult> {
    let names = ["every run exited normally", "no run timed out", "no run spanned a system suspend", "every run reported every metric"];
    names.iter().map(|name| automatic_result(name, runs)).collect()
}

fn automatic_result(name: &str, runs: &[RunView]) -> CheckResult {
    let failing: Vec<(&RunView, &String)> = runs
        .iter()
        .flat_map(|r| r.failed_checks.iter().zip(&r.problems).filter(|(c, _)| c.as_str() == name).map(move |(_, p)| (r, p)))
        .collect();
    let verdict = match (runs.is_empty(), failing.is_empty()) {
        (true, _) => Verdict::NotRun,
        (false, true) => Verdict::Pass,
        (false, false) => Verdict::Fail,
    };
    let mut result = CheckResult::new(name, "automatic", CheckClass::Validity, verdict);
    result.automatic = true;
    result.evidence = format!("{} of {} runs", failing.len(), runs.len());
    result.reading = match failing.first() {
        None => format!("all {} runs", runs.len()),
        Some((run, problem)) if failing.len() == 1 => format!("run {}: {problem}", run.id),
        Some((run, problem)) => format!("run {}: {problem}, and {} more", run.id, failing.len() - 1),
    };
    result.runs = failing.iter().map(|(r, _)| r.id.clone()).collect();
    result
}

/// Applies the checks that exclude runs (duration), returning their results in spec order.
pub fn exclusion_results(exp: &Experiment, runs: &mut [RunView]) -> Vec<(usize, CheckResult)> {
    exp.checks
        .iter()
        .enumerate()
        .filter_map(|(i, spec)| match &spec.kind {
            CheckKind::Duration { expect, tolerance, metric } => Some((i, duration::check(spec, expect, *tolerance, metric.as_deref(), runs))),
            _ => None,
        })
        .collect()
}

/// Decides every check that works on cell statistics, in spec order.
pub fn cell_results(exp: &Experiment, cells: &[CellStats], r: Resampling) -> Vec<(usize, CheckResult)> {
    exp.checks.iter().enumerate().filter_map(|(i, spec)| cell_check(exp, spec, cells, r).map(|c| (i, c))).collect()
}

fn cell_check(exp: &Experiment, spec: &CheckSpec, cells: &[CellStats], r: Resampling) -> Option<CheckResult> {
    let unit = |m: &str| exp.metric(m).map_or(String::new(), |m| m.unit.clone());
    match &spec.kind {
        CheckKind::Duration { .. } => None,
        CheckKind::Compare { metric, a, b, op, factor } => Some(compare::check(spec, metric, a, b, *op, *factor, cells, r, &unit(metric))),
        _ => Some(CheckResult::new(&spec.name, kind_name(&spec.kind), spec.class, Verdict::NotRun).reading("this kind of check is not evaluated yet")),
    }
}

/// The name of a check kind as written in lab.toml.
pub fn kind_name(kind: &CheckKind) -> &'static str {
    match kind {
        CheckKind::Duration { .. } => "duration",
        CheckKind::Compare { .. } => "compare",
        CheckKind::Ceiling { .. } => "ceiling",
        CheckKind::Agree { .. } => "agree",
        CheckKind::Checksum { .. } => "checksum",
        CheckKind::Distinct { .. } => "distinct",
        CheckKind::RunOrder { .. } => "order",
        CheckKind::Stable { .. } => "stable",
        CheckKind::Scaling { .. } => "scaling",
    }
}

/// Orders results (automatic, then declared validity, then hypotheses) and marks hypotheses
/// untrusted when any validity check failed.
pub fn assemble(automatic: Vec<CheckResult>, mut declared: Vec<(usize, CheckResult)>) -> Vec<CheckResult> {
    declared.sort_by_key(|(i, c)| (c.class, *i));
    let mut all: Vec<CheckResult> = automatic.into_iter().chain(declared.into_iter().map(|(_, c)| c)).collect();
    let invalid = all.iter().any(|c| c.class == CheckClass::Validity && c.verdict == Verdict::Fail);
    for c in all.iter_mut().filter(|c| c.class == CheckClass::Hypothesis) {
        c.untrusted = invalid;
    }
    all
}
