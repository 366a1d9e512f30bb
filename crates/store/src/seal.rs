//! Seals kept where no run writes: lab's own state folder (`$LAB_STATE_DIR`, else
//! `$XDG_STATE_HOME/lab`, else `~/.local/state/lab`, as the XDG Base Directory Specification
//! places state) holds one record per file lab seals — a session's manifest.json, an
//! experiment's baselines.json — keyed by the file's absolute path: a record made when lab
//! created the session, and the SHA-256 of the file as lab last wrote it. The manifest holds
//! the digests of every other session file, so the record's digest covers the whole session;
//! a run that rewrites a session and its manifest's digests cannot rewrite lab's record.
//!
//! A session is *recorded* when lab holds its record, or when its manifest is committed to git
//! (a fresh clone has no state, and git keeps what was committed); any other is *unrecorded*:
//! still readable, named by a notice, and never the one `latest`, `previous` or the book's
//! newest session means while a recorded one exists. [`verify`] is the one check every reader
//! of a session goes through (by [`crate::load_session`]).

use anyhow::{Context, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The variable that places lab's state folder, before `XDG_STATE_HOME`.
pub const STATE_VAR: &str = "LAB_STATE_DIR";

/// Where lab keeps what it knows of the sessions it wrote, if anywhere.
pub fn state_dir() -> Option<PathBuf> {
    // A unit test keeps its records in its own folder, or none.
    #[cfg(test)]
    return tests::STATE.with(|s| s.borrow().clone());
    #[cfg(not(test))]
    state_dir_from_env()
}

#[cfg(not(test))]
fn state_dir_from_env() -> Option<PathBuf> {
    let set = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    set(STATE_VAR)
        .or_else(|| set("XDG_STATE_HOME").map(|d| d.join("lab")))
        .or_else(|| set("HOME").map(|h| h.join(".local/state/lab")))
}

/// What lab recorded of one file it sealed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Record {
    path: String,
    /// SHA-256 of the file as lab last wrote it; `None` while its session runs.
    sha256: Option<String>,
}

/// `path` made absolute, its folder's links resolved, so that each file has one key.
fn absolute(path: &Path) -> PathBuf {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return path.to_path_buf();
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    parent
        .canonicalize()
        .or_else(|_| std::path::absolute(parent))
        .map_or_else(|_| path.to_path_buf(), |p| p.join(name))
}

/// The record file of `file` in the state folder `state`.
fn record_path(state: &Path, file: &Path) -> PathBuf {
    let key = crate::sha256_hex(absolute(file).as_os_str().as_encoded_bytes());
    state.join("seals").join(format!("{}.json", &key[..40]))
}

/// Whether `dir` is a folder lab is still assembling (its records are made once it is moved
/// into place under its own name).
fn staging(dir: &Path) -> bool {
    dir.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

fn write_record(file: &Path, sha256: Option<String>) -> Result<()> {
    let Some(state) = state_dir() else {
        return Ok(());
    };
    let record = Record {
        path: absolute(file).to_string_lossy().into_owned(),
        sha256,
    };
    let path = record_path(&state, file);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create lab's state folder {}", parent.display()))?;
    }
    crate::write_json(&path, &record)
}

fn read_record(file: &Path) -> Option<Record> {
    let path = record_path(&state_dir()?, file);
    let bytes = crate::read_regular(&path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Records that lab created the session in `dir`, which is not closed yet.
pub fn record_open(dir: &Path) -> Result<()> {
    if staging(dir) {
        return Ok(());
    }
    write_record(&dir.join(crate::MANIFEST), None)
}

/// Seals the session in `dir` as closed: the digest of its manifest as it is now.
pub fn record_closed(dir: &Path) -> Result<()> {
    if staging(dir) {
        return Ok(());
    }
    seal_file(&dir.join(crate::MANIFEST))
}

/// Seals `file` (an experiment's baselines.json) as lab wrote it.
pub fn seal_file(file: &Path) -> Result<()> {
    write_record(file, Some(crate::sha256_file(file)?))
}

/// How lab knows a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Lab created it and sealed it when it closed.
    Sealed,
    /// Lab created it; it has not closed.
    Open,
    /// Its manifest is committed to git, and lab holds no record of it (a fresh clone).
    Committed,
    /// Neither lab's state nor git knows it: lab did not write it here.
    Unrecorded,
}

impl Standing {
    /// Whether lab may pick the session by itself (`latest`, `previous`, the book's newest).
    pub fn recorded(self) -> bool {
        self != Standing::Unrecorded
    }
}

/// What [`verify`] found: how lab knows the session, and the first way it is damaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub standing: Standing,
    pub damage: Option<String>,
}

/// Whether the session in `dir` is what lab sealed: its manifest against lab's record (or
/// git's), every file the manifest seals (the packed logs among them) against its digest.
/// The one check behind every reader; the damage is worded alike wherever it is shown.
pub fn verify(dir: &Path, manifest: &crate::Manifest) -> Verified {
    let file = dir.join(crate::MANIFEST);
    let (standing, damage) = match read_record(&file) {
        Some(record) => (
            record
                .sha256
                .as_ref()
                .map_or(Standing::Open, |_| Standing::Sealed),
            manifest_damage(&file, &record, manifest),
        ),
        None if committed(dir) => (Standing::Committed, changed_since_commit(dir)),
        None => (Standing::Unrecorded, None),
    };
    Verified {
        standing,
        damage: damage.or_else(|| unsealed_file(dir, &manifest.digests)),
    }
}

fn manifest_damage(file: &Path, record: &Record, manifest: &crate::Manifest) -> Option<String> {
    let Some(sealed) = &record.sha256 else {
        // Open: lab writes the digests only as it closes the session.
        return (!manifest.digests.is_empty())
            .then(|| format!("{} holds digests lab did not seal", crate::MANIFEST));
    };
    let now = crate::sha256_file(file);
    differs(crate::MANIFEST, sealed, now)
}

/// The wording of a sealed file that changed or cannot be read; `None` when it holds.
fn differs(name: &str, sealed: &str, now: Result<String>) -> Option<String> {
    differs_from(name, "the session was sealed with", sealed, now)
}

fn differs_from(name: &str, kept: &str, sealed: &str, now: Result<String>) -> Option<String> {
    match now {
        Ok(now) if now == sealed => None,
        Ok(now) => Some(format!(
            "{name} is not the file {kept} (its SHA-256 was {}, it is {} now)",
            &sealed[..sealed.len().min(12)],
            &now[..12]
        )),
        Err(_) => Some(format!("{name}, the file {kept}, cannot be read")),
    }
}

/// The first session file whose bytes are not those the session was sealed with, described;
/// `None` when every digest holds (or none was sealed: sessions from before lab sealed them,
/// and sessions still running).
fn unsealed_file(
    dir: &Path,
    digests: &std::collections::BTreeMap<String, String>,
) -> Option<String> {
    digests.iter().find_map(|(name, sealed)| {
        let now = crate::sha256_file(&dir.join(name));
        differs(name, sealed, now)
    })
}

/// Runs git in `dir` with `args`; its standard output when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// Whether the manifest of the session in `dir` is committed to git.
fn committed(dir: &Path) -> bool {
    dir.is_dir()
        && git(dir, &["ls-files", "--error-unmatch", "--", crate::MANIFEST])
            .is_some_and(|out| !out.is_empty())
}

/// The manifest of a committed session changed since it was committed, described.
fn changed_since_commit(dir: &Path) -> Option<String> {
    let same = git(dir, &["diff", "--quiet", "HEAD", "--", crate::MANIFEST]).is_some();
    (!same).then(|| format!("{} is not the file committed to git", crate::MANIFEST))
}

/// The session folders under `data_dir` whose manifest is committed to git, by name.
fn committed_sessions(data_dir: &Path) -> BTreeSet<String> {
    let Some(out) = git(data_dir, &["ls-files", "-z", "--", "."]) else {
        return BTreeSet::new();
    };
    out.split(|b| *b == 0)
        .filter_map(|path| {
            let path = std::str::from_utf8(path).ok()?;
            let (session, file) = path.split_once('/')?;
            (file == crate::MANIFEST).then(|| session.to_string())
        })
        .collect()
}

/// Which of `sessions` (folders of `data_dir`) lab wrote or git holds.
pub fn recorded(data_dir: &Path, sessions: &[PathBuf]) -> Vec<bool> {
    let mut committed: Option<BTreeSet<String>> = None;
    sessions
        .iter()
        .map(|dir| {
            read_record(&dir.join(crate::MANIFEST)).is_some() || {
                let committed = committed.get_or_insert_with(|| committed_sessions(data_dir));
                committed.contains(&crate::folder_name(dir))
            }
        })
        .collect()
}

/// Whether `file` (an experiment's baselines.json) is what lab last wrote: the damage
/// described, `None` when it holds or lab holds no record of it.
pub fn sealed_file_damage(file: &Path) -> Option<String> {
    let sealed = read_record(file)?.sha256?;
    let name = file
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let now = crate::sha256_file(file);
    differs_from(&name, "lab wrote", &sealed, now)
}

#[cfg(test)]
#[path = "seal_tests.rs"]
mod tests;
