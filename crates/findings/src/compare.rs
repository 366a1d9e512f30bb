//! Two sessions compared, as the comparison found them: per cell present in both, the ratio
//! B/A of a metric's medians with its interval and a verdict against a noise threshold, and
//! where the two records differ.

use lab_config::format::percent;
use serde::{Deserialize, Serialize};

/// Fewest valid runs on each side for a cell's change to be judged: below 5 the percentile
/// bootstrap of a ratio of medians is far too narrow (identical cells of 3 runs differ at 95%
/// in 11 to 14% of pairs; see `lab_stats`'s `coverage`).
pub const MIN_COMPARE_RUNS: usize = 5;

/// Two sessions compared, as printed and as `--json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    pub experiment: String,
    pub a: String,
    pub b: String,
    pub metric: String,
    pub unit: String,
    pub better: String,
    pub threshold: f64,
    pub level: f64,
    /// Where the two records differ; `invalidates` marks what can make the ratio meaningless.
    pub differences: Vec<Difference>,
    pub cells: Vec<CellChange>,
    pub summary: String,
    /// Some cell got slower beyond the threshold.
    pub regressed: bool,
    /// The latest noise measurement of the experiment (`lab noise`), quoted: "noise floor
    /// measured 2026-12-01: at 10 runs a side lab can detect a 1.3% change in cell work; …".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<String>,
}

/// One cell in both sessions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellChange {
    pub cell: String,
    pub a_median: Option<f64>,
    pub b_median: Option<f64>,
    pub a_runs: usize,
    pub b_runs: usize,
    /// B/A of the medians with its interval; `None` with too few runs.
    pub ratio: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// Half the interval's width as a share of the ratio: the smallest change this cell's
    /// interval could tell from none. `None` with too few runs.
    #[serde(default)]
    pub half_width: Option<f64>,
    /// The pairs of runs (of one block, or executed together in a duet) the ratio was taken
    /// over; `None` where each side's runs were resampled on their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
    pub verdict: Change,
    /// Where the verdict was withheld because the runs' waiting for a CPU others had could
    /// explain it: the largest share of its wall time a run of the two cells waited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<f64>,
}

impl CellChange {
    /// The edges of the ±`threshold` band an inconclusive interval reaches across: "+2.0%",
    /// "−2.0%", or both.
    pub fn straddles(&self, threshold: f64) -> Option<String> {
        let (lo, hi) = (self.lo?, self.hi?);
        let (up, down) = (1.0 + threshold, 1.0 / (1.0 + threshold));
        let band = percent(threshold);
        match (lo < down && hi >= down, lo <= up && hi > up) {
            (true, true) => Some(format!("−{band} and +{band}")),
            (true, false) => Some(format!("−{band}")),
            (false, true) => Some(format!("+{band}")),
            (false, false) => None,
        }
    }

    /// The verdict as the comparison's tables show it: "slower", or "inconclusive: straddles
    /// +2.0%".
    pub fn verdict_text(&self, threshold: f64) -> String {
        if let Some(share) = self.busy {
            return busy_words(share);
        }
        match (self.verdict, self.straddles(threshold)) {
            (Change::Inconclusive, Some(edge)) => format!("inconclusive: straddles {edge}"),
            (verdict, _) => verdict.words().to_string(),
        }
    }

    /// The cell, its verdict and its interval on one line: "work: inconclusive: 1.019
    /// [1.008, 1.031] straddles +2.0%", or "work: too few runs (A 3 runs, B 4)".
    pub fn line(&self, threshold: f64) -> String {
        let (Some(r), Some(lo), Some(hi)) = (self.ratio, self.lo, self.hi) else {
            if let Some(pairs) = self.pairs {
                return format!(
                    "{}: {} ({pairs} pairs of runs, too few for an interval at this level)",
                    self.cell,
                    self.verdict.words()
                );
            }
            return format!(
                "{}: {} (A {} runs, B {}; {MIN_COMPARE_RUNS} needed)",
                self.cell,
                self.verdict.words(),
                self.a_runs,
                self.b_runs
            );
        };
        let interval = lab_config::format::ratio_interval_fine(r, lo, hi);
        if let Some(share) = self.busy {
            return format!(
                "{}: {}: {interval} as measured",
                self.cell,
                busy_words(share)
            );
        }
        match self.straddles(threshold) {
            Some(edge) if self.verdict == Change::Inconclusive => {
                format!("{}: inconclusive: {interval} straddles {edge}", self.cell)
            }
            _ => format!("{}: {}: {interval}", self.cell, self.verdict.words()),
        }
    }

    /// "±1.8%": the half-width as the tables show it, or "n/a".
    pub fn resolution(&self) -> String {
        self.half_width
            .map_or_else(|| "n/a".into(), |h| format!("±{}", percent(h)))
    }
}

/// A cell's verdict: its interval of B/A against the noise band [1 / (1 + t), 1 + t].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// The whole interval lies beyond the band on the better side.
    Faster,
    /// The whole interval lies beyond the band on the worse side.
    Slower,
    /// The whole interval lies inside the band: any change is smaller than the threshold.
    Same,
    /// The interval reaches across an edge of the band: more runs could decide it. Comparisons
    /// stored before the four-way verdict said `no_detectable_change` for this and for `Same`;
    /// read back, they mean the weaker of the two.
    #[serde(alias = "no_detectable_change")]
    Inconclusive,
    TooFewRuns,
}

impl Change {
    pub fn words(self) -> &'static str {
        match self {
            Change::Faster => "faster",
            Change::Slower => "slower",
            Change::Same => "same",
            Change::Inconclusive => "inconclusive",
            Change::TooFewRuns => "too few runs",
        }
    }

    /// Faster, slower or the same: more runs are not needed to tell.
    pub fn decided(self) -> bool {
        matches!(self, Change::Faster | Change::Slower | Change::Same)
    }
}

/// "inconclusive: machine busy (runs waited up to 31.0% of their wall time for a CPU)".
fn busy_words(share: f64) -> String {
    format!(
        "inconclusive: machine busy (runs waited up to {} of their wall time for a CPU others had)",
        percent(share)
    )
}

/// One fact the two records state differently.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Difference {
    pub what: String,
    pub a: String,
    pub b: String,
    pub invalidates: bool,
}

impl Difference {
    /// "kernel: 6.1.0 → 6.2.0", each side on one line.
    pub fn line(&self) -> String {
        format!(
            "{}: {} → {}",
            self.what,
            lab_config::format::one_line(&self.a),
            lab_config::format::one_line(&self.b)
        )
    }
}
