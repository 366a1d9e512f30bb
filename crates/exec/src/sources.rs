//! The files that define what a session measures — what its build reads, what its build
//! writes, and the files its commands name — each with its SHA-256, recorded when the session
//! starts and compared with the experiment folder whenever its chapter is read again.

use lab_config::Experiment;
use std::collections::BTreeMap;
use std::path::{Component, Path};

/// The SHA-256 of every file that defines the experiment's measurement, by its path within
/// the experiment folder. A file that cannot be read is left out: it is missing from the
/// record, and found again as new if it can be read later.
pub fn record(exp: &Experiment) -> BTreeMap<String, String> {
    defining_files(exp)
        .into_keys()
        .filter_map(|path| Some((path.clone(), digest(&exp.dir.join(&path))?)))
        .collect()
}

/// How one file differs from the one a session recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceChange {
    pub path: String,
    pub change: Change,
}

/// What happened to a file since the session recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A source whose content differs.
    Edited,
    /// A source the session had that is gone.
    Removed,
    /// A file the build reads now that the session did not have.
    Added,
    /// A file the build writes, different from the one the session ran.
    Rebuilt,
}

impl std::fmt::Display for SourceChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = &self.path;
        match self.change {
            Change::Edited => write!(f, "{path} changed"),
            Change::Removed => write!(f, "{path} was removed"),
            Change::Added => write!(f, "{path} is new"),
            Change::Rebuilt => write!(f, "{path} was built again and differs"),
        }
    }
}

/// How the experiment folder differs from `recorded`, sorted by path. The files the build
/// writes count only where `built_here` says the session ran on this machine (another
/// machine's compiler writes other bytes) and only where they exist (a fresh checkout has
/// built nothing yet).
pub fn changes(
    exp: &Experiment,
    recorded: &BTreeMap<String, String>,
    built_here: bool,
) -> Vec<SourceChange> {
    let today = defining_files(exp);
    let mut found = Vec::new();
    for (path, then) in recorded {
        let built = is_output(exp, path);
        let now = digest(&exp.dir.join(path));
        let change = match (now, built) {
            (None, true) => None,
            (None, false) => Some(Change::Removed),
            (Some(now), _) if now == *then => None,
            (Some(_), true) => built_here.then_some(Change::Rebuilt),
            (Some(_), false) => Some(Change::Edited),
        };
        found.extend(change.map(|change| SourceChange {
            path: path.clone(),
            change,
        }));
    }
    for (path, built) in today {
        if !built && !recorded.contains_key(&path) {
            found.push(SourceChange {
                path,
                change: Change::Added,
            });
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// Whether the build's inputs or command differ from those of the build `fingerprint`
/// describes (sessions recorded before lab kept each file's digest kept only this).
pub fn build_changed(exp: &Experiment, fingerprint: &str) -> bool {
    super::build::fingerprint(exp).map_or(true, |now| now != fingerprint)
}

/// The files that define the measurement, by path within the experiment folder, each with
/// whether the build writes it.
fn defining_files(exp: &Experiment) -> BTreeMap<String, bool> {
    let mut files = BTreeMap::new();
    for file in super::build::input_files(exp) {
        files.extend(relative(&exp.dir, &file).map(|p| (p, false)));
    }
    let commands = exp
        .variants
        .iter()
        .map(|v| &v.argv)
        .chain(exp.build.iter().map(|b| &b.argv));
    for arg in commands.flatten() {
        if let Some(path) = named_file(&exp.dir, arg) {
            files.entry(path).or_insert(false);
        }
    }
    for output in exp.build.iter().flat_map(|b| &b.outputs) {
        if let Some(path) = normal(Path::new(output)) {
            files.insert(path, true);
        }
    }
    files
}

/// `arg` as the path of a file in the experiment folder, when it names one: relative, with
/// no placeholder and no step out of the folder.
fn named_file(dir: &Path, arg: &str) -> Option<String> {
    if arg.contains('{') || arg.starts_with('-') {
        return None;
    }
    let path = normal(Path::new(arg))?;
    dir.join(&path).is_file().then_some(path)
}

fn is_output(exp: &Experiment, path: &str) -> bool {
    exp.build
        .iter()
        .flat_map(|b| &b.outputs)
        .any(|o| normal(Path::new(o)).as_deref() == Some(path))
}

fn relative(dir: &Path, file: &Path) -> Option<String> {
    normal(file.strip_prefix(dir).ok()?)
}

/// A relative path without `.` components, or `None` for an absolute one or one that climbs.
fn normal(path: &Path) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The SHA-256 of a regular file's content, a link to one followed (a source may be the
/// author's link to a shared file); `None` for anything else or what cannot be read.
fn digest(path: &Path) -> Option<String> {
    use sha2::Digest;
    let mut file = lab_config::folder_file::open(path).ok()?;
    let mut hasher = sha2::Sha256::new();
    std::io::copy(&mut file, &mut hasher).ok()?;
    Some(format!("{:x}", hasher.finalize()))
}

#[cfg(test)]
#[path = "sources_tests.rs"]
mod tests;
