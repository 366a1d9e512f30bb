//! The automatic checks' names: what a result names, what notes and pages refer to it by.

/// The automatic checks, by name, in report order.
pub const CHECK_NAMES: [&str; 10] = [
    EXITED,
    "no run timed out",
    LEFT_RUNNING,
    SUSPEND,
    REPORTED,
    IMPOSSIBLE,
    TOO_SHORT,
    CONFIG_ECHO,
    QUIET,
    APART,
];

pub const EXITED: &str = "every run exited normally";
pub const REPORTED: &str = "every run reported every metric";
pub const SUSPEND: &str = "no run spanned a system suspend";
pub const TOO_SHORT: &str = "every run was long enough to time";
pub const LEFT_RUNNING: &str = "no run left processes running";
pub const CONFIG_ECHO: &str = "every run echoed the configuration it was asked for";
pub const QUIET: &str = "the machine was quiet during every run";
pub const APART: &str = "no runs executing side by side shared a CPU";
pub const IMPOSSIBLE: &str = "no time value exceeds its run's wall time";
pub const RESOLUTION: &str = "every metric moved finer than the differences it decides";
/// The check that takes the quiet-machine check's place in a session that keeps every run's
/// timing with its disturbance beside it.
pub const BUSY: &str = "no verdict depends on how busy the machine was";
/// The name of the check that fails when a run changed the session's own files.
pub const INTACT: &str = "no run changed the session's files";
