//! One run as the judgement saw it: where it stands in the plan, what it printed and used of
//! the machine, and why it was excluded, if it was.

mod values;

pub use values::{Measured, Names, RunValues};

use crate::automatic::QUIET;
use lab_config::plan::CellKey;
use lab_store::RunRow;
use serde::Serialize;

/// One run as the analysis sees it.
#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    pub id: String,
    pub position: usize,
    pub cell: CellKey,
    pub repetition: u32,
    pub warmup: bool,
    pub wall_s: f64,
    pub exit: String,
    pub stdout_sha256: String,
    /// Whether the run printed a `config` object echoing its configuration.
    pub echoed_config: bool,
    /// The share of its wall time the run waited for a CPU others had (or had its CPUs
    /// stolen), where the counters were recorded.
    pub busy_share: Option<f64>,
    /// In a session that keeps disturbed runs' timings ([`lab_store::KEEPS_DISTURBED`]),
    /// the share of its wall time by which the machine may have slowed the run (its
    /// `busy_share`); 0 where nothing disturbed it or it was not measured, and in older
    /// sessions, whose disturbed runs lost their timings instead.
    #[serde(skip)]
    pub slowed: f64,
    /// Whether it waited for a CPU others had for more than `max_busy` of its wall time, in
    /// a session that keeps such runs' timings: drawn apart in the charts.
    #[serde(skip)]
    pub disturbed: bool,
    /// Whether it is a disturbed run of several working threads or processes: waiting changes
    /// how those interleave, so no bound on what the machine did to it holds.
    #[serde(skip)]
    pub reshaped: bool,
    /// Whether one task of it worked and its waiting was read task by task: its wall time
    /// undisturbed is the measured one less that waiting (see `analysis::slowed`).
    #[serde(skip)]
    pub exact_wait: bool,
    /// The run this one repeats, planned again because the machine was busy during it.
    pub repeats: Option<String>,
    /// The runs that executed beside it (`lab run --jobs`); empty when it ran alone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overlapped: Vec<String>,
    /// Why the run is excluded from statistics; empty when it is valid.
    pub problems: Vec<String>,
    /// The checks that excluded it, parallel to `problems`.
    #[serde(skip)]
    pub failed_checks: Vec<String>,
    /// Whether each problem, parallel to `problems`, discards only the run's timings (a busy
    /// machine, a run too short to time): its outputs and counts are still judged.
    #[serde(skip)]
    pub timing_only: Vec<bool>,
    /// Every value the run printed, by metric, in iteration order.
    pub values: RunValues,
    /// Bytes of padding in its environment, where the session randomised the layout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env_padding: Option<u32>,
    /// Bytes its heap was shifted by, where the session randomised the layout and the shift
    /// could be applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap_shift: Option<u32>,
    /// The machine (cluster node) that ran it, for a session measured on a cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// What the run used of the machine besides its wall time, where recorded.
    #[serde(skip)]
    pub usage: Usage,
}

impl RunView {
    /// Whether everything the run measured counts, its timings included.
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }

    /// Whether what the run printed and counted counts: no problem beyond its timing.
    pub fn outputs_valid(&self) -> bool {
        self.timing_only.iter().all(|t| *t) && self.timing_only.len() == self.problems.len()
    }

    /// Whether the run's values of `metric` count: timings from valid runs, outputs and
    /// counts from every run whose outputs are valid.
    pub fn counts_for(&self, metric: &lab_config::Metric) -> bool {
        if metric.is_timing() {
            self.is_valid()
        } else {
            self.outputs_valid()
        }
    }

    /// Whether the run's timing was discarded while its outputs still count.
    pub fn timing_discarded(&self) -> bool {
        !self.is_valid() && self.outputs_valid()
    }

    /// Whether the run's timing was discarded for a busy machine and nothing else.
    pub fn disturbed_only(&self) -> bool {
        self.timing_discarded() && self.failed_checks.iter().all(|c| c == QUIET)
    }

    /// Marks the run invalid because of `check`.
    pub fn exclude(&mut self, check: &str, reason: String) {
        self.failed_checks.push(check.to_string());
        self.problems.push(reason);
        self.timing_only.push(false);
    }

    /// The run's numeric values of `metric`, after dropping `skip` warm-up iterations.
    pub fn numbers(&self, metric: &str, skip: usize) -> Vec<f64> {
        self.values.numbers(metric, skip)
    }
}

/// What a run used of the machine besides its wall time: read by the checks that weigh a
/// result against the CPUs and the disk behind it. `None` where the session did not record it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// CPU time (user + system) per second of wall time: how many CPUs it kept busy.
    pub cpus: Option<f64>,
    /// Bytes read from block devices (`ru_inblock`, in 512-byte units).
    pub read_bytes: Option<u64>,
    /// Page faults that waited for I/O (`ru_majflt`).
    pub major_faults: Option<u64>,
    /// The share of its wall time a task of the run waited for a CPU others had
    /// (`wait_share`, else the tasks' total `wait_ns` per wall time).
    pub waiting: Option<f64>,
}

impl Usage {
    /// The usage a stored run records; CPU time that reads zero is taken as not recorded
    /// (imported runs), as no process runs without any.
    pub fn of(row: &RunRow) -> Usage {
        let cpu_ns = row.user_ns + row.sys_ns;
        Usage {
            cpus: (cpu_ns > 0 && row.wall_ns > 0).then(|| cpu_ns as f64 / row.wall_ns as f64),
            read_bytes: row.block_in.map(|blocks| blocks * 512),
            major_faults: row.major_faults,
            waiting: row.wait_share.or_else(|| {
                row.wait_ns
                    .filter(|_| row.wall_ns > 0)
                    .map(|ns| ns as f64 / row.wall_ns as f64)
            }),
        }
    }
}
