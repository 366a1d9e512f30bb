//! The commands that only read stored sessions: report, check, list and the HTML build.

use super::Layout;
use crate::analysis::{self, Analysis};
use crate::checks::{CheckResult, Tally, Verdict};
use crate::config::{self, CheckClass, Experiment};
use crate::error::{EXIT_CHECK_FAILED, EXIT_OK, LabError, Result};
use crate::render::{self, Rendered};
use crate::store::{self, StoredSession};
use std::path::{Path, PathBuf};

/// The latest session of an experiment, analysed under the profile it ran with.
pub fn analyse_latest(
    layout: &Layout,
    dir: &Path,
) -> Result<Option<(Experiment, StoredSession, Analysis)>> {
    let name = config::experiment_name(dir);
    let Some(session_dir) = store::sessions(&layout.data(), &name).pop() else {
        return Ok(None);
    };
    let session = store::load_session(&session_dir)?;
    let exp = config::load(dir, session.manifest.profile.as_deref())?;
    let analysis = analysis::analyze(&exp, &session);
    Ok(Some((exp, session, analysis)))
}

/// `lab report`: re-renders the book from stored sessions (all experiments with data).
pub fn report(layout: &Layout, only: &[PathBuf], quiet: bool) -> Result<()> {
    let dirs = if only.is_empty() {
        layout.experiment_dirs()
    } else {
        only.iter()
            .map(|a| layout.experiment_dir(a))
            .collect::<Result<_>>()?
    };
    let mut analysed = Vec::new();
    for dir in &dirs {
        match analyse_latest(layout, dir)? {
            Some(found) => analysed.push(found),
            None if !only.is_empty() => return Err(no_session(dir)),
            None => {}
        }
    }
    if !only.is_empty() {
        // The book lists every experiment with data, not just the ones asked for.
        for dir in layout
            .experiment_dirs()
            .iter()
            .filter(|d| !dirs.contains(d))
        {
            analysed.extend(analyse_latest(layout, dir)?);
        }
    }
    analysed.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    let items: Vec<Rendered> = analysed
        .iter()
        .map(|(e, s, a)| Rendered {
            experiment: e,
            analysis: a,
            session_dir: &s.dir,
        })
        .collect();
    render::render_book(&layout.book(), &items)?;
    if !quiet {
        eprintln!(
            "book written to {} ({} experiment{})",
            layout.book().display(),
            items.len(),
            if items.len() == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

fn no_session(dir: &Path) -> LabError {
    LabError::Usage(format!(
        "{} has no session yet\n  hint: run `lab run {}` first",
        config::experiment_name(dir),
        dir.display()
    ))
}

/// `lab report --json EXP`: the analysis as JSON.
pub fn report_json(layout: &Layout, arg: &Path) -> Result<String> {
    let dir = layout.experiment_dir(arg)?;
    let (_, _, analysis) = analyse_latest(layout, &dir)?.ok_or_else(|| no_session(&dir))?;
    Ok(serde_json::to_string_pretty(&analysis).map_err(anyhow::Error::from)? + "\n")
}

/// `lab check`: the verdicts and the exit code (1 when a validity check failed).
pub fn check(layout: &Layout, arg: &Path, json: bool) -> Result<(String, i32)> {
    let dir = layout.experiment_dir(arg)?;
    let (_, _, analysis) = analyse_latest(layout, &dir)?.ok_or_else(|| no_session(&dir))?;
    let failed = analysis
        .checks
        .iter()
        .any(|c| c.class == CheckClass::Validity && c.verdict == Verdict::Fail);
    let text = if json {
        serde_json::to_string_pretty(&analysis.checks).map_err(anyhow::Error::from)? + "\n"
    } else {
        verdict_table(&analysis.checks)
    };
    Ok((text, if failed { EXIT_CHECK_FAILED } else { EXIT_OK }))
}

/// The verdicts as an aligned text table, validity first.
pub fn verdict_table(checks: &[CheckResult]) -> String {
    let width = checks
        .iter()
        .map(|c| c.name.chars().count())
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
            "{verdict:<13} {class:<10} {:<width$}  {}\n",
            c.name, c.reading
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
        let sessions = store::sessions(&layout.data(), &name);
        let latest = match analyse_latest(layout, &dir) {
            Ok(Some((_, _, a))) => {
                let t = Tally::of(&a.checks);
                let trust = if t.untrusted { ", untrusted" } else { "" };
                format!(
                    "latest {}: {} pass, {} fail, {} inconclusive, {} not run{trust}",
                    a.session, t.pass, t.fail, t.inconclusive, t.not_run
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
