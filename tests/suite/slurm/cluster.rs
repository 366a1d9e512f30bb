//! The Slurm cluster the tests in `slurm.rs` share: found or started with
//! scripts/slurm-cluster, driven through Slurm's own commands, put back in its normal state
//! after each fault, and lab started beside it and watched while its job runs.

use crate::common::{Project, csv_rows};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The tests share one cluster, and a fault one test causes must not reach another's job.
static SERIAL: Mutex<()> = Mutex::new(());

/// Where scripts/slurm-cluster keeps its configuration when nothing else says.
const DEFAULT_SLURM_DIR: &str = "/tmp/lab-slurm";

/// The nodes scripts/slurm-cluster starts.
pub(super) const NODES: usize = 3;

/// The cluster a test uses, held for that test alone; stopped at the end if the test started
/// it.
pub(super) struct Cluster {
    pub conf: Option<PathBuf>,
    started_here: bool,
    _serial: MutexGuard<'static, ()>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.started_here {
            let _ = self.script(&["stop"]);
        }
    }
}

fn script_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-cluster")
}

/// The SLURM_CONF clients need: the environment's, else the script's, else Slurm's default.
fn slurm_conf() -> Option<PathBuf> {
    if let Some(conf) = std::env::var_os("SLURM_CONF") {
        return Some(conf.into());
    }
    let dir = std::env::var_os("SLURM_DIR").map_or_else(|| DEFAULT_SLURM_DIR.into(), PathBuf::from);
    Some(dir.join("slurm.conf")).filter(|p| p.is_file())
}

/// The nodes `sinfo` shows taking work (idle, mixed or allocated), by name.
fn nodes_up(conf: &Option<PathBuf>) -> Vec<String> {
    let mut cmd = Command::new("sinfo");
    cmd.args(["-h", "-N", "-o", "%N %t"]);
    if let Some(c) = conf {
        cmd.env("SLURM_CONF", c);
    }
    let Ok(out) = cmd.output() else {
        return Vec::new();
    };
    let mut up: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, state)| ["idle", "mix", "alloc"].contains(state))
        .map(|(name, _)| name.to_string())
        .collect();
    up.sort();
    up.dedup();
    up
}

/// The cluster to run on, or `None` (with the reason printed) where the test may skip.
pub(super) fn cluster() -> Option<Cluster> {
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let conf = slurm_conf();
    if !nodes_up(&conf).is_empty() {
        return Some(Cluster {
            conf,
            started_here: false,
            _serial: serial,
        });
    }
    let root = unsafe { libc::geteuid() } == 0;
    if !root && std::env::var_os("CI").is_none() {
        eprintln!(
            "skipping tests/slurm.rs: no Slurm cluster answers here and this is neither root nor CI (scripts/slurm-cluster start brings one up)"
        );
        return None;
    }
    let status = Command::new(script_path())
        .arg("start")
        .status()
        .expect("scripts/slurm-cluster runs");
    assert!(status.success(), "scripts/slurm-cluster start failed");
    let conf = slurm_conf();
    assert_eq!(
        nodes_up(&conf).len(),
        NODES,
        "the cluster started but sinfo does not show its nodes taking work"
    );
    Some(Cluster {
        conf,
        started_here: true,
        _serial: serial,
    })
}

impl Cluster {
    /// The nodes taking work now, by name.
    pub(super) fn nodes(&self) -> Vec<String> {
        nodes_up(&self.conf)
    }

    /// scripts/slurm-cluster ARGS for this cluster; it must succeed.
    pub(super) fn script(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(script_path());
        cmd.args(args);
        if let Some(dir) = self.conf.as_deref().and_then(Path::parent) {
            cmd.env("SLURM_DIR", dir);
        }
        let out = cmd.output().expect("scripts/slurm-cluster runs");
        assert!(
            out.status.success(),
            "scripts/slurm-cluster {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// A Slurm command's standard output; it must succeed.
    pub(super) fn slurm(&self, program: &str, args: &[&str]) -> String {
        let mut cmd = Command::new(program);
        cmd.args(args);
        if let Some(c) = &self.conf {
            cmd.env("SLURM_CONF", c);
        }
        let out = cmd.output().expect("a Slurm command runs");
        assert!(
            out.status.success(),
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Each task of `job` squeue still lists, by array index, with its node and state.
    pub(super) fn queue(&self, job: &str) -> BTreeMap<String, (String, String)> {
        self.slurm("squeue", &["-h", "-j", job, "-o", "%K %N %T"])
            .lines()
            .filter_map(|l| {
                let mut words = l.split_whitespace();
                let task = words.next()?.to_string();
                let node = words.next().unwrap_or_default().to_string();
                let state = words.next().unwrap_or(&node).to_string();
                Some((task, (node, state)))
            })
            .collect()
    }

    /// The cluster as scripts/slurm-cluster leaves it: every daemon running and every node
    /// taking work. Faults are undone this way whether their test passed or not.
    pub(super) fn restore(&self) -> Restore<'_> {
        Restore(self)
    }

    /// Whether the script runs this cluster (it can then kill its nodes and controller).
    pub(super) fn ours(&self) -> bool {
        self.conf
            .as_deref()
            .and_then(Path::parent)
            .is_some_and(|d| d.join("munge").is_dir())
            && self.nodes().len() == NODES
    }

    /// `lab ARGS` in the project, talking to this cluster, whatever its exit code.
    pub(super) fn lab(&self, project: &Project, args: &[&str]) -> Output {
        self.command(project, args).output().expect("lab runs")
    }

    /// `lab ARGS` started in the project, its stderr going to `lab.err` in the project.
    pub(super) fn spawn_lab(&self, project: &Project, args: &[&str]) -> Child {
        let err = std::fs::File::create(project.path("lab.err")).expect("lab.err");
        self.command(project, args)
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .expect("lab starts")
    }

    fn command(&self, project: &Project, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lab"));
        cmd.args(args)
            .current_dir(project.root())
            .env("NO_COLOR", "1");
        if let Some(c) = &self.conf {
            cmd.env("SLURM_CONF", c);
        }
        cmd
    }
}

/// Puts the cluster back in its normal state when dropped.
pub(super) struct Restore<'a>(&'a Cluster);

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        // No assertion here: a panic while a failed test unwinds would abort the suite.
        let mut cmd = Command::new(script_path());
        cmd.arg("start");
        if let Some(dir) = self.0.conf.as_deref().and_then(Path::parent) {
            cmd.env("SLURM_DIR", dir);
        }
        let _ = cmd.output();
    }
}

/// Polls `ready` every 50 ms until it holds; fails the test after `limit`.
pub(super) fn wait_until(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The only session of `experiment` in the project, once it exists.
pub(super) fn the_session(project: &Project, experiment: &str) -> Option<PathBuf> {
    project.sessions(experiment).pop()
}

/// The job ids the session's manifest records.
pub(super) fn recorded_jobs(session: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(session.join("manifest.json")) else {
        return Vec::new();
    };
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    manifest["cluster"]["jobs"]
        .as_array()
        .map(|jobs| {
            jobs.iter()
                .filter_map(|j| j.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Shard `index`'s folder in the session.
pub(super) fn shard(session: &Path, index: usize) -> PathBuf {
    session.join("shards").join(format!("{index:03}"))
}

/// The complete rows shard `index` holds so far (a row being written is not counted).
pub(super) fn shard_rows(session: &Path, index: usize) -> usize {
    std::fs::read(shard(session, index).join("runs.csv"))
        .map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
        .saturating_sub(1)
}

/// The ids of the session's planned runs.
pub(super) fn planned(session: &Path) -> Vec<String> {
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("plan.json")).unwrap()).unwrap();
    plan["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

/// The session's rows, after checking that they hold every planned run exactly once.
pub(super) fn each_planned_run_once(session: &Path) -> Vec<BTreeMap<String, String>> {
    let rows = csv_rows(&session.join("runs.csv"));
    let mut stored: Vec<String> = rows.iter().map(|r| r["run_id"].clone()).collect();
    let mut wanted = planned(session);
    stored.sort();
    wanted.sort();
    assert_eq!(stored, wanted, "the session holds each planned run once");
    rows
}

/// How many of `rows` ran on each node.
pub(super) fn rows_per_node(rows: &[BTreeMap<String, String>]) -> BTreeMap<String, usize> {
    let mut per = BTreeMap::new();
    for r in rows {
        *per.entry(r["node"].clone()).or_insert(0) += 1;
    }
    per
}

/// The session's manifest.
pub(super) fn manifest(session: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(session.join("manifest.json")).unwrap()).unwrap()
}

/// Sets the fixture `experiment`'s repetitions, for a job long enough to hit mid-way.
pub(super) fn repetitions(project: &Project, experiment: &str, n: u32) {
    let toml = project.path(&format!("experiments/{experiment}/lab.toml"));
    let text = std::fs::read_to_string(&toml).unwrap();
    let changed: String = text
        .lines()
        .map(|l| {
            if l.starts_with("repetitions") {
                format!("repetitions = {n}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert_ne!(text, changed, "{experiment} sets its repetitions");
    std::fs::write(toml, changed).unwrap();
}

/// What lab started with [`Cluster::spawn_lab`] wrote on stderr.
pub(super) fn spawned_stderr(project: &Project) -> String {
    std::fs::read_to_string(project.path("lab.err")).unwrap_or_default()
}
