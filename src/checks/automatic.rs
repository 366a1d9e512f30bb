//! Automatic validity checks, always on: how the process ended, timeouts, suspends, and
//! missing or malformed metric values. The same rules judge a run as it is stored and when a
//! stored session is analysed.

use crate::config::Metric;
use crate::exec::Exit;
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
    Suspended { ns: u64 },
    MissingMetric(String),
    NotANumber { metric: String, value: String },
}

impl Problem {
    /// The automatic check this problem fails.
    pub fn check_name(&self) -> &'static str {
        match self {
            Problem::ExitCode(_) | Problem::Signal(_) | Problem::SpawnFailed(_) => "every run exited normally",
            Problem::TimedOut => "no run timed out",
            Problem::Suspended { .. } => "no run spanned a system suspend",
            Problem::MissingMetric(_) | Problem::NotANumber { .. } => "every run reported every metric",
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::ExitCode(c) => write!(f, "exit code {c}"),
            Problem::Signal(s) => write!(f, "killed by signal {s}{}", signal_name(*s).map(|n| format!(" ({n})")).unwrap_or_default()),
            Problem::SpawnFailed(e) => f.write_str(e),
            Problem::TimedOut => f.write_str("timed out; its process group was killed"),
            Problem::Suspended { ns } => write!(f, "the machine was suspended for {:.3} s during the run", *ns as f64 / 1e9),
            Problem::MissingMetric(m) => write!(f, "printed no value for metric `{m}`"),
            Problem::NotANumber { metric, value } => write!(f, "metric `{metric}`: {value:?} is not a number"),
        }
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

/// What the automatic checks look at for one run.
pub struct RunFacts<'a> {
    pub exit: &'a Exit,
    pub timed_out: bool,
    pub suspended_ns: u64,
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
    if run.suspended_ns > SUSPEND_THRESHOLD_NS {
        found.push(Problem::Suspended { ns: run.suspended_ns });
    }
    for metric in metrics {
        let mut values = run.values.iter().filter(|(m, _)| *m == metric.name).map(|(_, v)| *v).peekable();
        if values.peek().is_none() {
            found.push(Problem::MissingMetric(metric.name.clone()));
        } else if !metric.text {
            if let Some(bad) = values.find(|v| !v.trim().parse::<f64>().is_ok_and(f64::is_finite)) {
                found.push(Problem::NotANumber { metric: metric.name.clone(), value: bad.to_string() });
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
        Metric { name: name.into(), extractor: Extractor::Json(name.into()), unit: String::new(), better: Better::Higher, text, warmup_iterations: 0 }
    }

    #[test]
    fn finds_each_problem() {
        let metrics = [metric("mops", false), metric("sum", true)];
        let ok = Exit::Code(0);
        let clean = RunFacts { exit: &ok, timed_out: false, suspended_ns: 5, values: &[("mops", "1.5"), ("sum", "ab")] };
        assert!(problems(&clean, &metrics).is_empty());
        let crashed = Exit::Signal(libc::SIGSEGV);
        let bad = RunFacts { exit: &crashed, timed_out: false, suspended_ns: 2_000_000_000, values: &[("mops", "nan")] };
        let found = problems(&bad, &metrics);
        assert_eq!(found.len(), 4, "{found:?}");
        assert_eq!(found[0].to_string(), format!("killed by signal {} (SIGSEGV)", libc::SIGSEGV));
        assert_eq!(found[1].to_string(), "the machine was suspended for 2.000 s during the run");
        assert_eq!(found[2], Problem::NotANumber { metric: "mops".into(), value: "nan".into() });
        assert_eq!(found[3], Problem::MissingMetric("sum".into()));
    }

    #[test]
    fn a_timeout_is_reported_once_not_also_as_a_signal() {
        let killed = Exit::Signal(libc::SIGKILL);
        let run = RunFacts { exit: &killed, timed_out: true, suspended_ns: 0, values: &[] };
        assert_eq!(problems(&run, &[]), vec![Problem::TimedOut]);
    }
}
