//! Where each number of a chapter comes from. The chapter's provenance page lists every number
//! of its catalogue under the id its link goes to: what it is, the runs it was computed from,
//! the method with its parameters, and the command that recomputes it; `lab explain` prints
//! the same for one number.

use super::Rendered;
use super::numbers::{Catalogue, Number, RatioSource, Statistic, Subject};
use super::provenance_methods::{
    Cells, before_derivation, cell_method, correlation_derivation, look_derivation,
    multiplicity_derivation, ratio_method, ratio_runs, runs_of, session_derivation,
    side_derivation, undisturbed_method,
};
use super::published::{NUMBERS_JSON, PROVENANCE_PAGE};
use lab_findings::analysis::CellStats;
use serde::Serialize;
use std::collections::HashMap;

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
            Subject::Ratio { .. } | Subject::Side { .. } | Subject::Undisturbed { .. } => {
                "Ratios".to_string()
            }
            Subject::Multiplicity { .. } => "The hypotheses together".to_string(),
            Subject::Look { .. } => "The looks".to_string(),
            Subject::Session { .. } => "The History page".to_string(),
            Subject::CheckFigure { check, .. } => format!("Check \"{check}\""),
        };
        let each_own_runs = !matches!(number.what, Subject::Cell { .. } | Subject::Before { .. });
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
        Subject::Before { cell, session, .. } => before_derivation(cell, session),
        Subject::Correlation {
            metric,
            with,
            check,
        } => correlation_derivation(item, metric, with, check),
        Subject::Side { .. } => side_derivation(item, cells, number),
        Subject::Multiplicity { figure, .. } => multiplicity_derivation(item, figure),
        Subject::Look { .. } => look_derivation(item, &number.what),
        Subject::Session {
            cell,
            session,
            runs,
            ..
        } => session_derivation(cell, session, *runs),
        Subject::Undisturbed { check, a, b } => (
            ratio_runs(item, cells, a, b, None, &RatioSource::Check(check.clone())),
            undisturbed_method(item.analysis),
        ),
        Subject::CheckFigure { method, runs, .. } => (runs.clone(), method.clone()),
        Subject::Ratio { a, b, metric, from } => (
            ratio_runs(item, cells, a, b, metric.as_deref(), from),
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
    /// The bounds of each check's ratio undisturbed, by check: their id, and as printed.
    undisturbed: HashMap<String, (String, String)>,
    /// Each cell's median in each session of the History page, by label and session number.
    history: HashMap<(String, usize), String>,
    /// The medians of each cell's two modes, by cell label: each as printed, and its id.
    modes: HashMap<String, Vec<(String, String)>>,
    /// The multiplicity sentence's figures, in the order it prints them: each as printed, and
    /// its id.
    multiplicity: Vec<(String, String)>,
    /// The medians of the two cells of each check's ratio, by check: how its evidence shows
    /// each (`CELL = 13.5`, its unit after) and the number's id.
    sides: HashMap<String, Vec<(String, String)>>,
}

impl Ids {
    pub(crate) fn of(catalogue: &Catalogue) -> Ids {
        let mut ids = Ids::default();
        for n in &catalogue.numbers {
            ids.add(n);
        }
        ids
    }

    /// Files `n` under the key a table finds it by; the first number of a key keeps it.
    fn add(&mut self, n: &Number) {
        let id = n.id.clone();
        match &n.what {
            Subject::Cell {
                cell,
                metric,
                statistic,
            } => {
                if matches!(statistic, Statistic::ModeLow | Statistic::ModeHigh) {
                    let mode = (n.value.clone(), id.clone());
                    self.modes.entry(cell.clone()).or_default().push(mode);
                }
                let key = (cell.clone(), metric.clone(), *statistic);
                self.cells.entry(key).or_insert(id);
            }
            Subject::Before { cell, .. } => {
                self.before.entry(cell.clone()).or_insert(id);
            }
            Subject::Correlation { check, .. } => {
                let decided = (id, n.text());
                self.decided.entry(check.clone()).or_insert(decided);
            }
            // A check's figures are linked by their ids, found from the check's own figures.
            Subject::Look { .. } | Subject::CheckFigure { .. } => {}
            Subject::Undisturbed { check, .. } => {
                let shown = (id, n.value.clone());
                self.undisturbed.entry(check.clone()).or_insert(shown);
            }
            Subject::Session { cell, number, .. } => {
                self.history.entry((cell.clone(), *number)).or_insert(id);
            }
            Subject::Multiplicity { .. } => self.multiplicity.push((n.value.clone(), id)),
            Subject::Side { check, cell, .. } => {
                let side = (format!("{cell} = {}", n.value), id);
                self.sides.entry(check.clone()).or_default().push(side);
            }
            Subject::Ratio { from, a, b, metric } => self.add_ratio(n, from, (a, b, metric)),
        }
    }

    /// Files a ratio: a check's by its check, a compared one by its cell, the notes' by
    /// metric and cells.
    fn add_ratio(
        &mut self,
        n: &Number,
        from: &RatioSource,
        (a, b, metric): (&String, &String, &Option<String>),
    ) {
        let id = n.id.clone();
        match from {
            RatioSource::Check(name) => {
                self.checks.entry(name.clone()).or_insert(id.clone());
                self.decided.entry(name.clone()).or_insert((id, n.text()));
            }
            RatioSource::Compared(other) => {
                // `b` is "CELL in SESSION": the cell in the session compared with.
                let cell = b.strip_suffix(&format!(" in {other}")).unwrap_or(b);
                self.compared.entry(cell.to_string()).or_insert(id);
            }
            RatioSource::Notes => {
                let key = (metric.clone().unwrap_or_default(), a.clone(), b.clone());
                self.notes.entry(key).or_insert(id);
            }
        }
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

    /// The medians of the ratio's cells the check `name` decided on, as its evidence shows
    /// them (`CELL = 13.5`), each with its number's id.
    pub(crate) fn sides(&self, name: &str) -> &[(String, String)] {
        self.sides.get(name).map_or(&[], Vec::as_slice)
    }

    /// The medians of the two modes of the cell labelled `label`, each as printed with its
    /// number's id.
    pub(crate) fn modes(&self, label: &str) -> &[(String, String)] {
        self.modes.get(label).map_or(&[], Vec::as_slice)
    }

    /// The id of the bounds of the check `name`'s ratio undisturbed, and how they print.
    pub(crate) fn undisturbed(&self, name: &str) -> Option<(String, String)> {
        self.undisturbed.get(name).cloned()
    }

    /// The id of the median of the cell labelled `cell` in session `number` of the history.
    pub(crate) fn history(&self, cell: &str, number: usize) -> Option<&String> {
        self.history.get(&(cell.to_string(), number))
    }

    /// The multiplicity sentence's figures, each as printed with its number's id.
    pub(crate) fn multiplicity(&self) -> &[(String, String)] {
        &self.multiplicity
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
