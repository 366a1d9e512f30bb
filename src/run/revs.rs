//! `lab run EXP --revs BASE,HEAD`: the experiment measured at two git revisions in one
//! session. Each revision is checked out once in a git worktree under `.lab/worktrees/`
//! (outside data/), built there with the experiment's `[build]`, and its runs interleave with
//! the other revision's in the same shuffled blocks, so that drift and noisy neighbours hit
//! both alike. The session records both commits; its comparison, HEAD/BASE per cell, is judged
//! against a noise threshold. Sampled (`repetitions = { min, max }` or `--until-decided MAX`),
//! it adds runs look by look to the cells whose comparison is still inconclusive.

use crate::assess::sampled;
use crate::error::{LabError, Result};
use crate::layout::Layout;
use lab_config::{Experiment, REV_PARAM};
use lab_store::{BuildReport, Pairing, Revision, Revisions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where worktrees live, relative to the project root.
const WORKTREES: &str = ".lab/worktrees";

/// The two revisions `--revs` names, checked: exactly two, distinct, no empty name.
pub fn parse_revs(text: &str) -> Result<Vec<String>> {
    let revs: Vec<String> = text.split(',').map(|r| r.trim().to_string()).collect();
    match revs.as_slice() {
        [a, b]
            if !a.is_empty()
                && !b.is_empty()
                && a != b
                && !a.starts_with('-')
                && !b.starts_with('-') =>
        {
            Ok(revs)
        }
        _ => Err(LabError::Usage(format!(
            "--revs {text:?}: name two different git revisions, base first\n  hint: --revs HEAD~1,HEAD or --revs main,my-branch"
        ))),
    }
}

/// Where a pull request's head left `base`: the commits of `git merge-base BASE HEAD` and of
/// `HEAD` in the repository holding `dir`. Comparing with the merge-base rather than the tip
/// of `base` measures the pull request's own change, not what landed on `base` since.
pub fn merge_base(dir: &Path, base: &str) -> Result<[String; 2]> {
    if base.starts_with('-') || base.is_empty() {
        return Err(LabError::Usage(format!(
            "--base {base:?}: name the branch the pull request goes into\n  hint: --base main"
        )));
    }
    let head = git(dir, &["rev-parse", "--verify", "HEAD^{commit}"]).map_err(|e| {
        LabError::Usage(format!(
            "{} is not in a git repository with a commit: {e}\n  hint: run lab ci in a checkout of the pull request",
            dir.display()
        ))
    })?;
    let found = git(dir, &["merge-base", base, "HEAD"]).map_err(|e| {
        let why = if e.is_empty() { "no common ancestor".to_string() } else { e };
        LabError::Usage(format!(
            "cannot find where HEAD left {base}: {why}\n  hint: fetch the branch with its history (`git fetch origin {base}` and `--base origin/{base}`; in GitHub Actions, `fetch-depth: 0`)"
        ))
    })?;
    Ok([found, head])
}

/// Whether the work tree of the repository holding `dir` has changes not committed (files
/// git ignores aside).
pub fn uncommitted(dir: &Path) -> bool {
    git(dir, &["status", "--porcelain", "--untracked-files=no"]).is_ok_and(|s| !s.is_empty())
}

/// Whether `relative` (a path in the repository holding `dir`) exists at `commit`.
pub fn exists_at(dir: &Path, commit: &str, relative: &Path) -> bool {
    let spec = format!("{commit}:{}", relative.display());
    git(dir, &["cat-file", "-e", &spec]).is_ok()
}

/// What `--revs` and the options beside it ask for.
pub(super) struct Asked<'a> {
    /// BASE, HEAD.
    pub names: &'a [String],
    /// Changes within ± this share count as noise.
    pub threshold: f64,
    /// `--until-decided MAX`: sample the inconclusive cells up to MAX runs each.
    pub until_decided: Option<u32>,
    /// `--duet`: run each pair of runs, one of each revision, at the same time.
    pub duet: bool,
}

/// The experiment across the revisions `asked` names, with each resolved to a commit and
/// checked out in its worktree; fails before anything runs if a revision is unknown or lacks
/// the experiment, or if `--until-decided` allows fewer runs than lab.toml starts with.
pub(super) fn across(
    layout: &Layout,
    exp: Experiment,
    asked: &Asked,
) -> Result<(Experiment, Revisions)> {
    let revs = asked.names;
    check_budget(&exp, asked.until_decided)?;
    if exp.workdir.is_some() {
        return Err(LabError::Usage(format!(
            "{}: `workdir` runs every revision in one folder, so --revs cannot compare them\n  hint: remove `workdir` from [experiment] to run each revision in its own worktree",
            exp.file.display()
        )));
    }
    if exp.param(REV_PARAM).is_some() {
        return Err(LabError::Usage(format!(
            "{}: the parameter `{REV_PARAM}` is the one --revs adds\n  hint: rename the parameter in [params]",
            exp.file.display()
        )));
    }
    let duet = asked
        .duet
        .then(|| duet_sides(&exp, &lab_exec::allowed_cpus()))
        .transpose()?;
    let repo = Repository::holding(&exp.dir)?;
    let mut dirs = BTreeMap::new();
    let mut record = Vec::new();
    for rev in revs {
        let commit = repo.resolve(rev)?;
        let dir = repo.checkout(layout, &commit, rev)?.join(&repo.relative);
        if !dir.join(lab_config::FILE_NAME).is_file() {
            return Err(LabError::Usage(format!(
                "{} has no {} at {rev} ({}): the experiment did not exist there\n  hint: choose a revision that has it",
                repo.relative.display(),
                lab_config::FILE_NAME,
                short(&commit)
            )));
        }
        dirs.insert(rev.clone(), dir);
        record.push(Revision {
            name: rev.clone(),
            commit,
        });
    }
    let revisions = Revisions {
        revs: record,
        threshold: asked.threshold,
        confirms: None,
        until_decided: asked.until_decided,
        pairing: if duet.is_some() {
            Pairing::Duet
        } else {
            Pairing::Blocks
        },
        duet,
    };
    Ok((
        sampled(exp.across_revisions(revs, dirs), &revisions),
        revisions,
    ))
}

/// The two CPU sets of a duet: each side as many CPUs as the variant asking for the most
/// (`cpus`; one where none asks), the first of the CPUs lab may use for one side and the next
/// for the other. Refused when `allowed` has too few for two disjoint sides.
pub(super) fn duet_sides(exp: &Experiment, allowed: &[usize]) -> Result<lab_config::DuetSides> {
    let widest = exp
        .variants
        .iter()
        .map(|v| (v.cpus.as_ref().map_or(1, Vec::len), v.name.as_str()))
        .max_by_key(|(n, _)| *n)
        .unwrap_or((1, ""));
    let each = widest.0;
    if allowed.len() < 2 * each {
        let why = if each > 1 {
            format!("variant {} asks for {each} CPUs (`cpus`), so", widest.1)
        } else {
            "each run gets one CPU, so".to_string()
        };
        return Err(LabError::Usage(format!(
            "--duet runs a base and a head run at the same time on disjoint CPUs: {why} it needs {} CPUs, and lab may use {} here ({})\n  hint: drop --duet to interleave the revisions one run at a time, or run on a machine with more CPUs",
            2 * each,
            allowed.len(),
            cpu_list(allowed)
        )));
    }
    Ok([allowed[..each].to_vec(), allowed[each..2 * each].to_vec()])
}

/// "0,1,2": CPUs as a list, or "none".
pub(crate) fn cpu_list(cpus: &[usize]) -> String {
    if cpus.is_empty() {
        return "none".into();
    }
    cpus.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// A resumed duet needs its two sides' CPUs here still.
fn check_duet_cpus(revisions: &Revisions) -> Result<()> {
    let Some(sides) = &revisions.duet else {
        return Ok(());
    };
    let allowed = lab_exec::allowed_cpus();
    let missing: Vec<usize> = sides
        .iter()
        .flatten()
        .filter(|c| !allowed.contains(c))
        .copied()
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(LabError::Usage(format!(
        "the session ran in duet on CPUs {} and {}, but lab may not use CPU {} here\n  hint: resume it where those CPUs are free to use",
        cpu_list(&sides[0]),
        cpu_list(&sides[1]),
        cpu_list(&missing)
    )))
}

/// `--until-decided MAX` below lab.toml's (least) runs per cell leaves nothing to add.
fn check_budget(exp: &Experiment, until_decided: Option<u32>) -> Result<()> {
    match until_decided {
        Some(max) if max < exp.repetitions => Err(LabError::Usage(format!(
            "--until-decided {max}: {} starts with {} runs per cell, more than {max}\n  hint: give a MAX of at least {}",
            exp.file.display(),
            exp.repetitions,
            exp.repetitions
        ))),
        _ => Ok(()),
    }
}

/// The experiment a session across revisions ran: its own lab.toml with the `rev` parameter
/// and the worktrees of the recorded commits (checked out again if they were removed).
pub(super) fn reopened(
    layout: &Layout,
    exp: Experiment,
    revisions: &Revisions,
) -> Result<Experiment> {
    check_duet_cpus(revisions)?;
    let repo = Repository::holding(&exp.dir)?;
    let mut dirs = BTreeMap::new();
    for r in &revisions.revs {
        let dir = repo
            .checkout(layout, &r.commit, &r.name)?
            .join(&repo.relative);
        dirs.insert(r.name.clone(), dir);
    }
    let names: Vec<String> = revisions.revs.iter().map(|r| r.name.clone()).collect();
    Ok(sampled(exp.across_revisions(&names, dirs), revisions))
}

/// Builds the experiment in every revision's worktree; the last revision's report is kept.
pub(super) fn build_each(exp: &Experiment, quiet: bool) -> Result<Option<BuildReport>> {
    let mut report = None;
    for (rev, dir) in &exp.revision_dirs {
        if !quiet && exp.build.is_some() {
            eprintln!("building {} at {rev}…", exp.name);
        }
        let at = Experiment {
            dir: dir.clone(),
            ..exp.clone()
        };
        report = lab_exec::build(&at)
            .map_err(|e| LabError::Usage(format!("the build at {rev} failed: {e}")))?;
    }
    Ok(report)
}

/// The git repository holding an experiment, and the experiment's folder inside it.
struct Repository {
    top: PathBuf,
    relative: PathBuf,
}

impl Repository {
    fn holding(dir: &Path) -> Result<Repository> {
        let top = git(dir, &["rev-parse", "--show-toplevel"]).map_err(|e| {
            LabError::Usage(format!(
                "--revs needs the experiment in a git repository: {e}\n  hint: run `git init` and commit, or run without --revs"
            ))
        })?;
        let top = PathBuf::from(top);
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let relative = canonical(dir)
            .strip_prefix(canonical(&top))
            .map(Path::to_path_buf)
            .map_err(|_| {
                LabError::Usage(format!(
                    "{} is not inside the repository at {}",
                    dir.display(),
                    top.display()
                ))
            })?;
        Ok(Repository { top, relative })
    }

    /// The full commit a revision names.
    fn resolve(&self, rev: &str) -> Result<String> {
        git(&self.top, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
            .map_err(|_| {
                LabError::Usage(format!(
                    "--revs: {rev:?} is not a commit of the repository at {}\n  hint: `git log --oneline` lists them",
                    self.top.display()
                ))
            })
    }

    /// The worktree of `commit` under the project root, created when missing.
    fn checkout(&self, layout: &Layout, commit: &str, rev: &str) -> Result<PathBuf> {
        let root = layout.root.join(WORKTREES);
        std::fs::create_dir_all(&root).map_err(|e| {
            LabError::Other(anyhow::anyhow!("cannot create {}: {e}", root.display()))
        })?;
        // Worktrees are never part of the project: git ignores the folder itself.
        let ignore = root.join(".gitignore");
        if !ignore.exists() {
            let _ = std::fs::write(&ignore, "*\n");
        }
        let path = root.join(short(commit));
        let at = git(&path, &["rev-parse", "HEAD"]).ok();
        if path.is_dir() && at.as_deref() == Some(commit) {
            return Ok(path);
        }
        if path.exists() {
            let _ = git(
                &self.top,
                &["worktree", "remove", "--force", &path.to_string_lossy()],
            );
            let _ = std::fs::remove_dir_all(&path);
        }
        let _ = git(&self.top, &["worktree", "prune"]);
        git(
            &self.top,
            &[
                "worktree",
                "add",
                "--detach",
                "--force",
                &path.to_string_lossy(),
                commit,
            ],
        )
        .map_err(|e| {
            LabError::Other(anyhow::anyhow!(
                "cannot check out {rev} ({}) in {}: {e}",
                short(commit),
                path.display()
            ))
        })?;
        Ok(path)
    }
}

/// Runs git in `dir`; its trimmed stdout, or its stderr as the error.
pub(super) fn git(dir: &Path, args: &[&str]) -> std::result::Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn experiment(cpus: &[Option<&str>]) -> Experiment {
        let mut src =
            String::from("[experiment]\ntitle = \"t\"\nhypothesis = \"h\"\nrepetitions = 3\n");
        for (i, c) in cpus.iter().enumerate() {
            src.push_str(&format!("[[variant]]\nname = \"v{i}\"\nrun = [\"true\"]\n"));
            if let Some(c) = c {
                src.push_str(&format!("cpus = \"{c}\"\n"));
            }
        }
        lab_config::parse(&src, Path::new("lab.toml"), Path::new("x"), None).unwrap()
    }

    #[test]
    fn each_side_of_a_duet_gets_as_many_cpus_as_the_widest_variant_asks() {
        let one = experiment(&[None, None]);
        assert_eq!(duet_sides(&one, &[0, 1]).unwrap(), [vec![0], vec![1]]);
        assert_eq!(duet_sides(&one, &[2, 5, 7]).unwrap(), [vec![2], vec![5]]);
        let wide = experiment(&[Some("0"), Some("0-1")]);
        assert_eq!(
            duet_sides(&wide, &[0, 1, 2, 3]).unwrap(),
            [vec![0, 1], vec![2, 3]]
        );
    }

    #[test]
    fn a_duet_is_refused_where_two_sides_do_not_fit() {
        let err = duet_sides(&experiment(&[None]), &[3])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("each run gets one CPU, so it needs 2 CPUs, and lab may use 1 here (3)"),
            "{err}"
        );
        let err = duet_sides(&experiment(&[None, Some("0-1")]), &[0, 1, 2])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("variant v1 asks for 2 CPUs (`cpus`), so it needs 4 CPUs, and lab may use 3 here (0,1,2)"),
            "{err}"
        );
        assert!(err.contains("hint: drop --duet"), "{err}");
    }
}
