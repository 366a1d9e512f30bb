//! Bootstrap intervals: hierarchical percentile, log-ratio and BCa mean.

use super::rng::Stream;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use super::summary::quantile_in_place;
use super::uniform::{below, fill_below};
use super::window::SINGLES_MIN_VALUES;
use super::window_classes::CLASSED_MIN_VALUES;

pub use lab_basis::Interval;

#[path = "bootstrap_counts.rs"]
mod counts;
use counts::{ZERO_SUM, ascending_order, count_every_value, sums_side_by_side};
pub(crate) use counts::{counted_order_stats, one_value, point_interval};

/// Statistic computed on the pooled values of one (re)sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Statistic {
    /// Type-7 median (mean of the two middle values for an even count).
    Median,
    Mean,
}

/// Point estimate and interval for the ratio statistic(a) / statistic(b).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RatioEstimate {
    pub ratio: f64,
    pub interval: Interval,
}

/// Two-stage resampler over runs × iterations with reusable buffers.
///
/// Values are replaced by their rank in the pooled sorted data, so a resample is a vector
/// of counts per rank; any type-7 quantile is then one cumulative scan (O(N), no sort) and
/// nothing is allocated per resample.
pub(crate) struct Resampler {
    sorted: Vec<f64>,
    /// Per value (grouped by run): index into `sorted`.
    ranks: Vec<u32>,
    /// Per value (grouped by run): the value itself, for means.
    values: Vec<f64>,
    /// Per non-empty run: (offset, len) into `ranks`/`values`.
    runs: Vec<(u32, u32)>,
    n_runs: u32,
    counts: Vec<u32>,
    /// Counts of the window draws ([`super::window`]), when every run has one value and
    /// there are at least [`SINGLES_MIN_VALUES`] of them.
    window_counts: Vec<u32>,
    /// The window draws of one resample, reused.
    window_draws: Vec<u32>,
    /// The runs' sorted ranks for windowed two-stage draws ([`super::window_runs`]), when
    /// runs hold many values each.
    ranked: Option<super::window_runs::RankedRuns>,
    /// The runs as classes outside a window ([`super::window_classes`]), when runs hold a
    /// few values each, too few for `ranked`.
    classed: Option<super::window_classes::ClassedRuns>,
}

/// From this many values in runs of many values each on, a resample's quantile is drawn
/// through a window around its rank ([`super::window_runs`]): the same bootstrap
/// distribution in O(√n) per resample instead of O(n). Single values and runs of a few
/// values have windows of their own from fewer values on ([`SINGLES_MIN_VALUES`],
/// [`CLASSED_MIN_VALUES`]).
pub(crate) const WINDOW_MIN_VALUES: usize = 5_000;

/// Resampled means of single values added side by side ([`Resampler::draw_means`]).
const MEAN_BATCH: usize = 4;

impl Resampler {
    /// `None` if there is no value, a value is not finite, or sizes exceed u32.
    pub(crate) fn new(runs: &[Vec<f64>]) -> Option<Resampler> {
        let values = runs.iter().flatten().copied().collect();
        Resampler::of_runs(values, runs.iter().map(Vec::len))
    }

    /// [`Self::new`] of runs of one value each, `values`.
    pub(crate) fn of_singles(values: &[f64]) -> Option<Resampler> {
        Resampler::of_runs(values.to_vec(), std::iter::repeat_n(1, values.len()))
    }

    /// [`Self::new`] of `values` grouped into runs of the lengths `lens`, in order.
    fn of_runs(values: Vec<f64>, lens: impl Iterator<Item = usize>) -> Option<Resampler> {
        let total = values.len();
        let finite = values.iter().all(|x| x.is_finite());
        if total == 0 || !finite || total >= u32::MAX as usize {
            return None;
        }
        let order = ascending_order(&values);
        let mut ranks = vec![0u32; total];
        for (rank, &i) in order.iter().enumerate() {
            ranks[i as usize] = rank as u32;
        }
        let sorted = order.iter().map(|&i| values[i as usize]).collect();
        let mut spans = Vec::new();
        let mut offset = 0u32;
        for len in lens.filter(|&len| len > 0) {
            spans.push((offset, len as u32));
            offset += len as u32;
        }
        let n_runs = spans.len() as u32;
        let counts = vec![0; total];
        let single_stage = spans.iter().all(|&(_, len)| len == 1);
        let window_counts = if single_stage && total >= SINGLES_MIN_VALUES {
            vec![0; total]
        } else {
            Vec::new()
        };
        let ranked = if !single_stage && total >= WINDOW_MIN_VALUES {
            super::window_runs::RankedRuns::new(&ranks, &spans, total)
        } else {
            None
        };
        let classed = if !single_stage && ranked.is_none() && total >= CLASSED_MIN_VALUES {
            super::window_classes::ClassedRuns::new(&ranks, std::slice::from_ref(&spans))
        } else {
            None
        };
        Some(Resampler {
            sorted,
            ranks,
            values,
            runs: spans,
            n_runs,
            counts,
            window_counts,
            window_draws: Vec::new(),
            ranked,
            classed,
        })
    }

    /// The number every value is, where they are all one ([`one_value`]).
    pub(crate) fn one_value(&self) -> Option<f64> {
        one_value(&self.sorted)
    }

    /// Statistic of all pooled values (the point estimate).
    pub(crate) fn observed(&self, statistic: Statistic) -> f64 {
        match statistic {
            Statistic::Mean => self.values.iter().sum::<f64>() / self.values.len() as f64,
            Statistic::Median => super::summary::quantile_sorted(&self.sorted, 0.5),
        }
    }

    /// One two-stage resample (Davison & Hinkley 1997 §3.8, "Strategy 2": runs with
    /// replacement, then iterations within each chosen run with replacement; Kalibera & Jones,
    /// ISMM 2013 §4) and its statistic. Runs of one value need a single draw.
    pub(crate) fn draw(&mut self, statistic: Statistic, rng: &mut Stream) -> f64 {
        match statistic {
            Statistic::Mean => self.draw_mean(rng),
            Statistic::Median => self.draw_quantile(0.5, rng),
        }
    }

    /// `count` resampled means. From an analysis-2 stream with one value per run, each sum
    /// is [`super::resample_sums::resampled_sum`]; otherwise they are the values
    /// [`Self::draw_mean`] gives called `count` times. From an analysis-1 stream with one value per run, [`MEAN_BATCH`] resamples' indices are drawn first (in
    /// the stream's order) and their sums then added side by side: each sum adds its values
    /// in the same order as one at a time, but the additions of different sums overlap
    /// instead of each waiting for the one before.
    pub(crate) fn draw_means(&mut self, count: usize, rng: &mut Stream) -> Vec<f64> {
        let n = self.runs.len();
        if self.values.len() != n {
            return (0..count).map(|_| self.draw_mean(rng)).collect();
        }
        if let Stream::Xoshiro(x) = rng {
            // Analysis 2: each resample drawn and summed in one pass.
            let values = &self.values;
            return (0..count)
                .map(|_| super::resample_sums::resampled_sum(values, x) / n as f64)
                .collect();
        }
        let mut means = Vec::with_capacity(count);
        let mut indices = vec![0u32; n * MEAN_BATCH.min(count)];
        while means.len() < count {
            let batch = MEAN_BATCH.min(count - means.len());
            fill_below(rng, self.n_runs, &mut indices[..n * batch]);
            let sums = if batch == MEAN_BATCH {
                sums_side_by_side(&self.values, &indices)
            } else {
                let mut sums = [ZERO_SUM; MEAN_BATCH];
                for (sum, drawn) in sums.iter_mut().zip(indices.chunks_exact(n).take(batch)) {
                    *sum = drawn.iter().map(|&i| self.values[i as usize]).sum();
                }
                sums
            };
            means.extend(sums[..batch].iter().map(|s| s / n as f64));
        }
        means
    }

    fn draw_mean(&mut self, rng: &mut Stream) -> f64 {
        if self.values.len() == self.runs.len() {
            // One value per run: the same draws as below, without the second stage.
            let sum: f64 = (0..self.runs.len())
                .map(|_| self.values[below(rng, self.n_runs) as usize])
                .sum();
            return sum / self.values.len() as f64;
        }
        let (mut sum, mut m) = (0.0, 0usize);
        for _ in 0..self.runs.len() {
            let (off, len) = self.runs[below(rng, self.n_runs) as usize];
            for _ in 0..len {
                let k = if len == 1 { 0 } else { below(rng, len) };
                sum += self.values[(off + k) as usize];
            }
            m += len as usize;
        }
        sum / m as f64
    }

    /// Type-7 quantile `p` of one two-stage resample.
    pub(crate) fn draw_quantile(&mut self, p: f64, rng: &mut Stream) -> f64 {
        if let Some(q) = self.draw_quantile_in_window(p, rng) {
            return q;
        }
        if let Some(ranked) = &mut self.ranked
            && let Some(between) = ranked.draw(p, &mut self.counts, rng)
        {
            return interpolated(&self.sorted, between);
        }
        if let Some(classed) = &mut self.classed {
            return interpolated(&self.sorted, classed.draw(p, rng));
        }
        self.draw_every_value(p, rng)
    }

    /// [`Self::draw_quantile`] drawing every value of the resample.
    pub(crate) fn draw_every_value(&mut self, p: f64, rng: &mut Stream) -> f64 {
        let (runs, ranks, counts) = (&self.runs[..], &self.ranks[..], &mut self.counts[..]);
        // The same draws from the same words on either stream; xoshiro256++'s words are taken
        // inline, from a copy that can live in registers, then put back.
        let m = match rng {
            Stream::Xoshiro(x) => {
                let mut words = x.clone();
                let m = count_every_value(runs, ranks, counts, &mut words);
                *x = words;
                m
            }
            _ => count_every_value(runs, ranks, counts, rng),
        };
        let h = (m - 1) as f64 * p;
        let lo = h.floor() as usize;
        let (a, b) = self.order_stats(lo);
        self.counts.fill(0);
        a + (h - lo as f64) * (b - a)
    }

    /// [`Self::draw_quantile`] through a window around the quantile's rank, for many single
    /// values; `None` when this resampler has no window.
    fn draw_quantile_in_window(&mut self, p: f64, rng: &mut Stream) -> Option<f64> {
        let n = self.sorted.len();
        if self.window_counts.is_empty() {
            return None;
        }
        let h = (n - 1) as f64 * p;
        let k = h.floor() as usize;
        let (a, b) = super::window::window(n, p, k);
        if a == 0 && b == n {
            return None;
        }
        let counts = &mut self.window_counts[..b - a];
        let drawn = &mut self.window_draws;
        let (i, j) = super::window::order_stats_in_window(n, k, (a, b), counts, drawn, rng);
        let (x, y) = (self.sorted[i], self.sorted[j]);
        Some(x + (h - k as f64) * (y - x))
    }

    /// The pooled ranks of each value (grouped by run), the runs' spans and the sorted values.
    #[cfg(test)]
    pub(crate) fn parts(&self) -> (Vec<u32>, Vec<(u32, u32)>, Vec<f64>) {
        (self.ranks.clone(), self.runs.clone(), self.sorted.clone())
    }

    /// Order statistics `k` and `k+1` (0-based, the latter clamped) of the counted resample.
    fn order_stats(&self, k: usize) -> (f64, f64) {
        counted_order_stats(&self.counts, &self.sorted, k)
    }
}

pub(super) fn valid(resamples: usize, level: f64) -> bool {
    resamples >= 2 && level > 0.0 && level < 1.0
}

/// Percentile interval of `stats` (Efron & Tibshirani 1993, ch. 13.3): type-7 quantiles
/// at (1−level)/2 and (1+level)/2 of the bootstrap distribution. Reorders `stats`.
pub(super) fn percentile_interval(stats: &mut [f64], level: f64) -> Interval {
    let alpha = (1.0 - level) / 2.0;
    let lo = quantile_in_place(stats, alpha);
    let hi = quantile_in_place(stats, 1.0 - alpha);
    Interval { lo, hi, level }
}

/// Hierarchical (two-stage) percentile bootstrap CI of `statistic` for one cell whose data
/// are `runs` × iterations (Kalibera & Jones, "Rigorous benchmarking in reasonable time",
/// ISMM 2013; Davison & Hinkley 1997 §3.8). With one value per run this is the ordinary
/// percentile bootstrap (Efron & Tibshirani 1993, ch. 13). The median of values that are
/// all one number ([`one_value`]) is that number without a draw from `rng`.
///
/// `None` if there is no value, a value is not finite, `resamples < 2` or `level ∉ (0,1)`.
pub fn percentile_ci(
    runs: &[Vec<f64>],
    statistic: Statistic,
    resamples: usize,
    level: f64,
    rng: &mut Stream,
) -> Option<Interval> {
    if !valid(resamples, level) {
        return None;
    }
    let mut rs = Resampler::new(runs)?;
    if statistic == Statistic::Median
        && let Some(x) = rs.one_value()
    {
        return Some(point_interval(x, level));
    }
    let mut stats: Vec<f64> = match statistic {
        Statistic::Mean => rs.draw_means(resamples, rng),
        Statistic::Median => (0..resamples).map(|_| rs.draw(statistic, rng)).collect(),
    };
    Some(percentile_interval(&mut stats, level))
}

/// Ratio statistic(a)/statistic(b) with a percentile interval computed on the log scale
/// (Davison & Hinkley 1997 §5.2 — transform, percentile interval, back-transform; the
/// percentile method is transformation-respecting, Efron & Tibshirani 1993 §13.3).
/// `a` and `b` are resampled independently, each two-stage as in [`percentile_ci`].
///
/// `None` on invalid input (as [`percentile_ci`]) or if any statistic (observed or
/// resampled) is ≤ 0.
pub fn ratio_ci(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    statistic: Statistic,
    resamples: usize,
    level: f64,
    rng: &mut Stream,
) -> Option<RatioEstimate> {
    if !valid(resamples, level) {
        return None;
    }
    let (mut ra, mut rb) = (Resampler::new(a)?, Resampler::new(b)?);
    let observed = (ra.observed(statistic), rb.observed(statistic));
    log_ratio_ci(observed, resamples, level, || {
        (ra.draw(statistic, rng), rb.draw(statistic, rng))
    })
}

/// The ratio of the `observed` statistics with the percentile interval of `resamples` pairs
/// `draw` gives, taken on the log scale and mapped back; `None` when a statistic is ≤ 0.
pub(super) fn log_ratio_ci(
    (sa, sb): (f64, f64),
    resamples: usize,
    level: f64,
    mut draw: impl FnMut() -> (f64, f64),
) -> Option<RatioEstimate> {
    if sa <= 0.0 || sb <= 0.0 {
        return None;
    }
    let mut logs = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let (x, y) = draw();
        if x <= 0.0 || y <= 0.0 {
            return None;
        }
        logs.push((x / y).ln());
    }
    let iv = percentile_interval(&mut logs, level);
    let interval = Interval {
        lo: iv.lo.exp(),
        hi: iv.hi.exp(),
        level,
    };
    Some(RatioEstimate {
        ratio: sa / sb,
        interval,
    })
}

/// BCa interval for the mean (Efron 1987, "Better bootstrap confidence intervals", JASA
/// 82:171, eqs. 2.3–2.4 and 6.6; jackknife acceleration as in Efron & Tibshirani 1993
/// §14.3, eq. 14.15). Bias correction z0 = Φ⁻¹(share of replicates below θ̂, ties counted
/// half, as scipy.stats.bootstrap). Constant data give the degenerate interval [x, x].
///
/// `None` if n < 2, a value is not finite, `resamples < 2`, `level ∉ (0,1)`, or all
/// replicates fall on one side of θ̂.
pub fn bca_mean_ci(xs: &[f64], resamples: usize, level: f64, rng: &mut Stream) -> Option<Interval> {
    if xs.len() < 2 || !valid(resamples, level) || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = xs.len() as f64;
    let theta = xs.iter().sum::<f64>() / n;
    if xs.iter().all(|&x| x == xs[0]) {
        return Some(Interval {
            lo: xs[0],
            hi: xs[0],
            level,
        });
    }
    let mut rs = Resampler::of_singles(xs)?;
    let mut stats = rs.draw_means(resamples, rng);
    let below = stats.iter().filter(|&&t| t < theta).count() as f64;
    let equal = stats.iter().filter(|&&t| t == theta).count() as f64;
    let share = (below + equal / 2.0) / resamples as f64;
    let std = Normal::standard();
    let z0 = std.inverse_cdf(share);
    // Jackknife: θ(i) = (Σx − x_i)/(n−1); θ(.) = θ̂ for the mean.
    let sum = theta * n;
    let d: Vec<f64> = xs.iter().map(|&x| theta - (sum - x) / (n - 1.0)).collect();
    let (s2, s3) = d
        .iter()
        .fold((0.0, 0.0), |(a, b), &u| (a + u * u, b + u * u * u));
    let acc = s3 / (6.0 * s2.powf(1.5));
    let adjust = |z: f64| std.cdf(z0 + (z0 + z) / (1.0 - acc * (z0 + z)));
    let za = std.inverse_cdf((1.0 - level) / 2.0);
    let (p_lo, p_hi) = (adjust(za), adjust(-za));
    if !(z0.is_finite() && p_lo.is_finite() && p_hi.is_finite()) {
        return None;
    }
    let lo = quantile_in_place(&mut stats, p_lo);
    let hi = quantile_in_place(&mut stats, p_hi);
    Some(Interval { lo, hi, level })
}

/// The value a fraction `f` of the way from the `x`th to the `y`th of `sorted`: a quantile
/// the windowed draws place between two ranks.
pub(crate) fn interpolated(sorted: &[f64], (x, y, f): (u32, u32, f64)) -> f64 {
    let (a, b) = (sorted[x as usize], sorted[y as usize]);
    a + f * (b - a)
}

#[cfg(test)]
#[path = "bootstrap_tests.rs"]
mod tests;
