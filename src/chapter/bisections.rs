//! The bisections `lab bisect` keeps for an experiment (`data/NAME/bisect/GOOD..BAD.json`):
//! written when a bisection ends, read back for the chapter's Bisect page.

use crate::error::{LabError, Result};
use crate::layout::Layout;
use lab_judge::bisect::{BISECT_FOLDER, Bisection};
use std::path::{Path, PathBuf};

/// Writes the bisection to `data/NAME/bisect/GOOD..BAD.json`, replacing one of the same two
/// commits.
pub fn keep(layout: &Layout, bisection: &Bisection) -> Result<()> {
    let folder = layout.data_dir(&bisection.experiment).join(BISECT_FOLDER);
    let path = folder.join(bisection.file_name());
    let mut text = serde_json::to_string_pretty(bisection).map_err(anyhow::Error::from)?;
    text.push('\n');
    std::fs::create_dir_all(&folder)
        .map_err(anyhow::Error::from)
        .and_then(|()| lab_store::write_atomically(&path, text.as_bytes()))
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot write {}: {e}", path.display())))
}

/// Every bisection kept for the experiment, by file name; one that cannot be read is left out
/// with a note.
pub fn of(layout: &Layout, experiment: &str, told: &dyn super::Told) -> Vec<Bisection> {
    let folder = layout.data_dir(experiment).join(BISECT_FOLDER);
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|path| match read_bisection(path) {
            Ok(b) => Some(b),
            Err(e) => {
                told.note(&format!("{} left out: {e}", path.display()));
                None
            }
        })
        .collect()
}

fn read_bisection(path: &Path) -> std::result::Result<Bisection, String> {
    let file = lab_store::regular::open_regular(path).map_err(|e| e.to_string())?;
    serde_json::from_reader(std::io::BufReader::new(file)).map_err(|e| e.to_string())
}
