//! Value parsers shared by the commands: a threshold to compare against, a time budget.

/// The value parser of `--threshold`: a share from 0 up to 100%, as "2%" or 0.02.
pub fn threshold(text: &str) -> std::result::Result<f64, String> {
    lab_config::parse_fraction(text)
        .filter(|t| (0.0..1.0).contains(t))
        .ok_or_else(|| {
            format!(
                "--threshold {text:?} is not a share from 0 up to 100%\n  hint: write e.g. --threshold 2% (changes within ±2% count as noise)"
            )
        })
}

/// The value parser of `--budget`: a duration of a second or more, as "10m" or "90s".
pub(crate) fn budget(text: &str) -> std::result::Result<std::time::Duration, String> {
    lab_config::parse_duration(text)
        .filter(|d| d.as_secs_f64() >= 1.0)
        .ok_or_else(|| {
            format!(
                "--budget {text:?} is not a time budget\n  hint: write how long the runs may take, e.g. --budget 10m or --budget 90s"
            )
        })
}
