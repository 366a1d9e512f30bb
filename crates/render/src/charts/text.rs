//! Text the charts write themselves: fitted into a width by measured wrapping at word
//! boundaries and an ellipsis, escaped, and given its full wording as a tooltip when shortened.

use std::fmt::Write as _;

use plotters::style::RGBColor;

use super::style;
pub(super) use super::style::Face;

/// Text broken into lines that fit a width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Fitted {
    pub lines: Vec<String>,
    /// Whether words were left out: the full text then belongs in a tooltip.
    pub shortened: bool,
}

impl Fitted {
    /// One line exactly as given (for text that needs no fitting).
    pub(super) fn single(text: &str) -> Fitted {
        Fitted {
            lines: vec![text.to_string()],
            shortened: false,
        }
    }

    pub(super) fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// Width of the widest line.
    pub(super) fn width(&self, face: Face) -> f64 {
        self.lines.iter().map(|l| face.width(l)).fold(0.0, f64::max)
    }
}

const ELLIPSIS: char = '…';

/// Breaks `text` into at most `max_lines` lines no wider than `max_width`, at spaces. A
/// word wider than a whole line is split where it must; text that still does not fit ends
/// the last line with "…" after the last whole word that fits.
pub(super) fn fit(text: &str, face: Face, max_width: f64, max_lines: usize) -> Fitted {
    let mut words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    words.reverse(); // a stack: the next word is at the end
    let mut lines = Vec::new();
    let max_lines = max_lines.max(1);
    while !words.is_empty() {
        if lines.len() + 1 == max_lines {
            let rest: Vec<String> = words.drain(..).rev().collect();
            let (line, shortened) = last_line(&rest, face, max_width);
            lines.push(line);
            return Fitted { lines, shortened };
        }
        lines.push(next_line(&mut words, face, max_width));
    }
    if lines.is_empty() {
        lines.push(String::new());
    }
    Fitted {
        lines,
        shortened: false,
    }
}

/// Takes as many words off `stack` as fit on one line; a first word too wide for any
/// line is split and its remainder pushed back.
fn next_line(stack: &mut Vec<String>, face: Face, max_width: f64) -> String {
    let mut line = String::new();
    while let Some(word) = stack.pop() {
        let candidate = joined(&line, &word);
        if face.width(&candidate) <= max_width {
            line = candidate;
            continue;
        }
        if line.is_empty() {
            let (head, tail) = split_word(&word, face, max_width);
            if !tail.is_empty() {
                stack.push(tail);
            }
            return head;
        }
        stack.push(word);
        break;
    }
    line
}

/// All of `words` on one line when they fit, else as many whole words as fit before "…"
/// (or, when not even the first word fits, as much of it as fits). Says whether it shortened.
fn last_line(words: &[String], face: Face, max_width: f64) -> (String, bool) {
    let all = words.join(" ");
    if face.width(&all) <= max_width {
        return (all, false);
    }
    let mut line = String::new();
    for word in words {
        let candidate = joined(&line, word);
        if face.width(&format!("{candidate}{ELLIPSIS}")) > max_width {
            break;
        }
        line = candidate;
    }
    if line.is_empty() {
        line = prefix_fitting(&all, face, max_width - face.width("…"));
    }
    line.push(ELLIPSIS);
    (line, true)
}

fn joined(line: &str, word: &str) -> String {
    if line.is_empty() {
        word.to_string()
    } else {
        format!("{line} {word}")
    }
}

/// Splits a word too wide for a line into the part that fits (at least one character,
/// so the caller always advances) and the rest.
fn split_word(word: &str, face: Face, max_width: f64) -> (String, String) {
    let head = prefix_fitting(word, face, max_width);
    let head = if head.is_empty() {
        word.chars().take(1).collect()
    } else {
        head
    };
    let tail = word[head.len()..].to_string();
    (head, tail)
}

/// The longest prefix of `text` no wider than `max_width`.
fn prefix_fitting(text: &str, face: Face, max_width: f64) -> String {
    let mut out = String::new();
    for c in text.chars() {
        out.push(c);
        if face.width(&out) > max_width {
            out.pop();
            break;
        }
    }
    out
}

/// Which end of a line its position names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn svg(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// How the lines of a block sit around its position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Align {
    /// The block is centred on the position.
    Center,
    /// The first line is centred on the position; the others follow below it.
    FirstLine,
}

/// A block of text drawn on top of the chart: one `<text>` per line, wrapped in a `<g>`
/// with a `<title>` (a hover tooltip holding the full text) when the text was shortened.
#[derive(Clone, Debug)]
pub(super) struct Text {
    at: (i32, i32),
    face: Face,
    lines: Vec<String>,
    tooltip: Option<String>,
    anchor: Anchor,
    align: Align,
    rotate: i32,
    color: RGBColor,
    halo: bool,
}

impl Text {
    /// `fitted` at `at`; `full` is the text it was fitted from, kept as a tooltip when shortened.
    pub(super) fn fitted(at: (i32, i32), face: Face, fitted: &Fitted, full: &str) -> Text {
        Text {
            at,
            face,
            lines: fitted.lines.clone(),
            tooltip: fitted.shortened.then(|| full.to_string()),
            anchor: Anchor::Start,
            align: Align::Center,
            rotate: 0,
            color: style::TEXT,
            halo: false,
        }
    }

    /// One line of text that needs no fitting.
    pub(super) fn line(at: (i32, i32), face: Face, text: &str) -> Text {
        Text::fitted(at, face, &Fitted::single(text), text)
    }

    pub(super) fn anchor(self, anchor: Anchor) -> Text {
        Text { anchor, ..self }
    }

    pub(super) fn align(self, align: Align) -> Text {
        Text { align, ..self }
    }

    /// Rotates the block by `degrees` (clockwise, as SVG counts) about its position.
    pub(super) fn rotate(self, degrees: i32) -> Text {
        Text {
            rotate: degrees,
            ..self
        }
    }

    pub(super) fn color(self, color: RGBColor) -> Text {
        Text { color, ..self }
    }

    /// Outlines the glyphs in white so text over grid lines or points stays legible.
    pub(super) fn halo(self) -> Text {
        Text { halo: true, ..self }
    }

    /// Appends the SVG of the block to `out`.
    pub(super) fn write_svg(&self, out: &mut String) {
        if let Some(full) = &self.tooltip {
            let _ = writeln!(out, "<g><title>{}</title>", xml_escape(full));
        }
        for (k, line) in self.lines.iter().enumerate() {
            self.write_line(out, k, line);
        }
        if self.tooltip.is_some() {
            out.push_str("</g>\n");
        }
    }

    fn write_line(&self, out: &mut String, k: usize, line: &str) {
        let (x, y) = self.at;
        let _ = write!(out, r#"<text x="{x}" y="{y}" dy="{:.1}""#, self.baseline(k));
        if self.rotate != 0 {
            let _ = write!(out, r#" transform="rotate({} {x} {y})""#, self.rotate);
        }
        let _ = write!(
            out,
            r#" text-anchor="{}" font-family="{}" font-size="{}""#,
            self.anchor.svg(),
            style::FONT_FAMILY,
            self.face.px
        );
        if self.face.bold {
            out.push_str(r#" font-weight="bold""#);
        }
        let _ = write!(out, r#" fill="{}""#, style::hex(self.color));
        if self.halo {
            out.push_str(
                r##" stroke="#FFFFFF" stroke-width="3" stroke-linejoin="round" paint-order="stroke""##,
            );
        }
        let _ = writeln!(out, ">{}</text>", xml_escape(line));
    }

    /// Offset of line `k`'s baseline from the position, along the (rotated) vertical.
    /// 0.35 em below a line's middle is where its baseline sits.
    fn baseline(&self, k: usize) -> f64 {
        let step = f64::from(self.face.line_height());
        let first = match self.align {
            Align::Center => -(self.lines.len() as f64 - 1.0) / 2.0 * step,
            Align::FirstLine => 0.0,
        };
        first + k as f64 * step + 0.35 * self.face.px
    }
}

/// Escapes text for SVG content and attribute values, and replaces the characters XML
/// does not allow at all (most control characters) with U+FFFD, so the document stays valid.
pub(super) fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() || matches!(c, '\u{FFFE}' | '\u{FFFF}') => out.push('\u{FFFD}'),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FACE: Face = Face::regular(12.5);

    #[test]
    fn short_text_stays_on_one_line() {
        let f = fit("spin vs nonfair", FACE, 200.0, 2);
        assert_eq!(f, Fitted::single("spin vs nonfair"));
    }

    #[test]
    fn long_text_wraps_at_words() {
        let text = "non-fair at 2 threads is under half of 1 thread";
        let f = fit(text, FACE, 180.0, 2);
        assert_eq!(f.lines.len(), 2);
        assert!(!f.shortened);
        assert_eq!(f.lines.join(" "), text);
        assert!(f.lines.iter().all(|l| FACE.width(l) <= 180.0));
    }

    #[test]
    fn too_long_text_ends_with_a_whole_word_and_an_ellipsis() {
        let text = "Treiber keeps at least a tenth of its one-thread throughput at 16 threads";
        let f = fit(text, FACE, 150.0, 2);
        assert!(f.shortened);
        assert_eq!(f.lines.len(), 2);
        let last = &f.lines[1];
        assert!(last.ends_with('…'), "{last}");
        let kept = last.trim_end_matches('…');
        assert!(text.contains(&format!("{kept} ")), "{kept:?} ends mid-word");
        assert!(f.lines.iter().all(|l| FACE.width(l) <= 150.0));
    }

    #[test]
    fn a_word_wider_than_a_line_is_split() {
        let word = "a".repeat(80);
        let f = fit(&word, FACE, 100.0, 3);
        assert_eq!(f.lines.len(), 3);
        assert!(f.shortened);
        assert!(f.lines.iter().all(|l| FACE.width(l) <= 100.0));
        let one = fit(&word, FACE, 100.0, 1);
        assert!(one.lines[0].ends_with('…') && one.shortened);
    }

    #[test]
    fn degenerate_widths_and_text() {
        assert_eq!(fit("", FACE, 100.0, 2).lines, vec![String::new()]);
        let f = fit("abc def", FACE, 0.0, 2);
        assert!(f.shortened && f.lines.len() == 2);
        let f = fit("漢字漢字漢字", FACE, 30.0, 2);
        assert!(f.lines.iter().all(|l| !l.is_empty()));
    }

    #[test]
    fn shortened_text_carries_its_full_wording_as_a_tooltip() {
        let full = "a <long> label & more words than fit";
        let f = fit(full, FACE, 80.0, 1);
        let mut svg = String::new();
        Text::fitted((10, 20), FACE, &f, full).write_svg(&mut svg);
        assert!(
            svg.starts_with("<g><title>a &lt;long&gt; label &amp; more words than fit</title>")
        );
        assert!(svg.trim_end().ends_with("</g>"));
        assert_eq!(svg.matches("<text").count(), 1);
        let mut plain = String::new();
        Text::line((0, 0), FACE, "short").write_svg(&mut plain);
        assert!(!plain.contains("<title>") && plain.contains(">short</text>"));
    }

    #[test]
    fn lines_stack_and_escape() {
        let f = fit("one two three four", FACE, 40.0, 3);
        let mut svg = String::new();
        Text::fitted((0, 0), Face::bold(12.5), &f, "")
            .rotate(-45)
            .halo()
            .write_svg(&mut svg);
        assert_eq!(svg.matches("<text").count(), f.lines.len());
        assert!(
            svg.contains(r#"transform="rotate(-45 0 0)""#) && svg.contains("font-weight=\"bold\"")
        );
        assert!(svg.contains("paint-order=\"stroke\""));
        assert_eq!(xml_escape("a\u{0}b\u{1b}"), "a\u{FFFD}b\u{FFFD}");
    }

    proptest::proptest! {
        #[test]
        fn fitted_lines_never_exceed_the_width(text in "\\PC{0,80}", w in 20.0f64..400.0, n in 1usize..4) {
            let f = fit(&text, FACE, w, n);
            proptest::prop_assert!(f.lines.len() <= n);
            for l in &f.lines {
                // A single character may be wider than a very narrow line; nothing else may.
                proptest::prop_assert!(FACE.width(l) <= w || l.chars().count() <= 2, "{:?}", l);
            }
            if !f.shortened {
                let words: Vec<&str> = text.split_whitespace().collect();
                proptest::prop_assert_eq!(f.lines.join(" ").split_whitespace().collect::<Vec<_>>().concat(), words.concat());
            }
        }
    }
}
