//! The one escaping boundary of the book. Everything lab writes into a page that is not the
//! author's own notes prose — run output, metric text, check readings, labels, titles, the
//! hypothesis, tool versions, paths — passes through [`markdown`] here and then through Tera's
//! HTML autoescape, so it can neither become markup nor a link. In notes, whose author may put
//! a value in a link or an attribute, what runs printed passes through [`inert_value`].

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

/// Placed before a colon that could end a URL scheme: U+2060 WORD JOINER, invisible and no
/// place to break a line, but not a character a scheme may hold, so the URL that holds it is
/// relative. Escaping the colon instead would not do: Markdown and HTML decode `&#58;` back.
const SCHEME_BREAK: char = '\u{2060}';

/// The schemes a value from a run may still name: web pages.
const WEB_SCHEMES: [&str; 2] = ["http", "https"];

/// Text from runs and commands made inert wherever a notes template can put it: Markdown and
/// HTML text, quoted attributes, Markdown link and image targets, `href` and `src`. Markup is
/// escaped for Markdown and for HTML, and no colon in it can end a URL scheme but that of an
/// `http:` or `https:` address: `javascript:`, `data:` or `file:` (in any case, after spaces or
/// control characters, or split across two values) leave a relative URL, shown as text.
pub fn inert_value(text: &str) -> String {
    html(&without_schemes(&markdown(text)))
}

/// `text` with [`SCHEME_BREAK`] before every colon that could end a URL scheme other than a
/// web one: a colon after letters, digits, `+`, `-` or `.` (the characters of a scheme,
/// RFC 3986 §3.1), and a colon that begins the text, which another value before it could turn
/// into a scheme's end.
fn without_schemes(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut run_start = 0;
    for (i, c) in text.char_indices() {
        if c == ':' {
            let scheme = &text[run_start..i];
            let at_start = text[..i].trim_start().is_empty();
            let web = WEB_SCHEMES.iter().any(|w| scheme.eq_ignore_ascii_case(w));
            if (at_start || !scheme.is_empty()) && !web {
                out.push(SCHEME_BREAK);
            }
        }
        if !is_scheme_char(c) {
            run_start = i + c.len_utf8();
        }
        out.push(c);
    }
    out
}

fn is_scheme_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')
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

/// Every string inside a JSON value made inert for Markdown (for the chapter templates'
/// variables, whose strings include what tools printed).
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

/// How TeX reads one of its special characters literally (`\{`, `\%`, `\textbackslash{}`),
/// the same in a LaTeX paragraph and a BibTeX field; `None` for any other character.
pub fn tex_special(c: char) -> Option<&'static str> {
    Some(match c {
        '\\' => "\\textbackslash{}",
        '{' => "\\{",
        '}' => "\\}",
        '%' => "\\%",
        '$' => "\\$",
        '#' => "\\#",
        '&' => "\\&",
        '_' => "\\_",
        _ => return None,
    })
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

    #[test]
    fn no_value_can_name_a_scheme_but_a_web_one() {
        let cases = [
            ("javascript:alert(1)", "javascript\u{2060}:alert(1)"),
            ("JaVaScRiPt:alert(1)", "JaVaScRiPt\u{2060}:alert(1)"),
            ("\u{1}\tjavascript:x", "  javascript\u{2060}:x"),
            ("java&#115;cript:x", "java&amp;#115;cript\u{2060}:x"),
            ("javascript&#58;x", "javascript&amp;#58;x"),
            ("java\\script:x", "java\\\\script\u{2060}:x"),
            ("data:text/html,<b>", "data\u{2060}:text/html,&lt;b&gt;"),
            // A colon another value could complete into `javascript:`.
            (":alert(1)", "\u{2060}:alert(1)"),
            (" :x", " \u{2060}:x"),
            ("https://example.org/a:b", "https://example.org/a\u{2060}:b"),
            ("HTTP://example.org", "HTTP://example.org"),
            (
                "see http://a and vbscript:x",
                "see http://a and vbscript\u{2060}:x",
            ),
            ("xhttps://a", "xhttps\u{2060}://a"),
            ("a : b", "a : b"),
            ("docs/page.html#top", "docs/page.html#top"),
        ];
        for (text, inert) in cases {
            assert_eq!(inert_value(text), inert, "{text:?}");
        }
    }
}
