//! The one place numbers become text: values with units, ratios, seconds, intervals.

/// A value with about three significant digits and its unit: `8.41 Mops/s`, `0.213 Mops/s`.
pub fn value(x: f64, unit: &str) -> String {
    let number = significant(x, 3);
    if unit.is_empty() {
        number
    } else {
        format!("{number} {unit}")
    }
}

/// A ratio with three significant digits: `0.274`, `1.02`, `12.5`.
pub fn ratio(x: f64) -> String {
    significant(x, 3)
}

/// Seconds with three significant digits: `2.31 s`, `0.501 s`.
pub fn seconds(x: f64) -> String {
    format!("{} s", significant(x, 3))
}

/// A percentage with one decimal: `4.2%`.
pub fn percent(fraction: f64) -> String {
    format!("{:.1}%", fraction * 100.0)
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
    if !(-4..=9).contains(&magnitude) {
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

/// A metric value as programs print it: `5,194,253`, `5_194_253`, `5 194 253`, `+12`, or
/// `12.5ms` when the metric's unit is `ms`. Separators must group digits by three, so `1,5`
/// (a decimal comma or a typo?) is refused as ambiguous rather than guessed. The result is
/// finite.
pub fn parse_value(text: &str, unit: &str) -> Result<f64, String> {
    let mut t = text.trim();
    if !unit.is_empty() {
        if let Some(stripped) = t.strip_suffix(unit) {
            t = stripped.trim_end();
        }
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
        Ok(_) => Err("is not a finite number".into()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_programs_print_them() {
        assert_eq!(parse_value("5,194,253", ""), Ok(5_194_253.0));
        assert_eq!(parse_value("5_194_253", ""), Ok(5_194_253.0));
        assert_eq!(parse_value("5 194 253.5", ""), Ok(5_194_253.5));
        assert_eq!(parse_value("+12", ""), Ok(12.0));
        assert_eq!(parse_value("-1,000", ""), Ok(-1000.0));
        assert_eq!(parse_value("12.5ms", "ms"), Ok(12.5));
        assert_eq!(parse_value("12.5 ms", "ms"), Ok(12.5));
        assert_eq!(parse_value("1e3", ""), Ok(1000.0));
        assert!(
            parse_value("1,5", "")
                .unwrap_err()
                .starts_with("is ambiguous")
        );
        assert!(
            parse_value("12,34,567", "")
                .unwrap_err()
                .starts_with("is ambiguous")
        );
        assert_eq!(parse_value("12.5ms", ""), Err("is not a number".into()));
        assert_eq!(parse_value("nan", ""), Err("is not a finite number".into()));
        assert_eq!(parse_value("inf", ""), Err("is not a finite number".into()));
    }

    #[test]
    fn three_significant_digits() {
        assert_eq!(significant(8.4123, 3), "8.41");
        assert_eq!(significant(0.21345, 3), "0.213");
        assert_eq!(significant(30.66, 3), "30.7");
        assert_eq!(significant(1234.6, 3), "1235");
        assert_eq!(significant(9.996, 3), "10.0");
        assert_eq!(significant(0.0, 3), "0");
        assert_eq!(significant(-2.5, 3), "-2.50");
        assert_eq!(significant(1.5e-7, 3), "1.50e-7");
        assert_eq!(significant(f64::NAN, 3), "n/a");
    }

    #[test]
    fn units_and_seconds() {
        assert_eq!(value(8.4, "Mops/s"), "8.40 Mops/s");
        assert_eq!(seconds(2.3104), "2.31 s");
        assert_eq!(percent(0.0423), "4.2%");
    }
}
