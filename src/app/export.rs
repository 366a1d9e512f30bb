//! `lab export EXP --latex FILE` / `--typst FILE`: every number the chapter shows, as LaTeX
//! macros or Typst bindings for a paper, and the chapter's charts in a folder beside the file
//! (read side of the pipeline: store → analysis → checks → the chapter's catalogue).

use super::session::{no_session, session_list};
use super::stderr::Stderr;
use crate::chapter::Shown;
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_config as config;
use lab_render::numbers::{self, Catalogue};
use lab_render::paper::{self, Chart, Source};
use lab_store::SessionRef;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("format").required(true).multiple(true).args(["latex", "typst"])))]
pub struct ExportArgs {
    /// The experiment folder or its name.
    pub experiment: PathBuf,
    /// Write the numbers as LaTeX macros (`\newcommand*`) to this file.
    #[arg(long, value_name = "FILE")]
    pub latex: Option<PathBuf>,
    /// Write the numbers as Typst bindings (`#let`) to this file.
    #[arg(long, value_name = "FILE")]
    pub typst: Option<PathBuf>,
    /// The session (default: the one the book's chapter shows, else the latest).
    #[arg(long)]
    pub session: Option<SessionRef>,
}

impl ExportArgs {
    /// Writes each file asked for, with the charts beside it.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        let exported = export(layout, &self.experiment, self.session.as_ref())?;
        let mut folders = Vec::new();
        for (file, format) in [(&self.latex, Format::Latex), (&self.typst, Format::Typst)] {
            if let Some(file) = file {
                let charts = exported.write(file, format, &folders)?;
                if !quiet {
                    eprintln!(
                        "{} numbers of session {} written to {}; {} charts in {}",
                        exported.catalogue.numbers.len(),
                        exported.session,
                        file.display(),
                        exported.charts.len(),
                        charts.display()
                    );
                }
                folders.push(charts);
            }
        }
        Ok(Exit::Ok)
    }
}

#[derive(Debug, Clone, Copy)]
enum Format {
    Latex,
    Typst,
}

/// A session's numbers and charts, ready to be written for a paper.
pub struct Exported {
    pub experiment: String,
    pub title: String,
    pub session: String,
    pub commit: String,
    pub measured_by: String,
    pub catalogue: Catalogue,
    pub charts: Vec<Chart>,
}

/// The catalogue and charts of the chapter of `arg`'s session `which` (default: the one the
/// book's chapter shows, else the latest).
pub fn export(layout: &Layout, arg: &Path, which: Option<&SessionRef>) -> Result<Exported> {
    let dir = layout.experiment_dir(arg)?;
    let which = which.cloned().or_else(|| chapter_session(layout, &dir));
    let shown = Shown::of(layout, &dir, which.as_ref(), &Stderr { quiet: false })?
        .ok_or_else(|| no_session(&dir))?;
    let item = shown.rendered();
    let m = &shown.assessed.session.manifest;
    Ok(Exported {
        experiment: item.experiment.name.clone(),
        title: item.experiment.title.clone(),
        session: shown.assessed.session.name.clone(),
        commit: m.commit_line(),
        measured_by: m.lab_version.clone(),
        catalogue: numbers::catalogue(&item),
        charts: paper::charts(&item)?,
    })
}

/// The session the book's chapter of the experiment in `dir` shows, when it has one and the
/// session is still stored.
pub(crate) fn chapter_session(layout: &Layout, dir: &Path) -> Option<SessionRef> {
    let entry = lab_render::existing_entry(&layout.book(), &config::experiment_name(dir))?;
    let named = SessionRef::Named(entry.session);
    matches!(session_list(layout, dir).find(Some(&named)), Ok(Some(_))).then_some(named)
}

impl Exported {
    /// The LaTeX macros, written from nothing but the session: the same every time.
    pub fn latex(&self) -> String {
        paper::latex(
            &self.source(),
            &self.catalogue,
            &self.charts,
            &self.folder(),
        )
    }

    /// The Typst bindings, with the same names as the LaTeX macros.
    pub fn typst(&self) -> String {
        paper::typst(
            &self.source(),
            &self.catalogue,
            &self.charts,
            &self.folder(),
        )
    }

    fn source(&self) -> Source<'_> {
        Source {
            experiment: &self.experiment,
            title: &self.title,
            session: &self.session,
            commit: &self.commit,
            measured_by: &self.measured_by,
            written_by: env!("CARGO_PKG_VERSION"),
        }
    }

    /// The charts' folder, beside the file: `lockstack-dip-charts`.
    fn folder(&self) -> String {
        format!("{}-charts", self.experiment)
    }

    /// Writes `file` and the charts' folder beside it, unless it is one of `written`;
    /// returns the folder.
    fn write(&self, file: &Path, format: Format, written: &[PathBuf]) -> Result<PathBuf> {
        let text = match format {
            Format::Latex => self.latex(),
            Format::Typst => self.typst(),
        };
        write_file(file, &text)?;
        let folder = file.parent().unwrap_or(Path::new("")).join(self.folder());
        if written.contains(&folder) {
            return Ok(folder);
        }
        std::fs::create_dir_all(&folder).map_err(|e| unwritable(&folder, &e))?;
        for chart in &self.charts {
            let svg = folder.join(format!("{}.svg", chart.name));
            write_file(&svg, &chart.svg)?;
            to_pdf(&svg)?;
        }
        Ok(folder)
    }
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| unwritable(path, &e))
}

/// A file or folder lab cannot write: the user's to fix, so a usage error.
fn unwritable(path: &Path, e: &std::io::Error) -> LabError {
    LabError::Usage(format!(
        "cannot write {}: {e}\n  hint: name a file in a folder that exists and that you can write",
        path.display()
    ))
}

/// A PDF of the chart beside its SVG, when `rsvg-convert` (librsvg) is installed: what
/// `\includegraphics` reads. Its creation date is fixed, so the PDF is the same every time.
fn to_pdf(svg: &Path) -> Result<()> {
    let no_env = std::collections::BTreeMap::new();
    let Some(tool) = lab_exec::locate_program("rsvg-convert", Path::new("."), &no_env) else {
        return Ok(());
    };
    let pdf = svg.with_extension("pdf");
    let out = std::process::Command::new(tool)
        .args(["--format", "pdf", "--output"])
        .arg(&pdf)
        .arg(svg)
        .env("SOURCE_DATE_EPOCH", "0")
        .output()
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot run rsvg-convert: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    Err(LabError::Other(anyhow::anyhow!(
        "rsvg-convert could not convert {}: {}",
        svg.display(),
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}
