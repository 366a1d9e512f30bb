//! Where in notes.md an error is: the line and column Tera's message points at, or the place
//! lab found itself.

use super::NotesError;
use super::source::Position;
use std::path::Path;

/// An error lab found itself, at `path:LINE:COLUMN` where it knows the place.
pub(super) fn error_at(path: &Path, at: Option<Position>, why: &str) -> anyhow::Error {
    let message = match at {
        Some(at) => format!("{}:{}:{}: {why}", path.display(), at.line, at.column),
        None => format!("{}: {why}", path.display()),
    };
    anyhow::Error::new(NotesError(message))
}

/// Turns a Tera error into one that names the notes file and, where it can, the line.
pub(super) fn locate(e: &tera::Error, path: &Path, source: &str) -> anyhow::Error {
    let chain = error_chain(e);
    let message = match line_of_error(&chain, source) {
        Some(line) => format!(
            "{}:{line}:{}: {chain}",
            path.display(),
            column_of_error(&chain, source, line)
        ),
        None => format!("{}: {chain}", path.display()),
    };
    anyhow::Error::new(NotesError(message))
}

fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        parts.push(s.to_string());
        source = s.source();
    }
    parts.dedup();
    parts.join(": ")
}

/// The 1-based column on `line`: Tera's own when it gives one, else the `{{` of the first
/// expression on the line that holds a name quoted in the message, else the first `{{`.
fn column_of_error(message: &str, source: &str, line: usize) -> usize {
    if let Some(column) = message
        .split("--> notes.md:")
        .nth(1)
        .and_then(|r| r.split(':').nth(1))
        .and_then(|n| n.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
    {
        return column;
    }
    let text = source.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let quoted = quoted_names(message);
    let expressions: Vec<usize> = text.match_indices("{{").map(|(i, _)| i).collect();
    let byte = expressions
        .iter()
        .find(|&&i| {
            let end = text[i..].find("}}").map_or(text.len(), |e| i + e);
            quoted.iter().any(|q| text[i..end].contains(q))
        })
        .or(expressions.first())
        .copied()
        .unwrap_or(0);
    text[..byte].chars().count() + 1
}

fn quoted_names(message: &str) -> Vec<&str> {
    message
        .split('"')
        .skip(1)
        .step_by(2)
        .filter(|q| !q.is_empty())
        .collect()
}

/// The line of the first quoted name in the message that appears inside `{{ … }}` in the source.
fn line_of_error(message: &str, source: &str) -> Option<usize> {
    // Tera points at the expression as ` --> notes:LINE:COLUMN`.
    if let Some(line) = message
        .split("--> notes.md:")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.trim().parse().ok())
    {
        return Some(line);
    }
    if let Some(line) = message
        .split("line ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
    {
        return Some(line);
    }
    let quoted = quoted_names(message);
    source
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("{{") && quoted.iter().any(|q| l.contains(q)))
        .map(|(i, _)| i + 1)
}
