//! The `lab` binary: parses the command line, runs one command, and is the only place that
//! prints errors and chooses the exit status.

use clap::Parser;
use lab::cli::Cli;
use lab::layout::Layout;
use std::process::ExitCode;

/// The system's allocator, counting what each thread holds: rendering notes.md stops at its
/// memory budget rather than failing an allocation, which would end lab.
#[global_allocator]
static ALLOCATOR: lab::render::notes::CountingAllocator = lab::render::notes::CountingAllocator;

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
