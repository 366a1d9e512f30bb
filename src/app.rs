//! The commands, each a straight line through the pipeline: config → plan → exec → store →
//! analysis → checks → render.

use crate::analysis::{self, Analysis};
use crate::checks::{CheckResult, Verdict};
use crate::config::{self, CheckClass, CheckKind, Experiment};
use crate::error::{EXIT_CHECK_FAILED, EXIT_INTERRUPTED, EXIT_OK, LabError, Result};
use crate::exec::{self, Ending, Progress, Runner};
use crate::plan::{self, Plan};
use crate::render::{self, Rendered};
use crate::store::{self, Manifest, SessionWriter, StoredSession};
use std::path::{Path, PathBuf};

/// Where lab keeps things, relative to the project root.
pub struct Layout {
    pub root: PathBuf,
}

impl Layout {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Layout { root: root.into() }
    }
    pub fn experiments(&self) -> PathBuf {
        self.at("experiments")
    }
    pub fn data(&self) -> PathBuf {
        self.at("data")
    }
    pub fn book(&self) -> PathBuf {
        self.at("book")
    }

    /// A path under the root, written without a leading `./` for messages and manifests.
    fn at(&self, name: &str) -> PathBuf {
        tidy(&self.root.join(name))
    }

    /// An experiment folder from a path or a bare name.
    pub fn experiment_dir(&self, arg: &Path) -> Result<PathBuf> {
        let candidates = [self.root.join(arg), self.experiments().join(arg)];
        if let Some(dir) = candidates
            .iter()
            .find(|d| d.join(config::FILE_NAME).is_file())
        {
            return Ok(tidy(dir));
        }
        let known: Vec<String> = self
            .experiment_dirs()
            .iter()
            .filter_map(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        Err(LabError::Usage(format!(
            "no experiment at {}: expected a folder holding {}\n  hint: experiments here: {}",
            arg.display(),
            config::FILE_NAME,
            if known.is_empty() {
                "none (create experiments/NAME/lab.toml)".to_string()
            } else {
                known.join(", ")
            }
        )))
    }

    /// Every folder under experiments/ that holds a lab.toml, sorted.
    pub fn experiment_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(self.experiments())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join(config::FILE_NAME).is_file())
            .map(|p| tidy(&p))
            .collect();
        dirs.sort();
        dirs
    }
}

/// `./experiments/x` reads better as `experiments/x` in messages and manifests.
fn tidy(path: &Path) -> PathBuf {
    path.strip_prefix(".").unwrap_or(path).to_path_buf()
}

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
        .and_then(|d| store::load_session(&d).ok());
    let mut out = String::new();
    let mut total = 0.0;
    let mut known = true;
    for run in &plan.runs {
        let estimate = estimate_seconds(exp, run, previous.as_ref());
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

/// A run's expected seconds: the mean wall time of its cell in the previous session, else
/// what its duration check requests.
fn estimate_seconds(
    exp: &Experiment,
    run: &plan::PlannedRun,
    previous: Option<&StoredSession>,
) -> Option<f64> {
    let cell = run.cell();
    let past: Vec<f64> = previous
        .map(|s| {
            let ids: Vec<&str> = s
                .plan
                .runs
                .iter()
                .filter(|r| r.cell() == cell)
                .map(|r| r.id.as_str())
                .collect();
            s.runs
                .iter()
                .filter(|r| ids.contains(&r.run_id.as_str()))
                .map(|r| r.wall_ns as f64 / 1e9)
                .collect()
        })
        .unwrap_or_default();
    if !past.is_empty() {
        return Some(past.iter().sum::<f64>() / past.len() as f64);
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

/// The latest session of an experiment, analysed under the profile it ran with.
pub fn analyse_latest(
    layout: &Layout,
    dir: &Path,
) -> Result<Option<(Experiment, StoredSession, Analysis)>> {
    let name = config::experiment_name(dir);
    let Some(session_dir) = store::sessions(&layout.data(), &name).pop() else {
        return Ok(None);
    };
    let session = store::load_session(&session_dir)?;
    let exp = config::load(dir, session.manifest.profile.as_deref())?;
    let analysis = analysis::analyze(&exp, &session);
    Ok(Some((exp, session, analysis)))
}

/// `lab report`: re-renders the book from stored sessions (all experiments with data).
pub fn report(layout: &Layout, only: &[PathBuf], quiet: bool) -> Result<()> {
    let dirs = if only.is_empty() {
        layout.experiment_dirs()
    } else {
        only.iter()
            .map(|a| layout.experiment_dir(a))
            .collect::<Result<_>>()?
    };
    let mut analysed = Vec::new();
    for dir in &dirs {
        match analyse_latest(layout, dir)? {
            Some(found) => analysed.push(found),
            None if !only.is_empty() => return Err(no_session(dir)),
            None => {}
        }
    }
    if !only.is_empty() {
        // The book lists every experiment with data, not just the ones asked for.
        for dir in layout
            .experiment_dirs()
            .iter()
            .filter(|d| !dirs.contains(d))
        {
            analysed.extend(analyse_latest(layout, dir)?);
        }
    }
    analysed.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    let items: Vec<Rendered> = analysed
        .iter()
        .map(|(e, s, a)| Rendered {
            experiment: e,
            analysis: a,
            session_dir: &s.dir,
        })
        .collect();
    render::render_book(&layout.book(), &items)?;
    if !quiet {
        eprintln!(
            "book written to {} ({} experiment{})",
            layout.book().display(),
            items.len(),
            if items.len() == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

fn no_session(dir: &Path) -> LabError {
    LabError::Usage(format!(
        "{} has no session yet\n  hint: run `lab run {}` first",
        config::experiment_name(dir),
        dir.display()
    ))
}

/// `lab report --json EXP`: the analysis as JSON.
pub fn report_json(layout: &Layout, arg: &Path) -> Result<String> {
    let dir = layout.experiment_dir(arg)?;
    let (_, _, analysis) = analyse_latest(layout, &dir)?.ok_or_else(|| no_session(&dir))?;
    Ok(serde_json::to_string_pretty(&analysis).map_err(anyhow::Error::from)? + "\n")
}

/// `lab check`: the verdicts and the exit code (1 when a validity check failed).
pub fn check(layout: &Layout, arg: &Path, json: bool) -> Result<(String, i32)> {
    let dir = layout.experiment_dir(arg)?;
    let (_, _, analysis) = analyse_latest(layout, &dir)?.ok_or_else(|| no_session(&dir))?;
    let failed = analysis
        .checks
        .iter()
        .any(|c| c.class == CheckClass::Validity && c.verdict == Verdict::Fail);
    let text = if json {
        serde_json::to_string_pretty(&analysis.checks).map_err(anyhow::Error::from)? + "\n"
    } else {
        verdict_table(&analysis.checks)
    };
    Ok((text, if failed { EXIT_CHECK_FAILED } else { EXIT_OK }))
}

/// The verdicts as an aligned text table, validity first.
pub fn verdict_table(checks: &[CheckResult]) -> String {
    let width = checks
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = format!(
        "{:<13} {:<10} {:<width$}  {}\n",
        "VERDICT", "CLASS", "CHECK", "READING"
    );
    for c in checks {
        let class = if c.class == CheckClass::Validity {
            "validity"
        } else {
            "hypothesis"
        };
        let verdict = if c.untrusted {
            format!("{}*", c.verdict.word())
        } else {
            c.verdict.word().to_string()
        };
        out.push_str(&format!(
            "{verdict:<13} {class:<10} {:<width$}  {}\n",
            c.name, c.reading
        ));
    }
    if checks.iter().any(|c| c.untrusted) {
        out.push_str("* untrusted: a validity check failed\n");
    }
    out
}

/// `lab list`: experiments, sessions and the latest verdict counts.
pub fn list(layout: &Layout) -> Result<String> {
    let mut out = String::new();
    for dir in layout.experiment_dirs() {
        let name = config::experiment_name(&dir);
        let sessions = store::sessions(&layout.data(), &name);
        let latest = sessions
            .last()
            .and_then(|s| s.file_name())
            .map_or("no session".into(), |n| {
                format!("latest {}", n.to_string_lossy())
            });
        out.push_str(&format!(
            "{name:<24} {} session{}, {latest}\n",
            sessions.len(),
            if sessions.len() == 1 { "" } else { "s" }
        ));
    }
    if out.is_empty() {
        out.push_str("no experiments: create experiments/NAME/lab.toml\n");
    }
    Ok(out)
}

/// Builds the book's HTML with the mdBook library; returns the path of its index page.
pub fn build_html(layout: &Layout) -> Result<PathBuf> {
    let book = mdbook_driver::MDBook::load(layout.book()).map_err(|e| {
        anyhow::anyhow!("cannot load the book in {}: {e:#}", layout.book().display())
    })?;
    book.build()
        .map_err(|e| anyhow::anyhow!("building the book's HTML failed: {e:#}"))?;
    Ok(book.build_dir_for("html").join("index.html"))
}
