//! The `lab` binary: parses the command line, runs one command, and is the only place that
//! prints errors and chooses the exit code.

use clap::Parser;
use lab::app::{self, Layout, RunOptions};
use lab::cli::{Cli, Command};
use lab::error::{EXIT_OK, LabError};
use lab::exec::ProcessRunner;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let layout = Layout::new(".");
    match dispatch(&cli, &layout) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

fn dispatch(cli: &Cli, layout: &Layout) -> Result<i32, LabError> {
    match &cli.command {
        Command::Run {
            experiment,
            profile,
            dry_run,
            resume,
        } => {
            let opts = RunOptions {
                profile: profile.as_deref(),
                dry_run: *dry_run,
                resume: *resume,
                quiet: cli.quiet,
            };
            app::run(layout, experiment, &opts, &mut ProcessRunner)
        }
        Command::Report {
            experiments,
            json: true,
        } => match experiments.as_slice() {
            [one] => {
                print!("{}", app::report_json(layout, one)?);
                Ok(EXIT_OK)
            }
            _ => Err(LabError::Usage(
                "`lab report --json` takes exactly one experiment".into(),
            )),
        },
        Command::Report {
            experiments,
            json: false,
        } => app::report(layout, experiments, cli.quiet).map(|_| EXIT_OK),
        Command::Check { experiment, json } => {
            let (text, code) = app::check(layout, experiment, *json)?;
            print!("{text}");
            Ok(code)
        }
        Command::Book { serve, port } => {
            app::report(layout, &[], cli.quiet)?;
            let index = app::build_html(layout)?;
            if !cli.quiet {
                eprintln!("HTML written to {}", index.display());
            }
            if *serve {
                lab::serve::serve(layout, *port, cli.quiet)?;
            }
            Ok(EXIT_OK)
        }
        Command::List => {
            print!("{}", app::list(layout)?);
            Ok(EXIT_OK)
        }
    }
}
