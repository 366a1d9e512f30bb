//! Stage 7: every declared and automatic check → pass | fail | inconclusive | not run.
//! Validity checks come first; a failed one marks untrusted the hypothesis verdicts that read
//! its cells, or every one when it concerns the whole session.
//!
//! Every declared kind has one shape ([`shape::Check`]): it decides from a [`Context`] and
//! describes what it decided; the interval kinds decide through one [`rule::Rule`].

mod agree;
mod automatic;
mod busy;
mod ceiling;
mod checksum;
mod cold;
mod compare;
mod distinct;
mod disturbance;
mod duration;
mod layout;
mod machines;
mod mechanism;
mod order;
mod pair;
mod parallel;
mod periodic;
mod ratio;
mod reads;
pub mod resolution;
pub mod rule;
mod scaling;
mod series;
pub mod shape;
mod stable;
mod steady;
mod words;

/// A valid timed run for the tests of other stages.
#[cfg(test)]
pub(crate) use cold::tests::run_at;

pub use automatic::automatic_results;
pub use cold::COLD;
pub use lab_findings::checks::multiplicity::multiplicity;
pub use lab_findings::checks::{
    BUSY, CheckResult, Findings, INTACT, RatioEvidence, Tally, Verdict, distrusts,
    names_the_same_check, session_wide,
};
pub use layout::{KEY as LAYOUT_KEY, LAYOUT};
pub use machines::MACHINES;
pub use parallel::PARALLEL;
pub use periodic::PERIODIC;
pub use ratio::ratio_of;
pub use reads::cells_read;
pub use resolution::RESOLUTION;
pub use shape::Context;

use crate::analysis::{Analysis, CellStats, Resampling, RunView};
use crate::validity::DurationJudgement;
use lab_config::{CheckClass, CheckKind, CheckSpec, Experiment, skip};
use shape::Check;

/// Decides every automatic and declared check from the validity judgement (the runs, which the
/// analysis holds, and the declared duration rules' findings) and the analysis.
pub fn evaluate(
    exp: &Experiment,
    durations: &[DurationJudgement],
    analysis: &Analysis,
) -> Findings {
    let mut automatic = session_checks(exp, analysis);
    let parallel = match parallel::parallel_result(exp, analysis) {
        Some((result, _)) if exp.skips(skip::PARALLEL) => {
            automatic.push(off(result, skip::PARALLEL));
            None
        }
        judged => judged,
    };
    if let Some(damage) = &analysis.manifest.damaged {
        let mut intact = CheckResult::new(INTACT, "automatic", CheckClass::Validity, Verdict::Fail)
            .reading(damage);
        intact.automatic = true;
        automatic.push(intact);
    }
    let runs: Vec<&RunView> = analysis.runs.iter().collect();
    let inputs = Inputs {
        exp,
        cells: &analysis.cells,
        runs: &runs,
        resampling: analysis.resampling,
        near_thresholds: analysis.manifest.keeps_disturbed(),
    };
    let mut declared: Vec<(usize, CheckResult)> = durations
        .iter()
        .filter_map(|d| {
            let cx = inputs.context(exp.checks.get(d.spec_index)?);
            Some((d.spec_index, duration::result(d, &cx)))
        })
        .collect();
    declared.extend(cell_results(&inputs));
    if let Some((result, failed)) = parallel {
        withhold_scaling(exp, &failed, &mut declared);
        automatic.push(result);
    }
    if analysis.manifest.keeps_disturbed() {
        busy::judge_again_undisturbed(exp, analysis, &mut declared);
        weigh_the_machine(&mut automatic, &declared, exp, analysis);
    }
    let mut checks = assemble(automatic, declared);
    // The index of every run's cell is made only when a check names runs.
    if checks.iter().any(|c| !c.runs.is_empty()) {
        let index = run_cells(analysis);
        for check in &mut checks {
            check.cells = cells_of(exp, analysis, &index, &check.runs);
        }
    }
    mark_untrusted(&mut checks);
    Findings {
        multiplicity: multiplicity(&checks),
        checks,
    }
}

/// The automatic checks judged on the session's runs, in report order, each marked not run
/// where lab.toml turned it off or the data cannot judge it; the parallel check is the
/// caller's, as it also withholds `scaling` verdicts.
fn session_checks(exp: &Experiment, analysis: &Analysis) -> Vec<CheckResult> {
    let mut automatic = automatic_results(
        &analysis.runs,
        analysis.manifest.calibration.as_ref(),
        analysis.manifest.imported.as_ref().map(|i| i.tool.as_str()),
        analysis
            .manifest
            .imported
            .as_ref()
            .is_some_and(|i| i.exit_codes),
    );
    if analysis.manifest.jobs.is_none() && analysis.runs.iter().all(|r| r.overlapped.is_empty()) {
        // A session run one run at a time (no `--jobs`) has nothing for this check to judge,
        // and its report does not list it.
        automatic.retain(|c| c.name != crate::validity::automatic::APART);
    }
    if let Some(why) = impossible_times_not_run(exp) {
        automatic::not_run_where(&mut automatic, crate::validity::automatic::IMPOSSIBLE, &why);
    }
    automatic.extend(unless_off(
        exp,
        skip::LAYOUT,
        layout::layout_result(exp, analysis),
    ));
    automatic.extend(machines::machines_result(exp, analysis));
    type Judge = fn(&Experiment, &Analysis) -> Option<CheckResult>;
    let judged: [(&str, Judge); 3] = [
        (skip::COLD_STATE, cold::cold_result),
        (skip::RESOLUTION, resolution::resolution_result),
        (skip::PERIODICITY, periodic::periodic_result),
    ];
    for (key, judge) in judged {
        automatic.extend(unless_off(exp, key, judge(exp, analysis)));
    }
    automatic
}

/// Why the impossible-times check is not run, if it is not: turned off, or no printed time.
fn impossible_times_not_run(exp: &Experiment) -> Option<String> {
    let printed_time = |m: &lab_config::Metric| {
        m.is_printed() && !m.text && lab_config::units::seconds_per(&m.unit).is_some()
    };
    if exp.skips(skip::IMPOSSIBLE_TIMES) {
        Some(turned_off(skip::IMPOSSIBLE_TIMES))
    } else if !exp.metrics.iter().any(printed_time) {
        Some("no metric the runs print is a time (unit s, ms, us or ns)".to_string())
    } else {
        None
    }
}

/// "turned off in lab.toml (skip_checks = ["cold-state"])".
fn turned_off(key: &str) -> String {
    format!("turned off in lab.toml (skip_checks lists \"{key}\")")
}

/// An automatic check's result as not run, when lab.toml turned it off by `key`.
fn off(result: CheckResult, key: &str) -> CheckResult {
    let mut off = CheckResult::new(&result.name, "automatic", result.class, Verdict::NotRun)
        .reading(turned_off(key));
    off.automatic = true;
    off
}

/// The result, or the check marked not run where lab.toml turned it off.
fn unless_off(exp: &Experiment, key: &str, result: Option<CheckResult>) -> Option<CheckResult> {
    result.map(|r| if exp.skips(key) { off(r, key) } else { r })
}

/// A `scaling` check along an axis whose gain the CPUs cannot explain does not pass: the gain
/// it measured is not the program's.
fn withhold_scaling(
    exp: &Experiment,
    failed: &[parallel::Axis],
    declared: &mut [(usize, CheckResult)],
) {
    for (i, result) in declared.iter_mut() {
        let Some(CheckKind::Scaling { metric, along, .. }) = exp.checks.get(*i).map(|c| &c.kind)
        else {
            continue;
        };
        let implausible = failed
            .iter()
            .any(|a| &a.metric == metric && &a.along == along);
        if implausible && result.verdict == Verdict::Pass {
            result.verdict = Verdict::Inconclusive;
            result.reading = format!(
                "{}; withheld: the gain exceeds the CPUs its runs used (see `{}`)",
                result.reading,
                parallel::PARALLEL
            );
        }
    }
}

/// In a session that keeps disturbed runs' timings, the quiet-machine check becomes the check
/// that no verdict depends on how busy the machine was, judged after the declared checks.
fn weigh_the_machine(
    automatic: &mut [CheckResult],
    declared: &[(usize, CheckResult)],
    exp: &Experiment,
    analysis: &Analysis,
) {
    // The automatic checks the machine's disturbance withheld (the parallel check) count
    // beside the declared ones.
    let judged: Vec<CheckResult> = automatic
        .iter()
        .filter(|c| c.busy.is_some())
        .chain(declared.iter().map(|(_, c)| c))
        .cloned()
        .collect();
    let Some(quiet) = automatic
        .iter_mut()
        .find(|c| c.name == crate::validity::automatic::QUIET)
    else {
        return;
    };
    *quiet = busy::busy_result(&analysis.runs, &judged, exp.max_busy, &analysis.manifest);
}

/// The labels of the cells `runs` belong to, each once, in plan order.
fn cells_of(
    exp: &Experiment,
    analysis: &Analysis,
    index: &RunCells,
    runs: &[String],
) -> Vec<String> {
    let mut touched = vec![false; analysis.cell_keys.len()];
    let mut untouched = touched.len();
    // A check listing many runs has touched every cell long before its last run.
    for cell in runs.iter().filter_map(|id| index.get(id.as_str())) {
        untouched -= usize::from(!std::mem::replace(&mut touched[*cell], true));
        if untouched == 0 {
            break;
        }
    }
    analysis
        .cell_keys
        .iter()
        .zip(touched)
        .filter(|(_, touched)| *touched)
        .map(|(k, _)| crate::analysis::cell_label(exp, k))
        .collect()
}

/// Each run's cell by run id, as its place among the analysis's cell keys: made once for
/// every check's [`cells_of`].
type RunCells<'a> = std::collections::HashMap<&'a str, usize>;

fn run_cells(analysis: &Analysis) -> RunCells<'_> {
    let place: std::collections::BTreeMap<&lab_config::plan::CellKey, usize> = analysis
        .cell_keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k, i))
        .collect();
    analysis
        .runs
        .iter()
        .filter_map(|r| Some((r.id.as_str(), *place.get(&r.cell)?)))
        .collect()
}

/// A 95% interval, for the decision-rule tests of the checks.
#[cfg(test)]
pub(crate) fn interval(lo: f64, hi: f64) -> lab_stats::Interval {
    lab_stats::Interval {
        lo,
        hi,
        level: 0.95,
    }
}

/// Fewest valid runs per cell for a check that compares cells: the analysis's interval floor.
pub const MIN_RUNS: usize = crate::analysis::MIN_RUNS;

/// What the declared checks that judge statistics look at.
pub struct Inputs<'a> {
    pub exp: &'a Experiment,
    pub cells: &'a [CellStats],
    /// Every finished run in execution order, exclusions applied.
    pub runs: &'a [&'a RunView],
    pub resampling: Resampling,
    /// Whether an interval within a check's margin of its threshold is an answer: in
    /// sessions from analysis 3 on (older ones keep the verdicts they were published with).
    pub near_thresholds: bool,
}

impl<'a> Inputs<'a> {
    /// The context one declared check decides in.
    pub fn context(&self, spec: &'a CheckSpec) -> Context<'a> {
        Context {
            exp: self.exp,
            spec,
            cells: self.cells,
            runs: self.runs,
            resampling: self.resampling,
            margin: spec
                .kind
                .threshold_margin()
                .filter(|_| self.near_thresholds),
        }
    }
}

/// Decides every check that works on cell statistics or runs, in spec order.
pub fn cell_results(inputs: &Inputs) -> Vec<(usize, CheckResult)> {
    use rayon::prelude::*;
    // Each check is judged on its own; collected in declared order whatever the scheduling.
    inputs
        .exp
        .checks
        .par_iter()
        .enumerate()
        .filter_map(|(i, spec)| declared(&inputs.context(spec)).map(|c| (i, c)))
        .collect()
}

/// The result of the check `cx.spec` declares, by its kind; `None` for a `duration` check,
/// which the validity stage decides.
pub(crate) fn declared(cx: &Context) -> Option<CheckResult> {
    match &cx.spec.kind {
        CheckKind::Duration { .. } => None,
        CheckKind::Compare { .. } => shape::declared::<compare::Compare>(cx),
        CheckKind::Agree { .. } => shape::declared::<agree::Agree>(cx),
        CheckKind::Ceiling { .. } => shape::declared::<ceiling::Ceiling>(cx),
        CheckKind::Checksum { .. } => shape::declared::<checksum::Checksum>(cx),
        CheckKind::Distinct { .. } => shape::declared::<distinct::Distinct>(cx),
        CheckKind::RunOrder { .. } => shape::declared::<order::Order>(cx),
        CheckKind::Stable { .. } => shape::declared::<stable::Stable>(cx),
        CheckKind::Steady { .. } => shape::declared::<steady::Steady>(cx),
        CheckKind::Scaling { .. } => shape::declared::<scaling::Scaling>(cx),
        CheckKind::Mechanism { .. } => shape::declared::<mechanism::Mechanism>(cx),
    }
}

/// The name of a check kind as written in lab.toml.
pub fn kind_name(kind: &CheckKind) -> &'static str {
    match kind {
        CheckKind::Duration { .. } => <duration::Duration as Check>::KIND,
        CheckKind::Compare { .. } => <compare::Compare as Check>::KIND,
        CheckKind::Ceiling { .. } => <ceiling::Ceiling as Check>::KIND,
        CheckKind::Agree { .. } => <agree::Agree as Check>::KIND,
        CheckKind::Checksum { .. } => <checksum::Checksum as Check>::KIND,
        CheckKind::Distinct { .. } => <distinct::Distinct as Check>::KIND,
        CheckKind::RunOrder { .. } => <order::Order as Check>::KIND,
        CheckKind::Stable { .. } => <stable::Stable as Check>::KIND,
        CheckKind::Steady { .. } => <steady::Steady as Check>::KIND,
        CheckKind::Scaling { .. } => <scaling::Scaling as Check>::KIND,
        CheckKind::Mechanism { .. } => <mechanism::Mechanism as Check>::KIND,
    }
}

/// Orders results: automatic, then declared validity, then hypotheses.
pub fn assemble(
    automatic: Vec<CheckResult>,
    mut declared: Vec<(usize, CheckResult)>,
) -> Vec<CheckResult> {
    declared.sort_by_key(|(i, c)| (c.class, *i));
    automatic
        .into_iter()
        .chain(declared.into_iter().map(|(_, c)| c))
        .collect()
}

/// Marks untrusted each hypothesis that a failed validity check [`distrusts`].
pub fn mark_untrusted(all: &mut [CheckResult]) {
    let failed: Vec<CheckResult> = all
        .iter()
        .filter(|c| c.class == CheckClass::Validity && c.verdict == Verdict::Fail)
        .cloned()
        .collect();
    for c in all.iter_mut().filter(|c| c.class == CheckClass::Hypothesis) {
        c.untrusted = failed.iter().any(|v| distrusts(v, c));
    }
}
