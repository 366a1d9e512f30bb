//! The commits a bisection walks (`lab bisect EXP GOOD BAD`): the names resolved, the commits
//! after GOOD up to BAD, oldest first, and each one's subject line.

use super::revs::git;
use crate::error::{LabError, Result};
use std::path::Path;

/// The full commit `rev` names in the repository holding `dir`.
pub fn resolve_commit(dir: &Path, rev: &str) -> Result<String> {
    if rev.starts_with('-') {
        return Err(LabError::Usage(format!("{rev:?} is not a commit")));
    }
    git(dir, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")]).map_err(|_| {
        LabError::Usage(format!(
            "{rev:?} is not a commit of the repository holding {}\n  hint: `git log --oneline` lists them",
            dir.display()
        ))
    })
}

/// The commits after `good` up to `bad`, oldest first, on the paths from one to the other;
/// refused when `bad` does not descend from `good`.
pub fn commits_between(dir: &Path, good: &str, bad: &str) -> Result<Vec<String>> {
    let range = format!("{good}..{bad}");
    let listed = git(dir, &["rev-list", "--reverse", "--ancestry-path", &range])
        .map_err(|e| LabError::Usage(format!("cannot list the commits {range}: {e}")))?;
    let commits: Vec<String> = listed.lines().map(str::to_string).collect();
    if commits.last().map(String::as_str) != Some(bad) {
        return Err(LabError::Usage(format!(
            "{} does not come after {}: there is nothing between them to bisect\n  hint: name the good (fast) commit first, then the bad (slow) one",
            &bad[..bad.len().min(12)],
            &good[..good.len().min(12)]
        )));
    }
    Ok(commits)
}

/// The first line of `commit`'s message.
pub fn subject(dir: &Path, commit: &str) -> String {
    git(dir, &["log", "-1", "--format=%s", commit]).unwrap_or_default()
}
