//! Errors at the top of lab and the exit code each one maps to.

use crate::config::ConfigError;
use crate::exec::BuildError;
use thiserror::Error;

/// Exit status: everything went well.
pub const EXIT_OK: i32 = 0;
/// Exit status: a validity check failed (`lab check`).
pub const EXIT_CHECK_FAILED: i32 = 1;
/// Exit status: bad usage, bad configuration, or a build that failed.
pub const EXIT_USAGE: i32 = 2;
/// Exit status: lab could not finish its own work (I/O and the like).
pub const EXIT_INTERNAL: i32 = 3;

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
