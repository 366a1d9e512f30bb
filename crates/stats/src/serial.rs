//! Serial dependence of values in time order: the Wald–Wolfowitz serial-correlation test,
//! pooled over independent groups, and the Ljung–Box test at lag 1.

use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF};
use statrs::function::erf::erfc;

/// Fewest values a group needs to add to the serial-correlation test: with three, every
/// circular arrangement has the same neighbours and the statistic cannot vary.
pub const MIN_SERIAL_GROUP: usize = 4;

/// Result of the pooled Wald–Wolfowitz serial-correlation test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SerialCorrelation {
    /// Mean over the groups of their circular lag-1 autocorrelation, in [−1, 1].
    pub r: f64,
    /// Normal score of Σ R against its permutation mean and variance.
    pub z: f64,
    /// Two-sided p-value from the normal approximation.
    pub p_value: f64,
    /// Groups that took part (those with at least [`MIN_SERIAL_GROUP`] values).
    pub groups: usize,
    /// Values in those groups.
    pub n: usize,
}

/// The circular lag-1 serial sum R = Σ_{i=1..n} x_i · x_{i+1}, with x_{n+1} = x_1.
fn circular_serial_sum(xs: &[f64]) -> f64 {
    xs.iter()
        .zip(xs.iter().cycle().skip(1))
        .map(|(a, b)| a * b)
        .sum()
}

/// The mean and variance of R over every ordering of `xs` (Wald & Wolfowitz 1943, "An exact
/// test for randomness in the non-parametric case based on serial correlation", Ann. Math.
/// Stat. 14:378), with A_r = Σ x_i^r:
/// E(R) = (A₁² − A₂)/(n − 1),
/// Var(R) = (A₂² − A₄)/(n − 1) + (A₁⁴ − 4A₁²A₂ + 4A₁A₃ + A₂² − 2A₄)/((n − 1)(n − 2))
///          − E(R)².
fn permutation_moments(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let power_sum = |r: i32| xs.iter().map(|x| x.powi(r)).sum::<f64>();
    let (a1, a2, a3, a4) = (power_sum(1), power_sum(2), power_sum(3), power_sum(4));
    let mean = (a1 * a1 - a2) / (n - 1.0);
    let variance = (a2 * a2 - a4) / (n - 1.0)
        + (a1.powi(4) - 4.0 * a1 * a1 * a2 + 4.0 * a1 * a3 + a2 * a2 - 2.0 * a4)
            / ((n - 1.0) * (n - 2.0))
        - mean * mean;
    (mean, variance.max(0.0))
}

/// `xs` minus their mean.
fn centred(xs: &[f64]) -> Vec<f64> {
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    xs.iter().map(|x| x - mean).collect()
}

/// `xs` centred and scaled to a sum of squares of 1 (left at 0 when they are all equal).
fn standardised(xs: &[f64]) -> Vec<f64> {
    let c = centred(xs);
    let norm = c.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 {
        c.iter().map(|x| x / norm).collect()
    } else {
        c
    }
}

/// Wald–Wolfowitz (1943) serial-correlation test of whether each group's values, in the
/// order given, are a random arrangement, pooled over independent groups: under that null
/// each group's circular serial sum R has the permutation moments of
/// [`permutation_moments`], the groups are independent, so Σ R has mean Σ E(R) and variance
/// Σ Var(R); z = (Σ R − Σ E(R))/√Σ Var(R) is referred to the normal distribution as
/// Wald & Wolfowitz (1943) do. Each group is first centred (which moves its R by the same
/// constant under every ordering, so its test is unchanged) and scaled to a sum of squares
/// of 1, so that every group weighs alike whatever its spread: R is then the group's circular
/// lag-1 autocorrelation and `r` their mean. Negative z: neighbours tend to lie on opposite
/// sides of their group's mean (alternation); positive: neighbours resemble each other.
///
/// Groups with fewer than [`MIN_SERIAL_GROUP`] values are left out. `None` when no group is
/// left or any value is not finite; when every group is constant (no ordering can differ),
/// r = z = 0 and p = 1.
pub fn wald_wolfowitz_serial(groups: &[Vec<f64>]) -> Option<SerialCorrelation> {
    let used: Vec<Vec<f64>> = groups
        .iter()
        .filter(|g| g.len() >= MIN_SERIAL_GROUP)
        .map(|g| standardised(g))
        .collect();
    if used.is_empty() || used.iter().flatten().any(|x| !x.is_finite()) {
        return None;
    }
    let (mut sum, mut mean, mut variance, mut squares) = (0.0, 0.0, 0.0, 0.0);
    for g in &used {
        let (m, v) = permutation_moments(g);
        sum += circular_serial_sum(g);
        mean += m;
        variance += v;
        squares += g.iter().map(|x| x * x).sum::<f64>();
    }
    let (r, z) = if variance > 0.0 && squares > 0.0 {
        (sum / squares, (sum - mean) / variance.sqrt())
    } else {
        (0.0, 0.0)
    };
    Some(SerialCorrelation {
        r,
        z,
        p_value: erfc(z.abs() / std::f64::consts::SQRT_2),
        groups: used.len(),
        n: used.iter().map(Vec::len).sum(),
    })
}

/// Result of the Ljung–Box test at lag 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LjungBox {
    /// Lag-1 sample autocorrelation.
    pub r1: f64,
    /// Q = n(n + 2) r₁² / (n − 1).
    pub q: f64,
    /// Upper-tail χ²(1) probability of `q`.
    pub p_value: f64,
}

/// The lag-1 sample autocorrelation r₁ = Σ_{t=1..n−1} (x_t − x̄)(x_{t+1} − x̄) / Σ (x_t − x̄)²
/// (Box, Jenkins & Reinsel 2008, "Time Series Analysis", 4th ed., ch. 2).
///
/// `None` with fewer than two values, a value that is not finite, or all values equal.
pub fn lag1_autocorrelation(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let c = centred(xs);
    let denominator: f64 = c.iter().map(|x| x * x).sum();
    let numerator: f64 = c.windows(2).map(|w| w[0] * w[1]).sum();
    (denominator > 0.0).then(|| numerator / denominator)
}

/// Ljung–Box portmanteau test at lag 1 (Ljung & Box 1978, "On a measure of lack of fit in
/// time series models", Biometrika 65:297, with m = 1 lag): Q = n(n + 2) r₁²/(n − 1),
/// referred to χ²(1).
///
/// `None` with fewer than three values or a value that is not finite; all values equal give
/// r₁ = Q = 0 and p = 1.
pub fn ljung_box_lag1(xs: &[f64]) -> Option<LjungBox> {
    if xs.len() < 3 || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let r1 = lag1_autocorrelation(xs).unwrap_or(0.0);
    let n = xs.len() as f64;
    let q = n * (n + 2.0) * r1 * r1 / (n - 1.0);
    let p_value = ChiSquared::new(1.0).map_or(f64::NAN, |chi| chi.sf(q));
    Some(LjungBox { r1, q, p_value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Permutation moments computed by enumerating every ordering in Python (numpy, not the
    /// formula): `np.mean`/`np.var` of Σ x·roll(x, −1) over `itertools.permutations(x)`.
    #[test]
    fn moments_match_enumeration_of_every_ordering() {
        let cases: [(&[f64], f64, f64); 3] = [
            (
                &[1.0, 2.0, 3.0, 4.0],
                23.333333333333332,
                2.8888888888888893,
            ),
            (&[3.1, 0.2, 5.5, 2.0, 9.0], 66.785, 224.5568916666667),
            (
                &[2.0, -1.0, 0.5, 3.0, 3.0, 8.0, 1.0],
                30.666666666666668,
                149.6888888888889,
            ),
        ];
        for (xs, mean, variance) in cases {
            let (m, v) = permutation_moments(xs);
            assert!(close(m, mean), "{xs:?}: mean {m} vs {mean}");
            assert!(
                (v - variance).abs() < 1e-9 * variance,
                "{xs:?}: {v} vs {variance}"
            );
        }
    }

    /// Each group centred and scaled to unit sum of squares, its permutation mean and variance
    /// found by enumerating every ordering (itertools.permutations, numpy), summed over the
    /// groups; z = (Σ R − Σ E) / √Σ Var and p = 2·scipy.stats.norm.sf(|z|) (SciPy 1.17.1).
    #[test]
    fn pooled_test_matches_enumeration_and_scipy() {
        let cases: [(Vec<Vec<f64>>, [f64; 3]); 4] = [
            (
                vec![
                    vec![3.1, 0.2, 5.5, 2.0, 9.0],
                    vec![1.0, 1.0, 2.0, 5.0, 7.0, 7.5],
                    vec![2.0, -1.0, 0.5, 3.0, 3.0, 8.0, 1.0],
                ],
                [
                    -0.0005630539476464969,
                    1.1016004174173222,
                    0.2706354267848351,
                ],
            ),
            (
                vec![
                    vec![1.0, 5.0, 2.0, 6.0, 3.0, 7.0, 4.0, 8.0],
                    vec![2.0, 6.0, 1.0, 7.0, 3.0, 8.0, 4.0, 5.0],
                ],
                [
                    -0.6904761904761906,
                    -2.3979157616563604,
                    0.016488656727670113,
                ],
            ),
            (
                vec![vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]],
                [0.33333333333333337, 1.4744195615489712, 0.1403686607716733],
            ),
            (
                vec![
                    vec![-0.33, 0.34, -0.35, 0.32, -0.34, 0.33, -0.32, 0.35],
                    vec![0.31, -0.33, 0.34, -0.32, 0.33, -0.34, 0.32, -0.31],
                ],
                [
                    -0.9986927408333255,
                    -3.4603611803719914,
                    0.000539451297266192,
                ],
            ),
        ];
        for (groups, [r, z, p]) in cases {
            let got = wald_wolfowitz_serial(&groups).expect("enough values");
            assert!(close(got.r, r), "r {} vs {r}", got.r);
            assert!(close(got.z, z), "z {} vs {z}", got.z);
            assert!(close(got.p_value, p), "p {} vs {p}", got.p_value);
        }
    }

    #[test]
    fn small_and_constant_groups() {
        assert_eq!(wald_wolfowitz_serial(&[vec![1.0, 2.0, 3.0]]), None);
        assert_eq!(
            wald_wolfowitz_serial(&[vec![1.0, f64::NAN, 3.0, 4.0]]),
            None
        );
        let flat = wald_wolfowitz_serial(&[vec![5.0; 6], vec![1.0, 2.0]]).unwrap();
        assert_eq!(
            (flat.r, flat.z, flat.p_value, flat.groups, flat.n),
            (0.0, 0.0, 1.0, 1, 6)
        );
    }

    /// r₁ from statsmodels 0.15.0 `acf(x, nlags=1, fft=False)[1]`, Q and p from
    /// `acorr_ljungbox(x, lags=[1])`.
    #[test]
    fn ljung_box_matches_statsmodels() {
        let no_trend = [
            50.0, 52.0, 49.0, 51.0, 50.0, 53.0, 48.0, 50.0, 51.0, 52.0, 50.0, 49.0, 51.0, 50.0,
            52.0, 48.0, 53.0, 50.0, 49.0, 51.0, 50.0, 50.0, 52.0, 49.0,
        ];
        let alternating = [29.1, 58.3, 27.4, 57.2, 28.8, 58.9, 29.5, 57.6, 28.2, 56.9];
        let smooth = [
            10.0, 10.4, 10.9, 11.1, 10.8, 10.2, 9.7, 9.5, 9.9, 10.5, 11.0, 11.2,
        ];
        let cases: [(&[f64], [f64; 3]); 3] = [
            (
                &no_trend,
                [-0.561969696969697, 8.568060989340042, 0.003421113082796879],
            ),
            (
                &alternating,
                [
                    -0.9063695819543037,
                    10.953410921226924,
                    0.0009343146437868932,
                ],
            ),
            (
                &smooth,
                [0.6194393662400978, 5.860223779932083, 0.015486824894015731],
            ),
        ];
        for (xs, [r1, q, p]) in cases {
            let got = ljung_box_lag1(xs).expect("enough values");
            assert!(close(got.r1, r1), "r1 {} vs {r1}", got.r1);
            assert!(close(got.q, q), "Q {} vs {q}", got.q);
            assert!(close(got.p_value, p), "p {} vs {p}", got.p_value);
        }
    }

    #[test]
    fn ljung_box_edge_cases() {
        assert_eq!(ljung_box_lag1(&[1.0, 2.0]), None);
        assert_eq!(ljung_box_lag1(&[1.0, f64::INFINITY, 2.0]), None);
        let flat = ljung_box_lag1(&[3.0; 5]).unwrap();
        assert_eq!((flat.r1, flat.q, flat.p_value), (0.0, 0.0, 1.0));
        assert_eq!(lag1_autocorrelation(&[2.0, 2.0]), None);
    }
}
