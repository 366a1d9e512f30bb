//! Runs side by side (`lab run --jobs N`), only where they cannot share CPUs: each run is
//! pinned to its variant's `cpus`, and a run starts only when fewer than N run and none of
//! them holds one of its CPUs. Runs start in the plan's (seeded, shuffled) order: the next
//! planned run waits rather than letting a later one overtake it. Each running process is
//! waited for by its own thread, which hands the measurement back over a channel; the main
//! thread blocks on that channel, so nothing polls or analyses while runs execute, and it
//! alone writes the session, storing each run as it finishes.
//!
//! A duet (`lab run --revs BASE,HEAD --duet`) runs in the same way two at a time: each pair
//! of the plan (a run and its partner at the other revision) starts together, the first on
//! one side's CPUs and the second on the other's, and the next pair waits until both end.

use super::measure::{Measurement, RunRequest, Runner};
use super::{Ending, MetricReader, Progress, interrupt, orphans, running};
use anyhow::{Result, anyhow};
use lab_config::plan::PlannedRun;
use lab_config::{DuetSides, Experiment};
use lab_store::SessionWriter;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::mpsc;
use std::thread::Scope;

/// A run executing now.
struct InFlight {
    run: PlannedRun,
    /// The CPUs it is pinned to; `None` pins it nowhere, so it shares every CPU.
    cpus: Option<Vec<usize>>,
    /// Every run that executed at some moment beside it, so far.
    overlapped: BTreeSet<String>,
}

/// A run about to start: what it runs, the CPUs it is pinned to, the runner that runs it.
struct Start {
    run: PlannedRun,
    cpus: Option<Vec<usize>>,
    worker: Box<dyn Runner + Send>,
}

/// What a run's thread hands back: the run's id and its measurement, or why the runner failed.
type Done = (String, std::result::Result<Measurement, String>);

/// Runs `runs`, up to `jobs` at once on disjoint CPUs, appending each to the session as it
/// finishes. A runner that cannot run processes side by side runs them one at a time.
pub fn execute_side_by_side(
    exp: &Experiment,
    runs: &[PlannedRun],
    session: &mut SessionWriter,
    runner: &mut dyn Runner,
    progress: &Progress,
    jobs: usize,
) -> Result<Ending> {
    if jobs <= 1 || runner.concurrent().is_none() {
        return super::execute(exp, runs, session, runner, progress);
    }
    let mut schedule = Schedule {
        exp,
        jobs,
        queue: runs.iter().cloned().collect(),
        running: BTreeMap::new(),
        stopping: None,
        duet: None,
    };
    schedule.run(session, runner, progress)
}

/// Runs `runs` of a duet pair by pair, each pair's two runs at the same time on the two
/// `sides`. A disturbed run is not run again alone: its pair is left out of the comparison,
/// and a sampled session adds pairs instead.
pub fn execute_duet(
    exp: &Experiment,
    runs: &[PlannedRun],
    session: &mut SessionWriter,
    runner: &mut dyn Runner,
    progress: &Progress,
    sides: &DuetSides,
) -> Result<Ending> {
    if runner.concurrent().is_none() {
        return Err(anyhow!(
            "--duet runs two processes at once, and this runner runs one at a time"
        ));
    }
    let mut schedule = Schedule {
        exp,
        jobs: 2,
        queue: runs.iter().cloned().collect(),
        running: BTreeMap::new(),
        stopping: None,
        duet: Some(sides.clone()),
    };
    schedule.run(session, runner, progress)
}

impl<'e> Schedule<'e> {
    /// Drives the schedule to its end on threads of this scope, reaping what runs.
    fn run(
        &mut self,
        session: &mut SessionWriter,
        runner: &mut dyn Runner,
        progress: &Progress,
    ) -> Result<Ending> {
        interrupt::install();
        orphans::become_subreaper();
        let _shield = super::privileges::SignalShield::raise();
        std::thread::scope(|scope| {
            let ending = self.drive(scope, session, runner, progress);
            if ending.is_err() {
                // lab cannot go on: the runs still executing are stopped, not waited for.
                running::kill_all();
            }
            ending
        })
    }
}

/// The state of a session's runs while some execute side by side.
struct Schedule<'e> {
    exp: &'e Experiment,
    jobs: usize,
    /// Runs not started yet, in the order they start.
    queue: VecDeque<PlannedRun>,
    running: BTreeMap<String, InFlight>,
    /// Set once no more runs may start, with how the session ends.
    stopping: Option<Ending>,
    /// A duet's two CPU sets: runs start in pairs, pinned to them.
    duet: Option<DuetSides>,
}

impl<'e> Schedule<'e> {
    /// Starts what may start, then blocks until a run ends and stores it, until none is left.
    fn drive<'scope>(
        &mut self,
        scope: &'scope Scope<'scope, 'e>,
        session: &mut SessionWriter,
        runner: &mut dyn Runner,
        progress: &Progress,
    ) -> Result<Ending> {
        let reader = MetricReader::new(&self.exp.metrics);
        let (sender, finished) = mpsc::channel::<Done>();
        loop {
            if interrupt::requested() {
                self.stopping = Some(Ending::Interrupted);
            }
            while self.stopping.is_none() && self.next_may_start() {
                for (run, cpus) in self.next_to_start() {
                    progress.starting(&run);
                    let (stdout, stderr) = session.own_spools(&run);
                    let worker = runner.concurrent().ok_or_else(|| {
                        anyhow!("the runner can no longer run processes side by side")
                    })?;
                    let start = Start { run, cpus, worker };
                    self.launch(scope, start, stdout, stderr, sender.clone());
                }
            }
            if self.running.is_empty() {
                return Ok(self.stopping.take().unwrap_or(Ending::Complete));
            }
            let (id, measured) = finished
                .recv()
                .map_err(|_| anyhow!("a run's thread ended without reporting"))?;
            let flight = self
                .running
                .remove(&id)
                .ok_or_else(|| anyhow!("run {id} reported twice"))?;
            let measurement = measured.map_err(|why| anyhow!("run {id}: {why}"))?;
            if interrupt::requested() {
                // Cut short by the user (its group was killed): not a measurement.
                self.stopping = Some(Ending::Interrupted);
                continue;
            }
            self.store(flight, &measurement, &reader, session, progress)?;
        }
    }

    /// Whether the next planned run may start now: fewer than `jobs` run, and none holds one
    /// of its CPUs; in a duet, whether no run is executing.
    fn next_may_start(&self) -> bool {
        let Some(next) = self.queue.front() else {
            return false;
        };
        if self.duet.is_some() {
            return self.running.is_empty();
        }
        let cpus = cpus_of(self.exp, next);
        self.running.len() < self.jobs
            && self
                .running
                .values()
                .all(|r| disjoint(r.cpus.as_deref(), cpus.as_deref()))
    }

    /// The runs to start now, with the CPUs each is pinned to: the next planned run on its
    /// variant's `cpus`; in a duet, the next run on the first side's CPUs with its partner,
    /// when the plan holds it next, on the second's.
    fn next_to_start(&mut self) -> Vec<(PlannedRun, Option<Vec<usize>>)> {
        let Some(first) = self.queue.pop_front() else {
            return Vec::new();
        };
        let Some([one, other]) = self.duet.clone() else {
            let cpus = cpus_of(self.exp, &first);
            return vec![(first, cpus)];
        };
        let partner = self
            .queue
            .front()
            .is_some_and(|next| lab_config::plan::partners(&first, next))
            .then(|| self.queue.pop_front())
            .flatten();
        let mut start = vec![(first, Some(one))];
        start.extend(partner.map(|p| (p, Some(other))));
        start
    }

    /// Starts a run on a thread of its own, which waits for it and reports back on `done`.
    fn launch<'scope>(
        &mut self,
        scope: &'scope Scope<'scope, 'e>,
        Start {
            run,
            cpus,
            mut worker,
        }: Start,
        stdout: std::path::PathBuf,
        stderr: std::path::PathBuf,
        done: mpsc::Sender<Done>,
    ) {
        let overlapped: BTreeSet<String> = self.running.keys().cloned().collect();
        for other in self.running.values_mut() {
            other.overlapped.insert(run.id.clone());
        }
        let exp = self.exp;
        let planned = run.clone();
        let pinned = cpus.clone();
        let (spawned, started) = mpsc::channel::<()>();
        scope.spawn(move || {
            let request = RunRequest {
                cpus: pinned.as_deref(),
                ..super::request(exp, &planned, &stdout, &stderr)
            };
            let measured = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                worker.run_announced(&request, &mut || {
                    let _ = spawned.send(());
                })
            }))
            .map_err(|_| "the runner failed while measuring it".to_string());
            let _ = done.send((planned.id.clone(), measured));
        });
        // The next run starts only once this one's process has: runs start in plan order. The
        // wait also ends if the thread ends without announcing (its sender is dropped).
        let _ = started.recv();
        self.running.insert(
            run.id.clone(),
            InFlight {
                cpus,
                run,
                overlapped,
            },
        );
    }

    /// Stores a finished run with the runs it overlapped and checks the session's files.
    fn store(
        &mut self,
        flight: InFlight,
        measurement: &Measurement,
        reader: &MetricReader,
        session: &mut SessionWriter,
        progress: &Progress,
    ) -> Result<()> {
        let run = &flight.run;
        super::refuse_on_full_disk(self.exp, run, session)?;
        let changes = session.verify()?;
        let packed = session.pack_own_spools(run, self.exp.max_output)?;
        let (mut row, samples) =
            super::stored_row(self.exp, reader, run, measurement, session, &packed);
        row.overlapped = (!flight.overlapped.is_empty()).then(|| {
            flight
                .overlapped
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        });
        session.append(run, &row, &samples)?;
        progress.finished(run, measurement.wall_ns, &super::outcome(measurement));
        if !changes.is_empty() {
            let beside = row.overlapped.as_deref().map_or_else(String::new, |o| {
                format!(" (or a run executing beside it: {o})")
            });
            // The runs still executing finish and are stored; no other starts.
            self.stopping.get_or_insert(Ending::Damaged(format!(
                "run {}{beside} changed the session's files: {}",
                run.id,
                changes.join(", ")
            )));
            return Ok(());
        }
        Ok(())
    }
}

/// The CPUs a run is pinned to: its variant's `cpus`.
fn cpus_of(exp: &Experiment, run: &PlannedRun) -> Option<Vec<usize>> {
    exp.variant(&run.cell.variant).and_then(|v| v.cpus.clone())
}

/// Whether two runs pinned to `a` and `b` cannot share a CPU; a run pinned nowhere shares all.
pub fn disjoint(a: Option<&[usize]>, b: Option<&[usize]>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => !a.iter().any(|c| b.contains(c)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_pinned_nowhere_share_every_cpu() {
        assert!(disjoint(Some(&[0, 1]), Some(&[2])));
        assert!(!disjoint(Some(&[0, 1]), Some(&[1, 2])));
        assert!(!disjoint(None, Some(&[2])));
        assert!(!disjoint(Some(&[2]), None));
    }
}
