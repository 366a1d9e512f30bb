//! The catalogue of a chapter's numbers: every cell's median and mean with their intervals,
//! its spread and run count, and every ratio the chapter quotes (the checks', the compared
//! session's and the notes'), each under a stable id and printed as the chapter prints it.
//! `lab export` writes it for a paper; an id is what a number's provenance is known by.

use super::Rendered;
use lab_config::Experiment;
use lab_config::format::{correlation, number, percent, ratio};
use lab_findings::analysis::{Analysis, CellStats, cell_label};
use lab_findings::checks::{CheckResult, Verdict};
use lab_findings::compare::Comparison;
use serde::Serialize;
use std::collections::BTreeSet;

/// Every number of one chapter, in the order the chapter's sections show them.
#[derive(Debug, Clone, Serialize)]
pub struct Catalogue {
    pub numbers: Vec<Number>,
}

/// One number a reader sees, with its interval where the chapter prints one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Number {
    /// Kebab-case and dotted, from what the number is: `nonfair-threads-2.mops.median`.
    pub id: String,
    /// As the chapter prints it: `13.4`, `283 µ`, `12.4%`.
    pub value: String,
    pub lo: Option<String>,
    pub hi: Option<String>,
    /// The metric's unit (empty for ratios, shares and counts).
    pub unit: String,
    pub what: Subject,
}

/// The id of the number a table shows for a cell's statistic, where the chapter's catalogue
/// holds one: the anchor its link goes to on the provenance page.
pub(crate) type NumberId<'a> = &'a dyn Fn(&CellStats, Statistic) -> Option<String>;

/// What a number is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Subject {
    /// A statistic of one cell's runs.
    Cell {
        cell: String,
        metric: String,
        statistic: Statistic,
    },
    /// The median of a cell of the session the chapter's session is compared with.
    Before {
        cell: String,
        metric: String,
        session: String,
    },
    /// Spearman's ρ between two metrics over the runs of several cells, as a check decided
    /// on it.
    Correlation {
        metric: String,
        with: String,
        check: String,
    },
    /// A ratio of two medians: `a` over `b`.
    Ratio {
        a: String,
        b: String,
        metric: Option<String>,
        from: RatioSource,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Statistic {
    Median,
    /// The median with its distribution-free order-statistic interval.
    OrderCi,
    Mean,
    Cv,
    Runs,
    Min,
    Max,
    /// Tail percentiles of every recorded value, not one per run.
    P50,
    P90,
    P99,
    P999,
    /// The recorded values counted, and the largest of them.
    Values,
    ValuesMax,
    /// The medians of the lower and the higher of a cell's two modes, where its runs have two.
    ModeLow,
    ModeHigh,
}

/// Where the chapter quotes a ratio.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RatioSource {
    /// The check of this name decided on it.
    Check(String),
    /// The compared section: this session's median over that of the session named.
    Compared(String),
    /// The notes ask for it (`ratio(a=…, b=…)`).
    Notes,
}

impl Statistic {
    pub fn word(self) -> &'static str {
        match self {
            Statistic::Median => "median",
            Statistic::OrderCi => "order-ci",
            Statistic::Mean => "mean",
            Statistic::Cv => "cv",
            Statistic::Runs => "runs",
            Statistic::Min => "min",
            Statistic::Max => "max",
            Statistic::P50 => "p50",
            Statistic::P90 => "p90",
            Statistic::P99 => "p99",
            Statistic::P999 => "p99-9",
            Statistic::Values => "values",
            Statistic::ValuesMax => "values-max",
            Statistic::ModeLow => "mode-low",
            Statistic::ModeHigh => "mode-high",
        }
    }
}

impl Number {
    /// The interval as the chapter prints it: `[12.8, 13.6]`.
    pub fn interval(&self) -> Option<String> {
        Some(format!("[{}, {}]", self.lo.as_ref()?, self.hi.as_ref()?))
    }

    /// The number with its interval, as a table cell shows it: `13.4 [12.8, 13.6]`.
    pub fn text(&self) -> String {
        match self.interval() {
            Some(interval) => format!("{} {interval}", self.value),
            None => self.value.clone(),
        }
    }
}

impl Subject {
    /// In a few words: `nonfair threads=2, mops, median`; `ratio nonfair threads=2 / nonfair
    /// threads=1 (check "non-fair at 2 threads is under half of 1 thread")`.
    pub fn describe(&self) -> String {
        match self {
            Subject::Cell {
                cell,
                metric,
                statistic,
            } => format!("{cell}, {metric}, {}", statistic.word()),
            Subject::Before {
                cell,
                metric,
                session,
            } => format!("{cell}, {metric}, median in session {session}"),
            Subject::Correlation {
                metric,
                with,
                check,
            } => format!("Spearman's ρ of {metric} with {with} (check \"{check}\")"),
            Subject::Ratio { a, b, metric, from } => {
                let metric = metric
                    .as_deref()
                    .map_or_else(String::new, |m| format!(" of {m}"));
                let from = match from {
                    RatioSource::Check(name) => format!("check \"{name}\""),
                    RatioSource::Compared(session) => format!("compared with {session}"),
                    RatioSource::Notes => "notes".into(),
                };
                format!("ratio{metric} {a} / {b} ({from})")
            }
        }
    }
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
    numbers.extend(check_ratios(&item.findings.checks));
    numbers.extend(check_correlations(&item.findings.checks));
    numbers.extend(item.compared.map(compared_numbers).unwrap_or_default());
    if let Some(notes) = item.notes {
        numbers.extend(notes_ratios(exp, &notes.quoted));
    }
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

/// A cell's median and mean with their intervals, its CV, run count and range, as the
/// results table prints them.
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

/// A ratio of medians with its interval, as [`lab_config::format::ratio_interval`] prints it.
fn ratio_number(id: String, (r, lo, hi): (f64, f64, f64), what: Subject) -> Number {
    Number {
        id,
        value: ratio(r),
        lo: Some(ratio(lo)),
        hi: Some(ratio(hi)),
        unit: String::new(),
        what,
    }
}

/// The ratio each decided check read, as the answer block prints it.
fn check_ratios(checks: &[CheckResult]) -> Vec<Number> {
    checks
        .iter()
        .filter(|c| c.verdict != Verdict::NotRun)
        .filter_map(|c| {
            let r = c.ratio.as_ref().filter(|r| r.ratio.is_finite())?;
            let what = Subject::Ratio {
                a: r.a.clone(),
                b: r.b.clone(),
                metric: None,
                from: RatioSource::Check(c.name.clone()),
            };
            let id = format!("check.{}.ratio", kebab(&c.name));
            Some(ratio_number(id, (r.ratio, r.lo, r.hi), what))
        })
        .collect()
}

/// The ρ each decided `mechanism` check read, as its reading prints it.
fn check_correlations(checks: &[CheckResult]) -> Vec<Number> {
    checks
        .iter()
        .filter(|c| c.verdict != Verdict::NotRun)
        .filter_map(|c| {
            let r = c.correlation.as_ref().filter(|r| r.rho.is_finite())?;
            Some(Number {
                id: format!("check.{}.rho", kebab(&c.name)),
                value: correlation(r.rho),
                lo: Some(correlation(r.lo)),
                hi: Some(correlation(r.hi)),
                unit: String::new(),
                what: Subject::Correlation {
                    metric: r.metric.clone(),
                    with: r.with.clone(),
                    check: c.name.clone(),
                },
            })
        })
        .collect()
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

/// `text` in lower-case kebab form: ASCII letters and digits kept, every run of anything else
/// one hyphen (`nonfair threads=2` → `nonfair-threads-2`, `parks_per_op` → `parks-per-op`).
pub fn kebab(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

#[cfg(test)]
#[path = "numbers_tests.rs"]
mod tests;
