//! notes.md cut the way Tera reads it: the author's literal text, `{{ expressions }}`,
//! `{% statements %}` and `{# comments #}`, so that lab can see where the author's text ends and
//! a value begins (to refuse values where no escaping helps, and to count loop iterations).

use std::ops::Range;

/// One piece of the source, by its byte range.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Piece {
    /// Text written as it is, the body of a `{% raw %}` block included.
    Text(Range<usize>),
    /// `{{ … }}`: a value written into the text.
    Expression(Range<usize>),
    /// `{% … %}`, with its first word (`for`, `if`, `raw`…).
    Statement {
        range: Range<usize>,
        keyword: String,
    },
    /// `{# … #}`.
    Comment(Range<usize>),
}

/// A 1-based line and column (in characters) of notes.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Position {
    pub line: usize,
    pub column: usize,
}

/// Where byte `at` of `source` is.
pub(super) fn position(source: &str, at: usize) -> Position {
    let before = &source[..at.min(source.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Position {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
    }
}

/// The pieces of a template, in order, covering all of it.
pub(super) fn pieces(source: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut text_start = 0;
    let mut at = 0;
    while let Some(open) = next_delimiter(source, at) {
        if open > text_start {
            out.push(Piece::Text(text_start..open));
        }
        let end = match &source[open..open + 2] {
            "{#" => source[open + 2..]
                .find("#}")
                .map_or(source.len(), |i| open + 2 + i + 2),
            "{{" => end_of_tag(source, open + 2, "}}"),
            _ => end_of_tag(source, open + 2, "%}"),
        };
        let piece = match &source[open..open + 2] {
            "{#" => Piece::Comment(open..end),
            "{{" => Piece::Expression(open..end),
            _ => Piece::Statement {
                range: open..end,
                keyword: keyword(&source[open..end]).to_string(),
            },
        };
        let raw = matches!(&piece, Piece::Statement { keyword, .. } if keyword == "raw");
        out.push(piece);
        at = end;
        if raw {
            let body_end = start_of_endraw(source, end);
            if body_end > end {
                out.push(Piece::Text(end..body_end));
            }
            at = body_end;
        }
        text_start = at;
    }
    if text_start < source.len() {
        out.push(Piece::Text(text_start..source.len()));
    }
    out
}

/// The byte where the next `{{`, `{%` or `{#` starts, from `from` on.
fn next_delimiter(source: &str, from: usize) -> Option<usize> {
    let bytes = source.as_bytes();
    (from..bytes.len().saturating_sub(1))
        .find(|&i| bytes[i] == b'{' && matches!(bytes[i + 1], b'{' | b'%' | b'#'))
}

/// The byte after the `close` that ends a tag whose inside starts at `from`; quotes inside the
/// tag (Tera's strings in `"`, `'` or backticks) may hold the closing delimiter.
fn end_of_tag(source: &str, from: usize, close: &str) -> usize {
    let bytes = source.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'\'' | b'`') => i = end_of_string(bytes, i + 1, quote),
            _ if bytes[i..].starts_with(close.as_bytes()) => return i + close.len(),
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The byte after the `quote` that closes a string whose inside starts at `i`.
pub(super) fn end_of_string(bytes: &[u8], mut i: usize, quote: u8) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The first word of a statement such as `{%- for x in xs %}`.
fn keyword(tag: &str) -> &str {
    let inside = tag.trim_start_matches("{%").trim_start_matches('-');
    let inside = inside.trim_start();
    let end = inside
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(inside.len());
    &inside[..end]
}

/// Where the `{% endraw %}` closing a raw block whose body starts at `from` begins.
fn start_of_endraw(source: &str, from: usize) -> usize {
    let mut at = from;
    while let Some(i) = source[at..].find("{%") {
        let open = at + i;
        let end = end_of_tag(source, open + 2, "%}");
        if keyword(&source[open..end]) == "endraw" {
            return open;
        }
        at = open + 2;
    }
    source.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(source: &str) -> Vec<String> {
        pieces(source)
            .into_iter()
            .map(|p| match p {
                Piece::Text(r) => format!("text {:?}", &source[r]),
                Piece::Expression(r) => format!("value {:?}", &source[r]),
                Piece::Statement { range, keyword } => format!("{keyword} {:?}", &source[range]),
                Piece::Comment(r) => format!("comment {:?}", &source[r]),
            })
            .collect()
    }

    #[test]
    fn text_values_statements_and_comments_are_told_apart() {
        assert_eq!(
            kinds("a {{ x(s=\"}}\") }}{%- for i in xs -%}b{# {{ c }} #}{% endfor %}"),
            [
                "text \"a \"",
                "value \"{{ x(s=\\\"}}\\\") }}\"",
                "for \"{%- for i in xs -%}\"",
                "text \"b\"",
                "comment \"{# {{ c }} #}\"",
                "endfor \"{% endfor %}\"",
            ]
        );
    }

    #[test]
    fn a_raw_block_is_text() {
        assert_eq!(
            kinds("{% raw %}{{ x }}{% for %}{% endraw %}."),
            [
                "raw \"{% raw %}\"",
                "text \"{{ x }}{% for %}\"",
                "endraw \"{% endraw %}\"",
                "text \".\"",
            ]
        );
    }

    #[test]
    fn positions_count_lines_and_characters() {
        let source = "ab\n€ {{ x }}";
        assert_eq!(position(source, 0), Position { line: 1, column: 1 });
        let value = source.find("{{").unwrap();
        assert_eq!(position(source, value), Position { line: 2, column: 3 });
    }
}
