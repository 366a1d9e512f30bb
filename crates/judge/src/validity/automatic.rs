//! The automatic validity rules, always on: how the process ended, timeouts, suspends,
//! missing or malformed metric values, runs too short to time against the session's
//! calibration, and runs whose echoed configuration differs from the one requested.

use lab_config::format::duration;
use lab_config::units::Nanos;
use lab_config::{Metric, ParamValue};
use lab_store::{Calibration, Exit};
use std::collections::BTreeMap;

pub use lab_findings::automatic::{
    APART, CHECK_NAMES, CONFIG_ECHO, EXITED, IMPOSSIBLE, LEFT_RUNNING, QUIET, REPORTED, RESOLUTION,
    SUSPEND, TOO_SHORT,
};

/// A suspend shorter than this is clock noise between the two back-to-back clock reads.
pub const SUSPEND_THRESHOLD_NS: u64 = 10_000_000;

/// Why a run cannot be used.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    ExitCode(i32),
    Signal(i32),
    SpawnFailed(String),
    TimedOut,
    Suspended {
        ns: u64,
    },
    MissingMetric(String),
    /// A derived metric (`of` / `per`) the run has no value of, and why.
    Underived {
        metric: String,
        why: String,
    },
    NotANumber {
        metric: String,
        value: String,
        /// Why it could not be read, e.g. "is ambiguous: …".
        why: String,
        /// The line of the run's output it was printed on, when found.
        line: Option<usize>,
    },
    /// A value the run printed under a metric's JSON key that lab cannot use: NaN, an
    /// infinity, a number beyond a 64-bit float, null, an array, an object.
    Unusable {
        metric: String,
        /// The JSON key, as lab.toml names it.
        key: String,
        /// The line of the run's output it was printed on.
        line: usize,
        found: lab_store::Unusable,
        /// Whether the metric holds text rather than numbers.
        text: bool,
    },
    /// No value of a metric could be read, and a line lab had to skip may have held it.
    Unread {
        metric: String,
        line: usize,
        skipped: Skipped,
    },
    /// Wall time under the session's timing floor (see [`timing_floor_ns`]).
    TooShort {
        wall_ns: u64,
        floor_ns: u64,
    },
    /// Processes the run left behind when it ended (killed by lab).
    LeftRunning(String),
    /// A `config` key the run echoed differs from the requested parameter value.
    ConfigMismatch {
        key: String,
        echoed: String,
        requested: String,
    },
    /// The run waited for CPUs others had, or the hypervisor stole them, for more of its wall
    /// time than `max_busy` allows.
    MachineBusy {
        contention: lab_store::Contention,
        limit: f64,
    },
    /// The run executed beside others (`lab run --jobs`) that could use some of its CPUs.
    SharedCpus {
        /// The first such run, by id, and how many there were in all.
        with: String,
        runs: usize,
        /// The CPUs they had in common, or `None` when one of them was pinned nowhere.
        cpus: Option<Vec<usize>>,
    },
    /// A time metric's printed value larger than the run's own wall and CPU time (the
    /// impossible-times rule).
    ImpossibleTime {
        metric: String,
        value: f64,
        unit: String,
        wall_s: f64,
        cpu_s: f64,
    },
}

/// A line lab could not read values from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skipped {
    /// Longer than the longest line read for values, in bytes.
    TooLong(usize),
    NotUtf8,
}

/// A run's own time (wall time less the median spawn cost) must be at least this many times
/// the spawn cost's interquartile range, so spawn noise moves it by under 5%.
pub const SPAWN_SPREAD_FACTOR: u64 = 20;
/// A run must last at least this many ticks of the observed timer granularity (≤ 10% error).
pub const GRANULARITY_FACTOR: u64 = 10;

impl Problem {
    /// Whether the problem concerns only the run's timing: how busy the machine was, what ran
    /// beside it, a suspend, a run too short to time. What it printed and counted still counts.
    pub fn timing_only(&self) -> bool {
        matches!(
            self,
            Problem::MachineBusy { .. }
                | Problem::SharedCpus { .. }
                | Problem::Suspended { .. }
                | Problem::TooShort { .. }
        )
    }

    /// The automatic check this problem fails.
    pub fn check_name(&self) -> &'static str {
        match self {
            Problem::ExitCode(_) | Problem::Signal(_) | Problem::SpawnFailed(_) => {
                "every run exited normally"
            }
            Problem::TimedOut => "no run timed out",
            Problem::Suspended { .. } => SUSPEND,
            Problem::MissingMetric(_)
            | Problem::Underived { .. }
            | Problem::NotANumber { .. }
            | Problem::Unusable { .. }
            | Problem::Unread { .. } => REPORTED,
            Problem::TooShort { .. } => TOO_SHORT,
            Problem::LeftRunning(_) => LEFT_RUNNING,
            Problem::ConfigMismatch { .. } => CONFIG_ECHO,
            Problem::MachineBusy { .. } => QUIET,
            Problem::SharedCpus { .. } => APART,
            Problem::ImpossibleTime { .. } => IMPOSSIBLE,
        }
    }
}

fn millis(ns: u64) -> String {
    lab_config::format::millis(Nanos(ns))
}

/// The spawn cost's noise as a standard deviation: 1.4826 × MAD, the consistent estimator of
/// σ for normal data (Rousseeuw & Croux 1993, JASA 88:1273), robust to a few slow spawns. A
/// session stored before the MAD was recorded uses IQR / 1.349, the same estimator from the
/// quartiles.
pub fn spawn_sigma_ns(c: &Calibration) -> f64 {
    match c.spawn_mad_ns {
        Some(mad) => 1.4826 * mad as f64,
        None => c.spawn_iqr_ns as f64 / 1.349,
    }
}

/// The shortest wall time a run may have: its own time beyond the median spawn cost must be
/// `SPAWN_SPREAD_FACTOR` × the spawn noise σ (so that noise moves it by under 5%), and the
/// whole run `GRANULARITY_FACTOR` timer ticks. Counting the spawn median in makes a no-op
/// program too short however steady spawning is.
pub fn timing_floor_ns(c: &Calibration) -> u64 {
    let spread = match c.spawn_mad_ns {
        Some(_) => (SPAWN_SPREAD_FACTOR as f64 * spawn_sigma_ns(c)).ceil() as u64,
        // Sessions judged before the MAD existed keep the rule they were judged by.
        None => SPAWN_SPREAD_FACTOR * c.spawn_iqr_ns,
    };
    (c.spawn_median_ns + spread).max(GRANULARITY_FACTOR * c.timer_granularity_ns)
}

/// How the timing floor was derived, for the evidence of the check.
pub fn describe_floor(c: &Calibration) -> String {
    let spread = match c.spawn_mad_ns {
        Some(mad) => format!(
            "spawn σ {} (1.4826 × MAD {})",
            millis(spawn_sigma_ns(c) as u64),
            millis(mad)
        ),
        None => format!("spawn IQR {}", millis(c.spawn_iqr_ns)),
    };
    format!(
        "floor {} = spawn median {} + {SPAWN_SPREAD_FACTOR} × {spread} (timer granularity {} ns × {GRANULARITY_FACTOR} = {})",
        duration(Nanos(timing_floor_ns(c))),
        millis(c.spawn_median_ns),
        c.timer_granularity_ns,
        millis(GRANULARITY_FACTOR * c.timer_granularity_ns)
    )
}

/// What share of a run of `wall_ns` the spawn noise is (σ of spawning / the run's own time).
pub fn spawn_noise_share(wall_ns: u64, c: &Calibration) -> f64 {
    let own = wall_ns.saturating_sub(c.spawn_median_ns).max(1) as f64;
    spawn_sigma_ns(c) / own
}

/// The run's timing is invalid when it waited for a CPU others had (or the hypervisor stole
/// its CPUs) for more than the limit recorded with it; a run recorded before lab judged
/// waiting is judged by the rule of its time, against `legacy_limit`.
pub fn machine_busy(row: &lab_store::RunRow, legacy_limit: f64) -> Option<Problem> {
    row.disturbed(legacy_limit)
        .map(|(contention, limit)| Problem::MachineBusy { contention, limit })
}

/// The run is invalid when a run that executed beside it could use one of its CPUs: their
/// CPU sets (as granted, from `cpus_of`) intersect, or one of them was pinned nowhere. An id
/// `cpus_of` does not know counts as pinned nowhere.
pub fn shared_cpus(
    row: &lab_store::RunRow,
    cpus_of: &BTreeMap<String, Option<Vec<usize>>>,
) -> Option<Problem> {
    let mine = row.cpu_set();
    let sharing: Vec<(&str, Option<Vec<usize>>)> = row
        .overlapped_ids()
        .filter_map(|id| {
            let theirs = cpus_of.get(id).cloned().flatten();
            let common = match (&mine, &theirs) {
                (Some(a), Some(b)) => {
                    let common: Vec<usize> = a.iter().filter(|c| b.contains(c)).copied().collect();
                    if common.is_empty() {
                        return None;
                    }
                    Some(common)
                }
                _ => None,
            };
            Some((id, common))
        })
        .collect();
    let (with, cpus) = sharing.first()?.clone();
    Some(Problem::SharedCpus {
        with: with.to_string(),
        runs: sharing.len(),
        cpus,
    })
}

/// The run is too short to time when its wall time is under the floor.
pub fn too_short(wall_ns: u64, c: &Calibration) -> Option<Problem> {
    let floor_ns = timing_floor_ns(c);
    (wall_ns < floor_ns).then_some(Problem::TooShort { wall_ns, floor_ns })
}

/// The `config` objects a run printed (JSON object lines, as a terminal shows them, with a
/// `config` key holding an object), and every echoed key naming a parameter whose value
/// differs from the requested one. Numbers compare numerically (4 and 4.0 agree); other
/// values by their text.
pub fn echoed_config(stdout: &str, params: &BTreeMap<String, ParamValue>) -> (bool, Vec<Problem>) {
    let mut echoed = false;
    let mut found = Vec::new();
    let objects = stdout
        .lines()
        .map(|l| lab_store::shown(l).trim())
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok());
    for object in objects {
        let Some(serde_json::Value::Object(config)) = object.get("config") else {
            continue;
        };
        echoed = true;
        for (key, v) in config {
            let Some(requested) = params.get(key) else {
                continue;
            };
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if ParamValue::Text(text.clone()) != *requested {
                found.push(Problem::ConfigMismatch {
                    key: key.clone(),
                    echoed: text,
                    requested: requested.to_string(),
                });
            }
        }
    }
    (echoed, found)
}

/// What the automatic checks look at for one run.
pub struct RunFacts<'a> {
    pub exit: &'a Exit,
    pub timed_out: bool,
    pub suspended_ns: u64,
    /// Processes it left behind, space-separated.
    pub left_running: Option<&'a str>,
    /// (metric, value) pairs the run printed.
    pub values: &'a [(&'a str, &'a str)],
}

/// Every problem the automatic checks find in one run, in a fixed order.
pub fn problems(run: &RunFacts, metrics: &[Metric]) -> Vec<Problem> {
    let mut found = Vec::new();
    if run.timed_out {
        found.push(Problem::TimedOut);
    } else {
        match run.exit {
            Exit::Code(0) => {}
            Exit::Code(c) => found.push(Problem::ExitCode(*c)),
            Exit::Signal(s) => found.push(Problem::Signal(*s)),
            Exit::SpawnFailed(e) => found.push(Problem::SpawnFailed(e.clone())),
        }
    }
    if let Some(names) = run.left_running.filter(|n| !n.trim().is_empty()) {
        found.push(Problem::LeftRunning(names.trim().to_string()));
    }
    if run.suspended_ns > SUSPEND_THRESHOLD_NS {
        found.push(Problem::Suspended {
            ns: run.suspended_ns,
        });
    }
    for metric in metrics.iter().filter(|m| m.is_printed()) {
        let mut values = run
            .values
            .iter()
            .filter(|(m, _)| *m == metric.name)
            .map(|(_, v)| *v)
            .peekable();
        if values.peek().is_none() {
            if !metric.optional {
                found.push(Problem::MissingMetric(metric.name.clone()));
            }
        } else if !metric.text {
            let bad = values.find_map(|v| {
                lab_config::format::parse_value(v, &metric.unit)
                    .err()
                    .map(|why| (v, why))
            });
            if let Some((value, why)) = bad {
                found.push(Problem::NotANumber {
                    metric: metric.name.clone(),
                    value: value.to_string(),
                    why,
                    line: None,
                });
            }
        }
    }
    found
}

#[cfg(test)]
#[path = "automatic_tests.rs"]
mod tests;
