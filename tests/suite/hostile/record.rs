//! Runs that attack the record they are measured into: a log planted for a later run, a
//! symbolic link planted where the next run's output goes, an earlier run's log rewritten.
//! Each is caught or made harmless, with its exact outcome.

use super::{minimal, project_with, stderr, unprotected};
use crate::common;
use lab::Exit;

/// SHA-256 of nothing: what a run that printed nothing records as its stdout's digest.
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// The first run (marked by a file it leaves in the experiment's folder) prints `{"v": 1}`
/// and runs `then`; later runs print nothing.
fn first_run_then(then: &str) -> String {
    unprotected(&minimal(
        &format!(
            "sleep 0.3; if [ ! -e done ]; then touch done; echo '{{\"v\": 1}}'; for logs in ../../data/exp/*/logs; do {then}; done; fi"
        ),
        "",
    ))
}

#[test]
fn a_log_planted_for_later_runs_is_never_read_as_their_output() {
    let plant = "echo '{\"v\": 999}' > $logs/r0002.out; echo '{\"v\": 999}' > $logs/r0003.out";
    let project = project_with("exp", &first_run_then(plant), &[]);
    let out = project.lab(&["run", "exp"]);
    assert_eq!(common::exit_of(&out), Exit::CheckFailed, "{}", stderr(&out));
    let session = project.session("exp");
    let samples = common::csv_rows(&session.join("samples.csv"));
    let values: Vec<(&str, &str)> = samples
        .iter()
        .map(|r| (r["run_id"].as_str(), r["value"].as_str()))
        .collect();
    assert_eq!(
        values,
        [("r0001", "1")],
        "only the first run printed a value"
    );
    let runs = common::csv_rows(&session.join("runs.csv"));
    for row in &runs[1..] {
        assert_eq!(row["stdout_sha256"], EMPTY_SHA256, "{row:?}");
    }
    // Each run's output is its slice of the session's packs: the files planted under the
    // later runs' names are never read, and the packs hold what the runs printed, no more.
    for id in ["r0002", "r0003"] {
        assert_eq!(common::run_stdout(&session, id), "", "{id}");
    }
    assert_eq!(
        std::fs::read(session.join("logs/stdout.pack")).unwrap(),
        b"{\"v\": 1}\n"
    );
}

#[test]
fn a_link_planted_where_the_next_run_writes_leads_nowhere() {
    let plant = "rm -f $logs/.spool.out; ln -s ../../../../victim.txt $logs/.spool.out";
    let lab_toml = unprotected(&minimal(
        "sleep 0.3; if [ ! -e done ]; then touch done; echo '{\"v\": 1}'; for logs in ../../data/exp/*/logs; do PLANT; done; else echo '{\"v\": 2}'; fi"
            .replace("PLANT", plant)
            .as_str(),
        "",
    ));
    let project = project_with("exp", &lab_toml, &[]);
    std::fs::write(project.path("victim.txt"), "untouched\n").unwrap();
    let out = project.lab(&["run", "exp"]);
    // The first run unlinked its own spool while writing to it, then planted a link in its
    // place: lab reads each run's output back through the descriptor it opened for the
    // spool, so the first run's output is kept, and no later run writes through the link.
    assert_eq!(common::exit_of(&out), Exit::Ok, "{}", stderr(&out));
    assert_eq!(project.read("victim.txt"), "untouched\n");
    let session = project.session("exp");
    let values: Vec<(String, String)> = common::csv_rows(&session.join("samples.csv"))
        .iter()
        .map(|r| (r["run_id"].clone(), r["value"].clone()))
        .collect();
    assert_eq!(
        values,
        [
            ("r0001".into(), "1".into()),
            ("r0002".into(), "2".into()),
            ("r0003".into(), "2".into())
        ]
    );
    assert_eq!(common::run_stdout(&session, "r0001"), "{\"v\": 1}\n");
    // The link is gone with the spool files when the session ends.
    assert!(std::fs::symlink_metadata(session.join("logs/.spool.out")).is_err());
}

#[test]
fn a_log_rewritten_by_a_later_run_makes_reanalyze_refuse_the_session() {
    // The second run overwrites the first run's `{"v": 1}` in the pack, in place.
    let rewrite = "printf '{\"v\": 7}' | dd of=$logs/stdout.pack conv=notrunc 2>/dev/null";
    let lab_toml = unprotected(&minimal(
        "sleep 0.3; if [ ! -e done ]; then touch done; echo '{\"v\": 1}'; else echo '{\"v\": 2}'; for logs in ../../data/exp/*/logs; do REWRITE; done; fi"
            .replace("REWRITE", rewrite)
            .as_str(),
        "",
    ));
    let project = project_with("exp", &lab_toml, &[]);
    // lab checks its files after every run: the run that wrote over the pack is named, and
    // the session stops there, marked damaged.
    let run = project.lab_exits(&["run", "exp"], Exit::Internal);
    assert!(
        stderr(&run).contains("error: run r0002 changed the session's files: logs/stdout.pack was written to in place: run r0001's output no longer matches its digest"),
        "{}",
        stderr(&run)
    );
    let out = project.lab_exits(&["reanalyze", "exp"], Exit::Internal);
    let err = stderr(&out);
    assert!(
        err.contains("is damaged: run r0002 changed the session's files"),
        "{err}"
    );
    // A damaged session's output is refused where it is read, in the same words.
    let logs = project.lab_exits(&["logs", "exp", "r0001"], Exit::Internal);
    assert!(
        stderr(&logs).contains("is damaged: run r0002 changed the session's files"),
        "{}",
        stderr(&logs)
    );
    assert_eq!(
        project.sessions("exp").len(),
        1,
        "no derived session written"
    );
}

/// `lab check exp` with a 30 s limit, so that a reader blocked on a FIFO fails the test
/// instead of hanging it.
fn check_within_30s(project: &common::Project) -> std::process::Output {
    std::process::Command::new("timeout")
        .args(["30", env!("CARGO_BIN_EXE_lab"), "check", "exp"])
        .current_dir(project.root())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn a_session_file_replaced_by_a_fifo_is_named_not_waited_on() {
    let project = project_with("exp", &minimal("sleep 0.3; echo '{\"v\": 1}'", ""), &[]);
    project.lab_exits(&["run", "exp"], Exit::Ok);
    let runs = project.session("exp").join("runs.csv");
    std::fs::remove_file(&runs).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&runs)
        .status()
        .unwrap();
    assert!(made.success());
    let out = check_within_30s(&project);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("runs.csv is not a regular file (it is a FIFO)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_plan_stripped_of_its_runs_makes_the_session_damaged_not_empty() {
    let project = project_with("exp", &minimal("sleep 0.3; echo '{\"v\": 1}'", ""), &[]);
    project.lab_exits(&["run", "exp"], Exit::Ok);
    let plan = project.session("exp").join("plan.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    json["runs"] = serde_json::json!([]);
    std::fs::write(&plan, json.to_string()).unwrap();
    let out = check_within_30s(&project);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "is damaged: runs.csv holds 3 runs its plan.json does not plan (the first: r0001), and the plan.json plans no run at all"
        ),
        "{}",
        stderr(&out)
    );
    let out = project.lab_exits(&["reanalyze", "exp"], Exit::Internal);
    assert!(stderr(&out).contains("is damaged"), "{}", stderr(&out));
    assert_eq!(
        project.sessions("exp").len(),
        1,
        "no derived session written"
    );
}

/// Replaces `from` by `to` (of the same length) inside `path`, in place, and puts its
/// modification time back: what a careful forger does.
fn forge_in_place(path: &std::path::Path, from: &str, to: &str) {
    assert_eq!(from.len(), to.len());
    let modified = std::fs::metadata(path).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} has no {from:?}", path.display());
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    use std::os::unix::fs::FileExt;
    file.write_all_at(text.replacen(from, to, 1).as_bytes(), 0)
        .unwrap();
    file.set_modified(modified).unwrap();
}

#[test]
fn a_run_that_edits_a_value_in_place_is_caught_by_content() {
    let forge = "f=$(ls ../../data/exp/2*/samples.csv); t=$(stat -c %y \"$f\"); \
                 python3 -c \"import sys; p=sys.argv[1]; b=open(p,'rb').read(); open(p,'r+b').write(b.replace(b'r0001,v,0,1', b'r0001,v,0,9'))\" \"$f\"; \
                 touch -d \"$t\" \"$f\"";
    let lab_toml = unprotected(&minimal(
        &format!(
            "sleep 0.3; if [ ! -e done ]; then touch done; else {forge}; fi; echo '{{\"v\": 1}}'"
        ),
        "",
    ));
    let project = project_with("exp", &lab_toml, &[]);
    let out = project.lab(&["run", "exp"]);
    assert_eq!(common::exit_of(&out), Exit::Internal, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("changed the session's files: samples.csv was changed at line 2"),
        "{}",
        stderr(&out)
    );
    let session = project.session("exp");
    let samples = std::fs::read_to_string(session.join("samples.csv")).unwrap();
    assert!(
        samples.contains("r0001,v,0,1\n"),
        "lab's row is back: {samples}"
    );
    let found = std::fs::read_to_string(session.join("samples.csv.found")).unwrap();
    assert!(
        found.contains("r0001,v,0,9\n"),
        "the forgery is kept: {found}"
    );
}

#[test]
fn a_sealed_session_edited_by_hand_is_damaged_and_reanalyze_refuses_it() {
    let project = project_with(
        "exp",
        &minimal("sleep 0.3; echo '{\"v\": 1}'; exit 7", ""),
        &[],
    );
    project.lab_exits(&["run", "exp", "--quiet"], Exit::CheckFailed);
    let session = project.session("exp");
    let runs = std::fs::read_to_string(session.join("runs.csv")).unwrap();
    let failed = runs.lines().nth(1).unwrap();
    let exit_field = format!(",{},", failed.split(',').nth(14).unwrap());
    assert_eq!(exit_field, ",7,", "the row records the exit code");
    // Every failed run made valid, one byte each, modification time kept.
    for _ in 0..3 {
        forge_in_place(&session.join("runs.csv"), ",7,,,false,", ",0,,,false,");
    }
    let check = project.lab_exits(&["check", "exp"], Exit::CheckFailed);
    let said = String::from_utf8_lossy(&check.stdout).into_owned();
    assert!(
        said.contains("runs.csv is not the file the session was sealed with"),
        "{said}"
    );
    let out = project.lab_exits(&["reanalyze", "exp"], Exit::Internal);
    assert!(
        stderr(&out).contains("is damaged: runs.csv is not the file the session was sealed with"),
        "{}",
        stderr(&out)
    );
}
