//! Runs that misbehave as processes: daemons, leftovers, crashes, floods of output, signals to
//! lab itself, runs that tamper with the session. Each is recorded as data and flagged; no
//! process survives its run or lab.

use super::{
    alive, gone_within, minimal, pids, project_with, start_until, stderr, stdout, unprotected,
};
use crate::common::exit_of;
use lab::Exit;

use super::{common, problems};

#[test]
fn a_daemon_that_escapes_the_process_group_is_killed_and_flagged() {
    let script = "setsid sleep 1000 & echo $(readlink /proc/self/ns/pid):$! >> daemons; sleep 0.2; echo '{\"v\": 1}'";
    let project = project_with("exp", &minimal(script, ""), &[]);
    // Every run is invalid, so no valid measurement: exit 1.
    project.lab_exits(&["run", "exp", "--quiet"], Exit::CheckFailed);
    let daemons = pids(&project, "daemons");
    assert_eq!(daemons.len(), 3);
    for pid in daemons {
        assert!(!alive(&pid), "daemon {pid} survived its run");
    }
    let found = problems(&project);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(
        found
            .iter()
            .all(|p| p == "left 1 process running: sleep (killed when the run ended)"),
        "{found:?}"
    );
    let check = project.lab_exits(&["check", "exp"], Exit::CheckFailed);
    assert!(
        stdout(&check).contains("fail          validity   no run left processes running"),
        "{}",
        stdout(&check)
    );
}

#[test]
fn a_background_child_left_in_the_group_is_killed_and_flagged() {
    let script = "sleep 1000 & echo $(readlink /proc/self/ns/pid):$! >> children; sleep 0.2; echo '{\"v\": 1}'";
    let project = project_with("exp", &minimal(script, ""), &[]);
    project.lab_exits(&["run", "exp", "--quiet"], Exit::CheckFailed);
    for pid in pids(&project, "children") {
        assert!(!alive(&pid), "child {pid} survived");
    }
    assert!(
        problems(&project)
            .iter()
            .all(|p| p.starts_with("left 1 process running: sleep"))
    );
}

#[test]
fn a_flood_of_output_is_hashed_whole_and_its_values_still_read() {
    // 20 MB without a line break, then bytes that are not UTF-8, then the value.
    let script = "head -c 20000000 /dev/zero | tr '\\0' 'x'; printf '\\n\\377\\376\\n'; sleep 0.2; echo '{\"v\": 7}'";
    let project = project_with("exp", &minimal(script, ""), &[]);
    project.lab_exits(&["run", "exp", "--quiet"], Exit::Ok);
    let session = project.session("exp");
    let runs = common::csv_rows(&session.join("runs.csv"));
    let log = common::run_log(&session, "r0001", lab::store::Stream::Stdout);
    assert_eq!(log.len(), 20_000_000 + 4 + 9);
    use sha2::Digest;
    assert_eq!(
        runs[0]["stdout_sha256"],
        format!("{:x}", sha2::Sha256::digest(&log))
    );
    let values: Vec<String> = common::csv_rows(&session.join("samples.csv"))
        .into_iter()
        .map(|s| s["value"].clone())
        .collect();
    assert_eq!(values, vec!["7", "7", "7"]);
}

#[test]
fn a_session_where_every_run_crashed_fails_run_and_check() {
    let project = project_with("exp", &minimal("kill -SEGV $$", ""), &[]);
    let out = project.lab_exits(&["run", "exp"], Exit::CheckFailed);
    assert!(
        stderr(&out).contains("produced a valid measurement"),
        "{}",
        stderr(&out)
    );
    let check = project.lab_exits(&["check", "exp"], Exit::CheckFailed);
    assert!(
        stdout(&check)
            .contains("no run produced a valid measurement (3 of 3 planned runs finished)")
    );
}

/// Starts `lab run exp` and waits until its first run has written `marker`.
fn start_and_wait(project: &common::Project, marker: &str) -> std::process::Child {
    start_until(project, marker, 1)
}

#[test]
fn sighup_and_sigterm_stop_like_ctrl_c_with_their_own_exit_codes() {
    for (signal, code) in [
        (libc::SIGHUP, Exit::Signal(libc::SIGHUP)),
        (libc::SIGTERM, Exit::Signal(libc::SIGTERM)),
        (libc::SIGINT, Exit::Signal(libc::SIGINT)),
    ] {
        let script = "echo $(readlink /proc/self/ns/pid):$$ >> leaders; exec sleep 1000";
        let project = project_with("exp", &minimal(script, ""), &[]);
        let lab = start_and_wait(&project, "leaders");
        // SAFETY: signalling the child we started.
        unsafe { libc::kill(lab.id() as i32, signal) };
        let out = lab.wait_with_output().unwrap();
        assert_eq!(exit_of(&out), code, "signal {signal}: {}", stderr(&out));
        assert!(stderr(&out).contains("--resume"));
        for pid in pids(&project, "leaders") {
            assert!(
                gone_within(&pid, 5),
                "signal {signal}: the run {pid} survived"
            );
        }
        // Nothing finished, so nothing is valid: `lab check` says so.
        let check = project.lab_exits(&["check", "exp"], Exit::CheckFailed);
        assert!(stdout(&check).contains("no run produced a valid measurement (0 of 3"));
    }
}

#[test]
fn when_lab_is_killed_outright_its_running_benchmark_dies_with_it() {
    let script = "echo $(readlink /proc/self/ns/pid):$$ >> leaders; exec sleep 1000";
    let project = project_with("exp", &minimal(script, ""), &[]);
    let mut lab = start_and_wait(&project, "leaders");
    lab.kill().unwrap();
    lab.wait().unwrap();
    for pid in pids(&project, "leaders") {
        assert!(gone_within(&pid, 5), "the run {pid} outlived lab");
    }
}

#[test]
fn runs_that_tamper_with_the_session_are_caught_and_undone() {
    for (what, tamper, expected) in [
        (
            "append to samples.csv",
            "echo junk >> ${s}samples.csv",
            "samples.csv was appended to after line 1",
        ),
        (
            "rewrite the manifest",
            "echo '{}' > ${s}manifest.json",
            "manifest.json was changed",
        ),
        (
            "edit the sealed lab.toml",
            "echo '# x' >> ${s}sealed/lab.toml",
            "sealed/lab.toml was changed",
        ),
        (
            "delete the plan",
            "rm ${s}plan.json",
            "plan.json was deleted",
        ),
    ] {
        let script =
            format!("s=$(ls -d ../../data/exp/2*/); {tamper}; sleep 0.2; echo '{{\"v\": 1}}'");
        let project = project_with("exp", &unprotected(&minimal(&script, "")), &[]);
        let out = project.lab(&["run", "exp"]);
        assert_eq!(exit_of(&out), Exit::Internal, "{what}: {}", stderr(&out));
        assert!(stderr(&out).contains(expected), "{what}: {}", stderr(&out));
        // What lab wrote is back and readable; the session says it was damaged.
        let check = project.lab_exits(&["check", "exp"], Exit::CheckFailed);
        assert!(
            stdout(&check).contains("no run changed the session's files"),
            "{what}"
        );
    }
}

#[test]
fn values_near_the_largest_double_do_not_pass_stability_as_nan() {
    let script = "sleep 0.2; echo \"{\\\"v\\\": $(( $(date +%N) % 2 ))1.7e308}\"";
    let extra = "\n[[check]]\nname = \"stable\"\nkind = \"stable\"\nmetric = \"v\"\n";
    let project = project_with(
        "exp",
        &minimal(script, extra).replace("repetitions = 3", "repetitions = 4"),
        &[],
    );
    let run = project.lab(&["run", "exp", "--quiet"]);
    let out = project.lab(&["check", "exp", "--json"]);
    let checks: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The values are drawn at random, so the verdict may go either way; the exit follows it.
    let failed = checks
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["verdict"] == "fail");
    assert_eq!(exit_of(&run), Exit::failed_if(failed), "{checks}");
    let stable = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "stable")
        .unwrap();
    assert!(
        !stable["reading"].as_str().unwrap().contains("NaN"),
        "{stable}"
    );
    assert!(
        !stable["evidence"].as_str().unwrap().contains("NaN"),
        "{stable}"
    );
}
