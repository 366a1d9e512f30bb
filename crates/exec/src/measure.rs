//! What one process run yields: timings, resource use and how it ended.

use super::counters::Reading;
use lab_config::counter::Counter;
use lab_store::Exit;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Everything measured about one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Wall time on CLOCK_MONOTONIC from just before spawn to just after the blocking wait.
    pub wall_ns: u64,
    /// The same interval on CLOCK_BOOTTIME; larger than `wall_ns` when the machine slept.
    pub boottime_ns: u64,
    /// CLOCK_BOOTTIME just before the spawn: when runs overlapped, to the nanosecond (0 where
    /// the runner does not know).
    pub start_boottime_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub max_rss_kib: u64,
    pub voluntary_cs: u64,
    pub involuntary_cs: u64,
    /// Page faults and block operations, where the runner reads them (`wait4`'s rusage).
    pub paging: Option<Paging>,
    /// The `[experiment] counters` read after the run, or why each could not be.
    pub counters: BTreeMap<Counter, Result<Reading, String>>,
    pub exit: Exit,
    pub timed_out: bool,
    /// The CPU set the process actually got, when affinity was requested.
    pub cpus_granted: Option<Vec<usize>>,
    /// Names of processes the run left behind, killed by lab when it ended.
    pub left_running: Vec<String>,
    /// Wall-clock start, for the record only (never used in analysis).
    pub start_unix_ms: u64,
    /// What the rest of the machine did meanwhile, where the kernel's counters could be read.
    pub machine: Option<super::machine::MachineLoad>,
    /// How long the run's own tasks waited for a CPU, where the kernel's per-task counters
    /// could be read for the whole run.
    pub wait: Option<super::taskstats::TaskWait>,
}

impl Measurement {
    /// A run that never started.
    pub fn spawn_failed(reason: String, start_unix_ms: u64) -> Self {
        Measurement {
            wall_ns: 0,
            boottime_ns: 0,
            start_boottime_ns: 0,
            user_ns: 0,
            sys_ns: 0,
            max_rss_kib: 0,
            voluntary_cs: 0,
            involuntary_cs: 0,
            paging: None,
            counters: BTreeMap::new(),
            exit: Exit::SpawnFailed(reason),
            timed_out: false,
            cpus_granted: None,
            left_running: Vec::new(),
            start_unix_ms,
            machine: None,
            wait: None,
        }
    }

    /// Time the run was asleep in a system suspend, beyond clock noise.
    pub fn suspended_ns(&self) -> u64 {
        self.boottime_ns.saturating_sub(self.wall_ns)
    }
}

/// What the kernel counted of a run's memory and disk use (`getrusage(2)`), its children's
/// included once they were waited for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Paging {
    /// Page faults served without I/O (`ru_minflt`).
    pub minor_faults: u64,
    /// Page faults that waited for I/O (`ru_majflt`).
    pub major_faults: u64,
    /// Block input operations (`ru_inblock`).
    pub block_in: u64,
    /// Block output operations (`ru_oublock`).
    pub block_out: u64,
}

/// What to run.
pub struct RunRequest<'a> {
    pub argv: &'a [String],
    /// Variables set on top of lab's environment: the variant's, and the layout padding.
    pub env: std::borrow::Cow<'a, BTreeMap<String, String>>,
    pub cwd: &'a Path,
    pub cpus: Option<&'a [usize]>,
    pub timeout: Duration,
    /// The file the run reads as standard input, relative to `cwd`; `None`: `/dev/null`.
    pub stdin: Option<&'a Path>,
    pub stdout: &'a Path,
    pub stderr: &'a Path,
    /// The files at `stdout` and `stderr`, where lab holds them open from run to run (the
    /// serial loop's run outputs, made for this run): the run writes into these, and the paths only name
    /// them.
    pub held_output: Option<[&'a std::fs::File; 2]>,
    /// perf counters to open on the run (`[experiment] counters`).
    pub counters: &'a [Counter],
}

/// Runs one process and measures it. A failing process is a result, not an error.
pub trait Runner {
    fn run(&mut self, request: &RunRequest) -> Measurement;

    /// A runner another thread may use while this one runs, for runs executing side by side
    /// (`lab run --jobs`); `None` when this runner runs one process at a time.
    fn concurrent(&self) -> Option<Box<dyn Runner + Send>> {
        None
    }

    /// As [`Runner::run`], calling `spawned` once the process has started (or failed to), so
    /// that runs executing side by side start in their planned order: the next is started only
    /// after this call. A runner that cannot tell calls it first.
    fn run_announced(&mut self, request: &RunRequest, spawned: &mut dyn FnMut()) -> Measurement {
        spawned();
        self.run(request)
    }

    /// How this runner measures each run's own waiting for a CPU, in the manifest's words;
    /// `None` for a runner that measures none.
    fn waiting(&self) -> Option<String> {
        None
    }
}
