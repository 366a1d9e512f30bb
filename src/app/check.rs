//! `lab check`: the verdicts of a stored session's checks, judged by the lab.toml it ran with,
//! and the exit status they give.

use super::session::{assessed, no_session, session_list};
use crate::assess::freshness;
use crate::chapter::summary;
use crate::error::{Exit, Result};
use crate::layout::Layout;
use lab_config::CheckClass;
use lab_config::format::terminal;
use lab_judge::checks::CheckResult;
use lab_store::SessionRef;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The experiment folder or its name.
    pub experiment: PathBuf,
    /// Judge this session instead of the latest.
    #[arg(long)]
    pub session: Option<SessionRef>,
    /// Print the verdicts as JSON.
    #[arg(long)]
    pub json: bool,
    /// Say only whether the session still describes the experiment: its sources, what its
    /// build wrote and, on the machine that ran it, its toolchain. Exit 1 when anything
    /// changed since (for CI).
    #[arg(long, conflicts_with = "json")]
    pub fresh: bool,
}

impl CheckArgs {
    /// `lab check`: prints the verdicts; fails when a check failed.
    pub fn execute(self, layout: &Layout, _quiet: bool) -> Result<Exit> {
        let (text, exit) = if self.fresh {
            fresh(layout, &self.experiment, self.session.as_ref())?
        } else {
            check(layout, &self.experiment, self.session.as_ref(), self.json)?
        };
        print!("{text}");
        Ok(exit)
    }
}

/// `lab check`: the verdicts and how lab ends (it fails when a validity check or a
/// hypothesis failed, or no run produced a valid measurement).
pub fn check(
    layout: &Layout,
    arg: &Path,
    session: Option<&SessionRef>,
    json: bool,
) -> Result<(String, Exit)> {
    let a = assessed(layout, arg, session)?;
    let checks = &a.findings.checks;
    let failed = summary::failed(&a);
    let text = if json {
        serde_json::to_string_pretty(checks).map_err(anyhow::Error::from)? + "\n"
    } else if a.analysis.counts.valid == 0 && a.analysis.counts.busy > 0 {
        verdict_table(checks)
            + &format!(
                "no run has a timing lab could use: the machine was busy during {} of them (their outputs were judged)\n",
                a.analysis.counts.busy
            )
    } else if a.analysis.counts.valid == 0 {
        verdict_table(checks)
            + &format!(
                "no run produced a valid measurement ({} of {} planned runs finished)\n",
                a.analysis.counts.finished, a.analysis.counts.planned
            )
    } else {
        verdict_table(checks)
    };
    Ok((text, Exit::failed_if(failed)))
}

/// `lab check --fresh`: whether the session still describes the experiment, without judging
/// it; fails when anything it measured changed since.
fn fresh(layout: &Layout, arg: &Path, which: Option<&SessionRef>) -> Result<(String, Exit)> {
    let dir = layout.experiment_dir(arg)?;
    let session_dir = session_list(layout, &dir)
        .find(which)?
        .ok_or_else(|| no_session(&dir))?;
    // Only the manifest and the sealed lab.toml: freshness needs none of the runs.
    let manifest = lab_store::load_manifest(&session_dir)?;
    let sealed = lab_store::Sealed::load(&session_dir);
    let name = session_dir
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let recorded = crate::assess::Recording {
        dir: &session_dir,
        name: &name,
        manifest: &manifest,
        sealed: sealed.as_ref(),
    };
    let (experiment, _) = crate::assess::experiment_as_run(&dir, &recorded)?;
    let changes = freshness::changes(&experiment, &manifest);
    if changes.is_empty() {
        let text = format!(
            "{}: session {name} is up to date: {}\n",
            experiment.name,
            freshness::compared(&manifest)
        );
        return Ok((text, Exit::Ok));
    }
    let banner = freshness::banner(&name, &manifest, &experiment.name, &changes);
    let text = format!("{}: out of date: {}\n", experiment.name, terminal(&banner));
    Ok((text, Exit::CheckFailed))
}

/// The verdicts as an aligned text table, validity first.
pub fn verdict_table(checks: &[CheckResult]) -> String {
    let width = checks
        .iter()
        .map(|c| lab_config::format::width(&c.name))
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
            lab_config::format::pad(&terminal(&c.name), width),
            terminal(&c.reading).replace('\n', " ")
        ));
    }
    if checks.iter().any(|c| c.untrusted) {
        out.push_str("* untrusted: a validity check failed in a cell the hypothesis read, or across the session\n");
    }
    out
}
