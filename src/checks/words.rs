//! Phrases the descriptions of several checks share: a ratio with its interval, an interval's
//! bounds, two cells set side by side.

use super::pair::Pair;
use crate::format::{level, ratio, value};

/// A ratio with its interval: `0.384 [0.344, 0.583]`.
pub fn ratio_interval(r: f64, lo: f64, hi: f64) -> String {
    format!("{} {}", ratio(r), ratio_bounds(lo, hi))
}

/// The bounds of a ratio's interval alone: `[0.344, 0.583]`.
pub fn ratio_bounds(lo: f64, hi: f64) -> String {
    format!("[{}, {}]", ratio(lo), ratio(hi))
}

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
