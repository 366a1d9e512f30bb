//! The whole pipeline through the library with a fake runner: chosen timings and outputs, no
//! processes, no sleeps. Every number on the way out is known in advance.

use crate::common;
use lab::Exit;

use crate::common::{FakeRun, FakeRunner, Reply};
use lab::app::{self, Layout};

/// What `sh bench.sh FACTOR n` prints and measures: `{"score": FACTOR × n}` in 200 ms +
/// 10 ms × n, except that the third run of `triple 2` scores 7 instead of 6; on a quiet
/// machine of two CPUs, busy only with the run itself.
pub fn scored(run: &FakeRun) -> Reply {
    let (score, wall_ms) = match run.request.argv {
        [_, _, factor, n] => {
            let n: u64 = n.parse().unwrap();
            let factor = if factor == "double" { 2 } else { 3 };
            let seventh = factor == 3 && n == 2 && run.nth == 2;
            (if seventh { 7 } else { factor * n }, 200 + 10 * n)
        }
        // The calibration spawns `true`.
        _ => (0, 1),
    };
    let ns = wall_ms * 1_000_000;
    let stdout = format!("{{\"score\": {score}, \"answer\": \"42\"}}\n");
    Reply::new(stdout, ns).with(|m| {
        m.machine = Some(lab::exec::MachineLoad {
            busy_ns: ns,
            steal_ns: 0,
            capacity_ns: 2 * ns,
            psi_some_us: Some(0),
            own_psi_some_us: None,
            throttle_events: None,
        })
    })
}

/// The runs of `sh bench.sh FACTOR N` the fake answered.
fn runs_of(fake: &FakeRunner, factor: &str, n: &str) -> usize {
    let argv: Vec<String> = ["sh", "bench.sh", factor, n].map(String::from).to_vec();
    fake.seen().by_argv.get(&argv).copied().unwrap_or(0)
}

/// The `score` statistics of the cell named `label`.
fn score_of<'a>(assessed: &'a app::Assessed, label: &str) -> &'a lab::analysis::CellStats {
    assessed
        .analysis
        .cells
        .iter()
        .find(|c| c.label == label && c.metric == "score")
        .unwrap()
}

#[test]
fn the_pipeline_runs_on_chosen_numbers_without_processes() {
    let project = common::Project::with_fixtures(&["tiny"]);
    let layout = Layout::new(project.root());
    let mut fake = FakeRunner::new(scored);
    let options = common::quiet_run("tiny");
    let code = app::run(&layout, std::path::Path::new("tiny"), &options, &mut fake).unwrap();
    assert_eq!(
        code,
        Exit::CheckFailed,
        "the tiny fixture's second hypothesis fails by design"
    );
    // 30 calibration spawns, then 2 variants × 2 values × (1 warm-up + 3 repetitions).
    assert_eq!(fake.calls(), 30 + 16);

    let dir = layout.experiment_dir(std::path::Path::new("tiny")).unwrap();
    let assessed = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    let cell = |label: &str| score_of(&assessed, label);
    // triple n=2 scored 6, 7, 6 in its three measured runs (the warm-up was the first 6).
    let triple = cell("triple n=2");
    assert_eq!(triple.n, 3);
    assert_eq!(triple.summary.as_ref().unwrap().median, 6.0);
    assert!((triple.summary.as_ref().unwrap().mean - 19.0 / 3.0).abs() < 1e-12);
    let double = cell("double n=1");
    assert_eq!(double.summary.as_ref().unwrap().median, 2.0);
    let verdict = |name: &str| {
        assessed
            .findings
            .checks
            .iter()
            .find(|c| c.name == name)
            .unwrap()
            .verdict
            .word()
    };
    assert_eq!(
        verdict("triple beats double by at least 1.4 at n=2"),
        "pass"
    );
    assert_eq!(verdict("every run was long enough to time"), "pass");
    assert_eq!(assessed.analysis.counts.valid, 12);
    assert!(project.path("book/src/tiny/index.md").is_file());
}

/// As [`scored`], with a machine that is busy during chosen runs: other processes take 60% of
/// the two CPUs, and the run waits for a CPU 60% of its wall time, during the second run of
/// `double n=2` and during every run of `triple n=1`.
fn busy_machine(run: &FakeRun) -> Reply {
    let busy = match run.request.argv {
        [_, _, factor, n] => {
            (factor == "double" && n == "2" && run.nth == 1) || (factor == "triple" && n == "1")
        }
        _ => false,
    };
    scored(run).with(|m| {
        let wall_us = m.wall_ns / 1000;
        if let Some(load) = m.machine.as_mut().filter(|_| busy) {
            load.busy_ns += load.capacity_ns * 6 / 10;
            load.psi_some_us = Some(wall_us * 6 / 10);
        }
    })
}

#[test]
fn runs_on_a_busy_machine_are_invalid_and_run_again() {
    let project = common::Project::with_fixtures(&["tiny"]);
    project.guard_on("tiny", "");
    let layout = Layout::new(project.root());
    let mut busy = FakeRunner::new(busy_machine);
    let options = common::quiet_run("tiny");
    let code = app::run(&layout, std::path::Path::new("tiny"), &options, &mut busy).unwrap();
    assert_eq!(
        code,
        Exit::CheckFailed,
        "the machine was busy during every triple n=1 run"
    );
    // double n=2: 4 planned runs and one again. triple n=1: 4 planned, each run again once;
    // the first re-run is disturbed too and runs again, the second gives the cell up (two
    // disturbed re-runs in a row): the machine stays busy for it.
    assert_eq!(runs_of(&busy, "double", "2"), 5);
    assert_eq!(runs_of(&busy, "triple", "1"), 9);

    let dir = layout.experiment_dir(std::path::Path::new("tiny")).unwrap();
    let assessed = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    let cell = |label: &str| score_of(&assessed, label);
    assert_eq!(
        cell("double n=2").n,
        3,
        "the busy run's re-run restores the cell"
    );
    assert_eq!(
        cell("triple n=1").n,
        0,
        "every triple n=1 run was disturbed"
    );
    let quiet = assessed
        .findings
        .checks
        .iter()
        .find(|c| c.name == "the machine was quiet during every run")
        .unwrap();
    assert_eq!(quiet.verdict.word(), "fail");
    assert_eq!(
        quiet.cells,
        ["triple n=1"],
        "only the cell whose runs stayed busy"
    );
    assert_eq!(quiet.runs.len(), 9);
    assert!(
        quiet
            .reading
            .starts_with("timings of 9 runs discarded (machine busy); their outputs were judged."),
        "{}",
        quiet.reading
    );
    let excluded = assessed
        .analysis
        .runs
        .iter()
        .filter(|r| !r.is_valid())
        .map(|r| r.problems.join("; "))
        .collect::<Vec<_>>();
    assert_eq!(excluded.len(), 10);
    assert!(
        excluded[0].starts_with(
            "machine busy: tasks waited for a CPU others had for 60.0% of its wall time (machine-wide pressure) (limit 10.0%)"
        ),
        "{excluded:?}"
    );
    let session = project.sessions("tiny").last().unwrap().clone();
    let plan = std::fs::read_to_string(session.join("plan.json")).unwrap();
    assert_eq!(plan.matches("\"repeats\"").count(), 6);
    let page = project.read("book/src/tiny/index.md");
    assert!(
        page.contains(
            "The validity check “the machine was quiet during every run” failed in triple n=1"
        ),
        "the answer says the machine, not the benchmark, was the problem:\n{page}"
    );
}
