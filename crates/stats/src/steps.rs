//! Steps in a history of session medians: where a metric moved from one level to another
//! across sessions, each session's median carrying its own uncertainty.
//!
//! The model is a piecewise-constant mean on the log scale, y_i = ln(median_i), with
//! independent normal errors of known variance σ_i² = s_i² + τ²:
//! - s_i, the session's own standard error, read from its confidence interval
//!   (half-width / z);
//! - τ², what varies from session to session beyond that (another day, another boot), from the
//!   median absolute deviation of successive differences, MAD(Δy)·1.4826/√2 (the
//!   difference-based noise estimate of Fryzlewicz, "Wild binary segmentation for multiple
//!   change-point detection", Ann. Statist. 42:2243, 2014, §3), less the sessions' own share.
//!
//! The segmentation minimises Σ segment costs + β·(number of changes) exactly by optimal
//! partitioning (Jackson et al., "An algorithm for optimal partitioning of data on an
//! interval", IEEE Signal Processing Letters 12:105, 2005), the segment cost being the
//! weighted sum of squares Σ w_i (y_i − ȳ_w)² with w_i = 1/σ_i², i.e. twice the negative
//! log-likelihood of a normal mean change with known variances. β = 3·ln(n) is the modified
//! BIC of Zhang & Siegmund ("A modified Bayes information criterion with applications to the
//! analysis of comparative genomic hybridization data", Biometrics 63:22, 2007), the default
//! penalty of R's `changepoint` package.

use super::summary::median;

/// One session's median with its standard error, both on the log scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogPoint {
    pub y: f64,
    pub se: f64,
}

impl LogPoint {
    /// A median and its interval at `level`, as a log-scale point; `None` unless all three are
    /// positive and finite with lo ≤ median ≤ hi.
    pub fn from_interval(median: f64, lo: f64, hi: f64, level: f64) -> Option<LogPoint> {
        let ordered = 0.0 < lo && lo <= median && median <= hi && hi.is_finite();
        if !ordered || !(0.0..1.0).contains(&level) {
            return None;
        }
        let z = z_two_sided(level);
        Some(LogPoint {
            y: median.ln(),
            se: (hi.ln() - lo.ln()) / (2.0 * z),
        })
    }
}

/// The two-sided normal quantile for a central interval at `level`.
fn z_two_sided(level: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    let standard = Normal::new(0.0, 1.0).expect("the standard normal is valid");
    standard.inverse_cdf(1.0 - (1.0 - level) / 2.0)
}

/// The modified-BIC penalty per change for `n` points (Zhang & Siegmund 2007).
pub fn penalty(n: usize) -> f64 {
    3.0 * (n.max(1) as f64).ln()
}

/// Between-session standard deviation beyond the sessions' own errors: the robust
/// successive-difference estimate of the total noise, less the mean within-session variance.
/// Zero with fewer than three points (one difference says nothing robust).
pub fn between_session_sd(points: &[LogPoint]) -> f64 {
    if points.len() < 3 {
        return 0.0;
    }
    let diffs: Vec<f64> = points.windows(2).map(|w| w[1].y - w[0].y).collect();
    let centre = median(&diffs);
    let deviations: Vec<f64> = diffs.iter().map(|d| (d - centre).abs()).collect();
    let total = 1.4826 * median(&deviations) / std::f64::consts::SQRT_2;
    let own = points.iter().map(|p| p.se * p.se).sum::<f64>() / points.len() as f64;
    (total * total - own).max(0.0).sqrt()
}

/// Whether the step between segments k and k+1 holds at `level` (two-sided): the difference of
/// their weighted means over its standard error, √(se_k² + se_{k+1}²), beyond the normal
/// quantile. With a Bonferroni `level` over m series (1 − 0.05/m), the steps reported across
/// all of them hold together at 95%.
pub fn step_holds(steps: &Steps, k: usize, level: f64) -> bool {
    let (Some(a), Some(b)) = (steps.means.get(k), steps.means.get(k + 1)) else {
        return false;
    };
    let se = steps.mean_ses[k].hypot(steps.mean_ses[k + 1]);
    se.is_finite() && se > 0.0 && ((b - a) / se).abs() > z_two_sided(level)
}

/// Cumulative weighted sums for O(1) segment costs.
struct WeightedSums {
    w: Vec<f64>,
    wy: Vec<f64>,
    wyy: Vec<f64>,
}

impl WeightedSums {
    fn new(ys: &[f64], weights: &[f64]) -> WeightedSums {
        let mut sums = WeightedSums {
            w: vec![0.0],
            wy: vec![0.0],
            wyy: vec![0.0],
        };
        for (&y, &w) in ys.iter().zip(weights) {
            let k = sums.w.len() - 1;
            sums.w.push(sums.w[k] + w);
            sums.wy.push(sums.wy[k] + w * y);
            sums.wyy.push(sums.wyy[k] + w * y * y);
        }
        sums
    }

    /// Σ w (y − ȳ_w)² over points a..b.
    fn cost(&self, a: usize, b: usize) -> f64 {
        let w = self.w[b] - self.w[a];
        let wy = self.wy[b] - self.wy[a];
        let wyy = self.wyy[b] - self.wyy[a];
        (wyy - wy * wy / w).max(0.0)
    }

    /// The weighted mean of points a..b.
    fn mean(&self, a: usize, b: usize) -> f64 {
        (self.wy[b] - self.wy[a]) / (self.w[b] - self.w[a])
    }

    /// The standard error of that mean, 1/√Σw.
    fn mean_se(&self, a: usize, b: usize) -> f64 {
        (1.0 / (self.w[b] - self.w[a])).sqrt()
    }
}

/// A segmentation: the start of every segment after the first, and each segment's weighted
/// mean on the log scale.
#[derive(Debug, Clone, PartialEq)]
pub struct Steps {
    pub changes: Vec<usize>,
    pub means: Vec<f64>,
    /// The standard error of each segment's mean.
    pub mean_ses: Vec<f64>,
    /// The between-session standard deviation used (log scale).
    pub between_sd: f64,
}

/// Detects steps in `points` (in session order) with penalty `beta` per change. Points need a
/// positive standard error or some between-session noise; with neither (or fewer than two
/// points, or non-finite values) there is nothing to detect and the whole series is one
/// segment.
pub fn detect(points: &[LogPoint], beta: f64) -> Steps {
    let between = between_session_sd(points);
    let ys: Vec<f64> = points.iter().map(|p| p.y).collect();
    let weights: Vec<f64> = points
        .iter()
        .map(|p| 1.0 / (p.se * p.se + between * between))
        .collect();
    let usable = points.len() >= 2
        && ys.iter().all(|y| y.is_finite())
        && weights.iter().all(|w| w.is_finite() && *w > 0.0);
    if !usable {
        let mean = if points.is_empty() {
            Vec::new()
        } else {
            vec![ys.iter().sum::<f64>() / ys.len() as f64]
        };
        return Steps {
            changes: Vec::new(),
            mean_ses: vec![f64::NAN; mean.len()],
            means: mean,
            between_sd: between,
        };
    }
    let sums = WeightedSums::new(&ys, &weights);
    let changes = optimal_partition(&sums, ys.len(), beta);
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(changes.iter().copied())
        .chain(std::iter::once(ys.len()))
        .collect();
    let means = bounds.windows(2).map(|w| sums.mean(w[0], w[1])).collect();
    let mean_ses = bounds
        .windows(2)
        .map(|w| sums.mean_se(w[0], w[1]))
        .collect();
    Steps {
        changes,
        means,
        mean_ses,
        between_sd: between,
    }
}

/// Optimal partitioning: F(t) = min over s < t of F(s) + cost(s, t) + β, F(0) = −β; returns
/// the segment starts after 0 of the minimiser for all n points.
fn optimal_partition(sums: &WeightedSums, n: usize, beta: f64) -> Vec<usize> {
    let mut best = vec![-beta; n + 1];
    let mut last = vec![0usize; n + 1];
    for t in 1..=n {
        let (s, value) = (0..t).map(|s| (s, best[s] + sums.cost(s, t) + beta)).fold(
            (0, f64::INFINITY),
            |acc, x| if x.1 < acc.1 { x } else { acc },
        );
        best[t] = value;
        last[t] = s;
    }
    let mut changes = Vec::new();
    let mut t = n;
    while last[t] > 0 {
        t = last[t];
        changes.push(t);
    }
    changes.reverse();
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(ys: &[f64], se: f64) -> Vec<LogPoint> {
        ys.iter().map(|&y| LogPoint { y, se }).collect()
    }

    /// Every segmentation of n points, enumerated: the independent reference for the optimal
    /// partition.
    fn brute_force(points: &[LogPoint], beta: f64) -> Vec<usize> {
        let n = points.len();
        let between = between_session_sd(points);
        let ys: Vec<f64> = points.iter().map(|p| p.y).collect();
        let ws: Vec<f64> = points
            .iter()
            .map(|p| 1.0 / (p.se * p.se + between * between))
            .collect();
        let cost = |a: usize, b: usize| {
            let w: f64 = ws[a..b].iter().sum();
            let m: f64 = (a..b).map(|i| ws[i] * ys[i]).sum::<f64>() / w;
            (a..b).map(|i| ws[i] * (ys[i] - m).powi(2)).sum::<f64>()
        };
        let mut best = (f64::INFINITY, Vec::new());
        for mask in 0u32..(1 << (n - 1)) {
            let changes: Vec<usize> = (1..n).filter(|i| mask & (1 << (i - 1)) != 0).collect();
            let bounds: Vec<usize> = std::iter::once(0)
                .chain(changes.iter().copied())
                .chain(std::iter::once(n))
                .collect();
            let total: f64 = bounds.windows(2).map(|w| cost(w[0], w[1])).sum::<f64>()
                + beta * changes.len() as f64;
            if total < best.0 - 1e-12 {
                best = (total, changes);
            }
        }
        best.1
    }

    #[test]
    fn a_step_at_the_fourth_of_five_sessions_is_found_there() {
        // Four sessions at 100 ms (±1%), the fourth and fifth 20% slower.
        let ys: Vec<f64> = [0.100, 0.1005, 0.0995, 0.120, 0.1202]
            .iter()
            .map(|v: &f64| v.ln())
            .collect();
        let steps = detect(&points(&ys, 0.01), penalty(5));
        assert_eq!(steps.changes, vec![3]);
        let ratio = (steps.means[1] - steps.means[0]).exp();
        assert!((ratio - 1.2).abs() < 0.01, "{ratio}");
    }

    #[test]
    fn a_step_holds_when_its_z_exceeds_the_quantile() {
        // Segments at 0 and 0.1 with standard errors 0.03 and 0.04: z = 0.1 / 0.05 = 2.0,
        // beyond 1.96 (95%) and short of 2.576 (99%).
        let steps = Steps {
            changes: vec![2],
            means: vec![0.0, 0.1],
            mean_ses: vec![0.03, 0.04],
            between_sd: 0.0,
        };
        assert!(step_holds(&steps, 0, 0.95));
        assert!(!step_holds(&steps, 0, 0.99));
        assert!(!step_holds(&steps, 1, 0.95), "no segment after the last");
    }

    #[test]
    fn sessions_within_their_noise_have_no_step() {
        let ys: Vec<f64> = [0.100, 0.1008, 0.0994, 0.1003, 0.0999, 0.1006]
            .iter()
            .map(|v: &f64| v.ln())
            .collect();
        assert!(detect(&points(&ys, 0.01), penalty(6)).changes.is_empty());
    }

    #[test]
    fn the_optimal_partition_matches_every_segmentation_enumerated() {
        let series: [&[f64]; 4] = [
            &[0.0, 0.01, 0.3, 0.29, 0.31, -0.2, -0.21, 0.0],
            &[1.0, 1.0, 1.0, 1.0],
            &[0.0, 0.5, 0.0, 0.5, 0.0, 0.5],
            &[0.1, 0.12, 0.09, 0.5, 0.1, 0.11, 0.1, 0.6, 0.62],
        ];
        for ys in series {
            for se in [0.01, 0.05, 0.2] {
                let p = points(ys, se);
                for beta in [0.5, 2.0, penalty(ys.len())] {
                    assert_eq!(
                        detect(&p, beta).changes,
                        brute_force(&p, beta),
                        "{ys:?} se {se} beta {beta}"
                    );
                }
            }
        }
    }

    #[test]
    fn between_session_noise_comes_from_successive_differences() {
        // Differences 0.1, −0.1, 0.1, −0.1: median 0 after centring at 0… computed by hand:
        // diffs = [0.1, −0.1, 0.1, −0.1], median 0, |dev| all 0.1, MAD 0.1,
        // total = 1.4826·0.1/√2 = 0.104836; own variance 0.
        let p = points(&[0.0, 0.1, 0.0, 0.1, 0.0], 0.0);
        let sd = between_session_sd(&p);
        assert!((sd - 0.104_836).abs() < 1e-6, "{sd}");
        // The sessions' own errors are taken out: 0.104836² − 0.05² = 0.0084906.
        let p = points(&[0.0, 0.1, 0.0, 0.1, 0.0], 0.05);
        assert!((between_session_sd(&p) - 0.0084906_f64.sqrt()).abs() < 1e-6);
    }

    #[test]
    fn intervals_become_log_points() {
        // A median of 100 with a 95% interval [90, 110]: se = (ln 110 − ln 90) / (2·1.959964).
        let p = LogPoint::from_interval(100.0, 90.0, 110.0, 0.95).unwrap();
        assert!((p.y - 100f64.ln()).abs() < 1e-12);
        assert!((p.se - 0.051_192_4).abs() < 1e-6, "{}", p.se);
        assert_eq!(LogPoint::from_interval(100.0, 0.0, 110.0, 0.95), None);
        assert_eq!(LogPoint::from_interval(100.0, 101.0, 110.0, 0.95), None);
        assert_eq!(LogPoint::from_interval(f64::NAN, 90.0, 110.0, 0.95), None);
    }

    #[test]
    fn degenerate_series_have_one_segment() {
        assert!(detect(&[], 1.0).changes.is_empty());
        assert!(detect(&points(&[1.0], 0.1), 1.0).changes.is_empty());
        assert!(detect(&points(&[1.0, 2.0], 0.0), 1.0).changes.is_empty());
        assert!(
            detect(&points(&[1.0, f64::NAN, 2.0], 0.1), 1.0)
                .changes
                .is_empty()
        );
    }
}
