//! `lab history` over sessions of a fixture made at successive git commits with a fake runner:
//! a step at the fourth of five sessions is found there and named by that session's commit;
//! `--check` fails only when the newest session is the one that regressed.

use crate::common;
use lab::Exit;

use common::{Project, git, timed_session as session};
use lab::layout::Layout;

/// A git repository holding the `sampled` fixture, its data and book ignored.
fn repository() -> Project {
    let project = common::sampled_project();
    std::fs::write(project.path(".gitignore"), "data/\nbook/\n").unwrap();
    git(&project, &["init", "-q"]);
    project
}

/// Commits a change of the program, then measures a session at about `base` ms; returns the
/// commit's first 12 hex digits.
fn commit_and_measure(project: &Project, n: usize, base: f64) -> String {
    std::fs::write(project.path("VERSION"), format!("{n}\n")).unwrap();
    git(project, &["add", "-A"]);
    git(project, &["commit", "-q", "-m", &format!("change {n}")]);
    let commit = git(project, &["rev-parse", "HEAD"]);
    session(&Layout::new(project.root()), base, n as u64);
    commit[..12].to_string()
}

fn history(project: &Project, args: &[&str], expected: Exit) -> serde_json::Value {
    let mut all = vec!["history", "sampled", "--json"];
    all.extend_from_slice(args);
    let out = project.lab_exits(&all, expected);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_step_at_the_fourth_of_five_sessions_names_the_fourth_commit() {
    let project = repository();
    let commits: Vec<String> = [100.0, 100.0, 100.0, 120.0, 120.0]
        .iter()
        .enumerate()
        .map(|(i, &base)| commit_and_measure(&project, i + 1, base))
        .collect();
    // The newest session is at the new level, not the step: --check passes.
    let h = history(&project, &["--check"], Exit::Ok);
    assert_eq!(h["sessions"].as_array().unwrap().len(), 5);
    assert_eq!(h["sessions"][3]["commit"], commits[3].as_str());
    assert_eq!(h["regressed_latest"], false);
    let cells = h["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    for cell in cells {
        let steps = cell["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 1, "{cell}");
        assert_eq!(steps[0]["session"], 4);
        assert_eq!(steps[0]["commit"], commits[3].as_str());
        assert_eq!(steps[0]["kind"], "regression");
        let ratio = steps[0]["ratio"].as_f64().unwrap();
        assert!((1.15..1.25).contains(&ratio), "{ratio}");
        assert_eq!(cell["points"].as_array().unwrap().len(), 5);
    }
    let text = project.lab_exits(&["history", "sampled"], Exit::Ok);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("regression 1.2") && text.contains(&commits[3]),
        "{text}"
    );
    // The book has the History page, linked from the summary, and the chapter compares the
    // newest session with the one before it.
    let page = project.read("book/src/sampled/history.md");
    assert!(
        page.contains("regression 1.2") && page.contains(&commits[3]),
        "{page}"
    );
    assert!(
        project
            .read("book/src/SUMMARY.md")
            .contains("  - [History](sampled/history.md)")
    );
    let chapter = project.read("book/src/sampled/index.md");
    assert!(chapter.contains("## Compared with "), "{chapter}");
    assert!(
        chapter.contains("| ± | change |") && chapter.contains("inconclusive: straddles"),
        "{chapter}"
    );
    if let Ok(keep) = std::env::var("KEEP_BOOK") {
        common::copy_dir(&project.path("book"), std::path::Path::new(&keep));
    }
}

#[test]
fn check_fails_when_the_newest_session_regressed_and_only_then() {
    let project = repository();
    for (i, base) in [100.0, 100.0, 100.0].iter().enumerate() {
        commit_and_measure(&project, i + 1, *base);
    }
    let h = history(&project, &["--check"], Exit::Ok);
    assert!(
        h["cells"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["steps"].as_array().unwrap().is_empty()),
        "{h}"
    );
    let newest = commit_and_measure(&project, 4, 125.0);
    let h = history(&project, &["--check"], Exit::CheckFailed);
    assert_eq!(h["regressed_latest"], true);
    assert_eq!(h["cells"][0]["steps"][0]["commit"], newest.as_str());
    assert_eq!(h["cells"][0]["steps"][0]["session"], 4);
    // Faster is an improvement, never a failure.
    let faster = commit_and_measure(&project, 5, 80.0);
    let h = history(&project, &["--check"], Exit::Ok);
    let steps = h["cells"][0]["steps"].as_array().unwrap();
    let last = steps.last().unwrap();
    assert_eq!(last["commit"], faster.as_str());
    assert_eq!(last["kind"], "improvement");
}
