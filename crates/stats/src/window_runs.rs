//! Quantiles of two-stage bootstrap resamples of runs with many values each, in time that
//! grows with the square root of the values rather than with the values.
//!
//! A two-stage resample (Davison & Hinkley 1997 §3.8) picks runs with replacement, then draws
//! each picked run's values with replacement. Given the picked runs, a copy of run j makes
//! len_j draws, a multinomial over its values, independent of the other copies. Split the
//! pooled ranks into [0, a), the window [a, b) and [b, N): the draws of copy i below the window
//! are Binomial(len_j, below_j/len_j), and given them the draws inside are
//! Binomial(len_j − B_i, in_j/(len_j − below_j)), each uniform over the run's values in the
//! window (the conditionals of a multinomial; Devroye 1986, "Non-Uniform Random Variate
//! Generation", §XI.1.4). With L draws below in all and the type-7 order statistics k and
//! k + 1 of the resample inside, those are order statistics k − L and k − L + 1 of the window
//! draws. The window is placed, for the picked runs, where the expected number of draws below
//! crosses k, and spans ten standard deviations of that number on each side (the sum of the
//! copies' binomial variances is at most M·p(1−p) by Jensen's inequality), so it misses with
//! probability below 10⁻²⁰; a miss draws the whole resample.

use super::ranks_below::RanksBelow;
use super::rng::Stream;
use super::uniform::{below, fill_below};
use super::window::binomial;

/// Standard deviations of the number of draws below the quantile that the window spans.
const HALF_WIDTH_SDS: f64 = 10.0;

/// The runs of a cell as sorted pooled ranks, for windowed two-stage draws.
pub(super) struct RankedRuns {
    /// Per run (grouped as `spans`): its values' ranks in the pooled sorted data, ascending.
    ranks: Vec<u32>,
    /// Per run: (offset, len) into `ranks`.
    spans: Vec<(u32, u32)>,
    /// The picked runs of the resample being drawn (reused).
    picked: Vec<usize>,
    /// Room for one run's draws inside the window, as long as the longest run (reused).
    drawn: Vec<u32>,
    /// The picked runs' values below each pooled rank.
    below: RanksBelow,
}

impl RankedRuns {
    /// `None` when drawing every value would cost less than the window's searches: the
    /// window pays about 40·log₂(len) steps per picked run, the full draw two per value.
    pub(super) fn new(ranks: &[u32], spans: &[(u32, u32)], total: usize) -> Option<RankedRuns> {
        let runs = spans.len().max(1) as f64;
        let mean_len = total as f64 / runs;
        let window = runs * 40.0 * (mean_len + 1.0).log2() + 20.0 * (total as f64 / 4.0).sqrt();
        if spans.len() < 2 || window * 4.0 > 2.0 * total as f64 {
            return None;
        }
        Some(RankedRuns::build(ranks, spans, total))
    }

    /// The runs' ranks sorted within each run, whatever the cost.
    fn build(ranks: &[u32], spans: &[(u32, u32)], total: usize) -> RankedRuns {
        let mut sorted = ranks.to_vec();
        for &(off, len) in spans {
            sorted[off as usize..(off + len) as usize].sort_unstable();
        }
        RankedRuns {
            below: RanksBelow::new(&sorted, spans, total),
            ranks: sorted,
            spans: spans.to_vec(),
            picked: Vec::with_capacity(spans.len()),
            drawn: vec![
                0;
                spans
                    .iter()
                    .map(|&(_, len)| len as usize)
                    .max()
                    .unwrap_or(0)
            ],
        }
    }

    /// Pooled ranks of the type-7 order statistics at `p` (k and k + 1, 0-based) and the
    /// fraction between them, of one two-stage resample; `None` when the window missed.
    /// `counts` holds at least `total` zeros and is left zeroed.
    pub(super) fn draw(
        &mut self,
        p: f64,
        counts: &mut [u32],
        rng: &mut Stream,
    ) -> Option<(u32, u32, f64)> {
        self.picked.clear();
        let n_runs = self.spans.len() as u32;
        let mut m = 0usize;
        for _ in 0..self.spans.len() {
            let j = below(rng, n_runs) as usize;
            m += self.spans[j].1 as usize;
            self.picked.push(j);
        }
        let h = (m - 1) as f64 * p;
        let k = h.floor() as usize;
        let half = (HALF_WIDTH_SDS * (m as f64 * p * (1.0 - p)).sqrt()) as usize + 16;
        self.below.set(&self.picked);
        let a = self
            .below
            .rank_with_below(&self.picked, k.saturating_sub(half));
        let b = self
            .below
            .rank_with_below(&self.picked, k + 2 + half)
            .max(a);
        let (below_all, inside) = self.draw_through(a, b, counts, rng);
        let found = below_all <= k && below_all + inside >= k + 2;
        let ranks = found
            .then(|| order_stats(&counts[..(b - a) as usize], k - below_all))
            .flatten();
        counts[..(b - a) as usize].fill(0);
        ranks.map(|(x, y)| (a + x, a + y, h - k as f64))
    }

    /// Counts into `counts[r − a]` each picked run's draws with pooled rank r in [a, b);
    /// returns the number of draws below a and inside.
    fn draw_through(
        &mut self,
        a: u32,
        b: u32,
        counts: &mut [u32],
        rng: &mut Stream,
    ) -> (usize, usize) {
        let (mut below_all, mut inside_all) = (0usize, 0usize);
        for &j in &self.picked {
            let (off, len) = self.spans[j];
            let run = &self.ranks[off as usize..(off + len) as usize];
            let len = run.len() as u64;
            let under = run.partition_point(|&x| x < a);
            let upto = run.partition_point(|&x| x < b);
            let within = upto - under;
            let drawn_below = binomial(len, under as f64 / len as f64, rng);
            let rest = len - drawn_below;
            let drawn_inside = if within == 0 || rest == 0 {
                0
            } else {
                binomial(rest, within as f64 / (len as usize - under) as f64, rng)
            };
            let drawn = &mut self.drawn[..drawn_inside as usize];
            fill_below(rng, within.max(1) as u32, drawn);
            for &d in drawn.iter() {
                counts[(run[under + d as usize] - a) as usize] += 1;
            }
            below_all += drawn_below as usize;
            inside_all += drawn_inside as usize;
        }
        (below_all, inside_all)
    }
}

/// Offsets in `counts` of order statistics `want` and `want + 1` of the counted draws.
fn order_stats(counts: &[u32], want: usize) -> Option<(u32, u32)> {
    let (mut cum, mut first) = (0usize, None);
    for (i, &c) in counts.iter().enumerate() {
        cum += c as usize;
        if first.is_none() && cum > want {
            first = Some(i as u32);
        }
        if cum > want + 1 {
            return first.map(|f| (f, i as u32));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::Resampler;
    use rand::SeedableRng;

    /// Three runs of 2,000 values at different levels, deterministic.
    fn runs() -> Vec<Vec<f64>> {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        (0..3)
            .map(|r| {
                (0..2_000)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        1.0 + 0.01 * r as f64 + (state >> 11) as f64 / (1u64 << 53) as f64 * 0.05
                    })
                    .collect()
            })
            .collect()
    }

    /// Largest distance between the empirical distribution functions of two samples.
    fn ks_distance(mut x: Vec<f64>, mut y: Vec<f64>) -> f64 {
        x.sort_by(f64::total_cmp);
        y.sort_by(f64::total_cmp);
        let (mut i, mut j, mut d) = (0, 0, 0.0f64);
        while i < x.len() && j < y.len() {
            let v = x[i].min(y[j]);
            while i < x.len() && x[i] <= v {
                i += 1;
            }
            while j < y.len() && y[j] <= v {
                j += 1;
            }
            d = d.max((i as f64 / x.len() as f64 - j as f64 / y.len() as f64).abs());
        }
        d
    }

    #[test]
    fn windowed_draws_follow_the_law_of_full_two_stage_draws() {
        let runs = runs();
        let mut full = Resampler::new(&runs).unwrap();
        let (ranks, spans, sorted) = full.parts();
        let mut ranked = RankedRuns::build(&ranks, &spans, sorted.len());
        let mut counts = vec![0u32; sorted.len()];
        for p in [0.5, 0.9] {
            let mut rng = Stream::ChaCha8(rand_chacha::ChaCha8Rng::seed_from_u64(1));
            let windowed: Vec<f64> = (0..20_000)
                .map(|_| {
                    let (x, y, f) = ranked.draw(p, &mut counts, &mut rng).unwrap();
                    sorted[x as usize] + f * (sorted[y as usize] - sorted[x as usize])
                })
                .collect();
            assert!(counts.iter().all(|&c| c == 0));
            let mut rng = Stream::ChaCha8(rand_chacha::ChaCha8Rng::seed_from_u64(2));
            let direct: Vec<f64> = (0..20_000)
                .map(|_| full.draw_every_value(p, &mut rng))
                .collect();
            // Two-sample Kolmogorov–Smirnov at α = 0.001: c(α)·√(2/n) = 1.949 · 0.01.
            let d = ks_distance(windowed, direct);
            assert!(d < 0.0195, "p = {p}: KS distance {d}");
        }
    }

    #[test]
    fn few_values_per_run_draw_every_value() {
        let spans: Vec<(u32, u32)> = (0..1_000).map(|i| (i * 5, 5)).collect();
        let ranks: Vec<u32> = (0..5_000).collect();
        assert!(RankedRuns::new(&ranks, &spans, 5_000).is_none());
        let spans: Vec<(u32, u32)> = (0..10).map(|i| (i * 100_000, 100_000)).collect();
        let ranks: Vec<u32> = (0..1_000_000).collect();
        assert!(RankedRuns::new(&ranks, &spans, 1_000_000).is_some());
    }
}
