//! The chapter's "Compared with" section: the session before this one (or, for a session
//! across revisions, the base revision) against this one, cell by cell, with a forest chart
//! of the ratios and what differs between the two records.

use super::figures::{ChartView, Figure, Text};
use super::numbering::Numbering;
use crate::charts::{ForestChart, ForestRow, Verdict, forest_svg};
use anyhow::Result;
use lab_config::format::{level, number, percent};
use lab_findings::compare::{CellChange, Change, Comparison};
use serde::Serialize;

/// The section's template context.
#[derive(Serialize)]
pub(crate) struct ComparedView {
    pub heading: String,
    pub sentence: String,
    /// Differences that can make the ratios meaningless.
    pub warnings: Vec<String>,
    /// Differences that are what a comparison is about (commit, lab version).
    pub facts: Vec<String>,
    pub chart: Option<ChartView>,
    /// "Table N." and what the table holds, with its anchor (HTML lab composes).
    pub caption: String,
    pub level: String,
    pub rows: Vec<ComparedRow>,
    /// The latest noise measurement of the experiment, quoted.
    pub noise: Option<String>,
}

#[derive(Serialize)]
pub(crate) struct ComparedRow {
    pub cell: String,
    pub before: String,
    pub after: String,
    /// The ids of the medians on the chapter's page of where each number comes from.
    pub before_id: Option<String>,
    pub after_id: Option<String>,
    pub ratio: String,
    /// The id of the ratio on the chapter's page of where each number comes from.
    pub ratio_id: Option<String>,
    /// "±1.8%": the smallest change the interval could tell from none.
    pub resolution: String,
    pub verdict: String,
}

/// The section and its figure (to be written beside the chapter).
pub(crate) fn view(c: &Comparison) -> Result<(ComparedView, Option<Figure>)> {
    let figure = figure(c)?;
    let (loud, quiet): (Vec<_>, Vec<_>) = c.differences.iter().partition(|d| d.invalidates);
    let view = ComparedView {
        heading: format!("Compared with {}", c.a),
        sentence: format!(
            "{} of {} against {}, changes within ±{} counting as noise: {}.",
            c.metric,
            c.b,
            c.a,
            percent(c.threshold),
            c.summary
        ),
        warnings: loud.iter().map(|d| d.line()).collect(),
        facts: quiet.iter().map(|d| d.line()).collect(),
        chart: figure.as_ref().map(ChartView::of),
        caption: String::new(),
        level: level(c.level),
        rows: c.cells.iter().map(|x| row(c, x)).collect(),
        noise: c.noise.clone(),
    };
    Ok((view, figure))
}

impl ComparedView {
    /// The section with its chart and table numbered among the chapter's.
    pub(crate) fn numbered(mut self, figure: Option<&Figure>, numbering: &Numbering) -> Self {
        self.chart = figure.map(|f| ChartView::placed(f, numbering.place(f)));
        self.caption = numbering.table_caption(
            "comparison",
            "Each cell's median in the session before and in this one, with their ratio.",
        );
        self
    }
}

fn row(c: &Comparison, x: &CellChange) -> ComparedRow {
    let median = |m: Option<f64>| m.map_or_else(|| "n/a".into(), |v| number(v, &c.unit));
    ComparedRow {
        cell: x.cell.clone(),
        before: median(x.a_median),
        after: median(x.b_median),
        ratio: match (x.ratio, x.lo, x.hi) {
            (Some(r), Some(lo), Some(hi)) => lab_config::format::ratio_interval(r, lo, hi),
            _ => format!(
                "n/a ({} and {} runs; {} a side are needed)",
                x.a_runs,
                x.b_runs,
                lab_findings::compare::MIN_COMPARE_RUNS
            ),
        },
        ratio_id: None,
        before_id: None,
        after_id: None,
        resolution: x.resolution(),
        verdict: x.verdict_text(c.threshold),
    }
}

/// A forest chart of the cells' ratios B/A, the noise band's worse edge as the threshold.
pub(crate) fn figure(c: &Comparison) -> Result<Option<Figure>> {
    let rows = forest_rows(c);
    if rows.is_empty() {
        return Ok(None);
    }
    let paired = c.cells.iter().any(|x| x.pairs.is_some());
    let (measure, point, interval) = if paired {
        (
            "median of pair ratios",
            "the median of the ratios of its pairs of runs (this revision's run over the other's)",
            "sign-test",
        )
    } else {
        (
            "ratio of medians",
            "this session's median over the other's",
            "bootstrap",
        )
    };
    let chart = ForestChart {
        title: format!("{}: this session / {}", c.metric, c.a),
        x_label: if paired {
            format!("{measure} ({} is better)", c.better)
        } else {
            format!(
                "{measure}, this session / the other ({} is better)",
                c.better
            )
        },
        rows,
    };
    let text = Text {
        heading: format!("Compared with {}", c.a),
        alt: if paired {
            format!("{measure} of {} in each cell, against {}", c.metric, c.a)
        } else {
            format!(
                "ratio of each cell's median {} to session {}",
                c.metric, c.a
            )
        },
        caption: format!(
            "Each row is a cell: the point is {point}, the bar its {} {interval} interval, the dashed tick the edge of the ±{} noise band on the worse side.",
            level(c.level),
            percent(c.threshold)
        ),
    };
    Figure::new("compared", text, |size| forest_svg(&chart, size)).map(Some)
}

/// One row per cell with a ratio, its threshold the noise band's edge on the worse side.
fn forest_rows(c: &Comparison) -> Vec<ForestRow> {
    let worse = if c.better == "higher" {
        1.0 / (1.0 + c.threshold)
    } else {
        1.0 + c.threshold
    };
    c.cells
        .iter()
        .filter_map(|x| {
            Some(ForestRow {
                label: x.cell.clone(),
                ratio: x.ratio?,
                lo: x.lo?,
                hi: x.hi?,
                threshold: Some(worse),
                verdict: match x.verdict {
                    Change::Faster => Verdict::Faster,
                    Change::Slower => Verdict::Slower,
                    Change::Same => Verdict::NoChange,
                    Change::Inconclusive => Verdict::Inconclusive,
                    Change::TooFewRuns => Verdict::NotRun,
                },
            })
        })
        .collect()
}
