//! How a row of runs.csv is read: every column as the file has it, then the perf counters set
//! apart in their own box, since most sessions count none (eleven empty columns held 200
//! bytes a run, 20 MB at 100,000 runs).

use super::rows::{Counters, RunRow};
use serde::{Deserialize, Deserializer};

/// A row of runs.csv, column by column (see [`RunRow`] for what each holds).
#[derive(Deserialize)]
pub(super) struct RunRecord {
    run_id: String,
    position: usize,
    variant: String,
    repetition: u32,
    warmup: bool,
    start_utc: String,
    wall_ns: u64,
    boottime_ns: u64,
    user_ns: u64,
    sys_ns: u64,
    max_rss_kib: u64,
    voluntary_cs: u64,
    involuntary_cs: u64,
    exit_code: Option<i32>,
    signal: Option<i32>,
    spawn_error: Option<String>,
    timed_out: bool,
    cpus: Option<String>,
    stdout_sha256: String,
    #[serde(default)]
    left_running: Option<String>,
    #[serde(default)]
    host_busy_ns: Option<u64>,
    #[serde(default)]
    host_steal_ns: Option<u64>,
    #[serde(default)]
    host_capacity_ns: Option<u64>,
    #[serde(default)]
    psi_cpu_some_us: Option<u64>,
    #[serde(default)]
    psi_cpu_own_us: Option<u64>,
    #[serde(default)]
    busy_limit: Option<f64>,
    #[serde(default)]
    throttle_events: Option<u64>,
    #[serde(default)]
    samples: Option<usize>,
    #[serde(default)]
    node: Option<String>,
    #[serde(default)]
    start_boottime_ns: Option<u64>,
    #[serde(default)]
    overlapped: Option<String>,
    #[serde(default)]
    env_padding: Option<u32>,
    #[serde(default)]
    heap_shift: Option<u32>,
    #[serde(default)]
    minor_faults: Option<u64>,
    #[serde(default)]
    major_faults: Option<u64>,
    #[serde(default)]
    block_in: Option<u64>,
    #[serde(default)]
    block_out: Option<u64>,
    #[serde(default)]
    counter_task_clock: Option<u64>,
    #[serde(default)]
    counter_context_switches: Option<u64>,
    #[serde(default)]
    counter_cpu_migrations: Option<u64>,
    #[serde(default)]
    counter_page_faults: Option<u64>,
    #[serde(default)]
    counter_instructions: Option<u64>,
    #[serde(default)]
    counter_cycles: Option<u64>,
    #[serde(default)]
    counter_cache_references: Option<u64>,
    #[serde(default)]
    counter_cache_misses: Option<u64>,
    #[serde(default)]
    counter_branch_misses: Option<u64>,
    #[serde(default)]
    counter_branches: Option<u64>,
    #[serde(default)]
    counter_callgrind_instructions: Option<u64>,
    #[serde(default)]
    counters_multiplexed: Option<String>,
    #[serde(default)]
    stdout_offset: Option<u64>,
    #[serde(default)]
    stdout_bytes: Option<u64>,
    #[serde(default)]
    stderr_offset: Option<u64>,
    #[serde(default)]
    stderr_bytes: Option<u64>,
    #[serde(default)]
    stderr_sha256: Option<String>,
    #[serde(default)]
    wait_ns: Option<u64>,
    #[serde(default)]
    wait_tasks: Option<u32>,
    #[serde(default)]
    wait_share: Option<f64>,
}

impl RunRecord {
    /// The perf counter columns, set apart.
    fn counters(&mut self) -> Counters {
        Counters {
            task_clock: self.counter_task_clock,
            context_switches: self.counter_context_switches,
            cpu_migrations: self.counter_cpu_migrations,
            page_faults: self.counter_page_faults,
            instructions: self.counter_instructions,
            cycles: self.counter_cycles,
            cache_references: self.counter_cache_references,
            cache_misses: self.counter_cache_misses,
            branch_misses: self.counter_branch_misses,
            branches: self.counter_branches,
            callgrind_instructions: self.counter_callgrind_instructions,
            multiplexed: self.counters_multiplexed.take(),
        }
    }
}

/// A run row is read as its record, then set in order.
impl<'de> Deserialize<'de> for RunRow {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        RunRecord::deserialize(deserializer).map(RunRow::from)
    }
}

impl From<RunRecord> for RunRow {
    fn from(mut r: RunRecord) -> Self {
        let counters = r.counters();
        RunRow {
            run_id: r.run_id,
            position: r.position,
            variant: r.variant,
            repetition: r.repetition,
            warmup: r.warmup,
            start_utc: r.start_utc,
            wall_ns: r.wall_ns,
            boottime_ns: r.boottime_ns,
            user_ns: r.user_ns,
            sys_ns: r.sys_ns,
            max_rss_kib: r.max_rss_kib,
            voluntary_cs: r.voluntary_cs,
            involuntary_cs: r.involuntary_cs,
            exit_code: r.exit_code,
            signal: r.signal,
            spawn_error: r.spawn_error,
            timed_out: r.timed_out,
            cpus: r.cpus,
            stdout_sha256: r.stdout_sha256,
            left_running: r.left_running,
            host_busy_ns: r.host_busy_ns,
            host_steal_ns: r.host_steal_ns,
            host_capacity_ns: r.host_capacity_ns,
            psi_cpu_some_us: r.psi_cpu_some_us,
            psi_cpu_own_us: r.psi_cpu_own_us,
            busy_limit: r.busy_limit,
            throttle_events: r.throttle_events,
            samples: r.samples,
            node: r.node,
            start_boottime_ns: r.start_boottime_ns,
            overlapped: r.overlapped,
            env_padding: r.env_padding,
            heap_shift: r.heap_shift,
            minor_faults: r.minor_faults,
            major_faults: r.major_faults,
            block_in: r.block_in,
            block_out: r.block_out,
            stdout_offset: r.stdout_offset,
            stdout_bytes: r.stdout_bytes,
            stderr_offset: r.stderr_offset,
            stderr_bytes: r.stderr_bytes,
            stderr_sha256: r.stderr_sha256,
            wait_ns: r.wait_ns,
            wait_tasks: r.wait_tasks,
            wait_share: r.wait_share,
            counters: (counters != Counters::default()).then(|| Box::new(counters)),
        }
    }
}
