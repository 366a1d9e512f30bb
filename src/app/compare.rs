//! `lab compare EXP A B`: two stored sessions of one experiment, each judged by the lab.toml
//! it ran with. First what differs between the two records (machine, kernel, lab.toml, tools,
//! commit), then per cell present in both the ratio B/A of a metric's medians with its
//! bootstrap interval and a verdict against a noise threshold: faster, slower, or no
//! detectable change. A slower cell makes the command exit 1, for CI.

use super::Layout;
use super::session::{Assessed, assess, find_session};
use crate::compare::MIN_COMPARE_RUNS;
use crate::compare::{Comparison, Difference, Side, chosen_metric, comparison};
use crate::error::{EXIT_CHECK_FAILED, EXIT_OK, LabError, Result};
use crate::format::{level, percent};
use crate::store;
use std::path::{Path, PathBuf};

/// What `lab compare` was asked.
pub struct CompareOptions<'a> {
    /// The baseline session: a session name or prefix, `latest`, `previous` or a git commit.
    pub a: &'a str,
    /// The session compared with it.
    pub b: &'a str,
    /// The metric to compare (default: the primary one).
    pub metric: Option<&'a str>,
    /// Changes within ± this share count as noise.
    pub threshold: f64,
}

/// `lab compare`: the comparison as text (or JSON) and the exit code.
pub fn compare(
    layout: &Layout,
    arg: &Path,
    opts: &CompareOptions,
    json: bool,
) -> Result<(String, i32)> {
    let dir = layout.experiment_dir(arg)?;
    let a = assess(&dir, store::load_session(&pick(layout, &dir, opts.a)?)?)?;
    let b = assess(&dir, store::load_session(&pick(layout, &dir, opts.b)?)?)?;
    let metric = chosen_metric(&b.experiment, opts.metric)?;
    let comparison = comparison(&side(&a), &side(&b), metric, opts.threshold);
    let code = if comparison.regressed {
        EXIT_CHECK_FAILED
    } else {
        EXIT_OK
    };
    let text = if json {
        serde_json::to_string_pretty(&comparison).map_err(anyhow::Error::from)? + "\n"
    } else {
        crate::format::terminal(&text(&comparison))
    };
    Ok((text, code))
}

/// A stored session as one side of a comparison.
pub fn side(a: &Assessed) -> Side<'_> {
    Side {
        name: &a.session.name,
        experiment: &a.experiment,
        analysis: &a.analysis,
        manifest: &a.session.manifest,
    }
}

/// Where an experiment's named baselines are kept: name → session folder name.
const BASELINES: &str = "baselines.json";

/// `lab baseline EXP NAME`: records `session` (default: the latest) as baseline `name`.
pub fn save_baseline(
    layout: &Layout,
    arg: &Path,
    name: &str,
    session: Option<&str>,
) -> Result<String> {
    if let Some(why) = crate::config::identifier_problem(name) {
        return Err(LabError::Usage(format!(
            "the baseline name {name:?} {why}\n  hint: use letters, digits, `_`, `-` and `.`"
        )));
    }
    let dir = layout.experiment_dir(arg)?;
    let experiment = crate::config::experiment_name(&dir);
    let found = find_session(layout, &dir, session)?.ok_or_else(|| {
        LabError::Usage(format!(
            "{experiment} has no session yet\n  hint: run `lab run {}` first",
            dir.display()
        ))
    })?;
    let session_name = found
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let path = layout.data_dir(&experiment).join(BASELINES);
    let mut baselines = read_baselines(&path)?;
    baselines.insert(name.to_string(), session_name.clone());
    store::write_json(&path, &baselines)?;
    Ok(format!(
        "baseline {name} of {experiment} is session {session_name}"
    ))
}

fn read_baselines(path: &Path) -> Result<std::collections::BTreeMap<String, String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            LabError::Other(anyhow::anyhow!(
                "{} is not a list of baselines ({e}); fix or delete it",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Default::default()),
        Err(e) => Err(LabError::Other(anyhow::anyhow!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

/// The sessions `lab compare` names: A and B as given, or with `--baseline NAME` the saved
/// session and A (default `latest`).
pub fn compared_pair(
    layout: &Layout,
    arg: &Path,
    a: Option<&str>,
    b: Option<&str>,
    baseline: Option<&str>,
) -> Result<(String, String)> {
    let Some(name) = baseline else {
        return match (a, b) {
            (Some(a), Some(b)) => Ok((a.to_string(), b.to_string())),
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
    let dir = layout.experiment_dir(arg)?;
    let experiment = crate::config::experiment_name(&dir);
    let baselines = read_baselines(&layout.data_dir(&experiment).join(BASELINES))?;
    let saved = baselines.get(name).ok_or_else(|| {
        LabError::Usage(format!(
            "{experiment} has no baseline named {name:?}\n  hint: {}",
            if baselines.is_empty() {
                format!("save one with `lab baseline {} {name}`", dir.display())
            } else {
                format!(
                    "baselines: {}",
                    baselines.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            }
        ))
    })?;
    Ok((saved.clone(), a.unwrap_or("latest").to_string()))
}

/// The session `which` names: `latest`, `previous`, a session name or unique prefix, or the
/// latest session made at a git commit starting with `which`.
fn pick(layout: &Layout, dir: &Path, which: &str) -> Result<PathBuf> {
    let name = crate::config::experiment_name(dir);
    let all = store::sessions(&layout.data_dir(&name));
    let from_end = match which {
        "latest" => Some(1),
        "previous" => Some(2),
        _ => None,
    };
    if let Some(k) = from_end {
        return all
            .len()
            .checked_sub(k)
            .map(|i| all[i].clone())
            .ok_or_else(|| {
                LabError::Usage(format!(
                    "{name} has {} session{}: there is no {which} one\n  hint: run `lab run {}` first",
                    all.len(),
                    if all.len() == 1 { "" } else { "s" },
                    dir.display()
                ))
            });
    }
    let by_name = find_session(layout, dir, Some(which));
    if let Ok(Some(found)) = by_name {
        return Ok(found);
    }
    let at_commit = all.iter().rev().find(|d| {
        which.len() >= 4
            && which.chars().all(|c| c.is_ascii_hexdigit())
            && store::load_session(d).is_ok_and(|s| {
                s.manifest
                    .git
                    .as_ref()
                    .is_some_and(|g| g.commit.starts_with(&which.to_ascii_lowercase()))
            })
    });
    match (at_commit, by_name) {
        (Some(found), _) => Ok(found.clone()),
        (None, Err(e)) => Err(e),
        (None, Ok(_)) => Err(LabError::Usage(format!(
            "{name} has no session named like \"{which}\" and none made at a commit starting so\n  hint: name a session (`lab list`), `latest`, `previous`, or a git commit"
        ))),
    }
}

/// The comparison as aligned text for the terminal.
pub fn text(c: &Comparison) -> String {
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
    let (loud, quiet): (Vec<&Difference>, Vec<&Difference>) =
        c.differences.iter().partition(|d| d.invalidates);
    if !loud.is_empty() {
        out.push_str("WARNING: the two sessions were not measured alike; the ratios below may reflect that, not the change:\n");
        for d in &loud {
            out.push_str(&format!("  {}\n", d.line()));
        }
    }
    for d in &quiet {
        out.push_str(&format!("{}\n", d.line()));
    }
    let width = c
        .cells
        .iter()
        .map(|x| crate::format::width(&x.cell))
        .max()
        .unwrap_or(4)
        .max(4);
    out.push_str(&format!(
        "{:<width$}  {:>10}  {:>10}  B/A [{} CI]\n",
        "cell",
        "A",
        "B",
        level(c.level)
    ));
    for x in &c.cells {
        let median =
            |m: Option<f64>| m.map_or_else(|| "n/a".into(), |v| crate::format::number(v, &c.unit));
        let change = match (x.ratio, x.lo, x.hi) {
            (Some(r), Some(lo), Some(hi)) => {
                format!("{}  {}", interval_text(r, lo, hi), x.verdict.words())
            }
            _ => format!(
                "{} (A {} runs, B {}; {MIN_COMPARE_RUNS} needed)",
                x.verdict.words(),
                x.a_runs,
                x.b_runs
            ),
        };
        out.push_str(&format!(
            "{}  {:>10}  {:>10}  {change}\n",
            crate::format::pad(&x.cell, width),
            median(x.a_median),
            median(x.b_median)
        ));
    }
    out.push_str(&format!("{}\n", c.summary));
    out
}

fn interval_text(r: f64, lo: f64, hi: f64) -> String {
    crate::format::ratio_interval(r, lo, hi)
}
