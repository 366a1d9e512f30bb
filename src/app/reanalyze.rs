//! `lab reanalyze`: today's lab.toml applied to a stored session's kept raw output, as a new
//! derived session that names its parent. The parent stays untouched; nothing is run. This is
//! how a fixed metric regex or a new check reaches old data.

use super::find_session;
use super::report::{ReportOptions, report};
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_config::plan::{self, CellKey};
use lab_config::{self as config, Experiment};
use lab_exec::MetricReader;
use lab_store::{self as store, RunRow, SampleRow, Sealed, SessionRef, StoredSession};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct ReanalyzeArgs {
    /// The experiment folder or its name.
    pub experiment: PathBuf,
    /// The session to re-read (default: the latest).
    #[arg(long)]
    pub session: Option<SessionRef>,
}

impl ReanalyzeArgs {
    /// `lab reanalyze`: writes the derived session and its chapter.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        reanalyze(layout, &self.experiment, self.session.as_ref(), quiet)
    }
}

/// Re-reads the chosen (or latest) session of `arg` under today's lab.toml into a new
/// session, renders its chapter, and returns how lab ends.
pub fn reanalyze(
    layout: &Layout,
    arg: &Path,
    which: Option<&SessionRef>,
    quiet: bool,
) -> Result<Exit> {
    let dir = layout.experiment_dir(arg)?;
    let parent_dir = find_session(layout, &dir, which)?.ok_or_else(|| {
        LabError::Usage(format!(
            "{} has no session to re-analyse\n  hint: run `lab run {}` first",
            config::experiment_name(&dir),
            dir.display()
        ))
    })?;
    let parent = store::load_session(&parent_dir)?;
    if let Some(damage) = parent.damage() {
        return Err(LabError::Other(anyhow::anyhow!(
            "{damage}\n  hint: a damaged session is not analysed again; re-run the experiment to measure again"
        )));
    }
    let sealed = Sealed::read(&dir)?;
    let file = dir.join(config::FILE_NAME);
    let exp = config::parse(
        &sealed.lab_toml,
        &file,
        &dir,
        parent.manifest.profile.as_deref(),
    )?;
    same_commands(&exp, &parent)?;
    let rows = reread(&exp, &parent)?;
    let mut manifest = parent.manifest.clone();
    manifest.derived_from = Some(parent.name.clone());
    // Re-analysed, it is read with today's analysis; its chapter names its parent.
    manifest.analysis = store::ANALYSIS;
    manifest.experiment_file_hash = exp.source_hash.clone();
    let target = store::new_session_dir(&layout.data_dir(&exp.name), store::now_unix_ms());
    let columns = store::param_columns(&parent.dir)?;
    store::write_derived(&parent, &target, &manifest, &sealed, &columns, &rows)?;
    let name = target
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    if !quiet {
        eprintln!("{}", reread_line(&name, &rows, &parent, &file));
    }
    report(
        layout,
        &ReportOptions {
            only: &[dir],
            session: Some(&name),
            quiet,
            summary: crate::chapter::summary::Wanted::Verdict,
        },
    )?;
    Ok(Exit::Ok)
}

/// Every run of the parent with the values today's metrics read from its stored log. A log
/// whose bytes are not the ones recorded when its run ended (`stdout_sha256`) was changed
/// since, by a later run or by hand: the session is damaged, and nothing is re-read. (Rows
/// without a digest, imported results, have no log to check.)
fn reread(exp: &Experiment, parent: &StoredSession) -> Result<Vec<(RunRow, Vec<SampleRow>)>> {
    let reader = MetricReader::new(&exp.metrics);
    parent
        .runs
        .iter()
        .map(|row| {
            let log = parent.stdout(row);
            let (scan, samples) = reader.read_log(&log, &row.run_id);
            let recorded = row.stdout_sha256.len() == 64;
            if recorded && scan.sha256 != row.stdout_sha256 {
                return Err(LabError::Other(anyhow::anyhow!(
                    "session {} is damaged: {} is not what run {} printed (its SHA-256 was {} when the run ended, it is {} now)\n  hint: the stored values stand as they were recorded; re-run the experiment to measure again",
                    parent.name,
                    log,
                    row.run_id,
                    short(&row.stdout_sha256),
                    short(&scan.sha256)
                )));
            }
            Ok((row.clone(), samples))
        })
        .collect()
}

/// The first 12 hex digits of a digest.
fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// What was re-read, and with which lab.toml.
fn reread_line(
    name: &str,
    rows: &[(RunRow, Vec<SampleRow>)],
    parent: &StoredSession,
    file: &Path,
) -> String {
    let values: usize = rows.iter().map(|(_, s)| s.len()).sum();
    format!(
        "session {name}: {} runs of {} re-read with today's {} ({values} values; {} before)",
        rows.len(),
        parent.name,
        file.display(),
        parent.samples.len()
    )
}

/// Re-analysis reads what ran; it cannot change what ran. Today's lab.toml must give every
/// cell of the session the command it ran with.
fn same_commands(exp: &Experiment, parent: &StoredSession) -> Result<()> {
    let today: BTreeMap<CellKey, std::sync::Arc<[String]>> = plan::plan(exp)
        .runs
        .into_iter()
        .map(|r| (r.cell, r.argv))
        .collect();
    for run in &parent.plan.runs {
        match today.get(&run.cell) {
            Some(argv) if *argv == run.argv => {}
            found => {
                return Err(LabError::Usage(format!(
                    "cannot re-analyse session {}: today's {} {} for {} (it ran {})\n  hint: re-analysis re-reads what ran; a changed command or matrix needs `lab run`",
                    parent.name,
                    exp.file.display(),
                    match found {
                        Some(argv) => format!("runs {}", lab_render::shell_words(argv)),
                        None => "has no such cell".to_string(),
                    },
                    run.cell,
                    lab_render::shell_words(&run.argv)
                )));
            }
        }
    }
    Ok(())
}
