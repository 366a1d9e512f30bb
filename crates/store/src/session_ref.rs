//! Which stored session a command means: a [`SessionRef`] as typed on the command line,
//! resolved against an experiment's session folders (and its saved baselines).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where an experiment's named baselines are kept: name → session folder name.
pub const BASELINES: &str = "baselines.json";

/// Why a session argument names no session.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The argument names no session, or several: the user's to fix.
    #[error("{0}")]
    Usage(String),
    /// What lab keeps could not be read.
    #[error(transparent)]
    Unreadable(#[from] anyhow::Error),
}

type Result<T> = std::result::Result<T, SessionError>;

/// A session named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionRef {
    /// `latest`: the newest session.
    Latest,
    /// `previous`: the session before the newest.
    Previous,
    /// A session's folder name, a unique prefix of it, or a git commit (4 hex digits or more)
    /// the session was made at.
    Named(String),
    /// `baseline:NAME`: the session saved under NAME (`lab baseline`).
    Baseline(String),
}

/// What a session argument may be, for error messages and `--help`.
pub const ACCEPTED: &str = "a session name or unique prefix (`lab list`), `latest`, `previous`, a git commit, or `baseline:NAME`";

impl std::str::FromStr for SessionRef {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<SessionRef, String> {
        match text {
            "latest" => Ok(SessionRef::Latest),
            "previous" => Ok(SessionRef::Previous),
            _ => match text.strip_prefix("baseline:") {
                Some("") => Err(format!("{text:?} names no baseline\n  hint: {ACCEPTED}")),
                Some(name) => Ok(SessionRef::Baseline(name.to_string())),
                None => Ok(SessionRef::Named(text.to_string())),
            },
        }
    }
}

impl std::fmt::Display for SessionRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionRef::Latest => f.write_str("latest"),
            SessionRef::Previous => f.write_str("previous"),
            SessionRef::Named(text) => f.write_str(text),
            SessionRef::Baseline(name) => write!(f, "baseline:{name}"),
        }
    }
}

/// One experiment's sessions, oldest first, as a session argument is resolved against them.
pub struct SessionList {
    /// The experiment's name.
    pub experiment: String,
    /// The experiment's folder, as hints name it.
    pub dir: PathBuf,
    /// Its data folder, `data/NAME`.
    pub data_dir: PathBuf,
    /// Every session folder, oldest first.
    pub all: Vec<PathBuf>,
}

impl SessionList {
    /// The sessions of the experiment `experiment` in folder `dir`, stored in `data_dir`.
    pub fn new(experiment: &str, dir: &Path, data_dir: &Path) -> SessionList {
        SessionList {
            experiment: experiment.to_string(),
            dir: dir.to_path_buf(),
            data_dir: data_dir.to_path_buf(),
            all: super::sessions(data_dir),
        }
    }

    /// The newest session, if the experiment has one.
    pub fn latest(&self) -> Option<PathBuf> {
        self.all.last().cloned()
    }

    /// The folder `which` names, or the latest session when `which` is `None`.
    /// `Ok(None)`: no session was named and the experiment has none.
    pub fn find(&self, which: Option<&SessionRef>) -> Result<Option<PathBuf>> {
        match which {
            None => Ok(self.latest()),
            Some(which) => self.resolve(which).map(Some),
        }
    }

    /// The folder of the session `which` names.
    pub fn resolve(&self, which: &SessionRef) -> Result<PathBuf> {
        match which {
            SessionRef::Latest => self.counted_back(1, "latest"),
            SessionRef::Previous => self.counted_back(2, "previous"),
            SessionRef::Named(text) => self.named(text),
            SessionRef::Baseline(name) => self.named(&self.baseline(name)?),
        }
    }

    /// The `k`th session from the newest (1: the newest).
    fn counted_back(&self, k: usize, word: &str) -> Result<PathBuf> {
        let n = self.all.len();
        n.checked_sub(k)
            .map(|i| self.all[i].clone())
            .ok_or_else(|| {
                SessionError::Usage(format!(
                    "{} has {n} session{}: there is no {word} one\n  hint: run `lab run {}` first",
                    self.experiment,
                    plural(n),
                    self.dir.display()
                ))
            })
    }

    /// A session by name or unique prefix, else the latest made at a commit starting so.
    fn named(&self, wanted: &str) -> Result<PathBuf> {
        let by_name = self.by_name(wanted);
        if by_name.is_ok() {
            return by_name;
        }
        self.at_commit(wanted).map_or(by_name, Ok)
    }

    fn by_name(&self, wanted: &str) -> Result<PathBuf> {
        if let Some(exact) = self.all.iter().find(|d| folder_name(d) == wanted) {
            return Ok(exact.clone());
        }
        let matching: Vec<&PathBuf> = self
            .all
            .iter()
            .filter(|d| folder_name(d).starts_with(wanted))
            .collect();
        match matching.as_slice() {
            [one] => Ok((*one).clone()),
            _ => Err(SessionError::Usage(format!(
                "{name} has {} session{} named like \"{wanted}\"\n  hint: sessions of {name}: {}{}",
                if matching.is_empty() {
                    "no".to_string()
                } else {
                    matching.len().to_string()
                },
                plural(matching.len()),
                if self.all.is_empty() {
                    "none yet".to_string()
                } else {
                    self.all
                        .iter()
                        .map(|d| folder_name(d))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
                if matching.is_empty() {
                    format!("\n  hint: a session is {ACCEPTED}")
                } else {
                    String::new()
                },
                name = self.experiment,
            ))),
        }
    }

    /// The newest session made at a git commit starting with `commit` (4 hex digits or more).
    fn at_commit(&self, commit: &str) -> Option<PathBuf> {
        if commit.len() < 4 || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let commit = commit.to_ascii_lowercase();
        self.all
            .iter()
            .rev()
            .find(|d| {
                super::load_session(d).is_ok_and(|s| {
                    s.manifest
                        .git
                        .as_ref()
                        .is_some_and(|g| g.commit.starts_with(&commit))
                })
            })
            .cloned()
    }

    /// The session folder name saved as baseline `name`.
    pub fn baseline(&self, name: &str) -> Result<String> {
        let baselines = read_baselines(&self.data_dir)?;
        baselines.get(name).cloned().ok_or_else(|| {
            SessionError::Usage(format!(
                "{} has no baseline named {name:?}\n  hint: {}",
                self.experiment,
                if baselines.is_empty() {
                    format!("save one with `lab baseline {} {name}`", self.dir.display())
                } else {
                    format!(
                        "baselines: {}",
                        baselines.keys().cloned().collect::<Vec<_>>().join(", ")
                    )
                }
            ))
        })
    }
}

/// Records session `session` as baseline `name` in the data folder `data_dir`.
pub fn save_baseline(data_dir: &Path, name: &str, session: &str) -> Result<()> {
    let mut baselines = read_baselines(data_dir)?;
    baselines.insert(name.to_string(), session.to_string());
    super::write_json(&data_dir.join(BASELINES), &baselines)?;
    Ok(())
}

/// The baselines saved in `data_dir`: name → session folder name.
fn read_baselines(data_dir: &Path) -> Result<BTreeMap<String, String>> {
    let path = data_dir.join(BASELINES);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            SessionError::Unreadable(anyhow::anyhow!(
                "{} is not a list of baselines ({e}); fix or delete it",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(SessionError::Unreadable(anyhow::anyhow!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

/// A session folder's name.
pub fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
#[path = "session_ref_tests.rs"]
mod tests;
