//! Stage 3 on a cluster: the plan split into shards, submitted to Slurm as one job array whose
//! every task runs one shard (`lab run-shard`), then watched until each shard is complete,
//! resubmitting a lost task a bounded number of times. Slurm places and runs the tasks; lab
//! only talks to it through `sbatch`, `scontrol` and `scancel`, behind [`Scheduler`].

use anyhow::{Context, Result, bail};
use lab_config::plan::PlannedRun;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// How often a lost task (failed, cancelled, its node gone) is submitted again before its
/// shard is given up and the session left incomplete.
pub const RESUBMISSIONS: u32 = 2;

/// Seconds between two looks at the job's state.
const POLL: Duration = Duration::from_secs(1);

/// How long lab waits for a controller that does not answer (restarting, or unreachable)
/// before it gives up watching. It resubmits nothing meanwhile: without an answer it cannot
/// tell a lost task from one still running, and two tasks must never run one shard at once.
const CONTROLLER_PATIENCE: Duration = Duration::from_secs(600);

/// Splits runs (in the shuffled order of the plan) into at most `shards` contiguous blocks of
/// nearly equal size, the larger ones first. Contiguous blocks keep the shuffle's interleaving
/// of cells within each shard, so every node sees every cell in the same mixed order.
pub fn shards(runs: &[PlannedRun], shards: usize) -> Vec<Vec<PlannedRun>> {
    let k = shards.clamp(1, runs.len().max(1));
    let (size, extra) = (runs.len() / k, runs.len() % k);
    let mut out = Vec::with_capacity(k);
    let mut start = 0;
    for i in 0..k {
        let len = size + usize::from(i < extra);
        if len > 0 {
            out.push(runs[start..start + len].to_vec());
        }
        start += len;
    }
    out
}

/// Where one array task stands, as the scheduler reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskState {
    /// Waiting for a node (or being set up).
    Pending,
    Running,
    /// Ended with exit code 0.
    Completed,
    /// Ended otherwise: the scheduler's word for it (FAILED, CANCELLED, NODE_FAIL, TIMEOUT…).
    Ended(String),
    /// The scheduler no longer knows the task (finished long ago, or purged).
    Unknown,
}

impl TaskState {
    fn finished(&self) -> bool {
        !matches!(self, TaskState::Pending | TaskState::Running)
    }

    /// From a Slurm job state name.
    pub fn from_slurm(state: &str, exit_code: &str) -> TaskState {
        match state {
            "PENDING" | "CONFIGURING" | "REQUEUED" | "REQUEUE_HOLD" | "REQUEUE_FED"
            | "RESV_DEL_HOLD" | "SUSPENDED" => TaskState::Pending,
            "RUNNING" | "COMPLETING" | "STAGE_OUT" | "SIGNALING" => TaskState::Running,
            "COMPLETED" if exit_code == "0:0" || exit_code.is_empty() => TaskState::Completed,
            other => TaskState::Ended(format!("{other} (exit {exit_code})")),
        }
    }
}

/// What the scheduler answered about one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// Every task it still knows, by shard index (none for a job it has forgotten).
    Known(BTreeMap<usize, TaskState>),
    /// The controller did not answer (restarting, or unreachable): its words.
    NoAnswer(String),
}

/// What one array job asks of the cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    pub job_name: String,
    /// The program every task runs and its arguments; the task's shard index is appended.
    pub command: Vec<String>,
    /// Where Slurm writes each task's own output (`%A` job, `%a` task).
    pub output: PathBuf,
    pub partition: Option<String>,
    pub constraint: Option<String>,
    /// At most this many tasks at once, each holding a whole node.
    pub nodes: usize,
}

/// The workload manager, as far as lab needs it.
pub trait Scheduler {
    /// Submits one array job of the given shard indices; returns its job id.
    fn submit(&mut self, job: &Submission, tasks: &[usize]) -> Result<String>;
    /// The state of every task of `job` the scheduler still knows, by shard index, or that
    /// its controller did not answer.
    fn tasks(&mut self, job: &str) -> Result<Lookup>;
    /// Cancels every task of `job` that has not ended.
    fn cancel(&mut self, job: &str) -> Result<()>;
}

/// Slurm through its command-line tools.
pub struct Slurm;

impl Slurm {
    /// Slurm, when `sbatch` can be started here; otherwise an error saying what to do.
    pub fn find() -> Result<Slurm> {
        match Command::new("sbatch").arg("--version").output() {
            Ok(out) if out.status.success() => Ok(Slurm),
            Ok(out) => bail!(
                "`sbatch --version` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => bail!(
                "cannot start `sbatch` ({e}): Slurm's commands are not installed here\n  hint: run lab on the cluster's login node, install Slurm (scripts/slurm-cluster starts a one-node cluster on this machine), or use --on local"
            ),
        }
    }
}

/// `sbatch`'s `--array` list: `0-3` for a range, `1,4,5` otherwise, throttled with `%N`.
pub fn array_spec(tasks: &[usize], at_once: usize) -> String {
    let contiguous = tasks.windows(2).all(|w| w[1] == w[0] + 1);
    let list = match (tasks.first(), tasks.last()) {
        (Some(first), Some(last)) if contiguous && tasks.len() > 1 => format!("{first}-{last}"),
        _ => tasks
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(","),
    };
    format!("{list}%{}", at_once.max(1))
}

/// The batch script every task runs: the command, then the task's index.
const TASK_SCRIPT: &str = "#!/bin/sh\n# One shard of a lab session: lab run-shard SESSION INDEX.\nexec \"$@\" \"$SLURM_ARRAY_TASK_ID\"\n";

impl Scheduler for Slurm {
    fn submit(&mut self, job: &Submission, tasks: &[usize]) -> Result<String> {
        let mut cmd = Command::new("sbatch");
        cmd.arg("--parsable")
            .arg(format!("--job-name={}", job.job_name))
            .arg(format!("--array={}", array_spec(tasks, job.nodes)))
            .arg(format!("--output={}", job.output.display()))
            // lab resubmits a lost task itself, counted and said; Slurm requeueing it too would
            // run the shard twice.
            .args(["--nodes=1", "--ntasks=1", "--exclusive", "--no-requeue"]);
        if let Some(p) = &job.partition {
            cmd.arg(format!("--partition={p}"));
        }
        if let Some(c) = &job.constraint {
            cmd.arg(format!("--constraint={c}"));
        }
        let script = job.output.with_file_name("task.sh");
        std::fs::write(&script, TASK_SCRIPT)
            .with_context(|| format!("cannot write {}", script.display()))?;
        cmd.arg(&script).args(&job.command);
        let out = cmd
            .output()
            .context("cannot start `sbatch` (is Slurm installed here?)")?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            bail!(
                "sbatch refused the job ({}):\n{}",
                out.status,
                crate::tail(&String::from_utf8_lossy(&out.stderr), 20)
            );
        }
        // --parsable prints "JOBID" or "JOBID;CLUSTER".
        let id = stdout
            .trim()
            .split(';')
            .next()
            .unwrap_or_default()
            .to_string();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
            bail!("sbatch printed no job id: {:?}", stdout.trim());
        }
        Ok(id)
    }

    fn tasks(&mut self, job: &str) -> Result<Lookup> {
        let out = Command::new("scontrol")
            .args(["--oneliner", "show", "job", job])
            .output()
            .context("cannot start `scontrol`")?;
        if out.status.success() {
            return Ok(Lookup::Known(parse_scontrol(&String::from_utf8_lossy(
                &out.stdout,
            ))));
        }
        Ok(failed_lookup(&String::from_utf8_lossy(&out.stderr)))
    }

    fn cancel(&mut self, job: &str) -> Result<()> {
        let out = Command::new("scancel")
            .arg(job)
            .output()
            .context("cannot start `scancel`")?;
        if !out.status.success() {
            bail!(
                "scancel {job} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    }
}

/// What a failed `scontrol show job` means: a job Slurm has purged ("Invalid job id
/// specified") has no task left to tell of; anything else ("Unable to contact slurm
/// controller") is a controller that did not answer.
pub fn failed_lookup(stderr: &str) -> Lookup {
    if stderr.contains("Invalid job id") {
        Lookup::Known(BTreeMap::new())
    } else {
        Lookup::NoAnswer(stderr.trim().to_string())
    }
}

/// The tasks of `scontrol --oneliner show job`: one line per task, or per still-pending range
/// of tasks (`ArrayTaskId=2-5%1`).
pub fn parse_scontrol(text: &str) -> BTreeMap<usize, TaskState> {
    let mut tasks = BTreeMap::new();
    for line in text.lines() {
        let field = |key: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
        };
        let (Some(ids), Some(state)) = (field("ArrayTaskId"), field("JobState")) else {
            continue;
        };
        let state = TaskState::from_slurm(state, field("ExitCode").unwrap_or_default());
        for id in task_ids(ids) {
            tasks.insert(id, state.clone());
        }
    }
    tasks
}

/// `0-3,7,9-11:2%2` as the indices it names.
fn task_ids(spec: &str) -> Vec<usize> {
    let spec = spec.split('%').next().unwrap_or_default();
    let mut ids = Vec::new();
    for part in spec.split(',') {
        let (range, step) = part.split_once(':').unwrap_or((part, "1"));
        let step = step.parse::<usize>().unwrap_or(1).max(1);
        match range.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    ids.extend((a..=b).step_by(step));
                }
            }
            None => ids.extend(range.parse::<usize>().ok()),
        }
    }
    ids
}

/// What to do after a look at the tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    /// Shards whose task ended without completing them, to submit again.
    pub resubmit: Vec<usize>,
    /// Shards whose task ended without completing them after every resubmission.
    pub given_up: Vec<usize>,
    /// Shards still waiting for or running on a node.
    pub waiting: usize,
}

/// Decides, per shard still open, from its task's state and whether its folder holds every run:
/// a complete shard is done whatever Slurm says; a task that ended (or that Slurm forgot) with
/// its shard incomplete is lost, and submitted again while it has resubmissions left.
pub fn decide(
    open: &BTreeSet<usize>,
    states: &BTreeMap<usize, TaskState>,
    complete: &dyn Fn(usize) -> bool,
    resubmitted: &BTreeMap<usize, u32>,
    limit: u32,
) -> Decision {
    let mut d = Decision::default();
    for &shard in open {
        if complete(shard) {
            continue;
        }
        let state = states.get(&shard).unwrap_or(&TaskState::Unknown);
        if !state.finished() {
            d.waiting += 1;
        } else if resubmitted.get(&shard).copied().unwrap_or(0) < limit {
            d.resubmit.push(shard);
        } else {
            d.given_up.push(shard);
        }
    }
    d
}

/// How watching a job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watched {
    /// Every shard holds every run it was given.
    Complete,
    /// These shards stayed incomplete after every resubmission; the others are complete.
    GivenUp(Vec<usize>),
    /// A signal asked lab to stop; the jobs were cancelled.
    Interrupted,
}

/// What the watch needs to know about the shards on disk and to tell the user.
pub trait Shards {
    /// Whether shard `index` holds every run it was given.
    fn complete(&self, index: usize) -> bool;
    /// How many runs all shards hold so far.
    fn finished_runs(&self) -> usize;
    /// Says something to the user (a changed count, a resubmission).
    fn note(&self, line: &str);
    /// Keeps the ids of every job submitted so far where a later `--resume` finds them,
    /// before the watch goes on: a lab killed while its job runs must not lose them.
    fn submitted(&self, jobs: &[String]) -> Result<()>;
}

/// Submits `tasks` (when there are any) as one array job, and watches it and the tasks of
/// earlier jobs lab `adopted` (shard index → job id, found still pending or running on
/// `--resume`) until every shard is complete, lost for good, or the user stops lab (which
/// cancels the jobs). Every job id submitted is pushed to `jobs` and handed to
/// [`Shards::submitted`] as soon as it exists.
pub fn run_array(
    scheduler: &mut dyn Scheduler,
    job: &Submission,
    tasks: &[usize],
    adopted: BTreeMap<usize, String>,
    shards: &dyn Shards,
    jobs: &mut Vec<String>,
) -> Result<Watched> {
    super::interrupt::install();
    let mut job_of = adopted;
    if !tasks.is_empty() {
        let first = scheduler.submit(job, tasks)?;
        shards.note(&format!(
            "submitted job {first}: {} task{}",
            tasks.len(),
            if tasks.len() == 1 { "" } else { "s" }
        ));
        jobs.push(first.clone());
        job_of.extend(tasks.iter().map(|&t| (t, first.clone())));
    }
    let watched = shards
        .submitted(jobs)
        .and_then(|()| watch(scheduler, job, shards, jobs, job_of));
    if watched.is_err() {
        // lab can no longer follow the jobs: they must not go on measuring unwatched.
        cancel_all(scheduler, jobs, shards);
    }
    watched
}

/// The shards whose task is still pending or running in one of `jobs` (oldest first; a
/// later job's task for a shard supersedes an earlier one's), by index, with that job: what
/// `--resume` adopts. A controller that does not answer is an error: lab cannot tell which
/// tasks still run, and must neither leave them unwatched nor start a second task beside one.
pub fn live_tasks(
    scheduler: &mut dyn Scheduler,
    jobs: &[String],
) -> Result<BTreeMap<usize, String>> {
    let mut live = BTreeMap::new();
    for job in jobs {
        let tasks = match scheduler.tasks(job)? {
            Lookup::Known(tasks) => tasks,
            Lookup::NoAnswer(why) => bail!(
                "cannot tell whether job {job} still runs: Slurm's controller does not answer ({why})\n  hint: run the same command again once `squeue` answers"
            ),
        };
        for (shard, state) in tasks {
            if state.finished() {
                live.remove(&shard);
            } else {
                live.insert(shard, job.clone());
            }
        }
    }
    Ok(live)
}

/// Looks at the tasks every [`POLL`] until every shard is complete or lost for good.
fn watch(
    scheduler: &mut dyn Scheduler,
    job: &Submission,
    shards: &dyn Shards,
    jobs: &mut Vec<String>,
    mut job_of: BTreeMap<usize, String>,
) -> Result<Watched> {
    let mut open: BTreeSet<usize> = job_of.keys().copied().collect();
    let total = open.len();
    let mut resubmitted: BTreeMap<usize, u32> = BTreeMap::new();
    let mut last_line = String::new();
    let mut silence = Silence::default();
    loop {
        if super::interrupt::requested() {
            cancel_all(scheduler, jobs, shards);
            return Ok(Watched::Interrupted);
        }
        let Some(states) = silence.heard(states_of(scheduler, &job_of)?, shards)? else {
            pause(POLL);
            continue;
        };
        let d = decide(
            &open,
            &states,
            &|i| shards.complete(i),
            &resubmitted,
            RESUBMISSIONS,
        );
        open.retain(|i| !shards.complete(*i));
        let line = status_line(&open, &states, shards.finished_runs(), total);
        if line != last_line {
            shards.note(&line);
            last_line = line;
        }
        if !d.resubmit.is_empty() {
            let again = scheduler.submit(job, &d.resubmit)?;
            shards.note(&resubmitted_words(&d.resubmit, &again, &states));
            jobs.push(again.clone());
            shards.submitted(jobs)?;
            for &i in &d.resubmit {
                *resubmitted.entry(i).or_insert(0) += 1;
                job_of.insert(i, again.clone());
            }
        } else if d.waiting == 0 {
            return Ok(if d.given_up.is_empty() {
                Watched::Complete
            } else {
                Watched::GivenUp(d.given_up)
            });
        }
        pause(POLL);
    }
}

/// "resubmitted shards 2, 5 as job 1234 (lost: 2 failed, 5 timed out)".
fn resubmitted_words(shards: &[usize], again: &str, states: &BTreeMap<usize, TaskState>) -> String {
    format!(
        "resubmitted shard{} {} as job {again} (lost: {})",
        if shards.len() == 1 { "" } else { "s" },
        list(shards),
        shards
            .iter()
            .map(|i| format!(
                "{i} {}",
                describe(states.get(i).unwrap_or(&TaskState::Unknown))
            ))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Each shard's task state, asking the scheduler once per job; the controller's words when
/// it did not answer about one of them.
fn states_of(scheduler: &mut dyn Scheduler, job_of: &BTreeMap<usize, String>) -> Result<Lookup> {
    let jobs: BTreeSet<&String> = job_of.values().collect();
    let mut states = BTreeMap::new();
    for job in jobs {
        let tasks = match scheduler.tasks(job)? {
            Lookup::Known(tasks) => tasks,
            silent @ Lookup::NoAnswer(_) => return Ok(silent),
        };
        for (shard, _) in job_of.iter().filter(|(_, j)| *j == job) {
            if let Some(s) = tasks.get(shard) {
                states.insert(*shard, s.clone());
            }
        }
    }
    Ok(Lookup::Known(states))
}

/// Since when the controller has not answered, to say so once, say when it answers again,
/// and give up after [`CONTROLLER_PATIENCE`].
#[derive(Default)]
struct Silence {
    since: Option<std::time::Instant>,
}

impl Silence {
    /// The states of a look that was answered; `None` (said once) while the controller is
    /// silent; an error once it has been silent for longer than lab waits.
    fn heard(
        &mut self,
        look: Lookup,
        shards: &dyn Shards,
    ) -> Result<Option<BTreeMap<usize, TaskState>>> {
        match (look, self.since) {
            (Lookup::Known(states), None) => Ok(Some(states)),
            (Lookup::Known(states), Some(since)) => {
                shards.note(&format!(
                    "Slurm's controller answers again after {:.0} s",
                    since.elapsed().as_secs_f64()
                ));
                self.since = None;
                Ok(Some(states))
            }
            (Lookup::NoAnswer(why), None) => {
                shards.note(&format!(
                    "Slurm's controller does not answer ({why}); lab waits for it and resubmits nothing meanwhile"
                ));
                self.since = Some(std::time::Instant::now());
                Ok(None)
            }
            (Lookup::NoAnswer(why), Some(since)) if since.elapsed() > CONTROLLER_PATIENCE => bail!(
                "Slurm's controller has not answered for {} s ({why})",
                since.elapsed().as_secs()
            ),
            (Lookup::NoAnswer(_), Some(_)) => Ok(None),
        }
    }
}

/// "job: 2 pending, 1 running, 3 done; 41 runs finished".
fn status_line(
    open: &BTreeSet<usize>,
    states: &BTreeMap<usize, TaskState>,
    runs: usize,
    total: usize,
) -> String {
    let count = |want: &TaskState| {
        open.iter()
            .filter(|i| states.get(i).is_some_and(|s| s == want))
            .count()
    };
    let (pending, running) = (count(&TaskState::Pending), count(&TaskState::Running));
    format!(
        "tasks: {pending} pending, {running} running, {} done; {runs} runs finished",
        total.saturating_sub(pending + running)
    )
}

fn describe(state: &TaskState) -> String {
    match state {
        TaskState::Ended(why) => why.clone(),
        TaskState::Unknown => "unknown to Slurm".into(),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn list(indices: &[usize]) -> String {
    indices
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn cancel_all(scheduler: &mut dyn Scheduler, jobs: &[String], shards: &dyn Shards) {
    for job in jobs {
        match scheduler.cancel(job) {
            Ok(()) => shards.note(&format!("cancelled job {job}")),
            Err(e) => shards.note(&format!("could not cancel job {job}: {e:#}")),
        }
    }
}

/// Sleeps for `total`, waking early when a signal asks lab to stop.
fn pause(total: Duration) {
    let step = Duration::from_millis(100);
    let mut slept = Duration::ZERO;
    while slept < total && !super::interrupt::requested() {
        std::thread::sleep(step);
        slept += step;
    }
}

#[cfg(test)]
mod tests;
