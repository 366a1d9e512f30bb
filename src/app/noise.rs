//! `lab noise EXP`: the noise floor, measured. The experiment's cells run against themselves
//! in one interleaved A/A session (a `rev` parameter of two sides, `a` and `b`, both the
//! working tree, in seeded shuffled blocks), stored apart from the experiment's sessions
//! (`data/NAME/noise/`, which history and the chapter never read as a session), then compared
//! side b against side a by the comparison `--revs` uses. Reports per cell the false alarms,
//! the run-to-run spread and the minimum detectable effect; the latest measurement is quoted
//! by the experiment's A/B comparisons.

use crate::assess::beside::NOISE_FILE;
pub use crate::assess::beside::{latest_noise, noise_dir};
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_config::format::{level, percent};
use lab_config::{self as config, Experiment, REV_PARAM};
use lab_exec::ProcessRunner;
use lab_exec::{self as exec, Ending, Progress, Runner};
use lab_judge::analysis::LEVEL;
use lab_judge::compare::{NoiseFloor, between_revisions, noise_floor, revision_pairs};
use lab_store::{self as store, Manifest, Revision, Revisions, SessionWriter};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The two sides of an A/A session.
const SIDES: [&str; 2] = ["a", "b"];

/// What `lab noise` was asked.
pub struct NoiseOptions {
    /// Changes within ± this share count as noise.
    pub threshold: f64,
    pub quiet: bool,
    /// The command line as typed, recorded in the manifest.
    pub command_line: String,
}

/// `lab noise`: measures an A/A session of the experiment, stores it and its reading, and
/// returns the reading.
pub fn noise(
    layout: &Layout,
    arg: &Path,
    opts: &NoiseOptions,
    runner: &mut dyn Runner,
) -> Result<NoiseFloor> {
    let dir = layout.experiment_dir(arg)?;
    let exp = config::load(&dir, None)?;
    crate::run::check_runnable(&exp)?;
    if exp.param(REV_PARAM).is_some() {
        return Err(LabError::Usage(format!(
            "{}: the parameter `{REV_PARAM}` is the one `lab noise` adds for its two sides\n  hint: rename the parameter in [params]",
            exp.file.display()
        )));
    }
    let sealed = store::Sealed::read(&dir)?;
    let _lock = writer_lock(layout, &exp, &opts.command_line)?;
    let mut exp = exp.across_revisions(&SIDES.map(String::from), BTreeMap::new());
    exp.sampling = None;
    let session = measure(layout, &exp, opts, &sealed, runner)?;
    read(&dir, &session, opts.threshold)
}

/// The experiment's writer lock: a noise session and a `lab run` never measure at once.
fn writer_lock(layout: &Layout, exp: &Experiment, command: &str) -> Result<store::Lock> {
    store::lock_experiment(&layout.data_dir(&exp.name), command)?.map_err(|held| {
        LabError::Usage(format!(
            "{} is being written by another lab ({}); one session of an experiment runs at a time\n  hint: wait for it to finish",
            exp.name, held.holder
        ))
    })
}

/// Builds, calibrates and runs the A/A session; its folder once every run is stored.
fn measure(
    layout: &Layout,
    exp: &Experiment,
    opts: &NoiseOptions,
    sealed: &store::Sealed,
    runner: &mut dyn Runner,
) -> Result<PathBuf> {
    exec::build(exp)?;
    let plan = lab_config::plan::plan(exp);
    let started = store::now_unix_ms();
    let mut manifest = Manifest::new(
        exp,
        &opts.command_line,
        plan.runs.len(),
        store::host(),
        started,
    );
    let commit = manifest
        .git
        .as_ref()
        .map_or_else(|| "working tree".to_string(), |g| g.commit.clone());
    manifest.revisions = Some(Revisions {
        revs: SIDES
            .iter()
            .map(|s| Revision {
                name: (*s).to_string(),
                commit: commit.clone(),
            })
            .collect(),
        threshold: opts.threshold,
        confirms: None,
        until_decided: None,
        duet: None,
        pairing: lab_store::Pairing::Unpaired,
    });
    manifest.calibration = Some(exec::calibrate(runner, &std::env::temp_dir()));
    let session_dir = store::new_session_dir(&noise_dir(layout, &exp.name), started);
    let params = exp.params.iter().map(|p| p.name.clone()).collect();
    let mut writer = SessionWriter::create(session_dir, &manifest, &plan, params, sealed)?;
    let progress = Progress::new(plan.runs.len(), opts.quiet);
    let ending = exec::execute_side_by_side(exp, &plan.runs, &mut writer, runner, &progress, 1)?;
    exec::restore_signals();
    progress.done();
    ending.record(&mut manifest);
    writer.finish(&manifest)?;
    match ending {
        Ending::Complete => Ok(writer.dir.clone()),
        Ending::Interrupted => Err(LabError::Usage(format!(
            "interrupted: the noise session in {} is incomplete and is not read\n  hint: run `lab noise` again",
            writer.dir.display()
        ))),
        Ending::Damaged(why) => Err(LabError::Other(anyhow::anyhow!(why))),
    }
}

/// The stored A/A session judged and compared side b against side a; its reading is stored
/// beside it.
fn read(dir: &Path, session_dir: &Path, threshold: f64) -> Result<NoiseFloor> {
    let mut stored = store::load_session(session_dir)?;
    let (exp, analysis) = crate::assess::analysed(dir, &mut stored)?;
    let metric = exp
        .primary_metric()
        .ok_or_else(|| LabError::Usage(format!("{} has no numeric metric to compare", exp.name)))?;
    let revisions = stored.manifest.revisions.clone().ok_or_else(|| {
        LabError::Other(anyhow::anyhow!(
            "{} records no sides",
            session_dir.display()
        ))
    })?;
    let revisions = Revisions {
        threshold,
        ..revisions
    };
    let comparison = between_revisions(&exp, &analysis, &revisions, metric, LEVEL)
        .ok_or_else(|| LabError::Other(anyhow::anyhow!("the A/A session has no two sides")))?;
    let pairs = revision_pairs(&exp, &analysis, SIDES, metric);
    let plain: Vec<_> = pairs.pairs.iter().map(|(a, b, _)| (*a, *b)).collect();
    let measured = stored.manifest.started_utc.clone();
    let floor = noise_floor(
        &comparison,
        &plain,
        exp.repetitions as usize,
        (&stored.name, &measured),
    );
    store::write_json(&session_dir.join(NOISE_FILE), &floor)?;
    Ok(floor)
}

/// The reading as the terminal shows it: one row per cell, then the false alarms.
pub fn text(f: &NoiseFloor) -> String {
    let width = f
        .cells
        .iter()
        .map(|c| lab_config::format::width(&c.change.cell))
        .max()
        .unwrap_or(4)
        .max(4);
    let sizes: Vec<usize> = f
        .cells
        .iter()
        .find(|c| !c.mde.is_empty())
        .map(|c| c.mde.iter().map(|(n, _)| *n).collect())
        .unwrap_or_default();
    let mut out = format!(
        "{}: noise floor measured {} (session {}), {} side b against side a of the same build; intervals at {}, ±{} counts as noise\n",
        f.experiment,
        f.measured,
        f.session,
        f.metric,
        level(f.level),
        percent(f.threshold)
    );
    let mde_heads: String = sizes
        .iter()
        .map(|n| format!("  {:>8}", format!("MDE@{n}")))
        .collect();
    out.push_str(&format!(
        "{:<width$}  {:>4}  {:<28}  {:<14}  {:>6}{mde_heads}\n",
        "cell", "runs", "b/a [interval]", "verdict", "CV"
    ));
    for c in &f.cells {
        out.push_str(&row(c, width));
    }
    out.push_str(&format!("{}\n", f.alarms_sentence()));
    out.push_str(
        "MDE@n: the smallest change the interval could tell from none at n runs a side (normal approximation, z·σ·sqrt(π/n) on the log scale)\n",
    );
    out
}

/// One cell's row of [`text`].
fn row(c: &lab_judge::compare::NoiseCell, width: usize) -> String {
    let x = &c.change;
    let interval = match (x.ratio, x.lo, x.hi) {
        (Some(r), Some(lo), Some(hi)) => lab_config::format::ratio_interval_fine(r, lo, hi),
        _ => "n/a".into(),
    };
    let cv = c.cv.map_or_else(|| "n/a".into(), percent);
    let mde: String = c
        .mde
        .iter()
        .map(|(_, m)| format!("  {:>8}", percent(*m)))
        .collect();
    format!(
        "{:<width$}  {:>4}  {:<28}  {:<14}  {:>6}{mde}\n",
        x.cell,
        x.a_runs.min(x.b_runs),
        interval,
        x.verdict.words(),
        cv
    )
}

/// `lab noise`'s command line.
#[derive(Debug, clap::Args)]
pub struct NoiseArgs {
    /// The experiment folder (experiments/NAME) or its name.
    pub experiment: PathBuf,
    /// Changes within ± this share count as noise ("2%" or 0.02).
    #[arg(long, default_value = "2%", value_parser = super::value_parsers::threshold)]
    pub threshold: f64,
    /// Print the reading as JSON.
    #[arg(long)]
    pub json: bool,
}

impl NoiseArgs {
    /// `lab noise`: measures and prints the noise floor; exits 0, the reading is data.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        let opts = NoiseOptions {
            threshold: self.threshold,
            quiet,
            command_line: super::typed_command(),
        };
        let floor = noise(layout, &self.experiment, &opts, &mut ProcessRunner)?;
        if self.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&floor).map_err(anyhow::Error::from)?
            );
        } else {
            print!("{}", lab_config::format::terminal(&text(&floor)));
        }
        Ok(Exit::Ok)
    }
}
