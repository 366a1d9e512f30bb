//! Phrases the descriptions of several checks share: two cells set side by side.

use super::pair::Pair;
use crate::format::{level, ratio_interval, value};

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
