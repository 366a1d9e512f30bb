//! Quantiles of large single-stage bootstrap resamples in O(√n) instead of O(n): only the
//! draws that land near the quantile's rank are made one by one.
//!
//! A resample of n values with replacement is a multinomial over the n ranks. Split the
//! ranks into [0, a), the window [a, b) and [b, n): the number L of draws below the window is
//! Binomial(n, a/n), and given L the number M inside is Binomial(n − L, (b − a)/(n − a))
//! (the conditional of a multinomial; Devroye 1986, "Non-Uniform Random Variate
//! Generation", §XI.1.4). When L ≤ k and L + M ≥ k + 2 the order statistics k and k + 1 of
//! the resample are order statistics k − L and k − L + 1 of the M window draws, each uniform
//! on the window's ranks. The window spans four standard deviations of the resampled rank on
//! each side (and 16 ranks more). Where the order statistics fall outside it (L > k or
//! L + M < k + 2, about once in 16,000 resamples) the resample is completed, not drawn
//! again: given L and M its draws below the window are uniform on [0, a), those in it on
//! [a, b) and the rest on [b, n), so the completed resample has exactly the law of one drawn
//! value by value, whatever the window's width. The width decides the cost only.

use super::rng::Stream;
use super::uniform::count_below;
use rand::Rng;
use statrs::function::gamma::ln_gamma;

/// Standard deviations of the resampled rank that the window spans on each side.
const HALF_WIDTH_SDS: f64 = 4.0;

/// From this many single values on, their quantiles are drawn through a window.
pub(crate) const SINGLES_MIN_VALUES: usize = 1_000;

/// The ranks `[a, b)` around order statistic `k` of a resample of `n` at quantile `p`.
pub(super) fn window(n: usize, p: f64, k: usize) -> (usize, usize) {
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    let half = (HALF_WIDTH_SDS * sd) as usize + 16;
    (k.saturating_sub(half), (k + 2 + half).min(n))
}

/// Order statistics k and k + 1 (0-based, the latter clamped) of a resample of the `n`
/// ranks, drawn through the window `[a, b)` and completed where they fall outside it.
/// `counts` holds b − a zeros and is left zeroed; `drawn` is room for the window draws,
/// reused from one call to the next.
pub(super) fn order_stats_in_window(
    n: usize,
    k: usize,
    (a, b): (usize, usize),
    counts: &mut [u32],
    drawn: &mut Vec<u32>,
    rng: &mut Stream,
) -> (usize, usize) {
    let below_a = binomial(n as u64, a as f64 / n as f64, rng) as usize;
    let width = b - a;
    if below_a > k {
        return completed(n, k, (a, b), (below_a, None), rng);
    }
    let rest = n - below_a;
    let inside = binomial(rest as u64, width as f64 / (n - a) as f64, rng) as usize;
    if below_a + inside < k + 2 {
        return completed(n, k, (a, b), (below_a, Some(inside)), rng);
    }
    count_below(rng, width as u32, inside, counts, drawn);
    let (want, mut cum, mut first, mut second) = (k - below_a, 0usize, 0, 0);
    for (i, c) in counts.iter_mut().enumerate() {
        let before = cum;
        cum += *c as usize;
        *c = 0;
        if before <= want && want < cum {
            first = a + i;
        }
        if before <= want + 1 && want + 1 < cum {
            second = a + i;
        }
    }
    (first, second)
}

/// Order statistics k and k + 1 (the latter clamped) of a resample of the `n` ranks of which
/// `below_a` fell below the window [a, b) and, where drawn, `inside` in it: the rest of the
/// resample drawn given those numbers, every draw counted at its rank.
fn completed(
    n: usize,
    k: usize,
    (a, b): (usize, usize),
    (below_a, inside): (usize, Option<usize>),
    rng: &mut Stream,
) -> (usize, usize) {
    let rest = n - below_a;
    let inside = inside
        .unwrap_or_else(|| binomial(rest as u64, (b - a) as f64 / (n - a) as f64, rng) as usize);
    let mut counts = vec![0u32; n];
    let mut room = Vec::new();
    for (range, draws) in [(0..a, below_a), (a..b, inside), (b..n, rest - inside)] {
        // A range without ranks takes no draw.
        if draws > 0 {
            let width = range.len() as u32;
            count_below(rng, width, draws, &mut counts[range], &mut room);
        }
    }
    let at = |want: usize| {
        let mut cum = 0usize;
        counts
            .iter()
            .position(|&c| {
                cum += c as usize;
                cum > want
            })
            .unwrap_or(n - 1)
    };
    (at(k), at((k + 1).min(n - 1)))
}

/// A Binomial(n, p) variate by inversion searched outward from the mode, alternating sides
/// (Kemp 1986, "A modal method for generating binomial variables", Commun. Statist. Theory
/// Meth. 15:805): O(√(np(1−p))) expected steps, one uniform per variate.
pub(super) fn binomial(n: u64, p: f64, rng: &mut Stream) -> u64 {
    if p <= 0.0 || n == 0 {
        return 0;
    }
    if p >= 1.0 {
        return n;
    }
    let (nf, q) = (n as f64, 1.0 - p);
    let mode = (((nf + 1.0) * p).floor() as u64).min(n);
    let mf = mode as f64;
    let ln_pmf = ln_gamma(nf + 1.0) - ln_gamma(mf + 1.0) - ln_gamma(nf - mf + 1.0)
        + mf * p.ln()
        + (nf - mf) * q.ln();
    let u: f64 = rng.r#gen();
    let mut acc = ln_pmf.exp();
    if u < acc {
        return mode;
    }
    let (mut lo, mut hi) = (mode, mode);
    let (mut p_lo, mut p_hi) = (acc, acc);
    while lo > 0 || hi < n {
        if lo > 0 {
            p_lo *= lo as f64 / (nf - lo as f64 + 1.0) * (q / p);
            lo -= 1;
            acc += p_lo;
            if u < acc {
                return lo;
            }
        }
        if hi < n {
            p_hi *= (nf - hi as f64) / (hi as f64 + 1.0) * (p / q);
            hi += 1;
            acc += p_hi;
            if u < acc {
                return hi;
            }
        }
        if p_lo < 1e-300 && p_hi < 1e-300 {
            break;
        }
    }
    mode
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_variates_have_the_binomial_mean_variance_and_tails() {
        let mut rng = super::super::rng::stream(1, "binomial");
        for (n, p) in [(10u64, 0.3), (10_000, 0.5), (1_000_000, 0.001), (50, 0.97)] {
            let draws: Vec<f64> = (0..20_000)
                .map(|_| binomial(n, p, &mut rng) as f64)
                .collect();
            let mean = draws.iter().sum::<f64>() / draws.len() as f64;
            let var = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / draws.len() as f64;
            let (m, v) = (n as f64 * p, n as f64 * p * (1.0 - p));
            assert!(
                (mean - m).abs() < 5.0 * (v / 20_000.0).sqrt(),
                "{n} {p}: mean {mean}"
            );
            assert!((var / v - 1.0).abs() < 0.06, "{n} {p}: var {var} vs {v}");
        }
        // Binomial(10, 0.3): P(X = 0) = 0.7¹⁰ = 0.0282475249.
        let zeros = (0..100_000)
            .filter(|_| binomial(10, 0.3, &mut rng) == 0)
            .count();
        assert!(
            (zeros as f64 / 1e5 - 0.0282475249).abs() < 0.0025,
            "{zeros}"
        );
    }

    /// Order statistic k of 20,000 resamples of n = 5,000 ranks drawn through the window
    /// `win` against its exact law: it is ≤ rank j with probability
    /// P(Binomial(n, (j+1)/n) ≥ k+1) (Maritz & Jarrett 1978, JASA 73:194), computed by statrs
    /// at three ranks.
    fn follows_the_exact_law(k: usize, win: (usize, usize)) {
        use statrs::distribution::{Binomial, DiscreteCDF};
        let n = 5_000usize;
        let mut counts = vec![0u32; win.1 - win.0];
        let mut rng = super::super::rng::stream(2, "window");
        let draws: Vec<usize> = (0..20_000)
            .map(|_| order_stats_in_window(n, k, win, &mut counts, &mut Vec::new(), &mut rng).0)
            .collect();
        for j in [k - 29, k, k + 31] {
            let law = Binomial::new((j + 1) as f64 / n as f64, n as u64).unwrap();
            let want = 1.0 - law.cdf(k as u64);
            let got = draws.iter().filter(|&&d| d <= j).count() as f64 / draws.len() as f64;
            assert!((got - want).abs() < 0.012, "rank {j}: {got} vs {want}");
        }
        assert!(counts.iter().all(|&c| c == 0));
    }

    #[test]
    fn window_order_statistics_follow_the_exact_bootstrap_distribution() {
        follows_the_exact_law(2_499, window(5_000, 0.5, 2_499));
    }

    #[test]
    fn resamples_outside_the_window_are_completed_with_the_exact_law() {
        // A window of ten ranks around the median misses nearly every resample (the median's
        // standard deviation is 35 ranks), on both sides: drawn again instead of completed,
        // those would leave the ten ranks over-represented.
        follows_the_exact_law(2_499, (2_495, 2_505));
        // Windows at the ends of the ranks: nothing below, or nothing above.
        let mut counts = vec![0u32; 10];
        let mut rng = super::super::rng::stream(3, "ends");
        for win in [(0, 10), (4_990, 5_000)] {
            for _ in 0..200 {
                let (i, j) = order_stats_in_window(
                    5_000,
                    2_499,
                    win,
                    &mut counts,
                    &mut Vec::new(),
                    &mut rng,
                );
                assert!(i <= j && j < 5_000);
            }
        }
    }
}
