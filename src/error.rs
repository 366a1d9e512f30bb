//! Errors at the top of lab and the exit code each one maps to.

use crate::config::ConfigError;
use crate::exec::BuildError;
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

    /// `Ok` when nothing failed, `CheckFailed` otherwise.
    pub fn failed_if(failed: bool) -> Exit {
        if failed { Exit::CheckFailed } else { Exit::Ok }
    }
}

/// Exit status: everything went well.
pub const EXIT_OK: i32 = Exit::Ok.code();
/// Exit status: a validity check failed (`lab check`).
pub const EXIT_CHECK_FAILED: i32 = Exit::CheckFailed.code();
/// Exit status: bad usage, bad configuration, or a build that failed.
pub const EXIT_USAGE: i32 = Exit::Usage.code();
/// Exit status: lab could not finish its own work (I/O and the like).
pub const EXIT_INTERNAL: i32 = Exit::Internal.code();

#[derive(Debug, Error)]
pub enum LabError {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Build(#[from] BuildError),
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

impl LabError {
    pub fn exit_code(&self) -> i32 {
        match self {
            LabError::Config(_) | LabError::Usage(_) | LabError::Build(_) => EXIT_USAGE,
            LabError::Other(e)
                if e.downcast_ref::<crate::render::notes::NotesError>()
                    .is_some() =>
            {
                EXIT_USAGE
            }
            LabError::Other(_) => EXIT_INTERNAL,
        }
    }
}

pub type Result<T> = std::result::Result<T, LabError>;
