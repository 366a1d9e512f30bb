//! `lab logs EXP RUN`: what a stored run printed, byte for byte, from its slice of the
//! session's packed logs (or its own log file in an older session), checked against the
//! digest its row recorded when it ended.

use super::find_session;
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_store::{self as store, LogRef, RunRow, SessionRef, StoredSession, Stream};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct LogsArgs {
    /// The experiment folder or its name.
    pub experiment: PathBuf,
    /// The run, by its id (`r0042`) or its position (`42`).
    pub run: String,
    /// The session (default: the latest).
    #[arg(long)]
    pub session: Option<SessionRef>,
    /// Print what the run wrote to standard error instead of standard output.
    #[arg(long)]
    pub stderr: bool,
}

impl LogsArgs {
    /// Writes the run's output to standard output.
    pub fn execute(self, layout: &Layout, _quiet: bool) -> Result<Exit> {
        let stream = if self.stderr {
            Stream::Stderr
        } else {
            Stream::Stdout
        };
        let bytes = run_output(
            layout,
            &self.experiment,
            self.session.as_ref(),
            &self.run,
            stream,
        )?;
        let mut out = std::io::stdout().lock();
        out.write_all(&bytes)
            .and_then(|()| out.flush())
            .map_err(|e| LabError::Other(anyhow::anyhow!("cannot write the output: {e}")))?;
        Ok(Exit::Ok)
    }
}

/// The bytes run `run` of the chosen (or latest) session of `arg` wrote to `stream`.
pub fn run_output(
    layout: &Layout,
    arg: &Path,
    which: Option<&SessionRef>,
    run: &str,
    stream: Stream,
) -> Result<Vec<u8>> {
    let dir = layout.experiment_dir(arg)?;
    let session_dir =
        find_session(layout, &dir, which)?.ok_or_else(|| super::session::no_session(&dir))?;
    let session = store::load_session(&session_dir)?;
    if let Some(damage) = session.damage() {
        return Err(LabError::Other(anyhow::anyhow!(
            "{damage}\n  hint: the stored values stand as they were recorded; re-run the experiment to see the output again"
        )));
    }
    let row = find_run(&session, run, arg)?;
    let log = match stream {
        Stream::Stdout => session.stdout(row),
        Stream::Stderr => session.stderr(row),
    };
    let bytes = log.read_all();
    check_digest(&session, row, stream, &log, &bytes)?;
    Ok(bytes)
}

/// The stored row of `run`, named by id or position; `arg` names the experiment in the hint.
fn find_run<'a>(session: &'a StoredSession, run: &str, arg: &Path) -> Result<&'a RunRow> {
    let id = match run.parse::<usize>() {
        Ok(position) => format!("r{position:04}"),
        Err(_) => run.to_string(),
    };
    session.runs.iter().find(|r| r.run_id == id).ok_or_else(|| {
        let last = session.runs.last().map_or("none", |r| r.run_id.as_str());
        LabError::Usage(format!(
            "session {} has no stored run {id:?} (its runs go from r0001 to {last}, {} stored)\n  hint: `lab logs {} r0001` prints the first; runs.csv lists them all",
            session.name,
            session.runs.len(),
            arg.display(),
        ))
    })
}

/// Refuses output whose bytes are not those recorded when the run ended.
fn check_digest(
    session: &StoredSession,
    row: &RunRow,
    stream: Stream,
    log: &LogRef,
    bytes: &[u8],
) -> Result<()> {
    let recorded = match stream {
        Stream::Stdout => Some(row.stdout_sha256.as_str()).filter(|d| d.len() == 64),
        Stream::Stderr => row.stderr_sha256.as_deref(),
    };
    let Some(recorded) = recorded else {
        return Ok(());
    };
    let now = store::sha256_hex(bytes);
    if now == recorded {
        return Ok(());
    }
    Err(LabError::Other(anyhow::anyhow!(
        "session {} is damaged: {log} is not what run {} wrote (its SHA-256 was {} when the run ended, it is {} now)\n  hint: the stored values stand as they were recorded; re-run the experiment to see the output again",
        session.name,
        row.run_id,
        &recorded[..12.min(recorded.len())],
        &now[..12]
    )))
}
