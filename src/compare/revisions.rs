//! A session across two revisions compared with itself: each cell of the head revision paired
//! with the base revision's, and the comparison of the pairs, at 95% or at a sampled
//! session's look level.

use super::{CellChange, Change, Comparison, change, family_level, short, summary};
use crate::analysis::{Analysis, CellStats};
use crate::config::{Better, Experiment, Metric, ParamValue, REV_PARAM};
use crate::store::Revisions;

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
        summary: summary(&cells, threshold, "revisions", level),
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
    RevisionPairs { pairs }
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
                ..change(b, h, better, threshold, seed, level)
            })
            .collect()
    }
}
