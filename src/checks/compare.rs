//! `compare`: a hypothesis `a OP factor · b` about two cells, decided on the bootstrap CI of
//! the ratio of their medians: pass if the whole interval satisfies it, fail if the whole
//! interval contradicts it, inconclusive when it straddles the threshold.

use super::MIN_RUNS;
use super::rule::Rule;
use super::shape::{Check, Context, Decision, Declared, Description, Outcome, Side};
use super::verdict::Verdict;
use super::words::{self, ratio_bounds};
use crate::analysis::{CellStats, Resampling, find_cell};
use crate::config::{CellSelector, CheckKind, Comparison};
use crate::format::ratio;
use crate::stats::{self, Interval, Statistic};

/// The ratio of two cells' medians with its CI, or why it cannot be computed.
pub fn ratio_of(
    a: &CellStats,
    b: &CellStats,
    r: Resampling,
    label: &str,
) -> Result<(f64, Interval), String> {
    for cell in [a, b] {
        if cell.n < MIN_RUNS {
            return Err(format!(
                "{} has {} valid runs; {MIN_RUNS} are needed",
                cell.label, cell.n
            ));
        }
    }
    let mut rng = stats::stream(r.seed, label);
    stats::ratio_ci(
        &a.runs,
        &b.runs,
        Statistic::Median,
        r.resamples,
        r.level,
        &mut rng,
    )
    .map(|e| (e.ratio, e.interval))
    .ok_or_else(|| "the ratio is undefined (a median is zero or negative)".to_string())
}

/// The two cells a `compare` or `agree` check names, and the metric it reads.
pub struct Named<'a> {
    pub metric: &'a str,
    pub a: &'a CellSelector,
    pub b: &'a CellSelector,
}

/// Two named cells and the ratio a/b of their medians, judged.
pub struct Pair<'a> {
    pub a: &'a CellStats,
    pub b: &'a CellStats,
    pub decision: Decision,
    /// The confidence level the evidence states.
    pub level: f64,
}

impl<'a> Pair<'a> {
    /// The two cells `a` and `b` select, their ratio judged by `rule`.
    pub fn judge(cx: &Context<'a>, kind: &str, named: &Named, rule: Rule) -> Result<Self, String> {
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

    /// The chart's ratio evidence against `threshold`.
    pub fn chart(&self, threshold: f64, needs: String) -> crate::checks::RatioEvidence {
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
            .cloned()
            .collect()
    }
}

/// A declared `compare` check.
pub struct Compare<'a> {
    pub cells: Named<'a>,
    pub op: Comparison,
    pub factor: f64,
    pub unit: &'a str,
}

impl<'a> Declared<'a> for Compare<'a> {
    fn of(cx: &Context<'a>) -> Option<Self> {
        let CheckKind::Compare {
            metric,
            a,
            b,
            op,
            factor,
        } = &cx.spec.kind
        else {
            return None;
        };
        Some(Compare {
            cells: Named { metric, a, b },
            op: *op,
            factor: *factor,
            unit: cx.unit(metric),
        })
    }
}

impl<'a> Check<'a> for Compare<'_> {
    type Outcome = Pair<'a>;
    const KIND: &'static str = "compare";

    fn decide(&self, cx: &Context<'a>) -> Result<Pair<'a>, String> {
        let rule = Rule::Compare(self.op, self.factor);
        Pair::judge(cx, Self::KIND, &self.cells, rule)
    }

    fn describe(&self, p: &Pair) -> Description {
        let needs = format!("{} {}", self.op.symbol(), ratio(self.factor));
        let (a, b, r) = (&p.a.label, &p.b.label, ratio(p.decision.estimate));
        let iv = &p.decision.interval;
        let reading = match p.decision.verdict {
            Verdict::Pass => format!("{a} is {r}× {b}, and the whole interval is {needs}"),
            Verdict::Fail => format!("{a} is {r}× {b}: the whole interval contradicts {needs}"),
            _ => format!(
                "the interval {} straddles {}: the data cannot decide",
                ratio_bounds(iv.lo, iv.hi),
                ratio(self.factor)
            ),
        };
        Description {
            evidence: format!("{}; needs a/b {needs}", words::pair(p, self.unit, p.level)),
            reading,
            ratio: Some(p.chart(self.factor, format!("a/b {needs}"))),
        }
    }
}
