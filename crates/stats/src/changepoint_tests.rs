//! Unit tests of `changepoint`.

/// A deterministic noisy series: level plus uniform noise of ±`spread`.
fn noisy(n: usize, level: impl Fn(usize) -> f64, spread: f64) -> Vec<f64> {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    (0..n)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            level(i) + spread * ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
        })
        .collect()
}

#[test]
fn long_series_are_segmented_on_block_means_then_value_by_value_near_each_change() {
    // 200,000 values: blocks of 40; a 5% step at 123,457 is found at that very value.
    let series = noisy(200_000, |i| if i < 123_457 { 1.0 } else { 1.05 }, 0.02);
    assert_eq!(segment_starts(&series, None), vec![0, 123_457]);
    let flat = noisy(200_000, |_| 1.0, 0.02);
    assert_eq!(segment_starts(&flat, None), vec![0]);
    // A variance change alone: the spread quadruples at 150,000.
    let wider = noisy(200_000, |_| 1.0, 0.0);
    let wider: Vec<f64> = wider
        .iter()
        .zip(noisy(200_000, |_| 0.0, 0.02))
        .enumerate()
        .map(|(i, (l, e))| l + if i < 150_000 { e } else { 4.0 * e })
        .collect();
    // The least-cost split of these values falls one after the change.
    assert_eq!(segment_starts(&wider, None), vec![0, 150_001]);
}

#[test]
fn short_series_are_segmented_value_by_value_as_before() {
    let series = noisy(3_000, |i| if i < 1_234 { 1.0 } else { 1.05 }, 0.02);
    assert_eq!(
        segment_starts(&series, None),
        pelt(&series, default_penalty(3_000))
    );
    assert_eq!(segment_starts(&series, None), vec![0, 1_234]);
}
use super::super::reference::{reference, vecs};
use super::super::rng::{standard_normal, stream};
use super::*;

#[test]
fn pelt_matches_exact_optimal_partitioning() {
    // Python O(n²) optimal partitioning with the same cost (reference script): PELT is
    // exact (KFE 2012, Thm 3.2), so the segmentations must be identical.
    let r = reference();
    for case in r["changepoint"].as_array().unwrap() {
        let ys = vecs(&case["data"]);
        let want: Vec<usize> = vecs(&case["starts"]).iter().map(|&v| v as usize).collect();
        let pen = case["penalty"].as_f64().unwrap();
        assert!((pen - default_penalty(ys.len())).abs() < 1e-9);
        assert_eq!(pelt(&ys, pen), want, "{}", case["name"]);
    }
}

fn series(parts: &[(usize, f64, f64)], label: &str) -> Vec<f64> {
    let mut rng = stream(17, label);
    parts
        .iter()
        .flat_map(|&(k, m, sd)| {
            (0..k)
                .map(|_| m + sd * standard_normal(&mut rng))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn classifies_barrett_shapes() {
    let flat = classify(&series(&[(400, 100.0, 1.0)], "flat"), true);
    assert_eq!(
        (flat.state, flat.steady_start),
        (SteadyState::Flat, Some(0))
    );
    let warm = classify(
        &series(&[(60, 150.0, 2.0), (340, 100.0, 1.0)], "warm"),
        true,
    );
    assert_eq!(warm.state, SteadyState::Warmup);
    let start = warm.steady_start.unwrap();
    assert!((58..=62).contains(&start), "{warm:?}");
    // Same data, higher-is-better (e.g. throughput): the run got worse.
    let warm_hi = classify(
        &series(&[(60, 150.0, 2.0), (340, 100.0, 1.0)], "warm"),
        false,
    );
    assert_eq!(warm_hi.state, SteadyState::Slowdown);
    let slow = classify(
        &series(&[(200, 100.0, 1.0), (200, 120.0, 1.0)], "slow"),
        true,
    );
    assert_eq!(slow.state, SteadyState::Slowdown);
    let late = classify(
        &series(&[(360, 100.0, 1.0), (40, 130.0, 1.0)], "late"),
        true,
    );
    assert_eq!(
        (late.state, late.steady_start),
        (SteadyState::NoSteadyState, None)
    );
    assert_eq!(late.segments.len(), 2);
    assert_eq!(late.segments[1].start, 360);
    // Nothing before the late change was slower than what came after it.
    assert_eq!(late.warmup_end, 0);
}

/// A run that warmed up for 60 iterations, then changed again late: it has no steady state,
/// but its warm-up is still no measurement of the steady program, and is dropped.
#[test]
fn a_late_change_does_not_keep_the_warm_up_before_it() {
    let run = classify(
        &series(
            &[(60, 300.0, 2.0), (300, 100.0, 1.0), (40, 115.0, 1.0)],
            "warm-late",
        ),
        true,
    );
    assert_eq!(run.state, SteadyState::NoSteadyState);
    assert_eq!(run.steady_start, None);
    assert_eq!(run.warmup_end, 60);
    // Higher is better: the same series' slow start is the better one, not a warm-up.
    let higher = classify_with(
        &series(
            &[(60, 300.0, 2.0), (300, 100.0, 1.0), (40, 115.0, 1.0)],
            "warm-late",
        ),
        &ClassifyConfig {
            lower_is_better: false,
            ..ClassifyConfig::default()
        },
    );
    assert_eq!(higher.warmup_end, 0);
}

/// The run: 30 slow warm-up iterations near 0.82, then a steady level near 0.344,
/// 100 iterations in all; `blip` puts one very slow iteration at 90.
fn warmup_run(blip: bool) -> Vec<f64> {
    let mut run = series(&[(30, 0.82, 0.01), (70, 0.344, 0.003)], "issue");
    if blip {
        run[90] = 1.5;
    }
    run
}

#[test]
fn one_late_blip_no_longer_hides_the_warmup() {
    let clean = classify(&warmup_run(false), true);
    let blipped = classify(&warmup_run(true), true);
    assert_eq!(clean.state, SteadyState::Warmup, "{clean:?}");
    assert_eq!(blipped.state, SteadyState::Warmup, "{blipped:?}");
    assert_eq!(clean.steady_start, Some(30));
    assert_eq!(
        blipped.steady_start, clean.steady_start,
        "same iterations dropped"
    );
    assert_eq!(
        (clean.outliers.clone(), blipped.outliers.clone()),
        (vec![], vec![90])
    );
    // The blip stays inside the last segment's bounds, out of its statistics.
    let last = blipped.segments.last().unwrap();
    assert_eq!((last.start, last.end), (30, 100));
    assert!((last.mean - 0.344).abs() < 0.002, "{last:?}");
    // Without the outlier step, the blip makes changepoints in the final quarter: the
    // failure the issue reports.
    let naive = classify_with(
        &warmup_run(true),
        &ClassifyConfig {
            exclude_outliers: false,
            ..ClassifyConfig::default()
        },
    );
    assert_eq!(naive.state, SteadyState::NoSteadyState, "{naive:?}");
}

#[test]
fn a_blip_between_segments_goes_with_the_later_one() {
    // Left out: 18 and 19, the last two of the first level. Kept indices are 0–17 and
    // 20–39; the changepoint before kept index 17 + 1 maps to run index 17 + 1 = 18, so
    // both left-out iterations fall in the later segment, outside both means.
    let mut run = vec![10.0; 40];
    run.iter_mut().skip(20).for_each(|v| *v = 5.0);
    let segs = segments_without(&run, &[18, 19], None);
    let bounds: Vec<(usize, usize)> = segs.iter().map(|s| (s.start, s.end)).collect();
    assert_eq!(bounds, vec![(0, 18), (18, 40)]);
    assert_eq!((segs[0].mean, segs[1].mean), (10.0, 5.0));
}

#[test]
fn consistency_and_edges() {
    use SteadyState::*;
    assert!(consistent(&[Warmup, Warmup]) && consistent(&[]));
    assert!(!consistent(&[Warmup, Flat]));
    assert_eq!(pelt(&[], 1.0), vec![0]);
    assert_eq!(pelt(&[1.0; 50], 1.0), vec![0]);
    assert_eq!(pelt(&[1.0, f64::NAN, 2.0, 3.0], 1.0), vec![0]);
    assert_eq!(classify(&[], true).state, NoSteadyState);
    assert_eq!(classify(&[5.0], true).state, Flat);
    // Segment statistics: mean and sample sd of the last segment only.
    let s = segment(&[1.0, 2.0, 3.0, 5.0, 7.0], 2, 5);
    assert_eq!((s.mean, s.sd), (5.0, 2.0));
}

/// PELT computing every candidate's value exactly at every step (the search before its
/// values were bounded first), to compare with.
fn pelt_every_value_exactly(series: &[f64], penalty: f64) -> Vec<usize> {
    let n = series.len();
    let cost = super::super::pelt_search::Cost::new(series);
    let (mut f, mut last) = (vec![f64::INFINITY; n + 1], vec![0usize; n + 1]);
    f[0] = -penalty;
    let mut cands: Vec<usize> = vec![0];
    for t in MIN_SEGMENT..=n {
        if t >= 2 * MIN_SEGMENT {
            cands.push(t - MIN_SEGMENT);
        }
        let vals: Vec<f64> = cands.iter().map(|&s| f[s] + cost.of(s, t)).collect();
        let (best, arg) =
            vals.iter().zip(&cands).fold(
                (f64::INFINITY, 0),
                |acc, (&v, &s)| {
                    if v < acc.0 { (v, s) } else { acc }
                },
            );
        (f[t], last[t]) = (best + penalty, arg);
        let mut i = 0;
        cands.retain(|_| {
            i += 1;
            vals[i - 1] <= f[t]
        });
    }
    let (mut starts, mut t) = (vec![], n);
    while t > 0 {
        t = last[t];
        starts.push(t);
    }
    starts.reverse();
    starts
}

#[test]
fn bounded_search_finds_the_segmentation_exact_values_give() {
    let warmup = noisy(3_000, |i| 1.0 + 0.5 * (-(i as f64) / 300.0).exp(), 0.02);
    let steps = noisy(2_000, |i| [1.0, 1.3, 0.9, 1.0][i / 500], 0.05);
    let tiny = noisy(1_500, |i| 1e-9 * (1.0 + (i / 700) as f64), 1e-11);
    let huge = noisy(1_500, |i| 1e12 * (1.0 + 0.01 * (i / 400) as f64), 1e9);
    let ties: Vec<f64> = (0..1_000).map(|i| [1.0, 2.0, 1.0, 3.0][i % 4]).collect();
    for series in [warmup, steps, tiny, huge, ties] {
        for penalty in [0.5, 3.0, default_penalty(series.len())] {
            assert_eq!(
                pelt(&series, penalty),
                pelt_every_value_exactly(&series, penalty),
                "penalty {penalty}"
            );
        }
    }
}
