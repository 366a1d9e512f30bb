//! `lab history EXP`: the primary metric (or `--metric`) of every cell across the experiment's
//! sessions in time order, with the steps between them named by the first session and commit
//! after each. `--check` exits 1 when the newest session stepped the wrong way.

use crate::assess::{Assessed, analysed};
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_config::Experiment;
use lab_config::format::{number, percent, ratio};
use lab_judge::analysis::Analysis;
use lab_judge::compare::chosen_metric;
use lab_judge::history::{Entry, History, history};
use lab_store::{self as store, StoredSession};
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

/// The sessions a history reads, each analysed as it ran, and those it leaves out with why.
pub(super) struct Sessions {
    pub kept: Vec<(StoredSession, Experiment, Analysis)>,
    pub left_out: Vec<String>,
}

/// Every session of the experiment in `dir` that measured something of its own: derived,
/// damaged and incomplete sessions, and unreadable ones, are left out with the reason.
pub(super) fn sessions(layout: &Layout, dir: &Path) -> Sessions {
    sessions_beside(layout, dir, None)
}

/// [`sessions`], taking the session `shown` as already assessed instead of analysing it again
/// (at 100,000 runs the analysis is most of a report's time).
pub(super) fn sessions_beside(layout: &Layout, dir: &Path, shown: Option<&Assessed>) -> Sessions {
    let name = lab_config::experiment_name(dir);
    let mut out = Sessions {
        kept: Vec::new(),
        left_out: Vec::new(),
    };
    let list = store::SessionList::new(&name, dir, &layout.data_dir(&name));
    for session_dir in list.all {
        let label = session_dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if !list.pickable.contains(&session_dir) {
            out.left_out.push(format!(
                "{label}: unrecorded (lab has no record of writing it)"
            ));
            continue;
        }
        if let Some(a) = shown.filter(|a| a.session.dir == session_dir)
            && left_out_because(&a.session).is_none()
        {
            let kept = (a.session.clone(), a.experiment.clone(), a.analysis.clone());
            out.kept.push(kept);
            continue;
        }
        let mut session = match store::load_session(&session_dir) {
            Ok(s) => s,
            Err(e) => {
                out.left_out.push(format!("{label}: unreadable ({e:#})"));
                continue;
            }
        };
        if let Some(why) = left_out_because(&session) {
            out.left_out.push(format!("{label}: {why}"));
            continue;
        }
        match analysed(dir, &mut session) {
            Ok((exp, analysis)) => out.kept.push((session, exp, analysis)),
            Err(e) => out.left_out.push(format!("{label}: {e}")),
        }
    }
    out
}

fn left_out_because(s: &StoredSession) -> Option<String> {
    let m = &s.manifest;
    if let Some(parent) = &m.derived_from {
        return Some(format!("a re-analysis of {parent}, whose runs it repeats"));
    }
    if let Some(r) = &m.revisions {
        let names: Vec<&str> = r.revs.iter().map(|r| r.name.as_str()).collect();
        return Some(format!(
            "an A/B session across revisions {}",
            names.join(",")
        ));
    }
    if m.damaged.is_some() {
        return Some("damaged".into());
    }
    (!m.complete).then(|| "incomplete".into())
}

impl Sessions {
    /// Leaves out the sessions measured under another profile than `profile` (a quick
    /// profile measures something else), saying so.
    pub(super) fn of_profile(mut self, profile: Option<&str>) -> Sessions {
        let (kept, other): (Vec<_>, Vec<_>) = self
            .kept
            .into_iter()
            .partition(|(s, _, _)| s.manifest.profile.as_deref() == profile);
        self.left_out.extend(other.iter().map(|(s, _, _)| {
            format!(
                "{}: profile {}, not {}",
                s.name,
                s.manifest.profile.as_deref().unwrap_or("default"),
                profile.unwrap_or("default")
            )
        }));
        self.kept = kept;
        self
    }

    /// The newest kept session's profile.
    pub(super) fn newest_profile(&self) -> Option<Option<String>> {
        self.kept.last().map(|(s, _, _)| s.manifest.profile.clone())
    }
}

/// The history of the kept sessions, in the newest one's metric (or `metric`).
pub(super) fn history_of(
    experiment: &str,
    sessions: &Sessions,
    metric: Option<&str>,
    threshold: f64,
) -> Result<Option<History>> {
    let Some((_, newest, _)) = sessions.kept.last() else {
        return Ok(None);
    };
    let metric = chosen_metric(newest, metric).map_err(LabError::Usage)?;
    let entries: Vec<Entry> = sessions
        .kept
        .iter()
        .map(|(s, _, a)| Entry {
            name: &s.name,
            manifest: &s.manifest,
            analysis: a,
        })
        .collect();
    Ok(Some(history(experiment, &entries, metric, threshold)))
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
