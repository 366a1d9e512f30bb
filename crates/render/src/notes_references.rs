//! What notes.md asks lab-judge for, read from its expressions and statements before it is
//! rendered: the strings they quote (the metrics named among them) and every
//! `ratio(a="…", b="…", metric="…")`; and the charts they show, which numbers figures in the
//! order a reader meets them. A ratio is worked out before rendering, so its cells
//! and metric are written as quoted strings; one computed from variables is refused where it
//! is written.

use super::source::Piece;
use lab_findings::notes::{RatioWanted, Wanted};

/// Why a ratio whose cells or metric are not quoted strings is refused.
pub(super) const UNQUOTED_RATIO: &str = "ratio(...) names its cells and metric in quoted strings, as in ratio(a=\"fast n=1\", b=\"slow n=1\"): lab works out every ratio before the notes are rendered";

/// The strings and ratios the notes' expressions and statements name.
pub(super) fn wanted(source: &str, pieces: &[Piece]) -> Wanted {
    let mut wanted = Wanted::default();
    for tokens in tags(source, pieces) {
        wanted
            .strings
            .extend(tokens.iter().filter_map(|t| match t.kind {
                Kind::Quoted(text) => Some(text.to_string()),
                _ => None,
            }));
        for call in calls(&tokens, "ratio") {
            if let Ok(Some(ratio)) = call.wanted() {
                wanted.ratios.push(ratio);
            }
        }
    }
    wanted
}

/// Where the first ratio whose cells or metric are not quoted strings is written.
pub(super) fn first_unquoted_ratio(source: &str, pieces: &[Piece]) -> Option<usize> {
    tags(source, pieces)
        .iter()
        .flat_map(|tokens| calls(tokens, "ratio"))
        .find_map(|call| call.wanted().err())
}

/// The files the notes' `chart(file="…")` calls quote, in the order of the text.
pub(super) fn chart_files(source: &str, pieces: &[Piece]) -> Vec<String> {
    tags(source, pieces)
        .iter()
        .flat_map(|tokens| calls(tokens, "chart"))
        .filter_map(|call| call.quoted("file"))
        .collect()
}

/// One token of a tag, at its byte in the source.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Token<'s> {
    at: usize,
    kind: Kind<'s>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind<'s> {
    /// A name or a number.
    Word(&'s str),
    /// A string written as it is meant, without backslash escapes.
    Quoted(&'s str),
    /// A string with escapes, whose value only Tera spells out.
    Escaped,
    Punct(char),
}

/// The tokens of each expression and statement.
fn tags<'s>(source: &'s str, pieces: &[Piece]) -> Vec<Vec<Token<'s>>> {
    pieces
        .iter()
        .filter_map(|piece| match piece {
            Piece::Expression(range) | Piece::Statement { range, .. } => {
                Some(tokens(source, range.clone()))
            }
            Piece::Text(_) | Piece::Comment(_) => None,
        })
        .collect()
}

/// A tag cut into words, strings and punctuation, the way Tera's lexer cuts it.
fn tokens(source: &str, range: std::ops::Range<usize>) -> Vec<Token<'_>> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut i = range.start;
    while i < range.end {
        let c = bytes[i];
        let start = i;
        let kind = match c {
            b'"' | b'\'' | b'`' => {
                i = super::source::end_of_string(bytes, i + 1, c).min(range.end);
                let closed = i > start + 1 && bytes[i - 1] == c;
                match source.get(start + 1..i - 1) {
                    Some(inside) if closed && !inside.contains('\\') => Kind::Quoted(inside),
                    _ => Kind::Escaped,
                }
            }
            c if c.is_ascii_alphanumeric() || c == b'_' => {
                while i < range.end && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                Kind::Word(&source[start..i])
            }
            c if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            _ => {
                let c = source[i..].chars().next().unwrap_or(' ');
                i += c.len_utf8();
                Kind::Punct(c)
            }
        };
        out.push(Token { at: start, kind });
    }
    out
}

/// A call of a function: where it is written, and its keyword arguments' tokens.
struct Call<'t, 's> {
    at: usize,
    arguments: Vec<&'t [Token<'s>]>,
}

/// The calls of the function `name` in one tag (not a filter or an attribute of that name).
fn calls<'t, 's>(tokens: &'t [Token<'s>], name: &str) -> Vec<Call<'t, 's>> {
    let mut calls = Vec::new();
    for (i, pair) in tokens.windows(2).enumerate() {
        let is_call = pair[0].kind == Kind::Word(name) && pair[1].kind == Kind::Punct('(');
        let after = i.checked_sub(1).map(|b| tokens[b].kind);
        let member = matches!(after, Some(Kind::Punct('.' | '|')));
        if is_call && !member {
            calls.push(Call {
                at: pair[0].at,
                arguments: arguments(&tokens[i + 2..]),
            });
        }
    }
    calls
}

/// The arguments of a call whose `(` came just before `tokens`, split at its top-level commas.
fn arguments<'t, 's>(tokens: &'t [Token<'s>]) -> Vec<&'t [Token<'s>]> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, token) in tokens.iter().enumerate() {
        match token.kind {
            Kind::Punct('(' | '[' | '{') => depth += 1,
            Kind::Punct(')' | ']' | '}') if depth == 0 => {
                out.push(&tokens[start..i]);
                break;
            }
            Kind::Punct(')' | ']' | '}') => depth -= 1,
            Kind::Punct(',') if depth == 0 => {
                out.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

impl Call<'_, '_> {
    /// The quoted string of the argument `name`, when it is one.
    fn quoted(&self, name: &str) -> Option<String> {
        self.arguments.iter().find_map(|argument| match argument {
            [key, eq, value] if key.kind == Kind::Word(name) && eq.kind == Kind::Punct('=') => {
                match value.kind {
                    Kind::Quoted(text) => Some(text.to_string()),
                    _ => None,
                }
            }
            _ => None,
        })
    }

    /// The ratio this call asks for; `Ok(None)` when it lacks a cell (rendering says which),
    /// `Err` at the call when a cell or the metric is not a quoted string.
    fn wanted(&self) -> Result<Option<RatioWanted>, usize> {
        let (mut a, mut b, mut metric) = (None, None, None);
        for argument in &self.arguments {
            let slot = match argument.first().map(|t| t.kind) {
                Some(Kind::Word("a")) => &mut a,
                Some(Kind::Word("b")) => &mut b,
                Some(Kind::Word("metric")) => &mut metric,
                _ => continue,
            };
            match argument {
                [_, eq, value] if eq.kind == Kind::Punct('=') => match value.kind {
                    Kind::Quoted(text) => *slot = Some(text.to_string()),
                    _ => return Err(self.at),
                },
                _ => return Err(self.at),
            }
        }
        Ok(a.zip(b).map(|(a, b)| RatioWanted { a, b, metric }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::source::pieces;
    use super::*;

    fn wanted_in(source: &str) -> Wanted {
        wanted(source, &pieces(source))
    }

    #[test]
    fn quoted_strings_and_ratios_are_found_in_tags_only() {
        let source = "Text \"ops\" {{ cell(of='a n=1', metric=\"cycles\") }}\n\
                      {% set r = ratio( a = \"a n=1\" , b=\"b n=1\", stat=s) %}\
                      {{ ratio(b=\"b\", a=\"a\", metric=\"ns\") | num }}{# ratio(a=x) #}";
        let wanted = wanted_in(source);
        let strings: Vec<&str> = wanted.strings.iter().map(String::as_str).collect();
        assert_eq!(strings, ["a", "a n=1", "b", "b n=1", "cycles", "ns"]);
        let ratio = |a: &str, b: &str, metric: Option<&str>| RatioWanted {
            a: a.into(),
            b: b.into(),
            metric: metric.map(Into::into),
        };
        assert_eq!(
            wanted.ratios,
            [ratio("a n=1", "b n=1", None), ratio("a", "b", Some("ns"))]
        );
        assert_eq!(first_unquoted_ratio(source, &pieces(source)), None);
    }

    #[test]
    fn a_ratio_of_cells_computed_from_variables_is_refused_where_it_is_written() {
        for source in [
            "x {% for t in ts %}{{ ratio(a=\"a n=\" ~ t, b=\"b\") }}{% endfor %}",
            "x {{ ratio(a=\"a\", b=other) }}",
            "x {{ ratio(a=\"a\", b=\"b\", metric=m) }}",
            "x {{ ratio(a=\"a\\\"\", b=\"b\") }}",
        ] {
            let at = first_unquoted_ratio(source, &pieces(source));
            assert_eq!(at, source.find("ratio"), "{source}");
        }
        let source = "{{ x.ratio(a=y) }}{{ y | ratio(b=z) }}{% set ratio = 2 %}";
        assert_eq!(first_unquoted_ratio(source, &pieces(source)), None);
    }

    #[test]
    fn the_charts_shown_are_found_in_the_order_of_the_text() {
        let source = "{{ chart(file=\"b.svg\") }} {# chart(file=\"c.svg\") #}\n\
                      {% if x %}{{ chart( file = 'a.svg' ) }}{% endif %}{{ chart(file=f) }}";
        assert_eq!(chart_files(source, &pieces(source)), ["b.svg", "a.svg"]);
    }
}
