//! Periodic structure in one run's series of iterations: Fisher's g test on the periodogram of
//! the series' logarithms, prewhitened, and Fisher's method to combine the runs of a cell.
//!
//! Logarithms make a slowdown by a factor one step whatever the level, and tame the right
//! tail of iteration times (an iteration preempted for ten times its length weighs ln 10, not
//! 10); a series with a value that is not positive is read by its ranks instead. A
//! least-squares line taken out and periods longer than a quarter of the run left out keep a
//! drift from passing for a period; an AR(1) filter fitted to the series (Box, Jenkins & Reinsel
//! 2008, "Time Series Analysis", 4th ed., §11.2.1 on prewhitening) leaves white noise where the
//! iterations are merely correlated (a slow patch lasting a few iterations), so that only a
//! spectral peak, not a red spectrum, makes the largest ordinate stand out. Ranks would be
//! robust too, but cap what a slow iteration weighs at its rank: a slowdown of one iteration in
//! seven then holds a fraction of the variance and the test loses most of its power.

use super::spearman::average_ranks;

/// Fewest cycles a period must complete within the series to be looked for: longer periods
/// are drifts as far as one run can tell.
pub const MIN_CYCLES: usize = 4;

/// Fewest iterations a series needs for the test: periods up to 8 iterations, and 12
/// ordinates to compare.
pub const MIN_ITERATIONS: usize = 32;

/// Most iterations of one series tested (its first ones): the periodogram is computed
/// directly, in time growing with the square of the length.
pub const MAX_ITERATIONS: usize = 2048;

/// Largest term of the alternating sum in [`fisher_g_p_value`] that double precision still
/// resolves to about 1e-10.
const EXACT_TERMS_BELOW: f64 = 1e6;

/// Fisher's g test on one series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeriodTest {
    /// The largest ordinate's share of the ordinates compared.
    pub g: f64,
    pub p_value: f64,
    /// How many ordinates were compared (m).
    pub ordinates: usize,
    /// The largest ordinate's frequency, in cycles per iteration.
    pub frequency: f64,
}

/// P(G > g) for the largest of `m` periodogram ordinates' share of their sum under white
/// noise (Fisher 1929, "Tests of significance in harmonic analysis", Proc. R. Soc. A 125:54,
/// eq. 16): Σ_{j=1}^{⌊1/g⌋} (−1)^{j−1} C(m, j) (1 − j g)^{m−1}.
///
/// Where the first term m(1 − g)^{m−1} is below 1 the terms fall and the sum is exact; where
/// the alternating terms grow past what double precision resolves, the p-value is above
/// 1 − 1/e and is given by the limit of the largest of m exponential ordinates,
/// 1 − exp(−m(1 − g)^{m−1}) (Fisher 1929 §3; Gumbel).
pub fn fisher_g_p_value(g: f64, m: usize) -> f64 {
    if m < 2 || g.is_nan() {
        return 1.0;
    }
    if g >= 1.0 {
        return 0.0;
    }
    let mf = m as f64;
    let terms = (1.0 / g).floor().min(mf) as usize;
    let mut sum = 0.0;
    let mut ln_binomial = 0.0;
    for j in 1..=terms {
        ln_binomial += ((mf - j as f64 + 1.0) / j as f64).ln();
        let term = (ln_binomial + (mf - 1.0) * (-(j as f64) * g).ln_1p()).exp();
        if term > EXACT_TERMS_BELOW {
            return 1.0 - (-(mf * (1.0 - g).powf(mf - 1.0))).exp();
        }
        sum += if j % 2 == 1 { term } else { -term };
    }
    sum.clamp(0.0, 1.0)
}

/// The series on its test scale (logarithms, or ranks where a value is not positive) less its
/// least-squares line, filtered by the AR(1) fitted to it: e_t = z_t − φ z_{t−1}, φ the lag-1
/// autocorrelation. One value shorter than `xs`.
pub fn prewhitened(xs: &[f64]) -> Vec<f64> {
    let scaled: Vec<f64> = if xs.iter().all(|x| *x > 0.0) {
        xs.iter().map(|x| x.ln()).collect()
    } else {
        average_ranks(xs)
    };
    let z = detrended(&scaled);
    let energy: f64 = z.iter().map(|v| v * v).sum();
    let lagged: f64 = z.windows(2).map(|w| w[0] * w[1]).sum();
    let phi = if energy > 0.0 { lagged / energy } else { 0.0 };
    z.windows(2).map(|w| w[1] - phi * w[0]).collect()
}

/// Average ranks of `xs` less their least-squares line in the iteration index.
pub fn detrended_ranks(xs: &[f64]) -> Vec<f64> {
    detrended(&average_ranks(xs))
}

/// `ys` less their least-squares line in the iteration index.
fn detrended(ys: &[f64]) -> Vec<f64> {
    let n = ys.len() as f64;
    let t_mean = (n - 1.0) / 2.0;
    let r_mean = ys.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (t, r) in ys.iter().enumerate() {
        let dt = t as f64 - t_mean;
        sxy += dt * (r - r_mean);
        sxx += dt * dt;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    ys.iter()
        .enumerate()
        .map(|(t, r)| r - r_mean - slope * (t as f64 - t_mean))
        .collect()
}

/// |Σ_t z_t e^{−2πi f t}|², by Goertzel's recurrence (Goertzel 1958, Am. Math. Monthly 65:34).
pub fn power_at(z: &[f64], frequency: f64) -> f64 {
    let w = 2.0 * std::f64::consts::PI * frequency;
    let coefficient = 2.0 * w.cos();
    let (mut s1, mut s2) = (0.0, 0.0);
    for &v in z {
        let s = v + coefficient * s1 - s2;
        s2 = s1;
        s1 = s;
    }
    (s1 * s1 + s2 * s2 - coefficient * s1 * s2).max(0.0)
}

/// Fisher's g test of `xs` (its first [`MAX_ITERATIONS`] values) for a period between 2
/// iterations and a quarter of the series: the ordinates at the Fourier frequencies k/N,
/// k = [`MIN_CYCLES`] ..= ⌊(N − 1)/2⌋, of its N prewhitened values ([`prewhitened`]). `None` with fewer than
/// [`MIN_ITERATIONS`] values or one that is not finite; values all equal give p = 1.
pub fn fisher_g_test(xs: &[f64]) -> Option<PeriodTest> {
    let xs = &xs[..xs.len().min(MAX_ITERATIONS)];
    if xs.len() < MIN_ITERATIONS || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let flat = xs.iter().all(|x| *x == xs[0]);
    let z = prewhitened(xs);
    let n = z.len();
    let ordinates: Vec<(usize, f64)> = (MIN_CYCLES..=(n - 1) / 2)
        .map(|k| (k, power_at(&z, k as f64 / n as f64)))
        .collect();
    let total: f64 = ordinates.iter().map(|(_, p)| p).sum();
    let (k, largest) = ordinates
        .iter()
        .copied()
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let m = ordinates.len();
    if flat || total <= 0.0 {
        return Some(PeriodTest {
            g: 1.0 / m as f64,
            p_value: 1.0,
            ordinates: m,
            frequency: k as f64 / n as f64,
        });
    }
    let g = largest / total;
    Some(PeriodTest {
        g,
        p_value: fisher_g_p_value(g, m),
        ordinates: m,
        frequency: k as f64 / n as f64,
    })
}

/// Fisher's method (Fisher 1932, "Statistical Methods for Research Workers", 4th ed., §21.1):
/// −2 Σ ln p_i is χ² with 2k degrees of freedom when the k p-values are independent and
/// uniform; its upper tail for even degrees of freedom is e^{−X/2} Σ_{j<k} (X/2)^j / j!.
/// `None` for no p-values.
pub fn fisher_combined(p_values: &[f64]) -> Option<f64> {
    if p_values.is_empty() {
        return None;
    }
    let half: f64 = -p_values
        .iter()
        .map(|p| p.clamp(f64::MIN_POSITIVE, 1.0).ln())
        .sum::<f64>();
    // Σ_{j<k} e^{−h} h^j / j!, each term from the last, in logs so that a large h cannot
    // overflow h^j.
    let mut ln_term = -half;
    let mut sum = ln_term.exp();
    for j in 1..p_values.len() {
        ln_term += half.ln() - (j as f64).ln();
        sum += ln_term.exp();
    }
    Some(sum.clamp(0.0, 1.0))
}

#[cfg(test)]
#[path = "periodogram_tests.rs"]
mod tests;
