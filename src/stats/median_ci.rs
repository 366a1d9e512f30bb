//! Distribution-free confidence interval for the median from order statistics.

use serde::Serialize;
use statrs::distribution::{Binomial, DiscreteCDF};

use super::bootstrap::Interval;

/// An order-statistic median interval with its exact (achieved) coverage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MedianCi {
    /// `[x_(lo_rank), x_(hi_rank)]`; `interval.level` is the requested level.
    pub interval: Interval,
    /// P(lo_rank ≤ B < hi_rank), B ~ Binomial(n, 1/2): coverage for any continuous law.
    pub coverage: f64,
    /// 1-based ranks of the endpoints; hi_rank = n + 1 − lo_rank.
    pub lo_rank: usize,
    pub hi_rank: usize,
}

/// Coverage of the symmetric interval `[x_(j), x_(n+1−j)]`: 1 − 2·P(B ≤ j−1).
fn coverage(bin: &Binomial, j: usize) -> f64 {
    1.0 - 2.0 * bin.cdf(j as u64 - 1)
}

/// Narrowest symmetric order-statistic interval for the median whose coverage is at least
/// `level` (Le Boudec, "Performance Evaluation of Computer and Communication Systems", EPFL
/// Press 2010, Thm 2.1 and the rank table of its Appendix A; e.g. n = 6 → ranks 1 and 6,
/// 96.9 %; n = 10 → ranks 2 and 9, 97.9 %). `sorted` must be sorted ascending.
///
/// `None` if empty, any NaN, `level ∉ (0,1)`, or no interval reaches `level`
/// (n ≤ 5 at 95 %).
pub fn exact_median_ci(sorted: &[f64], level: f64) -> Option<MedianCi> {
    let n = sorted.len();
    if n == 0 || !(level > 0.0 && level < 1.0) || sorted.iter().any(|x| x.is_nan()) {
        return None;
    }
    let bin = Binomial::new(0.5, n as u64).ok()?;
    let ok = |j: usize| coverage(&bin, j) >= level - 1e-12;
    if !ok(1) {
        return None;
    }
    // Coverage decreases in j; binary search the largest j in [1, ceil(n/2)] that is ok.
    let (mut good, mut bad) = (1usize, n.div_ceil(2) + 1);
    while bad - good > 1 {
        let mid = (good + bad) / 2;
        if ok(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    let (lo_rank, hi_rank) = (good, n + 1 - good);
    let interval = Interval {
        lo: sorted[lo_rank - 1],
        hi: sorted[hi_rank - 1],
        level,
    };
    Some(MedianCi {
        interval,
        coverage: coverage(&bin, good),
        lo_rank,
        hi_rank,
    })
}

#[cfg(test)]
mod tests {
    use super::super::reference::reference;
    use super::*;

    fn seq(n: usize) -> Vec<f64> {
        (1..=n).map(|i| i as f64).collect()
    }

    #[test]
    fn le_boudec_table_examples() {
        let c6 = exact_median_ci(&seq(6), 0.95).unwrap();
        assert_eq!((c6.lo_rank, c6.hi_rank), (1, 6));
        assert!((c6.coverage - 62.0 / 64.0).abs() < 1e-12); // 96.9 %
        let c10 = exact_median_ci(&seq(10), 0.95).unwrap();
        assert_eq!((c10.lo_rank, c10.hi_rank), (2, 9));
        assert!((c10.coverage - 1002.0 / 1024.0).abs() < 1e-12); // 97.9 %
        assert_eq!((c10.interval.lo, c10.interval.hi), (2.0, 9.0));
        assert!(exact_median_ci(&seq(5), 0.95).is_none());
        assert!(exact_median_ci(&[], 0.95).is_none());
        assert!(exact_median_ci(&[1.0, f64::NAN], 0.5).is_none());
    }

    #[test]
    fn ranks_match_scipy_binomial() {
        // Ranks and coverage computed with scipy.stats.binom in the reference script.
        let r = reference();
        for case in r["median_ci_ranks"].as_array().unwrap() {
            let n = case["n"].as_u64().unwrap() as usize;
            let level = case["level"].as_f64().unwrap();
            let got = exact_median_ci(&seq(n), level);
            if case["lo_rank"].is_null() {
                assert!(got.is_none(), "n={n}");
                continue;
            }
            let got = got.unwrap();
            assert_eq!(
                got.lo_rank as u64,
                case["lo_rank"].as_u64().unwrap(),
                "n={n}"
            );
            assert_eq!(
                got.hi_rank as u64,
                case["hi_rank"].as_u64().unwrap(),
                "n={n}"
            );
            let cov = case["coverage"].as_f64().unwrap();
            assert!(
                (got.coverage - cov).abs() <= 1e-9,
                "n={n} {} {cov}",
                got.coverage
            );
        }
    }
}
