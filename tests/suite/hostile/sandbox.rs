//! A run owns nothing but its own process and output: it cannot step into lab's view of the
//! files through `/proc`, signal lab, gain a privilege, write the experiments, or make its
//! output cost the record more than `max_output`.

use super::{minimal, project_with, stderr};
use crate::common::{self, exit_of};
use lab::Exit;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Each way into lab's files or privileges a run tries, and what it prints when it got in.
/// `$LAB` is lab's PID, as lab's parent knows it ([`crate::common::Project::lab_telling_pid`]).
const PROBES: [&str; 16] = [
    "ls /proc/$PPID/root/ >/dev/null 2>&1 && echo 'reached lab root'",
    "ls /proc/$LAB/root/ >/dev/null 2>&1 && echo 'reached lab root by its PID'",
    "kill -0 $LAB 2>/dev/null && echo 'may signal lab'",
    "cat /proc/$PPID/environ >/dev/null 2>&1 && echo 'reached lab environ'",
    "cat /proc/$LAB/environ >/dev/null 2>&1 && echo 'reached lab environ by its PID'",
    "[ \"$PPID\" = 0 ] || echo \"sees its parent $PPID\"",
    "for c in /proc/[0-9]*/comm; do grep -qx lab \"$c\" && echo \"sees lab at $c\"; done 2>/dev/null",
    "ls /proc/1/root/ >/dev/null 2>&1 && echo 'reached init root'",
    "cat /proc/1/environ >/dev/null 2>&1 && echo 'reached init environ'",
    "kill -0 1 2>/dev/null && echo 'may signal init'",
    "grep -q '^CapEff:[[:space:]]*0000000000000000$' /proc/self/status || echo 'has capabilities'",
    "grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/self/status || echo 'may gain privileges'",
    "{ echo planted > notes.md; } 2>/dev/null && echo 'wrote notes.md'",
    "{ echo planted > lab.toml; } 2>/dev/null && echo 'wrote lab.toml'",
    "ln -s /tmp ../../book/planted 2>/dev/null && echo 'linked into book/'",
    "touch \"$LAB_STATE_DIR/planted\" 2>/dev/null && echo 'wrote lab state'",
];

#[test]
fn a_run_reaches_neither_lab_nor_a_privilege_nor_the_experiment() {
    if !is_root() {
        return;
    }
    // A fresh project: no book/ yet, which lab makes before the first run, read-only.
    // The sleep keeps each run well above the shortest run lab can time, however busy the
    // machine.
    let script = format!(
        "LAB=$(cat ../../lab.pid); {{ {}; }} >&2; sleep 0.2; echo '{{\"v\": 1}}'",
        PROBES.join("; ")
    );
    let project = project_with("exp", &minimal(&script, ""), &[("notes.md", "Notes.\n")]);
    let out = project.lab_telling_pid(&["run", "exp", "--quiet"]);
    assert_eq!(exit_of(&out), Exit::Ok, "{}", stderr(&out));
    let session = project.session("exp");
    for run in ["r0001", "r0002", "r0003"] {
        assert_eq!(common::run_stderr(&session, run), "", "{run}");
    }
    let notes = std::fs::read_to_string(project.path("experiments/exp/notes.md")).unwrap();
    assert_eq!(notes, "Notes.\n");
    assert!(!project.path("book/planted").exists());
}

#[test]
fn a_run_that_stops_or_terminates_lab_ends_nothing() {
    if !is_root() {
        return;
    }
    // Each run tries to end its session as Ctrl-C would, then to freeze lab.
    let script = "LAB=$(cat ../../lab.pid); kill -TERM $LAB 2>/dev/null; kill -STOP $LAB 2>/dev/null; sleep 0.05; echo '{\"v\": 1}'";
    let project = project_with("exp", &minimal(script, ""), &[]);
    let out = project.lab_telling_pid(&["run", "exp", "--quiet"]);
    assert_eq!(exit_of(&out), Exit::Ok, "{}", stderr(&out));
    let session = project.session("exp");
    let runs = std::fs::read_to_string(session.join("runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 4, "{runs}");
}

#[test]
fn a_run_that_stretches_its_output_to_a_terabyte_costs_the_record_max_output() {
    let script = "echo '{\"v\": 1}'; truncate -s 1T /proc/self/fd/1";
    let lab_toml = minimal(script, "").replace(
        "timeout = \"5s\"",
        "timeout = \"5s\"\nmax_output = \"1MiB\"",
    );
    let project = project_with("exp", &lab_toml, &[]);
    let out = project.lab(&["run", "exp", "--quiet"]);
    assert!(
        matches!(exit_of(&out), Exit::Ok | Exit::CheckFailed),
        "{}",
        stderr(&out)
    );
    let session = project.session("exp");
    let pack = std::fs::metadata(session.join("logs/stdout.pack")).unwrap();
    assert!(pack.len() < 3 * (1 << 20) + 3000, "{} bytes", pack.len());
    let log = common::run_log(&session, "r0002", lab::store::Stream::Stdout);
    let tail = String::from_utf8_lossy(&log[log.len() - 200..]).to_string();
    assert!(
        tail.contains(
            "output cut at 1048576 bytes (max_output); the run wrote 1099511627776 bytes"
        ),
        "{tail}"
    );
}

#[test]
fn a_max_output_that_is_no_size_is_refused_at_its_place() {
    let lab_toml = minimal("echo '{\"v\": 1}'", "").replace(
        "timeout = \"5s\"",
        "timeout = \"5s\"\nmax_output = \"64MB\"",
    );
    let project = project_with("exp", &lab_toml, &[]);
    let out = project.lab(&["run", "exp", "--quiet"]);
    assert_eq!(exit_of(&out), Exit::Usage, "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("lab.toml:8:14: `experiment.max_output`: not a size of at least one byte"),
        "{}",
        stderr(&out)
    );
}
