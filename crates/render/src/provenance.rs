//! Where each number of a chapter comes from. The chapter's provenance page lists every number
//! of its catalogue under the id its link goes to: what it is, the runs it was computed from,
//! the method with its parameters, and the command that recomputes it; `lab explain` prints
//! the same for one number.

use super::Rendered;
use super::numbers::{Catalogue, Number, RatioSource, Statistic, Subject};
use super::published::{NUMBERS_JSON, PROVENANCE_PAGE};
use lab_config::format::{grouped, level, percent, significant};
use lab_findings::analysis::{Analysis, CellStats};
use serde::Serialize;
use std::collections::HashMap;

/// Run ids named one by one before the rest are counted.
const RUNS_NAMED: usize = 40;

/// One number's derivation.
#[derive(Debug, Clone, Serialize)]
pub struct Derivation {
    pub id: String,
    /// As the chapter prints it, with its unit: `8.41 M [7.92 M, 8.80 M] ops/s`.
    pub shown: String,
    /// What it is: `nonfair threads=2, mops, median`.
    pub what: String,
    /// The runs it was computed from.
    pub runs: String,
    /// The method and its parameters.
    pub method: String,
    /// The command that recomputes it from the session's raw files.
    pub recompute: String,
}

/// The provenance page's context: the numbers grouped by the runs they come from.
#[derive(Serialize)]
pub(crate) struct ProvenanceView {
    pub title: String,
    pub session: String,
    pub experiment: String,
    pub groups: Vec<Group>,
}

/// Numbers from the same runs: one cell's statistics of one metric; or the ratios, or the
/// correlations, each from runs of its own.
#[derive(Serialize)]
pub(crate) struct Group {
    pub heading: String,
    pub runs: String,
    /// Whether each number names its own runs (the ratios, the correlations).
    pub each_own_runs: bool,
    pub numbers: Vec<Derivation>,
}

/// Writes the chapter's page of where each number comes from into `dir`, and its numbers by
/// id as JSON (what `lab explain` compares with).
pub(crate) fn write(
    dir: &std::path::Path,
    item: &Rendered,
    catalogue: &Catalogue,
    tera: &tera::Tera,
) -> anyhow::Result<()> {
    let page = super::templates::render(tera, "provenance.md", &view(item, catalogue))?;
    super::write(&dir.join(PROVENANCE_PAGE), &page)?;
    let json = super::inert_json(&(serde_json::to_string_pretty(catalogue)? + "\n"));
    super::write(&dir.join(NUMBERS_JSON), &json)
}

/// The page of every number in `catalogue`, in the catalogue's order, each group where its
/// first number is.
pub(crate) fn view(item: &Rendered, catalogue: &Catalogue) -> ProvenanceView {
    let cells = Cells::of(item.analysis);
    let mut groups: Vec<Group> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    for number in &catalogue.numbers {
        let mut d = derived(item, &cells, number);
        let heading = match &number.what {
            Subject::Cell {
                cell,
                metric,
                statistic,
            } => {
                // The group's heading names the cell and metric; each row only its statistic.
                d.what = statistic.word().to_string();
                format!("{cell} · {metric}")
            }
            Subject::Before {
                cell,
                metric,
                session,
            } => {
                d.what = Statistic::Median.word().to_string();
                format!("{cell} · {metric} in session {session}")
            }
            Subject::Correlation { .. } => "Correlations".to_string(),
            Subject::Ratio { .. } => "Ratios".to_string(),
        };
        let each_own_runs = matches!(
            number.what,
            Subject::Ratio { .. } | Subject::Correlation { .. }
        );
        match group_of.get(&heading) {
            Some(&g) => groups[g].numbers.push(d),
            None => {
                group_of.insert(heading.clone(), groups.len());
                groups.push(Group {
                    heading,
                    runs: d.runs.clone(),
                    each_own_runs,
                    numbers: vec![d],
                });
            }
        }
    }
    ProvenanceView {
        title: item.experiment.title.clone(),
        session: item.analysis.session.clone(),
        experiment: item.experiment.name.clone(),
        groups,
    }
}

/// Where `number` of the chapter of `item` comes from.
pub fn derivation(item: &Rendered, number: &Number) -> Derivation {
    derived(item, &Cells::of(item.analysis), number)
}

/// [`derivation`], its cells looked up in `cells`.
fn derived(item: &Rendered, cells: &Cells, number: &Number) -> Derivation {
    let analysis = item.analysis;
    let (runs, method) = match &number.what {
        Subject::Cell {
            cell,
            metric,
            statistic,
        } => {
            let stats = cells.get(cell, Some(metric));
            (
                stats.map_or_else(|| format!("no runs of {cell}"), runs_of),
                cell_method(analysis, stats, *statistic),
            )
        }
        Subject::Before { cell, session, .. } => (
            format!("the valid, non-warm-up runs of {cell} in session {session}'s runs.csv"),
            format!(
                "the median of the runs' values in session {session}, as the comparison read it"
            ),
        ),
        Subject::Correlation {
            metric,
            with,
            check,
        } => correlation_derivation(item, metric, with, check),
        Subject::Ratio { a, b, metric, from } => (
            ratio_runs(cells, a, b, metric.as_deref(), from),
            ratio_method(item, from),
        ),
    };
    let unit = if number.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", number.unit)
    };
    Derivation {
        id: number.id.clone(),
        shown: format!("{}{unit}", number.text()),
        what: number.what.describe(),
        runs,
        method,
        recompute: format!(
            "lab explain {} {} --session {}",
            item.experiment.name, number.id, analysis.session
        ),
    }
}

/// The ids of the catalogue's numbers that the chapter's tables link, each found once: by
/// cell, metric and statistic; by check; by compared cell. Where two numbers share a key the
/// first in the catalogue's order is the one linked.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ids {
    cells: HashMap<(String, String, Statistic), String>,
    checks: HashMap<String, String>,
    compared: HashMap<String, String>,
    /// The compared cells' medians in the session before, by cell.
    before: HashMap<String, String>,
    /// The number each check decided on (a ratio or a ρ), by check: its id and its text.
    decided: HashMap<String, (String, String)>,
    /// The notes' ratios by metric, then the labels of the cells over each other.
    notes: HashMap<(String, String, String), String>,
}

impl Ids {
    pub(crate) fn of(catalogue: &Catalogue) -> Ids {
        let mut ids = Ids::default();
        for n in &catalogue.numbers {
            let id = n.id.clone();
            match &n.what {
                Subject::Cell {
                    cell,
                    metric,
                    statistic,
                } => {
                    let key = (cell.clone(), metric.clone(), *statistic);
                    ids.cells.entry(key).or_insert(id);
                }
                Subject::Before { cell, .. } => {
                    ids.before.entry(cell.clone()).or_insert(id);
                }
                Subject::Correlation { check, .. } => {
                    let decided = (id, n.text());
                    ids.decided.entry(check.clone()).or_insert(decided);
                }
                Subject::Ratio {
                    from: RatioSource::Check(name),
                    ..
                } => {
                    ids.checks.entry(name.clone()).or_insert(id.clone());
                    ids.decided.entry(name.clone()).or_insert((id, n.text()));
                }
                Subject::Ratio {
                    from: RatioSource::Compared(other),
                    b,
                    ..
                } => {
                    // `b` is "CELL in SESSION": the cell in the session compared with.
                    let cell = b.strip_suffix(&format!(" in {other}")).unwrap_or(b);
                    ids.compared.entry(cell.to_string()).or_insert(id);
                }
                Subject::Ratio {
                    from: RatioSource::Notes,
                    a,
                    b,
                    metric,
                } => {
                    let key = (metric.clone().unwrap_or_default(), a.clone(), b.clone());
                    ids.notes.entry(key).or_insert(id);
                }
            }
        }
        ids
    }

    /// The id of a cell's statistic.
    pub(crate) fn cell(&self, c: &CellStats, statistic: Statistic) -> Option<String> {
        let key = (c.label.clone(), c.metric.clone(), statistic);
        self.cells.get(&key).cloned()
    }

    /// The id of the ratio of `metric` the notes quote, of the cell labelled `a` over `b`.
    pub(crate) fn notes_ratio(&self, metric: &str, a: &str, b: &str) -> Option<String> {
        let key = (metric.to_string(), a.to_string(), b.to_string());
        self.notes.get(&key).cloned()
    }

    /// The id and text of the number (a ratio or a ρ) the check `name` decided on.
    pub(crate) fn decided(&self, name: &str) -> Option<(String, String)> {
        self.decided.get(name).cloned()
    }

    /// The id of the ratio the check `name` decided on.
    pub(crate) fn check(&self, name: &str) -> Option<String> {
        self.checks.get(name).cloned()
    }

    /// The compared section with each median and ratio of `metric` linked to its number.
    pub(crate) fn link_compared(
        &self,
        mut view: super::compared::ComparedView,
        metric: &str,
    ) -> super::compared::ComparedView {
        for row in &mut view.rows {
            row.ratio_id = self.compared.get(&row.cell).cloned();
            row.before_id = self.before.get(&row.cell).cloned();
            let key = (row.cell.clone(), metric.to_string(), Statistic::Median);
            row.after_id = self.cells.get(&key).cloned();
        }
        view
    }
}

/// The analysis's cells by label and metric, and by label alone (the first of its metrics).
struct Cells<'a> {
    by_metric: HashMap<(&'a str, &'a str), &'a CellStats>,
    by_label: HashMap<&'a str, &'a CellStats>,
}

impl<'a> Cells<'a> {
    fn of(analysis: &'a Analysis) -> Cells<'a> {
        let mut cells = Cells {
            by_metric: HashMap::new(),
            by_label: HashMap::new(),
        };
        for c in &analysis.cells {
            let key = (c.label.as_str(), c.metric.as_str());
            cells.by_metric.entry(key).or_insert(c);
            cells.by_label.entry(c.label.as_str()).or_insert(c);
        }
        cells
    }

    fn get(&self, label: &str, metric: Option<&str>) -> Option<&'a CellStats> {
        match metric {
            Some(m) => self.by_metric.get(&(label, m)).copied(),
            None => self.by_label.get(label).copied(),
        }
    }
}

/// "the 40 valid, non-warm-up runs of nonfair threads=2 (r0003, r0011, …)".
fn runs_of(c: &CellStats) -> String {
    let named: Vec<&str> = c
        .run_ids
        .iter()
        .take(RUNS_NAMED)
        .map(String::as_str)
        .collect();
    let more = c.run_ids.len().saturating_sub(RUNS_NAMED);
    let rest = if more > 0 {
        format!(" and {} more", grouped(more as u64))
    } else {
        String::new()
    };
    format!(
        "the {} valid, non-warm-up run{} of {} in runs.csv ({}{rest})",
        grouped(c.run_ids.len() as u64),
        if c.run_ids.len() == 1 { "" } else { "s" },
        c.label,
        named.join(", ")
    )
}

fn ratio_runs(cells: &Cells, a: &str, b: &str, metric: Option<&str>, from: &RatioSource) -> String {
    if let RatioSource::Compared(other) = from {
        return format!("this session's runs of the cell and those of session {other}");
    }
    let side = |label: &str| {
        cells
            .get(label, metric)
            .map_or_else(|| format!("no runs of {label}"), runs_of)
    };
    format!("{}; over {}", side(a), side(b))
}

/// "{resamples} resamples, seed {seed}".
fn resampling(analysis: &Analysis) -> String {
    format!(
        "{} resamples, seed {}",
        grouped(analysis.resampling.resamples as u64),
        analysis.resampling.seed
    )
}

fn cell_method(analysis: &Analysis, c: Option<&CellStats>, statistic: Statistic) -> String {
    let at = level(analysis.resampling.level);
    let stages = match c {
        Some(c) if c.machines.is_some() => "machines, then runs, then each run's values",
        Some(c) if c.runs.iter().any(|r| r.len() > 1) => "runs, then each run's values",
        _ => "runs",
    };
    match statistic {
        Statistic::Median => format!(
            "the median of the runs' values; {at} percentile bootstrap interval resampling {stages}, {}",
            resampling(analysis)
        ),
        Statistic::Mean => format!(
            "the mean of the runs' values; {at} BCa bootstrap interval of the mean of the run means, {}",
            resampling(analysis)
        ),
        Statistic::OrderCi => order_method(c),
        Statistic::Cv => "the standard deviation of the runs' values over their mean".into(),
        Statistic::Runs => "the runs counted".into(),
        Statistic::Min => "the smallest of the runs' values".into(),
        Statistic::Max => "the largest of the runs' values".into(),
        Statistic::P50 | Statistic::P90 | Statistic::P99 | Statistic::P999 => {
            percentile_method(analysis, statistic)
        }
        Statistic::Values => "every value the runs recorded, counted".into(),
        Statistic::ValuesMax => "the largest value the runs recorded".into(),
        Statistic::ModeLow | Statistic::ModeHigh => mode_method(c, statistic),
    }
}

/// A mode's method: which group of the split, and the dip test that called for it.
fn mode_method(c: Option<&CellStats>, statistic: Statistic) -> String {
    let (side, at) = match statistic {
        Statistic::ModeLow => ("lower", 0),
        _ => ("higher", 1),
    };
    let dip = c.and_then(|c| c.modes.as_ref());
    let share = dip
        .and_then(|d| d.modes.get(at))
        .map_or_else(String::new, |m| {
            format!(", which holds {} of them", percent(m.share))
        });
    let test = dip.map_or_else(String::new, |d| {
        format!(
            ": dip {} over the critical value {}",
            significant(d.dip, 3),
            significant(d.critical, 3)
        )
    });
    format!(
        "the median of the {side} of two groups of the runs' values, split where the squared \
         deviations from each group's mean sum least{share}; the runs are split because \
         Hartigan's dip test found a second mode (Hartigan and Hartigan 1985){test}"
    )
}

/// The order-statistic interval's method, with the coverage it reached.
fn order_method(c: Option<&CellStats>) -> String {
    let reached = c
        .and_then(|c| c.exact_median_ci.as_ref())
        .map_or_else(String::new, |e| format!(", here {}", percent(e.coverage)));
    format!(
        "the median of the runs' values; the narrowest symmetric interval between two of their \
         order statistics whose binomial coverage is at least {} (Le Boudec 2010, Thm 2.1){reached}",
        level_of(c)
    )
}

/// The requested level of a cell's order-statistic interval.
fn level_of(c: Option<&CellStats>) -> String {
    c.and_then(|c| c.exact_median_ci.as_ref())
        .map_or_else(String::new, |e| level(e.interval.level))
}

/// A tail percentile's method: which quantile of every value, and its interval.
fn percentile_method(analysis: &Analysis, statistic: Statistic) -> String {
    let p = match statistic {
        Statistic::P50 => "0.5",
        Statistic::P90 => "0.9",
        Statistic::P99 => "0.99",
        _ => "0.999",
    };
    format!(
        "the type-7 {p}-quantile of every value the runs recorded; {} percentile bootstrap \
         interval resampling the values where there are at least 1/(1 − {p}) of them, {}",
        level(analysis.resampling.level),
        resampling(analysis)
    )
}

/// The runs and method of the ρ the check `name` decided on.
fn correlation_derivation(
    item: &Rendered,
    metric: &str,
    with: &str,
    name: &str,
) -> (String, String) {
    let found = item
        .findings
        .checks
        .iter()
        .find(|c| c.name == name)
        .and_then(|c| c.correlation.as_ref());
    let runs = found.map_or_else(String::new, |r| {
        format!(
            "the {} valid runs with both {metric} and {with}, in {} cells",
            grouped(r.points as u64),
            r.cells
        )
    });
    let at = found.map_or_else(String::new, |r| format!("{} ", level(r.level)));
    let method = format!(
        "Spearman's rank correlation of the runs' {metric} with their {with} (each run's \
         median of its values); {at}percentile bootstrap interval resampling runs within each \
         cell, {}, as check \"{name}\" decided on it",
        resampling(item.analysis)
    );
    (runs, method)
}

fn ratio_method(item: &Rendered, from: &RatioSource) -> String {
    let analysis = item.analysis;
    let how = format!(
        "the ratio of the two medians; bootstrap interval of the ratio, {}",
        resampling(analysis)
    );
    match from {
        RatioSource::Check(name) => {
            let at = item
                .findings
                .checks
                .iter()
                .find(|c| c.name == *name)
                .and_then(|c| c.ratio.as_ref())
                .map_or_else(String::new, |r| format!(" at {}", level(r.level)));
            format!("{how}{at}, as check \"{name}\" decided on it")
        }
        RatioSource::Compared(other) => {
            format!("this session's median over that of session {other}; {how}")
        }
        RatioSource::Notes => format!("{how}, at {}", level(analysis.resampling.level)),
    }
}
