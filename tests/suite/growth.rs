//! How lab's own work grows with a session: `lab report`, `lab check` and `lab book` of a
//! realistic session (`scripts/synthetic_session.py --realistic`) of 10 cells × 30 runs and of
//! one ten times larger (`LAB_GROWTH_RUNS` sets the runs a cell of the smaller one), and `lab report` of the same pair recorded as analysis 2 records a busy
//! machine (each disturbed run run again, the re-run naming it), their instructions counted by
//! valgrind's callgrind, so that the machine's load does not enter. Work that grows with the
//! runs grows about tenfold; a scan of every run for each run grows a hundredfold and fails
//! here once it costs a few instructions a pair of runs (see docs/src/topics/performance.md
//! for what that catches and what it cannot).
//!
//! Under valgrind each command runs 20–100× its native time, so the intervals take 100
//! resamples (`LAB_RESAMPLES`) in place of 10,000: ignored in the parallel suite, run by
//! .ci/run on its own (`cargo test -p lab --test suite growth -- --ignored`), the two sessions
//! of each command side by side.

use crate::common::Project;
use std::path::Path;
use std::process::Command;

/// Runs per cell of the small sessions (10 cells × 30 runs × 3 iterations, with their warm-up
/// runs, disturbed and failed runs), unless `LAB_GROWTH_RUNS` says otherwise; the large ones
/// have ten times as many. 30 keeps the test near two minutes, which CI can give it; 200 (13
/// minutes) catches cheaper quadratic paths (docs/src/topics/performance.md).
fn small_runs() -> usize {
    std::env::var("LAB_GROWTH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(30)
}
/// The most the instructions may grow for ten times the runs: linear work and an
/// `n log n` sort stay well under it, a quadratic path does not.
const MAX_GROWTH: f64 = 15.0;
/// Resamples per interval under valgrind (see the module comment).
const RESAMPLES: &str = "100";

/// A project holding a realistic session of `runs` runs per cell, as `lab run` records it
/// with `analysis` (3: disturbed runs keep their timings; 2: each is run again).
fn realistic(runs: usize, analysis: u32) -> Project {
    let project = Project::with_fixtures(&[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/synthetic_session.py");
    let out = Command::new("python3")
        .arg(script)
        .args(["--realistic", "--cells", "10", "--iterations", "3"])
        .args(["--analysis", &analysis.to_string()])
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

/// `lab ARGS` on the small and the large session, counted side by side: its instructions on
/// each grow at most [`MAX_GROWTH`]-fold, and it ends with an answer on both.
fn grows_linearly(small: &Project, large: &Project, args: &[&str]) {
    let ((a, a_exit), (b, b_exit)) = std::thread::scope(|s| {
        let on_large = s.spawn(|| instructions(large, args));
        let on_small = instructions(small, args);
        (
            on_small,
            on_large.join().expect("callgrind of the large session"),
        )
    });
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
        "lab {}: {a} instructions for {} runs a cell, {b} for ten times as many ({growth:.1}x)",
        args.join(" "),
        small_runs(),
    );
}

/// Each command's instructions on the small and the large session grow at most
/// [`MAX_GROWTH`]-fold, on a session that keeps disturbed runs and on one that ran them again.
#[test]
#[ignore = "runs lab under valgrind for several minutes: run on its own, as .ci/run does"]
fn report_check_and_book_grow_linearly_with_the_runs() {
    let runs = small_runs();
    let (small, large) = (realistic(runs, 3), realistic(10 * runs, 3));
    let commands: [&[&str]; 3] = [&["report", "synthetic"], &["check", "synthetic"], &["book"]];
    for args in commands {
        grows_linearly(&small, &large, args);
    }
    let (small, large) = (realistic(runs, 2), realistic(10 * runs, 2));
    grows_linearly(&small, &large, &["report", "synthetic"]);
}
