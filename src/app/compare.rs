//! `lab compare EXP A B`: two stored sessions of one experiment, each judged by the lab.toml
//! it ran with. First what differs between the two records (machine, kernel, lab.toml, tools,
//! commit), then per cell present in both the ratio B/A of a metric's medians with its
//! bootstrap interval, its half-width, and a verdict against a noise threshold: faster, slower,
//! the same (the whole interval inside the band) or inconclusive (across an edge of it). A
//! slower cell makes the command exit 1, for CI; an inconclusive one does not.

use super::session::session_list;
use crate::assess::beside::side;
use crate::assess::{Rows, assess};
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_config::format::{level, percent};
use lab_judge::compare::MIN_COMPARE_RUNS;
use lab_judge::compare::{Comparison, Difference, chosen_metric, comparison};
use lab_store::{self as store, SessionRef};
use std::path::{Path, PathBuf};

/// What `lab compare` was asked.
pub struct CompareOptions<'a> {
    /// The baseline session.
    pub a: SessionRef,
    /// The session compared with it.
    pub b: SessionRef,
    /// The metric to compare (default: the primary one).
    pub metric: Option<&'a str>,
    /// Changes within ± this share count as noise.
    pub threshold: f64,
}

/// The session in `dir`, which must not be damaged: a damaged session's values are not
/// compared with anything.
fn sound(dir: &Path) -> Result<store::StoredSession> {
    let session = store::load_session(dir)?;
    match session.damage() {
        Some(damage) => Err(LabError::Other(anyhow::anyhow!(
            "{damage}\n  hint: a damaged session is compared with nothing; compare another session"
        ))),
        None => Ok(session),
    }
}

/// `lab compare`: the comparison as text (or JSON) and how lab ends.
pub fn compare(
    layout: &Layout,
    arg: &Path,
    opts: &CompareOptions,
    json: bool,
) -> Result<(String, Exit)> {
    let dir = layout.experiment_dir(arg)?;
    let sessions = session_list(layout, &dir);
    let a = assess(&dir, sound(&sessions.resolve(&opts.a)?)?, Rows::Keep)?;
    let b = assess(&dir, sound(&sessions.resolve(&opts.b)?)?, Rows::Keep)?;
    let metric = chosen_metric(&b.experiment, opts.metric).map_err(LabError::Usage)?;
    let comparison = Comparison {
        noise: super::latest_noise(layout, &b.experiment.name).and_then(|f| f.quote()),
        ..comparison(&side(&a), &side(&b), metric, opts.threshold)
    };
    let text = if json {
        serde_json::to_string_pretty(&comparison).map_err(anyhow::Error::from)? + "\n"
    } else {
        lab_config::format::terminal(&text(&comparison))
    };
    Ok((text, Exit::failed_if(comparison.regressed)))
}

/// The sessions `lab compare` names: A and B as given, or with `--baseline NAME` the saved
/// session and A (default `latest`).
pub fn compared_pair(
    a: Option<SessionRef>,
    b: Option<SessionRef>,
    baseline: Option<String>,
) -> Result<(SessionRef, SessionRef)> {
    let Some(name) = baseline else {
        return match (a, b) {
            (Some(a), Some(b)) => Ok((a, b)),
            _ => Err(LabError::Usage(
                "lab compare needs two sessions, A and B, or --baseline NAME\n  hint: lab compare EXP previous latest".into(),
            )),
        };
    };
    if b.is_some() {
        return Err(LabError::Usage(
            "with --baseline, name at most one session to compare with it".into(),
        ));
    }
    Ok((SessionRef::Baseline(name), a.unwrap_or(SessionRef::Latest)))
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The experiment folder or its name.
    pub experiment: PathBuf,
    /// The baseline session (or, with --baseline, the session to compare with it).
    pub a: Option<SessionRef>,
    /// The session compared with A.
    pub b: Option<SessionRef>,
    /// Compare with the session saved as this baseline (`lab baseline`).
    #[arg(long)]
    pub baseline: Option<String>,
    /// The metric to compare (default: the primary one).
    #[arg(long)]
    pub metric: Option<String>,
    /// Changes within ± this share count as noise ("2%" or 0.02).
    #[arg(long, default_value = "2%", value_parser = super::value_parsers::threshold)]
    pub threshold: f64,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
}

impl CompareArgs {
    /// `lab compare`: prints the comparison; fails when a cell got slower.
    pub fn execute(self, layout: &Layout, _quiet: bool) -> Result<Exit> {
        let (a, b) = compared_pair(self.a, self.b, self.baseline)?;
        let opts = CompareOptions {
            a,
            b,
            metric: self.metric.as_deref(),
            threshold: self.threshold,
        };
        let (text, exit) = compare(layout, &self.experiment, &opts, self.json)?;
        print!("{text}");
        Ok(exit)
    }
}

/// The comparison as aligned text for the terminal.
pub(super) fn text(c: &Comparison) -> String {
    let unit = if c.unit.is_empty() {
        String::new()
    } else {
        format!(" ({})", c.unit)
    };
    let mut out = format!(
        "{}: B = {} against A = {}; {}{unit}, {} is better; changes within ±{} count as noise\n",
        c.experiment,
        c.b,
        c.a,
        c.metric,
        c.better,
        percent(c.threshold)
    );
    out.push_str(&differences(&c.differences));
    let width = c
        .cells
        .iter()
        .map(|x| lab_config::format::width(&x.cell))
        .max()
        .unwrap_or(4)
        .max(4);
    out.push_str(&format!(
        "{:<width$}  {:>10}  {:>10}  B/A [{} CI], ± half-width\n",
        "cell",
        "A",
        "B",
        level(c.level)
    ));
    for x in &c.cells {
        out.push_str(&cell_line(c, x, width));
    }
    out.push_str(&format!("{}\n", c.summary));
    if let Some(noise) = &c.noise {
        out.push_str(&format!("{noise}\n"));
    }
    out
}

/// The differences between the two records: those that invalidate the ratios first, under a
/// warning.
fn differences(differences: &[Difference]) -> String {
    let (loud, quiet): (Vec<&Difference>, Vec<&Difference>) =
        differences.iter().partition(|d| d.invalidates);
    let mut out = String::new();
    if !loud.is_empty() {
        out.push_str("WARNING: the two sessions were not measured alike; the ratios below may reflect that, not the change:\n");
        for d in &loud {
            out.push_str(&format!("  {}\n", d.line()));
        }
    }
    for d in &quiet {
        out.push_str(&format!("{}\n", d.line()));
    }
    out
}

/// One cell's line: its medians in A and B, and the ratio with its verdict.
fn cell_line(c: &Comparison, x: &lab_judge::compare::CellChange, width: usize) -> String {
    let median =
        |m: Option<f64>| m.map_or_else(|| "n/a".into(), |v| lab_config::format::number(v, &c.unit));
    let change = match (x.ratio, x.lo, x.hi) {
        (Some(r), Some(lo), Some(hi)) => {
            format!(
                "{}  {}  {}",
                lab_config::format::ratio_interval(r, lo, hi),
                x.resolution(),
                x.verdict_text(c.threshold)
            )
        }
        _ => format!(
            "{} (A {} runs, B {}; {MIN_COMPARE_RUNS} needed)",
            x.verdict.words(),
            x.a_runs,
            x.b_runs
        ),
    };
    format!(
        "{}  {:>10}  {:>10}  {change}\n",
        lab_config::format::pad(&x.cell, width),
        median(x.a_median),
        median(x.b_median)
    )
}
