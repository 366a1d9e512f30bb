//! Waiting for a busy machine to calm instead of running into it. After a run that waited for
//! a CPU others had for more than `max_busy` of its wall time, the next run does not start
//! until the machine's CPU pressure has fallen below that share for a moment, or until
//! `calm_wait` has passed. A wait that did not help (the machine stayed busy, as it does
//! beside a process that never ends) is not repeated: lab then runs without waiting, each
//! run's own waiting measured and weighed in every verdict, and waits again only once runs
//! have been undisturbed for a while. On a quiet machine nothing here reads anything.

use super::progress::Progress;
use std::time::{Duration, Instant};

/// How long one look at the machine's pressure lasts.
const GLANCE: Duration = Duration::from_millis(100);
/// Undisturbed runs in a row after which a machine that stayed busy is waited for again.
const REARM_AFTER: u32 = 20;
/// The variable that overrides every experiment's `calm_wait` ("0s" never waits): for CI
/// suites that run many sessions at once on purpose.
pub(crate) const CALM_WAIT_VAR: &str = "LAB_CALM_WAIT";

/// The waiting of one session.
pub(crate) struct Calm {
    patience: Duration,
    limit: f64,
    /// Whether the last run was disturbed, so that the next waits.
    pending: bool,
    /// Set when a wait did not calm the machine: no more waiting for now.
    gave_up: bool,
    quiet_in_a_row: u32,
}

/// How a wait before a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waited {
    /// No wait was needed, or the machine calmed, or the patience ran out.
    Go,
    /// Lab was asked to stop while it waited.
    Interrupted,
}

impl Calm {
    /// Waiting up to `patience` before a run, for CPU pressure under `limit` (a `max_busy` of
    /// 100% never waits). [`CALM_WAIT_VAR`] overrides `patience` when it holds a duration.
    pub(crate) fn new(patience: Duration, limit: f64) -> Calm {
        let patience = std::env::var(CALM_WAIT_VAR)
            .ok()
            .and_then(|v| lab_config::parse_wait(&v))
            .unwrap_or(patience);
        Calm {
            patience: if limit >= 1.0 {
                Duration::ZERO
            } else {
                patience
            },
            limit,
            pending: false,
            gave_up: false,
            quiet_in_a_row: 0,
        }
    }

    /// Notes how much of its wall time the run that just ended waited for a CPU others had.
    pub(crate) fn after_run(&mut self, waited_share: Option<f64>) {
        let disturbed = waited_share.is_some_and(|s| s > self.limit);
        self.pending = disturbed;
        self.quiet_in_a_row = if disturbed {
            0
        } else {
            self.quiet_in_a_row + 1
        };
        if self.quiet_in_a_row >= REARM_AFTER {
            self.gave_up = false;
        }
    }

    /// Before a run: waits for the machine to calm when the last run was disturbed.
    pub(crate) fn before_run(&mut self, progress: &Progress) -> Waited {
        if !self.pending || self.gave_up || self.patience.is_zero() {
            return Waited::Go;
        }
        self.pending = false;
        let started = Instant::now();
        let watch = super::disturbers::watch();
        let mut said = false;
        while started.elapsed() < self.patience {
            if super::interrupt::requested() {
                return Waited::Interrupted;
            }
            let Some(pressure) = pressure_over(GLANCE) else {
                return Waited::Go;
            };
            if pressure <= self.limit {
                return Waited::Go;
            }
            if !said && started.elapsed() >= 3 * GLANCE {
                progress.note(&waiting_words(pressure, &watch, self.patience));
                said = true;
            }
        }
        self.gave_up = true;
        progress.note(&format!(
            "the machine stays busy{}: lab runs without waiting for it now; each run's own waiting for a CPU is measured and weighed in every verdict",
            busiest(&watch)
        ));
        Waited::Go
    }
}

/// "waiting up to 2 s for the machine to calm: tasks waited for a CPU 100% of the last 0.1 s
/// (sh (pid 12) 99% of a CPU); Ctrl-C stops, `lab run … --resume` goes on".
fn waiting_words(pressure: f64, watch: &super::disturbers::Watch, patience: Duration) -> String {
    format!(
        "waiting up to {} for the machine to calm: tasks waited for a CPU {} of the last {}{}; Ctrl-C stops, --resume goes on",
        lab_config::format::seconds(patience.as_secs_f64()),
        lab_config::format::percent(pressure),
        lab_config::format::seconds(GLANCE.as_secs_f64()),
        busiest(watch)
    )
}

/// " (sh (pid 12) 99% of a CPU, …)", or nothing when no process stood out.
fn busiest(watch: &super::disturbers::Watch) -> String {
    let named: Vec<String> = watch.busiest().iter().map(|d| d.describe()).collect();
    if named.is_empty() {
        String::new()
    } else {
        format!(" ({})", named.join(", "))
    }
}

/// The share of `window` during which some task on the machine waited for a CPU (PSI
/// `some`), `None` where the kernel does not count it.
fn pressure_over(window: Duration) -> Option<f64> {
    let before = read_pressure()?;
    std::thread::sleep(window);
    let after = read_pressure()?;
    Some(after.saturating_sub(before) as f64 / window.as_micros().max(1) as f64)
}

fn read_pressure() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/pressure/cpu").ok()?;
    super::machine::psi_some_total(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_disturbed_run_makes_the_next_wait_and_a_fruitless_wait_is_not_repeated() {
        let mut calm = Calm::new(Duration::from_millis(300), 0.10);
        assert!(!calm.pending);
        calm.after_run(Some(0.05));
        assert!(!calm.pending, "5% is under the limit");
        calm.after_run(None);
        assert!(!calm.pending, "an unmeasured run makes nobody wait");
        calm.after_run(Some(0.30));
        assert!(calm.pending);
        calm.gave_up = true;
        assert_eq!(calm.before_run(&Progress::new(0, true)), Waited::Go);
        for _ in 0..REARM_AFTER {
            calm.after_run(Some(0.0));
        }
        assert!(!calm.gave_up, "twenty quiet runs wait again next time");
    }

    #[test]
    fn the_guard_turned_off_never_waits() {
        let mut calm = Calm::new(Duration::from_secs(5), 1.0);
        calm.after_run(Some(0.9));
        let started = Instant::now();
        assert_eq!(calm.before_run(&Progress::new(0, true)), Waited::Go);
        assert!(started.elapsed() < Duration::from_millis(50));
    }
}
