//! Stage 3: build once, calibrate, then run every planned run in its own process, storing each
//! as it finishes. Nothing is analysed or rendered between runs.

mod build;
mod calibrate;
mod clock;
mod interrupt;
mod measure;
mod metrics;
mod process;
mod progress;

pub use build::{BuildError, BuildReport, build, tail};
pub use calibrate::{Calibration, calibrate};
pub use measure::{Exit, Measurement, RunRequest, Runner};
pub use metrics::{MetricReader, Sample};
pub use process::{ProcessRunner, spawn_error};
pub use progress::Progress;

use crate::checks::automatic::{RunFacts, problems};
use crate::config::Experiment;
use crate::plan::PlannedRun;
use crate::store::SessionWriter;
use anyhow::Result;
use sha2::{Digest, Sha256};

/// How a session's run loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Complete,
    Interrupted,
}

/// Runs `runs` in order, appending each to the session as it finishes.
pub fn execute(
    exp: &Experiment,
    runs: &[PlannedRun],
    session: &mut SessionWriter,
    runner: &mut dyn Runner,
    progress: &Progress,
) -> Result<Ending> {
    interrupt::install();
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
        let output = std::fs::read_to_string(&stdout).unwrap_or_default();
        let samples = reader.read(&output);
        let invalid = judge(&measurement, &samples, exp);
        let digest = format!("{:x}", Sha256::digest(output.as_bytes()));
        session.append(run, &measurement, &digest, &samples, &invalid)?;
        progress.finished(run, measurement.wall_ns, &invalid);
    }
    Ok(Ending::Complete)
}

/// The automatic checks' verdict on a fresh run, as stored in runs.csv.
fn judge(m: &Measurement, samples: &[Sample], exp: &Experiment) -> Vec<String> {
    let values: Vec<(&str, &str)> = samples
        .iter()
        .map(|s| (s.metric.as_str(), s.value.as_str()))
        .collect();
    let facts = RunFacts {
        exit: &m.exit,
        timed_out: m.timed_out,
        suspended_ns: m.suspended_ns(),
        values: &values,
    };
    problems(&facts, &exp.metrics)
        .iter()
        .map(ToString::to_string)
        .collect()
}
