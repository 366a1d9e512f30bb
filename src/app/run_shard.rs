//! `lab run-shard`: the hidden command a Slurm task runs to measure one shard of a session.

use crate::error::{Exit, Result};
use crate::layout::Layout;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct RunShardArgs {
    /// The session folder, as every node sees it.
    pub session: PathBuf,
    /// The shard's index (the array task id).
    pub index: usize,
}

impl RunShardArgs {
    /// `lab run-shard`: runs the shard's runs into its folder.
    pub fn execute(self, _layout: &Layout, _quiet: bool) -> Result<Exit> {
        super::run_shard(&self.session, self.index)
    }
}
