//! How the analysis grows with n: the Theil–Sen slope and Mann–Kendall test over n runs in
//! execution order, and the bootstrap interval of the median and the mean of n single-value
//! runs, at n = 10,000, 100,000 and 1,000,000. After criterion's measurements it prints the
//! growth factor of each, time(10·n) / time(n): about 10 for linear work, 12–13 for
//! n log n, 100 for quadratic.
//!
//! Run: `cargo bench --bench scale` (a few minutes; `-- --quick` for a rougher pass).

use criterion::{BenchmarkId, Criterion};
use lab::stats::{self, Statistic};
use std::hint::black_box;
use std::time::Instant;

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];
/// Resamples per interval here: a fiftieth of the report's, so the 1M cases stay in seconds.
const RESAMPLES: usize = 200;

/// A drifting, noisy series (xorshift noise: deterministic, no dependency).
fn series(n: usize) -> Vec<f64> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            10.0 + 1e-6 * i as f64 + (state >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

type Case = (&'static str, fn(&[f64]));

fn trend(ys: &[f64]) {
    let xs: Vec<f64> = (1..=ys.len()).map(|i| i as f64).collect();
    black_box(stats::theil_sen_slope(&xs, ys));
    black_box(stats::mann_kendall(ys));
}

fn median_ci(ys: &[f64]) {
    let runs: Vec<Vec<f64>> = ys.iter().map(|&y| vec![y]).collect();
    let mut rng = stats::stream(1, "bench");
    black_box(stats::percentile_ci(
        &runs,
        Statistic::Median,
        RESAMPLES,
        0.95,
        &mut rng,
    ));
}

fn mean_ci(ys: &[f64]) {
    let mut rng = stats::stream(1, "bench");
    black_box(stats::bca_mean_ci(ys, RESAMPLES, 0.95, &mut rng));
}

const CASES: [Case; 3] = [
    ("Theil–Sen + Mann–Kendall", trend),
    ("median CI (percentile bootstrap)", median_ci),
    ("mean CI (BCa bootstrap)", mean_ci),
];

fn measure(c: &mut Criterion) {
    for (name, run) in CASES {
        let mut group = c.benchmark_group(name);
        group.sample_size(10);
        for n in SIZES {
            let ys = series(n);
            group.bench_with_input(BenchmarkId::from_parameter(n), &ys, |b, ys| {
                b.iter(|| run(ys))
            });
        }
        group.finish();
    }
}

/// Best of three wall times of one call, in seconds.
fn best_of_three(run: fn(&[f64]), ys: &[f64]) -> f64 {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            run(ys);
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn growth_factors() {
    println!("\ngrowth factor time(10·n) / time(n) (≈10 linear, ≈100 quadratic):");
    for (name, run) in CASES {
        let times: Vec<f64> = SIZES
            .iter()
            .map(|&n| best_of_three(run, &series(n)))
            .collect();
        let cells: Vec<String> = SIZES
            .iter()
            .zip(&times)
            .map(|(n, t)| format!("n = {n}: {:.3} s", t))
            .collect();
        let factors: Vec<String> = times
            .windows(2)
            .map(|w| format!("×{:.1}", w[1] / w[0]))
            .collect();
        println!(
            "  {name}: {}; growth {}",
            cells.join(", "),
            factors.join(", ")
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    measure(&mut c);
    c.final_summary();
    growth_factors();
}
