//! Descriptive summaries: type-7 quantiles, median and a sample's `Summary`.

pub use lab_basis::Summary;

/// Quantile of already sorted data, Hyndman & Fan (1996, "Sample quantiles in statistical
/// packages", Am. Stat. 50:361) definition 7 — the default of numpy and R:
/// `h = (n-1)p`, linear interpolation between the order statistics around `h`.
///
/// Returns NaN for empty input or NaN `p`; `p` outside [0, 1] is clamped.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() || p.is_nan() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    let frac = h - lo as f64;
    if frac == 0.0 {
        sorted[lo]
    } else {
        sorted[lo] + frac * (sorted[hi] - sorted[lo])
    }
}

/// Type-7 quantile of unsorted data in O(n) using `select_nth_unstable_by`; reorders `buf`.
/// Same definition and edge cases as [`quantile_sorted`]; NaNs sort last (`total_cmp`).
pub fn quantile_in_place(buf: &mut [f64], p: f64) -> f64 {
    if buf.is_empty() || p.is_nan() {
        return f64::NAN;
    }
    let h = (buf.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    let (_, &mut x_lo, rest) = buf.select_nth_unstable_by(lo, f64::total_cmp);
    if frac == 0.0 || rest.is_empty() {
        return x_lo;
    }
    let x_hi = rest.iter().copied().fold(f64::INFINITY, f64::min);
    x_lo + frac * (x_hi - x_lo)
}

/// Median (type-7 quantile at 1/2, i.e. the mean of the two middle values for even n).
/// Returns NaN for empty input or if any value is NaN.
pub fn median(xs: &[f64]) -> f64 {
    if xs.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let mut buf = xs.to_vec();
    quantile_in_place(&mut buf, 0.5)
}

/// Half an interval's width over the estimate's magnitude (a share: 0.018 for ±1.8%);
/// infinite at a zero estimate.
pub fn relative_half_width(lo: f64, hi: f64, estimate: f64) -> f64 {
    if estimate == 0.0 {
        return f64::INFINITY;
    }
    (hi - lo) / 2.0 / estimate.abs()
}

/// Summary of `xs`; `None` if `xs` is empty or contains a non-finite value.
/// Mean and variance use Welford's (1962, Technometrics 4:419) one-pass update.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let (mut mean, mut m2) = (0.0, 0.0);
    for (i, &x) in xs.iter().enumerate() {
        let d = x - mean;
        mean += d / (i + 1) as f64;
        m2 += d * (x - mean);
    }
    let n = xs.len();
    let sd = if n > 1 {
        (m2 / (n - 1) as f64).sqrt()
    } else {
        f64::NAN
    };
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(Summary {
        n,
        mean,
        sd,
        cv: sd / mean.abs(),
        min: sorted[0],
        max: sorted[n - 1],
        median: quantile_sorted(&sorted, 0.5),
        p90: quantile_sorted(&sorted, 0.9),
        p99: quantile_sorted(&sorted, 0.99),
        p999: quantile_sorted(&sorted, 0.999),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type7_matches_numpy() {
        // numpy.percentile([1, 2, 3, 4, 10], [0, 25, 50, 90, 100]) = [1, 2, 3, 7.6, 10]
        let s = [1.0, 2.0, 3.0, 4.0, 10.0];
        let want = [(0.0, 1.0), (0.25, 2.0), (0.5, 3.0), (0.9, 7.6), (1.0, 10.0)];
        for (p, q) in want {
            assert!((quantile_sorted(&s, p) - q).abs() < 1e-12, "p={p}");
            assert!((quantile_in_place(&mut s.to_vec(), p) - q).abs() < 1e-12);
        }
        // numpy.median([3, 1, 4, 1]) = 2.0
        assert_eq!(median(&[3.0, 1.0, 4.0, 1.0]), 2.0);
        assert!(median(&[]).is_nan());
        assert!(median(&[1.0, f64::NAN]).is_nan());
        assert!(quantile_sorted(&[], 0.5).is_nan());
    }

    #[test]
    fn summary_matches_hand_values() {
        // mean 5, sample var = 32/7 for [2,4,4,4,5,5,7,9] (population var 4).
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert!((s.mean - 5.0).abs() < 1e-12);
        assert!((s.sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!((s.cv - (32.0f64 / 7.0).sqrt() / 5.0).abs() < 1e-12);
        assert_eq!((s.min, s.max, s.median), (2.0, 9.0, 4.5));
        // numpy.percentile(..., 90) = 7.6 ; 99 -> 8.86 ; 99.9 -> 8.986
        assert!((s.p90 - 7.6).abs() < 1e-12);
        assert!((s.p99 - 8.86).abs() < 1e-12);
        assert!((s.p999 - 8.986).abs() < 1e-12);
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[1.0, f64::NAN]).is_none());
        let one = summarize(&[3.0]).unwrap();
        assert!(one.sd.is_nan() && one.median == 3.0);
    }
}
