//! What an experiment's notes quote, worked out before they are rendered: the cells of the
//! built-in metrics they name (the analysis leaves those out) and the ratios between cells they
//! ask for, so that rendering only looks values up and formats them. A selector such as
//! `"nonfair threads=2"` names one cell ([`find_cell`]).

use crate::analysis::{Analysis, CellStats, cell_stats_of};
use crate::checks::{CheckResult, ratio_of};
use lab_config::{Experiment, Metric};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

pub use lab_findings::notes::{
    Quoted, RatioKey, RatioValue, RatioWanted, Wanted, find_cell, find_run, metric_name,
};

/// Works out what the notes quote: the built-in metrics' cells, then every ratio whose cells
/// the session has. A reference that names nothing is left for rendering to report where it
/// is written.
pub fn quote(
    exp: &Experiment,
    analysis: &Analysis,
    checks: &[CheckResult],
    wanted: &Wanted,
) -> Quoted {
    let quoted = Quoted::new(builtin_cells(exp, analysis, &wanted.strings));
    let cells = quoted.cells(analysis);
    let pairs: BTreeMap<RatioKey, (&CellStats, &CellStats, String)> = wanted
        .ratios
        .iter()
        .filter_map(|r| {
            let metric = metric_name(exp, r.metric.as_deref()).ok()?;
            let a = find_cell(exp, &cells, &r.a, &metric).ok()?;
            let b = find_cell(exp, &cells, &r.b, &metric).ok()?;
            let key = (metric.clone(), a.cell.clone(), b.cell.clone());
            Some((key, (a, b, metric)))
        })
        .collect();
    // One seeded stream per ratio, named by its cells: the same interval in any order.
    let ratios: BTreeMap<RatioKey, Result<RatioValue, String>> = pairs
        .into_par_iter()
        .map(|(key, (a, b, metric))| {
            let value = decided_ratio(exp, checks, a, b, &metric).map_or_else(
                || {
                    let label = format!("notes/{metric}/{}/{}", a.cell, b.cell);
                    ratio_of(a, b, analysis.resampling, &label).map(|(ratio, ci)| RatioValue {
                        ratio,
                        lo: ci.lo,
                        hi: ci.hi,
                    })
                },
                Ok,
            );
            (key, value)
        })
        .collect();
    quoted.with_ratios(ratios)
}

/// Statistics of the built-in metrics the notes quote but the analysis did not compute.
fn builtin_cells(
    exp: &Experiment,
    analysis: &Analysis,
    strings: &BTreeSet<String>,
) -> Vec<CellStats> {
    let missing: Vec<&Metric> = exp
        .metrics
        .iter()
        .filter(|m| m.is_builtin() && strings.contains(&m.name))
        .filter(|m| !analysis.cells.iter().any(|c| c.metric == m.name))
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    cell_stats_of(
        exp,
        &missing,
        &analysis.cell_keys,
        &analysis.runs,
        analysis.resampling,
    )
}

/// The ratio a check decided on for the same two cells and metric, so that the prose and the
/// checks table show one interval, not two draws of it.
fn decided_ratio(
    exp: &Experiment,
    checks: &[CheckResult],
    a: &CellStats,
    b: &CellStats,
    metric: &str,
) -> Option<RatioValue> {
    checks.iter().find_map(|c| {
        let r = c.ratio.as_ref()?;
        let same_metric = exp
            .checks
            .iter()
            .any(|s| s.name == c.name && s.kind.metric() == Some(metric));
        (same_metric && r.a == a.label && r.b == b.label).then_some(RatioValue {
            ratio: r.ratio,
            lo: r.lo,
            hi: r.hi,
        })
    })
}
