//! The results tables of a chapter: one row per cell, every interval formatted once, here.

use super::numbers::{NumberId, Statistic};
use super::shape::shape_note;
use lab_config::Experiment;
use lab_config::format::{estimate, interval, number, percent, value};
use lab_findings::analysis::{Analysis, CellStats};
use serde::Serialize;

/// One metric's results: the columns that carry information, the rows that differ, and a
/// line for each thing left out.
#[derive(Serialize)]
pub(crate) struct Table {
    pub metric: String,
    pub unit: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Shown>>,
    /// What was left out, one sentence each: constant cells, columns with one value.
    pub remarks: Vec<String>,
    /// When every cell reads the same: the one sentence that replaces the table.
    pub summary: Option<String>,
    /// "Table N." and what the table holds, with its anchor (HTML lab composes).
    pub caption: String,
}

#[derive(Serialize, Clone)]
pub(crate) struct Column {
    pub title: String,
    /// Numbers align right.
    pub numeric: bool,
    /// The statistic its values are, when each is a number of the chapter's catalogue.
    #[serde(skip)]
    pub statistic: Option<Statistic>,
    /// Its values are Markdown, escaped and linked already (the Shape column).
    #[serde(skip)]
    pub markdown: bool,
}

/// One value of a table, with the id of the number it shows when it is one (its link).
#[derive(Serialize)]
pub(crate) struct Shown {
    pub text: String,
    pub id: Option<String>,
    /// The value as Markdown escaped for HTML, with its own links, instead of `text`.
    pub text_md: Option<String>,
}

/// One cell's row of the percentiles table: the values counted, p50, p90, p99, p99.9 and the
/// largest value, each linked to its number.
#[derive(Serialize)]
pub(crate) struct PercentileRow {
    pub metric: String,
    pub cell: String,
    pub values: Vec<Shown>,
}

/// One table per analysed metric, in declaration order; `id` names the number behind each
/// value that is one.
pub(crate) fn tables(exp: &Experiment, analysis: &Analysis, id: NumberId) -> Vec<Table> {
    exp.analysed_metrics()
        .into_iter()
        .map(|m| {
            let cells: Vec<&CellStats> = analysis
                .cells
                .iter()
                .filter(|c| c.metric == m.name)
                .collect();
            table(exp, &m.name, &m.unit, &cells, analysis.resampling.level, id)
        })
        .collect()
}

fn table(
    exp: &Experiment,
    metric: &str,
    unit: &str,
    cells: &[&CellStats],
    level: f64,
    id: NumberId,
) -> Table {
    let mut table = Table {
        metric: metric.to_string(),
        unit: unit.to_string(),
        columns: Vec::new(),
        rows: Vec::new(),
        remarks: Vec::new(),
        summary: None,
        caption: String::new(),
    };
    if let Some(line) = uniform(cells, unit) {
        table.summary = Some(line);
        return table;
    }
    let (constant, mut varying_cells): (Vec<&CellStats>, Vec<&CellStats>) =
        cells.iter().partition(|c| is_constant(c));
    if varying_cells.is_empty() {
        // Every cell is constant but they differ: the rows are the result.
        varying_cells = constant;
    } else {
        table.remarks.extend(constant_note(&constant, unit));
    }
    let full: Vec<(Column, Vec<String>)> = columns(exp, &varying_cells, unit, level, id);
    let (kept, dropped): (Vec<_>, Vec<_>) = full
        .into_iter()
        .partition(|(c, values)| informative(&c.title, values));
    table.remarks.extend(
        dropped
            .iter()
            .filter_map(|(c, v)| dropped_note(c, v, level)),
    );
    table.columns = kept.iter().map(|(c, _)| c.clone()).collect();
    table.rows = varying_cells
        .iter()
        .enumerate()
        .map(|(i, cell)| {
            kept.iter()
                .map(|(column, values)| {
                    let number = column.statistic.and_then(|s| id(cell, s));
                    shown(column, &values[i], number)
                })
                .collect()
        })
        .collect();
    table
}

/// Every column of the table, with its value in each row.
fn columns(
    exp: &Experiment,
    cells: &[&CellStats],
    unit: &str,
    level: f64,
    id: NumberId,
) -> Vec<(Column, Vec<String>)> {
    let mut out = vec![column(
        "Variant",
        false,
        cells.iter().map(|c| c.cell.variant.clone()).collect(),
    )];
    for p in varying(exp) {
        let values = cells
            .iter()
            .map(|c| {
                c.cell
                    .params
                    .get(&p)
                    .map(ToString::to_string)
                    .unwrap_or_default()
            })
            .collect();
        out.push(column(&p, true, values));
    }
    out.extend(statistic_columns(cells, unit, level, id));
    out
}

/// A titled column with its value in each row.
fn column(title: &str, numeric: bool, values: Vec<String>) -> (Column, Vec<String>) {
    let column = Column {
        title: title.into(),
        numeric,
        statistic: None,
        markdown: false,
    };
    (column, values)
}

/// One value of `column`, linked to `number` where it is one.
fn shown(column: &Column, value: &str, number: Option<String>) -> Shown {
    if column.markdown {
        Shown {
            text: String::new(),
            id: None,
            text_md: Some(value.to_string()),
        }
    } else {
        Shown {
            text: value.to_string(),
            id: number,
            text_md: None,
        }
    }
}

/// A column of Markdown values, escaped and linked already.
fn markdown_column(title: &str, values: Vec<String>) -> (Column, Vec<String>) {
    let (mut column, values) = column(title, false, values);
    column.markdown = true;
    (column, values)
}

/// A column of one statistic of each cell, each value linked to its provenance.
fn statistic(statistic: Statistic, title: &str, values: Vec<String>) -> (Column, Vec<String>) {
    let (mut column, values) = column(title, true, values);
    column.statistic = Some(statistic);
    (column, values)
}

/// The columns of each cell's statistics, after its variant and parameters.
fn statistic_columns(
    cells: &[&CellStats],
    unit: &str,
    level: f64,
    id: NumberId,
) -> Vec<(Column, Vec<String>)> {
    let each = |f: &dyn Fn(&CellStats) -> String| cells.iter().map(|c| f(c)).collect::<Vec<_>>();
    let any_interval = cells.iter().any(|c| c.median_ci.is_some());
    let (median_title, mean_title) = if any_interval {
        (
            format!("Median [{} CI]", lab_config::format::level(level)),
            format!("Mean [{} BCa CI]", lab_config::format::level(level)),
        )
    } else {
        ("Median".to_string(), "Mean".to_string())
    };
    let range = |c: &CellStats| {
        c.summary.as_ref().map_or(NONE.into(), |s| {
            format!("{}–{}", number(s.min, unit), number(s.max, unit))
        })
    };
    vec![
        statistic(
            Statistic::Median,
            &median_title,
            each(&|c| median_text(c, unit)),
        ),
        statistic(
            Statistic::OrderCi,
            "Order-statistic CI",
            each(&|c| exact_text(c, unit)),
        ),
        statistic(Statistic::Mean, &mean_title, each(&|c| mean_text(c, unit))),
        statistic(Statistic::Runs, "Runs", each(&|c| c.n.to_string())),
        statistic(Statistic::Cv, "CV", each(&|c| cv_text(c))),
        // The range links to its smallest value, beside the largest on the provenance page.
        statistic(Statistic::Min, "Range", each(&range)),
        column("Excluded", true, each(&|c| c.invalid_runs.to_string())),
        markdown_column("Shape", each(&|c| shape_note(c, unit, id))),
    ]
}

/// A cell without a value.
const NONE: &str = "–";

fn median_text(c: &CellStats, unit: &str) -> String {
    match (&c.summary, &c.median_ci) {
        (Some(s), Some(ci)) => interval(s.median, ci.lo, ci.hi, unit),
        (Some(s), None) => number(s.median, unit),
        _ => "no valid run".into(),
    }
}

fn exact_text(c: &CellStats, unit: &str) -> String {
    c.exact_median_ci.as_ref().map_or(NONE.into(), |e| {
        format!(
            "[{}, {}] ({})",
            number(e.interval.lo, unit),
            number(e.interval.hi, unit),
            percent(e.coverage)
        )
    })
}

fn mean_text(c: &CellStats, unit: &str) -> String {
    match (&c.summary, &c.mean_ci) {
        (Some(s), Some(ci)) => interval(s.mean, ci.lo, ci.hi, unit),
        (Some(s), None) => number(s.mean, unit),
        _ => NONE.into(),
    }
}

fn cv_text(c: &CellStats) -> String {
    c.summary
        .as_ref()
        .filter(|s| s.n > 1 && s.cv.is_finite())
        .map_or(NONE.into(), |s| percent(s.cv))
}

/// Whether a column tells the reader something: the run count only when it differs between
/// cells, the other optional columns when some row has a value; the rest always.
fn informative(title: &str, values: &[String]) -> bool {
    let differ = values.windows(2).any(|w| w[0] != w[1]);
    let some_value = values.iter().any(|v| !v.is_empty() && v != NONE);
    match title {
        "Runs" => differ,
        "Order-statistic CI" | "CV" | "Shape" => some_value,
        "Excluded" => values.iter().any(|v| v != "0"),
        _ => true,
    }
}

/// The fewest runs whose order-statistic interval of the median reaches `level`: the widest
/// one, from the smallest to the largest run, covers with probability 1 − 2 · 0.5ⁿ.
fn runs_for_exact_interval(level: f64) -> usize {
    (1..64)
        .find(|&n| 1.0 - 2.0 * 0.5f64.powi(n as i32) >= level - 1e-12)
        .unwrap_or(64)
}

/// The sentence that stands for a column left out, when its one value says something.
fn dropped_note(column: &Column, values: &[String], level: f64) -> Option<String> {
    let value = values.first()?;
    match column.title.as_str() {
        "Runs" => Some(format!("Every cell shown has {value} valid runs.")),
        "Order-statistic CI" => Some(format!(
            "No cell has enough runs for a distribution-free interval of the median at {} (it needs {}).",
            lab_config::format::level(level),
            runs_for_exact_interval(level)
        )),
        _ => None,
    }
}

/// Names of the parameters that take more than one value.
fn varying(exp: &Experiment) -> Vec<String> {
    exp.params
        .iter()
        .filter(|p| p.values.len() > 1)
        .map(|p| p.name.clone())
        .collect()
}

/// Every valid run of the cell measured the same value.
fn is_constant(c: &CellStats) -> bool {
    c.summary.as_ref().is_some_and(|s| s.min == s.max)
}

/// One sentence when every cell reads the same at the table's precision: a table of identical
/// rows says nothing a sentence cannot.
fn uniform(cells: &[&CellStats], unit: &str) -> Option<String> {
    if !reads_alike(cells, unit) {
        return None;
    }
    let runs: usize = cells.iter().map(|c| c.n).sum();
    let lo = cells
        .iter()
        .filter_map(|c| c.summary.as_ref().map(|s| s.min))
        .fold(f64::INFINITY, f64::min);
    let hi = cells
        .iter()
        .filter_map(|c| c.summary.as_ref().map(|s| s.max))
        .fold(f64::NEG_INFINITY, f64::max);
    let cv = cells
        .iter()
        .filter_map(|c| c.summary.as_ref().map(|s| s.cv))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let spread = if value(lo, unit) == value(hi, unit) {
        format!("every value {}", value(lo, unit))
    } else {
        format!("values from {} to {}", value(lo, unit), value(hi, unit))
    };
    Some(format!(
        "The median is {} in all {} cells ({runs} runs, {spread}, largest CV {}): one line instead of a table of identical rows.",
        value(number_value(cells), unit),
        cells.len(),
        percent(cv)
    ))
}

fn number_value(cells: &[&CellStats]) -> f64 {
    cells
        .first()
        .and_then(|c| c.summary.as_ref())
        .map_or(f64::NAN, |s| s.median)
}

/// Two or more cells whose medians all print the same at the table's precision.
pub(crate) fn reads_alike(cells: &[&CellStats], unit: &str) -> bool {
    let medians: Option<Vec<String>> = cells
        .iter()
        .map(|c| c.summary.as_ref().map(|s| number(s.median, unit)))
        .collect();
    medians.is_some_and(|m| m.len() >= 2 && m.windows(2).all(|w| w[0] == w[1]))
}

/// "Every run measured exactly 0 in spin (all 6 cells) and treiber (all 6 cells)."
fn constant_note(cells: &[&CellStats], unit: &str) -> Option<String> {
    let mut groups: Vec<(String, Vec<&CellStats>)> = Vec::new();
    for c in cells {
        let v = c.summary.as_ref().map_or(f64::NAN, |s| s.min);
        let key = value(v, unit);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(c),
            None => groups.push((key, vec![c])),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(v, members)| format!("{v} in {}", by_variant(members)))
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "Left out, because every run of the cell measured exactly the same value: {}.",
            parts.join("; ")
        )
    })
}

/// Cells named compactly: `spin (3 cells: threads=1, 2, 4)`.
fn by_variant(cells: &[&CellStats]) -> String {
    let mut variants: Vec<(&str, Vec<&str>)> = Vec::new();
    for c in cells {
        let rest = c
            .label
            .strip_prefix(c.cell.variant.as_str())
            .unwrap_or(&c.label)
            .trim();
        match variants.iter_mut().find(|(v, _)| *v == c.cell.variant) {
            Some((_, rests)) => rests.push(rest),
            None => variants.push((&c.cell.variant, vec![rest])),
        }
    }
    variants
        .iter()
        .map(|(v, rests)| {
            let named: Vec<&str> = rests.iter().copied().filter(|r| !r.is_empty()).collect();
            if named.is_empty() {
                v.to_string()
            } else {
                format!("{v} ({})", named.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn percentile_rows(
    exp: &Experiment,
    analysis: &Analysis,
    id: NumberId,
) -> Vec<PercentileRow> {
    let show = |e: &lab_basis::PercentileEstimate, unit: &str| match e.estimate() {
        Some(with_ci) => estimate(&with_ci, unit),
        None => value(e.value, unit),
    };
    analysis
        .cells
        .iter()
        .filter_map(|c| {
            let p = c.percentiles.as_ref()?;
            let unit = exp.metric(&c.metric).map_or("", |m| m.unit.as_str());
            let values = [
                (Statistic::Values, p.n.to_string()),
                (Statistic::P50, show(&p.p50, unit)),
                (Statistic::P90, show(&p.p90, unit)),
                (Statistic::P99, show(&p.p99, unit)),
                (Statistic::P999, show(&p.p999, unit)),
                (Statistic::ValuesMax, value(p.max, unit)),
            ];
            Some(PercentileRow {
                metric: c.metric.clone(),
                cell: c.label.clone(),
                values: values
                    .into_iter()
                    .map(|(statistic, text)| Shown {
                        text,
                        id: id(c, statistic),
                        text_md: None,
                    })
                    .collect(),
            })
        })
        .collect()
}
