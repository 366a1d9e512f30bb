//! The command line, declared in one place with no logic.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Turns a benchmark investigation into a reproducible, publishable notebook.
///
/// Exit codes: 0 ok; 1 a validity check or a hypothesis failed, or no run produced a valid
/// measurement (`lab run`, `lab check`); 2 usage or configuration error (also a failed build,
/// a mistake in notes.md, an experiment already being run); 3 lab could not finish (I/O, a
/// damaged session); 129/130/143 stopped by SIGHUP/SIGINT/SIGTERM.
#[derive(Debug, Parser)]
#[command(name = "lab", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Print nothing but errors (NO_COLOR is honoured too).
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

/// Where `lab run` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    Local,
    Slurm,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build and run an experiment, store every run, then write its book chapter and print
    /// the answer: each cell's median with its 95% CI and every verdict.
    #[command(
        after_help = "Examples: lab run experiments/lockstack-dip --profile quick\n          lab run experiments/lockstack-dip --revs main,HEAD --confirm   # did my change make it slower?"
    )]
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
        /// Print the closing summary as JSON.
        #[arg(long)]
        json: bool,
        /// Measure two git revisions of the experiment's repository in one session, BASE,HEAD:
        /// each is checked out in a worktree under .lab/worktrees/ and built once, and their
        /// runs interleave. Reports HEAD/BASE per cell; exits 1 when HEAD is slower.
        #[arg(long, value_name = "BASE,HEAD", conflicts_with = "resume")]
        revs: Option<String>,
        /// With --revs: changes within ± this share count as noise ("2%" or 0.02).
        #[arg(long, default_value = "2%", requires = "revs")]
        threshold: String,
        /// With --revs: before reporting a regression, measure again in a second interleaved
        /// session; the regression is reported (exit 1) only if that one finds it too.
        #[arg(long, requires = "revs")]
        confirm: bool,
        /// A name for the session, shown in `lab history` and on the History page.
        #[arg(long)]
        label: Option<String>,
        /// Where the runs are measured: here, or on the nodes of a Slurm cluster (the plan is
        /// split into shards submitted as one job array; the project folder must be on a file
        /// system the nodes share).
        #[arg(long, value_enum, default_value = "local")]
        on: Engine,
        /// With --on slurm: the partition to submit to.
        #[arg(long)]
        partition: Option<String>,
        /// With --on slurm: only nodes with this feature (Slurm's --constraint).
        #[arg(long)]
        constraint: Option<String>,
        /// With --on slurm: split the plan into this many shards, each on a whole node, at
        /// most this many nodes at once.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
        nodes: u16,
        /// Let up to N runs execute at once, each pinned to its variant's `cpus`; runs start
        /// in the planned order, and one whose CPUs a running run holds waits. Every variant
        /// must declare `cpus`. Default 1: one run at a time.
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
        jobs: u16,
    },
    /// Run one shard of a session on the node a Slurm task was given (started by
    /// `lab run --on slurm`, not by hand).
    #[command(hide = true)]
    RunShard {
        /// The session folder, as every node sees it.
        session: PathBuf,
        /// The shard's index (the array task id).
        index: usize,
    },
    /// Re-render chapters from stored sessions without running anything. Each session is
    /// judged by the lab.toml it ran with.
    #[command(after_help = "Example: lab report lockstack-dip --session 20261129T233137Z-vm")]
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
    /// Print every check's verdict for the latest session; exit 1 if a validity check or a
    /// hypothesis failed, or no run produced a valid measurement.
    #[command(after_help = "Example: lab check lockstack-dip --json")]
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
    /// Compare two sessions of an experiment: what differs between their records, then per
    /// cell the ratio B/A of a metric's medians with its 95% CI: faster, slower, or no
    /// detectable change beyond the threshold. Exit 1 when a cell got slower.
    ///
    /// A and B name sessions (a folder name under data/NAME/ or a unique prefix), `latest`,
    /// `previous`, or a git commit the session was made at. With `--baseline NAME`, A is the
    /// session saved under that name and B (default `latest`) the only session named.
    #[command(
        after_help = "Examples: lab compare lockstack-dip previous latest --threshold 5%\n          lab compare lockstack-dip --baseline main"
    )]
    Compare {
        /// The experiment folder or its name.
        experiment: PathBuf,
        /// The baseline session (or, with --baseline, the session to compare with it).
        a: Option<String>,
        /// The session compared with A.
        b: Option<String>,
        /// Compare with the session saved as this baseline (`lab baseline`).
        #[arg(long)]
        baseline: Option<String>,
        /// The metric to compare (default: the primary one).
        #[arg(long)]
        metric: Option<String>,
        /// Changes within ± this share count as noise ("2%" or 0.02).
        #[arg(long, default_value = "2%")]
        threshold: String,
        /// Print the comparison as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Save a session under a name, to compare later sessions with (`lab compare --baseline`).
    #[command(
        after_help = "Example: lab baseline lockstack-dip main --session 20261130T081716Z-vm"
    )]
    Baseline {
        /// The experiment folder or its name.
        experiment: PathBuf,
        /// The baseline's name: letters, digits, `_`, `-`, `.`.
        name: String,
        /// The session to save (default: the latest).
        #[arg(long)]
        session: Option<String>,
    },
    /// Follow a metric of every cell across the experiment's sessions in time order, with the
    /// steps between sessions beyond the threshold, each named by the first session and git
    /// commit after it: a regression or an improvement. Sessions measured on another kind of
    /// machine are marked; re-analysed, damaged and incomplete sessions are left out.
    #[command(
        after_help = "Examples: lab history lockstack-dip\n          lab history lockstack-dip --check   # exit 1 if the newest session regressed"
    )]
    History {
        /// The experiment folder or its name.
        experiment: PathBuf,
        /// The metric to follow (default: the primary one).
        #[arg(long)]
        metric: Option<String>,
        /// Steps within ± this share are not reported ("2%" or 0.02).
        #[arg(long, default_value = "2%")]
        threshold: String,
        /// Exit 1 when the newest session stepped the wrong way.
        #[arg(long)]
        check: bool,
        /// Print the history as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Turn another harness's results into a lab session: every raw value kept (each process,
    /// fork or repetition a run, its iterations as iteration values), the tool and each file's
    /// SHA-256 recorded, then the usual analysis, checks and chapter. A new experiment gets a
    /// lab.toml written from the files; add its hypothesis and checks, then `lab report`.
    #[command(
        after_help = "Examples: hyperfine --export-json out.json 'sort a' 'sort b' && lab import hyperfine out.json --into sorting\n          lab import criterion target/criterion/parse --into parser"
    )]
    Import {
        /// The tool that wrote the files.
        #[arg(value_enum)]
        format: crate::import::formats::Format,
        /// Its result files (criterion: benchmark folders or their new/sample.json).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The experiment to add the session to (experiments/NAME, created when missing).
        #[arg(long, value_name = "EXP")]
        into: PathBuf,
        /// Import only the benchmarks whose name contains this text.
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
    },
    /// Re-read a stored session's raw output with today's lab.toml (metrics, checks, seed)
    /// into a new session that names its parent; runs nothing and changes no session.
    ///
    /// Fix a metric's regex in lab.toml, then re-read the kept output.
    #[command(after_help = "Example: lab reanalyze lockstack-dip")]
    Reanalyze {
        /// The experiment folder or its name.
        experiment: PathBuf,
        /// The session to re-read (default: the latest).
        #[arg(long)]
        session: Option<String>,
    },
    /// List experiments, their sessions and the latest verdict counts.
    #[command(after_help = "Example: lab list")]
    List,
    /// Write a new experiment folder with a benchmark whose harness avoids the classic traps.
    #[command(after_help = "Example: lab new sort-vs-sort-n --lang c")]
    New {
        /// The experiment's name; it is created as experiments/NAME.
        name: String,
        /// The language of the benchmark program.
        #[arg(long, value_enum, default_value_t = Lang::Sh)]
        lang: Lang,
    },
    /// Print the JSON Schema of lab.toml (also committed as lab.schema.json).
    #[command(after_help = "Example: lab schema > lab.schema.json")]
    Schema,
    /// Print a shell completion script.
    #[command(after_help = "Example: lab completions bash > /etc/bash_completion.d/lab")]
    Completions {
        /// The shell to complete in.
        shell: clap_complete::Shell,
    },
    /// Print lab's manual page (roff).
    #[command(after_help = "Example: lab man | man -l -")]
    Man,
    /// Re-render the book from stored data and build its HTML into book/book/ (no mdbook
    /// install needed).
    #[command(after_help = "Example: lab book --serve --port 3000")]
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

/// The languages `lab new` writes a benchmark in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    Sh,
    C,
    Rust,
    Java,
    Python,
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

    #[test]
    fn jobs_default_to_one_and_zero_is_refused() {
        let one = Cli::try_parse_from(["lab", "run", "x"]).unwrap();
        assert!(matches!(one.command, Command::Run { jobs: 1, .. }));
        let two = Cli::try_parse_from(["lab", "run", "x", "--jobs", "2"]).unwrap();
        assert!(matches!(two.command, Command::Run { jobs: 2, .. }));
        assert!(Cli::try_parse_from(["lab", "run", "x", "--jobs", "0"]).is_err());
    }
}
