//! A sampled session's looks as its run loop took them, kept in the session's looks.json (see
//! [`lab_store::read_looks`]): each look's standing and the hypotheses first decided at it, so
//! that the report reads the earlier looks back instead of judging each one again. Read back
//! only where they belong to the session as it is judged now: the same lab.toml, no damage,
//! every earlier look present; otherwise the looks are judged again from the runs.

use lab_config::plan::CellKey;
use lab_config::{Experiment, ParamValue};
use lab_judge::checks::CheckResult;
use lab_judge::stopping::{Next, OpenHypothesis, Standing};
use lab_store::StoredSession;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One look: where the session stood after it, and the hypotheses first decided at it, each
/// as it was decided (kept at every later look from analysis 3 on).
#[derive(Debug, Clone)]
pub(super) struct Look {
    pub(super) standing: Standing,
    pub(super) decided: Vec<CheckResult>,
}

/// What looks.json holds: the SHA-256 of the lab.toml the looks were judged under, and the
/// looks in order.
#[derive(Serialize, Deserialize)]
pub struct Recorded {
    experiment: String,
    looks: Vec<RecordedLook>,
}

/// A [`Look`] as looks.json holds it: every field of its standing (the JSON report leaves some
/// out), its cells with their parameter values as lab.toml types them.
#[derive(Serialize, Deserialize)]
struct RecordedLook {
    look: u32,
    looks: u32,
    runs_per_cell: u32,
    level: f64,
    unmet: Vec<String>,
    cells: Vec<RecordedCell>,
    next: Next,
    likely_more_s: Option<f64>,
    outlooks: Vec<String>,
    nearest_first: Vec<RecordedHypothesis>,
    decided: Vec<CheckResult>,
}

#[derive(Serialize, Deserialize)]
struct RecordedCell {
    variant: String,
    params: BTreeMap<String, ParamValue>,
}

#[derive(Serialize, Deserialize)]
struct RecordedHypothesis {
    cells: Vec<RecordedCell>,
    likely_s: Option<f64>,
}

impl Recorded {
    /// `looks` of a session judged under `experiment`, to record.
    pub(super) fn of(experiment: &Experiment, looks: &[Look]) -> Recorded {
        Recorded {
            experiment: experiment.source_hash.clone(),
            looks: looks.iter().map(RecordedLook::of).collect(),
        }
    }
}

/// The first `count` looks of `session` as its run loop recorded them, where they belong to
/// the session as `experiment` judges it; `None` where they must be judged again.
pub(super) fn earlier(
    experiment: &Experiment,
    session: &StoredSession,
    count: u32,
) -> Option<Vec<Look>> {
    if count == 0 {
        return Some(Vec::new());
    }
    if session.damage().is_some() {
        return None;
    }
    let recorded: Recorded = lab_store::read_looks(&session.dir)?;
    let count = count as usize;
    let in_order = recorded
        .looks
        .iter()
        .enumerate()
        .all(|(i, l)| l.look as usize == i + 1);
    if recorded.experiment != experiment.source_hash || recorded.looks.len() < count || !in_order {
        return None;
    }
    Some(
        recorded
            .looks
            .into_iter()
            .take(count)
            .map(RecordedLook::into_look)
            .collect(),
    )
}

impl RecordedLook {
    fn of(look: &Look) -> RecordedLook {
        let s = &look.standing;
        RecordedLook {
            look: s.look,
            looks: s.looks,
            runs_per_cell: s.runs_per_cell,
            level: s.level,
            unmet: s.unmet.clone(),
            cells: cells_of(&s.cells),
            next: s.next.clone(),
            likely_more_s: s.likely_more_s,
            outlooks: s.outlooks.clone(),
            nearest_first: s
                .nearest_first
                .iter()
                .map(|h| RecordedHypothesis {
                    cells: cells_of(&h.cells),
                    likely_s: h.likely_s,
                })
                .collect(),
            decided: look.decided.clone(),
        }
    }

    fn into_look(self) -> Look {
        let standing = Standing {
            look: self.look,
            looks: self.looks,
            runs_per_cell: self.runs_per_cell,
            level: self.level,
            unmet: self.unmet,
            cells: keys_of(self.cells),
            next: self.next,
            likely_more_s: self.likely_more_s,
            outlooks: self.outlooks,
            nearest_first: self
                .nearest_first
                .into_iter()
                .map(|h| OpenHypothesis {
                    cells: keys_of(h.cells),
                    likely_s: h.likely_s,
                })
                .collect(),
        };
        Look {
            standing,
            decided: self.decided,
        }
    }
}

fn cells_of(keys: &[CellKey]) -> Vec<RecordedCell> {
    keys.iter()
        .map(|k| RecordedCell {
            variant: k.variant.clone(),
            params: k.params.as_ref().clone(),
        })
        .collect()
}

fn keys_of(cells: Vec<RecordedCell>) -> Vec<CellKey> {
    cells
        .into_iter()
        .map(|c| CellKey::new(c.variant, Arc::new(c.params)))
        .collect()
}
