//! Hostile inputs: configurations, run behaviours, output payloads and names that try to break
//! lab, crash it, escape the project, outlive their run or reach the published site. Each case
//! asserts its exact outcome: a clean error at the right place, a flagged run, nothing written
//! outside the project, no live payload in the book, no surviving process.

use crate::common;

mod configs;
mod names;
mod output;
mod processes;
mod publish;
mod record;

use common::Project;
use std::path::Path;

/// A project with one experiment `name` made of `lab_toml` (and `files`), nothing else.
pub fn project_with(name: &str, lab_toml: &str, files: &[(&str, &str)]) -> Project {
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
pub fn minimal(script: &str, extra: &str) -> String {
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

/// Every file under `root` whose bytes contain `needle`, by path.
pub fn files_containing(root: &Path, needle: &[u8]) -> Vec<String> {
    common::tree(root)
        .into_iter()
        .filter(|(_, bytes)| bytes.windows(needle.len()).any(|w| w == needle))
        .map(|(path, _)| path)
        .collect()
}

pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether process `pid` is alive (and not a zombie).
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| r.trim().to_string()))
        .is_some_and(|rest| !rest.starts_with('Z'))
}

/// Waits up to `seconds` for `pid` to be gone.
pub fn gone_within(pid: i32, seconds: u64) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while std::time::Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}
