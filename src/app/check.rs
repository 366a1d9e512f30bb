//! `lab check`: the verdicts of a stored session's checks, judged by the lab.toml it ran with,
//! and the exit status they give.

use super::session::assessed;
use super::summary;
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
}

impl CheckArgs {
    /// `lab check`: prints the verdicts; fails when a check failed.
    pub fn execute(self, layout: &Layout, _quiet: bool) -> Result<Exit> {
        let (text, exit) = check(layout, &self.experiment, self.session.as_ref(), self.json)?;
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
