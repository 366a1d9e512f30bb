//! Spearman's rank correlation and its percentile bootstrap interval, resampled within
//! strata (cells), for the `mechanism` check: does one metric move with another.

use super::rng::Stream;

use super::bootstrap::Interval;
use super::summary::quantile_in_place;
use super::uniform::below;

/// Ranks 1..=n of `xs`, tied values sharing the mean of the ranks they span ("average" or
/// mid-ranks, Kendall & Gibbons, "Rank Correlation Methods", 5th ed. 1990, §3.8; what
/// `scipy.stats.rankdata` does by default).
pub fn average_ranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut ranks = vec![0.0; xs.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && xs[order[end]] == xs[order[start]] {
            end += 1;
        }
        // Positions start..end hold ranks start+1 ..= end; their mean is (start + 1 + end) / 2.
        let shared = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = shared;
        }
        start = end;
    }
    ranks
}

/// Spearman's ρ (Spearman, "The proof and measurement of association between two things",
/// Am. J. Psychol. 15:72, 1904): Pearson's correlation of the average ranks, which stays
/// exact under ties (the textbook 1 − 6Σd²/(n(n²−1)) does not; Kendall & Gibbons 1990
/// §3.8). The same value as `scipy.stats.spearmanr`.
///
/// `None` for fewer than two pairs, lengths that differ, a value that is not finite, or a
/// side whose values are all equal (a rank correlation needs both to vary).
pub fn spearman(xs: &[f64], ys: &[f64]) -> Option<f64> {
    if xs.len() != ys.len() || xs.len() < 2 || !xs.iter().chain(ys).all(|v| v.is_finite()) {
        return None;
    }
    pearson(&average_ranks(xs), &average_ranks(ys))
}

/// Pearson's product-moment correlation; `None` when either side does not vary.
fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        let (dx, dy) = (x - ma, y - mb);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    if saa == 0.0 || sbb == 0.0 {
        return None;
    }
    // Rounding can carry a perfect relation a hair past ±1.
    Some((sab / (saa * sbb).sqrt()).clamp(-1.0, 1.0))
}

/// Percentile bootstrap interval of Spearman's ρ over `strata` of (x, y) pairs, resampled
/// within each stratum: every resample keeps as many pairs from each stratum as it has, so
/// the design across strata (which cells, how many runs each) is the one measured
/// (stratified bootstrap, Davison & Hinkley, "Bootstrap Methods and their Application",
/// 1997, §3.2.2; percentile interval, Efron & Tibshirani 1993, §13.3).
///
/// A resample in which one side does not vary has no ρ and is drawn again from the stream,
/// so the interval depends only on the seed. `None` when the observed ρ is undefined,
/// `resamples < 2`, `level ∉ (0, 1)`, or resamples keep coming out constant (more than
/// `resamples` of them: the data barely vary).
pub fn spearman_ci(
    strata: &[Vec<(f64, f64)>],
    resamples: usize,
    level: f64,
    rng: &mut Stream,
) -> Option<Interval> {
    let (xs, ys): (Vec<f64>, Vec<f64>) = strata.iter().flatten().copied().unzip();
    spearman(&xs, &ys)?;
    if resamples < 2 || !(level > 0.0 && level < 1.0) || xs.len() > u32::MAX as usize {
        return None;
    }
    let mut resampler = Resampler::new(strata, xs, ys);
    let mut rhos = Vec::with_capacity(resamples);
    let mut undefined = 0;
    while rhos.len() < resamples {
        match resampler.draw(rng) {
            Some(rho) => rhos.push(rho),
            None if undefined < resamples => undefined += 1,
            None => return None,
        }
    }
    let alpha = (1.0 - level) / 2.0;
    let lo = quantile_in_place(&mut rhos, alpha);
    let hi = quantile_in_place(&mut rhos, 1.0 - alpha);
    Some(Interval { lo, hi, level })
}

/// The pairs sorted once by x and once by y, so that a resample is only a count per pair:
/// its average ranks come from running sums of the counts in sorted order, O(n) per resample
/// with no sort (a run-heavy session of 100,000 runs is then 10,000 linear passes).
struct Resampler {
    xs: Vec<f64>,
    ys: Vec<f64>,
    by_x: Vec<usize>,
    by_y: Vec<usize>,
    /// Each non-empty stratum's first pair and size, in the flattened order.
    strata: Vec<(usize, u32)>,
    counts: Vec<u32>,
    rx: Vec<f64>,
    ry: Vec<f64>,
}

impl Resampler {
    fn new(strata: &[Vec<(f64, f64)>], xs: Vec<f64>, ys: Vec<f64>) -> Self {
        let sorted = |v: &[f64]| {
            let mut order: Vec<usize> = (0..v.len()).collect();
            order.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
            order
        };
        let mut start = 0;
        let mut spans = Vec::new();
        for s in strata {
            if !s.is_empty() {
                spans.push((start, s.len() as u32));
            }
            start += s.len();
        }
        let n = xs.len();
        Resampler {
            by_x: sorted(&xs),
            by_y: sorted(&ys),
            xs,
            ys,
            strata: spans,
            counts: vec![0; n],
            rx: vec![0.0; n],
            ry: vec![0.0; n],
        }
    }

    /// One stratified resample's ρ: each stratum's pairs drawn with replacement, as many as it
    /// holds, strata in order; `None` when one side does not vary in it.
    fn draw(&mut self, rng: &mut Stream) -> Option<f64> {
        self.counts.fill(0);
        for &(start, n) in &self.strata {
            for _ in 0..n {
                self.counts[start + below(rng, n) as usize] += 1;
            }
        }
        counted_ranks(&self.by_x, &self.xs, &self.counts, &mut self.rx);
        counted_ranks(&self.by_y, &self.ys, &self.counts, &mut self.ry);
        // Average ranks of N values always have mean (N + 1) / 2.
        let total: u32 = self.counts.iter().sum();
        let mean = (f64::from(total) + 1.0) / 2.0;
        let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
        for ((&c, &a), &b) in self.counts.iter().zip(&self.rx).zip(&self.ry) {
            let (c, da, db) = (f64::from(c), a - mean, b - mean);
            sab += c * da * db;
            saa += c * da * da;
            sbb += c * db * db;
        }
        if saa == 0.0 || sbb == 0.0 {
            return None;
        }
        Some((sab / (saa * sbb).sqrt()).clamp(-1.0, 1.0))
    }
}

/// The average rank, within the resample `counts` describes, of every pair's value: the
/// resampled values below it plus the mean of the ranks its equals share.
fn counted_ranks(order: &[usize], values: &[f64], counts: &[u32], ranks: &mut [f64]) {
    let mut below = 0.0;
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        let tied: f64 = order[start..end]
            .iter()
            .map(|&i| f64::from(counts[i]))
            .sum();
        let shared = below + (tied + 1.0) / 2.0;
        for &i in &order[start..end] {
            ranks[i] = shared;
        }
        below += tied;
        start = end;
    }
}

#[cfg(test)]
#[path = "spearman_tests.rs"]
mod tests;
