//! A chapter's session with what the chapter shows beside it: the experiment's history, the
//! comparison with the session before it (quoting the latest noise measurement), and the
//! values its notes quote, worked out before rendering so that rendering only formats.

use super::{Told, authoring, tell_notices};
use crate::assess::beside::{history_of, latest_noise, sessions_beside, side};
use crate::assess::chosen::assess_chosen_with;
use crate::assess::{Assessed, Rows};
use crate::error::Result;
use crate::layout::Layout;
use lab_config as config;
use lab_judge::compare::{Comparison, DEFAULT_THRESHOLD, Side, between_revisions, comparison};
use lab_judge::history::History;
use lab_render::{self as render, Rendered};
use lab_store::SessionRef;
use std::path::Path;

/// A session with what its chapter shows beside it: the comparison, the history and the
/// notes' values.
pub struct Shown {
    pub assessed: Assessed,
    pub(super) context: Context,
    notes: Option<render::notes::QuotedNotes>,
}

impl Shown {
    /// The chosen (or latest) session of the experiment in `dir`, its notices printed;
    /// `Ok(None)` when it has none.
    pub fn of(
        layout: &Layout,
        dir: &Path,
        which: Option<&SessionRef>,
        told: &dyn Told,
    ) -> Result<Option<Shown>> {
        let Some(assessed) = assess_chosen_with(layout, dir, which, Rows::GiveUp)? else {
            return Ok(None);
        };
        tell_notices(&assessed, told);
        let context = Context::of(layout, dir, &assessed)?;
        let notes = quoted_notes(&assessed).map_err(authoring)?;
        Ok(Some(Shown {
            assessed,
            context,
            notes,
        }))
    }

    /// What the chapter renders, without the pages beside it (replications, bisections).
    pub fn rendered(&self) -> Rendered<'_> {
        Rendered {
            notes: self.notes.as_ref(),
            ..rendered(&self.assessed, &self.context)
        }
    }
}

/// The experiment's notes.md with the cells and ratios it names worked out by lab-judge, so
/// that rendering only formats them; `None` when it has no notes.
fn quoted_notes(assessed: &Assessed) -> anyhow::Result<Option<render::notes::QuotedNotes>> {
    let Some(file) = render::notes::NotesFile::read(&assessed.experiment)? else {
        return Ok(None);
    };
    let quoted = lab_judge::notes::quote(
        &assessed.experiment,
        &assessed.analysis,
        &assessed.findings.checks,
        &file.wanted(),
    );
    Ok(Some(render::notes::QuotedNotes { file, quoted }))
}

impl Shown {
    /// Frees the assessed session beside the work that follows: a large one is millions of
    /// allocations (65 ms of 100,000 runs'), and a process that ends does not wait for them.
    pub(super) fn release(self) {
        rayon::spawn(move || drop(self));
    }
}

/// What a chapter shows beside its own session: the experiment's history (two sessions or
/// more of the shown session's profile) and the comparison with the session before it.
pub(super) struct Context {
    pub(super) history: Option<History>,
    pub(super) compared: Option<Comparison>,
}

impl Context {
    fn of(layout: &Layout, dir: &Path, shown: &Assessed) -> Result<Context> {
        let profile = shown.session.manifest.profile.as_deref();
        let alone = lab_store::sessions(&layout.data_dir(&config::experiment_name(dir)))
            .iter()
            .all(|d| *d == shown.session.dir);
        if alone && shown.session.manifest.revisions.is_none() {
            // No other session: no history and nothing to compare with.
            return Ok(Context {
                history: None,
                compared: None,
            });
        }
        let sessions = sessions_beside(layout, dir, Some(shown)).of_profile(profile);
        let name = &shown.experiment.name;
        if let (Some(revisions), Some(metric)) = (
            &shown.session.manifest.revisions,
            shown.experiment.primary_metric(),
        ) {
            // A sampled session's comparison is the one its last look read, at that look's level.
            let overall = shown
                .looks
                .last()
                .map_or(lab_judge::analysis::LEVEL, |s| s.level);
            let compared = between_revisions(
                &shown.experiment,
                &shown.analysis,
                revisions,
                metric,
                overall,
            );
            let history = None;
            let compared = compared.map(|c| quoting_noise(layout, c));
            return Ok(Context { history, compared });
        }
        let history = if sessions.kept.len() >= 2 {
            history_of(name, &sessions, None, DEFAULT_THRESHOLD)?
        } else {
            None
        };
        let before = sessions
            .kept
            .iter()
            .rev()
            .find(|(s, _, _)| s.name < shown.session.name);
        let compared = match (before, shown.experiment.primary_metric()) {
            (Some((s, exp, analysis)), Some(metric)) => {
                let a = Side {
                    name: &s.name,
                    experiment: exp,
                    analysis,
                    manifest: &s.manifest,
                };
                let c = comparison(&a, &side(shown), metric, DEFAULT_THRESHOLD);
                Some(quoting_noise(layout, c))
            }
            _ => None,
        };
        Ok(Context { history, compared })
    }
}

/// The comparison with the latest noise measurement of its experiment quoted, if one exists.
fn quoting_noise(layout: &Layout, c: Comparison) -> Comparison {
    Comparison {
        noise: latest_noise(layout, &c.experiment).and_then(|f| f.quote()),
        ..c
    }
}

fn rendered<'a>(a: &'a Assessed, context: &'a Context) -> Rendered<'a> {
    Rendered {
        experiment: &a.experiment,
        analysis: &a.analysis,
        findings: &a.findings,
        session_dir: &a.session.dir,
        notices: &a.notices,
        outdated: a.outdated.as_deref(),
        looks: &a.looks,
        history: context.history.as_ref(),
        compared: context.compared.as_ref(),
        replications: None,
        notes: None,
        bisections: &[],
    }
}
