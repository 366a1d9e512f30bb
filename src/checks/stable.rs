//! `stable`: run-to-run spread under a limit and no second mode (seeds 002 and 004: runs that
//! fall into two groups make a median describe neither). Per cell, over each valid measured
//! run's median value: the coefficient of variation (sample standard deviation / mean) must
//! not exceed `max_cv`, and Hartigan's dip test (Hartigan & Hartigan 1985, Ann. Stat. 13:70)
//! must not detect a second mode at `alpha`. The CV needs 3 runs; the dip test needs 4, so a
//! cell with 3 runs is judged on its CV alone and the evidence says so.

use super::MIN_RUNS;
use super::verdict::{CheckResult, Verdict};
use crate::analysis::CellStats;
use crate::config::CheckSpec;
use crate::format::{percent, value};
use crate::stats::{self, DipTest};

/// The dip test's minimum sample size.
const DIP_MIN_RUNS: usize = 4;

struct Judged<'a> {
    cell: &'a CellStats,
    cv: f64,
    dip: Option<DipTest>,
    verdict: Verdict,
}

/// Coefficient of variation with the n−1 standard deviation; `None` under two values or a
/// non-positive mean. The CV does not depend on scale, so values are divided by the largest
/// magnitude first: sums of values near `f64::MAX` cannot overflow to infinity.
pub fn cv(xs: &[f64]) -> Option<f64> {
    let scale = xs.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    if scale.is_finite() && scale > 0.0 {
        let scaled: Vec<f64> = xs.iter().map(|x| x / scale).collect();
        return cv_unscaled(&scaled);
    }
    cv_unscaled(xs)
}

fn cv_unscaled(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 || mean <= 0.0 {
        return None;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean)
}

pub fn check(
    spec: &CheckSpec,
    metric: &str,
    max_cv: f64,
    alpha: f64,
    cells: &[CellStats],
    unit: &str,
) -> CheckResult {
    let base = CheckResult::new(&spec.name, "stable", spec.class, Verdict::NotRun);
    let judged: Vec<Judged> = cells
        .iter()
        .filter(|c| c.metric == metric)
        .filter_map(|c| judge(c, max_cv, alpha))
        .collect();
    let rank = |j: &Judged| {
        (
            j.verdict == Verdict::Fail,
            j.dip.as_ref().is_some_and(|d| d.second_mode_detected),
        )
    };
    let Some(worst) = judged
        .iter()
        .max_by(|a, b| rank(a).cmp(&rank(b)).then(a.cv.total_cmp(&b.cv)))
    else {
        return base.reading(format!("no cell has {MIN_RUNS} valid runs; the CV needs {MIN_RUNS} and the dip test {DIP_MIN_RUNS}"));
    };
    let failed = judged.iter().filter(|j| j.verdict == Verdict::Fail).count();
    let verdict = if failed > 0 {
        Verdict::Fail
    } else {
        Verdict::Pass
    };
    let no_dip = judged.iter().filter(|j| j.dip.is_none()).count();
    let mut evidence = format!(
        "{} cells judged, {failed} failed; limit CV ≤ {}, dip test at α = {alpha}; worst {}: {}",
        judged.len(),
        percent(max_cv),
        worst.cell.label,
        describe(worst, unit)
    );
    if no_dip > 0 {
        evidence.push_str(&format!("; {no_dip} cells judged on CV only (the dip test needs {DIP_MIN_RUNS} runs and α of 0.05 or 0.01)"));
    }
    let reading = match verdict {
        Verdict::Pass => format!(
            "every cell's spread is within {} (largest {}, {}) and no second mode detected",
            percent(max_cv),
            percent(worst.cv),
            worst.cell.label
        ),
        _ => fail_reading(worst, max_cv, unit),
    };
    let runs = judged
        .iter()
        .filter(|j| j.verdict == verdict)
        .flat_map(|j| j.cell.run_ids.iter().cloned())
        .collect();
    CheckResult { verdict, ..base }
        .evidence(evidence)
        .reading(reading)
        .runs(runs)
}

fn judge(cell: &CellStats, max_cv: f64, alpha: f64) -> Option<Judged<'_>> {
    let per_run: Vec<f64> = cell
        .runs
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| stats::median(r))
        .collect();
    if per_run.len() < MIN_RUNS {
        return None;
    }
    let cv = cv(&per_run)?;
    let dip = stats::dip_test(&per_run, alpha);
    let bimodal = dip.as_ref().is_some_and(|d| d.second_mode_detected);
    // A spread that is not a finite number is never a pass.
    let verdict = if !cv.is_finite() || cv > max_cv || bimodal {
        Verdict::Fail
    } else {
        Verdict::Pass
    };
    Some(Judged {
        cell,
        cv,
        dip,
        verdict,
    })
}

fn describe(j: &Judged, unit: &str) -> String {
    let dip = match &j.dip {
        None => "dip test not run".to_string(),
        Some(d) if d.second_mode_detected => format!(
            "dip {:.3} > critical {:.3} (n = {}): second mode, {}",
            d.dip,
            d.critical,
            d.n,
            modes(d, unit)
        ),
        Some(d) => format!(
            "dip {:.3} ≤ critical {:.3} (n = {}): no second mode detected",
            d.dip, d.critical, d.n
        ),
    };
    format!("CV {} over {} runs, {dip}", percent(j.cv), j.cell.n)
}

fn modes(d: &DipTest, unit: &str) -> String {
    d.modes
        .iter()
        .map(|m| format!("{} of runs at {}", percent(m.share), value(m.median, unit)))
        .collect::<Vec<_>>()
        .join(" and ")
}

fn fail_reading(j: &Judged, max_cv: f64, unit: &str) -> String {
    match &j.dip {
        Some(d) if d.second_mode_detected => format!(
            "{} has two modes: {} (CV {})",
            j.cell.label,
            modes(d, unit),
            percent(j.cv)
        ),
        _ => format!(
            "{} varies {} from run to run, above the {} limit",
            j.cell.label,
            percent(j.cv),
            percent(max_cv)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cv_uses_the_sample_standard_deviation() {
        let got = cv(&[9.0, 10.0, 11.0]).unwrap();
        assert!((got - 0.1).abs() < 1e-12, "{got}");
        assert_eq!(cv(&[1.0]), None);
    }

    #[test]
    fn values_near_the_largest_double_keep_a_finite_cv() {
        let big = cv(&[1.7e308, 1.0e308, 1.7e308]).unwrap();
        let small = cv(&[1.7, 1.0, 1.7]).unwrap();
        assert!((big - small).abs() < 1e-12, "{big} vs {small}");
        assert!(cv(&[f64::INFINITY, 1.0, 2.0]).is_none_or(|c| !c.is_finite()));
    }
}
