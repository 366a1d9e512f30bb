//! How a session of `lab run` begins: built, calibrated and created anew, or reopened where
//! it stopped under the lab.toml it started with.

use super::host;
use super::options::RunOptions;
use super::revs;
use super::slurm::Engine;
use crate::error::{LabError, Result};
use crate::layout::Layout;
use lab_config::plan::Plan;
use lab_config::plan::{self, PlannedRun};
use lab_config::{self as config, Experiment};
use lab_exec::{self as exec, Runner};
use lab_store::{
    self as store, BuildReport, Manifest, Revisions, Sealed, SessionWriter, StoredSession,
};
use std::collections::BTreeSet;
use std::path::Path;

/// What a session measures: the experiment, its plan, and across which revisions.
pub(super) struct Target {
    pub(super) exp: Experiment,
    pub(super) plan: Plan,
    pub(super) revisions: Option<Revisions>,
}

/// A session ready for its runs: the experiment it runs, its writer and record, and the runs
/// still to go.
pub(super) struct Opened {
    pub(super) exp: Experiment,
    pub(super) writer: SessionWriter,
    pub(super) manifest: Manifest,
    pub(super) todo: Vec<PlannedRun>,
}

/// Builds, calibrates and creates a new session of `target` in `layout`, sealing `sealed`,
/// the files it runs with.
pub(super) fn start(
    layout: &Layout,
    opts: &RunOptions,
    sealed: &Sealed,
    target: &Target,
    runner: &mut dyn Runner,
) -> Result<Opened> {
    let exp = &target.exp;
    let counters = super::host::counters(exp)?;
    let build = build(target, opts.quiet)?;
    let host = store::host();
    host::warn_about(&host, opts.quiet);
    let started = store::now_unix_ms();
    let dir = store::new_session_dir(&layout.data_dir(&exp.name), started);
    warn_if_short_of_space(&dir, target.plan.runs.len());
    let scratch = std::env::temp_dir();
    // On a cluster each node calibrates itself before its first run.
    let calibration = (opts.on == Engine::Local).then(|| {
        let mut c = exec::calibrate(runner, &scratch);
        if let lab_config::StartUp::Subtracted(argv) = &exp.start_up {
            c.start_up = Some(exec::start_up_cost(runner, &scratch, argv));
        }
        c
    });
    let mut manifest = Manifest::new(
        exp,
        &opts.command_line,
        target.plan.runs.len(),
        host,
        started,
    );
    manifest.label = opts.label.map(str::to_string);
    manifest.jobs = (opts.jobs > 1).then_some(opts.jobs);
    manifest.revisions = target.revisions.clone();
    manifest.versions = store::tool_versions(&exp.versions, &exp.dir);
    manifest.build = build;
    if target.revisions.is_none() {
        manifest.sources = exec::record_sources(exp);
    }
    manifest.calibration = calibration;
    manifest.isolation = exec::current_isolation();
    manifest.heap_unshifted = exec::heap_unshifted(exp, &target.plan.runs);
    manifest.waiting = runner.waiting();
    manifest.counters = counters;
    let writer = SessionWriter::create(dir, &manifest, &target.plan, param_names(exp), sealed)?;
    Ok(Opened {
        exp: exp.clone(),
        writer,
        manifest,
        todo: target.plan.runs.clone(),
    })
}

/// Warns when the file system the session goes to has less room than its `runs` are likely
/// to write: a full disk stops a session midway.
fn warn_if_short_of_space(dir: &Path, runs: usize) {
    let Some(existing) = dir.ancestors().find(|a| a.is_dir()) else {
        return;
    };
    let (Some(free), likely) = (
        store::space::free_bytes(existing),
        store::space::likely_bytes(runs),
    ) else {
        return;
    };
    if free < likely {
        eprintln!(
            "warning: {} has {} free; a session of {runs} runs is likely to write about {} (rows and logs), and stops when the disk is full",
            existing.display(),
            lab_config::format::memory(free as f64),
            lab_config::format::memory(likely as f64)
        );
    }
}

/// Builds the experiment, in each revision's worktree for a session across revisions.
fn build(target: &Target, quiet: bool) -> Result<Option<BuildReport>> {
    let exp = &target.exp;
    if target.revisions.is_some() {
        return revs::build_each(exp, quiet);
    }
    if !quiet && exp.build.is_some() {
        eprintln!("building {}…", exp.name);
    }
    Ok(exec::build(exp)?)
}

/// Reopens the latest unfinished session under the lab.toml it started with, sets aside what
/// a kill left half-written, and returns the runs it is missing.
pub(super) fn resume(layout: &Layout, opts: &RunOptions, today: Experiment) -> Result<Opened> {
    let stored = unfinished(layout, opts, &today)?;
    let exp = resumed_experiment(&stored, today)?;
    // The kernel's permission may have changed since the session started: asked again.
    let counters = host::counters(&exp)?;
    let exp = match &stored.manifest.revisions {
        Some(revisions) => {
            let exp = revs::reopened(layout, exp, revisions)?;
            revs::build_each(&exp, opts.quiet)?;
            exp
        }
        None => {
            exec::build(&exp)?;
            exp
        }
    };
    let done: BTreeSet<&str> = stored.runs.iter().map(|r| r.run_id.as_str()).collect();
    let todo: Vec<PlannedRun> = stored
        .plan
        .runs
        .iter()
        .filter(|r| !done.contains(r.id.as_str()))
        .cloned()
        .collect();
    let mut manifest = stored.manifest.clone();
    manifest.resumed += 1;
    manifest.isolation = weakest(manifest.isolation.take(), exec::current_isolation());
    manifest.counters = counters;
    for why in exec::heap_unshifted(&exp, &todo) {
        if !manifest.heap_unshifted.contains(&why) {
            manifest.heap_unshifted.push(why);
        }
    }
    let mut writer = SessionWriter::reopen(stored.dir.clone())?;
    if manifest.time_stop.take().is_some() {
        // A session its time budget stopped takes up sampling again under a new budget: the
        // looks that follow read the manifest, which must no longer say it stopped.
        manifest.complete = false;
        writer.record(&manifest)?;
    }
    // A resumed session continues under its sealed lab.toml, which may pin fewer variants.
    host::check_jobs(&exp, opts, manifest.revisions.is_some())?;
    Ok(Opened {
        exp,
        writer,
        manifest,
        todo,
    })
}

/// Of the protections a session started with and those it resumed with, the weaker: a
/// session is only as protected as its least protected runs.
fn weakest(
    started: Option<store::IsolationRecord>,
    resumed: Option<store::IsolationRecord>,
) -> Option<store::IsolationRecord> {
    match (started, resumed) {
        (Some(s), Some(r)) if r.why.len() > s.why.len() => Some(r),
        (Some(s), _) => Some(s),
        (None, _) => None,
    }
}

/// The latest session of the experiment, repaired and read back, when it may be resumed with
/// these options: unfinished or stopped by its time budget, not a cluster's (unless resumed
/// on one), same profile.
fn unfinished(layout: &Layout, opts: &RunOptions, today: &Experiment) -> Result<StoredSession> {
    let sessions = store::SessionList::new(&today.name, &today.dir, &layout.data_dir(&today.name));
    let Some(dir) = sessions.latest() else {
        return Err(LabError::Usage(format!(
            "nothing to resume: {} has no session yet",
            today.name
        )));
    };
    let name = session_name(&dir);
    for tail in store::repair(&dir)? {
        eprintln!("note: session {name}: {}", tail.describe());
    }
    let stored = store::load_session(&dir)?;
    if stored.manifest.complete && stored.manifest.time_stop.is_none() {
        return Err(LabError::Usage(format!(
            "nothing to resume: the latest session {name} is complete"
        )));
    }
    if stored.manifest.cluster.is_some() && opts.on == Engine::Local {
        return Err(LabError::Usage(format!(
            "session {name} ran on a cluster: its shards hold runs not merged yet\n  hint: `lab run {} --on slurm --resume` merges them and submits the missing runs",
            today.dir.display()
        )));
    }
    if stored.manifest.profile.as_deref() != opts.profile {
        return Err(LabError::Usage(format!(
            "cannot resume {name}: it ran with profile {}, not {}\n  hint: `lab run {} --resume{}`",
            stored.manifest.profile.as_deref().unwrap_or("default"),
            opts.profile.unwrap_or("default"),
            today.dir.display(),
            stored
                .manifest
                .profile
                .as_deref()
                .map_or(String::new(), |p| format!(" --profile {p}"))
        )));
    }
    Ok(stored)
}

/// The experiment a resumed session continues: its sealed lab.toml. A session from before
/// sealing continues only when today's file gives the same plan.
fn resumed_experiment(stored: &StoredSession, today: Experiment) -> Result<Experiment> {
    let Some(sealed) = &stored.sealed else {
        let fresh = plan::plan(&today).runs;
        // Runs planned again after a busy machine follow the original plan.
        if !stored.plan.runs.starts_with(&fresh) {
            return Err(LabError::Usage(format!(
                "cannot resume {}: lab.toml or the profile changed since it started, so the plan differs",
                stored.name
            )));
        }
        return Ok(today);
    };
    let file = stored.dir.join(store::SEALED).join(config::FILE_NAME);
    let exp = config::parse(
        &sealed.lab_toml,
        &file,
        &today.dir,
        stored.manifest.profile.as_deref(),
    )?;
    if exp.source_hash != today.source_hash {
        eprintln!(
            "note: {} has changed since session {} started; it continues with the lab.toml it started with",
            today.file.display(),
            stored.name
        );
    }
    Ok(exp)
}

/// A session's name: its folder's.
pub(super) fn session_name(dir: &Path) -> String {
    dir.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

fn param_names(exp: &Experiment) -> Vec<String> {
    exp.params.iter().map(|p| p.name.clone()).collect()
}
