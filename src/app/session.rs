//! One stored session, judged as it ran: the pipeline's read side (validity → analysis →
//! checks) under the session's sealed lab.toml, never today's.

use super::Layout;
use crate::error::{LabError, Result};
use lab_config::{self as config, Experiment};
use lab_judge::analysis::{self, Analysis};
use lab_judge::checks::{self, Findings};
use lab_judge::stopping::{self, Standing};
use lab_judge::validity;
use lab_store::{self as store, SEALED, SessionList, SessionRef, StoredSession};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A session with everything the report shows about it.
pub struct Assessed {
    pub experiment: Experiment,
    /// The session without its rows and samples, given up once judged (a sampled session,
    /// whose earlier looks are judged again from them, keeps them).
    pub session: StoredSession,
    pub analysis: Analysis,
    pub findings: Findings,
    /// What the reader must know about the record itself, one line each: lab.toml edited
    /// since the session ran, tails set aside, a session from before sealing.
    pub notices: Vec<String>,
    /// A sampled session's looks in order, each judged on the runs planned up to it; the
    /// last says why sampling stopped. Empty for a fixed number of runs.
    pub looks: Vec<Standing>,
}

/// Judges, analyses and checks one stored session of the experiment in `dir`.
pub fn assess(dir: &Path, session: StoredSession) -> Result<Assessed> {
    assess_with(dir, session, Rows::Keep)
}

/// What an assessment keeps of the session's rows and samples: a caller that reads them after
/// (the bench summary and its exports, `lab logs`) keeps them; rendering a chapter needs only
/// the judged runs, so it gives the rows up as they are judged (at 100,000 runs, rows and
/// views held together were half of `lab report`'s memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    Keep,
    GiveUp,
}

/// [`assess`], keeping the session's rows or giving them up as `rows` says.
pub fn assess_with(dir: &Path, mut session: StoredSession, rows: Rows) -> Result<Assessed> {
    let (experiment, mut notices) = sealed_experiment(dir, &session)?;
    notices.extend(session.tails.iter().map(|t| t.describe()));
    let (analysis, findings) = if experiment.sampling.is_some() || rows == Rows::Keep {
        judged(&experiment, &session)
    } else {
        judged_releasing(&experiment, &mut session)
    };
    notices.extend(validity::nodes::warning(&session.manifest));
    notices.extend(one_process_notice(&session));
    let (looks, findings) = looks(&experiment, &session, &analysis, findings);
    Ok(Assessed {
        experiment,
        session,
        analysis,
        findings,
        notices,
        looks,
    })
}

/// What an imported session of one process per benchmark allows, said plainly: its
/// intervals can only be those of iterations within one process.
fn one_process_notice(session: &StoredSession) -> Option<String> {
    let tool = &session.manifest.imported.as_ref()?.tool;
    let measured = session.plan.runs.iter().filter(|r| !r.warmup);
    if measured.clone().any(|r| r.repetition > 1) || measured.count() == 0 {
        return None;
    }
    let (one, several) = match tool.as_str() {
        "JMH" => ("fork", "forks (-f 5)"),
        "Google Benchmark" => ("repetition", "repetitions (--benchmark_repetitions=5)"),
        "pyperf" => ("process", "processes (--processes 5)"),
        _ => ("process", "runs"),
    };
    Some(format!(
        "every benchmark holds one {one} of {tool}: the spread shown is that of its iterations within one process; \
         how much processes differ (JIT, memory layout) cannot be estimated, so there is no interval across processes. \
         Rerun with several {several} to have one."
    ))
}

/// Where a sampled session stands after its latest look, judged without replaying the
/// earlier looks: what the run loop needs between two looks, and nothing more.
pub fn latest_standing(dir: &Path, session: &StoredSession) -> Result<Option<Standing>> {
    let (experiment, _) = sealed_experiment(dir, session)?;
    let (analysis, findings) = judged(&experiment, session);
    Ok(looks(&experiment, session, &analysis, findings).0.pop())
}

/// A session analysed under the lab.toml it ran with, without its checks: what a history
/// needs of each session.
pub fn analysed(dir: &Path, session: &StoredSession) -> Result<(Experiment, Analysis)> {
    let (experiment, _) = sealed_experiment(dir, session)?;
    let judged = validity::judge(&experiment, session);
    let analysis = analysis::analyze(&experiment, session, judged.runs);
    Ok((experiment, analysis))
}

/// Validity, analysis and checks of one session.
fn judged(experiment: &Experiment, session: &StoredSession) -> (Analysis, Findings) {
    let validity::Validity { runs, durations } = validity::judge(experiment, session);
    let analysis = analysis::analyze(experiment, session, runs);
    let findings = checks::evaluate(experiment, &durations, &analysis);
    (analysis, findings)
}

/// [`judged`], giving up the session's rows and samples as its runs are judged.
fn judged_releasing(experiment: &Experiment, session: &mut StoredSession) -> (Analysis, Findings) {
    let validity::Validity { runs, durations } = validity::judge_releasing(experiment, session);
    let analysis = analysis::analyze(experiment, session, runs);
    let findings = checks::evaluate(experiment, &durations, &analysis);
    (analysis, findings)
}

/// Every look of a sampled session: the earlier ones judged again on the runs planned up to
/// them (the same pipeline, so the same decisions the session took), then the last; and the
/// last look's findings. From analysis 3 on, a hypothesis decided at a look keeps the verdict
/// it was decided with at every later look: the error spent over the looks covers the first
/// decision, not one read again at a later look with other runs.
fn looks(
    experiment: &Experiment,
    session: &StoredSession,
    analysis: &Analysis,
    findings: Findings,
) -> (Vec<Standing>, Findings) {
    let Some(last) = stopping::standing(experiment, &session.plan, analysis, &findings) else {
        return (Vec::new(), findings);
    };
    let keeps = session.manifest.keeps_disturbed();
    let mut decided = Decided::default();
    let mut looks = Vec::new();
    for look in 1..last.look {
        let earlier = up_to_look(session, look);
        let (analysis, findings) = judged(experiment, &earlier);
        let findings = if keeps {
            decided.keep(findings)
        } else {
            findings
        };
        looks.extend(stopping::standing(
            experiment,
            &earlier.plan,
            &analysis,
            &findings,
        ));
    }
    if !keeps || decided.at.is_empty() {
        looks.push(last);
        return (looks, findings);
    }
    let findings = decided.keep(findings);
    looks.extend(stopping::standing(
        experiment,
        &session.plan,
        analysis,
        &findings,
    ));
    (looks, findings)
}

/// The hypotheses decided so far, each as it was decided.
#[derive(Default)]
struct Decided {
    at: std::collections::BTreeMap<String, checks::CheckResult>,
}

impl Decided {
    /// `findings` of a look, each hypothesis decided at an earlier look as it was then; those
    /// decided now are remembered.
    fn keep(&mut self, mut findings: Findings) -> Findings {
        for check in &mut findings.checks {
            if check.class != config::CheckClass::Hypothesis {
                continue;
            }
            match self.at.get(&check.name) {
                Some(then) => *check = then.clone(),
                None if check.verdict.decided() => {
                    self.at.insert(check.name.clone(), check.clone());
                }
                None => {}
            }
        }
        checks::mark_untrusted(&mut findings.checks);
        findings
    }
}

/// The session as it stood when look `look` was taken: the runs planned up to it.
fn up_to_look(session: &StoredSession, look: u32) -> StoredSession {
    let plan = lab_config::plan::Plan {
        runs: session
            .plan
            .runs
            .iter()
            .filter(|r| r.look <= look)
            .cloned()
            .collect(),
        ..session.plan.clone()
    };
    let ids: std::collections::BTreeSet<&str> = plan.runs.iter().map(|r| r.id.as_str()).collect();
    StoredSession {
        dir: session.dir.clone(),
        name: session.name.clone(),
        manifest: session.manifest.clone(),
        runs: session
            .runs
            .iter()
            .filter(|r| ids.contains(r.run_id.as_str()))
            .cloned()
            .collect(),
        samples: session
            .samples
            .iter()
            .filter(|s| ids.contains(s.run_id.as_str()))
            .cloned()
            .collect(),
        sealed: session.sealed.clone(),
        tails: Vec::new(),
        plan,
    }
}

/// The experiment as the session ran it: its sealed lab.toml under its profile. A session
/// from before sealing is read with today's lab.toml, said so when that file has changed.
fn sealed_experiment(dir: &Path, session: &StoredSession) -> Result<(Experiment, Vec<String>)> {
    let profile = session.manifest.profile.as_deref();
    let today = current_hash(dir);
    let mut notices = Vec::new();
    let experiment = match &session.sealed {
        Some(sealed) => {
            let file = session.dir.join(SEALED).join(config::FILE_NAME);
            let exp = config::parse(&sealed.lab_toml, &file, dir, profile)?;
            if today.as_deref() != Some(exp.source_hash.as_str()) {
                notices.push(format!(
                    "{} has changed since session {} ran (sha256 {} then, {} now): its verdicts use the lab.toml it ran with; `lab reanalyze {}` applies today's to the kept logs",
                    dir.join(config::FILE_NAME).display(),
                    session.name,
                    short(&exp.source_hash),
                    today.as_deref().map_or("unreadable", short),
                    dir.display()
                ));
            }
            exp
        }
        None => {
            let exp = config::load(dir, profile)?;
            if exp.source_hash != session.manifest.experiment_file_hash {
                notices.push(format!(
                    "session {} was stored before sessions kept their lab.toml, and {} has changed since (sha256 {} then, {} now): it is judged with today's file",
                    session.name,
                    dir.join(config::FILE_NAME).display(),
                    short(&session.manifest.experiment_file_hash),
                    short(&exp.source_hash)
                ));
            }
            exp
        }
    };
    let experiment = match &session.manifest.revisions {
        Some(revisions) => super::revs::as_recorded(experiment, revisions),
        None => experiment,
    };
    Ok((experiment, notices))
}

fn current_hash(dir: &Path) -> Option<String> {
    let bytes = std::fs::read(dir.join(config::FILE_NAME)).ok()?;
    Some(format!("{:x}", Sha256::digest(&bytes)))
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// The stored sessions of the experiment in `dir`, to resolve a session argument against.
pub fn session_list(layout: &Layout, dir: &Path) -> SessionList {
    let name = config::experiment_name(dir);
    SessionList::new(&name, dir, &layout.data_dir(&name))
}

/// The folder of the session `which` names, or the latest session when `which` is `None`.
/// `Ok(None)`: no session was named and the experiment has none.
pub fn find_session(
    layout: &Layout,
    dir: &Path,
    which: Option<&SessionRef>,
) -> Result<Option<PathBuf>> {
    Ok(session_list(layout, dir).find(which)?)
}

/// Loads and assesses the chosen (or latest) session; `Ok(None)` when there is none.
pub fn assess_chosen(
    layout: &Layout,
    dir: &Path,
    which: Option<&SessionRef>,
) -> Result<Option<Assessed>> {
    assess_chosen_with(layout, dir, which, Rows::Keep)
}

/// [`assess_chosen`], keeping the session's rows or giving them up as `rows` says.
pub fn assess_chosen_with(
    layout: &Layout,
    dir: &Path,
    which: Option<&SessionRef>,
    rows: Rows,
) -> Result<Option<Assessed>> {
    let Some(session_dir) = find_session(layout, dir, which)? else {
        return Ok(None);
    };
    let session = store::load_session(&session_dir)?;
    assess_with(dir, session, rows).map(Some)
}

/// The error for an experiment that has no session yet.
pub fn no_session(dir: &Path) -> LabError {
    LabError::Usage(format!(
        "{} has no session yet\n  hint: run `lab run {}` first",
        config::experiment_name(dir),
        dir.display()
    ))
}

/// The chosen (or latest) session of one experiment, assessed, its notices printed.
pub fn assessed(layout: &Layout, arg: &Path, which: Option<&SessionRef>) -> Result<Assessed> {
    let dir = layout.experiment_dir(arg)?;
    let found = assess_chosen(layout, &dir, which)?.ok_or_else(|| no_session(&dir))?;
    for notice in &found.notices {
        eprintln!("note: {}", lab_config::format::terminal(notice));
    }
    Ok(found)
}
