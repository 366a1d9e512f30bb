//! The tidy CSV rows of runs.csv and samples.csv: one row per run, one row per metric value.

use crate::exec::{Exit, Measurement};
use crate::plan::PlannedRun;
use crate::store::manifest::utc_timestamp;
use anyhow::{Context, Result};
use serde::{Deserialize, de::DeserializeOwned};
use std::path::Path;

const RUN_COLUMNS_BEFORE_PARAMS: [&str; 3] = ["run_id", "position", "variant"];
const RUN_COLUMNS_AFTER_PARAMS: [&str; 18] = [
    "repetition",
    "warmup",
    "start_utc",
    "wall_ns",
    "boottime_ns",
    "user_ns",
    "sys_ns",
    "max_rss_kib",
    "voluntary_cs",
    "involuntary_cs",
    "exit_code",
    "signal",
    "spawn_error",
    "timed_out",
    "cpus",
    "stdout_sha256",
    "valid",
    "invalid_reason",
];
pub const SAMPLE_HEADER: [&str; 4] = ["run_id", "metric", "iteration", "value"];

/// One row of runs.csv as read back (parameter columns are taken from plan.json instead).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RunRow {
    pub run_id: String,
    pub position: usize,
    pub variant: String,
    pub repetition: u32,
    pub warmup: bool,
    pub start_utc: String,
    pub wall_ns: u64,
    pub boottime_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub max_rss_kib: u64,
    pub voluntary_cs: u64,
    pub involuntary_cs: u64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub spawn_error: Option<String>,
    pub timed_out: bool,
    pub cpus: Option<String>,
    /// SHA-256 of everything the run printed on stdout: identical outputs are visible.
    pub stdout_sha256: String,
    pub valid: bool,
    pub invalid_reason: Option<String>,
}

/// One row of samples.csv.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SampleRow {
    pub run_id: String,
    pub metric: String,
    pub iteration: usize,
    pub value: String,
}

pub fn run_header(params: &[String]) -> Vec<String> {
    RUN_COLUMNS_BEFORE_PARAMS
        .iter()
        .map(|s| s.to_string())
        .chain(params.iter().cloned())
        .chain(RUN_COLUMNS_AFTER_PARAMS.iter().map(|s| s.to_string()))
        .collect()
}

pub fn run_record(
    run: &PlannedRun,
    m: &Measurement,
    stdout_sha256: &str,
    invalid: &[String],
    params: &[String],
) -> Vec<String> {
    let (code, signal, spawn) = match &m.exit {
        Exit::Code(c) => (c.to_string(), String::new(), String::new()),
        Exit::Signal(s) => (String::new(), s.to_string(), String::new()),
        Exit::SpawnFailed(e) => (String::new(), String::new(), e.clone()),
    };
    let cpus = m
        .cpus_granted
        .as_ref()
        .map(|c| {
            c.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    let mut record = vec![
        run.id.clone(),
        run.position.to_string(),
        run.variant.clone(),
    ];
    record.extend(
        params
            .iter()
            .map(|p| run.params.get(p).map(|v| v.to_string()).unwrap_or_default()),
    );
    record.extend([
        run.repetition.to_string(),
        run.warmup.to_string(),
        utc_timestamp(m.start_unix_ms),
        m.wall_ns.to_string(),
        m.boottime_ns.to_string(),
        m.user_ns.to_string(),
        m.sys_ns.to_string(),
        m.max_rss_kib.to_string(),
        m.voluntary_cs.to_string(),
        m.involuntary_cs.to_string(),
        code,
        signal,
        spawn,
        m.timed_out.to_string(),
        cpus,
        stdout_sha256.to_string(),
        invalid.is_empty().to_string(),
        invalid.join("; "),
    ]);
    record
}

/// Reads every complete row; a torn last line left by a killed session is dropped.
pub fn read_rows<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut rows = Vec::new();
    let records: Vec<_> = reader.deserialize::<T>().collect();
    let last = records.len().saturating_sub(1);
    for (i, record) in records.into_iter().enumerate() {
        match record {
            Ok(row) => rows.push(row),
            Err(_) if i == last => break,
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("{}: row {} is damaged", path.display(), i + 2));
            }
        }
    }
    Ok(rows)
}
