//! PELT changepoint detection and the steady-state classification of Barrett et al. 2017.

use super::outliers;
use super::pelt_search::{Candidates, Cost};
pub use lab_basis::SteadyState;
use serde::Serialize;

/// Minimum segment length: a variance needs two points (R `changepoint`, `minseglen`
/// for `cpt.meanvar`).
pub const MIN_SEGMENT: usize = 2;

/// Penalty used by Barrett et al. (OOPSLA 2017, §4.1): 15·ln(n).
pub fn default_penalty(n: usize) -> f64 {
    15.0 * (n.max(1) as f64).ln()
}

/// PELT (Killick, Fearnhead & Eckley, "Optimal detection of changepoints with a linear
/// computational cost", JASA 107:1590, 2012, Algorithm 2) with the normal mean-and-variance
/// cost and pruning constant K = 0 ([`super::pelt_search`] takes each step). Returns segment
/// start indices, the first being 0.
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
    let mut cands = Candidates::default();
    cands.push(0);
    for t in MIN_SEGMENT..=n {
        if t >= 2 * MIN_SEGMENT {
            cands.push(t - MIN_SEGMENT);
        }
        let (best, arg) = cands.least(&cost, &f, t);
        f[t] = best + penalty;
        last[t] = arg;
        cands.prune(&cost, &f, t, f[t]);
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
    /// Where a run with no steady state left its warm-up: the end of the leading segments
    /// each worse than, and not equivalent to, every later one (0 when none was). A late
    /// change makes a run unsteady; it does not make the slow start it left behind a
    /// measurement of the steady program. Equals `steady_start` otherwise.
    pub warmup_end: usize,
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
            warmup_end: 0,
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
    let warmup_end = steady_start.unwrap_or_else(|| leading_warmup(&segments, n, cfg));
    RunShape {
        state,
        steady_start,
        warmup_end,
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

/// The end of the longest run of leading segments each worse than, and not equivalent to,
/// every segment after it, keeping more than the final fraction of the run; 0 when the first
/// segment is not such a warm-up.
fn leading_warmup(segments: &[Segment], n: usize, cfg: &ClassifyConfig) -> usize {
    let worse = |a: &Segment, b: &Segment| {
        !equivalent(a, b, cfg.rel_tolerance)
            && if cfg.lower_is_better {
                a.mean > b.mean
            } else {
                a.mean < b.mean
            }
    };
    let keeps_enough =
        |k: usize| (segments[k].start as f64) < n as f64 * (1.0 - cfg.final_fraction);
    (1..segments.len())
        .filter(|&k| keeps_enough(k))
        .rfind(|&k| {
            segments[..k]
                .iter()
                .all(|a| segments[k..].iter().all(|b| worse(a, b)))
        })
        .map_or(0, |k| segments[k].start)
}

/// A cell is consistent when every run has the same classification (Barrett et al. 2017
/// §4.3, "consistent" vs "inconsistent" (VM, benchmark) pairs). Vacuously true when empty.
pub fn consistent(states: &[SteadyState]) -> bool {
    states.windows(2).all(|w| w[0] == w[1])
}

#[cfg(test)]
#[path = "changepoint_tests.rs"]
mod tests;
