//! Phrases the descriptions of checks share: two cells set side by side, a correlation with
//! its interval.

use super::pair::Pair;
use crate::format::{correlation as correlation_value, level, ratio_interval, value};
use crate::stats::Interval;

/// "a = CELL = VALUE, b = CELL = VALUE; a/b = R [LO, HI] (95% CI)".
pub fn pair(p: &Pair, unit: &str, ci_level: f64) -> String {
    let (d, iv) = (&p.decision, &p.decision.interval);
    format!(
        "a = {} = {}, b = {} = {}; a/b = {} ({} CI)",
        p.a.label,
        value(p.a.median().unwrap_or(f64::NAN), unit),
        p.b.label,
        value(p.b.median().unwrap_or(f64::NAN), unit),
        ratio_interval(d.estimate, iv.lo, iv.hi),
        level(ci_level)
    )
}

/// "ρ = -0.82 [-0.90, -0.71] (95% CI) over 36 runs in 4 cells".
pub fn correlation(rho: f64, interval: &Interval, runs: usize, cells: usize) -> String {
    format!(
        "ρ = {} {} ({} CI) over {runs} runs in {cells} cells",
        correlation_value(rho),
        correlation_bounds(interval),
        level(interval.level)
    )
}

/// The bounds of a correlation's interval: `[-0.90, -0.71]`.
pub fn correlation_bounds(interval: &Interval) -> String {
    format!(
        "[{}, {}]",
        correlation_value(interval.lo),
        correlation_value(interval.hi)
    )
}
