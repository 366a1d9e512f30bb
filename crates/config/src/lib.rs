//! Stage 1: read `experiments/NAME/lab.toml`, parse strictly, validate into an `Experiment`;
//! with the plan of its runs, the counters and protection it may ask for, and the units and
//! number formats every later stage writes.

mod checks;
pub mod counter;
mod counters;
mod derived;
mod duration;
mod env;
mod error;
pub mod folder_file;
pub mod format;
mod identifier;
pub mod isolation;
mod model;
mod params;
pub mod plan;
pub mod raw;
pub mod shell_syntax;
pub mod size;
pub mod skip;
pub mod template;
pub mod units;
mod validate;
mod value;

pub use duration::{parse_duration, parse_fraction, parse_wait};
pub use error::ConfigError;
pub use identifier::identifier_problem;
pub use model::*;

use error::Locator;
use sha2::{Digest, Sha256};
use std::path::Path;

/// The JSON Schema of lab.toml, derived from the serde mirror of the file.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(raw::RawFile);
    serde_json::to_string_pretty(&schema).unwrap_or_default()
}

/// The largest plan accepted unless `[experiment] max_runs` says otherwise.
pub const MAX_RUNS: u64 = 200_000;

/// The experiment file inside an experiment folder.
pub const FILE_NAME: &str = "lab.toml";

/// Loads and validates `dir/lab.toml`, applying `profile` when given.
pub fn load(dir: &Path, profile: Option<&str>) -> Result<Experiment, ConfigError> {
    let file = dir.join(FILE_NAME);
    let source = folder_file::read_text(&file).map_err(|e| ConfigError {
        file: file.clone(),
        line: 0,
        column: 0,
        key: String::new(),
        message: format!("cannot read the experiment file: {e}"),
        hint: Some(format!("an experiment is a folder holding {FILE_NAME}; `lab list` shows those under experiments/")),
    })?;
    parse(&source, &file, dir, profile)
}

/// Parses and validates experiment source text; `file` and `dir` name where it came from.
pub fn parse(
    source: &str,
    file: &Path,
    dir: &Path,
    profile: Option<&str>,
) -> Result<Experiment, ConfigError> {
    let loc = Locator::new(file, source);
    let raw = raw::from_toml(source).map_err(|e| loc.toml_error(&e.error, e.path.as_ref()))?;
    let origin = validate::Origin {
        name: experiment_name(dir),
        dir: dir.to_path_buf(),
        source_hash: format!("{:x}", Sha256::digest(source.as_bytes())),
    };
    validate::validate(raw, origin, profile, &loc)
}

/// The experiment's name, which names its data folder and its chapter: the folder's name for
/// a folder inside an `experiments/` tree, else the folder's name and a short hash of its full
/// path, so a folder of the same name elsewhere never shares `data/NAME/`.
pub fn experiment_name(dir: &Path) -> String {
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let name = canonical.file_name().map_or_else(
        || "experiment".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let in_experiments = canonical
        .ancestors()
        .skip(1)
        .any(|a| a.file_name().is_some_and(|n| n == "experiments"));
    if in_experiments {
        name
    } else {
        let digest = Sha256::digest(canonical.as_os_str().as_encoded_bytes());
        format!("{name}-{:x}", digest)[..name.len() + 9].to_string()
    }
}

#[cfg(test)]
mod tests;
