//! A chapter's numbers for a paper: one LaTeX macro (or Typst binding) per number of the
//! catalogue, named after the experiment and the number's id, and the chapter's charts to
//! place beside them. The same session always gives the same bytes.
//!
//! A name is `lab`, then the experiment's name and the number's id in capitalised words,
//! letters only: every run of other characters separates words and every run of digits is
//! spelled out (`lockstack-dip` and `nonfair-threads-16.mops.median` give
//! `labLockstackDipNonfairThreadsSixteenMopsMedian`; numbers up to 999 as words, longer ones
//! or those with a leading zero digit by digit). Two ids that spell the same name keep it for
//! the first; the later one ends in `Two`, `Three` … Each number has `…Unit`, and where the
//! chapter prints an interval `…Lo`, `…Hi` and `…CI` (`[12.8, 13.6]`).

use super::Rendered;
use super::numbers::{Catalogue, Number, kebab};
use anyhow::Result;
use std::collections::BTreeSet;

/// What a paper's file of numbers says about where they come from.
pub struct Source<'a> {
    /// The experiment's folder name and its title.
    pub experiment: &'a str,
    pub title: &'a str,
    pub session: &'a str,
    /// The git commit the session measured, as its manifest records it.
    pub commit: &'a str,
    /// The lab that measured the session and the one that writes the file.
    pub measured_by: &'a str,
    pub written_by: &'a str,
}

/// One of the chapter's charts, under the name its file gets beside the paper.
pub struct Chart {
    /// Kebab case, without extension: `mops-by-threads`, `parks-per-op-by-threads`.
    pub name: String,
    pub svg: String,
}

/// The chapter's charts in the order it shows them, each in its wide drawing.
pub fn charts(item: &Rendered) -> Result<Vec<Chart>> {
    let mut figures =
        super::figures::figures(item.experiment, item.analysis, &item.findings.checks)?;
    if let Some(c) = item.compared {
        figures.extend(super::compared::figure(c)?);
    }
    Ok(figures
        .into_iter()
        .map(|f| Chart {
            name: kebab(f.file.strip_suffix(".svg").unwrap_or(&f.file)),
            svg: f.svg,
        })
        .collect())
}

/// One name and the text it stands for, with a comment on what it is.
struct Binding {
    name: String,
    value: String,
    comment: Option<String>,
}

/// How one language writes the file: its comments, a definition, its escaping, and the
/// extension a chart's path ends in.
struct Syntax {
    comment: &'static str,
    define: fn(&str, &str) -> String,
    escape: fn(&str) -> String,
    extension: &'static str,
}

const LATEX: Syntax = Syntax {
    comment: "%",
    define: |name, value| format!("\\newcommand*{{\\{name}}}{{{value}}}\n"),
    escape: latex_text,
    extension: "",
};

const TYPST: Syntax = Syntax {
    comment: "//",
    define: |name, value| format!("#let {name} = \"{value}\"\n"),
    escape: typst_string,
    extension: ".svg",
};

/// `\newcommand*` for every number and chart: `folder` holds the chart files, relative to the
/// file written (`\includegraphics{\labLockstackDipChartMopsByThreads}` finds the PDF there).
pub fn latex(source: &Source, catalogue: &Catalogue, charts: &[Chart], folder: &str) -> String {
    written(&LATEX, source, catalogue, charts, folder)
}

/// `#let` for every number and chart, with the same names as [`latex`]; a chart's binding
/// is the path of its SVG, relative to the file written.
pub fn typst(source: &Source, catalogue: &Catalogue, charts: &[Chart], folder: &str) -> String {
    written(&TYPST, source, catalogue, charts, folder)
}

fn written(
    syntax: &Syntax,
    source: &Source,
    catalogue: &Catalogue,
    charts: &[Chart],
    folder: &str,
) -> String {
    let mut out = header(source, syntax.comment);
    for b in bindings(source, catalogue, charts, folder, syntax) {
        if let Some(comment) = &b.comment {
            out.push_str(&format!("\n{} {comment}\n", syntax.comment));
        }
        out.push_str(&(syntax.define)(&b.name, &b.value));
    }
    out
}

/// The lines that open the file, each after `comment`.
fn header(source: &Source, comment: &str) -> String {
    let one_line = lab_config::format::one_line;
    let lines = [
        format!(
            "The numbers of \"{}\" (experiment {}), written by lab export.",
            one_line(source.title),
            source.experiment
        ),
        format!(
            "Session {}, commit {}, measured by lab {}; written by lab {}.",
            source.session,
            one_line(source.commit),
            source.measured_by,
            source.written_by
        ),
        "Each number NAME has NAMEUnit and, where the chapter prints an interval, NAMELo, NAMEHi and NAMECI.".into(),
    ];
    lines.iter().map(|l| format!("{comment} {l}\n")).collect()
}

/// Every binding in order, its value written as `syntax` escapes it.
fn bindings(
    source: &Source,
    catalogue: &Catalogue,
    charts: &[Chart],
    folder: &str,
    syntax: &Syntax,
) -> Vec<Binding> {
    let (escape, extension) = (syntax.escape, syntax.extension);
    let ids = catalogue
        .numbers
        .iter()
        .map(|n| n.id.clone())
        .chain(charts.iter().map(|c| format!("chart.{}", c.name)));
    let names = unique_names(source.experiment, ids);
    let mut out = Vec::new();
    for (n, name) in catalogue.numbers.iter().zip(&names) {
        out.extend(number_bindings(n, name, escape));
    }
    for (c, name) in charts.iter().zip(&names[catalogue.numbers.len()..]) {
        out.push(Binding {
            name: name.clone(),
            value: escape(&format!("{folder}/{}{extension}", c.name)),
            comment: Some(format!("chart {}", c.name)),
        });
    }
    out
}

/// A number's value, its unit, and its bounds and interval where it has them.
fn number_bindings(n: &Number, name: &str, escape: fn(&str) -> String) -> Vec<Binding> {
    let plain = |suffix: &str, value: String| Binding {
        name: format!("{name}{suffix}"),
        value,
        comment: None,
    };
    let mut out = vec![Binding {
        comment: Some(lab_config::format::one_line(&n.what.describe())),
        ..plain("", escape(&n.value))
    }];
    if let (Some(lo), Some(hi)) = (&n.lo, &n.hi) {
        let (lo, hi) = (escape(lo), escape(hi));
        out.push(plain("Lo", lo.clone()));
        out.push(plain("Hi", hi.clone()));
        out.push(plain("CI", format!("[{lo}, {hi}]")));
    }
    out.push(plain("Unit", escape(&n.unit)));
    out
}

/// The names of `ids` in order, each unique: a name spelled by an earlier id gets the first
/// free `Two`, `Three` … after it.
fn unique_names(experiment: &str, ids: impl Iterator<Item = String>) -> Vec<String> {
    let wanted: Vec<String> = ids
        .map(|id| format!("lab{}{}", words(experiment), words(&id)))
        .collect();
    let original: BTreeSet<&String> = wanted.iter().collect();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    wanted
        .iter()
        .map(|name| {
            if taken.insert(name.clone()) {
                return name.clone();
            }
            let free = (2u32..)
                .map(|k| format!("{name}{}", spelled(&k.to_string())))
                .find(|n| !original.contains(n) && !taken.contains(n))
                .unwrap_or_default();
            taken.insert(free.clone());
            free
        })
        .collect()
}

/// `text` in capitalised words, letters only: `nonfair-threads-16.mops` →
/// `NonfairThreadsSixteenMops`.
pub fn words(text: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.starts_with(|c: char| c.is_ascii_digit()) {
            out.push_str(&spelled(run));
        } else {
            let mut chars = run.chars();
            if let Some(first) = chars.next() {
                out.push(first.to_ascii_uppercase());
                out.push_str(chars.as_str());
            }
        }
        run.clear();
    };
    for ch in text.chars() {
        let kind_changes = run
            .chars()
            .last()
            .is_some_and(|last| last.is_ascii_digit() != ch.is_ascii_digit());
        if !ch.is_ascii_alphanumeric() || kind_changes {
            flush(&mut run, &mut out);
        }
        if ch.is_ascii_alphanumeric() {
            run.push(ch);
        }
    }
    flush(&mut run, &mut out);
    out
}

const ONES: [&str; 20] = [
    "Zero",
    "One",
    "Two",
    "Three",
    "Four",
    "Five",
    "Six",
    "Seven",
    "Eight",
    "Nine",
    "Ten",
    "Eleven",
    "Twelve",
    "Thirteen",
    "Fourteen",
    "Fifteen",
    "Sixteen",
    "Seventeen",
    "Eighteen",
    "Nineteen",
];
const TENS: [&str; 10] = [
    "", "", "Twenty", "Thirty", "Forty", "Fifty", "Sixty", "Seventy", "Eighty", "Ninety",
];

/// A run of digits in words: up to 999 as a number (`16` → `Sixteen`, `128` →
/// `OneHundredTwentyEight`), longer runs or a leading zero digit by digit (`007` →
/// `ZeroZeroSeven`), so that different digits never spell the same.
fn spelled(digits: &str) -> String {
    match digits.parse::<usize>() {
        Ok(n) if n < 1000 && (digits.len() == 1 || !digits.starts_with('0')) => below_thousand(n),
        _ => digits
            .bytes()
            .map(|d| ONES[usize::from(d - b'0')])
            .collect(),
    }
}

fn below_thousand(n: usize) -> String {
    let (hundreds, rest) = (n / 100, n % 100);
    let mut out = String::new();
    if hundreds > 0 {
        out.push_str(ONES[hundreds]);
        out.push_str("Hundred");
        if rest == 0 {
            return out;
        }
    }
    if rest < 20 {
        out.push_str(ONES[rest]);
    } else {
        out.push_str(TENS[rest / 10]);
        if rest % 10 > 0 {
            out.push_str(ONES[rest % 10]);
        }
    }
    out
}

/// `text` as LaTeX typesets it: the special characters escaped, the symbols lab prints as
/// text-mode commands, a space inside a number unbreakable (`283 µ` → `283~\textmu{}`).
pub fn latex_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for ch in text.chars() {
        if let Some(escaped) = super::escape::tex_special(ch) {
            out.push_str(escaped);
            continue;
        }
        match ch {
            '^' => out.push_str("\\textasciicircum{}"),
            '~' => out.push_str("\\textasciitilde{}"),
            ' ' => out.push('~'),
            'µ' | 'μ' => out.push_str("\\textmu{}"),
            '–' => out.push_str("--"),
            '—' => out.push_str("---"),
            '−' => out.push_str("\\textminus{}"),
            '×' => out.push_str("\\texttimes{}"),
            '±' => out.push_str("\\textpm{}"),
            '°' => out.push_str("\\textdegree{}"),
            '≤' => out.push_str("\\ensuremath{\\leq}"),
            '≥' => out.push_str("\\ensuremath{\\geq}"),
            _ => out.push(ch),
        }
    }
    out
}

/// `text` inside a Typst string literal.
pub fn typst_string(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
#[path = "paper_tests.rs"]
mod tests;
