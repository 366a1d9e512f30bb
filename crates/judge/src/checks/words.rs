//! Phrases the descriptions of checks share: a correlation with its interval.

use lab_config::format::{correlation as correlation_value, level};
use lab_stats::Interval;

/// "ρ = -0.82 [-0.90, -0.71] (95% CI) over 36 runs in 4 cells".
pub(super) fn correlation(rho: f64, interval: &Interval, runs: usize, cells: usize) -> String {
    format!(
        "ρ = {} {} ({} CI) over {runs} runs in {cells} cells",
        correlation_value(rho),
        correlation_bounds(interval),
        level(interval.level)
    )
}

/// The bounds of a correlation's interval: `[-0.90, -0.71]`.
pub(super) fn correlation_bounds(interval: &Interval) -> String {
    format!(
        "[{}, {}]",
        correlation_value(interval.lo),
        correlation_value(interval.hi)
    )
}
