//! The automatic check that no speed-up goes beyond the CPUs the runs used, on a fake runner:
//! four times the one-thread cell's throughput on twice its CPUs fails on a quiet machine, and
//! is withheld where the machine disturbed the runs, whose CPU time then no longer bounds the
//! work they measured.

use crate::common::{self, FakeRun, FakeRunner, Project, Reply};
use lab::app;
use lab::layout::Layout;
use std::path::Path;

const LAB_TOML: &str = r#"[experiment]
title = "A gain beyond the CPUs"
hypothesis = "four threads do four times the work of one."
repetitions = 5
seed = 5
timeout = "10s"

[params]
threads = [1, 4]

[[variant]]
name = "work"
run = ["sh", "bench.sh", "{threads}"]

[metric.ops]
json = "ops"
unit = "ops/s"
better = "higher"
"#;

/// `sh bench.sh THREADS`: 100 ops/s a thread, one thread on one CPU in 0.5 s, four threads on
/// two CPUs (the work counted twice); where `disturbed`, the four-thread runs waited 30% of
/// their wall time for a CPU others had.
fn threads_work(run: &FakeRun, disturbed: bool) -> Reply {
    let [_, _, threads] = run.request.argv else {
        return Reply::new("", 1_000);
    };
    let four = threads == "4";
    let needed = 500_000_000 + 1_000 * run.nth as u64;
    let ops = if four { 400.0 } else { 100.0 } * (1.0 + 1e-6 * run.nth as f64);
    Reply::new(format!("{{\"ops\": {ops}}}\n"), needed).with(|m| {
        m.user_ns = if four { 2 * needed } else { needed };
        let waited = disturbed && four;
        if waited {
            m.wall_ns = needed * 10 / 7;
            m.boottime_ns = m.wall_ns;
        }
        m.wait = Some(lab::exec::TaskWait {
            ns: if waited { m.wall_ns - needed } else { 0 },
            tasks: if four { 4 } else { 1 },
            counted: if four { 4 } else { 1 },
            share: Some(if waited { 0.3 } else { 0.0 }),
        });
        m.machine = Some(lab::exec::MachineLoad {
            busy_ns: if waited { 2 * m.wall_ns } else { m.user_ns },
            steal_ns: 0,
            capacity_ns: 2 * m.wall_ns,
            psi_some_us: Some(if waited { m.wall_ns / 1000 } else { 0 }),
            own_psi_some_us: None,
            throttle_events: None,
        });
    })
}

/// The automatic parallel check of a session whose four-thread runs the machine `disturbed`,
/// and the check that no verdict depends on how busy the machine was.
fn parallel_check(disturbed: bool) -> (lab::checks::CheckResult, lab::checks::CheckResult) {
    let project = Project::with_fixtures(&[]);
    let dir = project.path("experiments/par");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lab.toml"), LAB_TOML).unwrap();
    std::fs::write(dir.join("bench.sh"), "echo '{\"ops\": 1}'\n").unwrap();
    let layout = Layout::new(project.root());
    let mut fake = FakeRunner::new(move |run| threads_work(run, disturbed));
    let _ = app::run(
        &layout,
        Path::new("par"),
        &common::quiet_run("par"),
        &mut fake,
    );
    let dir = layout.experiment_dir(Path::new("par")).unwrap();
    let assessed = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    let named = |name: &str| {
        let found = assessed.findings.checks.iter().find(|c| c.name == name);
        found.cloned().unwrap_or_else(|| panic!("no check {name}"))
    };
    (
        named("no speed-up beyond the CPUs the runs used"),
        named("no verdict depends on how busy the machine was"),
    )
}

#[test]
fn a_gain_beyond_the_cpus_fails_on_a_quiet_machine() {
    let (check, _) = parallel_check(false);
    assert_eq!(check.verdict.word(), "fail", "{}", check.reading);
    assert!(
        check.reading.starts_with(
            "`work`: ops grows 4.00× [4.00, 4.00] from threads=1 to threads=4 while its runs used 2.00× the CPU time per second: the work is counted more than once"
        ),
        "{}",
        check.reading
    );
    assert_eq!(check.busy, None);
}

#[test]
fn a_gain_beyond_the_cpus_of_runs_the_machine_disturbed_is_withheld() {
    let (check, machine) = parallel_check(true);
    assert_eq!(check.verdict.word(), "inconclusive", "{}", check.reading);
    assert_eq!(
        check.reading,
        "machine busy: `work`: ops grows 4.00× [4.00, 4.00] from threads=1 to threads=4 while its runs used 1.40× the CPU time per second: 5 runs of the pair waited for a CPU others had for more than `max_busy` of their wall time, up to 30.0%, which could explain it; quiet the machine or add runs"
    );
    assert!(check.busy.is_some());
    assert_eq!(
        machine.verdict.word(),
        "inconclusive",
        "{}",
        machine.reading
    );
    assert!(
        machine
            .reading
            .starts_with("machine busy: 1 verdict withheld"),
        "{}",
        machine.reading
    );
}
