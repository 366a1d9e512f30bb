//! How a metric's value is read from one JSON line a run printed, the same for the reader that
//! stores values and for validity, which names the values lab cannot use. A line is what a
//! terminal shows of it: the text after its last carriage return, so that a progress line
//! rewritten in place (`progress 10%\r{"v": 3}`) gives its final state. Words JSON has no
//! room for (Python's `NaN` and `Infinity`, C's `nan` and `inf`, a number beyond a 64-bit
//! float such as `1e400`) do not void the line: they are kept as printed, so that the other
//! keys are still read and a key holding one is reported as what it holds.

use serde_json::Value;

/// What one line holds under a metric's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A value lab keeps: a number, a string or a boolean, as text.
    Value(String),
    /// Something lab cannot use.
    Unusable(Unusable),
    /// Nothing: the line is no JSON object, or has no such key.
    Absent,
}

/// A value under a metric's JSON key that lab cannot use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// `NaN`, `nan` or `-nan`, as printed.
    NaN(String),
    /// `Infinity`, `-Infinity`, `inf` or `-inf`, as printed.
    Infinite(String),
    /// A number beyond the range of a 64-bit float, as printed.
    OutOfRange(String),
    /// A word that is no JSON value (`+1`, `0x1f`, `.5`), as printed.
    NotJson(String),
    Null,
    Array,
    Object,
}

impl Unusable {
    /// What the value is, in a few words: `NaN`, `1e400`, `null`, `an array`.
    pub fn what(&self) -> &str {
        match self {
            Unusable::NaN(word)
            | Unusable::Infinite(word)
            | Unusable::OutOfRange(word)
            | Unusable::NotJson(word) => word,
            Unusable::Null => "null",
            Unusable::Array => "an array",
            Unusable::Object => "an object",
        }
    }

    /// Why lab cannot use it, for a metric of numbers (`text` false) or of text.
    pub fn why(&self, text: bool) -> &'static str {
        match (self, text) {
            (Unusable::OutOfRange(_), _) => lab_config::format::OUT_OF_RANGE,
            (Unusable::NotJson(_), _) => "not a value JSON can hold (write e.g. 1, -0.5 or 2e3)",
            (_, false) => "not a number lab can use",
            (_, true) => "not a value lab can use",
        }
    }
}

/// The part of `line` a terminal shows: the text after its last carriage return that is
/// followed by more than blanks.
pub fn shown(line: &str) -> &str {
    line.rsplit('\r')
        .find(|part| !part.trim().is_empty())
        .unwrap_or("")
}

/// The JSON object one line shows.
pub struct JsonLine {
    value: Value,
    /// The words JSON has no room for, in order; each stands in the value as a marker string
    /// holding its index here.
    words: Vec<String>,
}

/// Starts the marker a word JSON has no room for is replaced with: a NUL no printed text
/// holds unescaped, then the word's index.
const MARKER: &str = "\u{0}lab-word:";

impl JsonLine {
    /// The object `line` shows, when it shows one.
    pub fn parse(line: &str) -> Option<JsonLine> {
        let text = shown(line).trim();
        if !text.starts_with('{') {
            return None;
        }
        if let Ok(value) = serde_json::from_str(text) {
            return Some(JsonLine {
                value,
                words: Vec::new(),
            });
        }
        let (marked, words) = mark_words(text);
        if words.is_empty() {
            return None;
        }
        let value = serde_json::from_str(&marked).ok()?;
        Some(JsonLine { value, words })
    }

    /// What the line holds at `path`, a key per level of nesting.
    pub fn get(&self, path: &[String]) -> Found {
        let Some(value) = path.iter().try_fold(&self.value, |v, key| v.get(key)) else {
            return Found::Absent;
        };
        match value {
            Value::Number(n) => Found::Value(n.to_string()),
            Value::Bool(b) => Found::Value(b.to_string()),
            Value::String(s) => match self.word(s) {
                Some(word) => Found::Unusable(classify(word)),
                None => Found::Value(s.clone()),
            },
            Value::Null => Found::Unusable(Unusable::Null),
            Value::Array(_) => Found::Unusable(Unusable::Array),
            Value::Object(_) => Found::Unusable(Unusable::Object),
        }
    }

    /// The word a marker string stands for.
    fn word(&self, s: &str) -> Option<&str> {
        let index: usize = s.strip_prefix(MARKER)?.parse().ok()?;
        self.words.get(index).map(String::as_str)
    }
}

/// `text` with every word outside strings that JSON has no room for replaced by a marker
/// string, and those words in order.
fn mark_words(text: &str) -> (String, Vec<String>) {
    let bytes = text.as_bytes();
    let mut marked = String::with_capacity(text.len() + 16);
    let mut words = Vec::new();
    let (mut copied, mut i) = (0, 0);
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
        } else if b == b'"' {
            in_string = true;
            i += 1;
        } else if is_word_byte(b) {
            let end = i + bytes[i..].iter().take_while(|&&c| is_word_byte(c)).count();
            let word = &text[i..end];
            if !is_json_word(word) {
                marked.push_str(&text[copied..i]);
                marked.push_str(&format!("\"\\u0000lab-word:{}\"", words.len()));
                words.push(word.to_string());
                copied = end;
            }
            i = end;
        } else {
            i += 1;
        }
    }
    marked.push_str(&text[copied..]);
    (marked, words)
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.' | b'_')
}

/// Whether `word` is a value JSON holds and a 64-bit float can take.
fn is_json_word(word: &str) -> bool {
    matches!(word, "true" | "false" | "null")
        || (is_json_number(word) && word.parse::<f64>().is_ok_and(f64::is_finite))
}

/// Whether `word` follows JSON's grammar of numbers: `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_json_number(word: &str) -> bool {
    let b = word.as_bytes();
    let digits_from = |i: usize| i + b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = usize::from(b.first() == Some(&b'-'));
    i = match b.get(i) {
        Some(b'0') => i + 1,
        Some(b'1'..=b'9') => digits_from(i),
        _ => return false,
    };
    if b.get(i) == Some(&b'.') {
        let end = digits_from(i + 1);
        if end == i + 1 {
            return false;
        }
        i = end;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1 + usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let end = digits_from(i);
        if end == i {
            return false;
        }
        i = end;
    }
    i == b.len()
}

/// What a word JSON has no room for is.
fn classify(word: &str) -> Unusable {
    let bare = word.trim_start_matches(['-', '+']).to_ascii_lowercase();
    match bare.as_str() {
        "nan" => Unusable::NaN(word.to_string()),
        "inf" | "infinity" => Unusable::Infinite(word.to_string()),
        _ if is_json_number(word) => Unusable::OutOfRange(word.to_string()),
        _ => Unusable::NotJson(word.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: &str, key: &str) -> Found {
        let path: Vec<String> = key.split('.').map(str::to_string).collect();
        JsonLine::parse(line).map_or(Found::Absent, |l| l.get(&path))
    }

    fn value(text: &str) -> Found {
        Found::Value(text.to_string())
    }

    #[test]
    fn values_are_read_as_printed() {
        assert_eq!(at(r#"{"v": 8.5}"#, "v"), value("8.5"));
        assert_eq!(at(r#"  {"a": {"b": "x"}}  "#, "a.b"), value("x"));
        assert_eq!(at(r#"{"v": true}"#, "v"), value("true"));
        assert_eq!(at(r#"{"v": 1e-400}"#, "v"), value("0.0"));
        assert_eq!(at(r#"{"w": 1}"#, "v"), Found::Absent);
        assert_eq!(at(r#"{"a": 1}"#, "a.b"), Found::Absent);
        assert_eq!(at("v = 3", "v"), Found::Absent);
        assert_eq!(at(r#"{"v": 3"#, "v"), Found::Absent);
    }

    #[test]
    fn a_progress_line_is_read_as_the_terminal_shows_it() {
        assert_eq!(at("progress 10%\r{\"v\": 3}", "v"), value("3"));
        assert_eq!(at("{\"v\": 1}\r{\"v\": 2}\r  ", "v"), value("2"));
        assert_eq!(at("{\"v\": 1}\rdone", "v"), Found::Absent);
        assert_eq!(shown("a\rb\r"), "b");
        assert_eq!(shown("\r"), "");
    }

    #[test]
    fn what_json_cannot_hold_is_named_as_printed() {
        let cases = [
            (r#"{"v": NaN}"#, Unusable::NaN("NaN".into())),
            (r#"{"v": -nan}"#, Unusable::NaN("-nan".into())),
            (r#"{"v": Infinity}"#, Unusable::Infinite("Infinity".into())),
            (
                r#"{"v": -Infinity}"#,
                Unusable::Infinite("-Infinity".into()),
            ),
            (r#"{"v": inf}"#, Unusable::Infinite("inf".into())),
            (r#"{"v": 1e400}"#, Unusable::OutOfRange("1e400".into())),
            (r#"{"v": -2E+999}"#, Unusable::OutOfRange("-2E+999".into())),
            (r#"{"v": +1}"#, Unusable::NotJson("+1".into())),
            (r#"{"v": 0x1f}"#, Unusable::NotJson("0x1f".into())),
            (r#"{"v": .5}"#, Unusable::NotJson(".5".into())),
            (r#"{"v": null}"#, Unusable::Null),
            (r#"{"v": [1, 2]}"#, Unusable::Array),
            (r#"{"v": {"x": 1}}"#, Unusable::Object),
        ];
        for (line, expected) in cases {
            assert_eq!(at(line, "v"), Found::Unusable(expected), "{line}");
        }
    }

    #[test]
    fn a_word_json_lacks_leaves_the_other_keys_readable() {
        let line = r#"{"label": "NaN here: \" inf", "v": 3, "w": NaN, "n": [Infinity, 2]}"#;
        assert_eq!(at(line, "v"), value("3"));
        assert_eq!(at(line, "label"), value("NaN here: \" inf"));
        assert_eq!(at(line, "w"), Found::Unusable(Unusable::NaN("NaN".into())));
        assert_eq!(at(line, "n"), Found::Unusable(Unusable::Array));
        // A printed string that looks like a marker is a string when no word was marked.
        assert_eq!(
            at(r#"{"v": "\u0000lab-word:0"}"#, "v"),
            value("\u{0}lab-word:0")
        );
    }

    #[test]
    fn json_numbers_follow_the_grammar() {
        for yes in ["0", "-0", "12", "1.5", "-0.25e-3", "2E+10", "1e400"] {
            assert!(is_json_number(yes), "{yes}");
        }
        for no in [
            "", "-", "01", "1.", ".5", "+1", "1e", "1e+", "0x1f", "1.2.3", "NaN",
        ] {
            assert!(!is_json_number(no), "{no}");
        }
    }
}
