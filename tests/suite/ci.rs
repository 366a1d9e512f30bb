//! `lab ci` on a repository of twelve commits of the `ab` fixture, made here with fixed dates
//! (so its commits are the same on every machine): the program costs 100 ms, 20% more from
//! commit 7 and 20% less from commit 10. A pull request whose head is commit 9, against
//! `main` at commit 5, is slower by 1.20× and fails the check; one that changes only the
//! README is the same and passes.

use crate::common::{self, Project};
use crate::revs::costs_off_by;
use lab::Exit;
use lab::app::{self, CiArgs, Deciding};
use lab::layout::Layout;
use std::path::PathBuf;

/// The program's cost at commit `n` (1 to 12), in ms.
fn cost_at(n: usize) -> f64 {
    match n {
        ..7 => 100.0,
        7..10 => 120.0,
        _ => 96.0,
    }
}

/// Runs git in the project with fixed names and dates: the same commits everywhere.
pub(crate) fn git(project: &Project, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=lab", "-c", "user.email=lab@example.org"])
        .args([
            "-c",
            "init.defaultBranch=trunk",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_AUTHOR_DATE", "2026-12-01T12:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-12-01T12:00:00Z")
        .current_dir(project.root())
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The twelve commits, `main` at commit 5, and the commits' hashes in order.
fn twelve_commits() -> (Project, Vec<String>) {
    let costs: Vec<f64> = (1..=12).map(cost_at).collect();
    let (project, commits) = commits_costing(&costs);
    git(&project, &["branch", "-f", "main", &commits[4]]);
    (project, commits)
}

/// A repository of the `ab` fixture with one commit per cost (in ms), named `commit N`, and
/// the commits' hashes in order.
pub(crate) fn commits_costing(costs: &[f64]) -> (Project, Vec<String>) {
    let project = Project::with_fixtures(&["ab"]);
    std::fs::write(
        project.path(".gitignore"),
        "data/\nbook/\nbuilt.txt\n.lab-build\n",
    )
    .unwrap();
    git(&project, &["init", "-q"]);
    let mut commits = Vec::new();
    for (n, cost) in (1..).zip(costs) {
        let cost = format!("{cost}\n");
        std::fs::write(project.path("experiments/ab/cost.txt"), cost).unwrap();
        std::fs::write(project.path("NEWS"), format!("commit {n}\n")).unwrap();
        git(&project, &["add", "-A"]);
        git(&project, &["commit", "-q", "-m", &format!("commit {n}")]);
        commits.push(git(&project, &["rev-parse", "HEAD"]));
    }
    (project, commits)
}

/// A pull request branch whose head is commit `n`.
fn pull_request_at(project: &Project, commits: &[String], n: usize) {
    git(project, &["checkout", "-q", "-B", "pr", &commits[n - 1]]);
}

/// A pull request branch from `main` that changes only the README.
fn readme_only(project: &Project) {
    git(project, &["checkout", "-q", "-B", "docs", "main"]);
    std::fs::write(project.path("README.md"), "How to read the numbers.\n").unwrap();
    git(project, &["add", "-A"]);
    git(project, &["commit", "-q", "-m", "README only"]);
}

/// `lab ci --base main` with every output asked for, written into the project.
fn args(project: &Project) -> CiArgs {
    CiArgs {
        experiments: Vec::new(),
        base: "main".into(),
        deciding: Deciding {
            threshold: 0.05,
            max_runs: 30,
            budget: None,
        },
        comment: Some(project.path("comment.md")),
        url: Some("https://example.org/book/".into()),
        bmf: Some(project.path("bmf.json")),
        github_benchmark: Some(project.path("gab.json")),
        fail_on_inconclusive: false,
        no_confirm: false,
    }
}

fn ci(project: &Project, args: &CiArgs) -> Exit {
    let layout = Layout::new(project.root());
    app::ci(&layout, args, true, &mut costs_off_by(0.03)).unwrap()
}

fn json(project: &Project, file: &str) -> serde_json::Value {
    serde_json::from_str(&project.read(file)).unwrap()
}

#[test]
fn a_pull_request_carrying_the_planted_slowdown_is_slower_by_1_20_and_fails() {
    let (project, commits) = twelve_commits();
    pull_request_at(&project, &commits, 9);
    assert_eq!(ci(&project, &args(&project)), Exit::CheckFailed);
    let comment = project.read("comment.md");
    let row = comment.lines().find(|l| l.starts_with("| ab |")).unwrap();
    assert!(row.starts_with("| ab | **slower**: work, 1."), "{comment}");
    assert!(
        row.ends_with("| [chapter](https://example.org/book/ab/) |"),
        "{row}"
    );
    assert!(
        comment.contains(&format!("measured against `{}`", &commits[4][..12])),
        "the merge-base, commit 5, is the base: {comment}"
    );
    assert!(
        comment.contains("runs compared, in a second session that measured the slowdown again; "),
        "{comment}"
    );
    assert_eq!(
        project.sessions("ab").len(),
        2,
        "the slowdown was confirmed"
    );
    let bmf = json(&project, "bmf.json");
    let ratio = &bmf["ab/work"]["ms-ratio"];
    let (lo, r, hi) = (
        ratio["lower_value"].as_f64().unwrap(),
        ratio["value"].as_f64().unwrap(),
        ratio["upper_value"].as_f64().unwrap(),
    );
    assert!(
        1.05 < lo && lo <= r && r <= hi && (1.15..1.25).contains(&r),
        "{bmf}"
    );
    let gab = json(&project, "gab.json");
    assert_eq!(gab[0]["name"], "ab/work");
    assert_eq!(gab[0]["unit"], "ms");
    assert!(
        (110.0..130.0).contains(&gab[0]["value"].as_f64().unwrap()),
        "{gab}"
    );
    assert!(
        !project.path("gab-bigger.json").exists(),
        "no metric is better higher"
    );
}

#[test]
fn a_pull_request_that_changes_only_the_readme_is_the_same_and_passes() {
    let (project, _) = twelve_commits();
    readme_only(&project);
    assert_eq!(ci(&project, &args(&project)), Exit::Ok);
    let comment = project.read("comment.md");
    assert!(
        comment.contains("| ab | **same**: 1 cell within ±5.0% |"),
        "{comment}"
    );
    assert_eq!(project.sessions("ab").len(), 1, "nothing to confirm");
}

#[test]
fn the_speed_up_past_the_slowdown_is_faster_and_passes() {
    let (project, commits) = twelve_commits();
    git(&project, &["branch", "-f", "main", &commits[8]]);
    pull_request_at(&project, &commits, 11);
    assert_eq!(ci(&project, &args(&project)), Exit::Ok);
    let comment = project.read("comment.md");
    assert!(
        comment.contains("| ab | **faster**: work, 0.7"),
        "{comment}"
    );
}

#[test]
fn an_experiment_new_in_the_pull_request_and_a_head_at_the_base_are_not_failures() {
    let (project, commits) = twelve_commits();
    pull_request_at(&project, &commits, 5);
    assert_eq!(ci(&project, &args(&project)), Exit::Ok);
    assert!(project.read("comment.md").contains(
        "| ab | not measured: the head is the merge-base: nothing changed to compare | |"
    ));
    assert!(project.sessions("ab").is_empty());
    let (project, commits) = twelve_commits();
    git(&project, &["branch", "-f", "main", &commits[0]]);
    git(&project, &["checkout", "-q", "-B", "pr", "main"]);
    common::copy_dir(
        &project.path("experiments/ab"),
        &project.path("experiments/fresh"),
    );
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-q", "-m", "a new experiment"]);
    let only_fresh = CiArgs {
        experiments: vec![PathBuf::from("fresh")],
        ..args(&project)
    };
    assert_eq!(ci(&project, &only_fresh), Exit::Ok);
    assert!(
        project
            .read("comment.md")
            .contains("| fresh | not measured: new in this pull request: the merge-base has no such experiment | |"),
        "{}",
        project.read("comment.md")
    );
}

#[test]
fn a_base_that_is_not_there_is_refused_with_a_hint() {
    let (project, commits) = twelve_commits();
    pull_request_at(&project, &commits, 9);
    let out = project.lab_exits(&["ci", "--base", "nosuch"], Exit::Usage);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot find where HEAD left nosuch"), "{err}");
    assert!(err.contains("fetch-depth: 0"), "{err}");
    let plain = Project::with_fixtures(&["ab"]);
    let out = plain.lab_exits(&["ci"], Exit::Usage);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not in a git repository with a commit"),
        "{err}"
    );
}

/// The comment and both exports of the slower pull request, whole; what measuring took and
/// the machine are redacted.
#[test]
fn the_comment_and_the_exports_of_a_slower_pull_request() {
    let (project, commits) = twelve_commits();
    pull_request_at(&project, &commits, 9);
    ci(&project, &args(&project));
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.add_filter(r"\d+ runs compared, [^\n]*", "[used]");
    settings.bind(|| {
        insta::assert_snapshot!("ci_comment", project.read("comment.md"));
        insta::assert_snapshot!("ci_bmf", project.read("bmf.json"));
        insta::assert_snapshot!("ci_github_benchmark", project.read("gab.json"));
    });
}

/// Through the binary, with real processes (a shell script of about 100 ms a run): the
/// README-only pull request answers "same", exits 0 and appends its answer to the step
/// summary.
#[test]
fn the_command_line_answers_into_the_step_summary() {
    let (project, _) = twelve_commits();
    readme_only(&project);
    let summary = project.path("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
        .args([
            "ci",
            "--base",
            "main",
            "--threshold",
            "10%",
            "--comment",
            "c.md",
        ])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .current_dir(project.root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(written.starts_with("earlier step\n### lab: this pull request against `main`"));
    assert!(
        written.contains("| ab | **same**: 1 cell within ±10.0% |"),
        "{written}"
    );
    assert_eq!(written["earlier step\n".len()..], project.read("c.md"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("| ab | **same**"), "{stdout}");
}

/// The comment as GitHub reads it (CommonMark with tables, raw `<details>` kept): one table
/// row per experiment with three cells, the answer in bold, the chapter a link, and the cells
/// folded.
#[test]
fn the_comment_renders_as_a_table_with_the_cells_folded() {
    let (project, commits) = twelve_commits();
    pull_request_at(&project, &commits, 9);
    ci(&project, &args(&project));
    let markdown = project.read("comment.md");
    let parser = pulldown_cmark::Parser::new_ext(&markdown, pulldown_cmark::Options::ENABLE_TABLES);
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, parser);
    assert_eq!(html.matches("<table>").count(), 2, "{html}");
    let row = html
        .split("<tr>")
        .find(|r| r.contains("<td>ab</td>"))
        .unwrap_or_else(|| panic!("{html}"));
    assert_eq!(row.matches("<td>").count(), 3, "{row}");
    assert!(
        row.contains("<td><strong>slower</strong>: work, 1."),
        "{row}"
    );
    assert!(
        row.contains(r#"<a href="https://example.org/book/ab/">chapter</a>"#),
        "{row}"
    );
    assert!(
        html.contains("<details><summary>ab: ms per cell, head / merge-base</summary>"),
        "{html}"
    );
    let cell = html
        .split("<tr>")
        .find(|r| r.contains("<td>work</td>"))
        .unwrap_or_else(|| panic!("{html}"));
    assert_eq!(cell.matches("<td>").count(), 5, "{cell}");
    assert!(cell.contains("<td>slower</td>"), "{cell}");
}

/// A head whose build fails: its row says why, with the build's first line of output, and the
/// status is the build error's.
#[test]
fn a_head_that_does_not_build_says_why_in_its_row() {
    let (project, _) = twelve_commits();
    git(&project, &["checkout", "-q", "-B", "broken", "main"]);
    git(&project, &["rm", "-q", "experiments/ab/cost.txt"]);
    git(&project, &["commit", "-q", "-m", "lose the cost"]);
    let layout = Layout::new(project.root());
    let exit = app::ci(&layout, &args(&project), true, &mut costs_off_by(0.03)).unwrap();
    assert_eq!(exit, Exit::Usage);
    let comment = project.read("comment.md");
    let row = comment.lines().find(|l| l.starts_with("| ab |")).unwrap();
    assert!(
        row.contains("| ab | not measured: the build at HEAD failed"),
        "{row}"
    );
    assert!(
        row.contains("cost.txt"),
        "the build's output is quoted: {row}"
    );
}
