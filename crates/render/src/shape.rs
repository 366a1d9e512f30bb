//! The Shape column of the results tables: what the modality, drift, steady-state, machines
//! and design-effect analyses found in a cell, in a few words, each mode and the drift's slope
//! linked to its number.

use super::escape::{html, markdown};
use super::numbers::{NumberId, Statistic, distinct_modes, shown_drift};
use lab_config::format::{number, p_value, percent, significant};
use lab_findings::analysis::CellStats;

/// The note as the table shows it, each part made inert as the template makes a plain value,
/// with each mode's median linked to its number where `id` names one.
pub(crate) fn shape_note(c: &CellStats, unit: &str, id: NumberId) -> String {
    let mut notes: Vec<String> = modes_note(c, unit, id).into_iter().collect();
    notes.extend(drift_note(c, unit, id));
    notes.extend(other_notes(c, unit).iter().map(|n| inert(n)));
    notes.join("; ")
}

/// "drift: -0.00609 per run position (Mann–Kendall p = 0.030)", the slope linked.
fn drift_note(c: &CellStats, unit: &str, id: NumberId) -> Option<String> {
    let drift = shown_drift(c)?;
    let slope = linked(
        &number(drift.slope_per_position, unit),
        id(c, Statistic::Drift),
    );
    let test = inert(&format!("(Mann–Kendall {})", p_value(drift.test.p_value)));
    Some(format!("drift: {slope} per run position {test}"))
}

/// "2 modes: 57.8 (62.5%), 59.5 (37.5%)", each median linked.
fn modes_note(c: &CellStats, unit: &str, id: NumberId) -> Option<String> {
    let modes = distinct_modes(c, unit)?;
    let statistics = [Statistic::ModeLow, Statistic::ModeHigh];
    let shown: Vec<String> = modes
        .iter()
        .zip(statistics)
        .map(|((median, share), statistic)| {
            let median = linked(median, id(c, statistic));
            format!("{median} ({})", inert(&percent(*share)))
        })
        .collect();
    Some(format!("{} modes: {}", modes.len(), shown.join(", ")))
}

/// `text` made inert, linked to its number on the provenance page where `id` names one.
fn linked(text: &str, id: Option<String>) -> String {
    match id {
        Some(id) => format!("[{}](provenance.md#{})", inert(text), html(&id)),
        None => inert(text),
    }
}

/// Text made inert as the template makes a plain value: for Markdown, then for HTML.
fn inert(text: &str) -> String {
    html(&markdown(text))
}

/// The steady state, the machines and the design effect, each in a few words.
fn other_notes(c: &CellStats, unit: &str) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(steady) = &c.steady {
        notes.push(format!("runs: {}", steady.describe()));
    }
    if let Some(machines) = machines_note(c, unit) {
        notes.push(machines);
    }
    if let Some(d) = c
        .design_effect
        .as_ref()
        .filter(|d| d.naive_ci_understatement > 1.5)
    {
        notes.push(format!(
            "pooling iterations would understate the CI {}×",
            significant(d.naive_ci_understatement, 2)
        ));
    }
    notes
}

/// "runs on 3 nodes: the CI resamples nodes, then runs (runs alone: [98.7, 101])", for a
/// cell whose runs came from several machines.
fn machines_note(c: &CellStats, unit: &str) -> Option<String> {
    let m = c.machines.as_ref()?;
    let alone = m.runs_only_ci.map_or_else(String::new, |ci| {
        format!(
            " (runs alone: [{}, {}])",
            number(ci.lo, unit),
            number(ci.hi, unit)
        )
    });
    Some(format!(
        "runs on {} nodes: the CI resamples nodes, then runs{alone}",
        m.names.len()
    ))
}
