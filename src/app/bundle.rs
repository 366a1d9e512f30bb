//! `lab bundle EXP [--session ID] [-o FILE]`: a stored session as one portable file, to send
//! to whoever asked for a replication (they add it with `lab import lab FILE`).

use super::session::session_list;
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_bundle as bundle;
use lab_store::{self as store, SessionRef};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct BundleArgs {
    /// The experiment folder or its name.
    pub experiment: PathBuf,
    /// The session to bundle (default: the latest).
    #[arg(long)]
    pub session: Option<SessionRef>,
    /// Where to write the bundle (default: NAME-SESSION.tar in the current folder).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl BundleArgs {
    /// `lab bundle`: writes the bundle and says its size and members.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        let written = write(layout, &self.experiment, self.session.as_ref(), self.output)?;
        if !quiet {
            print!("{}", describe(&written));
        }
        Ok(Exit::Ok)
    }
}

/// Bundles `session` (default: the latest) of the experiment `arg` into `output`.
pub fn write(
    layout: &Layout,
    arg: &Path,
    session: Option<&SessionRef>,
    output: Option<PathBuf>,
) -> Result<bundle::Written> {
    let dir = layout.experiment_dir(arg)?;
    let sessions = session_list(layout, &dir);
    let found = sessions
        .find(session)?
        .ok_or_else(|| super::session::no_session(&dir))?;
    if store::is_locked(&sessions.data_dir) {
        return Err(LabError::Usage(format!(
            "{} is being run now: a session is bundled once it is finished\n  hint: wait for `lab run` to end",
            sessions.experiment
        )));
    }
    let stored = store::load_session(&found).map_err(LabError::Other)?;
    let out = output
        .unwrap_or_else(|| PathBuf::from(format!("{}-{}.tar", sessions.experiment, stored.name)));
    bundle::write_bundle(&sessions.experiment, &stored, &out).map_err(LabError::Other)
}

/// What was written: the file, its size, and every member with its size.
pub fn describe(w: &bundle::Written) -> String {
    let total: u64 = w.index.members.iter().map(|m| m.bytes).sum();
    let mut text = format!(
        "wrote {}: {} ({} bytes), session {} of {}, {} members ({} of session files) and the index {}\n",
        w.path.display(),
        bundle::size_words(w.bytes),
        w.bytes,
        w.index.session,
        w.index.experiment,
        w.index.members.len(),
        bundle::size_words(total),
        bundle::INDEX
    );
    let (logs, files): (Vec<_>, Vec<_>) = w
        .index
        .members
        .iter()
        .partition(|m| m.path.starts_with("logs/r"));
    for m in files {
        text.push_str(&format!(
            "  {:<18} {:>12} bytes  sha256 {}\n",
            m.path,
            m.bytes,
            &m.sha256[..16]
        ));
    }
    if !logs.is_empty() {
        let bytes: u64 = logs.iter().map(|m| m.bytes).sum();
        text.push_str(&format!(
            "  {:<18} {:>12} bytes  in {} files, one per run and stream\n",
            "logs/rNNNN.out/err",
            bytes,
            logs.len()
        ));
    }
    text.push_str(&format!(
        "send it; the receiver adds it with `lab import lab {}`\n",
        w.path.display()
    ));
    text
}
