//! `scaling`: a metric grows along a parameter by at least a factor from its first to its last
//! value (seed 000: a read-only peek should scale with threads, and sat flat at the clock's
//! ceiling). Decided per series on the bootstrap CI of the ratio last / first.

use super::rule::{Rule, worst};
use super::series;
use super::shape::{Check, Context, Decision, Declared, Description, Outcome, Side};
use crate::analysis::CellStats;
use lab_config::format::{ratio, value};
use lab_config::format::{ratio_bounds, ratio_interval};
use lab_config::{CheckKind, Comparison};
use lab_findings::checks::Verdict;

/// A declared `scaling` check: each series must reach the factor (last / first ≥ factor).
pub(super) struct Scaling<'a> {
    pub metric: &'a str,
    pub along: &'a str,
    pub variant: Option<&'a str>,
    pub factor: f64,
    pub unit: &'a str,
}

/// One series judged: its end cells and the ratio last / first.
pub(super) struct Series<'a> {
    first: &'a CellStats,
    last: &'a CellStats,
    decision: Decision,
}

/// Every series judged, those that could not be, and the verdict over them.
pub(super) struct Grown<'a> {
    judged: Vec<Series<'a>>,
    skipped: Vec<String>,
    verdict: Verdict,
    /// The judged series that decided: the lowest ratio among those with the verdict.
    decisive: usize,
    level: f64,
}

impl Outcome for Grown<'_> {
    fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The series that reached the verdict decided it: a failing series, not every series.
    fn runs(&self) -> Vec<String> {
        self.judged
            .iter()
            .filter(|j| j.decision.verdict == self.verdict)
            .flat_map(|j| j.first.run_ids.iter().chain(&j.last.run_ids))
            .map(ToString::to_string)
            .collect()
    }

    fn decisions(&self) -> Vec<&Decision> {
        self.judged.iter().map(|j| &j.decision).collect()
    }
}

impl<'a> Declared<'a> for Scaling<'a> {
    fn of(cx: &Context<'a>) -> Option<Self> {
        let CheckKind::Scaling {
            metric,
            along,
            variant,
            factor,
            ..
        } = &cx.spec.kind
        else {
            return None;
        };
        Some(Scaling {
            metric,
            along,
            variant: variant.as_deref(),
            factor: *factor,
            unit: cx.unit(metric),
        })
    }
}

impl<'a> Check<'a> for Scaling<'_> {
    type Outcome = Grown<'a>;
    const KIND: &'static str = "scaling";

    fn decide(&self, cx: &Context<'a>) -> Result<Grown<'a>, String> {
        let rule = Rule::Compare(Comparison::GreaterEqual, self.factor);
        let mut judged = Vec::new();
        let mut skipped = Vec::new();
        for s in series::along(cx.exp, cx.cells, self.metric, self.along, self.variant) {
            let (first, last) = (s[0], s[s.len() - 1]);
            let stream = cx.stream(Self::KIND, Some(&first.label));
            match cx.ratio(last, first, &stream, rule) {
                Ok(decision) => judged.push(Series {
                    first,
                    last,
                    decision,
                }),
                Err(why) => skipped.push(why),
            }
        }
        if judged.is_empty() {
            let none = || format!("no cells along `{}` to compare", self.along);
            return Err(skipped.first().cloned().unwrap_or_else(none));
        }
        let verdict = worst(judged.iter().map(|j| j.decision.verdict));
        let decisive = judged
            .iter()
            .enumerate()
            .filter(|(_, j)| j.decision.verdict == verdict)
            .min_by(|a, b| a.1.decision.estimate.total_cmp(&b.1.decision.estimate))
            .map_or(0, |(i, _)| i);
        Ok(Grown {
            judged,
            skipped,
            verdict,
            decisive,
            level: cx.resampling.level,
        })
    }

    fn describe(&self, g: &Grown) -> Description {
        let listed: Vec<String> = g.judged.iter().map(|j| self.series(j, g.level)).collect();
        let mut evidence = format!(
            "needs last/first ≥ {} along `{}`; {}",
            ratio(self.factor),
            self.along,
            listed.join("; ")
        );
        if let Some(first) = g.skipped.first() {
            let k = g.skipped.len();
            evidence.push_str(&format!("; {k} series not judged: {first}"));
        }
        let j = &g.judged[g.decisive];
        let needs = format!("last/first ≥ {}", ratio(self.factor));
        let (last, first) = (Side::cell(j.last), Side::cell(j.first));
        Description {
            evidence,
            reading: self.reading(j, g.verdict),
            ratio: Some(j.decision.chart(last, first, self.factor, needs, g.level)),
        }
    }
}

impl Scaling<'_> {
    /// "A = V → B = W: ×R [LO, HI] (95% CI) pass".
    fn series(&self, j: &Series, level: f64) -> String {
        let (d, iv) = (&j.decision, &j.decision.interval);
        format!(
            "{} = {} → {} = {}: ×{} ({} CI) {}",
            j.first.label,
            value(j.first.median().unwrap_or(f64::NAN), self.unit),
            j.last.label,
            value(j.last.median().unwrap_or(f64::NAN), self.unit),
            ratio_interval(d.estimate, iv.lo, iv.hi),
            lab_config::format::level(level),
            d.verdict
        )
    }

    fn reading(&self, j: &Series, verdict: Verdict) -> String {
        let (from, to) = (
            value(j.first.median().unwrap_or(f64::NAN), self.unit),
            value(j.last.median().unwrap_or(f64::NAN), self.unit),
        );
        let (a, b) = (&j.first.label, &j.last.label);
        let (r, factor) = (ratio(j.decision.estimate), ratio(self.factor));
        match verdict {
            Verdict::Pass => format!(
                "every series grows at least {factor}×; the least, {a} → {b}, grows {r}× ({from} → {to})"
            ),
            Verdict::Fail => {
                format!("{a} → {b} grows only {r}× ({from} → {to}), short of {factor}×")
            }
            _ => format!(
                "{a} → {b}: the interval {} straddles {factor}×; the data cannot decide",
                ratio_bounds(j.decision.interval.lo, j.decision.interval.hi)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::interval as iv;
    use super::*;

    #[test]
    fn decided_on_the_whole_interval() {
        let decide = |lo, hi| Rule::Compare(Comparison::GreaterEqual, 2.0).decide(&iv(lo, hi));
        assert_eq!(decide(2.0, 3.0), Verdict::Pass);
        assert_eq!(decide(1.5, 2.5), Verdict::Inconclusive);
        assert_eq!(decide(0.9, 1.99), Verdict::Fail);
    }
}
