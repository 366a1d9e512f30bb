//! `lab run --on slurm` and `lab run-shard`: a session planned, built and stored here, its runs
//! measured on cluster nodes. The plan is split into shards of the shuffled order, one Slurm
//! array task each; every task calibrates on its node and runs its shard exactly as a local
//! session runs, into its own shard folder; lab then merges the shards into the session.
//!
//! Each job id is kept in the session's manifest as soon as Slurm gives it. A `--resume` asks
//! Slurm about those jobs first and adopts every task still pending or running: lab watches it
//! again instead of submitting its runs a second time, so a lab that was killed never leaves a
//! job measuring unwatched, nor runs a shard twice at once.

use crate::error::{Exit, LabError, Result};
use lab_config::plan::{Plan, PlannedRun};
use lab_config::{self as config, Experiment};
use lab_exec::slurm::{self as cluster, Slurm, Submission, Watched};
use lab_exec::{self as exec, Ending, ProcessRunner, Progress};
use lab_store::{
    self as store, Cluster, Manifest, Node, Sealed, SessionWriter, ShardSet, StoredSession,
};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Where `lab run` measures.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Engine {
    /// Here, one run after another.
    #[default]
    Local,
    /// On the nodes of a Slurm cluster.
    Slurm(SlurmOptions),
}

/// What `--on slurm` asks of the cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmOptions {
    pub partition: Option<String>,
    pub constraint: Option<String>,
    /// Shards to split the plan into, and at most this many nodes at once.
    pub nodes: usize,
}

/// The name the engine is recorded under in the manifest.
const ENGINE: &str = "slurm";

/// Before anything is built: Slurm's commands must be here.
pub(super) fn available() -> Result<()> {
    Slurm::find()
        .map(|_| ())
        .map_err(|e| LabError::Usage(format!("{e:#}")))
}

/// Where a session's runs go to the cluster: the experiment they belong to, what `--on slurm`
/// asks, and the progress shown while they run.
pub(super) struct ClusterRun<'a> {
    pub exp_dir: &'a Path,
    pub opts: &'a SlurmOptions,
    pub progress: &'a Progress,
}

impl ClusterRun<'_> {
    /// Measures `todo` on the cluster, then merges what the shards hold into `session`. Runs
    /// the session already holds (merged before an interruption) are not submitted again, nor
    /// are those of a shard whose task still runs (adopted, and watched to its end).
    pub(super) fn execute(
        &self,
        todo: &[PlannedRun],
        session: &mut SessionWriter,
        manifest: &mut Manifest,
    ) -> Result<Ending> {
        let experiment_dir = absolute(self.exp_dir)?;
        let mut set = ShardSet::read_or_new(&session.dir, &experiment_dir)?;
        set.experiment_dir = experiment_dir;
        set.write(&session.dir)?;
        let adopted = self.adopt(&set, &session.dir, manifest)?;
        let held = merge(session, manifest, self.progress)?;
        let wanted: Vec<&PlannedRun> = todo.iter().filter(|r| !held.contains(&r.id)).collect();
        let watched_already: BTreeSet<&str> = adopted
            .keys()
            .flat_map(|&i| &set.shards[i])
            .map(String::as_str)
            .collect();
        let remaining: Vec<PlannedRun> = wanted
            .iter()
            .filter(|r| !watched_already.contains(r.id.as_str()))
            .map(|r| (*r).clone())
            .collect();
        if remaining.is_empty() && adopted.is_empty() {
            return Ok(Ending::Complete);
        }
        let watched = self.submit(&remaining, adopted, &mut set, session, manifest)?;
        let held = merge(session, manifest, self.progress)?;
        let missing: Vec<&str> = wanted
            .iter()
            .filter(|r| !held.contains(&r.id))
            .map(|r| r.id.as_str())
            .collect();
        match watched {
            Watched::Interrupted => Ok(Ending::Interrupted),
            Watched::Complete if missing.is_empty() => Ok(Ending::Complete),
            Watched::Complete | Watched::GivenUp(_) => {
                manifest.end(false);
                session.finish(manifest)?;
                Err(self.gave_up(&missing, wanted.len(), &session.dir))
            }
        }
    }

    /// The shards whose task, in a job this session submitted before, is still pending or
    /// running (by index, with its job), which lab watches again; the torn parts of every
    /// other shard, which no task writes any more, are set aside and said.
    fn adopt(
        &self,
        set: &ShardSet,
        session_dir: &Path,
        manifest: &Manifest,
    ) -> Result<BTreeMap<usize, String>> {
        let jobs = manifest
            .cluster
            .as_ref()
            .map_or_else(Vec::new, |c| c.jobs.clone());
        if jobs.is_empty() || set.shards.is_empty() {
            return Ok(BTreeMap::new());
        }
        let live = cluster::live_tasks(&mut Slurm, &jobs).map_err(|e| {
            LabError::Other(anyhow::anyhow!(
                "{e:#}\n  session {} is kept as it is",
                session_dir.display()
            ))
        })?;
        let adopted: BTreeMap<usize, String> = live
            .into_iter()
            .filter(|(i, _)| {
                set.shards
                    .get(*i)
                    .is_some_and(|ids| !store::shard_complete(session_dir, *i, ids))
            })
            .collect();
        for (job, shards) in by_job(&adopted) {
            self.progress.note(&format!(
                "job {job} still runs shard{} {shards} of this session: lab watches it again instead of submitting those runs anew",
                if shards.contains(',') { "s" } else { "" }
            ));
        }
        for index in (0..set.shards.len()).filter(|i| !adopted.contains_key(i)) {
            for tail in store::set_aside_torn(&store::shard_dir(session_dir, index))? {
                self.progress
                    .note(&format!("shard {index}: {}", tail.describe()));
            }
        }
        Ok(adopted)
    }

    /// Splits `remaining` into new shards of `set`, submits them as one array job and
    /// watches it, with the `adopted` tasks of earlier jobs, to its end; a job the cluster
    /// refused leaves the session incomplete.
    fn submit(
        &self,
        remaining: &[PlannedRun],
        adopted: BTreeMap<usize, String>,
        set: &mut ShardSet,
        session: &mut SessionWriter,
        manifest: &mut Manifest,
    ) -> Result<Watched> {
        let shards: Vec<Vec<String>> = cluster::shards(remaining, self.opts.nodes)
            .into_iter()
            .map(|runs| runs.into_iter().map(|r| r.id).collect())
            .collect();
        let tasks = set.add(shards);
        set.write(&session.dir)?;
        let submission = submission(&session.dir, &manifest.experiment, self.opts)?;
        let mut jobs = manifest
            .cluster
            .as_ref()
            .map_or_else(Vec::new, |c| c.jobs.clone());
        let watching: Vec<usize> = adopted.keys().chain(&tasks).copied().collect();
        let dir = session.dir.clone();
        let watched = {
            let watch = Watch {
                dir: &dir,
                set,
                tasks: &watching,
                progress: self.progress,
                record: RefCell::new((&mut *session, &mut *manifest)),
            };
            cluster::run_array(&mut Slurm, &submission, &tasks, adopted, &watch, &mut jobs)
        };
        record_jobs(manifest, jobs);
        watched.or_else(|e| {
            manifest.end(false);
            session.finish(manifest)?;
            Err(LabError::Other(anyhow::anyhow!(
                "{e:#}\n  session {} is kept incomplete\n  hint: `lab run {} --on slurm --resume` submits its runs again",
                session.dir.display(),
                self.exp_dir.display()
            )))
        })
    }

    /// The error for runs still missing after the cluster gave up on them.
    fn gave_up(&self, missing: &[&str], submitted: usize, session_dir: &Path) -> LabError {
        LabError::Other(anyhow::anyhow!(
            "{} of {} runs did not finish on the cluster after {} resubmissions: {}\n  each shard's Slurm output is in {}; session {} is kept incomplete\n  hint: `lab run {} --on slurm --resume` submits the missing runs again",
            missing.len(),
            submitted,
            cluster::RESUBMISSIONS,
            abbreviated(missing),
            session_dir.join(store::SHARDS).display(),
            session_dir.display(),
            self.exp_dir.display()
        ))
    }
}

/// The Slurm job that runs this session's shards with the lab that is running now.
fn submission(session_dir: &Path, experiment: &str, opts: &SlurmOptions) -> Result<Submission> {
    let lab = std::env::current_exe()
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot find lab's own executable: {e}")))?;
    let name: String = experiment
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect();
    Ok(Submission {
        job_name: format!("lab-{name}"),
        command: vec![
            lab.display().to_string(),
            "run-shard".into(),
            absolute(session_dir)?.display().to_string(),
        ],
        output: absolute(session_dir)?
            .join(store::SHARDS)
            .join("slurm-%A_%a.out"),
        partition: opts.partition.clone(),
        constraint: opts.constraint.clone(),
        nodes: opts.nodes,
    })
}

/// The adopted shards' indices by job, as a list: "4" or "0, 2".
fn by_job(adopted: &BTreeMap<usize, String>) -> BTreeMap<&str, String> {
    let mut jobs: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (shard, job) in adopted {
        jobs.entry(job.as_str())
            .or_default()
            .push(shard.to_string());
    }
    jobs.into_iter().map(|(j, s)| (j, s.join(", "))).collect()
}

/// Merges the shards' new runs into the session and records their nodes; says which runs
/// were left out as torn; returns the ids of every run the session now holds.
fn merge(
    session: &mut SessionWriter,
    manifest: &mut Manifest,
    progress: &Progress,
) -> Result<BTreeSet<String>> {
    let stored = store::load_session(&session.dir)?;
    let mut held: BTreeSet<String> = stored.runs.iter().map(|r| r.run_id.to_string()).collect();
    let merged = store::merge_shards(session, &held)?;
    for line in &merged.torn {
        progress.note(line);
    }
    let stored = store::load_session(&session.dir)?;
    held = stored.runs.iter().map(|r| r.run_id.to_string()).collect();
    let cluster = manifest.cluster.get_or_insert_with(|| Cluster {
        engine: ENGINE.into(),
        jobs: Vec::new(),
        nodes: Vec::new(),
    });
    for node in merged.nodes {
        if !cluster.nodes.iter().any(|n| n.name == node.name) {
            cluster.nodes.push(node);
        }
    }
    cluster.nodes.sort_by(|a, b| a.name.cmp(&b.name));
    manifest.calibration = coarsest(&cluster.nodes).or(manifest.calibration.clone());
    Ok(held)
}

/// The calibration the session's runs are judged against: of the nodes', the one with the
/// slowest spawn, so that no run is timed more finely than the coarsest node allows.
fn coarsest(nodes: &[Node]) -> Option<store::Calibration> {
    nodes
        .iter()
        .filter_map(|n| n.calibration.clone())
        .max_by_key(|c| (c.spawn_median_ns, c.spawn_iqr_ns))
}

fn record_jobs(manifest: &mut Manifest, jobs: Vec<String>) {
    let cluster = manifest.cluster.get_or_insert_with(|| Cluster {
        engine: ENGINE.into(),
        jobs: Vec::new(),
        nodes: Vec::new(),
    });
    cluster.jobs = jobs;
}

/// The first ten ids, and how many more.
fn abbreviated(ids: &[&str]) -> String {
    let shown = ids.iter().take(10).copied().collect::<Vec<_>>().join(", ");
    match ids.len() {
        n if n > 10 => format!("{shown} and {} more", n - 10),
        _ => shown,
    }
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path)
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot resolve {}: {e}", path.display())))
}

/// The shards on disk, as the watch over the job sees them, and the session whose manifest
/// keeps the job ids.
struct Watch<'a> {
    dir: &'a Path,
    set: &'a ShardSet,
    tasks: &'a [usize],
    progress: &'a Progress,
    record: RefCell<(&'a mut SessionWriter, &'a mut Manifest)>,
}

impl cluster::Shards for Watch<'_> {
    fn complete(&self, index: usize) -> bool {
        self.set
            .shards
            .get(index)
            .is_some_and(|ids| store::shard_complete(self.dir, index, ids))
    }

    fn finished_runs(&self) -> usize {
        self.tasks
            .iter()
            .map(|&i| store::shard_rows(self.dir, i))
            .sum()
    }

    fn note(&self, line: &str) {
        self.progress.note(line);
    }

    fn submitted(&self, jobs: &[String]) -> anyhow::Result<()> {
        let mut record = self.record.borrow_mut();
        let (session, manifest) = &mut *record;
        record_jobs(manifest, jobs.to_vec());
        session.record(manifest)
    }
}

/// `lab run-shard SESSION INDEX`, run by a Slurm task on its node: calibrates there, then runs
/// the shard's runs one process each into `SESSION/shards/INDEX/`, continuing a folder a lost
/// task left behind. Returns how lab ends.
pub fn run_shard(session_dir: &Path, index: usize) -> Result<Exit> {
    let stored = store::load_session(session_dir)?;
    let set = ShardSet::read(session_dir)?;
    let Some(ids) = set.shards.get(index) else {
        return Err(LabError::Usage(format!(
            "session {} has no shard {index} (it has {})",
            session_dir.display(),
            set.shards.len()
        )));
    };
    let exp = shard_experiment(&stored, &set)?;
    let wanted: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
    let runs: Vec<PlannedRun> = stored
        .plan
        .runs
        .iter()
        .filter(|r| wanted.contains(r.id.as_str()))
        .cloned()
        .collect();
    let node = node_name();
    let dir = store::shard_dir(session_dir, index);
    let mut runner = ProcessRunner;
    let mut shard = if dir.join(store::MANIFEST).is_file() {
        reopen_shard(&dir, &runs, &node)?
    } else {
        new_shard(dir.clone(), &stored, &exp, runs, &node, &mut runner)?
    };
    shard.writer.on_node(&node);
    let progress = Progress::new(stored.manifest.planned_runs, false);
    progress.note(&format!(
        "shard {index} on {node}: {} runs to go in {}",
        shard.todo.len(),
        dir.display()
    ));
    let ending = exec::execute(&exp, &shard.todo, &mut shard.writer, &mut runner, &progress)?;
    exec::restore_signals();
    progress.done();
    ending.record(&mut shard.manifest);
    shard.writer.finish(&shard.manifest)?;
    match ending {
        Ending::Complete => Ok(Exit::Ok),
        Ending::Interrupted => Ok(Exit::Signal(exec::interrupt_signal())),
        Ending::Damaged(why) => Err(LabError::Other(anyhow::anyhow!("shard {index}: {why}"))),
    }
}

/// One shard's folder, open for its runs: its writer and record, and the runs still to go.
struct Shard {
    writer: SessionWriter,
    manifest: Manifest,
    todo: Vec<PlannedRun>,
}

/// The experiment a session's shards run: its sealed lab.toml.
fn shard_experiment(stored: &StoredSession, set: &ShardSet) -> Result<Experiment> {
    let sealed = sealed_of(stored)?;
    let file = stored.dir.join(store::SEALED).join(config::FILE_NAME);
    let exp = config::parse(
        &sealed.lab_toml,
        &file,
        &set.experiment_dir,
        stored.manifest.profile.as_deref(),
    )?;
    Ok(exp)
}

/// The files a session sealed, which its shards run with.
fn sealed_of(stored: &StoredSession) -> Result<&Sealed> {
    stored.sealed.as_ref().ok_or_else(|| {
        LabError::Usage(format!(
            "session {} keeps no sealed lab.toml to run its shards with",
            stored.dir.display()
        ))
    })
}

/// A shard folder created for `runs` on this node, calibrated here.
fn new_shard(
    dir: PathBuf,
    stored: &StoredSession,
    exp: &Experiment,
    runs: Vec<PlannedRun>,
    node: &str,
    runner: &mut dyn exec::Runner,
) -> Result<Shard> {
    let manifest = shard_manifest(&stored.manifest, runs.len(), node, runner);
    let plan = Plan {
        runs: runs.clone(),
        ..stored.plan.clone()
    };
    let params = exp.params.iter().map(|p| p.name.clone()).collect();
    let writer = SessionWriter::create(dir, &manifest, &plan, params, sealed_of(stored)?)?;
    Ok(Shard {
        writer,
        manifest,
        todo: runs,
    })
}

/// A shard folder a lost task left: torn tails set aside, the node added to its record, and
/// the runs it does not hold yet.
fn reopen_shard(dir: &Path, runs: &[PlannedRun], node: &str) -> Result<Shard> {
    for tail in store::set_aside_torn(dir)? {
        eprintln!("note: {}: {}", dir.display(), tail.describe());
    }
    let shard = store::load_session(dir)?;
    let done: BTreeSet<&str> = shard.runs.iter().map(|r| r.run_id.as_str()).collect();
    let todo = runs
        .iter()
        .filter(|r| !done.contains(r.id.as_str()))
        .cloned()
        .collect();
    let mut manifest = shard.manifest.clone();
    manifest.resumed += 1;
    if let Some(cluster) = manifest.cluster.as_mut()
        && !cluster.nodes.iter().any(|n| n.name == node)
    {
        cluster.nodes.push(this_node(node, &mut ProcessRunner));
    }
    Ok(Shard {
        writer: SessionWriter::reopen(dir.to_path_buf())?,
        manifest,
        todo,
    })
}

/// A shard's own record: the session's, with this node's machine and calibration.
fn shard_manifest(
    session: &Manifest,
    runs: usize,
    node: &str,
    runner: &mut dyn exec::Runner,
) -> Manifest {
    let this = this_node(node, runner);
    Manifest {
        host: this.host.clone(),
        calibration: this.calibration.clone(),
        planned_runs: runs,
        load_before: store::load_average(),
        started_utc: store::utc_timestamp(store::now_unix_ms()),
        finished_utc: None,
        complete: false,
        resumed: 0,
        cluster: Some(Cluster {
            engine: ENGINE.into(),
            jobs: std::env::var("SLURM_ARRAY_JOB_ID").into_iter().collect(),
            nodes: vec![this],
        }),
        ..session.clone()
    }
}

/// This node: its machine, and a calibration measured on it.
fn this_node(name: &str, runner: &mut dyn exec::Runner) -> Node {
    Node {
        name: name.to_string(),
        host: store::host(),
        calibration: Some(exec::calibrate(runner, &std::env::temp_dir())),
    }
}

/// The node's name as Slurm knows it, else the host name.
fn node_name() -> String {
    std::env::var("SLURMD_NODENAME")
        .ok()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(store::host_name)
}
