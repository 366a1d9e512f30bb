//! The counters lab.toml may ask for (`[experiment] counters`), named as `perf` names them:
//! what each counts, its unit and metric, and who counts it (the kernel's event, or valgrind's
//! callgrind with the command a run executes under it). Reading them is the runner's work.

use serde::Serialize;

/// A counter lab.toml may ask for, named as `perf` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Counter {
    TaskClock,
    ContextSwitches,
    CpuMigrations,
    PageFaults,
    Instructions,
    Cycles,
    CacheReferences,
    CacheMisses,
    BranchMisses,
    Branches,
    /// Instructions counted by valgrind's callgrind: no PMU needed, every run under valgrind.
    CallgrindInstructions,
}

/// What lab knows of a counter: its names, unit, the kernel's event, and whether it counts
/// (the same on a busy machine) or times.
pub struct CounterDef {
    /// perf's name, as lab.toml writes it.
    pub name: &'static str,
    /// The built-in metric it becomes.
    pub metric: &'static str,
    pub unit: &'static str,
    pub what: &'static str,
    /// True when the value does not depend on how busy the machine was.
    pub counted: bool,
    pub source: Source,
}

/// Who counts: the kernel, per run, or valgrind's callgrind, which runs the program itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `perf_event_open(2)` with this event type and config.
    Perf { kind: u32, config: u64 },
    /// `valgrind --tool=callgrind` around the run, its total of instructions executed.
    Callgrind,
}

const HARDWARE: u32 = 0;
const SOFTWARE: u32 = 1;

/// A counter `perf_event_open(2)` counts: event `config` of event type `kind`.
const fn perf(
    name: &'static str,
    metric: &'static str,
    unit: &'static str,
    what: &'static str,
    counted: bool,
    kind: u32,
    config: u64,
) -> CounterDef {
    CounterDef {
        name,
        metric,
        unit,
        what,
        counted,
        source: Source::Perf { kind, config },
    }
}

/// Every counter's definition, in the order of [`Counter::ALL`]; event numbers from
/// `linux/perf_event.h` (`PERF_COUNT_SW_*`, `PERF_COUNT_HW_*`).
static DEFS: [CounterDef; 11] = [
    perf(
        "task-clock",
        "task_clock_s",
        "s",
        "CPU time of the run's tasks (perf)",
        false,
        SOFTWARE,
        1,
    ),
    perf(
        "context-switches",
        "context_switches",
        "switches",
        "context switches, voluntary or not (perf)",
        false,
        SOFTWARE,
        3,
    ),
    perf(
        "cpu-migrations",
        "cpu_migrations",
        "migrations",
        "moves of a task to another CPU (perf)",
        false,
        SOFTWARE,
        4,
    ),
    perf(
        "page-faults",
        "page_faults",
        "faults",
        "page faults (perf)",
        true,
        SOFTWARE,
        2,
    ),
    perf(
        "instructions",
        "instructions",
        "instructions",
        "instructions retired (PMU)",
        true,
        HARDWARE,
        1,
    ),
    perf(
        "cycles",
        "cycles",
        "cycles",
        "CPU cycles (PMU)",
        false,
        HARDWARE,
        0,
    ),
    perf(
        "cache-references",
        "cache_references",
        "references",
        "last-level cache references (PMU)",
        false,
        HARDWARE,
        2,
    ),
    perf(
        "cache-misses",
        "cache_misses",
        "misses",
        "last-level cache misses (PMU)",
        false,
        HARDWARE,
        3,
    ),
    perf(
        "branch-misses",
        "branch_misses",
        "misses",
        "mispredicted branches (PMU)",
        false,
        HARDWARE,
        5,
    ),
    perf(
        "branches",
        "branches",
        "branches",
        "branch instructions retired (PMU)",
        true,
        HARDWARE,
        4,
    ),
    CounterDef {
        name: "callgrind-instructions",
        metric: "callgrind_instructions",
        unit: "instructions",
        what: "user-space instructions executed, counted by valgrind's callgrind",
        counted: true,
        source: Source::Callgrind,
    },
];

impl Counter {
    /// Every counter, in the order lab lists them.
    pub const ALL: [Counter; 11] = [
        Counter::TaskClock,
        Counter::ContextSwitches,
        Counter::CpuMigrations,
        Counter::PageFaults,
        Counter::Instructions,
        Counter::Cycles,
        Counter::CacheReferences,
        Counter::CacheMisses,
        Counter::BranchMisses,
        Counter::Branches,
        Counter::CallgrindInstructions,
    ];

    /// The counter perf calls `name`.
    pub fn named(name: &str) -> Option<Counter> {
        Counter::ALL.into_iter().find(|c| c.def().name == name)
    }

    /// Its definition (see [`DEFS`]).
    pub fn def(self) -> &'static CounterDef {
        &DEFS[self as usize]
    }

    /// The metric's value from the counter's reading: seconds for task-clock's nanoseconds.
    pub fn metric_value(self, count: u64) -> f64 {
        match self {
            Counter::TaskClock => count as f64 / 1e9,
            _ => count as f64,
        }
    }

    /// Whether `perf_event_open` counts it.
    pub fn is_perf(self) -> bool {
        matches!(self.def().source, Source::Perf { .. })
    }

    /// perf's names of every counter, for a message listing them.
    pub fn known() -> String {
        Counter::ALL.map(|c| c.def().name).join(", ")
    }
}

/// The program lab runs the benchmark under, found on `PATH`.
pub const VALGRIND: &str = "valgrind";

/// Where a plan's command tells callgrind to write its profiles: the runner puts a folder of
/// the run's own in its place, and reads the counts from there.
pub const OUT_FILE_PLACEHOLDER: &str = "--callgrind-out-file=/dev/null";

/// The options before the run's own command.
const OPTIONS: [&str; 3] = [
    "--tool=callgrind",
    OUT_FILE_PLACEHOLDER,
    "--trace-children=yes",
];

/// `argv` as run under callgrind.
pub fn wrap(argv: &[String]) -> Vec<String> {
    std::iter::once(VALGRIND)
        .chain(OPTIONS)
        .map(str::to_string)
        .chain(argv.iter().cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_metrics_follow_perf() {
        assert_eq!(Counter::named("task-clock"), Some(Counter::TaskClock));
        assert_eq!(Counter::named("branch-misses"), Some(Counter::BranchMisses));
        assert_eq!(Counter::named("instructions:u"), None);
        for c in Counter::ALL {
            let metric = c.def().metric;
            let base = metric.strip_suffix("_s").unwrap_or(metric);
            assert_eq!(base.replace('_', "-"), c.def().name);
        }
        assert_eq!(Counter::TaskClock.metric_value(1_500_000_000), 1.5);
    }
}
