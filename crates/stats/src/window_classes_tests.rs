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
/// two-sample Kolmogorov–Smirnov test at the 0.1% level (critical distance 1.95·√(2/n)), the
/// windows spanning `half_width_sds` standard deviations on each side.
fn same_distribution_through(cell: &[Vec<Vec<f64>>], resamples: usize, half_width_sds: f64) {
    let (sorted, ranks, machines) = ranked(cell);
    let mut classed = ClassedRuns::new(&ranks, &machines).expect("windowed");
    classed.half_width_sds = half_width_sds;
    let mut rng = stream(3, "windowed");
    let windowed: Vec<f64> = (0..resamples)
        .map(|_| {
            let (i, j, f) = classed.draw(0.5, &mut rng);
            let (a, b) = (sorted[i as usize], sorted[j as usize]);
            a + f * (b - a)
        })
        .collect();
    assert!(
        classed.plans.values().all(Option::is_some),
        "every window is used"
    );
    let mut rng = stream(4, "full");
    let full: Vec<f64> = (0..resamples)
        .map(|_| full_median(cell, &mut rng))
        .collect();
    let critical = 1.95 * (2.0 / resamples as f64).sqrt();
    let distance = ks_distance(windowed, full);
    assert!(distance < critical, "KS distance {distance} ≥ {critical}");
}

/// [`same_distribution_through`] the windows lab uses.
fn same_distribution(cell: &[Vec<Vec<f64>>], resamples: usize) {
    same_distribution_through(cell, resamples, HALF_WIDTH_SDS);
}

#[test]
fn resamples_whose_quantile_falls_outside_the_window_are_completed_exactly() {
    // Windows of half a standard deviation each side miss about six resamples in ten; drawn
    // again instead of completed, those would leave the windowed ones, all near the middle,
    // over-represented and the distribution too narrow (a KS distance near 0.12).
    same_distribution_through(&cell(1, 4_000, 3, 1), 2_000, 0.5);
    same_distribution_through(&cell(3, 1_500, 3, 2), 2_000, 0.5);
    let mut mixed = cell(2, 2_000, 3, 7);
    for (i, run) in mixed[1].iter_mut().enumerate() {
        run.truncate(1 + i % 3);
    }
    same_distribution_through(&mixed, 2_000, 0.5);
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
    // Twenty values: four standard deviations span more than five of them. Every value of the
    // picked machines is drawn instead, from the same stream.
    let mut cell = cell(2, 5, 2, 1);
    // Each run's values in the order of their ranks, as the windows keep them.
    for run in cell.iter_mut().flatten() {
        run.sort_by(f64::total_cmp);
    }
    let (sorted, ranks, machines) = ranked(&cell);
    let mut classed = ClassedRuns::new(&ranks, &machines).expect("built");
    let (mut rng, mut again) = (stream(1, "small"), stream(1, "small"));
    for _ in 0..20 {
        let (i, j, f) = classed.draw(0.5, &mut rng);
        let (a, b) = (sorted[i as usize], sorted[j as usize]);
        // The machines are picked first, then each one's runs and values drawn.
        let picked: Vec<u32> = cell.iter().map(|_| below(&mut again, 2)).collect();
        let mut drawn = Vec::new();
        for m in picked {
            let machine = &cell[m as usize];
            for _ in 0..machine.len() {
                let run = &machine[below(&mut again, machine.len() as u32) as usize];
                drawn.extend((0..2).map(|_| run[below(&mut again, 2) as usize]));
            }
        }
        let median = crate::summary::quantile_in_place(&mut drawn, 0.5);
        assert_eq!(a + f * (b - a), median);
    }
    assert!(classed.plans.values().all(Option::is_none));
}

#[test]
fn windows_are_kept_for_a_few_machines_only() {
    let (_, ranks, machines) = ranked(&cell(MAX_MACHINES + 1, 10, 1, 1));
    assert!(ClassedRuns::new(&ranks, &machines).is_none());
}

/// [`ClassedRuns::draw`] as it drew before the runs in the window were laid out as codes:
/// every value of a drawn run looked up in the ranks of all runs and placed against the
/// window there, with the plan [`ClassedRuns::draw`] built for the same machines.
fn draw_through_ranks(classed: &ClassedRuns, p: f64, rng: &mut Stream) -> Option<(u32, u32, f64)> {
    let n_machines = classed.machines.len() as u32;
    let picked: Vec<u32> = (0..n_machines)
        .map(|_| {
            if n_machines == 1 {
                0
            } else {
                below(rng, n_machines)
            }
        })
        .collect();
    let mut key = picked.clone();
    key.sort_unstable();
    let plan = classed
        .plans
        .get(&(multiset_key(&key), p.to_bits()))?
        .as_ref()?;
    let (a, b) = (plan.a, plan.b);
    let mut counts = vec![0u32; (b - a) as usize];
    let mut tally = Tally::default();
    for &m in &picked {
        let classes = plan.machines[m as usize].as_ref()?;
        let runs = &classed.machines[m as usize];
        let copies = draw_outside(
            m,
            classes,
            runs.len() as u64,
            &mut Vec::new(),
            &mut tally,
            rng,
        );
        let inside: Vec<Span> = runs
            .iter()
            .copied()
            .filter(|&(off, len)| {
                let run = &classed.ranks[off as usize..(off + len) as usize];
                run.iter().any(|&r| a <= r && r < b)
            })
            .collect();
        for _ in 0..copies {
            let (off, len) = inside[below(rng, inside.len() as u32) as usize];
            for _ in 0..len {
                let k = if len == 1 { 0 } else { below(rng, len) };
                let r = classed.ranks[(off + k) as usize];
                tally.total += 1;
                if r < a {
                    tally.below += 1;
                } else if r < b {
                    counts[(r - a) as usize] += 1;
                }
            }
        }
    }
    let (i, j, f) = order_stats(&counts, &tally, p)?;
    Some((a + i, a + j, f))
}

#[test]
fn runs_in_the_window_are_drawn_as_through_the_ranks_of_every_run() {
    // Runs of three values on one and on three machines, runs of one value on two, and runs
    // of mixed lengths: the same order statistics from the same words, resample by resample.
    let mut mixed = cell(1, 3_000, 3, 7);
    for (i, run) in mixed[0].iter_mut().enumerate() {
        run.truncate(1 + i % 4);
    }
    for (cell, p) in [
        (cell(1, 4_000, 3, 1), 0.5),
        (cell(3, 1_500, 3, 2), 0.5),
        (cell(2, 6_000, 1, 5), 0.9),
        (mixed, 0.5),
    ] {
        let (_, ranks, machines) = ranked(&cell);
        let mut classed = ClassedRuns::new(&ranks, &machines).expect("windowed");
        let mut rng = stream(11, "codes");
        let mut completed = 0;
        for _ in 0..300 {
            let mut again = rng.clone();
            let drawn = classed.draw(p, &mut rng);
            // A resample whose quantile the window missed is completed with further words.
            let Some(through) = draw_through_ranks(&classed, p, &mut again) else {
                completed += 1;
                continue;
            };
            assert_eq!(drawn, through);
            assert_eq!(rng.next_u32(), again.next_u32(), "the same words taken");
        }
        // About one resample in 16,000 falls outside windows of four standard deviations.
        assert!(completed <= 1, "{completed} of 300 resamples completed");
    }
}
