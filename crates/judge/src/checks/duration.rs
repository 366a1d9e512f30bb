//! `duration`: the verdict of the validity stage's duration rule (seed 000, traps 2 and 3),
//! built from its judgement: how many runs were judged and which fell outside the tolerance.

use super::shape::{Check, Context, Description, Outcome};
use crate::validity::DurationJudgement;
use lab_config::format::seconds;
use lab_findings::checks::Verdict;

/// A declared `duration` check, with what the validity stage found.
pub(super) struct Duration<'a>(pub &'a DurationJudgement);

/// The validity stage's judgement, decided.
pub(super) struct Lasted<'a>(&'a DurationJudgement);

impl Outcome for Lasted<'_> {
    fn verdict(&self) -> Verdict {
        if self.0.outside.is_empty() {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }

    fn runs(&self) -> Vec<String> {
        self.0.outside.iter().map(|o| o.0.clone()).collect()
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
        let evidence = format!(
            "{} of {judged} runs outside ±{:.1}% by {source}",
            match outside.len() {
                0 => "none".to_string(),
                k => k.to_string(),
            },
            j.tolerance * 100.0
        );
        let reading = match outside
            .iter()
            .max_by(|a, b| (a.1 - a.2).abs().total_cmp(&(b.1 - b.2).abs()))
        {
            None => format!("all {judged} runs lasted what they asked for"),
            Some((id, measured, requested)) => format!(
                "run {id} took {} for a {} request",
                seconds(*measured),
                seconds(*requested)
            ),
        };
        Description {
            evidence,
            reading,
            ratio: None,
        }
    }
}
