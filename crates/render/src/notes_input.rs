//! What notes.md reads: its own text, which must be UTF-8, and the variables, in which what
//! runs and commands printed is inert wherever a template puts it.

use super::NotesError;
use crate::escape::inert_value;
use anyhow::Result;
use lab_findings::analysis::Analysis;
use std::collections::BTreeMap;
use std::path::Path;
use tera::{Context, Value};

/// The text of notes.md; `None` when there is none. Bytes that are not UTF-8 are an error at
/// the first of them, not a chapter without its notes.
pub(super) fn read_notes(path: &Path) -> Result<Option<String>> {
    let bytes = match lab_config::folder_file::read_bytes(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // A FIFO, a folder or a device where notes.md goes is the author's to fix.
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            let why = format!("{}: {e}", path.display());
            return Err(anyhow::Error::new(NotesError(why)));
        }
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!("cannot read {}", path.display())));
        }
    };
    String::from_utf8(bytes).map(Some).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        anyhow::Error::new(NotesError(format!(
            "{}: not valid UTF-8 at byte {at}; save it as UTF-8",
            path.display()
        )))
    })
}

/// The variables: the session manifest, with what commands printed inert, and the run counts.
pub(super) fn context(analysis: &Analysis) -> Result<Context> {
    let mut context = Context::new();
    let manifest = serde_json::to_value(&analysis.manifest)?;
    context.insert_value("manifest", untrusted(&manifest));
    context.insert("counts", &analysis.counts);
    Ok(context)
}

/// A value from runs and commands as the notes see it: every string in it inert wherever a
/// template puts it, and marked safe, so that `| safe` has nothing left to undo.
fn untrusted(value: &serde_json::Value) -> Value {
    use serde_json::Value as Json;
    match value {
        Json::String(text) => untrusted_text(text),
        Json::Array(items) => Value::from(items.iter().map(untrusted).collect::<Vec<_>>()),
        Json::Object(map) => Value::from(
            map.iter()
                .map(|(k, v)| (k.clone(), untrusted(v)))
                .collect::<BTreeMap<_, _>>(),
        ),
        other => Value::from_serializable(other),
    }
}

/// One string from runs and commands, inert and marked safe.
pub(super) fn untrusted_text(text: &str) -> Value {
    Value::safe_string(&inert_value(text))
}
