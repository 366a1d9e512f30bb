//! The session an argument names: found among the experiment's stored sessions (the latest
//! when none is named), assessed by the lab.toml it ran with, and told whether today's
//! sources still match what it measured.

use super::{Assessed, Rows, assess, freshness};
use crate::error::{LabError, Result};
use crate::layout::Layout;
use lab_config as config;
use lab_store::{self as store, SessionList, SessionRef};
use std::path::{Path, PathBuf};

/// The stored sessions of the experiment in `dir`, to resolve a session argument against.
pub fn session_list(layout: &Layout, dir: &Path) -> SessionList {
    let name = config::experiment_name(dir);
    SessionList::new(&name, dir, &layout.data_dir(&name))
}

/// The folder of the session `which` names, or the latest session when `which` is `None`.
/// `Ok(None)`: no session was named and the experiment has none.
pub fn find_session(
    layout: &Layout,
    dir: &Path,
    which: Option<&SessionRef>,
) -> Result<Option<PathBuf>> {
    Ok(session_list(layout, dir).find(which)?)
}

/// Loads and assesses the chosen (or latest) session; `Ok(None)` when there is none.
pub fn assess_chosen(
    layout: &Layout,
    dir: &Path,
    which: Option<&SessionRef>,
) -> Result<Option<Assessed>> {
    assess_chosen_with(layout, dir, which, Rows::Keep)
}

/// [`assess_chosen`], keeping the session's rows or giving them up as `rows` says.
pub fn assess_chosen_with(
    layout: &Layout,
    dir: &Path,
    which: Option<&SessionRef>,
    rows: Rows,
) -> Result<Option<Assessed>> {
    let list = session_list(layout, dir);
    let Some(session_dir) = list.find(which)? else {
        return Ok(None);
    };
    let session = store::load_session(&session_dir)?;
    let mut assessed = assess(dir, session, rows)?;
    assessed.notices.extend(list.unrecorded(&session_dir));
    let (session, experiment) = (&assessed.session, &assessed.experiment);
    let changes = freshness::changes(experiment, &session.manifest);
    assessed.outdated = (!changes.is_empty())
        .then(|| freshness::banner(&session.name, &session.manifest, &experiment.name, &changes));
    Ok(Some(assessed))
}

/// The error for an experiment that has no session yet.
pub fn no_session(dir: &Path) -> LabError {
    LabError::Usage(format!(
        "{} has no session yet\n  hint: run `lab run {}` first",
        config::experiment_name(dir),
        dir.display()
    ))
}
