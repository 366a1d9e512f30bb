//! `lab bench`'s command line, declared with no logic: hyperfine 1.20's and 2.0's flags with
//! their meanings (docs/src/guide/bench.md lists each, with any difference), lab's own after them.

use super::shown::{SortOrder, TimeUnit};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// The commands to time, each one variant. Split into arguments as a shell splits words
    /// (quotes and backslashes) but never run by one unless --shell is given; `{NAME}` is
    /// replaced by a parameter's value inside one argument.
    #[arg(value_name = "COMMAND")]
    pub commands: Vec<String>,
    /// Warm-up runs per command and parameter set before the timed ones (recorded, not counted).
    #[arg(short = 'w', long, value_name = "NUM", default_value_t = 0)]
    pub warmup: u32,
    /// Exactly this many timed runs per command and parameter set (no sampling).
    #[arg(short = 'r', long, value_name = "NUM", conflicts_with_all = ["min_runs", "max_runs"], value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: Option<u32>,
    /// Timed runs per command at the first look (default 5; 10 for a single command).
    #[arg(short = 'm', long, value_name = "NUM", value_parser = clap::value_parser!(u32).range(2..))]
    pub min_runs: Option<u32>,
    /// The most timed runs per command that sampling may reach (default 40).
    #[arg(short = 'M', long, value_name = "NUM", value_parser = clap::value_parser!(u32).range(2..))]
    pub max_runs: Option<u32>,
    /// How long the runs may take while sampling, "20s" by default: no look starts that its
    /// runs' expected time would carry past it.
    #[arg(long, value_name = "DURATION", value_parser = crate::app::value_parsers::budget)]
    pub budget: Option<std::time::Duration>,
    /// A parameter and its comma-separated values, e.g. -L size 10,100 (repeatable).
    #[arg(short = 'L', long = "parameter-list", num_args = 2, value_names = ["NAME", "VALUES"], action = clap::ArgAction::Append)]
    pub parameter_list: Vec<String>,
    /// A parameter scanned from LOW to HIGH, e.g. -P threads 1 8 (repeatable).
    #[arg(short = 'P', long = "parameter-scan", num_args = 3, value_names = ["NAME", "LOW", "HIGH"], action = clap::ArgAction::Append)]
    pub parameter_scan: Vec<String>,
    /// The step of every -P scan (default 1).
    #[arg(
        short = 'D',
        long = "parameter-step-size",
        value_name = "STEP",
        requires = "parameter_scan"
    )]
    pub step: Option<String>,
    /// A command run, untimed, before each timed run: once for all commands or once per command.
    #[arg(short = 'p', long, value_name = "CMD")]
    pub prepare: Vec<String>,
    /// A command run, untimed, after each timed run: once for all commands or once per command.
    #[arg(short = 'C', long, value_name = "CMD")]
    pub conclude: Vec<String>,
    /// A command run once per command and parameter set before its first run.
    #[arg(short = 's', long, value_name = "CMD")]
    pub setup: Option<String>,
    /// A command run once per command and parameter set after the last run: once for all
    /// commands or once per command.
    #[arg(short = 'c', long, value_name = "CMD")]
    pub cleanup: Vec<String>,
    /// A name for a command, in the commands' order (repeatable).
    #[arg(short = 'n', long = "command-name", value_name = "NAME")]
    pub command_name: Vec<String>,
    /// A reference command every other command is compared with (by default the first).
    #[arg(long, value_name = "CMD")]
    pub reference: Option<String>,
    /// A name for the reference command.
    #[arg(long, value_name = "NAME", requires = "reference")]
    pub reference_name: Option<String>,
    /// Count runs that exit with a non-zero code as measurements instead of failures: every
    /// such code (-i, --ignore-failure=all-non-zero) or only those listed (-i=1,2).
    #[arg(short = 'i', long, value_name = "MODE", num_args = 0..=1, require_equals = true, default_missing_value = "all-non-zero")]
    pub ignore_failure: Option<String>,
    /// Variables set for the runs, `NAME=VALUE` assignments separated by spaces and quoted as a
    /// shell quotes them (hyperfine 2.0's): once for every command or once per command.
    #[arg(long, value_name = "ASSIGNMENTS")]
    pub env: Vec<String>,
    /// Run the commands through this shell (`sh`, `bash --norc`; `default` is sh, `none` no
    /// shell) instead of splitting them into arguments. Hooks (--setup, --prepare,
    /// --conclude, --cleanup) always run through a shell: this one, else sh.
    #[arg(short = 'S', long, value_name = "SHELL")]
    pub shell: Option<String>,
    /// Run the commands without a shell (the default; an alias of --shell=none).
    #[arg(short = 'N', conflicts_with = "shell")]
    pub no_shell: bool,
    /// Run commands that hold shell syntax (|, &&, >, $VAR, globs) without a shell anyway:
    /// each is split into words and the program gets them as its arguments.
    #[arg(long)]
    pub no_shell_check: bool,
    /// Where the commands read their standard input: `null` (the default) or a FILE.
    #[arg(long, value_name = "WHERE")]
    pub input: Option<String>,
    /// Where the commands' standard output goes besides the record: `null` and `pipe` (the
    /// record keeps it either way), `inherit` (printed, as --show-output), or a FILE that
    /// receives each command's last run's output. Once for all commands or once per command.
    #[arg(long, value_name = "WHERE", conflicts_with = "show_output")]
    pub output: Vec<String>,
    /// Print each run's standard output and error after it ends.
    #[arg(long)]
    pub show_output: bool,
    /// Two commands within ± this share of each other are "the same" ("2%" or 0.02).
    #[arg(long, default_value = "2%", value_parser = crate::app::value_parsers::threshold)]
    pub threshold: f64,
    /// The seed of the shuffled order (recorded in the session either way).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Each run's process group is killed after this long ("30s", "2m"; default 600 s).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// A run that waited for a CPU others had for more than this share of its wall time
    /// counts as disturbed: drawn apart, and the next run waits for the machine to calm
    /// ("10%" by default, as in lab.toml's `max_busy`; "100%" turns the guard off). Every
    /// run's timing is kept; each answer weighs what the waiting could have changed.
    #[arg(long, value_name = "SHARE")]
    pub max_busy: Option<String>,
    /// After a run that waited for a CPU others had, start the next at once instead of
    /// waiting for the machine to calm.
    #[arg(long)]
    pub no_wait: bool,
    /// Keep the experiment as experiments/NAME/lab.toml, to edit and rerun with `lab run`.
    #[arg(long, value_name = "NAME")]
    pub save: Option<String>,
    /// List the earlier `lab bench` sessions kept where this one would be, newest last.
    #[arg(long, conflicts_with_all = ["commands", "open"])]
    pub list: bool,
    /// Print the answer of an earlier session again (`latest` by default, or a name from
    /// --list or a unique prefix of it), without running anything.
    #[arg(long, value_name = "SESSION", num_args = 0..=1, default_missing_value = "latest", conflicts_with = "commands")]
    pub open: Option<String>,
    /// hyperfine's output styles: `auto`, `basic` and `color` (lines, no bar), `full` and
    /// `nocolor` (a bar), `none` (print nothing; exports are still written).
    #[arg(long, value_name = "TYPE", value_enum)]
    pub style: Option<Style>,
    /// The order of the summary and of the Markdown, AsciiDoc and Org tables: `auto`
    /// (summary by time, tables as given), `command` or `mean-time`.
    #[arg(
        long,
        value_name = "METHOD",
        value_enum,
        default_value = "auto",
        hide_default_value = true
    )]
    pub sort: SortOrder,
    /// The unit of the times printed and of the Markdown, AsciiDoc and Org tables (JSON and
    /// CSV are always in seconds).
    #[arg(short = 'u', long, value_name = "UNIT", value_enum)]
    pub time_unit: Option<TimeUnit>,
    /// Where output is no terminal, print a line per run.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Write hyperfine's JSON export (1.x layout) to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write hyperfine's Markdown table to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Write hyperfine's CSV export to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Write hyperfine's AsciiDoc table to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_asciidoc: Option<PathBuf>,
    /// Write hyperfine's Emacs Org table to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_orgmode: Option<PathBuf>,
    /// hyperfine 2.0's metrics to measure (`default`, `time`, `all`, or names such as
    /// `time_cpu,memory_peak_resident`): lab records wall, CPU, user and system time and peak
    /// memory of every run whichever are named; perf counters go through lab.toml.
    #[arg(long, value_name = "PRESET|METRIC[:UNIT],…")]
    pub metrics: Option<String>,
    /// hyperfine's hidden --min-benchmarking-time: refused, naming lab's way (--budget).
    #[arg(long, value_name = "SECONDS", hide = true)]
    pub min_benchmarking_time: Option<String>,
}

/// hyperfine's `--style` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    Auto,
    Basic,
    Full,
    Nocolor,
    Color,
    None,
}
