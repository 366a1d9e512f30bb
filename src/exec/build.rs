//! The build step: once per session, skipped when its inputs and command are unchanged.

use super::process::spawn_error;
use crate::config::Experiment;
use crate::store::BuildReport;
use sha2::{Digest, Sha256};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use thiserror::Error;

/// Where the fingerprint of the last successful build is kept, in the experiment folder.
const STAMP_FILE: &str = ".lab-build";

/// A build that could not start or did not succeed.
#[derive(Debug, Error)]
pub enum BuildError {
    #[error("the build could not start: {0}")]
    Spawn(String),
    #[error("the build `{command}` failed ({status}); the end of its output:\n{tail}")]
    Failed {
        command: String,
        status: String,
        tail: String,
    },
    /// A signal stopped lab while the build ran; the build's processes were killed.
    #[error("stopped by signal {0} while building; the build's processes were killed")]
    Interrupted(i32),
    #[error("cannot read build input {path}: {source}")]
    Input {
        path: String,
        source: std::io::Error,
    },
}

/// Runs the experiment's build unless its fingerprint matches the last successful one.
pub fn build(exp: &Experiment) -> Result<Option<BuildReport>, BuildError> {
    let Some(build) = &exp.build else {
        return Ok(None);
    };
    let fingerprint = fingerprint(exp)?;
    let stamp = exp.dir.join(STAMP_FILE);
    let outputs_present = build.outputs.iter().all(|o| exp.dir.join(o).exists());
    let unchanged = std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == fingerprint);
    let mut report = BuildReport {
        command: build.argv.clone(),
        fingerprint: fingerprint.clone(),
        ran: false,
        wall_ms: 0,
    };
    if unchanged && outputs_present {
        return Ok(Some(report));
    }
    // The folders the declared outputs go to exist before the build writes them.
    for output in &build.outputs {
        if let Some(parent) = exp.dir.join(output).parent() {
            let _ = std::fs::create_dir_all(parent);
        }
    }
    let started = std::time::Instant::now();
    run_build(&build.argv, &exp.dir)?;
    report.ran = true;
    report.wall_ms = started.elapsed().as_millis() as u64;
    // A missing stamp only costs a rebuild next time, so a write failure is not fatal.
    let _ = std::fs::write(&stamp, format!("{fingerprint}\n"));
    Ok(Some(report))
}

/// Runs the build in the session's containment, in a process group of its own that a signal
/// to lab kills, and kills whatever it leaves behind once it exits (a daemon it started, even
/// one that left its group): a build never shares the machine with the runs that follow.
fn run_build(argv: &[String], dir: &Path) -> Result<(), BuildError> {
    super::interrupt::install();
    super::orphans::become_subreaper();
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    super::isolation::contain(&mut command, dir);
    let mut child = command
        .spawn()
        .map_err(|e| BuildError::Spawn(spawn_error(&argv[0], &e)))?;
    let group = child.id() as libc::pid_t;
    super::running::register(group);
    let readers = [
        read_in_background(child.stdout.take()),
        read_in_background(child.stderr.take()),
    ];
    let status = wait_for(&mut child);
    super::running::unregister(group);
    let left = super::orphans::reap_leftovers(group, None);
    if !left.is_empty() {
        eprintln!(
            "warning: the build left {} running: {} (killed)",
            plural_processes(left.len()),
            left.join(", ")
        );
    }
    if super::interrupt::requested() {
        return Err(BuildError::Interrupted(super::interrupt::signal()));
    }
    let text: String = readers
        .into_iter()
        .map(|r| r.join().unwrap_or_default())
        .collect();
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(BuildError::Failed {
            command: argv.join(" "),
            status: status.to_string(),
            tail: tail(&text, 20),
        }),
        Err(e) => Err(BuildError::Spawn(e.to_string())),
    }
}

/// Waits for the build, through the interruptions a signal to lab makes.
fn wait_for(child: &mut std::process::Child) -> std::io::Result<std::process::ExitStatus> {
    loop {
        match child.wait() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Everything `stream` yields until its end, read on a thread of its own so that a build
/// writing more than a pipe holds never blocks on lab.
fn read_in_background<R: std::io::Read + Send + 'static>(
    stream: Option<R>,
) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut stream) = stream {
            let _ = stream.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

fn plural_processes(n: usize) -> String {
    if n == 1 {
        "1 process".to_string()
    } else {
        format!("{n} processes")
    }
}

/// The last `lines` lines of `text`.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim_end().lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// SHA-256 over the command and every input file (path and content, sorted by path).
fn fingerprint(exp: &Experiment) -> Result<String, BuildError> {
    let Some(build) = &exp.build else {
        return Ok(String::new());
    };
    let mut hasher = Sha256::new();
    for arg in &build.argv {
        hasher.update(arg.as_bytes());
        hasher.update([0]);
    }
    let mut files = Vec::new();
    for pattern in &build.inputs {
        let full = exp.dir.join(pattern).to_string_lossy().into_owned();
        files.extend(
            glob::glob(&full)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|p| p.is_file()),
        );
    }
    files.sort();
    files.dedup();
    for file in files {
        let content = std::fs::read(&file).map_err(|source| BuildError::Input {
            path: file.display().to_string(),
            source,
        })?;
        hasher.update(
            file.strip_prefix(&exp.dir)
                .unwrap_or(&file)
                .to_string_lossy()
                .as_bytes(),
        );
        hasher.update([0]);
        hasher.update(&content);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
    }
}
