use super::*;
use crate::analysis::Usage;
use lab_config::{CheckClass, CheckKind};

const TOLERANCE: f64 = 0.025;

fn spec() -> CheckSpec {
    CheckSpec {
        name: "every run lasted the seconds it asked for".into(),
        class: CheckClass::Validity,
        kind: CheckKind::Duration {
            expect: "0.5".into(),
            tolerance: TOLERANCE,
            metric: None,
        },
        scope: None,
    }
}

/// A run that asked for 0.5 s and took `wall_s`, having waited `busy_share` of it for a CPU
/// others had, in a session that weighs waiting where `weighed`.
fn run(wall_s: f64, busy_share: f64, weighed: bool) -> RunView {
    let mut run = crate::checks::run_at(1, "sleeper", Usage::default());
    run.wall_s = wall_s;
    run.busy_share = Some(busy_share);
    run.slowed = if weighed { busy_share } else { 0.0 };
    run
}

fn judged(mut runs: Vec<RunView>) -> (DurationJudgement, Vec<RunView>) {
    let judgement = judge(0, &spec(), "0.5", TOLERANCE, None, &mut runs);
    (judgement, runs)
}

#[test]
fn a_run_that_overshot_by_less_than_it_waited_keeps_its_timing_and_is_held_back() {
    // 0.515 s for 0.5 s is 3% over; it waited 4% of 0.515 s = 0.0206 s, and 0.515 - 0.0206 =
    // 0.4944 s is within 0.5 × 1.025 = 0.5125 s.
    let (j, runs) = judged(vec![run(0.515, 0.04, true)]);
    assert!(j.outside.is_empty());
    assert_eq!(j.held_back.len(), 1);
    assert!((j.held_back[0].waited - 0.0206).abs() < 1e-12);
    assert!(runs[0].is_valid());
    assert_eq!(j.judged, 1);
}

#[test]
fn a_run_that_overshot_by_more_than_it_waited_is_outside() {
    // 0.6 s less 0.024 s of waiting is still past 0.5125 s.
    let (j, runs) = judged(vec![run(0.6, 0.04, true)]);
    assert_eq!(j.outside, vec![("r0001".to_string(), 0.6, 0.5)]);
    assert!(j.held_back.is_empty());
    assert!(!runs[0].is_valid());
}

#[test]
fn waiting_never_excuses_a_short_run() {
    let (j, _) = judged(vec![run(0.45, 0.5, true)]);
    assert_eq!(j.outside.len(), 1);
    assert!(j.held_back.is_empty());
}

#[test]
fn waiting_counts_only_where_the_session_weighs_it() {
    // The same run in a session whose guard is off (`max_busy = "100%"`) or that predates
    // keeping disturbed runs: it is outside, as before.
    let (j, runs) = judged(vec![run(0.515, 0.04, false)]);
    assert_eq!(j.outside.len(), 1);
    assert!(j.held_back.is_empty());
    assert!(!runs[0].is_valid());
}

#[test]
fn a_run_within_the_tolerance_is_neither() {
    let (j, _) = judged(vec![run(0.51, 0.5, true), run(0.49, 0.0, true)]);
    assert!(j.outside.is_empty() && j.held_back.is_empty());
    assert_eq!(j.judged, 2);
}
