//! Tests of how the `steady` check judges runs and puts their outcomes in words.

use super::*;
use crate::checks::CheckResult;
use lab_config::{CheckClass, CheckSpec};

/// The result of a `steady` check on `metric` over these outcomes.
fn decide(
    spec: &CheckSpec,
    metric: &str,
    skip: usize,
    within: usize,
    runs: &[RunOutcome],
) -> CheckResult {
    let steady = Steady { metric, within };
    super::super::shape::finish(spec, &steady, steady.settle(runs.to_vec(), skip))
}

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
        kind: lab_config::CheckKind::Steady {
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
