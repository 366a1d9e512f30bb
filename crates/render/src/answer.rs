//! The answer that opens a chapter and the introduction page: every hypothesis in one line
//! with its ratio, interval and threshold, and, when the record is untrusted, which validity
//! checks failed and in which cells. Composed as HTML here, every name escaped on the way in.

use super::escape::{html_line, html_with_code_spans};
use super::marks::{class, mark};
use lab_config::CheckClass;
use lab_config::format::{level, ratio, ratio_interval};
use lab_findings::checks::{CheckResult, Tally, Verdict};

/// Cells named before "and N more".
const CELLS_SHOWN: usize = 6;

/// The number the check of this name decided on (a ratio or a ρ): its id on the chapter's
/// provenance page and its text as printed.
pub(crate) type Decided<'a> = &'a dyn Fn(&str) -> Option<(String, String)>;

/// The answer block: one HTML block without blank lines, so Markdown leaves it whole. The
/// number each hypothesis was decided on links to its provenance where `decided` knows it.
pub(crate) fn answer(checks: &[CheckResult], decided: Decided) -> String {
    let mut html = String::from("<div class=\"lab-answer\">\n");
    html.push_str(&hypothesis_lines(checks, decided));
    html.push_str(&busy_line(checks));
    for check in failed_validity(checks) {
        html.push_str(&untrusted_line(check, checks));
    }
    html.push_str(&tally_line(checks));
    html.push_str("</div>\n");
    html
}

fn hypothesis_lines(checks: &[CheckResult], decided: Decided) -> String {
    let hypotheses: Vec<&CheckResult> = checks
        .iter()
        .filter(|c| c.class == CheckClass::Hypothesis)
        .collect();
    if hypotheses.is_empty() {
        return "<p>No hypothesis check is declared: the checks below judge the measurements only.</p>\n".into();
    }
    let mut html = String::from("<ul class=\"lab-hypotheses\">\n");
    for c in hypotheses {
        let busy = if c.busy.is_some() {
            " <span class=\"lab-busy\">machine busy</span>"
        } else {
            ""
        };
        html.push_str(&format!(
            "<li>{}{busy} <strong>{}</strong>: {}</li>\n",
            mark(c.verdict, c.untrusted),
            html_line(&c.name),
            linked_html(&finding(c), decided(&c.name))
        ));
    }
    html.push_str("</ul>\n");
    html
}

/// The numbers behind a verdict in a few words, as HTML: `0.384 [0.344, 0.583] (95% CI);
/// needs a/b < 0.500`.
fn finding(c: &CheckResult) -> String {
    match &c.ratio {
        Some(r) if c.verdict != Verdict::NotRun && r.ratio.is_finite() => {
            let needs = if r.needs.is_empty() {
                format!("threshold {}", ratio(r.threshold))
            } else {
                format!("needs {}", r.needs)
            };
            html_with_code_spans(&format!(
                "{} ({} CI); {needs}",
                ratio_interval(r.ratio, r.lo, r.hi),
                level(r.level)
            ))
        }
        _ => html_with_code_spans(&c.reading),
    }
}

/// `html` with the first place it shows `number`'s text made a link to its provenance.
fn linked_html(html: &str, number: Option<(String, String)>) -> String {
    let Some((id, text)) = number else {
        return html.to_string();
    };
    link_first(html, &html_line(&text), |shown| {
        format!("<a href=\"provenance.md#{}\">{shown}</a>", html_line(&id))
    })
}

/// `text` with the first place it shows `shown` replaced by `link(shown)`; as it was where
/// it does not show it.
pub(crate) fn link_first(text: &str, shown: &str, link: impl FnOnce(&str) -> String) -> String {
    match text.find(shown) {
        Some(at) => format!(
            "{}{}{}",
            &text[..at],
            link(shown),
            &text[at + shown.len()..]
        ),
        None => text.to_string(),
    }
}

/// The one sentence that says why verdicts were withheld for a busy machine: what the runs
/// waited, which verdicts, and what kept the machine busy.
fn busy_line(checks: &[CheckResult]) -> String {
    checks
        .iter()
        .find(|c| c.name == lab_findings::checks::BUSY && c.verdict == Verdict::Inconclusive)
        .map_or_else(String::new, |c| {
            format!(
                "<p class=\"lab-busy-note\">{}</p>\n",
                html_with_code_spans(&sentence(&c.reading))
            )
        })
}

/// `text` as a sentence: its first letter capital, a full stop at its end.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
    let mut out = first.unwrap_or_default() + chars.as_str();
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

fn failed_validity(checks: &[CheckResult]) -> impl Iterator<Item = &CheckResult> {
    checks
        .iter()
        .filter(|c| c.class == CheckClass::Validity && c.verdict == Verdict::Fail)
}

/// Which failed validity check makes which hypotheses untrusted: those that read its cells,
/// or all of them when it concerns the whole session.
fn untrusted_line(c: &CheckResult, checks: &[CheckResult]) -> String {
    let place = if c.cells.is_empty() {
        html_with_code_spans(&c.reading)
    } else {
        format!("failed in {}", cell_list(&c.cells))
    };
    let hypotheses: Vec<String> = checks
        .iter()
        .filter(|h| h.class == CheckClass::Hypothesis && lab_findings::checks::distrusts(c, h))
        .map(|h| format!("“{}”", html_line(&h.name)))
        .collect();
    let any_hypothesis = checks.iter().any(|h| h.class == CheckClass::Hypothesis);
    let consequence = if !any_hypothesis {
        "and no hypothesis is declared".to_string()
    } else if lab_findings::checks::session_wide(c) {
        "so every hypothesis verdict may rest on broken measurements".to_string()
    } else if hypotheses.is_empty() {
        "which no hypothesis reads: the hypothesis verdicts stand".to_string()
    } else {
        format!(
            "so the verdict{} of {} may rest on broken measurements",
            if hypotheses.len() == 1 { "" } else { "s" },
            prose_list(&hypotheses)
        )
    };
    let badge =
        if hypotheses.is_empty() && !(any_hypothesis && lab_findings::checks::session_wide(c)) {
            ""
        } else {
            "<span class=\"lab-untrusted\">untrusted</span> "
        };
    format!(
        "<p class=\"lab-untrusted-note\">{badge}The validity check “{}” {place}, {consequence}.</p>\n",
        html_line(&c.name)
    )
}

/// `a`, `a and b`, `a, b and c`.
fn prose_list(items: &[String]) -> String {
    match items.split_last() {
        Some((last, first)) if !first.is_empty() => format!("{} and {last}", first.join(", ")),
        _ => items.join(""),
    }
}

/// `a, b and c`, or the first few and "and N more".
fn cell_list(cells: &[String]) -> String {
    let shown: Vec<String> = cells
        .iter()
        .take(CELLS_SHOWN)
        .map(|c| html_line(c))
        .collect();
    let rest = cells.len().saturating_sub(CELLS_SHOWN);
    match (shown.split_last(), rest) {
        (Some((last, first)), 0) if !first.is_empty() => {
            format!("{} and {last}", first.join(", "))
        }
        (_, 0) => shown.join(", "),
        _ => format!("{} and {rest} more cells", shown.join(", ")),
    }
}

fn tally_line(checks: &[CheckResult]) -> String {
    let t = Tally::of(checks);
    let counts: Vec<String> = [
        (Verdict::Pass, t.pass),
        (Verdict::Fail, t.fail),
        (Verdict::Inconclusive, t.inconclusive),
        (Verdict::NotRun, t.not_run),
        (Verdict::AtThreshold, t.at_threshold),
    ]
    .iter()
    .filter(|(v, n)| *v != Verdict::AtThreshold || *n > 0)
    .map(|(v, n)| {
        format!(
            "<span class=\"lab-count lab-{}\">{n} {}</span>",
            class(*v),
            v.word()
        )
    })
    .collect();
    format!(
        "<p class=\"lab-tally\">{} checks: {}.</p>\n",
        checks.len(),
        counts.join(" · ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_findings::checks::RatioEvidence;

    fn check(name: &str, class: CheckClass, verdict: Verdict) -> CheckResult {
        CheckResult::new(name, "compare", class, verdict)
    }

    #[test]
    fn every_hypothesis_gets_one_line_with_its_interval() {
        let mut dip = check("dip <b>", CheckClass::Hypothesis, Verdict::Inconclusive);
        dip.untrusted = true;
        dip.ratio = Some(RatioEvidence {
            a: "a".into(),
            b: "b".into(),
            a_value: 29.5,
            b_value: 76.7,
            ratio: 0.3842,
            lo: 0.3441,
            hi: 0.5829,
            threshold: 0.5,
            needs: "a/b < 0.500".into(),
            level: 0.95,
        });
        let mut stable = check("stable", CheckClass::Validity, Verdict::Fail);
        stable.cells = (1..=8).map(|t| format!("fair threads={t}")).collect();
        let html = answer(&[stable, dip], &|_| None);
        assert!(html.contains("<strong>dip &lt;b&gt;</strong>: 0.384 [0.344, 0.583] (95% CI); needs a/b &lt; 0.500"), "{html}");
        assert!(html.contains(
            "lab-inconclusive\">inconclusive</span> <span class=\"lab-untrusted\">untrusted"
        ));
        assert!(html.contains("failed in fair threads=1, fair threads=2, fair threads=3, fair threads=4, fair threads=5, fair threads=6 and 2 more cells"), "{html}");
        assert!(html.contains("2 checks: <span class=\"lab-count lab-pass\">0 pass</span> · <span class=\"lab-count lab-fail\">1 fail</span>"));
        assert!(
            !html.contains("\n\n"),
            "a blank line would end the HTML block"
        );
    }

    #[test]
    fn short_cell_lists_read_as_prose() {
        assert_eq!(
            cell_list(&["a".into(), "b".into(), "c".into()]),
            "a, b and c"
        );
        assert_eq!(cell_list(&["a".into()]), "a");
    }
}
