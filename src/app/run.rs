//! `lab run`: plan, build, calibrate, execute and store a session, then render its chapter.
//! One writer per experiment: a second `lab run` of the same experiment is refused.

use super::Layout;
use super::report::{ChapterOutcome, ReportOptions, report};
use super::slurm::Engine;
use crate::config::{self, CheckKind, Experiment};
use crate::error::{EXIT_CHECK_FAILED, EXIT_OK, LabError, Result};
use crate::exec::{self, Ending, Progress, Runner};
use crate::plan::CellKey;
use crate::plan::{self, Plan};
use crate::render;
use crate::stopping::{self, Next};
use crate::store::{self, Lock, Manifest, Revisions, Sealed, SessionWriter, StoredSession};
use std::collections::BTreeMap;
use std::path::Path;

/// What `lab run` was asked to do.
pub struct RunOptions<'a> {
    pub profile: Option<&'a str>,
    pub dry_run: bool,
    pub resume: bool,
    pub quiet: bool,
    /// Print the closing summary as JSON instead of text.
    pub json: bool,
    /// The command line as typed, recorded in the manifest.
    pub command_line: String,
    /// `--revs BASE,HEAD`: measure the experiment at these two git revisions, interleaved.
    pub revs: Option<&'a [String]>,
    /// Changes between revisions within ± this share count as noise.
    pub threshold: f64,
    /// Confirm a regression between revisions with a second interleaved session.
    pub confirm: bool,
    /// A name for the session, shown in its history.
    pub label: Option<&'a str>,
    /// Where the runs are measured: here, or on a cluster's nodes.
    pub on: Engine,
    /// `--jobs N`: up to N runs execute at once, on disjoint CPUs (1: one at a time).
    pub jobs: usize,
}

impl RunOptions<'_> {
    /// A new session of the default profile, with the command line recorded as `command_line`.
    pub fn new(command_line: String) -> RunOptions<'static> {
        RunOptions {
            profile: None,
            dry_run: false,
            resume: false,
            quiet: false,
            json: false,
            command_line,
            revs: None,
            threshold: crate::compare::DEFAULT_THRESHOLD,
            confirm: false,
            label: None,
            on: Engine::Local,
            jobs: 1,
        }
    }
}

/// How measuring a session ended.
enum Measured {
    /// Every planned run finished and the chapter was written.
    Done {
        name: String,
        outcomes: Vec<ChapterOutcome>,
    },
    /// The user stopped it; the exit code says by which signal.
    Interrupted(i32),
}

/// `lab run`: returns the exit code.
pub fn run(layout: &Layout, arg: &Path, opts: &RunOptions, runner: &mut dyn Runner) -> Result<i32> {
    let dir = layout.experiment_dir(arg)?;
    let sealed = Sealed::read(&dir)?;
    let exp = config::parse(
        &sealed.lab_toml,
        &dir.join(config::FILE_NAME),
        &dir,
        opts.profile,
    )?;
    for w in &exp.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(tool) = &exp.imported {
        return Err(LabError::Usage(format!(
            "{} holds results measured by {tool}: lab does not run it\n  hint: `lab import` adds a session of {tool} results; `lab report {}` renders the chapter",
            exp.file.display(),
            exp.name
        )));
    }
    check_cpus(&exp)?;
    check_jobs(&exp, opts, opts.revs.is_some())?;
    let (exp, revisions) = match opts.revs {
        Some(revs) if !opts.resume => {
            let (exp, revisions) = super::revs::across(layout, exp, revs, opts.threshold)?;
            (exp, Some(revisions))
        }
        _ => (exp, None),
    };
    let plan = plan::plan(&exp);
    if opts.dry_run {
        print!("{}", describe_plan(&exp, &plan, layout, opts.jobs));
        return Ok(EXIT_OK);
    }
    if opts.on != Engine::Local {
        if opts.revs.is_some() {
            return Err(LabError::Usage(
                "--revs measures two builds side by side on this machine; it does not run --on slurm".into(),
            ));
        }
        super::slurm::available()?;
    }
    let _lock = writer_lock(layout, &exp, &opts.command_line)?;
    let _machine = match opts.on {
        Engine::Local => machine_lock(&exp, &opts.command_line, opts.quiet)?,
        Engine::Slurm(_) => None,
    };
    let first = match measure(
        layout,
        &dir,
        arg,
        exp.clone(),
        &plan,
        &sealed,
        opts,
        revisions.clone(),
        runner,
    )? {
        Measured::Done { name, outcomes } => (name, outcomes),
        Measured::Interrupted(code) => return Ok(code),
    };
    let mut failed = print_outcomes(&first.1, &first.0, arg, opts)?;
    let regressed = first
        .1
        .iter()
        .any(|o| o.summary.revisions.as_ref().is_some_and(|c| c.regressed));
    if regressed && opts.confirm {
        let again = Experiment {
            seed: exp.seed ^ CONFIRMATION_SEED,
            ..exp
        };
        let plan = plan::plan(&again);
        let revisions = revisions.map(|r| Revisions {
            confirms: Some(first.0.clone()),
            ..r
        });
        if !opts.quiet {
            eprintln!(
                "confirming the regression with a second interleaved session (seed {})…",
                again.seed
            );
        }
        let second = match measure(
            layout, &dir, arg, again, &plan, &sealed, opts, revisions, runner,
        )? {
            Measured::Done { name, outcomes } => (name, outcomes),
            Measured::Interrupted(code) => return Ok(code),
        };
        failed = print_outcomes(&second.1, &second.0, arg, opts)?;
        let confirmed = second
            .1
            .iter()
            .any(|o| o.summary.revisions.as_ref().is_some_and(|c| c.regressed));
        println!(
            "{}",
            if confirmed {
                format!("regression confirmed: session {} found it too", second.0)
            } else {
                format!(
                    "regression not confirmed: session {} found none, so session {} is not reported as one",
                    second.0, first.0
                )
            }
        );
        return Ok(if failed || confirmed {
            EXIT_CHECK_FAILED
        } else {
            EXIT_OK
        });
    }
    Ok(if failed || regressed {
        EXIT_CHECK_FAILED
    } else {
        EXIT_OK
    })
}

/// Mixed into the seed of a session that confirms a regression: another shuffle, other runs.
const CONFIRMATION_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// Runs (or resumes) one session to its end and writes its chapter.
#[allow(clippy::too_many_arguments)]
fn measure(
    layout: &Layout,
    dir: &Path,
    arg: &Path,
    exp: Experiment,
    plan: &Plan,
    sealed: &Sealed,
    opts: &RunOptions,
    revisions: Option<Revisions>,
    runner: &mut dyn Runner,
) -> Result<Measured> {
    let (exp, mut session, mut manifest, todo) = if opts.resume {
        resume(layout, exp, opts)?
    } else {
        let (session, manifest) = start(layout, &exp, plan, runner, sealed, opts, revisions)?;
        (exp, session, manifest, plan.runs.clone())
    };
    if opts.resume {
        // A resumed session continues under its sealed lab.toml, which may pin fewer variants.
        check_jobs(&exp, opts, manifest.revisions.is_some())?;
    }
    let progress = Progress::new(manifest.planned_runs, opts.quiet);
    progress.note(&format!(
        "session {} ({} runs to go)",
        session.dir.display(),
        todo.len()
    ));
    if opts.jobs > 1 {
        manifest.jobs = Some(manifest.jobs.unwrap_or(1).max(opts.jobs));
    }
    let mut block =
        |runs: &[plan::PlannedRun], session: &mut SessionWriter, manifest: &mut Manifest| {
            match &opts.on {
                Engine::Local => Ok(exec::execute_side_by_side(
                    &exp, runs, session, runner, &progress, opts.jobs,
                )?),
                Engine::Slurm(cluster) => {
                    super::slurm::execute(dir, runs, session, manifest, cluster, &progress)
                }
            }
        };
    let mut ending = block(&todo, &mut session, &mut manifest)?;
    while ending == Ending::Complete {
        let Some(more) = next_look(dir, &exp, &mut session, &progress)? else {
            break;
        };
        manifest.planned_runs += more.len();
        ending = block(&more, &mut session, &mut manifest)?;
    }
    // From here on a signal simply ends lab: every run is stored, chapters are swapped in whole.
    exec::restore_signals();
    progress.done();
    manifest.load_after = Some(store::load_average());
    record_ending(&mut manifest, &ending);
    session.finish(&manifest)?;
    match ending {
        Ending::Interrupted => {
            eprintln!(
                "interrupted: every finished run is kept in {}; `lab run {}{} --resume` completes the plan",
                session.dir.display(),
                arg.display(),
                if opts.on == Engine::Local {
                    ""
                } else {
                    " --on slurm"
                }
            );
            return Ok(Measured::Interrupted(exec::interrupt_exit_code()));
        }
        Ending::Damaged(why) => {
            return Err(LabError::Other(anyhow::anyhow!(
                "{why}\n  lab put back what it had written and stopped; session {} is marked damaged and kept as it is",
                session.dir.display()
            )));
        }
        Ending::Complete => {}
    }
    let name = session_name(&session.dir);
    let outcomes = report(
        layout,
        &ReportOptions {
            only: &[dir.to_path_buf()],
            session: Some(&name),
            quiet: opts.quiet,
        },
    )?;
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
    Ok(Measured::Done { name, outcomes })
}

/// Writes into the manifest when and how a run loop ended: finished now, complete or not,
/// and why it was damaged.
pub(super) fn record_ending(manifest: &mut Manifest, ending: &Ending) {
    manifest.finished_utc = Some(store::utc_timestamp(store::now_unix_ms()));
    manifest.complete = *ending == Ending::Complete;
    if let Ending::Damaged(why) = ending {
        manifest.damaged = Some(why.clone());
    }
}

/// Prints each chapter's summary (and a session across revisions' comparison); true when a
/// check failed or no run was valid.
fn print_outcomes(
    outcomes: &[ChapterOutcome],
    name: &str,
    arg: &Path,
    opts: &RunOptions,
) -> Result<bool> {
    for o in outcomes {
        if opts.json {
            let json = serde_json::to_string_pretty(&o.summary).map_err(anyhow::Error::from)?;
            println!("{json}");
        } else {
            print!("{}", super::summary::text(&o.summary));
            if let Some(c) = &o.summary.revisions {
                print!("{}", crate::format::terminal(&super::compare::text(c)));
            }
        }
        if o.valid_runs == 0 {
            eprintln!(
                "error: no run of session {name} produced a valid measurement (see `lab check {}`)",
                arg.display()
            );
        }
    }
    Ok(outcomes.iter().any(|o| o.summary.failed))
}

/// For a sampled session whose goal is unmet: the next look's runs, added to the plan. The
/// look's analysis runs while no run does, between two blocks of runs.
fn next_look(
    dir: &Path,
    exp: &Experiment,
    session: &mut SessionWriter,
    progress: &Progress,
) -> Result<Option<Vec<plan::PlannedRun>>> {
    if exp.sampling.is_none() {
        return Ok(None);
    }
    let stored = store::load_session(&session.dir)?;
    let Some(standing) = super::session::latest_standing(dir, &stored)? else {
        return Ok(None);
    };
    let Next::More {
        look,
        runs_per_cell,
    } = standing.next
    else {
        progress.note(&standing.sentence(exp));
        return Ok(None);
    };
    let runs = session.extend_plan_with(|planned| {
        plan::look_runs(exp, planned, look, runs_per_cell, &standing.cells)
    })?;
    progress.planned_more(
        runs.len(),
        &format!(
            "look {} ({} runs per cell, intervals at {}) leaves {} open: {}; look {look} adds {} runs to bring {} cells to {runs_per_cell}",
            standing.look,
            standing.runs_per_cell,
            crate::format::level(standing.level),
            standing.unmet.len(),
            standing.unmet.join("; "),
            runs.len(),
            standing.cells.len()
        ),
    );
    Ok(Some(runs))
}

/// Every CPU a variant asks for exists and may be used here; checked before anything runs.
fn check_cpus(exp: &Experiment) -> Result<()> {
    let allowed = exec::allowed_cpus();
    for (i, v) in exp.variants.iter().enumerate() {
        let missing: Vec<String> = v
            .cpus
            .iter()
            .flatten()
            .filter(|c| !allowed.contains(c))
            .map(ToString::to_string)
            .collect();
        if !missing.is_empty() {
            return Err(LabError::Usage(format!(
                "{}: `variant[{}].cpus` of {}: CPU {} cannot be used on this machine (lab may use CPUs {})\n  hint: choose CPUs from that list, or leave `cpus` out",
                exp.file.display(),
                i + 1,
                v.name,
                missing.join(", "),
                allowed
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            )));
        }
    }
    Ok(())
}

/// With `--jobs N` above 1, every variant must be pinned to CPUs: runs execute side by side
/// only where they cannot share one. Checked before anything runs. Runs of variants whose
/// CPUs overlap still run one at a time, which a note says when it leaves nothing in parallel.
fn check_jobs(exp: &Experiment, opts: &RunOptions, across_revisions: bool) -> Result<()> {
    if opts.jobs <= 1 {
        return Ok(());
    }
    if matches!(opts.on, Engine::Slurm(_)) {
        return Err(LabError::Usage(format!(
            "--jobs {} cannot be combined with --on slurm: each Slurm task holds a whole node and runs its shard one run at a time\n  hint: drop --jobs; --nodes N spreads the runs over N nodes",
            opts.jobs
        )));
    }
    if across_revisions {
        return Err(LabError::Usage(format!(
            "--jobs {} cannot be combined with --revs: the two revisions' runs of a variant are pinned to the same CPUs, and lab compares revisions only on runs measured one at a time\n  hint: drop --jobs",
            opts.jobs
        )));
    }
    if let Some((i, v)) = exp
        .variants
        .iter()
        .enumerate()
        .find(|(_, v)| v.cpus.is_none())
    {
        return Err(LabError::Usage(format!(
            "{}: `variant[{}]` ({}) declares no `cpus`, so with --jobs {} its runs could share CPUs with the runs beside them\n  hint: give every variant disjoint `cpus` (e.g. cpus = \"0\" and cpus = \"1\"), or drop --jobs",
            exp.file.display(),
            i + 1,
            v.name,
            opts.jobs
        )));
    }
    let apart = exp.variants.iter().enumerate().any(|(i, a)| {
        exp.variants[i + 1..]
            .iter()
            .any(|b| exec::disjoint(a.cpus.as_deref(), b.cpus.as_deref()))
    });
    if !apart && !opts.quiet {
        eprintln!(
            "note: no two variants of {} have disjoint `cpus`, so its runs still execute one at a time",
            exp.name
        );
    }
    Ok(())
}

fn session_name(dir: &Path) -> String {
    dir.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// The experiment's writer lock, or a refusal naming who holds it.
fn writer_lock(layout: &Layout, exp: &Experiment, command: &str) -> Result<Lock> {
    match store::lock_experiment(&layout.data_dir(&exp.name), command)? {
        Ok(lock) => Ok(lock),
        Err(held) => Err(LabError::Usage(format!(
            "{} is being written by another lab ({}); one session of an experiment runs at a time\n  hint: wait for it to finish, or stop it (Ctrl-C keeps its finished runs)",
            exp.name, held.holder
        ))),
    }
}

/// The machine-wide measuring lock; when another session holds it, a warning (two sessions
/// measuring at once disturb each other) and no lock.
fn machine_lock(exp: &Experiment, command: &str, quiet: bool) -> Result<Option<Lock>> {
    match store::lock_machine(&format!("{command} ({})", exp.name))? {
        Ok(lock) => Ok(Some(lock)),
        Err(held) => {
            if !quiet {
                eprintln!(
                    "warning: another lab session is measuring on this machine ({}); the two will disturb each other's timings",
                    held.holder
                );
            }
            Ok(None)
        }
    }
}

/// Builds, calibrates and creates a new session, sealing the files it runs with.
fn start(
    layout: &Layout,
    exp: &Experiment,
    plan: &Plan,
    runner: &mut dyn Runner,
    sealed: &Sealed,
    opts: &RunOptions,
    revisions: Option<Revisions>,
) -> Result<(SessionWriter, Manifest)> {
    let build = if revisions.is_some() {
        super::revs::build_each(exp, opts.quiet)?
    } else {
        if !opts.quiet && exp.build.is_some() {
            eprintln!("building {}…", exp.name);
        }
        exec::build(exp)?
    };
    let host = store::host();
    if !opts.quiet {
        for finding in exec::system_check(
            &exec::allowed_cpus(),
            host.governor.as_deref(),
            host.turbo.as_deref(),
        ) {
            eprintln!("warning: {finding}");
        }
    }
    let started = store::now_unix_ms();
    let dir = store::new_session_dir(&layout.data_dir(&exp.name), started);
    let scratch = std::env::temp_dir();
    // On a cluster each node calibrates itself before its first run.
    let calibration = (opts.on == Engine::Local).then(|| exec::calibrate(runner, &scratch));
    let manifest = Manifest {
        lab_version: env!("CARGO_PKG_VERSION").to_string(),
        experiment: exp.name.clone(),
        experiment_file_hash: exp.source_hash.clone(),
        profile: exp.profile.clone(),
        command: opts.command_line.clone(),
        seed: exp.seed,
        order: format!("{:?}", exp.order).to_lowercase(),
        planned_runs: plan.runs.len(),
        git: store::git_state(&exp.dir),
        host,
        load_before: store::load_average(),
        load_after: None,
        started_utc: store::utc_timestamp(started),
        finished_utc: None,
        complete: false,
        resumed: 0,
        derived_from: None,
        label: opts.label.map(str::to_string),
        jobs: (opts.jobs > 1).then_some(opts.jobs),
        revisions,
        imported: None,
        damaged: None,
        versions: store::tool_versions(&exp.versions, &exp.dir),
        build,
        calibration,
        cluster: None,
    };
    let session = SessionWriter::create(dir, &manifest, plan, param_names(exp), sealed)?;
    Ok((session, manifest))
}

/// Reopens the latest unfinished session under the lab.toml it started with, sets aside what
/// a kill left half-written, and returns the runs it is missing.
fn resume(
    layout: &Layout,
    today: Experiment,
    opts: &RunOptions,
) -> Result<(Experiment, SessionWriter, Manifest, Vec<plan::PlannedRun>)> {
    let Some(dir) = store::sessions(&layout.data_dir(&today.name)).pop() else {
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
    if stored.manifest.complete {
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
    let exp = resumed_experiment(&stored, today)?;
    let exp = match &stored.manifest.revisions {
        Some(revisions) => {
            let exp = super::revs::reopened(layout, exp, revisions)?;
            super::revs::build_each(&exp, opts.quiet)?;
            exp
        }
        None => {
            exec::build(&exp)?;
            exp
        }
    };
    let done: std::collections::BTreeSet<&str> =
        stored.runs.iter().map(|r| r.run_id.as_str()).collect();
    let todo = stored
        .plan
        .runs
        .iter()
        .filter(|r| !done.contains(r.id.as_str()))
        .cloned()
        .collect();
    let mut manifest = stored.manifest.clone();
    manifest.resumed += 1;
    Ok((exp, SessionWriter::reopen(dir)?, manifest, todo))
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

fn param_names(exp: &Experiment) -> Vec<String> {
    exp.params.iter().map(|p| p.name.clone()).collect()
}

/// The plan as text, with its estimated duration (run after run; with `jobs` above 1, the
/// shortest it could take when every run found a partner on other CPUs too).
fn describe_plan(exp: &Experiment, plan: &Plan, layout: &Layout, jobs: usize) -> String {
    let previous = store::sessions(&layout.data_dir(&exp.name))
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
            run.cell,
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
    if jobs > 1 {
        out.push_str(&format!(
            "with --jobs {jobs}: runs of variants on disjoint `cpus` go side by side, so as little as {} if every run finds partners; runs sharing CPUs still go one at a time\n",
            crate::format::seconds(total / jobs as f64)
        ));
    }
    if let Some(sampling) = &exp.sampling {
        out.push_str(&worst_case(exp, plan, sampling, &previous));
    }
    out
}

/// The most a sampled session may run: every cell the goal depends on at `sampling.max`.
fn worst_case(
    exp: &Experiment,
    plan: &Plan,
    sampling: &crate::config::Sampling,
    previous: &BTreeMap<CellKey, f64>,
) -> String {
    let looks = crate::stats::sequential::schedule(exp.repetitions, sampling.max);
    let mut keys: Vec<CellKey> = plan.runs.iter().map(|r| r.cell.clone()).collect();
    keys.sort();
    keys.dedup();
    let cells = stopping::goal_cells(exp, sampling, &keys);
    let more = plan::look_runs(exp, &plan.runs, looks.len() as u32, sampling.max, &cells);
    let seconds: Option<f64> = plan
        .runs
        .iter()
        .chain(&more)
        .map(|r| estimate_seconds(exp, r, previous))
        .sum();
    format!(
        "then, while the goal is unmet, looks at {} runs per cell in the {} cells it depends on; worst case {} runs ({} more){}\n",
        looks
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        cells.len(),
        plan.runs.len() + more.len(),
        more.len(),
        seconds.map_or_else(String::new, |s| format!(
            ", about {}",
            crate::format::seconds(s)
        ))
    )
}

/// The mean wall time of each cell's finished runs in a stored session, computed once.
fn mean_wall_by_cell(session: &StoredSession) -> BTreeMap<CellKey, f64> {
    let cells: BTreeMap<&str, &CellKey> = session
        .plan
        .runs
        .iter()
        .map(|r| (r.id.as_str(), &r.cell))
        .collect();
    let mut sums: BTreeMap<CellKey, (f64, usize)> = BTreeMap::new();
    for row in &session.runs {
        if let Some(cell) = cells.get(row.run_id.as_str()) {
            let entry = sums.entry((*cell).clone()).or_default();
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
    if let Some(seconds) = previous.get(&run.cell) {
        return Some(*seconds);
    }
    exp.checks.iter().find_map(|c| match &c.kind {
        CheckKind::Duration { expect, .. } => {
            let values = run.cell.params.clone();
            config::template::substitute(expect, &values)
                .trim()
                .parse()
                .ok()
        }
        _ => None,
    })
}
