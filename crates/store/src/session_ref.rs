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
    /// Those lab may pick by itself, oldest first: the recorded ones (see [`super::seal`]),
    /// or every one when none is recorded.
    pub pickable: Vec<PathBuf>,
}

impl SessionList {
    /// The sessions of the experiment `experiment` in folder `dir`, stored in `data_dir`.
    pub fn new(experiment: &str, dir: &Path, data_dir: &Path) -> SessionList {
        let all = super::sessions(data_dir);
        SessionList {
            experiment: experiment.to_string(),
            dir: dir.to_path_buf(),
            data_dir: data_dir.to_path_buf(),
            pickable: pickable(data_dir, &all),
            all,
        }
    }

    /// The newest session lab may pick by itself, if the experiment has one.
    pub fn latest(&self) -> Option<PathBuf> {
        self.pickable.last().cloned()
    }

    /// A notice for the session `dir` when lab would never pick it by itself: lab has no
    /// record of writing it and git does not hold it, while other sessions are recorded.
    pub fn unrecorded(&self, dir: &Path) -> Option<String> {
        (!self.pickable.iter().any(|d| d == dir)).then(|| {
            format!(
                "session {} is unrecorded: lab has no record of writing it here and git does not hold it, so lab never takes it for the latest session",
                folder_name(dir)
            )
        })
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
            SessionRef::Baseline(name) => self.saved(name),
        }
    }

    /// The session saved as baseline `name`, which lab must have written (or git hold).
    fn saved(&self, name: &str) -> Result<PathBuf> {
        let dir = self.named(&self.baseline(name)?)?;
        if self.pickable.contains(&dir) {
            return Ok(dir);
        }
        Err(SessionError::Unreadable(anyhow::anyhow!(
            "baseline {name} of {} names session {}, which lab has no record of writing\n  hint: save the baseline again with `lab baseline`",
            self.experiment,
            folder_name(&dir)
        )))
    }

    /// The `k`th session from the newest (1: the newest).
    fn counted_back(&self, k: usize, word: &str) -> Result<PathBuf> {
        let n = self.pickable.len();
        n.checked_sub(k)
            .map(|i| self.pickable[i].clone())
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

/// The sessions of `all` (folders of `data_dir`) lab may pick by itself: the recorded ones,
/// or every one when none is (sessions copied from elsewhere, or written before lab kept
/// records).
fn pickable(data_dir: &Path, all: &[PathBuf]) -> Vec<PathBuf> {
    let recorded = super::seal::recorded(data_dir, all);
    if !recorded.contains(&true) {
        return all.to_vec();
    }
    all.iter()
        .zip(recorded)
        .filter(|(_, known)| *known)
        .map(|(dir, _)| dir.clone())
        .collect()
}

/// Records session `session` as baseline `name` in the data folder `data_dir`, and seals
/// the list as lab wrote it.
pub fn save_baseline(data_dir: &Path, name: &str, session: &str) -> Result<()> {
    let mut baselines = read_baselines(data_dir)?;
    baselines.insert(name.to_string(), session.to_string());
    let path = data_dir.join(BASELINES);
    super::write_json(&path, &baselines)?;
    super::seal::seal_file(&path)?;
    Ok(())
}

/// The baselines saved in `data_dir`: name → session folder name. A list that is not the
/// one lab last wrote is refused as damaged.
fn read_baselines(data_dir: &Path) -> Result<BTreeMap<String, String>> {
    let path = data_dir.join(BASELINES);
    if let Some(why) = super::seal::sealed_file_damage(&path) {
        return Err(SessionError::Unreadable(anyhow::anyhow!(
            "the baselines of {} are damaged: {why}\n  hint: save the baseline again with `lab baseline`",
            data_dir.display()
        )));
    }
    if std::fs::symlink_metadata(&path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Ok(BTreeMap::new());
    }
    let bytes = super::read_regular(&path)?;
    serde_json::from_slice(&bytes).map_err(|e| {
        SessionError::Unreadable(anyhow::anyhow!(
            "{} is not a list of baselines ({e}); fix or delete it",
            path.display()
        ))
    })
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
