//! Runs that signal what they did not start: a process elsewhere on the machine, lab, or the
//! run beside them (`--jobs`). Each run is a Landlock domain of its own whose signals are
//! scoped to it: such a signal fails with EPERM inside the run, and its target runs on. A run
//! still signals its own children.

use super::{minimal, project_with};
use crate::common::Project;
use lab::Exit;

/// The lines of `file` in the experiment's folder.
fn lines(project: &Project, file: &str) -> Vec<String> {
    std::fs::read_to_string(project.path("experiments/exp").join(file))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Whether the latest session's runs had their signals scoped: kernels before Linux 6.12
/// cannot, and the manifest says why.
fn scoped(project: &Project) -> bool {
    let session = project.sessions("exp").pop().unwrap();
    let manifest = std::fs::read_to_string(session.join("manifest.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let signals = &manifest["isolation"]["signals"];
    if signals.is_null() {
        eprintln!("skipped: {}", manifest["isolation"]["why"]);
        return false;
    }
    let signals = signals.as_str().unwrap();
    assert!(
        signals.starts_with("landlock scope (ABI ")
            && signals.ends_with("): a run signals only its own processes"),
        "{signals}"
    );
    true
}

#[test]
fn a_run_cannot_stop_a_process_it_did_not_start_nor_lab_but_can_its_own_child() {
    let mut victim = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let script = format!(
        "kill -STOP {} 2>/dev/null; echo $? >> outside; kill -0 $(cat ../../lab.pid) 2>/dev/null; echo $? >> lab; sleep 5 & kill $!; wait $!; echo $? >> own; sleep 0.2; echo '{{\"v\": 1}}'",
        victim.id()
    );
    let project = project_with("exp", &minimal(&script, ""), &[]);
    let out = project.lab_telling_pid(&["run", "exp", "--quiet"]);
    assert_eq!(crate::common::exit_of(&out), Exit::Ok);
    let state = std::fs::read_to_string(format!("/proc/{}/stat", victim.id())).unwrap();
    victim.kill().unwrap();
    victim.wait().unwrap();
    if !scoped(&project) {
        return;
    }
    assert_eq!(
        lines(&project, "outside"),
        ["1", "1", "1"],
        "kill -STOP failed each time"
    );
    assert!(!state.contains(") T "), "the process was stopped: {state}");
    assert_eq!(
        lines(&project, "lab"),
        ["1", "1", "1"],
        "lab is out of reach"
    );
    assert_eq!(
        lines(&project, "own"),
        ["143", "143", "143"],
        "its own child took SIGTERM"
    );
}

#[test]
fn a_run_beside_another_cannot_stop_it() {
    let allowed = lab::exec::allowed_cpus();
    if !(allowed.contains(&0) && allowed.contains(&1)) {
        eprintln!("skipped: lab may use only CPUs {allowed:?} here, and the test needs 0 and 1");
        return;
    }
    let toml = r#"[experiment]
max_busy = "100%"
title = "hostile"
hypothesis = "a run cannot stop the run beside it"
repetitions = 1
seed = 1
timeout = "5s"

[[variant]]
name = "a"
cpus = "0"
run = ["sh", "-c", "echo $$ > a.pid; sleep 1; echo '{{\"v\": 1}}'"]

[[variant]]
name = "b"
cpus = "1"
run = ["sh", "-c", "while [ ! -s a.pid ]; do sleep 0.01; done; kill -STOP $(cat a.pid) 2>/dev/null; echo $? > stopped; sleep 0.2; echo '{{\"v\": 2}}'"]

[metric.v]
json = "v"
"#;
    let project = project_with("exp", toml, &[]);
    let out = project.lab_exits(&["run", "exp", "--quiet", "--jobs", "2"], Exit::Ok);
    assert!(out.status.success());
    if !scoped(&project) {
        return;
    }
    assert_eq!(
        lines(&project, "stopped"),
        ["1"],
        "kill -STOP of the run beside failed"
    );
    let session = project.sessions("exp").pop().unwrap();
    let runs = std::fs::read_to_string(session.join("runs.csv")).unwrap();
    let mut lines = runs.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let a = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|r| r[column("variant")] == "a")
        .unwrap();
    assert_eq!(a[column("timed_out")], "false");
    let wall: f64 = a[column("wall_ns")].parse().unwrap();
    assert!(wall < 2e9, "the run beside was held up: {wall} ns");
}
