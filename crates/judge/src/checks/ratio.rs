//! The ratio of two cells' medians with its bootstrap interval, shared by every check that
//! compares two cells: three-stage when either cell's runs came from several machines.

use super::MIN_RUNS;
use crate::analysis::{CellStats, Resampling, median_ratio};
use lab_stats::Interval;

/// The ratio of two cells' medians with its CI, or why it cannot be computed.
pub fn ratio_of(
    a: &CellStats,
    b: &CellStats,
    r: Resampling,
    label: &str,
) -> Result<(f64, Interval), String> {
    for cell in [a, b] {
        if cell.n < MIN_RUNS {
            return Err(cell.too_few_runs(MIN_RUNS));
        }
    }
    let mut rng = r.stream(label);
    median_ratio(a, b, r.resamples, r.level, &mut rng)
        .map(|e| (e.ratio, carry_start_up(e.ratio, e.interval, a, b)))
        .ok_or_else(|| "the ratio is undefined (a median is zero or negative)".to_string())
}

/// The ratio's interval widened by the error of a start-up both cells' values leave out
/// ([`lab_stats::shift::widen_ratio`]); as it was where none was taken out.
fn carry_start_up(ratio: f64, iv: Interval, a: &CellStats, b: &CellStats) -> Interval {
    let se = a.start_up_se.max(b.start_up_se);
    match b.median() {
        Some(divisor) if se > 0.0 => lab_stats::shift::widen_ratio(ratio, iv, divisor, se),
        _ => iv,
    }
}
