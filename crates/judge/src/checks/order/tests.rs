//! Tests of the `order` check on planned sessions with known order effects.

use super::*;
use crate::analysis::Resampling;
use crate::checks::CheckResult;
use crate::checks::shape::{Context, judge as decide};
use crate::validity::RunValues;
use rand::Rng;
use std::path::Path;

fn experiment() -> Experiment {
    let src = r#"
[experiment]
title = "t"
hypothesis = "h"
[[variant]]
name = "a"
run = ["x"]
[[variant]]
name = "b"
run = ["y"]
[metric.v]
json = "v"
[[check]]
name = "no order effects"
kind = "order"
metric = "v"
"#;
    lab_config::parse(src, Path::new("lab.toml"), Path::new("x"), None).unwrap()
}

fn run(position: usize, variant: &str, value: f64) -> RunView {
    RunView {
        id: format!("r{position}"),
        position,
        cell: CellKey {
            variant: variant.to_string(),
            params: Default::default(),
        },
        repetition: 0,
        warmup: false,
        wall_s: 0.3,
        exit: "exit 0".into(),
        stdout_sha256: String::new(),
        echoed_config: false,
        busy_share: None,
        slowed: 0.0,
        disturbed: false,
        reshaped: false,
        exact_wait: false,
        repeats: None,
        overlapped: Vec::new(),
        problems: Vec::new(),
        failed_checks: Vec::new(),
        timing_only: Vec::new(),
        values: RunValues::of("v", vec![value.to_string()]),
        env_padding: None,
        heap_shift: None,
        node: None,
        usage: Default::default(),
    }
}

/// `blocks` shuffled blocks each holding every variant once (as lab plans them), the
/// value of the k-th run of a variant given by `value(variant, k, position)`.
fn session(
    variants: &[&str],
    blocks: usize,
    value: impl Fn(&str, usize, usize) -> f64,
) -> Vec<RunView> {
    let mut rng = stats::stream(7, "order-tests");
    let mut runs = Vec::new();
    for k in 0..blocks {
        let mut block = variants.to_vec();
        rand::seq::SliceRandom::shuffle(block.as_mut_slice(), &mut rng);
        for v in block {
            let position = runs.len() + 1;
            runs.push(run(position, v, value(v, k, position)));
        }
    }
    runs
}

/// Noise of ±`size` (uniform), seeded by the variant and the run.
fn noise(variant: &str, k: usize, size: f64) -> f64 {
    let mut rng = stats::stream(k as u64, variant);
    1.0 + size * (2.0 * rng.r#gen::<f64>() - 1.0)
}

fn judge(runs: &[RunView], max_drift: f64) -> CheckResult {
    let exp = experiment();
    let runs: Vec<&RunView> = runs.iter().collect();
    let cx = Context {
        exp: &exp,
        spec: &exp.checks[0],
        cells: &[],
        runs: &runs,
        resampling: Resampling {
            seed: 0,
            resamples: 0,
            level: 0.95,
            generator: lab_stats::Generator::ChaCha8,
        },
        margin: None,
    };
    let order = Order {
        metric: "v",
        alpha: 0.05,
        max_drift,
    };
    decide(&order, &cx)
}

#[test]
fn a_cell_that_alternates_fails_on_serial_dependence_within_cells() {
    // The issue's program: 29 / 58 / 27 / 57 Mops/s, twice as fast when the run of its own
    // variant before it left a file behind.
    let runs = session(&["a", "b"], 8, |v, k, _| {
        29.0 * noise(v, k, 0.03) * if k % 2 == 1 { 2.0 } else { 1.0 }
    });
    let result = judge(&runs, 0.05);
    assert_eq!(result.verdict, Verdict::Fail, "{}", result.evidence);
    assert!(
        result.reading.starts_with(
            "serial dependence within cells: each run lands on the other side of its cell's mean"
        ),
        "{}",
        result.reading
    );
    assert_eq!(result.runs.len(), 16);
    for part in ["trend:", "carry-over:", "within cells:", "whole sequence:"] {
        assert!(result.evidence.contains(part), "{}", result.evidence);
    }
}

#[test]
fn a_failure_that_rests_on_one_cell_names_only_that_cell() {
    // `a` climbs 5% a run; `b` and `c` hold still. Without `a`, nothing depends on order.
    let runs = session(&["a", "b", "c"], 16, |v, k, _| {
        if v == "a" {
            30.0 * (1.0 + 0.05 * k as f64)
        } else {
            30.0
        }
    });
    let result = judge(&runs, 0.05);
    assert_eq!(result.verdict, Verdict::Fail, "{}", result.evidence);
    let of_a: Vec<String> = runs
        .iter()
        .filter(|r| r.cell.variant == "a")
        .map(|r| r.id.clone())
        .collect();
    assert_eq!(result.runs, of_a);
    assert!(
        result
            .reading
            .ends_with("; it rests on a: without its runs no test fails"),
        "{}",
        result.reading
    );
}

#[test]
fn independent_runs_pass() {
    let runs = session(&["a", "b"], 12, |v, k, _| 30.0 * noise(v, k, 0.03));
    let result = judge(&runs, 0.05);
    assert_eq!(result.verdict, Verdict::Pass, "{}", result.evidence);
    assert!(
        result.reading.starts_with(
            "no dependence on execution order (adjusted p ≥ 0.70): neither on position"
        ),
        "{}",
        result.reading
    );
    assert!(result.runs.is_empty());
}

#[test]
fn a_part_that_cannot_run_makes_the_check_inconclusive() {
    // One variant: every run follows a run of `a`, so there is no carry-over to compare.
    let runs = session(&["a"], 12, |v, k, _| 30.0 * noise(v, k, 0.03));
    let result = judge(&runs, 0.05);
    assert_eq!(result.verdict, Verdict::Inconclusive, "{}", result.evidence);
    assert!(
        result.reading.starts_with(
            "carry-over from the previous run's variant not tested (it needs two predecessor variants with 2 runs each); where tested, no dependence"
        ),
        "{}",
        result.reading
    );
    assert!(
        result
            .evidence
            .contains("carry-over from the previous run's variant not tested"),
        "{}",
        result.evidence
    );
}

#[test]
fn cells_too_small_for_the_serial_test_leave_it_untested() {
    // Four cells of three runs: enough for the trend, too few per cell to pair runs.
    let runs = session(&["a", "b", "c", "d"], 3, |v, k, _| 30.0 * noise(v, k, 0.03));
    let result = judge(&runs, 0.05);
    assert_eq!(result.verdict, Verdict::Inconclusive, "{}", result.evidence);
    assert!(
        result.reading.starts_with(
            "serial dependence within cells not tested (it needs 8 runs in cells of at least 4 runs each)"
        ),
        "{}",
        result.reading
    );
}

#[test]
fn too_few_runs_is_not_run() {
    let runs = session(&["a", "b"], 3, |v, k, _| 30.0 * noise(v, k, 0.03));
    let result = judge(&runs, 0.05);
    assert_eq!(result.verdict, Verdict::NotRun);
}

#[test]
fn a_small_significant_drift_passes_and_says_so() {
    // +2% per 100 runs under ±0.2% noise: real, and under the declared 5%.
    let runs = session(&["a", "b"], 30, |v, k, position| {
        30.0 * noise(v, k, 0.002) * (1.0 + 0.0002 * position as f64)
    });
    let result = judge(&runs, 0.05);
    assert_eq!(result.verdict, Verdict::Pass, "{}", result.evidence);
    assert!(
        result
            .reading
            .starts_with("drift detected (+2.1% per 100 runs, adjusted p < 0.0001) but")
            && result
                .reading
                .contains("but smaller than the declared 5% per 100 runs; otherwise no dependence"),
        "{}",
        result.reading
    );
    // Declared smaller, the same drift fails.
    let strict = judge(&runs, 0.01);
    assert_eq!(strict.verdict, Verdict::Fail);
    assert!(
        strict.reading.starts_with(
            "values drift +2.1% per 100 runs in execution order, more than the declared 1%"
        ),
        "{}",
        strict.reading
    );
}

#[test]
fn a_large_drift_fails() {
    let runs = session(&["a", "b"], 30, |v, k, position| {
        30.0 * noise(v, k, 0.002) * (1.0 + 0.002 * position as f64)
    });
    let result = judge(&runs, 0.05);
    assert_eq!(result.verdict, Verdict::Fail, "{}", result.evidence);
    assert!(
        result.reading.starts_with("values drift +"),
        "{}",
        result.reading
    );
}

#[test]
fn carry_over_from_the_previous_variant_still_fails_first() {
    let mut previous = String::new();
    let runs: Vec<RunView> = session(&["a", "b"], 10, |v, k, _| 30.0 * noise(v, k, 0.03))
        .into_iter()
        .map(|mut r| {
            if previous == "a" {
                let v: f64 = r.values.numbers("v", 0)[0];
                r.values.insert("v", vec![(v / 2.0).to_string()]);
            }
            previous = r.cell.variant.clone();
            r
        })
        .collect();
    let result = judge(&runs, 0.05);
    assert_eq!(result.verdict, Verdict::Fail, "{}", result.evidence);
    assert!(
        result
            .reading
            .starts_with("runs right after a `a` run sat −"),
        "{}",
        result.reading
    );
}

#[test]
fn a_slow_first_run_in_each_cell_fails_on_the_first_of_cell_test() {
    // Six cells of eight runs; the first run of each is 40% slower: two slow runs in a session
    // of 48 form no trend, but each sits at the top of its own cell.
    let variants = ["a", "b", "c", "d", "e", "f"];
    let runs = session(&variants, 8, |v, k, _| {
        30.0 * noise(v, k, 0.03) * if k == 0 { 1.4 } else { 1.0 }
    });
    let result = judge(&runs, 0.05);
    assert_eq!(result.verdict, Verdict::Fail, "{}", result.evidence);
    assert!(
        result.reading.starts_with(
            "the first run of each cell sits high in its cell, on average 100.0% of the way from its lowest value"
        ),
        "{}",
        result.reading
    );
    // Each cell's first run at rank 8 of 8: 6 × 3.5 ranks above the centre.
    assert!(
        result.evidence.contains(
            "first of cell: van Elteren rank sum of each cell's first run over 6 cells, excess +21.00 ranks, mean position 100.0%, p < 0.0001 (Holm-adjusted < 0.0001)"
        ),
        "{}",
        result.evidence
    );
}

#[test]
fn every_statistic_and_p_value_the_evidence_prints_is_a_figure_in_its_order() {
    // Drift and carry-over both, so that every part runs and p-values differ in size.
    let runs = session(&["a", "b", "c"], 12, |v, k, position| {
        let after_b = if v == "a" && k % 3 == 0 { 1.2 } else { 1.0 };
        10.0 * noise(v, k, 0.05) * after_b * (1.0 + 0.002 * position as f64)
    });
    let result = judge(&runs, 0.05);
    let names: Vec<&str> = result.figures.iter().map(|f| f.name.as_str()).collect();
    let parts = [
        "trend",
        "carry-over",
        "within-cells",
        "sequence",
        "first-of-cell",
    ];
    let statistics = ["tau", "h", "z", "q", "excess"];
    let mut expected = Vec::new();
    for (part, statistic) in parts.iter().zip(statistics) {
        let tested = result.figures.iter().any(|f| f.name.starts_with(part));
        if tested {
            expected.push(format!("{part}.{statistic}"));
            expected.push(format!("{part}.p"));
            expected.push(format!("{part}.adjusted-p"));
        }
    }
    assert!(expected.len() >= 12, "{names:?}");
    assert_eq!(names, expected);
    // Each shows in the evidence after the one before it, its number last.
    let mut rest = result.evidence.as_str();
    for f in &result.figures {
        let at = rest
            .find(&f.shown())
            .unwrap_or_else(|| panic!("{} ({:?}) not in {rest:?}", f.name, f.shown()));
        assert!(f.shown().ends_with(&f.number), "{f:?}");
        assert!(
            !f.method.is_empty() && f.runs.starts_with("the 36 valid"),
            "{f:?}"
        );
        rest = &rest[at + f.shown().len()..];
    }
    let trend_p = &result.figures[1];
    assert_eq!(trend_p.shown(), format!("p = {}", trend_p.number));
    assert!(result.evidence.contains(&format!(
        "τ = {}, p = {} (Holm-adjusted {})",
        result.figures[0].number, trend_p.number, result.figures[2].number
    )));
}
