//! The busy-machine rule by simulation: sessions with a known ratio whose runs were slowed,
//! one-sidedly, by at most what they waited. The envelope must hold the true ratio as often as
//! an interval of undisturbed runs would, and a decided verdict must be wrong no more often
//! than the level allows, where the measured interval alone is often decided wrongly.

use super::*;
use crate::checks::rule::Rule;
use lab_config::Comparison;
use lab_stats::Generator;
use lab_stats::rng::{standard_normal, stream};
use rand::Rng;
use rayon::prelude::*;

/// Simulated sessions per scenario.
const SESSIONS: usize = 1_000;
/// Runs per cell.
const RUNS: usize = 15;
/// Run-to-run spread of an undisturbed run (log scale).
const SPREAD: f64 = 0.03;
/// Resamples per interval: fewer than a session's 10,000, for time's sake.
const RESAMPLES: usize = 2_000;

fn resampling(seed: u64) -> Resampling {
    Resampling {
        seed,
        resamples: RESAMPLES,
        level: 0.95,
        generator: Generator::Xoshiro256PlusPlus,
    }
}

/// A cell of a time metric: each run's measured time and the share of its wall time it
/// waited for a CPU others had.
fn cell(label: &str, runs: &[(f64, f64)]) -> CellStats {
    let values: Vec<f64> = runs.iter().map(|(v, _)| *v).collect();
    let slowed: Vec<f64> = runs.iter().map(|(_, w)| *w).collect();
    CellStats {
        slowed: if slowed.iter().all(|w| *w == 0.0) {
            Vec::new()
        } else {
            slowed
        },
        ..crate::analysis::cell_of_values(label, "wall_s", &values)
    }
}

/// How the machine disturbed a cell's runs.
#[derive(Clone, Copy)]
struct Busy {
    /// Share of runs disturbed.
    share_of_runs: f64,
    /// Each disturbed run waited for U(least, most) of its wall time.
    least: f64,
    most: f64,
    /// Of what it waited, how much really slowed it: U(slowing, 1).
    slowing: f64,
}

const QUIET: Busy = Busy {
    share_of_runs: 0.0,
    least: 0.0,
    most: 0.0,
    slowing: 1.0,
};

/// `RUNS` runs around `centre`: each measured time and its recorded waiting share.
fn runs(centre: f64, busy: Busy, rng: &mut impl Rng) -> Vec<(f64, f64)> {
    (0..RUNS)
        .map(|_| {
            let undisturbed = centre * (SPREAD * standard_normal(rng)).exp();
            if rng.r#gen::<f64>() >= busy.share_of_runs {
                return (undisturbed, 0.0);
            }
            let waited = busy.least + (busy.most - busy.least) * rng.r#gen::<f64>();
            let slowed = waited * (busy.slowing + (1.0 - busy.slowing) * rng.r#gen::<f64>());
            // The run took undisturbed / (1 − slowed): `slowed` of its wall time was the
            // machine's; it waited for `waited` ≥ `slowed` of it.
            (undisturbed / (1.0 - slowed), waited)
        })
        .collect()
}

/// One scenario's tallies over `SESSIONS` sessions of `a / b` with true ratio `truth`,
/// judged by "a > threshold · b".
struct Tally {
    /// The envelope held the true ratio.
    covered: usize,
    /// The measured interval alone held it.
    covered_raw: usize,
    /// A decided verdict contradicted the truth: with the envelope, and without.
    wrong: usize,
    wrong_raw: usize,
    /// Verdicts decided (pass or fail) with the envelope, and withheld.
    decided: usize,
    withheld: usize,
}

fn simulate(truth: f64, threshold: f64, a_busy: Busy, b_busy: Busy, seed: u64) -> Tally {
    let rule = Rule::Compare(Comparison::Greater, threshold);
    let truly = if truth > threshold {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let sessions: Vec<[bool; 6]> = (0..SESSIONS)
        .into_par_iter()
        .map(|i| {
            let mut rng = stream(seed, &format!("session {i}"));
            let a = cell("a", &runs(truth, a_busy, &mut rng));
            let b = cell("b", &runs(1.0, b_busy, &mut rng));
            let r = resampling(seed ^ i as u64);
            let label = "disturbance/simulated";
            let measured = crate::checks::ratio_of(&a, &b, r, label)
                .expect("a ratio")
                .1;
            let raw = rule.decide(&measured);
            let (verdict, envelope) = match envelope(&a, &b, measured, r, label) {
                Some(mut d) => (d.weigh(rule, None, raw), d.envelope),
                None => (raw, measured),
            };
            let holds = |iv: &Interval| iv.lo <= truth && truth <= iv.hi;
            let wrong = |v: Verdict| matches!(v, Verdict::Pass | Verdict::Fail) && v != truly;
            let decided = matches!(verdict, Verdict::Pass | Verdict::Fail);
            [
                holds(&envelope),
                holds(&measured),
                wrong(verdict),
                wrong(raw),
                decided,
                decided != matches!(raw, Verdict::Pass | Verdict::Fail),
            ]
        })
        .collect();
    let count = |k: usize| sessions.iter().filter(|s| s[k]).count();
    Tally {
        covered: count(0),
        covered_raw: count(1),
        wrong: count(2),
        wrong_raw: count(3),
        decided: count(4),
        withheld: count(5),
    }
}

fn share(n: usize) -> f64 {
    n as f64 / SESSIONS as f64
}

/// With 1,000 sessions a proportion of 95% has a standard error of 0.7%: 93% is three below.
const LEAST_COVERAGE: f64 = 0.93;
/// The rule's verdicts may be wrong at most as often as a 95% interval's one side allows,
/// with the same allowance for chance.
const MOST_WRONG: f64 = 0.05;

#[test]
fn a_disturbance_that_could_explain_the_difference_withholds_the_verdict() {
    // The two commands are the same; every run of `a` was slowed by 10–30%, which makes it
    // look 1.2× slower. Judged on the measured interval, "a is over 1.05× b" passes.
    let busy = Busy {
        share_of_runs: 1.0,
        least: 0.10,
        most: 0.30,
        slowing: 1.0,
    };
    let t = simulate(1.0, 1.05, busy, QUIET, 11);
    assert!(
        share(t.wrong_raw) > 0.9,
        "the measured interval alone is fooled: {}",
        share(t.wrong_raw)
    );
    assert!(
        share(t.wrong) <= MOST_WRONG,
        "wrong with the rule: {}",
        share(t.wrong)
    );
    assert!(share(t.withheld) > 0.9, "withheld: {}", share(t.withheld));
    assert!(
        share(t.covered) >= LEAST_COVERAGE,
        "covered: {}",
        share(t.covered)
    );
    assert!(
        share(t.covered_raw) < 0.05,
        "raw coverage: {}",
        share(t.covered_raw)
    );
}

#[test]
fn a_difference_larger_than_the_disturbance_is_still_decided() {
    // `a` truly takes twice as long; half the runs of both waited up to 14% of their time.
    let busy = Busy {
        share_of_runs: 0.5,
        least: 0.0,
        most: 0.14,
        slowing: 0.5,
    };
    let t = simulate(2.0, 1.05, busy, busy, 12);
    assert!(share(t.decided) >= 0.99, "decided: {}", share(t.decided));
    assert_eq!(t.wrong, 0);
    assert!(
        share(t.covered) >= LEAST_COVERAGE,
        "covered: {}",
        share(t.covered)
    );
}

#[test]
fn near_the_threshold_the_rule_errs_no_more_than_the_level_allows() {
    // True ratios on either side of the threshold and at it, with both cells disturbed in
    // part and waiting that only partly slowed them.
    let busy = Busy {
        share_of_runs: 0.4,
        least: 0.02,
        most: 0.25,
        slowing: 0.3,
    };
    for (k, truth) in [0.98, 1.05, 1.12].into_iter().enumerate() {
        let t = simulate(truth, 1.05, busy, busy, 20 + k as u64);
        assert!(
            share(t.wrong) <= MOST_WRONG,
            "true ratio {truth}: wrong verdicts {}",
            share(t.wrong)
        );
        assert!(
            share(t.covered) >= LEAST_COVERAGE,
            "true ratio {truth}: covered {}",
            share(t.covered)
        );
    }
}

#[test]
fn a_quiet_session_is_judged_as_before() {
    let t = simulate(1.10, 1.05, QUIET, QUIET, 13);
    assert_eq!(t.withheld, 0, "nothing waited, nothing is withheld");
    assert_eq!(
        t.covered, t.covered_raw,
        "the envelope is the measured interval"
    );
    assert_eq!(t.wrong, t.wrong_raw);
}
