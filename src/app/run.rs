//! `lab run`: plan, build, calibrate, execute and store a session, then render the book.

use super::{Layout, report};
use crate::config::{self, CheckKind, Experiment};
use crate::error::{EXIT_INTERRUPTED, EXIT_OK, LabError, Result};
use crate::exec::{self, Ending, Progress, Runner};
use crate::plan::CellKey;
use crate::plan::{self, Plan};
use crate::render;
use crate::store::{self, Manifest, SessionWriter, StoredSession};
use std::collections::BTreeMap;
use std::path::Path;

/// What `lab run` was asked to do.
pub struct RunOptions<'a> {
    pub profile: Option<&'a str>,
    pub dry_run: bool,
    pub resume: bool,
    pub quiet: bool,
}

/// `lab run`: returns the exit code.
pub fn run(layout: &Layout, arg: &Path, opts: &RunOptions, runner: &mut dyn Runner) -> Result<i32> {
    let dir = layout.experiment_dir(arg)?;
    let exp = config::load(&dir, opts.profile)?;
    for w in &exp.warnings {
        eprintln!("warning: {w}");
    }
    let plan = plan::plan(&exp);
    if opts.dry_run {
        print!("{}", describe_plan(&exp, &plan, layout));
        return Ok(EXIT_OK);
    }
    let (mut session, mut manifest, todo) = if opts.resume {
        resume(layout, &exp, &plan)?
    } else {
        start(layout, &exp, &plan, runner, arg, opts)?
    };
    let progress = Progress::new(plan.runs.len(), opts.quiet);
    progress.note(&format!(
        "session {} ({} runs to go)",
        session.dir.display(),
        todo.len()
    ));
    let ending = exec::execute(&exp, &todo, &mut session, runner, &progress)?;
    progress.done();
    manifest.load_after = Some(store::load_average());
    manifest.finished_utc = Some(store::utc_timestamp(store::now_unix_ms()));
    manifest.complete = ending == Ending::Complete;
    session.finish(&manifest)?;
    if ending == Ending::Interrupted {
        eprintln!(
            "interrupted: every finished run is kept in {}; `lab run {} --resume` completes the plan",
            session.dir.display(),
            arg.display()
        );
        return Ok(EXIT_INTERRUPTED);
    }
    report(layout, &[], opts.quiet)?;
    if !opts.quiet {
        eprintln!(
            "wrote {}",
            layout
                .book()
                .join("src")
                .join(&exp.name)
                .join("index.md")
                .display()
        );
    }
    Ok(EXIT_OK)
}

/// Builds, calibrates and creates a new session.
fn start(
    layout: &Layout,
    exp: &Experiment,
    plan: &Plan,
    runner: &mut dyn Runner,
    arg: &Path,
    opts: &RunOptions,
) -> Result<(SessionWriter, Manifest, Vec<plan::PlannedRun>)> {
    if !opts.quiet && exp.build.is_some() {
        eprintln!("building {}…", exp.name);
    }
    let build = exec::build(exp)?;
    let started = store::now_unix_ms();
    let dir = store::new_session_dir(&layout.data(), &exp.name, started);
    let scratch = std::env::temp_dir();
    let calibration = exec::calibrate(runner, &scratch);
    let manifest = Manifest {
        lab_version: env!("CARGO_PKG_VERSION").to_string(),
        experiment: exp.name.clone(),
        experiment_file_hash: exp.source_hash.clone(),
        profile: exp.profile.clone(),
        command: reproduce_command(arg, opts.profile),
        seed: exp.seed,
        order: format!("{:?}", exp.order).to_lowercase(),
        planned_runs: plan.runs.len(),
        git: store::git_state(&exp.dir),
        host: store::host(),
        load_before: store::load_average(),
        load_after: None,
        started_utc: store::utc_timestamp(started),
        finished_utc: None,
        complete: false,
        versions: store::tool_versions(&exp.versions, &exp.dir),
        build,
        calibration: Some(calibration),
    };
    let session = SessionWriter::create(dir, &manifest, plan, param_names(exp))?;
    Ok((session, manifest, plan.runs.clone()))
}

/// Reopens the latest unfinished session of the same plan.
fn resume(
    layout: &Layout,
    exp: &Experiment,
    plan: &Plan,
) -> Result<(SessionWriter, Manifest, Vec<plan::PlannedRun>)> {
    let Some(dir) = store::sessions(&layout.data(), &exp.name).pop() else {
        return Err(LabError::Usage(format!(
            "nothing to resume: {} has no session yet",
            exp.name
        )));
    };
    let stored = store::load_session(&dir)?;
    if stored.manifest.complete {
        return Err(LabError::Usage(format!(
            "nothing to resume: the latest session {} is complete",
            stored.name
        )));
    }
    if stored.plan.runs != plan.runs {
        return Err(LabError::Usage(format!(
            "cannot resume {}: lab.toml or the profile changed since it started, so the plan differs",
            stored.name
        )));
    }
    exec::build(exp)?;
    let done: Vec<&str> = stored.runs.iter().map(|r| r.run_id.as_str()).collect();
    let todo = plan
        .runs
        .iter()
        .filter(|r| !done.contains(&r.id.as_str()))
        .cloned()
        .collect();
    Ok((
        SessionWriter::reopen(dir, param_names(exp))?,
        stored.manifest,
        todo,
    ))
}

fn param_names(exp: &Experiment) -> Vec<String> {
    exp.params.iter().map(|p| p.name.clone()).collect()
}

fn reproduce_command(arg: &Path, profile: Option<&str>) -> String {
    let mut cmd = format!("cargo run --release -- run {}", arg.display());
    if let Some(p) = profile {
        cmd.push_str(&format!(" --profile {p}"));
    }
    cmd
}

/// The plan as text, with its estimated duration.
fn describe_plan(exp: &Experiment, plan: &Plan, layout: &Layout) -> String {
    let previous = store::sessions(&layout.data(), &exp.name)
        .pop()
        .and_then(|d| store::load_session(&d).ok())
        .map(|s| mean_wall_by_cell(&s))
        .unwrap_or_default();
    let mut out = String::new();
    let mut total = 0.0;
    let mut known = true;
    for run in &plan.runs {
        let estimate = estimate_seconds(exp, run, &previous);
        total += estimate.unwrap_or(0.0);
        known &= estimate.is_some();
        let kind = if run.warmup { "warm-up" } else { "" };
        out.push_str(&format!(
            "{:>4} {} {} {kind}\n    {}\n",
            run.position,
            run.id,
            run.cell(),
            render::shell_words(&run.argv)
        ));
    }
    let estimate = if known {
        format!("about {}", crate::format::seconds(total))
    } else {
        format!(
            "at least {} (some runs have no estimate)",
            crate::format::seconds(total)
        )
    };
    out.push_str(&format!(
        "{} runs ({} order, seed {}); estimated duration {estimate}\n",
        plan.runs.len(),
        format!("{:?}", plan.order).to_lowercase(),
        plan.seed
    ));
    out
}

/// The mean wall time of each cell's finished runs in a stored session, computed once.
fn mean_wall_by_cell(session: &StoredSession) -> BTreeMap<CellKey, f64> {
    let cells: BTreeMap<&str, CellKey> = session
        .plan
        .runs
        .iter()
        .map(|r| (r.id.as_str(), r.cell()))
        .collect();
    let mut sums: BTreeMap<CellKey, (f64, usize)> = BTreeMap::new();
    for row in &session.runs {
        if let Some(cell) = cells.get(row.run_id.as_str()) {
            let entry = sums.entry(cell.clone()).or_default();
            entry.0 += row.wall_ns as f64 / 1e9;
            entry.1 += 1;
        }
    }
    sums.into_iter()
        .map(|(cell, (sum, n))| (cell, sum / n as f64))
        .collect()
}

/// A run's expected seconds: the mean wall time of its cell in the previous session, else
/// what its duration check requests.
fn estimate_seconds(
    exp: &Experiment,
    run: &plan::PlannedRun,
    previous: &BTreeMap<CellKey, f64>,
) -> Option<f64> {
    if let Some(seconds) = previous.get(&run.cell()) {
        return Some(*seconds);
    }
    exp.checks.iter().find_map(|c| match &c.kind {
        CheckKind::Duration { expect, .. } => {
            let values = run.params.clone();
            config::template::substitute(expect, &values)
                .trim()
                .parse()
                .ok()
        }
        _ => None,
    })
}
