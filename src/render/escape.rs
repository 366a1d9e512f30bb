//! The one escaping boundary of the book. Everything lab writes into a page that is not the
//! author's own notes prose — run output, metric text, check readings, labels, titles, the
//! hypothesis, tool versions, paths — passes through [`markdown`] here and then through Tera's
//! HTML autoescape, so it can neither become markup nor a link.

/// Characters that start Markdown markup inside a line: emphasis, code, links and images,
/// table cells, strikethrough, and the escape character itself. `<`, `>`, `&` and quotes are
/// left to the HTML escape that follows (escaping them twice would show the entity).
const MARKDOWN_SPECIALS: &[char] = &['\\', '`', '*', '[', ']', '|', '~'];

/// Text made inert for Markdown on one line: markup characters backslash-escaped, line breaks
/// and other control characters turned into spaces.
pub fn markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if MARKDOWN_SPECIALS.contains(&c) {
            out.push('\\');
            out.push(c);
        } else if c.is_control() {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// Text made inert for HTML, where lab writes HTML itself (not through a template).
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Every string inside a JSON value made inert for Markdown (for template variables such as
/// the manifest, whose strings include what tools printed).
pub fn markdown_json(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(markdown(s)),
        Value::Array(items) => Value::Array(items.iter().map(markdown_json).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), markdown_json(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_emphasis_and_cells_cannot_form() {
        assert_eq!(
            markdown("[l](javascript:alert(8)) *x* `c` a|b ~~s~~ \\"),
            "\\[l\\](javascript:alert(8)) \\*x\\* \\`c\\` a\\|b \\~\\~s\\~\\~ \\\\"
        );
        assert_eq!(markdown("a\nb\r\x1b[31mc"), "a b  \\[31mc");
        assert_eq!(
            html("<script>'&\"</script>"),
            "&lt;script&gt;&#39;&amp;&quot;&lt;/script&gt;"
        );
    }
}
