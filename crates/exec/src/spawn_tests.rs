//! Unit tests of `spawn`.

use super::*;
use signals::caught_or_ignored;
use std::collections::BTreeMap;

/// Starts `program` in `cwd` with `env` set, its output in `logs`/out and `logs`/err.
fn start(
    program: &str,
    env: &BTreeMap<String, String>,
    cwd: &Path,
    logs: &Path,
) -> io::Result<libc::pid_t> {
    let argv = vec![program.to_string()];
    prepare(Spawn {
        argv: &argv,
        env,
        cwd,
        cpus: None,
        stdin: None,
        stdout: Output::Own(File::create(logs.join("out")).unwrap()),
        stderr: Output::Own(File::create(logs.join("err")).unwrap()),
        cgroup_procs: None,
        counters: None,
    })
    .and_then(|ready| ready.start(None))
    .map(|s| s.pid)
}

fn wait(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    libc::WEXITSTATUS(status)
}

fn write_script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

#[test]
fn runs_in_its_folder_with_the_variant_environment_and_its_own_group() {
    let dir = tempfile::tempdir().unwrap();
    write_script(
        &dir.path().join("prog.sh"),
        "#!/bin/sh\necho \"$LAB_SPAWN $(pwd) $(ps -o pgid= $$) $$\"\nread x && echo stdin\n",
    );
    let env = BTreeMap::from([("LAB_SPAWN".to_string(), "set".to_string())]);
    let pid = start("./prog.sh", &env, dir.path(), dir.path()).unwrap();
    assert_eq!(wait(pid), 1, "stdin is /dev/null: read fails");
    let out = std::fs::read_to_string(dir.path().join("out")).unwrap();
    let fields: Vec<&str> = out.split_whitespace().collect();
    let cwd = dir.path().canonicalize().unwrap();
    assert_eq!(fields[0], "set");
    assert_eq!(fields[1], cwd.to_str().unwrap());
    assert_eq!(fields[2], fields[3], "the run leads its own process group");
}

#[test]
fn a_run_starts_with_no_signal_ignored_and_every_changed_one_is_reset() {
    // SIGHUP and SIGPIPE ignored by lab, as its interrupt handling and the Rust runtime
    // may leave them: the run must not inherit either.
    // SAFETY: changing this test process's dispositions, restored below.
    unsafe {
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let dir = tempfile::tempdir().unwrap();
    write_script(
        &dir.path().join("prog.sh"),
        "#!/bin/sh\nexec grep SigIgn /proc/self/status\n",
    );
    let pid = start("./prog.sh", &BTreeMap::new(), dir.path(), dir.path()).unwrap();
    let status = wait(pid);
    let changed = caught_or_ignored();
    // SAFETY: as above.
    unsafe { libc::signal(libc::SIGHUP, libc::SIG_DFL) };
    assert_eq!(status, 0);
    let out = std::fs::read_to_string(dir.path().join("out")).unwrap();
    let hex = out.trim().strip_prefix("SigIgn:\t").unwrap();
    // Bit s − 1 is signal s; 32 and 33 are the C library's own, which it lets no one
    // change, so they stay as the environment left them.
    let standard = u64::from_str_radix(hex, 16).unwrap() & 0x7fff_ffff;
    assert_eq!(standard, 0, "ignored in the run: {out}");
    let reset = signals_to_reset();
    for signal in changed {
        assert!(reset.contains(&signal), "signal {signal} is not reset");
    }
    assert!(
        reset.len() < 20,
        "only changed signals are reset: {reset:?}"
    );
    assert!(reset.contains(&libc::SIGHUP) && reset.contains(&libc::SIGPIPE));
}

#[test]
fn a_variant_environment_is_built_once_and_kept_for_its_next_runs() {
    let set = |value: &str| BTreeMap::from([("LAB_KEPT".to_string(), value.to_string())]);
    let first = environment(&set("a")).unwrap();
    assert!(Arc::ptr_eq(&first, &environment(&set("a")).unwrap()));
    let other = environment(&set("b")).unwrap();
    assert!(!Arc::ptr_eq(&first, &other));
    assert!(other.envp.iter().any(|v| v.as_bytes() == b"LAB_KEPT=b"));
    let home = std::env::var_os("PATH").unwrap();
    assert_eq!(
        other.path.as_ref(),
        Some(&home),
        "lab's own variables are kept"
    );
    // As many other sets as are kept push the first one out: it is built again.
    for i in 0..ENVIRONMENTS_KEPT {
        environment(&set(&format!("other {i}"))).unwrap();
    }
    let again = environment(&set("a")).unwrap();
    assert!(!Arc::ptr_eq(&first, &again));
    assert_eq!(first.envp, again.envp);
}

#[test]
fn a_missing_or_unexecutable_program_is_an_error_with_its_kind() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.txt"), "not a program").unwrap();
    let env = BTreeMap::new();
    let attempt = |program: &str| {
        start(program, &env, dir.path(), dir.path())
            .unwrap_err()
            .kind()
    };
    assert_eq!(attempt("no-such-program-anywhere"), io::ErrorKind::NotFound);
    assert_eq!(attempt("./no-such-file"), io::ErrorKind::NotFound);
    assert_eq!(attempt("./data.txt"), io::ErrorKind::PermissionDenied);
}

#[test]
fn programs_are_found_on_the_path_the_variant_sets() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["bin", "tools"] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        let script = format!("#!/bin/sh\necho from-{sub}\n");
        write_script(&dir.path().join(sub).join("hello"), &script);
    }
    // An absolute entry, then a relative one taken from the run's folder; each lookup is
    // kept for the next run of the same program.
    let absolute = format!("{}:/usr/bin:/bin", dir.path().join("bin").display());
    for (path, cwd, expected) in [
        (absolute.as_str(), Path::new("/"), "from-bin\n"),
        ("tools:/usr/bin", dir.path(), "from-tools\n"),
        ("tools:/usr/bin", dir.path(), "from-tools\n"),
    ] {
        let env = BTreeMap::from([("PATH".to_string(), path.to_string())]);
        let pid = start("hello", &env, cwd, dir.path()).unwrap();
        assert_eq!(wait(pid), 0);
        let out = std::fs::read_to_string(dir.path().join("out")).unwrap();
        assert_eq!(out, expected, "PATH={path}");
    }
}
