//! How plan.json stores planned runs: each run with its cell's variant and parameter values
//! as fields, the values as lab.toml types them; read back with one parameter map per cell.

use super::{CellKey, PlannedRun};
use crate::ParamValue;
use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// A planned run as plan.json holds it.
#[derive(Serialize, Deserialize)]
pub(super) struct StoredRun<P = BTreeMap<String, ParamValue>, S = String, A = Vec<String>> {
    id: S,
    position: usize,
    variant: S,
    params: P,
    repetition: u32,
    warmup: bool,
    argv: A,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    repeats: Option<S>,
    #[serde(default = "first_look", skip_serializing_if = "is_first_look")]
    look: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    env_padding: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    heap_shift: Option<u32>,
}

impl From<StoredRun> for PlannedRun {
    fn from(r: StoredRun) -> Self {
        PlannedRun {
            id: r.id,
            position: r.position,
            cell: CellKey::new(r.variant, Arc::new(r.params)),
            repetition: r.repetition,
            warmup: r.warmup,
            argv: r.argv.into(),
            repeats: r.repeats,
            look: r.look,
            env_padding: r.env_padding,
            heap_shift: r.heap_shift,
        }
    }
}

impl Serialize for PlannedRun {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        StoredRun {
            id: self.id.as_str(),
            position: self.position,
            variant: self.cell.variant.as_str(),
            params: self.cell.params.as_ref(),
            repetition: self.repetition,
            warmup: self.warmup,
            argv: &*self.argv,
            repeats: self.repeats.as_deref(),
            look: self.look,
            env_padding: self.env_padding,
            heap_shift: self.heap_shift,
        }
        .serialize(s)
    }
}

fn first_look() -> u32 {
    1
}

fn is_first_look(look: &u32) -> bool {
    *look == 1
}

/// Reads a plan's runs with one parameter map and one command per cell, however many runs it
/// has (a map per run held half a kilobyte, 54 MB at 100,000 runs; a command of three words,
/// about 200 bytes with its four allocations, 20 MB).
pub(super) fn runs<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PlannedRun>, D::Error> {
    d.deserialize_seq(Runs)
}

struct Runs;

impl<'de> Visitor<'de> for Runs {
    type Value = Vec<PlannedRun>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of planned runs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut shared: HashMap<String, Arc<BTreeMap<String, ParamValue>>> = HashMap::new();
        let mut commands: HashSet<Arc<[String]>> = HashSet::new();
        let mut runs = Vec::new();
        while let Some(mut run) = seq.next_element::<PlannedRun>()? {
            // The map's JSON tells maps apart exactly (floats print as they round-trip).
            let key = serde_json::to_string(run.cell.params.as_ref()).unwrap_or_default();
            run.cell.params = shared.entry(key).or_insert(run.cell.params).clone();
            run.argv = match commands.get(&run.argv) {
                Some(same) => Arc::clone(same),
                None => {
                    commands.insert(Arc::clone(&run.argv));
                    run.argv
                }
            };
            runs.push(run);
        }
        runs.shrink_to_fit();
        Ok(runs)
    }
}
