//! `lab baseline EXP NAME`: a stored session saved under a name, for `lab compare --baseline`.

use super::session::session_list;
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_store::{self as store, SessionRef};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct BaselineArgs {
    /// The experiment folder or its name.
    pub experiment: PathBuf,
    /// The baseline's name: letters, digits, `_`, `-`, `.`.
    pub name: String,
    /// The session to save (default: the latest).
    #[arg(long)]
    pub session: Option<SessionRef>,
}

impl BaselineArgs {
    /// `lab baseline`: saves the session and says which it was.
    pub fn execute(self, layout: &Layout, _quiet: bool) -> Result<Exit> {
        let saved = save_baseline(layout, &self.experiment, &self.name, self.session.as_ref())?;
        println!("{saved}");
        Ok(Exit::Ok)
    }
}

/// `lab baseline EXP NAME`: records `session` (default: the latest) as baseline `name`.
pub fn save_baseline(
    layout: &Layout,
    arg: &Path,
    name: &str,
    session: Option<&SessionRef>,
) -> Result<String> {
    if let Some(why) = lab_config::identifier_problem(name) {
        return Err(LabError::Usage(format!(
            "the baseline name {name:?} {why}\n  hint: use letters, digits, `_`, `-` and `.`"
        )));
    }
    let dir = layout.experiment_dir(arg)?;
    let sessions = session_list(layout, &dir);
    let found = sessions
        .find(session)?
        .ok_or_else(|| super::session::no_session(&dir))?;
    let session_name = store::folder_name(&found);
    store::save_baseline(&sessions.data_dir, name, &session_name)?;
    Ok(format!(
        "baseline {name} of {} is session {session_name}",
        sessions.experiment
    ))
}
