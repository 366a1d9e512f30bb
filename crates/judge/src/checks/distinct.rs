//! `distinct`: configurations that should differ are distinguishable (seed 000, trap 5: six
//! "block sizes" were one algorithm because zsh passed the options as one argument). Adjacent
//! cells along a parameter are indistinguishable when every run of both printed the same
//! output, or when the bootstrap CI of their ratio lies inside [1−m, 1+m]; distinguishable when
//! the interval lies wholly outside that band; anything else is undecided.

use super::rule::{Rule, worst};
use super::series;
use super::shape::{Check, Context, Decision, Declared, Description, Outcome};
use crate::analysis::CellStats;
use lab_config::CheckKind;
use lab_config::format::{percent, ratio};
use lab_config::format::{ratio_bounds, ratio_interval};
use lab_findings::checks::Verdict;
use std::collections::BTreeSet;

/// A declared `distinct` check: fail (indistinguishable) when a pair's interval lies inside
/// [1−m, 1+m], pass (distinguishable) when every one lies wholly outside.
pub(super) struct Distinct<'a> {
    pub metric: &'a str,
    pub along: &'a str,
    pub variant: Option<&'a str>,
    pub margin: f64,
}

/// How one adjacent pair was judged.
enum Judgement {
    SameOutput,
    Ratio(Decision),
    NotJudged(String),
}

impl Judgement {
    fn verdict(&self) -> Verdict {
        match self {
            Judgement::SameOutput => Verdict::Fail,
            Judgement::Ratio(d) => d.verdict,
            Judgement::NotJudged(_) => Verdict::NotRun,
        }
    }
}

/// Two adjacent cells along the parameter, `b` after `a`, and how they were judged.
struct Step<'a> {
    a: &'a CellStats,
    b: &'a CellStats,
    judged: Judgement,
}

/// Every adjacent pair and the verdict over those judged.
pub(super) struct Steps<'a> {
    steps: Vec<Step<'a>>,
    judged: usize,
    verdict: Verdict,
    level: f64,
}

impl Steps<'_> {
    /// The pairs that reached the verdict.
    fn failing(&self) -> Vec<&Step<'_>> {
        let verdict = self.verdict;
        self.steps
            .iter()
            .filter(|s| s.judged.verdict() == verdict)
            .collect()
    }
}

impl Outcome for Steps<'_> {
    fn verdict(&self) -> Verdict {
        self.verdict
    }

    fn runs(&self) -> Vec<String> {
        let ids: BTreeSet<&str> = self
            .failing()
            .iter()
            .flat_map(|s| s.a.run_ids.iter().chain(&s.b.run_ids))
            .map(|id| id.as_str())
            .collect();
        ids.into_iter().map(str::to_string).collect()
    }

    fn decisions(&self) -> Vec<&Decision> {
        self.steps
            .iter()
            .filter_map(|s| match &s.judged {
                Judgement::Ratio(d) => Some(d),
                _ => None,
            })
            .collect()
    }
}

impl<'a> Declared<'a> for Distinct<'a> {
    fn of(cx: &Context<'a>) -> Option<Self> {
        let CheckKind::Distinct {
            metric,
            along,
            variant,
            margin,
        } = &cx.spec.kind
        else {
            return None;
        };
        Some(Distinct {
            metric,
            along,
            variant: variant.as_deref(),
            margin: *margin,
        })
    }
}

impl<'a> Check<'a> for Distinct<'_> {
    type Outcome = Steps<'a>;
    const KIND: &'static str = "distinct";

    fn decide(&self, cx: &Context<'a>) -> Result<Steps<'a>, String> {
        let mut steps = Vec::new();
        for s in series::along(cx.exp, cx.cells, self.metric, self.along, self.variant) {
            for w in s.windows(2) {
                let judged = self.judge(cx, w[0], w[1]);
                steps.push(Step {
                    a: w[0],
                    b: w[1],
                    judged,
                });
            }
        }
        let judged = steps
            .iter()
            .filter(|s| s.judged.verdict() != Verdict::NotRun)
            .count();
        if judged == 0 {
            let why = steps.iter().find_map(|s| match &s.judged {
                Judgement::NotJudged(w) => Some(w.clone()),
                _ => None,
            });
            let none = || format!("no adjacent cells along `{}`", self.along);
            return Err(why.unwrap_or_else(none));
        }
        Ok(Steps {
            verdict: worst(steps.iter().map(|s| s.judged.verdict())),
            steps,
            judged,
            level: cx.resampling.level,
        })
    }

    fn describe(&self, s: &Steps) -> Description {
        let listed: Vec<String> = s.steps.iter().map(|p| describe(p, s.level)).collect();
        let evidence = format!(
            "adjacent cells along `{}` must differ by more than ±{}; {}",
            self.along,
            percent(self.margin),
            listed.join("; ")
        );
        Description {
            evidence,
            reading: self.reading(s),
            ratio: None,
        }
    }
}

impl Distinct<'_> {
    fn judge(&self, cx: &Context, a: &CellStats, b: &CellStats) -> Judgement {
        if same_output(cx, a, b) {
            return Judgement::SameOutput;
        }
        let rule = Rule::Outside(1.0 - self.margin, 1.0 + self.margin);
        let stream = cx.stream(Self::KIND, Some(&b.label));
        match cx.ratio(b, a, &stream, rule) {
            Ok(d) => Judgement::Ratio(d),
            Err(why) => Judgement::NotJudged(why),
        }
    }

    fn reading(&self, s: &Steps) -> String {
        let failing = s.failing();
        let Some(Step { a, b, judged }) = failing.first() else {
            return String::new();
        };
        let more = if failing.len() > 1 {
            format!(", and {} more", failing.len() - 1)
        } else {
            String::new()
        };
        let (a, b, margin) = (&a.label, &b.label, percent(self.margin));
        match (s.verdict, judged) {
            (Verdict::Pass, _) => format!(
                "all {} adjacent pairs differ by more than ±{margin}",
                s.judged
            ),
            (_, Judgement::SameOutput) => format!(
                "{a} and {b} printed identical output: the setting made no difference{more}"
            ),
            (Verdict::Fail, Judgement::Ratio(d)) => format!(
                "{b} is {}× {a}, within ±{margin}: the setting made no measurable difference{more}",
                ratio(d.estimate)
            ),
            (_, Judgement::Ratio(d)) => format!(
                "{b} vs {a}: the interval {} overlaps ±{margin}; the data cannot decide{more}",
                ratio_bounds(d.interval.lo, d.interval.hi)
            ),
            (_, Judgement::NotJudged(why)) => why.clone(),
        }
    }
}

/// Every measured run of both cells whose outputs are valid (timings discarded or not)
/// printed exactly the same standard output.
fn same_output(cx: &Context, a: &CellStats, b: &CellStats) -> bool {
    let outputs = |cell: &lab_config::plan::CellKey| -> Vec<&str> {
        cx.runs
            .iter()
            .filter(|r| !r.warmup && r.outputs_valid() && r.cell == *cell)
            .map(|r| r.stdout_sha256.as_str())
            .collect()
    };
    let (of_a, of_b) = (outputs(&a.cell), outputs(&b.cell));
    let digests: BTreeSet<&str> = of_a.iter().chain(&of_b).copied().collect();
    !of_a.is_empty() && !of_b.is_empty() && digests.len() == 1
}

fn describe(s: &Step, level: f64) -> String {
    let (a, b) = (&s.a.label, &s.b.label);
    match &s.judged {
        Judgement::SameOutput => {
            format!("{b} vs {a}: identical output in all {} runs", s.a.n + s.b.n)
        }
        Judgement::Ratio(d) => format!(
            "{b} / {a} = {} ({} CI) {}",
            ratio_interval(d.estimate, d.interval.lo, d.interval.hi),
            lab_config::format::level(level),
            verdict_word(d.verdict)
        ),
        Judgement::NotJudged(why) => format!("{b} vs {a}: not judged, {why}"),
    }
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "distinct",
        Verdict::Fail => "indistinguishable",
        _ => "undecided",
    }
}

#[cfg(test)]
mod tests {
    use super::super::interval as iv;
    use super::*;

    #[test]
    fn indistinguishable_inside_the_band() {
        let decide = |lo, hi| Rule::Outside(0.99, 1.01).decide(&iv(lo, hi));
        assert_eq!(decide(0.995, 1.005), Verdict::Fail);
        assert_eq!(decide(0.98, 1.005), Verdict::Inconclusive);
        assert_eq!(decide(1.02, 1.3), Verdict::Pass);
        assert_eq!(decide(0.5, 0.98), Verdict::Pass);
    }
}
