//! The tidy CSV rows of runs.csv and samples.csv: one row per run, one row per metric value.
//! Store owns these types; exec fills them in, the validity stage reads them back.

use crate::config::ParamValue;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    "left_running",
    "samples",
];
pub const SAMPLE_HEADER: [&str; 4] = ["run_id", "metric", "iteration", "value"];

/// How a run's process ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// The process could not be started at all (program missing, not executable…).
    SpawnFailed(String),
}

/// One row of runs.csv: what was measured, never a judgement (the validity stage judges).
/// Parameter columns sit between `variant` and `repetition` and are read from plan.json.
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
    /// Processes the run left behind (killed by lab), space-separated; empty when none.
    #[serde(default)]
    pub left_running: Option<String>,
    /// How many rows of samples.csv belong to this run. The run row is written after them, so
    /// it commits the run; sessions written before this column existed leave it empty.
    #[serde(default)]
    pub samples: Option<usize>,
}

impl RunRow {
    /// How the run ended.
    pub fn exit(&self) -> Exit {
        match (&self.spawn_error, self.signal, self.exit_code) {
            (Some(e), _, _) if !e.is_empty() => Exit::SpawnFailed(e.clone()),
            (_, Some(s), _) => Exit::Signal(s),
            (_, _, Some(c)) => Exit::Code(c),
            _ => Exit::SpawnFailed("no exit status recorded".into()),
        }
    }
}

/// One row of samples.csv.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// The CSV fields of one run row, with its parameter values in `params` column order.
pub fn run_record(
    row: &RunRow,
    values: &BTreeMap<String, ParamValue>,
    params: &[String],
) -> Vec<String> {
    let (code, signal, spawn) = match row.exit() {
        Exit::Code(c) => (c.to_string(), String::new(), String::new()),
        Exit::Signal(s) => (String::new(), s.to_string(), String::new()),
        Exit::SpawnFailed(e) => (String::new(), String::new(), e),
    };
    let mut record = vec![
        row.run_id.clone(),
        row.position.to_string(),
        row.variant.clone(),
    ];
    record.extend(
        params
            .iter()
            .map(|p| values.get(p).map(|v| v.to_string()).unwrap_or_default()),
    );
    record.extend([
        row.repetition.to_string(),
        row.warmup.to_string(),
        row.start_utc.clone(),
        row.wall_ns.to_string(),
        row.boottime_ns.to_string(),
        row.user_ns.to_string(),
        row.sys_ns.to_string(),
        row.max_rss_kib.to_string(),
        row.voluntary_cs.to_string(),
        row.involuntary_cs.to_string(),
        code,
        signal,
        spawn,
        row.timed_out.to_string(),
        row.cpus.clone().unwrap_or_default(),
        row.stdout_sha256.clone(),
        row.left_running.clone().unwrap_or_default(),
        row.samples.map_or_else(String::new, |n| n.to_string()),
    ]);
    record
}
