//! The resolution check over the analysed cells: a time metric whose values move in steps
//! coarse beside the differences a check decides cannot decide them. A decision on such a
//! metric is taken again on its interval widened by one step at each end; where that changes
//! it, the check is inconclusive and the automatic check fails.
//!
//! A clock that ticks every q reads a duration as a difference of two floored readings, off by
//! up to one q either way; as noise, a uniform quantiser adds q²/12 to the variance (Sheppard's
//! correction, 1898; Widrow & Kollár, *Quantization Noise*, 2008, ch. 4). With q at 10% of the
//! median, that is a coefficient of variation of 10%/√12 ≈ 2.9% from the clock alone, the size
//! of the run-to-run noise lab's checks decide against, so the steps are no longer negligible;
//! below 10% they are. Values that land on a handful of points cannot show it through their
//! spread either: five runs of a continuous time with at most two distinct values happen only
//! when the clock (or the printing) rounds them, whatever the step.

use crate::analysis::CellStats;
use crate::stats::Interval;

/// A step at least this share of the cell's median makes it coarse.
pub const SHARE: f64 = 0.10;
/// A cell of at least this many runs ...
pub const FEW_RUNS: usize = 5;
/// ... with at most this many distinct values moves in steps, whatever their size.
pub const FEW_VALUES: usize = 2;
/// Two values within this share of the largest are the same value as printed.
pub const TOLERANCE: f64 = 1e-6;

/// How a cell's values move: in steps of `q` (unknown when every value of the metric was the
/// same), at a `median`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub q: Option<f64>,
    pub median: f64,
}

/// The distinct values, sorted, with values that differ by under [`TOLERANCE`] of the largest
/// magnitude taken as one; and that tolerance.
fn distinct(values: &[f64]) -> (Vec<f64>, f64) {
    let largest = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let tol = TOLERANCE * largest;
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    sorted.dedup_by(|b, a| (*b - *a).abs() <= tol);
    (sorted, tol)
}

/// The greatest common step of `a` and `b`, to within `tol`: Euclid's algorithm on the
/// nearest-integer remainder, which a value printed with rounding cannot derail.
fn common_step(a: f64, b: f64, tol: f64) -> f64 {
    let (mut a, mut b) = (a.max(b), a.min(b));
    for _ in 0..64 {
        if b <= tol {
            break;
        }
        let r = (a - (a / b).round() * b).abs();
        (a, b) = (b, r);
    }
    a
}

/// The quantum of `values`: the largest q of which every difference of two distinct values
/// is a whole multiple (within [`TOLERANCE`]); `None` with fewer than two distinct values.
pub fn quantum(values: &[f64]) -> Option<f64> {
    let (sorted, tol) = distinct(values);
    let q = sorted
        .windows(2)
        .map(|w| w[1] - w[0])
        .reduce(|g, d| common_step(g, d, tol))?;
    let on_lattice = sorted
        .iter()
        .all(|v| ((v - sorted[0]) / q - ((v - sorted[0]) / q).round()).abs() * q <= tol.max(1e-12));
    on_lattice.then_some(q)
}

/// How many distinct values `values` hold.
pub fn distinct_count(values: &[f64]) -> usize {
    distinct(values).0.len()
}

/// The step of a cell of `values`, where its metric (every cell of it) has quantum `pooled`
/// over `pooled_distinct` distinct values; `None` where the cell moves finely enough.
pub fn cell_step(values: &[f64], pooled: Option<f64>, pooled_distinct: usize) -> Option<Step> {
    let median = crate::stats::summary::median(values);
    if !median.is_finite() || median == 0.0 {
        return None;
    }
    let lattice = pooled_distinct >= 3 && pooled.is_some_and(|q| q >= SHARE * median.abs());
    let few = values.len() >= FEW_RUNS && distinct_count(values) <= FEW_VALUES;
    (lattice || few).then_some(Step { q: pooled, median })
}

/// The step of `cell` among `cells` (its metric's cells), when its metric is a time.
pub fn step_of(cells: &[CellStats], cell: &CellStats, unit: &str) -> Option<Step> {
    crate::units::seconds_per(unit)?;
    let pooled: Vec<f64> = cells
        .iter()
        .filter(|c| c.metric == cell.metric)
        .flat_map(CellStats::pooled)
        .collect();
    cell_step(&cell.pooled(), quantum(&pooled), distinct_count(&pooled))
}

/// The interval of a ratio a/b (b at `b_value`) widened by what steps of `qa` in a and `qb`
/// in b can hide: each median may be off by up to one step.
pub fn widen(interval: &Interval, b_value: f64, qa: f64, qb: f64) -> Interval {
    let lo = (interval.lo * b_value - qa) / (b_value + qb);
    let hi = if b_value > qb {
        (interval.hi * b_value + qa) / (b_value - qb)
    } else {
        f64::INFINITY
    };
    Interval {
        lo: lo.max(0.0),
        hi,
        level: interval.level,
    }
}

/// "`ms` moves in steps of 10 ms, 50% of its median: the program's clock is coarser than the
/// difference asked about; time with a finer clock (clock_gettime) or give each run more work".
pub fn reading(metric: &str, unit: &str, step: &Step) -> String {
    use crate::format::{percent, value};
    let moves = match step.q {
        Some(q) => format!(
            "`{metric}` moves in steps of {}, {} of its median",
            value(q, unit),
            percent(q / step.median)
        ),
        None => format!("`{metric}` printed the same value in every run"),
    };
    format!(
        "{moves}: the program's clock is coarser than the difference asked about; time with a finer clock (clock_gettime) or give each run more work"
    )
}

#[cfg(test)]
#[path = "resolution_tests.rs"]
mod tests;
