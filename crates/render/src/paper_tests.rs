use super::*;
use crate::numbers::{RatioSource, Statistic, Subject};
use std::collections::BTreeMap;

fn number(id: &str, value: &str, bounds: Option<(&str, &str)>, unit: &str) -> Number {
    Number {
        id: id.into(),
        value: value.into(),
        lo: bounds.map(|b| b.0.into()),
        hi: bounds.map(|b| b.1.into()),
        unit: unit.into(),
        what: Subject::Cell {
            cell: "nonfair threads=2".into(),
            metric: "parks_per_op".into(),
            statistic: Statistic::Median,
        },
    }
}

fn source() -> Source<'static> {
    Source {
        experiment: "lockstack-dip",
        title: "LockStack: 100% {the} dip_at #2",
        session: "20261206T075049Z-vm",
        commit: "0123abcd",
        measured_by: "0.1.0",
        written_by: "0.1.0",
    }
}

fn catalogue() -> Catalogue {
    let mut ratio = number(
        "check.non-fair-at-2-threads.ratio",
        "0.265",
        Some(("0.205", "0.289")),
        "",
    );
    ratio.what = Subject::Ratio {
        a: "nonfair threads=2".into(),
        b: "nonfair threads=1".into(),
        metric: None,
        from: RatioSource::Check("non-fair at 2 threads".into()),
    };
    Catalogue {
        numbers: vec![
            number(
                "nonfair-threads-2.parks-per-op.median",
                "283 µ",
                Some(("197 µ", "334 µ")),
                "parks/op",
            ),
            number("nonfair-threads-16.mops.cv", "12.4%", None, ""),
            number("nonfair-threads16.mops.cv", "1.0%", None, ""),
            number("x_y.lat.median", "1.5", Some(("1.2", "1.9")), "µs"),
            ratio,
        ],
    }
}

fn charts() -> Vec<Chart> {
    vec![Chart {
        name: "parks-per-op-by-threads".into(),
        svg: "<svg/>".into(),
    }]
}

/// Every `\newcommand*{\NAME}{BODY}` of a file, checking as it reads that each line is a
/// comment, blank or one definition whose braces balance.
fn latex_definitions(text: &str) -> BTreeMap<String, String> {
    let mut defined = BTreeMap::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('%') {
            continue;
        }
        let rest = line
            .strip_prefix("\\newcommand*{\\")
            .unwrap_or_else(|| panic!("not a definition: {line}"));
        let (name, body) = rest.split_once("}{").expect(line);
        let body = body.strip_suffix('}').expect(line);
        assert!(name.chars().all(|c| c.is_ascii_alphabetic()), "{name}");
        let mut depth = 0i32;
        let mut escaped = false;
        for c in body.chars() {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '{') => depth += 1,
                (false, '}') => depth -= 1,
                _ => escaped = false,
            }
            if c != '\\' {
                escaped = false;
            }
            assert!(depth >= 0, "unbalanced: {line}");
        }
        assert_eq!(depth, 0, "unbalanced: {line}");
        assert!(!body.contains('%') || body.contains("\\%"), "{line}");
        assert!(
            defined.insert(name.to_string(), body.to_string()).is_none(),
            "defined twice: {name}"
        );
    }
    defined
}

#[test]
fn every_number_is_a_macro_defined_once_with_letters_only() {
    let text = latex(&source(), &catalogue(), &charts(), "lockstack-dip-charts");
    let defined = latex_definitions(&text);
    let median = "labLockstackDipNonfairThreadsTwoParksPerOpMedian";
    assert_eq!(defined[median], "283~\\textmu{}");
    assert_eq!(defined[&format!("{median}Lo")], "197~\\textmu{}");
    assert_eq!(defined[&format!("{median}Hi")], "334~\\textmu{}");
    assert_eq!(
        defined[&format!("{median}CI")],
        "[197~\\textmu{}, 334~\\textmu{}]"
    );
    assert_eq!(defined[&format!("{median}Unit")], "parks/op");
    assert_eq!(
        defined["labLockstackDipNonfairThreadsSixteenMopsCv"],
        "12.4\\%"
    );
    assert_eq!(
        defined["labLockstackDipNonfairThreadsSixteenMopsCvTwo"],
        "1.0\\%"
    );
    assert_eq!(defined["labLockstackDipXYLatMedianUnit"], "\\textmu{}s");
    assert_eq!(
        defined["labLockstackDipCheckNonFairAtTwoThreadsRatioCI"],
        "[0.205, 0.289]"
    );
    assert_eq!(
        defined["labLockstackDipChartParksPerOpByThreads"],
        "lockstack-dip-charts/parks-per-op-by-threads"
    );
    assert!(!defined.contains_key("labLockstackDipNonfairThreadsSixteenMopsCvLo"));
    assert!(
        text.starts_with("% The numbers of \"LockStack: 100% {the} dip_at #2\""),
        "{text}"
    );
    assert!(text.contains(
        "\n% ratio nonfair threads=2 / nonfair threads=1 (check \"non-fair at 2 threads\")\n"
    ));
}

#[test]
fn typst_binds_the_same_names_to_string_literals() {
    let latex_names: Vec<String> =
        latex_definitions(&latex(&source(), &catalogue(), &charts(), "c"))
            .into_keys()
            .collect();
    let text = typst(&source(), &catalogue(), &charts(), "c");
    let mut names = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
    {
        let (name, value) = line
            .strip_prefix("#let ")
            .and_then(|l| l.split_once(" = "))
            .unwrap_or_else(|| panic!("not a binding: {line}"));
        let inner = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .expect(line);
        assert!(
            !inner
                .replace("\\\\", "")
                .replace("\\\"", "")
                .contains(['"', '\\']),
            "{line}"
        );
        names.push(name.to_string());
    }
    assert!(text.contains(
        "#let labLockstackDipNonfairThreadsTwoParksPerOpMedianCI = \"[197 µ, 334 µ]\"\n"
    ));
    assert!(text.contains(
        "#let labLockstackDipChartParksPerOpByThreads = \"c/parks-per-op-by-threads.svg\"\n"
    ));
    names.sort();
    assert_eq!(names, latex_names);
}

#[test]
fn digits_are_spelled_so_that_different_numbers_never_spell_alike() {
    assert_eq!(
        words("nonfair-threads-16.mops.median"),
        "NonfairThreadsSixteenMopsMedian"
    );
    assert_eq!(words("lockstack-dip"), "LockstackDip");
    assert_eq!(words("n=128"), "NOneHundredTwentyEight");
    assert_eq!(words("size-1000"), "SizeOneZeroZeroZero");
    assert_eq!(words("v007"), "VZeroZeroSeven");
    assert_eq!(words("rows-300-x2"), "RowsThreeHundredXTwo");
    assert_eq!(words("t-0"), "TZero");
    assert_eq!(words("a-99"), "ANinetyNine");
    assert_eq!(words("a-40"), "AForty");
}

#[test]
fn latex_text_escapes_what_latex_would_read_as_markup() {
    assert_eq!(latex_text("1.20 µs"), "1.20~\\textmu{}s");
    assert_eq!(latex_text("12.4%"), "12.4\\%");
    assert_eq!(latex_text("parks_per_op"), "parks\\_per\\_op");
    assert_eq!(latex_text("a&b#c$d{e}f"), "a\\&b\\#c\\$d\\{e\\}f");
    assert_eq!(
        latex_text("\\x^y~"),
        "\\textbackslash{}x\\textasciicircum{}y\\textasciitilde{}"
    );
    assert_eq!(latex_text("197 µ–334 µ"), "197~\\textmu{}--334~\\textmu{}");
    assert_eq!(
        latex_text("−0.89 ×2 ±3"),
        "\\textminus{}0.89~\\texttimes{}2~\\textpm{}3"
    );
}
