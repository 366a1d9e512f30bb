//! Where notes.md may put a value, found before rendering. The policy, which [`rule`] follows:
//!
//! | where a `{{ value }}` is written                      | what happens to it               |
//! |-------------------------------------------------------|----------------------------------|
//! | text (a link or image target too), an HTML comment    | escaped (`escape::inert_value`)  |
//! | a quoted attribute value                              | escaped                          |
//! | a quoted `on…` attribute                              | refused: it would run as script  |
//! | a quoted `srcdoc` attribute                           | refused: it would be read as a page |
//! | inside a tag, outside quotes                          | refused: it could add attributes |
//! | right after `<` or `</`                               | refused: it would name a tag     |
//! | inside `<script>` or `<style>`                        | refused: it would be code        |
//!
//! [`Reader`] only finds the [`Place`]: it reads the author's text as mdBook's Markdown and then
//! a browser's tokenizer (WHATWG HTML §13.2.5) would, closely enough to tell these places
//! apart. A `<` that no `>` closes before a blank line is prose (CommonMark §4.6), and so is
//! one whose name is not a tag name (`<https://…>`, `a<b:`; CommonMark §6.6).
//!
//! Why not a tokenizer crate: html5gum 0.9 (a WHATWG tokenizer with no dependencies, 20 s to
//! build on two busy cores), given the notes with a marker in place of each value, places 13 of
//! the 15 HTML cases of the tests below as this reader does. The two it refuses are the
//! Markdown rules above (a blank line ends a tag; `<https://…>` is a link), which no HTML
//! tokenizer knows; html5ever's tokenizer (built already, for mdBook) reads HTML the same way.
//! Either would need a Markdown parser in front and a marker per value traced back to its
//! `{{`: more code than this reader, for the same table.

use super::source::Piece;

/// A value written where it cannot be made inert: the byte where its `{{` starts, and why.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Refusal {
    pub at: usize,
    pub why: String,
}

/// The first value of the template written where no escaping can make it inert.
pub(super) fn first_unescapable(source: &str, pieces: &[Piece]) -> Option<Refusal> {
    let mut reader = Reader::default();
    for piece in pieces {
        match piece {
            Piece::Text(range) => {
                for c in source[range.clone()].chars() {
                    if let Some(refusal) = reader.read(c) {
                        return Some(refusal);
                    }
                }
            }
            Piece::Expression(range) => {
                if let Some(refusal) = reader.value_at(range.start) {
                    return Some(refusal);
                }
            }
            Piece::Statement { .. } | Piece::Comment(_) => {}
        }
    }
    None
}

/// Where in the author's HTML a value is written.
#[derive(Debug, Clone, PartialEq)]
enum Place {
    Text,
    Comment,
    QuotedAttribute {
        tag: String,
        attribute: String,
    },
    /// Inside a tag but outside quotes: its name, an attribute's name or an unquoted value.
    InTag {
        tag: String,
    },
    AfterOpen,
    /// Inside `<script>` or `<style>`.
    RawText {
        element: String,
    },
}

/// The policy: why a value at `place` is refused, or `None` when it is escaped there.
fn rule(place: &Place) -> Option<String> {
    match place {
        Place::Text | Place::Comment => None,
        Place::QuotedAttribute { tag, attribute } if attribute.starts_with("on") => Some(format!(
            "a value in the `{attribute}` attribute of `<{tag}>` would run as script; \
             values from runs cannot be code"
        )),
        Place::QuotedAttribute { tag, attribute } if attribute == "srcdoc" => Some(format!(
            "a value in the `srcdoc` attribute of `<{tag}>` would be read as a page; \
             put it in the text instead"
        )),
        Place::QuotedAttribute { .. } => None,
        Place::InTag { tag } => Some(format!(
            "a value inside the `<{tag}>` tag but outside quotes could add attributes; \
             write it in a quoted attribute, as in title=\"{{{{ … }}}}\""
        )),
        Place::AfterOpen => Some(
            "a value right after `<` would name a tag; write `&lt;` for a `<` in the text".into(),
        ),
        Place::RawText { element } => {
            let read_as = if element == "script" {
                "script"
            } else {
                "style rules"
            };
            Some(format!(
                "a value inside `<{element}>` would be read as {read_as}; values from runs cannot be code"
            ))
        }
    }
}

/// The most characters kept to recognise `<!--`, `-->` or `</script`.
const RECENT: usize = 16;

/// Where in the author's HTML the reader is.
#[derive(Debug, Default)]
struct Reader {
    /// The tag being read, if a `<` opened one.
    tag: Option<Tag>,
    /// Inside `<!-- … -->`.
    comment: bool,
    /// Inside `<script>` or `<style>`, by its name.
    raw_text: Option<String>,
    /// The last few characters, to see `<!--`, `-->` and closing tags.
    recent: String,
    /// The last characters read were a `<` or `</` that a value would complete into a tag.
    after_open: bool,
    /// Newlines since the last character other than a space or tab.
    newlines: usize,
}

#[derive(Debug, Default)]
struct Tag {
    name: String,
    closing: bool,
    state: TagState,
    attribute: String,
    /// A value this tag would refuse, should a `>` make it a tag.
    refused: Option<Refusal>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum TagState {
    #[default]
    Name,
    BeforeAttribute,
    AttributeName,
    AfterAttributeName,
    BeforeValue,
    Quoted(char),
    Unquoted,
}

/// What one character did to a tag.
enum Read {
    Inside,
    /// The `>` that ends it.
    Closed,
    /// A character no tag name holds: the `<` was text (CommonMark §6.6).
    NotATag,
}

impl Reader {
    /// Reads one character of the author's text; a refusal when it closes a tag that holds a
    /// refused value.
    fn read(&mut self, c: char) -> Option<Refusal> {
        self.count_blank_lines(c);
        let opened = std::mem::take(&mut self.after_open);
        if self.comment {
            if self.remember(c).ends_with("-->") {
                self.comment = false;
            }
            None
        } else if self.raw_text.is_some() {
            self.read_raw_text(c);
            None
        } else if self.tag.is_some() {
            self.read_in_tag(c)
        } else {
            self.read_in_text(c, opened);
            None
        }
    }

    fn remember(&mut self, c: char) -> &str {
        self.recent.push(c);
        while self.recent.len() > RECENT {
            self.recent.remove(0);
        }
        &self.recent
    }

    fn count_blank_lines(&mut self, c: char) {
        match c {
            '\n' => self.newlines += 1,
            ' ' | '\t' | '\r' => {}
            _ => self.newlines = 0,
        }
        // A blank line ends the paragraph or HTML block a tag could be in (CommonMark §4.6).
        let in_quotes = self
            .tag
            .as_ref()
            .is_some_and(|t| matches!(t.state, TagState::Quoted(_)));
        if self.newlines >= 2 && !in_quotes {
            self.tag = None;
        }
    }

    fn read_raw_text(&mut self, c: char) {
        let Some(name) = self.raw_text.clone() else {
            return;
        };
        if self
            .remember(c)
            .to_ascii_lowercase()
            .ends_with(&format!("</{name}"))
        {
            self.raw_text = None;
            self.tag = Some(Tag {
                name,
                closing: true,
                ..Tag::default()
            });
        }
    }

    fn read_in_text(&mut self, c: char, opened: bool) {
        let before = std::mem::take(&mut self.recent);
        match c {
            '<' => {
                self.recent.push('<');
                self.after_open = true;
            }
            '/' if opened && before == "<" => {
                self.recent = "</".into();
                self.after_open = true;
            }
            '!' if opened => self.recent = "<!".into(),
            '-' if before == "<!" => self.recent = "<!-".into(),
            '-' if before == "<!-" => self.comment = true,
            c if c.is_ascii_alphabetic() && opened => {
                self.tag = Some(Tag {
                    name: c.to_ascii_lowercase().to_string(),
                    closing: before == "</",
                    ..Tag::default()
                });
            }
            _ => {}
        }
    }

    fn read_in_tag(&mut self, c: char) -> Option<Refusal> {
        let read = self.tag.as_mut()?.read(c);
        match read {
            Read::Inside => None,
            Read::NotATag => {
                self.tag = None;
                None
            }
            Read::Closed => {
                let tag = self.tag.take()?;
                if tag.refused.is_some() {
                    return tag.refused;
                }
                if !tag.closing && matches!(tag.name.as_str(), "script" | "style") {
                    self.raw_text = Some(tag.name);
                }
                None
            }
        }
    }

    /// Where a value written now would be.
    fn place(&self) -> Place {
        if self.after_open {
            Place::AfterOpen
        } else if let Some(element) = &self.raw_text {
            Place::RawText {
                element: element.clone(),
            }
        } else if self.comment {
            Place::Comment
        } else if let Some(tag) = &self.tag {
            tag.place()
        } else {
            Place::Text
        }
    }

    /// A value written at byte `at`: refused at once where [`rule`] refuses it, or, inside a
    /// tag, noted on the tag and refused if a `>` makes it one.
    fn value_at(&mut self, at: usize) -> Option<Refusal> {
        self.newlines = 0;
        let refusal = rule(&self.place()).map(|why| Refusal { at, why });
        self.after_open = false;
        let Some(tag) = self.tag.as_mut() else {
            return refusal;
        };
        if tag.refused.is_none() {
            tag.refused = refusal;
        }
        if tag.state == TagState::Name || tag.state == TagState::BeforeValue {
            // A value ends a tag name or begins an unquoted attribute value.
            tag.state = TagState::Unquoted;
        }
        None
    }
}

impl Tag {
    /// Reads one character of the tag, as the tokenizer's tag and attribute states do.
    fn read(&mut self, c: char) -> Read {
        use TagState::*;
        let space = c.is_ascii_whitespace() || c == '/';
        self.state = match self.state {
            Quoted(q) if c == q => BeforeAttribute,
            Quoted(q) => Quoted(q),
            _ if c == '>' => return Read::Closed,
            Name if space => BeforeAttribute,
            Name if c.is_ascii_alphanumeric() || c == '-' => {
                self.name.push(c.to_ascii_lowercase());
                Name
            }
            Name => return Read::NotATag,
            BeforeAttribute | AfterAttributeName if space => self.state,
            AttributeName if space => AfterAttributeName,
            AttributeName | AfterAttributeName if c == '=' => BeforeValue,
            BeforeAttribute | AfterAttributeName => {
                self.attribute = c.to_ascii_lowercase().to_string();
                AttributeName
            }
            AttributeName => {
                self.attribute.push(c.to_ascii_lowercase());
                AttributeName
            }
            BeforeValue if c.is_ascii_whitespace() => BeforeValue,
            BeforeValue if c == '"' || c == '\'' => Quoted(c),
            BeforeValue | Unquoted if !c.is_ascii_whitespace() => Unquoted,
            BeforeValue | Unquoted => BeforeAttribute,
        };
        Read::Inside
    }

    /// Where in this tag a value written now would be.
    fn place(&self) -> Place {
        let tag = self.name.clone();
        match self.state {
            TagState::Quoted(_) => Place::QuotedAttribute {
                tag,
                attribute: self.attribute.clone(),
            },
            _ => Place::InTag { tag },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::source::pieces;
    use super::*;

    fn why(source: &str) -> Option<String> {
        first_unescapable(source, &pieces(source)).map(|r| r.why)
    }

    #[test]
    fn values_in_text_and_quoted_attributes_are_allowed() {
        for source in [
            "Tool: {{ v }}; [x]({{ v }}) ![i]({{ v }})",
            "<a href=\"{{ v }}\" title='{{ v }}'>{{ v }}</a>",
            "<img src=\"{{ cell(of=\"a > b\") }}\">",
            "<!-- {{ v }} --> n<threads {{ v }}\n\nand more >",
            "<https://{{ host }}/x> and a<b:{{ v }}>",
            "<script>let a = 1;</script> {{ v }} <style>p {}</style>",
            "{% raw %}<a href={{ v }}>{% endraw %}",
        ] {
            assert_eq!(why(source), None, "{source}");
        }
    }

    #[test]
    fn values_where_no_escaping_helps_are_refused_with_their_place() {
        let cases = [
            (
                "<img src={{ v }}>",
                "inside the `<img>` tag but outside quotes",
            ),
            (
                "<a {{ v }}>x</a>",
                "inside the `<a>` tag but outside quotes",
            ),
            (
                "<a\nhref={{ v }}\n>",
                "inside the `<a>` tag but outside quotes",
            ),
            ("<{{ v }}>", "right after `<`"),
            ("</{{ v }}>", "right after `<`"),
            (
                "<b onclick=\"f('{{ v }}')\">",
                "`onclick` attribute of `<b>`",
            ),
            (
                "<iframe srcdoc=\"{{ v }}\">",
                "`srcdoc` attribute of `<iframe>`",
            ),
            (
                "<script>\n\nlet a = '{{ v }}';</script>",
                "inside `<script>`",
            ),
            ("<STYLE>p { color: {{ v }} }</STYLE>", "inside `<style>`"),
        ];
        for (source, expected) in cases {
            let why = why(source).unwrap_or_default();
            assert!(why.contains(expected), "{source}: {why}");
        }
        let source = "ok {{ a }}\n<img src={{ b }}>";
        let refusal = first_unescapable(source, &pieces(source)).unwrap();
        assert_eq!(refusal.at, source.find("{{ b").unwrap());
    }
}
