//! Sampling until the answer is known (`repetitions = { min, max }`), end to end with a fake
//! runner: a session that adds looks until its hypothesis is decided, one that spends its
//! budget on a difference that is not there, and the refusals of a malformed range.

use crate::common::{self, FakeRunner};
use lab::Exit;

use lab::app::{self, RunOptions};
use lab::layout::Layout;
use lab::stats::sequential::{look_levels, schedule};
use lab::stopping::Next;
use std::path::Path;

/// What `bench.sh` prints, drawn from a seeded stream: about 100 ms, `gap` percent longer for
/// `slow`, each run off by 8%.
fn noisy() -> FakeRunner {
    common::timed(100.0, 2026)
}

/// Measured runs the fake answered.
fn measured(fake: &FakeRunner) -> usize {
    fake.seen().started.len()
}

fn options(profile: Option<&'static str>) -> RunOptions<'static> {
    RunOptions {
        profile,
        ..common::quiet_run("sampled")
    }
}

/// Valid runs per cell of the stored session, by cell label.
fn runs_per_cell(assessed: &lab::Assessed) -> Vec<(String, usize)> {
    assessed
        .analysis
        .cells
        .iter()
        .filter(|c| c.metric == "ms")
        .map(|c| (c.label.clone(), c.n))
        .collect()
}

/// The hypothesis passes with its interval at the last look's level.
fn assert_decided_at(a: &lab::Assessed, level: f64) {
    let check = a
        .findings
        .checks
        .iter()
        .find(|c| c.name == "slow takes longer than fast")
        .unwrap();
    assert_eq!(check.verdict.word(), "pass");
    let ratio = check.ratio.as_ref().unwrap();
    assert_eq!(ratio.level, level);
    assert!(
        ratio.lo > 1.0 && ratio.ratio > 1.05 && ratio.ratio < 1.15,
        "{ratio:?}"
    );
}

/// The chapter says at which look sampling stopped, with how many runs, at which level.
fn assert_chapter_says_when(project: &common::Project, last: &lab::stopping::Standing, level: f64) {
    let n = last.runs_per_cell;
    let chapter = common::unlinked(&project.read("book/src/sampled/index.md"));
    let shown = lab::format::level(level);
    assert!(
        chapter.contains(&format!(
            "Sampling stopped at look {} of up to 6 ({n} runs per cell in the 2 cells it depends on, intervals at {shown}): the goal (every hypothesis decided) was met.",
            last.look
        )),
        "{chapter}"
    );
    assert!(
        chapter.contains(&format!("Median \\[{shown} CI\\]")),
        "{chapter}"
    );
    assert!(
        chapter.contains(&format!(
            "decided at look {} ({n} runs per cell)",
            last.look
        )),
        "{chapter}"
    );
    assert!(chapter.contains(&format!(
        "| {} | {n} | {shown} | nothing: the goal was met |",
        last.look
    )));
}

#[test]
fn runs_are_added_look_by_look_until_the_hypothesis_is_decided() {
    let project = common::Project::with_fixtures(&["sampled"]);
    let layout = Layout::new(project.root());
    let mut noisy = noisy();
    let code = app::run(&layout, Path::new("sampled"), &options(None), &mut noisy).unwrap();
    assert_eq!(code, Exit::Ok);

    let dir = layout.experiment_dir(Path::new("sampled")).unwrap();
    let a = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    let looks = &a.looks;
    let last = looks.last().unwrap();
    assert_eq!(last.next, Next::GoalMet);
    // Five runs per cell cannot separate a 10% gap in 8% noise at 99%; the goal is met at a
    // later look, every cell at that look's count, every interval at that look's level.
    assert!(last.look > 1, "{looks:?}");
    let sizes = schedule(5, 40);
    let n = sizes[last.look as usize - 1];
    assert_eq!(last.runs_per_cell, n);
    assert_eq!(
        runs_per_cell(&a),
        vec![
            ("fast".to_string(), n as usize),
            ("slow".to_string(), n as usize)
        ]
    );
    assert_eq!(measured(&noisy), 2 * n as usize);
    let level = look_levels(0.95, &sizes)[last.look as usize - 1];
    assert_eq!(a.analysis.resampling.level, level);
    // Each earlier look left the hypothesis open, with the runs it had then.
    for (i, earlier) in looks[..looks.len() - 1].iter().enumerate() {
        assert_eq!(earlier.look, i as u32 + 1);
        assert_eq!(earlier.runs_per_cell, sizes[i]);
        assert_eq!(
            earlier.unmet,
            vec!["slow takes longer than fast".to_string()]
        );
        assert!(matches!(earlier.next, Next::More { .. }));
    }
    assert_decided_at(&a, level);

    assert_chapter_says_when(&project, last, level);
}

#[test]
fn a_difference_that_is_not_there_spends_the_budget_and_stays_undecided() {
    let project = common::Project::with_fixtures(&["sampled"]);
    let layout = Layout::new(project.root());
    let mut noisy = noisy();
    let code = app::run(
        &layout,
        Path::new("sampled"),
        &options(Some("even")),
        &mut noisy,
    )
    .unwrap();
    assert_eq!(code, Exit::Ok, "an undecided hypothesis is not a failure");
    // Looks at 3, 5 and 8 runs per cell: 16 runs, and none after the budget.
    assert_eq!(measured(&noisy), 16);

    let dir = layout.experiment_dir(Path::new("sampled")).unwrap();
    let a = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    let steps: Vec<(u32, u32)> = a.looks.iter().map(|s| (s.look, s.runs_per_cell)).collect();
    assert_eq!(steps, vec![(1, 3), (2, 5), (3, 8)]);
    let last = a.looks.last().unwrap();
    assert_eq!(last.next, Next::BudgetSpent);
    assert_eq!(last.unmet, vec!["slow takes longer than fast".to_string()]);
    let check = &a.findings.checks.last().unwrap();
    assert_eq!(check.verdict.word(), "inconclusive");
    let chapter = project.read("book/src/sampled/index.md");
    assert!(
        chapter.contains("the budget was spent before the goal (every hypothesis decided) was met; still open: slow takes longer than fast (likely not within 8 runs per cell: about 22 would decide it)."),
        "{chapter}"
    );
    assert!(chapter.contains("still undecided at look 3 (8 runs per cell): the budget was spent"));
}

#[test]
fn a_precision_goal_adds_runs_to_every_cell_until_each_interval_is_narrow() {
    let project = common::Project::with_fixtures(&["sampled"]);
    let toml = project.path("experiments/sampled/lab.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replacen(
        "repetitions = { min = 5, max = 40 }",
        "repetitions = { min = 8, max = 40 }\nstop = { half_width = \"5%\" }",
        1,
    );
    std::fs::write(&toml, text).unwrap();
    let layout = Layout::new(project.root());
    let mut noisy = noisy();
    app::run(&layout, Path::new("sampled"), &options(None), &mut noisy).unwrap();

    let dir = layout.experiment_dir(Path::new("sampled")).unwrap();
    let a = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    let last = a.looks.last().unwrap();
    assert_eq!(last.next, Next::GoalMet, "{:?}", a.looks);
    assert!(last.look > 1);
    for cell in a.analysis.cells.iter().filter(|c| c.metric == "ms") {
        assert_eq!(cell.n, last.runs_per_cell as usize);
        let ci = cell.median_ci.unwrap();
        let half = (ci.hi - ci.lo) / 2.0 / cell.median().unwrap();
        assert!(half <= 0.05, "{}: ±{half}", cell.label);
    }
    // The look before had a cell wider than ±5%, named with its width.
    let before = &a.looks[a.looks.len() - 2];
    assert!(
        before.unmet.iter().all(|u| u.contains("(needs ±5.0%)")) && !before.unmet.is_empty(),
        "{before:?}"
    );
}

#[test]
fn a_session_cut_short_in_a_look_resumes_it_and_keeps_looking() {
    let project = common::Project::with_fixtures(&["sampled"]);
    let layout = Layout::new(project.root());
    app::run(&layout, Path::new("sampled"), &options(None), &mut noisy()).unwrap();
    // Cut the finished session back to the middle of its second look: keep the runs of the
    // first look and one of the second, as a kill would have left them.
    let session = project.session("sampled");
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("plan.json")).unwrap()).unwrap();
    let kept: Vec<&str> = plan["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["look"].as_u64().unwrap_or(1) == 1)
        .map(|r| r["id"].as_str().unwrap())
        .chain(std::iter::once("r0011"))
        .collect();
    let runs_csv = session.join("runs.csv");
    let text = std::fs::read_to_string(&runs_csv).unwrap();
    let cut: String = text
        .lines()
        .filter(|l| {
            l.starts_with("run_id") || kept.iter().any(|id| l.starts_with(&format!("{id},")))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&runs_csv, cut).unwrap();
    let manifest = session.join("manifest.json");
    let m = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("\"complete\": true", "\"complete\": false");
    std::fs::write(&manifest, m).unwrap();

    let mut resumed = noisy();
    let resume = RunOptions {
        resume: true,
        ..options(None)
    };
    app::run(&layout, Path::new("sampled"), &resume, &mut resumed).unwrap();
    let dir = layout.experiment_dir(Path::new("sampled")).unwrap();
    let a = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    assert!(a.session.manifest.complete);
    let last = a.looks.last().unwrap();
    // The second look's five missing runs, then as many looks as the goal needed.
    assert!(measured(&resumed) >= 5, "{}", measured(&resumed));
    assert!(matches!(last.next, Next::GoalMet | Next::BudgetSpent));
    assert!(last.look >= 2);
    for (label, n) in runs_per_cell(&a) {
        assert_eq!(n, last.runs_per_cell as usize, "{label}");
    }
    assert_eq!(measured(&resumed), 2 * last.runs_per_cell as usize - 11);
}

#[test]
fn a_dry_run_shows_the_looks_and_the_worst_case() {
    let project = common::Project::with_fixtures(&["sampled"]);
    let out = project.lab_exits(&["run", "experiments/sampled", "--dry-run"], Exit::Ok);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("10 runs (shuffled order, seed 11)"), "{text}");
    assert!(
        text.contains("then, while the goal is unmet, looks at 5, 8, 12, 18, 27, 40 runs per cell in the 2 cells it depends on; worst case 80 runs (70 more)"),
        "{text}"
    );
}

/// (what lab.toml says, what a malformed one says instead, the error expected on stderr).
const MALFORMED: [(&str, &str, &str); 10] = [
    (
        "repetitions = { min = 5, max = 40 }",
        "repetitions = { min = 2, max = 40 }",
        "lab.toml:5:15: `experiment.repetitions`: `min = 2` is too few to look at",
    ),
    (
        "repetitions = { min = 5, max = 40 }",
        "repetitions = { min = 5, max = 4 }",
        "`max = 4` is below `min = 5`",
    ),
    (
        "repetitions = { min = 5, max = 40 }",
        "repetitions = { min = 5, most = 40 }",
        "unknown field `most`",
    ),
    (
        "repetitions = { min = 5, max = 40 }",
        "repetitions = \"5\"",
        "a number, not a string \"5\"",
    ),
    (
        "repetitions = { min = 5, max = 40 }",
        "repetitions = 5\nstop = \"decided\"",
        "`experiment.stop`: `stop` needs runs to add",
    ),
    (
        "seed = 11",
        "seed = 11\nstop = \"forever\"",
        "`experiment.stop`: unknown goal \"forever\"",
    ),
    (
        "seed = 11",
        "seed = 11\nstop = { half_width = \"150%\" }",
        "`experiment.stop.half_width`: not a share between 0 and 100%",
    ),
    (
        "seed = 11",
        "seed = 11\nstop = { half_width = \"2%\" }",
        "stopping on precision needs `min` of at least 8 runs per cell, not 5",
    ),
    (
        "seed = 11",
        "seed = 11\nstop = { half_width = \"2%\", metric = \"nope\" }",
        "`experiment.stop.metric`: no numeric metric by that name",
    ),
    (
        "kind = \"compare\"",
        "kind = \"compare\"\nclass = \"validity\"",
        "the goal \"decided\" needs a hypothesis check to decide",
    ),
];

#[test]
fn malformed_ranges_and_goals_are_refused_at_their_place() {
    let project = common::Project::with_fixtures(&["sampled"]);
    let toml = project.path("experiments/sampled/lab.toml");
    let original = std::fs::read_to_string(&toml).unwrap();
    for (from, to, expected) in MALFORMED {
        std::fs::write(&toml, original.replacen(from, to, 1)).unwrap();
        let out = project.lab_exits(&["run", "experiments/sampled", "--dry-run"], Exit::Usage);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{to}: {err}");
    }
    assert!(
        !project.path("data").exists(),
        "a refused lab.toml writes nothing"
    );
}

/// The chapter's files of the sampled experiment, by name; analysis.json without the
/// manifest's digests (which name looks.json where the session has it).
fn chapter_files(project: &common::Project) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(project.path("book/src/sampled"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let mut bytes = std::fs::read(e.path()).unwrap();
            if name == "analysis.json" {
                let mut json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                without_digests(&mut json["manifest"]);
                bytes = json.to_string().into_bytes();
            }
            (name, bytes)
        })
        .collect();
    files.sort();
    files
}

fn without_digests(manifest: &mut serde_json::Value) {
    manifest.as_object_mut().unwrap().remove("digests");
}

/// `lab report --json` of the latest session, but for the manifest's digests (which name
/// looks.json where the session has it).
fn report_json(layout: &Layout, dir: &Path) -> serde_json::Value {
    let text = app::report_json(layout, dir, None).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    without_digests(&mut json["analysis"]["manifest"]);
    json
}

/// The session at `session` as a lab that kept no looks left it: no looks.json, none in the
/// manifest's digests, the manifest sealed again.
fn forget_looks(session: &Path) {
    std::fs::remove_file(session.join(lab::store::LOOKS)).unwrap();
    let path = session.join(lab::store::MANIFEST);
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let digests = manifest["digests"].as_object_mut().unwrap();
    assert!(digests.remove(lab::store::LOOKS).is_some(), "{digests:?}");
    let mut text = serde_json::to_string_pretty(&manifest).unwrap();
    text.push('\n');
    std::fs::write(&path, text).unwrap();
    lab::store::seal::record_closed(session).unwrap();
}

#[test]
fn the_looks_recorded_as_they_were_taken_report_as_the_looks_judged_again() {
    let project = common::Project::with_fixtures(&["sampled"]);
    let layout = Layout::new(project.root());
    let mut noisy = noisy();
    app::run(&layout, Path::new("sampled"), &options(None), &mut noisy).unwrap();
    let dir = layout.experiment_dir(Path::new("sampled")).unwrap();
    let session = project.session("sampled");
    assert!(session.join(lab::store::LOOKS).is_file());
    let recorded = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    assert!(recorded.looks.len() > 2, "{:?}", recorded.looks);
    assert!(recorded.notices.is_empty(), "{:?}", recorded.notices);
    let json = report_json(&layout, &dir);
    let chapter = chapter_files(&project);

    forget_looks(&session);
    let again = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    assert!(again.notices.is_empty(), "{:?}", again.notices);
    assert_eq!(again.looks, recorded.looks);
    assert!(
        report_json(&layout, &dir) == json,
        "the JSON reports differ"
    );
    let only = [dir.clone()];
    let opts = app::ReportOptions {
        only: &only,
        session: None,
        quiet: true,
        summary: app::SummaryWanted::Verdict,
    };
    std::fs::remove_dir_all(project.path("book/src/sampled")).unwrap();
    app::report(&layout, &opts).unwrap();
    let now = chapter_files(&project);
    let names = |files: &[(String, Vec<u8>)]| files.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&now), names(&chapter));
    for ((name, bytes), (_, before)) in now.iter().zip(&chapter) {
        assert!(bytes == before, "{name} differs");
    }
}
