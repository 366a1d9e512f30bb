//! Sessions sealed for good: a closed session's files, its manifest and the experiment's
//! baselines.json changed after lab closed them are damaged for every reader, in the same
//! words; a session lab did not write is never the latest one.

use super::{minimal, project_with, stderr, stdout};
use crate::common::{self, Project};
use lab::Exit;
use std::path::Path;

/// A project whose experiment `exp` has two closed sessions, the older saved as baseline
/// `main`; the sessions' folder names, oldest first.
fn two_sessions() -> (Project, [String; 2]) {
    let project = project_with(
        "exp",
        &minimal("sleep 0.05; echo '{\"v\": 1}'; echo said >&2", ""),
        &[],
    );
    for _ in 0..2 {
        let out = project.lab(&["run", "exp", "--quiet"]);
        assert_ne!(common::exit_of(&out), Exit::Internal, "{}", stderr(&out));
    }
    let names = project
        .sessions("exp")
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    let [a, b] = <[String; 2]>::try_from(names).unwrap();
    project.lab_exits(&["baseline", "exp", "main", "--session", &a], Exit::Ok);
    (project, [a, b])
}

/// Every reader of a session, as the arguments that make it read `session`.
fn readers(session: &str, other: &str) -> Vec<(&'static str, Vec<String>)> {
    let own = |args: &[&str]| -> Vec<String> { args.iter().map(|a| a.to_string()).collect() };
    vec![
        ("check", own(&["check", "exp", "--session", session])),
        ("report", own(&["report", "exp", "--session", session])),
        ("compare", own(&["compare", "exp", other, session])),
        ("bundle", own(&["bundle", "exp", "--session", session])),
        ("logs", own(&["logs", "exp", "r0001", "--session", session])),
        (
            "reanalyze",
            own(&["reanalyze", "exp", "--session", session]),
        ),
    ]
}

/// Asserts that every reader of `session` says it is damaged by `why`, word for word.
fn every_reader_says(project: &Project, session: &str, other: &str, why: &str) {
    let wanted = format!("session {session} is damaged: {why}");
    for (reader, args) in readers(session, other) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = project.lab(&args);
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert!(said.contains(&wanted), "lab {reader} said:\n{said}");
        // A report renders the chapter, the damage in it; the others refuse or fail.
        if reader != "report" {
            assert_ne!(
                common::exit_of(&out),
                Exit::Ok,
                "lab {reader} passed:\n{said}"
            );
        }
    }
    // The book (`lab book`) renders the chapter of the latest session with the damage.
    let book = project.lab(&["book"]);
    let chapter = std::fs::read_to_string(project.path("book/src/exp/index.md")).unwrap();
    assert!(
        chapter.contains(why) || stderr(&book).contains(&wanted),
        "the book said:\n{}\n{chapter}",
        stderr(&book)
    );
}

/// `path`'s bytes with byte `at` changed (to `to`, or next to it where it already is `to`),
/// written back in place.
fn flip(path: &Path, at: usize, to: u8) -> Vec<u8> {
    let before = std::fs::read(path).unwrap();
    let mut after = before.clone();
    // Always a change: the byte may already be `to` (a run's last digit often is).
    after[at] = if before[at] == to { to ^ 1 } else { to };
    std::fs::write(path, &after).unwrap();
    before
}

#[test]
fn a_pack_edited_after_the_session_closed_is_damaged_for_every_reader() {
    let (project, [a, b]) = two_sessions();
    let pack = project.path("data/exp").join(&b).join("logs/stdout.pack");
    flip(&pack, 2, b'w');
    every_reader_says(
        &project,
        &b,
        &a,
        "logs/stdout.pack is not the file the session was sealed with",
    );
}

#[test]
fn runs_csv_edited_after_the_session_closed_is_damaged_for_every_reader() {
    let (project, [a, b]) = two_sessions();
    let runs = project.path("data/exp").join(&b).join("runs.csv");
    let len = std::fs::read(&runs).unwrap().len();
    flip(&runs, len - 2, b'9');
    every_reader_says(
        &project,
        &b,
        &a,
        "runs.csv is not the file the session was sealed with",
    );
}

#[test]
fn a_session_rewritten_and_sealed_again_is_damaged_by_its_manifest() {
    let (project, [a, b]) = two_sessions();
    let dir = project.path("data/exp").join(&b);
    let runs = dir.join("runs.csv");
    let len = std::fs::read(&runs).unwrap().len();
    flip(&runs, len - 2, b'9');
    // The forger seals its runs.csv again in the manifest: only lab's record tells.
    let manifest_path = dir.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["digests"]["runs.csv"] = sha256(&std::fs::read(&runs).unwrap()).into();
    std::fs::write(
        &manifest_path,
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();
    every_reader_says(
        &project,
        &b,
        &a,
        "manifest.json is not the file the session was sealed with",
    );
}

#[test]
fn a_baseline_repointed_after_lab_saved_it_is_refused_by_every_reader() {
    let (project, [a, b]) = two_sessions();
    let list = project.path("data/exp/baselines.json");
    let text = std::fs::read_to_string(&list).unwrap();
    std::fs::write(&list, text.replace(&a, &b)).unwrap();
    let wanted = "baselines.json is not the file lab wrote";
    for (reader, args) in readers("baseline:main", &a) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = project.lab(&args);
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert!(said.contains(wanted), "lab {reader} said:\n{said}");
        assert_ne!(
            common::exit_of(&out),
            Exit::Ok,
            "lab {reader} passed:\n{said}"
        );
    }
}

#[test]
fn a_fabricated_session_is_never_the_latest() {
    let (project, [_, b]) = two_sessions();
    let data = project.path("data/exp");
    let fake = data.join("29991231T235959Z-vm");
    common::copy_dir(&data.join(&b), &fake);
    let report = project.lab_exits(&["report", "exp", "--json"], Exit::Ok);
    let said: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(said["analysis"]["session"].as_str(), Some(b.as_str()));
    project.lab_exits(&["book"], Exit::Ok);
    let chapter = std::fs::read_to_string(project.path("book/src/exp/index.md")).unwrap();
    assert!(chapter.contains(&format!("Session {b} ")), "{chapter}");
    // Named, it is read, with a notice that lab has no record of it.
    let named = project.lab(&["check", "exp", "--session", "29991231T235959Z-vm"]);
    assert!(
        stderr(&named).contains("session 29991231T235959Z-vm is unrecorded"),
        "{}",
        stderr(&named)
    );
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(bytes))
}
