//! A sampled session's looks as the chapter shows them: why sampling stopped, one row per
//! look, and a note under each hypothesis saying at which look it was decided.

use super::number::{Number, Subject};
use crate::escape::with_code_spans;
use lab_config::format::level;
use lab_config::{Experiment, Goal};
use lab_findings::stopping::{Next, Standing};
use serde::Serialize;

/// The "Sampling" paragraph and its table.
#[derive(Debug, Serialize)]
pub struct SamplingView {
    /// Why sampling stopped, the last look's level linked (Markdown lab composes).
    pub sentence_md: String,
    pub looks: Vec<LookRow>,
}

#[derive(Debug, Serialize)]
pub struct LookRow {
    pub look: u32,
    pub runs_per_cell: u32,
    pub level: String,
    /// The id of the level's number on the provenance page.
    pub level_id: String,
    /// What the goal still lacked at this look, or "nothing: the goal was met".
    pub open: String,
}

/// The view of a sampled session's looks; `None` for a fixed number of runs. `decided` gives
/// a check's number (its id and text), for the estimate of a hypothesis still open.
pub fn view(
    exp: &Experiment,
    looks: &[Standing],
    decided: &dyn Fn(&str) -> Option<(String, String)>,
) -> Option<SamplingView> {
    let last = looks.last()?;
    let sentence = with_code_spans(&format!(
        "{} Each look reads its intervals at its own level, so that the chance of any interval missing over all looks stays within 5% (Lan–DeMets error spending).",
        last.sentence(exp)
    ));
    let shown = format!("intervals at {}", level(last.level));
    let sentence = super::answer::link_first(&sentence, &shown, |found| {
        let (words, number) = found.rsplit_once(' ').unwrap_or(("", found));
        format!("{words} [{number}](provenance.md#{})", level_id(last.look))
    });
    Some(SamplingView {
        sentence_md: linked_open(sentence, &last.unmet, decided),
        looks: looks
            .iter()
            .map(|s| LookRow {
                look: s.look,
                runs_per_cell: s.runs_per_cell,
                level: level(s.level),
                level_id: level_id(s.look),
                open: if s.unmet.is_empty() {
                    "nothing: the goal was met".into()
                } else {
                    s.unmet.join("; ")
                },
            })
            .collect(),
    })
}

/// `sentence` with the estimate of each hypothesis still open linked to its check's number,
/// where the sentence prints it: "NAME (1.21 [1.14, 1.28] now: …".
fn linked_open(
    sentence: String,
    open: &[String],
    decided: &dyn Fn(&str) -> Option<(String, String)>,
) -> String {
    open.iter().fold(sentence, |text, name| {
        let Some((id, number)) = decided(name) else {
            return text;
        };
        let shown = with_code_spans(&format!("{name} ({number} now"));
        super::answer::link_first(&text, &shown, |_| {
            let head = with_code_spans(&format!("{name} ("));
            format!(
                "{head}[{}](provenance.md#{id}) now",
                with_code_spans(&number)
            )
        })
    })
}

/// The id of the level look `look` read its intervals at.
fn level_id(look: u32) -> String {
    format!("sampling.look-{look}.level")
}

/// The level each look of a sampled session read its intervals at, as its table prints it.
pub(crate) fn look_numbers(exp: &Experiment, looks: &[Standing]) -> Vec<Number> {
    let Some(sampling) = &exp.sampling else {
        return Vec::new();
    };
    let before = std::iter::once(0).chain(looks.iter().map(|s| s.runs_per_cell));
    looks
        .iter()
        .zip(before)
        .map(|(s, before)| Number {
            id: level_id(s.look),
            value: level(s.level),
            lo: None,
            hi: None,
            unit: String::new(),
            what: Subject::Look {
                look: s.look,
                runs_per_cell: s.runs_per_cell,
                before,
                max: sampling.max,
            },
        })
        .collect()
}

/// Under a hypothesis check of a session sampled until decided: when it was decided, or
/// that it was still open when sampling stopped. Where decisions are `kept` (analysis 3 on),
/// a hypothesis is reported as it was decided, at its look.
pub fn check_note(exp: &Experiment, looks: &[Standing], check: &str, kept: bool) -> Option<String> {
    if !matches!(exp.sampling.as_ref()?.goal, Goal::Decided) {
        return None;
    }
    let last = looks.last()?;
    let open_at = |s: &Standing| s.unmet.iter().any(|u| u == check);
    if open_at(last) {
        let why = match last.next {
            Next::BudgetSpent => "the budget was spent",
            Next::NothingToAdd => "no cell could take more runs",
            Next::TimeSpent(_) => "the time budget was spent",
            _ => "the session ended",
        };
        return Some(format!(
            "still undecided at look {} ({} runs per cell): {why}",
            last.look, last.runs_per_cell
        ));
    }
    let decided = looks
        .iter()
        .rev()
        .take_while(|s| !open_at(s))
        .last()
        .unwrap_or(last);
    if decided.look == last.look || kept {
        return Some(format!(
            "decided at look {} ({} runs per cell)",
            decided.look, decided.runs_per_cell
        ));
    }
    Some(format!(
        "decided from look {} ({} runs per cell) on; read at look {} ({} runs per cell, {})",
        decided.look,
        decided.runs_per_cell,
        last.look,
        last.runs_per_cell,
        level(last.level)
    ))
}

#[cfg(test)]
mod open_tests {
    use super::*;

    #[test]
    fn the_estimate_of_a_hypothesis_still_open_links_to_its_checks_number() {
        let sentence = with_code_spans(
            "Sampling stopped at look 4: still open: recovers (1.21 [1.14, 1.28] now: about 30 runs per cell, 1 min 30 s more, would likely decide it); no dip (likely not within 40 runs per cell: about 52 would decide it).",
        );
        let decided = |name: &str| {
            (name != "gone").then(|| {
                let number = if name == "recovers" {
                    "1.21 [1.14, 1.28]"
                } else {
                    "0.98 [0.88, 1.16]"
                };
                (format!("check.{name}.ratio"), number.to_string())
            })
        };
        let open = [
            "recovers".to_string(),
            "no dip".to_string(),
            "gone".to_string(),
        ];
        let linked = linked_open(sentence, &open, &decided);
        assert!(
            linked.contains("still open: recovers ([1.21 \\[1.14, 1.28\\]](provenance.md#check.recovers.ratio) now: about 30 runs"),
            "{linked}"
        );
        // An open hypothesis whose estimate the sentence does not print stays as it was.
        assert!(
            linked.contains("no dip (likely not within 40 runs"),
            "{linked}"
        );
        assert_eq!(linked.matches("](provenance.md#").count(), 1, "{linked}");
    }
}
