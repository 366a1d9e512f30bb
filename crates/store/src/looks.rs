//! A sampled session's looks as its run loop took them: `looks.json`, written whole after each
//! look, guarded between runs and sealed with the session's other files like any file lab
//! writes whole. What it holds is the reader's (the pipeline's standing of each look); the
//! store only keeps it, so that a report reads each earlier look back instead of judging it
//! again. A session without it (recorded before lab kept its looks, or derived from another)
//! is judged look by look as before.

use super::SessionWriter;
use anyhow::Result;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::Path;

/// The file of a sampled session's looks.
pub const LOOKS: &str = "looks.json";

impl SessionWriter {
    /// Replaces the session's looks with `looks`.
    pub fn record_looks<T: Serialize>(&mut self, looks: &T) -> Result<()> {
        let path = self.dir.join(LOOKS);
        self.rewrite(&path, looks)
    }
}

/// The looks of the session in `dir`, as [`SessionWriter::record_looks`] recorded them; `None`
/// where it holds none, or none this reader can read.
pub fn read_looks<T: DeserializeOwned>(dir: &Path) -> Option<T> {
    let bytes = super::read_regular(&dir.join(LOOKS)).ok()?;
    serde_json::from_slice(&bytes).ok()
}
