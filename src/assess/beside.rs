//! The sessions beside the one a command shows: the experiment's other sessions, each judged
//! by the lab.toml it ran with (those a history cannot read left out with the reason), the
//! history they make, a session as one side of a comparison, and the latest noise measurement
//! its comparisons quote.

use super::{Assessed, analysed};
use crate::error::{LabError, Result};
use crate::layout::Layout;
use lab_config::Experiment;
use lab_judge::analysis::Analysis;
use lab_judge::compare::{NoiseFloor, Side, chosen_metric};
use lab_judge::history::{Entry, History, history};
use lab_store::{self as store, StoredSession};
use std::path::{Path, PathBuf};

/// The file of a noise session holding its reading.
pub const NOISE_FILE: &str = "noise.json";

/// The sessions a history reads, each analysed as it ran, and those it leaves out with why.
pub struct Sessions {
    pub kept: Vec<(StoredSession, Experiment, Analysis)>,
    pub left_out: Vec<String>,
}

/// Every session of the experiment in `dir` that measured something of its own: derived,
/// damaged and incomplete sessions, and unreadable ones, are left out with the reason.
pub fn sessions(layout: &Layout, dir: &Path) -> Sessions {
    sessions_beside(layout, dir, None)
}

/// [`sessions`], taking the session `shown` as already assessed instead of analysing it again
/// (at 100,000 runs the analysis is most of a report's time).
pub fn sessions_beside(layout: &Layout, dir: &Path, shown: Option<&Assessed>) -> Sessions {
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
    pub fn of_profile(mut self, profile: Option<&str>) -> Sessions {
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
    pub fn newest_profile(&self) -> Option<Option<String>> {
        self.kept.last().map(|(s, _, _)| s.manifest.profile.clone())
    }
}

/// The history of the kept sessions, in the newest one's metric (or `metric`).
pub fn history_of(
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

/// A stored session as one side of a comparison.
pub fn side(a: &Assessed) -> Side<'_> {
    Side {
        name: &a.session.name,
        experiment: &a.experiment,
        analysis: &a.analysis,
        manifest: &a.session.manifest,
    }
}

/// Where an experiment's noise sessions live.
pub fn noise_dir(layout: &Layout, experiment: &str) -> PathBuf {
    layout.data_dir(experiment).join("noise")
}

/// The latest noise measurement of `experiment`, if one was taken.
pub fn latest_noise(layout: &Layout, experiment: &str) -> Option<NoiseFloor> {
    store::sessions(&noise_dir(layout, experiment))
        .iter()
        .rev()
        .find_map(|d| {
            let text = std::fs::read_to_string(d.join(NOISE_FILE)).ok()?;
            serde_json::from_str(&text).ok()
        })
}
