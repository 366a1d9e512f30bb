//! `lab run --on slurm` end to end on a real one-node Slurm cluster: the merged session holds
//! exactly the plan's runs, each once and each naming its node, and its verdicts are those of
//! a local run of the same deterministic fixture. Where Slurm is missing the test starts a
//! cluster with scripts/slurm-cluster (as root, or in CI); elsewhere it says why it skips.

use crate::common;
use crate::common::exit_of;
use lab::Exit;

use common::{Project, csv_rows};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Where scripts/slurm-cluster keeps its configuration when nothing else says.
const DEFAULT_SLURM_DIR: &str = "/tmp/lab-slurm";

/// The cluster the test uses, stopped at the end if the test started it.
struct Cluster {
    conf: Option<PathBuf>,
    started_here: bool,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.started_here {
            let _ = Command::new(script()).arg("stop").status();
        }
    }
}

fn script() -> PathBuf {
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

/// Whether a cluster answers: `sinfo` runs and shows a node that can take work.
fn answers(conf: &Option<PathBuf>) -> bool {
    let mut cmd = Command::new("sinfo");
    cmd.args(["-h", "-N", "-o", "%t"]);
    if let Some(c) = conf {
        cmd.env("SLURM_CONF", c);
    }
    cmd.output().is_ok_and(|o| {
        o.status.success()
            && String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| ["idle", "mix", "alloc"].iter().any(|s| l.starts_with(s)))
    })
}

/// A cluster to run on, or `None` (with the reason printed) where the test may skip.
fn cluster() -> Option<Cluster> {
    let conf = slurm_conf();
    if answers(&conf) {
        return Some(Cluster {
            conf,
            started_here: false,
        });
    }
    let root = unsafe { libc::geteuid() } == 0;
    if !root && std::env::var_os("CI").is_none() {
        eprintln!(
            "skipping tests/slurm.rs: no Slurm cluster answers here and this is neither root nor CI (scripts/slurm-cluster start brings one up)"
        );
        return None;
    }
    let status = Command::new(script())
        .arg("start")
        .status()
        .expect("scripts/slurm-cluster runs");
    assert!(status.success(), "scripts/slurm-cluster start failed");
    let conf = slurm_conf();
    assert!(
        answers(&conf),
        "the cluster started but sinfo shows no idle node"
    );
    Some(Cluster {
        conf,
        started_here: true,
    })
}

/// `lab ARGS` in the project, talking to `cluster`, whatever its exit code.
fn lab_any(project: &Project, cluster: &Cluster, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lab"));
    cmd.args(args)
        .current_dir(project.root())
        .env("NO_COLOR", "1");
    if let Some(c) = &cluster.conf {
        cmd.env("SLURM_CONF", c);
    }
    cmd.output().expect("lab runs")
}

/// `lab ARGS`, which must end as `expected`.
fn lab(project: &Project, cluster: &Cluster, args: &[&str], expected: Exit) -> Output {
    let out = lab_any(project, cluster, args);
    common::assert_ended(&out, args, expected);
    out
}

/// Every check's name and verdict for the latest session.
fn verdicts(project: &Project, cluster: &Cluster) -> Vec<(String, String)> {
    let out = lab(
        project,
        cluster,
        &["check", "tiny", "--json"],
        Exit::CheckFailed,
    );
    let checks: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("check JSON");
    checks
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_string(),
                c["verdict"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_session_on_slurm_holds_the_plans_runs_each_once_and_judges_as_a_local_one() {
    let Some(cluster) = cluster() else {
        return;
    };
    let on_slurm = Project::with_fixtures(&["tiny"]);
    // A job Slurm refuses: its message is shown, and the session waits for --resume.
    let refused = lab_any(
        &on_slurm,
        &cluster,
        &[
            "run",
            "tiny",
            "--on",
            "slurm",
            "--partition",
            "no-such-partition",
        ],
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(exit_of(&refused), Exit::Internal, "{stderr}");
    assert!(
        stderr.contains("sbatch refused the job") && stderr.contains("partition"),
        "{stderr}"
    );
    assert!(stderr.contains("--on slurm --resume"), "{stderr}");
    // A local --resume of a cluster session is refused, naming the command that resumes it.
    let local_resume = lab_any(&on_slurm, &cluster, &["run", "tiny", "--resume"]);
    assert_eq!(exit_of(&local_resume), Exit::Usage);
    assert!(String::from_utf8_lossy(&local_resume.stderr).contains("--on slurm --resume"));

    let out = lab(
        &on_slurm,
        &cluster,
        &["run", "tiny", "--on", "slurm", "--nodes", "2", "--resume"],
        Exit::CheckFailed,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("submitted job"), "{stderr}");
    assert_eq!(on_slurm.sessions("tiny").len(), 1);
    let session = on_slurm.session("tiny");

    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("plan.json")).unwrap()).unwrap();
    let planned: Vec<String> = plan["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let rows = csv_rows(&session.join("runs.csv"));
    let stored: Vec<String> = rows.iter().map(|r| r["run_id"].clone()).collect();
    // Merged in plan order, each planned run exactly once.
    assert_eq!(stored, planned);
    let unique: std::collections::BTreeSet<&String> = stored.iter().collect();
    assert_eq!((unique.len(), stored.len()), (16, 16));
    assert!(
        rows.iter().all(|r| r["node"] == "localhost"),
        "{:?}",
        rows.iter().map(|r| &r["node"]).collect::<Vec<_>>()
    );
    // Two shards of eight runs, each written on the node in its own folder; the refused
    // job's shard (000) never ran, and --resume gave its runs to two new shards.
    assert!(!session.join("shards/000").exists());
    for shard in ["001", "002"] {
        assert_eq!(
            csv_rows(&session.join("shards").join(shard).join("runs.csv")).len(),
            8
        );
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["complete"], true);
    assert_eq!(manifest["resumed"], 1);
    assert_eq!(manifest["cluster"]["engine"], "slurm");
    assert_eq!(manifest["cluster"]["nodes"][0]["name"], "localhost");
    assert_eq!(manifest["cluster"]["nodes"].as_array().unwrap().len(), 1);
    assert!(manifest["calibration"]["spawn_median_ns"].as_u64().unwrap() > 0);
    // Every run's output came from its shard into the session's packs.
    for run in &stored {
        assert!(
            common::run_stdout(&session, run).contains("\"score\""),
            "{run}"
        );
    }

    let local = Project::with_fixtures(&["tiny"]);
    // The tiny fixture's second hypothesis fails by design.
    lab(&local, &cluster, &["run", "tiny"], Exit::CheckFailed);
    let (slurm_verdicts, local_verdicts) =
        (verdicts(&on_slurm, &cluster), verdicts(&local, &cluster));
    assert_eq!(slurm_verdicts, local_verdicts);
    // The fixture's hypotheses are decided, one each way, so equal verdicts mean something.
    assert!(slurm_verdicts.contains(&(
        "triple beats double by at least 1.4 at n=2".into(),
        "pass".into()
    )));
    assert!(slurm_verdicts.contains(&("double beats triple at n=1".into(), "fail".into())));
}

#[test]
fn without_slurm_commands_a_cluster_session_is_refused_before_anything_is_built() {
    let project = Project::with_fixtures(&["tiny"]);
    let out = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["run", "tiny", "--on", "slurm"])
        .current_dir(project.root())
        .env("PATH", project.path("no-such-bin"))
        .output()
        .expect("lab runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(exit_of(&out), Exit::Usage, "{stderr}");
    assert!(
        stderr.contains("cannot start `sbatch`") && stderr.contains("--on local"),
        "{stderr}"
    );
    assert!(project.sessions("tiny").is_empty());
    // Cluster options without a cluster are a usage error too.
    let out = project.lab(&["run", "tiny", "--nodes", "3"]);
    assert_eq!(exit_of(&out), Exit::Usage);
    assert!(String::from_utf8_lossy(&out.stderr).contains("need --on slurm"));
}
