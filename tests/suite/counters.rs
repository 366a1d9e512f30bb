//! What the kernel counts of each run, recorded in runs.csv and usable as metrics: context
//! switches, page faults and block operations from `wait4`'s rusage, and ratios of them per
//! operation the run reports. The fixture's program does a known number of each.

use crate::common::{self, Project, csv_rows, exit_of};
use lab::Exit;
use std::collections::BTreeMap;

const EXPERIMENT: &str = "experiments/counters";

/// Runs `experiment` to the end: every run pauses 250 ms, long enough to time on a machine
/// busy with other tests (the suite's load has raised the timing floor to 105 ms), so every
/// check passes.
fn run_to_the_end(project: &Project, experiment: &str) {
    ended_ok(project, &["run", experiment, "--quiet"]);
}

/// Runs `lab ARGS`, insisting it exits 0; its output.
fn ended_ok(project: &Project, args: &[&str]) -> std::process::Output {
    let out = project.lab(args);
    assert_eq!(
        exit_of(&out),
        Exit::Ok,
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs the fixture once; returns the project and runs.csv's rows.
fn measured() -> (Project, Vec<BTreeMap<String, String>>) {
    let project = Project::with_fixtures(&["counters"]);
    run_to_the_end(&project, EXPERIMENT);
    let rows = csv_rows(&project.session("counters").join("runs.csv"));
    (project, rows)
}

fn count(row: &BTreeMap<String, String>, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|e| panic!("{column} = {:?}: {e}", row[column]))
}

#[test]
fn sleeps_switch_and_touched_pages_fault_at_least_once_each() {
    let (project, rows) = measured();
    assert_eq!(rows.len(), 12, "2 variants × 2 sizes × 3 repetitions");
    for row in &rows {
        let n: u64 = row["n"].parse().unwrap();
        match row["variant"].as_str() {
            // A sleep leaves the CPU, voluntarily or (preempted on the way) involuntarily,
            // unless its 200 µs timer had already expired when the task came to block: the
            // kernel's do_nanosleep does not schedule then. On a machine busy with other tests
            // a few of the sleeps do that; nearly all switch.
            "sleep" => assert!(
                (count(row, "voluntary_cs") + count(row, "involuntary_cs")) * 100 >= n * 99,
                "{row:?}"
            ),
            "touch" => assert!(count(row, "minor_faults") >= n, "{row:?}"),
            other => panic!("variant {other}"),
        }
        for column in ["major_faults", "block_in", "block_out"] {
            count(row, column);
        }
    }
    // The counts are metrics: each run's faults per operation is its minor faults over the
    // ops it printed, a count because both are.
    let exp = lab::config::load(&project.path(EXPERIMENT), None).unwrap();
    let mut session = lab::store::load_session(&project.session("counters")).unwrap();
    let judged = lab::validity::judge(&exp, &mut session, lab::validity::Rows::Keep);
    for (run, row) in judged.runs.iter().zip(&rows) {
        assert_eq!(run.id, row["run_id"]);
        let expected = count(row, "minor_faults") as f64 / row["n"].parse::<f64>().unwrap();
        assert_eq!(
            run.numbers("faults_per_op", 0),
            vec![expected],
            "{}",
            run.id
        );
        assert_eq!(
            run.numbers("voluntary_cs", 0),
            vec![count(row, "voluntary_cs") as f64]
        );
    }
    assert!(!exp.metric("faults_per_op").unwrap().is_timing());
}

#[test]
fn a_session_recorded_before_the_columns_reads_with_the_counts_absent() {
    let (project, _) = measured();
    let dir = project.session("counters");
    let path = dir.join("runs.csv");
    common::strip_columns(
        &path,
        &["minor_faults", "major_faults", "block_in", "block_out"],
    );
    let mut session = lab::store::load_session(&dir).unwrap();
    assert!(
        session
            .runs
            .iter()
            .all(|r| r.minor_faults.is_none() && r.block_out.is_none())
    );
    let exp = lab::config::load(&project.path(EXPERIMENT), None).unwrap();
    let judged = lab::validity::judge(&exp, &mut session, lab::validity::Rows::Keep);
    assert_eq!(judged.runs.len(), 12);
    for run in &judged.runs {
        assert!(
            run.numbers("minor_faults", 0).is_empty(),
            "absent, not zero"
        );
        assert!(run.numbers("faults_per_op", 0).is_empty());
        // Counts the old columns held are still read.
        assert_eq!(run.numbers("voluntary_cs", 0).len(), 1);
        // No run lacks a value it must have: absent counts are not missing values.
        assert!(
            !run.problems.iter().any(|p| p.contains("metric")),
            "{:?}",
            run.problems
        );
    }
}

/// Runs the `perf` fixture (counters = task-clock, context-switches, page-faults,
/// instructions); returns runs.csv's rows and the manifest.
fn counted() -> (Vec<BTreeMap<String, String>>, serde_json::Value) {
    let project = Project::with_fixtures(&["counters", "perf"]);
    run_to_the_end(&project, "experiments/perf");
    let session = project.session("perf");
    let manifest = std::fs::read_to_string(session.join("manifest.json")).unwrap();
    (
        csv_rows(&session.join("runs.csv")),
        serde_json::from_str(&manifest).unwrap(),
    )
}

#[test]
fn software_counters_follow_the_run_and_its_children() {
    let (rows, manifest) = counted();
    assert_eq!(rows.len(), 8);
    for name in ["task-clock", "context-switches", "page-faults"] {
        assert_eq!(manifest["counters"][name], "available", "{manifest:#}");
    }
    for row in &rows {
        let task_clock = count(row, "counter_task_clock");
        let cpu = count(row, "user_ns") + count(row, "sys_ns");
        match row["variant"].as_str() {
            "spin" => {
                // 60 million additions: tens of milliseconds of CPU, counted by both.
                assert!(cpu > 10_000_000, "{row:?}");
                let gap = task_clock.abs_diff(cpu) as f64;
                assert!(
                    gap < 0.25 * cpu as f64 + 5e6,
                    "task-clock {task_clock} cpu {cpu}"
                );
            }
            "sleep" => assert!(count(row, "counter_context_switches") >= 200, "{row:?}"),
            "touch" => assert!(count(row, "counter_page_faults") >= 2000, "{row:?}"),
            // The pages are touched by a child process: inherited counters count them.
            "fork" => assert!(count(row, "counter_page_faults") >= 2000, "{row:?}"),
            other => panic!("variant {other}"),
        }
        assert!(task_clock > 0);
        assert_eq!(
            row["counters_multiplexed"], "",
            "software counters never multiplex"
        );
    }
}

#[test]
fn a_counter_the_machine_lacks_is_unavailable_with_its_reason_never_zero() {
    let (rows, manifest) = counted();
    let state = manifest["counters"]["instructions"].as_str().unwrap();
    let here = lab::exec::probe_counters(&[lab::exec::Counter::Instructions]);
    match &here[&lab::exec::Counter::Instructions] {
        Err(lab::exec::Refusal::Unavailable(why)) => {
            assert_eq!(state, format!("unavailable: {why}"));
            assert!(rows.iter().all(|r| r["counter_instructions"].is_empty()));
        }
        Ok(()) => {
            assert_eq!(state, "available");
            assert!(rows.iter().all(|r| count(r, "counter_instructions") > 0));
        }
        Err(forbidden) => panic!("the session ran although {forbidden:?}"),
    }
}

/// What valgrind itself counts for `argv` run outside lab. A program's count depends on its
/// environment (the C library reads it at start-up; a shell parses it), which lab's runs get
/// with a few variables more: lab's record is held to this within 1%.
pub(crate) fn callgrind_count(argv: &[&str]) -> u64 {
    let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
    let wrapped = lab::config::counter::wrap(&argv);
    let out = std::process::Command::new(&wrapped[0])
        .args(&wrapped[1..])
        .output()
        .expect("valgrind runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| l.split_once("== Collected : "))
        .map(|(_, n)| n.trim().parse::<u64>().unwrap())
        .sum()
}

/// The instructions each variant of the `callgrind` fixture executes, counted by valgrind
/// outside lab.
pub(crate) fn callgrind_expected() -> BTreeMap<&'static str, u64> {
    BTreeMap::from([
        ("small", callgrind_count(&["seq", "1", "1000"])),
        ("large", callgrind_count(&["seq", "1", "100000"])),
        (
            "shell",
            callgrind_count(&["sh", "-c", "seq 1 1000 >/dev/null; seq 1 1000"]),
        ),
    ])
}

/// Every run of a `callgrind` session holds the count valgrind gives outside lab (within 1%,
/// see [`callgrind_count`]), every run of a variant exactly the same count, and both
/// comparisons pass. Runs the machine disturbed were run again, so a busy session has more
/// than its 9 planned runs.
pub(crate) fn assert_callgrind_session(project: &Project, quiet: bool) {
    let expected = callgrind_expected();
    let rows = csv_rows(&project.session("callgrind").join("runs.csv"));
    if quiet {
        assert_eq!(rows.len(), 9, "3 variants × 3 repetitions");
    } else {
        assert!(rows.len() >= 9, "{} runs", rows.len());
    }
    let mut counted: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for row in &rows {
        let variant = row["variant"].as_str();
        let n = count(row, "counter_callgrind_instructions");
        let gap = n.abs_diff(expected[variant]) as f64 / expected[variant] as f64;
        assert!(
            gap < 0.01,
            "{n} against {} outside lab: {row:?}",
            expected[variant]
        );
        counted.entry(variant).or_default().push(n);
    }
    for (variant, counts) in &counted {
        assert!(
            counts.iter().all(|&n| n == counts[0]),
            "{variant}: {counts:?}"
        );
    }
    assert!(expected["large"] > 10 * expected["small"], "{expected:?}");
    assert!(expected["shell"] > 2 * expected["small"], "{expected:?}");
    let verdicts = crate::common::verdicts(project, "callgrind");
    for name in [
        "counting to 100000 executes more instructions than counting to 1000",
        "a shell running seq twice executes more than seq once",
    ] {
        let check = verdicts.iter().find(|c| c["name"] == name).unwrap();
        assert_eq!(check["verdict"], "pass", "{check:#}");
    }
}

#[test]
fn callgrind_counts_the_instructions_of_each_run_and_its_children_exactly() {
    let project = Project::with_fixtures(&["callgrind"]);
    let out = ended_ok(&project, &["run", "experiments/callgrind"]);
    // Slower runs are stated before the first one.
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(
        progress.contains("every run goes under valgrind-")
            && progress.contains(
                "--tool=callgrind to count its instructions: runs take 20–100× their native time"
            ),
        "{progress}"
    );
    assert_callgrind_session(&project, true);
    let session = project.session("callgrind");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("manifest.json")).unwrap())
            .unwrap();
    let state = manifest["counters"]["callgrind-instructions"]
        .as_str()
        .unwrap();
    assert!(state.starts_with("available: valgrind-"), "{state}");
    // The plan records the command each run executed, and its log what valgrind printed.
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("plan.json")).unwrap()).unwrap();
    let first = &plan["runs"][0]["argv"];
    assert_eq!(first[0], "valgrind", "{first}");
    assert_eq!(first[1], "--tool=callgrind", "{first}");
    let log = crate::common::run_stderr(&session, "r0001");
    assert!(log.contains("== Collected : "), "{log}");
    // The chapter says where the count came from, and what it did to the times.
    let page = project.read("book/src/callgrind/index.md");
    assert!(
        page.contains("| instructions | callgrind-instructions counted by valgrind-"),
        "{page}"
    );
    assert!(page.contains("every run ran under valgrind"), "{page}");
}

#[test]
fn without_valgrind_a_callgrind_session_is_refused_before_any_run() {
    let project = Project::with_fixtures(&["callgrind"]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["run", "experiments/callgrind"])
        .current_dir(project.root())
        .env("PATH", project.path("no-programs-here"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(exit_of(&out), Exit::Usage);
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(
        message.contains("experiments/callgrind/lab.toml:11:13: `experiment.counters`: `callgrind-instructions` runs every run under valgrind, which cannot be run here (`valgrind --version` cannot be started: No such file or directory"),
        "{message}"
    );
    assert!(message.contains("hint: install valgrind"), "{message}");
    assert!(project.sessions("callgrind").is_empty(), "no session began");
}
