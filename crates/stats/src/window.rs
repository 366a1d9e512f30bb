//! Quantiles of large single-stage bootstrap resamples in O(√n) instead of O(n): only the
//! draws that land near the quantile's rank are made one by one.
//!
//! A resample of n values with replacement is a multinomial over the n ranks. Split the
//! ranks into [0, a), the window [a, b) and [b, n): the number L of draws below the window is
//! Binomial(n, a/n), and given L the number M inside is Binomial(n − L, (b − a)/(n − a))
//! (the conditional of a multinomial; Devroye 1986, "Non-Uniform Random Variate
//! Generation", §XI.1.4). When L ≤ k and L + M ≥ k + 2 the order statistics k and k + 1 of
//! the resample are order statistics k − L and k − L + 1 of the M window draws, each uniform
//! on the window's ranks. The window spans ten standard deviations of the resampled rank on
//! each side, so it misses with probability below 10⁻²⁰; a miss draws the whole resample.

use super::rng::Stream;
use super::uniform::count_below;
use rand::Rng;
use statrs::function::gamma::ln_gamma;

/// Standard deviations of the resampled rank that the window spans on each side.
const HALF_WIDTH_SDS: f64 = 10.0;

/// The ranks `[a, b)` around order statistic `k` of a resample of `n` at quantile `p`.
pub(super) fn window(n: usize, p: f64, k: usize) -> (usize, usize) {
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    let half = (HALF_WIDTH_SDS * sd) as usize + 16;
    (k.saturating_sub(half), (k + 2 + half).min(n))
}

/// Order statistics k and k + 1 (0-based) of a resample of the `n` ranks, drawn through the
/// window `[a, b)`; `None` when they fall outside it. `counts` holds b − a zeros and is
/// left zeroed; `drawn` is room for the window draws, reused from one call to the next.
pub(super) fn order_stats_in_window(
    n: usize,
    k: usize,
    (a, b): (usize, usize),
    counts: &mut [u32],
    drawn: &mut Vec<u32>,
    rng: &mut Stream,
) -> Option<(usize, usize)> {
    let below_a = binomial(n as u64, a as f64 / n as f64, rng) as usize;
    if below_a > k {
        return None;
    }
    let rest = n - below_a;
    let width = b - a;
    let inside = binomial(rest as u64, width as f64 / (n - a) as f64, rng) as usize;
    if below_a + inside < k + 2 {
        return None;
    }
    count_below(rng, width as u32, inside, counts, drawn);
    let (want, mut cum, mut first) = (k - below_a, 0usize, None);
    let mut found = None;
    for (i, c) in counts.iter_mut().enumerate() {
        cum += *c as usize;
        *c = 0;
        if found.is_some() {
            continue;
        }
        if first.is_none() && cum > want {
            first = Some(a + i);
        }
        if cum > want + 1 {
            found = first.map(|f| (f, a + i));
        }
    }
    found
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

    #[test]
    fn window_order_statistics_follow_the_exact_bootstrap_distribution() {
        // The k-th order statistic of a resample of n ranks is ≤ rank j with probability
        // P(Binomial(n, (j+1)/n) ≥ k+1) (Maritz & Jarrett 1978, JASA 73:194). Compare the
        // window draws' frequencies at three ranks with that law computed by statrs.
        use statrs::distribution::{Binomial, DiscreteCDF};
        let (n, k) = (5_000usize, 2_499usize);
        let win = window(n, 0.5, k);
        let mut counts = vec![0u32; win.1 - win.0];
        let mut rng = super::super::rng::stream(2, "window");
        let draws: Vec<usize> = (0..20_000)
            .map(|_| {
                order_stats_in_window(n, k, win, &mut counts, &mut Vec::new(), &mut rng)
                    .unwrap()
                    .0
            })
            .collect();
        for j in [2_470usize, 2_499, 2_530] {
            let law = Binomial::new((j + 1) as f64 / n as f64, n as u64).unwrap();
            let want = 1.0 - law.cdf(k as u64);
            let got = draws.iter().filter(|&&d| d <= j).count() as f64 / draws.len() as f64;
            assert!((got - want).abs() < 0.012, "rank {j}: {got} vs {want}");
        }
        assert!(counts.iter().all(|&c| c == 0));
    }
}
