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

mod differences;
mod noise;
mod revisions;
pub use differences::{commit, differences, short};
pub use lab_findings::compare::{CellChange, Change, Comparison, Difference, MIN_COMPARE_RUNS};
pub use noise::{NoiseCell, NoiseFloor, mde, noise_floor};
pub use revisions::{RevisionPairs, between_revisions, revision_pairs};

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
    let change = judged(out, &est, better, threshold);
    weighed(change, envelope, better, threshold, most)
}

/// `change` weighed against `envelope`, the interval the undisturbed ratio's lies within:
/// withheld (inconclusive, machine busy) when the envelope does not reach its verdict too.
fn weighed(
    mut change: CellChange,
    envelope: Option<(f64, f64)>,
    better: Better,
    threshold: f64,
    most: f64,
) -> CellChange {
    let Some((lo, hi)) = envelope else {
        return change;
    };
    if change.verdict.decided() && judge(lo, hi, better, threshold) != change.verdict {
        change.verdict = Change::Inconclusive;
        change.busy = Some(most);
    }
    change
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
