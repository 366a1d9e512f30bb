//! A session across two revisions compared with itself: each cell of the head revision paired
//! with the base revision's, and the comparison of the pairs, at 95% or at a sampled
//! session's look level.

use super::{
    CellChange, Change, Comparison, MIN_COMPARE_RUNS, change, family_level, judged, short, summary,
    unjudged, weighed,
};
use crate::analysis::slowed::{self, End};
use crate::analysis::{Analysis, CellStats};
use lab_config::{Better, Experiment, Metric, ParamValue, REV_PARAM, Waiting};
use lab_stats as stats;
use lab_store::{Pairing, Revisions};
use std::collections::BTreeMap;

/// A session across revisions compared with itself: per cell, the head revision's runs
/// against the base revision's (the `rev` parameter's two values), everything else alike.
/// `overall` is the level all cells hold together at: 95%, or a sampled session's look level.
pub fn between_revisions(
    exp: &Experiment,
    analysis: &Analysis,
    revisions: &Revisions,
    metric: &Metric,
    overall: f64,
) -> Option<Comparison> {
    let [base, head] = revisions.revs.as_slice() else {
        return None;
    };
    let threshold = revisions.threshold;
    let compared = revision_pairs(exp, analysis, [&base.name, &head.name], metric);
    let level = compared.level(overall);
    let cells: Vec<CellChange> = compared.changes(metric.better, threshold, exp.seed, level);
    let regressed = cells.iter().any(|c| c.verdict == Change::Slower);
    let mut summary = summary(&cells, threshold, "revisions", level);
    summary.push_str(match compared.pairs_of.as_ref().map(|(p, _)| *p) {
        Some(Pairing::Duet) => {
            "; measured in duet: each ratio is taken over pairs of runs executed at the same time on disjoint CPUs (the median of the pairs' ratios with its sign-test interval)"
        }
        Some(Pairing::Blocks) => {
            "; each ratio is taken over pairs of runs, one of each revision from the same shuffled block (the median of the pairs' ratios with its sign-test interval)"
        }
        _ => "",
    });
    Some(Comparison {
        experiment: exp.name.clone(),
        a: format!("{} ({})", base.name, short(&base.commit)),
        b: format!("{} ({})", head.name, short(&head.commit)),
        metric: metric.name.clone(),
        unit: metric.unit.clone(),
        better: metric.better.word().into(),
        threshold,
        level,
        differences: Vec::new(),
        summary,
        cells,
        regressed,
        noise: None,
    })
}

/// The cells of a session across revisions paired: per cell of the head revision, the base
/// revision's cell with the same variant and other parameters.
pub struct RevisionPairs<'a> {
    /// (base, head, the cell's label without its revision).
    pub pairs: Vec<(&'a CellStats, &'a CellStats, String)>,
    /// How the two revisions' runs pair up, and each run's pair: in a duet the two runs
    /// that executed together, otherwise the repetition (one run of each revision per
    /// shuffled block). `None`: the runs are not paired (sessions recorded before pairing).
    pub pairs_of: Option<(Pairing, BTreeMap<&'a str, String>)>,
}

/// The cells of `metric` at revisions `[base, head]`, paired.
pub fn revision_pairs<'a>(
    exp: &Experiment,
    analysis: &'a Analysis,
    [base, head]: [&str; 2],
    metric: &Metric,
) -> RevisionPairs<'a> {
    let of = |cell: &CellStats, rev: &str| {
        cell.metric == metric.name
            && cell.cell.params.get(REV_PARAM) == Some(&ParamValue::Text(rev.to_string()))
    };
    let pairs = analysis
        .cells
        .iter()
        .filter(|c| of(c, head))
        .filter_map(|h| {
            let mut key = h.cell.clone();
            std::sync::Arc::make_mut(&mut key.params).remove(REV_PARAM);
            let b = analysis.cells.iter().find(|c| {
                of(c, base) && c.cell.variant == key.variant && {
                    let mut other = (*c.cell.params).clone();
                    other.remove(REV_PARAM);
                    other == *key.params
                }
            })?;
            Some((b, h, crate::analysis::cell_label(exp, &key)))
        })
        .collect();
    RevisionPairs {
        pairs,
        pairs_of: pair_names(analysis),
    }
}

/// Each run's pair, as the session's record says runs pair up: the two ids of a duet's runs
/// that executed together ("r0003+r0004"), or the repetition of the run in its cell.
fn pair_names(analysis: &Analysis) -> Option<(Pairing, BTreeMap<&str, String>)> {
    let pairing = analysis.manifest.revisions.as_ref()?.pairing;
    let name = |r: &'_ crate::validity::RunView| match (pairing, r.overlapped.as_slice()) {
        (Pairing::Duet, [partner]) => {
            let (a, b) = (r.id.as_str().min(partner), r.id.as_str().max(partner));
            Some(format!("{a}+{b}"))
        }
        (Pairing::Blocks, _) => Some(r.repetition.to_string()),
        _ => None,
    };
    (pairing != Pairing::Unpaired).then(|| {
        let names = analysis
            .runs
            .iter()
            .filter_map(|r| Some((r.id.as_str(), name(r)?)));
        (pairing, names.collect())
    })
}

impl RevisionPairs<'_> {
    /// The level of each cell's interval for all of them to hold together at `overall`.
    pub fn level(&self, overall: f64) -> f64 {
        let plain: Vec<(&CellStats, &CellStats)> =
            self.pairs.iter().map(|(b, h, _)| (*b, *h)).collect();
        family_level(&plain, overall)
    }

    /// Each pair's change from base to head, labelled without the revision.
    pub fn changes(
        &self,
        better: Better,
        threshold: f64,
        seed: u64,
        level: f64,
    ) -> Vec<CellChange> {
        self.pairs
            .iter()
            .map(|(b, h, label)| CellChange {
                cell: label.clone(),
                ..match &self.pairs_of {
                    Some((_, names)) => paired_change(b, h, names, better, threshold, level),
                    None => change(b, h, better, threshold, seed, level),
                }
            })
            .collect()
    }
}

/// One cell's change over pairs of runs: the head run of each pair over its base partner,
/// the ratio the median of those with its distribution-free interval at `level`
/// ([`stats::paired_ratio_ci`]), judged as [`change`] judges; too few pairs for the level
/// (fewer than 6 at 95%) leave it "too few runs". A pair counts when both its runs are
/// valid; where a pair's name has two valid base runs (a disturbed run and its re-run), the
/// first is taken.
fn paired_change(
    base: &CellStats,
    head: &CellStats,
    names: &BTreeMap<&str, String>,
    better: Better,
    threshold: f64,
    level: f64,
) -> CellChange {
    let pairs = pairs(base, head, names);
    let out = CellChange {
        pairs: Some(pairs.len()),
        ..unjudged(base, head)
    };
    if pairs.len() < MIN_COMPARE_RUNS {
        return out;
    }
    let waiting = head.waiting;
    let reshaped = head.reshaped + base.reshaped > 0;
    // Where every run that waited is one whose undisturbed time is known, the ratio is taken
    // over those times; otherwise over what was measured, weighed against the range below.
    let slowed: Vec<&Pair> = pairs.iter().filter(|p| p.slowed()).collect();
    let exact = !reshaped && !slowed.is_empty() && slowed.iter().all(|p| p.exact);
    let ends = exact.then_some((End::Low, End::Low));
    let Some(est) = stats::paired_ratio_ci(&Pair::at(&pairs, ends, waiting), level) else {
        return out;
    };
    let envelope = (!exact && (!slowed.is_empty() || reshaped)).then(|| {
        if reshaped {
            // Parallel runs the machine disturbed: no range holds (see `checks::disturbance`).
            return (0.0, f64::INFINITY);
        }
        let ends = |ends| stats::paired_ratio_ci(&Pair::at(&pairs, Some(ends), waiting), level);
        let (low, high) = ((End::Low, End::High), (End::High, End::Low));
        let lo = ends(low).map_or(0.0, |e| e.interval.lo.min(est.interval.lo));
        let hi = ends(high).map_or(f64::INFINITY, |e| e.interval.hi.max(est.interval.hi));
        (lo, hi)
    });
    let most = pairs
        .iter()
        .map(|p| p.head_share.max(p.base_share))
        .fold(0.0, f64::max);
    let change = judged(out, &est, better, threshold);
    weighed(change, envelope, better, threshold, most)
}

/// The pairs of runs of `head` and `base` that `names` pairs, in `head`'s run order; a base
/// run is paired once, the first of its name.
fn pairs(base: &CellStats, head: &CellStats, names: &BTreeMap<&str, String>) -> Vec<Pair> {
    let mut at: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, id) in base.run_ids.iter().enumerate() {
        if let Some(name) = names.get(id.as_str()) {
            at.entry(name.as_str()).or_insert(i);
        }
    }
    let mut used = vec![false; base.run_ids.len()];
    let mut pairs: Vec<Pair> = Vec::new();
    let share = |cell: &CellStats, i: usize| cell.slowed.get(i).copied().unwrap_or(0.0);
    let exact = |cell: &CellStats, i: usize| cell.exact.get(i).copied().unwrap_or(false);
    for (i, (id, values)) in head.run_ids.iter().zip(&head.runs).enumerate() {
        let Some(&j) = names.get(id.as_str()).and_then(|n| at.get(n.as_str())) else {
            continue;
        };
        if !std::mem::replace(&mut used[j], true) {
            pairs.push(Pair {
                head: stats::median(values),
                base: stats::median(&base.runs[j]),
                head_share: share(head, i),
                base_share: share(base, j),
                exact: exact(head, i) && exact(base, j),
            });
        }
    }
    pairs
}

/// One pair of runs: the head revision's value and its base partner's, with the share of its
/// wall time each waited for a CPU others had.
struct Pair {
    head: f64,
    base: f64,
    head_share: f64,
    base_share: f64,
    /// Whether both runs' undisturbed values are known (see `analysis::slowed`).
    exact: bool,
}

impl Pair {
    fn slowed(&self) -> bool {
        self.head_share > 0.0 || self.base_share > 0.0
    }

    /// The pairs as (head, base) values, as measured or each at `ends` (head's, base's) of
    /// the range its waiting leaves it in.
    fn at(pairs: &[Pair], ends: Option<(End, End)>, waiting: Waiting) -> Vec<(f64, f64)> {
        pairs
            .iter()
            .map(|p| match ends {
                None => (p.head, p.base),
                Some((head, base)) => (
                    slowed::at(p.head, p.head_share, waiting, head, p.exact),
                    slowed::at(p.base, p.base_share, waiting, base, p.exact),
                ),
            })
            .collect()
    }
}
