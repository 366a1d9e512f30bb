//! lab.toml read into its serde mirror and written back from it is the same experiment: every
//! committed experiment and every fixture the suite runs, under each of its profiles.

use super::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The folders holding a lab.toml under `relative` (from the workspace root).
fn experiment_dirs(relative: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|entry| entry.expect("a folder entry").path())
        .filter(|dir| dir.join(crate::FILE_NAME).is_file())
        .collect();
    dirs.sort();
    dirs
}

/// The experiment as JSON, less what names a place in its source text.
fn comparable(exp: &crate::Experiment) -> Value {
    let mut value = serde_json::to_value(exp).expect("an experiment serialises");
    value["source_hash"] = Value::Null;
    value["counters_declared_at"] = Value::Null;
    value["isolation"]["declared_at"] = Value::Null;
    for variant in value["variants"].as_array_mut().into_iter().flatten() {
        variant["cpus_declared_at"] = Value::Null;
    }
    value
}

/// `dir`'s lab.toml and the text its serde mirror writes read alike under every profile: the
/// same experiment, or both refused. Returns how many profiles parsed.
fn assert_round_trip(dir: &Path) -> usize {
    let file = dir.join(crate::FILE_NAME);
    let source = std::fs::read_to_string(&file).expect("a readable lab.toml");
    let Ok(raw) = from_toml(&source) else {
        return 0;
    };
    let written = to_toml(&raw).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let profiles = std::iter::once(None).chain(raw.profiles.keys().map(|k| Some(k.as_str())));
    let mut parsed = 0;
    for profile in profiles {
        let before = crate::parse(&source, &file, dir, profile);
        let after = crate::parse(&written, &file, dir, profile);
        let what = format!(
            "{} (profile {profile:?}) written as\n{written}",
            file.display()
        );
        match (before, after) {
            (Ok(before), Ok(after)) => {
                assert_eq!(comparable(&before), comparable(&after), "{what}");
                assert_eq!(before.warnings.len(), after.warnings.len(), "{what}");
                parsed += 1;
            }
            (Err(_), Err(_)) => {}
            (before, after) => panic!("{what}\nreads {:?}, then {:?}", before.err(), after.err()),
        }
    }
    parsed
}

#[test]
fn committed_experiments_read_the_same_once_written_back() {
    let dirs = experiment_dirs("experiments");
    assert!(!dirs.is_empty());
    for dir in dirs {
        assert!(
            assert_round_trip(&dir) > 0,
            "{} does not parse",
            dir.display()
        );
    }
}

#[test]
fn suite_fixtures_read_the_same_once_written_back() {
    let parsed: usize = experiment_dirs("tests/fixtures")
        .iter()
        .map(|dir| assert_round_trip(dir))
        .sum();
    assert!(parsed >= 15, "only {parsed} fixtures parsed");
}

#[test]
fn named_tables_are_written_in_the_order_given() {
    let file = RawFile {
        params: in_order([
            ("zeta".to_string(), vec![RawParamValue::Int(1)]),
            ("alpha".to_string(), vec![RawParamValue::Text("x".into())]),
        ]),
        ..RawFile::default()
    };
    let text = to_toml(&file).expect("written");
    assert!(
        text.contains("[params]\nzeta = [1]\nalpha = [\"x\"]\n"),
        "{text}"
    );
    let read = from_toml(&text).expect("read back");
    assert_eq!(declared_order(&read.params), ["zeta", "alpha"]);
}
