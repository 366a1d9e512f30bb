//! `steady`: every run reaches a steady state within its first `within` iterations (Barrett,
//! Bolz-Tereick, Killick, Mount & Tratt, "Virtual Machine Warmup Blows Hot and Cold", OOPSLA
//! 2017: runs that never settle, or settle late, make a mean of "steady" iterations describe a
//! moving target). Each valid measured run's iterations are classified by the analysis (outlier
//! iterations left out, PELT changepoints, §4.3 states); a run passes when its steady segment
//! starts at most `within` iterations into the run. A run fails when it settled later, or when
//! it was still changing after iteration `within` (no steady state). A run too short to show a
//! steady state that began by iteration `within` (its final quarter, where a change means "no
//! steady state", starts before it) cannot be judged: with no failure, such runs make the check
//! inconclusive, or not run when no run could be judged.

use super::verdict::{CheckResult, Verdict};
use crate::analysis::{CellStats, MIN_ITERATIONS_FOR_STEADY_STATE, RunSteadiness, SteadyStates};
use crate::config::{CheckSpec, Experiment};
use crate::stats::SteadyState;

/// Runs named in one clause of a reading before "and N more".
const NAMED_RUNS: usize = 6;
/// Clauses (runs of one cell with one outcome) in a reading before "and N more runs".
const NAMED_GROUPS: usize = 4;

/// What one run shows about `within`. Iterations count from the run's first printed value,
/// the metric's declared `warmup_iterations` included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Its steady segment starts at this iteration, within the limit.
    Settled(usize),
    /// Its steady segment starts at this iteration, beyond the limit.
    SettledLate(usize),
    /// No steady state: it last changed at this iteration, beyond the limit.
    StillChanging(usize),
    /// It printed this many iterations: too few to tell.
    TooShort(usize),
}

impl Outcome {
    fn fails(self) -> bool {
        matches!(self, Outcome::SettledLate(_) | Outcome::StillChanging(_))
    }

    fn describe(self) -> String {
        match self {
            Outcome::Settled(at) => format!("settled at iteration {at}"),
            Outcome::SettledLate(at) => format!("settled only at iteration {at}"),
            Outcome::StillChanging(at) => {
                format!("reached no steady state: still changing at iteration {at}")
            }
            Outcome::TooShort(n) => format!("printed {n} iterations"),
        }
    }
}

/// One run's outcome, with the names the reading gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    pub run: String,
    pub cell: String,
    pub outcome: Outcome,
}

/// Iterations a run must print for a steady state that began at iteration `within` to be told
/// apart from a late change: past the declared `skip`, the steady start must fall before the
/// final quarter (Barrett et al. 2017 §4.3), and the classification needs
/// [`MIN_ITERATIONS_FOR_STEADY_STATE`].
pub fn needed_iterations(skip: usize, within: usize) -> usize {
    let classified = within.saturating_sub(skip) * 4 / 3 + 1;
    skip + classified.max(MIN_ITERATIONS_FOR_STEADY_STATE)
}

/// The outcome of one classified run whose metric skipped `skip` declared warm-up iterations.
pub fn judge_run(record: &RunSteadiness, skip: usize, within: usize) -> Outcome {
    let printed = skip + record.iterations;
    if record.iterations < MIN_ITERATIONS_FOR_STEADY_STATE {
        return Outcome::TooShort(printed);
    }
    match (record.state, record.steady_start, record.last_change) {
        (SteadyState::NoSteadyState, _, Some(at)) if skip + at > within => {
            Outcome::StillChanging(skip + at)
        }
        (SteadyState::NoSteadyState, _, _) | (_, None, _) => Outcome::TooShort(printed),
        (_, Some(start), _) if skip + start <= within => Outcome::Settled(skip + start),
        (_, Some(start), _) => Outcome::SettledLate(skip + start),
    }
}

pub fn check(
    spec: &CheckSpec,
    exp: &Experiment,
    metric: &str,
    within: usize,
    cells: &[&CellStats],
) -> CheckResult {
    let skip = exp.metric(metric).map_or(0, |m| m.warmup_iterations);
    let outcomes: Vec<RunOutcome> = cells
        .iter()
        .filter(|c| c.metric == metric)
        .flat_map(|c| cell_outcomes(c, skip, within))
        .collect();
    decide(spec, metric, skip, within, &outcomes)
}

/// Every run of a cell, judged; runs whose metric printed too few iterations for any
/// classification count as too short.
fn cell_outcomes(cell: &CellStats, skip: usize, within: usize) -> Vec<RunOutcome> {
    let named = |(run, outcome): (&String, Outcome)| RunOutcome {
        run: run.clone(),
        cell: cell.label.clone(),
        outcome,
    };
    match &cell.steady {
        Some(SteadyStates { runs, .. }) if runs.len() == cell.run_ids.len() => cell
            .run_ids
            .iter()
            .zip(runs.iter().map(|r| judge_run(r, skip, within)))
            .map(named)
            .collect(),
        _ => cell
            .run_ids
            .iter()
            .zip(cell.runs.iter().map(|v| Outcome::TooShort(skip + v.len())))
            .map(named)
            .collect(),
    }
}

/// The verdict over every judged run: any failure fails; with none, runs too short to tell
/// make it inconclusive, or not run when no run could be told.
pub fn decide(
    spec: &CheckSpec,
    metric: &str,
    skip: usize,
    within: usize,
    outcomes: &[RunOutcome],
) -> CheckResult {
    let base = CheckResult::new(&spec.name, "steady", spec.class, Verdict::NotRun);
    let needed = needed_iterations(skip, within);
    if outcomes.is_empty() {
        return base.reading(format!(
            "no valid run reported `{metric}`; the check needs runs printing at least {needed} \
             iterations of it"
        ));
    }
    let failed: Vec<&RunOutcome> = outcomes.iter().filter(|o| o.outcome.fails()).collect();
    let short: Vec<&RunOutcome> = outcomes
        .iter()
        .filter(|o| matches!(o.outcome, Outcome::TooShort(_)))
        .collect();
    let (verdict, reading, named) = if !failed.is_empty() {
        let reading = format!(
            "{} of {} did not settle within {within} iterations: {}",
            failed.len(),
            runs(outcomes.len()),
            list(&failed)
        );
        (Verdict::Fail, reading, failed)
    } else if short.len() == outcomes.len() {
        (Verdict::NotRun, too_short_reading(&short, needed), vec![])
    } else if !short.is_empty() {
        let reading = format!(
            "{} settled within {within} iterations, but {}",
            runs(outcomes.len() - short.len()),
            too_short_reading(&short, needed)
        );
        (Verdict::Inconclusive, reading, short)
    } else {
        (Verdict::Pass, pass_reading(outcomes, within), vec![])
    };
    CheckResult { verdict, ..base }
        .evidence(evidence(outcomes, skip, within))
        .reading(reading)
        .runs(named.iter().map(|o| o.run.clone()).collect())
}

/// "1 run", "3 runs".
fn runs(k: usize) -> String {
    format!("{k} run{}", if k == 1 { "" } else { "s" })
}

/// "runs r0004, r0007 (jit) reached no steady state: still changing at iteration 88; …": runs
/// with the same outcome in the same cell share one clause.
fn list(outcomes: &[&RunOutcome]) -> String {
    let mut groups: Vec<(&str, Outcome, Vec<&str>)> = Vec::new();
    for o in outcomes {
        match groups
            .iter_mut()
            .find(|(cell, outcome, _)| *cell == o.cell && *outcome == o.outcome)
        {
            Some((_, _, runs)) => runs.push(&o.run),
            None => groups.push((&o.cell, o.outcome, vec![&o.run])),
        }
    }
    let mut parts: Vec<String> = groups
        .iter()
        .take(NAMED_GROUPS)
        .map(|(cell, outcome, runs)| format!("{} ({cell}) {}", run_names(runs), outcome.describe()))
        .collect();
    let hidden: usize = groups.iter().skip(NAMED_GROUPS).map(|g| g.2.len()).sum();
    if hidden > 0 {
        parts.push(format!("and {} more", runs(hidden)));
    }
    parts.join("; ")
}

/// "run r0001", "runs r0001, r0002", "runs r0001, …, r0006 and 3 more".
fn run_names(ids: &[&str]) -> String {
    match ids.len() {
        1 => format!("run {}", ids[0]),
        n if n <= NAMED_RUNS => format!("runs {}", ids.join(", ")),
        n => format!(
            "runs {} and {} more",
            ids[..NAMED_RUNS].join(", "),
            n - NAMED_RUNS
        ),
    }
}

fn too_short_reading(short: &[&RunOutcome], needed: usize) -> String {
    let printed: Vec<usize> = short
        .iter()
        .filter_map(|o| match o.outcome {
            Outcome::TooShort(n) => Some(n),
            _ => None,
        })
        .collect();
    let (lo, hi) = (
        printed.iter().min().copied().unwrap_or(0),
        printed.iter().max().copied().unwrap_or(0),
    );
    let range = if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    };
    let (verb, they) = if short.len() == 1 {
        ("is", "it prints")
    } else {
        ("are", "they print")
    };
    format!(
        "{} {verb} too short to tell ({they} {range} iterations; the check needs at least \
         {needed} per run): {}",
        runs(short.len()),
        list(short)
    )
}

fn pass_reading(outcomes: &[RunOutcome], within: usize) -> String {
    let latest = outcomes
        .iter()
        .filter_map(|o| match o.outcome {
            Outcome::Settled(at) => Some((at, o)),
            _ => None,
        })
        .max_by_key(|(at, _)| *at);
    match latest {
        Some((at, o)) => format!(
            "every run settled within {within} iterations ({}; the latest at iteration {at}, \
             run {} in {})",
            runs(outcomes.len()),
            o.run,
            o.cell
        ),
        None => format!("every run settled within {within} iterations"),
    }
}

/// The counts behind the verdict.
fn evidence(outcomes: &[RunOutcome], skip: usize, within: usize) -> String {
    let count = |f: fn(&Outcome) -> bool| outcomes.iter().filter(|o| f(&o.outcome)).count();
    let mut text = format!(
        "{}: {} settled by iteration {within}, {} settled later, {} reached no steady \
         state, {} too short to tell; steady state after Barrett et al. (2017), outliers left \
         out of the changepoints",
        runs(outcomes.len()),
        count(|o| matches!(o, Outcome::Settled(_))),
        count(|o| matches!(o, Outcome::SettledLate(_))),
        count(|o| matches!(o, Outcome::StillChanging(_))),
        count(|o| matches!(o, Outcome::TooShort(_))),
    );
    if skip > 0 {
        text.push_str(&format!(
            "; iterations counted from the first printed, {skip} declared warm-up iterations \
             included"
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CheckClass;

    fn record(
        state: SteadyState,
        iterations: usize,
        start: Option<usize>,
        last: Option<usize>,
    ) -> RunSteadiness {
        RunSteadiness {
            state,
            iterations,
            steady_start: start,
            last_change: last,
            dropped: start.unwrap_or(0),
            outliers: vec![],
        }
    }

    #[test]
    fn a_run_is_judged_by_where_its_steady_segment_starts() {
        use SteadyState::*;
        let judge = |r: &RunSteadiness| judge_run(r, 0, 50);
        assert_eq!(
            judge(&record(Warmup, 100, Some(30), Some(30))),
            Outcome::Settled(30)
        );
        assert_eq!(
            judge(&record(Flat, 100, Some(0), None)),
            Outcome::Settled(0)
        );
        assert_eq!(
            judge(&record(Warmup, 100, Some(50), Some(50))),
            Outcome::Settled(50)
        );
        assert_eq!(
            judge(&record(Warmup, 100, Some(51), Some(51))),
            Outcome::SettledLate(51)
        );
        assert_eq!(
            judge(&record(NoSteadyState, 100, None, Some(80))),
            Outcome::StillChanging(80)
        );
        // Changed last at 40 but the run ended too soon after to call it steady.
        assert_eq!(
            judge(&record(NoSteadyState, 50, None, Some(40))),
            Outcome::TooShort(50)
        );
        assert_eq!(judge(&record(Flat, 9, Some(0), None)), Outcome::TooShort(9));
        // Declared warm-up iterations count: settling 30 after 25 skipped is iteration 55.
        assert_eq!(
            judge_run(&record(Warmup, 100, Some(30), Some(30)), 25, 50),
            Outcome::SettledLate(55)
        );
    }

    #[test]
    fn the_needed_length_puts_the_limit_before_the_final_quarter() {
        // 50 < 0.75 × 67 = 50.25, while 0.75 × 66 = 49.5 would call a change at 50 "no
        // steady state".
        assert_eq!(needed_iterations(0, 50), 67);
        assert_eq!(needed_iterations(5, 50), 5 + 61);
        assert_eq!(needed_iterations(0, 3), MIN_ITERATIONS_FOR_STEADY_STATE);
    }

    fn spec() -> CheckSpec {
        CheckSpec {
            name: "settles".into(),
            class: CheckClass::Validity,
            kind: crate::config::CheckKind::Steady {
                metric: "t".into(),
                within: 50,
            },
            scope: None,
        }
    }

    fn outcome(run: &str, cell: &str, outcome: Outcome) -> RunOutcome {
        RunOutcome {
            run: run.into(),
            cell: cell.into(),
            outcome,
        }
    }

    #[test]
    fn any_run_that_did_not_settle_fails_the_check_by_name() {
        let runs = [
            outcome("r0001", "fast", Outcome::Settled(30)),
            outcome("r0002", "slow", Outcome::StillChanging(88)),
            outcome("r0003", "slow", Outcome::SettledLate(61)),
            outcome("r0004", "slow", Outcome::TooShort(20)),
        ];
        let result = decide(&spec(), "t", 0, 50, &runs);
        assert_eq!(result.verdict, Verdict::Fail);
        assert_eq!(result.runs, vec!["r0002", "r0003"]);
        assert_eq!(
            result.reading,
            "2 of 4 runs did not settle within 50 iterations: run r0002 (slow) reached no \
             steady state: still changing at iteration 88; run r0003 (slow) settled only at \
             iteration 61"
        );
        assert!(result.evidence.starts_with(
            "4 runs: 1 settled by iteration 50, 1 settled later, 1 reached no steady state, 1 \
             too short"
        ));
    }

    #[test]
    fn runs_alike_share_one_clause() {
        let runs: Vec<RunOutcome> = (1..=8)
            .map(|i| outcome(&format!("r{i:04}"), "jit", Outcome::StillChanging(80)))
            .chain([outcome("r0009", "aot", Outcome::SettledLate(70))])
            .collect();
        let result = decide(&spec(), "t", 0, 50, &runs);
        assert_eq!(
            result.reading,
            "9 of 9 runs did not settle within 50 iterations: runs r0001, r0002, r0003, r0004, \
             r0005, r0006 and 2 more (jit) reached no steady state: still changing at iteration \
             80; run r0009 (aot) settled only at iteration 70"
        );
        assert_eq!(result.runs.len(), 9);
    }

    #[test]
    fn short_runs_make_it_inconclusive_or_not_run() {
        let settled = outcome("r0001", "fast", Outcome::Settled(12));
        let short = outcome("r0002", "fast", Outcome::TooShort(40));
        let mixed = decide(&spec(), "t", 0, 50, &[settled.clone(), short.clone()]);
        assert_eq!(mixed.verdict, Verdict::Inconclusive);
        assert_eq!(mixed.runs, vec!["r0002"]);
        assert!(
            mixed.reading.contains("needs at least 67 per run"),
            "{}",
            mixed.reading
        );
        let none = decide(&spec(), "t", 0, 50, &[short]);
        assert_eq!(none.verdict, Verdict::NotRun);
        assert_eq!(
            none.reading,
            "1 run is too short to tell (it prints 40 iterations; the check needs at least 67 \
             per run): run r0002 (fast) printed 40 iterations"
        );
        assert_eq!(decide(&spec(), "t", 0, 50, &[]).verdict, Verdict::NotRun);
        let pass = decide(&spec(), "t", 0, 50, &[settled]);
        assert_eq!(pass.verdict, Verdict::Pass);
        assert_eq!(
            pass.reading,
            "every run settled within 50 iterations (1 run; the latest at iteration 12, run \
             r0001 in fast)"
        );
    }
}
