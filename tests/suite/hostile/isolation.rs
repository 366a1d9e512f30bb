//! Runs and builds contained: the record, the book and lab's own executable are read-only
//! inside them, so an attack on them fails inside the run; every process they start ends with
//! lab, however lab ends; the manifest records the protection each session had.

use super::{gone_within, minimal, pids, project_with, start_until, stderr, unprotected};
use crate::common::{self, Project, exit_of};
use lab::Exit;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::{Duration, Instant};

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn manifest(project: &Project) -> serde_json::Value {
    let text = std::fs::read_to_string(project.session("exp").join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Each attack a run makes on the record or the book, and the file it would leave.
const ATTACKS: [(&str, &str); 5] = [
    (
        "rewrite samples.csv in place",
        "printf 9 | dd of=$(ls ../../data/exp/2*/samples.csv) bs=1 seek=40 conv=notrunc",
    ),
    (
        "plant a log for later runs",
        "echo '{\"v\": 999}' > $(ls -d ../../data/exp/2*/logs)/r0003.out",
    ),
    (
        "plant a chapter",
        "echo '<script>x</script>' > ../../book/src/planted.html",
    ),
    ("link the book to /etc", "ln -s /etc ../../book/src/etc"),
    ("replace lab itself", "cp /bin/true \"$LAB_EXE\""),
];

#[test]
fn a_run_cannot_write_the_record_the_book_or_lab() {
    let attacks: Vec<String> = ATTACKS
        .iter()
        .map(|(_, a)| format!("{{ {a}; }} 2>&1 | grep -c 'Read-only file system' >&2"))
        .collect();
    let script = format!("sleep 0.3; {}; echo '{{\"v\": 1}}'", attacks.join("; "));
    let exe = env!("CARGO_BIN_EXE_lab");
    let lab_toml = minimal(&script, "").replace(
        "run = [",
        &format!("env = {{ LAB_EXE = {exe:?} }}\nrun = ["),
    );
    let project = project_with("exp", &lab_toml, &[]);
    std::fs::create_dir_all(project.path("book/src")).unwrap();
    let lab_before = std::fs::read(exe).unwrap();
    let out = project.lab(&["run", "exp", "--quiet"]);
    let record = &manifest(&project)["isolation"];
    if !is_root() {
        // Without privileges for a mount namespace, Landlock keeps the record: the test
        // below runs lab as an unprivileged user.
        assert!(
            record["why"][0]
                .as_str()
                .unwrap()
                .starts_with("no mount namespace")
        );
        return;
    }
    assert_eq!(exit_of(&out), Exit::Ok, "{}", stderr(&out));
    assert_eq!(record["files"], "mount namespace", "{record}");
    assert_eq!(record["processes"], "cgroup v2", "{record}");
    assert_eq!(
        record["pids"],
        "the session's own PID namespace and /proc: runs see only the session's processes"
    );
    assert_eq!(record["why"], serde_json::json!([]));
    let read_only: Vec<&str> = record["read_only"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(read_only[..2], ["data/", "book/"]);
    assert!(read_only.contains(&"/sys/fs/cgroup"), "{read_only:?}");
    every_attack_failed_in_every_run(&project);
    assert_eq!(
        std::fs::read(exe).unwrap(),
        lab_before,
        "lab itself unchanged"
    );
    project.lab_exits(&["check", "exp"], Exit::Ok);
}

/// Each of the 3 runs counted one refusal for each of its 5 attacks (the file system's own
/// error), its value is the one it printed, and the book holds nothing it planted.
fn every_attack_failed_in_every_run(project: &Project) {
    let session = project.session("exp");
    for run in ["r0001", "r0002", "r0003"] {
        let err = common::run_stderr(&session, run);
        let counts: Vec<&str> = err.lines().collect();
        assert_eq!(counts, ["1"; 5], "{run}: {err}");
    }
    let samples = common::csv_rows(&session.join("samples.csv"));
    let values: Vec<&str> = samples.iter().map(|r| r["value"].as_str()).collect();
    assert_eq!(values, ["1", "1", "1"]);
    assert!(!project.path("book/src/planted.html").exists());
    assert!(!project.path("book/src/etc").exists());
}

/// The Landlock ABI of this kernel, 0 without Landlock.
fn landlock_abi() -> i64 {
    // SAFETY: the version query (flag 1) reads no memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u64>(),
            0usize,
            1u32,
        )
    };
    v.max(0)
}

/// `lab ARGS` in `project`, as the unprivileged user `nobody` when the tests run as root
/// (the project handed to it, lab linked into it so that nobody can reach it), else as the
/// tests' own user.
fn lab_unprivileged(project: &Project, args: &[&str]) -> std::process::Output {
    let exe = project.path("lab");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_lab"), &exe).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_lab"), &exe).unwrap();
    }
    let mut command = if is_root() {
        let status = Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(project.root())
            .status()
            .unwrap();
        assert!(status.success());
        // The machine-wide lock file another user made, in a shared temporary folder.
        let shared_tmp = project.path("tmp");
        std::fs::create_dir(&shared_tmp).unwrap();
        std::fs::set_permissions(&shared_tmp, PermissionsExt::from_mode(0o1777)).unwrap();
        std::fs::write(shared_tmp.join("lab-measuring.lock"), "pid 1\n").unwrap();
        let mut c = Command::new("setpriv");
        c.env("TMPDIR", &shared_tmp);
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    command
        .args(args)
        .current_dir(project.root())
        .env("NO_COLOR", "1")
        .env("HOME", project.root())
        .output()
        .unwrap()
}

#[test]
fn without_privileges_landlock_keeps_a_run_out_of_the_record_the_book_and_lab() {
    // Writing over the running lab fails with "Text file busy" whatever protects it:
    // removing it tells.
    let attacks: Vec<String> = ATTACKS[..4]
        .iter()
        .map(|(_, a)| *a)
        .chain(["rm -f \"$LAB_EXE\""])
        .map(|a| format!("{{ {a}; }} 2>&1 | grep -c 'Permission denied' >&2"))
        .collect();
    // Beside the record a run writes, renames and removes as before.
    let allowed = "echo a > own; mv own moved; rm moved; mkdir -p ../../experiments/made";
    let script = format!(
        "sleep 0.3; {}; {allowed}; echo '{{\"v\": 1}}'",
        attacks.join("; ")
    );
    // A build that could write the record fails, and lab with it.
    let build = "[build]\nrun = [\"sh\", \"-c\", \"! touch ../../data/by-build\"]\n\n[params]";
    let lab_toml = minimal(&script, "")
        .replace("run = [", "env = { LAB_EXE = \"../../lab\" }\nrun = [")
        .replacen("[params]", build, 1);
    let project = project_with("exp", &lab_toml, &[]);
    std::fs::create_dir_all(project.path("book/src")).unwrap();
    // The temporary folder is its owner's alone: nobody must be able to enter it.
    std::fs::set_permissions(project.root(), PermissionsExt::from_mode(0o755)).unwrap();
    let lab_before = std::fs::read(env!("CARGO_BIN_EXE_lab")).unwrap();
    let out = lab_unprivileged(&project, &["run", "exp", "--quiet"]);
    let record = &manifest(&project)["isolation"];
    let abi = landlock_abi();
    if abi == 0 {
        assert_eq!(record["files"], "none", "{record}");
        return;
    }
    assert_eq!(exit_of(&out), Exit::Ok, "{}", stderr(&out));
    assert_eq!(record["files"], format!("landlock (ABI {abi})"), "{record}");
    let why = record["why"][0].as_str().unwrap();
    assert!(why.starts_with("no mount namespace: unshare"), "{why}");
    let read_only = record["read_only"].as_array().unwrap();
    // HOME is the project here, so lab's state folder lies in it.
    assert_eq!(
        read_only[..4],
        ["data/", "book/", ".local/state/lab/", "lab"]
    );
    every_attack_failed_in_every_run(&project);
    assert!(project.path("experiments/made").is_dir());
    assert!(!project.path("data/by-build").exists());
    assert!(!project.path("experiments/exp/moved").exists());
    assert_eq!(std::fs::read(project.path("lab")).unwrap(), lab_before);
}

#[test]
fn isolation_none_lets_a_run_write_and_is_recorded_as_such() {
    let script = "sleep 0.3; touch ../../data/planted-by-run; echo '{\"v\": 1}'";
    let project = project_with("exp", &unprotected(&minimal(script, "")), &[]);
    project.lab_exits(&["run", "exp", "--quiet"], Exit::Ok);
    assert!(project.path("data/planted-by-run").exists());
    let record = &manifest(&project)["isolation"];
    assert_eq!(record["files"], "none");
    assert_eq!(record["processes"], "process group");
    assert_eq!(
        record["why"],
        serde_json::json!(["lab.toml sets isolation = \"none\""])
    );
}

#[test]
fn an_unknown_isolation_is_refused_where_it_is_written() {
    let lab_toml = minimal("echo '{\"v\": 1}'", "").replacen(
        "[experiment]\n",
        "[experiment]\nisolation = \"sandbox\"\n",
        1,
    );
    let project = project_with("exp", &lab_toml, &[]);
    let out = project.lab_exits(&["run", "exp", "--dry-run"], Exit::Usage);
    let err = stderr(&out);
    assert!(err.contains("lab.toml:2:13"), "{err}");
    assert!(err.contains("sandbox"), "{err}");
}

#[test]
fn strict_isolation_runs_where_it_can_be_had() {
    let lab_toml = minimal("sleep 0.3; echo '{\"v\": 1}'", "").replacen(
        "[experiment]\n",
        "[experiment]\nisolation = \"strict\"\n",
        1,
    );
    let project = project_with("exp", &lab_toml, &[]);
    let out = project.lab(&["run", "exp", "--quiet"]);
    if is_root() {
        assert_eq!(exit_of(&out), Exit::Ok, "{}", stderr(&out));
        assert_eq!(
            manifest(&project)["isolation"]["why"],
            serde_json::json!([])
        );
    } else {
        assert_eq!(exit_of(&out), Exit::Usage, "{}", stderr(&out));
        assert!(stderr(&out).contains("lab.toml:2:13: isolation = \"strict\" cannot be had here"));
    }
}

/// A process in the run's group, one that left it with `setsid`, and the run itself.
const TREE: &str = "sleep 1000 & echo $(readlink /proc/self/ns/pid):$! >> PIDS; setsid sleep 1000 & echo $(readlink /proc/self/ns/pid):$! >> PIDS; \
                    sh -c 'sleep 1000 & echo $(readlink /proc/self/ns/pid):$! >> PIDS; wait' & echo $(readlink /proc/self/ns/pid):$$ >> PIDS; wait";

/// No session cgroup of the lab process `pid` is left.
fn no_session_group_of(pid: u32) -> bool {
    let name = format!("lab-session-{pid}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        let found = [
            "/sys/fs/cgroup/unified",
            "/sys/fs/cgroup",
            "/sys/fs/cgroup/pids",
        ]
        .iter()
        .any(|root| std::path::Path::new(root).join(&name).exists());
        if !found {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn every_process_a_run_started_dies_with_a_sigkilled_lab() {
    let script = TREE.replace("PIDS", "tree");
    let project = project_with("exp", &minimal(&script, ""), &[]);
    let mut lab = start_until(&project, "tree", 4);
    let lab_pid = lab.id();
    lab.kill().unwrap();
    lab.wait().unwrap();
    let tree = pids(&project, "tree");
    assert_eq!(tree.len(), 4);
    if !is_root() {
        return;
    }
    for pid in tree {
        assert!(gone_within(&pid, 5), "{pid} outlived lab");
    }
    assert!(no_session_group_of(lab_pid), "the session's cgroup is left");
}

/// An experiment whose build runs `build` (a shell script) before one quick run.
fn with_build(build: &str) -> String {
    minimal("sleep 0.3; echo '{\"v\": 1}'", "").replacen(
        "[params]",
        &format!("[build]\nrun = [\"sh\", \"-c\", {build:?}]\n\n[params]"),
        1,
    )
}

#[test]
fn a_hanging_build_and_its_daemons_end_with_lab_on_every_signal() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        let build = TREE.replace("PIDS", "build-pids");
        let project = project_with("exp", &with_build(&build), &[]);
        let lab = start_until(&project, "build-pids", 4);
        let lab_pid = lab.id();
        // SAFETY: signalling the child this test started.
        unsafe { libc::kill(lab_pid as i32, signal) };
        let out = lab.wait_with_output().unwrap();
        if signal != libc::SIGKILL {
            assert_eq!(exit_of(&out), Exit::Signal(signal), "{}", stderr(&out));
            assert!(
                stderr(&out).contains(&format!(
                    "stopped by signal {signal} while building; the build's processes were killed"
                )),
                "{}",
                stderr(&out)
            );
        }
        let build_pids = pids(&project, "build-pids");
        assert_eq!(build_pids.len(), 4);
        for pid in build_pids {
            let must_die = signal != libc::SIGKILL || is_root();
            if must_die {
                assert!(gone_within(&pid, 5), "signal {signal}: {pid} outlived lab");
            }
        }
        if is_root() {
            assert!(no_session_group_of(lab_pid), "signal {signal}: cgroup left");
        }
    }
}

#[test]
fn a_daemon_a_successful_build_leaves_is_killed_and_named() {
    // The build ends once its daemon is `sleep` (not the shell it was forked from).
    let build = "setsid sleep 1000 > /dev/null 2>&1 & echo $(readlink /proc/self/ns/pid):$! > daemon; \
                 while [ \"$(cat /proc/$!/comm)\" != sleep ]; do sleep 0.01; done";
    let project = project_with("exp", &with_build(build), &[]);
    let out = project.lab_exits(&["run", "exp", "--quiet"], Exit::Ok);
    assert!(
        stderr(&out).contains("warning: the build left 1 process running: sleep (killed)"),
        "{}",
        stderr(&out)
    );
    for pid in pids(&project, "daemon") {
        assert!(gone_within(&pid, 5), "the build's daemon {pid} survived");
    }
}

/// The session saved in `saved` holds every planned run exactly once, complete, resumed once.
fn assert_every_run_once(saved: &std::path::Path) {
    let session = std::fs::read_dir(saved)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("runs.csv").exists())
        .unwrap();
    let runs = common::csv_rows(&session.join("runs.csv"));
    let mut ids: Vec<&str> = runs.iter().map(|r| r["run_id"].as_str()).collect();
    ids.sort_unstable();
    let expected: Vec<String> = (1..=12).map(|i| format!("r{i:04}")).collect();
    assert_eq!(ids, expected, "every planned run exactly once");
    assert!(runs.iter().all(|r| r["exit_code"] == "0"), "{runs:?}");
    let samples = common::csv_rows(&session.join("samples.csv"));
    assert_eq!(samples.len(), 12);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["complete"], true);
    assert_eq!(manifest["resumed"], 1);
}

#[test]
fn a_full_disk_stops_the_session_as_labs_failure_and_resume_completes_it() {
    if !is_root() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root, which mounting a small file system needs"
        );
        eprintln!("skipped: mounting a small file system needs root");
        return;
    }
    // Each run prints 16 kB, then its value: about seven fit beside the filler.
    let script = "sleep 0.3; head -c 16000 /dev/zero | tr '\\0' x; echo; echo '{\"v\": 1}'";
    let lab_toml = minimal(script, "").replace("repetitions = 3", "repetitions = 12");
    let project = project_with("exp", &lab_toml, &[]);
    std::fs::create_dir_all(project.path("data")).unwrap();
    let lab = env!("CARGO_BIN_EXE_lab");
    let steps = format!(
        "mount -t tmpfs -o size=256k tmpfs data || exit 90; \
         head -c 120000 /dev/zero > data/filler; \
         {lab} run exp > out1 2> err1; echo $? > rc1; \
         rm data/filler; \
         {lab} run exp --resume > out2 2> err2; echo $? > rc2; \
         cp -r data/exp saved"
    );
    let status = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &steps])
        .current_dir(project.root())
        .status()
        .unwrap();
    assert!(status.success(), "the steps ran: {status}");
    let read = |f: &str| std::fs::read_to_string(project.path(f)).unwrap();
    let first = read("err1");
    assert_eq!(read("rc1").trim(), "3", "{first}");
    assert!(first.contains("file system holding data/exp/2"), "{first}");
    assert!(first.contains("is full ("), "{first}");
    assert!(
        first.contains(
            "is not recorded, since a full disk may have made it fail or cut its output short"
        ),
        "{first}"
    );
    assert!(first.contains("lab run exp --resume"), "{first}");
    assert!(!first.contains("exit code 1"), "no run is blamed: {first}");
    assert_eq!(read("rc2").trim(), "0", "{}", read("err2"));
    assert_every_run_once(&project.path("saved"));
}
