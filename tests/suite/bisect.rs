//! `lab bisect` on repositories of the `ab` fixture made with fixed dates (see `ci.rs`): nine
//! commits where the program costs 100 ms and 20% more from commit 7. The bisection names
//! commit 7 in at most five steps, each a sealed session; a commit that costs 5% more, right at
//! the threshold, cannot be decided and is skipped; skipped commits just before the slowdown
//! leave the answer ambiguous among them.

use crate::ci::{commits_costing, git};
use crate::common::Project;
use crate::revs::costs_off_by;
use lab::Exit;
use lab::app::{self, BisectArgs, Deciding};
use lab::layout::Layout;
use std::path::PathBuf;

/// Nine commits: 100 ms each, 120 ms from commit 7, `odd` ms at each (commit, cost) listed.
fn nine_commits(odd: &[(usize, f64)]) -> (Project, Vec<String>) {
    let costs: Vec<f64> = (1..=9)
        .map(|n| {
            odd.iter()
                .find(|(at, _)| *at == n)
                .map_or(if n < 7 { 100.0 } else { 120.0 }, |(_, c)| *c)
        })
        .collect();
    commits_costing(&costs)
}

fn args(good: &str, bad: &str) -> BisectArgs {
    BisectArgs {
        experiment: PathBuf::from("ab"),
        good: good.into(),
        bad: bad.into(),
        deciding: Deciding {
            threshold: 0.05,
            max_runs: 30,
            budget: None,
        },
    }
}

fn bisect(project: &Project, good: &str, bad: &str) -> (Exit, serde_json::Value) {
    let layout = Layout::new(project.root());
    let exit = app::bisect(&layout, &args(good, bad), true, &mut costs_off_by(0.03)).unwrap();
    let folder = project.path("data/ab/bisect");
    let file = std::fs::read_dir(&folder).unwrap().next().unwrap().unwrap();
    let record = serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap();
    (exit, record)
}

/// The subjects of the commits the bisection tried, in order.
fn tried(record: &serde_json::Value) -> Vec<String> {
    record["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tried"]["subject"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_planted_slowdown_is_found_at_commit_7_in_at_most_five_steps() {
    let (project, commits) = nine_commits(&[]);
    let (exit, record) = bisect(&project, &commits[0], &commits[8]);
    assert_eq!(exit, Exit::Ok);
    assert_eq!(record["answer"]["found"], "culprit", "{record}");
    assert_eq!(record["answer"]["commit"]["subject"], "commit 7");
    assert_eq!(record["answer"]["commit"]["commit"], commits[6].as_str());
    assert_eq!(record["cells"], serde_json::json!(["work"]));
    let steps = tried(&record);
    assert_eq!(steps[0], "commit 9", "the bad commit is measured first");
    assert!(steps.len() <= 5, "{steps:?}");
    let sessions = project.sessions("ab");
    let sealed = sessions
        .iter()
        .filter(|s| s.join("manifest.json").is_file());
    assert_eq!(
        sealed.count(),
        steps.len(),
        "each step is a session of its own"
    );
    let page = project.read("book/src/ab/bisect.md");
    let culprit = format!(
        "The first slower commit is **{} (commit 7)**.",
        &commits[6][..12]
    );
    assert!(page.contains(&culprit), "{page}");
    for (n, subject) in (1..).zip(&steps) {
        assert!(page.contains(&format!("| {n} | ")), "{page}");
        assert!(page.contains(&format!("| {subject} |")), "{page}");
    }
    let row = page.lines().find(|l| l.contains("| commit 7 |")).unwrap();
    assert!(
        row.contains("| work: 1.") && row.contains("× \\[1."),
        "{row}"
    );
    assert!(row.contains("| slower |"), "{row}");
    let summary = project.read("book/src/SUMMARY.md");
    assert!(summary.contains("  - [Bisect](ab/bisect.md)"), "{summary}");
}

#[test]
fn a_commit_that_cannot_be_decided_is_skipped_and_the_search_goes_on() {
    let (project, commits) = nine_commits(&[(5, 105.0)]);
    let (exit, record) = bisect(&project, &commits[0], &commits[8]);
    let steps = tried(&record);
    assert_eq!(
        steps[1], "commit 5",
        "the middle commit is tried second: {steps:?}"
    );
    assert_eq!(record["steps"][1]["verdict"], "skipped", "{record}");
    assert_eq!(exit, Exit::Ok);
    assert_eq!(
        record["answer"]["commit"]["subject"], "commit 7",
        "{record}"
    );
    assert!(steps.len() <= 5, "{steps:?}");
}

#[test]
fn skipped_commits_just_before_the_slowdown_leave_it_ambiguous() {
    let (project, commits) = nine_commits(&[(6, 105.0)]);
    let (exit, record) = bisect(&project, &commits[0], &commits[8]);
    assert_eq!(exit, Exit::CheckFailed, "{record}");
    assert_eq!(record["answer"]["found"], "ambiguous", "{record}");
    let among: Vec<&str> = record["answer"]["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap())
        .collect();
    assert_eq!(among, ["commit 6", "commit 7"]);
    let page = project.read("book/src/ab/bisect.md");
    assert!(page.contains("The first slower commit is one of"), "{page}");
}

#[test]
fn a_bad_commit_that_is_not_slower_ends_the_bisection_at_once() {
    let (project, commits) = nine_commits(&[]);
    let (exit, record) = bisect(&project, &commits[0], &commits[4]);
    assert_eq!(exit, Exit::CheckFailed);
    assert_eq!(record["answer"]["found"], "not_slower", "{record}");
    assert_eq!(tried(&record), ["commit 5"]);
}

#[test]
fn commits_in_the_wrong_order_or_unknown_are_refused_before_anything_runs() {
    let (project, commits) = nine_commits(&[]);
    let out = project.lab_exits(&["bisect", "ab", &commits[8], &commits[0]], Exit::Usage);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not come after"), "{err}");
    assert!(err.contains("name the good (fast) commit first"), "{err}");
    let out = project.lab_exits(&["bisect", "ab", "nosuch", "HEAD"], Exit::Usage);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"nosuch\" is not a commit"), "{err}");
    assert!(project.sessions("ab").is_empty());
    git(&project, &["status", "--porcelain"]);
}
