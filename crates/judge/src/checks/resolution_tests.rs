use super::*;
use crate::analysis::Resampling;
use crate::checks::shape::Context;
use rand::Rng;
use std::path::Path;

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

#[test]
fn a_ten_millisecond_clock_has_a_quantum_of_ten() {
    let q = quantum(&[20.0, 20.0, 30.0, 30.0, 20.0]).expect("a quantum");
    assert!(close(q, 10.0), "{q}");
    // The same in seconds, where 0.03 − 0.02 is not 0.01 in binary.
    let q = quantum(&[0.02, 0.03, 0.05, 0.02, 0.07]).expect("a quantum");
    assert!(close(q, 0.01), "{q}");
    // Differences of 20 and 30 ticks: the step is their common divisor, 10, not 20.
    let q = quantum(&[100.0, 120.0, 150.0, 170.0]).expect("a quantum");
    assert!(close(q, 10.0), "{q}");
    // Whole milliseconds printed with rounding noise in the last place.
    let q = quantum(&[3.0000000000001, 4.0, 2.9999999999998, 5.0]).expect("a quantum");
    assert!(close(q, 1.0), "{q}");
}

#[test]
fn one_value_has_no_quantum_and_two_have_their_gap() {
    assert_eq!(quantum(&[20.0; 6]), None);
    assert_eq!(quantum(&[]), None);
    assert!(close(quantum(&[3.0, 4.0, 3.0]).unwrap(), 1.0));
    assert_eq!(distinct_count(&[3.0, 4.0, 3.0, 3.0 + 1e-13]), 2);
}

#[test]
fn values_from_a_continuous_distribution_have_no_quantum() {
    let mut rng = lab_stats::stream(3, "resolution-continuous");
    for _ in 0..100 {
        let values: Vec<f64> = (0..30)
            .map(|_| 3.0 * (1.0 + 0.02 * (2.0 * rng.r#gen::<f64>() - 1.0)))
            .collect();
        assert_eq!(quantum(&values), None, "{values:?}");
    }
}

#[test]
fn integer_counts_in_the_millions_move_in_negligible_steps() {
    let mut rng = lab_stats::stream(4, "resolution-counts");
    let values: Vec<f64> = (0..30)
        .map(|_| (4_000_000.0 + rng.r#gen::<f64>() * 80_000.0).round())
        .collect();
    let q = quantum(&values).expect("whole numbers lie on a lattice");
    assert!(close(q, 1.0), "{q}");
    let lattice = Lattice::of(&values);
    assert_eq!(cell_step(&values[..10], 10, lattice), None);
    // Printed to six decimals: the printing's own step, a millionth of a millisecond.
    let printed: Vec<f64> = values
        .iter()
        .map(|v| (v / 1e6 * 1e6).round() / 1e6)
        .collect();
    assert_eq!(cell_step(&printed[..10], 10, Lattice::of(&printed)), None);
}

#[test]
fn a_coarse_lattice_or_a_repeated_value_is_a_step() {
    // Ten runs at 3 or 4 ms on a 1 ms clock: 1 ms is 33% of the median.
    let values = [3.0, 4.0, 3.0, 3.0, 4.0, 3.0, 3.0, 3.0, 4.0, 3.0];
    let pooled = Lattice::of(&[3.0, 4.0, 5.0, 3.0]);
    let step = cell_step(&values, 10, pooled).expect("coarse");
    assert_eq!(step.q, Some(1.0));
    assert!(close(step.share(), 1.0 / 3.0));
    // Every run printed 20 ms and so did every other cell: a step of unknown size.
    let same = [20.0; 10];
    let step = cell_step(&same, 10, Lattice::of(&same)).expect("coarse");
    assert_eq!(step.q, None);
    assert_eq!(step.share(), f64::INFINITY);
    // Four runs are too few to tell a repeated value from chance; three lattice values make
    // the lattice known, and a lattice under 5% of the median is fine.
    assert_eq!(cell_step(&same[..4], 4, Lattice::of(&same)), None);
    // One value in every run of this cell where the variant's other cells vary on no lattice:
    // the clock is fine there, and the value is the program's.
    let mut variant = same.to_vec();
    variant.extend([40.13, 39.71, 40.52, 40.07]);
    assert_eq!(cell_step(&same, 10, Lattice::of(&variant)), None);
    let fine = Lattice::of(&[3.00, 3.01, 3.03]);
    assert_eq!(cell_step(&[3.0; 10], 10, fine), None);
    // 0.2 ms on 3 ms is 6.7%: coarse.
    let coarse = Lattice::of(&[3.0, 3.2, 3.6]);
    assert!(cell_step(&[3.0, 3.2, 3.0, 3.2, 3.6], 5, coarse).is_some());
}

#[test]
fn a_rate_read_from_a_coarse_clock_steps_by_its_own_gap() {
    // 1000 operations over 3 or 4 ticks of 1 ms: 333.3 or 250 per ms. Over 3, 4 and 5 ticks
    // the rates lie on a lattice of 1000/60 = 16.7 per ms, 6.7% of 250, which is not the step
    // near 333.3.
    let values = [1000.0 / 3.0, 250.0, 1000.0 / 3.0, 1000.0 / 3.0, 250.0];
    let pooled = Lattice::of(&[1000.0 / 3.0, 250.0, 200.0]);
    assert!(close(pooled.q.unwrap(), 1000.0 / 60.0));
    let step = cell_step(&values, 5, pooled).expect("two values in five runs");
    assert!(close(step.q.unwrap(), 1000.0 / 3.0 - 250.0));
}

#[test]
fn widening_by_a_step_at_each_end() {
    let iv = crate::checks::interval(1.1, 1.2);
    // b = 3 ms, steps of 1 ms: (1.1·3 − 1)/(3 + 1) = 0.575 and (1.2·3 + 1)/(3 − 1) = 2.3.
    let w = widen(&iv, 3.0, Some(1.0), Some(1.0));
    assert!(close(w.lo, 0.575) && close(w.hi, 2.3), "{w:?}");
    // A step of unknown size, or one as large as b, bounds nothing.
    let w = widen(&iv, 3.0, None, Some(1.0));
    assert_eq!((w.lo, w.hi), (0.0, f64::INFINITY));
    let w = widen(&iv, 3.0, Some(1.0), Some(3.0));
    assert_eq!(w.hi, f64::INFINITY);
    // A fine step barely moves it: 1 ns on 3 ms.
    let w = widen(&iv, 3.0, Some(1e-6), Some(1e-6));
    assert!(
        (w.lo - 1.1).abs() < 1e-6 && (w.hi - 1.2).abs() < 1e-6,
        "{w:?}"
    );
    let w = widen_by(&iv, Some(0.3), 3.0);
    assert!(close(w.lo, 1.0) && close(w.hi, 1.3), "{w:?}");
}

/// Reference: `python3 -c "import statistics as st, math; x=[3,4,3,3,4.]; s=st.stdev(x);
/// m=math.sqrt(5/4); print(max(0,s-m)/(st.mean(x)+1), (s+m)/(st.mean(x)-1))"` → 0.0
/// 0.6940652276062754.
#[test]
fn a_step_bounds_the_spread() {
    let (lo, hi) = cv_bounds(&[3.0, 4.0, 3.0, 3.0, 4.0], Some(1.0));
    assert_eq!(lo, 0.0);
    assert!((hi - 0.694_065_227_606_275_4).abs() < 1e-12, "{hi}");
    // One value, spread zero, still bounded by the step: up to √(5/4)/(20 − 10) = 11.2%.
    let (lo, hi) = cv_bounds(&[20.0; 5], Some(10.0));
    assert_eq!(lo, 0.0);
    assert!(close(hi, 1.25f64.sqrt() * 10.0 / 10.0), "{hi}");
    assert_eq!(cv_bounds(&[20.0; 5], None), (0.0, f64::INFINITY));
}

#[test]
fn the_reading_names_the_step_and_its_share() {
    let step = Step {
        q: Some(10.0),
        median: 20.0,
    };
    assert_eq!(
        reading("ms", "ms", &step),
        "`ms` moves in steps of 10.0 ms, 50.0% of its median: the program's clock is coarser than the difference asked about; time with a finer clock (clock_gettime), print more digits or give each run more work"
    );
    let unknown = Step {
        q: None,
        median: 20.0,
    };
    assert!(
        reading("ms", "ms", &unknown).starts_with("`ms` printed 20.0 ms in every run"),
        "{}",
        reading("ms", "ms", &unknown)
    );
}

#[test]
fn a_step_is_written_in_its_unit() {
    assert_eq!(step_value(1.0, "ms"), "1.00 ms");
    assert_eq!(step_value(1e-4, "s"), "100 µs");
    assert_eq!(step_value(1e-4, "Mops/s"), "0.000100 Mops/s");
}

fn experiment(check: &str) -> Experiment {
    let src = format!(
        r#"
[experiment]
title = "t"
hypothesis = "h"
[params]
work = [3, 20, 24, 27, 100]
[[variant]]
name = "v"
run = ["x", "{{work}}"]
[metric.ms]
json = "ms"
unit = "ms"
better = "lower"
[metric.ops]
json = "ops"
unit = "ops"
count = true
[[check]]
name = "the check"
{check}
"#
    );
    lab_config::parse(&src, Path::new("lab.toml"), Path::new("x"), None).unwrap()
}

fn judge_check(exp: &Experiment, cells: &[CellStats]) -> crate::checks::CheckResult {
    let cx = Context {
        exp,
        spec: &exp.checks[0],
        cells,
        runs: &[],
        resampling: Resampling {
            seed: 1,
            resamples: 2000,
            level: 0.95,
            generator: lab_stats::Generator::ChaCha8,
        },
        margin: None,
    };
    crate::checks::declared(&cx).expect("a declared check")
}

const COMPARE: &str = r#"kind = "compare"
metric = "ms"
a = { work = 27 }
b = { work = 24 }
expect = "a > 1.05 * b""#;

/// A cell of variant `v` at `work`, whose runs printed `values` of `ms`.
fn cell(work: i64, values: &[f64]) -> CellStats {
    let mut cell = crate::analysis::cell_of_values(&format!("v work={work}"), "ms", values);
    let params = [("work".to_string(), lab_config::ParamValue::Int(work))];
    let params = std::sync::Arc::new(params.into_iter().collect());
    cell.cell = lab_config::plan::CellKey::new("v", params);
    cell
}

#[test]
fn a_compare_on_a_coarse_clock_is_inconclusive_and_names_the_step() {
    let exp = experiment(COMPARE);
    // The issue's program: 27 ms of work read as 20 or 30 ms, 24 ms as 20 ms every run.
    let a = cell(27, &[30.0, 20.0, 30.0, 30.0, 20.0, 30.0, 30.0, 30.0]);
    let b = cell(24, &[20.0; 8]);
    let result = judge_check(&exp, &[a, b]);
    assert_eq!(result.verdict, Verdict::Inconclusive, "{}", result.evidence);
    assert!(
        result
            .reading
            .starts_with("`ms` moves in steps of 10.0 ms, 50.0% of its median"),
        "{}",
        result.reading
    );
    assert!(
        result.evidence.contains("widened by one step at each end"),
        "{}",
        result.evidence
    );
}

#[test]
fn every_run_printing_one_value_decides_nothing() {
    let exp = experiment(COMPARE);
    let a = cell(27, &[30.0; 8]);
    let b = cell(24, &[20.0; 8]);
    let result = judge_check(&exp, &[a, b]);
    assert_eq!(result.verdict, Verdict::Inconclusive, "{}", result.evidence);
    assert!(result.reading.starts_with("`ms` moves in steps of 10.0 ms"));
    // With three runs each (too few to call a step), the zero-width interval decides nothing.
    let a = cell(27, &[30.0; 3]);
    let b = cell(24, &[20.0; 3]);
    let result = judge_check(&exp, &[a, b]);
    assert_eq!(result.verdict, Verdict::Inconclusive, "{}", result.evidence);
    assert!(
        result.reading.contains("has zero width"),
        "{}",
        result.reading
    );
}

#[test]
fn a_difference_coarser_than_the_step_is_still_decided() {
    // 100 ms against 20 ms on a 10 ms clock: widened, a/b lies in [3, 11], above 1.05.
    let exp = experiment(COMPARE);
    let a = cell(27, &[100.0, 110.0, 100.0, 100.0, 90.0, 100.0]);
    let b = cell(24, &[20.0, 20.0, 30.0, 20.0, 20.0, 20.0]);
    let result = judge_check(&exp, &[a, b]);
    assert_eq!(result.verdict, Verdict::Pass, "{}", result.reading);
}

#[test]
fn a_fine_clock_decides_as_before() {
    let exp = experiment(COMPARE);
    let a: Vec<f64> = (0..8).map(|i| 3.4 + 0.01 * f64::from(i)).collect();
    let b: Vec<f64> = (0..8).map(|i| 3.0 + 0.013 * f64::from(i)).collect();
    let cells = [cell(27, &a), cell(24, &b)];
    let result = judge_check(&exp, &cells);
    assert_eq!(result.verdict, Verdict::Pass, "{}", result.reading);
}

#[test]
fn a_stable_check_on_a_coarse_clock_is_inconclusive() {
    let exp = experiment("kind = \"stable\"\nmetric = \"ms\"\nmax_cv = \"5%\"");
    // CV 0.0% on a 10 ms clock: the spread could be anything up to 11%.
    let still = cell(27, &[20.0; 6]);
    let other = cell(24, &[30.0, 20.0, 30.0, 30.0, 30.0, 30.0]);
    let result = judge_check(&exp, &[still, other]);
    assert_eq!(result.verdict, Verdict::Inconclusive, "{}", result.evidence);
    assert!(
        result.reading.starts_with("`ms` moves in steps of 10.0 ms"),
        "{}",
        result.reading
    );
    assert!(
        result.evidence.contains("the CV lies in [0.0%,"),
        "{}",
        result.evidence
    );
}

#[test]
fn counts_are_not_judged() {
    let exp = experiment(COMPARE);
    assert!(clocked(&exp, "ms"));
    assert!(!clocked(&exp, "ops"), "a declared count has no clock");
    let ops = crate::analysis::cell_of_values("a", "ops", &[1000.0; 6]);
    assert_eq!(step_of(&exp, std::slice::from_ref(&ops), &ops), None);
}

#[test]
fn the_check_fails_naming_the_metric_the_step_and_its_share() {
    let exp = experiment(COMPARE);
    let a = cell(27, &[3.0, 4.0, 3.0, 3.0, 4.0, 3.0]);
    let b = cell(24, &[3.0, 3.0, 3.0, 2.0, 3.0, 3.0]);
    let cells = [a, b];
    let coarse: Vec<(&CellStats, Step)> = cells
        .iter()
        .filter_map(|c| Some((c, step_of(&exp, &cells, c)?)))
        .collect();
    assert_eq!(coarse.len(), 2);
    let judged: Vec<&CellStats> = cells.iter().collect();
    let result = decided(&exp, &judged, &coarse);
    assert_eq!(result.verdict, Verdict::Fail);
    assert!(
        result.reading.starts_with(
            "`ms` moves in steps of 1.00 ms, 33.3% of its median in `v work=24`, and 1 more cell: the program's clock is coarser"
        ),
        "{}",
        result.reading
    );
    assert!(
        result
            .evidence
            .starts_with("2 of 2 cells move in steps of 5.0% of their median or more"),
        "{}",
        result.evidence
    );
}

/// A clean cell of 10 runs and three cells of its variant, as the check sees them: `draw`
/// gives each run's value.
fn flagged(rng: &mut lab_stats::Stream, draw: impl Fn(&mut lab_stats::Stream, f64) -> f64) -> bool {
    let medians = [3.0, 30.0, 300.0];
    let cells: Vec<Vec<f64>> = medians
        .iter()
        .map(|m| (0..10).map(|_| draw(rng, *m)).collect())
        .collect();
    let pooled: Vec<f64> = cells.iter().flatten().copied().collect();
    let lattice = Lattice::of(&pooled);
    cells
        .iter()
        .any(|c| cell_step(c, c.len(), lattice).is_some())
}

/// 1,000 clean variants of three cells each (3, 30 and 300 ms, 10 runs) timed on a fine clock
/// and printed to nanoseconds (six decimals in ms), with 0.5% to 3% of noise; and 1,000 of
/// counts in the millions (whole numbers, 1% of noise). A clean value lies on no lattice
/// coarser than its printing, a millionth of its median, so none may be flagged (the bound
/// asserted is 1%).
#[test]
fn clean_cells_do_not_move_in_steps() {
    let mut rng = lab_stats::stream(42, "resolution-false-alarms");
    let mut alarms = 0;
    for _ in 0..1000 {
        let spread = 0.005 + 0.025 * rng.r#gen::<f64>();
        alarms += usize::from(flagged(&mut rng, |r, m| {
            let v = m * (1.0 + spread * (2.0 * r.r#gen::<f64>() - 1.0));
            (v * 1e6).round() / 1e6
        }));
    }
    for _ in 0..1000 {
        alarms += usize::from(flagged(&mut rng, |r, m| {
            (m * 1e6 * (1.0 + 0.01 * (2.0 * r.r#gen::<f64>() - 1.0))).round()
        }));
    }
    assert!(alarms as f64 / 2000.0 <= 0.01, "{alarms} false alarms");
    assert_eq!(alarms, 0);
}

/// The same cells read from a 1 ms clock at a random phase (floor of the end less floor of the
/// start): the 3 ms cell moves in steps of a third of its median, and every variant is caught.
#[test]
fn cells_on_a_millisecond_clock_are_caught() {
    let mut rng = lab_stats::stream(43, "resolution-planted");
    let mut caught = 0;
    for _ in 0..1000 {
        caught += usize::from(flagged(&mut rng, |r, m| {
            let d = m * (1.0 + 0.02 * (2.0 * r.r#gen::<f64>() - 1.0));
            let start = 1000.0 * r.r#gen::<f64>();
            (start + d).floor() - start.floor()
        }));
    }
    assert_eq!(caught, 1000);
}
