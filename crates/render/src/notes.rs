//! The literate part: an experiment's `notes.md` rendered through Tera with the analysis in
//! context, so every number in the prose comes from the kept data.
//!
//! Vocabulary (documented for authors in docs/src/guide/notes.md):
//! - `cell(of="VARIANT param=value …", metric="NAME")` → the median with its CI and unit,
//!   e.g. "8.41 Mops/s [7.92, 8.80]"; with `stat="…"` one number instead: `median`, `mean`,
//!   `sd`, `cv`, `min`, `max`, `p90`, `p99`, `lo`, `hi`, `n`. `metric` defaults to the first one.
//! - `ratio(a="…", b="…", metric="NAME")` → "0.274 [0.250, 0.300]"; `stat="ratio"|"lo"|"hi"`.
//! - `check(name="…")` → its verdict as a badge with the word ("pass", "inconclusive
//!   untrusted"); `field="mark"|"verdict"|"evidence"|"reading"`.
//! - `chart(file="mops-by-threads.svg")` → the figure that shows one of the chapter's charts
//!   (its narrow drawing on small screens), with its number.
//! - `fig(name="mops-by-threads")`, `table(name="results-mops")` → a link "Figure 3" or
//!   "Table 2" to a numbered figure or table of the chapter (crate::numbering).
//! - `cite(key="chen2016")` → an author–year citation of an entry of references.bib, linked
//!   to the "References" section that follows the notes and lists what they cite.
//! - the filter `num(digits=3)` formats a number, `percent(digits=2)` a share as a percentage
//!   (both pass an `n/a (why)` marker through); `manifest` and `counts` are variables.
//!
//! Numbers come worked out: lab-judge resolves the cells and ratios the notes name before they
//! are rendered ([`NotesFile::wanted`], `lab_judge::notes::quote`), and rendering only looks
//! them up and formats them.
//!
//! A reference to a cell, metric, check or chart that lab.toml does not declare is an error
//! naming `notes.md:LINE:COLUMN`, never an empty or zero number. A reference whose data this
//! session lacks (a cell the profile did not run, too few runs for an interval) renders a
//! visible `n/a (why)` marker and a warning, and the chapter is still written.
//!
//! A benchmark is a hostile program: what runs and commands printed (the manifest, a check's
//! evidence and reading) enters the context inert wherever a template can put it, and `| safe`
//! cannot make it markup; a place no escaping helps is refused. Rendering has a budget of
//! loop iterations, output, memory and time.

#[path = "notes_budget.rs"]
mod budget;
#[path = "notes_citations.rs"]
mod citations;
#[path = "notes_compile.rs"]
mod compile;
#[path = "notes_filters.rs"]
mod filters;
#[path = "notes_held.rs"]
mod held;
#[path = "notes_input.rs"]
mod input;
#[path = "notes_location.rs"]
mod location;
#[path = "notes_places.rs"]
mod places;
#[path = "notes_references.rs"]
mod references;
#[path = "notes_source.rs"]
mod source;
#[path = "notes_text.rs"]
mod text;
use super::escape::markdown;
use super::figures::{Figure, Place};
use super::numbering::Numbering;
use super::numbers::Statistic;
use super::provenance::Ids;
use anyhow::Result;
use budget::Budget;
use lab_config::Experiment;
use lab_config::format::{ratio_interval, value, value_interval};
use lab_findings::analysis::{Analysis, CellStats};
use lab_findings::checks::CheckResult;
use lab_findings::notes::{Quoted, Wanted};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tera::{Kwargs, TeraResult, Value};
use text::{linked, pick};

pub use citations::{REFERENCES_FILE, References};
pub use held::CountingAllocator;

/// Rendered notes, and a warning for each reference whose data the session lacks.
#[derive(Debug, Clone, PartialEq)]
pub struct Notes {
    pub text: String,
    pub warnings: Vec<String>,
}

/// A mistake in notes.md or references.bib: an authoring error like a configuration error
/// (exit code 2), the message naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{0}\n  hint: the session data is kept; fix the file named above and run `lab report`")]
pub struct NotesError(pub String);

/// The author's notes file in an experiment folder.
pub const NOTES_FILE: &str = "notes.md";

/// The notes' name inside Tera: the `.md` suffix turns autoescape on.
const TEMPLATE: &str = "notes.md";

/// The notes as lab renders them, with a budget step in every loop.
const BUDGETED: &str = "budgeted/notes.md";

/// An experiment's notes.md as read, with the references.bib beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct NotesFile {
    pub path: PathBuf,
    pub source: String,
    pub references: References,
}

impl NotesFile {
    /// The experiment's notes.md; `None` when it has none. A references.bib that does not
    /// parse is an error where it is wrong.
    pub fn read(exp: &Experiment) -> Result<Option<NotesFile>> {
        let path = exp.dir.join(NOTES_FILE);
        let Some(source) = input::read_notes(&path)? else {
            return Ok(None);
        };
        let references = References::read(&exp.dir)?;
        Ok(Some(NotesFile {
            path,
            source,
            references,
        }))
    }

    /// The chart files the notes show with `chart(file="…")`, in the order the text names them.
    pub fn charts(&self) -> Vec<String> {
        references::chart_files(&self.source, &source::pieces(&self.source))
    }

    /// The cells, metrics and ratios the notes name, for lab-judge to work out.
    pub fn wanted(&self) -> Wanted {
        references::wanted(&self.source, &source::pieces(&self.source))
    }
}

/// Notes with the values lab-judge worked out for them: what a chapter renders.
#[derive(Debug, Clone)]
pub struct QuotedNotes {
    pub file: NotesFile,
    pub quoted: Quoted,
}

/// What of the chapter the notes can show and link to: its charts and their numbers, and the
/// numbers of its tables.
pub(crate) struct Shown<'a> {
    pub figures: &'a [Figure],
    pub numbering: &'a Numbering,
    /// The ids of the chapter's numbers, which a cell's or ratio's text links to.
    pub ids: &'a Ids,
}

/// Renders notes text, followed by the references it cites; errors name the file and the line
/// of the failing expression.
pub(crate) fn render_notes(
    notes: &QuotedNotes,
    exp: &Experiment,
    analysis: &Analysis,
    checks: &[CheckResult],
    shown: &Shown,
) -> Result<Notes> {
    let pass = |references: &References| {
        let data = notes_data(notes, exp, analysis, checks, shown, references.clone());
        render_pass(notes, analysis, data)
    };
    let mut references = notes.file.references.clone();
    let mut done = pass(&references)?;
    // Works of the same authors and year cited side by side are told apart by a letter after
    // the year (2016a, 2016b), which only the whole of the cited keys decides: a second pass
    // writes them.
    let letters = references.year_letters(&done.cited);
    if !letters.is_empty() {
        references = references.with_year_letters(letters);
        done = pass(&references)?;
    }
    let mut text = done.text;
    text.push_str(&references.section(&done.cited));
    let path = notes.file.path.display();
    let warnings = done
        .warnings
        .iter()
        .map(|w| format!("{path}: {w}"))
        .collect();
    Ok(Notes { text, warnings })
}

/// What the notes' functions read, with the `references` their citations are written from.
fn notes_data(
    notes: &QuotedNotes,
    exp: &Experiment,
    analysis: &Analysis,
    checks: &[CheckResult],
    shown: &Shown,
    references: References,
) -> Arc<NotesData> {
    Arc::new(NotesData {
        exp: exp.clone(),
        cells: notes.quoted.cells(analysis).into_iter().cloned().collect(),
        quoted: notes.quoted.clone(),
        checks: checks.to_vec(),
        warnings: Mutex::new(Vec::new()),
        charts: shown
            .figures
            .iter()
            .map(|f| (f.file.clone(), shown_again(f, shown.numbering)))
            .collect(),
        numbering: shown.numbering.clone(),
        ids: shown.ids.clone(),
        references,
        cited: Mutex::new(Vec::new()),
        last_statistic: Arc::default(),
    })
}

/// One rendering of the notes: the text, the keys cited in order, and the warnings.
struct Pass {
    text: String,
    cited: Vec<String>,
    warnings: Vec<String>,
}

fn render_pass(notes: &QuotedNotes, analysis: &Analysis, data: Arc<NotesData>) -> Result<Pass> {
    let (source, path) = (notes.file.source.as_str(), notes.file.path.as_path());
    let pieces = source::pieces(source);
    let (budgeted, loops) = budget::with_loop_steps(source, &pieces);
    let budget = Arc::new(Budget::new(loops));
    let tera = compile::compile(source, &pieces, &budgeted, path, &data, &budget)?;
    let rendering = budget::Rendering {
        tera,
        context: input::context(analysis)?,
        budget,
        path: path.to_path_buf(),
        source: source.to_string(),
    };
    let text = rendering.run()?;
    let taken = |m: &Mutex<Vec<String>>| m.lock().map(|v| v.clone()).unwrap_or_default();
    Ok(Pass {
        text,
        cited: taken(&data.cited),
        warnings: taken(&data.warnings),
    })
}

/// A chart as the notes show it: with its number, its anchor left where the chapter lays the
/// chart out.
fn shown_again(figure: &Figure, numbering: &Numbering) -> String {
    let place = numbering.figure(figure.name()).map(|number| Place {
        number,
        anchored: false,
    });
    super::figures::placed_figure_html(figure, place)
}

struct NotesData {
    exp: Experiment,
    /// The session's cells with those of the built-in metrics the notes name.
    cells: Vec<CellStats>,
    /// The ratios the notes name, worked out.
    quoted: Quoted,
    checks: Vec<CheckResult>,
    charts: Vec<(String, String)>,
    numbering: Numbering,
    ids: Ids,
    references: References,
    /// The keys `cite` was called with, in order: the entries of the References section.
    cited: Mutex<Vec<String>>,
    /// References whose data the session lacks, each rendered as an `n/a (why)` marker.
    warnings: Mutex<Vec<String>>,
    /// The statistic the last function returned, for the filter that formats it to link.
    last_statistic: Arc<filters::LastStatistic>,
}

/// The chapter's number a `stat=` of `cell(…)` is, where the chapter shows it (the results
/// tables' runs, median, mean, CV, smallest and largest value); the others (`sd`, `p90`, `p99`,
/// an interval's ends alone) are no number of their own there.
fn catalogued(stat: &str) -> Option<Statistic> {
    Some(match stat {
        "n" => Statistic::Runs,
        "median" => Statistic::Median,
        "mean" => Statistic::Mean,
        "cv" => Statistic::Cv,
        "min" => Statistic::Min,
        "max" => Statistic::Max,
        _ => return None,
    })
}

fn fail(message: String) -> tera::Error {
    tera::Error::message(message)
}

impl NotesData {
    fn metric_name(&self, kw: &Kwargs) -> TeraResult<String> {
        let name: Option<String> = kw.get("metric")?;
        lab_findings::notes::metric_name(&self.exp, name.as_deref()).map_err(fail)
    }

    /// Records a reference whose data is missing and returns its visible marker.
    fn missing(&self, reference: &str, why: &str) -> Value {
        if let Ok(mut w) = self.warnings.lock() {
            w.push(format!("{reference}: n/a ({why})"));
        }
        Value::from(markdown(&format!("n/a ({why})")))
    }

    /// The cell a selector names; `Ok(None)` when lab.toml declares it but this session did
    /// not run it.
    fn find_run(&self, selector: &str, metric: &str) -> TeraResult<Option<&CellStats>> {
        let cells: Vec<&CellStats> = self.cells.iter().collect();
        lab_findings::notes::find_run(&self.exp, &cells, selector, metric).map_err(fail)
    }

    fn cell_value(&self, kw: &Kwargs) -> TeraResult<Value> {
        let of: String = kw.must_get("of")?;
        let metric = self.metric_name(kw)?;
        let reference = format!("cell \"{of}\"");
        let Some(cell) = self.find_run(&of, &metric)? else {
            return Ok(self.missing(&reference, "not run in this session"));
        };
        let unit = self
            .exp
            .metric(&metric)
            .map_or(String::new(), |m| m.unit.clone());
        let Some(summary) = cell.summary.as_ref() else {
            return Ok(self.missing(&reference, "no valid run"));
        };
        let (lo, hi) = cell
            .median_ci
            .map_or((f64::NAN, f64::NAN), |c| (c.lo, c.hi));
        let wanted: Option<String> = kw.get("stat")?;
        if !lo.is_finite() && matches!(wanted.as_deref(), Some("lo" | "hi")) {
            let why = format!(
                "{of} has {} valid runs; an interval needs {}",
                cell.n,
                lab_findings::analysis::MIN_RUNS
            );
            return Ok(self.missing(&reference, &why));
        }
        let text = markdown(&if lo.is_finite() {
            value_interval(summary.median, lo, hi, &unit)
        } else {
            value(summary.median, &unit)
        });
        let text = linked(text, self.ids.cell(cell, Statistic::Median));
        let stats = serde_json::json!({
            "n": cell.n, "median": summary.median, "mean": summary.mean, "sd": summary.sd,
            "cv": summary.cv, "min": summary.min, "max": summary.max, "p90": summary.p90, "p99": summary.p99,
            "lo": lo, "hi": hi,
        });
        // A statistic the runs cannot define (the spread of one run) is stored as a non-finite
        // number, which JSON holds as null: name it instead of rendering nothing.
        if let Some(stat) = wanted
            .as_deref()
            .filter(|s| stats.get(s).is_some_and(|v| v.is_null()))
        {
            let why = format!("{of} has {} valid runs; its {stat} is not defined", cell.n);
            return Ok(self.missing(&reference, &why));
        }
        if let Some(value) = wanted.as_deref().and_then(|s| stats.get(s)?.as_f64()) {
            let id = wanted
                .as_deref()
                .and_then(catalogued)
                .and_then(|statistic| self.ids.cell(cell, statistic));
            self.last_statistic.returned(value, id);
        }
        pick(kw, "stat", text, &stats)
    }

    fn ratio_value(&self, kw: &Kwargs) -> TeraResult<Value> {
        let (a, b): (String, String) = (kw.must_get("a")?, kw.must_get("b")?);
        let metric = self.metric_name(kw)?;
        let reference = format!("ratio of \"{a}\" to \"{b}\"");
        let (Some(ca), Some(cb)) = (self.find_run(&a, &metric)?, self.find_run(&b, &metric)?)
        else {
            return Ok(self.missing(&reference, "a cell was not run in this session"));
        };
        let (r, lo, hi) = match self.quoted.ratio(&metric, ca, cb) {
            Some(Ok(v)) => (v.ratio, v.lo, v.hi),
            Some(Err(why)) => return Ok(self.missing(&reference, why)),
            None => {
                return Err(fail(format!(
                    "the {reference} was not worked out before rendering"
                )));
            }
        };
        let text = markdown(&ratio_interval(r, lo, hi));
        let text = linked(text, self.ids.notes_ratio(&metric, &ca.label, &cb.label));
        pick(
            kw,
            "stat",
            text,
            &serde_json::json!({ "ratio": r, "lo": lo, "hi": hi }),
        )
    }

    fn check_value(&self, kw: &Kwargs) -> TeraResult<Value> {
        let name: String = kw.must_get("name")?;
        let check = self
            .checks
            .iter()
            .find(|c| lab_findings::checks::names_the_same_check(&c.name, &name))
            .ok_or_else(|| fail(format!("no check named \"{name}\"")))?;
        let wanted: Option<String> = kw.get("field")?;
        match wanted.as_deref() {
            None | Some("mark") => Ok(Value::safe_string(&super::marks::mark(
                check.verdict,
                check.untrusted,
            ))),
            Some("verdict") => Ok(Value::from(check.verdict.word())),
            // Both quote what runs printed.
            Some("evidence") => Ok(input::untrusted_text(&check.evidence)),
            Some("reading") => Ok(input::untrusted_text(&check.reading)),
            Some(other) => Err(fail(format!(
                "no field \"{other}\"; choose one of: evidence, mark, reading, verdict"
            ))),
        }
    }

    fn chart_value(&self, kw: &Kwargs) -> TeraResult<Value> {
        let file: String = kw.must_get("file")?;
        let (_, figure) = self
            .charts
            .iter()
            .find(|(f, _)| *f == file)
            .ok_or_else(|| {
                fail(format!(
                    "no chart named \"{file}\"; charts: {}",
                    self.charts
                        .iter()
                        .map(|(f, _)| f.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        Ok(Value::safe_string(&format!("\n\n{figure}\n\n")))
    }

    fn figure_link(&self, kw: &Kwargs) -> TeraResult<Value> {
        let name: String = kw.must_get("name")?;
        let link = self.numbering.figure_link(&name).map_err(fail)?;
        Ok(Value::safe_string(&link))
    }

    fn table_link(&self, kw: &Kwargs) -> TeraResult<Value> {
        let name: String = kw.must_get("name")?;
        let link = self.numbering.table_link(&name).map_err(fail)?;
        Ok(Value::safe_string(&link))
    }

    fn citation(&self, kw: &Kwargs) -> TeraResult<Value> {
        let key: String = kw.must_get("key")?;
        let text = self.references.cite(&key).map_err(fail)?;
        if let Ok(mut cited) = self.cited.lock()
            && !cited.contains(&key)
        {
            cited.push(key);
        }
        Ok(Value::safe_string(&text))
    }
}

/// The chapter's notes rendered with its analysis, and their warnings; none without notes.
pub(crate) fn rendered(
    item: &super::Rendered,
    shown: &Shown,
) -> Result<(Option<String>, Vec<String>)> {
    let Some(n) = item.notes else {
        return Ok((None, Vec::new()));
    };
    let exp = item.experiment;
    let n = render_notes(n, exp, item.analysis, &item.findings.checks, shown)?;
    Ok((Some(n.text), n.warnings))
}
