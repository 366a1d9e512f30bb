//! Analysis speed: per-cell statistics with 10,000-resample bootstrap intervals for a synthetic
//! session of 100,000 runs (5,000 cells × 20 runs). Target: under 5 s on 2 cores.

use criterion::{Criterion, criterion_group, criterion_main};
use lab::analysis::{Resampling, RunView, cell_stats};
use lab::config;
use lab::plan::CellKey;
use lab::stats::{self, Generator};
use lab::validity::RunValues;
use std::collections::BTreeMap;
use std::path::Path;

const CELLS: usize = 5_000;
const RUNS_PER_CELL: usize = 20;

fn experiment() -> config::Experiment {
    let values: Vec<String> = (0..CELLS).map(|i| i.to_string()).collect();
    let source = format!(
        "[experiment]\ntitle = \"t\"\nhypothesis = \"h\"\n[params]\ni = [{}]\n[[variant]]\nname = \"v\"\nrun = [\"true\"]\n[metric.m]\njson = \"m\"\n",
        values.join(", ")
    );
    config::parse(&source, Path::new("lab.toml"), Path::new("bench"), None)
        .expect("valid experiment")
}

/// Deterministic pseudo-random run values around a per-cell level.
fn runs() -> (Vec<CellKey>, Vec<RunView>) {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let cells: Vec<CellKey> = (0..CELLS)
        .map(|i| {
            let value = config::ParamValue::Int(i as i64);
            CellKey::new("v", BTreeMap::from([("i".into(), value)]).into())
        })
        .collect();
    let mut views = Vec::with_capacity(CELLS * RUNS_PER_CELL);
    for (c, cell) in cells.iter().enumerate() {
        for r in 0..RUNS_PER_CELL {
            let value = 10.0 + c as f64 * 0.001 + next();
            views.push(RunView {
                id: format!("r{}", views.len() + 1),
                position: views.len() + 1,
                cell: cell.clone(),
                repetition: r as u32 + 1,
                warmup: false,
                wall_s: 1.0,
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
                values: RunValues::of("m", vec![value.to_string()]),
                env_padding: None,
                heap_shift: None,
                node: None,
                usage: Default::default(),
            });
        }
    }
    (cells, views)
}

fn analysis(c: &mut Criterion) {
    let exp = experiment();
    let (cells, views) = runs();
    let resampling = Resampling {
        seed: 1,
        resamples: 10_000,
        level: 0.95,
        generator: Generator::Xoshiro256PlusPlus,
    };
    let mut group = c.benchmark_group("analysis");
    group.sample_size(10);
    group.bench_function("5,000 cells × 20 runs, 10,000 resamples", |b| {
        b.iter(|| cell_stats(&exp, &cells, &views, resampling))
    });
    group.finish();
}

/// The BCa interval of a mean of 10,000 values from 1,000 resamples, drawn by each
/// analysis's generator: most of a large session's analysis is this.
fn resampled_means(c: &mut Criterion) {
    let values: Vec<f64> = (0..10_000)
        .map(|i| 1.0 + (f64::from(i) * 0.37).sin())
        .collect();
    let mut group = c.benchmark_group("bca mean, 10,000 values, 1,000 resamples");
    group.sample_size(10);
    for (name, generator) in [
        ("analysis 1 (ChaCha8)", Generator::ChaCha8),
        ("analysis 2 (xoshiro256++)", Generator::Xoshiro256PlusPlus),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut rng = stats::stream_of(generator, 1, "mean");
                stats::bca_mean_ci(&values, 1_000, 0.95, &mut rng)
            })
        });
    }
    group.finish();
}

/// The Theil–Sen slope of a series in run order, as the order check and the drift of a cell
/// compute it: 10,000 runs (a large cell) and 100,000 (a large session's residuals).
fn theil_sen(c: &mut Criterion) {
    let mut group = c.benchmark_group("theil-sen slope");
    group.sample_size(10);
    for n in [10_000usize, 100_000] {
        let xs: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let ys: Vec<f64> = (0..n)
            .map(|i| 1e-7 * i as f64 + (i as f64 * 0.37).sin() * 0.01)
            .collect();
        group.bench_function(format!("{n} points"), |b| {
            b.iter(|| stats::theil_sen_slope(&xs, &ys))
        });
    }
    group.finish();
}

criterion_group!(benches, analysis, resampled_means, theil_sen);
criterion_main!(benches);
