//! PELT changepoint detection and the steady-state classification of Barrett et al. 2017.

use super::outliers;
use serde::{Deserialize, Serialize};

/// Minimum segment length: a variance needs two points (R `changepoint`, `minseglen`
/// for `cpt.meanvar`).
pub const MIN_SEGMENT: usize = 2;

/// Penalty used by Barrett et al. (OOPSLA 2017, §4.1): 15·ln(n).
pub fn default_penalty(n: usize) -> f64 {
    15.0 * (n.max(1) as f64).ln()
}

/// Prefix sums for O(1) segment costs.
struct Cost {
    s1: Vec<f64>,
    s2: Vec<f64>,
    floor: f64,
}

impl Cost {
    fn new(series: &[f64]) -> Cost {
        let mean = series.iter().sum::<f64>() / series.len() as f64;
        let (mut s1, mut s2) = (vec![0.0], vec![0.0]);
        for &y in series {
            let c = y - mean; // centring keeps the variance formula accurate
            s1.push(s1[s1.len() - 1] + c);
            s2.push(s2[s2.len() - 1] + c * c);
        }
        let total_var = s2[series.len()] / series.len() as f64;
        Cost {
            s1,
            s2,
            floor: (total_var * 1e-8).max(f64::MIN_POSITIVE),
        }
    }

    /// Normal mean-and-variance change cost of `series[a..b]`: m·ln(σ̂²), σ̂² the MLE
    /// variance floored at 1e-8 × the whole-series variance (twice the negative profile
    /// log-likelihood up to a constant; Killick, Fearnhead & Eckley 2012 §4.2; Chen &
    /// Gupta 2000, ch. 3).
    fn of(&self, a: usize, b: usize) -> f64 {
        let m = (b - a) as f64;
        let s = self.s1[b] - self.s1[a];
        let var = ((self.s2[b] - self.s2[a]) - s * s / m) / m;
        m * var.max(self.floor).ln()
    }
}

/// PELT (Killick, Fearnhead & Eckley, "Optimal detection of changepoints with a linear
/// computational cost", JASA 107:1590, 2012, Algorithm 2) with the normal mean-and-variance
/// cost and pruning constant K = 0. Returns segment start indices, the first being 0.
/// Series shorter than 2·[`MIN_SEGMENT`], constant series, or series with non-finite values
/// give `[0]` (no changepoint).
pub fn pelt(series: &[f64], penalty: f64) -> Vec<usize> {
    let n = series.len();
    let flat = series.iter().all(|&y| y == series[0]);
    if n < 2 * MIN_SEGMENT || flat || series.iter().any(|y| !y.is_finite()) {
        return vec![0];
    }
    let cost = Cost::new(series);
    let mut f = vec![f64::INFINITY; n + 1];
    let mut last = vec![0usize; n + 1];
    f[0] = -penalty;
    let mut cands: Vec<usize> = vec![0];
    let mut vals: Vec<f64> = Vec::new();
    for t in MIN_SEGMENT..=n {
        if t >= 2 * MIN_SEGMENT {
            cands.push(t - MIN_SEGMENT);
        }
        vals.clear();
        vals.extend(cands.iter().map(|&s| f[s] + cost.of(s, t)));
        let (best, arg) =
            vals.iter().zip(&cands).fold(
                (f64::INFINITY, 0),
                |acc, (&v, &s)| if v < acc.0 { (v, s) } else { acc },
            );
        f[t] = best + penalty;
        last[t] = arg;
        // Pruning (KFE 2012, Theorem 3.1 with K = 0): drop s if F(s) + C(s,t) > F(t).
        // In place: no allocation per step.
        let (limit, mut i) = (f[t], 0);
        cands.retain(|_| {
            i += 1;
            vals[i - 1] <= limit
        });
    }
    let mut starts = vec![];
    let mut t = n;
    while t > 0 {
        t = last[t];
        starts.push(t);
    }
    starts.reverse();
    starts
}

/// The longest series PELT segments value by value: on a run without changes its pruning
/// removes almost nothing, so its work grows with the square of the length (KFE 2012 §3.1
/// prove linear cost only when changepoints grow with the series).
pub const EXACT_PELT_MAX: usize = 5_000;

/// Segment start indices of `values`: PELT on the values themselves up to
/// [`EXACT_PELT_MAX`]; past it, PELT on the means of consecutive blocks of
/// ⌈n / EXACT_PELT_MAX⌉ values, each change then placed among the values ([`refine`]). Means of
/// b independent values keep a change of mean and show a change of variance σ² as one of
/// σ²/b, so the same normal mean-and-variance cost applies to them. What is lost: a change
/// too brief to move a block mean, and the exact optimum over all segmentations. The default
/// penalty is 15·ln of the number of points segmented.
pub fn segment_starts(values: &[f64], penalty: Option<f64>) -> Vec<usize> {
    if values.len() <= EXACT_PELT_MAX {
        return pelt(
            values,
            penalty.unwrap_or_else(|| default_penalty(values.len())),
        );
    }
    let block = values.len().div_ceil(EXACT_PELT_MAX);
    let means: Vec<f64> = values
        .chunks(block)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    let coarse: Vec<usize> = pelt(
        &means,
        penalty.unwrap_or_else(|| default_penalty(means.len())),
    )
    .into_iter()
    .map(|start| start * block)
    .collect();
    refine(values, &coarse, block)
}

/// Places each change found on block means at the value where it splits best. A block that
/// straddles a change has a mean between the two levels and may come out as a segment of its
/// own: changes within two blocks of each other are taken as one. Each is then moved, within
/// a block either side, to the split of the values between its neighbours with the least
/// normal mean-and-variance cost.
fn refine(values: &[f64], coarse: &[usize], block: usize) -> Vec<usize> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for &c in coarse.iter().skip(1) {
        match spans.last_mut() {
            Some(span) if c - span.1 <= 2 * block => span.1 = c,
            _ => spans.push((c, c)),
        }
    }
    let cost = Cost::new(values);
    let mut starts = vec![0];
    for (i, &(lo, hi)) in spans.iter().enumerate() {
        let prev = starts[starts.len() - 1];
        let next = spans.get(i + 1).map_or(values.len(), |s| s.0);
        let from = lo.saturating_sub(block).max(prev + MIN_SEGMENT);
        let to = (hi + block).min(next.saturating_sub(MIN_SEGMENT));
        let split = |k: usize| cost.of(prev, k) + cost.of(k, next);
        let best = (from..=to)
            .min_by(|&a, &b| split(a).total_cmp(&split(b)))
            .unwrap_or(lo);
        starts.push(best);
    }
    starts
}

/// Run classification of Barrett, Bolz-Tereick, Killick, Mount & Tratt, "Virtual Machine
/// Warmup Blows Hot and Cold", OOPSLA 2017, §4.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SteadyState {
    /// One segment, or every segment equivalent to the last.
    Flat,
    /// The last segment is faster than or equivalent to every earlier one.
    Warmup,
    /// Some earlier segment is faster than the last one.
    Slowdown,
    /// The last changepoint falls in the final quarter of the series.
    NoSteadyState,
}

/// One changepoint segment `[start, end)` of the run's iterations, with the mean and sample sd
/// (0 for one value) of its iterations that are not outliers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    pub mean: f64,
    pub sd: f64,
}

/// Shape of one run (process execution).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunShape {
    pub state: SteadyState,
    /// First iteration of the steady block (the trailing segments equivalent to the last);
    /// `None` for `NoSteadyState`. Steady statistics should use the last segment only.
    pub steady_start: Option<usize>,
    pub segments: Vec<Segment>,
    /// Outlier iterations (ascending indices), left out of the segmentation but not removed
    /// from the run (see [`outliers`]).
    pub outliers: Vec<usize>,
}

/// Settings of [`classify_with`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassifyConfig {
    /// Lower values (e.g. times) are better.
    pub lower_is_better: bool,
    /// PELT penalty; `None` uses [`default_penalty`].
    pub penalty: Option<f64>,
    /// Relative tolerance below which segment means are always equivalent.
    pub rel_tolerance: f64,
    /// A last changepoint inside this final fraction means no steady state (paper: 500 of
    /// 2000 iterations, i.e. 0.25).
    pub final_fraction: f64,
    /// Leave outlier iterations out of the segmentation (Barrett et al. 2017 §4.1).
    pub exclude_outliers: bool,
}

impl Default for ClassifyConfig {
    fn default() -> Self {
        ClassifyConfig {
            lower_is_better: true,
            penalty: None,
            rel_tolerance: 1e-3,
            final_fraction: 0.25,
            exclude_outliers: true,
        }
    }
}

fn segment(series: &[f64], start: usize, end: usize) -> Segment {
    let part = &series[start..end];
    let m = part.len() as f64;
    let mean = part.iter().sum::<f64>() / m;
    let ss: f64 = part.iter().map(|y| (y - mean).powi(2)).sum();
    let sd = if part.len() > 1 {
        (ss / (m - 1.0)).sqrt()
    } else {
        0.0
    };
    Segment {
        start,
        end,
        mean,
        sd,
    }
}

/// Segment equivalence. Barrett et al. (§4.2) call segments equivalent when their means
/// differ by less than the larger of the segments' variance and 0.001 s; that compares
/// a variance with a mean and depends on units, so lab uses the larger standard deviation
/// and a relative floor `rel_tolerance`·max|mean| instead (a documented adaptation).
fn equivalent(a: &Segment, b: &Segment, rel_tolerance: f64) -> bool {
    let tol =
        a.sd.max(b.sd)
            .max(rel_tolerance * a.mean.abs().max(b.mean.abs()));
    (a.mean - b.mean).abs() <= tol
}

/// [`classify_with`] using the default settings and the given direction.
pub fn classify(series: &[f64], lower_is_better: bool) -> RunShape {
    classify_with(
        series,
        &ClassifyConfig {
            lower_is_better,
            ..ClassifyConfig::default()
        },
    )
}

/// Classify one run's in-order series (Barrett et al. 2017 §4.3) from its PELT segments.
/// Outlier iterations ([`outliers::outliers`]) are left out of the segmentation, as
/// warmup_stats' `bin/mark_changepoints_in_json` does, and changepoints are mapped back to the
/// run's own indices; segment boundaries and the final-quarter rule use those indices.
/// Empty series or series with non-finite values give `NoSteadyState` with no segments.
pub fn classify_with(series: &[f64], cfg: &ClassifyConfig) -> RunShape {
    let n = series.len();
    if n == 0 || series.iter().any(|y| !y.is_finite()) {
        return RunShape {
            state: SteadyState::NoSteadyState,
            steady_start: None,
            segments: vec![],
            outliers: vec![],
        };
    }
    let outliers = if cfg.exclude_outliers {
        outliers::outliers(series)
    } else {
        Vec::new()
    };
    let segments = segments_without(series, &outliers, cfg.penalty);
    let (state, steady_start) = judge(&segments, n, cfg);
    RunShape {
        state,
        steady_start,
        segments,
        outliers,
    }
}

/// PELT segments of `series` with the iterations at `outliers` left out. A segment's
/// statistics use its kept iterations; its bounds are the run's indices, a left-out iteration
/// belonging to the segment after the last kept one before it (warmup_stats shifts each
/// changepoint past the outliers before it).
fn segments_without(series: &[f64], outliers: &[usize], penalty: Option<f64>) -> Vec<Segment> {
    let kept: Vec<usize> = (0..series.len())
        .filter(|i| outliers.binary_search(i).is_err())
        .collect();
    let values: Vec<f64> = kept.iter().map(|&i| series[i]).collect();
    let starts = segment_starts(&values, penalty);
    let ends = starts
        .iter()
        .skip(1)
        .copied()
        .chain(std::iter::once(values.len()));
    let run_index = |k: usize| if k == 0 { 0 } else { kept[k - 1] + 1 };
    starts
        .iter()
        .zip(ends)
        .map(|(&s, e)| Segment {
            start: run_index(s),
            end: if e == values.len() {
                series.len()
            } else {
                run_index(e)
            },
            ..segment(&values, s, e)
        })
        .collect()
}

/// The state of a run of `n` iterations and the start of its steady block, from its segments.
fn judge(segments: &[Segment], n: usize, cfg: &ClassifyConfig) -> (SteadyState, Option<usize>) {
    let last = segments[segments.len() - 1];
    if segments.len() > 1 && last.start as f64 >= n as f64 * (1.0 - cfg.final_fraction) {
        return (SteadyState::NoSteadyState, None);
    }
    let eq = |s: &Segment| equivalent(s, &last, cfg.rel_tolerance);
    let block = segments.iter().rev().take_while(|s| eq(s)).count();
    let steady_start = Some(segments[segments.len() - block].start);
    let better = |s: &Segment| {
        if cfg.lower_is_better {
            s.mean < last.mean
        } else {
            s.mean > last.mean
        }
    };
    let state = if segments.iter().all(eq) {
        SteadyState::Flat
    } else if segments.iter().any(|s| !eq(s) && better(s)) {
        SteadyState::Slowdown
    } else {
        SteadyState::Warmup
    };
    (state, steady_start)
}

/// A cell is consistent when every run has the same classification (Barrett et al. 2017
/// §4.3, "consistent" vs "inconsistent" (VM, benchmark) pairs). Vacuously true when empty.
pub fn consistent(states: &[SteadyState]) -> bool {
    states.windows(2).all(|w| w[0] == w[1])
}

#[cfg(test)]
mod tests {

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
}
