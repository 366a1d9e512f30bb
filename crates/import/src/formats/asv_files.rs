//! Where asv keeps its results: the result files of a results folder or a machine's folder,
//! and the descriptions beside them (`machine.json`, `benchmarks.json`), in the JSON of
//! Python's `json.dump`, which may hold bare `NaN` and `Infinity`.

use crate::formats::{Source, read_text};
use anyhow::{Result, bail};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

const EXPECTED: &str = "a folder of asv results: results/ or results/MACHINE/, holding the \
    COMMIT-ENV.json files `asv run` writes";

/// The most result files one folder given may hold.
const MAX_FILES: usize = 10_000;

/// The result files `path` names: itself, or every result file in the folder (a machine's
/// folder or the whole results folder), sorted. `machine.json` and `benchmarks.json` are read
/// beside the result files, not as results.
pub fn result_files(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(if is_description(path) {
            Vec::new()
        } else {
            vec![path.to_path_buf()]
        });
    }
    let mut found = Vec::new();
    for folder in std::iter::once(path.to_path_buf()).chain(subfolders(path)?) {
        found.extend(
            json_files(&folder)?
                .into_iter()
                .filter(|f| !is_description(f)),
        );
    }
    if found.is_empty() {
        bail!(
            "{}: a folder with no asv result file in it or in its machine folders (expected {EXPECTED})",
            path.display()
        );
    }
    if found.len() > MAX_FILES {
        bail!(
            "{}: more than {MAX_FILES} result files (expected one results folder of asv)",
            path.display()
        );
    }
    found.sort();
    Ok(found)
}

/// `machine.json` or `benchmarks.json`: what asv writes beside its results to describe them.
fn is_description(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n == "machine.json" || n == "benchmarks.json")
}

fn subfolders(path: &Path) -> Result<Vec<PathBuf>> {
    Ok(entries(path)?.into_iter().filter(|p| p.is_dir()).collect())
}

fn json_files(path: &Path) -> Result<Vec<PathBuf>> {
    Ok(entries(path)?
        .into_iter()
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
        .collect())
}

fn entries(path: &Path) -> Result<Vec<PathBuf>> {
    let read = std::fs::read_dir(path)
        .map_err(|e| anyhow::anyhow!("{}: cannot read the folder: {e}", path.display()))?;
    Ok(read.flatten().map(|e| e.path()).collect())
}

/// What asv writes beside `path`, a result file: the machine.json in its folder and the
/// benchmarks.json above it, where they are there.
pub(crate) fn described_beside(path: &Path) -> Result<Described> {
    let folder = path.parent().unwrap_or(Path::new("."));
    Ok(Described {
        machine: description(&folder.join("machine.json"))?,
        benchmarks: description(&folder.join("../benchmarks.json"))?,
    })
}

/// What asv writes beside a result file: the machine's `machine.json` and the suite's
/// `benchmarks.json` (each benchmark's type, unit and parameter names).
#[derive(Debug, Default)]
pub struct Described {
    pub machine: Map<String, Value>,
    pub benchmarks: Map<String, Value>,
}

/// The object a description file holds; empty when there is no such file.
fn description(path: &Path) -> Result<Map<String, Value>> {
    if !path.is_file() {
        return Ok(Map::new());
    }
    let source = Source {
        origin: &path.display().to_string(),
        what: "an asv machine.json or benchmarks.json",
        expected: "the file asv writes beside its results",
    };
    match source.json(&quote_non_finite(&read_text(path)?))? {
        Value::Object(object) => Ok(object),
        _ => Err(source.not_format("not a JSON object")),
    }
}

/// The text with Python's bare `NaN`, `Infinity` and `-Infinity` (which `json.dump` writes and
/// JSON lacks) quoted outside strings, so that they read as the strings [`number`] knows.
pub(crate) fn quote_non_finite(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if let Some(word) = ["NaN", "Infinity", "-Infinity"]
            .into_iter()
            .find(|w| rest.starts_with(w))
        {
            out.push_str(&format!("\"{word}\""));
            rest = &rest[word.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}
