//! Why a run cannot be used, in the words a chapter and `lab logs` give it: the text of each
//! [`Problem`] the validity rules find.

use super::automatic::{Problem, Skipped};
use super::impossible::describe;
use lab_config::format::millis;
use lab_config::units::Nanos;
use lab_store::MAX_LINE;
use std::fmt;

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::ExitCode(c) => write!(f, "exit code {c}"),
            Problem::Signal(s) => write_signal(f, *s),
            Problem::SpawnFailed(e) => f.write_str(e),
            Problem::TimedOut => f.write_str("timed out; its process group was killed"),
            Problem::Suspended { ns } => write_suspended(f, *ns),
            Problem::MissingMetric(m) => write!(f, "printed no value for metric `{m}`"),
            Problem::Underived { metric, why } => {
                write!(f, "has no value of metric `{metric}`: {why}")
            }
            Problem::NotANumber {
                metric,
                value,
                why,
                line,
            } => write_not_a_number(f, metric, value, why, *line),
            Problem::Unusable {
                metric,
                key,
                line,
                found,
                text,
            } => write_unusable(f, metric, key, *line, found, *text),
            Problem::Unread {
                metric,
                line,
                skipped,
            } => write_unread(f, metric, *line, *skipped),
            Problem::LeftRunning(names) => write_left_running(f, names),
            Problem::TooShort { wall_ns, floor_ns } => write_too_short(f, *wall_ns, *floor_ns),
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
            Problem::ImpossibleTime {
                metric,
                value,
                unit,
                wall_s,
                cpu_s,
            } => f.write_str(&describe(*value, metric, unit, *wall_s, *cpu_s)),
        }
    }
}

fn write_signal(f: &mut fmt::Formatter<'_>, signal: i32) -> fmt::Result {
    let name = signal_name(signal)
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    write!(f, "killed by signal {signal}{name}")
}

fn write_suspended(f: &mut fmt::Formatter<'_>, ns: u64) -> fmt::Result {
    write!(
        f,
        "the machine was suspended for {} during the run",
        lab_config::format::seconds_fixed(Nanos(ns).seconds())
    )
}

fn write_not_a_number(
    f: &mut fmt::Formatter<'_>,
    metric: &str,
    value: &str,
    why: &str,
    line: Option<usize>,
) -> fmt::Result {
    let at = line.map_or(String::new(), |l| format!("stdout line {l}: "));
    write!(f, "metric `{metric}`: {at}{value:?} {why}")
}

fn write_unusable(
    f: &mut fmt::Formatter<'_>,
    metric: &str,
    key: &str,
    line: usize,
    found: &lab_store::Unusable,
    text: bool,
) -> fmt::Result {
    write!(
        f,
        "metric `{metric}`: stdout line {line}: key {key:?} is {}, {}",
        found.what(),
        found.why(text)
    )
}

fn write_unread(
    f: &mut fmt::Formatter<'_>,
    metric: &str,
    line: usize,
    skipped: Skipped,
) -> fmt::Result {
    write!(
        f,
        "metric `{metric}`: no value lab could read; stdout line {line} {skipped}"
    )
}

fn write_too_short(f: &mut fmt::Formatter<'_>, wall_ns: u64, floor_ns: u64) -> fmt::Result {
    write!(
        f,
        "took {} where {} is the shortest run this session can time",
        millis(Nanos(wall_ns)),
        millis(Nanos(floor_ns))
    )
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
    contention: &lab_store::Contention,
    limit: f64,
) -> fmt::Result {
    use lab_config::format::percent;
    use lab_store::WaitSource;
    if contention.source == WaitSource::Ticks {
        return write_busy_by_ticks(f, contention, limit);
    }
    let mut parts = Vec::new();
    if contention.waited > limit || contention.steal.is_none_or(|s| s <= limit) {
        parts.push(match contention.source {
            WaitSource::Tasks | WaitSource::Run => format!(
                "it waited for a CPU others had for {} of its wall time",
                percent(contention.waited)
            ),
            WaitSource::Machine => format!(
                "tasks waited for a CPU others had for {} of its wall time (machine-wide pressure)",
                percent(contention.waited)
            ),
            WaitSource::Demand | WaitSource::Ticks => format!(
                "others kept its CPUs saturated for {} of its wall time (the kernel records no CPU pressure)",
                percent(contention.waited)
            ),
        });
    }
    if let Some(steal) = contention.steal.filter(|s| *s > limit) {
        parts.push(format!(
            "the hypervisor stole {} of its CPUs",
            percent(steal)
        ));
    }
    write!(
        f,
        "machine busy: {} (limit {})",
        parts.join(" and "),
        percent(limit)
    )
}

/// The rule of sessions recorded before lab judged waiting: others' share of the CPU time.
fn write_busy_by_ticks(
    f: &mut fmt::Formatter<'_>,
    contention: &lab_store::Contention,
    limit: f64,
) -> fmt::Result {
    use lab_config::format::percent;
    let steal = match contention.steal {
        Some(s) if s > 0.0 => format!(" and the hypervisor {}", percent(s)),
        _ => String::new(),
    };
    write!(
        f,
        "machine busy: other processes took {}{steal} of the CPU time on its CPUs (limit {})",
        percent(contention.waited),
        percent(limit)
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

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skipped::TooLong(bytes) => write!(
                f,
                "is {bytes} bytes long, over the {} MiB lab reads a line of values up to (print each value on a short line of its own)",
                MAX_LINE >> 20
            ),
            Skipped::NotUtf8 => f.write_str("is not UTF-8 text, so lab could not read it"),
        }
    }
}
