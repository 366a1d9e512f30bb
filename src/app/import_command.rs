//! `lab import`'s command line, read into [`ImportOptions`] for another harness's files, or
//! handed to the receiver of bundles for `lab import lab`.

use super::ImportOptions;
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_import::formats::Format;
use std::path::PathBuf;

/// What wrote the files `lab import` reads: lab itself (`lab bundle`) or another harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Source {
    /// Bundles written by `lab bundle` on another machine.
    Lab,
    Hyperfine,
    Jmh,
    Gbench,
    Pyperf,
    Criterion,
    /// pytest-benchmark's JSON (`--benchmark-json FILE`).
    #[value(name = "pytest-benchmark")]
    PytestBenchmark,
    /// `go test -bench` text output, as benchstat reads it.
    Go,
    /// asv's (airspeed velocity) result files, or its results folder.
    Asv,
    /// BenchmarkDotNet's full JSON export (`*-report-full.json`).
    #[value(name = "benchmarkdotnet")]
    BenchmarkDotNet,
    /// nanobench's JSON output (`templates::json()`).
    Nanobench,
    /// Catch2's XML report (`-r xml`): refused, as it holds only each benchmark's mean.
    Catch2,
}

impl Source {
    /// The harness format, or `None` for lab's own bundles.
    fn format(self) -> Option<Format> {
        match self {
            Source::Lab => None,
            Source::Hyperfine => Some(Format::Hyperfine),
            Source::Jmh => Some(Format::Jmh),
            Source::Gbench => Some(Format::Gbench),
            Source::Pyperf => Some(Format::Pyperf),
            Source::Criterion => Some(Format::Criterion),
            Source::PytestBenchmark => Some(Format::PytestBenchmark),
            Source::Go => Some(Format::GoTest),
            Source::Asv => Some(Format::Asv),
            Source::BenchmarkDotNet => Some(Format::BenchmarkDotNet),
            Source::Nanobench => Some(Format::Nanobench),
            Source::Catch2 => Some(Format::Catch2),
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// What wrote the files: `lab` for bundles of `lab bundle`, else the harness.
    #[arg(value_enum)]
    pub format: Source,
    /// Its result files, gzip-compressed or not (criterion: a target/criterion folder, benchmark
    /// folders, or their new/sample.json); for `lab`, the bundles.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The experiment to add the session to (experiments/NAME, created when missing); for
    /// `lab`, the experiment the bundle names by default, which must exist.
    #[arg(long, value_name = "EXP")]
    pub into: Option<PathBuf>,
    /// Import only the benchmarks whose name contains TEXT; `mode=MODE` (JMH: thrpt, avgt,
    /// sample, ss) and `unit=UNIT` (such as ops/ms) select by mode or unit. Repeatable: every
    /// filter must hold.
    #[arg(long, value_name = "TEXT")]
    pub filter: Vec<String>,
    /// Every file comes from this one machine or build: import them into one session, under
    /// this label, even where their recorded hosts or builds differ.
    #[arg(long, value_name = "LABEL")]
    pub machine: Option<String>,
}

impl ImportArgs {
    /// `lab import`: writes the session and its chapter; exits as the checks say.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        let Some(format) = self.format.format() else {
            return self.receive(layout, quiet);
        };
        let Some(into) = &self.into else {
            return Err(LabError::Usage(
                "`lab import FORMAT FILE…` needs `--into EXP`: the experiment to add the session to\n  hint: lab import hyperfine out.json --into sorting".into(),
            ));
        };
        let opts = ImportOptions {
            format,
            files: &self.files,
            into,
            filters: &self.filter,
            machine: self.machine.as_deref(),
            quiet,
            command_line: super::run_command::typed_command(),
        };
        super::import(layout, &opts)
    }

    /// `lab import lab BUNDLE…`: `--filter` and `--machine` choose among a harness's results
    /// and mean nothing for a bundle, which holds one session of one machine.
    fn receive(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        if !self.filter.is_empty() || self.machine.is_some() {
            return Err(LabError::Usage(
                "`lab import lab` takes no --filter or --machine: a bundle holds one session, measured on the machine its manifest names".into(),
            ));
        }
        super::receive::import_bundles(layout, &self.files, self.into.as_deref(), quiet)
    }
}
