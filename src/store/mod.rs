//! Stage 4: sessions on disk. `data/NAME/SESSION/` holds manifest.json, plan.json, runs.csv,
//! samples.csv and logs/; every run is appended and flushed as it finishes, nothing is rewritten
//! but the manifest's closing fields.

mod manifest;
mod rows;

pub use manifest::*;
pub use rows::{RunRow, SampleRow};

use crate::exec::{Measurement, Sample};
use crate::plan::{Plan, PlannedRun};
use anyhow::{Context, Result};
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

pub const MANIFEST: &str = "manifest.json";
pub const PLAN: &str = "plan.json";
pub const RUNS: &str = "runs.csv";
pub const SAMPLES: &str = "samples.csv";
pub const LOGS: &str = "logs";

/// A session being written.
pub struct SessionWriter {
    pub dir: PathBuf,
    runs: csv::Writer<File>,
    samples: csv::Writer<File>,
    param_names: Vec<String>,
}

/// The folder of a new session: `data/NAME/YYYYMMDDTHHMMSSZ-HOST`, never an existing one.
pub fn new_session_dir(data_root: &Path, experiment: &str, unix_ms: u64) -> PathBuf {
    let stamp: String = utc_timestamp(unix_ms)
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    let base = format!("{stamp}-{}", host_name());
    let parent = data_root.join(experiment);
    let mut dir = parent.join(&base);
    let mut n = 2;
    while dir.exists() {
        dir = parent.join(format!("{base}-{n}"));
        n += 1;
    }
    dir
}

impl SessionWriter {
    /// Creates the session folder and writes the manifest, the plan and the CSV headers.
    pub fn create(
        dir: PathBuf,
        manifest: &Manifest,
        plan: &Plan,
        param_names: Vec<String>,
    ) -> Result<Self> {
        fs::create_dir_all(dir.join(LOGS))
            .with_context(|| format!("cannot create session folder {}", dir.display()))?;
        write_json(&dir.join(MANIFEST), manifest)?;
        write_json(&dir.join(PLAN), plan)?;
        let mut runs = csv::Writer::from_writer(create_new(&dir.join(RUNS))?);
        runs.write_record(rows::run_header(&param_names))?;
        runs.flush()?;
        let mut samples = csv::Writer::from_writer(create_new(&dir.join(SAMPLES))?);
        samples.write_record(rows::SAMPLE_HEADER)?;
        samples.flush()?;
        Ok(SessionWriter {
            dir,
            runs,
            samples,
            param_names,
        })
    }

    /// Reopens an unfinished session to append the runs it is missing.
    pub fn reopen(dir: PathBuf, param_names: Vec<String>) -> Result<Self> {
        let open = |name: &str| {
            OpenOptions::new()
                .append(true)
                .open(dir.join(name))
                .with_context(|| format!("cannot reopen {}", dir.join(name).display()))
        };
        let runs = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(open(RUNS)?);
        let samples = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(open(SAMPLES)?);
        Ok(SessionWriter {
            dir,
            runs,
            samples,
            param_names,
        })
    }

    /// Where a run's stdout and stderr go.
    pub fn log_paths(&self, run: &PlannedRun) -> (PathBuf, PathBuf) {
        let logs = self.dir.join(LOGS);
        (
            logs.join(format!("{}.out", run.id)),
            logs.join(format!("{}.err", run.id)),
        )
    }

    /// Appends one finished run and its samples, and flushes both files.
    pub fn append(
        &mut self,
        run: &PlannedRun,
        m: &Measurement,
        stdout_sha256: &str,
        samples: &[Sample],
        invalid: &[String],
    ) -> Result<()> {
        self.runs.write_record(rows::run_record(
            run,
            m,
            stdout_sha256,
            invalid,
            &self.param_names,
        ))?;
        self.runs.flush()?;
        for s in samples {
            self.samples.write_record([
                run.id.as_str(),
                &s.metric,
                &s.iteration.to_string(),
                &s.value,
            ])?;
        }
        self.samples.flush()?;
        Ok(())
    }

    /// Records the closing state of the session in its manifest.
    pub fn finish(&mut self, manifest: &Manifest) -> Result<()> {
        write_json(&self.dir.join(MANIFEST), manifest)
    }
}

fn create_new(path: &Path) -> Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// A stored session, read back for analysis.
#[derive(Debug, Clone)]
pub struct StoredSession {
    pub dir: PathBuf,
    pub name: String,
    pub manifest: Manifest,
    pub plan: Plan,
    pub runs: Vec<RunRow>,
    pub samples: Vec<SampleRow>,
}

/// Every session folder of an experiment, oldest first.
pub fn sessions(data_root: &Path, experiment: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(data_root.join(experiment))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(MANIFEST).is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Reads a session folder; a half-written last CSV line (a killed session) is skipped.
pub fn load_session(dir: &Path) -> Result<StoredSession> {
    let read = |name: &str| {
        fs::read_to_string(dir.join(name))
            .with_context(|| format!("cannot read {}", dir.join(name).display()))
    };
    let manifest: Manifest = serde_json::from_str(&read(MANIFEST)?)
        .with_context(|| format!("{} is not a lab manifest", dir.join(MANIFEST).display()))?;
    let plan: Plan = serde_json::from_str(&read(PLAN)?)
        .with_context(|| format!("{} is not a lab plan", dir.join(PLAN).display()))?;
    Ok(StoredSession {
        name: dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        dir: dir.to_path_buf(),
        manifest,
        plan,
        runs: rows::read_rows(&dir.join(RUNS))?,
        samples: rows::read_rows(&dir.join(SAMPLES))?,
    })
}
