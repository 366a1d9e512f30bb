//! The sessions a chapter's Replications page reads: of the shown session's profile, sound
//! (not damaged, incomplete, re-analysed, or across revisions), each judged by the lab.toml
//! it ran with. Only when their manifests name more than one machine is any of them analysed.

use crate::assess::{Assessed, Rows, assess};
use crate::error::Result;
use crate::layout::Layout;
use lab_config as config;
use lab_judge::replication::{self, Replications, SessionVerdicts};
use lab_store::{self as store, Manifest};
use std::path::{Path, PathBuf};

/// The replications of the experiment in `dir` beside the session `shown`; `None` when its
/// sessions come from one machine. Only the manifests are read until they name several
/// machines: the other sessions' runs are loaded only for a page that shows them.
pub fn of(layout: &Layout, dir: &Path, shown: &Assessed) -> Result<Option<Replications>> {
    let profile = shown.session.manifest.profile.as_deref();
    let others: Vec<(PathBuf, Manifest)> =
        store::sessions(&layout.data_dir(&config::experiment_name(dir)))
            .into_iter()
            .filter(|d| *d != shown.session.dir)
            .filter_map(|d| store::load_manifest(&d).ok().map(|m| (d, m)))
            .filter(|(_, m)| sound(m) && m.profile.as_deref() == profile)
            .collect();
    let manifests = std::iter::once(&shown.session.manifest).chain(others.iter().map(|(_, m)| m));
    if !replication::several_machines(manifests) {
        return Ok(None);
    }
    let assessed: Vec<Assessed> = others
        .iter()
        .filter_map(|(d, _)| store::load_session(d).ok())
        .filter(|s| sound(&s.manifest))
        .filter_map(|s| assess(dir, s, Rows::Keep).ok())
        .collect();
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
fn sound(m: &Manifest) -> bool {
    m.complete && m.damaged.is_none() && m.revisions.is_none() && m.derived_from.is_none()
}
