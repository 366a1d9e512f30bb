//! `compare`: a hypothesis `a OP factor · b` about two cells, decided on the bootstrap CI of
//! the ratio of their medians: pass if the whole interval satisfies it, fail if the whole
//! interval contradicts it, inconclusive when it straddles the threshold.

use super::pair::{Named, Pair};
use super::rule::Rule;
use super::shape::{Check, Context, Declared, Description};
use lab_config::format::ratio;
use lab_config::format::ratio_bounds;
use lab_config::{CheckKind, Comparison};
use lab_findings::checks::Verdict;

/// A declared `compare` check.
pub(super) struct Compare<'a> {
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
            ..
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
            evidence: format!("{}; needs a/b {needs}", p.side_by_side(self.unit, p.level)),
            reading,
            ratio: Some(p.chart(self.factor, format!("a/b {needs}"))),
        }
    }
}
