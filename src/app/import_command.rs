//! `lab import`'s command line, read into [`ImportOptions`] for the importer.

use super::{ImportOptions, Layout};
use crate::error::{Exit, Result};
use crate::import::formats::Format;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The tool that wrote the files.
    #[arg(value_enum)]
    pub format: Format,
    /// Its result files, gzip-compressed or not (criterion: a target/criterion folder, benchmark
    /// folders, or their new/sample.json).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The experiment to add the session to (experiments/NAME, created when missing).
    #[arg(long, value_name = "EXP")]
    pub into: PathBuf,
    /// Import only the benchmarks whose name contains TEXT; `mode=MODE` (JMH: thrpt, avgt,
    /// sample, ss) and `unit=UNIT` (such as ops/ms) select by mode or unit. Repeatable: every
    /// filter must hold.
    #[arg(long, value_name = "TEXT")]
    pub filter: Vec<String>,
    /// Every file comes from this one machine or build: import them into one session, under
    /// this label, even where their recorded hosts or builds differ.
    #[arg(long, value_name = "LABEL")]
    pub machine: Option<String>,
}

impl ImportArgs {
    /// `lab import`: writes the session and its chapter; exits as the checks say.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        let opts = ImportOptions {
            format: self.format,
            files: &self.files,
            into: &self.into,
            filters: &self.filter,
            machine: self.machine.as_deref(),
            quiet,
            command_line: super::run_command::typed_command(),
        };
        super::import(layout, &opts)
    }
}
