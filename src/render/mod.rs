//! Stage 7: SVG charts and Tera templates → `book/` (book.toml, src/SUMMARY.md, one chapter per
//! experiment with its charts, raw CSV files and analysis.json). A pure function of the
//! experiments and their stored sessions: rendering twice gives byte-identical files.

mod chapter;
pub mod charts;
mod figures;
pub mod notes;
mod tables;
mod templates;

pub use chapter::{banner, shell_words};

use crate::analysis::Analysis;
use crate::checks::Tally;
use crate::config::Experiment;
use crate::store::{RUNS, SAMPLES};
use anyhow::{Context, Result};
use serde::Serialize;
use std::fs;
use std::path::Path;

/// One experiment with the analysis of its latest session.
pub struct Rendered<'a> {
    pub experiment: &'a Experiment,
    pub analysis: &'a Analysis,
    pub session_dir: &'a Path,
}

#[derive(Serialize)]
struct BookEntry {
    name: String,
    title: String,
    session: String,
    pass: usize,
    fail: usize,
    inconclusive: usize,
    not_run: usize,
    trusted: &'static str,
}

/// Writes the whole book under `book_dir` for `items` (sorted by experiment name).
pub fn render_book(book_dir: &Path, items: &[Rendered]) -> Result<()> {
    let src = book_dir.join("src");
    fs::create_dir_all(&src).with_context(|| format!("cannot create {}", src.display()))?;
    let defaults = templates::engine(None)?;
    let entries: Vec<BookEntry> = items.iter().map(book_entry).collect();
    let book = serde_json::json!({ "title": "Lab notebook", "experiments": entries });
    write(
        &book_dir.join("book.toml"),
        &templates::render(&defaults, "book.toml", &book)?,
    )?;
    write(
        &book_dir.join("lab.css"),
        &templates::render(&defaults, "lab.css", &book)?,
    )?;
    write(
        &src.join("SUMMARY.md"),
        &templates::render(&defaults, "SUMMARY.md", &book)?,
    )?;
    write(
        &src.join("introduction.md"),
        &templates::render(&defaults, "introduction.md", &book)?,
    )?;
    write(
        &src.join("how-to-read.md"),
        &templates::render(&defaults, "how-to-read.md", &book)?,
    )?;
    for item in items {
        render_chapter(&src, item)?;
    }
    Ok(())
}

fn book_entry(item: &Rendered) -> BookEntry {
    let tally = Tally::of(&item.analysis.checks);
    BookEntry {
        name: item.experiment.name.clone(),
        title: item.experiment.title.clone(),
        session: item.analysis.session.clone(),
        pass: tally.pass,
        fail: tally.fail,
        inconclusive: tally.inconclusive,
        not_run: tally.not_run,
        trusted: if tally.untrusted {
            "no: a validity check failed"
        } else {
            "yes"
        },
    }
}

/// Writes `src/NAME/`: index.md, the charts, analysis.json and the raw CSV files.
fn render_chapter(src: &Path, item: &Rendered) -> Result<()> {
    let exp = item.experiment;
    let dir = src.join(&exp.name);
    if dir.exists() {
        fs::remove_dir_all(&dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    fs::create_dir_all(dir.join("data"))?;
    let figures = figures::figures(exp, item.analysis)?;
    for f in &figures {
        write(&dir.join(&f.file), &f.svg)?;
    }
    let tera = templates::engine(Some(&exp.dir.join("templates")))?;
    let notes = notes::render_notes(exp, item.analysis, &figures)?;
    let context = chapter::context(exp, item.analysis, figures, notes);
    write(
        &dir.join("index.md"),
        &templates::render(&tera, "chapter.md", &context)?,
    )?;
    let mut json = serde_json::to_string_pretty(item.analysis)?;
    json.push('\n');
    write(&dir.join("analysis.json"), &json)?;
    for name in [RUNS, SAMPLES] {
        fs::copy(item.session_dir.join(name), dir.join("data").join(name))
            .with_context(|| format!("cannot copy {name}"))?;
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<()> {
    fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
