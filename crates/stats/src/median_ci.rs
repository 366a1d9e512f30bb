//! Distribution-free confidence interval for the median from order statistics.

use statrs::distribution::{Binomial, DiscreteCDF};

use super::bootstrap::Interval;
pub use lab_basis::MedianCi;

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

/// The ratio of paired measurements, `pairs` of (a, b) measured beside each other: the
/// median of the per-pair ratios a/b with the distribution-free interval of that median
/// ([`exact_median_ci`] over the sorted ratios: the sign-test interval, which assumes nothing
/// of the ratios' law but that pairs are independent of one another). What disturbed both
/// runs of a pair cancels in its ratio: the per-pair ratio of Bulej et al., "Duet
/// benchmarking", ICPE 2020. A pair that straddles a change of the machine's state gives a
/// wild ratio; the median and its order-statistic interval ignore how wild, which is why they
/// are used rather than a mean or a rank-sum estimate (on this project's 2-CPU machine with a
/// CPU hog, a tenth of the pairs were off by 20% to 80% while the rest agreed within 3%).
/// The ratios are ranked on the log scale, which ranks them alike.
///
/// `None` with a value ≤ 0 or not finite, or too few pairs to reach `level` (6 at 95%, 8
/// at 99%).
pub fn paired_ratio_ci(pairs: &[(f64, f64)], level: f64) -> Option<super::RatioEstimate> {
    if pairs
        .iter()
        .any(|&(a, b)| !(a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()))
    {
        return None;
    }
    let mut logs: Vec<f64> = pairs.iter().map(|&(a, b)| (a / b).ln()).collect();
    logs.sort_by(f64::total_cmp);
    let ci = exact_median_ci(&logs, level)?;
    Some(super::RatioEstimate {
        ratio: super::median(&logs).exp(),
        interval: Interval {
            lo: ci.interval.lo.exp(),
            hi: ci.interval.hi.exp(),
            level,
        },
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
    #[test]
    fn a_constant_ratio_between_partners_is_exact_whatever_each_pair_shares() {
        // Each pair shares a slowdown of up to 40%; the head run is always 1.05 × its partner.
        let pairs: Vec<(f64, f64)> = (0..25)
            .map(|i| {
                let shared = 100.0 * (1.0 + 0.4 * f64::from((i * 37) % 11) / 10.0);
                (1.05 * shared, shared)
            })
            .collect();
        let est = paired_ratio_ci(&pairs, 0.95).unwrap();
        for x in [est.ratio, est.interval.lo, est.interval.hi] {
            assert!((x - 1.05).abs() < 1e-12, "{est:?}");
        }
        assert!(paired_ratio_ci(&[(1.0, 0.0)], 0.95).is_none());
        assert!(paired_ratio_ci(&[], 0.95).is_none());
        assert!(
            paired_ratio_ci(&[(1.0, 1.0); 5], 0.95).is_none(),
            "5 pairs reach 93.8%"
        );
        assert!(paired_ratio_ci(&[(1.0, 1.0); 6], 0.95).is_some());
    }

    /// Ten pairs at 95%: the interval is the 2nd and the 9th of the sorted ratios (Le Boudec's
    /// ranks for n = 10), the estimate the median of the ratios.
    #[test]
    fn the_paired_interval_is_the_sign_test_interval_of_the_ratios() {
        let ratios = [1.10, 0.97, 1.03, 1.01, 1.20, 0.99, 1.02, 1.05, 0.90, 1.04];
        let pairs: Vec<(f64, f64)> = ratios.iter().map(|r| (r * 50.0, 50.0)).collect();
        let est = paired_ratio_ci(&pairs, 0.95).unwrap();
        // Sorted: 0.90 0.97 0.99 1.01 1.02 1.03 1.04 1.05 1.10 1.20.
        assert!((est.interval.lo - 0.97).abs() < 1e-12, "{est:?}");
        assert!((est.interval.hi - 1.10).abs() < 1e-12, "{est:?}");
        assert!(
            (est.ratio - (1.02f64 * 1.03).sqrt()).abs() < 1e-12,
            "{est:?}"
        );
        // At 99% ten pairs need ranks 1 and 10 (99.8%).
        let wide = paired_ratio_ci(&pairs, 0.99).unwrap();
        assert!((wide.interval.lo - 0.90).abs() < 1e-12, "{wide:?}");
        assert!((wide.interval.hi - 1.20).abs() < 1e-12, "{wide:?}");
    }

    /// Wild pairs do not move the interval: a tenth of 60 pairs off by up to ±80% (pairs that
    /// straddled a change of the machine's state), the rest within ±1% of 1.05.
    #[test]
    fn a_tenth_of_wild_pairs_leaves_the_interval_where_the_rest_agree() {
        let pairs: Vec<(f64, f64)> = (0..60)
            .map(|i| {
                let ratio = match i % 10 {
                    0 if i % 20 == 0 => 1.8,
                    0 => 0.6,
                    k => 1.05 * (1.0 + 0.01 * (f64::from(k) - 5.0) / 4.0),
                };
                (ratio * 40.0, 40.0)
            })
            .collect();
        let est = paired_ratio_ci(&pairs, 0.99).unwrap();
        assert!(est.interval.lo > 1.04 && est.interval.hi < 1.06, "{est:?}");
    }

    /// Pairs that share a lognormal disturbance (σ = 0.15) with a small noise of their own
    /// (σ = 0.01) and a true ratio of 1.03: the paired interval covers 1.03 at least as often
    /// as it says (400 simulated sessions of 20 pairs), and is several times narrower than
    /// the bootstrap interval of the same runs resampled side by side on their own.
    #[test]
    fn pairs_sharing_a_disturbance_give_a_narrow_interval_that_covers() {
        use rand::RngCore;
        let mut rng = super::super::stream(11, "duet-coverage");
        let mut normal = move || {
            // Box–Muller from two uniforms of the seeded stream.
            let u1 = (rng.next_u64() as f64 + 1.0) / (u64::MAX as f64 + 2.0);
            let u2 = rng.next_u64() as f64 / u64::MAX as f64;
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        };
        let (mut covered, mut narrower, sessions) = (0u32, 0u32, 400u32);
        for s in 0..sessions {
            let pairs: Vec<(f64, f64)> = (0..20)
                .map(|_| {
                    let shared = (0.15 * normal()).exp();
                    (
                        1.03 * shared * (0.01 * normal()).exp(),
                        shared * (0.01 * normal()).exp(),
                    )
                })
                .collect();
            let est = paired_ratio_ci(&pairs, 0.95).unwrap();
            covered += u32::from(est.interval.lo <= 1.03 && 1.03 <= est.interval.hi);
            let side = |f: fn(&(f64, f64)) -> f64| -> Vec<Vec<f64>> {
                pairs.iter().map(|p| vec![f(p)]).collect()
            };
            let mut r = super::super::stream(u64::from(s), "apart");
            let apart = super::super::ratio_ci(
                &side(|p| p.0),
                &side(|p| p.1),
                super::super::Statistic::Median,
                1000,
                0.95,
                &mut r,
            )
            .unwrap();
            let width = |iv: &Interval| iv.hi - iv.lo;
            narrower += u32::from(5.0 * width(&est.interval) < width(&apart.interval));
        }
        let share = f64::from(covered) / f64::from(sessions);
        // 20 pairs at 95%: ranks 6 and 15, exact coverage 95.9%; 400 sessions give ±2%.
        assert!((0.93..=0.99).contains(&share), "covered in {share}");
        assert!(narrower >= 390, "narrower in {narrower} of {sessions}");
    }
}
