//! `lab bench CMD…`: hyperfine's habits with lab's answers. The commands become the variants
//! of an ordinary experiment, written as a lab.toml (under `.lab/bench/` of the project, or
//! of the user's data directory outside one, or as `experiments/NAME` with `--save NAME`) and
//! measured by `lab run`'s pipeline: interleaved in a seeded shuffle, sampled until every
//! command is decided against the reference, sealed like every session. Then hyperfine's
//! report, lab's verdicts, and hyperfine's export files.

mod args;
mod compose;
mod cpu;
mod export;
mod figures;
mod output;
mod place;
mod sessions;
mod short;
mod shown;
mod spec;
mod toml;

pub use args::BenchArgs;

use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use args::Style;
use lab_exec::ProcessRunner;
use place::Place;
use std::path::{Path, PathBuf};

/// How many folders below the store's root an unsaved experiment lies: `.lab/bench/bench-HASH`.
const BENCH_DEPTH: usize = 3;
/// How many folders below the project root a saved one lies: `experiments/NAME`.
const SAVED_DEPTH: usize = 2;

impl BenchArgs {
    /// `lab bench`: writes the experiment, measures it, prints the answer and writes exports;
    /// or, with `--list` and `--open`, finds earlier sessions.
    pub fn execute(self, _layout: &Layout, quiet: bool) -> Result<Exit> {
        self.refuse_what_lab_does_otherwise()?;
        let place = Place::find(self.save.is_some())?;
        if self.list {
            return sessions::list(&place);
        }
        if let Some(which) = &self.open {
            let (dir, session) = sessions::find(&place, which)?;
            return self.answer(&place, &dir, Some(&session));
        }
        let depth = if self.save.is_some() {
            SAVED_DEPTH
        } else {
            BENCH_DEPTH
        };
        let file = self.lab_toml(&place, depth)?;
        let dir = self.experiment_dir(&place, &file)?;
        let new_store = place.outside_project && !place.layout.root.exists();
        write_experiment(&dir, &file)?;
        if new_store && !self.silent(quiet) {
            eprintln!(
                "lab bench keeps its sessions in {}, as no folder here or above holds experiments/ (`lab bench --list` finds them)",
                place.layout.root.display()
            );
        }
        let mut opts = crate::app::RunOptions::new(crate::app::typed_command());
        opts.quiet = self.silent(quiet);
        opts.summary = false;
        opts.no_wait = self.no_wait;
        opts.shown = self.shown();
        if let Exit::Signal(s) = crate::app::run(&place.layout, &dir, &opts, &mut ProcessRunner)? {
            return Ok(Exit::Signal(s));
        }
        self.answer(&place, &dir, None)
    }

    /// Prints the answer of a session of the experiment in `dir` (the latest, or `session`)
    /// and writes the exports and output files asked for.
    fn answer(&self, place: &Place, dir: &Path, session: Option<&str>) -> Result<Exit> {
        let which = session.map(|s| lab_store::SessionRef::Named(s.to_string()));
        let assessed = crate::app::session::assessed_with(
            &place.layout,
            dir,
            which.as_ref(),
            crate::assess::Rows::Keep,
        )?;
        let view = output::View {
            unit: self.time_unit,
            sort: self.sort,
            again: self.again(place, dir),
        };
        let report = output::Report::of(&assessed, &place.layout, &view);
        if self.style != Some(Style::None) {
            print!("{}", report.text());
        }
        self.export(&report)?;
        sessions::copy_outputs(&assessed, &self.output_files(&report)?)?;
        Ok(report.exit())
    }

    /// `--quiet` and `--style none` print no progress (the answer, unless `--style none`).
    fn silent(&self, quiet: bool) -> bool {
        quiet || self.style == Some(Style::None)
    }

    /// How progress is shown: hyperfine's styles, lines per run off a terminal only with
    /// `--verbose`, each run's output with `--show-output` or `--output=inherit`.
    fn shown(&self) -> lab_exec::Shown {
        lab_exec::Shown {
            quiet: false,
            run_lines: self.verbose,
            bar: match self.style {
                Some(Style::Basic | Style::Color) => Some(false),
                Some(Style::Full | Style::Nocolor) => Some(true),
                _ => None,
            },
            echo_output: self.show_output || self.output.iter().any(|o| o == "inherit"),
        }
    }

    /// What reruns this bench: the same command line inside a project or the data directory
    /// (it adds to the same experiment), `lab run` on a saved one.
    fn again(&self, place: &Place, dir: &Path) -> String {
        match &self.save {
            Some(_) => format!("lab run {}", dir.strip_prefix(".").unwrap_or(dir).display()),
            None if place.outside_project => {
                "the same lab bench command, from the same folder".into()
            }
            None => format!("lab run {}", dir.display()),
        }
    }

    /// hyperfine flags lab answers in its own way, refused with that way named.
    fn refuse_what_lab_does_otherwise(&self) -> Result<()> {
        if let Some(metrics) = &self.metrics {
            spec::check_metrics(metrics)?;
        }
        if self.min_benchmarking_time.is_some() {
            return Err(LabError::Usage(
                "--min-benchmarking-time: lab bench takes runs until each comparison is decided, within a time budget\n  hint: give the time with --budget, e.g. --budget 30s, or a fixed count with --runs".into(),
            ));
        }
        Ok(())
    }

    /// Every export asked for, each written whole or not at all.
    fn export(&self, report: &output::Report) -> Result<()> {
        let markup = export::Markup {
            unit: self.time_unit,
            sort: self.sort,
            relative_to: match &self.reference {
                Some(_) => export::RelativeTo::Reference(report.reference_label()),
                None => export::RelativeTo::Fastest,
            },
        };
        let files = [
            (&self.export_json, export::json(report)),
            (&self.export_markdown, export::markdown(report, &markup)),
            (&self.export_csv, export::csv(report)),
            (&self.export_asciidoc, export::asciidoc(report, &markup)),
            (&self.export_orgmode, export::orgmode(report, &markup)),
        ];
        for (path, text) in files {
            if let Some(path) = path {
                lab_store::write_atomically(path, text.as_bytes()).map_err(|e| {
                    LabError::Other(e.context(format!("cannot write {}", path.display())))
                })?;
            }
        }
        Ok(())
    }

    /// Per command label, the file `--output FILE` names for it.
    fn output_files(&self, report: &output::Report) -> Result<Vec<(String, PathBuf)>> {
        let labels = report.labels();
        let given = spec::per_command(&self.output, labels.len(), "--output")?;
        Ok(labels
            .into_iter()
            .zip(given)
            .filter_map(|(label, o)| match o.as_deref() {
                None | Some("null" | "pipe" | "inherit") => None,
                Some(file) => Some((label, PathBuf::from(file))),
            })
            .collect())
    }

    /// Where the experiment is written: experiments/NAME with --save, else a folder under
    /// .lab/bench/ named for its lab.toml, so the same command line adds to the same sessions.
    fn experiment_dir(&self, place: &Place, file: &str) -> Result<PathBuf> {
        if let Some(name) = &self.save {
            if let Some(why) = lab_config::identifier_problem(name) {
                return Err(LabError::Usage(format!(
                    "--save {name:?}: the experiment name {why}\n  hint: use letters, digits, _ and -"
                )));
            }
            return Ok(place.layout.experiments().join(name));
        }
        Ok(place.bench_dir(&lab_store::sha256_hex(file.as_bytes())))
    }
}

/// Writes `file` as the experiment's lab.toml; one already there is kept when it is the same
/// and refused when it differs (a person's edits are never overwritten).
fn write_experiment(dir: &Path, file: &str) -> Result<()> {
    let path = dir.join(lab_config::FILE_NAME);
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
    lab_store::write_atomically(&path, file.as_bytes())
        .map_err(|e| LabError::Other(e.context(format!("cannot write {}", path.display()))))
}
