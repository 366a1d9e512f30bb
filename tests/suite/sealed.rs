//! A session is a sealed record: judged by the lab.toml it ran with, re-analysed only on
//! request into a derived session, rendered atomically, stored so that no kill, duplicate or
//! second writer can make it lie.

use crate::common;
use crate::common::stderr_text as stderr;
use lab::Exit;

use common::{Project, copy_dir, csv_rows, exit_of, tree};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn edit(project: &Project, file: &str, from: &str, to: &str) {
    let text = project.read(file);
    assert!(text.contains(from), "{file} has no {from:?}");
    std::fs::write(project.path(file), text.replacen(from, to, 1)).unwrap();
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The session holds the lab.toml and notes it ran with, and the command that ran it.
fn assert_sealed(project: &Project, parent: &std::path::Path) {
    let sealed = project.read("experiments/tiny/lab.toml");
    assert_eq!(
        std::fs::read_to_string(parent.join("sealed/lab.toml")).unwrap(),
        sealed
    );
    assert_eq!(
        std::fs::read_to_string(parent.join("sealed/notes.md")).unwrap(),
        project.read("experiments/tiny/notes.md")
    );
    assert_eq!(
        json(&parent.join("manifest.json"))["command"],
        "lab run tiny --quiet"
    );
}

/// Edits lab.toml after the session: expect 1.4 → 1.6 (the ratio is exactly 1.5), seed 3 →
/// 99, a split argv, a regex that matches nothing.
fn edit_after_the_session(project: &Project, lab_toml: &str) {
    edit(project, lab_toml, "a > 1.4 * b", "a > 1.6 * b");
    edit(project, lab_toml, "seed = 3", "seed = 99");
    edit(
        project,
        lab_toml,
        r#"run = ["sh", "bench.sh", "double", "{n}"]"#,
        r#"run = ["sh", "./bench.sh", "double", "{n}"]"#,
    );
    edit(
        project,
        lab_toml,
        r#"json = "score""#,
        r#"regex = 'nothing=(\d+)'"#,
    );
}

/// A session derived from `parent` with today's lab.toml: the values return, today's
/// thresholds apply.
fn assert_derived_from(project: &Project, derived: &std::path::Path, parent: &std::path::Path) {
    assert_eq!(project.sessions("tiny").len(), 3);
    let manifest = json(&derived.join("manifest.json"));
    assert_eq!(
        manifest["derived_from"],
        parent.file_name().unwrap().to_str().unwrap()
    );
    let scores: Vec<String> = csv_rows(&derived.join("samples.csv"))
        .into_iter()
        .filter(|s| s["metric"] == "score")
        .map(|s| s["value"].clone())
        .collect();
    assert_eq!(scores.len(), 16);
    assert!(
        scores
            .iter()
            .all(|v| ["2", "4", "3", "6"].contains(&v.as_str())),
        "{scores:?}"
    );
    let checks = common::verdicts(project, "tiny");
    let verdict =
        |name: &str| checks.iter().find(|c| c["name"] == name).unwrap()["verdict"].clone();
    assert_eq!(
        verdict("triple beats double by at least 1.4 at n=2"),
        "fail",
        "today's 1.6 applies"
    );
    assert_eq!(verdict("every run reported every metric"), "pass");
}

/// Until re-analysed, the session keeps its verdicts and its chapter the lab.toml it ran
/// with, with a note that the file has changed.
fn assert_verdicts_kept(project: &Project, before: &[u8]) {
    let after = project.lab_exits(&["check", "tiny", "--json"], Exit::CheckFailed);
    assert_eq!(after.stdout, before, "the session keeps its verdicts");
    assert!(
        stderr(&after).contains("has changed since session")
            && stderr(&after).contains("`lab reanalyze"),
        "{}",
        stderr(&after)
    );
    project.lab_exits(&["report", "tiny", "--quiet"], Exit::Ok);
    let page = project.read("book/src/tiny/index.md");
    assert!(
        page.contains("resamples, seed 3, drawn from xoshiro256++ streams (analysis 3))"),
        "bootstrap seed of the session"
    );
    assert!(page.contains("> **Note.**") && page.contains("has changed since session"));
    assert!(page.contains("sh bench.sh double {n}") && !page.contains("./bench.sh"));
}

/// The parent session's runs and samples are the bytes they were.
fn assert_untouched(parent: &std::path::Path, raw_before: &(Vec<u8>, Vec<u8>)) {
    assert_eq!(
        std::fs::read(parent.join("runs.csv")).unwrap(),
        raw_before.0
    );
    assert_eq!(
        std::fs::read(parent.join("samples.csv")).unwrap(),
        raw_before.1
    );
}

#[test]
fn editing_lab_toml_after_a_session_changes_no_verdict_until_reanalyzed() {
    let project = Project::with_fixtures(&["tiny"]);
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    let parent = project.session("tiny");
    assert_sealed(&project, &parent);
    let before = project
        .lab_exits(&["check", "tiny", "--json"], Exit::CheckFailed)
        .stdout;
    let raw_before = (
        std::fs::read(parent.join("runs.csv")).unwrap(),
        std::fs::read(parent.join("samples.csv")).unwrap(),
    );

    let lab_toml = "experiments/tiny/lab.toml";
    edit_after_the_session(&project, lab_toml);
    assert_verdicts_kept(&project, &before);
    // Re-analysis cannot change what ran.
    let refused = project.lab_exits(&["reanalyze", "tiny"], Exit::Usage);
    assert!(
        stderr(&refused).contains("cannot re-analyse session"),
        "{}",
        stderr(&refused)
    );
    edit(
        &project,
        lab_toml,
        r#"["sh", "./bench.sh""#,
        r#"["sh", "bench.sh""#,
    );

    // With the broken regex every run misses the metric; with the fixed one the values return.
    project.lab_exits(&["reanalyze", "tiny", "--quiet"], Exit::Ok);
    project.lab_exits(&["check", "tiny"], Exit::CheckFailed);
    edit(
        &project,
        lab_toml,
        r#"regex = 'nothing=(\d+)'"#,
        r#"regex = '"score": (\d+)'"#,
    );
    project.lab_exits(
        &[
            "reanalyze",
            "tiny",
            "--quiet",
            "--session",
            parent.file_name().unwrap().to_str().unwrap(),
        ],
        Exit::Ok,
    );
    let derived = project.session("tiny");
    assert_derived_from(&project, &derived, &parent);
    assert_untouched(&parent, &raw_before);
    let page = project.read("book/src/tiny/index.md");
    assert!(
        page.contains("re-analysed from session"),
        "the header names the parent"
    );
}

#[test]
fn a_quick_profile_renders_missing_data_as_markers_not_errors() {
    let project = Project::with_fixtures(&["tiny"]);
    let lab_toml = project
        .read("experiments/tiny/lab.toml")
        .replace("n = [1, 2]", "n = [1, 2, 3]");
    std::fs::write(
        project.path("experiments/tiny/lab.toml"),
        format!(
            "{lab_toml}\n[profile.quick]\nrepetitions = 2\nwarmup_runs = 0\nparams.n = [1, 2]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        project.path("experiments/tiny/notes.md"),
        "One: {{ cell(of=\"triple n=3\") }}.\nRatio: {{ ratio(a=\"triple n=2\", b=\"double n=2\") }}.\nLo: {{ ratio(a=\"triple n=2\", b=\"double n=2\", stat=\"lo\") | num }}.\n",
    )
    .unwrap();
    let out = project.lab_exits(&["run", "tiny", "--profile", "quick"], Exit::Ok);
    let page = project.read("book/src/tiny/index.md");
    assert!(
        page.contains("One: n/a (not run in this session)."),
        "{page}"
    );
    assert!(
        page.contains("Ratio: n/a (triple n=2 has 2 valid runs; 3 are needed)."),
        "{page}"
    );
    assert!(
        page.contains("Lo: n/a (triple n=2 has 2 valid runs; 3 are needed)."),
        "{page}"
    );
    assert!(page.contains("(profile quick; complete)"), "{page}");
    let err = stderr(&out);
    assert!(
        err.contains(
            "warning: experiments/tiny/notes.md: cell \"triple n=3\": n/a (not run in this session)"
        ),
        "{err}"
    );
}

#[test]
fn a_statistic_one_run_cannot_define_renders_as_a_marker_not_as_nothing() {
    let project = Project::with_fixtures(&["tiny"]);
    let lab_toml = project.read("experiments/tiny/lab.toml");
    std::fs::write(
        project.path("experiments/tiny/lab.toml"),
        format!("{lab_toml}\n[profile.one]\nrepetitions = 1\nwarmup_runs = 0\n"),
    )
    .unwrap();
    std::fs::write(
        project.path("experiments/tiny/notes.md"),
        "CV: {{ cell(of=\"triple n=2\", stat=\"cv\") | num }}.\nN: {{ cell(of=\"triple n=2\", stat=\"n\") | num }}.\n",
    )
    .unwrap();
    let out = project.lab_exits(&["run", "tiny", "--profile", "one"], Exit::Ok);
    let page = project.read("book/src/tiny/index.md");
    assert!(
        page.contains("CV: n/a (triple n=2 has 1 valid runs; its cv is not defined)."),
        "{page}"
    );
    // The runs counted link to their number, as the results table shows it.
    assert!(
        page.contains("N: [1](provenance.md#triple-n-2.score.runs)."),
        "{page}"
    );
    let err = stderr(&out);
    assert!(
        err.contains(
            "cell \"triple n=2\": n/a (triple n=2 has 1 valid runs; its cv is not defined)"
        ),
        "{err}"
    );
}

/// The summary still lists twin as before; tiny, now with two sessions, gains its History.
fn assert_summary_keeps_twin(
    book: &std::collections::BTreeMap<String, Vec<u8>>,
    after: &std::collections::BTreeMap<String, Vec<u8>>,
) {
    let summary = |t: &std::collections::BTreeMap<String, Vec<u8>>| {
        String::from_utf8_lossy(&t["src/SUMMARY.md"]).into_owned()
    };
    let twin_line = |s: &str| {
        s.lines()
            .find(|l| l.contains("twin/index.md"))
            .map(str::to_string)
    };
    assert!(twin_line(&summary(book)).is_some());
    assert_eq!(twin_line(&summary(after)), twin_line(&summary(book)));
    assert!(summary(after).contains("  - [History](tiny/history.md)"));
}

#[test]
fn a_broken_notes_reference_or_sibling_leaves_the_book_byte_identical() {
    let project = Project::with_fixtures(&["tiny"]);
    copy_dir(
        &project.path("experiments/tiny"),
        &project.path("experiments/twin"),
    );
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    project.lab_exits(&["run", "twin", "--quiet"], Exit::CheckFailed);
    let book = tree(&project.path("book"));

    // A typo in notes.md: an error at its line and column, nothing in the book changes.
    let notes = project.read("experiments/tiny/notes.md");
    std::fs::write(
        project.path("experiments/tiny/notes.md"),
        format!("{notes}\nAnd {{{{ cell(of=\"quadruple n=2\") }}}}.\n"),
    )
    .unwrap();
    let out = project.lab_exits(&["report"], Exit::Usage);
    let lines = notes.lines().count();
    assert!(
        stderr(&out).contains(&format!("experiments/tiny/notes.md:{}:8:", lines + 2)),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("no cell matches \"quadruple n=2\""));
    let now = tree(&project.path("book"));
    let changed: Vec<&String> = now.keys().filter(|k| book.get(*k) != now.get(*k)).collect();
    assert!(
        now.len() == book.len() && changed.is_empty(),
        "the book changed: {changed:?}"
    );
    std::fs::write(project.path("experiments/tiny/notes.md"), &notes).unwrap();

    // A damaged sibling session: its chapter stays, tiny's is still written.
    let runs = project.session("twin").join("runs.csv");
    let text = std::fs::read_to_string(&runs).unwrap();
    let last = text.lines().last().unwrap().to_string();
    std::fs::write(&runs, format!("{text}{last}\n")).unwrap();
    let out = project.lab_exits(&["report"], Exit::Internal);
    assert!(stderr(&out).contains("appears twice"), "{}", stderr(&out));
    assert!(tree(&project.path("book")) == book, "the book is unchanged");
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    let after = tree(&project.path("book"));
    for (path, bytes) in &book {
        if path.starts_with("src/twin/") {
            assert!(after[path] == *bytes, "{path} changed");
        }
    }
    assert_summary_keeps_twin(&book, &after);
}

/// A seeded sequence of delays, so the kill points are the same on every run of the test.
fn delays(seed: u64, count: usize, max_ms: u64) -> Vec<Duration> {
    let mut x = seed;
    (0..count)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            Duration::from_millis((x >> 33) % max_ms)
        })
        .collect()
}

/// Runs lab until the latest session is complete: a kill may have left the lock to a dead
/// lab, which a later run takes over, or the last killed run may have finished the plan.
fn finish_the_plan(project: &Project) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !project.sessions("many").last().is_some_and(|s| {
        std::fs::read_to_string(s.join("manifest.json"))
            .is_ok_and(|m| m.contains("\"complete\": true"))
    }) {
        let out = if project.sessions("many").is_empty() {
            project.lab(&["run", "many", "--quiet"])
        } else {
            project.lab(&["run", "many", "--resume", "--quiet"])
        };
        if exit_of(&out) == Exit::Ok {
            break;
        }
        assert!(Instant::now() < deadline, "{}", stderr(&out));
    }
}

/// A complete session ran every planned run exactly once; every session holds two values
/// and whole output per committed run.
fn assert_once_each(session: &std::path::Path) {
    let plan = json(&session.join("plan.json"));
    let mut planned: Vec<String> = plan["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let runs = csv_rows(&session.join("runs.csv"));
    let mut ran: Vec<String> = runs.iter().map(|r| r["run_id"].clone()).collect();
    planned.sort();
    ran.sort();
    let complete = json(&session.join("manifest.json"))["complete"] == true;
    if complete {
        assert_eq!(ran, planned, "every planned run exactly once");
    }
    let samples = csv_rows(&session.join("samples.csv"));
    assert_eq!(
        samples.len(),
        2 * runs.len(),
        "two values per committed run, no orphan"
    );
    // Each committed run's output is whole in the packs, whatever the kills cut.
    for row in &runs {
        let n = &row["n"];
        assert_eq!(
            crate::common::run_stdout(session, &row["run_id"]),
            format!("v={n}\nv={n}{n}\n"),
            "{}",
            row["run_id"]
        );
    }
}

#[test]
fn kill_9_at_twenty_points_then_resume_gives_the_plan_exactly_once() {
    let project = Project::with_fixtures(&["many"]);
    for delay in delays(20_261_130, 20, 700) {
        let args: &[&str] = if project.sessions("many").is_empty() {
            &["run", "many", "--quiet"]
        } else {
            &["run", "many", "--resume", "--quiet"]
        };
        let mut lab = Command::new(env!("CARGO_BIN_EXE_lab"))
            .args(args)
            .current_dir(project.root())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        lab.kill().unwrap();
        lab.wait().unwrap();
    }
    finish_the_plan(&project);
    for session in project.sessions("many") {
        assert_once_each(&session);
    }
    let out = project.lab_exits(&["check", "many"], Exit::Ok);
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("pass          validity   every run reported every metric"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_second_writer_of_one_experiment_is_refused() {
    let project = Project::with_fixtures(&["slow"]);
    let mut first = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["run", "slow", "--quiet"])
        .current_dir(project.root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while project.sessions("slow").is_empty() {
        assert!(Instant::now() < deadline, "the first session never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    for args in [&["run", "slow"][..], &["run", "slow", "--resume"][..]] {
        let out = project.lab_exits(args, Exit::Usage);
        assert!(
            stderr(&out).contains(&format!(
                "slow is being written by another lab (pid {}",
                first.id()
            )),
            "{}",
            stderr(&out)
        );
    }
    first.kill().unwrap();
    first.wait().unwrap();
    // The kernel released the lock with the process: resuming works at once.
    project.lab_exits(&["run", "slow", "--resume", "--quiet"], Exit::Ok);
}

#[test]
fn a_run_that_deletes_session_files_marks_the_session_damaged_and_loses_nothing() {
    let project = Project::with_fixtures(&["tiny"]);
    edit(
        &project,
        "experiments/tiny/lab.toml",
        r#"run = ["sh", "bench.sh", "double", "{n}"]"#,
        r#"run = ["sh", "-c", "rm -f ../../data/tiny/*/runs.csv; sh bench.sh double $0", "{n}"]"#,
    );
    // With the default isolation the deletion fails inside the run; without it, lab notices.
    edit(
        &project,
        "experiments/tiny/lab.toml",
        "[experiment]\n",
        "[experiment]\nisolation = \"none\"\n",
    );
    let out = project.lab_exits(&["run", "tiny"], Exit::Internal);
    assert!(
        stderr(&out).contains("changed the session's files: runs.csv was deleted"),
        "{}",
        stderr(&out)
    );
    let session = project.session("tiny");
    let manifest = json(&session.join("manifest.json"));
    assert!(
        manifest["damaged"]
            .as_str()
            .unwrap()
            .contains("runs.csv was deleted")
    );
    let runs = csv_rows(&session.join("runs.csv"));
    assert!(!runs.is_empty(), "what lab wrote is put back");
    assert_eq!(
        csv_rows(&session.join("samples.csv")).len(),
        runs.iter()
            .map(|r| r["samples"].parse::<usize>().unwrap())
            .sum::<usize>()
    );
    let check = project.lab_exits(&["check", "tiny"], Exit::CheckFailed);
    assert!(String::from_utf8_lossy(&check.stdout).contains("no run changed the session's files"));
}
