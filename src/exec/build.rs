//! The build step: once per session, skipped when its inputs and command are unchanged.

use super::process::spawn_error;
use crate::config::Experiment;
use crate::store::BuildReport;
use sha2::{Digest, Sha256};
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

fn run_build(argv: &[String], dir: &Path) -> Result<(), BuildError> {
    let output = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| BuildError::Spawn(spawn_error(&argv[0], &e)))?;
    if output.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    Err(BuildError::Failed {
        command: argv.join(" "),
        status: output.status.to_string(),
        tail: tail(&text, 20),
    })
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
