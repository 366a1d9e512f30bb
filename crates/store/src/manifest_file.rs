//! manifest.json as lab writes and reads it: the format of the record first, then its fields.
//! A record of an older format is brought to the current shape in memory by [`upgrade`], the
//! one place that knows what older records lack; reading never rewrites the file, so a sealed
//! or committed session keeps the bytes its digest was taken of.

use super::Manifest;
use serde::Serialize;
use serde_json::{Map, Value};

/// The format of the manifests lab writes now.
///
/// - 1: every manifest written before manifests named their format (no `format` key). Some
///   lack `resumed`, `derived_from` and `damaged` (written since lab resumed, derived and
///   marked sessions), `calibration.spawn_mad_ns` and `isolation.why`.
/// - 2: the format named first; every key above written.
pub const FORMAT: u32 = 2;

/// The record as written: its format, then the manifest's fields.
#[derive(Serialize)]
pub(crate) struct OnDisk<'a> {
    format: u32,
    #[serde(flatten)]
    manifest: &'a Manifest,
}

impl Manifest {
    /// This manifest as lab writes it, in the current [`FORMAT`].
    pub fn on_disk(&self) -> impl Serialize + '_ {
        OnDisk {
            format: FORMAT,
            manifest: self,
        }
    }

    /// The manifest recorded in `bytes`, of any format this lab knows, in the current shape.
    pub fn from_json(bytes: &[u8]) -> Result<Manifest, String> {
        let mut record: Map<String, Value> =
            serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let format = match record.remove("format") {
            None => 1,
            Some(number) => format_number(&number)?,
        };
        if format > FORMAT {
            return Err(format!(
                "key `format`: the manifest is of format {format}, which this lab ({}) does not know (it reads formats 1 to {FORMAT})\n  hint: read the session with the lab that recorded it or a newer one",
                env!("CARGO_PKG_VERSION")
            ));
        }
        upgrade(&mut record, format);
        serde_json::from_value(Value::Object(record)).map_err(|e| e.to_string())
    }
}

/// The value of the `format` key, which must be a whole number from 1.
fn format_number(value: &Value) -> Result<u32, String> {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|&n| n >= 1)
        .ok_or_else(|| format!("key `format`: {value} is not a format number (1, 2, …)"))
}

/// Brings a record of `format` to the current one, step by step: each step gives what the
/// records of its format lack the value their absence meant.
fn upgrade(record: &mut Map<String, Value>, format: u32) {
    if format < 2 {
        from_format_1(record);
    }
}

/// Format 1 to 2: a session not resumed, derived or found damaged, a calibration without the
/// spawn's median absolute deviation (judged on its IQR), an isolation with every protection.
fn from_format_1(record: &mut Map<String, Value>) {
    for (key, absent) in [
        ("resumed", Value::from(0)),
        ("derived_from", Value::Null),
        ("damaged", Value::Null),
    ] {
        record.entry(key).or_insert(absent);
    }
    if let Some(Value::Object(calibration)) = record.get_mut("calibration") {
        calibration.entry("spawn_mad_ns").or_insert(Value::Null);
    }
    if let Some(Value::Object(isolation)) = record.get_mut("isolation") {
        isolation.entry("why").or_insert(Value::Array(Vec::new()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The manifest of a session lab 0.1.0 recorded in its first weeks: format 1, without
    /// `resumed`, `derived_from`, `damaged` or the spawn's MAD.
    const FORMAT_1: &str = include_str!("../tests/data/manifest.json");

    #[test]
    fn a_manifest_of_format_1_upgrades_to_the_current_shape() {
        let record: Map<String, Value> = serde_json::from_str(FORMAT_1).unwrap();
        assert!(
            !record.contains_key("format") && !record.contains_key("resumed"),
            "the fixture is of format 1"
        );
        let manifest = Manifest::from_json(FORMAT_1.as_bytes()).expect("format 1 reads");
        assert_eq!(
            (
                manifest.resumed,
                manifest.derived_from.as_deref(),
                manifest.damaged.as_deref()
            ),
            (0, None, None)
        );
        let calibration = manifest.calibration.as_ref().expect("calibrated");
        assert_eq!(calibration.spawn_mad_ns, None);
        assert_eq!(manifest.analysis, 1);
        // Written again, it names the current format and reads back the same.
        let written = serde_json::to_vec(&manifest.on_disk()).unwrap();
        assert!(written.starts_with(format!("{{\"format\":{FORMAT},").as_bytes()));
        assert_eq!(Manifest::from_json(&written), Ok(manifest));
    }

    #[test]
    fn every_committed_session_reads_as_the_record_it_was_written_from() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
        let mut read = 0;
        for experiment in std::fs::read_dir(&data).unwrap().flatten() {
            for session in std::fs::read_dir(experiment.path()).unwrap().flatten() {
                let Ok(bytes) = std::fs::read(session.path().join(crate::MANIFEST)) else {
                    continue;
                };
                let manifest = Manifest::from_json(&bytes).expect("a committed manifest reads");
                // A session recorded since manifests named their format (as the README's
                // command records one) is written again in it; an older one without it.
                let named = serde_json::from_slice::<Map<String, Value>>(&bytes)
                    .is_ok_and(|record| record.contains_key("format"));
                let mut again = if named {
                    serde_json::to_string_pretty(&manifest.on_disk()).unwrap()
                } else {
                    serde_json::to_string_pretty(&manifest).unwrap()
                };
                again.push('\n');
                assert_eq!(again.as_bytes(), bytes, "{}", session.path().display());
                read += 1;
            }
        }
        assert!(read >= 8, "{read} committed sessions");
    }

    #[test]
    fn a_current_manifest_lacking_a_key_every_one_has_is_refused() {
        let manifest = Manifest::from_json(FORMAT_1.as_bytes()).unwrap();
        let mut record = serde_json::to_value(manifest.on_disk()).unwrap();
        record.as_object_mut().unwrap().remove("resumed");
        let why = Manifest::from_json(&serde_json::to_vec(&record).unwrap()).unwrap_err();
        assert!(why.contains("missing field `resumed`"), "{why}");
    }

    #[test]
    fn a_format_this_lab_does_not_know_is_refused_with_a_hint() {
        let newer = FORMAT_1.replacen('{', &format!("{{\"format\": {},", FORMAT + 1), 1);
        let why = Manifest::from_json(newer.as_bytes()).unwrap_err();
        assert!(why.contains(&format!("format {}", FORMAT + 1)), "{why}");
        assert!(why.contains("hint:"), "{why}");
        let nonsense = FORMAT_1.replacen('{', "{\"format\": \"two\",", 1);
        assert!(Manifest::from_json(nonsense.as_bytes()).is_err());
    }
}
