use super::*;
use crate::rng::stream;

/// Machines × runs × values: run levels spread by machine and run, a run's first value 30%
/// above its others (a warm-up), values rounded to three significant digits (ties).
fn cell(machines: usize, runs: usize, len: usize, seed: u64) -> Vec<Vec<Vec<f64>>> {
    let mut rng = stream(seed, "cell");
    let mut unit = || f64::from(below(&mut rng, 1 << 20)) / f64::from(1u32 << 20);
    (0..machines)
        .map(|m| {
            (0..runs)
                .map(|_| {
                    let level = 10.0 * (1.0 + 0.05 * m as f64) * (1.0 + 0.1 * unit());
                    (0..len)
                        .map(|i| {
                            let warm = if i == 0 { 1.3 } else { 1.0 };
                            let x = level * warm * (1.0 + 0.04 * unit());
                            (x * 10.0).round() / 10.0
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// The pooled sorted values, each value's rank grouped by run, and each machine's runs.
fn ranked(cell: &[Vec<Vec<f64>>]) -> (Vec<f64>, Vec<u32>, Vec<Vec<Span>>) {
    let values: Vec<f64> = cell.iter().flatten().flatten().copied().collect();
    let mut order: Vec<u32> = (0..values.len() as u32).collect();
    order.sort_by(|&i, &j| values[i as usize].total_cmp(&values[j as usize]));
    let mut ranks = vec![0u32; values.len()];
    for (rank, &i) in order.iter().enumerate() {
        ranks[i as usize] = rank as u32;
    }
    let sorted = order.iter().map(|&i| values[i as usize]).collect();
    let (mut offset, mut machines) = (0u32, Vec::new());
    for machine in cell {
        let mut runs = Vec::new();
        for run in machine {
            runs.push((offset, run.len() as u32));
            offset += run.len() as u32;
        }
        machines.push(runs);
    }
    (sorted, ranks, machines)
}

/// Type-7 median of one resample drawing every value: machines, runs, then values.
fn full_median(cell: &[Vec<Vec<f64>>], rng: &mut Stream) -> f64 {
    let mut drawn = Vec::new();
    let m = cell.len() as u32;
    for _ in 0..m {
        let machine = &cell[below(rng, m) as usize];
        for _ in 0..machine.len() {
            let run = &machine[below(rng, machine.len() as u32) as usize];
            for _ in 0..run.len() {
                drawn.push(run[below(rng, run.len() as u32) as usize]);
            }
        }
    }
    crate::summary::quantile_in_place(&mut drawn, 0.5)
}

/// The two-sample Kolmogorov–Smirnov statistic: the largest gap between the empirical CDFs.
fn ks_distance(mut xs: Vec<f64>, mut ys: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    ys.sort_by(f64::total_cmp);
    let (n, m) = (xs.len() as f64, ys.len() as f64);
    let mut gap: f64 = 0.0;
    for &t in xs.iter().chain(&ys) {
        let fx = xs.partition_point(|&x| x <= t) as f64 / n;
        let fy = ys.partition_point(|&y| y <= t) as f64 / m;
        gap = gap.max((fx - fy).abs());
    }
    gap
}

/// The windowed medians and every-value medians of `resamples` resamples of `cell` pass a
/// two-sample Kolmogorov–Smirnov test at the 0.1% level (critical distance 1.95·√(2/n)).
fn same_distribution(cell: &[Vec<Vec<f64>>], resamples: usize) {
    let (sorted, ranks, machines) = ranked(cell);
    let mut classed = ClassedRuns::new(&ranks, &machines).expect("windowed");
    let mut rng = stream(3, "windowed");
    let (mut misses, mut windowed) = (0, Vec::new());
    while windowed.len() < resamples {
        match classed.draw(0.5, &mut rng) {
            Some((i, j, f)) => {
                let (a, b) = (sorted[i as usize], sorted[j as usize]);
                windowed.push(a + f * (b - a));
            }
            None => misses += 1,
        }
    }
    assert_eq!(misses, 0, "the window never misses");
    let mut rng = stream(4, "full");
    let full: Vec<f64> = (0..resamples)
        .map(|_| full_median(cell, &mut rng))
        .collect();
    let critical = 1.95 * (2.0 / resamples as f64).sqrt();
    let distance = ks_distance(windowed, full);
    assert!(distance < critical, "KS distance {distance} ≥ {critical}");
}

#[test]
fn two_stage_windowed_medians_are_distributed_as_every_value_drawn() {
    same_distribution(&cell(1, 4_000, 3, 1), 1_500);
}

#[test]
fn three_stage_windowed_medians_are_distributed_as_every_value_drawn() {
    same_distribution(&cell(3, 1_500, 3, 2), 1_500);
}

#[test]
fn runs_of_one_value_on_machines_are_windowed_too() {
    same_distribution(&cell(2, 6_000, 1, 5), 1_500);
}

#[test]
fn a_window_over_a_quarter_of_the_values_is_not_used() {
    // Twenty values: ten standard deviations span them all.
    let (_, ranks, machines) = ranked(&cell(1, 10, 2, 1));
    let mut classed = ClassedRuns::new(&ranks, &machines).expect("built");
    assert_eq!(classed.draw(0.5, &mut stream(1, "small")), None);
}

#[test]
fn windows_are_kept_for_a_few_machines_only() {
    let (_, ranks, machines) = ranked(&cell(MAX_MACHINES + 1, 10, 1, 1));
    assert!(ClassedRuns::new(&ranks, &machines).is_none());
}
