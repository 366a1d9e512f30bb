//! The commands that only read stored sessions: report, check, list and the HTML build.

use super::Layout;
use super::compare::side;
use super::history::history_of;
use super::session::{Assessed, assess_chosen};
use super::summary::{self, Summary};
use crate::checks::{CheckResult, Tally};
use crate::compare::{Comparison, DEFAULT_THRESHOLD, Side, between_revisions, comparison};
use crate::config::{self, CheckClass};
use crate::error::{EXIT_CHECK_FAILED, EXIT_OK, EXIT_USAGE, LabError, Result};
use crate::format::terminal;
use crate::history::History;
use crate::render::{self, BookEntry, Rendered};
use std::path::{Path, PathBuf};

/// Which experiments to render, and which session of them.
pub struct ReportOptions<'a> {
    /// Experiment arguments; empty means every experiment with data.
    pub only: &'a [PathBuf],
    /// A session of the one experiment named in `only` (default: its latest).
    pub session: Option<&'a str>,
    pub quiet: bool,
}

/// What a rendered chapter found: the summary `lab run` prints and its exit code follows.
#[derive(Debug, Clone)]
pub struct ChapterOutcome {
    pub name: String,
    pub summary: Summary,
    /// Measured (non-warm-up) runs that are valid.
    pub valid_runs: usize,
}

/// What went wrong with one experiment's chapter.
struct Failure {
    name: String,
    error: LabError,
}

/// `lab report`: re-renders chapters from stored sessions, each on its own: one experiment's
/// failure leaves its previous chapter, and every other chapter, as they were.
pub fn report(layout: &Layout, opts: &ReportOptions) -> Result<Vec<ChapterOutcome>> {
    if opts.session.is_some() && opts.only.len() != 1 {
        return Err(LabError::Usage(
            "`--session` names a session of one experiment: give exactly one experiment".into(),
        ));
    }
    let dirs = if opts.only.is_empty() {
        layout.experiment_dirs()
    } else {
        opts.only
            .iter()
            .map(|a| layout.experiment_dir(a))
            .collect::<Result<_>>()?
    };
    let book = layout.book();
    let mut rendered = Vec::new();
    let mut outcomes = Vec::new();
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = config::experiment_name(dir);
        match render_one(layout, dir, opts) {
            Ok(Some((entry, outcome))) => {
                rendered.push(entry);
                outcomes.push(outcome);
            }
            Ok(None) if !opts.only.is_empty() => failures.push(Failure {
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
    if !opts.quiet {
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
    opts: &ReportOptions,
) -> Result<Option<(BookEntry, ChapterOutcome)>> {
    let Some(assessed) = assess_chosen(layout, dir, opts.session)? else {
        return Ok(None);
    };
    for notice in &assessed.notices {
        eprintln!("note: {}", terminal(notice));
    }
    let context = Context::of(layout, dir, &assessed)?;
    let (entry, warnings) = render::render_chapter(&layout.book(), &rendered(&assessed, &context))?;
    for w in warnings {
        eprintln!("warning: {}", terminal(&w));
    }
    let chapter = layout
        .book()
        .join("src")
        .join(&assessed.experiment.name)
        .join("index.md");
    let mut summary = summary::summarise(&assessed, &chapter);
    if assessed.session.manifest.revisions.is_some() {
        summary.revisions = context.compared.clone();
    }
    let outcome = ChapterOutcome {
        name: assessed.experiment.name.clone(),
        summary,
        valid_runs: assessed.analysis.counts.valid,
    };
    Ok(Some((entry, outcome)))
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
        let alone = crate::store::sessions(&layout.data_dir(&config::experiment_name(dir)))
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
            let compared = between_revisions(&shown.experiment, &shown.analysis, revisions, metric);
            let history = None;
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
                Some(comparison(&a, &side(shown), metric, DEFAULT_THRESHOLD))
            }
            _ => None,
        };
        Ok(Context { history, compared })
    }
}

fn rendered<'a>(a: &'a Assessed, context: &'a Context) -> Rendered<'a> {
    Rendered {
        experiment: &a.experiment,
        analysis: &a.analysis,
        findings: &a.findings,
        session_dir: &a.session.dir,
        notices: &a.notices,
        looks: &a.looks,
        history: context.history.as_ref(),
        compared: context.compared.as_ref(),
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
    for dir in layout.experiment_dirs() {
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
    let usage = failures.iter().all(|f| f.error.exit_code() == EXIT_USAGE);
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

fn no_session(dir: &Path) -> LabError {
    LabError::Usage(format!(
        "{} has no session yet\n  hint: run `lab run {}` first",
        config::experiment_name(dir),
        dir.display()
    ))
}

/// The chosen (or latest) session of one experiment, assessed.
fn assessed(layout: &Layout, arg: &Path, session: Option<&str>) -> Result<Assessed> {
    let dir = layout.experiment_dir(arg)?;
    let found = assess_chosen(layout, &dir, session)?.ok_or_else(|| no_session(&dir))?;
    for notice in &found.notices {
        eprintln!("note: {}", terminal(notice));
    }
    Ok(found)
}

/// `lab report --json EXP`: the analysis and the verdicts as JSON.
pub fn report_json(layout: &Layout, arg: &Path, session: Option<&str>) -> Result<String> {
    let a = assessed(layout, arg, session)?;
    let value = serde_json::json!({
        "analysis": a.analysis,
        "checks": a.findings.checks,
        "multiplicity": a.findings.multiplicity,
        "notices": a.notices,
    });
    Ok(serde_json::to_string_pretty(&value).map_err(anyhow::Error::from)? + "\n")
}

/// `lab check`: the verdicts and the exit code (1 when a validity check or a hypothesis
/// failed, or no run produced a valid measurement).
pub fn check(
    layout: &Layout,
    arg: &Path,
    session: Option<&str>,
    json: bool,
) -> Result<(String, i32)> {
    let a = assessed(layout, arg, session)?;
    let checks = &a.findings.checks;
    let failed = summary::failed(&a);
    let text = if json {
        serde_json::to_string_pretty(checks).map_err(anyhow::Error::from)? + "\n"
    } else if a.analysis.counts.valid == 0 {
        verdict_table(checks)
            + &format!(
                "no run produced a valid measurement ({} of {} planned runs finished)\n",
                a.analysis.counts.finished, a.analysis.counts.planned
            )
    } else {
        verdict_table(checks)
    };
    Ok((text, if failed { EXIT_CHECK_FAILED } else { EXIT_OK }))
}

/// The verdicts as an aligned text table, validity first.
pub fn verdict_table(checks: &[CheckResult]) -> String {
    let width = checks
        .iter()
        .map(|c| crate::format::width(&c.name))
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = format!(
        "{:<13} {:<10} {:<width$}  {}\n",
        "VERDICT", "CLASS", "CHECK", "READING"
    );
    for c in checks {
        let class = if c.class == CheckClass::Validity {
            "validity"
        } else {
            "hypothesis"
        };
        let verdict = if c.untrusted {
            format!("{}*", c.verdict.word())
        } else {
            c.verdict.word().to_string()
        };
        out.push_str(&format!(
            "{verdict:<13} {class:<10} {}  {}\n",
            crate::format::pad(&terminal(&c.name), width),
            terminal(&c.reading).replace('\n', " ")
        ));
    }
    if checks.iter().any(|c| c.untrusted) {
        out.push_str("* untrusted: a validity check failed\n");
    }
    out
}

/// `lab list`: experiments, sessions and the latest verdict counts.
pub fn list(layout: &Layout) -> Result<String> {
    let mut out = String::new();
    for dir in layout.experiment_dirs() {
        let name = config::experiment_name(&dir);
        let sessions = crate::store::sessions(&layout.data_dir(&name));
        let latest = match assess_chosen(layout, &dir, None) {
            Ok(Some(a)) => {
                let t = Tally::of(&a.findings.checks);
                let trust = if t.untrusted { ", untrusted" } else { "" };
                format!(
                    "latest {} ({}): {} pass, {} fail, {} inconclusive, {} not run{trust}",
                    a.session.name,
                    a.session.manifest.status(),
                    t.pass,
                    t.fail,
                    t.inconclusive,
                    t.not_run
                )
            }
            Ok(None) => "no session yet".to_string(),
            Err(e) => format!(
                "cannot analyse: {}",
                e.to_string().lines().next().unwrap_or("")
            ),
        };
        out.push_str(&format!(
            "{name:<24} {} session{}; {latest}\n",
            sessions.len(),
            if sessions.len() == 1 { "" } else { "s" }
        ));
    }
    if out.is_empty() {
        out.push_str("no experiments: create experiments/NAME/lab.toml\n");
    }
    Ok(out)
}

/// Builds the book's HTML with the mdBook library; returns the path of its index page.
pub fn build_html(layout: &Layout) -> Result<PathBuf> {
    let book = mdbook_driver::MDBook::load(layout.book()).map_err(|e| {
        anyhow::anyhow!("cannot load the book in {}: {e:#}", layout.book().display())
    })?;
    book.build()
        .map_err(|e| anyhow::anyhow!("building the book's HTML failed: {e:#}"))?;
    Ok(book.build_dir_for("html").join("index.html"))
}
