//! Human durations in `lab.toml` ("60s", "500ms", "2m", "1.5s") and tolerances ("2.5%").

use std::time::Duration;

/// Parses `"60s"`, `"500ms"`, `"2m"`, `"1h"`, `"1.5s"`; `None` when malformed or not positive.
pub fn parse_duration(text: &str) -> Option<Duration> {
    duration_seconds(text)
        .filter(|s| *s < LONGEST_SECONDS)
        .map(Duration::from_secs_f64)
}

/// The longest duration lab accepts, in seconds (about 31.7 years): beyond it a deadline on
/// the monotonic clock could not be represented.
pub(crate) const LONGEST_SECONDS: f64 = 1e9;

/// The seconds a duration's text says (`"60s"`, `"500ms"`, `"2m"`, `"1.5 h"`), however
/// long; `None` unless it is a positive, finite number with a known unit.
pub(crate) fn duration_seconds(text: &str) -> Option<f64> {
    let text = text.trim();
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number.trim().parse().ok()?;
    let seconds = match unit.trim() {
        "ns" => value * 1e-9,
        "us" | "µs" => value * 1e-6,
        "ms" => value * 1e-3,
        "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return None,
    };
    (seconds.is_finite() && seconds > 0.0).then_some(seconds)
}

/// A duration that may be zero ("0s", "0", "2s", "500ms"), as a wait is: `None` when
/// malformed, negative or longer than an hour.
pub fn parse_wait(text: &str) -> Option<Duration> {
    let text = text.trim();
    let zero = text
        .trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == 'µ')
        .trim()
        .parse::<f64>()
        .is_ok_and(|v| v == 0.0);
    if zero {
        return Some(Duration::ZERO);
    }
    duration_seconds(text)
        .filter(|s| *s <= 3600.0)
        .map(Duration::from_secs_f64)
}

/// Parses a relative tolerance: `"2.5%"` → 0.025, or a plain fraction `"0.025"`.
pub fn parse_fraction(text: &str) -> Option<f64> {
    let text = text.trim();
    let value = match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().ok()? / 100.0,
        None => text.parse::<f64>().ok()?,
    };
    (value.is_finite() && value >= 0.0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_common_units() {
        assert_eq!(parse_duration("60s"), Some(Duration::from_secs(60)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5 s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("60"), None);
        assert_eq!(parse_duration("-1s"), None);
        assert_eq!(parse_duration("3 parsecs"), None);
        // Past what a deadline can hold: refused, where `Duration::from_secs_f64` would panic.
        assert_eq!(parse_duration("18446744073709551616s"), None);
        assert_eq!(parse_duration("184467440737095516m"), None);
        assert_eq!(
            duration_seconds("184467440737095516m"),
            Some(184_467_440_737_095_516.0 * 60.0)
        );
        assert_eq!(parse_duration("1e400s"), None);
    }

    #[test]
    fn fractions_and_percentages() {
        assert_eq!(parse_fraction("2.5%"), Some(0.025));
        assert_eq!(parse_fraction("0.1"), Some(0.1));
        assert_eq!(parse_fraction("ten"), None);
        assert_eq!(parse_fraction("-5%"), None);
    }
}
