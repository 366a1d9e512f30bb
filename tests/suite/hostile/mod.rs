//! Hostile inputs: configurations, run behaviours, output payloads and names that try to break
//! lab, crash it, escape the project, outlive their run or reach the published site. Each case
//! asserts its exact outcome: a clean error at the right place, a flagged run, nothing written
//! outside the project, no live payload in the book, no surviving process.

use crate::common;

mod configs;
mod isolation;
mod names;
mod notes;
mod opened;
mod output;
mod processes;
mod publish;
mod record;
mod sandbox;
mod sealed;
mod signals;
mod values;

use common::Project;
use std::path::Path;

/// A project with one experiment `name` made of `lab_toml` (and `files`), nothing else.
pub(crate) fn project_with(name: &str, lab_toml: &str, files: &[(&str, &str)]) -> Project {
    let project = Project::with_fixtures(&[]);
    let dir = project.path("experiments").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lab.toml"), lab_toml).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    project
}

/// A small valid experiment: one variant running `script` with `sh -c` at n = 1, three
/// repetitions, one JSON metric `v`; `extra` is appended (more metrics, checks, params).
pub(crate) fn minimal(script: &str, extra: &str) -> String {
    let script = script.replace('{', "{{").replace('}', "}}");
    format!(
        r#"[experiment]
max_busy = "100%"
title = "hostile"
hypothesis = "lab stays in control"
repetitions = 3
seed = 1
timeout = "5s"

[params]
n = [1]

[[variant]]
name = "v"
run = ["sh", "-c", {script:?}, "{{n}}"]

[metric.v]
json = "v"
{extra}"#
    )
}

/// `lab_toml` with its runs and builds left able to reach the record (`isolation = "none"`):
/// with the default isolation an attack on data/ fails inside the run, so the defences lab
/// keeps behind it (digests, identity checks, planted-file removal) are tested without it.
pub(crate) fn unprotected(lab_toml: &str) -> String {
    lab_toml.replacen("[experiment]\n", "[experiment]\nisolation = \"none\"\n", 1)
}

/// Every file under `root` whose bytes contain `needle`, by path.
pub(crate) fn files_containing(root: &Path, needle: &[u8]) -> Vec<String> {
    common::tree(root)
        .into_iter()
        .filter(|(_, bytes)| bytes.windows(needle.len()).any(|w| w == needle))
        .map(|(path, _)| path)
        .collect()
}

/// Every problem of every run of experiment `exp`'s latest session, in run order, as
/// `lab report --json` gives them.
pub(crate) fn problems(project: &Project) -> Vec<String> {
    run_problems(project).into_iter().flatten().collect()
}

/// The problems of each run of experiment `exp`'s latest session, in run order.
pub(crate) fn run_problems(project: &Project) -> Vec<Vec<String>> {
    let out = project.lab_exits(&["report", "exp", "--json"], lab::Exit::Ok);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["analysis"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["problems"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

pub(crate) fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub(crate) fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A process a run or build named by writing `$(readlink /proc/self/ns/pid):$PID`: runs are
/// born in a PID namespace of their session, where their PIDs are not the machine's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Named {
    /// The PID namespace, as `readlink /proc/self/ns/pid` gives it: `pid:[4026531836]`.
    namespace: String,
    /// The PID in that namespace.
    pid: i32,
}

impl std::fmt::Display for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} in {}", self.pid, self.namespace)
    }
}

/// Whether the process `named` is alive (and not a zombie): one in its namespace whose last
/// `NSpid` is its PID there.
pub(crate) fn alive(named: &Named) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let dir = entry.path();
        let in_namespace = std::fs::read_link(dir.join("ns/pid"))
            .is_ok_and(|ns| ns.to_string_lossy() == named.namespace);
        in_namespace
            && std::fs::read_to_string(dir.join("status")).is_ok_and(|status| {
                let field = |name: &str| {
                    status
                        .lines()
                        .find_map(|l| l.strip_prefix(name).map(str::trim))
                        .unwrap_or_default()
                        .to_string()
                };
                let last_pid = field("NSpid:")
                    .split_whitespace()
                    .last()
                    .map(str::to_string);
                last_pid == Some(named.pid.to_string()) && !field("State:").starts_with('Z')
            })
    })
}

/// The processes named, one per line, in `file` in the experiment's folder.
pub(crate) fn pids(project: &Project, file: &str) -> Vec<Named> {
    std::fs::read_to_string(project.path("experiments/exp").join(file))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|line| {
            let (namespace, pid) = line.rsplit_once(':')?;
            Some(Named {
                namespace: namespace.to_string(),
                pid: pid.parse().ok()?,
            })
        })
        .collect()
}

/// Starts `lab run exp --quiet` and waits until `count` PIDs are in `file`.
pub(crate) fn start_until(project: &Project, file: &str, count: usize) -> std::process::Child {
    use std::time::{Duration, Instant};
    let lab = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["run", "exp", "--quiet"])
        .current_dir(project.root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while pids(project, file).len() < count {
        assert!(Instant::now() < deadline, "{file} never held {count} PIDs");
        std::thread::sleep(Duration::from_millis(20));
    }
    lab
}

/// Waits up to `seconds` for the process `named` to be gone.
pub(crate) fn gone_within(named: &Named, seconds: u64) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while std::time::Instant::now() < deadline {
        if !alive(named) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}
