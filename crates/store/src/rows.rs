//! The tidy CSV rows of runs.csv and samples.csv: one row per run, one row per metric value.
//! Store owns these types; exec fills them in, the validity stage reads them back.

use lab_config::ParamValue;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const RUN_COLUMNS_BEFORE_PARAMS: [&str; 3] = ["run_id", "position", "variant"];
const RUN_COLUMNS_AFTER_PARAMS: [&str; 52] = [
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
    "host_busy_ns",
    "host_steal_ns",
    "host_capacity_ns",
    "psi_cpu_some_us",
    "psi_cpu_own_us",
    "busy_limit",
    "throttle_events",
    "samples",
    "node",
    "start_boottime_ns",
    "overlapped",
    "minor_faults",
    "major_faults",
    "block_in",
    "block_out",
    "counter_task_clock",
    "counter_context_switches",
    "counter_cpu_migrations",
    "counter_page_faults",
    "counter_instructions",
    "counter_cycles",
    "counter_cache_references",
    "counter_cache_misses",
    "counter_branch_misses",
    "counter_branches",
    "counter_callgrind_instructions",
    "counters_multiplexed",
    "stdout_offset",
    "stdout_bytes",
    "stderr_offset",
    "stderr_bytes",
    "stderr_sha256",
    "wait_ns",
    "wait_tasks",
    "wait_share",
];
/// The columns after every other in the runs.csv of a session that randomised the layout;
/// other sessions leave them out, so their files stay as they were. Sessions recorded before
/// the heap was shifted have the first alone.
const LAYOUT_COLUMN: &str = "env_padding";
const HEAP_COLUMN: &str = "heap_shift";
pub(crate) const SAMPLE_HEADER: [&str; 4] = ["run_id", "metric", "iteration", "value"];

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
    pub node: Option<String>,
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
/// lacks it, or the session predates its column; never zero for unavailable.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    pub task_clock: Option<u64>,
    pub context_switches: Option<u64>,
    pub cpu_migrations: Option<u64>,
    pub page_faults: Option<u64>,
    pub instructions: Option<u64>,
    pub cycles: Option<u64>,
    pub cache_references: Option<u64>,
    pub cache_misses: Option<u64>,
    pub branch_misses: Option<u64>,
    pub branches: Option<u64>,
    /// Instructions valgrind's callgrind counted, the run's child processes included.
    pub callgrind_instructions: Option<u64>,
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

    /// The column of the perf counter `name`, to record it.
    pub fn counter_mut(&mut self, name: &str) -> Option<&mut Option<u64>> {
        if !COUNTER_NAMES.contains(&name) {
            return None;
        }
        self.counters.get_or_insert_default().value_mut(name)
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
    fn ended(&self) -> Ended<'_> {
        match (&self.spawn_error, self.signal, self.exit_code) {
            (Some(e), _, _) if !e.is_empty() => Ended::SpawnFailed(e),
            (_, Some(s), _) => Ended::Signal(s),
            (_, _, Some(c)) => Ended::Code(c),
            _ => Ended::SpawnFailed("no exit status recorded"),
        }
    }
}

/// How a run ended, as [`RunRow::ended`] reads it from the row's columns.
enum Ended<'a> {
    Code(i32),
    Signal(i32),
    SpawnFailed(&'a str),
}

impl Counters {
    /// The recorded value of the perf counter `name` (perf's name).
    fn value(&self, name: &str) -> Option<u64> {
        match name {
            "task-clock" => self.task_clock,
            "context-switches" => self.context_switches,
            "cpu-migrations" => self.cpu_migrations,
            "page-faults" => self.page_faults,
            "instructions" => self.instructions,
            "cycles" => self.cycles,
            "cache-references" => self.cache_references,
            "cache-misses" => self.cache_misses,
            "branch-misses" => self.branch_misses,
            "branches" => self.branches,
            "callgrind-instructions" => self.callgrind_instructions,
            _ => None,
        }
    }

    fn value_mut(&mut self, name: &str) -> Option<&mut Option<u64>> {
        match name {
            "task-clock" => Some(&mut self.task_clock),
            "context-switches" => Some(&mut self.context_switches),
            "cpu-migrations" => Some(&mut self.cpu_migrations),
            "page-faults" => Some(&mut self.page_faults),
            "instructions" => Some(&mut self.instructions),
            "cycles" => Some(&mut self.cycles),
            "cache-references" => Some(&mut self.cache_references),
            "cache-misses" => Some(&mut self.cache_misses),
            "branch-misses" => Some(&mut self.branch_misses),
            "branches" => Some(&mut self.branches),
            "callgrind-instructions" => Some(&mut self.callgrind_instructions),
            _ => None,
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

/// The header of runs.csv: with the `env_padding` and `heap_shift` columns when `padded` (the
/// layout is randomised).
pub(crate) fn run_header(params: &[String], padded: bool) -> Vec<String> {
    RUN_COLUMNS_BEFORE_PARAMS
        .iter()
        .map(|s| s.to_string())
        .chain(params.iter().cloned())
        .chain(RUN_COLUMNS_AFTER_PARAMS.iter().map(|s| s.to_string()))
        .chain(
            [LAYOUT_COLUMN, HEAP_COLUMN]
                .into_iter()
                .filter(|_| padded)
                .map(String::from),
        )
        .collect()
}

/// The CSV fields of one run row in the order of `header` (this session's runs.csv header,
/// which may predate some columns): parameter columns take the run's parameter values. The
/// reference [`RunLayout::write_line`] is tested against.
#[cfg(test)]
pub(crate) fn run_record(
    row: &RunRow,
    values: &BTreeMap<String, ParamValue>,
    header: &[String],
) -> Vec<String> {
    let fields = run_fields(row);
    header
        .iter()
        .map(|name| {
            fields
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.to_string())
                .or_else(|| values.get(name).map(|v| v.to_string()))
                .unwrap_or_default()
        })
        .collect()
}

/// How a session's runs.csv lays out a row: for each field of [`run_fields`], the column
/// its header gives it, found once per session instead of by name for every row.
#[derive(Debug, Clone)]
pub(crate) struct RunLayout {
    header: Vec<String>,
    /// The column of each measured field, in [`run_fields`] order (`None`: a column the
    /// header predates).
    field_columns: Vec<Option<usize>>,
    /// Each column's text for the row being written, kept from row to row.
    cells: Vec<Vec<u8>>,
}

impl RunLayout {
    pub(crate) fn new(header: Vec<String>) -> RunLayout {
        let field_columns = run_fields(&RunRow::default())
            .iter()
            .map(|(name, _)| header.iter().position(|h| h == name))
            .collect();
        let cells = vec![Vec::new(); header.len()];
        RunLayout {
            header,
            field_columns,
            cells,
        }
    }

    /// Appends to `out` the CSV line of `row` (with `samples` and `node` in place of the
    /// row's own), quoted as the csv crate quotes (a field holding a comma, a quote or a line
    /// break is quoted, its quotes doubled), ending in a line feed: the same bytes as
    /// [`run_record`] written by `csv::Writer`.
    pub(crate) fn write_line(
        &mut self,
        row: &RunRow,
        values: &BTreeMap<String, ParamValue>,
        overrides: Overrides<'_>,
        out: &mut Vec<u8>,
    ) {
        for cell in &mut self.cells {
            cell.clear();
        }
        for ((name, field), column) in run_fields(row).iter().zip(&self.field_columns) {
            let Some(column) = *column else { continue };
            let cell = &mut self.cells[column];
            match *name {
                "samples" if overrides.samples.is_some() => {
                    Field::Count(overrides.samples).write_to(cell)
                }
                "node" if row.node.is_none() && overrides.node.is_some() => {
                    Field::Text(overrides.node.unwrap_or_default()).write_to(cell)
                }
                _ => field.write_to(cell),
            }
        }
        for (name, cell) in self.header.iter().zip(&mut self.cells) {
            if let Some(value) = values.get(name) {
                use std::io::Write;
                let _ = write!(cell, "{value}");
            }
        }
        for (i, cell) in self.cells.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_csv_field(cell, out);
        }
        out.push(b'\n');
    }
}

/// What a written row takes from its session rather than from itself.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Overrides<'a> {
    /// The number of values the run printed.
    pub samples: Option<usize>,
    /// The node writing the session, for a row that names none.
    pub node: Option<&'a str>,
}

/// `field` as a CSV field: quoted, with its quotes doubled, when it holds a comma, a quote
/// or a line break (the csv crate's `QuoteStyle::Necessary`).
fn write_csv_field(field: &[u8], out: &mut Vec<u8>) {
    if !field
        .iter()
        .any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
    {
        out.extend_from_slice(field);
        return;
    }
    out.push(b'"');
    for &b in field {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

/// One field of a run row, borrowed from it, written without an allocation.
#[derive(Debug, Clone, Copy)]
enum Field<'a> {
    Text(&'a str),
    Unsigned(Option<u64>),
    Signed(Option<i32>),
    Count(Option<usize>),
    Flag(bool),
    Share(Option<f64>),
}

impl Field<'_> {
    fn write_to(self, out: &mut Vec<u8>) {
        use std::io::Write;
        let _ = match self {
            Field::Text(s) => {
                out.extend_from_slice(s.as_bytes());
                Ok(())
            }
            Field::Unsigned(Some(n)) => write!(out, "{n}"),
            Field::Signed(Some(n)) => write!(out, "{n}"),
            Field::Count(Some(n)) => write!(out, "{n}"),
            Field::Flag(b) => write!(out, "{b}"),
            Field::Share(Some(x)) => write!(out, "{x}"),
            Field::Unsigned(None)
            | Field::Signed(None)
            | Field::Count(None)
            | Field::Share(None) => Ok(()),
        };
    }
}

/// The field's text, for [`run_record`].
#[cfg(test)]
impl std::fmt::Display for Field<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut bytes = Vec::new();
        self.write_to(&mut bytes);
        f.write_str(&String::from_utf8_lossy(&bytes))
    }
}

/// Reads one field of a run row.
type ReadField = for<'r> fn(&'r RunRow) -> Field<'r>;

/// Every measured field of a run row by column name, in the order runs.csv writes them.
static RUN_FIELDS: [(&str, ReadField); 57] = [
    ("run_id", |r| Field::Text(&r.run_id)),
    ("position", |r| Field::Count(Some(r.position))),
    ("variant", |r| Field::Text(&r.variant)),
    ("repetition", |r| {
        Field::Unsigned(Some(u64::from(r.repetition)))
    }),
    ("warmup", |r| Field::Flag(r.warmup)),
    ("start_utc", |r| Field::Text(&r.start_utc)),
    ("wall_ns", |r| Field::Unsigned(Some(r.wall_ns))),
    ("boottime_ns", |r| Field::Unsigned(Some(r.boottime_ns))),
    ("user_ns", |r| Field::Unsigned(Some(r.user_ns))),
    ("sys_ns", |r| Field::Unsigned(Some(r.sys_ns))),
    ("max_rss_kib", |r| Field::Unsigned(Some(r.max_rss_kib))),
    ("voluntary_cs", |r| Field::Unsigned(Some(r.voluntary_cs))),
    ("involuntary_cs", |r| {
        Field::Unsigned(Some(r.involuntary_cs))
    }),
    ("exit_code", |r| Field::Signed(exit_code(r))),
    ("signal", |r| Field::Signed(signal(r))),
    ("spawn_error", |r| Field::Text(spawn_error(r))),
    ("timed_out", |r| Field::Flag(r.timed_out)),
    ("cpus", |r| text(&r.cpus)),
    ("stdout_sha256", |r| Field::Text(&r.stdout_sha256)),
    ("left_running", |r| text(&r.left_running)),
    ("host_busy_ns", |r| Field::Unsigned(r.host_busy_ns)),
    ("host_steal_ns", |r| Field::Unsigned(r.host_steal_ns)),
    ("host_capacity_ns", |r| Field::Unsigned(r.host_capacity_ns)),
    ("psi_cpu_some_us", |r| Field::Unsigned(r.psi_cpu_some_us)),
    ("psi_cpu_own_us", |r| Field::Unsigned(r.psi_cpu_own_us)),
    ("busy_limit", |r| Field::Share(r.busy_limit)),
    ("throttle_events", |r| Field::Unsigned(r.throttle_events)),
    ("samples", |r| Field::Count(r.samples)),
    ("node", |r| text(&r.node)),
    ("start_boottime_ns", |r| {
        Field::Unsigned(r.start_boottime_ns)
    }),
    ("overlapped", |r| text(&r.overlapped)),
    (LAYOUT_COLUMN, |r| {
        Field::Unsigned(r.env_padding.map(u64::from))
    }),
    (HEAP_COLUMN, |r| {
        Field::Unsigned(r.heap_shift.map(u64::from))
    }),
    ("minor_faults", |r| Field::Unsigned(r.minor_faults)),
    ("major_faults", |r| Field::Unsigned(r.major_faults)),
    ("block_in", |r| Field::Unsigned(r.block_in)),
    ("block_out", |r| Field::Unsigned(r.block_out)),
    ("counter_task_clock", |r| {
        Field::Unsigned(r.counter("task-clock"))
    }),
    ("counter_context_switches", |r| {
        Field::Unsigned(r.counter("context-switches"))
    }),
    ("counter_cpu_migrations", |r| {
        Field::Unsigned(r.counter("cpu-migrations"))
    }),
    ("counter_page_faults", |r| {
        Field::Unsigned(r.counter("page-faults"))
    }),
    ("counter_instructions", |r| {
        Field::Unsigned(r.counter("instructions"))
    }),
    ("counter_cycles", |r| Field::Unsigned(r.counter("cycles"))),
    ("counter_cache_references", |r| {
        Field::Unsigned(r.counter("cache-references"))
    }),
    ("counter_cache_misses", |r| {
        Field::Unsigned(r.counter("cache-misses"))
    }),
    ("counter_branch_misses", |r| {
        Field::Unsigned(r.counter("branch-misses"))
    }),
    ("counter_branches", |r| {
        Field::Unsigned(r.counter("branches"))
    }),
    ("counter_callgrind_instructions", |r| {
        Field::Unsigned(r.counter("callgrind-instructions"))
    }),
    ("counters_multiplexed", |r| {
        Field::Text(r.counters_multiplexed().unwrap_or_default())
    }),
    ("stdout_offset", |r| Field::Unsigned(r.stdout_offset)),
    ("stdout_bytes", |r| Field::Unsigned(r.stdout_bytes)),
    ("stderr_offset", |r| Field::Unsigned(r.stderr_offset)),
    ("stderr_bytes", |r| Field::Unsigned(r.stderr_bytes)),
    ("stderr_sha256", |r| text(&r.stderr_sha256)),
    ("wait_ns", |r| Field::Unsigned(r.wait_ns)),
    ("wait_tasks", |r| {
        Field::Unsigned(r.wait_tasks.map(u64::from))
    }),
    ("wait_share", |r| Field::Share(r.wait_share)),
];

/// Every measured field of a run row by column name.
fn run_fields(row: &RunRow) -> [(&'static str, Field<'_>); 57] {
    RUN_FIELDS.map(|(name, read)| (name, read(row)))
}

/// A text column that may be empty.
fn text(v: &Option<String>) -> Field<'_> {
    Field::Text(v.as_deref().unwrap_or_default())
}

/// The exit code of a run that exited.
fn exit_code(row: &RunRow) -> Option<i32> {
    match row.ended() {
        Ended::Code(c) => Some(c),
        _ => None,
    }
}

/// The signal that ended a run that was killed.
fn signal(row: &RunRow) -> Option<i32> {
    match row.ended() {
        Ended::Signal(s) => Some(s),
        _ => None,
    }
}

/// Why a run that could not start did not.
fn spawn_error(row: &RunRow) -> &str {
    match row.ended() {
        Ended::SpawnFailed(e) => e,
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_holds_its_counters_apart_and_reads_them_back() {
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
        assert!(row.counter_mut("no-such-counter").is_none());
        row.set_counters_multiplexed(None);
        assert!(row.counters.is_none(), "nothing recorded, nothing held");
        *row.counter_mut("cycles").unwrap() = Some(7);
        row.set_counters_multiplexed(Some("cycles".into()));
        assert_eq!(row.counter("cycles"), Some(7));
        assert_eq!(row.counters_multiplexed(), Some("cycles"));
        let header = run_header(&[], false);
        let record = run_record(&row, &BTreeMap::new(), &header);
        let at = |name: &str| &record[header.iter().position(|h| h == name).unwrap()];
        assert_eq!(
            (
                at("counter_cycles").as_str(),
                at("counters_multiplexed").as_str()
            ),
            ("7", "cycles")
        );
        assert_eq!(at("counter_branches"), "");
    }

    /// `run_record` written by the csv crate, as rows were appended before [`RunLayout`].
    fn csv_line(row: &RunRow, values: &BTreeMap<String, ParamValue>, header: &[String]) -> Vec<u8> {
        let mut line = csv::Writer::from_writer(Vec::new());
        line.write_record(run_record(row, values, header)).unwrap();
        line.into_inner().unwrap()
    }

    #[test]
    fn a_laid_out_line_is_the_csv_crates_line_of_the_same_row() {
        let mut quoted = RunRow {
            run_id: "r0007".into(),
            position: 7,
            variant: "with, comma".into(),
            repetition: 3,
            warmup: true,
            start_utc: "2026-12-04T10:00:00Z".into(),
            wall_ns: 123_456_789,
            exit_code: Some(-2),
            spawn_error: Some("cannot start `x`: \"quoted\"\nand a line\r".into()),
            cpus: Some("0 1".into()),
            busy_limit: Some(0.1),
            host_busy_ns: Some(0),
            stdout_offset: Some(40),
            stdout_bytes: Some(0),
            stderr_sha256: Some("ab".into()),
            env_padding: Some(12),
            heap_shift: Some(48),
            ..RunRow::default()
        };
        *quoted.counter_mut("cycles").unwrap() = Some(99);
        quoted.set_counters_multiplexed(Some("cycles".into()));
        let signalled = RunRow {
            signal: Some(9),
            exit_code: Some(0),
            ..quoted.clone()
        };
        let no_status = RunRow::default();
        let values = BTreeMap::from([
            ("threads".to_string(), ParamValue::Int(4)),
            ("impl".to_string(), ParamValue::Text("a \"b\"".into())),
        ]);
        let params = ["impl".to_string(), "threads".to_string()];
        for header in [
            run_header(&params, true),
            run_header(&[], false),
            // An older session's header: fewer columns, one this lab does not know.
            ["run_id", "wall_ns", "exit_code", "retired", "threads"]
                .map(String::from)
                .to_vec(),
        ] {
            let mut layout = RunLayout::new(header.clone());
            for row in [&quoted, &signalled, &no_status] {
                let mut line = Vec::new();
                layout.write_line(row, &values, Overrides::default(), &mut line);
                assert_eq!(
                    String::from_utf8(line).unwrap(),
                    String::from_utf8(csv_line(row, &values, &header)).unwrap()
                );
            }
        }
    }

    #[test]
    fn the_sessions_count_of_values_and_its_node_take_the_place_of_the_rows_own() {
        let header = run_header(&[], false);
        let mut layout = RunLayout::new(header.clone());
        let mut line = Vec::new();
        let overrides = Overrides {
            samples: Some(5),
            node: Some("n2"),
        };
        layout.write_line(&RunRow::default(), &BTreeMap::new(), overrides, &mut line);
        let expected = RunRow {
            samples: Some(5),
            node: Some("n2".into()),
            ..RunRow::default()
        };
        assert_eq!(line, csv_line(&expected, &BTreeMap::new(), &header));
    }
}
