//! The protection a session asks for (`isolation` in lab.toml); the runner provides it.

/// What a session asks for (`isolation` in lab.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Wanted {
    /// Whatever the machine allows, recorded.
    #[default]
    Auto,
    /// Refuse to run without both protections.
    Strict,
    /// No protection: runs go as they did before lab isolated them.
    None,
}
