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

/// Text on one line made inert for HTML: markup escaped, line breaks and other control
/// characters turned into spaces (a blank line would end the HTML block it sits in).
pub fn html_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    html(&flat)
}

/// Text lab composed with `code` spans in backticks (`lab reanalyze DIR`), made inert for
/// Markdown and HTML, with the spans shown as `<code>`. An unpaired backtick stays a backtick.
pub fn with_code_spans(text: &str) -> String {
    code_spans(text, |part| markdown(&html_line(part)), "\\`")
}

/// [`with_code_spans`] for an HTML block, where Markdown is not parsed and so not escaped.
pub fn html_with_code_spans(text: &str) -> String {
    code_spans(text, html_line, "`")
}

fn code_spans(text: &str, inert: impl Fn(&str) -> String, backtick: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    // An even number of parts means the last backtick opened no pair.
    let unpaired_tail = parts.len().is_multiple_of(2);
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        let safe = inert(part);
        if unpaired_tail && i + 1 == parts.len() {
            out.push_str(backtick);
            out.push_str(&safe);
        } else if i % 2 == 1 {
            out.push_str(&format!("<code>{safe}</code>"));
        } else {
            out.push_str(&safe);
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
            with_code_spans("run `lab x <a>` now"),
            "run <code>lab x &lt;a&gt;</code> now"
        );
        assert_eq!(with_code_spans("a `b` c `d"), "a <code>b</code> c \\`d");
        assert_eq!(html_line("a\n\nb"), "a  b");
        assert_eq!(
            html("<script>'&\"</script>"),
            "&lt;script&gt;&#39;&amp;&quot;&lt;/script&gt;"
        );
    }
}
