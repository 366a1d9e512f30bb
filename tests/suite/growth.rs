//! How lab's own work grows with a session: `lab report`, `lab check` and `lab book` of a
//! realistic session (`scripts/synthetic_session.py --realistic`) and of one ten times larger,
//! their instructions counted by valgrind's callgrind, so that the machine's load does not
//! enter. Work that grows with the runs grows about tenfold; a scan of every run for each
//! disturbed run, or of every cell for each run, grows a hundredfold.
//!
//! Under valgrind each command runs 20–100× its native time, so the intervals take 100
//! resamples (`LAB_RESAMPLES`) in place of 10,000 and the sessions are small: ignored in the
//! parallel suite, run by .ci/run on its own
//! (`cargo test -p lab --test suite growth -- --ignored`).

use crate::common::Project;
use std::path::Path;
use std::process::Command;

/// Runs of the small session (10 cells × 30 runs × 3 iterations, with its warm-up runs,
/// disturbed and failed runs); the large one has ten times as many.
const SMALL_RUNS: usize = 30;
/// The most the instructions may grow for ten times the runs: linear work and an
/// `n log n` sort stay well under it, a quadratic path does not.
const MAX_GROWTH: f64 = 15.0;
/// Resamples per interval under valgrind (see the module comment).
const RESAMPLES: &str = "100";

/// A project holding a realistic session of `runs` runs per cell, as `lab run` records it.
fn realistic(runs: usize) -> Project {
    let project = Project::with_fixtures(&[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/synthetic_session.py");
    let out = Command::new("python3")
        .arg(script)
        .args(["--realistic", "--cells", "10", "--iterations", "3"])
        .args(["--runs", &runs.to_string(), "--out"])
        .arg(project.root())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    project
}

/// The instructions `lab ARGS` executes in `project`, counted by callgrind, and its exit status.
fn instructions(project: &Project, args: &[&str]) -> (u64, Option<i32>) {
    let out = Command::new(lab::config::counter::VALGRIND)
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(env!("CARGO_BIN_EXE_lab"))
        .args(args)
        .current_dir(project.root())
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", project.path(".xdg-data"))
        .env(lab::analysis::RESAMPLES_VAR, RESAMPLES)
        .output()
        .expect("valgrind runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let count = stderr
        .lines()
        .find_map(|l| l.split_once("== Collected : "))
        .map(|(_, n)| n.trim().parse::<u64>().expect("a count"))
        .unwrap_or_else(|| panic!("no count from callgrind: {stderr}"));
    (count, out.status.code())
}

/// Each command's instructions on the small and the large session grow at most
/// [`MAX_GROWTH`]-fold, each command ending with an answer on both.
#[test]
#[ignore = "runs lab under valgrind for about a minute: run on its own, as .ci/run does"]
fn report_check_and_book_grow_linearly_with_the_runs() {
    let small = realistic(SMALL_RUNS);
    let large = realistic(10 * SMALL_RUNS);
    let commands: [&[&str]; 3] = [&["report", "synthetic"], &["check", "synthetic"], &["book"]];
    for args in commands {
        let (a, a_exit) = instructions(&small, args);
        let (b, b_exit) = instructions(&large, args);
        let growth = b as f64 / a as f64;
        eprintln!(
            "lab {}: {a} -> {b} instructions ({growth:.1}x)",
            args.join(" ")
        );
        // `lab check` exits 1 where a check fails, as the small session's may.
        for exit in [a_exit, b_exit] {
            assert!(
                matches!(exit, Some(0 | 1)),
                "lab {}: {exit:?}",
                args.join(" ")
            );
        }
        assert!(
            growth <= MAX_GROWTH,
            "lab {}: {a} instructions for {} runs, {b} for ten times as many ({growth:.1}x)",
            args.join(" "),
            10 * SMALL_RUNS,
        );
    }
}
