//! Where lab keeps things in a project: experiments/, data/, book/ and the experiments `lab
//! bench` wrote, found from the project root.

use crate::error::{LabError, Result};
use lab_config as config;
use std::path::{Path, PathBuf};

/// Where lab keeps things, relative to the project root.
pub struct Layout {
    pub root: PathBuf,
}

impl Layout {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Layout { root: root.into() }
    }
    pub fn experiments(&self) -> PathBuf {
        self.at("experiments")
    }
    pub fn data(&self) -> PathBuf {
        self.at("data")
    }
    /// Where an experiment's sessions are kept: `data/NAME`.
    pub fn data_dir(&self, experiment: &str) -> PathBuf {
        self.data().join(experiment)
    }
    pub fn book(&self) -> PathBuf {
        self.at("book")
    }

    /// A path under the root, written without a leading `./` for messages and manifests.
    fn at(&self, name: &str) -> PathBuf {
        tidy(&self.root.join(name))
    }

    /// An experiment folder from a path or a bare name.
    pub fn experiment_dir(&self, arg: &Path) -> Result<PathBuf> {
        let candidates = [self.root.join(arg), self.experiments().join(arg)];
        if let Some(dir) = candidates
            .iter()
            .find(|d| d.join(config::FILE_NAME).is_file())
        {
            return Ok(tidy(dir));
        }
        if let Some((file, kind)) = candidates.iter().find_map(|d| {
            let file = d.join(config::FILE_NAME);
            let kind = std::fs::metadata(&file).ok()?.file_type();
            Some((file, kind))
        }) {
            return Err(LabError::Usage(format!(
                "{}: it is {}, not a regular file; put the file itself there",
                tidy(&file).display(),
                config::folder_file::kind_of(&kind)
            )));
        }
        let known: Vec<String> = self
            .experiment_dirs()
            .iter()
            .filter_map(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        Err(LabError::Usage(format!(
            "no experiment at {}: expected a folder holding {}\n  hint: experiments here: {}",
            arg.display(),
            config::FILE_NAME,
            if known.is_empty() {
                "none (create experiments/NAME/lab.toml)".to_string()
            } else {
                known.join(", ")
            }
        )))
    }

    /// Every folder under experiments/ that holds a lab.toml, sorted.
    pub fn experiment_dirs(&self) -> Vec<PathBuf> {
        experiments_in(&self.experiments())
    }

    /// The experiments `lab bench` wrote and did not save (`.lab/bench/bench-HASH`): their
    /// chapters stay in the book beside the project's.
    pub fn bench_dirs(&self) -> Vec<PathBuf> {
        experiments_in(&self.root.join(".lab").join("bench"))
    }
}

/// The folders directly in `parent` that hold a lab.toml, sorted.
fn experiments_in(parent: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(config::FILE_NAME).is_file())
        .map(|p| tidy(&p))
        .collect();
    dirs.sort();
    dirs
}

/// `./experiments/x` reads better as `experiments/x` in messages and manifests.
pub(crate) fn tidy(path: &Path) -> PathBuf {
    path.strip_prefix(".").unwrap_or(path).to_path_buf()
}
