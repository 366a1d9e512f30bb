//! The automatic check of a session that keeps every run's timing with its disturbance beside
//! it: whether any verdict depends on how busy the machine was. It passes when every verdict
//! holds over the range the runs' waiting leaves their values in (the other checks weigh
//! that, `disturbance`), is inconclusive when some verdict was withheld because the waiting
//! could explain it, and names what kept the machine busy.

use crate::analysis::{Analysis, RunView};
use lab_config::format::percent;
use lab_config::{CheckClass, CheckKind, Experiment};
use lab_findings::checks::{BUSY, CheckResult, Verdict};
use lab_store::{Disturber, Manifest};

/// The kinds of check that decide on something other than a ratio of two cells (a trend, a
/// spread, a correlation), where no range of values can be bounded: they are judged again on
/// the runs the machine left alone, and their verdict stands only where both agree (the
/// ratio kinds weigh the disturbance themselves, `disturbance`). Each reads the runs and the
/// values of its own metric's cells, never a cell's intervals, so they are judged again on
/// [`crate::analysis::cell_values_of`] those metrics.
fn judged_twice(kind: &CheckKind) -> bool {
    matches!(
        kind,
        CheckKind::RunOrder { .. }
            | CheckKind::Stable { .. }
            | CheckKind::Steady { .. }
            | CheckKind::Mechanism { .. }
    )
}

/// Judges again, on the runs the machine did not disturb beyond `max_busy`, every decided
/// check of a [`judged_twice`] kind, and withholds the verdicts that differ: the disturbed
/// runs could explain them.
pub(super) fn judge_again_undisturbed(
    exp: &Experiment,
    analysis: &Analysis,
    declared: &mut [(usize, CheckResult)],
) {
    let disturbed = analysis.runs.iter().filter(|r| r.disturbed).count();
    let to_judge: Vec<usize> = declared
        .iter()
        .enumerate()
        .filter(|(_, (i, c))| {
            matches!(c.verdict, Verdict::Pass | Verdict::Fail)
                && exp.checks.get(*i).is_some_and(|s| judged_twice(&s.kind))
        })
        .map(|(k, _)| k)
        .collect();
    if disturbed == 0 || to_judge.is_empty() {
        return;
    }
    let runs: Vec<&RunView> = analysis.runs.iter().filter(|r| !r.disturbed).collect();
    let metrics = judged_metrics(exp, declared, &to_judge);
    let cells = crate::analysis::cell_values_of(exp, &metrics, &analysis.cell_keys, &runs);
    let inputs = super::Inputs {
        exp,
        cells: &cells,
        runs: &runs,
        resampling: analysis.resampling,
        near_thresholds: true,
    };
    let most = analysis
        .runs
        .iter()
        .filter(|r| r.disturbed)
        .filter_map(|r| r.busy_share)
        .fold(0.0, f64::max);
    for k in to_judge {
        let (i, result) = &mut declared[k];
        let Some(again) = super::declared(&inputs.context(&exp.checks[*i])) else {
            continue;
        };
        if again.verdict != result.verdict {
            withhold(result, &again, [disturbed, runs.len()], most);
        }
    }
}

/// The metrics the checks `to_judge` (indices into `declared`) judge, in the order the
/// analysis takes them.
fn judged_metrics<'e>(
    exp: &'e Experiment,
    declared: &[(usize, CheckResult)],
    to_judge: &[usize],
) -> Vec<&'e lab_config::Metric> {
    let named = |m: &lab_config::Metric| {
        to_judge
            .iter()
            .filter_map(|&k| exp.checks.get(declared[k].0))
            .any(|c| c.kind.metric() == Some(m.name.as_str()))
    };
    exp.analysed_metrics()
        .into_iter()
        .filter(|m| named(m))
        .collect()
}

/// `result` withheld: on the `undisturbed` runs the check reached `again` instead, where
/// `disturbed` runs the machine disturbed beyond `max_busy` were left out.
fn withhold(
    result: &mut CheckResult,
    again: &CheckResult,
    [disturbed, undisturbed]: [usize; 2],
    most: f64,
) {
    let cause = format!(
        "{disturbed} run{} waited for a CPU others had for more than `max_busy` of their wall time, up to {}",
        if disturbed == 1 { "" } else { "s" },
        percent(most)
    );
    result.evidence = format!(
        "{}; on every run: {}; on the runs the machine left alone: {}",
        result.evidence, result.reading, again.reading
    );
    result.reading = format!(
        "machine busy: {} on every run, {} on the {} the machine left alone: {cause}, which could explain the difference; quiet the machine or add runs",
        result.verdict.word(),
        again.verdict.word(),
        plural(undisturbed, "run")
    );
    result.verdict = Verdict::Inconclusive;
    result.busy = Some(cause);
}

/// A run that waited for less than this share of its wall time is not counted as waiting.
const NOTABLE: f64 = 0.01;

/// The check's result on `runs`, with `declared` the declared checks' results (those withheld
/// carry why), `max_busy` the experiment's guard and `manifest` the session's record.
pub(super) fn busy_result(
    runs: &[RunView],
    declared: &[CheckResult],
    max_busy: f64,
    manifest: &Manifest,
) -> CheckResult {
    let base = CheckResult::new(BUSY, "automatic", CheckClass::Validity, Verdict::NotRun);
    let mut result = if max_busy >= 1.0 {
        base.reading("the guard is off (max_busy = 100%): how long each run waited for a CPU is recorded, not weighed")
    } else if runs.iter().all(|r| r.busy_share.is_none()) {
        base.reading("no run recorded how long it waited for a CPU (runs.csv holds no waiting, or /proc/stat could not be read)")
    } else {
        judged(runs, declared, manifest)
    };
    result.automatic = true;
    result
}

fn judged(runs: &[RunView], declared: &[CheckResult], manifest: &Manifest) -> CheckResult {
    let waited: Vec<&RunView> = runs
        .iter()
        .filter(|r| r.busy_share.is_some_and(|s| s >= NOTABLE))
        .collect();
    let most = runs.iter().filter_map(|r| r.busy_share).fold(0.0, f64::max);
    let withheld: Vec<&CheckResult> = declared.iter().filter(|c| c.busy.is_some()).collect();
    let evidence = format!(
        "{} of {} runs waited for a CPU others had for {} or more of their wall time, the most {}; measured as {}",
        waited.len(),
        runs.len(),
        percent(NOTABLE),
        percent(most),
        manifest
            .waiting
            .as_deref()
            .unwrap_or("the machine's CPU pressure")
    );
    let verdict = if withheld.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Inconclusive
    };
    let reading = match (withheld.as_slice(), waited.len()) {
        ([], 0) => format!(
            "every run had its CPUs: none waited for one others had for {} of its wall time",
            percent(NOTABLE)
        ),
        ([], n) => format!(
            "{n} of {} runs waited for a CPU others had (up to {} of their wall time); every verdict holds over all that waiting could have changed",
            runs.len(),
            percent(most)
        ),
        (withheld, _) => withheld_reading(withheld, most, &manifest.disturbers),
    };
    let mut result = CheckResult::new(BUSY, "automatic", CheckClass::Validity, verdict)
        .evidence(evidence)
        .reading(reading);
    result.runs = waited.iter().map(|r| r.id.clone()).collect();
    result
}

/// "machine busy: 2 verdicts withheld (A; B): runs waited … — busy beside lab: …; quiet the
/// machine or add runs".
fn withheld_reading(withheld: &[&CheckResult], most: f64, disturbers: &[Disturber]) -> String {
    let names: Vec<&str> = withheld.iter().map(|c| c.name.as_str()).collect();
    // Two are named; more are marked "machine busy" where they stand.
    let count = match names.len() {
        1 | 2 => format!(
            "{} ({})",
            plural(names.len(), "verdict") + " withheld",
            names.join("; ")
        ),
        n => format!("{n} verdicts withheld"),
    };
    let beside = if disturbers.is_empty() {
        String::new()
    } else {
        let named: Vec<String> = disturbers.iter().map(Disturber::describe).collect();
        format!("; busy beside lab: {}", named.join(", "))
    };
    format!(
        "machine busy: {count}: runs waited for a CPU others had for up to {} of their wall time, enough to explain them{beside}; quiet the machine or add runs",
        percent(most)
    )
}

/// "1 run", "3 runs".
fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
