//! The read side of the pipeline, for one stored session: its sealed lab.toml → validity →
//! analysis → checks → where each look of a sampled session stood. The commands find the
//! session an argument names and print; this module judges it, always under the lab.toml the
//! session ran with, never today's.

pub mod beside;
pub mod chosen;
pub mod freshness;
mod recorded;

use crate::error::Result;
use lab_config::{self as config, Experiment, Goal, Sampling};
use lab_judge::analysis::{self, Analysis};
use lab_judge::checks::{self, Findings};
use lab_judge::stopping::{self, Standing};
use lab_judge::validity;
pub use lab_judge::validity::Rows;
use lab_store::{Revisions, SEALED, StoredSession};
use recorded::Look;
pub use recorded::Recorded;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

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
    /// What differs today from what the session measured, when anything does: the
    /// chapter's "Out of date" banner ([`freshness`]). Left `None` by [`assess`]; the
    /// commands that show a chapter's session ask.
    pub outdated: Option<String>,
}

/// The read side of the pipeline (design.md's stages 5 to 7) for one stored session of the
/// experiment in `dir`: its sealed lab.toml, which runs count, what they measured, what may be
/// claimed of it, and for a sampled session where each look stood. `rows` says whether the
/// session keeps its rows and samples after (a sampled session, whose earlier looks are
/// judged again from them, always keeps them).
pub fn assess(dir: &Path, mut session: StoredSession, rows: Rows) -> Result<Assessed> {
    let (experiment, mut notices) = sealed_experiment(dir, &session)?;
    notices.extend(session.tails.iter().map(|t| t.describe()));
    let rows = if experiment.sampling.is_some() {
        Rows::Keep
    } else {
        rows
    };
    let (analysis, findings) = judged(&experiment, &mut session, rows);
    notices.extend(validity::nodes::warning(&session.manifest));
    notices.extend(one_process_notice(&session));
    notices.extend(session.damage());
    let (looks, findings) = looks(&experiment, &session, &analysis, findings);
    Ok(Assessed {
        experiment,
        session,
        analysis,
        findings,
        notices,
        looks,
        outdated: None,
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

/// Where a sampled session stands after its latest look, what the run loop needs between
/// two looks: the earlier looks are read back from the session's looks.json (judged again
/// where it lacks them) and the latest is judged. With the standing come every look so far,
/// for the run loop to record in looks.json.
pub fn latest_standing(
    dir: &Path,
    session: &mut StoredSession,
) -> Result<Option<(Standing, Recorded)>> {
    let (experiment, _) = sealed_experiment(dir, session)?;
    let (analysis, findings) = judged(&experiment, session, Rows::Keep);
    let (looks, _) = taken_looks(&experiment, session, &analysis, findings);
    let recorded = Recorded::of(&experiment, &looks);
    Ok(looks.into_iter().last().map(|l| (l.standing, recorded)))
}

/// A session analysed under the lab.toml it ran with, without its checks: what a history
/// needs of each session.
pub fn analysed(dir: &Path, session: &mut StoredSession) -> Result<(Experiment, Analysis)> {
    let (experiment, _) = sealed_experiment(dir, session)?;
    let judged = validity::judge(&experiment, session, Rows::Keep);
    let analysis = analysis::analyze(&experiment, session, judged.runs);
    Ok((experiment, analysis))
}

/// Validity, analysis and checks of one session.
fn judged(
    experiment: &Experiment,
    session: &mut StoredSession,
    rows: Rows,
) -> (Analysis, Findings) {
    let validity::Validity { runs, durations } = validity::judge(experiment, session, rows);
    let analysis = analysis::analyze(experiment, session, runs);
    let findings = checks::evaluate(experiment, &durations, &analysis);
    (analysis, findings)
}

/// Every look of a sampled session, and the last look's findings: see [`taken_looks`].
fn looks(
    experiment: &Experiment,
    session: &StoredSession,
    analysis: &Analysis,
    findings: Findings,
) -> (Vec<Standing>, Findings) {
    let (looks, findings) = taken_looks(experiment, session, analysis, findings);
    (looks.into_iter().map(|l| l.standing).collect(), findings)
}

/// Every look of a sampled session: the earlier ones as the run loop recorded them, or where
/// it did not, judged again on the runs planned up to them (the same pipeline, so the same
/// decisions the session took); then the last; and the last look's findings. From analysis 3
/// on, a hypothesis decided at a look keeps the verdict it was decided with at every later
/// look: the error spent over the looks covers the first decision, not one read again at a
/// later look with other runs.
fn taken_looks(
    experiment: &Experiment,
    session: &StoredSession,
    analysis: &Analysis,
    findings: Findings,
) -> (Vec<Look>, Findings) {
    let Some(last) = stopping::standing(experiment, &session.plan, analysis, &findings) else {
        return (Vec::new(), findings);
    };
    let keeps = session.manifest.keeps_disturbed();
    let count = last.look - 1;
    let mut looks = recorded::earlier(experiment, session, count)
        .unwrap_or_else(|| judged_again(experiment, session, count, keeps));
    let mut decided = Decided::default();
    for look in &looks {
        decided.remember(&look.decided);
    }
    let newly = if keeps {
        decided.newly(&findings)
    } else {
        Vec::new()
    };
    if !keeps || decided.at.is_empty() {
        looks.push(Look {
            standing: last,
            decided: newly,
        });
        return (looks, findings);
    }
    let findings = decided.keep(findings);
    looks.extend(
        stopping::standing(experiment, &session.plan, analysis, &findings).map(|standing| Look {
            standing,
            decided: newly,
        }),
    );
    (looks, findings)
}

/// The first `count` looks of a sampled session, each judged again on the runs planned up to
/// it, each hypothesis decided at one of them kept at the later ones where `keeps`.
fn judged_again(
    experiment: &Experiment,
    session: &StoredSession,
    count: u32,
    keeps: bool,
) -> Vec<Look> {
    let mut decided = Decided::default();
    let mut looks = Vec::new();
    for look in 1..=count {
        let mut earlier = up_to_look(session, look);
        let (analysis, findings) = judged(experiment, &mut earlier, Rows::GiveUp);
        let (findings, newly) = if keeps {
            let newly = decided.newly(&findings);
            (decided.keep(findings), newly)
        } else {
            (findings, Vec::new())
        };
        looks.extend(
            stopping::standing(experiment, &earlier.plan, &analysis, &findings).map(|standing| {
                Look {
                    standing,
                    decided: newly,
                }
            }),
        );
    }
    looks
}

/// The hypotheses decided so far, each as it was decided.
#[derive(Default)]
struct Decided {
    at: std::collections::BTreeMap<String, checks::CheckResult>,
}

impl Decided {
    /// The hypotheses of `findings` decided, and not at an earlier look.
    fn newly(&self, findings: &Findings) -> Vec<checks::CheckResult> {
        findings
            .checks
            .iter()
            .filter(|c| {
                c.class == config::CheckClass::Hypothesis
                    && c.verdict.decided()
                    && !self.at.contains_key(&c.name)
            })
            .cloned()
            .collect()
    }

    /// Remembers `checks`, decided at a look, as they were decided.
    fn remember(&mut self, checks: &[checks::CheckResult]) {
        for check in checks {
            self.at
                .entry(check.name.clone())
                .or_insert_with(|| check.clone());
        }
    }

    /// `findings` of a look, each hypothesis decided at an earlier look as it was then; those
    /// decided now are remembered.
    fn keep(&mut self, mut findings: Findings) -> Findings {
        self.remember(&self.newly(&findings));
        for check in &mut findings.checks {
            if check.class == config::CheckClass::Hypothesis
                && let Some(then) = self.at.get(&check.name)
            {
                *check = then.clone();
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
        standing: session.standing,
        plan,
    }
}

/// The experiment as the session ran it: its sealed lab.toml under its profile. A session
/// from before sealing is read with today's lab.toml, said so when that file has changed.
fn sealed_experiment(dir: &Path, session: &StoredSession) -> Result<(Experiment, Vec<String>)> {
    let recorded = Recording {
        dir: &session.dir,
        name: &session.name,
        manifest: &session.manifest,
        sealed: session.sealed.as_ref(),
    };
    experiment_as_run(dir, &recorded)
}

/// What a session recorded of the experiment it ran: enough to read it as it ran, without
/// its runs.
pub struct Recording<'a> {
    pub dir: &'a Path,
    pub name: &'a str,
    pub manifest: &'a lab_store::Manifest,
    pub sealed: Option<&'a lab_store::Sealed>,
}

/// The experiment `session` ran, in the folder `dir`: its sealed lab.toml under its profile
/// (today's for a session from before sealing), with what the reader must know of it.
pub fn experiment_as_run(dir: &Path, session: &Recording) -> Result<(Experiment, Vec<String>)> {
    let profile = session.manifest.profile.as_deref();
    let today = current_hash(dir);
    let mut notices = Vec::new();
    let experiment = match session.sealed {
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
        Some(revisions) => as_recorded(experiment, revisions),
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

/// The experiment as a session across revisions reads it back: the `rev` parameter, no
/// worktrees needed.
pub fn as_recorded(exp: Experiment, revisions: &Revisions) -> Experiment {
    let names: Vec<String> = revisions.revs.iter().map(|r| r.name.clone()).collect();
    sampled(exp.across_revisions(&names, BTreeMap::new()), revisions)
}

/// The experiment of a session across revisions with its stopping rule: sampled until every
/// compared cell is decided when `--until-decided` asked for it or lab.toml samples until
/// "decided"; a precision goal of lab.toml is kept as it is.
pub(crate) fn sampled(mut exp: Experiment, revisions: &Revisions) -> Experiment {
    exp.duet = revisions.duet.clone();
    let goal = Goal::RevisionsDecided {
        threshold: revisions.threshold,
    };
    exp.sampling = match (revisions.until_decided, exp.sampling.take()) {
        (Some(max), kept) => Some(Sampling {
            max,
            goal,
            budget: kept.and_then(|k| k.budget),
        }),
        (
            None,
            Some(Sampling {
                max,
                goal: Goal::Decided,
                budget,
            }),
        ) => Some(Sampling { max, goal, budget }),
        (None, kept) => kept,
    };
    exp
}
