//! `lab bench CMD…`: hyperfine's habits with lab's answers. The commands become the variants
//! of an ordinary experiment, written as a lab.toml (under `.lab/bench/`, or as
//! `experiments/NAME` with `--save NAME`) and measured by `lab run`'s pipeline: interleaved in
//! a seeded shuffle, sampled until every command is decided against the reference, sealed
//! like every session. Then hyperfine's report, lab's verdicts, and hyperfine's export files.

mod cpu;
mod export;
mod output;
mod spec;
mod toml;

use crate::app::Layout;
use crate::error::{Exit, LabError, Result};
use crate::exec::ProcessRunner;
use spec::{BenchCommand, BenchParam, Runs, Shell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Runs per command when a single command is timed (nothing to decide): hyperfine's minimum.
const SINGLE_RUNS: u32 = 10;
/// The first look's runs per command when commands are compared.
const MIN_RUNS: u32 = 5;
/// The most runs per command sampling may reach.
const MAX_RUNS: u32 = 40;
/// How long a bench's runs may take while sampling, in seconds: about what hyperfine takes
/// for two commands of a tenth of a second, and time for 40 runs of each.
const BUDGET_S: u64 = 20;

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// The commands to time, each one variant. Split into arguments as a shell splits words
    /// (quotes and backslashes) but never run by one unless --shell is given; `{NAME}` is
    /// replaced by a parameter's value inside one argument.
    #[arg(value_name = "COMMAND", required = true)]
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
    /// A command run once per command and parameter set before the first run.
    #[arg(short = 's', long, value_name = "CMD")]
    pub setup: Option<String>,
    /// A name for a command, in the commands' order (repeatable).
    #[arg(short = 'n', long = "command-name", value_name = "NAME")]
    pub command_name: Vec<String>,
    /// A reference command every other command is compared with (by default the first).
    #[arg(long, value_name = "CMD")]
    pub reference: Option<String>,
    /// Count runs that exit with a non-zero code as measurements instead of failures.
    #[arg(short = 'i', long)]
    pub ignore_failure: bool,
    /// A variable set for every run, NAME=VALUE (repeatable).
    #[arg(long, value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// Run the commands through a shell (`sh` when no name is given) instead of splitting them.
    #[arg(short = 'S', long, value_name = "SHELL", num_args = 0..=1, default_missing_value = "sh")]
    pub shell: Option<String>,
    /// Run the commands without a shell (the default; accepted as hyperfine's -N).
    #[arg(short = 'N', conflicts_with = "shell")]
    pub no_shell: bool,
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
    /// Write hyperfine's JSON export (1.x layout) to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write hyperfine's Markdown table to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Write hyperfine's CSV export to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
}

impl BenchArgs {
    /// `lab bench`: writes the experiment, measures it, prints the answer and writes exports.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        let file = self.lab_toml()?;
        let dir = self.experiment_dir(layout, &file)?;
        write_experiment(&dir, &file)?;
        let mut opts = crate::app::RunOptions::new(crate::app::typed_command());
        opts.quiet = quiet;
        opts.summary = false;
        opts.no_wait = self.no_wait;
        if let Exit::Signal(s) = crate::app::run(layout, &dir, &opts, &mut ProcessRunner)? {
            return Ok(Exit::Signal(s));
        }
        let assessed = crate::app::session::assessed(layout, &dir, None)?;
        let report = output::Report::of(&assessed, layout, &dir);
        print!("{}", report.text());
        self.export(&report)?;
        Ok(report.exit())
    }

    /// Every export asked for, each written whole or not at all.
    fn export(&self, report: &output::Report) -> Result<()> {
        let files = [
            (&self.export_json, export::json(report)),
            (
                &self.export_markdown,
                export::markdown(report, &export::Markup::default()),
            ),
            (&self.export_csv, export::csv(report)),
        ];
        for (path, text) in files {
            if let Some(path) = path {
                crate::store::write_atomically(path, text.as_bytes()).map_err(|e| {
                    LabError::Other(e.context(format!("cannot write {}", path.display())))
                })?;
            }
        }
        Ok(())
    }

    /// The commands in order, the reference first.
    fn commands(&self, shell: &Shell) -> Result<(Vec<BenchCommand>, Vec<BenchParam>)> {
        let params = self.params()?;
        let typed: Vec<&String> = self.reference.iter().chain(&self.commands).collect();
        if self.command_name.len() > typed.len() - usize::from(self.reference.is_some()) {
            return Err(LabError::Usage(format!(
                "-n/--command-name was given {} times for {} commands",
                self.command_name.len(),
                self.commands.len()
            )));
        }
        let offset = usize::from(self.reference.is_some());
        let mut commands = Vec::new();
        for (i, text) in typed.iter().enumerate() {
            let what = if i < offset {
                "the reference command".to_string()
            } else {
                format!("command {}", i + 1 - offset)
            };
            let argv = shell.argv(text, &what)?;
            if *shell == Shell::None {
                spec::check_program(&argv, &what, Path::new("."))?;
            }
            let argv = argv
                .iter()
                .map(|a| spec::escape_braces(a, &params))
                .collect();
            let label = i
                .checked_sub(offset)
                .and_then(|k| self.command_name.get(k))
                .cloned()
                .unwrap_or_else(|| text.to_string());
            commands.push(BenchCommand {
                label,
                text: text.to_string(),
                argv,
            });
        }
        if let Some(twice) = commands
            .iter()
            .enumerate()
            .find(|(i, c)| commands[..*i].iter().any(|d| d.label == c.label))
        {
            return Err(LabError::Usage(format!(
                "the command {:?} is given twice\n  hint: time each command once, or tell them apart with -n NAME",
                twice.1.label
            )));
        }
        Ok((commands, params))
    }

    /// The -L lists and -P scans, in the order given (lists first).
    fn params(&self) -> Result<Vec<BenchParam>> {
        let mut params = Vec::new();
        for pair in self.parameter_list.chunks(2) {
            params.push(spec::list_param(&pair[0], &pair[1])?);
        }
        for triple in self.parameter_scan.chunks(3) {
            params.push(spec::scan_param(
                &triple[0],
                &triple[1],
                &triple[2],
                self.step.as_deref(),
            )?);
        }
        if let Some(p) = params
            .iter()
            .enumerate()
            .find(|(i, p)| params[..*i].iter().any(|q| q.name == p.name))
        {
            return Err(LabError::Usage(format!(
                "the parameter {} is given twice",
                p.1.name
            )));
        }
        Ok(params)
    }

    /// The lab.toml of this command line.
    fn lab_toml(&self) -> Result<String> {
        let shell = match &self.shell {
            Some(program) => Shell::Program(program.clone()),
            None => Shell::None,
        };
        let (commands, params) = self.commands(&shell)?;
        let labels: Vec<&str> = commands.iter().map(|c| c.label.as_str()).collect();
        let names = crate::import::names::short_names(&labels);
        let hooks = self.hooks(&commands, &shell, &params)?;
        let env = self.environment()?;
        let runs = self.runs(commands.len())?;
        let depth = self.experiment_depth();
        Ok(toml::lab_toml(&toml::BenchPlan {
            commands: &commands,
            names: &names,
            params: &params,
            hooks: &hooks,
            env: &env,
            runs,
            warmup: self.warmup,
            seed: self.seed,
            timeout: self.timeout.clone(),
            max_busy: self.max_busy.clone(),
            budget: self.budget.map_or(BUDGET_S, |b| b.as_secs().max(1)),
            ignore_failure: self.ignore_failure,
            threshold: self.threshold,
            workdir: vec![".."; depth].join("/"),
        }))
    }

    /// How many folders below the project root the experiment lies: `experiments/NAME` or
    /// `.lab/bench/bench-HASH`.
    fn experiment_depth(&self) -> usize {
        if self.save.is_some() { 2 } else { 3 }
    }

    fn hooks(
        &self,
        commands: &[BenchCommand],
        shell: &Shell,
        params: &[BenchParam],
    ) -> Result<Vec<toml::Hooks>> {
        let n = commands.len();
        let prepare = spec::per_command(&self.prepare, n, "--prepare")?;
        let conclude = spec::per_command(&self.conclude, n, "--conclude")?;
        let argv = |text: &Option<String>, flag: &str| -> Result<Option<Vec<String>>> {
            text.as_ref()
                .map(|t| {
                    let argv = shell.argv(t, flag)?;
                    Ok(argv
                        .iter()
                        .map(|a| spec::escape_braces(a, params))
                        .collect())
                })
                .transpose()
        };
        (0..n)
            .map(|i| {
                Ok(toml::Hooks {
                    prepare: argv(&prepare[i], "--prepare")?,
                    conclude: argv(&conclude[i], "--conclude")?,
                    setup: argv(&self.setup, "--setup")?,
                })
            })
            .collect()
    }

    /// The `--env NAME=VALUE` variables.
    fn environment(&self) -> Result<BTreeMap<String, String>> {
        self.env
            .iter()
            .map(|pair| match pair.split_once('=') {
                Some((name, value)) if !name.is_empty() => {
                    Ok((name.to_string(), value.to_string()))
                }
                _ => Err(LabError::Usage(format!(
                    "--env {pair:?} is not NAME=VALUE\n  hint: write e.g. --env LC_ALL=C"
                ))),
            })
            .collect()
    }

    /// Runs per command: fixed for one command or with --runs, sampled otherwise.
    fn runs(&self, commands: usize) -> Result<Runs> {
        if let Some(n) = self.runs {
            return Ok(Runs::Fixed(n));
        }
        if commands == 1 {
            return Ok(Runs::Fixed(self.min_runs.unwrap_or(SINGLE_RUNS)));
        }
        let min = self.min_runs.unwrap_or(MIN_RUNS);
        let max = self.max_runs.unwrap_or(MAX_RUNS.max(min));
        match min.cmp(&max) {
            std::cmp::Ordering::Less => Ok(Runs::Sampled { min, max }),
            std::cmp::Ordering::Equal => Ok(Runs::Fixed(min)),
            std::cmp::Ordering::Greater => Err(LabError::Usage(format!(
                "--min-runs {min} is above --max-runs {max}"
            ))),
        }
    }

    /// Where the experiment is written: experiments/NAME with --save, else a folder under
    /// .lab/bench/ named for its lab.toml, so the same command line adds to the same sessions.
    fn experiment_dir(&self, layout: &Layout, file: &str) -> Result<PathBuf> {
        if let Some(name) = &self.save {
            if let Some(why) = crate::config::identifier_problem(name) {
                return Err(LabError::Usage(format!(
                    "--save {name:?}: the experiment name {why}\n  hint: use letters, digits, _ and -"
                )));
            }
            return Ok(layout.experiments().join(name));
        }
        let digest = crate::store::sha256_hex(file.as_bytes());
        Ok(layout
            .root
            .join(".lab")
            .join("bench")
            .join(format!("bench-{}", &digest[..8])))
    }
}

/// Writes `file` as the experiment's lab.toml; one already there is kept when it is the same
/// and refused when it differs (a person's edits are never overwritten).
fn write_experiment(dir: &Path, file: &str) -> Result<()> {
    let path = dir.join(crate::config::FILE_NAME);
    match std::fs::read(&path) {
        Ok(existing) if existing == file.as_bytes() => return Ok(()),
        Ok(_) => {
            return Err(LabError::Usage(format!(
                "{} already exists and holds another experiment\n  hint: choose another name for --save, or run it with `lab run {}`",
                path.display(),
                dir.display()
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(LabError::Other(anyhow::anyhow!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot create {}: {e}", dir.display())))?;
    crate::store::write_atomically(&path, file.as_bytes())
        .map_err(|e| LabError::Other(e.context(format!("cannot write {}", path.display()))))
}
