//! Verdict marks drawn by the page's CSS: a coloured badge holding the verdict's word, legible
//! without an emoji font and in the same colours as the charts.

use lab_findings::checks::Verdict;

/// The CSS class suffix of a verdict: `lab-pass`, `lab-fail`, `lab-inconclusive`, `lab-not-run`.
pub(crate) fn class(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Inconclusive => "inconclusive",
        Verdict::NotRun => "not-run",
        Verdict::AtThreshold => "at-threshold",
    }
}

/// The badge for a verdict, with an "untrusted" tag when a validity check failed.
pub(crate) fn mark(verdict: Verdict, untrusted: bool) -> String {
    let mut html = format!(
        r#"<span class="lab-verdict lab-{}">{}</span>"#,
        class(verdict),
        verdict.word()
    );
    if untrusted {
        html.push_str(r#" <span class="lab-untrusted">untrusted</span>"#);
    }
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_carry_the_word_and_a_class() {
        assert_eq!(
            mark(Verdict::Inconclusive, true),
            r#"<span class="lab-verdict lab-inconclusive">inconclusive</span> <span class="lab-untrusted">untrusted</span>"#
        );
        assert_eq!(
            mark(Verdict::NotRun, false),
            r#"<span class="lab-verdict lab-not-run">not run</span>"#
        );
    }
}
