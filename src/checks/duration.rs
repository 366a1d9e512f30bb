//! `duration`: the verdict of the validity stage's duration rule (seed 000, traps 2 and 3),
//! built from its judgement: how many runs were judged and which fell outside the tolerance.

use super::verdict::{CheckResult, Verdict};
use crate::config::CheckSpec;
use crate::format::seconds;
use crate::validity::DurationJudgement;

/// The check's result from what the validity stage found.
pub fn check(spec: &CheckSpec, judgement: &DurationJudgement) -> CheckResult {
    let (judged, tolerance, outside) = (judgement.judged, judgement.tolerance, &judgement.outside);
    let source = judgement
        .metric
        .as_deref()
        .map_or_else(|| "wall time".to_string(), |m| format!("`{m}`"));
    let base = CheckResult::new(&spec.name, "duration", spec.class, Verdict::NotRun);
    if judged == 0 {
        return base.reading("no valid run to judge");
    }
    let verdict = if outside.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let evidence = format!(
        "{} of {judged} runs outside ±{:.1}% by {source}",
        match outside.len() {
            0 => "none".to_string(),
            k => k.to_string(),
        },
        tolerance * 100.0
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
    CheckResult { verdict, ..base }
        .evidence(evidence)
        .reading(reading)
        .runs(outside.iter().map(|o| o.0.clone()).collect())
}
