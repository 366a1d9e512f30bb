//! `lab explain EXP NUMBER-ID`: where one number of a chapter comes from (its runs, its method
//! and parameters), computed again from the session's raw files and compared with what the
//! chapter printed.

use super::export::chapter_session;
use super::session::no_session;
use super::stderr::Stderr;
use crate::chapter::Shown;
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_config as config;
use lab_config::format::terminal;
use lab_render::numbers::{self, Catalogue, Subject};
use lab_render::provenance::{self, Derivation};
use lab_render::published::NUMBERS_JSON;
use lab_store::SessionRef;
use std::path::{Path, PathBuf};

/// Ids suggested for one the chapter does not have.
const SUGGESTED: usize = 8;

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// The experiment folder or its name.
    pub experiment: PathBuf,
    /// The number's id, as its link on the chapter's page names it
    /// (`nonfair-threads-2.mops.median`).
    pub id: String,
    /// The session (default: the one the book's chapter shows, else the latest).
    #[arg(long)]
    pub session: Option<SessionRef>,
}

impl ExplainArgs {
    /// Prints the derivation; exit 1 when the number computed again differs from the chapter's.
    pub fn execute(self, layout: &Layout, _quiet: bool) -> Result<Exit> {
        let (text, exit) = explain(layout, &self.experiment, &self.id, self.session.as_ref())?;
        print!("{text}");
        Ok(exit)
    }
}

/// The derivation of number `id` of the chapter of `arg`, computed again, and how lab ends:
/// 0 when the chapter printed the same, 1 when it printed otherwise.
pub fn explain(
    layout: &Layout,
    arg: &Path,
    id: &str,
    which: Option<&SessionRef>,
) -> Result<(String, Exit)> {
    let dir = layout.experiment_dir(arg)?;
    let which = which.cloned().or_else(|| chapter_session(layout, &dir));
    let shown = Shown::of(layout, &dir, which.as_ref(), &Stderr { quiet: false })?
        .ok_or_else(|| no_session(&dir))?;
    let item = shown.rendered();
    let catalogue = numbers::catalogue(&item);
    let number = catalogue
        .get(id)
        .ok_or_else(|| unknown(id, &catalogue, &dir))?;
    let derivation = provenance::derivation(&item, number);
    let name = config::experiment_name(&dir);
    let printed = printed(
        &layout.book().join("src").join(&name).join(NUMBERS_JSON),
        id,
    );
    let session = match &number.what {
        // The session compared with: its runs are what the median is of.
        Subject::Before { session: other, .. } => other.clone(),
        _ => shown.assessed.session.name.clone(),
    };
    let (verdict, exit) = match &printed {
        Some(p) if *p == number.text() => ("the same".to_string(), Exit::Ok),
        Some(p) => (format!("{p}: it differs"), Exit::CheckFailed),
        None => (
            "nothing: the book's chapter has no such number".to_string(),
            Exit::Ok,
        ),
    };
    let text = format!(
        "{}\ncomputed again from runs.csv and samples.csv of session {session}: {}\nthe chapter prints: {verdict}\n",
        described(&derivation),
        number.text()
    );
    Ok((terminal(&text), exit))
}

fn described(d: &Derivation) -> String {
    format!(
        "{}: {}\n  what:   {}\n  from:   {}\n  method: {}",
        d.id, d.shown, d.what, d.runs, d.method
    )
}

/// The number `id` as the book's chapter printed it (`8.41 [7.92, 8.80]`), from its
/// numbers.json.
fn printed(path: &Path, id: &str) -> Option<String> {
    let file = lab_store::regular::open_regular(path).ok()?;
    let catalogue: serde_json::Value =
        serde_json::from_reader(std::io::BufReader::new(file)).ok()?;
    let numbers = catalogue.get("numbers")?.as_array()?;
    let found = numbers
        .iter()
        .find(|n| n.get("id").and_then(|v| v.as_str()) == Some(id))?;
    let text = |key: &str| found.get(key).and_then(|v| v.as_str()).map(str::to_string);
    let value = text("value")?;
    Some(match (text("lo"), text("hi")) {
        (Some(lo), Some(hi)) => format!("{value} [{lo}, {hi}]"),
        _ => value,
    })
}

/// An id the chapter does not have, with the ids that share its first part.
fn unknown(id: &str, catalogue: &Catalogue, dir: &Path) -> LabError {
    let head = id.split('.').next().unwrap_or(id);
    let near: Vec<&str> = catalogue
        .numbers
        .iter()
        .map(|n| n.id.as_str())
        .filter(|n| n.split('.').next() == Some(head))
        .take(SUGGESTED)
        .collect();
    let hint = if near.is_empty() {
        format!(
            "the ids are on the chapter's page of where each number comes from (book/src/{}/provenance.md)",
            config::experiment_name(dir)
        )
    } else {
        format!("ids of that cell: {}", near.join(", "))
    };
    LabError::Usage(format!(
        "{} has no number {id}\n  hint: {hint}",
        config::experiment_name(dir)
    ))
}
