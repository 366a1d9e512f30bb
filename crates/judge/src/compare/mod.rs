//! Before and after: two analyses of one experiment set side by side. Per cell present in
//! both, the ratio B/A of a metric's medians with its bootstrap interval and a verdict against
//! a noise threshold (faster, slower, the same, or inconclusive), and where the two records
//! differ (machine, kernel, lab.toml, tools, commit). `lab compare` reads two stored sessions;
//! an interleaved session across revisions compares its own `rev` cells; the chapter and the
//! history page show the same figures.

use crate::analysis::{Analysis, CellStats};
use lab_config::format::percent;
use lab_config::{Better, Experiment, Metric};
use lab_stats as stats;
use lab_store::Manifest;
use serde::{Deserialize, Serialize};

mod differences;
mod noise;
mod revisions;
pub use differences::{Difference, commit, differences, short};
pub use noise::{NoiseCell, NoiseFloor, mde, noise_floor};
pub use revisions::{RevisionPairs, between_revisions, revision_pairs};

/// Fewest valid runs on each side for a cell's change to be judged: below 5 the percentile
/// bootstrap of a ratio of medians is far too narrow (identical cells of 3 runs differ at 95%
/// in 11 to 14% of pairs; see `stats::coverage`).
pub const MIN_COMPARE_RUNS: usize = 5;

/// Changes within ±2% count as noise unless the user says otherwise.
pub const DEFAULT_THRESHOLD: f64 = 0.02;

/// One side of a comparison: a session's name, the experiment it ran with, its analysis and
/// its manifest.
pub struct Side<'a> {
    pub name: &'a str,
    pub experiment: &'a Experiment,
    pub analysis: &'a Analysis,
    pub manifest: &'a Manifest,
}

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

/// The verdict of an interval [lo, hi] of B/A against the band of changes within ±`threshold`
/// (on the ratio scale, [1 / (1 + threshold), 1 + threshold], so that a change and its
/// reverse count alike): beyond it on one side, inside it, or across one of its edges. An
/// interval must clear the band to call a change and fit in it to call none: the interval
/// inclusion rule of equivalence testing (Schuirmann 1987, "A comparison of the two one-sided
/// tests procedure…", J. Pharmacokinet. Biopharm. 15:657), here with the (1 − α) interval
/// rather than the (1 − 2α) one, which is the conservative side.
pub fn judge(lo: f64, hi: f64, better: Better, threshold: f64) -> Change {
    let (up, down) = (1.0 + threshold, 1.0 / (1.0 + threshold));
    let higher = lo > up;
    let lower = hi < down;
    match (higher, lower, better) {
        (true, _, Better::Higher) | (_, true, Better::Lower) => Change::Faster,
        (true, _, Better::Lower) | (_, true, Better::Higher) => Change::Slower,
        _ if lo >= down && hi <= up => Change::Same,
        _ => Change::Inconclusive,
    }
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

    /// The verdict weighed against `envelope`, the interval the undisturbed ratio's lies
    /// within: withheld (inconclusive, machine busy) when the envelope does not reach it too.
    fn weighed(
        mut self,
        envelope: Option<(f64, f64)>,
        better: Better,
        threshold: f64,
        most: f64,
    ) -> Self {
        let Some((lo, hi)) = envelope else {
            return self;
        };
        let decided = matches!(self.verdict, Change::Faster | Change::Slower | Change::Same);
        if decided && judge(lo, hi, better, threshold) != self.verdict {
            self.verdict = Change::Inconclusive;
            self.busy = Some(most);
        }
        self
    }

    /// "±1.8%": the half-width as the tables show it, or "n/a".
    pub fn resolution(&self) -> String {
        self.half_width
            .map_or_else(|| "n/a".into(), |h| format!("±{}", percent(h)))
    }
}

/// "inconclusive: machine busy (runs waited up to 31.0% of their wall time for a CPU)".
fn busy_words(share: f64) -> String {
    format!(
        "inconclusive: machine busy (runs waited up to {} of their wall time for a CPU others had)",
        percent(share)
    )
}

/// The numeric metric named `name`, or the experiment's primary one; else what to tell the
/// user.
pub fn chosen_metric<'a>(exp: &'a Experiment, name: Option<&str>) -> Result<&'a Metric, String> {
    match name {
        Some(name) => exp.metric(name).filter(|m| !m.text).ok_or_else(|| {
            format!(
                "{} has no numeric metric named \"{name}\"\n  hint: metrics: {}",
                exp.name,
                exp.analysed_metrics()
                    .iter()
                    .map(|m| m.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }),
        None => exp
            .primary_metric()
            .ok_or_else(|| format!("{} has no numeric metric to compare", exp.name)),
    }
}

/// Session B against session A in `metric`, changes within ±`threshold` counting as noise.
pub fn comparison(a: &Side, b: &Side, metric: &Metric, threshold: f64) -> Comparison {
    let exp = b.experiment;
    let seed = a.experiment.seed;
    let pairs: Vec<(&CellStats, &CellStats)> = b
        .analysis
        .cells
        .iter()
        .filter(|cb| cb.metric == metric.name)
        .filter_map(|cb| {
            let ca = a
                .analysis
                .cells
                .iter()
                .find(|c| c.metric == metric.name && c.cell == cb.cell)?;
            Some((ca, cb))
        })
        .collect();
    let level = family_level(&pairs, crate::analysis::LEVEL);
    let cells: Vec<CellChange> = pairs
        .iter()
        .map(|(ca, cb)| change(ca, cb, metric.better, threshold, seed, level))
        .collect();
    let regressed = cells.iter().any(|c| c.verdict == Change::Slower);
    Comparison {
        experiment: exp.name.clone(),
        a: a.name.to_string(),
        b: b.name.to_string(),
        metric: metric.name.clone(),
        unit: metric.unit.clone(),
        better: metric.better.word().into(),
        threshold,
        level,
        differences: differences(a.manifest, b.manifest),
        summary: summary(&cells, threshold, "sessions", level),
        cells,
        regressed,
        noise: None,
    }
}

/// The level of each cell's interval such that all of them hold together at `overall` (95%,
/// or the level of a sampled session's look): the Bonferroni correction over the m cells that
/// have enough runs to compare, 1 − (1 − overall)/m (Dunn, "Multiple comparisons among
/// means", JASA 56:52, 1961). A comparison of 24 cells at 95% each would report about one
/// false change per run; a gate that fails a build must not.
pub fn family_level(pairs: &[(&CellStats, &CellStats)], overall: f64) -> f64 {
    let m = pairs
        .iter()
        .filter(|(a, b)| a.n >= MIN_COMPARE_RUNS && b.n >= MIN_COMPARE_RUNS)
        .count()
        .max(1);
    1.0 - (1.0 - overall) / m as f64
}

/// One cell's change from A to B: the ratio of medians resampled on the log scale (both
/// sessions' runs drawn independently, as for a `compare` check, machines first where a
/// session's runs of the cell came from several) with an interval at `level`,
/// judged by [`judge`] against the band of changes too small to count.
pub fn change(
    a: &CellStats,
    b: &CellStats,
    better: Better,
    threshold: f64,
    seed: u64,
    level: f64,
) -> CellChange {
    let out = unjudged(a, b);
    if a.n < MIN_COMPARE_RUNS || b.n < MIN_COMPARE_RUNS {
        return out;
    }
    let label = format!("compare-sessions/{}", b.label);
    let ratio = |b: &CellStats, a: &CellStats| {
        let mut rng = stats::stream(seed, &label);
        crate::analysis::median_ratio(b, a, crate::analysis::RESAMPLES, level, &mut rng)
    };
    use crate::analysis::slowed::{End, all_exact, cell_at};
    // Where every run that waited is one whose undisturbed time is known, the ratio is taken
    // over those times; otherwise over what was measured, weighed against the range below.
    let exact = all_exact(&[a, b]);
    let est = if exact {
        ratio(&cell_at(b, End::Low), &cell_at(a, End::Low))
    } else {
        ratio(b, a)
    };
    let Some(est) = est else {
        return out;
    };
    let reshaped = a.reshaped + b.reshaped > 0;
    let slowed = !a.slowed.is_empty() || !b.slowed.is_empty();
    let envelope = (!exact && (slowed || reshaped)).then(|| {
        if reshaped {
            // Parallel runs the machine disturbed: no range holds (see `checks::disturbance`).
            return (0.0, f64::INFINITY);
        }
        let low = ratio(&cell_at(b, End::Low), &cell_at(a, End::High));
        let high = ratio(&cell_at(b, End::High), &cell_at(a, End::Low));
        let lo = low.map_or(0.0, |e| e.interval.lo.min(est.interval.lo));
        let hi = high.map_or(f64::INFINITY, |e| e.interval.hi.max(est.interval.hi));
        (lo, hi)
    });
    let most = crate::analysis::slowed::most(a).max(crate::analysis::slowed::most(b));
    judged(out, &est, better, threshold).weighed(envelope, better, threshold, most)
}

/// A cell's change with its ratio and interval `est`, judged against ±`threshold`.
fn judged(
    mut out: CellChange,
    est: &stats::RatioEstimate,
    better: Better,
    threshold: f64,
) -> CellChange {
    let (lo, hi) = (est.interval.lo, est.interval.hi);
    out.verdict = judge(lo, hi, better, threshold);
    out.ratio = Some(est.ratio);
    out.lo = Some(lo);
    out.hi = Some(hi);
    out.half_width = Some(stats::relative_half_width(lo, hi, est.ratio));
    out
}

/// A cell in both before its change is judged: its medians and runs, no ratio yet.
fn unjudged(a: &CellStats, b: &CellStats) -> CellChange {
    CellChange {
        cell: b.label.clone(),
        a_median: a.median(),
        b_median: b.median(),
        a_runs: a.n,
        b_runs: b.n,
        ratio: None,
        lo: None,
        hi: None,
        half_width: None,
        pairs: None,
        verdict: Change::TooFewRuns,
        busy: None,
    }
}

/// "24 cells in both sessions: 1 slower, 0 faster, 20 same, 3 inconclusive within ±2.0%".
fn summary(cells: &[CellChange], threshold: f64, sides: &str, level: f64) -> String {
    let count = |c: Change| cells.iter().filter(|x| x.verdict == c).count();
    let mut parts = vec![format!(
        "{} slower, {} faster, {} same, {} inconclusive within ±{}",
        count(Change::Slower),
        count(Change::Faster),
        count(Change::Same),
        count(Change::Inconclusive),
        percent(threshold)
    )];
    if count(Change::TooFewRuns) > 0 {
        parts.push(format!(
            "{} with too few runs to tell",
            count(Change::TooFewRuns)
        ));
    }
    let compared = cells
        .iter()
        .filter(|c| c.verdict != Change::TooFewRuns)
        .count();
    let family = if compared > 1 {
        format!(
            " (each interval at {}, so that all {compared} hold together at {})",
            lab_config::format::level(level),
            lab_config::format::level(crate::analysis::LEVEL)
        )
    } else {
        String::new()
    };
    format!(
        "{} cells in both {sides}: {}{family}",
        cells.len(),
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests;
