//! Two cells a check names, and the ratio of their medians judged against a rule.

use super::rule::Rule;
use super::shape::{Context, Decision, Outcome, Side};
use crate::analysis::{CellStats, find_cell};
use lab_config::CellSelector;
use lab_config::format::{level, ratio_interval, value};
use lab_findings::checks::Verdict;

/// The two cells a `compare` or `agree` check names, and the metric it reads.
pub(super) struct Named<'a> {
    pub metric: &'a str,
    pub a: &'a CellSelector,
    pub b: &'a CellSelector,
}

/// Two named cells and the ratio a/b of their medians, judged.
pub(super) struct Pair<'a> {
    pub a: &'a CellStats,
    pub b: &'a CellStats,
    pub decision: Decision,
    /// The confidence level the evidence states.
    pub level: f64,
}

impl<'a> Pair<'a> {
    /// The two cells `a` and `b` select, their ratio judged by `rule`.
    pub(super) fn judge(
        cx: &Context<'a>,
        kind: &str,
        named: &Named,
        rule: Rule,
    ) -> Result<Self, String> {
        let find = |s: &CellSelector| find_cell(cx.cells, s, named.metric);
        let (Some(ca), Some(cb)) = (find(named.a), find(named.b)) else {
            return Err("a named cell has no runs in this session".into());
        };
        Ok(Pair {
            a: ca,
            b: cb,
            decision: cx.ratio(ca, cb, &cx.stream(kind, None), rule)?,
            level: cx.resampling.level,
        })
    }

    /// "a = CELL = VALUE, b = CELL = VALUE; a/b = R [LO, HI] (95% CI)".
    pub(super) fn side_by_side(&self, unit: &str, ci_level: f64) -> String {
        let (p, d, iv) = (self, &self.decision, &self.decision.interval);
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

    /// The chart's ratio evidence against `threshold`.
    pub(super) fn chart(&self, threshold: f64, needs: String) -> crate::checks::RatioEvidence {
        let level = self.decision.interval.level;
        let (a, b) = (Side::cell(self.a), Side::cell(self.b));
        self.decision.chart(a, b, threshold, needs, level)
    }
}

impl Outcome for Pair<'_> {
    fn verdict(&self) -> Verdict {
        self.decision.verdict
    }

    fn runs(&self) -> Vec<String> {
        self.a
            .run_ids
            .iter()
            .chain(&self.b.run_ids)
            .map(ToString::to_string)
            .collect()
    }

    fn decisions(&self) -> Vec<&Decision> {
        vec![&self.decision]
    }
}
