//! `lab new NAME`: the command line of the scaffold, which writes a new experiment folder.

use crate::error::{Exit, Result};
use crate::layout::Layout;

/// The languages `lab new` writes a benchmark in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    Sh,
    C,
    Rust,
    Java,
    Python,
}

#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The experiment's name; it is created as experiments/NAME.
    pub name: String,
    /// The language of the benchmark program.
    #[arg(long, value_enum, default_value_t = Lang::Sh)]
    pub lang: Lang,
}

impl NewArgs {
    /// `lab new`: writes the folder and says what to run next.
    pub fn execute(self, layout: &Layout, _quiet: bool) -> Result<Exit> {
        let dir = super::new_experiment(layout, &self.name, self.lang)?;
        println!(
            "wrote {}: lab.toml, notes.md and the benchmark\nnext: lab run {} --profile quick",
            dir.display(),
            dir.display()
        );
        Ok(Exit::Ok)
    }
}
