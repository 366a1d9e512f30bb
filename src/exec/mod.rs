//! Stage 3: build once, calibrate, then run every planned run in its own process, storing each
//! as it finishes. Nothing is analysed or rendered between runs.

mod build;
mod calibrate;
mod clock;
mod interrupt;
mod measure;
mod metrics;
mod orphans;
mod process;
mod progress;

pub use build::{BuildError, build, tail};
pub use calibrate::calibrate;
pub use interrupt::{exit_code as interrupt_exit_code, restore_default as restore_signals};
pub use measure::{Measurement, RunRequest, Runner};
pub use metrics::MetricReader;
pub use process::{ProcessRunner, allowed_cpus, spawn_error};
pub use progress::Progress;

use crate::config::Experiment;
use crate::plan::PlannedRun;
use crate::store::{Exit, RunRow, SessionWriter, utc_timestamp};
use anyhow::Result;

/// How a session's run loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Complete,
    Interrupted,
    /// A run changed the session's own files; lab restored them and stopped.
    Damaged(String),
}

/// Runs `runs` in order, appending each to the session as it finishes. Nothing is judged
/// here: the validity stage reads what was stored.
pub fn execute(
    exp: &Experiment,
    runs: &[PlannedRun],
    session: &mut SessionWriter,
    runner: &mut dyn Runner,
    progress: &Progress,
) -> Result<Ending> {
    interrupt::install();
    orphans::become_subreaper();
    let reader = MetricReader::new(&exp.metrics);
    for run in runs {
        if interrupt::requested() {
            return Ok(Ending::Interrupted);
        }
        progress.starting(run);
        let variant = exp.variant(&run.variant);
        let (stdout, stderr) = session.log_paths(run);
        let empty = Default::default();
        let request = RunRequest {
            argv: &run.argv,
            env: variant.map_or(&empty, |v| &v.env),
            cwd: &exp.dir,
            cpus: variant.and_then(|v| v.cpus.as_deref()),
            timeout: exp.timeout,
            stdout: &stdout,
            stderr: &stderr,
        };
        let measurement = runner.run(&request);
        if interrupt::requested() {
            // The run was cut short by the user: it is not a measurement.
            return Ok(Ending::Interrupted);
        }
        let changes = session.verify()?;
        let (scan, samples) = reader.read_log(&stdout, &run.id);
        session.append(run, &run_row(run, &measurement, scan.sha256), &samples)?;
        progress.finished(run, measurement.wall_ns, &outcome(&measurement));
        if !changes.is_empty() {
            return Ok(Ending::Damaged(format!(
                "run {} changed the session's files: {}",
                run.id,
                changes.join(", ")
            )));
        }
    }
    Ok(Ending::Complete)
}

/// The stored row of a measured run.
pub fn run_row(run: &PlannedRun, m: &Measurement, stdout_sha256: String) -> RunRow {
    let (exit_code, signal, spawn_error) = match &m.exit {
        Exit::Code(c) => (Some(*c), None, None),
        Exit::Signal(s) => (None, Some(*s), None),
        Exit::SpawnFailed(e) => (None, None, Some(e.clone())),
    };
    RunRow {
        run_id: run.id.clone(),
        position: run.position,
        variant: run.variant.clone(),
        repetition: run.repetition,
        warmup: run.warmup,
        start_utc: utc_timestamp(m.start_unix_ms),
        wall_ns: m.wall_ns,
        boottime_ns: m.boottime_ns,
        user_ns: m.user_ns,
        sys_ns: m.sys_ns,
        max_rss_kib: m.max_rss_kib,
        voluntary_cs: m.voluntary_cs,
        involuntary_cs: m.involuntary_cs,
        exit_code,
        signal,
        spawn_error,
        timed_out: m.timed_out,
        cpus: m.cpus_granted.as_ref().map(|c| {
            c.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        }),
        stdout_sha256,
        left_running: (!m.left_running.is_empty()).then(|| m.left_running.join(" ")),
        samples: None,
    }
}

/// How the process ended, for the progress line (a fact, not a verdict).
fn outcome(m: &Measurement) -> String {
    match (&m.exit, m.timed_out) {
        (_, true) => "timed out".into(),
        (Exit::Code(0), _) => "ok".into(),
        (Exit::Code(c), _) => format!("exit code {c}"),
        (Exit::Signal(s), _) => format!("killed by signal {s}"),
        (Exit::SpawnFailed(e), _) => e.clone(),
    }
    .to_string()
        + &if m.left_running.is_empty() {
            String::new()
        } else {
            format!("; left running: {}", m.left_running.join(" "))
        }
}
