//! `lab run`'s command line: its arguments, read into [`RunOptions`] and handed to
//! [`crate::run::run`], the write side of the pipeline; each session's chapter is written by
//! `lab report`'s code and its summary printed here.

use super::report::{ReportOptions, report};
use crate::chapter::ChapterOutcome;
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use crate::run::{Chapters, Engine, Found, RunOptions, SlurmOptions};
use lab_exec::{ProcessRunner, Runner};
use std::path::{Path, PathBuf};

/// Where `lab run` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum On {
    Local,
    Slurm,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The experiment folder (experiments/NAME) or its name.
    pub experiment: PathBuf,
    /// Apply a [profile.NAME] table of lab.toml (e.g. quick).
    #[arg(long)]
    pub profile: Option<String>,
    /// Print the plan and its estimated duration; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Complete the latest unfinished session instead of starting a new one.
    #[arg(long, conflicts_with = "dry_run")]
    pub resume: bool,
    /// Print the closing summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Measure two git revisions of the experiment's repository in one session, BASE,HEAD:
    /// each is checked out in a worktree under .lab/worktrees/ and built once, and their
    /// runs interleave. Reports HEAD/BASE per cell; exits 1 when HEAD is slower.
    #[arg(long, value_name = "BASE,HEAD", conflicts_with = "resume", value_parser = revisions)]
    pub revs: Option<Revisions>,
    /// With --revs: changes within ± this share count as noise ("2%" or 0.02).
    #[arg(long, default_value = "2%", requires = "revs", value_parser = super::value_parsers::threshold)]
    pub threshold: f64,
    /// With --revs: before reporting a regression, measure again in a second interleaved
    /// session; the regression is reported (exit 1) only if that one finds it too.
    #[arg(long, requires = "revs")]
    pub confirm: bool,
    /// With --revs: sample until decided though lab.toml fixes the runs. After lab.toml's
    /// runs per cell, add interleaved runs look by look to the cells whose comparison is still
    /// inconclusive, until each is faster, slower or the same, or has MAX runs per revision.
    /// (A lab.toml with `repetitions = { min, max }` samples so without it.)
    #[arg(long, value_name = "MAX", requires = "revs", value_parser = clap::value_parser!(u32).range(1..))]
    pub until_decided: Option<u32>,
    /// A name for the session, shown in `lab history` and on the History page.
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Let up to N runs execute at once, each pinned to its variant's `cpus`; runs start
    /// in the planned order, and one whose CPUs a running run holds waits. Every variant
    /// must declare `cpus`. Default 1: one run at a time.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: u16,
    /// With --revs: measure in duet. Each base run executes at the same time as a head run
    /// of the same cell, the two pinned to disjoint CPUs, so that what disturbs the machine
    /// disturbs both; the comparison is the median of the per-pair ratios. Needs twice the
    /// CPUs the widest variant's `cpus` asks for (two where none asks).
    #[arg(long, requires = "revs")]
    pub duet: bool,
    /// After a run that waited for a CPU others had, start the next at once instead of
    /// waiting up to `calm_wait` for the machine to calm.
    #[arg(long)]
    pub no_wait: bool,
    /// How long a sampled session's runs may take ("10m", "90s"), over lab.toml's `budget`:
    /// no look starts that its runs' expected time would carry past it. With --resume, the
    /// budget of the runs still to come.
    #[arg(long, value_name = "DURATION", value_parser = crate::app::value_parsers::budget)]
    pub budget: Option<std::time::Duration>,
}

/// Where the runs are measured, as `--on` and the cluster's options give it.
#[derive(Debug, clap::Args)]
pub struct EngineArgs {
    /// Where the runs are measured: here, or on the nodes of a Slurm cluster (the plan is
    /// split into shards submitted as one job array; the project folder must be on a file
    /// system the nodes share).
    #[arg(long, value_enum, default_value = "local")]
    pub on: On,
    /// With --on slurm: the partition to submit to.
    #[arg(long)]
    pub partition: Option<String>,
    /// With --on slurm: only nodes with this feature (Slurm's --constraint).
    #[arg(long)]
    pub constraint: Option<String>,
    /// With --on slurm: split the plan into this many shards, each on a whole node, at
    /// most this many nodes at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub nodes: u16,
}

/// `--revs BASE,HEAD`: two different git revisions, base first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revisions(pub Vec<String>);

/// The value parser of `--revs`.
fn revisions(text: &str) -> std::result::Result<Revisions, String> {
    super::parse_revs(text)
        .map(Revisions)
        .map_err(|e| e.to_string())
}

impl TryFrom<EngineArgs> for Engine {
    type Error = LabError;

    /// The engine `--on` names; the cluster's options only make sense on one.
    fn try_from(args: EngineArgs) -> Result<Engine> {
        let local_only = args.partition.is_none() && args.constraint.is_none() && args.nodes == 1;
        match args.on {
            On::Slurm => Ok(Engine::Slurm(SlurmOptions {
                partition: args.partition,
                constraint: args.constraint,
                nodes: usize::from(args.nodes),
            })),
            On::Local if local_only => Ok(Engine::Local),
            On::Local => Err(LabError::Usage(
                "--partition, --constraint and --nodes choose cluster nodes: they need --on slurm"
                    .into(),
            )),
        }
    }
}

impl RunArgs {
    /// `lab run`: measures the experiment and exits as its checks say.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        let opts = RunOptions {
            profile: self.profile.as_deref(),
            dry_run: self.dry_run,
            resume: self.resume,
            quiet,
            json: self.json,
            command_line: typed_command(),
            revs: self.revs.as_ref().map(|r| r.0.as_slice()),
            threshold: self.threshold,
            confirm: self.confirm,
            until_decided: self.until_decided,
            label: self.label.as_deref(),
            on: Engine::try_from(self.engine)?,
            jobs: usize::from(self.jobs),
            duet: self.duet,
            summary: true,
            no_wait: self.no_wait,
            budget: self.budget,
            shown: lab_exec::Shown::standard(quiet),
        };
        run(layout, &self.experiment, &opts, &mut ProcessRunner)
    }
}

/// `lab run` of `experiment` as the command line does it: measured by the pipeline, each
/// session's chapter written and its summary printed as `opts` asks.
pub fn run(
    layout: &Layout,
    experiment: &Path,
    opts: &RunOptions,
    runner: &mut dyn Runner,
) -> Result<Exit> {
    run_compared(layout, experiment, opts, runner).map(|(exit, _)| exit)
}

/// The newest session of a run across revisions with its chapter's comparison of the two.
pub(super) struct Compared {
    pub session: String,
    pub comparison: lab_judge::compare::Comparison,
}

/// [`run`], also giving the comparison the newest session's chapter showed, for a session
/// across revisions (`None` otherwise): judged once, for the chapter.
pub(super) fn run_compared(
    layout: &Layout,
    experiment: &Path,
    opts: &RunOptions,
    runner: &mut dyn Runner,
) -> Result<(Exit, Option<Compared>)> {
    let mut printed = Printed {
        layout,
        experiment,
        opts,
        compared: None,
    };
    let exit = crate::run::run(layout, experiment, opts, runner, &mut printed)?;
    Ok((exit, printed.compared))
}

/// Each session's chapter, written as `lab report` writes it, then its summary printed.
struct Printed<'a> {
    layout: &'a Layout,
    /// The experiment as the command line named it.
    experiment: &'a Path,
    opts: &'a RunOptions<'a>,
    /// The newest session's comparison of its two revisions, where it has them.
    compared: Option<Compared>,
}

impl Chapters for Printed<'_> {
    fn write(&mut self, dir: &Path, session: &str) -> Result<Found> {
        let shown = !self.opts.quiet && self.opts.summary;
        let outcomes = report(
            self.layout,
            &ReportOptions {
                only: std::slice::from_ref(&dir.to_path_buf()),
                session: Some(session),
                quiet: !shown,
                summary: if self.opts.summary {
                    crate::chapter::summary::Wanted::Printed
                } else {
                    crate::chapter::summary::Wanted::Verdict
                },
            },
        )?;
        for o in outcomes.iter().filter(|_| shown) {
            let index = self
                .layout
                .book()
                .join("src")
                .join(&o.name)
                .join("index.md");
            eprintln!("wrote {}", index.display());
        }
        for o in outcomes.iter().filter(|_| self.opts.summary) {
            self.print(o, session)?;
        }
        self.compared = outcomes
            .iter()
            .find_map(|o| o.summary.revisions.clone())
            .map(|comparison| Compared {
                session: session.to_string(),
                comparison,
            });
        Ok(Found {
            failed: outcomes.iter().any(|o| o.summary.failed),
            regressed: outcomes
                .iter()
                .any(|o| o.summary.revisions.as_ref().is_some_and(|c| c.regressed)),
        })
    }
}

impl Printed<'_> {
    /// Prints a chapter's summary (and a session across revisions' comparison), and says
    /// plainly when no run of `session` was valid.
    fn print(&self, o: &ChapterOutcome, session: &str) -> Result<()> {
        if self.opts.json {
            let json = serde_json::to_string_pretty(&o.summary).map_err(anyhow::Error::from)?;
            println!("{json}");
        } else {
            print!("{}", crate::chapter::summary::text(&o.summary));
            if let Some(c) = &o.summary.revisions {
                print!("{}", lab_config::format::terminal(&super::compare::text(c)));
            }
        }
        let arg = self.experiment.display();
        if o.valid_runs == 0 && o.busy_runs > 0 {
            eprintln!(
                "error: the machine was too busy for session {session} to time anything: the timings of {} runs were discarded (their outputs were judged); close what keeps the CPUs busy, or run fewer threads than CPUs (see `lab check {arg}`)",
                o.busy_runs
            );
        } else if o.valid_runs == 0 {
            eprintln!(
                "error: no run of session {session} produced a valid measurement (see `lab check {arg}`)"
            );
        }
        Ok(())
    }
}

/// The command line as typed, each argument quoted as a shell would need it.
pub fn typed_command() -> String {
    let mut args: Vec<String> = std::env::args().collect();
    if let Some(program) = args.first_mut() {
        let name = std::path::Path::new(program.as_str())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        if let Some(name) = name {
            *program = name;
        }
    }
    lab_render::shell_words(&args)
}
