//! The ratio of two cells' medians with its interval: resampled in three stages (machines,
//! runs within them, iterations within runs) where either cell's runs came from several
//! machines (see `machines`), in the two stages of runs and iterations where neither did.

use lab_findings::analysis::CellStats;
use lab_stats::{self as stats, RatioEstimate, Statistic, Stream};

/// The ratio of the medians of `a` and `b` with its interval on the log scale: each cell
/// resampled in three stages when either spans machines (a cell on one machine as a single
/// machine), the two-stage [`stats::ratio_ci`] when neither does.
pub fn median_ratio(
    a: &CellStats,
    b: &CellStats,
    resamples: usize,
    level: f64,
    rng: &mut Stream,
) -> Option<RatioEstimate> {
    if a.machines.is_none() && b.machines.is_none() {
        return stats::ratio_ci(&a.runs, &b.runs, Statistic::Median, resamples, level, rng);
    }
    stats::nested_ratio_ci(
        &nested(a),
        &nested(b),
        Statistic::Median,
        resamples,
        level,
        rng,
    )
}

/// A cell's runs as machines × runs × iterations: one machine when it ran on one.
fn nested(cell: &CellStats) -> Vec<Vec<Vec<f64>>> {
    cell.machines
        .as_ref()
        .map_or_else(|| vec![cell.runs.clone()], |m| m.nest(&cell.runs))
}
