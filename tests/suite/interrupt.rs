//! A session that is killed or interrupted keeps every finished run; `--resume` completes it.

use crate::common;
use crate::common::exit_of;
use lab::Exit;

use common::{Project, csv_rows};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn start(project: &Project, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(args)
        .current_dir(project.root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lab starts")
}

/// Waits until the session's runs.csv holds at least `rows` runs.
fn wait_for_rows(project: &Project, rows: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let done = project
            .sessions("slow")
            .first()
            .map_or(0, |s| csv_rows(&s.join("runs.csv")).len());
        if done >= rows {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the session never reached {rows} runs");
}

#[test]
fn a_killed_session_keeps_its_finished_runs_and_reports() {
    let project = Project::with_fixtures(&["slow"]);
    let mut lab = start(&project, &["run", "slow", "--quiet"]);
    wait_for_rows(&project, 3);
    lab.kill().expect("SIGKILL");
    lab.wait().unwrap();
    let runs = csv_rows(&project.session("slow").join("runs.csv"));
    assert!(runs.len() >= 3 && runs.len() < 8, "{} rows", runs.len());
    assert!(
        runs.iter()
            .all(|r| r["exit_code"] == "0" && r["samples"] == "1")
    );
    project.lab_exits(&["report", "slow", "--quiet"], Exit::Ok);
    let page = project.read("book/src/slow/index.md");
    assert!(
        page.contains(&format!("{} of 8 planned runs finished", runs.len())),
        "{page}"
    );
}

#[test]
fn an_interrupted_session_stops_cleanly_and_resumes() {
    let project = Project::with_fixtures(&["slow"]);
    let lab = start(&project, &["run", "slow", "--quiet"]);
    wait_for_rows(&project, 2);
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(lab.id() as libc::pid_t, libc::SIGINT) };
    let out = lab.wait_with_output().unwrap();
    assert_eq!(
        exit_of(&out),
        Exit::Signal(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--resume"));
    let session = project.session("slow");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["complete"], false);
    let before = csv_rows(&session.join("runs.csv")).len();
    assert!(before < 8);

    project.lab_exits(&["run", "slow", "--resume", "--quiet"], Exit::Ok);
    let runs = csv_rows(&session.join("runs.csv"));
    let mut ids: Vec<&str> = runs.iter().map(|r| r["run_id"].as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 8, "every planned run exactly once");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["complete"], true);
    assert_eq!(
        project.sessions("slow").len(),
        1,
        "resumed, not a new session"
    );
    assert_eq!(manifest["resumed"], 1);
    let out = project.lab_exits(&["run", "slow", "--resume"], Exit::Usage);
    assert!(String::from_utf8_lossy(&out.stderr).contains("is complete"));
}
