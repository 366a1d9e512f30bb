//! The sessions a chapter's Replications page reads: of the shown session's profile, sound
//! (not damaged, incomplete, re-analysed, or across revisions), each judged by the lab.toml
//! it ran with. Only when their manifests name more than one machine is any of them analysed.

use super::Layout;
use super::session::{Assessed, assess};
use crate::config;
use crate::error::Result;
use crate::replication::{self, Replications, SessionVerdicts};
use crate::store::{self, StoredSession};
use std::path::Path;

/// The replications of the experiment in `dir` beside the session `shown`; `None` when its
/// sessions come from one machine.
pub fn of(layout: &Layout, dir: &Path, shown: &Assessed) -> Result<Option<Replications>> {
    let profile = shown.session.manifest.profile.as_deref();
    let mut sessions: Vec<StoredSession> = Vec::new();
    for session_dir in store::sessions(&layout.data_dir(&config::experiment_name(dir))) {
        if session_dir == shown.session.dir {
            sessions.push(shown.session.clone());
            continue;
        }
        if let Ok(s) = store::load_session(&session_dir)
            && sound(&s)
            && s.manifest.profile.as_deref() == profile
        {
            sessions.push(s);
        }
    }
    if !replication::several_machines(sessions.iter().map(|s| &s.manifest)) {
        return Ok(None);
    }
    let mut assessed: Vec<Assessed> = Vec::new();
    for s in sessions {
        if s.dir == shown.session.dir {
            continue;
        }
        assessed.extend(assess(dir, s).ok());
    }
    let mut verdicts: Vec<SessionVerdicts> = assessed
        .iter()
        .chain(std::iter::once(shown))
        .map(|a| SessionVerdicts {
            name: &a.session.name,
            manifest: &a.session.manifest,
            checks: &a.findings.checks,
        })
        .collect();
    verdicts.sort_by(|a, b| a.name.cmp(b.name));
    Ok(replication::replications(&verdicts))
}

/// A session whose verdicts stand for its machine: whole, sealed, measured by lab.
fn sound(s: &StoredSession) -> bool {
    let m = &s.manifest;
    m.complete && m.damaged.is_none() && m.revisions.is_none() && m.derived_from.is_none()
}
