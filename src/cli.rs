//! The command line, declared in one place: each subcommand's arguments are an `Args` type in
//! its own file under `app/`, and [`Command::execute`] hands them there.

use crate::app::{
    BaselineArgs, BenchArgs, BisectArgs, BookArgs, BundleArgs, CheckArgs, CiArgs, CompareArgs,
    ExplainArgs, ExportArgs, HistoryArgs, ImportArgs, ListArgs, LogsArgs, NewArgs, NoiseArgs,
    ReanalyzeArgs, ReportArgs, RunArgs, RunShardArgs, SchemaArgs,
};
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use clap::{CommandFactory, Parser, Subcommand};
use std::io::Write;

pub use crate::app::Lang;

/// Turns a benchmark investigation into a reproducible, publishable notebook.
#[derive(Debug, Parser)]
#[command(name = "lab", version, about, long_about = None, propagate_version = true, after_help = Exit::help())]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Print nothing but errors (NO_COLOR is honoured too).
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build and run an experiment, store every run, then write its book chapter and print
    /// the answer: each cell's median with its 95% CI and every verdict.
    #[command(
        after_help = "Examples: lab run experiments/lockstack-dip --profile quick\n          lab run experiments/lockstack-dip --revs main,HEAD --confirm   # did my change make it slower?"
    )]
    Run(RunArgs),
    /// Time commands the way hyperfine does, with lab's answers: each command a variant,
    /// interleaved in a seeded order, sampled until each is decided against the reference
    /// (faster, slower or the same), every run kept in a sealed session, hyperfine's exports.
    #[command(
        after_help = "Examples: lab bench 'sort data' 'sort -n data'\n          lab bench --shell=sh 'sort data | uniq' 'sort -u data'   # shell syntax needs a shell\n          lab bench -L count 10,100 'seq {count}' --export-json out.json\n          lab bench --save sorting 'sort data' 'sort -n data'   # then edit experiments/sorting/lab.toml\n          lab bench --list   # earlier sessions; --open NAME prints one's answer again"
    )]
    Bench(Box<BenchArgs>),
    /// Run one shard of a session on the node a Slurm task was given (started by
    /// `lab run --on slurm`, not by hand).
    #[command(hide = true)]
    RunShard(RunShardArgs),
    /// Re-render chapters from stored sessions without running anything. Each session is
    /// judged by the lab.toml it ran with.
    #[command(after_help = "Example: lab report lockstack-dip --session 20261129T233137Z-vm")]
    Report(ReportArgs),
    /// Print every check's verdict for the latest session; exit 1 if a validity check or a
    /// hypothesis failed, or no run produced a valid measurement.
    #[command(after_help = "Example: lab check lockstack-dip --json")]
    Check(CheckArgs),
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
    Compare(CompareArgs),
    /// Answer a pull request: measure the checkout's head against its merge-base with the
    /// branch it goes into, interleaved, each cell sampled until decided; a slowdown is
    /// measured again before it counts. Writes a Markdown comment, the GitHub step summary
    /// and dashboard exports. Exit 1 on a confirmed slowdown beyond the threshold, never on
    /// "inconclusive" unless asked.
    #[command(
        after_help = "Examples: lab ci --base main --comment comment.md\n          lab ci lockstack-dip --base origin/main --threshold 3% --bmf bmf.json --github-benchmark gab.json"
    )]
    Ci(CiArgs),
    /// Find the first commit where an experiment got slower: the bad commit measured against
    /// the good one, then each step one commit between them against the good one,
    /// interleaved and sampled until decided; an inconclusive step is skipped, as `git bisect
    /// skip` does. Every step is a sealed session; the chapter gets a Bisect page. Exit 0 when
    /// one commit is named, 1 when none is slower or several remain ambiguous.
    #[command(after_help = "Example: lab bisect lockstack-dip v1.2 HEAD --threshold 3%")]
    Bisect(BisectArgs),
    /// Measure the noise floor: run the experiment's cells against themselves, interleaved
    /// (an A/A session, stored under data/NAME/noise/), and report per cell the false alarms,
    /// the run-to-run spread and the smallest change lab could detect at the planned runs per
    /// side and at 2× and 4× as many. The experiment's A/B comparisons quote the latest one.
    #[command(after_help = "Example: lab noise lockstack-dip --json")]
    Noise(NoiseArgs),
    /// Save a session under a name, to compare later sessions with (`lab compare --baseline`).
    #[command(
        after_help = "Example: lab baseline lockstack-dip main --session 20261130T081716Z-vm"
    )]
    Baseline(BaselineArgs),
    /// Follow a metric of every cell across the experiment's sessions in time order, with the
    /// steps between sessions beyond the threshold, each named by the first session and git
    /// commit after it: a regression or an improvement. Sessions measured on another kind of
    /// machine are marked; re-analysed, damaged and incomplete sessions are left out.
    #[command(
        after_help = "Examples: lab history lockstack-dip\n          lab history lockstack-dip --check   # exit 1 if the newest session regressed"
    )]
    History(HistoryArgs),
    /// Turn another harness's results into a lab session: every raw value kept (each process,
    /// fork or repetition a run, its iterations as iteration values), the tool and each file's
    /// SHA-256 recorded, then the usual analysis, checks and chapter. A new experiment gets a
    /// lab.toml written from the files; add its hypothesis and checks, then `lab report`.
    #[command(
        after_help = "Examples: hyperfine --export-json out.json 'sort a' 'sort b' && lab import hyperfine out.json --into sorting\n          lab import criterion target/criterion/parse --into parser\n          lab import lab lockstack-dip-20261202T073624Z-laptop.tar   # a session from another machine"
    )]
    Import(ImportArgs),
    /// Write a stored session as one portable file (a tar archive): its sealed lab.toml and
    /// notes, plan, rows, samples, the runs' output and its manifest with this machine's
    /// fingerprint, each member with its SHA-256. Whoever asked for the replication adds it
    /// with `lab import lab FILE`.
    #[command(
        after_help = "Examples: lab bundle lockstack-dip\n          lab bundle lockstack-dip --session latest -o lockstack-from-my-laptop.tar"
    )]
    Bundle(BundleArgs),
    /// Re-read a stored session's raw output with today's lab.toml (metrics, checks, seed)
    /// into a new session that names its parent; runs nothing and changes no session.
    ///
    /// Fix a metric's regex in lab.toml, then re-read the kept output.
    #[command(after_help = "Example: lab reanalyze lockstack-dip")]
    Reanalyze(ReanalyzeArgs),
    /// Write every number the chapter shows as LaTeX macros or Typst bindings for a paper,
    /// with its charts beside them.
    ///
    /// Each cell's median and mean with their intervals, its CV, runs and range, and every
    /// ratio the checks, the compared session and the notes quote, printed as the chapter
    /// prints them; the chapter's charts (SVG, and PDF where rsvg-convert is installed) go
    /// to a folder EXP-charts beside the file.
    #[command(
        after_help = "Examples: lab export lockstack-dip --latex paper/lockstack.tex   # \\labLockstackDipNonfairThreadsTwoMopsMedian …\n          lab export lockstack-dip --typst paper/numbers.typ --session 20261130T114743Z-vm"
    )]
    Export(ExportArgs),
    /// Where one number of a chapter comes from: the runs it was computed from, the method
    /// and its parameters; computed again from the session's raw files, exit 1 when it no
    /// longer reads as the chapter printed it.
    #[command(
        after_help = "Example: lab explain openmp-row-add omp-threads-2.kernel-s.median   # the id is in the number's link"
    )]
    Explain(ExplainArgs),
    /// Print what a stored run wrote to its standard output (or, with --stderr, its standard
    /// error), byte for byte, checked against the digest recorded when it ended.
    #[command(after_help = "Examples: lab logs lockstack-dip r0042
          lab logs lockstack-dip 42 --stderr --session 20261130T114743Z-vm")]
    Logs(LogsArgs),
    /// List experiments, their sessions and the latest verdict counts.
    #[command(after_help = "Example: lab list")]
    List(ListArgs),
    /// Write a new experiment folder with a benchmark whose harness avoids the classic traps.
    #[command(after_help = "Example: lab new sort-vs-sort-n --lang c")]
    New(NewArgs),
    /// Print the JSON Schema of lab.toml (also committed as lab.schema.json).
    #[command(after_help = "Example: lab schema > lab.schema.json")]
    Schema(SchemaArgs),
    /// Print a shell completion script.
    #[command(after_help = "Example: lab completions bash > /etc/bash_completion.d/lab")]
    Completions(CompletionsArgs),
    /// Print lab's manual page (roff).
    #[command(after_help = "Example: lab man | man -l -")]
    Man(ManArgs),
    /// Re-render the book from stored data and build its HTML into book/book/ (no mdbook
    /// install needed).
    #[command(after_help = "Example: lab book --serve --port 3000")]
    Book(BookArgs),
}

impl Command {
    /// Runs the command; how lab ends.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        match self {
            Command::Run(args) => args.execute(layout, quiet),
            Command::Bench(args) => args.execute(layout, quiet),
            Command::RunShard(args) => args.execute(layout, quiet),
            Command::Report(args) => args.execute(layout, quiet),
            Command::Check(args) => args.execute(layout, quiet),
            Command::Compare(args) => args.execute(layout, quiet),
            Command::Ci(args) => args.execute(layout, quiet),
            Command::Bisect(args) => args.execute(layout, quiet),
            Command::Noise(args) => args.execute(layout, quiet),
            Command::Baseline(args) => args.execute(layout, quiet),
            Command::History(args) => args.execute(layout, quiet),
            Command::Import(args) => args.execute(layout, quiet),
            Command::Bundle(args) => args.execute(layout, quiet),
            Command::Reanalyze(args) => args.execute(layout, quiet),
            Command::List(args) => args.execute(layout, quiet),
            Command::Logs(args) => args.execute(layout, quiet),
            Command::Export(args) => args.execute(layout, quiet),
            Command::Explain(args) => args.execute(layout, quiet),
            Command::New(args) => args.execute(layout, quiet),
            Command::Schema(args) => args.execute(layout, quiet),
            Command::Completions(args) => args.execute(),
            Command::Man(args) => args.execute(),
            Command::Book(args) => args.execute(layout, quiet),
        }
    }
}

/// `lab completions SHELL`: written from this declaration, so it lives beside it.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    pub shell: clap_complete::Shell,
}

impl CompletionsArgs {
    /// Prints the completion script.
    pub fn execute(self) -> Result<Exit> {
        let mut command = Cli::command();
        clap_complete::generate(self.shell, &mut command, "lab", &mut std::io::stdout());
        Ok(Exit::Ok)
    }
}

/// `lab man`: the manual page, written from this declaration, with every command's options.
#[derive(Debug, clap::Args)]
pub struct ManArgs {}

impl ManArgs {
    /// Prints the manual page.
    pub fn execute(self) -> Result<Exit> {
        let page = manual()
            .map_err(|e| LabError::Other(anyhow::anyhow!("cannot write the manual: {e}")))?;
        std::io::stdout()
            .write_all(&page)
            .map_err(|e| LabError::Other(anyhow::anyhow!("cannot write the manual: {e}")))?;
        Ok(Exit::Ok)
    }
}

/// The manual page: lab's own sections, then a section per command (`LAB RUN`, …) holding
/// its synopsis, description and options, and its own commands' after it.
fn manual() -> std::io::Result<Vec<u8>> {
    let mut command = Cli::command();
    command.build();
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut page)?;
    for sub in command.get_subcommands() {
        command_sections(sub, &mut page)?;
    }
    Ok(page)
}

/// One command's section of the manual: clap_mangen writes a page per command, whose
/// sections become subsections here so that one page carries every option.
fn command_sections(command: &clap::Command, page: &mut Vec<u8>) -> std::io::Result<()> {
    let name = command.get_bin_name().unwrap_or(command.get_name());
    writeln!(page, ".SH \"{}\"", name.to_uppercase())?;
    let man = clap_mangen::Man::new(command.clone());
    let mut sections = Vec::new();
    man.render_synopsis_section(&mut sections)?;
    man.render_description_section(&mut sections)?;
    if command.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut sections)?;
    }
    for line in String::from_utf8_lossy(&sections).lines() {
        match line.strip_prefix(".SH ") {
            Some(title) => writeln!(page, ".SS {title}")?,
            None => writeln!(page, "{line}")?,
        }
    }
    for sub in command.get_subcommands() {
        command_sections(sub, page)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manual_carries_every_option_of_every_command() {
        let page = String::from_utf8(manual().unwrap()).unwrap();
        let mut command = Cli::command();
        command.build();
        let mut todo: Vec<&clap::Command> = command.get_subcommands().collect();
        let mut options = 0;
        while let Some(sub) = todo.pop() {
            let title = format!(".SH \"{}\"", sub.get_bin_name().unwrap().to_uppercase());
            assert!(page.contains(&title), "no section {title}");
            for long in sub
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .filter_map(|a| a.get_long())
            {
                let typed = format!("\\-\\-{}", long.replace('-', "\\-"));
                assert!(page.contains(&typed), "{title} lacks --{long}");
                options += 1;
            }
            todo.extend(sub.get_subcommands());
        }
        assert!(options > 100, "only {options} options seen");
        assert!(
            page.contains("\\-\\-revs"),
            "lab run --revs is in the manual"
        );
    }

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn unknown_options_are_rejected() {
        assert!(Cli::try_parse_from(["lab", "run", "x", "--bogus"]).is_err());
        assert!(Cli::try_parse_from(["lab", "run", "x", "--dry-run", "--resume"]).is_err());
        let ok = Cli::try_parse_from(["lab", "run", "x", "--profile", "quick"]).unwrap();
        assert!(
            matches!(ok.command, Command::Run(RunArgs { profile: Some(ref p), .. }) if p == "quick")
        );
    }

    #[test]
    fn jobs_default_to_one_and_zero_is_refused() {
        let one = Cli::try_parse_from(["lab", "run", "x"]).unwrap();
        assert!(matches!(one.command, Command::Run(RunArgs { jobs: 1, .. })));
        let two = Cli::try_parse_from(["lab", "run", "x", "--jobs", "2"]).unwrap();
        assert!(matches!(two.command, Command::Run(RunArgs { jobs: 2, .. })));
        assert!(Cli::try_parse_from(["lab", "run", "x", "--jobs", "0"]).is_err());
    }

    /// The README's exit-code paragraph, its lines joined.
    fn readme_exit_codes() -> String {
        let readme = include_str!("../README.md");
        let start = readme
            .find("Exit codes, the same for `lab run` and `lab check`")
            .expect("the README documents the exit codes");
        let paragraph = readme[start..].split("\n\n").next().unwrap();
        paragraph.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn the_readme_documents_every_exit_status_of_the_table() {
        let text = readme_exit_codes();
        for (exit, code, meaning) in Exit::TABLE {
            assert_eq!(exit.code(), code);
            assert_eq!(Exit::from_code(code), exit);
            assert!(
                text.contains(&format!("**{code}** {meaning}")),
                "{code}: {text}"
            );
        }
        let codes: Vec<String> = Exit::SIGNALS
            .iter()
            .map(|(n, _)| Exit::Signal(*n).code().to_string())
            .collect();
        assert_eq!(codes, ["129", "130", "143"]);
        assert!(
            text.contains(&format!("**{}** stopped by", codes.join(", "))),
            "{text}"
        );
        for (_, name) in Exit::SIGNALS {
            assert!(text.contains(name), "{name}: {text}");
        }
    }

    #[test]
    fn the_help_lists_the_exit_statuses_from_the_table() {
        let help = Cli::command().render_long_help().to_string();
        assert!(help.contains(&Exit::help()), "{help}");
        for (_, code, meaning) in Exit::TABLE {
            assert!(help.contains(&format!("{code} {meaning}")), "{help}");
        }
        assert!(
            help.contains("129, 130, 143 stopped by SIGHUP, SIGINT, SIGTERM"),
            "{help}"
        );
    }

    #[test]
    fn thresholds_and_sessions_are_parsed_by_clap() {
        let ok = Cli::try_parse_from([
            "lab",
            "compare",
            "x",
            "previous",
            "abc1",
            "--threshold",
            "5%",
        ]);
        let Command::Compare(args) = ok.unwrap().command else {
            panic!("not compare");
        };
        assert_eq!(args.a, Some(lab_store::SessionRef::Previous));
        assert_eq!(args.b, Some(lab_store::SessionRef::Named("abc1".into())));
        assert!((args.threshold - 0.05).abs() < 1e-12);
        let bad = Cli::try_parse_from(["lab", "history", "x", "--threshold", "150%"]).unwrap_err();
        assert_eq!(bad.exit_code(), Exit::Usage.code());
        assert!(
            bad.to_string().contains("is not a share from 0 up to 100%"),
            "{bad}"
        );
        let revs = Cli::try_parse_from(["lab", "run", "x", "--revs", "HEAD"]).unwrap_err();
        assert!(
            revs.to_string()
                .contains("name two different git revisions"),
            "{revs}"
        );
    }
}
