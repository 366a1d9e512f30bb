//! Whether the machine disturbed a run, from the counters recorded with it: the one rule by
//! which a run is run again during a session and its timing discarded afterwards.
//!
//! A run was disturbed when it *waited* for a CPU because something else had it, for more than
//! `max_busy` of its wall time, or when a hypervisor stole more than that share of its CPUs.
//! Others merely running beside it is no disturbance: a one-thread benchmark on a two-CPU
//! machine with one other busy process has a CPU to itself. Three figures go in:
//!
//! - **Waiting**: how far the time the run's own tasks were runnable but not running could
//!   have stretched it: the largest share of its life one of its working tasks waited
//!   (`wait_share`, from the kernel's per-task accounting, `exec::taskstats`), else their
//!   total (`wait_ns`, where only the run's leader could be read); where neither could be, CPU pressure stall time (PSI `some`, the
//!   time at least one task waited for a CPU; Weiner, "PSI – Pressure Stall Information",
//!   kernel docs `accounting/psi.rst`), of the run's own cgroup where lab could give it one,
//!   machine-wide otherwise, in microseconds.
//! - **Others' demand**: CPU time the run's CPUs spent on anyone but the run (`/proc/stat`
//!   ticks less the run's own CPU time). A run that oversubscribes its CPUs (16 threads on 2)
//!   waits on itself; only the waiting others can account for counts: the smaller of the two,
//!   others' time less one tick per CPU of counting error.
//! - **Steal**: time the hypervisor gave the run's virtual CPUs to someone else.
//!
//! Without PSI (kernels built without it) waiting cannot be seen: a run whose CPUs had no idle
//! time while others used them is taken to have waited as long as the others ran. That is
//! conservative: it calls a run disturbed that may have had its CPU.

use super::RunRow;
use serde::Serialize;

/// Fewest nanoseconds of CPU time on a run's CPUs for its steal to be judged: twenty of the
/// kernel's 10 ms ticks, so a miscounted tick moves the share by at most 5%.
pub const MIN_CAPACITY_NS: u64 = 200_000_000;

/// One `/proc/stat` tick on Linux (USER_HZ = 100): the counting error of others' time.
const TICK_NS: f64 = 10_000_000.0;

/// Where the waiting figure of a run comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The run's own tasks' waiting, task by task.
    Tasks,
    /// The pressure of the run's own cgroup: its own tasks' waiting.
    Run,
    /// The machine-wide pressure: some task anywhere waited.
    Machine,
    /// No pressure recorded: others' time while the run's CPUs were saturated.
    Demand,
    /// A run recorded before lab judged waiting: others' share of its CPUs' time, the rule it
    /// was recorded under.
    Ticks,
}

impl Source {
    /// "its own tasks", for the sentence that says who waited.
    pub fn who(self) -> &'static str {
        match self {
            Source::Tasks | Source::Run => "it waited for a CPU",
            Source::Machine => "tasks on the machine waited for a CPU",
            Source::Demand => "its CPUs were saturated by others",
            Source::Ticks => "others took CPU time on its CPUs",
        }
    }
}

/// What the machine did to one run, as shares.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Contention {
    /// Share of the run's wall time it waited for a CPU that others account for.
    pub waited: f64,
    /// Share of its wall time the pressure showed, before others' time bounded it.
    pub stalled: f64,
    /// Others' CPU time on the run's CPUs, as a share of the run's wall time (above 1 when
    /// others kept several of its CPUs busy).
    pub others: f64,
    /// Share of its CPUs' time a hypervisor stole; `None` for runs too short for the ticks.
    pub steal: Option<f64>,
    pub source: Source,
}

impl Contention {
    /// The larger of the waiting and the steal (their sum under the rule of older sessions):
    /// what is held against the limit.
    pub fn share(&self) -> f64 {
        match self.source {
            Source::Ticks => self.waited + self.steal.unwrap_or(0.0),
            _ => self.waited.max(self.steal.unwrap_or(0.0)),
        }
    }

    /// Whether the machine took more of the run than `limit` allows.
    pub fn disturbed(&self, limit: f64) -> bool {
        self.share() > limit
    }
}

/// Why a run's contention could not be judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unjudged {
    /// The session predates these counters, or `/proc/stat` could not be read.
    NotRecorded,
    /// Recorded before lab judged waiting, and under 0.2 CPU-seconds: too few ticks to tell.
    TooFewTicks,
}

impl RunRow {
    /// What the machine took from the run while it ran.
    pub fn contention(&self) -> Result<Contention, Unjudged> {
        if self.busy_limit.is_none() {
            return self.legacy_contention();
        }
        let wall = self.wall_ns.max(1) as f64;
        let capacity = self.host_capacity_ns.ok_or(Unjudged::NotRecorded)? as f64;
        let busy = self.host_busy_ns.ok_or(Unjudged::NotRecorded)? as f64;
        let own = self.user_ns.saturating_add(self.sys_ns) as f64;
        let cpus = (capacity / wall).round().max(1.0);
        let others_ns = (busy - own).max(0.0);
        let countable = (others_ns - TICK_NS * cpus).max(0.0);
        let steal_ns = self.host_steal_ns.unwrap_or(0) as f64;
        let steal = (capacity >= MIN_CAPACITY_NS as f64).then(|| (steal_ns / capacity).min(1.0));
        let tasks = self
            .wait_share
            .map(|s| s * wall)
            .or(self.wait_ns.map(|ns| ns as f64));
        let pressure = match (tasks, self.psi_cpu_own_us, self.psi_cpu_some_us) {
            (Some(ns), _, _) => Some((ns, Source::Tasks)),
            (None, Some(us), _) => Some((us as f64 * 1000.0, Source::Run)),
            (None, None, Some(us)) => Some((us as f64 * 1000.0, Source::Machine)),
            (None, None, None) => None,
        };
        let (stalled_ns, source) = pressure.unwrap_or_else(|| {
            let saturated = busy + steal_ns >= capacity - TICK_NS * cpus;
            (if saturated { others_ns } else { 0.0 }, Source::Demand)
        });
        Ok(Contention {
            waited: (stalled_ns.min(countable) / wall).min(1.0),
            stalled: (stalled_ns / wall).min(1.0),
            others: others_ns / wall,
            steal,
            source,
        })
    }

    /// Others' share of the run's CPUs' time, for runs recorded before lab judged waiting.
    fn legacy_contention(&self) -> Result<Contention, Unjudged> {
        let capacity = self.host_capacity_ns.ok_or(Unjudged::NotRecorded)?;
        let busy = self.host_busy_ns.ok_or(Unjudged::NotRecorded)?;
        if capacity < MIN_CAPACITY_NS {
            return Err(Unjudged::TooFewTicks);
        }
        let own = self.user_ns.saturating_add(self.sys_ns);
        let others = busy.saturating_sub(own) as f64;
        let share = (others / capacity as f64).min(1.0);
        Ok(Contention {
            waited: share,
            stalled: share,
            others: others / self.wall_ns.max(1) as f64,
            steal: Some((self.host_steal_ns.unwrap_or(0) as f64 / capacity as f64).min(1.0)),
            source: Source::Ticks,
        })
    }

    /// The contention and the limit it broke, when the machine disturbed the run: judged by
    /// the limit recorded with the run, or for a run recorded without one (before lab judged
    /// waiting), by `legacy_limit` under the rule it was recorded under.
    pub fn disturbed(&self, legacy_limit: f64) -> Option<(Contention, f64)> {
        let limit = self.busy_limit.unwrap_or(legacy_limit);
        self.contention()
            .ok()
            .filter(|c| c.disturbed(limit))
            .map(|c| (c, limit))
    }
}

#[cfg(test)]
#[path = "contention_tests.rs"]
mod tests;
