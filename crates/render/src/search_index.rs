//! The built site's search index, made safe to show. mdBook's searcher escapes a result's text
//! before it puts it on the page, but not its breadcrumbs: the chapter's title and headings,
//! which hold text from lab.toml (a title, a metric's unit) and would become markup in the
//! results list. After mdBook writes `searchindex-*.js`, lab rewrites each document's
//! `breadcrumbs` and `title` escaped for HTML; the words searched are unchanged, since the
//! index of words is built from the text before.

use anyhow::{Context, Result, anyhow};
use serde_json::Value;
use std::path::Path;

/// How mdBook writes the index: JSON inside a single-quoted JavaScript string, its `\` and `'`
/// escaped with a backslash (mdbook-html's `search.rs`).
const PREFIX: &str = "window.search = Object.assign(window.search, JSON.parse('";
const SUFFIX: &str = "'));";

/// Escapes the breadcrumbs and titles of every search index in the site folder `site`.
pub fn escape_breadcrumbs(site: &Path) -> Result<()> {
    let entries =
        std::fs::read_dir(site).with_context(|| format!("cannot read {}", site.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("searchindex") && name.ends_with(".js") {
            let path = entry.path();
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let escaped = escaped_index(&text).with_context(|| path.display().to_string())?;
            std::fs::write(&path, escaped)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    Ok(())
}

/// The index that mdBook's script `text` holds, as JSON.
pub fn parse(text: &str) -> Result<Value> {
    let inner = text
        .strip_prefix(PREFIX)
        .and_then(|t| t.strip_suffix(SUFFIX))
        .ok_or_else(|| anyhow!("not the search index mdBook writes"))?;
    Ok(serde_json::from_str(&unquoted(inner))?)
}

/// The index script `text` with each document's breadcrumbs and title escaped.
fn escaped_index(text: &str) -> Result<String> {
    let mut index = parse(text)?;
    let docs = index
        .pointer_mut("/index/documentStore/docs")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| anyhow!("the search index has no documents"))?;
    for doc in docs.values_mut() {
        for field in ["breadcrumbs", "title"] {
            if let Some(Value::String(s)) = doc.get_mut(field) {
                *s = crate::escape::html(s);
            }
        }
    }
    let json = serde_json::to_string(&index)?;
    Ok(format!(
        "{PREFIX}{}{SUFFIX}",
        json.replace('\\', "\\\\").replace('\'', "\\'")
    ))
}

/// The text of a single-quoted JavaScript string whose only escapes are a backslash before
/// the next character.
fn unquoted(quoted: &str) -> String {
    let mut out = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        out.extend(if c == '\\' { chars.next() } else { Some(c) });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breadcrumbs_and_titles_are_escaped_and_the_rest_kept() {
        let json = r#"{"index":{"documentStore":{"docs":{"0":{"body":"<b>x</b> it's","breadcrumbs":"T » v (<img src=x onerror=alert(1)>)","id":"0","title":"a'b"}}}}}"#;
        let script = format!(
            "{PREFIX}{}{SUFFIX}",
            json.replace('\\', "\\\\").replace('\'', "\\'")
        );
        let value = parse(&escaped_index(&script).unwrap()).unwrap();
        let doc = &value["index"]["documentStore"]["docs"]["0"];
        assert_eq!(
            doc["body"], "<b>x</b> it's",
            "the searcher escapes the body itself"
        );
        assert_eq!(
            doc["breadcrumbs"],
            "T » v (&lt;img src=x onerror=alert(1)&gt;)"
        );
        assert_eq!(doc["title"], "a&#39;b");
    }

    #[test]
    fn a_file_of_another_shape_is_refused() {
        assert!(escaped_index("var x = 1;").is_err());
    }
}
