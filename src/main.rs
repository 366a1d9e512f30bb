//! The `lab` binary: parses the command line, runs one command, and is the only place that
//! prints errors and chooses the exit code.

use clap::Parser;
use lab::app::{self, Engine, Layout, ReportOptions, RunOptions, SlurmOptions};
use lab::cli::{Cli, Command, Engine as CliEngine};
use lab::error::{EXIT_OK, Exit, LabError};
use lab::exec::ProcessRunner;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let layout = Layout::new(".");
    match dispatch(&cli, &layout) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("error: {}", lab::format::terminal(&format!("{e:#}")));
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

/// Where `lab run` measures; the cluster's options only make sense on one.
fn engine(
    on: CliEngine,
    partition: &Option<String>,
    constraint: &Option<String>,
    nodes: u16,
) -> Result<Engine, LabError> {
    match on {
        CliEngine::Slurm => Ok(Engine::Slurm(SlurmOptions {
            partition: partition.clone(),
            constraint: constraint.clone(),
            nodes: usize::from(nodes),
        })),
        CliEngine::Local if partition.is_some() || constraint.is_some() || nodes != 1 => {
            Err(LabError::Usage(
                "--partition, --constraint and --nodes choose cluster nodes: they need --on slurm"
                    .into(),
            ))
        }
        CliEngine::Local => Ok(Engine::Local),
    }
}

fn dispatch(cli: &Cli, layout: &Layout) -> Result<i32, LabError> {
    match &cli.command {
        Command::Run {
            experiment,
            profile,
            dry_run,
            resume,
            json,
            revs,
            threshold,
            confirm,
            label,
            on,
            partition,
            constraint,
            nodes,
            jobs,
        } => {
            let revs = revs.as_deref().map(app::parse_revs).transpose()?;
            let on = engine(*on, partition, constraint, *nodes)?;
            let opts = RunOptions {
                profile: profile.as_deref(),
                dry_run: *dry_run,
                resume: *resume,
                quiet: cli.quiet,
                json: *json,
                command_line: typed_command(),
                revs: revs.as_deref(),
                threshold: parse_threshold(threshold)?,
                confirm: *confirm,
                label: label.as_deref(),
                on,
                jobs: usize::from(*jobs),
            };
            app::run(layout, experiment, &opts, &mut ProcessRunner).map(Exit::code)
        }
        Command::RunShard { session, index } => app::run_shard(session, *index).map(Exit::code),
        Command::Report {
            experiments,
            session,
            json: true,
        } => match experiments.as_slice() {
            [one] => {
                print!("{}", app::report_json(layout, one, session.as_deref())?);
                Ok(EXIT_OK)
            }
            _ => Err(LabError::Usage(
                "`lab report --json` takes exactly one experiment".into(),
            )),
        },
        Command::Report {
            experiments,
            session,
            json: false,
        } => app::report(
            layout,
            &ReportOptions {
                only: experiments,
                session: session.as_deref(),
                quiet: cli.quiet,
            },
        )
        .map(|_| EXIT_OK),
        Command::Check {
            experiment,
            session,
            json,
        } => {
            let (text, code) = app::check(layout, experiment, session.as_deref(), *json)?;
            print!("{text}");
            Ok(code)
        }
        Command::Compare {
            experiment,
            a,
            b,
            baseline,
            metric,
            threshold,
            json,
        } => {
            let threshold = parse_threshold(threshold)?;
            let (a, b) = app::compared_pair(
                layout,
                experiment,
                a.as_deref(),
                b.as_deref(),
                baseline.as_deref(),
            )?;
            let opts = app::CompareOptions {
                a: &a,
                b: &b,
                metric: metric.as_deref(),
                threshold,
            };
            let (text, code) = app::compare(layout, experiment, &opts, *json)?;
            print!("{text}");
            Ok(code)
        }
        Command::Baseline {
            experiment,
            name,
            session,
        } => {
            let saved = app::save_baseline(layout, experiment, name, session.as_deref())?;
            println!("{saved}");
            Ok(EXIT_OK)
        }
        Command::History {
            experiment,
            metric,
            threshold,
            check,
            json,
        } => {
            let opts = app::HistoryOptions {
                metric: metric.as_deref(),
                threshold: parse_threshold(threshold)?,
                check: *check,
            };
            let (text, code) = app::run_history(layout, experiment, &opts, *json)?;
            print!("{text}");
            Ok(code)
        }
        Command::Import {
            format,
            files,
            into,
            filter,
        } => app::import(
            layout,
            &app::ImportOptions {
                format: *format,
                files,
                into,
                filter: filter.as_deref(),
                quiet: cli.quiet,
                command_line: typed_command(),
            },
        ),
        Command::Reanalyze {
            experiment,
            session,
        } => app::reanalyze(layout, experiment, session.as_deref(), cli.quiet),
        Command::Book {
            serve,
            port,
            session,
            experiment,
        } => {
            let chosen: Vec<std::path::PathBuf> = experiment.iter().cloned().collect();
            app::report(
                layout,
                &ReportOptions {
                    only: &chosen,
                    session: session.as_deref(),
                    quiet: cli.quiet,
                },
            )?;
            let index = app::build_html(layout)?;
            if !cli.quiet {
                eprintln!("HTML written to {}", index.display());
            }
            if *serve {
                lab::serve::serve(layout, *port, cli.quiet)?;
            }
            Ok(EXIT_OK)
        }
        Command::New { name, lang } => {
            let dir = app::new_experiment(layout, name, *lang)?;
            println!(
                "wrote {}: lab.toml, notes.md and the benchmark\nnext: lab run {} --profile quick",
                dir.display(),
                dir.display()
            );
            Ok(EXIT_OK)
        }
        Command::Schema => {
            println!("{}", lab::config::schema_json());
            Ok(EXIT_OK)
        }
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(*shell, &mut command, "lab", &mut std::io::stdout());
            Ok(EXIT_OK)
        }
        Command::Man => {
            let page = clap_mangen::Man::new(<Cli as clap::CommandFactory>::command());
            page.render(&mut std::io::stdout())
                .map_err(|e| LabError::Other(anyhow::anyhow!("cannot write the manual: {e}")))?;
            Ok(EXIT_OK)
        }
        Command::List => {
            print!("{}", app::list(layout)?);
            Ok(EXIT_OK)
        }
    }
}

/// The command line as typed, each argument quoted as a shell would need it.
fn typed_command() -> String {
    let mut args: Vec<String> = std::env::args().collect();
    if let Some(program) = args.first_mut() {
        let name = std::path::Path::new(program.as_str())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        if let Some(name) = name {
            *program = name;
        }
    }
    lab::render::shell_words(&args)
}

/// `--threshold`: a share from 0 up to 100%, as "2%" or 0.02.
fn parse_threshold(text: &str) -> Result<f64, LabError> {
    lab::config::parse_fraction(text)
        .filter(|t| (0.0..1.0).contains(t))
        .ok_or_else(|| {
            LabError::Usage(format!(
                "--threshold {text:?} is not a share from 0 up to 100%\n  hint: write e.g. --threshold 2% (changes within ±2% count as noise)"
            ))
        })
}
