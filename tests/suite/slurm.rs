//! `lab run --on slurm` end to end on a real Slurm cluster of three nodes (scripts/slurm-cluster
//! starts one on this machine): the merged session holds exactly the plan's runs, each once and
//! each naming its node, and judges as a local run of the same deterministic fixture. Then the
//! faults a cluster has, each survived with nothing lost and nothing counted twice: a node that
//! dies mid-job, a drained node, a controller restart, lab itself killed while its job runs, and
//! a shard whose files are torn. The tests share the cluster, one at a time, and each puts it
//! back as it was. Where Slurm is missing the tests start a cluster with scripts/slurm-cluster
//! (as root, or in CI); elsewhere they say why they skip.

mod cluster;

use crate::common;
use crate::common::exit_of;
use cluster::{
    Cluster, NODES, each_planned_run_once, manifest, recorded_jobs, repetitions, rows_per_node,
    shard, shard_rows, spawned_stderr, the_session, wait_until,
};
use common::{Project, csv_rows};
use lab::Exit;
use std::process::{Command, Output};
use std::time::Duration;

/// Long enough for a job on a busy machine to reach the point a test waits for.
const PATIENCE: Duration = Duration::from_secs(60);

/// `lab ARGS`, which must end as `expected`.
fn lab(project: &Project, cluster: &Cluster, args: &[&str], expected: Exit) -> Output {
    let out = cluster.lab(project, args);
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

/// The cluster for a fault test: one scripts/slurm-cluster runs, with its three nodes.
fn faultable() -> Option<Cluster> {
    let cluster = cluster::cluster()?;
    if !cluster.ours() {
        eprintln!(
            "skipping a fault test of tests/slurm.rs: the cluster that answers is not one scripts/slurm-cluster runs with {NODES} nodes, so the test cannot kill its nodes or controller"
        );
        return None;
    }
    Some(cluster)
}

/// Waits for the lab started in `project` to end; how it ended, with what it wrote on stderr.
fn ended(project: &Project, child: &mut std::process::Child) -> (Exit, String) {
    let status = child.wait().expect("lab ends");
    let out = Output {
        status,
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    (exit_of(&out), spawned_stderr(project))
}

/// A job Slurm refuses: its message is shown, and the session waits for --resume, which only
/// `--on slurm` may give it.
fn a_refused_job_waits_for_resume(cluster: &Cluster, on_slurm: &Project) {
    let refused = cluster.lab(
        on_slurm,
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
    let local_resume = cluster.lab(on_slurm, &["run", "tiny", "--resume"]);
    assert_eq!(exit_of(&local_resume), Exit::Usage);
    assert!(String::from_utf8_lossy(&local_resume.stderr).contains("--on slurm --resume"));
}

/// The refused job's shard (000) never ran; --resume gave its runs to new shards, each
/// written on one node in its own folder, the shards spread over as many nodes.
fn assert_one_node_per_shard(
    session: &std::path::Path,
    rows: &[std::collections::BTreeMap<String, String>],
    shards: usize,
    nodes: &[String],
) -> Vec<String> {
    assert!(!session.join("shards/000").exists());
    let sizes: Vec<usize> = (1..=shards)
        .map(|i| csv_rows(&shard(session, i).join("runs.csv")).len())
        .collect();
    let expected_sizes: Vec<usize> = match shards {
        3 => vec![6, 5, 5],
        2 => vec![8, 8],
        _ => vec![16],
    };
    assert_eq!(sizes, expected_sizes);
    let mut shard_nodes: Vec<String> = (1..=shards)
        .map(|i| {
            let in_shard = csv_rows(&shard(session, i).join("runs.csv"));
            let node = in_shard[0]["node"].clone();
            assert!(in_shard.iter().all(|r| r["node"] == node), "{in_shard:?}");
            node
        })
        .collect();
    shard_nodes.sort();
    shard_nodes.dedup();
    assert_eq!(shard_nodes.len(), shards, "one node per shard");
    assert!(
        shard_nodes.iter().all(|n| nodes.contains(n)),
        "{shard_nodes:?}"
    );
    let mut per_node: Vec<usize> = rows_per_node(rows).into_values().collect();
    per_node.sort_unstable();
    let mut expected_per_node = expected_sizes.clone();
    expected_per_node.sort_unstable();
    assert_eq!(per_node, expected_per_node);

    shard_nodes
}

/// The session's manifest records the cluster's nodes, and every run's output came from its
/// shard into the session's packs.
fn assert_recorded(session: &std::path::Path, shard_nodes: &[String], stored: &[String]) {
    let manifest = manifest(session);
    assert_eq!(manifest["complete"], true);
    assert_eq!(manifest["resumed"], 1);
    assert_eq!(manifest["cluster"]["engine"], "slurm");
    let recorded: Vec<&str> = manifest["cluster"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(recorded, shard_nodes);
    assert!(manifest["calibration"]["spawn_median_ns"].as_u64().unwrap() > 0);
    // Every run's output came from its shard into the session's packs.
    for run in stored {
        assert!(
            common::run_stdout(session, run).contains("\"score\""),
            "{run}"
        );
    }
}

/// The session judges as a local one of the same deterministic fixture, with the machine check
/// besides.
fn judged_as_a_local_session(cluster: &Cluster, on_slurm: &Project) {
    let local = Project::with_fixtures(&["tiny"]);
    // The tiny fixture's second hypothesis fails by design.
    lab(&local, cluster, &["run", "tiny"], Exit::CheckFailed);
    let (mut slurm_verdicts, local_verdicts) =
        (verdicts(on_slurm, cluster), verdicts(&local, cluster));
    // Runs on three nodes add the machine check, which 4 runs a cell cannot decide: no split
    // of 4 runs between nodes is rarer than 1 in 6 under the permutation test.
    let machine = slurm_verdicts
        .iter()
        .position(|(name, _)| name == "no cell depends on the machine that ran it")
        .expect("a session across nodes judges the machine effect");
    assert_eq!(slurm_verdicts.remove(machine).1, "inconclusive");
    assert_eq!(slurm_verdicts, local_verdicts);
    // The fixture's hypotheses are decided, one each way, so equal verdicts mean something.
    assert!(slurm_verdicts.contains(&(
        "triple beats double by at least 1.4 at n=2".into(),
        "pass".into()
    )));
    assert!(slurm_verdicts.contains(&("double beats triple at n=1".into(), "fail".into())));
}

#[test]
fn a_session_on_slurm_holds_the_plans_runs_each_once_and_judges_as_a_local_one() {
    let Some(cluster) = cluster::cluster() else {
        return;
    };
    let on_slurm = Project::with_fixtures(&["tiny"]);
    a_refused_job_waits_for_resume(&cluster, &on_slurm);
    let nodes = cluster.nodes();
    let shards = nodes.len().min(3);
    let out = lab(
        &on_slurm,
        &cluster,
        &[
            "run",
            "tiny",
            "--on",
            "slurm",
            "--nodes",
            &shards.to_string(),
            "--resume",
        ],
        Exit::CheckFailed,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("submitted job"), "{stderr}");
    assert_eq!(on_slurm.sessions("tiny").len(), 1);
    let session = on_slurm.session("tiny");
    let rows = each_planned_run_once(&session);
    assert_eq!(rows.len(), 16);
    // Merged in plan order.
    let stored: Vec<String> = rows.iter().map(|r| r["run_id"].clone()).collect();
    assert_eq!(stored, cluster::planned(&session));
    let shard_nodes = assert_one_node_per_shard(&session, &rows, shards, &nodes);
    assert_recorded(&session, &shard_nodes, &stored);
    judged_as_a_local_session(&cluster, &on_slurm);
}

#[test]
fn a_node_that_dies_mid_job_has_its_shard_resubmitted_to_another_and_the_session_completes() {
    let Some(cluster) = faultable() else {
        return;
    };
    let _restore = cluster.restore();
    let project = Project::with_fixtures(&["slow"]);
    // 24 runs of 0.4 s, three shards of eight: each node busy for a few seconds.
    repetitions(&project, "slow", 12);
    let mut child = cluster.spawn_lab(&project, &["run", "slow", "--on", "slurm", "--nodes", "3"]);
    wait_until("shard 1's first run", PATIENCE, || {
        the_session(&project, "slow").is_some_and(|s| shard_rows(&s, 1) >= 1)
    });
    let session = the_session(&project, "slow").unwrap();
    let job = recorded_jobs(&session)[0].clone();
    let (dead, _) = cluster.queue(&job)["1"].clone();
    cluster.script(&["kill-node", &dead]);

    let (exit, stderr) = ended(&project, &mut child);
    assert_eq!(exit, Exit::Ok, "{stderr}");
    assert!(
        stderr.contains("resubmitted shard 1 as job ")
            && stderr.contains("(lost: 1 NODE_FAIL (exit 0:0))"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("resubmitted").count(), 1, "{stderr}");
    let rows = each_planned_run_once(&session);
    assert_eq!(rows.len(), 24);
    // Shard 1's folder holds what the dead node finished, then the rest from another node.
    let in_shard = csv_rows(&shard(&session, 1).join("runs.csv"));
    assert_eq!(in_shard.len(), 8);
    let on_dead = in_shard.iter().filter(|r| r["node"] == dead).count();
    assert!(
        (1..8).contains(&on_dead),
        "{on_dead} of shard 1's runs on {dead}"
    );
    let rescuer = in_shard.last().unwrap()["node"].clone();
    assert_ne!(rescuer, dead);
    assert_eq!(
        in_shard.iter().filter(|r| r["node"] == rescuer).count(),
        8 - on_dead
    );
    // In the session the dead node ran exactly what it finished before it died.
    assert_eq!(rows_per_node(&rows)[&dead], on_dead);
    let jobs = recorded_jobs(&session);
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert_eq!(manifest(&session)["complete"], true);
    drop(_restore);
    assert_eq!(cluster.nodes().len(), NODES, "the killed node is back");
}

#[test]
fn a_drained_node_gets_no_task_and_its_share_waits_for_the_others() {
    let Some(cluster) = faultable() else {
        return;
    };
    let _restore = cluster.restore();
    let drained = cluster.nodes()[1].clone();
    cluster.slurm(
        "scontrol",
        &[
            "update",
            &format!("nodename={drained}"),
            "state=drain",
            "reason=lab-test",
        ],
    );
    assert_eq!(cluster.nodes().len(), NODES - 1);
    let project = Project::with_fixtures(&["tiny"]);
    let out = lab(
        &project,
        &cluster,
        &["run", "tiny", "--on", "slurm", "--nodes", "3"],
        Exit::CheckFailed,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("resubmitted"), "{stderr}");
    let session = project.session("tiny");
    let rows = each_planned_run_once(&session);
    assert_eq!(rows.len(), 16);
    let per_node = rows_per_node(&rows);
    assert!(!per_node.contains_key(&drained), "{per_node:?}");
    // Three shards of 6, 5 and 5 runs on the two nodes left: one node ran two of them.
    let sizes: Vec<usize> = (0..3).map(|i| shard_rows(&session, i)).collect();
    assert_eq!(sizes, vec![6, 5, 5]);
    let mut counts: Vec<usize> = per_node.into_values().collect();
    counts.sort_unstable();
    assert!(counts == vec![5, 11] || counts == vec![6, 10], "{counts:?}");
    assert_eq!(recorded_jobs(&session).len(), 1);
    drop(_restore);
    assert_eq!(cluster.nodes().len(), NODES, "the drained node is resumed");
}

#[test]
fn a_controller_restart_mid_job_is_waited_out_without_resubmitting() {
    let Some(cluster) = faultable() else {
        return;
    };
    let _restore = cluster.restore();
    let project = Project::with_fixtures(&["slow"]);
    repetitions(&project, "slow", 12);
    let mut child = cluster.spawn_lab(&project, &["run", "slow", "--on", "slurm", "--nodes", "3"]);
    wait_until("shard 0's first run", PATIENCE, || {
        the_session(&project, "slow").is_some_and(|s| shard_rows(&s, 0) >= 1)
    });
    // Down for longer than scontrol keeps retrying (about 8 s), so lab sees it silent.
    cluster.script(&["restart-controller", "12"]);

    let (exit, stderr) = ended(&project, &mut child);
    assert_eq!(exit, Exit::Ok, "{stderr}");
    assert_eq!(
        stderr
            .matches("Slurm's controller does not answer (")
            .count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("lab waits for it and resubmits nothing meanwhile")
            && stderr.contains("Slurm's controller answers again after "),
        "{stderr}"
    );
    assert!(!stderr.contains("resubmitted"), "{stderr}");
    let session = project.session("slow");
    let rows = each_planned_run_once(&session);
    assert_eq!(rows.len(), 24);
    let mut counts: Vec<usize> = rows_per_node(&rows).into_values().collect();
    counts.sort_unstable();
    assert_eq!(counts, vec![8, 8, 8]);
    assert_eq!(recorded_jobs(&session).len(), 1);
}

#[test]
fn a_killed_lab_leaves_its_job_running_and_resume_adopts_it_instead_of_submitting_again() {
    let Some(cluster) = faultable() else {
        return;
    };
    let _restore = cluster.restore();
    let project = Project::with_fixtures(&["slow"]);
    // 16 runs, two shards of eight: a few seconds of measuring after lab is killed.
    repetitions(&project, "slow", 8);
    let mut child = cluster.spawn_lab(&project, &["run", "slow", "--on", "slurm", "--nodes", "2"]);
    // The job id is in the manifest while the job runs, before any run has finished.
    let mut job = String::new();
    wait_until("both tasks running", PATIENCE, || {
        let Some(session) = the_session(&project, "slow") else {
            return false;
        };
        let Some(id) = recorded_jobs(&session).pop() else {
            return false;
        };
        job = id;
        let queue = cluster.queue(&job);
        queue.len() == 2 && queue.values().all(|(_, state)| state == "RUNNING")
    });
    child.kill().expect("SIGKILL lab");
    child.wait().expect("lab ends");
    let queue = cluster.queue(&job);
    assert_eq!(
        queue.len(),
        2,
        "the job measures on after lab died: {queue:?}"
    );

    let out = lab(
        &project,
        &cluster,
        &["run", "slow", "--on", "slurm", "--resume"],
        Exit::Ok,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "job {job} still runs shards 0, 1 of this session: lab watches it again instead of submitting those runs anew"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("submitted job"), "{stderr}");
    let session = project.session("slow");
    let rows = each_planned_run_once(&session);
    assert_eq!(rows.len(), 16);
    assert_eq!(recorded_jobs(&session), vec![job.clone()]);
    assert_eq!((shard_rows(&session, 0), shard_rows(&session, 1)), (8, 8));
    assert!(!shard(&session, 2).exists(), "no shard submitted again");
    let manifest = manifest(&session);
    assert_eq!(manifest["complete"], true);
    assert_eq!(manifest["resumed"], 1);
    assert!(cluster.queue(&job).is_empty());
}

/// The last line of `path`: where it starts, and how long it is with its newline.
fn last_line(path: &std::path::Path) -> (u64, u64) {
    let bytes = std::fs::read(path).unwrap();
    let body = &bytes[..bytes.len() - 1];
    let start = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    (start as u64, (bytes.len() - start) as u64)
}

/// Cuts `path` to `len` bytes.
fn truncate(path: &std::path::Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// Starts an 8-repetition session of `slow` on two nodes, kills lab once each shard holds three
/// runs, and cancels its job: the shards stay as the nodes left them. Returns the session.
fn killed_mid_job(cluster: &Cluster, project: &Project) -> std::path::PathBuf {
    repetitions(project, "slow", 8);
    let mut child = cluster.spawn_lab(project, &["run", "slow", "--on", "slurm", "--nodes", "2"]);
    wait_until("three runs in each shard", PATIENCE, || {
        the_session(project, "slow")
            .is_some_and(|s| shard_rows(&s, 0) >= 3 && shard_rows(&s, 1) >= 3)
    });
    child.kill().expect("SIGKILL lab");
    child.wait().expect("lab ends");
    let session = project.session("slow");
    let job = recorded_jobs(&session)[0].clone();
    cluster.slurm("scancel", &[&job]);
    wait_until("the cancelled job to end", PATIENCE, || {
        cluster.queue(&job).is_empty()
    });
    session
}

/// What tearing two shards cut, and the rows each keeps.
struct Torn {
    /// Shard 0's last row, cut off mid-write: its run, and where the row starts and its length.
    run0: String,
    row0: (u64, u64),
    kept0: usize,
    /// Shard 1's last run, whose output is cut short in the pack: its run, where its output
    /// starts and its length, and where its intact row starts and its length.
    run1: String,
    output1: (u64, u64),
    row1: (u64, u64),
    kept1: usize,
}

/// Cuts shard 0's last row in half, and the last two bytes of shard 1's last run's output.
fn tear_shards(session: &std::path::Path) -> Torn {
    // Counted before the cut: a row cut off mid-write loses its line break.
    let (kept0, kept1) = (shard_rows(session, 0) - 1, shard_rows(session, 1) - 1);
    let runs0 = shard(session, 0).join("runs.csv");
    let run0 = csv_rows(&runs0).pop().unwrap()["run_id"].clone();
    let row0 = last_line(&runs0);
    truncate(&runs0, row0.0 + row0.1 / 2);
    let runs1 = shard(session, 1).join("runs.csv");
    let last1 = csv_rows(&runs1).pop().unwrap();
    let output1 = (
        last1["stdout_offset"].parse::<u64>().unwrap(),
        last1["stdout_bytes"].parse::<u64>().unwrap(),
    );
    assert!(output1.1 > 2, "the run printed its value");
    truncate(
        &shard(session, 1).join("logs/stdout.pack"),
        output1.0 + output1.1 - 2,
    );
    Torn {
        run0,
        row0,
        kept0,
        run1: last1["run_id"].clone(),
        output1,
        row1: last_line(&runs1),
        kept1,
    }
}

/// The resumed session says what it set aside of each shard, and why.
fn assert_said_set_aside(stderr: &str, torn: &Torn) {
    let ((start0, len0), (start1, len1)) = (torn.row0, torn.row1);
    let ((offset1, bytes1), torn1) = (torn.output1, &torn.run1);
    assert!(
        stderr.contains(&format!(
            "shard 0: runs.csv: {} bytes after byte {start0} set aside (a row cut off mid-write)",
            len0 / 2
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "shard 1: runs.csv: {len1} bytes after byte {start1} set aside (run {torn1} and the rows after it: its stdout is cut short in "
        )) && stderr.contains(&format!("(bytes {offset1} to {}))", offset1 + bytes1)),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "shard 1: logs/stdout.pack: {} bytes after byte {offset1} set aside (output of a run stopped before its row was written)",
            bytes1 - 2
        )),
        "{stderr}"
    );
}

#[test]
fn a_torn_shard_is_set_aside_and_its_runs_measured_again_never_merged() {
    let Some(cluster) = faultable() else {
        return;
    };
    let _restore = cluster.restore();
    let project = Project::with_fixtures(&["slow"]);
    let session = killed_mid_job(&cluster, &project);
    let torn = tear_shards(&session);
    let out = lab(
        &project,
        &cluster,
        &["run", "slow", "--on", "slurm", "--resume"],
        Exit::Ok,
    );
    assert_said_set_aside(&String::from_utf8_lossy(&out.stderr), &torn);
    // The torn bytes are kept beside each shard, never merged.
    let aside0 = std::fs::read(shard(&session, 0).join("set-aside/runs.csv.1")).unwrap();
    assert_eq!(aside0.len() as u64, torn.row0.1 / 2);
    let aside1 = std::fs::read_to_string(shard(&session, 1).join("set-aside/runs.csv.1")).unwrap();
    assert!(aside1.starts_with(&torn.run1), "{aside1}");
    assert_eq!(
        (shard_rows(&session, 0), shard_rows(&session, 1)),
        (torn.kept0, torn.kept1)
    );

    // Every run once: the two torn ones measured again, with the rest still missing, in the
    // one new shard --resume submitted.
    let rows = each_planned_run_once(&session);
    assert_eq!(rows.len(), 16);
    assert_eq!(shard_rows(&session, 2), 16 - torn.kept0 - torn.kept1);
    let again = csv_rows(&shard(&session, 2).join("runs.csv"));
    for run in [&torn.run0, &torn.run1] {
        assert!(again.iter().any(|r| &r["run_id"] == run), "{run}");
        assert!(common::run_stdout(&session, run).starts_with("v="), "{run}");
    }
    assert_eq!(recorded_jobs(&session).len(), 2);
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
