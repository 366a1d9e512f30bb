//! `lab run`: plan, build, calibrate, execute and store a session, then render its chapter.
//! One writer per experiment: a second `lab run` of the same experiment is refused.

mod estimate;
mod host;
mod options;
mod session;
mod start;

pub(crate) use host::check_runnable;
pub use options::RunOptions;

use crate::error::{Exit, Result};
use crate::layout::Layout;
use lab_exec::Runner;
use session::RunSession;
use std::path::Path;

/// `lab run`: the session the options ask for, measured (or, with `--dry-run`, only
/// described); returns how lab ends.
pub fn run(
    layout: &Layout,
    experiment: &Path,
    opts: &RunOptions,
    runner: &mut dyn Runner,
) -> Result<Exit> {
    let session = RunSession::open(layout, experiment, opts)?;
    if opts.dry_run {
        print!("{}", session.describe());
        return Ok(Exit::Ok);
    }
    session.measure_and_confirm(runner)
}
