//! The noise floor: an A/A session's comparison of each cell with itself read as what it says
//! about this machine now — false alarms (an A/A cell called faster or slower), the
//! run-to-run spread, and the minimum detectable effect at a few numbers of runs per side.

use super::{CellChange, Change, Comparison};
use crate::analysis::CellStats;
use lab_config::format::percent;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

/// The numbers of runs per side the minimum detectable effect is given at, as multiples of
/// the planned number.
pub(super) const MDE_MULTIPLES: [usize; 3] = [1, 2, 4];

/// An A/A session read as the noise floor of an experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NoiseFloor {
    pub experiment: String,
    /// The noise session's folder name.
    pub session: String,
    /// When it was measured (UTC, as the manifest records it).
    pub measured: String,
    pub metric: String,
    /// The level each cell's interval (and each MDE) is at.
    pub level: f64,
    pub threshold: f64,
    pub cells: Vec<NoiseCell>,
    /// A/A cells called faster or slower.
    pub false_alarms: usize,
    /// Cells with enough runs to compare.
    pub compared: usize,
}

/// One cell compared with itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NoiseCell {
    pub change: CellChange,
    /// σ of the log run values, pooled over the two sides.
    pub log_sd: Option<f64>,
    /// The coefficient of variation of the run values, pooled over the two sides.
    pub cv: Option<f64>,
    /// (runs per side, the smallest change the ratio interval could tell from none).
    pub mde: Vec<(usize, f64)>,
}

/// The smallest change lab's interval of the ratio of medians could tell from none with `n`
/// runs per side, for run values of log-scale spread `log_sd`, at `level`: the expected
/// half-width of that interval. Normal approximation of the difference of two log medians,
/// each of asymptotic variance (π/2)·σ²/n (the median's efficiency 2/π relative to the mean
/// under normality; Kendall & Stuart, "The Advanced Theory of Statistics" vol. 1, §10.10), so
/// half-width z_{1−α/2}·σ·sqrt(π/n) on the log scale, returned as a share of the ratio:
/// exp(half-width) − 1.
pub fn mde(log_sd: f64, n: usize, level: f64) -> f64 {
    let z = Normal::new(0.0, 1.0)
        .map(|d| d.inverse_cdf(1.0 - (1.0 - level) / 2.0))
        .unwrap_or(f64::NAN);
    (z * log_sd * (std::f64::consts::PI / n as f64).sqrt()).exp_m1()
}

/// Sample variance (n − 1) of `xs`; `None` below two values.
fn variance(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    Some(xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64)
}

/// One value per run: the median of what the run printed.
fn run_values(cell: &CellStats) -> Vec<f64> {
    cell.runs
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| lab_stats::summary::median(r))
        .collect()
}

/// Pooled within-side spread of two cells' run values: σ of their logs, and the CV.
pub(super) fn spread(a: &CellStats, b: &CellStats) -> (Option<f64>, Option<f64>) {
    let (va, vb) = (run_values(a), run_values(b));
    let logs = |v: &[f64]| variance(&v.iter().map(|x| x.ln()).collect::<Vec<_>>());
    let cv2 = |v: &[f64]| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        variance(v).map(|s2| s2 / (mean * mean))
    };
    let pool = |x: Option<f64>, y: Option<f64>| Some(((x? + y?) / 2.0).sqrt());
    (pool(logs(&va), logs(&vb)), pool(cv2(&va), cv2(&vb)))
}

/// The noise floor of `comparison`, the A/A comparison of `pairs` (side a, side b), at the
/// planned `runs` per side.
pub fn noise_floor(
    comparison: &Comparison,
    pairs: &[(&CellStats, &CellStats)],
    runs: usize,
    (session, measured): (&str, &str),
) -> NoiseFloor {
    let cells: Vec<NoiseCell> = comparison
        .cells
        .iter()
        .zip(pairs)
        .map(|(change, (a, b))| {
            let (log_sd, cv) = spread(a, b);
            let mde = log_sd.map_or_else(Vec::new, |s| {
                MDE_MULTIPLES
                    .iter()
                    .map(|k| (k * runs, mde(s, k * runs, comparison.level)))
                    .collect()
            });
            NoiseCell {
                change: change.clone(),
                log_sd,
                cv,
                mde,
            }
        })
        .collect();
    let alarm = |c: &&NoiseCell| matches!(c.change.verdict, Change::Faster | Change::Slower);
    NoiseFloor {
        experiment: comparison.experiment.clone(),
        session: session.to_string(),
        measured: measured.to_string(),
        metric: comparison.metric.clone(),
        level: comparison.level,
        threshold: comparison.threshold,
        false_alarms: cells.iter().filter(alarm).count(),
        compared: cells
            .iter()
            .filter(|c| c.change.verdict != Change::TooFewRuns)
            .count(),
        cells,
    }
}

impl NoiseFloor {
    /// "0 false alarms in 3 cells compared with themselves".
    pub fn alarms_sentence(&self) -> String {
        format!(
            "{} false alarm{} in {} cell{} compared with {} (an A/A cell called faster or slower)",
            self.false_alarms,
            if self.false_alarms == 1 { "" } else { "s" },
            self.compared,
            if self.compared == 1 { "" } else { "s" },
            if self.compared == 1 {
                "itself"
            } else {
                "themselves"
            }
        )
    }

    /// "noise floor measured 2026-12-01: at 10 runs a side lab can detect a 1.2% change in
    /// cell work; at 40, 0.6%", for the cell of the largest planned MDE.
    pub fn quote(&self) -> Option<String> {
        let worst = self
            .cells
            .iter()
            .filter(|c| !c.mde.is_empty())
            .max_by(|x, y| x.mde[0].1.total_cmp(&y.mde[0].1))?;
        let (n, first) = worst.mde[0];
        let (m, last) = *worst.mde.last()?;
        let date = self.measured.get(..10).unwrap_or(&self.measured);
        Some(format!(
            "noise floor measured {date}: at {n} runs a side lab can detect a {} change in cell {}; at {m}, {}",
            percent(first),
            worst.change.cell,
            percent(last)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values by python3:
    //   from statistics import NormalDist; import math
    //   z = NormalDist().inv_cdf(0.975)                          # 1.959963984540054
    //   math.expm1(z * 0.01 * math.sqrt(math.pi / 12))           # 0.010078870...
    //   math.expm1(z * 0.01 * math.sqrt(math.pi / 30))           # 0.006362684...
    //   z99 = NormalDist().inv_cdf(1 - 0.01 / 2)                 # 2.5758293035489
    //   math.expm1(z99 * 0.05 * math.sqrt(math.pi / 10))         # 0.074856864...
    #[test]
    fn mde_is_the_normal_half_width_of_the_log_median_difference() {
        assert!(
            (mde(0.01, 12, 0.95) - 0.010_078_871).abs() < 1e-8,
            "{}",
            mde(0.01, 12, 0.95)
        );
        assert!(
            (mde(0.01, 30, 0.95) - 0.006_362_685).abs() < 1e-8,
            "{}",
            mde(0.01, 30, 0.95)
        );
        assert!(
            (mde(0.05, 10, 0.99) - 0.074_856_864).abs() < 1e-8,
            "{}",
            mde(0.05, 10, 0.99)
        );
    }

    #[test]
    fn mde_shrinks_as_one_over_root_n() {
        let (a, b) = (mde(0.001, 10, 0.95).ln_1p(), mde(0.001, 40, 0.95).ln_1p());
        assert!((a / b - 2.0).abs() < 1e-9);
        assert_eq!(mde(0.0, 10, 0.95), 0.0);
    }

    #[test]
    fn variance_is_the_sample_variance() {
        assert_eq!(variance(&[1.0]), None);
        assert_eq!(variance(&[1.0, 3.0]), Some(2.0));
    }
}
