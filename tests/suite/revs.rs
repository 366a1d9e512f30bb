//! `lab run EXP --revs BASE,HEAD` on a git repository of a fixture: each revision is built in
//! its own worktree and their runs interleave in one session (a seeded program reads the cost
//! each revision's build left in its worktree). A second commit 20% slower exits
//! 1 with an interval excluding 1; two commits of the same program exit 0; `--confirm` measures
//! a regression twice before reporting it.

use crate::common;
use lab::Exit;

use common::{FakeRunner, Project, Reply, git};
use lab::app::{self, RunOptions};
use lab::compare::between_revisions;
use lab::layout::Layout;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::Path;

/// A repository whose first commit costs 100 ms and whose second costs `then`.
fn two_commits(then: &str) -> Project {
    two_commits_with(then, "repetitions = 10")
}

/// [`two_commits`] with the fixture's `repetitions = 10` line replaced by `repetitions`.
pub(crate) fn two_commits_with(then: &str, repetitions: &str) -> Project {
    let project = Project::with_fixtures(&["ab"]);
    let toml = project.path("experiments/ab/lab.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, text.replacen("repetitions = 10", repetitions, 1)).unwrap();
    std::fs::write(
        project.path(".gitignore"),
        "data/\nbook/\nbuilt.txt\n.lab-build\n",
    )
    .unwrap();
    git(&project, &["init", "-q"]);
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-q", "-m", "first"]);
    std::fs::write(project.path("experiments/ab/cost.txt"), format!("{then}\n")).unwrap();
    std::fs::write(project.path("NEWS"), "second\n").unwrap();
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-q", "-m", "second"]);
    project
}

/// A program whose run costs what the build copied into `built.txt` in the folder it runs in
/// (so each revision's worktree tells its own cost), off by 3%, from a seeded stream.
fn costs() -> FakeRunner {
    costs_off_by(0.03)
}

/// [`costs`] with each run off by `noise` (a share: 0.03 for 3%).
pub(crate) fn costs_off_by(noise: f64) -> FakeRunner {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    FakeRunner::new(move |run| {
        let cost: f64 = std::fs::read_to_string(run.request.cwd.join("built.txt"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0.001);
        Reply::ms(cost * (1.0 + noise * common::twelve_uniforms(&mut rng)))
    })
}

/// `lab run ab --revs HEAD~1,HEAD [--confirm]` with the seeded program: the exit code and the
/// newest session's comparison of the two revisions.
fn measure(project: &Project, confirm: bool) -> (i32, serde_json::Value) {
    let layout = Layout::new(project.root());
    let revs = vec!["HEAD~1".to_string(), "HEAD".to_string()];
    let opts = RunOptions {
        revs: Some(&revs),
        confirm,
        ..common::quiet_run("ab")
    };
    let mut runner = costs();
    let code = app::run(&layout, Path::new("ab"), &opts, &mut runner).unwrap();
    let dir = layout.experiment_dir(Path::new("ab")).unwrap();
    let a = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    let revisions = a.session.manifest.revisions.as_ref().unwrap();
    let metric = a.experiment.primary_metric().unwrap();
    let overall = a.looks.last().map_or(0.95, |s| s.level);
    let c = between_revisions(&a.experiment, &a.analysis, revisions, metric, overall).unwrap();
    (code.code(), serde_json::to_value(&c).unwrap())
}

/// Both revisions ran in one session, interleaved, each in its own worktree, which git does
/// not see.
fn both_revisions_ran_interleaved_in_worktrees(project: &Project) {
    let session = project.session("ab");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("manifest.json")).unwrap())
            .unwrap();
    let revs = manifest["revisions"]["revs"].as_array().unwrap();
    assert_eq!(revs[0]["name"], "HEAD~1");
    assert_eq!(
        revs[1]["commit"],
        git(project, &["rev-parse", "HEAD"]).as_str()
    );
    let plan = std::fs::read_to_string(session.join("plan.json")).unwrap();
    let order: Vec<bool> = serde_json::from_str::<serde_json::Value>(&plan).unwrap()["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["params"]["rev"] == "HEAD")
        .collect();
    // Every block of two runs holds one run of each revision.
    assert!(order.chunks(2).all(|b| b[0] != b[1]), "{order:?}");
    for rev in revs {
        let commit = rev["commit"].as_str().unwrap();
        let built = project.path(&format!(
            ".lab/worktrees/{}/experiments/ab/built.txt",
            &commit[..12]
        ));
        assert!(built.is_file(), "{}", built.display());
    }
    assert_eq!(
        git(project, &["status", "--porcelain"]),
        "",
        "the worktrees stay out of git"
    );
}

#[test]
fn a_second_commit_20_percent_slower_fails_with_an_interval_excluding_1() {
    let project = two_commits("120");
    let (code, c) = measure(&project, false);
    assert_eq!(
        Exit::from_code(code),
        Exit::CheckFailed,
        "a regression fails the command"
    );
    assert_eq!(c["regressed"], true, "{c}");
    let cell = &c["cells"][0];
    assert_eq!(cell["cell"], "work");
    assert_eq!(cell["verdict"], "slower");
    assert_eq!(
        (cell["a_runs"].as_u64(), cell["b_runs"].as_u64()),
        (Some(10), Some(10))
    );
    let (lo, r) = (
        cell["lo"].as_f64().unwrap(),
        cell["ratio"].as_f64().unwrap(),
    );
    assert!(lo > 1.02 && (1.15..1.25).contains(&r), "{cell}");
    both_revisions_ran_interleaved_in_worktrees(&project);
    let chapter = crate::common::unlinked(&project.read("book/src/ab/index.md"));
    assert!(chapter.contains("## Compared with HEAD\\~1 ("), "{chapter}");
    assert!(chapter.contains("| work |"), "{chapter}");
    // notes.md names the cell without a revision: it reads the head revision's.
    let head = c["cells"][0]["b_median"].as_f64().unwrap();
    assert!(
        chapter.contains(&format!(
            "The program costs {} ms \\[",
            lab::format::significant(head, 3)
        )),
        "{chapter}"
    );
    assert!(c["summary"].as_str().unwrap().contains("1 slower"), "{c}");
}

#[test]
fn two_commits_of_the_same_program_exit_0() {
    let project = two_commits("100");
    let (code, c) = measure(&project, false);
    assert_eq!(Exit::from_code(code), Exit::Ok);
    assert_eq!(c["regressed"], false);
    assert_eq!(c["cells"][0]["verdict"], "inconclusive", "{c}");
    let (lo, hi) = (
        c["cells"][0]["lo"].as_f64().unwrap(),
        c["cells"][0]["hi"].as_f64().unwrap(),
    );
    assert!(lo < 1.0 && hi > 1.0, "{c}");
}

#[test]
fn confirm_measures_a_regression_again_before_reporting_it() {
    let project = two_commits("120");
    let (code, confirmed) = measure(&project, true);
    assert_eq!(
        Exit::from_code(code),
        Exit::CheckFailed,
        "a confirmed regression fails the command"
    );
    assert_eq!(confirmed["regressed"], true, "{confirmed}");
    let sessions = project.sessions("ab");
    assert_eq!(sessions.len(), 2);
    let manifest = std::fs::read_to_string(sessions[1].join("manifest.json")).unwrap();
    let first = sessions[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        manifest.contains(&format!("\"confirms\": \"{first}\"")),
        "{manifest}"
    );
    // Another shuffle: the second session is not the first one again.
    let plan = |d: &std::path::Path| std::fs::read_to_string(d.join("plan.json")).unwrap();
    assert_ne!(plan(&sessions[0]), plan(&sessions[1]));
}

#[test]
fn revisions_that_cannot_be_measured_are_refused_before_anything_runs() {
    let project = two_commits("100");
    for (revs, says) in [
        ("HEAD", "name two different git revisions"),
        ("HEAD,HEAD", "name two different git revisions"),
        ("nosuch,HEAD", "\"nosuch\" is not a commit"),
    ] {
        let out = project.lab_exits(&["run", "ab", "--revs", revs], Exit::Usage);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{revs}: {err}");
    }
    assert!(project.sessions("ab").is_empty());
    let plain = Project::with_fixtures(&["ab"]);
    let out = plain.lab_exits(&["run", "ab", "--revs", "HEAD~1,HEAD"], Exit::Usage);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--revs needs the experiment in a git repository"),
        "{err}"
    );
}
