//! `max_output`: a size in bytes, written as a number of bytes or with a binary unit
//! ("64MiB", "512 KiB", "1GiB").

use super::error::{ConfigError, Locator};
use super::raw::RawNumberOrText;
use toml::Spanned;

type Result<T> = std::result::Result<T, ConfigError>;

/// How much of one output stream of one run the record keeps when lab.toml does not say:
/// far more than any benchmark prints to report its values, far less than a full disk.
pub const DEFAULT_MAX_OUTPUT: u64 = 64 * 1024 * 1024;

/// The units a size may be written in, with their bytes.
const UNITS: [(&str, u64); 4] = [
    ("GiB", 1 << 30),
    ("MiB", 1 << 20),
    ("KiB", 1 << 10),
    ("B", 1),
];

/// `max_output`, [`DEFAULT_MAX_OUTPUT`] when absent; an error at its place for a size that is
/// not a whole, positive number of bytes.
pub(crate) fn max_output_of(
    value: Option<&Spanned<RawNumberOrText>>,
    loc: &Locator,
) -> Result<u64> {
    let Some(value) = value else {
        return Ok(DEFAULT_MAX_OUTPUT);
    };
    let bytes = match value.get_ref() {
        RawNumberOrText::Number(n) if n.fract() == 0.0 && *n >= 1.0 && *n <= 9.0e15 => {
            Some(*n as u64)
        }
        RawNumberOrText::Number(_) => None,
        RawNumberOrText::Text(t) => parse_size(t),
    };
    bytes.ok_or_else(|| {
        loc.hinted(
            value.span(),
            "experiment.max_output",
            "not a size of at least one byte",
            "write e.g. \"64MiB\", \"512KiB\" or a number of bytes",
        )
    })
}

/// Bytes of "64MiB", "64 MiB", "1GiB", "100B"; `None` for anything else.
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, factor) = UNITS
        .iter()
        .find_map(|(unit, factor)| text.strip_suffix(unit).map(|n| (n.trim(), *factor)))?;
    let count: u64 = number.parse().ok()?;
    count.checked_mul(factor).filter(|&b| b > 0)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_are_read_in_binary_units() {
        assert_eq!(parse_size("64MiB"), Some(64 << 20));
        assert_eq!(parse_size("64 MiB"), Some(64 << 20));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("512 KiB"), Some(512 << 10));
        assert_eq!(parse_size("100B"), Some(100));
        for bad in ["", "MiB", "0B", "1.5MiB", "64MB", "-1KiB", "99999999999GiB"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }
}
