//! `scaling`: a metric grows along a parameter by at least a factor from its first to its last
//! value (seed 000: a read-only peek should scale with threads, and sat flat at the clock's
//! ceiling). Decided per series on the bootstrap CI of the ratio last / first.

use super::compare::ratio_of;
use super::verdict::{CheckResult, RatioEvidence, Verdict};
use super::{Inputs, series};
use crate::analysis::CellStats;
use crate::config::CheckSpec;
use crate::format::{ratio, value};

/// One series judged: its end cells, the ratio and its interval, the verdict.
struct Judged<'a> {
    first: &'a CellStats,
    last: &'a CellStats,
    ratio: f64,
    lo: f64,
    hi: f64,
    verdict: Verdict,
}

/// Pass when the whole interval reaches the factor, fail when all of it falls short.
pub fn decide(factor: f64, lo: f64, hi: f64) -> Verdict {
    if lo >= factor {
        Verdict::Pass
    } else if hi < factor {
        Verdict::Fail
    } else {
        Verdict::Inconclusive
    }
}

pub fn check(
    spec: &CheckSpec,
    x: &Inputs,
    metric: &str,
    along: &str,
    variant: Option<&str>,
    factor: f64,
) -> CheckResult {
    let base = CheckResult::new(&spec.name, "scaling", spec.class, Verdict::NotRun);
    let unit = x.exp.metric(metric).map_or("", |m| m.unit.as_str());
    let mut judged = Vec::new();
    let mut skipped = Vec::new();
    for s in series::along(x.exp, x.cells, metric, along, variant) {
        let (first, last) = (s[0], s[s.len() - 1]);
        match ratio_of(
            last,
            first,
            x.resampling,
            &format!("scaling/{}/{}", spec.name, first.label),
        ) {
            Ok((r, ci)) => judged.push(Judged {
                first,
                last,
                ratio: r,
                lo: ci.lo,
                hi: ci.hi,
                verdict: decide(factor, ci.lo, ci.hi),
            }),
            Err(why) => skipped.push(why),
        }
    }
    if judged.is_empty() {
        return base.reading(
            skipped
                .first()
                .cloned()
                .unwrap_or_else(|| format!("no cells along `{along}` to compare")),
        );
    }
    let verdict = [Verdict::Fail, Verdict::Inconclusive]
        .into_iter()
        .find(|v| judged.iter().any(|j| j.verdict == *v))
        .unwrap_or(Verdict::Pass);
    // The series that decided: the worst (lowest) ratio among those with the verdict.
    let decisive = judged
        .iter()
        .filter(|j| j.verdict == verdict)
        .min_by(|a, b| a.ratio.total_cmp(&b.ratio))
        .unwrap_or(&judged[0]);
    let evidence: Vec<String> = judged
        .iter()
        .map(|j| describe(j, unit, x.resampling.level))
        .collect();
    let mut evidence = format!(
        "needs last/first ≥ {} along `{along}`; {}",
        ratio(factor),
        evidence.join("; ")
    );
    if !skipped.is_empty() {
        evidence.push_str(&format!(
            "; {} series not judged: {}",
            skipped.len(),
            skipped[0]
        ));
    }
    let reading = reading(decisive, verdict, factor, unit);
    let mut result = CheckResult { verdict, ..base }
        .evidence(evidence)
        .reading(reading);
    // The series that reached the verdict decided it: a failing series, not every series.
    result.runs = judged
        .iter()
        .filter(|j| j.verdict == verdict)
        .flat_map(|j| j.first.run_ids.iter().chain(&j.last.run_ids))
        .cloned()
        .collect();
    let (a_value, b_value) = (
        decisive.last.median().unwrap_or(f64::NAN),
        decisive.first.median().unwrap_or(f64::NAN),
    );
    result.ratio = Some(RatioEvidence {
        a: decisive.last.label.clone(),
        b: decisive.first.label.clone(),
        a_value,
        b_value,
        ratio: decisive.ratio,
        lo: decisive.lo,
        hi: decisive.hi,
        threshold: factor,
        needs: format!("last/first ≥ {}", ratio(factor)),
        level: x.resampling.level,
    });
    result
}

fn describe(j: &Judged, unit: &str, level: f64) -> String {
    format!(
        "{} = {} → {} = {}: ×{} [{}, {}] ({} CI) {}",
        j.first.label,
        value(j.first.median().unwrap_or(f64::NAN), unit),
        j.last.label,
        value(j.last.median().unwrap_or(f64::NAN), unit),
        ratio(j.ratio),
        ratio(j.lo),
        ratio(j.hi),
        crate::format::level(level),
        j.verdict
    )
}

fn reading(j: &Judged, verdict: Verdict, factor: f64, unit: &str) -> String {
    let (from, to) = (
        value(j.first.median().unwrap_or(f64::NAN), unit),
        value(j.last.median().unwrap_or(f64::NAN), unit),
    );
    match verdict {
        Verdict::Pass => format!(
            "every series grows at least {}×; the least, {} → {}, grows {}× ({from} → {to})",
            ratio(factor),
            j.first.label,
            j.last.label,
            ratio(j.ratio)
        ),
        Verdict::Fail => format!(
            "{} → {} grows only {}× ({from} → {to}), short of {}×",
            j.first.label,
            j.last.label,
            ratio(j.ratio),
            ratio(factor)
        ),
        _ => format!(
            "{} → {}: the interval [{}, {}] straddles {}×; the data cannot decide",
            j.first.label,
            j.last.label,
            ratio(j.lo),
            ratio(j.hi),
            ratio(factor)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decided_on_the_whole_interval() {
        assert_eq!(decide(2.0, 2.0, 3.0), Verdict::Pass);
        assert_eq!(decide(2.0, 1.5, 2.5), Verdict::Inconclusive);
        assert_eq!(decide(2.0, 0.9, 1.99), Verdict::Fail);
    }
}
