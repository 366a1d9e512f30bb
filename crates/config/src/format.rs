//! The one place numbers become text: values with units, SI prefixes, intervals, memory,
//! ratios, seconds and axis labels. Tables, notes, charts and the terminal all print through it.

use crate::units::{Nanos, Seconds};
use lab_basis::Estimate;
use unicode_width::UnicodeWidthStr;

/// Values in `[PLAIN_LOW, PLAIN_HIGH)` print without a prefix; others get an SI prefix.
const PLAIN_LOW: f64 = 1e-3;
const PLAIN_HIGH: f64 = 1e4;

/// SI prefixes by power of ten (BIPM, *The International System of Units*, 9th ed., 2019, §3).
const PREFIXES: [(i32, &str); 9] = [
    (-12, "p"),
    (-9, "n"),
    (-6, "µ"),
    (-3, "m"),
    (0, ""),
    (3, "k"),
    (6, "M"),
    (9, "G"),
    (12, "T"),
];

/// Units a prefix joins without a space (`568 µs`, `1.20 GB`); other units get the prefix as
/// a word of its own (`276 M ops/s`, `78.6 µ parks/op`).
const PREFIXABLE_UNITS: [&str; 9] = ["s", "B", "b", "bit", "Hz", "W", "J", "V", "m"];

/// Binary memory units and their size in bytes: values in them print as MiB/GiB.
const MEMORY_UNITS: [(&str, f64); 5] = [
    ("B", 1.0),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
    ("TiB", 1099511627776.0),
];

/// A value with three significant digits, an SI prefix where it is large or small, and its
/// unit: `8.41 Mops/s`, `276 M ops/s`, `78.6 µ parks/op`, `568 µs`, `2.00 GiB` (for MiB).
pub fn value(x: f64, unit: &str) -> String {
    if let Some(bytes_per_unit) = memory_unit(unit) {
        return memory(x * bytes_per_unit);
    }
    let (x, unit) = if prefix_exponent(x) == 0 {
        (x, unit)
    } else {
        to_base_unit(x, unit)
    };
    let (number, prefix) = scaled(x, 3);
    join_unit(&number, prefix, unit)
}

/// A prefixed SI unit (`ms`, `µs`, `GHz`, `kB`) as its base unit, for a value that needs a
/// prefix of its own: 0.0002 ms prints as `200 ns`, not `200 µ ms`.
fn to_base_unit(x: f64, unit: &str) -> (f64, &str) {
    for (exponent, prefix) in PREFIXES.iter().filter(|(e, _)| *e != 0) {
        if let Some(base) = unit.strip_prefix(prefix)
            && PREFIXABLE_UNITS.contains(&base)
            && base != "m"
        {
            return (x * 10f64.powi(*exponent), base);
        }
    }
    (x, unit)
}

/// A bare number as a table cell shows it: three significant digits and an SI prefix where
/// it is large or small (`276 M`, `78.6 µ`, `0.0938`, `1235`). Memory units scale to MiB.
pub fn number(x: f64, unit: &str) -> String {
    if memory_unit(unit).is_some() {
        return significant(x, 3);
    }
    let (number, prefix) = scaled(x, 3);
    if prefix.is_empty() {
        number
    } else {
        format!("{number} {prefix}")
    }
}

/// A value with its interval, one prefix per number: `276 M [247 M, 350 M]`.
pub fn interval(x: f64, lo: f64, hi: f64, unit: &str) -> String {
    with_bounds(number(x, unit), number(lo, unit), number(hi, unit))
}

/// A value with its unit and its interval as bare numbers: `276 M ops/s [247 M, 350 M]`.
pub fn value_interval(x: f64, lo: f64, hi: f64, unit: &str) -> String {
    with_bounds(value(x, unit), number(lo, unit), number(hi, unit))
}

/// An estimate as [`value_interval`] prints it.
pub fn estimate(e: &Estimate, unit: &str) -> String {
    value_interval(e.point, e.interval.lo, e.interval.hi, unit)
}

/// A ratio with its interval: `0.384 [0.344, 0.583]`.
pub fn ratio_interval(r: f64, lo: f64, hi: f64) -> String {
    format!("{} {}", ratio(r), ratio_bounds(lo, hi))
}

/// A ratio and its interval with four significant digits, where three cannot tell a bound
/// from the edge of a ±2% band: `1.019 [1.008, 1.031]`.
pub fn ratio_interval_fine(r: f64, lo: f64, hi: f64) -> String {
    let fine = |x: f64| significant(x, 4);
    with_bounds(fine(r), fine(lo), fine(hi))
}

/// A ratio estimate as [`ratio_interval`] prints it.
pub fn ratio_estimate(e: &Estimate) -> String {
    ratio_interval(e.point, e.interval.lo, e.interval.hi)
}

/// The bounds of a ratio's interval alone: `[0.344, 0.583]`.
pub fn ratio_bounds(lo: f64, hi: f64) -> String {
    format!("[{}, {}]", ratio(lo), ratio(hi))
}

fn with_bounds(point: String, lo: String, hi: String) -> String {
    format!("{point} [{lo}, {hi}]")
}

/// A p-value in a sentence: `p = 0.012`, or `p < 0.0001` below what the tests resolve.
pub fn p_value(p: f64) -> String {
    if p < 1e-4 {
        "p < 0.0001".into()
    } else {
        format!("p = {}", significant(p, 2))
    }
}

/// A nanosecond count in seconds as [`seconds`] prints them: `2.31 s`, `568 µs`.
pub fn duration(t: Nanos) -> String {
    seconds(t.seconds().0)
}

/// A span of time in whole seconds and minutes, as a person says it: `45 s`, `2 min 5 s`,
/// `9 min`.
pub fn minutes(seconds: f64) -> String {
    let total = seconds.max(0.0).round() as u64;
    match (total / 60, total % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

/// A nanosecond count in milliseconds, re-prefixed where it is large or small: `0.568 ms`,
/// `12.5 ms`, `200 ns`.
pub fn millis(t: Nanos) -> String {
    value(t.millis().0, "ms")
}

/// Seconds with three decimals, as progress lines print them: `2.310 s`.
pub fn seconds_fixed(t: Seconds) -> String {
    format!("{:.3} s", t.0)
}

/// The columns `text` takes on a terminal: wide characters count two, combining marks none.
pub fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// `text` padded with spaces on the right to `columns` terminal columns (as `{:<N}` pads to
/// N characters).
pub fn pad(text: &str, columns: usize) -> String {
    let fill = columns.saturating_sub(width(text));
    format!("{text}{}", " ".repeat(fill))
}

/// A byte count in binary units: `23.5 GiB`, `512 MiB`, `980 KiB`, `12 B`.
pub fn memory(bytes: f64) -> String {
    if !bytes.is_finite() {
        return significant(bytes, 3);
    }
    let (name, size) = MEMORY_UNITS
        .iter()
        .rev()
        .find(|(_, size)| bytes.abs() >= *size)
        .copied()
        .unwrap_or(MEMORY_UNITS[0]);
    if size == 1.0 {
        format!("{} B", bytes.round())
    } else {
        format!("{} {name}", significant(bytes / size, 3))
    }
}

fn memory_unit(unit: &str) -> Option<f64> {
    MEMORY_UNITS
        .iter()
        .find(|(name, size)| *name == unit && *size > 1.0)
        .map(|(_, size)| *size)
}

fn join_unit(number: &str, prefix: &str, unit: &str) -> String {
    match (prefix.is_empty(), unit.is_empty()) {
        (true, true) => number.to_string(),
        (true, false) => format!("{number} {unit}"),
        (false, true) => format!("{number} {prefix}"),
        (false, false) if PREFIXABLE_UNITS.contains(&unit) => format!("{number} {prefix}{unit}"),
        (false, false) => format!("{number} {prefix} {unit}"),
    }
}

/// The power of ten a value's prefix stands for: 0 in the plain range, else the multiple of
/// three that leaves a mantissa in `[1, 1000)`, bounded by the prefixes there are.
fn prefix_exponent(x: f64) -> i32 {
    let a = x.abs();
    if !a.is_finite() || a == 0.0 || (PLAIN_LOW..PLAIN_HIGH).contains(&a) {
        return 0;
    }
    let engineering = (a.log10().floor() as i32).div_euclid(3) * 3;
    engineering.clamp(-12, 12)
}

fn prefix_of(exponent: i32) -> &'static str {
    PREFIXES
        .iter()
        .find(|(e, _)| *e == exponent)
        .map_or("", |(_, p)| p)
}

/// `x` with `digits` significant digits and the prefix it was scaled by. Rounding that
/// carries into the next prefix (999.6 k) moves up one (1.00 M).
fn scaled(x: f64, digits: i32) -> (String, &'static str) {
    let mut exponent = prefix_exponent(x);
    if exponent != 0 {
        let mantissa = round_significant(x / 10f64.powi(exponent), digits);
        if mantissa.abs() >= 1000.0 && exponent < 12 {
            exponent += 3;
        }
    }
    let mantissa = x / 10f64.powi(exponent);
    (significant(mantissa, digits), prefix_of(exponent))
}

fn round_significant(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let factor = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    (x * factor).round() / factor
}

/// Labels for axis ticks spaced `step` apart: one prefix for the whole axis, chosen by its
/// largest tick, and exactly as many decimals as the step needs, so every label reads as its
/// tick's value (`0`, `25`, `50` … `125`; `0.02 µ` … never a rounded `130`).
pub fn axis_labels(ticks: &[f64], step: f64) -> Vec<String> {
    let largest = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
    ticks
        .iter()
        .map(|t| axis_label(*t, largest, step))
        .collect()
}

/// One label of an axis whose largest tick is `largest` and whose ticks are `step` apart.
pub fn axis_label(tick: f64, largest: f64, step: f64) -> String {
    let exponent = prefix_exponent(largest);
    let scale = 10f64.powi(exponent);
    let decimals = decimals_for(step / scale);
    let text = format!("{:.decimals$}", tick / scale);
    if text
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        return "0".into();
    }
    format!("{text}{}", prefix_of(exponent))
}

/// Decimals that print `step` (and so every multiple of it) exactly, for 1-2-5 steps and
/// anything coarser than 10⁻¹².
fn decimals_for(step: f64) -> usize {
    if !(step.is_finite() && step > 0.0) {
        return 0;
    }
    (0..=12)
        .find(|d| {
            let shown: f64 = format!("{step:.d$}").parse().unwrap_or(0.0);
            (shown - step).abs() <= step * 1e-6
        })
        .unwrap_or(12)
}

/// Reads a label written by [`axis_labels`] or [`number`] back: `125`, `2.5k`, `78.6 µ`.
pub fn parse_prefixed(text: &str) -> Option<f64> {
    let t = text.trim();
    for (exponent, prefix) in PREFIXES.iter().filter(|(e, _)| *e != 0) {
        if let Some(mantissa) = t.strip_suffix(prefix) {
            return mantissa
                .trim()
                .parse::<f64>()
                .ok()
                .map(|m| m * 10f64.powi(*exponent));
        }
    }
    t.parse().ok()
}

/// A ratio with three significant digits: `0.274`, `1.02`, `12.5`.
pub fn ratio(x: f64) -> String {
    significant(x, 3)
}

/// Seconds with three significant digits and a prefix below a millisecond-scale second:
/// `2.31 s`, `0.501 s`, `568 µs`.
pub fn seconds(x: f64) -> String {
    value(x, "s")
}

/// A correlation coefficient with two decimals: `-0.82`, `0.05`, `1.00` (never `-0.00`).
pub fn correlation(rho: f64) -> String {
    let text = format!("{rho:.2}");
    if text == "-0.00" { "0.00".into() } else { text }
}

/// `n` with its thousands grouped: 100,000.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// A percentage with one decimal: `4.2%`.
pub fn percent(fraction: f64) -> String {
    format!("{:.1}%", fraction * 100.0)
}

/// A confidence level: "95%", and one decimal where it has one ("99.0%" for 0.99027).
pub fn level(level: f64) -> String {
    let pct = level * 100.0;
    if (pct - pct.round()).abs() < 1e-9 {
        format!("{pct:.0}%")
    } else {
        format!("{pct:.1}%")
    }
}

/// `x` rounded to `digits` significant digits, without exponent for everyday magnitudes and
/// without trailing zeros beyond what the digits need.
pub fn significant(x: f64, digits: i32) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "n/a".into()
        } else if x > 0.0 {
            "∞".into()
        } else {
            "−∞".into()
        };
    }
    if x == 0.0 {
        return "0".into();
    }
    let magnitude = x.abs().log10().floor() as i32;
    if !(-4..=14).contains(&magnitude) {
        return format!("{:.*e}", (digits - 1).max(0) as usize, x);
    }
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    let rounded = format!("{x:.decimals$}");
    // Rounding can carry into a new digit (9.996 → 10.00): recompute once for the new magnitude.
    let carried: f64 = rounded.parse().unwrap_or(x);
    let new_magnitude = carried.abs().log10().floor() as i32;
    if new_magnitude > magnitude && decimals > 0 {
        return format!("{carried:.*}", (digits - 1 - new_magnitude).max(0) as usize);
    }
    rounded
}

/// Why a number too large for a 64-bit float cannot be used.
pub const OUT_OF_RANGE: &str = "beyond the largest number lab can hold (about 1.8e308)";

/// A metric value as programs print it: `5,194,253`, `5_194_253`, `5 194 253`, `+12`, or
/// `12.5ms` when the metric's unit is `ms`. Separators must group digits by three, so `1,5`
/// (a decimal comma or a typo?) is refused as ambiguous rather than guessed. The result is
/// finite: NaN, an infinity and a number beyond a 64-bit float (`1e400`) are refused, each
/// named.
pub fn parse_value(text: &str, unit: &str) -> Result<f64, String> {
    let mut t = text.trim();
    if !unit.is_empty()
        && let Some(stripped) = t.strip_suffix(unit)
    {
        t = stripped.trim_end();
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let plain = match t
        .chars()
        .find(|c| matches!(c, ',' | '_' | ' ' | '\u{a0}' | '\u{202f}'))
    {
        None => t.to_string(),
        Some(sep) => ungroup(t, sep)?,
    };
    match plain.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(x) if x.is_nan() => Err("is NaN, not a number lab can use".into()),
        Ok(_) if plain.to_ascii_lowercase().contains("inf") => {
            Err("is infinite, not a number lab can use".into())
        }
        Ok(_) => Err(format!("is {OUT_OF_RANGE}")),
        Err(_) => Err("is not a number".into()),
    }
}

/// `t` without its thousands separator `sep`, when every group after the first has three
/// digits and the first has one to three.
fn ungroup(t: &str, sep: char) -> Result<String, String> {
    let (int, frac) = t.split_once('.').map_or((t, None), |(i, f)| (i, Some(f)));
    let (sign, digits) = int.strip_prefix('-').map_or(("", int), |d| ("-", d));
    let groups: Vec<&str> = digits.split(sep).collect();
    let grouped = groups.len() > 1
        && (1..=3).contains(&groups[0].len())
        && groups[1..].iter().all(|g| g.len() == 3)
        && groups.iter().all(|g| g.chars().all(|c| c.is_ascii_digit()));
    if !grouped {
        return Err(format!(
            "is ambiguous: {sep:?} does not separate groups of three digits (write 1.5 for a decimal, 1{sep}500 for thousands)"
        ));
    }
    Ok(format!(
        "{sign}{}{}",
        groups.concat(),
        frac.map_or(String::new(), |f| format!(".{f}"))
    ))
}

/// Text safe to print on a terminal: control characters (escape sequences, carriage returns,
/// bells) are shown as `\x1b`-style escapes instead of acting on the terminal.
pub fn terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' {
            out.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Text on one line: every run of whitespace, newlines included, becomes one space.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
