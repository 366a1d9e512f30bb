//! `lab history EXP`: the primary metric (or `--metric`) of every cell across the experiment's
//! sessions in time order, with the steps between them named by the first session and commit
//! after each. `--check` exits 1 when the newest session stepped the wrong way.

use crate::assess::beside::{history_of, sessions};
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_config::format::{number, percent, ratio};
use lab_judge::history::History;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// The experiment folder or its name.
    pub experiment: PathBuf,
    /// The metric to follow (default: the primary one).
    #[arg(long)]
    pub metric: Option<String>,
    /// Steps within ± this share are not reported ("2%" or 0.02).
    #[arg(long, default_value = "2%", value_parser = super::value_parsers::threshold)]
    pub threshold: f64,
    /// Exit 1 when the newest session stepped the wrong way.
    #[arg(long)]
    pub check: bool,
    /// Print the history as JSON.
    #[arg(long)]
    pub json: bool,
}

impl HistoryArgs {
    /// `lab history`: prints the history; with `--check`, fails on a regression.
    pub fn execute(self, layout: &Layout, _quiet: bool) -> Result<Exit> {
        let opts = HistoryOptions {
            metric: self.metric.as_deref(),
            threshold: self.threshold,
            check: self.check,
        };
        let (text, exit) = run_history(layout, &self.experiment, &opts, self.json)?;
        print!("{text}");
        Ok(exit)
    }
}

/// What `lab history` was asked.
pub struct HistoryOptions<'a> {
    pub metric: Option<&'a str>,
    /// Steps within ± this share are not reported.
    pub threshold: f64,
    /// Exit 1 when the newest session is a regression.
    pub check: bool,
}

/// `lab history`: the text (or JSON) and how lab ends.
pub fn run_history(
    layout: &Layout,
    arg: &Path,
    opts: &HistoryOptions,
    json: bool,
) -> Result<(String, Exit)> {
    let dir = layout.experiment_dir(arg)?;
    let name = lab_config::experiment_name(&dir);
    let all = sessions(layout, &dir);
    let profile = all.newest_profile().flatten();
    let sessions = all.of_profile(profile.as_deref());
    let Some(h) = history_of(&name, &sessions, opts.metric, opts.threshold)? else {
        return Err(LabError::Usage(format!(
            "{name} has no complete session to follow{}\n  hint: run `lab run {}` first",
            if sessions.left_out.is_empty() {
                String::new()
            } else {
                format!(" ({})", sessions.left_out.join("; "))
            },
            dir.display()
        )));
    };
    let exit = Exit::failed_if(opts.check && h.regressed_latest);
    let text = if json {
        serde_json::to_string_pretty(&h).map_err(anyhow::Error::from)? + "\n"
    } else {
        lab_config::format::terminal(&text(&h, &sessions.left_out))
    };
    Ok((text, exit))
}

/// The history as text: the sessions, then one line per cell with its steps.
fn text(h: &History, left_out: &[String]) -> String {
    let mut out = heading(h);
    for s in &h.sessions {
        out.push_str(&session_line(s));
    }
    for why in left_out {
        out.push_str(&format!("  left out: {why}\n"));
    }
    out.push_str(&cell_lines(h));
    if h.regressed_latest {
        out.push_str("the newest session is a regression\n");
    }
    out
}

/// The first line: the metric, its direction, the sessions and the threshold.
fn heading(h: &History) -> String {
    format!(
        "{}: {}{}, {} is better, {} session{} in time order; steps within ±{} are not reported\n",
        h.experiment,
        h.metric,
        if h.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", h.unit)
        },
        h.better,
        h.sessions.len(),
        if h.sessions.len() == 1 { "" } else { "s" },
        percent(h.threshold)
    )
}

/// One session's line: its number, name, commit, profile, label and machine.
fn session_line(s: &lab_judge::history::SessionMark) -> String {
    format!(
        "  {:>3}  {}  {}  {}{}{}\n",
        s.number,
        s.name,
        s.commit,
        s.profile,
        s.label
            .as_deref()
            .map_or_else(String::new, |l| format!("  \"{l}\"")),
        if s.unlike_newest.is_empty() {
            String::new()
        } else {
            format!("  * other machine: {}", s.unlike_newest.join("; "))
        }
    )
}

/// One line per cell: its medians session by session and its steps.
fn cell_lines(h: &History) -> String {
    let mut out = String::new();
    let width = h
        .cells
        .iter()
        .map(|c| lab_config::format::width(&c.cell))
        .max()
        .unwrap_or(4);
    for c in &h.cells {
        let levels: Vec<String> = c.points.iter().map(|p| number(p.median, &h.unit)).collect();
        let steps = if c.steps.is_empty() {
            "no step".to_string()
        } else {
            c.steps
                .iter()
                .map(|s| {
                    format!(
                        "{} {} at session {} ({}, commit {})",
                        s.kind.word(),
                        ratio(s.ratio),
                        s.session,
                        s.session_name,
                        s.commit
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        out.push_str(&format!(
            "{}  {}  {steps}\n",
            lab_config::format::pad(&c.cell, width),
            levels.join(" → ")
        ));
    }
    out
}
