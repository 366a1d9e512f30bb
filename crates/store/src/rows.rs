//! The tidy CSV rows of runs.csv and samples.csv: one row per run, one row per metric value.
//! Store owns these types; exec fills them in, the validity stage reads them back. Their
//! columns are declared in `columns.rs`.

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunRow {
    pub run_id: CompactString,
    pub position: usize,
    pub variant: CompactString,
    pub repetition: u32,
    pub warmup: bool,
    pub start_utc: CompactString,
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
    pub left_running: Option<String>,
    /// CPU time spent on the run's CPUs by every process while it ran, the run's own included
    /// (from `/proc/stat`); empty in sessions recorded before lab measured it.
    pub host_busy_ns: Option<u64>,
    /// CPU time a hypervisor took from the run's CPUs while it ran.
    pub host_steal_ns: Option<u64>,
    /// CPU time the run's CPUs had to give while it ran.
    pub host_capacity_ns: Option<u64>,
    /// Microseconds some task on the machine waited for a CPU while the run ran (PSI).
    pub psi_cpu_some_us: Option<u64>,
    /// Microseconds the run's own tasks waited for a CPU (PSI of its own cgroup), where lab
    /// could give it one.
    pub psi_cpu_own_us: Option<u64>,
    /// The share of its wall time the run could wait for a CPU before it counted as disturbed
    /// (`max_busy` when it ran); empty in sessions recorded before the column existed.
    pub busy_limit: Option<f64>,
    /// Thermal-throttle events on the run's CPUs while it ran, where the kernel counts them.
    pub throttle_events: Option<u64>,
    /// How many rows of samples.csv belong to this run. The run row is written after them, so
    /// it commits the run; sessions written before this column existed leave it empty.
    pub samples: Option<usize>,
    /// The cluster node that ran it (`lab run --on slurm`); empty for a run on this machine
    /// and in sessions written before the column existed.
    pub node: Option<CompactString>,
    /// CLOCK_BOOTTIME when the run was spawned; with `boottime_ns` it places the run in time
    /// against the session's other runs. Empty where it was not recorded.
    pub start_boottime_ns: Option<u64>,
    /// The runs that executed at some moment while this one did (`lab run --jobs`),
    /// space-separated; empty when it ran alone.
    pub overlapped: Option<String>,
    /// Bytes of padding in the run's environment (`layout = "randomized"`). The column exists
    /// only in sessions that randomised the layout; elsewhere it reads as empty.
    pub env_padding: Option<u32>,
    /// Bytes the run's heap was shifted by (`layout = "randomized"`); empty where it was not
    /// shifted (a statically linked program, lab built without a C compiler) and in sessions
    /// recorded before the column existed.
    pub heap_shift: Option<u32>,
    /// Page faults served without I/O (`ru_minflt`); empty where not recorded (sessions
    /// before the column, imported runs).
    pub minor_faults: Option<u64>,
    /// Page faults that waited for I/O (`ru_majflt`).
    pub major_faults: Option<u64>,
    /// Block input operations (`ru_inblock`).
    pub block_in: Option<u64>,
    /// Block output operations (`ru_oublock`).
    pub block_out: Option<u64>,
    /// perf counters (`[experiment] counters`), one column each, named `counter_` and perf's
    /// name with `_` for `-` (task-clock in nanoseconds); `None` when the run counted none.
    pub counters: Option<Box<Counters>>,
    /// Where the run's stdout lies in `logs/stdout.pack` (see `packed`): empty in
    /// sessions from before the packs, whose runs have a log file each.
    pub stdout_offset: Option<u64>,
    pub stdout_bytes: Option<u64>,
    /// Where the run's stderr lies in `logs/stderr.pack`, and its SHA-256.
    pub stderr_offset: Option<u64>,
    pub stderr_bytes: Option<u64>,
    pub stderr_sha256: Option<String>,
    /// Nanoseconds the run's own tasks (every process and thread of it) waited for a CPU,
    /// summed over the tasks; empty where the kernel's per-task counters could not be read for
    /// the whole run, and in sessions recorded before the column existed.
    pub wait_ns: Option<u64>,
    /// How many of the run's tasks worked (wanted a CPU for at least a tenth of their life):
    /// two or more make it a parallel run.
    pub wait_tasks: Option<u32>,
    /// The largest share of its life one of those tasks that wanted a CPU waited for one: how
    /// far the waiting could have stretched the run (`exec::taskstats::TaskWait::share`).
    pub wait_share: Option<f64>,
}

/// The perf counters of a run, each empty where the counter was not asked for, the machine
/// lacks it, or the session predates its column; never zero for unavailable. Held packed: a
/// value per counter of [`COUNTER_NAMES`], in its order, and a bit each for whether it was
/// recorded (a field of `Option<u64>` each held 200 bytes a run, 120 now).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    /// Each counter's value; 0 where its bit in `recorded` is clear. `callgrind-instructions`
    /// are the instructions valgrind's callgrind counted, the run's child processes included.
    values: [u64; COUNTER_NAMES.len()],
    recorded: u16,
    /// The counters the kernel multiplexed during the run (scaled by time enabled / time
    /// running), by perf's name, space-separated; empty when none was.
    pub multiplexed: Option<String>,
}

/// The perf counters runs.csv has a column for, by perf's name.
pub const COUNTER_NAMES: [&str; 11] = [
    "task-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
    "instructions",
    "cycles",
    "cache-references",
    "cache-misses",
    "branch-misses",
    "branches",
    "callgrind-instructions",
];

impl RunRow {
    /// The recorded value of the perf counter `name` (perf's name).
    pub fn counter(&self, name: &str) -> Option<u64> {
        self.counters.as_deref().and_then(|c| c.value(name))
    }

    /// Records `value` for the perf counter `name`; false, recording nothing, for a name that
    /// is not one of [`COUNTER_NAMES`].
    pub fn set_counter(&mut self, name: &str, value: u64) -> bool {
        let Some(i) = counter_index(name) else {
            return false;
        };
        self.counters.get_or_insert_default().set(i, value);
        true
    }

    /// Records the counters the kernel multiplexed, space-separated.
    pub fn set_counters_multiplexed(&mut self, names: Option<String>) {
        if names.is_some() || self.counters.is_some() {
            self.counters.get_or_insert_default().multiplexed = names;
        }
    }

    /// The counters the kernel multiplexed during the run, space-separated.
    pub fn counters_multiplexed(&self) -> Option<&str> {
        self.counters
            .as_deref()
            .and_then(|c| c.multiplexed.as_deref())
    }

    /// The runs that executed beside this one, by id.
    pub fn overlapped_ids(&self) -> impl Iterator<Item = &str> {
        self.overlapped.iter().flat_map(|o| o.split_whitespace())
    }

    /// The CPUs the run was pinned to, where it was pinned.
    pub fn cpu_set(&self) -> Option<Vec<usize>> {
        let text = self.cpus.as_deref().filter(|c| !c.trim().is_empty())?;
        text.split_whitespace().map(|c| c.parse().ok()).collect()
    }

    /// How the run ended.
    pub fn exit(&self) -> Exit {
        match self.ended() {
            Ended::Code(c) => Exit::Code(c),
            Ended::Signal(s) => Exit::Signal(s),
            Ended::SpawnFailed(e) => Exit::SpawnFailed(e.to_string()),
        }
    }

    /// [`Self::exit`], borrowing the spawn error instead of copying it.
    pub(super) fn ended(&self) -> Ended<'_> {
        match (&self.spawn_error, self.signal, self.exit_code) {
            (Some(e), _, _) if !e.is_empty() => Ended::SpawnFailed(e),
            (_, Some(s), _) => Ended::Signal(s),
            (_, _, Some(c)) => Ended::Code(c),
            _ => Ended::SpawnFailed("no exit status recorded"),
        }
    }
}

/// How a run ended, as [`RunRow::ended`] reads it from the row's columns.
pub(super) enum Ended<'a> {
    Code(i32),
    Signal(i32),
    SpawnFailed(&'a str),
}

impl Counters {
    /// The recorded value of the perf counter `name` (perf's name).
    fn value(&self, name: &str) -> Option<u64> {
        let i = counter_index(name)?;
        (self.recorded & (1 << i) != 0).then_some(self.values[i])
    }

    /// Records `value` for the counter at `i` of [`COUNTER_NAMES`].
    fn set(&mut self, i: usize, value: u64) {
        self.values[i] = value;
        self.recorded |= 1 << i;
    }
}

/// Where perf's counter `name` stands in [`COUNTER_NAMES`].
fn counter_index(name: &str) -> Option<usize> {
    COUNTER_NAMES.iter().position(|n| *n == name)
}

/// One row of samples.csv (its columns: `SAMPLE_COLUMNS` in `columns.rs`). Its texts are
/// held inline up to 24 bytes, as run ids, metric names and printed values nearly always are: a
/// session of half a million values held three heap allocations for each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRow {
    pub run_id: CompactString,
    pub metric: CompactString,
    pub iteration: usize,
    pub value: CompactString,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_holds_its_counters_apart() {
        // Eleven counter columns inline held 200 bytes a row, most often empty. The run's own
        // waiting (three columns, 40 bytes) is held inline: every run of a session records it;
        // so is the heap shift (8 bytes), as the padding beside it.
        assert!(
            std::mem::size_of::<RunRow>() <= 664,
            "{}",
            std::mem::size_of::<RunRow>()
        );
        let mut row = RunRow::default();
        assert_eq!(
            (row.counter("cycles"), row.counters.is_none()),
            (None, true)
        );
        assert!(!row.set_counter("no-such-counter", 1));
        row.set_counters_multiplexed(None);
        assert!(row.counters.is_none(), "nothing recorded, nothing held");
        assert!(row.set_counter("cycles", 7));
        row.set_counters_multiplexed(Some("cycles".into()));
        assert_eq!(row.counter("cycles"), Some(7));
        assert_eq!(row.counters_multiplexed(), Some("cycles"));
        assert!(std::mem::size_of::<Counters>() <= 120);
    }

    #[test]
    fn each_counter_reads_back_what_was_recorded_and_no_other() {
        let mut row = RunRow::default();
        for (i, name) in COUNTER_NAMES.iter().enumerate().filter(|(i, _)| i % 3 != 1) {
            assert!(row.set_counter(name, 10 * i as u64));
        }
        for (i, name) in COUNTER_NAMES.iter().enumerate() {
            let want = (i % 3 != 1).then_some(10 * i as u64);
            assert_eq!(row.counter(name), want, "{name}");
        }
        assert_eq!(row.counter("no-such-counter"), None);
        let mut zero = RunRow::default();
        zero.set_counter("task-clock", 0);
        assert_eq!(
            zero.counter("task-clock"),
            Some(0),
            "a zero recorded is a value"
        );
        assert_ne!(zero, RunRow::default());
    }
}
