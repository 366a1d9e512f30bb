//! Where `lab bench` keeps its experiments, sessions and chapters, so that nothing is written
//! where the person stands: under the project the current folder lies in (the nearest folder
//! at or above it that holds `experiments/`), else under the user's data directory
//! (`$XDG_DATA_HOME/lab/bench`, by default `~/.local/share/lab/bench`, as the XDG Base
//! Directory Specification places application data). `--save NAME` makes an experiment of
//! the project, or of the current folder where there is none.

use crate::error::{LabError, Result};
use crate::layout::Layout;
use std::path::{Path, PathBuf};

/// The folder under a store's root that holds `lab bench`'s experiments.
const BENCH_DIR: &str = ".lab/bench";

/// Where this `lab bench` keeps what it writes.
pub(super) struct Place {
    /// The store's root: `data/` and `book/` lie under it.
    pub layout: Layout,
    /// The store's root, absolute.
    root: PathBuf,
    /// The folder the commands were typed in, absolute.
    pub cwd: PathBuf,
    /// Whether the store is the user's data directory (no project was found).
    pub outside_project: bool,
}

impl Place {
    /// The project the current folder lies in, or the user's data directory; with `save`, the
    /// project or the current folder.
    pub(super) fn find(save: bool) -> Result<Place> {
        let cwd = std::env::current_dir()
            .map_err(|e| LabError::Other(anyhow::anyhow!("cannot read the current folder: {e}")))?;
        if let Some(root) = project_root(&cwd) {
            return Ok(Place::at(root, cwd, false));
        }
        if save {
            return Ok(Place::at(cwd.clone(), cwd, false));
        }
        Ok(Place::at(data_home()?.join("lab").join("bench"), cwd, true))
    }

    fn at(root: PathBuf, cwd: PathBuf, outside_project: bool) -> Place {
        Place {
            layout: Layout::new(shown(&root, &cwd)),
            root,
            cwd,
            outside_project,
        }
    }

    /// The folder of an unsaved experiment whose lab.toml digests to `digest`.
    pub(super) fn bench_dir(&self, digest: &str) -> PathBuf {
        self.layout
            .root
            .join(BENCH_DIR)
            .join(format!("bench-{}", &digest[..8]))
    }

    /// `workdir` for an experiment `depth` folders below the store's root: the way back to
    /// the current folder, relative inside a project (so that it moves with it), absolute in
    /// the data directory.
    pub(super) fn workdir(&self, depth: usize) -> String {
        if self.outside_project {
            return self.cwd.display().to_string();
        }
        let root = std::fs::canonicalize(&self.root).unwrap_or(self.root.clone());
        let cwd = std::fs::canonicalize(&self.cwd).unwrap_or(self.cwd.clone());
        let below = cwd.strip_prefix(&root).unwrap_or(Path::new(""));
        let mut parts: Vec<String> = vec!["..".to_string(); depth];
        parts.extend(below.iter().map(|p| p.to_string_lossy().into_owned()));
        parts.join("/")
    }
}

/// The nearest folder at or above `cwd` that holds `experiments/`.
fn project_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|dir| dir.join("experiments").is_dir())
        .map(Path::to_path_buf)
}

/// `$XDG_DATA_HOME`, else `$HOME/.local/share`: where the XDG Base Directory Specification
/// keeps a user's application data.
fn data_home() -> Result<PathBuf> {
    let set = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(dir) = set("XDG_DATA_HOME") {
        return Ok(dir);
    }
    set("HOME")
        .map(|home| home.join(".local").join("share"))
        .ok_or_else(|| {
            LabError::Usage(
                "no project here (no folder at or above holds experiments/) and neither XDG_DATA_HOME nor HOME is set, so lab bench has nowhere to keep its sessions\n  hint: set XDG_DATA_HOME, or run it inside a project, or keep it here with --save NAME".into(),
            )
        })
}

/// `root` as messages show it: relative to `cwd` where it lies at or above it (`.`, `..`),
/// else absolute.
fn shown(root: &Path, cwd: &Path) -> PathBuf {
    let Ok(below) = cwd.strip_prefix(root) else {
        return root.to_path_buf();
    };
    match below.iter().count() {
        0 => PathBuf::from("."),
        n => PathBuf::from(vec![".."; n].join("/")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_is_the_nearest_folder_holding_experiments() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(project_root(&deep), None);
        std::fs::create_dir(dir.path().join("a/experiments")).unwrap();
        assert_eq!(project_root(&deep), Some(dir.path().join("a")));
    }

    #[test]
    fn the_root_is_shown_relative_to_where_the_person_stands() {
        let root = Path::new("/p");
        assert_eq!(shown(root, Path::new("/p")), PathBuf::from("."));
        assert_eq!(shown(root, Path::new("/p/a/b")), PathBuf::from("../.."));
        assert_eq!(shown(root, Path::new("/q")), PathBuf::from("/p"));
    }

    #[test]
    fn the_workdir_leads_back_to_the_current_folder() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("src");
        std::fs::create_dir_all(sub.join("x")).unwrap();
        let place = Place::at(dir.path().to_path_buf(), sub.join("x"), false);
        assert_eq!(place.workdir(3), "../../../src/x");
        let outside = Place::at(PathBuf::from("/data"), sub.clone(), true);
        assert_eq!(outside.workdir(3), sub.display().to_string());
    }
}
