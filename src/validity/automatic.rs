//! The automatic validity rules, always on: how the process ended, timeouts, suspends,
//! missing or malformed metric values, runs too short to time against the session's
//! calibration, and runs whose echoed configuration differs from the one requested.

use crate::config::{Metric, ParamValue};
use crate::format::duration;
use crate::store::{Calibration, Exit};
use crate::units::Nanos;
use std::collections::BTreeMap;
use std::fmt;

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
    NotANumber {
        metric: String,
        value: String,
        /// Why it could not be read, e.g. "is ambiguous: …".
        why: String,
        /// The line of the run's output it was printed on, when found.
        line: Option<usize>,
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
    /// Other processes or the hypervisor took more of the run's CPUs than `max_busy` allows.
    MachineBusy {
        contention: crate::store::Contention,
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
}

/// The automatic checks, by name, in report order.
pub const CHECK_NAMES: [&str; 9] = [
    "every run exited normally",
    "no run timed out",
    LEFT_RUNNING,
    "no run spanned a system suspend",
    REPORTED,
    TOO_SHORT,
    CONFIG_ECHO,
    QUIET,
    APART,
];
pub const REPORTED: &str = "every run reported every metric";
pub const TOO_SHORT: &str = "every run was long enough to time";
pub const LEFT_RUNNING: &str = "no run left processes running";
pub const CONFIG_ECHO: &str = "every run echoed the configuration it was asked for";
pub const QUIET: &str = "the machine was quiet during every run";
pub const APART: &str = "no runs executing side by side shared a CPU";

/// A run's own time (wall time less the median spawn cost) must be at least this many times
/// the spawn cost's interquartile range, so spawn noise moves it by under 5%.
pub const SPAWN_SPREAD_FACTOR: u64 = 20;
/// A run must last at least this many ticks of the observed timer granularity (≤ 10% error).
pub const GRANULARITY_FACTOR: u64 = 10;

impl Problem {
    /// The automatic check this problem fails.
    pub fn check_name(&self) -> &'static str {
        match self {
            Problem::ExitCode(_) | Problem::Signal(_) | Problem::SpawnFailed(_) => {
                "every run exited normally"
            }
            Problem::TimedOut => "no run timed out",
            Problem::Suspended { .. } => "no run spanned a system suspend",
            Problem::MissingMetric(_) | Problem::NotANumber { .. } => {
                "every run reported every metric"
            }
            Problem::TooShort { .. } => TOO_SHORT,
            Problem::LeftRunning(_) => LEFT_RUNNING,
            Problem::ConfigMismatch { .. } => CONFIG_ECHO,
            Problem::MachineBusy { .. } => QUIET,
            Problem::SharedCpus { .. } => APART,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::ExitCode(c) => write!(f, "exit code {c}"),
            Problem::Signal(s) => write!(
                f,
                "killed by signal {s}{}",
                signal_name(*s)
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            ),
            Problem::SpawnFailed(e) => f.write_str(e),
            Problem::TimedOut => f.write_str("timed out; its process group was killed"),
            Problem::Suspended { ns } => write!(
                f,
                "the machine was suspended for {} during the run",
                crate::format::seconds_fixed(Nanos(*ns).seconds())
            ),
            Problem::MissingMetric(m) => write!(f, "printed no value for metric `{m}`"),
            Problem::NotANumber {
                metric,
                value,
                why,
                line,
            } => {
                let at = line.map_or(String::new(), |l| format!(" (stdout line {l})"));
                write!(f, "metric `{metric}`: {value:?}{at} {why}")
            }
            Problem::LeftRunning(names) => write_left_running(f, names),
            Problem::TooShort { wall_ns, floor_ns } => {
                write!(
                    f,
                    "took {} where {} is the shortest run this session can time",
                    millis(*wall_ns),
                    millis(*floor_ns)
                )
            }
            Problem::ConfigMismatch {
                key,
                echoed,
                requested,
            } => write!(
                f,
                "echoed {key} = {echoed} when {key} = {requested} was requested"
            ),
            Problem::MachineBusy { contention, limit } => write_busy(f, contention, *limit),
            Problem::SharedCpus { with, runs, cpus } => {
                write_shared_cpus(f, with, *runs, cpus.as_deref())
            }
        }
    }
}

fn write_left_running(f: &mut fmt::Formatter<'_>, names: &str) -> fmt::Result {
    let count = names.split_whitespace().count();
    let plural = if count == 1 { "" } else { "es" };
    write!(
        f,
        "left {count} process{plural} running: {names} (killed when the run ended)"
    )
}

fn write_busy(
    f: &mut fmt::Formatter<'_>,
    contention: &crate::store::Contention,
    limit: f64,
) -> fmt::Result {
    let steal = if contention.steal > 0.0 {
        format!(
            " and the hypervisor {}",
            crate::format::percent(contention.steal)
        )
    } else {
        String::new()
    };
    write!(
        f,
        "machine busy: other processes took {}{steal} of the CPU time on its CPUs (limit {})",
        crate::format::percent(contention.others),
        crate::format::percent(limit)
    )
}

fn write_shared_cpus(
    f: &mut fmt::Formatter<'_>,
    with: &str,
    runs: usize,
    cpus: Option<&[usize]>,
) -> fmt::Result {
    let more = match runs {
        0 | 1 => String::new(),
        n => format!(" and {} other run{}", n - 1, if n == 2 { "" } else { "s" }),
    };
    match cpus {
        Some(cpus) => write!(
            f,
            "executed beside run {with}{more} on shared CPU{} {}",
            if cpus.len() == 1 { "" } else { "s" },
            cpus.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
        None => write!(
            f,
            "executed beside run {with}{more} with any CPU to share (one of them was pinned to none)"
        ),
    }
}

fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGINT => "SIGINT",
        _ => return None,
    })
}

fn millis(ns: u64) -> String {
    crate::format::millis(Nanos(ns))
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

/// The run is invalid when others took more than `limit` of its CPUs while it ran.
pub fn machine_busy(row: &crate::store::RunRow, limit: f64) -> Option<Problem> {
    row.busier_than(limit)
        .map(|contention| Problem::MachineBusy { contention, limit })
}

/// The run is invalid when a run that executed beside it could use one of its CPUs: their
/// CPU sets (as granted, from `cpus_of`) intersect, or one of them was pinned nowhere. An id
/// `cpus_of` does not know counts as pinned nowhere.
pub fn shared_cpus(
    row: &crate::store::RunRow,
    cpus_of: &BTreeMap<&str, Option<Vec<usize>>>,
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

/// The `config` objects a run printed (JSON object lines with a `config` key holding an
/// object), and every echoed key naming a parameter whose value differs from the requested
/// one. Numbers compare numerically (4 and 4.0 agree); other values by their text.
pub fn echoed_config(stdout: &str, params: &BTreeMap<String, ParamValue>) -> (bool, Vec<Problem>) {
    let mut echoed = false;
    let mut found = Vec::new();
    let objects = stdout
        .lines()
        .map(str::trim)
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
    for metric in metrics.iter().filter(|m| !m.is_builtin()) {
        let mut values = run
            .values
            .iter()
            .filter(|(m, _)| *m == metric.name)
            .map(|(_, v)| *v)
            .peekable();
        if values.peek().is_none() {
            found.push(Problem::MissingMetric(metric.name.clone()));
        } else if !metric.text {
            let bad = values.find_map(|v| {
                crate::format::parse_value(v, &metric.unit)
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
mod tests {
    use super::*;
    use crate::config::{Better, Extractor};

    fn metric(name: &str, text: bool) -> Metric {
        Metric {
            name: name.into(),
            extractor: Extractor::Json(name.into()),
            unit: String::new(),
            better: Better::Higher,
            text,
            warmup_iterations: 0,
        }
    }

    #[test]
    fn finds_each_problem() {
        let metrics = [metric("mops", false), metric("sum", true)];
        let ok = Exit::Code(0);
        let clean = RunFacts {
            exit: &ok,
            timed_out: false,
            suspended_ns: 5,
            left_running: None,
            values: &[("mops", "1.5"), ("sum", "ab")],
        };
        assert!(problems(&clean, &metrics).is_empty());
        let crashed = Exit::Signal(libc::SIGSEGV);
        let bad = RunFacts {
            exit: &crashed,
            timed_out: false,
            suspended_ns: 2_000_000_000,
            left_running: None,
            values: &[("mops", "nan")],
        };
        let found = problems(&bad, &metrics);
        assert_eq!(found.len(), 4, "{found:?}");
        assert_eq!(
            found[0].to_string(),
            format!("killed by signal {} (SIGSEGV)", libc::SIGSEGV)
        );
        assert_eq!(
            found[1].to_string(),
            "the machine was suspended for 2.000 s during the run"
        );
        assert_eq!(
            found[2],
            Problem::NotANumber {
                metric: "mops".into(),
                value: "nan".into(),
                why: "is not a finite number".into(),
                line: None
            }
        );
        assert_eq!(found[3], Problem::MissingMetric("sum".into()));
    }

    fn calibration(median: u64, iqr: u64, granularity: u64) -> Calibration {
        Calibration {
            timer_reported_resolution_ns: 1,
            timer_granularity_ns: granularity,
            timer_read_ns: 20.0,
            spawn_median_ns: median,
            spawn_iqr_ns: iqr,
            spawn_mad_ns: None,
            spawn_samples: 30,
        }
    }

    #[test]
    fn the_timing_floor_counts_spawn_cost_spread_and_granularity() {
        let c = calibration(600_000, 50_000, 30);
        assert_eq!(timing_floor_ns(&c), 1_600_000);
        assert_eq!(
            too_short(1_599_999, &c),
            Some(Problem::TooShort {
                wall_ns: 1_599_999,
                floor_ns: 1_600_000
            })
        );
        assert_eq!(too_short(1_600_000, &c), None);
        // A coarse timer dominates a steady spawn cost.
        assert_eq!(timing_floor_ns(&calibration(100, 0, 1_000_000)), 10_000_000);
        assert_eq!(
            too_short(900_000, &c).unwrap().to_string(),
            "took 0.900 ms where 1.60 ms is the shortest run this session can time"
        );
    }

    #[test]
    fn echoed_configuration_is_compared_with_the_request() {
        let params: BTreeMap<String, ParamValue> = [
            ("threads".to_string(), ParamValue::Int(4)),
            ("mode".to_string(), ParamValue::Text("fast".to_string())),
        ]
        .into();
        let ok = "start\n{\"config\": {\"threads\": 4.0, \"mode\": \"fast\", \"extra\": 1}}\n";
        assert_eq!(echoed_config(ok, &params), (true, vec![]));
        let bad = "{\"config\": {\"threads\": 2}, \"mops\": 3}";
        let (echoed, found) = echoed_config(bad, &params);
        assert!(echoed);
        assert_eq!(
            found[0].to_string(),
            "echoed threads = 2 when threads = 4 was requested"
        );
        assert_eq!(
            echoed_config("{\"config\": \"x\"}\n{\"mops\": 1}", &params),
            (false, vec![])
        );
    }

    fn pinned(id: &str, cpus: Option<&str>, overlapped: &str) -> crate::store::RunRow {
        crate::store::RunRow {
            run_id: id.into(),
            position: 1,
            variant: "v".into(),
            repetition: 1,
            warmup: false,
            start_utc: String::new(),
            wall_ns: 1,
            boottime_ns: 1,
            user_ns: 0,
            sys_ns: 0,
            max_rss_kib: 0,
            voluntary_cs: 0,
            involuntary_cs: 0,
            exit_code: Some(0),
            signal: None,
            spawn_error: None,
            timed_out: false,
            cpus: cpus.map(str::to_string),
            stdout_sha256: String::new(),
            left_running: None,
            host_busy_ns: None,
            host_steal_ns: None,
            host_capacity_ns: None,
            psi_cpu_some_us: None,
            throttle_events: None,
            samples: None,
            start_boottime_ns: None,
            overlapped: (!overlapped.is_empty()).then(|| overlapped.to_string()),
            node: None,
        }
    }

    #[test]
    fn runs_side_by_side_must_not_share_a_cpu() {
        let cpus: BTreeMap<&str, Option<Vec<usize>>> = [
            ("r1", Some(vec![0, 1])),
            ("r2", Some(vec![2, 3])),
            ("r3", Some(vec![1, 2])),
            ("r4", None),
        ]
        .into();
        assert_eq!(shared_cpus(&pinned("r1", Some("0 1"), ""), &cpus), None);
        assert_eq!(shared_cpus(&pinned("r1", Some("0 1"), "r2"), &cpus), None);
        let shared = shared_cpus(&pinned("r1", Some("0 1"), "r2 r3 r4"), &cpus).unwrap();
        assert_eq!(
            shared,
            Problem::SharedCpus {
                with: "r3".into(),
                runs: 2,
                cpus: Some(vec![1])
            }
        );
        assert_eq!(shared.check_name(), APART);
        assert_eq!(
            shared.to_string(),
            "executed beside run r3 and 1 other run on shared CPU 1"
        );
        // A run pinned nowhere, or one lab knows nothing of, may use every CPU.
        let unpinned = shared_cpus(&pinned("r2", None, "r1"), &cpus).unwrap();
        assert_eq!(
            unpinned.to_string(),
            "executed beside run r1 with any CPU to share (one of them was pinned to none)"
        );
        assert!(shared_cpus(&pinned("r2", Some("2 3"), "r9"), &cpus).is_some());
    }

    #[test]
    fn a_timeout_is_reported_once_not_also_as_a_signal() {
        let killed = Exit::Signal(libc::SIGKILL);
        let run = RunFacts {
            exit: &killed,
            timed_out: true,
            suspended_ns: 0,
            left_running: None,
            values: &[],
        };
        assert_eq!(problems(&run, &[]), vec![Problem::TimedOut]);
    }
}
