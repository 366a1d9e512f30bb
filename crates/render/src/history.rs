//! The History page of an experiment: every cell's metric across sessions in time order, one
//! chart per variant with the steps drawn where they happened, and a table naming each step's
//! first session and commit.

use super::figures::{ChartView, Figure, Text};
use crate::charts::{ScalingChart, Series, SeriesPoint, XMark, scaling_svg, style};
use anyhow::Result;
use lab_config::format::{number, percent, ratio};
use lab_findings::history::{CellHistory, History, StepKind};
use serde::Serialize;

/// The page's template context.
#[derive(Serialize)]
pub(crate) struct HistoryView {
    pub title: String,
    pub sentence: String,
    pub sessions: Vec<SessionRow>,
    pub charts: Vec<ChartView>,
    pub cells: Vec<CellRow>,
    pub regressed_latest: bool,
}

#[derive(Serialize)]
pub(crate) struct SessionRow {
    pub number: usize,
    pub name: String,
    pub started: String,
    pub commit: String,
    pub label: String,
    pub machine: String,
}

#[derive(Serialize)]
pub(crate) struct CellRow {
    pub cell: String,
    /// Each session's median, linked to its number (Markdown lab composes).
    pub levels_md: String,
    pub steps: String,
}

/// The page's context and its figures (to be written beside it).
pub(crate) fn view(
    title: &str,
    h: &History,
    ids: &super::provenance::Ids,
) -> Result<(HistoryView, Vec<Figure>)> {
    let figures = charts(h)?;
    let view = HistoryView {
        title: title.to_string(),
        sentence: sentence(h),
        sessions: h
            .sessions
            .iter()
            .map(|s| SessionRow {
                number: s.number,
                name: s.name.clone(),
                started: s.started_utc.clone(),
                commit: s.commit.clone(),
                label: s.label.clone().unwrap_or_default(),
                machine: if s.unlike_newest.is_empty() {
                    "as the newest".into()
                } else {
                    format!("* {}", s.unlike_newest.join("; "))
                },
            })
            .collect(),
        charts: figures.iter().map(ChartView::of).collect(),
        cells: h.cells.iter().map(|c| cell_row(h, c, ids)).collect(),
        regressed_latest: h.regressed_latest,
    };
    Ok((view, figures))
}

fn sentence(h: &History) -> String {
    let steps: usize = h.cells.iter().map(|c| c.steps.len()).sum();
    format!(
        "{} of {} session{} in time order ({}{}, {} is better). Steps are looked for from {} sessions on, in the sessions' medians and their intervals; a step is reported when it lies beyond ±{} and holds at 95% over all cells together. {} step{} found.",
        h.metric,
        h.sessions.len(),
        if h.sessions.len() == 1 { "" } else { "s" },
        h.metric,
        if h.unit.is_empty() {
            String::new()
        } else {
            format!(" in {}", h.unit)
        },
        h.better,
        lab_findings::history::MIN_SESSIONS,
        percent(h.threshold),
        steps,
        if steps == 1 { "" } else { "s" }
    )
}

fn cell_row(h: &History, c: &CellHistory, ids: &super::provenance::Ids) -> CellRow {
    let level = |p: &lab_findings::history::HistoryPoint| {
        let shown = number(p.median, &h.unit);
        match ids.history(&c.cell, p.session) {
            Some(id) => format!("{}: [{shown}](provenance.md#{id})", p.session),
            None => format!("{}: {shown}", p.session),
        }
    };
    CellRow {
        cell: c.cell.clone(),
        levels_md: c.points.iter().map(level).collect::<Vec<_>>().join(", "),
        steps: if c.steps.is_empty() {
            "none".into()
        } else {
            c.steps
                .iter()
                .map(|s| {
                    format!(
                        "{} {} from session {} (commit {})",
                        s.kind.word(),
                        ratio(s.ratio),
                        s.session,
                        s.commit
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        },
    }
}

/// One chart per variant: a line per cell across session numbers.
fn charts(h: &History) -> Result<Vec<Figure>> {
    let mut variants: Vec<&str> = Vec::new();
    for c in &h.cells {
        if !variants.contains(&c.variant.as_str()) {
            variants.push(&c.variant);
        }
    }
    variants
        .iter()
        .enumerate()
        .map(|(i, variant)| chart(h, variant, i))
        .collect()
}

fn chart(h: &History, variant: &str, index: usize) -> Result<Figure> {
    let cells: Vec<&CellHistory> = h.cells.iter().filter(|c| c.variant == variant).collect();
    let series = cells
        .iter()
        .map(|c| Series {
            name: c.cell.clone(),
            points: c
                .points
                .iter()
                .map(|p| SeriesPoint {
                    x: p.session as f64,
                    center: p.median,
                    lo: p.lo.unwrap_or(f64::NAN),
                    hi: p.hi.unwrap_or(f64::NAN),
                    raw: p.run_values.clone(),
                })
                .collect(),
        })
        .collect();
    let chart = ScalingChart {
        title: format!("{variant}: {} by session", h.metric),
        x_label: "session, in time order (* another machine)".into(),
        y_label: if h.unit.is_empty() {
            h.metric.clone()
        } else {
            format!("{} ({})", h.metric, h.unit)
        },
        log_x: false,
        series,
        marks: marks(h, &cells),
    };
    let text = Text {
        heading: variant.to_string(),
        alt: format!("{} of {variant}'s cells across sessions", h.metric),
        caption: "Lines join each session's median; bars are its interval; faint points are individual runs. A rule marks the first session after a step; a rule marked * a session measured on another kind of machine.".into(),
    };
    Figure::new(&format!("history-{}", index + 1), text, |size| {
        scaling_svg(&chart, size)
    })
}

/// A rule at every step of these cells (at the first session after it) and at every session
/// measured on another kind of machine.
fn marks(h: &History, cells: &[&CellHistory]) -> Vec<XMark> {
    let mut out: Vec<XMark> = Vec::new();
    for s in cells.iter().flat_map(|c| &c.steps) {
        if out.iter().any(|m| m.x == s.session as f64 - 0.5) {
            continue;
        }
        out.push(XMark {
            x: s.session as f64 - 0.5,
            label: s.kind.word().into(),
            color: match s.kind {
                StepKind::Regression => style::VERDICT_FAIL,
                StepKind::Improvement => style::VERDICT_PASS,
            },
        });
    }
    for s in h.sessions.iter().filter(|s| !s.unlike_newest.is_empty()) {
        out.push(XMark {
            x: s.number as f64,
            label: "*".into(),
            color: style::VERDICT_NOT_RUN,
        });
    }
    out
}
