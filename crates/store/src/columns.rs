//! The one declaration of runs.csv and samples.csv: each column's name, what it holds, and how
//! a run row's value is written to it and read back from it. The header a session writes, the
//! line it appends per run, the reading of its rows and the reference page that lists the
//! columns all come from [`RUN_COLUMNS`] and [`SAMPLE_COLUMNS`].

use super::rows::{Ended, RunRow};
use compact_str::CompactString;
use lab_config::ParamValue;
use std::collections::BTreeMap;

/// One column of runs.csv.
#[derive(Debug)]
pub struct RunColumn {
    /// Its name in the header.
    pub name: &'static str,
    /// What it holds, as the reference page says.
    pub what: &'static str,
    /// Only the runs.csv of a session that randomised the layout has it; other sessions leave
    /// it out, so their files stay as they were.
    pub layout_only: bool,
    /// Every runs.csv lab wrote has it, so a row without it is damaged. The others read as
    /// empty in sessions recorded before lab wrote them.
    pub required: bool,
    write: for<'r> fn(&'r RunRow) -> Field<'r>,
    read: fn(&mut RunRow, &str) -> Result<(), String>,
}

/// A column holding the run row's field of the same name.
macro_rules! column {
    ($field:ident, $what:expr) => {
        RunColumn {
            name: stringify!($field),
            what: $what,
            layout_only: false,
            required: !is_optional(|r: &RunRow| &r.$field),
            write: |r| r.$field.field(),
            read: |r, text| {
                r.$field = Cell::parse(text)?;
                Ok(())
            },
        }
    };
}

/// A column of one perf counter: `counter_` and perf's name with `_` for `-`.
macro_rules! counter {
    ($column:literal, $counter:literal) => {
        RunColumn {
            name: $column,
            what: concat!(
                "perf's `",
                $counter,
                "` over the run (`[experiment] counters`); empty where it was not counted"
            ),
            layout_only: false,
            required: false,
            write: |r| r.counter($counter).map_or(Field::Empty, Field::Unsigned),
            read: |r, text| {
                if let Some(value) = Option::<u64>::parse(text)? {
                    r.set_counter($counter, value);
                }
                Ok(())
            },
        }
    };
}

/// `column` kept to the sessions that randomised the layout.
const fn layout_only(column: RunColumn) -> RunColumn {
    RunColumn {
        layout_only: true,
        ..column
    }
}

/// Where the parameter columns stand: after this many of [`RUN_COLUMNS`] (after `variant`).
pub const PARAMS_AFTER: usize = 3;

/// Every column of runs.csv, in the order a new session writes them; the parameters' columns
/// stand after the first [`PARAMS_AFTER`], and a session's header may predate some.
pub static RUN_COLUMNS: [RunColumn; 57] = [
    column!(run_id, "the run's id in plan.json (`r0007`)"),
    column!(position, "its place in the execution order, from 0"),
    column!(variant, "the variant it ran"),
    column!(repetition, "which repetition of its cell it is, from 0"),
    column!(warmup, "`true` for a warm-up run, never analysed"),
    column!(start_utc, "when it started, UTC"),
    column!(wall_ns, "its wall time, spawn to reaping, in nanoseconds"),
    column!(
        boottime_ns,
        "the same on CLOCK_BOOTTIME, which also counts time the machine was suspended"
    ),
    column!(
        user_ns,
        "CPU time in user mode (`rusage`), the children it waited for included"
    ),
    column!(sys_ns, "CPU time in the kernel, the same way"),
    column!(max_rss_kib, "its largest resident set, in KiB"),
    column!(voluntary_cs, "context switches it asked for (it waited)"),
    column!(
        involuntary_cs,
        "context switches forced on it (its time was up)"
    ),
    RunColumn {
        write: |r| exit_code(r).map_or(Field::Empty, Field::Signed),
        ..column!(exit_code, "its exit code, when it exited")
    },
    RunColumn {
        write: |r| signal(r).map_or(Field::Empty, Field::Signed),
        ..column!(signal, "the signal that ended it, when one did")
    },
    RunColumn {
        write: |r| Field::Text(spawn_error(r)),
        ..column!(
            spawn_error,
            "why it could not be started, when it could not"
        )
    },
    column!(timed_out, "`true` when lab killed it at its `timeout`"),
    column!(
        cpus,
        "the CPUs it was pinned to, space-separated; empty when not pinned"
    ),
    column!(stdout_sha256, "SHA-256 of everything it printed on stdout"),
    column!(
        left_running,
        "processes it left behind (lab killed them), space-separated"
    ),
    column!(
        host_busy_ns,
        "CPU time every process spent on its CPUs while it ran, its own included (`/proc/stat`)"
    ),
    column!(
        host_steal_ns,
        "CPU time a hypervisor took from its CPUs while it ran"
    ),
    column!(
        host_capacity_ns,
        "CPU time its CPUs had to give while it ran"
    ),
    column!(
        psi_cpu_some_us,
        "microseconds some task on the machine waited for a CPU while it ran (PSI)"
    ),
    column!(
        psi_cpu_own_us,
        "microseconds its own tasks waited for a CPU (PSI of its own cgroup), where lab gave it one"
    ),
    column!(
        busy_limit,
        "the share of its wall time it could wait for a CPU before it counted as disturbed (`max_busy`)"
    ),
    column!(
        throttle_events,
        "thermal-throttle events on its CPUs while it ran, where the kernel counts them"
    ),
    column!(
        samples,
        "how many rows of samples.csv are its values; the row is written after them and commits the run"
    ),
    column!(
        node,
        "the cluster node that ran it (`--on slurm`); empty on this machine"
    ),
    column!(
        start_boottime_ns,
        "CLOCK_BOOTTIME when it was spawned, which places it among the session's other runs"
    ),
    column!(
        overlapped,
        "the runs that executed while it did (`--jobs`), space-separated; empty when it ran alone"
    ),
    column!(minor_faults, "page faults served without I/O (`ru_minflt`)"),
    column!(
        major_faults,
        "page faults that waited for I/O (`ru_majflt`)"
    ),
    column!(block_in, "block input operations (`ru_inblock`)"),
    column!(block_out, "block output operations (`ru_oublock`)"),
    counter!("counter_task_clock", "task-clock"),
    counter!("counter_context_switches", "context-switches"),
    counter!("counter_cpu_migrations", "cpu-migrations"),
    counter!("counter_page_faults", "page-faults"),
    counter!("counter_instructions", "instructions"),
    counter!("counter_cycles", "cycles"),
    counter!("counter_cache_references", "cache-references"),
    counter!("counter_cache_misses", "cache-misses"),
    counter!("counter_branch_misses", "branch-misses"),
    counter!("counter_branches", "branches"),
    counter!("counter_callgrind_instructions", "callgrind-instructions"),
    RunColumn {
        name: "counters_multiplexed",
        what: "the counters the kernel multiplexed during the run (scaled by time enabled over time running), space-separated",
        layout_only: false,
        required: false,
        write: |r| Field::Text(r.counters_multiplexed().unwrap_or_default()),
        read: |r, text| {
            r.set_counters_multiplexed(Cell::parse(text)?);
            Ok(())
        },
    },
    column!(
        stdout_offset,
        "where its stdout starts in `logs/stdout.pack`; empty in sessions that kept a log file per run"
    ),
    column!(
        stdout_bytes,
        "how many bytes of `logs/stdout.pack` are its stdout"
    ),
    column!(
        stderr_offset,
        "where its stderr starts in `logs/stderr.pack`"
    ),
    column!(
        stderr_bytes,
        "how many bytes of `logs/stderr.pack` are its stderr"
    ),
    column!(stderr_sha256, "SHA-256 of its stderr"),
    column!(
        wait_ns,
        "nanoseconds its own tasks waited for a CPU, summed over them; empty where the kernel's per-task counters could not be read for the whole run"
    ),
    column!(
        wait_tasks,
        "how many of its tasks worked (wanted a CPU for at least a tenth of their life)"
    ),
    column!(
        wait_share,
        "the largest share of its life one of those tasks waited for a CPU"
    ),
    layout_only(column!(env_padding, "bytes of padding in its environment")),
    layout_only(column!(
        heap_shift,
        "bytes its heap was shifted by; empty where it was not shifted"
    )),
];

/// One column of samples.csv: its name and what it holds.
pub type SampleColumn = (&'static str, &'static str);

/// Every column of samples.csv, in [`super::SampleRow`]'s order (its serde fields read and
/// write them).
pub static SAMPLE_COLUMNS: [SampleColumn; 4] = [
    ("run_id", "the run that printed the value"),
    ("metric", "the metric it is a value of"),
    (
        "iteration",
        "which of the run's values of that metric it is, from 0",
    ),
    ("value", "the value as the run printed it"),
];

/// The header of samples.csv.
pub(crate) fn sample_header() -> Vec<String> {
    SAMPLE_COLUMNS
        .iter()
        .map(|(name, _)| name.to_string())
        .collect()
}

/// Whether a field of type `T` may be missing from a row: an `Option`.
const fn is_optional<T: Cell>(_field: for<'r> fn(&'r RunRow) -> &'r T) -> bool {
    T::OPTIONAL
}

/// The header of runs.csv: with the layout's columns when `padded` (the layout is randomised).
pub(crate) fn run_header(params: &[String], padded: bool) -> Vec<String> {
    let (before, after) = RUN_COLUMNS.split_at(PARAMS_AFTER);
    let named = |c: &RunColumn| c.name.to_string();
    before
        .iter()
        .map(named)
        .chain(params.iter().cloned())
        .chain(after.iter().filter(|c| padded || !c.layout_only).map(named))
        .collect()
}

/// The parameter columns of a runs.csv `header`: those between the columns before them and
/// the first after them.
pub(crate) fn param_columns(header: &[String]) -> &[String] {
    let from = header
        .iter()
        .position(|n| n == RUN_COLUMNS[PARAMS_AFTER - 1].name)
        .map_or(0, |i| i + 1);
    let to = header
        .iter()
        .position(|n| n == RUN_COLUMNS[PARAMS_AFTER].name)
        .unwrap_or(from);
    &header[from..to.max(from)]
}

/// How a session's runs.csv lays out a row: for each of [`RUN_COLUMNS`], the column its header
/// gives it, found once per session instead of by name for every row.
#[derive(Debug, Clone)]
pub(crate) struct RunLayout {
    header: Vec<String>,
    /// The place in the header of each of [`RUN_COLUMNS`] (`None`: a column the header
    /// predates, or a layout's column in a session that keeps none).
    field_columns: Vec<Option<usize>>,
    /// Each column's text for the row being written, kept from row to row.
    cells: Vec<Vec<u8>>,
}

impl RunLayout {
    pub(crate) fn new(header: Vec<String>) -> RunLayout {
        let field_columns = RUN_COLUMNS
            .iter()
            .map(|c| header.iter().position(|h| h == c.name))
            .collect();
        let cells = vec![Vec::new(); header.len()];
        RunLayout {
            header,
            field_columns,
            cells,
        }
    }

    /// Appends to `out` the CSV line of `row` (with `samples` and `node` in place of the row's
    /// own) in this session's header's order: parameter columns take the run's parameter
    /// values, a column lab does not know is left empty.
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
        for (column, at) in RUN_COLUMNS.iter().zip(&self.field_columns) {
            let Some(at) = *at else { continue };
            let field = match column.name {
                "samples" if overrides.samples.is_some() => overrides.samples.field(),
                "node" if row.node.is_none() && overrides.node.is_some() => {
                    Field::Text(overrides.node.unwrap_or_default())
                }
                _ => (column.write)(row),
            };
            field.write_to(&mut self.cells[at]);
        }
        for (name, cell) in self.header.iter().zip(&mut self.cells) {
            if let Some(value) = values.get(name) {
                use std::io::Write;
                let _ = write!(cell, "{value}");
            }
        }
        write_csv_line(&self.cells, out);
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

/// `cells` as one CSV line ending in a line feed, quoted as the csv crate quotes (a field
/// holding a comma, a quote or a line break is quoted, its quotes doubled), tested byte for
/// byte against `csv::Writer`. Not written through it: the 57 fields of a row took 1.5 to
/// 2.4 µs through `csv::Writer` (a writer kept for every row, or one made per row, alike)
/// against 0.9 to 1.4 µs here (100,000 rows, release build, minimum and median of 21 passes
/// on a busy 2-CPU machine, 2026-12-06), half a microsecond more in every run's duties,
/// which already spend 53 µs between runs against a target they miss
/// (docs/src/topics/performance.md).
fn write_csv_line(cells: &[Vec<u8>], out: &mut Vec<u8>) {
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_csv_field(cell, out);
    }
    out.push(b'\n');
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

/// How a session's runs.csv is read: for each column of its header, which of [`RUN_COLUMNS`]
/// it is (`None`: a parameter, or a column this lab does not know).
pub(crate) struct RunReader {
    columns: Vec<Option<&'static RunColumn>>,
    /// A column every runs.csv has that this header lacks.
    missing: Option<&'static str>,
}

impl RunReader {
    /// The reader of rows under `header`.
    pub(crate) fn new(header: &csv::ByteRecord) -> RunReader {
        let columns: Vec<Option<&'static RunColumn>> = header
            .iter()
            .map(|name| RUN_COLUMNS.iter().find(|c| c.name.as_bytes() == name))
            .collect();
        let missing = RUN_COLUMNS
            .iter()
            .find(|c| c.required && !columns.iter().flatten().any(|h| h.name == c.name))
            .map(|c| c.name);
        RunReader { columns, missing }
    }

    /// The run row of `record`, or what is wrong with it.
    pub(crate) fn read(&self, record: &csv::ByteRecord) -> Result<RunRow, String> {
        let lacking = self.columns.get(record.len()..).unwrap_or_default();
        if let Some(name) = self.missing.or_else(|| {
            lacking
                .iter()
                .flatten()
                .find(|c| c.required)
                .map(|c| c.name)
        }) {
            return Err(format!("the row has no column `{name}`"));
        }
        let mut row = RunRow::default();
        for (column, bytes) in self.columns.iter().zip(record) {
            let Some(column) = column else { continue };
            std::str::from_utf8(bytes)
                .map_err(|e| e.to_string())
                .and_then(|text| (column.read)(&mut row, text))
                .map_err(|e| format!("column `{}`: {e}", column.name))?;
        }
        Ok(row)
    }
}

/// One field of a run row, borrowed from it, written without an allocation.
#[derive(Debug, Clone, Copy)]
enum Field<'a> {
    Text(&'a str),
    Unsigned(u64),
    Signed(i32),
    Flag(bool),
    Share(f64),
    Empty,
}

impl Field<'_> {
    fn write_to(self, out: &mut Vec<u8>) {
        use std::io::Write;
        let _ = match self {
            Field::Text(s) => {
                out.extend_from_slice(s.as_bytes());
                Ok(())
            }
            Field::Unsigned(n) => write!(out, "{n}"),
            Field::Signed(n) => write!(out, "{n}"),
            Field::Flag(b) => write!(out, "{b}"),
            Field::Share(x) => write!(out, "{x}"),
            Field::Empty => Ok(()),
        };
    }
}

/// A value a column holds: its field, and how it is read back from the field's text.
trait Cell: Sized {
    /// Whether the column may be missing or empty: then it reads as `None`.
    const OPTIONAL: bool = false;
    fn field(&self) -> Field<'_>;
    fn parse(text: &str) -> Result<Self, String>;
}

/// A number column: written in decimal, read as `str::parse` reads it.
macro_rules! number_cell {
    ($type:ty, $field:expr) => {
        impl Cell for $type {
            fn field(&self) -> Field<'_> {
                $field(*self)
            }
            fn parse(text: &str) -> Result<Self, String> {
                text.parse().map_err(|e| format!("{e}: {text:?}"))
            }
        }
    };
}

number_cell!(u64, Field::Unsigned);
number_cell!(u32, |n| Field::Unsigned(u64::from(n)));
number_cell!(usize, |n| Field::Unsigned(n as u64));
number_cell!(i32, Field::Signed);
number_cell!(f64, Field::Share);
number_cell!(bool, Field::Flag);

impl Cell for String {
    fn field(&self) -> Field<'_> {
        Field::Text(self)
    }
    fn parse(text: &str) -> Result<Self, String> {
        Ok(text.to_string())
    }
}

impl Cell for CompactString {
    fn field(&self) -> Field<'_> {
        Field::Text(self)
    }
    fn parse(text: &str) -> Result<Self, String> {
        Ok(text.into())
    }
}

/// An empty field reads as `None`.
impl<T: Cell> Cell for Option<T> {
    const OPTIONAL: bool = true;
    fn field(&self) -> Field<'_> {
        self.as_ref().map_or(Field::Empty, Cell::field)
    }
    fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Ok(None);
        }
        T::parse(text).map(Some)
    }
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
#[path = "columns_tests.rs"]
mod tests;
