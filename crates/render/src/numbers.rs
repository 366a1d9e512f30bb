//! The catalogue of a chapter's numbers: every cell's median and mean with their intervals,
//! its spread and run count, and every ratio the chapter quotes (the checks', the compared
//! session's and the notes'), each under a stable id and printed as the chapter prints it.
//! `lab export` writes it for a paper; an id is what a number's provenance is known by.

use super::Rendered;
pub(crate) use super::number::NumberId;
use super::number::ratio_number;
pub use super::number::{Number, RatioSource, Statistic, Subject, kebab};
use lab_config::Experiment;
use lab_config::format::{number, percent};
use lab_findings::analysis::{Analysis, CellStats, cell_label};
use lab_findings::compare::Comparison;
use serde::Serialize;
use std::collections::BTreeSet;

/// Every number of one chapter, in the order the chapter's sections show them.
#[derive(Debug, Clone, Serialize)]
pub struct Catalogue {
    pub numbers: Vec<Number>,
}

impl Catalogue {
    /// The number with this id.
    pub fn get(&self, id: &str) -> Option<&Number> {
        self.numbers.iter().find(|n| n.id == id)
    }

    /// `numbers` with every id made unique: the first of equal ids keeps it, each later one
    /// gets the first free `-2`, `-3` … suffix, so the same chapter always gives the same ids.
    fn of(mut numbers: Vec<Number>) -> Catalogue {
        let original: BTreeSet<String> = numbers.iter().map(|n| n.id.clone()).collect();
        let mut taken = BTreeSet::new();
        for n in &mut numbers {
            if !taken.insert(n.id.clone()) {
                let free = (2..)
                    .map(|k| format!("{}-{k}", n.id))
                    .find(|id| !original.contains(id) && !taken.contains(id))
                    .unwrap_or_default();
                taken.insert(free.clone());
                n.id = free;
            }
        }
        Catalogue { numbers }
    }
}

/// Every number the chapter of `item` shows: the results tables' cells, the percentiles,
/// then the checks', the compared session's and the notes' ratios.
pub fn catalogue(item: &Rendered) -> Catalogue {
    let (exp, analysis) = (item.experiment, item.analysis);
    let mut numbers = cell_numbers(exp, analysis);
    numbers.extend(percentile_numbers(exp, analysis));
    numbers.extend(super::check_numbers::of(
        exp,
        analysis,
        &item.findings.checks,
    ));
    numbers.extend(super::sampling::look_numbers(exp, item.looks));
    numbers.extend(item.compared.map(compared_numbers).unwrap_or_default());
    if let Some(notes) = item.notes {
        numbers.extend(notes_ratios(exp, &notes.quoted));
    }
    numbers.extend(item.history.map(history_numbers).unwrap_or_default());
    Catalogue::of(numbers)
}

/// Each analysed metric's cells, in the order of the results tables.
fn cell_numbers(exp: &Experiment, analysis: &Analysis) -> Vec<Number> {
    exp.analysed_metrics()
        .into_iter()
        .flat_map(|m| {
            analysis
                .cells
                .iter()
                .filter(|c| c.metric == m.name)
                .flat_map(|c| cell_statistics(c, &m.unit))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A cell's median and mean with their intervals, its CV, run count and range, and what its
/// Shape column links, as the results table prints them.
fn cell_statistics(c: &CellStats, unit: &str) -> Vec<Number> {
    let Some(s) = &c.summary else {
        return Vec::new();
    };
    let shown = |x: f64| number(x, unit);
    let bounds = |ci: Option<lab_basis::Interval>| ci.map(|i| (shown(i.lo), shown(i.hi)));
    let mut out = vec![cell_number(
        c,
        Statistic::Median,
        shown(s.median),
        bounds(c.median_ci),
        unit,
    )];
    if let Some(e) = &c.exact_median_ci {
        let order = Some(e.interval);
        out.push(cell_number(
            c,
            Statistic::OrderCi,
            shown(s.median),
            bounds(order),
            unit,
        ));
    }
    out.push(cell_number(
        c,
        Statistic::Mean,
        shown(s.mean),
        bounds(c.mean_ci),
        unit,
    ));
    if s.n > 1 && s.cv.is_finite() {
        out.push(cell_number(c, Statistic::Cv, percent(s.cv), None, ""));
    }
    out.push(cell_number(c, Statistic::Runs, c.n.to_string(), None, ""));
    out.push(cell_number(c, Statistic::Min, shown(s.min), None, unit));
    out.push(cell_number(c, Statistic::Max, shown(s.max), None, unit));
    out.extend(shape_numbers(c, unit));
    out
}

/// The numbers of a cell's Shape column: the medians of its two modes, and its drift's slope.
fn shape_numbers(c: &CellStats, unit: &str) -> Vec<Number> {
    let mut out = Vec::new();
    if let Some([low, high]) = distinct_modes(c, unit).as_deref() {
        out.push(cell_number(
            c,
            Statistic::ModeLow,
            low.0.clone(),
            None,
            unit,
        ));
        out.push(cell_number(
            c,
            Statistic::ModeHigh,
            high.0.clone(),
            None,
            unit,
        ));
    }
    if let Some(drift) = shown_drift(c) {
        let slope = number(drift.slope_per_position, unit);
        let per = format!("{unit} per run position");
        out.push(cell_number(
            c,
            Statistic::Drift,
            slope,
            None,
            per.trim_start(),
        ));
    }
    out
}

/// Each cell's tail percentiles with their intervals, the values they count and the largest,
/// as the percentiles table prints them.
fn percentile_numbers(exp: &Experiment, analysis: &Analysis) -> Vec<Number> {
    let mut out = Vec::new();
    for c in &analysis.cells {
        let Some(p) = &c.percentiles else { continue };
        let unit = exp.metric(&c.metric).map_or("", |m| m.unit.as_str());
        let shown = |x: f64| number(x, unit);
        let estimates = [
            (Statistic::P50, &p.p50),
            (Statistic::P90, &p.p90),
            (Statistic::P99, &p.p99),
            (Statistic::P999, &p.p999),
        ];
        for (statistic, e) in estimates {
            let bounds = e.ci.map(|i| (shown(i.lo), shown(i.hi)));
            out.push(cell_number(c, statistic, shown(e.value), bounds, unit));
        }
        out.push(cell_number(c, Statistic::Values, p.n.to_string(), None, ""));
        out.push(cell_number(
            c,
            Statistic::ValuesMax,
            shown(p.max),
            None,
            unit,
        ));
    }
    out
}

/// The drift the Shape column reports: a trend the Mann–Kendall test finds at 5%.
pub(crate) fn shown_drift(c: &CellStats) -> Option<&lab_findings::analysis::Drift> {
    c.drift.as_ref().filter(|d| d.test.p_value < 0.05)
}

/// The two modes as the Shape column prints them, lower then higher, each with its share of
/// the runs; none unless the dip test found a second mode and the modes print apart (modes
/// that print alike are not news).
pub(crate) fn distinct_modes(c: &CellStats, unit: &str) -> Option<Vec<(String, f64)>> {
    let dip = c.modes.as_ref().filter(|d| d.second_mode_detected)?;
    let shown: Vec<(String, f64)> = dip
        .modes
        .iter()
        .map(|m| (number(m.median, unit), m.share))
        .collect();
    if shown.windows(2).all(|w| w[0].0 == w[1].0) {
        return None;
    }
    Some(shown)
}

fn cell_number(
    c: &CellStats,
    statistic: Statistic,
    value: String,
    bounds: Option<(String, String)>,
    unit: &str,
) -> Number {
    let (lo, hi) = bounds.unzip();
    Number {
        id: format!(
            "{}.{}.{}",
            kebab(&c.label),
            kebab(&c.metric),
            statistic.word()
        ),
        value,
        lo,
        hi,
        unit: unit.to_string(),
        what: Subject::Cell {
            cell: c.label.clone(),
            metric: c.metric.clone(),
            statistic,
        },
    }
}

/// Each compared cell's median in the other session, then its ratio, this session over the
/// other.
fn compared_numbers(c: &Comparison) -> Vec<Number> {
    let before = c.cells.iter().filter_map(|x| {
        Some(Number {
            id: format!("compared.{}.{}.before", kebab(&x.cell), kebab(&c.metric)),
            value: number(x.a_median?, &c.unit),
            lo: None,
            hi: None,
            unit: c.unit.clone(),
            what: Subject::Before {
                cell: x.cell.clone(),
                metric: c.metric.clone(),
                session: c.a.clone(),
            },
        })
    });
    before.chain(compared_ratios(c)).collect()
}

/// Each compared cell's ratio, this session over the other.
fn compared_ratios(c: &Comparison) -> Vec<Number> {
    c.cells
        .iter()
        .filter_map(|x| {
            let what = Subject::Ratio {
                a: format!("{} in {}", x.cell, c.b),
                b: format!("{} in {}", x.cell, c.a),
                metric: Some(c.metric.clone()),
                from: RatioSource::Compared(c.a.clone()),
            };
            let id = format!("compared.{}.{}.ratio", kebab(&x.cell), kebab(&c.metric));
            Some(ratio_number(id, (x.ratio?, x.lo?, x.hi?), what))
        })
        .collect()
}

/// Each cell's median in each session of the History page, as its table prints it.
fn history_numbers(h: &lab_findings::history::History) -> Vec<Number> {
    let name = |number: usize| {
        h.sessions
            .iter()
            .find(|s| s.number == number)
            .map_or_else(String::new, |s| s.name.clone())
    };
    h.cells
        .iter()
        .flat_map(|c| c.points.iter().map(move |p| (c, p)))
        .map(|(c, p)| Number {
            id: format!(
                "history.{}.{}.session-{}",
                kebab(&c.cell),
                kebab(&h.metric),
                p.session
            ),
            value: number(p.median, &h.unit),
            lo: None,
            hi: None,
            unit: h.unit.clone(),
            what: Subject::Session {
                cell: c.cell.clone(),
                metric: h.metric.clone(),
                session: name(p.session),
                number: p.session,
                runs: p.runs,
            },
        })
        .collect()
}

/// Each ratio the notes quote that the session could give.
fn notes_ratios(exp: &Experiment, quoted: &lab_findings::notes::Quoted) -> Vec<Number> {
    quoted
        .ratios()
        .map(|((metric, a, b), v)| {
            let (a, b) = (cell_label(exp, a), cell_label(exp, b));
            let id = format!(
                "notes.{}.over.{}.{}.ratio",
                kebab(&a),
                kebab(&b),
                kebab(metric)
            );
            let what = Subject::Ratio {
                a,
                b,
                metric: Some(metric.clone()),
                from: RatioSource::Notes,
            };
            ratio_number(id, (v.ratio, v.lo, v.hi), what)
        })
        .collect()
}

#[cfg(test)]
#[path = "numbers_tests.rs"]
mod tests;
