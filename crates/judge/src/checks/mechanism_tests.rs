//! Tests of how the `mechanism` check decides a correlation and puts it in words.

use super::*;
use crate::checks::CheckResult;
use lab_config::{CheckClass, CheckSpec};

const RESAMPLING: Resampling = Resampling {
    seed: 42,
    resamples: 10_000,
    level: 0.95,
    generator: lab_stats::Generator::ChaCha8,
};

fn check(direction: Direction) -> Mechanism<'static> {
    Mechanism {
        metric: "work",
        with: "waits",
        direction,
        min_rho: 0.5,
    }
}

fn spec() -> CheckSpec {
    CheckSpec {
        name: "work falls as waits rise".into(),
        class: CheckClass::Hypothesis,
        kind: CheckKind::Mechanism {
            metric: "work".into(),
            with: "waits".into(),
            direction: Direction::Opposite,
            min_rho: 0.5,
        },
        scope: None,
    }
}

/// The check's result on `strata`, judged as `direction` says.
fn judge(direction: Direction, strata: &[Vec<Point>]) -> CheckResult {
    let mechanism = check(direction);
    let runs = (1..=strata.iter().map(Vec::len).sum::<usize>())
        .map(lab_config::plan::run_id)
        .collect();
    let decided = mechanism.correlate(strata, runs, RESAMPLING, "mechanism/t");
    super::super::shape::finish(&spec(), &mechanism, decided)
}

/// Four cells of six runs: waits = 10k + a wobble, work = 100 − `slope`·k + noise of
/// amplitude `noise`, the wobbles fixed residues so the data never change.
fn cells(slope: f64, noise: f64) -> Vec<Vec<Point>> {
    (1..=4)
        .map(|k| {
            (0..6)
                .map(|i| {
                    let j = (k * 6 + i) as f64;
                    let wobble = (j * 7.0) % 5.0 - 2.0;
                    let jitter = (j * 13.0) % 11.0 - 5.0;
                    let waits = 10.0 * k as f64 + wobble;
                    (100.0 - slope * k as f64 + noise * jitter, waits)
                })
                .collect()
        })
        .collect()
}

// The ρ of each data set, from scipy.stats.spearmanr on the same 24 pairs: slope 10,
// -0.95102; slope 0, 0.03232; slope 2, -0.54896.

#[test]
fn a_relation_that_holds_passes() {
    let result = judge(Direction::Opposite, &cells(10.0, 1.0));
    assert_eq!(result.verdict, Verdict::Pass, "{}", result.reading);
    assert_eq!(
        result.reading,
        "`work` falls as `waits` rises across 4 cells: ρ = -0.95 [-0.98, -0.93], the whole \
         interval ≤ -0.50"
    );
    assert_eq!(
        result.evidence,
        "Spearman ρ = -0.95 [-0.98, -0.93] (95% CI) over 24 runs in 4 cells; needs ρ ≤ -0.50 \
         (opposite: `work` falls as `waits` rises)"
    );
    assert_eq!(result.runs.len(), 24);
    // The ρ the chapter links to its provenance, as numbers: scipy's -0.95102.
    let found = result.correlation.expect("the correlation decided on");
    assert!((found.rho - -0.951_02).abs() < 5e-6, "{}", found.rho);
    assert_eq!((found.points, found.cells), (24, 4));
    assert_eq!(
        (found.metric.as_str(), found.with.as_str()),
        ("work", "waits")
    );
    assert!(found.lo < found.rho && found.rho < found.hi && found.level == 0.95);
}

#[test]
fn a_relation_that_is_absent_fails() {
    let result = judge(Direction::Opposite, &cells(0.0, 1.0));
    assert_eq!(result.verdict, Verdict::Fail, "{}", result.reading);
    assert_eq!(
        result.reading,
        "`work` does not fall as `waits` rises strongly enough: ρ = 0.03 [-0.38, 0.47] across \
         4 cells, the whole interval short of ρ ≤ -0.50"
    );
}

#[test]
fn a_weak_noisy_relation_is_inconclusive() {
    let result = judge(Direction::Opposite, &cells(2.0, 1.0));
    assert_eq!(result.verdict, Verdict::Inconclusive, "{}", result.reading);
    assert_eq!(
        result.reading,
        "ρ = -0.55: the interval [-0.81, -0.18] reaches both sides of -0.50; the data cannot \
         decide"
    );
}

#[test]
fn the_direction_turns_the_interval_round() {
    // The same data: falling together is the opposite direction, so `same` fails it.
    let result = judge(Direction::Same, &cells(10.0, 1.0));
    assert_eq!(result.verdict, Verdict::Fail, "{}", result.reading);
    assert_eq!(
        result.reading,
        "`work` does not rise with `waits` strongly enough: ρ = -0.95 [-0.98, -0.93] across 4 \
         cells, the whole interval short of ρ ≥ 0.50"
    );
    let opposite = check(Direction::Opposite).decision(-0.8, crate::checks::interval(-0.9, -0.6));
    assert_eq!(
        (
            opposite.estimate,
            opposite.interval.lo,
            opposite.interval.hi
        ),
        (0.8, 0.6, 0.9)
    );
    assert_eq!(opposite.verdict, Verdict::Pass);
}

#[test]
fn the_whole_interval_must_reach_min_rho() {
    let decide = |lo, hi| check(Direction::Same).decision(0.6, crate::checks::interval(lo, hi));
    assert_eq!(decide(0.5, 0.9).verdict, Verdict::Pass);
    assert_eq!(decide(0.49, 0.9).verdict, Verdict::Inconclusive);
    assert_eq!(decide(0.1, 0.499).verdict, Verdict::Fail);
}

#[test]
fn too_few_runs_or_cells_or_no_variation_is_not_run() {
    let one_cell = vec![cells(10.0, 1.0).concat()];
    let result = judge(Direction::Opposite, &one_cell);
    assert_eq!(result.verdict, Verdict::NotRun);
    assert_eq!(
        result.reading,
        "24 valid runs in 1 cell have both `work` and `waits`; a correlation needs 6 runs in 2 \
         cells or more"
    );
    let few: Vec<Vec<Point>> = cells(10.0, 1.0).iter().map(|c| c[..1].to_vec()).collect();
    let result = judge(Direction::Opposite, &few);
    assert_eq!(result.verdict, Verdict::NotRun);
    assert_eq!(
        result.reading,
        "4 valid runs in 4 cells have both `work` and `waits`; a correlation needs 6 runs in 2 \
         cells or more"
    );
    let flat: Vec<Vec<Point>> = cells(10.0, 1.0)
        .iter()
        .map(|c| c.iter().map(|(_, y)| (5.0, *y)).collect())
        .collect();
    let result = judge(Direction::Opposite, &flat);
    assert_eq!(result.verdict, Verdict::NotRun);
    assert_eq!(
        result.reading,
        "`work` takes one value over the runs: a rank correlation needs both to vary"
    );
}

#[test]
fn the_same_seed_decides_the_same_way_in_the_same_words() {
    let data = cells(2.0, 1.0);
    let (a, b) = (
        judge(Direction::Opposite, &data),
        judge(Direction::Opposite, &data),
    );
    assert_eq!((a.reading, a.evidence), (b.reading, b.evidence));
}
