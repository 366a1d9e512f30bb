//! `lab run --jobs N`: runs of variants pinned to disjoint CPUs execute side by side, start in
//! the planned order and are each stored once; a variant without `cpus` is refused before
//! anything runs; and the automatic check fails a session whose side-by-side runs shared a
//! CPU, passes one whose runs did not, and does not run on a session run one at a time.

use crate::common;
use crate::common::exit_of;
use lab::Exit;

use common::{FakeRunner, Project, Reply, csv_rows};
use lab::app;
use lab::layout::Layout;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const APART: &str = "no runs executing side by side shared a CPU";

/// Whether this machine lets lab use CPUs 0 and 1, which the fixtures pin their variants to.
fn two_cpus() -> bool {
    let allowed = lab::exec::allowed_cpus();
    let ok = allowed.contains(&0) && allowed.contains(&1);
    if !ok {
        eprintln!("skipped: lab may use only CPUs {allowed:?} here, and the test needs 0 and 1");
    }
    ok
}

/// The tiny fixture with `double` pinned to CPU 0 and `triple` to CPU 1.
fn pinned_tiny() -> Project {
    let project = Project::with_fixtures(&["tiny"]);
    let toml = project.path("experiments/tiny/lab.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let text = text
        .replace("name = \"double\"\n", "name = \"double\"\ncpus = \"0\"\n")
        .replace("name = \"triple\"\n", "name = \"triple\"\ncpus = \"1\"\n");
    std::fs::write(&toml, text).unwrap();
    project
}

/// Scores `sh bench.sh FACTOR n` as FACTOR × n and takes 40 ms, so that a run can start
/// beside it; it reports the CPUs it was asked for as granted, or `grant` when set (a kernel
/// that put every run on the same CPU).
fn granting(grant: Option<Vec<usize>>) -> FakeRunner {
    FakeRunner::new(move |run| {
        let score = match run.request.argv {
            [_, _, factor, n] => {
                let factor = if factor == "double" { 2 } else { 3 };
                factor * n.parse::<u64>().unwrap()
            }
            _ => 0,
        };
        let granted = grant.clone().or(run.request.cpus.map(<[usize]>::to_vec));
        let stdout = format!("{{\"score\": {score}, \"answer\": \"42\"}}\n");
        Reply::new(stdout, 40_000_000).with(|m| m.cpus_granted = granted)
    })
    .side_by_side(Duration::from_millis(40))
}

fn run_with_jobs(layout: &Layout, fake: &mut FakeRunner, jobs: usize) -> lab::error::Result<i32> {
    let options = app::RunOptions {
        jobs,
        ..common::quiet_run("tiny")
    };
    app::run(layout, Path::new("tiny"), &options, fake).map(lab::error::Exit::code)
}

fn verdict<'a>(assessed: &'a lab::Assessed, name: &str) -> &'a lab::checks::CheckResult {
    assessed
        .findings
        .checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check {name}"))
}

fn assess(project: &Project) -> lab::Assessed {
    let layout = Layout::new(project.root());
    let dir = layout.experiment_dir(Path::new("tiny")).unwrap();
    app::assess_chosen(&layout, &dir, None).unwrap().unwrap()
}

/// The ids of plan.json, in plan order.
fn planned_ids(session: &Path) -> Vec<String> {
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("plan.json")).unwrap()).unwrap();
    plan["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn runs_on_disjoint_cpus_execute_side_by_side_and_each_is_stored_once() {
    if !two_cpus() {
        return;
    }
    let project = pinned_tiny();
    let layout = Layout::new(project.root());
    let mut fake = granting(None);
    run_with_jobs(&layout, &mut fake, 2).unwrap();
    let seen = fake.seen();
    assert_eq!(seen.most_at_once, 2, "two runs executed at once");
    assert_eq!(seen.clashes, 0, "no run started on a CPU another held");

    let session = project.session("tiny");
    let planned = planned_ids(&session);
    assert_eq!(planned.len(), 16);
    assert_eq!(seen.started, planned, "runs start in the planned order");
    let rows = csv_rows(&session.join("runs.csv"));
    let stored: BTreeSet<&str> = rows.iter().map(|r| r["run_id"].as_str()).collect();
    assert_eq!(rows.len(), 16, "every run stored once");
    assert_eq!(stored, planned.iter().map(String::as_str).collect());

    // Each row names the runs beside it: of the other variant, on the other CPU, both ways.
    let by_id: BTreeMap<&str, &BTreeMap<String, String>> =
        rows.iter().map(|r| (r["run_id"].as_str(), r)).collect();
    let mut pairs = 0;
    for row in &rows {
        for other in row["overlapped"].split_whitespace() {
            let theirs = by_id[other];
            assert_ne!(theirs["variant"], row["variant"]);
            assert_ne!(theirs["cpus"], row["cpus"]);
            assert!(
                theirs["overlapped"]
                    .split_whitespace()
                    .any(|o| o == row["run_id"])
            );
            pairs += 1;
        }
    }
    assert!(pairs >= 2, "some runs overlapped: {pairs}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["jobs"], 2);

    let assessed = assess(&project);
    let apart = verdict(&assessed, APART);
    assert_eq!(apart.verdict.word(), "pass", "{apart:?}");
    assert_eq!(assessed.analysis.counts.valid, 12);
}

#[test]
fn a_variant_without_cpus_is_refused_before_anything_runs() {
    let project = Project::with_fixtures(&["tiny"]);
    let layout = Layout::new(project.root());
    let mut fake = granting(None);
    let err = run_with_jobs(&layout, &mut fake, 2)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`variant[1]` (double) declares no `cpus`") && err.contains("drop --jobs"),
        "{err}"
    );
    assert_eq!(fake.calls(), 0, "nothing ran, not even calibration");
    assert!(project.sessions("tiny").is_empty());

    // The command line says the same, as a usage error.
    let out = project.lab_exits(&["run", "tiny", "--jobs", "2"], Exit::Usage);
    assert!(String::from_utf8_lossy(&out.stderr).contains("declares no `cpus`"));
}

#[test]
fn jobs_across_revisions_are_refused() {
    let project = pinned_tiny();
    let layout = Layout::new(project.root());
    let revs = ["main".to_string(), "HEAD".to_string()];
    let options = app::RunOptions {
        jobs: 2,
        revs: Some(&revs),
        ..common::quiet_run("tiny")
    };
    let mut fake = granting(None);
    let err = app::run(&layout, Path::new("tiny"), &options, &mut fake)
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot be combined with --revs"), "{err}");
    assert_eq!(fake.calls(), 0);
}

#[test]
fn runs_side_by_side_that_shared_a_cpu_fail_the_check() {
    if !two_cpus() {
        return;
    }
    let project = pinned_tiny();
    let layout = Layout::new(project.root());
    // lab.toml pins the variants apart, but every run was granted CPU 0.
    let mut fake = granting(Some(vec![0]));
    assert_eq!(
        Exit::from_code(run_with_jobs(&layout, &mut fake, 2).unwrap()),
        Exit::CheckFailed
    );
    let assessed = assess(&project);
    let apart = verdict(&assessed, APART);
    assert_eq!(apart.verdict.word(), "fail", "{apart:?}");
    assert!(
        apart.reading.contains("executed beside run") && apart.reading.contains("shared CPU 0"),
        "{}",
        apart.reading
    );
    let rows = csv_rows(&project.session("tiny").join("runs.csv"));
    let overlapped: BTreeSet<&str> = rows
        .iter()
        .filter(|r| !r["overlapped"].is_empty())
        .map(|r| r["run_id"].as_str())
        .collect();
    assert!(!overlapped.is_empty());
    let failed: BTreeSet<&str> = apart.runs.iter().map(String::as_str).collect();
    assert_eq!(
        failed, overlapped,
        "exactly the runs that ran beside another"
    );
    let measured_alone = rows
        .iter()
        .filter(|r| r["warmup"] == "false" && r["overlapped"].is_empty())
        .count();
    assert_eq!(assessed.analysis.counts.valid, measured_alone);
}

#[test]
fn sessions_whose_runs_executed_alone_do_not_judge_the_check() {
    let project = pinned_tiny();
    let layout = Layout::new(project.root());
    let mut fake = granting(None);
    run_with_jobs(&layout, &mut fake, 1).unwrap();
    assert_eq!(fake.seen().most_at_once, 1);
    let rows = csv_rows(&project.session("tiny").join("runs.csv"));
    assert!(rows.iter().all(|r| r["overlapped"].is_empty()));
    let manifest = std::fs::read_to_string(project.session("tiny").join("manifest.json")).unwrap();
    assert!(!manifest.contains("\"jobs\""), "{manifest}");
    let assessed = assess(&project);
    assert!(
        assessed.findings.checks.iter().all(|c| c.name != APART),
        "a session without --jobs does not list the check"
    );

    // With --jobs 2 but both variants on CPU 0, no two runs may execute together.
    if !two_cpus() {
        return;
    }
    let toml = project.path("experiments/tiny/lab.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, text.replace("cpus = \"1\"", "cpus = \"0\"")).unwrap();
    // Session folders are named by the second they start in.
    std::thread::sleep(Duration::from_millis(1100));
    let mut fake = granting(None);
    run_with_jobs(&layout, &mut fake, 2).unwrap();
    assert_eq!(fake.seen().most_at_once, 1);
    assert_eq!(project.sessions("tiny").len(), 2);
    let assessed = assess(&project);
    let apart = verdict(&assessed, APART);
    assert_eq!(apart.verdict.word(), "not run");
    assert!(
        apart.reading.contains("every run executed alone"),
        "{}",
        apart.reading
    );
}

/// Each run's [start, end] on CLOCK_BOOTTIME, by id, from runs.csv.
fn intervals(rows: &[BTreeMap<String, String>]) -> BTreeMap<String, (u64, u64)> {
    rows.iter()
        .map(|r| {
            let start: u64 = r["start_boottime_ns"].parse().unwrap();
            let length: u64 = r["boottime_ns"].parse().unwrap();
            (r["run_id"].clone(), (start, start + length))
        })
        .collect()
}

#[test]
fn real_runs_on_two_cpus_overlap_in_time() {
    if !two_cpus() {
        return;
    }
    let project = Project::with_fixtures(&["pinned"]);
    project.lab_exits(&["run", "pinned", "--jobs", "2", "--quiet"], Exit::Ok);
    let rows = csv_rows(&project.session("pinned").join("runs.csv"));
    assert_eq!(rows.len(), 6);
    let times = intervals(&rows);
    let variant: BTreeMap<&str, &str> = rows
        .iter()
        .map(|r| (r["run_id"].as_str(), r["variant"].as_str()))
        .collect();
    let mut overlapping = 0;
    for (a, (a0, a1)) in &times {
        for (b, (b0, b1)) in times.range::<String, _>((
            std::ops::Bound::Excluded(a.clone()),
            std::ops::Bound::Unbounded,
        )) {
            if a0 < b1 && b0 < a1 {
                overlapping += 1;
                assert_ne!(variant[a.as_str()], variant[b.as_str()], "{a} and {b}");
                let listed = |x: &str, y: &str| {
                    rows.iter()
                        .find(|r| r["run_id"] == x)
                        .is_some_and(|r| r["overlapped"].split_whitespace().any(|o| o == y))
                };
                assert!(listed(a, b) && listed(b, a), "{a} and {b} overlapped");
            }
        }
    }
    assert!(overlapping >= 1, "no two runs overlapped in time");
    // Processes were spawned in the planned order.
    let mut by_position: Vec<(usize, u64)> = rows
        .iter()
        .map(|r| (r["position"].parse().unwrap(), times[&r["run_id"]].0))
        .collect();
    by_position.sort_unstable();
    assert!(
        by_position.windows(2).all(|w| w[0].1 < w[1].1),
        "{by_position:?}"
    );
    // The runs took less time together than one after the other would have.
    let first = times.values().map(|t| t.0).min().unwrap();
    let last = times.values().map(|t| t.1).max().unwrap();
    let serial: u64 = times.values().map(|t| t.1 - t.0).sum();
    assert!(
        last - first < serial,
        "span {} ns, sum {serial} ns",
        last - first
    );
    let checks = common::verdicts(&project, "pinned");
    let apart = checks.iter().find(|c| c["name"] == APART).unwrap();
    assert_eq!(apart["verdict"], "pass", "{apart}");
}

#[test]
fn an_interrupted_session_with_jobs_keeps_finished_runs_and_resumes() {
    if !two_cpus() {
        return;
    }
    let project = Project::with_fixtures(&["pinned"]);
    let toml = project.path("experiments/pinned/lab.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, text.replace("[100000]", "[400000]")).unwrap();
    let lab = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["run", "pinned", "--jobs", "2", "--quiet"])
        .current_dir(project.root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while project
        .sessions("pinned")
        .first()
        .is_none_or(|s| csv_rows(&s.join("runs.csv")).is_empty())
    {
        assert!(Instant::now() < deadline, "no run finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(lab.id() as libc::pid_t, libc::SIGINT) };
    let out = lab.wait_with_output().unwrap();
    assert_eq!(
        exit_of(&out),
        Exit::Signal(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let session = project.session("pinned");
    let kept = csv_rows(&session.join("runs.csv"));
    assert!(!kept.is_empty() && kept.len() < 6, "{} rows", kept.len());
    assert!(kept.iter().all(|r| r["exit_code"] == "0"));

    project.lab_exits(
        &["run", "pinned", "--resume", "--jobs", "2", "--quiet"],
        Exit::Ok,
    );
    let rows = csv_rows(&session.join("runs.csv"));
    let ids: BTreeSet<&str> = rows.iter().map(|r| r["run_id"].as_str()).collect();
    assert_eq!((rows.len(), ids.len()), (6, 6), "every run exactly once");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["complete"], true);
    assert_eq!(manifest["resumed"], 1);
    assert_eq!(manifest["jobs"], 2);
}

#[test]
fn a_dry_run_with_jobs_gives_the_side_by_side_bound_and_runs_nothing() {
    let project = pinned_tiny();
    let out = project.lab_exits(&["run", "tiny", "--dry-run", "--jobs", "2"], Exit::Ok);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("16 runs (shuffled order"), "{text}");
    assert!(
        text.contains("with --jobs 2: runs of variants on disjoint `cpus` go side by side"),
        "{text}"
    );
    let serial = project.lab_exits(&["run", "tiny", "--dry-run"], Exit::Ok);
    assert!(!String::from_utf8_lossy(&serial.stdout).contains("--jobs"));
    assert!(
        !project.path("data/tiny").exists(),
        "a dry run stores nothing"
    );
}
