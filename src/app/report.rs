//! `lab report`: chapters re-rendered from stored sessions, each judged by the lab.toml it ran
//! with (read side of the pipeline: store → validity → analysis → checks → render).

use super::compare::side;
use super::history::history_of;
use super::session::{assess_chosen_with, assessed, no_session};
use super::summary::{self, Summary, Wanted};
use crate::assess::{Assessed, Rows};
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_config as config;
use lab_config::format::terminal;
use lab_judge::compare::{Comparison, DEFAULT_THRESHOLD, Side, between_revisions, comparison};
use lab_judge::history::History;
use lab_render::{self as render, BookEntry, Rendered};
use lab_store::SessionRef;
use std::path::{Path, PathBuf};

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
fn authoring(e: anyhow::Error) -> LabError {
    if e.downcast_ref::<render::notes::NotesError>().is_some() {
        LabError::Authoring(e)
    } else {
        LabError::Other(e)
    }
}

/// `lab report`: re-renders chapters from stored sessions, each on its own: one experiment's
/// failure leaves its previous chapter, and every other chapter, as they were.
pub fn report(layout: &Layout, opts: &ReportOptions) -> Result<Vec<ChapterOutcome>> {
    let which = opts.session.map(|name| SessionRef::Named(name.to_string()));
    render_book(layout, opts.only, which.as_ref(), opts.quiet, opts.summary)
}

/// [`report`] with the session chosen as the command line names it.
pub fn render_book(
    layout: &Layout,
    only: &[PathBuf],
    which: Option<&SessionRef>,
    quiet: bool,
    summary: Wanted,
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
        match render_one(layout, dir, which, summary) {
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
    if !quiet {
        eprintln!(
            "book written to {}: {count} chapter{} rendered{}",
            book.display(),
            if count == 1 { "" } else { "s" },
            if failures.is_empty() {
                String::new()
            } else {
                format!(", {} could not be", failures.len())
            }
        );
    }
    failed(failures)?;
    Ok(outcomes)
}

/// Renders one experiment's chapter; `Ok(None)` when it has no session yet.
fn render_one(
    layout: &Layout,
    dir: &Path,
    which: Option<&SessionRef>,
    wanted: Wanted,
) -> Result<Option<(BookEntry, ChapterOutcome)>> {
    let Some(shown) = Shown::of(layout, dir, which)? else {
        return Ok(None);
    };
    let Shown {
        assessed, context, ..
    } = &shown;
    let replications = super::replications::of(layout, dir, assessed)?;
    let bisections = super::bisections::of(layout, &assessed.experiment.name);
    let mut item = shown.rendered();
    item.replications = replications.as_ref();
    item.bisections = &bisections;
    let (entry, warnings) = render::render_chapter(&layout.book(), &item).map_err(authoring)?;
    for w in warnings {
        eprintln!("warning: {}", terminal(&w));
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
    release(shown);
    Ok(Some((entry, outcome)))
}

/// A session with what its chapter shows beside it: the comparison, the history and the
/// notes' values.
pub(crate) struct Shown {
    pub assessed: Assessed,
    context: Context,
    notes: Option<render::notes::QuotedNotes>,
}

impl Shown {
    /// The chosen (or latest) session of the experiment in `dir`, its notices printed;
    /// `Ok(None)` when it has none.
    pub(crate) fn of(
        layout: &Layout,
        dir: &Path,
        which: Option<&SessionRef>,
    ) -> Result<Option<Shown>> {
        let Some(assessed) = assess_chosen_with(layout, dir, which, Rows::GiveUp)? else {
            return Ok(None);
        };
        super::session::print_notices(&assessed);
        let context = Context::of(layout, dir, &assessed)?;
        let notes = quoted_notes(&assessed).map_err(authoring)?;
        Ok(Some(Shown {
            assessed,
            context,
            notes,
        }))
    }

    /// What the chapter renders, without the pages beside it (replications, bisections).
    pub(crate) fn rendered(&self) -> Rendered<'_> {
        Rendered {
            notes: self.notes.as_ref(),
            ..rendered(&self.assessed, &self.context)
        }
    }
}

/// The experiment's notes.md with the cells and ratios it names worked out by lab-judge, so
/// that rendering only formats them; `None` when it has no notes.
fn quoted_notes(assessed: &Assessed) -> anyhow::Result<Option<render::notes::QuotedNotes>> {
    let Some(file) = render::notes::NotesFile::read(&assessed.experiment)? else {
        return Ok(None);
    };
    let quoted = lab_judge::notes::quote(
        &assessed.experiment,
        &assessed.analysis,
        &assessed.findings.checks,
        &file.wanted(),
    );
    Ok(Some(render::notes::QuotedNotes { file, quoted }))
}

/// Frees an assessed session beside the work that follows: a large one is millions of
/// allocations (65 ms of 100,000 runs'), and a process that ends does not wait for them.
fn release(shown: Shown) {
    rayon::spawn(move || drop(shown));
}

/// What a chapter shows beside its own session: the experiment's history (two sessions or
/// more of the shown session's profile) and the comparison with the session before it.
struct Context {
    history: Option<History>,
    compared: Option<Comparison>,
}

impl Context {
    fn of(layout: &Layout, dir: &Path, shown: &Assessed) -> Result<Context> {
        let profile = shown.session.manifest.profile.as_deref();
        let alone = lab_store::sessions(&layout.data_dir(&config::experiment_name(dir)))
            .iter()
            .all(|d| *d == shown.session.dir);
        if alone && shown.session.manifest.revisions.is_none() {
            // No other session: no history and nothing to compare with.
            return Ok(Context {
                history: None,
                compared: None,
            });
        }
        let sessions =
            super::history::sessions_beside(layout, dir, Some(shown)).of_profile(profile);
        let name = &shown.experiment.name;
        if let (Some(revisions), Some(metric)) = (
            &shown.session.manifest.revisions,
            shown.experiment.primary_metric(),
        ) {
            // A sampled session's comparison is the one its last look read, at that look's level.
            let overall = shown
                .looks
                .last()
                .map_or(lab_judge::analysis::LEVEL, |s| s.level);
            let compared = between_revisions(
                &shown.experiment,
                &shown.analysis,
                revisions,
                metric,
                overall,
            );
            let history = None;
            let compared = compared.map(|c| quoting_noise(layout, c));
            return Ok(Context { history, compared });
        }
        let history = if sessions.kept.len() >= 2 {
            history_of(name, &sessions, None, DEFAULT_THRESHOLD)?
        } else {
            None
        };
        let before = sessions
            .kept
            .iter()
            .rev()
            .find(|(s, _, _)| s.name < shown.session.name);
        let compared = match (before, shown.experiment.primary_metric()) {
            (Some((s, exp, analysis)), Some(metric)) => {
                let a = Side {
                    name: &s.name,
                    experiment: exp,
                    analysis,
                    manifest: &s.manifest,
                };
                let c = comparison(&a, &side(shown), metric, DEFAULT_THRESHOLD);
                Some(quoting_noise(layout, c))
            }
            _ => None,
        };
        Ok(Context { history, compared })
    }
}

/// The comparison with the latest noise measurement of its experiment quoted, if one exists.
fn quoting_noise(layout: &Layout, c: Comparison) -> Comparison {
    Comparison {
        noise: super::latest_noise(layout, &c.experiment).and_then(|f| f.quote()),
        ..c
    }
}

fn rendered<'a>(a: &'a Assessed, context: &'a Context) -> Rendered<'a> {
    Rendered {
        experiment: &a.experiment,
        analysis: &a.analysis,
        findings: &a.findings,
        session_dir: &a.session.dir,
        notices: &a.notices,
        outdated: a.outdated.as_deref(),
        looks: &a.looks,
        history: context.history.as_ref(),
        compared: context.compared.as_ref(),
        replications: None,
        notes: None,
        bisections: &[],
    }
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

/// `lab report --json EXP`: the analysis and the verdicts as JSON.
pub fn report_json(layout: &Layout, arg: &Path, session: Option<&SessionRef>) -> Result<String> {
    let a = assessed(layout, arg, session)?;
    let mut value = serde_json::json!({
        "analysis": a.analysis,
        "checks": a.findings.checks,
        "multiplicity": a.findings.multiplicity,
        "notices": a.notices,
    });
    if let Some(outdated) = &a.outdated {
        value["outdated"] = outdated.as_str().into();
    }
    Ok(serde_json::to_string_pretty(&value).map_err(anyhow::Error::from)? + "\n")
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Experiments to render (default: every experiment with data).
    pub experiments: Vec<PathBuf>,
    /// Render this session (its folder name under data/NAME/, or a unique prefix) instead
    /// of the latest; needs exactly one experiment.
    #[arg(long)]
    pub session: Option<SessionRef>,
    /// Print the analysis of the given experiment as JSON instead of writing the book.
    #[arg(long)]
    pub json: bool,
}

impl ReportArgs {
    /// `lab report`: writes the chapters, or prints one experiment's analysis as JSON.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        if self.json {
            let [one] = self.experiments.as_slice() else {
                return Err(LabError::Usage(
                    "`lab report --json` takes exactly one experiment".into(),
                ));
            };
            print!("{}", report_json(layout, one, self.session.as_ref())?);
            return Ok(Exit::Ok);
        }
        let (experiments, session) = (&self.experiments, self.session.as_ref());
        render_book(layout, experiments, session, quiet, Wanted::Verdict).map(|_| Exit::Ok)
    }
}
