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
