//! Earlier `lab bench` sessions: `--list` prints those kept where this bench would keep its
//! own, oldest first; `--open` finds one by name, prefix or `latest`; `--output FILE` copies a
//! command's last run's output out of the record.

use super::place::Place;
use crate::assess::Assessed;
use crate::error::{Exit, LabError, Result};
use std::io::Read;
use std::path::{Path, PathBuf};

/// One stored session of an unsaved bench experiment.
struct Found {
    experiment: PathBuf,
    session: PathBuf,
}

impl Found {
    fn name(&self) -> String {
        lab_store::folder_name(&self.session)
    }
}

/// Every session of every unsaved bench experiment kept at `place`, oldest first.
fn all(place: &Place) -> Vec<Found> {
    let mut found: Vec<Found> = place
        .layout
        .bench_dirs()
        .into_iter()
        .flat_map(|experiment| {
            let name = lab_config::experiment_name(&experiment);
            lab_store::sessions(&place.layout.data_dir(&name))
                .into_iter()
                .map(move |session| Found {
                    experiment: experiment.clone(),
                    session,
                })
        })
        .collect();
    found.sort_by_key(Found::name);
    found
}

/// `lab bench --list`: a line per session, oldest first: its name, its experiment, the
/// commands and the folder they ran in.
pub(super) fn list(place: &Place) -> Result<Exit> {
    let found = all(place);
    if found.is_empty() {
        println!(
            "no lab bench session is kept in {} yet",
            place.layout.root.display()
        );
        return Ok(Exit::Ok);
    }
    println!("lab bench sessions in {}:", place.layout.root.display());
    for f in &found {
        let (title, workdir) = described(&f.experiment);
        println!(
            "  {}  {}  {}  (in {})",
            f.name(),
            lab_config::experiment_name(&f.experiment),
            lab_config::format::terminal(&title),
            lab_config::format::terminal(&workdir)
        );
    }
    println!("open one with: lab bench --open NAME (or a unique prefix of it, or latest)");
    Ok(Exit::Ok)
}

/// The title and `workdir` of the lab.toml in `dir`, as written there.
fn described(dir: &Path) -> (String, String) {
    let text = std::fs::read_to_string(dir.join(lab_config::FILE_NAME)).unwrap_or_default();
    let table: toml::Table = text.parse().unwrap_or_default();
    let field = |key: &str| {
        table
            .get("experiment")
            .and_then(|e| e.get(key))
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_string()
    };
    (field("title"), field("workdir"))
}

/// The experiment folder and session name `which` names: `latest`, a session's name or a
/// unique prefix of it.
pub(super) fn find(place: &Place, which: &str) -> Result<(PathBuf, String)> {
    let found = all(place);
    let chosen: Vec<&Found> = match which {
        "latest" => found.last().into_iter().collect(),
        prefix => found
            .iter()
            .filter(|f| f.name().starts_with(prefix))
            .collect(),
    };
    match chosen.as_slice() {
        [one] => Ok((one.experiment.clone(), one.name())),
        [] => Err(LabError::Usage(format!(
            "no lab bench session {which:?} in {}\n  hint: `lab bench --list` shows those kept there",
            place.layout.root.display()
        ))),
        many => Err(LabError::Usage(format!(
            "{which:?} names {} sessions ({})\n  hint: give more of the name",
            many.len(),
            many.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// For each (label, file): writes the standard output of that command's last timed run into
/// the file, as hyperfine's `--output FILE` leaves it.
pub(super) fn copy_outputs(a: &Assessed, files: &[(String, PathBuf)]) -> Result<()> {
    for (label, file) in files {
        let Some(row) = last_run_of(a, label) else {
            continue;
        };
        let mut printed = Vec::new();
        if let Some(mut reader) = a.session.stdout(row).open() {
            let _ = reader.read_to_end(&mut printed);
        }
        lab_store::write_atomically(file, &printed)
            .map_err(|e| LabError::Other(e.context(format!("cannot write {}", file.display()))))?;
    }
    Ok(())
}

/// The last timed run of the variant labelled `label`.
fn last_run_of<'a>(a: &'a Assessed, label: &str) -> Option<&'a lab_store::RunRow> {
    let variant = a
        .experiment
        .variants
        .iter()
        .find(|v| v.label.as_deref() == Some(label) || v.name == label)?;
    a.session
        .runs
        .iter()
        .filter(|r| r.variant == variant.name && !r.warmup)
        .max_by_key(|r| r.position)
}
