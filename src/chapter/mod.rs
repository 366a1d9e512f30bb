//! The read side's last leg, from stored sessions to the book: each experiment's chosen (or
//! latest) session assessed by the lab.toml it ran with, put beside what its chapter shows
//! with it (history, the comparison with the session before, replications, bisections) and
//! rendered; one experiment's failure leaves its previous chapter, and every other, as they
//! were. What the commands print of it they are told through [`Told`].

pub mod bisections;
pub mod replications;
mod shown;
pub mod summary;

use crate::assess::Assessed;
use crate::assess::chosen::no_session;
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_config as config;
use lab_render::{self as render, BookEntry};
use lab_store::SessionRef;
pub use shown::Shown;
use std::path::{Path, PathBuf};
use summary::{Summary, Wanted};

/// Which experiments to render, and which session of them.
pub struct ReportOptions<'a> {
    /// Experiment arguments; empty means every experiment with data.
    pub only: &'a [PathBuf],
    /// The folder name of a session of the one experiment named in `only` (default: its
    /// latest).
    pub session: Option<&'a str>,
    pub quiet: bool,
    /// What each chapter's [`ChapterOutcome::summary`] is wanted for.
    pub summary: Wanted,
}

/// What a rendered chapter found: the summary `lab run` prints and its exit code follows.
#[derive(Debug, Clone)]
pub struct ChapterOutcome {
    pub name: String,
    pub summary: Summary,
    /// Measured (non-warm-up) runs that are valid.
    pub valid_runs: usize,
    /// Measured runs whose timings were discarded because the machine was busy.
    pub busy_runs: usize,
}

/// What went wrong with one experiment's chapter.
struct Failure {
    name: String,
    error: LabError,
}

/// A rendering error as lab ends with it: a mistake in notes.md is the author's to fix.
pub(crate) fn authoring(e: anyhow::Error) -> LabError {
    if e.downcast_ref::<render::notes::NotesError>().is_some() {
        LabError::Authoring(e)
    } else {
        LabError::Other(e)
    }
}

/// What [`Told`] hears as chapters are written, for the command line to print.
pub trait Told {
    /// A note about the record or the book (a notice of a session, a file left out).
    fn note(&self, text: &str);
    /// A warning: something the reader of the chapter should know is wrong.
    fn warning(&self, text: &str);
    /// The book was written: `rendered` chapters, `failed` that could not be.
    fn written(&self, book: &Path, rendered: usize, failed: usize);
}

/// Tells a session's notices, and whether it is out of date.
pub fn tell_notices(a: &Assessed, told: &dyn Told) {
    for notice in &a.notices {
        told.note(notice);
    }
    if let Some(outdated) = &a.outdated {
        told.warning(&format!("out of date: {outdated}"));
    }
}

/// `lab report`: re-renders chapters from stored sessions, each on its own: one experiment's
/// failure leaves its previous chapter, and every other chapter, as they were.
pub fn report(
    layout: &Layout,
    opts: &ReportOptions,
    told: &dyn Told,
) -> Result<Vec<ChapterOutcome>> {
    let which = opts.session.map(|name| SessionRef::Named(name.to_string()));
    render_book(layout, opts.only, which.as_ref(), opts.summary, told)
}

/// [`report`] with the session chosen as the command line names it.
pub fn render_book(
    layout: &Layout,
    only: &[PathBuf],
    which: Option<&SessionRef>,
    summary: Wanted,
    told: &dyn Told,
) -> Result<Vec<ChapterOutcome>> {
    if which.is_some() && only.len() != 1 {
        return Err(LabError::Usage(
            "`--session` names a session of one experiment: give exactly one experiment".into(),
        ));
    }
    let dirs = if only.is_empty() {
        layout.experiment_dirs()
    } else {
        only.iter()
            .map(|a| layout.experiment_dir(a))
            .collect::<Result<_>>()?
    };
    let book = layout.book();
    let mut rendered = Vec::new();
    let mut outcomes = Vec::new();
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = config::experiment_name(dir);
        match render_one(layout, dir, which, summary, told) {
            Ok(Some((entry, outcome))) => {
                rendered.push(entry);
                outcomes.push(outcome);
            }
            Ok(None) if !only.is_empty() => failures.push(Failure {
                error: no_session(dir),
                name,
            }),
            Ok(None) => {}
            Err(error) => failures.push(Failure { name, error }),
        }
    }
    let count = rendered.len();
    let entries = book_entries(layout, rendered, &failures)?;
    render::render_index(&book, &entries)?;
    told.written(&book, count, failures.len());
    failed(failures)?;
    Ok(outcomes)
}

/// Renders one experiment's chapter; `Ok(None)` when it has no session yet.
fn render_one(
    layout: &Layout,
    dir: &Path,
    which: Option<&SessionRef>,
    wanted: Wanted,
    told: &dyn Told,
) -> Result<Option<(BookEntry, ChapterOutcome)>> {
    let Some(shown) = Shown::of(layout, dir, which, told)? else {
        return Ok(None);
    };
    let Shown {
        assessed, context, ..
    } = &shown;
    let replications = replications::of(layout, dir, assessed)?;
    let bisections = bisections::of(layout, &assessed.experiment.name, told);
    let mut item = shown.rendered();
    item.replications = replications.as_ref();
    item.bisections = &bisections;
    let (entry, warnings) = render::render_chapter(&layout.book(), &item).map_err(authoring)?;
    for w in warnings {
        told.warning(&w);
    }
    let chapter = layout
        .book()
        .join("src")
        .join(&assessed.experiment.name)
        .join("index.md");
    let mut summary = summary::summarise(assessed, &chapter, wanted);
    if assessed.session.manifest.revisions.is_some() {
        summary.revisions = context.compared.clone();
    }
    let outcome = ChapterOutcome {
        name: assessed.experiment.name.clone(),
        summary,
        valid_runs: assessed.analysis.counts.valid,
        busy_runs: assessed.analysis.counts.busy,
    };
    shown.release();
    Ok(Some((entry, outcome)))
}

/// The book's list of experiments: those just rendered, and every other one from the chapter
/// it already has; one that failed with no chapter gets a short "could not render" page.
fn book_entries(
    layout: &Layout,
    mut entries: Vec<BookEntry>,
    failures: &[Failure],
) -> Result<Vec<BookEntry>> {
    let book = layout.book();
    for dir in layout
        .experiment_dirs()
        .into_iter()
        .chain(layout.bench_dirs())
    {
        let name = config::experiment_name(&dir);
        if entries.iter().any(|e| e.name == name) {
            continue;
        }
        let failure = failures.iter().find(|f| f.name == name);
        if book.join("src").join(&name).join("index.md").is_file() {
            entries.extend(render::existing_entry(&book, &name));
        } else if let Some(f) = failure {
            let reason = format!("{:#}", f.error);
            entries.push(render::render_failure_page(&book, &name, &reason)?);
        }
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// One error naming every chapter that could not be rendered, with the most telling exit code.
fn failed(failures: Vec<Failure>) -> Result<()> {
    if failures.is_empty() {
        return Ok(());
    }
    let usage = failures.iter().all(|f| f.error.exit() == Exit::Usage);
    let text = failures
        .iter()
        .map(|f| format!("{}: {:#}", f.name, f.error))
        .collect::<Vec<_>>()
        .join("\n");
    let message =
        format!("{text}\n  (every chapter that could not be rendered was left as it was)");
    Err(if usage {
        LabError::Usage(message)
    } else {
        LabError::Other(anyhow::anyhow!(message))
    })
}
