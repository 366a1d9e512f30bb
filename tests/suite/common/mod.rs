//! Helpers for end-to-end tests: a temporary project with fixture experiments, and the real
//! `lab` binary run inside it.

#![allow(dead_code)]

use lab::Exit;
use lab::app;
use lab::layout::Layout;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};

mod fake;
pub(crate) use fake::{FakeRun, FakeRunner, Reply};
use std::process::{Command, Output};

/// A temporary project root holding `experiments/NAME/` copies of fixtures.
pub(crate) struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    /// A project with the fixture folders `tests/fixtures/<name>` copied to `experiments/<name>`.
    pub(crate) fn with_fixtures(names: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        for name in names {
            let from = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures")
                .join(name);
            copy_dir(&from, &dir.path().join("experiments").join(name));
        }
        Project { dir }
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Runs `lab ARGS` in the project root.
    pub(crate) fn lab(&self, args: &[&str]) -> Output {
        self.in_project(Command::new(env!("CARGO_BIN_EXE_lab")).args(args))
            .output()
            .expect("lab runs")
    }

    /// `command` run in the project's root, with lab's state and data kept inside it.
    pub(crate) fn in_project<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        command
            .current_dir(self.root())
            .env("NO_COLOR", "1")
            .env("XDG_DATA_HOME", self.path(".xdg-data"))
            .env("LAB_STATE_DIR", self.path(".lab-state"))
    }

    /// [`Project::lab`], with lab's PID written to `lab.pid` in the project's root before it
    /// starts, for runs that try to reach it by PID.
    pub(crate) fn lab_telling_pid(&self, args: &[&str]) -> Output {
        let told = "echo $$ > lab.pid && exec \"$0\" \"$@\"";
        let mut shell = Command::new("sh");
        shell
            .args(["-c", told, env!("CARGO_BIN_EXE_lab")])
            .args(args);
        self.in_project(&mut shell).output().expect("lab runs")
    }

    /// Turns the quiet-machine guard of fixture `experiment` back on (fixtures switch it off
    /// with `max_busy = "100%"`, because tests share the machine), with `extra` lines added to
    /// its `[experiment]` table.
    pub(crate) fn guard_on(&self, experiment: &str, extra: &str) {
        let toml = self.path(&format!("experiments/{experiment}/lab.toml"));
        let text = std::fs::read_to_string(&toml).expect("fixture lab.toml");
        let guarded: String = text
            .lines()
            .filter(|l| !l.starts_with("max_busy"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .replacen("[experiment]\n", &format!("[experiment]\n{extra}"), 1);
        std::fs::write(&toml, guarded).expect("write lab.toml");
    }

    /// Runs `lab ARGS` and insists it ends as `expected`.
    pub(crate) fn lab_exits(&self, args: &[&str], expected: Exit) -> Output {
        let out = self.lab(args);
        assert_ended(&out, args, expected);
        out
    }

    /// The latest session folder of an experiment.
    pub(crate) fn session(&self, experiment: &str) -> PathBuf {
        self.sessions(experiment).pop().expect("a session")
    }

    /// Every session folder of an experiment, oldest first (hidden entries such as the lock
    /// file are not sessions).
    pub(crate) fn sessions(&self, experiment: &str) -> Vec<PathBuf> {
        let mut sessions: Vec<PathBuf> = std::fs::read_dir(self.path("data").join(experiment))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .collect();
        sessions.sort();
        sessions
    }

    pub(crate) fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative))
            .unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
    }
}

/// What run `run_id` of the session at `session` wrote to `stream`, read as lab reads it: from
/// its slice of the session's packs (or its own file in an older session).
pub(crate) fn run_log(session: &Path, run_id: &str, stream: lab::store::Stream) -> Vec<u8> {
    let stored = lab::store::load_session(session).expect("a readable session");
    let row = stored
        .runs
        .iter()
        .find(|r| r.run_id == run_id)
        .unwrap_or_else(|| panic!("no stored run {run_id}"));
    lab::store::log_ref(session, row, stream).read_all()
}

/// Rewrites a CSV file without `columns`, as lab wrote it before they existed.
pub(crate) fn strip_columns(path: &Path, columns: &[&str]) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let keep: Vec<usize> = (0..headers.len())
        .filter(|&i| !columns.contains(&&headers[i]))
        .collect();
    assert_eq!(keep.len(), headers.len() - columns.len());
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(keep.iter().map(|&i| &headers[i])).unwrap();
    for record in reader.records() {
        let record = record.unwrap();
        out.write_record(keep.iter().map(|&i| &record[i])).unwrap();
    }
    std::fs::write(path, out.into_inner().unwrap()).unwrap();
}

/// [`run_log`] of stdout, as text.
pub(crate) fn run_stdout(session: &Path, run_id: &str) -> String {
    String::from_utf8(run_log(session, run_id, lab::store::Stream::Stdout)).expect("UTF-8")
}

/// [`run_log`] of stderr, as text.
pub(crate) fn run_stderr(session: &Path, run_id: &str) -> String {
    String::from_utf8(run_log(session, run_id, lab::store::Stream::Stderr)).expect("UTF-8")
}

/// Insists that `lab ARGS`, whose output is `out`, ended as `expected`; shows its output if not.
pub(crate) fn assert_ended(out: &Output, args: &[&str], expected: Exit) {
    assert_eq!(
        exit_of(out),
        expected,
        "lab {args:?}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// How a finished `lab` process ended: its exit status as an [`Exit`], or the signal that
/// killed it.
pub(crate) fn exit_of(out: &Output) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (out.status.code(), out.status.signal()) {
        (Some(code), _) => Exit::from_code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => unreachable!("a process ends by a status or a signal"),
    }
}

/// Copies a folder tree (files and folders only).
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read fixture").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// Reads a CSV file into header-keyed rows.
pub(crate) fn csv_rows(path: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).expect("csv");
    let headers = reader.headers().expect("headers").clone();
    reader
        .records()
        .map(|r| {
            headers
                .iter()
                .map(String::from)
                .zip(r.expect("row").iter().map(String::from))
                .collect()
        })
        .collect()
}

/// `lab check NAME --json` parsed.
pub(crate) fn verdicts(project: &Project, experiment: &str) -> Vec<serde_json::Value> {
    let out = project.lab(&["check", experiment, "--json"]);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check --json: {e}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Every file under `dir` with its bytes, by relative path.
pub(crate) fn tree(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(
                    path.strip_prefix(dir).unwrap().display().to_string(),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    files
}

/// GET `path` from a server on the loopback `port`; `None` until it answers.
pub(crate) fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    Some(response)
}

/// What a fake runner reports for a run that took `ns` on one CPU and exited 0: 1 MiB of
/// memory, no context switches, no machine counters (change the fields a test needs).
pub(crate) fn clean_measurement(ns: u64) -> lab::exec::Measurement {
    lab::exec::Measurement {
        wall_ns: ns,
        boottime_ns: ns,
        start_boottime_ns: 0,
        user_ns: ns,
        sys_ns: 0,
        max_rss_kib: 1024,
        voluntary_cs: 0,
        involuntary_cs: 0,
        paging: None,
        counters: Default::default(),
        exit: lab::store::Exit::Code(0),
        timed_out: false,
        cpus_granted: None,
        left_running: Vec::new(),
        start_unix_ms: 1_795_992_226_000,
        machine: None,
        wait: None,
    }
}

/// `lab run EXPERIMENT --quiet` as the library takes it: default profile, a new session.
pub(crate) fn quiet_run(experiment: &str) -> lab::app::RunOptions<'static> {
    lab::app::RunOptions {
        quiet: true,
        ..lab::app::RunOptions::new(format!("lab run {experiment}"))
    }
}

/// `bench.sh VARIANT GAP` as a seeded stream: about `base` ms (GAP percent more for slow),
/// each run off by 8% (a sum of twelve uniforms, as the script draws it).
pub(crate) fn timed(base: f64, seed: u64) -> FakeRunner {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    FakeRunner::new(move |run| match run.request.argv {
        [_, _, _, gap] => {
            let gap: f64 = gap.parse().unwrap();
            Reply::ms(base * (1.0 + gap / 100.0) * (1.0 + 0.08 * twelve_uniforms(&mut rng)))
        }
        // The calibration spawns `true`.
        _ => Reply::ms(0.001),
    })
}

/// A sum of twelve uniforms less six: about normal, mean 0 and deviation 1.
pub(crate) fn twelve_uniforms(rng: &mut ChaCha8Rng) -> f64 {
    (0..12).map(|_| rng.r#gen::<f64>()).sum::<f64>() - 6.0
}

/// One session whose runs take about `base` ms, from the seeded stream `seed`.
pub(crate) fn timed_session(layout: &Layout, base: f64, seed: u64) {
    let mut runner = timed(base, seed);
    app::run(
        layout,
        Path::new("sampled"),
        &quiet_run("sampled"),
        &mut runner,
    )
    .unwrap();
    // Session folders are named by the second they start in.
    std::thread::sleep(std::time::Duration::from_millis(1100));
}

/// A project holding the `sampled` fixture with a fixed 12 runs per cell.
pub(crate) fn sampled_project() -> Project {
    let project = Project::with_fixtures(&["sampled"]);
    let toml = project.path("experiments/sampled/lab.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replacen(
        "repetitions = { min = 5, max = 40 }",
        "repetitions = 12",
        1,
    );
    std::fs::write(toml, text).unwrap();
    project
}

/// Runs git in the project with a fixed author, insisting it succeeds; its trimmed stdout.
pub(crate) fn git(project: &Project, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=lab", "-c", "user.email=lab@example.org"])
        .args(args)
        .current_dir(project.root())
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A chapter's Markdown with each link to its page of where each number comes from replaced by
/// the number it links (`[6.00 \\[6.00, 6.00\\]](provenance.md#id)` → `6.00 \\[6.00, 6.00\\]`,
/// and the HTML anchors of the answer block likewise), for tests that read the numbers.
pub(crate) fn unlinked(markdown: &str) -> String {
    let link = regex::Regex::new(r"\[((?:[^\[\]\\]|\\.)*)\]\(provenance\.md#[^)]*\)").unwrap();
    let anchor = regex::Regex::new(r#"<a href="provenance\.md#[^"]*">([^<]*)</a>"#).unwrap();
    let markdown = link.replace_all(markdown, "$1");
    anchor.replace_all(&markdown, "$1").into_owned()
}

/// The path of `relative` under the import fixtures, as `lab import` takes it.
pub(crate) fn import_fixture(relative: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(relative)
        .display()
        .to_string()
}

/// What a finished `lab` printed on stderr, as text.
pub(crate) fn stderr_text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
