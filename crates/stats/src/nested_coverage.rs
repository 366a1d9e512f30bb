//! Test-only coverage study of runs nested in machines: does the three-stage interval cover
//! the true median near its nominal level with and without a machine effect, how far does the
//! runs-only interval fall short when machines differ, and how often does the machine-effect
//! test raise a false alarm or find a real effect?

use super::rng::Stream;
use rayon::prelude::*;

use super::bootstrap::{Interval, Statistic, percentile_ci};
use super::machine_effect::machine_effect;
use super::nested::nested_percentile_ci;
use super::rng::{standard_normal, stream};
use super::summary::{median, quantile_in_place};
use super::uniform::below;

/// Simulated sessions per scenario.
const SIMS: usize = 200;
/// Resamples per interval.
const B: usize = 1000;
/// Permutations per machine-effect test.
const PERMUTATIONS: usize = 999;
/// The true median of every simulated cell.
const TRUTH: f64 = 10.0;

/// The shape of a simulated cell: machines × runs × iterations, and the machines' spread.
#[derive(Clone, Copy, Debug)]
struct Design {
    machines: usize,
    runs: usize,
    iterations: usize,
    /// τ: machine means are drawn from N(10, τ²); 0 is no machine effect.
    tau: f64,
}

/// y = 10 + τ·u_machine + v_run + e_iteration, u, v, e ~ N(0, 1): a run's level varies by 1,
/// its iterations by 1 around it, and machines by τ. Symmetric, so the median is 10.
fn simulate(d: Design, rng: &mut Stream) -> Vec<Vec<Vec<f64>>> {
    (0..d.machines)
        .map(|_| {
            let machine = TRUTH + d.tau * standard_normal(rng);
            (0..d.runs)
                .map(|_| {
                    let run = machine + standard_normal(rng);
                    (0..d.iterations)
                        .map(|_| run + standard_normal(rng))
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// How an interval is computed from a simulated cell.
#[derive(Clone, Copy, Debug)]
enum Method {
    /// Machines, runs and iterations resampled with replacement (lab's).
    Nested,
    /// Runs and iterations resampled, machines ignored (lab's one-level interval).
    RunsOnly,
    /// Machines resampled with replacement, runs and iterations kept as they are (Davison &
    /// Hinkley's "Strategy 1"; the alternative lab did not take).
    MachinesOnly,
}

fn interval(method: Method, cell: &[Vec<Vec<f64>>], rng: &mut Stream) -> Option<Interval> {
    match method {
        Method::Nested => nested_percentile_ci(cell, Statistic::Median, B, 0.95, rng),
        Method::RunsOnly => {
            let runs: Vec<Vec<f64>> = cell.iter().flatten().cloned().collect();
            percentile_ci(&runs, Statistic::Median, B, 0.95, rng)
        }
        Method::MachinesOnly => Some(machines_only(cell, rng)),
    }
}

/// The 95% percentile interval of the median resampling whole machines only.
fn machines_only(cell: &[Vec<Vec<f64>>], rng: &mut Stream) -> Interval {
    let machines: Vec<Vec<f64>> = cell
        .iter()
        .map(|m| m.iter().flatten().copied().collect())
        .collect();
    let mut stats: Vec<f64> = (0..B)
        .map(|_| {
            let drawn: Vec<f64> = (0..machines.len())
                .flat_map(|_| machines[below(rng, machines.len() as u32) as usize].clone())
                .collect();
            median(&drawn)
        })
        .collect();
    let lo = quantile_in_place(&mut stats, 0.025);
    let hi = quantile_in_place(&mut stats, 0.975);
    Interval {
        lo,
        hi,
        level: 0.95,
    }
}

/// Share of [`SIMS`] seeded cells of design `d` whose interval holds the true median.
fn coverage(d: Design, method: Method) -> f64 {
    let hits = (0..SIMS)
        .into_par_iter()
        .filter(|i| {
            let mut rng = stream(2027, &format!("nested/{d:?}/{i}"));
            let cell = simulate(d, &mut rng);
            interval(method, &cell, &mut rng).is_some_and(|iv| iv.lo <= TRUTH && TRUTH <= iv.hi)
        })
        .count();
    hits as f64 / SIMS as f64
}

/// Share of [`SIMS`] seeded cells of design `d` in which the machine-effect test's p-value is
/// at most 0.05 (the same cells [`coverage`] draws).
fn alarms(d: Design) -> f64 {
    let hits = (0..SIMS)
        .into_par_iter()
        .filter(|i| {
            let mut rng = stream(2027, &format!("nested/{d:?}/{i}"));
            let cell = simulate(d, &mut rng);
            let medians: Vec<Vec<f64>> = cell
                .iter()
                .map(|m| m.iter().map(|run| median(run)).collect())
                .collect();
            machine_effect(&medians, PERMUTATIONS, &mut rng).is_some_and(|e| e.p_value <= 0.05)
        })
        .count();
    hits as f64 / SIMS as f64
}

/// Eight machines of ten runs of ten iterations, machines spread by `tau`.
fn eight_machines(tau: f64) -> Design {
    Design {
        machines: 8,
        runs: 10,
        iterations: 10,
        tau,
    }
}

#[test]
fn the_nested_interval_covers_with_and_without_a_machine_effect() {
    // 200 cells each (Monte-Carlo standard error about 0.015 at 95%), 1,000 resamples per
    // interval. Observed with these seeds:
    //                                  nested   runs only
    //   (a) no machine effect, τ = 0    0.990    0.975
    //   (b) machines spread τ = 2       0.945    0.570
    // The nested interval covers near 95% in both; it is conservative without a machine effect
    // (the runs' spread is counted at two stages, see nested.rs), so (a) may reach 1.00. The
    // runs-only interval treats 80 runs on 8 machines as 80 independent runs: with machines
    // spread twice as much as runs it holds the truth little more than half the time.
    let (a, b) = (eight_machines(0.0), eight_machines(2.0));
    let nested = (coverage(a, Method::Nested), coverage(b, Method::Nested));
    let runs_only = (coverage(a, Method::RunsOnly), coverage(b, Method::RunsOnly));
    println!("8 machines: nested {nested:?}, runs only {runs_only:?}");
    assert!((0.93..=1.0).contains(&nested.0), "(a) nested {}", nested.0);
    assert!((0.88..=0.99).contains(&nested.1), "(b) nested {}", nested.1);
    assert!(
        (0.93..=0.99).contains(&runs_only.0),
        "(a) runs only {}",
        runs_only.0
    );
    assert!(runs_only.1 < 0.70, "(b) runs only {}", runs_only.1);
}

#[test]
fn with_few_machines_only_lower_stages_keep_coverage_when_machines_agree() {
    // Why lab draws runs and iterations again within each drawn machine: with 3 machines and
    // no machine effect, resampling whole machines alone covers 0.700 (its resamples never
    // leave the range of three machines), the nested interval 0.975. With a machine effect
    // (τ = 2) no resampling of 3 machines can cover near 95% (nested 0.740, machines only
    // 0.730): three machines say little about the machines they were drawn from, which the
    // manual says (docs/src/topics/statistics.md) and the machine-effect check reports.
    let agree = Design {
        machines: 3,
        runs: 10,
        iterations: 10,
        tau: 0.0,
    };
    let differ = Design { tau: 2.0, ..agree };
    let (nested, whole) = (
        coverage(agree, Method::Nested),
        coverage(agree, Method::MachinesOnly),
    );
    println!("3 machines agreeing: nested {nested}, machines only {whole}");
    assert!(nested >= 0.95, "{nested}");
    assert!(whole < 0.80, "{whole}");
    let (nested, whole) = (
        coverage(differ, Method::Nested),
        coverage(differ, Method::MachinesOnly),
    );
    println!("3 machines differing: nested {nested}, machines only {whole}");
    assert!((0.65..0.85).contains(&nested) && (0.65..0.85).contains(&whole));
}

#[test]
fn the_machine_effect_test_keeps_its_level_and_finds_real_effects() {
    // The permutation test at 5% on the same cells (999 permutations each). Observed: false
    // alarms 0.045 with no machine effect, power 1.000 with τ = 2 on 8 machines; on 3 machines
    // 0.035 and 0.905.
    let false_alarms = alarms(eight_machines(0.0));
    let power = alarms(eight_machines(2.0));
    let three = Design {
        machines: 3,
        ..eight_machines(2.0)
    };
    let power_three = alarms(three);
    println!("false alarms {false_alarms}, power {power} (8 machines), {power_three} (3)");
    assert!(false_alarms <= 0.08, "{false_alarms}");
    assert!(power >= 0.98, "{power}");
    assert!(power_three >= 0.85, "{power_three}");
}

#[test]
#[ignore = "timing: one cell of 4 machines × 20 runs × 100 iterations, 10,000 resamples"]
fn timing_nested_interval() {
    let d = Design {
        machines: 4,
        runs: 20,
        iterations: 100,
        tau: 1.0,
    };
    let cell = simulate(d, &mut stream(1, "timing"));
    let runs: Vec<Vec<f64>> = cell.iter().flatten().cloned().collect();
    let start = std::time::Instant::now();
    let nested = nested_percentile_ci(&cell, Statistic::Median, 10_000, 0.95, &mut stream(2, "t"));
    let nested_s = start.elapsed().as_secs_f64();
    let start = std::time::Instant::now();
    let one = percentile_ci(&runs, Statistic::Median, 10_000, 0.95, &mut stream(2, "t"));
    let one_s = start.elapsed().as_secs_f64();
    assert!(nested.is_some() && one.is_some());
    println!(
        "4 × 20 × 100 values, 10,000 resamples: nested {nested_s:.3} s, runs only {one_s:.3} s"
    );
}

#[test]
#[ignore = "exploration: coverage of every method over designs; run with --nocapture"]
fn explore_coverage() {
    for machines in [2, 3, 4, 6, 8] {
        for tau in [0.0, 2.0] {
            let d = Design {
                machines,
                runs: 10,
                iterations: 10,
                tau,
            };
            let [n, r, m] = [Method::Nested, Method::RunsOnly, Method::MachinesOnly]
                .map(|method| coverage(d, method));
            println!(
                "{machines} machines, τ = {tau}: nested {n:.3}, runs only {r:.3}, machines only {m:.3}, alarms {:.3}",
                alarms(d)
            );
        }
    }
}
