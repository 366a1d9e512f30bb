//! Errors at the top of lab and the exit code each one maps to.

use lab_config::ConfigError;
use lab_exec::BuildError;
use lab_store::SessionError;
use thiserror::Error;

/// How lab ends, and the exit status each ending gives (nextest's `exit_codes` is the model:
/// one table, documented once). The README's exit-code paragraph is checked against
/// [`Exit::TABLE`] by a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Every check passed or could not decide.
    Ok,
    /// A validity check or a hypothesis failed, or no run produced a valid measurement.
    CheckFailed,
    /// Usage or configuration error, a build that failed, a mistake in notes.md.
    Usage,
    /// lab could not finish its own work (an unreadable or damaged session, I/O).
    Internal,
    /// Stopped by this signal: the status is 128 + its number.
    Signal(i32),
}

impl Exit {
    /// Every fixed ending with its status and what it means, in the order the README lists them.
    pub const TABLE: [(Exit, i32, &'static str); 4] = [
        (Exit::Ok, 0, "every check passed or could not decide"),
        (
            Exit::CheckFailed,
            1,
            "a validity check or a hypothesis failed",
        ),
        (Exit::Usage, 2, "usage or configuration error"),
        (Exit::Internal, 3, "lab could not finish its own work"),
    ];

    /// The process exit status of this ending.
    pub const fn code(self) -> i32 {
        match self {
            Exit::Ok => 0,
            Exit::CheckFailed => 1,
            Exit::Usage => 2,
            Exit::Internal => 3,
            Exit::Signal(signal) => 128 + signal,
        }
    }

    /// The ending a process exit status stands for (tests read lab's status back through it).
    pub fn from_code(code: i32) -> Exit {
        match code {
            0 => Exit::Ok,
            1 => Exit::CheckFailed,
            2 => Exit::Usage,
            3 => Exit::Internal,
            other => Exit::Signal(other - 128),
        }
    }

    /// The signals lab stops on, each ending as `Signal(n)` (status 128 + n), as the README
    /// and `--help` name them.
    pub const SIGNALS: [(i32, &'static str); 3] = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGTERM, "SIGTERM"),
    ];

    /// The exit statuses as `lab --help` lists them, written from [`Exit::TABLE`] and
    /// [`Exit::SIGNALS`].
    pub fn help() -> String {
        let fixed: Vec<String> = Exit::TABLE
            .iter()
            .map(|(_, code, meaning)| format!("{code} {meaning}"))
            .collect();
        let codes: Vec<String> = Exit::SIGNALS
            .iter()
            .map(|(n, _)| Exit::Signal(*n).code().to_string())
            .collect();
        let names: Vec<&str> = Exit::SIGNALS.iter().map(|(_, name)| *name).collect();
        format!(
            "Exit codes, the same for `lab run` and `lab check`: {}; {} stopped by {}.",
            fixed.join("; "),
            codes.join(", "),
            names.join(", ")
        )
    }

    /// `Ok` when nothing failed, `CheckFailed` otherwise.
    pub fn failed_if(failed: bool) -> Exit {
        if failed { Exit::CheckFailed } else { Exit::Ok }
    }
}

#[derive(Debug, Error)]
pub enum LabError {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Build(#[from] BuildError),
    /// A session argument that names no session, or a session list that cannot be read.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A mistake in the author's files found while rendering (notes.md): a usage error.
    #[error(transparent)]
    Authoring(anyhow::Error),
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

impl LabError {
    /// How lab ends with this error.
    pub fn exit(&self) -> Exit {
        match self {
            LabError::Build(BuildError::Interrupted(signal)) => Exit::Signal(*signal),
            LabError::Config(_)
            | LabError::Usage(_)
            | LabError::Build(_)
            | LabError::Authoring(_)
            | LabError::Session(SessionError::Usage(_)) => Exit::Usage,
            LabError::Session(SessionError::Unreadable(_)) => Exit::Internal,
            LabError::Other(_) => Exit::Internal,
        }
    }

    /// The exit status lab ends with on this error.
    pub fn exit_code(&self) -> i32 {
        self.exit().code()
    }
}

pub type Result<T> = std::result::Result<T, LabError>;
