//! Latency percentiles (p50, p90, p99, p99.9, max) with bootstrap intervals where n allows.

use super::rng::Stream;

use super::bootstrap::{Interval, Resampler};
use super::summary::{quantile_in_place, quantile_sorted};
pub use lab_basis::{PercentileEstimate, Percentiles};

/// Smallest n for which a bootstrap interval of the p-quantile is reported: n·(1−p) ≥ 1,
/// so that at least one observation is expected above the quantile.
pub fn min_n_for(p: f64) -> usize {
    (1.0 / (1.0 - p) - 1e-9).ceil() as usize
}

/// Percentile bootstrap interval (Efron & Tibshirani 1993, ch. 13) of the type-7
/// p-quantile, resampling individual values; the bootstrap of sample quantiles is
/// consistent (Bickel & Freedman 1981, Ann. Stat. 9:1196, §6).
fn quantile_ci(
    rs: &mut Resampler,
    p: f64,
    resamples: usize,
    level: f64,
    rng: &mut Stream,
) -> Interval {
    if let Some(x) = rs.one_value() {
        return super::bootstrap::point_interval(x, level);
    }
    let mut stats: Vec<f64> = (0..resamples).map(|_| rs.draw_quantile(p, rng)).collect();
    let a = (1.0 - level) / 2.0;
    let lo = quantile_in_place(&mut stats, a);
    let hi = quantile_in_place(&mut stats, 1.0 - a);
    Interval { lo, hi, level }
}

/// p50, p90, p99, p99.9 (type 7) and max of `values`, each with a percentile-bootstrap
/// interval when n ≥ [`min_n_for`]`(p)`. Intervals are drawn from `rng` in the order
/// p50, p90, p99, p99.9; values that are all one number draw nothing, every interval being
/// that number ([`super::bootstrap::one_value`]).
///
/// `None` if empty, any value is not finite, `resamples < 2` or `level ∉ (0,1)`.
pub fn latency_percentiles(
    values: &[f64],
    resamples: usize,
    level: f64,
    rng: &mut Stream,
) -> Option<Percentiles> {
    if resamples < 2 || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let mut rs = Resampler::of_singles(values)?;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let mut est = |p: f64| PercentileEstimate {
        p,
        value: quantile_sorted(&sorted, p),
        ci: (n >= min_n_for(p)).then(|| quantile_ci(&mut rs, p, resamples, level, rng)),
    };
    let (p50, p90, p99, p999) = (est(0.5), est(0.9), est(0.99), est(0.999));
    Some(Percentiles {
        n,
        p50,
        p90,
        p99,
        p999,
        max: sorted[n - 1],
    })
}

#[cfg(test)]
mod tests {
    use super::super::reference::{reference, vecs};
    use super::super::rng::stream;
    use super::*;

    #[test]
    fn one_number_throughout_has_point_intervals_and_draws_nothing() {
        let values = vec![3.25; 1_500];
        let mut rng = stream(4, "flat");
        let p = latency_percentiles(&values, 500, 0.95, &mut rng).unwrap();
        for e in [p.p50, p.p90, p.p99, p.p999] {
            let ci = e.ci.unwrap();
            assert_eq!((e.value, ci.lo, ci.hi), (3.25, 3.25, 3.25));
        }
        assert_eq!(
            rand::RngCore::next_u32(&mut rng),
            rand::RngCore::next_u32(&mut stream(4, "flat"))
        );
    }

    #[test]
    fn thresholds() {
        assert_eq!(min_n_for(0.5), 2);
        assert_eq!(min_n_for(0.9), 10);
        assert_eq!(min_n_for(0.99), 100);
        assert_eq!(min_n_for(0.999), 1000);
        let xs: Vec<f64> = (1..=150).map(f64::from).collect();
        let mut rng = stream(3, "pct");
        let p = latency_percentiles(&xs, 200, 0.95, &mut rng).unwrap();
        // numpy.percentile(1..150, [50, 90, 99, 99.9]) = 75.5, 135.1, 148.51, 149.851
        assert!((p.p50.value - 75.5).abs() < 1e-12);
        assert!((p.p90.value - 135.1).abs() < 1e-9);
        assert!((p.p99.value - 148.51).abs() < 1e-9);
        assert!((p.p999.value - 149.851).abs() < 1e-9);
        assert_eq!(p.max, 150.0);
        assert!(p.p99.ci.is_some() && p.p999.ci.is_none());
        assert!(latency_percentiles(&[], 200, 0.95, &mut rng).is_none());
    }

    #[test]
    fn p90_interval_matches_scipy() {
        // scipy.stats.bootstrap(percentile, statistic = np.percentile(·, 90), 10,000).
        let r = reference();
        let case = &r["bootstrap_p90"];
        let xs = vecs(&case["data"]);
        let mut rng = stream(5, "p90");
        let p = latency_percentiles(&xs, 10_000, 0.95, &mut rng).unwrap();
        let iv = p.p90.ci.unwrap();
        let (lo, hi) = (case["lo"].as_f64().unwrap(), case["hi"].as_f64().unwrap());
        let (slo, shi) = (
            case["lo_sd"].as_f64().unwrap(),
            case["hi_sd"].as_f64().unwrap(),
        );
        let w = hi - lo;
        assert!((iv.lo - lo).abs() <= 0.03 * w + 3.0 * slo, "{iv:?} {case}");
        assert!((iv.hi - hi).abs() <= 0.03 * w + 3.0 * shi, "{iv:?} {case}");
    }
}
