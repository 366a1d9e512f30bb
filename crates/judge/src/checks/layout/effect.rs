//! One comparison of the layout check: some of a cell's runs against the others, as the ratio
//! of their medians with its percentile bootstrap interval (Efron & Tibshirani 1993, ch. 13;
//! the resampling every ratio in lab uses), set against the band `1 ± layout_tolerance`.

use super::super::rule::Rule;
use crate::analysis::{CellStats, Resampling, stream_label};
use lab_findings::checks::Verdict;
use lab_stats::{self as stats, Interval, Statistic};

/// What set the runs of a comparison apart from the rest of their cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Split {
    /// Runs padded with at least half the range against those padded with less.
    Padding,
    /// Runs whose heap was shifted this many bytes along a cache line against the others.
    HeapPosition(u32),
}

/// One cell's comparison and its verdict.
#[derive(Debug, Clone)]
pub(super) struct CellEffect {
    pub(super) label: String,
    pub(super) split: Split,
    pub(super) ratio: f64,
    pub(super) interval: Interval,
    pub(super) verdict: Verdict,
    /// The p-value of the test that the heap positions differ, for a heap position's runs.
    pub(super) p_value: Option<f64>,
    /// The cell's runs that took part, by id.
    pub(super) runs: Vec<String>,
}

/// The runs on each side of a comparison: their values, and the ids of all of them.
pub(super) struct Sides<'a> {
    pub(super) these: Vec<&'a Vec<f64>>,
    pub(super) others: Vec<&'a Vec<f64>>,
    pub(super) runs: Vec<String>,
}

/// The ratio of the median of `sides.these` to that of `sides.others` in `cell`, its interval
/// at `level` from the stream `purpose` names, decided by `rule`; why it cannot be had when a
/// median is zero or negative.
pub(super) fn compare(
    cell: &CellStats,
    split: Split,
    sides: Sides<'_>,
    (r, level, purpose): (Resampling, f64, &str),
    rule: Rule,
) -> Result<CellEffect, String> {
    let owned =
        |side: &[&Vec<f64>]| -> Vec<Vec<f64>> { side.iter().map(|v| (*v).clone()).collect() };
    let mut rng = r.stream(&stream_label(&cell.cell, &cell.metric, purpose));
    let estimate = stats::ratio_ci(
        &owned(&sides.these),
        &owned(&sides.others),
        Statistic::Median,
        r.resamples,
        level,
        &mut rng,
    )
    .ok_or_else(|| {
        format!(
            "{}: the ratio is undefined (a median is zero or negative)",
            cell.label
        )
    })?;
    Ok(CellEffect {
        label: cell.label.clone(),
        split,
        ratio: estimate.ratio,
        verdict: rule.decide(&estimate.interval),
        interval: estimate.interval,
        p_value: None,
        runs: sides.runs,
    })
}
