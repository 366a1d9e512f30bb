//! The statistics of one metric in one cell, and the bootstrap settings they were drawn with.

use super::machines::MachineLevel;
use super::shape::{Drift, SteadyStates};
use lab_basis::{
    DesignEffect, DipTest, Generator, Interval, MedianCi, Percentiles, Stream, Summary,
};
use lab_config::plan::CellKey;
use serde::Serialize;

/// Bootstrap settings, recorded in the analysis.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Resampling {
    pub seed: u64,
    pub resamples: usize,
    pub level: f64,
    /// The generator of the session's analysis; analysis.json names it from analysis 2 on.
    #[serde(skip_serializing_if = "Generator::is_first")]
    pub generator: Generator,
}

impl Resampling {
    /// The stream of one purpose (`label`) of this analysis.
    pub fn stream(&self, label: &str) -> Stream {
        lab_basis::stream_of(self.generator, self.seed, label)
    }
}

/// The statistics of one metric in one cell.
#[derive(Debug, Clone, Serialize)]
pub struct CellStats {
    pub cell: CellKey,
    /// The cell's name on the page (variant and multi-valued parameters).
    pub label: String,
    pub metric: String,
    /// Valid measured runs used.
    pub n: usize,
    pub warmup_runs: usize,
    pub invalid_runs: usize,
    /// Of the invalid runs, those whose timings were discarded because the machine was busy.
    #[serde(skip_serializing_if = "is_zero")]
    pub busy_runs: usize,
    /// Values per run (after warm-up iterations), in execution order.
    #[serde(skip)]
    pub runs: Vec<Vec<f64>>,
    /// Per run, parallel to `runs`, the share of its wall time the machine may have slowed
    /// it by (see [`crate::runs::RunView::slowed`]), and how that moves this metric; empty
    /// when no run of the cell was slowed or the metric is one waiting does not move.
    #[serde(skip)]
    pub slowed: Vec<f64>,
    #[serde(skip)]
    pub waiting: lab_config::Waiting,
    /// Parallel to `slowed`: whether the run's undisturbed value is known exactly, its wall
    /// time less what its one working task waited (see the judgement's `analysis::slowed`).
    #[serde(skip)]
    pub exact: Vec<bool>,
    /// Which runs (indices into `runs`) the machine disturbed beyond `max_busy`: drawn apart.
    #[serde(skip)]
    pub disturbed: Vec<usize>,
    /// How many of them were parallel runs ([`crate::runs::RunView::reshaped`]): their values
    /// are not bounded by what they waited, and verdicts on the cell are withheld.
    #[serde(skip)]
    pub reshaped: usize,
    /// The ids of the runs used, parallel to `runs`: held inline, as run ids are short.
    pub run_ids: Vec<compact_str::CompactString>,
    pub positions: Vec<usize>,
    pub summary: Option<Summary>,
    /// Percentile bootstrap CI of the median; two-stage when runs print several values,
    /// three-stage (machines first) when the runs came from several machines. None below
    /// [`super::MIN_RUNS`] valid runs.
    pub median_ci: Option<Interval>,
    /// Distribution-free order-statistic CI of the median (None when n is too small).
    pub exact_median_ci: Option<MedianCi>,
    /// BCa CI of the mean of run means.
    pub mean_ci: Option<Interval>,
    /// Between-run share of variance, when runs print several values.
    pub design_effect: Option<DesignEffect>,
    /// Hartigan's dip test over run means (n ≥ 4).
    pub modes: Option<DipTest>,
    /// Trend of run means against execution position (n ≥ 3).
    pub drift: Option<Drift>,
    /// Steady-state classification of runs that print many iterations.
    pub steady: Option<SteadyStates>,
    /// Tail percentiles with intervals, when there are at least 100 values.
    pub percentiles: Option<Percentiles>,
    /// The machines, where the valid runs came from two or more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machines: Option<MachineLevel>,
    /// The standard error, in seconds, of the start-up taken out of every value (lab.toml's
    /// `start_up` command); 0 where none was. Its intervals are widened by it.
    #[serde(skip_serializing_if = "is_no_error")]
    pub start_up_se: f64,
}

impl CellStats {
    /// "fair threads=2 has 3 valid runs; 5 are needed", with the runs a busy machine took.
    pub fn too_few_runs(&self, needed: usize) -> String {
        let busy = match self.busy_runs {
            0 => String::new(),
            1 => " (the timing of 1 more was discarded: the machine was busy)".to_string(),
            n => format!(" (the timings of {n} more were discarded: the machine was busy)"),
        };
        format!(
            "{} has {} valid runs; {needed} are needed{busy}",
            self.label, self.n
        )
    }

    /// Every value, pooled over runs.
    pub fn pooled(&self) -> Vec<f64> {
        self.runs.iter().flatten().copied().collect()
    }

    pub fn median(&self) -> Option<f64> {
        self.summary.as_ref().map(|s| s.median)
    }
}

fn is_no_error(se: &f64) -> bool {
    *se == 0.0
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
