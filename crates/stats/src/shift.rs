//! A constant measured once and taken out of every value — a command's start-up, timed at the
//! session's start — carries its own uncertainty into every interval computed after it is
//! taken out. The constant is the median of `n` timings; its standard error is the asymptotic
//! one of a sample median, √(π/2) · σ / √n for normal data (Kendall & Stuart, *The Advanced
//! Theory of Statistics* vol. 1, §10.10), σ estimated as 1.4826 × MAD (Rousseeuw & Croux
//! 1993). An interval of a shifted median moves by the constant's error one for one; a ratio
//! (a − c)/(b − c) moves by (r − 1)/(b − c) per unit of c (the delta method), which is zero
//! for a ratio of one. Each interval is widened on both sides by z times that, z the normal
//! quantile of its level: a bound of what the constant's error adds, not an interval of its own.

use super::Interval;
use statrs::distribution::{ContinuousCDF, Normal};

pub use lab_basis::median_standard_error;

/// The two-sided normal quantile of `level` (1.96 at 95%).
fn z(level: f64) -> f64 {
    Normal::standard().inverse_cdf(0.5 + level / 2.0)
}

/// `iv`, an interval of a value the constant was taken out of, widened by the constant's
/// standard error `se`.
pub fn widen(iv: Interval, se: f64) -> Interval {
    let by = z(iv.level) * se;
    Interval {
        lo: iv.lo - by,
        hi: iv.hi + by,
        level: iv.level,
    }
}

/// `iv`, an interval of the ratio `r` of two values the same constant was taken out of, the
/// divisor being `b`, widened by the constant's standard error `se`.
pub fn widen_ratio(r: f64, iv: Interval, b: f64, se: f64) -> Interval {
    if b <= 0.0 {
        return iv;
    }
    let by = z(iv.level) * se * (r - 1.0).abs() / b;
    Interval {
        lo: (iv.lo - by).max(0.0),
        hi: iv.hi + by,
        level: iv.level,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_widen_by_z_standard_errors() {
        let iv = Interval {
            lo: 1.0,
            hi: 2.0,
            level: 0.95,
        };
        let wide = widen(iv, 0.1);
        assert!((wide.lo - (1.0 - 0.195_996)).abs() < 1e-5, "{wide:?}");
        assert!((wide.hi - (2.0 + 0.195_996)).abs() < 1e-5, "{wide:?}");
        // A ratio of 3 on a divisor of 0.5: (3 − 1) / 0.5 = 4 per unit of the constant.
        let ratio = widen_ratio(
            3.0,
            Interval {
                lo: 2.8,
                hi: 3.2,
                level: 0.95,
            },
            0.5,
            0.01,
        );
        assert!(
            (ratio.hi - (3.2 + 4.0 * 0.019_599_6)).abs() < 1e-6,
            "{ratio:?}"
        );
        // A ratio of one does not move with the constant.
        let same = widen_ratio(1.0, iv, 0.5, 0.01);
        assert_eq!((same.lo, same.hi), (1.0, 2.0));
    }

    /// By simulation: values with a true own time, a constant measured from 30 noisy
    /// timings and taken out; the widened interval of the shifted median covers the true
    /// own time about as often as its level says, where the unwidened one falls short when
    /// the constant's error dominates.
    #[test]
    fn widening_restores_coverage_when_the_constant_is_uncertain() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let normal = |rng: &mut rand_chacha::ChaCha8Rng| crate::rng::standard_normal(rng);
        let (start_up, own, sigma) = (1.0, 0.2, 0.05);
        let (mut covered_wide, mut covered_narrow, trials) = (0, 0, 2000);
        for _ in 0..trials {
            let mut spawns: Vec<f64> = (0..30)
                .map(|_| start_up + sigma * normal(&mut rng))
                .collect();
            spawns.sort_by(f64::total_cmp);
            let c = (spawns[14] + spawns[15]) / 2.0;
            let mut deviations: Vec<f64> = spawns.iter().map(|s| (s - c).abs()).collect();
            deviations.sort_by(f64::total_cmp);
            let se = median_standard_error((deviations[14] + deviations[15]) / 2.0, 30);
            // The run values' own interval is tight (many runs, little noise): ±0.001.
            let run_median = start_up + own + 0.0005 * normal(&mut rng);
            let iv = Interval {
                lo: run_median - c - 0.001,
                hi: run_median - c + 0.001,
                level: 0.95,
            };
            let wide = widen(iv, se);
            covered_wide += usize::from(wide.lo <= own && own <= wide.hi);
            covered_narrow += usize::from(iv.lo <= own && own <= iv.hi);
        }
        let wide = covered_wide as f64 / trials as f64;
        let narrow = covered_narrow as f64 / trials as f64;
        assert!(wide >= 0.93, "widened coverage {wide}");
        assert!(narrow < 0.2, "unwidened coverage {narrow}");
    }
}
