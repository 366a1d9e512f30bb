//! The quiet-machine guard against a real busy machine: with a CPU hog on every CPU lab may
//! use, a clean experiment's runs are invalid because of the machine, run again once, and the
//! chapter says the machine was busy; without the hogs the same experiment is quiet.

use crate::common;
use crate::common::exit_of;
use lab::Exit;

use common::Project;
use std::process::{Child, Command};

/// The tiny fixture with the guard at its defaults and one re-run per disturbed run.
fn guarded_tiny() -> Project {
    let project = Project::with_fixtures(&["tiny"]);
    project.guard_on("tiny", "requeue = 1\n");
    project
}

/// Busy loops, one per CPU lab may run on, killed when dropped.
struct Hogs(Vec<Child>);

impl Hogs {
    fn start() -> Hogs {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        Hogs(
            (0..cpus)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .expect("start a CPU hog")
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for hog in &mut self.0 {
            let _ = hog.kill();
            let _ = hog.wait();
        }
    }
}

/// The share of all CPUs busy over one second, from `/proc/stat`.
fn busy_share_now() -> f64 {
    let ticks = || -> (u64, u64) {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let line = stat.lines().next().unwrap_or("");
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .take(8)
            .filter_map(|f| f.parse().ok())
            .collect();
        if v.len() < 8 {
            return (0, 0);
        }
        (v[0] + v[1] + v[2] + v[5] + v[6] + v[7], v.iter().sum())
    };
    let (busy0, total0) = ticks();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (busy1, total1) = ticks();
    (busy1 - busy0) as f64 / (total1 - total0).max(1) as f64
}

#[test]
fn a_busy_machine_is_named_as_the_problem_and_a_quiet_one_passes() {
    let busy = guarded_tiny();
    let out = {
        let _hogs = Hogs::start();
        busy.lab(&["run", "tiny"])
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let errors = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(exit_of(&out), Exit::CheckFailed, "{text}\n{errors}");
    assert!(
        errors.contains("the machine was busy (others took"),
        "each disturbed run is announced and run again:\n{errors}"
    );
    assert!(
        text.contains("fail          the machine was quiet during every run"),
        "{text}"
    );
    let page = busy.read("book/src/tiny/index.md");
    assert!(
        page.contains("The validity check “the machine was quiet during every run” failed in"),
        "the answer names the machine:\n{page}"
    );
    assert!(page.contains("machine busy: other processes took"));
    let session = busy.sessions("tiny").last().unwrap().clone();
    let runs = std::fs::read_to_string(session.join("runs.csv")).unwrap();
    assert!(
        runs.lines().count() - 1 > 16,
        "disturbed runs ran again:\n{runs}"
    );

    // The twin needs the machine to itself: skip it while something else keeps it busy.
    let share = busy_share_now();
    if share > 0.10 {
        eprintln!(
            "skipped the quiet twin: the machine is {:.0}% busy without the hogs",
            share * 100.0
        );
        return;
    }
    let quiet = guarded_tiny();
    let out = quiet.lab(&["run", "tiny"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("pass          the machine was quiet during every run"),
        "without the hogs the machine is quiet:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
