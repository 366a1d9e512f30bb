//! A sampled session's looks as the chapter shows them: why sampling stopped, one row per
//! look, and a note under each hypothesis saying at which look it was decided.

use lab_config::format::level;
use lab_config::{Experiment, Goal};
use lab_findings::stopping::{Next, Standing};
use serde::Serialize;

/// The "Sampling" paragraph and its table.
#[derive(Debug, Serialize)]
pub struct SamplingView {
    pub sentence: String,
    pub looks: Vec<LookRow>,
}

#[derive(Debug, Serialize)]
pub struct LookRow {
    pub look: u32,
    pub runs_per_cell: u32,
    pub level: String,
    /// What the goal still lacked at this look, or "nothing: the goal was met".
    pub open: String,
}

/// The view of a sampled session's looks; `None` for a fixed number of runs.
pub fn view(exp: &Experiment, looks: &[Standing]) -> Option<SamplingView> {
    let last = looks.last()?;
    Some(SamplingView {
        sentence: format!(
            "{} Each look reads its intervals at its own level, so that the chance of any interval missing over all looks stays within 5% (Lan–DeMets error spending).",
            last.sentence(exp)
        ),
        looks: looks
            .iter()
            .map(|s| LookRow {
                look: s.look,
                runs_per_cell: s.runs_per_cell,
                level: level(s.level),
                open: if s.unmet.is_empty() {
                    "nothing: the goal was met".into()
                } else {
                    s.unmet.join("; ")
                },
            })
            .collect(),
    })
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
