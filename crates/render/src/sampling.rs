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

/// The view of a sampled session's looks; `None` for a fixed number of runs.
pub fn view(exp: &Experiment, looks: &[Standing]) -> Option<SamplingView> {
    let last = looks.last()?;
    let sentence = with_code_spans(&format!(
        "{} Each look reads its intervals at its own level, so that the chance of any interval missing over all looks stays within 5% (Lan–DeMets error spending).",
        last.sentence(exp)
    ));
    let shown = format!("intervals at {}", level(last.level));
    Some(SamplingView {
        sentence_md: super::answer::link_first(&sentence, &shown, |found| {
            let (words, number) = found.rsplit_once(' ').unwrap_or(("", found));
            format!("{words} [{number}](provenance.md#{})", level_id(last.look))
        }),
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
