//! An experiment's sessions in time order: per cell, the median of a metric in every session
//! with its interval, and the steps between sessions ([`lab_stats::steps`]) beyond a noise
//! threshold, each named by the first session (and commit) after it and judged a regression or
//! an improvement. Sessions measured on a machine unlike the newest one's are marked.

use crate::analysis::{Analysis, CellStats};
use crate::compare::{commit, differences};
use lab_config::{Better, Metric};
use lab_stats::steps::{self, LogPoint};
use lab_stats::summary::median;
use lab_store::Manifest;

pub use lab_findings::history::{
    CellHistory, History, HistoryPoint, MIN_SESSIONS, SessionMark, Step, StepKind,
};

/// One session read for the history: its name, record and analysis.
pub struct Entry<'a> {
    pub name: &'a str,
    pub manifest: &'a Manifest,
    pub analysis: &'a Analysis,
}

/// The history of `metric` over `entries` (oldest first).
pub fn history(experiment: &str, entries: &[Entry], metric: &Metric, threshold: f64) -> History {
    let sessions = marks(entries);
    let labels = cell_labels(entries, &metric.name);
    let level = 1.0 - (1.0 - crate::analysis::LEVEL) / labels.len().max(1) as f64;
    let judged = Judged {
        better: metric.better,
        threshold,
        level,
    };
    let cells: Vec<CellHistory> = labels
        .into_iter()
        .map(|(label, variant)| {
            let mut cell = cell_history(&label, entries, &sessions, &metric.name, &judged);
            cell.variant = variant;
            cell
        })
        .collect();
    let newest = sessions.len();
    let regressed_latest = cells.iter().any(|c| {
        c.steps
            .iter()
            .any(|s| s.session == newest && s.kind == StepKind::Regression)
    });
    History {
        experiment: experiment.to_string(),
        metric: metric.name.clone(),
        unit: metric.unit.clone(),
        better: metric.better.word().into(),
        threshold,
        sessions,
        cells,
        regressed_latest,
    }
}

fn marks(entries: &[Entry]) -> Vec<SessionMark> {
    let newest = entries.last().map(|e| e.manifest);
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| SessionMark {
            number: i + 1,
            name: e.name.to_string(),
            started_utc: e.manifest.started_utc.clone(),
            commit: commit(e.manifest),
            label: e.manifest.label.clone(),
            profile: e
                .manifest
                .profile
                .clone()
                .unwrap_or_else(|| "default".into()),
            unlike_newest: newest.map_or_else(Vec::new, |n| unlike(e.manifest, n)),
        })
        .collect()
}

/// The machine facts in which `m` differs from `newest` (the lab.toml, which is edited for
/// many reasons, is left out: a changed matrix shows as different cells).
fn unlike(m: &Manifest, newest: &Manifest) -> Vec<String> {
    differences(m, newest)
        .into_iter()
        .filter(|d| d.invalidates && d.what != "lab.toml SHA-256")
        .map(|d| d.line())
        .collect()
}

/// Cell labels of `metric`: the newest session's in its order, then any only older sessions
/// have, in the order they first appear.
fn cell_labels(entries: &[Entry], metric: &str) -> Vec<(String, String)> {
    let mut labels: Vec<(String, String)> = Vec::new();
    for e in entries.iter().rev() {
        for c in e.analysis.cells.iter().filter(|c| c.metric == metric) {
            if !labels.iter().any(|(l, _)| *l == c.label) {
                labels.push((c.label.clone(), c.cell.variant.clone()));
            }
        }
    }
    labels
}

/// How a step is judged: its direction by `better`, reported beyond ±`threshold` when it
/// holds at `level` (Bonferroni over the cells, so that all cells' steps hold together at 95%).
struct Judged {
    better: Better,
    threshold: f64,
    level: f64,
}

fn cell_history(
    label: &str,
    entries: &[Entry],
    sessions: &[SessionMark],
    metric: &str,
    judged: &Judged,
) -> CellHistory {
    let points: Vec<HistoryPoint> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let cell = e
                .analysis
                .cells
                .iter()
                .find(|c| c.metric == metric && c.label == label)?;
            point(i + 1, cell)
        })
        .collect();
    let steps = steps_of(&points, sessions, judged);
    CellHistory {
        cell: label.to_string(),
        variant: String::new(),
        points,
        steps,
    }
}

fn point(session: usize, cell: &CellStats) -> Option<HistoryPoint> {
    Some(HistoryPoint {
        session,
        median: cell.median()?,
        lo: cell.median_ci.map(|i| i.lo),
        hi: cell.median_ci.map(|i| i.hi),
        runs: cell.n,
        level: cell.median_ci.map_or(crate::analysis::LEVEL, |i| i.level),
        run_values: cell
            .runs
            .iter()
            .filter(|r| !r.is_empty())
            .map(|r| median(r))
            .collect(),
    })
}

/// The steps beyond the threshold that hold at the judged level, among the points that have an
/// interval.
fn steps_of(points: &[HistoryPoint], sessions: &[SessionMark], judged: &Judged) -> Vec<Step> {
    let usable: Vec<(&HistoryPoint, LogPoint)> = points
        .iter()
        .filter_map(|p| Some((p, LogPoint::from_interval(p.median, p.lo?, p.hi?, p.level)?)))
        .collect();
    let logs: Vec<LogPoint> = usable.iter().map(|(_, l)| *l).collect();
    if logs.len() < MIN_SESSIONS {
        return Vec::new();
    }
    let found = steps::detect(&logs, steps::penalty(logs.len()));
    found
        .changes
        .iter()
        .enumerate()
        .filter_map(|(k, &at)| {
            let ratio = (found.means[k + 1] - found.means[k]).exp();
            if ratio.ln().abs() <= judged.threshold.ln_1p()
                || !steps::step_holds(&found, k, judged.level)
            {
                return None;
            }
            let number = usable[at].0.session;
            let session = &sessions[number - 1];
            Some(Step {
                session: number,
                session_name: session.name.clone(),
                commit: session.commit.clone(),
                ratio,
                kind: match (ratio > 1.0, judged.better) {
                    (true, Better::Lower) | (false, Better::Higher) => StepKind::Regression,
                    _ => StepKind::Improvement,
                },
            })
        })
        .collect()
}
