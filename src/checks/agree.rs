//! `agree`: two cells that must measure the same thing match within a margin (seed 000, trap 4:
//! the OpenMP build on one thread ran 5.5× slower than the sequential build). Decided on the
//! bootstrap CI of the ratio of their medians against the band [1/(1+m), 1+m].

use super::compare::{ratio_of, with_ratio};
use super::verdict::{CheckResult, Verdict};
use crate::analysis::{CellStats, Resampling, find_cell};
use crate::config::{CellSelector, CheckSpec};
use crate::format::{percent, ratio, value};
use crate::stats::Interval;

/// Pass when the whole interval lies inside the band, fail when it lies wholly outside it.
pub fn decide(margin: f64, ci: &Interval) -> Verdict {
    let (low, high) = (1.0 / (1.0 + margin), 1.0 + margin);
    if ci.lo >= low && ci.hi <= high {
        Verdict::Pass
    } else if ci.hi < low || ci.lo > high {
        Verdict::Fail
    } else {
        Verdict::Inconclusive
    }
}

#[allow(clippy::too_many_arguments)]
pub fn check(
    spec: &CheckSpec,
    metric: &str,
    a: &CellSelector,
    b: &CellSelector,
    margin: f64,
    cells: &[CellStats],
    r: Resampling,
    unit: &str,
) -> CheckResult {
    let base = CheckResult::new(&spec.name, "agree", spec.class, Verdict::NotRun);
    let (Some(ca), Some(cb)) = (find_cell(cells, a, metric), find_cell(cells, b, metric)) else {
        return base.reading("a named cell has no runs in this session");
    };
    let (r_hat, ci) = match ratio_of(ca, cb, r, &format!("agree/{}", spec.name)) {
        Ok(x) => x,
        Err(why) => return base.reading(why),
    };
    let verdict = decide(margin, &ci);
    let (ma, mb) = (
        ca.median().unwrap_or(f64::NAN),
        cb.median().unwrap_or(f64::NAN),
    );
    let (low, high) = (1.0 / (1.0 + margin), 1.0 + margin);
    let evidence = format!(
        "a = {} = {}, b = {} = {}; a/b = {} [{}, {}] ({} CI); agreement needs a/b within [{}, {}] (±{})",
        ca.label,
        value(ma, unit),
        cb.label,
        value(mb, unit),
        ratio(r_hat),
        ratio(ci.lo),
        ratio(ci.hi),
        crate::format::level(r.level),
        ratio(low),
        ratio(high),
        percent(margin)
    );
    let reading = match verdict {
        Verdict::Pass => format!(
            "{} and {} agree: {} is {}× the other, within ±{}",
            ca.label,
            cb.label,
            ca.label,
            ratio(r_hat),
            percent(margin)
        ),
        Verdict::Fail => format!(
            "{} is {}× {}, which should match it within ±{}",
            ca.label,
            ratio(r_hat),
            cb.label,
            percent(margin)
        ),
        _ => format!(
            "the interval [{}, {}] reaches outside ±{}: the data cannot decide",
            ratio(ci.lo),
            ratio(ci.hi),
            percent(margin)
        ),
    };
    let result = CheckResult { verdict, ..base }
        .evidence(evidence)
        .reading(reading);
    let needs = format!("a/b within ±{}", percent(margin));
    with_ratio(result, ca, cb, r_hat, &ci, (1.0, needs))
}

#[cfg(test)]
mod tests {
    use super::super::interval as iv;
    use super::*;

    #[test]
    fn the_band_is_symmetric_on_the_log_scale() {
        assert_eq!(decide(0.1, &iv(0.95, 1.05)), Verdict::Pass);
        assert_eq!(decide(0.1, &iv(1.0 / 1.1, 1.1)), Verdict::Pass);
        assert_eq!(decide(0.1, &iv(0.9, 1.0)), Verdict::Inconclusive);
        assert_eq!(decide(0.1, &iv(1.05, 1.2)), Verdict::Inconclusive);
        assert_eq!(decide(0.1, &iv(5.0, 6.0)), Verdict::Fail);
        assert_eq!(decide(0.1, &iv(0.5, 0.9)), Verdict::Fail);
    }
}
