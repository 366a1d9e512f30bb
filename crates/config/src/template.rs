//! `{param}` placeholders inside one argv element: substituted in place, never split or merged.

use super::model::ParamValue;
use std::collections::BTreeMap;

/// The placeholder names used in `text`; `{{` and `}}` are literal braces.
pub fn placeholders(text: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(['{', '}']) {
        let (c, after) = (rest.as_bytes()[i], &rest[i + 1..]);
        if after.starts_with(c as char) {
            rest = &after[1..];
            continue;
        }
        if c == b'}' {
            return Err(format!(
                "unmatched `}}` in {text:?} (write `}}}}` for a literal brace)"
            ));
        }
        let end = after.find('}').ok_or_else(|| {
            format!("unclosed `{{` in {text:?} (write `{{{{` for a literal brace)")
        })?;
        names.push(after[..end].trim().to_string());
        rest = &after[end + 1..];
    }
    Ok(names)
}

/// Replaces every `{name}` with its value; call only on text whose placeholders were validated.
pub fn substitute(text: &str, values: &BTreeMap<String, ParamValue>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let (c, after) = (rest.as_bytes()[i] as char, &rest[i + 1..]);
        if after.starts_with(c) {
            out.push(c);
            rest = &after[1..];
            continue;
        }
        let end = after.find('}').unwrap_or(after.len());
        match values.get(after[..end].trim()) {
            Some(v) => out.push_str(&v.to_string()),
            None => {
                out.push('{');
                out.push_str(&after[..end]);
                out.push('}');
            }
        }
        rest = after.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> BTreeMap<String, ParamValue> {
        BTreeMap::from([
            ("threads".to_string(), ParamValue::Int(2)),
            ("seconds".to_string(), ParamValue::Float(0.5)),
        ])
    }

    #[test]
    fn finds_placeholders_and_skips_escaped_braces() {
        assert_eq!(
            placeholders("--threads={threads}").unwrap(),
            vec!["threads"]
        );
        assert_eq!(placeholders("${{HOME}}").unwrap(), Vec::<String>::new());
        assert!(placeholders("{oops").is_err());
        assert!(placeholders("oops}").is_err());
    }

    #[test]
    fn substitutes_inside_one_element() {
        let v = values();
        assert_eq!(substitute("--threads={threads}", &v), "--threads=2");
        assert_eq!(substitute("{seconds}s", &v), "0.5s");
        assert_eq!(substitute("${{X}} {threads}", &v), "${X} 2");
    }
}
