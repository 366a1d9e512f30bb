//! Configuration errors that name the file, line, column and key, and say what to do.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A problem in `lab.toml`, located in the source.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub key: String,
    pub message: String,
    pub hint: Option<String>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file.display(), self.line, self.column)?;
        if !self.key.is_empty() {
            write!(f, "`{}`: ", self.key)?;
        }
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// Turns byte spans into located errors for one source file.
pub struct Locator<'a> {
    pub file: &'a Path,
    pub source: &'a str,
}

impl<'a> Locator<'a> {
    pub fn new(file: &'a Path, source: &'a str) -> Self {
        Locator { file, source }
    }

    /// An error at `span` about `key`.
    pub fn error(&self, span: Range<usize>, key: &str, message: impl Into<String>) -> ConfigError {
        let (line, column) = line_column(self.source, span.start);
        ConfigError {
            file: self.file.to_path_buf(),
            line,
            column,
            key: key.to_string(),
            message: message.into(),
            hint: None,
        }
    }

    /// The same with a hint saying what to do.
    pub fn hinted(
        &self,
        span: Range<usize>,
        key: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> ConfigError {
        ConfigError {
            hint: Some(hint.into()),
            ..self.error(span, key, message)
        }
    }

    /// The span of element `index` of the array at `array`, found by reading the array's
    /// text again; the whole array's span when that fails.
    pub fn element_span(&self, array: Range<usize>, index: usize) -> Range<usize> {
        #[derive(serde::Deserialize)]
        struct Array {
            a: Vec<toml::Spanned<toml::Value>>,
        }
        const PREFIX: &str = "a = ";
        let element = self
            .source
            .get(array.clone())
            .and_then(|text| toml::from_str::<Array>(&format!("{PREFIX}{text}")).ok())
            .and_then(|parsed| parsed.a.get(index).map(toml::Spanned::span));
        match element {
            Some(e) => array.start + e.start - PREFIX.len()..array.start + e.end - PREFIX.len(),
            None => array,
        }
    }

    /// An error from the TOML deserializer at the key path serde was reading, if it got to one.
    pub fn toml_error(
        &self,
        err: &toml::de::Error,
        path: Option<&serde_path_to_error::Path>,
    ) -> ConfigError {
        let span = err.span().unwrap_or(0..0);
        let key = path.map_or_else(String::new, key_path);
        let message = plain_type_message(err.message().trim());
        let hint = hint_for_toml_message(&message);
        ConfigError {
            hint,
            ..self.error(span, &key, message)
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = &source[..floor_char_boundary(source, offset)];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A serde path as lab names keys: tables and keys joined by dots, array entries counted from
/// 1 (`variant[2].run`), the fields serde adds for spans left out.
pub(crate) fn key_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{}]", index + 1)),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if key.starts_with("$__") {
                    continue;
                }
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// serde's "invalid type: string \"1\", expected u32" in words a user reads: "a number, not a
/// string".
fn plain_type_message(message: &str) -> String {
    let Some(rest) = message.strip_prefix("invalid type: ") else {
        return message.to_string();
    };
    let (found, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
    let wanted = if ["u8", "u16", "u32", "u64", "i32", "i64", "f64", "usize"]
        .iter()
        .any(|t| expected.starts_with(t))
        || expected.starts_with("a whole number")
    {
        "a number".to_string()
    } else if expected.starts_with("a string") {
        "a string".to_string()
    } else if expected.starts_with("a boolean") {
        "true or false".to_string()
    } else if expected.starts_with("a sequence") {
        "an array".to_string()
    } else {
        expected.to_string()
    };
    let (kind, value) = found.split_once(' ').unwrap_or((found, ""));
    let kind = match kind {
        "string" => "a string",
        "integer" | "floating" => "a number",
        "sequence" => "an array",
        "map" => "a table",
        "boolean" => "a boolean",
        other => other,
    };
    format!("invalid type: {wanted}, not {kind} {value}")
        .trim_end()
        .to_string()
}

fn hint_for_toml_message(message: &str) -> Option<String> {
    if message.starts_with("unknown field") {
        Some(
            "remove the key or fix its spelling; the keys this table accepts are listed above"
                .into(),
        )
    } else if message.starts_with("missing field") {
        Some("add the key; see docs/src/reference/lab-toml.md".into())
    } else if message.starts_with("invalid type") {
        Some("check the value's type: numbers unquoted, text in quotes, commands as arrays of strings".into())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_errors_read_as_words() {
        assert_eq!(
            plain_type_message("invalid type: string \"1\", expected u32"),
            "invalid type: a number, not a string \"1\""
        );
        assert_eq!(
            plain_type_message("invalid type: integer `3`, expected a string"),
            "invalid type: a string, not a number `3`"
        );
        assert_eq!(plain_type_message("unknown field `x`"), "unknown field `x`");
    }

    #[test]
    fn line_and_column_are_one_based() {
        let src = "a = 1\nbb = 2\n";
        assert_eq!(line_column(src, 0), (1, 1));
        assert_eq!(line_column(src, 6), (2, 1));
        assert_eq!(line_column(src, 11), (2, 6));
    }

    #[test]
    fn key_path_counts_array_entries_from_one() {
        #[derive(Debug, serde::Deserialize)]
        struct File {
            #[allow(dead_code)]
            variant: Vec<std::collections::BTreeMap<String, u32>>,
        }
        let src = "[[variant]]\nrun = 1\n[[variant]]\nrun = 'x'\n";
        let document = toml::Deserializer::parse(src).unwrap();
        let err = serde_path_to_error::deserialize::<_, File>(document).unwrap_err();
        assert_eq!(key_path(err.path()), "variant[2].run");
    }
}
