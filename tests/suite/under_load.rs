//! lab on a machine that is not its alone: CPU-bound processes started beside it (and killed
//! by pid when the test ends). A run is disturbed only when it *waited* for a CPU others had;
//! a disturbed run's timing is discarded and run again, its outputs still judged, and the
//! machine, not the benchmark, is named. With one busy process every trap is still caught by
//! its own check (or, where the trap needs both CPUs, reported as machine-busy), with one on
//! each CPU the checksum trap is still caught, and the clean twins raise no alarm.
//!
//! The busy processes load the whole machine, so these tests are ignored in the parallel
//! suite; `.ci/run` runs them one at a time (`cargo test --test suite under_load --
//! --ignored --test-threads=1`).

use crate::common::{self, Project, exit_of};
use crate::traps::{self, QUIET};
use lab::Exit;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::{Child, Command};

/// CPU-bound busy loops, killed by pid and reaped when dropped.
struct Hogs(Vec<Child>);

impl Hogs {
    fn start(count: usize) -> Hogs {
        let hogs = Hogs(
            (0..count)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .expect("start a CPU hog")
                })
                .collect(),
        );
        // Give the scheduler a moment to spread them over the CPUs.
        std::thread::sleep(std::time::Duration::from_millis(300));
        hogs
    }

    /// One busy loop per CPU lab may run on.
    fn on_every_cpu() -> Hogs {
        Hogs::start(std::thread::available_parallelism().map_or(2, |n| n.get()))
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for hog in &mut self.0 {
            let pid = hog.id() as libc::pid_t;
            // SAFETY: killing a child this test started and has not reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let _ = hog.wait();
        }
    }
}

/// Runs trap fixture `name` with the quiet-machine guard at its defaults; every check by name.
fn run_guarded(name: &str) -> BTreeMap<String, Value> {
    let project = traps::project(name);
    project.guard_on(&format!("traps/{name}"), "");
    let path = format!("experiments/traps/{name}");
    project.lab(&["run", &path, "--quiet"]);
    let out = project.lab(&["check", &path, "--json"]);
    let checks: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{name}: check --json: {e}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    checks
        .into_iter()
        .map(|c| (c["name"].as_str().expect("name").to_string(), c))
        .collect()
}

fn verdict<'a>(checks: &'a BTreeMap<String, Value>, name: &str) -> &'a str {
    checks[name]["verdict"].as_str().unwrap_or("missing")
}

/// Each trap fixture and the check made to catch it.
const TRAPS: [(&str, &str); 10] = [
    ("agree", "par at one thread matches seq within 10%"),
    (
        "ceiling",
        "the benchmark stays under half the clock's throughput",
    ),
    ("checksum", "fast prints the reference checksum"),
    ("distinct", "each block size gives a different time"),
    ("duration", "every run lasted the seconds it asked for"),
    (
        "echo",
        "every run echoed the configuration it was asked for",
    ),
    ("order", "no dependence on position or the previous run"),
    ("scaling", "peek gains at least 2x from 1 to 4 threads"),
    ("short", "every run was long enough to time"),
    ("stable", "runs vary under 10% with no second mode"),
];

/// The checks that failed, with their readings.
fn failures(checks: &BTreeMap<String, Value>) -> Vec<String> {
    checks
        .iter()
        .filter(|(_, c)| c["verdict"] == "fail")
        .map(|(n, c)| format!("{n}: {}", c["reading"]))
        .collect()
}

/// The flawed fixture fails its own check, or names the machine instead; nothing else fails.
fn assert_caught(kind: &str, trap: &str, checks: &BTreeMap<String, Value>) {
    let caught = verdict(checks, trap) == "fail";
    let machine_named = verdict(checks, QUIET) == "fail" && verdict(checks, trap) != "pass";
    assert!(
        caught || machine_named,
        "{kind}-flawed: `{trap}` is {} and the machine was not named: {:?}",
        verdict(checks, trap),
        failures(checks)
    );
    for (name, c) in checks {
        if name != trap && name != QUIET {
            assert_ne!(
                c["verdict"], "fail",
                "{kind}-flawed: `{name}` blames the benchmark: {}",
                c["reading"]
            );
        }
    }
}

/// The clean twin raises no alarm: the only check that may fail names the machine.
fn assert_no_false_alarm(kind: &str, checks: &BTreeMap<String, Value>) {
    for (name, c) in checks {
        if name != QUIET {
            assert_ne!(
                c["verdict"], "fail",
                "{kind}-clean: `{name}` raised a false alarm: {}",
                c["reading"]
            );
        }
    }
}

#[test]
#[ignore = "loads the whole machine: run alone, as .ci/run does"]
fn every_trap_is_caught_with_one_busy_process_beside_lab() {
    let _hog = Hogs::start(1);
    for (kind, trap) in TRAPS {
        assert_no_false_alarm(kind, &run_guarded(&format!("{kind}-clean")));
        assert_caught(kind, trap, &run_guarded(&format!("{kind}-flawed")));
    }
}

#[test]
#[ignore = "loads the whole machine: run alone, as .ci/run does"]
fn a_wrong_checksum_is_caught_with_a_busy_process_on_every_cpu() {
    let _hogs = Hogs::on_every_cpu();
    let trap = "fast prints the reference checksum";
    let clean = run_guarded("checksum-clean");
    assert_no_false_alarm("checksum", &clean);
    assert_eq!(verdict(&clean, trap), "pass", "{:?}", clean[trap]);
    let flawed = run_guarded("checksum-flawed");
    assert_eq!(verdict(&flawed, trap), "fail", "{:?}", flawed[trap]);
    assert!(
        flawed[trap]["reading"]
            .as_str()
            .unwrap_or_default()
            .contains("printed checksum 1999000 where ref printed 2001000"),
        "{}",
        flawed[trap]["reading"]
    );
}

/// The `busy` fixture: a shell loop that needs a whole CPU for a quarter of a second.
fn busy_project() -> Project {
    let project = Project::with_fixtures(&["busy"]);
    project.guard_on("busy", "");
    project
}

#[test]
#[ignore = "loads the whole machine: run alone, as .ci/run does"]
fn a_run_that_waited_for_its_cpu_loses_its_timing_and_keeps_its_outputs() {
    let project = busy_project();
    let out = {
        let _hogs = Hogs::on_every_cpu();
        project.lab(&["run", "busy"])
    };
    let errors = String::from_utf8_lossy(&out.stderr).into_owned();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        errors.contains("the machine was busy (it lost "),
        "each disturbed run is announced and run again:\n{errors}"
    );
    let checks: BTreeMap<String, Value> = common::verdicts(&project, "busy")
        .into_iter()
        .map(|c| (c["name"].as_str().unwrap().to_string(), c))
        .collect();
    assert_eq!(verdict(&checks, QUIET), "fail", "{text}\n{errors}");
    let quiet = checks[QUIET]["reading"].as_str().unwrap();
    assert!(
        quiet.starts_with("timings of ")
            && quiet.contains("discarded (machine busy); their outputs were judged"),
        "{quiet}"
    );
    assert!(quiet.contains("waited for a CPU others had for"), "{quiet}");
    // The outputs of every run were judged, the disturbed ones' included.
    let answer = "both spellings give the same answer";
    assert_eq!(verdict(&checks, answer), "pass");
    let rows = common::csv_rows(&project.session("busy").join("runs.csv"));
    assert!(
        checks[answer]["reading"]
            .as_str()
            .unwrap()
            .contains(&format!("({} runs)", rows.len())),
        "{}: {} runs stored",
        checks[answer]["reading"],
        rows.len()
    );
    // Every run recorded the limit it was judged by; at most half the plan ran again.
    assert!(rows.iter().all(|r| r["busy_limit"] == "0.1"));
    assert!(rows.len() <= 8 + 4, "{} runs for a plan of 8", rows.len());
    // The answer names the machine and the hypothesis that read its cells.
    let page = project.read("book/src/busy/index.md");
    assert!(
        page.contains("The validity check “the machine was quiet during every run” failed in"),
        "{page}"
    );
    assert!(page.contains("may rest on broken measurements"), "{page}");
}

#[test]
#[ignore = "loads the whole machine: run alone, as .ci/run does"]
fn one_busy_process_leaves_a_one_thread_run_its_cpu() {
    let project = busy_project();
    let out = {
        let _hog = Hogs::start(1);
        project.lab(&["run", "busy"])
    };
    let checks: BTreeMap<String, Value> = common::verdicts(&project, "busy")
        .into_iter()
        .map(|c| (c["name"].as_str().unwrap().to_string(), c))
        .collect();
    assert_eq!(
        verdict(&checks, QUIET),
        "pass",
        "{}\n{}",
        checks[QUIET]["reading"],
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        exit_of(&out),
        Exit::Ok,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `lab bench` beside one busy process still answers: 300 ms against 100 ms of sleep is decided
/// as slower with its ratio, not left without a number.
#[test]
#[ignore = "loads the machine: run alone (see the module comment)"]
fn bench_answers_beside_a_busy_process() {
    let project = Project::with_fixtures(&[]);
    let hogs = Hogs::start(1);
    let out = project.lab(&["bench", "--quiet", "sleep 0.1", "sleep 0.3"]);
    drop(hogs);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        exit_of(&out),
        Exit::Ok,
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("  sleep 0.3 against sleep 0.1: "))
        .expect("the comparison line");
    assert!(line.contains(" slower ("), "{line}");
    let ratio: f64 = line["  sleep 0.3 against sleep 0.1: ".len()..]
        .split('×')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((2.5..3.1).contains(&ratio), "{line}");
}

/// Instruction counts are the measure a busy machine leaves alone: beside a busy process on
/// every CPU the runs' timings are discarded, and callgrind's counts still equal valgrind's
/// own outside lab, to the instruction, and decide both comparisons.
#[test]
#[ignore = "loads the whole machine: run alone, as .ci/run does"]
fn callgrind_counts_stay_exact_beside_busy_processes() {
    let project = Project::with_fixtures(&["callgrind"]);
    project.guard_on("callgrind", "");
    let out = {
        let _hogs = Hogs::on_every_cpu();
        project.lab(&["run", "experiments/callgrind"])
    };
    let checks: BTreeMap<String, Value> = common::verdicts(&project, "callgrind")
        .into_iter()
        .map(|c| (c["name"].as_str().unwrap().to_string(), c))
        .collect();
    assert_eq!(
        verdict(&checks, QUIET),
        "fail",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(exit_of(&out), Exit::CheckFailed);
    crate::counters::assert_callgrind_session(&project, false);
}
