//! `lab report`: the chapters written from stored sessions through [`crate::chapter`], what
//! it tells printed on stderr; or one session's analysis and verdicts as JSON.

use super::session::assessed;
use super::stderr::Stderr;
pub use crate::chapter::ReportOptions;
use crate::chapter::summary::Wanted;
use crate::chapter::{self, ChapterOutcome};
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_store::SessionRef;
use std::path::{Path, PathBuf};

/// `lab report`: re-renders chapters from stored sessions, printing what it tells.
pub fn report(layout: &Layout, opts: &ReportOptions) -> Result<Vec<ChapterOutcome>> {
    chapter::report(layout, opts, &Stderr { quiet: opts.quiet })
}

/// [`report`] with the session chosen as the command line names it.
pub fn render_book(
    layout: &Layout,
    only: &[PathBuf],
    which: Option<&SessionRef>,
    quiet: bool,
    summary: Wanted,
) -> Result<Vec<ChapterOutcome>> {
    chapter::render_book(layout, only, which, summary, &Stderr { quiet })
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
