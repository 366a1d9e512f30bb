//! One session of `lab run` from its lab.toml to its chapter: checked, started or resumed,
//! measured block by block (look by look for a sampled session), reported, and confirmed by
//! a second session when it found a regression between revisions.

use super::look_time::{LookTime, say_look};
use super::options::RunOptions;
use super::revs;
use super::slurm::{self, Engine};
use super::start::{self, Opened, Target, session_name};
use super::{Chapters, Found, estimate, host};
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_config::plan::{self, CellKey, PlannedRun};
use lab_config::{self as config, Experiment};
use lab_exec::{self as exec, Ending, Progress, Runner};
use lab_judge::stopping::{self, Next};
use lab_store::{self as store, Revisions, Sealed};
use std::path::{Path, PathBuf};

/// Mixed into the seed of a session that confirms a regression: another shuffle, other runs.
const CONFIRMATION_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// `lab run` of one experiment: where it is, what was asked, and what it measures.
pub(super) struct RunSession<'a> {
    layout: &'a Layout,
    /// The experiment as the command line named it.
    arg: &'a Path,
    opts: &'a RunOptions<'a>,
    /// The experiment's folder.
    dir: PathBuf,
    /// The files a new session seals: its lab.toml as read now.
    sealed: Sealed,
    target: Target,
}

/// A session measured to its end, its chapter written.
struct Finished {
    name: String,
    found: Found,
}

/// How measuring a session ended.
enum Measured {
    /// Every planned run finished and the chapter was written.
    Done(Finished),
    /// The user stopped it: lab ends by the signal it sent.
    Interrupted(Exit),
}

impl<'a> RunSession<'a> {
    /// Reads and checks the experiment `arg` names and plans its session; nothing runs yet.
    pub(super) fn open(
        layout: &'a Layout,
        arg: &'a Path,
        opts: &'a RunOptions<'a>,
    ) -> Result<RunSession<'a>> {
        let dir = layout.experiment_dir(arg)?;
        host::check_authored(&dir)?;
        let sealed = Sealed::read(&dir)?;
        let exp = config::parse(
            &sealed.lab_toml,
            &dir.join(config::FILE_NAME),
            &dir,
            opts.profile,
        )?;
        for w in &exp.warnings {
            eprintln!("warning: {w}");
        }
        host::check_runnable(&exp)?;
        host::check_cpus(&exp)?;
        host::check_jobs(&exp, opts, opts.revs.is_some())?;
        host::check_duet(opts)?;
        let (exp, revisions) = match opts.revs {
            Some(names) if !opts.resume => {
                let asked = revs::Asked {
                    names,
                    threshold: opts.threshold,
                    until_decided: opts.until_decided,
                    duet: opts.duet,
                };
                let (exp, revisions) = revs::across(layout, exp, &asked)?;
                (exp, Some(revisions))
            }
            _ if opts.resume => (exp, None),
            _ => {
                host::check_decidable(&exp)?;
                (exp, None)
            }
        };
        let plan = plan::plan(&exp);
        Ok(RunSession {
            layout,
            arg,
            opts,
            dir,
            sealed,
            target: Target {
                exp,
                plan,
                revisions,
            },
        })
    }

    /// The plan as `--dry-run` prints it, with its estimated duration.
    pub(super) fn describe(&self) -> String {
        let Target { exp, plan, .. } = &self.target;
        estimate::describe_plan(exp, plan, self.layout, self.opts.jobs)
    }

    /// Measures the session under the experiment's locks and prints its summary; a
    /// regression between revisions, with `--confirm`, is measured again.
    pub(super) fn measure_and_confirm(
        &self,
        runner: &mut dyn Runner,
        chapters: &mut dyn Chapters,
    ) -> Result<Exit> {
        host::check_engine(self.opts)?;
        let _locks = host::Locks::take(self.layout, &self.target.exp, self.opts)?;
        let _contained = host::contain(self.layout, &self.target.exp, self.opts)?;
        let first = match self.measure(&self.target, runner, chapters)? {
            Measured::Done(finished) => finished,
            Measured::Interrupted(exit) => return Ok(exit),
        };
        let Found { failed, regressed } = first.found;
        if regressed && self.opts.confirm {
            return self.confirm(&first, runner, chapters);
        }
        Ok(Exit::failed_if(failed || regressed))
    }

    /// A second interleaved session, of another shuffle, that confirms the regression `first`
    /// found or does not.
    fn confirm(
        &self,
        first: &Finished,
        runner: &mut dyn Runner,
        chapters: &mut dyn Chapters,
    ) -> Result<Exit> {
        let exp = Experiment {
            seed: self.target.exp.seed ^ CONFIRMATION_SEED,
            ..self.target.exp.clone()
        };
        let again = Target {
            plan: plan::plan(&exp),
            revisions: self.target.revisions.clone().map(|r| Revisions {
                confirms: Some(first.name.clone()),
                ..r
            }),
            exp,
        };
        if !self.opts.quiet {
            eprintln!(
                "confirming the regression with a second interleaved session (seed {})…",
                again.exp.seed
            );
        }
        let second = match self.measure(&again, runner, chapters)? {
            Measured::Done(finished) => finished,
            Measured::Interrupted(exit) => return Ok(exit),
        };
        let Found {
            failed,
            regressed: confirmed,
        } = second.found;
        if confirmed {
            println!("regression confirmed: session {} found it too", second.name);
        } else {
            println!(
                "regression not confirmed: session {} found none, so session {} is not reported as one",
                second.name, first.name
            );
        }
        Ok(Exit::failed_if(failed || confirmed))
    }

    /// Runs (or resumes) one session of `target` to its end and writes its chapter.
    fn measure(
        &self,
        target: &Target,
        runner: &mut dyn Runner,
        chapters: &mut dyn Chapters,
    ) -> Result<Measured> {
        let mut open = if self.opts.resume {
            start::resume(self.layout, self.opts, target.exp.clone())?
        } else {
            start::start(self.layout, self.opts, &self.sealed, target, runner)?
        };
        if self.opts.no_wait {
            open.exp.calm_wait = std::time::Duration::ZERO;
        }
        let shown = lab_exec::Shown {
            quiet: self.opts.quiet || self.opts.shown.quiet,
            ..self.opts.shown
        };
        let progress = Progress::shown(open.manifest.planned_runs, shown);
        progress.note(&format!(
            "session {} ({} runs to go)",
            open.writer.dir.display(),
            open.todo.len()
        ));
        if let Some(version) = open.manifest.counters.get("callgrind-instructions") {
            progress.note(&format!(
                "every run goes under {} --tool=callgrind to count its instructions: runs take 20–100× their native time, and their times are valgrind's",
                version.trim_start_matches("available: ")
            ));
        }
        if self.opts.jobs > 1 {
            open.manifest.jobs = Some(open.manifest.jobs.unwrap_or(1).max(self.opts.jobs));
        }
        let watch = exec::watch_disturbers();
        let ending = self.run_all(&mut open, runner, &progress)?;
        // From here on a signal simply ends lab: every run is stored, chapters are swapped in whole.
        exec::restore_signals();
        progress.done();
        open.manifest.load_after = Some(store::load_average());
        open.manifest.disturbers = watch.busiest();
        ending.record(&mut open.manifest);
        open.writer.finish(&open.manifest)?;
        self.conclude(&open, ending, chapters)
    }

    /// Runs the runs to go, then, while a sampled session's goal is unmet, each next look's.
    fn run_all(
        &self,
        open: &mut Opened,
        runner: &mut dyn Runner,
        progress: &Progress,
    ) -> Result<Ending> {
        let started = std::time::Instant::now();
        let todo = std::mem::take(&mut open.todo);
        progress.start_clock(
            todo.len(),
            open.exp.sampling.is_some(),
            self.budget(&open.exp),
        );
        let mut ending = self.block(open, &todo, runner, progress)?;
        let mut ran = todo;
        while ending == Ending::Complete {
            let Some(more) = self.next_look(open, progress, started)? else {
                break;
            };
            open.manifest.planned_runs += more.len();
            ending = self.block(open, &more, runner, progress)?;
            ran.extend(more);
        }
        if ending == Ending::Complete && self.opts.on == Engine::Local {
            exec::clean_up(&open.exp, &ran, runner).map_err(authored)?;
        }
        Ok(ending)
    }

    /// Runs one block of runs where the options say: here, or on the cluster.
    fn block(
        &self,
        open: &mut Opened,
        runs: &[PlannedRun],
        runner: &mut dyn Runner,
        progress: &Progress,
    ) -> Result<Ending> {
        match (&self.opts.on, &open.exp.duet) {
            (Engine::Local, Some(sides)) => {
                exec::execute_duet(&open.exp, runs, &mut open.writer, runner, progress, sides)
                    .map_err(authored)
            }
            (Engine::Local, None) => exec::execute_side_by_side(
                &open.exp,
                runs,
                &mut open.writer,
                runner,
                progress,
                self.opts.jobs,
            )
            .map_err(authored),
            (Engine::Slurm(cluster), _) => slurm::ClusterRun {
                exp_dir: &self.dir,
                opts: cluster,
                progress,
            }
            .execute(runs, &mut open.writer, &mut open.manifest),
        }
    }

    /// For a sampled session whose goal is unmet: the next look's runs, added to the plan,
    /// unless they would carry the session's runs (since `started`) past its time budget.
    /// The look's analysis runs while no run does, between two blocks of runs.
    fn next_look(
        &self,
        open: &mut Opened,
        progress: &Progress,
        started: std::time::Instant,
    ) -> Result<Option<Vec<PlannedRun>>> {
        if open.exp.sampling.is_none() {
            return Ok(None);
        }
        let mut stored = store::load_session(&open.writer.dir)?;
        let Some((standing, looks)) = crate::assess::latest_standing(&self.dir, &mut stored)?
        else {
            return Ok(None);
        };
        open.writer.record_looks(&looks)?;
        let Next::More {
            look,
            runs_per_cell,
        } = standing.next
        else {
            progress.note(&standing.sentence(&open.exp));
            return Ok(None);
        };
        let time = LookTime {
            exp: &open.exp,
            planned: &stored.plan.runs,
            standing: &standing,
            budget_s: self.budget(&open.exp).map(|b| b.as_secs_f64()),
            used_s: started.elapsed().as_secs_f64(),
            measured: estimate::mean_wall_by_cell(&stored),
        };
        let time_stop = &mut open.manifest.time_stop;
        let Some(cells) = Self::cells_for_look(&time, look, time_stop, progress) else {
            return Ok(None);
        };
        let (likely_s, outlook) = time.outlook(&time.coming(&cells));
        let exp = &open.exp;
        let runs = open.writer.extend_plan_with(|planned| {
            plan::look_runs(exp, planned, look, runs_per_cell, &cells)
        })?;
        let added = format!(
            "look {look} adds {} runs to bring {} cells to {runs_per_cell}; {outlook}",
            runs.len(),
            cells.len()
        );
        say_look(progress, &standing, runs.len(), &added, likely_s);
        Ok(Some(runs))
    }

    /// The cells look `look` grows within the time budget, said when only some fit; `None`,
    /// with the time stop recorded in `time_stop` and said, when none does.
    fn cells_for_look(
        time: &LookTime,
        look: u32,
        time_stop: &mut Option<store::TimeStop>,
        progress: &Progress,
    ) -> Option<Vec<CellKey>> {
        let standing = time.standing;
        let (cells, grown) = match time.cells_within_budget() {
            Ok(fit) => fit,
            Err(stop) => {
                *time_stop = Some(stop);
                let stopped = stopping::Standing {
                    next: Next::TimeSpent(stop),
                    ..standing.clone()
                };
                progress.note(&stopped.sentence(time.exp));
                return None;
            }
        };
        if let Some(grown) = grown {
            progress.note(&format!(
                "look {look} grows only the {grown} of {} open hypotheses likely decided soonest: all of them would not fit in the time budget",
                standing.nearest_first.len()
            ));
        }
        Some(cells)
    }

    /// How long a sampled session's runs may take: `--budget`, else lab.toml's.
    fn budget(&self, exp: &Experiment) -> Option<std::time::Duration> {
        self.opts
            .budget
            .or(exp.sampling.as_ref().and_then(|s| s.budget))
    }

    /// After the runs: an interrupted session says how to resume it, a damaged one is an
    /// error, a complete one has its chapter written.
    fn conclude(
        &self,
        open: &Opened,
        ending: Ending,
        chapters: &mut dyn Chapters,
    ) -> Result<Measured> {
        let session_dir = &open.writer.dir;
        match ending {
            Ending::Interrupted => {
                eprintln!(
                    "interrupted: every finished run is kept in {}; `lab run {}{} --resume` completes the plan",
                    session_dir.display(),
                    self.arg.display(),
                    if self.opts.on == Engine::Local {
                        ""
                    } else {
                        " --on slurm"
                    }
                );
                return Ok(Measured::Interrupted(
                    Exit::Signal(exec::interrupt_signal()),
                ));
            }
            Ending::Damaged(why) => {
                return Err(LabError::Other(anyhow::anyhow!(
                    "{why}\n  lab stopped, putting back what it keeps a copy of (runs.csv, samples.csv, the manifest, the plan); session {} is marked damaged and kept as it is",
                    session_dir.display()
                )));
            }
            Ending::Complete => {}
        }
        let name = session_name(session_dir);
        let found = chapters.write(&self.dir, &name)?;
        Ok(Measured::Done(Finished { name, found }))
    }
}

/// A failing `prepare`, `conclude` or `setup` command is the author's to fix (exit 2); any
/// other failure of the run loop is lab's own.
fn authored(e: anyhow::Error) -> LabError {
    if e.downcast_ref::<exec::HookFailed>().is_some() {
        LabError::Authoring(e)
    } else {
        LabError::Other(e)
    }
}
