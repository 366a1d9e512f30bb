//! What the statistics return, as plain records: a sample's summary, its percentiles, an
//! exact interval of the median, the design effect of runs, the dip test, the Mann–Kendall
//! trend test, a run's steady state and the machine effect. `lab-stats` computes them (its
//! modules cite the methods); the judgement keeps them in its results and the book prints them,
//! which needs the records and none of the computing.

use crate::estimate::{Estimate, Interval};
use serde::{Deserialize, Serialize};

/// Descriptive summary of one sample. Quantiles are Hyndman–Fan type 7.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (divisor n−1); NaN when n = 1.
    pub sd: f64,
    /// Coefficient of variation sd/|mean|; NaN when n = 1, infinite when mean = 0.
    pub cv: f64,
    pub min: f64,
    pub max: f64,
    pub median: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
}

/// One percentile: type-7 estimate and, when n is large enough, a bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PercentileEstimate {
    pub p: f64,
    pub value: f64,
    /// Percentile bootstrap CI; `None` when n < 1/(1−p) (e.g. p99 needs n ≥ 100,
    /// p99.9 needs n ≥ 1000): the resample quantile would just be the sample maximum.
    pub ci: Option<Interval>,
}

/// Latency percentiles of all recorded values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Percentiles {
    pub n: usize,
    pub p50: PercentileEstimate,
    pub p90: PercentileEstimate,
    pub p99: PercentileEstimate,
    pub p999: PercentileEstimate,
    pub max: f64,
}

impl PercentileEstimate {
    /// The percentile with its interval, where n was large enough for one.
    pub fn estimate(&self) -> Option<Estimate> {
        self.ci.map(|ci| Estimate::new(self.value, ci))
    }
}

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

/// Intraclass correlation of runs and the resulting design effect.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DesignEffect {
    /// ICC(1) from one-way ANOVA; may be negative (sampling noise).
    pub icc: f64,
    /// Kish design effect 1 + (m̄−1)·max(ICC, 0), never below 1.
    pub effect: f64,
    /// sqrt(effect): factor by which a naive pooled-iterations CI is too narrow.
    pub naive_ci_understatement: f64,
}

/// One group of values after a split at a detected second mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mode {
    pub median: f64,
    /// Fraction of all values in this group.
    pub share: f64,
}

/// Result of the dip test for a second mode (`lab_stats::dip_test`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DipTest {
    pub dip: f64,
    pub critical: f64,
    pub n: usize,
    /// dip > critical: evidence of more than one mode at level α. `false` means only that
    /// no second mode was detected.
    pub second_mode_detected: bool,
    /// Two groups (optimal two-means split) when a second mode is detected, otherwise one
    /// group holding all values.
    pub modes: Vec<Mode>,
}

/// Result of the Mann–Kendall test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MannKendall {
    /// S = Σ_{i<j} sign(y_j − y_i).
    pub s: f64,
    /// Var(S) under H0 with the tie correction.
    pub var_s: f64,
    /// Continuity-corrected normal score.
    pub z: f64,
    /// Two-sided p-value from the normal approximation.
    pub p_value: f64,
    /// Kendall's tau-a against time: S / (n(n−1)/2).
    pub tau: f64,
}

/// Run classification of Barrett, Bolz-Tereick, Killick, Mount & Tratt, "Virtual Machine
/// Warmup Blows Hot and Cold", OOPSLA 2017, §4.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SteadyState {
    /// One segment, or every segment equivalent to the last.
    Flat,
    /// The last segment is faster than or equivalent to every earlier one.
    Warmup,
    /// Some earlier segment is faster than the last one.
    Slowdown,
    /// The last changepoint falls in the final quarter of the series.
    NoSteadyState,
}

/// The machine effect of one cell, from its runs' medians grouped by machine.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MachineEffect {
    /// Machines with at least one run.
    pub machines: usize,
    /// Runs over all machines.
    pub runs: usize,
    /// ICC(1) of the run medians by machine; negative when machines differ less than their
    /// runs' spread would make them by chance.
    pub icc: f64,
    /// The share of the run medians' variance between machines: ICC(1), never below 0.
    pub between_share: f64,
    /// Kruskal–Wallis H of the run medians by machine (tie-corrected).
    pub h: f64,
    /// Permutation p-value of H.
    pub p_value: f64,
    pub permutations: usize,
    /// The smallest p-value any split of these runs among the machines could give: when it
    /// exceeds the test's level, no difference however large could be detected.
    pub smallest_p: f64,
}
