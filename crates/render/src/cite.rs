//! "Cite this chapter": a BibTeX entry for the chapter itself, made only from what the session
//! recorded (its name, start and commit), so that it is the same wherever the book is built,
//! and shown in a fenced code block that no text of the entry can close.

use lab_findings::analysis::Analysis;

/// The chapter's BibTeX entry in a fenced code block (Markdown lab composes: the fence is
/// longer than any run of backticks in the entry, so the entry is shown as written).
pub(crate) fn cite_block(experiment: &str, title: &str, analysis: &Analysis) -> String {
    let entry = chapter_entry(experiment, title, analysis);
    let longest = entry.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}bibtex\n{entry}\n{fence}")
}

/// `@misc{lab-EXPERIMENT-SESSION, …}`: the title, the year the session started, the session and
/// its commit, and the notebook it is published in.
fn chapter_entry(experiment: &str, title: &str, analysis: &Analysis) -> String {
    let m = &analysis.manifest;
    let year: String = m.started_utc.chars().take(4).collect();
    let commit = match &m.git {
        Some(g) if g.dirty => format!("commit {} with uncommitted changes", g.commit),
        Some(g) => format!("commit {}", g.commit),
        None => "not from a git checkout".to_string(),
    };
    let fields = [
        ("title", format!("{{{}}}", bibtex(title))),
        ("year", bibtex(&year)),
        (
            "note",
            bibtex(&format!("lab session {}, {commit}", analysis.session)),
        ),
        (
            "howpublished",
            bibtex(&format!("Lab notebook, chapter {experiment}")),
        ),
    ];
    let body: Vec<String> = fields
        .iter()
        .map(|(name, value)| format!("  {name} = {{{value}}}"))
        .collect();
    format!(
        "@misc{{{},\n{}\n}}",
        key(&format!("lab-{experiment}-{}", analysis.session)),
        body.join(",\n")
    )
}

/// A citation key: characters BibTeX reads as part of one (letters, digits, `-`, `_`, `.`,
/// `:`), every other one a `-`.
fn key(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Text as a BibTeX field value shows it: TeX's special characters escaped, line breaks and
/// other control characters turned into spaces, so that braces stay balanced.
fn bibtex(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if let Some(escaped) = super::escape::tex_special(c) {
            out.push_str(escaped);
            continue;
        }
        match c {
            '^' => out.push_str("\\^{}"),
            '~' => out.push_str("\\~{}"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tex_specials_are_escaped_and_braces_stay_balanced() {
        assert_eq!(
            bibtex("50% {of} a_b & c\\d #1 $x ^y ~z\n"),
            "50\\% \\{of\\} a\\_b \\& c\\textbackslash{}d \\#1 \\$x \\^{}y \\~{}z "
        );
        assert_eq!(key("lab-tiny-2026 host,x}"), "lab-tiny-2026-host-x-");
    }
}
