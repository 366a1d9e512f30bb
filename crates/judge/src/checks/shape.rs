//! The shape every declared check has: its inputs in a [`Context`], a `decide` that reaches an
//! [`Outcome`] (for an interval check, the interval and the [`Rule`] that decided it) and a
//! `describe` that turns the outcome into the reading and evidence a [`CheckResult`] carries.

use super::disturbance::Disturbance;
use super::resolution::Step;
use super::rule::Rule;
use crate::analysis::{CellStats, Resampling, RunView};
use lab_config::format::{percent, ratio_interval};
use lab_config::{CheckSpec, Experiment};
use lab_findings::checks::{CheckFigure, CheckResult, CorrelationEvidence, RatioEvidence, Verdict};
use lab_stats::Interval;

/// What a declared check reads: the check itself and the analysed session.
pub struct Context<'a> {
    pub exp: &'a Experiment,
    pub spec: &'a CheckSpec,
    pub cells: &'a [CellStats],
    /// Every finished run in execution order, exclusions applied.
    pub runs: &'a [&'a RunView],
    pub resampling: Resampling,
    /// Within ± this share of its threshold, an interval that straddles it is "at the
    /// threshold" (`margin` of `compare` and `scaling`, in sessions from analysis 3 on).
    pub margin: Option<f64>,
}

impl<'a> Context<'a> {
    /// The unit of `metric`, empty when it declares none.
    pub fn unit(&self, metric: &str) -> &'a str {
        self.exp.metric(metric).map_or("", |m| m.unit.as_str())
    }

    /// The declared warm-up iterations of `metric`.
    pub fn warmup(&self, metric: &str) -> usize {
        self.exp.metric(metric).map_or(0, |m| m.warmup_iterations)
    }

    /// The cells the check judges: those its `cells` scope selects, or all.
    pub fn in_scope(&self) -> Vec<&'a CellStats> {
        self.cells
            .iter()
            .filter(|c| self.spec.scope.as_ref().is_none_or(|s| c.cell.is_in(s)))
            .collect()
    }

    /// Whether `cell`'s metric is read from a clock ([`super::resolution::clocked`]).
    pub fn clocked(&self, cell: &CellStats) -> bool {
        super::resolution::clocked(self.exp, &cell.metric)
    }

    /// The step `cell` moves in, where its values move in steps coarse beside it
    /// ([`super::resolution`]).
    pub fn step(&self, cell: &CellStats) -> Option<Step> {
        super::resolution::step_of(self.exp, self.cells, cell)
    }

    /// The name of the random stream of one bootstrap: `KIND/NAME`, then `/PART` if given.
    pub fn stream(&self, kind: &str, part: Option<&str>) -> String {
        match part {
            Some(part) => format!("{kind}/{}/{part}", self.spec.name),
            None => format!("{kind}/{}", self.spec.name),
        }
    }

    /// The ratio of two cells' medians judged by `rule`, or why it cannot be computed.
    pub fn ratio(
        &self,
        a: &CellStats,
        b: &CellStats,
        stream: &str,
        rule: Rule,
    ) -> Result<Decision, String> {
        if crate::analysis::slowed::all_exact(&[a, b]) {
            return self.ratio_undisturbed(a, b, stream, rule);
        }
        let (ratio, interval) = super::ratio::ratio_of(a, b, self.resampling, stream)?;
        let mut decision = Decision::new(ratio, interval, rule);
        decision.margin = self.margin;
        decision.verdict = rule.decide_reading(&interval, self.margin, self.clocked(a));
        decision.disturbance =
            super::disturbance::envelope(a, b, interval, self.resampling, stream);
        if let Some(disturbance) = decision.disturbance.as_mut() {
            decision.verdict = disturbance.weigh(rule, self.margin, decision.verdict);
        }
        self.resolve(a, b, &mut decision);
        Ok(decision)
    }
}

impl Context<'_> {
    /// [`Context::ratio`] of two cells whose every run that waited for a CPU is one whose
    /// undisturbed value is known: the ratio of those values, which the waiting does not
    /// touch, and what was taken out recorded beside it.
    fn ratio_undisturbed(
        &self,
        a: &CellStats,
        b: &CellStats,
        stream: &str,
        rule: Rule,
    ) -> Result<Decision, String> {
        use crate::analysis::slowed::{End, cell_at};
        let (a_now, b_now) = (cell_at(a, End::Low), cell_at(b, End::Low));
        let (ratio, interval) = super::ratio::ratio_of(&a_now, &b_now, self.resampling, stream)?;
        let mut decision = Decision::new(ratio, interval, rule);
        decision.margin = self.margin;
        decision.verdict = rule.decide_reading(&interval, self.margin, self.clocked(a));
        decision.disturbance = super::disturbance::taken_out(a, b, interval);
        self.resolve(a, b, &mut decision);
        Ok(decision)
    }

    /// `decision` on the ratio a/b taken again on its interval widened by one step of each
    /// cell at each end, where either cell moves in steps ([`super::resolution`]).
    fn resolve(&self, a: &CellStats, b: &CellStats, decision: &mut Decision) {
        use super::resolution::{fine_step, step_of, widen};
        let (sa, sb) = (
            step_of(self.exp, self.cells, a),
            step_of(self.exp, self.cells, b),
        );
        let coarser = match (sa, sb) {
            (Some(x), Some(y)) => Some(if y.share() > x.share() { y } else { x }),
            (x, y) => x.or(y),
        };
        let Some(step) = coarser else {
            return;
        };
        let q = |s: Option<Step>, c| s.map_or(Some(fine_step(self.cells, c)), |s| s.q);
        let b_value = b.median().unwrap_or(f64::NAN);
        let widened = widen(&decision.interval, b_value, q(sa, a), q(sb, b));
        self.settle(decision, widened, &step, &a.metric);
    }

    /// A median set against a number `scale` (its interval divided by it), taken again on its
    /// interval widened by one step at each end where `cell` moves in steps.
    pub fn resolve_against(&self, cell: &CellStats, scale: f64, decision: &mut Decision) {
        if let Some(step) = super::resolution::step_of(self.exp, self.cells, cell) {
            let widened = super::resolution::widen_by(&decision.interval, step.q, scale);
            self.settle(decision, widened, &step, &cell.metric);
        }
    }

    /// The verdict the widened interval leaves: a verdict it does not reach is inconclusive,
    /// and an interval of zero width (which decides nothing) gives way to it.
    fn settle(&self, decision: &mut Decision, widened: Interval, step: &Step, metric: &str) {
        let robust = decision.rule.decide_near(&widened, self.margin);
        let measured = decision.verdict;
        let zero_width = !super::rule::has_width(&decision.interval);
        let machine = decision.disturbance.is_some_and(|d| d.withheld);
        decision.verdict = if measured.decided() && robust != measured {
            Verdict::Inconclusive
        } else if !measured.decided() && zero_width && !machine {
            robust
        } else {
            measured
        };
        if decision.verdict == Verdict::Inconclusive {
            let unit = self.unit(metric);
            decision.resolution = Some(super::resolution::Resolved {
                reading: super::resolution::reading(metric, unit, step),
                widened,
            });
        }
    }
}

/// An estimate and its interval set against a rule, and the verdict the rule reached.
#[derive(Debug, Clone)]
pub struct Decision {
    pub estimate: f64,
    pub interval: Interval,
    pub rule: Rule,
    pub verdict: Verdict,
    /// The margin around the rule's threshold the verdict was reached with.
    pub margin: Option<f64>,
    /// What the machine's disturbance of the runs did to the verdict, where it slowed some.
    pub disturbance: Option<Disturbance>,
    /// Why the verdict was withheld where a cell moves in steps coarser than the decision.
    pub resolution: Option<super::resolution::Resolved>,
}

impl Decision {
    pub fn new(estimate: f64, interval: Interval, rule: Rule) -> Self {
        Decision {
            estimate,
            interval,
            rule,
            verdict: rule.decide(&interval),
            margin: None,
            disturbance: None,
            resolution: None,
        }
    }
}

/// What deciding a check found.
pub trait Outcome {
    fn verdict(&self) -> Verdict;
    /// The runs that decided the verdict, in the order the result lists them.
    fn runs(&self) -> Vec<String>;
    /// The decisions the verdict rests on, for what the machine's disturbance did to them.
    fn decisions(&self) -> Vec<&Decision> {
        Vec::new()
    }
}

/// What a check's outcome says in words, and what the forest chart draws of it.
#[derive(Default)]
pub struct Description {
    pub evidence: String,
    pub reading: String,
    pub ratio: Option<RatioEvidence>,
}

/// One kind of declared check, with its validated arguments.
pub trait Check<'a> {
    type Outcome: Outcome;
    /// The kind's name in lab.toml.
    const KIND: &'static str;
    /// The outcome on this session, or why the check could not be run.
    fn decide(&self, cx: &Context<'a>) -> Result<Self::Outcome, String>;
    /// The reading and evidence of an outcome.
    fn describe(&self, outcome: &Self::Outcome) -> Description;
    /// The correlation an outcome was decided on, for the kinds that decide on one.
    fn correlation(&self, _outcome: &Self::Outcome) -> Option<CorrelationEvidence> {
        None
    }
    /// The figures an outcome's evidence prints that link to how they were computed, in the
    /// order it prints them.
    fn figures(&self, _outcome: &Self::Outcome) -> Vec<CheckFigure> {
        Vec::new()
    }
}

/// A kind of check declared in lab.toml, read from its validated arguments.
pub trait Declared<'a>: Check<'a> + Sized {
    /// The check `cx.spec` declares, if it is of this kind.
    fn of(cx: &Context<'a>) -> Option<Self>;
}

/// The result of the check `cx.spec` declares, if it is of kind `C`.
pub fn declared<'a, C: Declared<'a>>(cx: &Context<'a>) -> Option<CheckResult> {
    C::of(cx).map(|check| judge(&check, cx))
}

/// Decides `check` on `cx` and describes what it found.
pub fn judge<'a, C: Check<'a>>(check: &C, cx: &Context<'a>) -> CheckResult {
    finish(cx.spec, check, check.decide(cx))
}

/// The result of a decided check: not run, with the reason as its reading, or its outcome
/// described.
pub fn finish<'a, C: Check<'a>>(
    spec: &CheckSpec,
    check: &C,
    decided: Result<C::Outcome, String>,
) -> CheckResult {
    let base = CheckResult::new(&spec.name, C::KIND, spec.class, Verdict::NotRun);
    match decided {
        Err(why) => base.reading(why),
        Ok(outcome) => {
            let words = check.describe(&outcome);
            let result = CheckResult {
                verdict: outcome.verdict(),
                evidence: words.evidence,
                reading: words.reading,
                runs: outcome.runs(),
                ratio: words.ratio,
                correlation: check.correlation(&outcome),
                figures: check.figures(&outcome),
                ..base
            };
            let decisions = outcome.decisions();
            let result = at_threshold(result, &decisions);
            let result = disturbance(result, &decisions);
            resolution(result, &decisions)
        }
    }
}

/// One side of a ratio as the forest chart labels it: a cell, or a ceiling.
pub struct Side<'s> {
    pub label: &'s str,
    pub value: f64,
}

impl<'s> Side<'s> {
    /// A cell, at its median.
    pub fn cell(cell: &'s CellStats) -> Self {
        Side {
            label: &cell.label,
            value: cell.median().unwrap_or(f64::NAN),
        }
    }
}

impl Decision {
    /// The ratio `a / b` this decision judged, as the forest chart draws it against
    /// `threshold`, with what the check asks of it in a few symbols.
    pub fn chart(
        &self,
        a: Side,
        b: Side,
        threshold: f64,
        needs: String,
        level: f64,
    ) -> RatioEvidence {
        RatioEvidence {
            a: a.label.to_string(),
            b: b.label.to_string(),
            a_value: a.value,
            b_value: b.value,
            ratio: self.estimate,
            lo: self.interval.lo,
            hi: self.interval.hi,
            threshold,
            needs,
            level,
        }
    }
}

/// `result` read as at the threshold, when it is: "at the threshold: 0.098 [0.092, 0.104],
/// within ±10.0% of 0.100 — the data cannot tell which side, and more runs would not change
/// what it means".
fn at_threshold(mut result: super::CheckResult, decisions: &[&Decision]) -> super::CheckResult {
    if result.verdict != super::Verdict::AtThreshold {
        return result;
    }
    let near = decisions
        .iter()
        .find(|d| d.verdict == super::Verdict::AtThreshold);
    if let Some(d) = near {
        result.reading = format!(
            "at the threshold: {}, within ±{} of {} — the data cannot tell which side, and more runs would not change what it means",
            ratio_interval(d.estimate, d.interval.lo, d.interval.hi),
            percent(d.margin.unwrap_or(0.0)),
            threshold(d.rule)
        );
    }
    result
}

/// Runs that waited less than this share of their wall time are not worth a sentence.
const NOTABLE_WAIT: f64 = 0.01;

/// `result` with what the machine's disturbance did to the `decisions` it rests on: a verdict
/// withheld reads "machine busy" with what the runs waited and the range the undisturbed
/// ratio could take; a verdict that stands says in its evidence what it rests on.
fn disturbance(mut result: super::CheckResult, decisions: &[&Decision]) -> super::CheckResult {
    let weighed = decisions
        .iter()
        .filter_map(|d| Some((*d, d.disturbance?)))
        .max_by(|(_, a), (_, b)| {
            (a.withheld, a.most)
                .partial_cmp(&(b.withheld, b.most))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    let Some((decision, found)) = weighed else {
        return result;
    };
    let envelope = Some([found.envelope.lo, found.envelope.hi]);
    if found.withheld && result.verdict == super::Verdict::Inconclusive {
        let (cause, reading) = busy_reading(decision, &found);
        result.reading = reading;
        result.busy = Some(cause);
        result.undisturbed = envelope.filter(|_| found.reshaped == 0);
    } else if found.most >= NOTABLE_WAIT {
        let evidence = waiting_evidence(result.verdict, &found);
        result.evidence.push_str(&evidence);
        result.undisturbed = envelope.filter(|_| !found.taken_out);
    }
    result
}

/// Why the machine withheld `decision`'s verdict, and the reading that says so.
fn busy_reading(decision: &Decision, found: &Disturbance) -> (String, String) {
    let (iv, env) = (&decision.interval, &found.envelope);
    if found.reshaped > 0 {
        let cause = format!(
            "{} parallel run{} waited for a CPU others had for up to {} of their wall time",
            found.reshaped,
            if found.reshaped == 1 { "" } else { "s" },
            percent(found.most)
        );
        let reading = format!(
            "machine busy: {cause}, and threads that wait interleave otherwise, so {} could be anything undisturbed; quiet the machine or add runs",
            ratio_interval(decision.estimate, iv.lo, iv.hi),
        );
        (cause, reading)
    } else {
        let cause = format!(
            "runs waited for a CPU others had for up to {} of their wall time",
            percent(found.most)
        );
        let reading = format!(
            "machine busy: {cause}, as much as separates {} from {}: undisturbed it could lie anywhere in {}; quiet the machine or add runs",
            ratio_interval(decision.estimate, iv.lo, iv.hi),
            threshold(decision.rule),
            lab_config::format::ratio_bounds(env.lo, env.hi)
        );
        (cause, reading)
    }
}

/// What the evidence of a verdict that stands adds about runs that waited.
fn waiting_evidence(verdict: super::Verdict, found: &Disturbance) -> String {
    if found.taken_out {
        return format!(
            "; {} of {} runs waited for a CPU others had (up to {} of their wall time), and each run's own waiting is taken out of its wall time: one task worked in each, and a single task's waiting adds to its wall time exactly",
            found.slowed_runs,
            found.runs,
            percent(found.most)
        );
    }
    let consequence = if matches!(verdict, super::Verdict::Pass | super::Verdict::Fail) {
        "which cannot explain the verdict: undisturbed the ratio lies within"
    } else {
        "so undisturbed the ratio could lie anywhere in"
    };
    format!(
        "; {} of {} runs waited for a CPU others had (up to {} of their wall time), {consequence} {}",
        found.slowed_runs,
        found.runs,
        percent(found.most),
        lab_config::format::ratio_bounds(found.envelope.lo, found.envelope.hi)
    )
}

/// `result` with why a cell's steps withheld its verdict, where they did: the reading names
/// the step, and the evidence the interval widened by it. Where no step is known but an
/// interval has zero width, the reading says it decides nothing.
fn resolution(mut result: super::CheckResult, decisions: &[&Decision]) -> super::CheckResult {
    if result.verdict != super::Verdict::Inconclusive {
        return result;
    }
    if let Some(found) = decisions.iter().find_map(|d| d.resolution.as_ref()) {
        result.reading = found.reading.clone();
        result.evidence.push_str(&format!(
            "; widened by one step at each end, the interval is {}",
            lab_config::format::ratio_bounds(found.widened.lo, found.widened.hi)
        ));
    } else if let Some(d) = decisions
        .iter()
        .find(|d| d.verdict == super::Verdict::Inconclusive && !super::rule::has_width(&d.interval))
    {
        result.reading = format!(
            "the interval {} has zero width: its runs printed too few distinct values, and an interval of zero width decides nothing; time with a finer clock or add runs",
            ratio_interval(d.estimate, d.interval.lo, d.interval.hi)
        );
    }
    result
}

/// The threshold a rule sets a ratio against: "1.05", "the band [0.95, 1.05]".
fn threshold(rule: super::rule::Rule) -> String {
    use super::rule::Rule;
    match rule {
        Rule::Compare(_, t) => lab_config::format::ratio(t),
        Rule::Within(lo, hi) | Rule::Outside(lo, hi) => {
            format!("the band {}", lab_config::format::ratio_bounds(lo, hi))
        }
    }
}
