//! The write side of the pipeline (design.md's stages 1 to 4, then the chapter): `lab run` of
//! one experiment checks its lab.toml against this machine, plans the session (across two
//! revisions with `--revs`), builds, runs every run in its own process, here or on a cluster,
//! look by look for a sampled session, stores each run as it ends, has the chapter written,
//! and confirms a regression between revisions with a second session. One writer per
//! experiment: a second `lab run` of the same experiment is refused. The command line says
//! how each chapter is written and what is printed of it ([`Chapters`]).

mod commits;
mod estimate;
mod host;
mod look_time;
mod options;
mod revs;
mod session;
mod slurm;
mod start;

pub use commits::{commits_between, resolve_commit, subject};
pub use host::check_runnable;
pub use options::RunOptions;
pub use revs::{exists_at, merge_base, parse_revs, uncommitted};
pub use slurm::{Engine, SlurmOptions, run_shard};

use crate::error::{Exit, Result};
use crate::layout::Layout;
use lab_exec::Runner;
use session::RunSession;
use std::path::Path;

/// What one session's chapter found, as the run's exit status needs it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Found {
    /// A check failed, or no run was valid.
    pub failed: bool,
    /// The comparison between revisions found a regression.
    pub regressed: bool,
}

/// Writes the chapter of each session `lab run` measures to its end, and shows what it found.
pub trait Chapters {
    /// Writes the chapter of session `session` of the experiment in `dir`.
    fn write(&mut self, dir: &Path, session: &str) -> Result<Found>;
}

/// `lab run`: the session the options ask for, measured (or, with `--dry-run`, only
/// described), each session's chapter written by `chapters`; returns how lab ends.
pub fn run(
    layout: &Layout,
    experiment: &Path,
    opts: &RunOptions,
    runner: &mut dyn Runner,
    chapters: &mut dyn Chapters,
) -> Result<Exit> {
    let session = RunSession::open(layout, experiment, opts)?;
    if opts.dry_run {
        print!("{}", session.describe());
        return Ok(Exit::Ok);
    }
    session.measure_and_confirm(runner, chapters)
}
