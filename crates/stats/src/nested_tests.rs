//! Tests of the three-stage bootstrap (`nested.rs`) against its exact distribution on tiny
//! data and the closed-form variance of a three-stage resampled mean.

use super::super::bootstrap::percentile_ci;
use super::super::rng::stream;
use super::*;
use std::collections::BTreeMap;

fn singles(xs: &[f64]) -> Vec<Vec<f64>> {
    xs.iter().map(|&x| vec![x]).collect()
}

#[test]
fn medians_of_tiny_resamples_follow_their_exact_distribution() {
    // Machine A ran [1] and [2], machine B ran [10, 30] and [20]. Enumerated by hand: a
    // resample draws 2 machines (4 equally likely ordered pairs), in each 2 runs (4 ordered
    // pairs), and B's two-value run draws its 2 values (4 ordered pairs).
    let data = vec![
        vec![vec![1.0], vec![2.0]],
        vec![vec![10.0, 30.0], vec![20.0]],
    ];
    let exact = exact_median_distribution(&data);
    let total: f64 = exact.values().sum();
    assert!((total - 1.0).abs() < 1e-12, "{total}");
    let mut rs = NestedResampler::new(&data).unwrap();
    let mut rng = stream(5, "nested/exact");
    let draws = 40_000;
    let mut seen: BTreeMap<u64, f64> = BTreeMap::new();
    for _ in 0..draws {
        *seen
            .entry(rs.draw(Statistic::Median, &mut rng).to_bits())
            .or_default() += 1.0 / draws as f64;
    }
    // Every outcome the resampler gives is possible, and each is as frequent as it should be:
    // within 4 binomial standard deviations at 40,000 draws.
    for (bits, share) in &seen {
        let p = exact.get(bits).copied().unwrap_or(0.0);
        let sd = (p * (1.0 - p) / draws as f64).sqrt();
        assert!(
            (share - p).abs() <= 4.0 * sd + 1e-9,
            "median {}: drawn {share}, exact {p}",
            f64::from_bits(*bits)
        );
    }
    assert_eq!(seen.len(), exact.len(), "every possible median was drawn");
}

/// The exact bootstrap distribution of the pooled median, by enumerating every resample.
fn exact_median_distribution(machines: &[Vec<Vec<f64>>]) -> BTreeMap<u64, f64> {
    let mut out = BTreeMap::new();
    let m = machines.len();
    for picks in sequences(m, m) {
        let mut partial = vec![(Vec::new(), 1.0 / (m as f64).powi(m as i32))];
        for &i in &picks {
            partial = extend_by_machine(partial, &machines[i]);
        }
        for (values, p) in partial {
            *out.entry(type7_median(values).to_bits()).or_insert(0.0) += p;
        }
    }
    out
}

/// Every resample of one drawn machine appended to each partial resample, with its probability.
fn extend_by_machine(partial: Vec<(Vec<f64>, f64)>, runs: &[Vec<f64>]) -> Vec<(Vec<f64>, f64)> {
    let r = runs.len();
    let mut out = partial;
    for _ in 0..r {
        let mut next = Vec::new();
        for (values, p) in &out {
            for run in runs {
                for draws in sequences(run.len(), run.len()) {
                    let mut v = values.clone();
                    v.extend(draws.iter().map(|&k| run[k]));
                    let q = p / r as f64 / (run.len() as f64).powi(run.len() as i32);
                    next.push((v, q));
                }
            }
        }
        out = next;
    }
    out
}

/// Every sequence of `len` indices below `n`.
fn sequences(n: usize, len: usize) -> Vec<Vec<usize>> {
    (0..len).fold(vec![Vec::new()], |acc, _| {
        acc.iter()
            .flat_map(|s| {
                (0..n).map(move |i| {
                    let mut t = s.clone();
                    t.push(i);
                    t
                })
            })
            .collect()
    })
}

fn type7_median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * 0.5;
    let k = h.floor() as usize;
    let b = v[(k + 1).min(v.len() - 1)];
    v[k] + (h - k as f64) * (b - v[k])
}

#[test]
fn resampled_means_have_the_three_stage_variance() {
    // For a balanced design the variance of a three-stage resampled mean is, by the law of
    // total variance (Davison & Hinkley 1997 §3.8, extended by one stage):
    //   S_M/m + S_R/(m·r) + S_I/(m·r·c)
    // with S_M the plug-in variance of machine means, S_R the mean plug-in variance of run means
    // within a machine, S_I the mean plug-in variance of values within a run.
    let (m, r, c) = (4usize, 5usize, 6usize);
    let data: Vec<Vec<Vec<f64>>> = (0..m)
        .map(|i| {
            (0..r)
                .map(|j| {
                    (0..c)
                        .map(|k| (10 * i + 3 * j + (k * k) % 7) as f64 + 0.25 * k as f64)
                        .collect()
                })
                .collect()
        })
        .collect();
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let plug_in = |xs: &[f64]| {
        let mu = mean(xs);
        xs.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / xs.len() as f64
    };
    let run_means: Vec<Vec<f64>> = data
        .iter()
        .map(|runs| runs.iter().map(|v| mean(v)).collect())
        .collect();
    let machine_means: Vec<f64> = run_means.iter().map(|v| mean(v)).collect();
    let s_m = plug_in(&machine_means);
    let s_r = mean(&run_means.iter().map(|v| plug_in(v)).collect::<Vec<_>>());
    let s_i = mean(
        &data
            .iter()
            .flatten()
            .map(|v| plug_in(v))
            .collect::<Vec<_>>(),
    );
    let expected = s_m / m as f64 + s_r / (m * r) as f64 + s_i / (m * r * c) as f64;

    let mut rs = NestedResampler::new(&data).unwrap();
    let mut rng = stream(9, "nested/variance");
    let draws = 40_000;
    let means: Vec<f64> = (0..draws)
        .map(|_| rs.draw(Statistic::Mean, &mut rng))
        .collect();
    let got = plug_in(&means);
    // The sampling error of a variance from 40,000 near-normal draws is about 0.7%.
    assert!(
        (got / expected - 1.0).abs() < 0.03,
        "resampled variance {got}, closed form {expected}"
    );
    assert!((mean(&means) - rs.observed(Statistic::Mean)).abs() < 0.02 * expected.sqrt());
}

#[test]
fn one_machine_gives_the_two_stage_interval() {
    // With one machine the first stage always draws it: the same bootstrap distribution as the
    // two-stage resampler's, so the two intervals agree to Monte-Carlo error.
    let runs: Vec<Vec<f64>> = (0..12)
        .map(|j| {
            (0..8)
                .map(|k| 20.0 + (j % 5) as f64 + 0.1 * k as f64)
                .collect()
        })
        .collect();
    let nested = nested_percentile_ci(
        std::slice::from_ref(&runs),
        Statistic::Median,
        10_000,
        0.95,
        &mut stream(3, "one/nested"),
    )
    .unwrap();
    let two = percentile_ci(
        &runs,
        Statistic::Median,
        10_000,
        0.95,
        &mut stream(3, "one/two"),
    )
    .unwrap();
    let width = two.hi - two.lo;
    assert!(
        (nested.lo - two.lo).abs() < 0.05 * width,
        "{nested:?} {two:?}"
    );
    assert!(
        (nested.hi - two.hi).abs() < 0.05 * width,
        "{nested:?} {two:?}"
    );
}

#[test]
fn machines_that_differ_widen_the_interval_beyond_pooled_runs() {
    // Three machines at 10, 12 and 14 with runs spread ±0.1: pooling runs sees 15 runs, and
    // their mean a standard error of 1.63/√15 = 0.42 about 12; resampling machines sees three
    // values, and a standard error of 1.63/√3 = 0.94; with 3 machines a resample of one machine
    // thrice is 1 in 27, so the 95% interval reaches from about 10 to about 14.
    let machine = |centre: f64| -> Vec<Vec<f64>> {
        [-0.1, -0.05, 0.0, 0.05, 0.1]
            .iter()
            .map(|d| vec![centre + d])
            .collect()
    };
    let data = vec![machine(10.0), machine(12.0), machine(14.0)];
    let pooled: Vec<Vec<f64>> = data.iter().flatten().cloned().collect();
    let mut rng = stream(4, "widen");
    let nested = nested_percentile_ci(&data, Statistic::Mean, 10_000, 0.95, &mut rng).unwrap();
    let one = percentile_ci(&pooled, Statistic::Mean, 10_000, 0.95, &mut rng).unwrap();
    assert!(nested.lo < 10.2 && nested.hi > 13.8, "{nested:?}");
    assert!(one.lo > 10.8 && one.hi < 13.2, "{one:?}");
}

#[test]
fn identical_data_give_identical_intervals() {
    let data = vec![
        vec![vec![1.0, 1.5], vec![1.2]],
        vec![vec![2.0], vec![2.5, 2.25]],
    ];
    let a = nested_percentile_ci(&data, Statistic::Median, 500, 0.9, &mut stream(1, "x"));
    let b = nested_percentile_ci(&data, Statistic::Median, 500, 0.9, &mut stream(1, "x"));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(
        (a.lo.to_bits(), a.hi.to_bits()),
        (b.lo.to_bits(), b.hi.to_bits())
    );
    // Pinned: a change of the draws' order would change every interval reported.
    assert_eq!((a.lo, a.hi, a.level), (1.1, 2.375, 0.9));
}

#[test]
fn ratios_resample_each_side_in_three_stages() {
    // b = 2·a value for value: the observed ratio is exactly 1/2 and its interval straddles it.
    let a = vec![
        singles(&[10.0, 11.0, 12.0]),
        singles(&[14.0, 15.0, 13.0]),
        singles(&[9.0, 10.5, 11.5]),
    ];
    let b: Vec<Vec<Vec<f64>>> = a
        .iter()
        .map(|m| m.iter().map(|r| vec![2.0 * r[0]]).collect())
        .collect();
    let mut rng = stream(2, "ratio");
    let est = nested_ratio_ci(&a, &b, Statistic::Median, 4000, 0.95, &mut rng).unwrap();
    assert!((est.ratio - 0.5).abs() < 1e-15);
    assert!(est.interval.lo < 0.5 && est.interval.hi > 0.5, "{est:?}");
    let negative = vec![singles(&[-1.0, 2.0])];
    assert!(nested_ratio_ci(&negative, &negative, Statistic::Mean, 100, 0.95, &mut rng).is_none());
}

#[test]
fn degenerate_inputs_give_none_or_the_value() {
    let mut rng = stream(0, "edge");
    let m = Statistic::Median;
    assert!(nested_percentile_ci(&[], m, 100, 0.95, &mut rng).is_none());
    assert!(nested_percentile_ci(&[vec![vec![]]], m, 100, 0.95, &mut rng).is_none());
    let nan = vec![vec![vec![f64::NAN]]];
    assert!(nested_percentile_ci(&nan, m, 100, 0.95, &mut rng).is_none());
    let one = vec![vec![vec![3.0]], vec![vec![], vec![3.0]], vec![]];
    assert!(nested_percentile_ci(&one, m, 1, 0.95, &mut rng).is_none());
    assert!(nested_percentile_ci(&one, m, 100, 1.0, &mut rng).is_none());
    let iv = nested_percentile_ci(&one, m, 100, 0.95, &mut rng).unwrap();
    assert_eq!((iv.lo, iv.hi), (3.0, 3.0));
}
