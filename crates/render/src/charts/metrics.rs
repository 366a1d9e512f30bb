//! Text widths from font metrics: the advance widths of Helvetica and Helvetica-Bold.
//!
//! The SVG backend cannot measure glyphs, so layout (label columns, wrapping, legends)
//! measures text with these tables. They are Adobe's Core 14 AFM metrics (`phvr8a.afm`
//! and `phvb8a.afm`, Helvetica and Helvetica-Bold, © Adobe Systems 1985–1990, as shipped
//! in matplotlib's `mpl-data/fonts/afm/`). Liberation Sans and Arial are metric-compatible
//! with Helvetica, and the charts name them first in their font stack
//! (the chart style's `FONT_FAMILY`), so what is measured here is what browsers draw.
//! ASCII `'` and `` ` `` are the `quotesingle` and `grave` glyphs (the AFM's standard
//! encoding puts curly quotes at those codes). Kerning is ignored, which can only
//! overestimate.

/// Width assumed for a character outside the tables: wider than any Latin letter but `m`/`W`.
const OTHER_UNITS: u16 = 600;
/// Width assumed for East Asian wide characters and emoji: a full em.
const WIDE_UNITS: u16 = 1000;

/// Helvetica advance widths of `' '..='~'` (U+0020..=U+007E), in 1/1000 em.
const REGULAR_ASCII: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667,
    611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500,
    222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];
/// Helvetica advance widths of the non-ASCII characters the charts print themselves.
const REGULAR_EXTRA: [(char, u16); 10] = [
    ('…', 1000), // ellipsis
    ('µ', 556),  // mu
    ('÷', 584),  // divide
    ('–', 556),  // endash
    ('—', 1000), // emdash
    ('·', 278),  // periodcentered
    ('−', 584),  // minus
    ('×', 584),  // multiply
    ('±', 584),  // plusminus
    ('°', 400),  // degree
];
/// Helvetica-Bold advance widths of `' '..='~'` (U+0020..=U+007E), in 1/1000 em.
const BOLD_ASCII: [u16; 95] = [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611, 975, 722, 722, 722, 722, 667,
    611, 778, 722, 278, 556, 722, 611, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 333, 278, 333, 584, 556, 333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556,
    278, 889, 611, 611, 611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
];
/// Helvetica-Bold advance widths of the non-ASCII characters the charts print themselves.
const BOLD_EXTRA: [(char, u16); 10] = [
    ('…', 1000), // ellipsis
    ('µ', 611),  // mu
    ('÷', 584),  // divide
    ('–', 556),  // endash
    ('—', 1000), // emdash
    ('·', 278),  // periodcentered
    ('−', 584),  // minus
    ('×', 584),  // multiply
    ('±', 584),  // plusminus
    ('°', 400),  // degree
];

/// Width in pixels of `text` set at `px` pixels, bold or not.
pub(super) fn width(text: &str, px: f64, bold: bool) -> f64 {
    let units: u32 = text.chars().map(|c| u32::from(units(c, bold))).sum();
    f64::from(units) * px / 1000.0
}

/// Advance width of one character in 1/1000 em.
fn units(c: char, bold: bool) -> u16 {
    let (ascii, extra) = if bold {
        (&BOLD_ASCII, &BOLD_EXTRA)
    } else {
        (&REGULAR_ASCII, &REGULAR_EXTRA)
    };
    if (' '..='~').contains(&c) {
        return ascii[c as usize - ' ' as usize];
    }
    if let Some((_, w)) = extra.iter().find(|(e, _)| *e == c) {
        return *w;
    }
    if is_wide(c) { WIDE_UNITS } else { OTHER_UNITS }
}

/// East Asian wide and fullwidth characters and emoji, which take a full em.
fn is_wide(c: char) -> bool {
    matches!(u32::from(c),
        0x1100..=0x115F
        | 0x2E80..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F000..=0x1FAFF
        | 0x20000..=0x3FFFD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_the_afm_tables() {
        // m 833 + o 556 + p 556 + s 500 = 2445 units; at 11 px that is 26.895 px.
        assert!((width("mops", 11.0, false) - 26.895).abs() < 1e-9);
        // P 667 + A 722 + S 667 + S 667 = 2723 units in bold.
        assert!((width("PASS", 12.5, true) - 34.0375).abs() < 1e-9);
        assert_eq!(width("", 12.0, false), 0.0);
        assert!(width("W", 10.0, false) > width("i", 10.0, false) * 4.0);
    }

    #[test]
    fn non_ascii_is_measured_conservatively() {
        assert_eq!(width("…", 10.0, false), 10.0);
        assert_eq!(width("µ", 10.0, false), 5.56);
        assert_eq!(width("é", 10.0, false), 6.0);
        assert_eq!(width("漢", 10.0, false), 10.0);
        assert_eq!(width("🦀", 10.0, true), 10.0);
    }
}
