//! Stage 7: every declared and automatic check → pass | fail | inconclusive | not run.
//! Validity checks come first; a failed one marks every hypothesis verdict untrusted.

mod agree;
mod ceiling;
mod checksum;
mod compare;
mod distinct;
mod duration;
mod multiplicity;
mod order;
mod scaling;
mod series;
mod stable;
mod steady;
mod verdict;

pub use compare::{decide, ratio_of};
pub use multiplicity::multiplicity;
pub use verdict::{CheckResult, RatioEvidence, Tally, Verdict};

use crate::analysis::{Analysis, CellStats, Resampling, RunView, selects};
use crate::config::{CheckClass, CheckKind, CheckSpec, Experiment};
use crate::plan::CellKey;
use crate::store::Calibration;
use crate::validity::{DurationJudgement, automatic};
use serde::Serialize;

/// Every verdict on one analysed session, in report order, and the multiplicity note.
#[derive(Debug, Clone, Serialize)]
pub struct Findings {
    pub checks: Vec<CheckResult>,
    /// When several hypothesis checks were decided: how many could have passed by chance.
    pub multiplicity: Option<String>,
}

/// The name of the check that fails when a run changed the session's own files.
pub const INTACT: &str = "no run changed the session's files";

/// Decides every automatic and declared check from the validity judgement (the runs, which the
/// analysis holds, and the declared duration rules' findings) and the analysis.
pub fn evaluate(
    exp: &Experiment,
    durations: &[DurationJudgement],
    analysis: &Analysis,
) -> Findings {
    let mut automatic = automatic_results(
        &analysis.runs,
        analysis.manifest.calibration.as_ref(),
        analysis.manifest.imported.as_ref().map(|i| i.tool.as_str()),
    );
    if analysis.manifest.jobs.is_none() && analysis.runs.iter().all(|r| r.overlapped.is_empty()) {
        // A session run one run at a time (no `--jobs`) has nothing for this check to judge,
        // and its report does not list it.
        automatic.retain(|c| c.name != automatic::APART);
    }
    if let Some(damage) = &analysis.manifest.damaged {
        let mut intact = CheckResult::new(INTACT, "automatic", CheckClass::Validity, Verdict::Fail)
            .reading(damage);
        intact.automatic = true;
        automatic.push(intact);
    }
    let mut declared: Vec<(usize, CheckResult)> = durations
        .iter()
        .filter_map(|d| {
            let spec = exp.checks.get(d.spec_index)?;
            Some((d.spec_index, duration::check(spec, d)))
        })
        .collect();
    declared.extend(cell_results(&Inputs {
        exp,
        cells: &analysis.cells,
        runs: &analysis.runs,
        resampling: analysis.resampling,
    }));
    let mut checks = assemble(automatic, declared);
    for check in &mut checks {
        check.cells = cells_of(exp, analysis, &check.runs);
    }
    Findings {
        multiplicity: multiplicity(&checks),
        checks,
    }
}

/// Whether a valid run repeats `run` (or the run `run` itself repeats): a busy run's
/// measurement was taken again.
fn replaced_by_valid_rerun(run: &RunView, runs: &[RunView]) -> bool {
    let original = run.repeats.as_deref().unwrap_or(&run.id);
    runs.iter()
        .any(|r| r.is_valid() && r.repeats.as_deref() == Some(original))
}

/// "; the busiest run, r0042, shared its CPUs 12.0% with others (judged: 140 runs)".
fn busiest(runs: &[RunView]) -> String {
    let judged: Vec<&RunView> = runs.iter().filter(|r| r.busy_share.is_some()).collect();
    let Some(top) = judged.iter().max_by(|a, b| {
        a.busy_share
            .partial_cmp(&b.busy_share)
            .unwrap_or(std::cmp::Ordering::Equal)
    }) else {
        return String::new();
    };
    format!(
        "; the busiest run, {}, shared its CPUs {} with others ({} of {} runs long enough to judge)",
        top.id,
        crate::format::percent(top.busy_share.unwrap_or(0.0)),
        judged.len(),
        runs.len()
    )
}

/// The labels of the cells `runs` belong to, each once, in plan order.
fn cells_of(exp: &Experiment, analysis: &Analysis, runs: &[String]) -> Vec<String> {
    let wanted: std::collections::BTreeSet<&str> = runs.iter().map(String::as_str).collect();
    let touched: std::collections::BTreeSet<&crate::plan::CellKey> = analysis
        .runs
        .iter()
        .filter(|r| wanted.contains(r.id.as_str()))
        .map(|r| &r.cell)
        .collect();
    analysis
        .cell_keys
        .iter()
        .filter(|k| touched.contains(k))
        .map(|k| crate::analysis::cell_label(exp, k))
        .collect()
}

/// A 95% interval, for the decision-rule tests of the checks.
#[cfg(test)]
pub(crate) fn interval(lo: f64, hi: f64) -> crate::stats::Interval {
    crate::stats::Interval {
        lo,
        hi,
        level: 0.95,
    }
}

/// Fewest valid runs per cell for a check that compares cells: the analysis's interval floor.
pub const MIN_RUNS: usize = crate::analysis::MIN_RUNS;

/// The automatic checks, one result each, judged on every finished run (warm-ups included).
/// `calibration` is the session's; without one, runs cannot be judged too short to time.
pub fn automatic_results(
    runs: &[RunView],
    calibration: Option<&Calibration>,
    imported: Option<&str>,
) -> Vec<CheckResult> {
    automatic::CHECK_NAMES
        .iter()
        .map(|name| match (*name, imported) {
            (automatic::REPORTED | automatic::CONFIG_ECHO, _) | (_, None) => {
                judged_automatic(name, runs, calibration)
            }
            (_, Some(tool)) => automatic_not_run(
                name,
                &format!("lab did not run these processes: {tool} measured them, and its files do not record this"),
            ),
        })
        .collect()
}

/// An automatic check judged on runs lab ran itself, or not run where the record lacks what
/// it needs.
fn judged_automatic(
    name: &'static str,
    runs: &[RunView],
    calibration: Option<&Calibration>,
) -> CheckResult {
    match name {
        automatic::TOO_SHORT if calibration.is_none() => automatic_not_run(
            name,
            "the session recorded no calibration of spawn cost and timer",
        ),
        automatic::CONFIG_ECHO if !runs.iter().any(|r| r.echoed_config) => automatic_not_run(
            name,
            "no run printed a `config` object; print {\"config\": {...}} to have it checked",
        ),
        automatic::QUIET if !runs.iter().any(|r| r.busy_share.is_some()) => automatic_not_run(
            name,
            "no run recorded what else the machine did (sessions before lab measured it, or runs under 0.2 CPU-seconds)",
        ),
        automatic::APART if runs.iter().all(|r| r.overlapped.is_empty()) => automatic_not_run(
            name,
            "every run executed alone, so none could share a CPU with another",
        ),
        _ => automatic_result(name, runs, calibration),
    }
}

fn automatic_not_run(name: &str, why: &str) -> CheckResult {
    let mut result =
        CheckResult::new(name, "automatic", CheckClass::Validity, Verdict::NotRun).reading(why);
    result.automatic = true;
    result
}

fn automatic_result(
    name: &str,
    runs: &[RunView],
    calibration: Option<&Calibration>,
) -> CheckResult {
    let failing: Vec<(&RunView, &String)> = runs
        .iter()
        .flat_map(|r| {
            r.failed_checks
                .iter()
                .zip(&r.problems)
                .filter(|(c, _)| c.as_str() == name)
                .map(move |(_, p)| (r, p))
        })
        .collect();
    let (failing, replaced) = if name == automatic::QUIET {
        failing
            .into_iter()
            .partition(|(r, _)| !replaced_by_valid_rerun(r, runs))
    } else {
        (failing, Vec::new())
    };
    let verdict = match (runs.is_empty(), failing.is_empty()) {
        (true, _) => Verdict::NotRun,
        (false, true) => Verdict::Pass,
        (false, false) => Verdict::Fail,
    };
    let mut result = CheckResult::new(name, "automatic", CheckClass::Validity, verdict);
    result.automatic = true;
    result.evidence = match failing.len() {
        0 => format!("none of {} runs failed", runs.len()),
        k => format!("{k} of {} runs failed", runs.len()),
    };
    if let Some(c) = calibration.filter(|_| name == automatic::TOO_SHORT) {
        result
            .evidence
            .push_str(&format!("; {}", automatic::describe_floor(c)));
        let shortest = runs
            .iter()
            .filter(|r| r.problems.is_empty())
            .map(|r| (r.wall_s * 1e9) as u64)
            .min();
        if let Some(shortest) = shortest {
            result.evidence.push_str(&format!(
                "; spawn noise is {} of the shortest valid run ({})",
                crate::format::percent(automatic::spawn_noise_share(shortest, c)),
                crate::format::seconds(shortest as f64 / 1e9)
            ));
        }
    }
    if name == automatic::QUIET {
        result.evidence.push_str(&busiest(runs));
    }
    if name == automatic::CONFIG_ECHO {
        result.evidence.push_str(&format!(
            "; {} runs echoed a configuration",
            runs.iter().filter(|r| r.echoed_config).count()
        ));
    }
    result.reading = match failing.first() {
        None if !replaced.is_empty() => format!(
            "{} run{} on a busy machine ran again on a quiet one; the quiet runs are the measurements",
            replaced.len(),
            if replaced.len() == 1 { "" } else { "s" }
        ),
        None => format!("all {} runs", runs.len()),
        Some((run, problem)) if failing.len() == 1 => format!("run {}: {problem}", run.id),
        Some((run, problem)) => {
            format!("run {}: {problem}, and {} more", run.id, failing.len() - 1)
        }
    };
    result.runs = failing.iter().map(|(r, _)| r.id.clone()).collect();
    result.runs.dedup();
    result
}

/// What the declared checks that judge statistics look at.
pub struct Inputs<'a> {
    pub exp: &'a Experiment,
    pub cells: &'a [CellStats],
    /// Every finished run in execution order, exclusions applied.
    pub runs: &'a [RunView],
    pub resampling: Resampling,
}

/// Decides every check that works on cell statistics or runs, in spec order.
pub fn cell_results(inputs: &Inputs) -> Vec<(usize, CheckResult)> {
    inputs
        .exp
        .checks
        .iter()
        .enumerate()
        .filter_map(|(i, spec)| cell_check(inputs, spec).map(|c| (i, c)))
        .collect()
}

/// The cells a check judges: those its `cells` scope selects, or all.
fn in_scope<'a>(spec: &CheckSpec, cells: &'a [CellStats]) -> Vec<&'a CellStats> {
    cells
        .iter()
        .filter(|c| {
            spec.scope
                .as_ref()
                .is_none_or(|s| s.includes(&c.cell.variant, &c.cell.params))
        })
        .collect()
}

fn cell_check(x: &Inputs, spec: &CheckSpec) -> Option<CheckResult> {
    let unit = |m: &str| x.exp.metric(m).map_or(String::new(), |m| m.unit.clone());
    let (cells, r) = (x.cells, x.resampling);
    Some(match &spec.kind {
        CheckKind::Duration { .. } => return None,
        CheckKind::Compare {
            metric,
            a,
            b,
            op,
            factor,
        } => compare::check(spec, metric, a, b, *op, *factor, cells, r, &unit(metric)),
        CheckKind::Agree {
            metric,
            a,
            b,
            margin,
        } => agree::check(spec, metric, a, b, *margin, cells, r, &unit(metric)),
        CheckKind::Ceiling {
            metric,
            limit,
            calibration,
            fraction,
        } => {
            let ceiling = match (limit, calibration) {
                (Some(l), _) => ceiling::Ceiling::Limit(*l),
                (None, Some(sel)) => ceiling::Ceiling::Calibration(sel),
                (None, None) => return None,
            };
            let judged = in_scope(spec, cells);
            ceiling::check(
                spec,
                metric,
                &ceiling,
                *fraction,
                (&judged, cells),
                r,
                &unit(metric),
            )
        }
        CheckKind::Checksum { metric, reference } => {
            checksum::check(spec, x.exp, metric, reference.as_deref(), x.runs)
        }
        CheckKind::Distinct {
            metric,
            along,
            variant,
            margin,
        } => distinct::check(spec, x, metric, along, variant.as_deref(), *margin),
        CheckKind::RunOrder {
            metric,
            alpha,
            max_drift,
        } => order::check(spec, x.exp, metric, *alpha, *max_drift, x.runs),
        CheckKind::Stable {
            metric,
            max_cv,
            max_cv_by_variant,
            mode_gap,
            alpha,
        } => {
            let limits = stable::Limits {
                max_cv: *max_cv,
                by_variant: max_cv_by_variant,
                mode_gap: *mode_gap,
                alpha: *alpha,
            };
            stable::check(spec, metric, &limits, &in_scope(spec, cells), &unit(metric))
        }
        CheckKind::Steady { metric, within } => {
            steady::check(spec, x.exp, metric, *within, &in_scope(spec, cells))
        }
        CheckKind::Scaling {
            metric,
            along,
            variant,
            factor,
        } => scaling::check(spec, x, metric, along, variant.as_deref(), *factor),
    })
}

/// The cells of `keys` whose runs `spec` reads: the two cells a `compare` or `agree` names,
/// a `ceiling`'s calibration cells besides those it judges, the `variant` of a `scaling` or
/// `distinct` check; within the check's `cells` scope. A sampled session adds runs to these.
pub fn cells_read(spec: &CheckSpec, keys: &[CellKey]) -> Vec<CellKey> {
    let in_scope = |k: &CellKey| {
        spec.scope
            .as_ref()
            .is_none_or(|s| s.includes(&k.variant, &k.params))
    };
    let reads = |k: &CellKey| match &spec.kind {
        CheckKind::Compare { a, b, .. } | CheckKind::Agree { a, b, .. } => {
            selects(a, k) || selects(b, k)
        }
        CheckKind::Ceiling {
            calibration: Some(c),
            ..
        } => selects(c, k) || in_scope(k),
        CheckKind::Scaling { variant, along, .. } => {
            variant.as_ref().is_none_or(|v| *v == k.variant)
                && in_scope(k)
                && series_end(k, along, keys)
        }
        CheckKind::Distinct { variant, .. } => {
            variant.as_ref().is_none_or(|v| *v == k.variant) && in_scope(k)
        }
        _ => in_scope(k),
    };
    keys.iter().filter(|k| reads(k)).cloned().collect()
}

/// Whether `k` is the first or last cell of its series along `along` (the cells of its
/// variant at its other parameter values): the two a `scaling` check compares.
fn series_end(k: &CellKey, along: &str, keys: &[CellKey]) -> bool {
    let value = |c: &CellKey| c.params.get(along).and_then(|v| v.parse::<f64>().ok());
    let same_series = |c: &&CellKey| {
        c.variant == k.variant
            && c.params
                .iter()
                .all(|(name, v)| name == along || k.params.get(name) == Some(v))
    };
    let values: Vec<f64> = keys.iter().filter(same_series).filter_map(value).collect();
    let Some(mine) = value(k) else {
        return false;
    };
    let lowest = values.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    mine == lowest || mine == highest
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
        CheckKind::Steady { .. } => "steady",
        CheckKind::Scaling { .. } => "scaling",
    }
}

/// Orders results (automatic, then declared validity, then hypotheses) and marks hypotheses
/// untrusted when any validity check failed.
pub fn assemble(
    automatic: Vec<CheckResult>,
    mut declared: Vec<(usize, CheckResult)>,
) -> Vec<CheckResult> {
    declared.sort_by_key(|(i, c)| (c.class, *i));
    let mut all: Vec<CheckResult> = automatic
        .into_iter()
        .chain(declared.into_iter().map(|(_, c)| c))
        .collect();
    let invalid = all
        .iter()
        .any(|c| c.class == CheckClass::Validity && c.verdict == Verdict::Fail);
    for c in all.iter_mut().filter(|c| c.class == CheckClass::Hypothesis) {
        c.untrusted = invalid;
    }
    all
}

#[cfg(test)]
mod cells_read_tests {
    use super::*;
    use std::path::Path;

    /// The distinct cells of the experiment's plan.
    fn keys(exp: &Experiment) -> Vec<CellKey> {
        let mut keys: Vec<CellKey> = crate::plan::plan(exp)
            .runs
            .iter()
            .map(|r| r.cell())
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }

    fn labels(spec: &CheckSpec, keys: &[CellKey]) -> Vec<String> {
        cells_read(spec, keys)
            .iter()
            .map(|k| k.to_string())
            .collect()
    }

    #[test]
    fn a_sampled_session_grows_only_the_cells_each_check_reads() {
        let src = r#"
[experiment]
title = "t"
hypothesis = "h"
[params]
threads = [1, 2, 4, 8]
[[variant]]
name = "lock"
run = ["p", "{threads}"]
[[variant]]
name = "free"
run = ["q", "{threads}"]
[metric.ops]
json = "ops"
[[check]]
name = "dip"
kind = "compare"
metric = "ops"
a = { variant = "lock", threads = 2 }
b = { variant = "lock", threads = 1 }
expect = "a < 0.5 * b"
[[check]]
name = "free scales"
kind = "scaling"
metric = "ops"
along = "threads"
variant = "free"
factor = 2
[[check]]
name = "lock is steady"
kind = "stable"
metric = "ops"
cells = { variant = "lock", threads = [4, 8] }
"#;
        let exp = crate::config::parse(src, Path::new("lab.toml"), Path::new("x"), None).unwrap();
        let keys = keys(&exp);
        assert_eq!(
            labels(&exp.checks[0], &keys),
            ["lock threads=1", "lock threads=2"]
        );
        // A scaling check compares the ends of each series: 1 and 8 threads of `free`.
        assert_eq!(
            labels(&exp.checks[1], &keys),
            ["free threads=1", "free threads=8"]
        );
        assert_eq!(
            labels(&exp.checks[2], &keys),
            ["lock threads=4", "lock threads=8"]
        );
    }
}
