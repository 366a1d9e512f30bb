//! The build step: once per session, skipped when its inputs and command are unchanged. Its
//! output is kept in the experiment folder (`build_log`), and a failure shows its tail.

use super::build_log::{self, Tail};
use super::process::spawn_error;
use lab_config::Experiment;
use lab_store::BuildReport;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use thiserror::Error;

/// Where the fingerprint of the last successful build is kept, in the experiment folder.
const STAMP_FILE: &str = ".lab-build";

/// A build that could not start or did not succeed.
#[derive(Debug, Error)]
pub enum BuildError {
    #[error("the build could not start: {0}")]
    Spawn(String),
    #[error("the build `{command}` failed ({status}); {tail}")]
    Failed {
        command: String,
        status: String,
        tail: Tail,
    },
    /// A signal stopped lab while the build ran; the build's processes were killed.
    #[error("stopped by signal {0} while building; the build's processes were killed")]
    Interrupted(i32),
    #[error("cannot read build input {path}: {source}")]
    Input {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write the build's output to {path}: {source}")]
    Log {
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
/// to lab kills, its output going to the build log rather than into memory; whatever it
/// leaves running once it exits (a daemon it started, even one that left its group) is
/// killed and named: a build never shares the machine with the runs that follow.
fn run_build(argv: &[String], dir: &Path) -> Result<(), BuildError> {
    let log_error = |source| BuildError::Log {
        path: dir.join(build_log::LOG_FILE).display().to_string(),
        source,
    };
    let (log_path, log) = build_log::create(dir).map_err(log_error)?;
    let stdout = log.try_clone().map_err(log_error)?;
    super::interrupt::install();
    super::orphans::become_subreaper();
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(log)
        .process_group(0);
    let mut child = super::isolation::spawn_contained(&mut command, dir)
        .map_err(|e| BuildError::Spawn(spawn_error(&argv[0], &e, dir, &BTreeMap::new())))?;
    let group = child.id() as libc::pid_t;
    super::running::register(group);
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
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(BuildError::Failed {
            command: argv.join(" "),
            status: status.to_string(),
            tail: build_log::tail(&log_path),
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

/// Whether `file` is one lab writes in the experiment folder, never an input of the build.
fn written_by_lab(file: &Path, dir: &Path) -> bool {
    file.parent() == Some(dir)
        && file
            .file_name()
            .is_some_and(|n| n == STAMP_FILE || n == build_log::LOG_FILE)
}

/// SHA-256 over the command and every input file (path and content, sorted by path).
pub(crate) fn fingerprint(exp: &Experiment) -> Result<String, BuildError> {
    let Some(build) = &exp.build else {
        return Ok(String::new());
    };
    let mut hasher = Sha256::new();
    for arg in &build.argv {
        hasher.update(arg.as_bytes());
        hasher.update([0]);
    }
    for file in input_files(exp) {
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

/// The files the build's `inputs` patterns match, sorted, without those lab writes.
pub(crate) fn input_files(exp: &Experiment) -> Vec<PathBuf> {
    let Some(build) = &exp.build else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for pattern in &build.inputs {
        let full = exp.dir.join(pattern).to_string_lossy().into_owned();
        files.extend(
            glob::glob(&full)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|p| p.is_file() && !written_by_lab(p, &exp.dir)),
        );
    }
    files.sort();
    files.dedup();
    files
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
