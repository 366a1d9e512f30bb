//! Chart inputs built from an analysis, and the SVG files written beside the chapter.

use super::charts::{
    self, ChartError, ForestChart, ForestRow, OrderPoint, RunOrderChart, ScalingChart, Series,
    SeriesPoint, Size, StripCell, StripChart,
};
use anyhow::Result;
use lab_config::format::level;
use lab_config::{Experiment, Metric, Param, ParamValue};
use lab_findings::analysis::{Analysis, CellStats};
use lab_findings::checks::{CheckResult, Verdict};

/// One chart of the chapter, in two renditions: `file` is the wide one, `narrow_file` the
/// one laid out for a phone's width (`NAME-narrow.svg`).
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Figure {
    pub file: String,
    pub narrow_file: String,
    pub heading: String,
    pub alt: String,
    pub caption: String,
    #[serde(skip)]
    pub svg: String,
    #[serde(skip)]
    pub narrow_svg: String,
}

/// A chart as the chapter shows it: its heading and the figure HTML lab composes.
#[derive(serde::Serialize)]
pub(crate) struct ChartView {
    pub heading: String,
    pub figure: String,
}

impl ChartView {
    pub(super) fn of(f: &Figure) -> Self {
        ChartView {
            heading: f.heading.clone(),
            figure: figure_html(f),
        }
    }

    /// A chart of the chapter, with its number and, where `place` says so, its anchor.
    pub(super) fn placed(f: &Figure, place: Option<Place>) -> Self {
        ChartView {
            heading: f.heading.clone(),
            figure: placed_figure_html(f, place),
        }
    }
}

/// Where a copy of a figure stands in the chapter: its number, and whether this copy holds
/// the anchor that links lead to (a chart the notes show again keeps it where the chapter
/// lays the chart out).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Place {
    pub number: usize,
    pub anchored: bool,
}

/// The words around a chart.
pub(super) struct Text {
    pub heading: String,
    pub alt: String,
    pub caption: String,
}

impl Figure {
    /// The figure's name: its chart file without `.svg`.
    pub(crate) fn name(&self) -> &str {
        self.file.strip_suffix(".svg").unwrap_or(self.file.as_str())
    }

    /// Draws both renditions of a chart; `stem` names its files (`stem.svg`, `stem-narrow.svg`).
    pub(super) fn new(
        stem: &str,
        text: Text,
        draw: impl Fn(Size) -> Result<String, ChartError>,
    ) -> Result<Figure> {
        Ok(Figure {
            file: format!("{stem}.svg"),
            narrow_file: format!("{stem}-narrow.svg"),
            heading: text.heading,
            alt: text.alt,
            caption: text.caption,
            svg: draw(Size::Wide)?,
            narrow_svg: draw(Size::Narrow)?,
        })
    }
}

/// Every chart the chapter shows, in page order.
pub(crate) fn figures(
    exp: &Experiment,
    analysis: &Analysis,
    checks: &[CheckResult],
) -> Result<Vec<Figure>> {
    let mut out = Vec::new();
    let primary = exp.primary_metric().map(|m| m.name.as_str());
    for metric in exp
        .analysed_metrics()
        .into_iter()
        .filter(|m| !is_duration_metric(exp, &m.name))
        .filter(|m| !m.is_builtin() || Some(m.name.as_str()) == primary)
        .filter(|m| !reads_alike_everywhere(analysis, m))
    {
        for param in exp
            .params
            .iter()
            .filter(|p| p.is_numeric() && p.values.len() > 1)
        {
            out.push(scaling(exp, analysis, metric, param)?);
        }
    }
    if let Some(metric) = exp.primary_metric() {
        out.push(strip(analysis, metric)?);
        out.push(run_order(analysis, metric)?);
    }
    if let Some(f) = forest(checks, analysis.resampling.level)? {
        out.push(f);
    }
    Ok(out)
}

/// A metric that only reports a run's own elapsed time for a duration check: flat by design,
/// its table and the check say all there is.
fn is_duration_metric(exp: &Experiment, name: &str) -> bool {
    exp.checks.iter().any(
        |c| matches!(&c.kind, lab_config::CheckKind::Duration { metric: Some(m), .. } if m == name),
    )
}

/// A metric whose every cell prints the same median: its flat chart would say nothing that
/// the one line replacing its table does not.
fn reads_alike_everywhere(analysis: &Analysis, metric: &Metric) -> bool {
    let cells: Vec<&CellStats> = analysis
        .cells
        .iter()
        .filter(|c| c.metric == metric.name)
        .collect();
    super::tables::reads_alike(&cells, &metric.unit)
}

fn axis_label(metric: &Metric) -> String {
    if metric.unit.is_empty() {
        metric.name.clone()
    } else {
        format!("{} ({})", metric.name, metric.unit)
    }
}

/// The series a cell belongs to: its variant plus every other multi-valued parameter.
fn series_name(cell: &lab_config::plan::CellKey, along: &str, exp: &Experiment) -> String {
    let mut name = cell.variant.clone();
    for (k, v) in cell.params.iter() {
        if k != along && exp.param(k).is_some_and(|p| p.values.len() > 1) {
            name.push_str(&format!(" {k}={v}"));
        }
    }
    name
}

/// The chart of `metric` against the numeric parameter `param`.
fn scaling(
    exp: &Experiment,
    analysis: &Analysis,
    metric: &Metric,
    param: &Param,
) -> Result<Figure> {
    let series = scaling_series(exp, analysis, metric, param);
    let values: Vec<f64> = param.values.iter().filter_map(|v| v.as_f64()).collect();
    let log_x = values.iter().all(|v| *v > 0.0)
        && values.iter().cloned().fold(0.0, f64::max)
            / values.iter().cloned().fold(f64::INFINITY, f64::min)
            >= 8.0;
    let gaps = series
        .iter()
        .flat_map(|s| &s.points)
        .any(|p| p.center.is_nan() && p.raw.is_empty());
    let chart = ScalingChart {
        title: format!("{} by {}", metric.name, param.name),
        x_label: param.name.clone(),
        y_label: axis_label(metric),
        log_x,
        series,
        marks: Vec::new(),
    };
    let text = Text {
        heading: format!("{} by {}", metric.name, param.name),
        alt: format!(
            "{} against {}, one line per variant",
            metric.name, param.name
        ),
        caption: format!(
            "Lines join the medians; bars are {} bootstrap intervals; faint points are individual runs.{}",
            level(analysis.resampling.level),
            if gaps {
                " A line breaks at a cell with no valid run, marked × on the axis."
            } else {
                ""
            }
        ),
    };
    let stem = format!("{}-by-{}", metric.name, param.name);
    Figure::new(&stem, text, |size| charts::scaling_svg(&chart, size))
}

/// One series per variant (and value of every other parameter that varies), a point per
/// cell at its value of `param`.
fn scaling_series(
    exp: &Experiment,
    analysis: &Analysis,
    metric: &Metric,
    param: &Param,
) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for cell in analysis.cells.iter().filter(|c| c.metric == metric.name) {
        let name = series_name(&cell.cell, &param.name, exp);
        let Some(x) = cell
            .cell
            .params
            .get(&param.name)
            .and_then(ParamValue::number)
        else {
            continue;
        };
        let point = series_point(cell, x);
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                name,
                points: vec![point],
            }),
        }
    }
    series
}

fn series_point(cell: &CellStats, x: f64) -> SeriesPoint {
    let (lo, hi) = cell
        .median_ci
        .map_or((f64::NAN, f64::NAN), |ci| (ci.lo, ci.hi));
    SeriesPoint {
        x,
        center: cell.median().unwrap_or(f64::NAN),
        lo,
        hi,
        raw: cell.pooled(),
    }
}

fn strip(analysis: &Analysis, metric: &Metric) -> Result<Figure> {
    let variants = variant_order(analysis);
    let cells = analysis
        .cells
        .iter()
        .filter(|c| c.metric == metric.name)
        .map(|c| {
            let (lo, hi) = c
                .median_ci
                .map_or((f64::NAN, f64::NAN), |ci| (ci.lo, ci.hi));
            let group = variants
                .iter()
                .position(|v| *v == c.cell.variant)
                .unwrap_or(0);
            StripCell {
                label: c.label.clone(),
                group,
                values: c.pooled(),
                median: c.median().unwrap_or(f64::NAN),
                lo,
                hi,
                disturbed: disturbed_values(c),
            }
        })
        .collect();
    let chart = StripChart {
        title: format!("every run, {}", metric.name),
        y_label: axis_label(metric),
        cells,
    };
    let text = Text {
        heading: "Every run".into(),
        alt: format!("{} of every valid run, one column per cell", metric.name),
        caption: format!(
            "One column per cell, one point per run; the bar is the median with its {} interval. Two clusters in one column mean two modes.{}",
            level(analysis.resampling.level),
            disturbed_caption(analysis, metric)
        ),
    };
    Figure::new(&format!("{}-runs", metric.name), text, |size| {
        charts::strip_svg(&chart, size)
    })
}

/// Per value of `cell.pooled()`, whether its run was one the machine disturbed.
fn disturbed_values(cell: &CellStats) -> Vec<bool> {
    if cell.disturbed.is_empty() {
        return Vec::new();
    }
    cell.runs
        .iter()
        .enumerate()
        .flat_map(|(i, values)| std::iter::repeat_n(cell.disturbed.contains(&i), values.len()))
        .collect()
}

/// " Squares are the 12 runs that waited …", when some run of `metric`'s cells did.
fn disturbed_caption(analysis: &Analysis, metric: &Metric) -> String {
    let count: usize = analysis
        .cells
        .iter()
        .filter(|c| c.metric == metric.name)
        .map(|c| c.disturbed.len())
        .sum();
    match count {
        0 => String::new(),
        1 => " The square is the run that waited for a CPU others had for more than max_busy of its wall time; its timing is kept, and each verdict weighs what the waiting could have changed.".into(),
        n => format!(" Squares are the {n} runs that waited for a CPU others had for more than max_busy of their wall time; their timings are kept, and each verdict weighs what the waiting could have changed."),
    }
}

fn variant_order(analysis: &Analysis) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for k in &analysis.cell_keys {
        if !names.contains(&k.variant) {
            names.push(k.variant.clone());
        }
    }
    names
}

fn run_order(analysis: &Analysis, metric: &Metric) -> Result<Figure> {
    let variants = variant_order(analysis);
    let mut points = Vec::new();
    for cell in analysis.cells.iter().filter(|c| c.metric == metric.name) {
        let Some(median) = cell.median().filter(|m| *m != 0.0) else {
            continue;
        };
        let series = variants
            .iter()
            .position(|v| *v == cell.cell.variant)
            .unwrap_or(0);
        for (values, position) in cell.runs.iter().zip(&cell.positions) {
            let run_value = values.iter().sum::<f64>() / values.len().max(1) as f64;
            points.push(OrderPoint {
                position: *position,
                value: run_value / median,
                series,
                relative: true,
            });
        }
    }
    points.sort_by_key(|p| p.position);
    let chart = RunOrderChart {
        title: format!("{} in execution order", metric.name),
        y_label: axis_label(metric),
        series_names: variants,
        points,
    };
    let text = Text {
        heading: "In execution order".into(),
        alt: format!("{} of every run divided by its cell median, against execution position", metric.name),
        caption: "Each run's value divided by its cell's median, in the order the runs executed. A slope is drift; a pattern that repeats with the blocks is an order effect.".into(),
    };
    Figure::new(&format!("{}-order", metric.name), text, |size| {
        charts::run_order_svg(&chart, size)
    })
}

fn forest(checks: &[CheckResult], confidence: f64) -> Result<Option<Figure>> {
    let rows: Vec<ForestRow> = checks
        .iter()
        .filter_map(|c| {
            c.ratio.as_ref().map(|r| ForestRow {
                label: c.name.clone(),
                ratio: r.ratio,
                lo: r.lo,
                hi: r.hi,
                threshold: Some(r.threshold),
                verdict: match c.verdict {
                    Verdict::Pass => charts::Verdict::Pass,
                    Verdict::Fail => charts::Verdict::Fail,
                    Verdict::Inconclusive => charts::Verdict::Inconclusive,
                    Verdict::NotRun => charts::Verdict::NotRun,
                    Verdict::AtThreshold => charts::Verdict::AtThreshold,
                },
            })
        })
        .collect();
    if rows.is_empty() {
        return Ok(None);
    }
    let chart = ForestChart {
        title: "ratios decided by checks".into(),
        x_label: "ratio a / b".into(),
        rows,
    };
    let text = Text {
        heading: "Ratios behind the checks".into(),
        alt: format!(
            "each check's ratio with its {} interval and threshold",
            level(confidence)
        ),
        caption: format!(
            "Each row is a check: the point is the ratio of medians, the bar its {} interval, the dashed tick the threshold the check compares against.",
            level(confidence)
        ),
    };
    Figure::new("ratios", text, |size| charts::forest_svg(&chart, size)).map(Some)
}

/// Screens up to this width get the narrow rendition of a chart.
const NARROW_SCREEN_PX: u32 = 760;

/// The anchor of the figure named `name`, which `fig(name=…)` links to.
pub(crate) fn figure_anchor(name: &str) -> String {
    format!("figure-{name}")
}

/// The HTML that shows a chart: the wide drawing, or the narrow one on a small screen, with
/// its caption. One block with no blank line, so Markdown leaves it whole.
pub(crate) fn figure_html(figure: &Figure) -> String {
    placed_figure_html(figure, None)
}

/// [`figure_html`] with "Figure N." before the caption and, for the anchored copy, the
/// `figure-NAME` id.
pub(crate) fn placed_figure_html(figure: &Figure, place: Option<Place>) -> String {
    use super::escape::html_line;
    let id = match place {
        Some(Place { anchored: true, .. }) => {
            format!(" id=\"{}\"", html_line(&figure_anchor(figure.name())))
        }
        _ => String::new(),
    };
    let number = place.map_or_else(String::new, |p| {
        format!("<strong>Figure {}.</strong> ", p.number)
    });
    format!(
        "<figure class=\"lab-figure\"{id}><picture><source media=\"(max-width: {NARROW_SCREEN_PX}px)\" srcset=\"{}\"><img src=\"{}\" alt=\"{}\"></picture><figcaption>{number}{}</figcaption></figure>",
        html_line(&figure.narrow_file),
        html_line(&figure.file),
        html_line(&figure.alt),
        html_line(&figure.caption)
    )
}
