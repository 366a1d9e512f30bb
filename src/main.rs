//! The `lab` binary: parses the command line, runs one command, and is the only place that
//! prints errors and chooses the exit status.

use clap::Parser;
use lab::cli::Cli;
use lab::layout::Layout;
use std::process::ExitCode;

fn main() -> ExitCode {
    lab::store::share_arenas();
    lab::exec::shield_from_runs();
    let cli = Cli::parse();
    let exit = match cli.command.execute(&Layout::new("."), cli.quiet) {
        Ok(exit) => exit,
        Err(e) => {
            eprintln!("error: {}", lab::format::terminal(&format!("{e:#}")));
            e.exit()
        }
    };
    ExitCode::from(exit.code() as u8)
}
