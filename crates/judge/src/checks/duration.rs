//! `duration`: the verdict of the validity stage's duration rule (seed 000, traps 2 and 3),
//! built from its judgement: how many runs were judged and which fell outside the tolerance.
//! Runs past it by no more than the machine held them back withhold the verdict ("machine
//! busy") rather than fail it.

use super::shape::{Check, Context, Description, Outcome, judge};
use crate::validity::{DurationJudgement, HeldBack};
use lab_config::format::seconds;
use lab_findings::checks::{CheckResult, Verdict};

/// The declared check's result; a verdict withheld for a busy machine says so in `busy`.
pub(super) fn result(judgement: &DurationJudgement, cx: &Context) -> CheckResult {
    let mut result = judge(&Duration(judgement), cx);
    if result.verdict == Verdict::Inconclusive {
        result.busy = most_held_back(judgement).map(held_back_cause);
    }
    result
}

/// The held-back run that overshot the most.
fn most_held_back(j: &DurationJudgement) -> Option<&HeldBack> {
    j.held_back
        .iter()
        .max_by(|a, b| (a.measured - a.requested).total_cmp(&(b.measured - b.requested)))
}

/// "run 7 took 0.515 s for a 0.500 s request and waited 0.021 s for a CPU others had".
fn held_back_cause(h: &HeldBack) -> String {
    format!(
        "run {} took {} for a {} request and waited {} for a CPU others had",
        h.run,
        seconds(h.measured),
        seconds(h.requested),
        seconds(h.waited)
    )
}

/// A declared `duration` check, with what the validity stage found.
pub(super) struct Duration<'a>(pub &'a DurationJudgement);

/// The validity stage's judgement, decided.
pub(super) struct Lasted<'a>(&'a DurationJudgement);

impl Outcome for Lasted<'_> {
    fn verdict(&self) -> Verdict {
        match (self.0.outside.is_empty(), self.0.held_back.is_empty()) {
            (false, _) => Verdict::Fail,
            (true, false) => Verdict::Inconclusive,
            (true, true) => Verdict::Pass,
        }
    }

    fn runs(&self) -> Vec<String> {
        if self.0.outside.is_empty() {
            self.0.held_back.iter().map(|h| h.run.clone()).collect()
        } else {
            self.0.outside.iter().map(|o| o.0.clone()).collect()
        }
    }
}

impl<'a, 'j> Check<'a> for Duration<'j> {
    type Outcome = Lasted<'j>;
    const KIND: &'static str = "duration";

    fn decide(&self, _: &Context<'a>) -> Result<Lasted<'j>, String> {
        if self.0.judged == 0 {
            return Err("no valid run to judge".into());
        }
        Ok(Lasted(self.0))
    }

    fn describe(&self, lasted: &Lasted) -> Description {
        let j = lasted.0;
        let (judged, outside) = (j.judged, &j.outside);
        let source = j
            .metric
            .as_deref()
            .map_or_else(|| "wall time".to_string(), |m| format!("`{m}`"));
        let mut evidence = format!(
            "{} of {judged} runs outside ±{:.1}% by {source}",
            match outside.len() {
                0 => "none".to_string(),
                k => k.to_string(),
            },
            j.tolerance * 100.0
        );
        if !j.held_back.is_empty() {
            evidence.push_str(&format!(
                "; {} more past it by no more than they waited for a CPU",
                j.held_back.len()
            ));
        }
        let reading = match (worst(outside), most_held_back(j)) {
            (Some((id, measured, requested)), _) => format!(
                "run {id} took {} for a {} request",
                seconds(*measured),
                seconds(*requested)
            ),
            (None, Some(held)) => format!(
                "machine busy: {}, which could explain it; quiet the machine or add runs",
                held_back_cause(held)
            ),
            (None, None) => format!("all {judged} runs lasted what they asked for"),
        };
        Description {
            evidence,
            reading,
            ratio: None,
        }
    }
}

/// The run outside the tolerance by the most.
fn worst(outside: &[(String, f64, f64)]) -> Option<&(String, f64, f64)> {
    outside
        .iter()
        .max_by(|a, b| (a.1 - a.2).abs().total_cmp(&(b.1 - b.2).abs()))
}

#[cfg(test)]
#[path = "duration_tests.rs"]
mod tests;
