//! `lab list`: every experiment with its number of sessions and the latest one's verdicts.

use super::session::assess_chosen;
use crate::error::{Exit, Result};
use crate::layout::Layout;
use lab_config as config;
use lab_judge::checks::Tally;

#[derive(Debug, clap::Args)]
pub struct ListArgs {}

impl ListArgs {
    /// `lab list`: prints the list.
    pub fn execute(self, layout: &Layout, _quiet: bool) -> Result<Exit> {
        print!("{}", list(layout)?);
        Ok(Exit::Ok)
    }
}

/// `lab list`: experiments, sessions and the latest verdict counts.
pub fn list(layout: &Layout) -> Result<String> {
    let mut out = String::new();
    for dir in layout.experiment_dirs() {
        let name = config::experiment_name(&dir);
        let sessions = lab_store::sessions(&layout.data_dir(&name));
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
