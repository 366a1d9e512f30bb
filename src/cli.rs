//! The command line, declared in one place with no logic.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Turns a benchmark investigation into a reproducible, publishable notebook.
///
/// Exit codes: 0 ok, 1 a check failed, 2 usage or configuration error (also a failed build),
/// 3 lab could not finish (I/O error), 130 interrupted.
#[derive(Debug, Parser)]
#[command(name = "lab", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Print nothing but errors (NO_COLOR is honoured too).
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build and run an experiment, store every run, then write its book chapter.
    Run {
        /// The experiment folder (experiments/NAME) or its name.
        experiment: PathBuf,
        /// Apply a [profile.NAME] table of lab.toml (e.g. quick).
        #[arg(long)]
        profile: Option<String>,
        /// Print the plan and its estimated duration; run nothing.
        #[arg(long)]
        dry_run: bool,
        /// Complete the latest unfinished session instead of starting a new one.
        #[arg(long, conflicts_with = "dry_run")]
        resume: bool,
    },
    /// Re-render chapters from stored sessions without running anything. Each session is
    /// judged by the lab.toml it ran with.
    Report {
        /// Experiments to render (default: every experiment with data).
        experiments: Vec<PathBuf>,
        /// Render this session (its folder name under data/NAME/, or a unique prefix) instead
        /// of the latest; needs exactly one experiment.
        #[arg(long)]
        session: Option<String>,
        /// Print the analysis of the given experiment as JSON instead of writing the book.
        #[arg(long)]
        json: bool,
    },
    /// Print every check's verdict for the latest session; exit 1 if a validity check failed.
    Check {
        /// The experiment folder or its name.
        experiment: PathBuf,
        /// Judge this session instead of the latest.
        #[arg(long)]
        session: Option<String>,
        /// Print the verdicts as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Re-read a stored session's raw output with today's lab.toml (metrics, checks, seed)
    /// into a new session that names its parent; runs nothing and changes no session.
    ///
    /// Example: fix a metric's regex in lab.toml, then `lab reanalyze lockstack-dip`.
    Reanalyze {
        /// The experiment folder or its name.
        experiment: PathBuf,
        /// The session to re-read (default: the latest).
        #[arg(long)]
        session: Option<String>,
    },
    /// List experiments, their sessions and the latest verdict counts.
    List,
    /// Re-render the book from stored data and build its HTML into book/book/ (no mdbook
    /// install needed).
    Book {
        /// Render this session of the one experiment named (default: every latest session).
        #[arg(long, requires = "experiment")]
        session: Option<String>,
        /// The experiment whose chapter `--session` chooses.
        #[arg(long)]
        experiment: Option<PathBuf>,
        /// Then serve it on 127.0.0.1 and rebuild when data, notes or lab.toml change.
        #[arg(long)]
        serve: bool,
        /// The loopback port to serve on.
        #[arg(long, default_value_t = 3000, requires = "serve")]
        port: u16,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn unknown_options_are_rejected() {
        assert!(Cli::try_parse_from(["lab", "run", "x", "--bogus"]).is_err());
        assert!(Cli::try_parse_from(["lab", "run", "x", "--dry-run", "--resume"]).is_err());
        let ok = Cli::try_parse_from(["lab", "run", "x", "--profile", "quick"]).unwrap();
        assert!(matches!(ok.command, Command::Run { profile: Some(ref p), .. } if p == "quick"));
    }
}
