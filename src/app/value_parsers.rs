//! Value parsers shared by the commands that compare against a threshold.

/// The value parser of `--threshold`: a share from 0 up to 100%, as "2%" or 0.02.
pub fn threshold(text: &str) -> std::result::Result<f64, String> {
    crate::config::parse_fraction(text)
        .filter(|t| (0.0..1.0).contains(t))
        .ok_or_else(|| {
            format!(
                "--threshold {text:?} is not a share from 0 up to 100%\n  hint: write e.g. --threshold 2% (changes within ±2% count as noise)"
            )
        })
}
