//! Unit tests of `checks`.

use crate::{CheckClass, CheckKind, ConfigError, Direction, Experiment, parse};
use std::path::Path;

/// An experiment with one check of `kind` on metric `v`, carrying `extra` lines.
fn with_check(kind: &str, extra: &str) -> Result<Experiment, ConfigError> {
    let source = format!(
        "[experiment]\ntitle = \"t\"\nhypothesis = \"h\"\n\n[[variant]]\nname = \"a\"\nrun = [\"x\"]\n\n[metric.v]\njson = \"v\"\n\n[[check]]\nname = \"c\"\nkind = \"{kind}\"\nmetric = \"v\"\n{extra}"
    );
    parse(&source, Path::new("exp/lab.toml"), Path::new("exp"), None)
}

fn max_drift(extra: &str) -> f64 {
    match with_check("order", extra).unwrap().checks[0].kind {
        CheckKind::RunOrder { max_drift, .. } => max_drift,
        ref other => panic!("not an order check: {other:?}"),
    }
}

#[test]
fn max_drift_reads_fractions_and_percentages_with_a_default() {
    assert_eq!(max_drift(""), 0.05);
    assert_eq!(max_drift("max_drift = \"2%\"\n"), 0.02);
    assert_eq!(max_drift("max_drift = 0.1\n"), 0.1);
    assert_eq!(max_drift("max_drift = 0\n"), 0.0);
}

#[test]
fn a_bad_max_drift_names_file_line_and_key() {
    for (value, message) in [
        ("\"ten\"", "not a fraction"),
        ("\"-5%\"", "not a fraction"),
        ("\"150%\"", "150% is too large"),
    ] {
        let e = with_check("order", &format!("max_drift = {value}\n")).unwrap_err();
        assert_eq!((e.file.as_path(), e.line), (Path::new("exp/lab.toml"), 16));
        assert_eq!(e.key, "check[1].max_drift");
        assert!(e.message.starts_with(message), "{value}: {e}");
    }
    let e = with_check("stable", "max_drift = \"5%\"\n").unwrap_err();
    assert_eq!(e.key, "check[1].max_drift");
    assert!(e.message.contains("not a key of a `stable` check"), "{e}");
}

const BASE: &str = r#"[experiment]
title = "t"
hypothesis = "h"

[[variant]]
name = "jit"
run = ["prog"]

[metric.latency]
json = "latency"
better = "lower"

[[check]]
name = "settles"
kind = "steady"
metric = "latency"
"#;

fn load(extra: &str) -> Result<Experiment, ConfigError> {
    let source = format!("{BASE}{extra}");
    parse(&source, Path::new("exp/lab.toml"), Path::new("exp"), None)
}

#[test]
fn a_steady_check_is_a_validity_check_with_a_default_limit() {
    let exp = load("").unwrap();
    assert_eq!(exp.checks[0].class, CheckClass::Validity);
    assert!(matches!(
        &exp.checks[0].kind,
        CheckKind::Steady { metric, within: 50 } if metric == "latency"
    ));
    let exp = load("within = 30\n").unwrap();
    assert!(matches!(
        exp.checks[0].kind,
        CheckKind::Steady { within: 30, .. }
    ));
}

#[test]
fn bad_steady_keys_name_file_line_and_key() {
    let line = BASE.lines().count() + 1;
    for bad in ["within = 0\n", "within = -5\n", "within = 1e12\n"] {
        let e = load(bad).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("check[1].within", line), "{e}");
        assert!(e.message.contains("not a number of iterations"), "{e}");
        assert!(e.to_string().starts_with("exp/lab.toml:"), "{e}");
    }
    let e = load("within = 2.5\n").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("check[1].within", line), "{e}");
    assert_eq!(
        e.message,
        "2.5 is not a number of iterations: write a whole number, at least 1"
    );
    let e = load("within = \"50\"\n").unwrap_err();
    assert_eq!(e.key, "check[1].within", "{e}");
    let e = load("alpha = 0.1\n").unwrap_err();
    assert_eq!(e.key, "check[1].alpha");
    assert!(e.message.contains("not a key of a `steady` check"), "{e}");
    assert!(e.hint.unwrap().contains("metric, within"));
}

const MECHANISM: &str = r#"[experiment]
title = "t"
hypothesis = "h"

[params]
k = [1, 2, 3]

[[variant]]
name = "fair"
run = ["prog", "{k}"]

[[variant]]
name = "nonfair"
run = ["prog", "{k}"]

[metric.mops]
json = "mops"

[metric.waits]
json = "waits"

[metric.build]
json = "build"
text = true

[[check]]
name = "mops falls as waits rise"
kind = "mechanism"
metric = "mops"
"#;

fn mechanism(extra: &str) -> Result<Experiment, ConfigError> {
    let source = format!("{MECHANISM}{extra}");
    parse(&source, Path::new("exp/lab.toml"), Path::new("exp"), None)
}

#[test]
fn a_mechanism_check_is_a_hypothesis_with_a_default_strength() {
    let exp = mechanism("with = \"waits\"\ndirection = \"opposite\"\n").unwrap();
    assert_eq!(exp.checks[0].class, CheckClass::Hypothesis);
    assert!(matches!(
        &exp.checks[0].kind,
        CheckKind::Mechanism { metric, with, direction: Direction::Opposite, min_rho }
            if metric == "mops" && with == "waits" && *min_rho == 0.5
    ));
    assert_eq!(exp.checks[0].scope, None);
    let exp = mechanism(
        "with = \"wall_s\"\ndirection = \"same\"\nmin_rho = 1\nclass = \"validity\"\n\
         cells = [{ variant = \"nonfair\" }, { variant = \"fair\", k = 1 }]\n",
    )
    .unwrap();
    let check = &exp.checks[0];
    assert_eq!(check.class, CheckClass::Validity);
    assert!(matches!(
        &check.kind,
        CheckKind::Mechanism { with, direction: Direction::Same, min_rho, .. }
            if with == "wall_s" && *min_rho == 1.0
    ));
    let keys = crate::plan::cell_keys(&exp);
    let selected: Vec<String> = keys
        .iter()
        .filter(|k| k.is_in(check.scope.as_ref().unwrap()))
        .map(|k| k.to_string())
        .collect();
    assert_eq!(
        selected,
        ["fair k=1", "nonfair k=1", "nonfair k=2", "nonfair k=3"]
    );
}

/// The error of a `mechanism` check with `extra` lines: where, which key and what it says.
fn mechanism_error(extra: &str) -> (usize, usize, String, String) {
    let e = mechanism(extra).unwrap_err();
    assert!(e.to_string().starts_with("exp/lab.toml:"), "{e}");
    (e.line, e.column, e.key, e.message)
}

#[test]
fn bad_mechanism_keys_name_file_line_column_and_key() {
    let line = MECHANISM.lines().count() + 1;
    let key = |k: &str| format!("check[1].{k}");
    assert_eq!(
        mechanism_error("with = \"wait\"\ndirection = \"same\"\n"),
        (line, 8, key("with"), "no metric named \"wait\"".into())
    );
    assert_eq!(
        mechanism_error("with = \"build\"\ndirection = \"same\"\n"),
        (
            line,
            8,
            key("with"),
            "this check needs a numeric metric, and this one is `text = true`".into()
        )
    );
    assert_eq!(
        mechanism_error("with = \"mops\"\ndirection = \"same\"\n"),
        (
            line,
            8,
            key("with"),
            "`with` names the check's own metric: a metric always moves with itself".into()
        )
    );
}

#[test]
fn bad_mechanism_settings_name_file_line_column_and_key() {
    let line = MECHANISM.lines().count() + 1;
    let key = |k: &str| format!("check[1].{k}");
    assert_eq!(
        mechanism_error("with = \"waits\"\ndirection = \"down\"\n"),
        (
            line + 1,
            13,
            key("direction"),
            "unknown direction \"down\"".into()
        )
    );
    assert_eq!(
        mechanism_error("with = \"waits\"\n").2,
        key("direction"),
        "direction is required"
    );
    for bad in ["0", "-0.5", "1.5"] {
        let (l, column, k, message) = mechanism_error(&format!(
            "with = \"waits\"\ndirection = \"same\"\nmin_rho = {bad}\n"
        ));
        assert_eq!((l, column, k.as_str()), (line + 2, 11, "check[1].min_rho"));
        assert_eq!(
            message,
            format!("{bad} is not a correlation the check can require")
        );
    }
    assert_eq!(
        mechanism_error(
            "with = \"waits\"\ndirection = \"same\"\ncells = { variant = \"fair\", k = 2 }\n"
        ),
        (
            line + 2,
            9,
            key("cells"),
            "`cells` selects 1 cell; a `mechanism` check relates metrics across 2 cells or more"
                .into()
        )
    );
    let (_, _, k, message) =
        mechanism_error("with = \"waits\"\ndirection = \"same\"\nfactor = 2\n");
    assert_eq!(
        (k.as_str(), message.as_str()),
        ("check[1].factor", "not a key of a `mechanism` check")
    );
}

#[test]
fn a_mechanism_check_needs_two_cells_in_the_experiment() {
    let one = MECHANISM.replace("k = [1, 2, 3]", "k = [1]").replace(
        "[[variant]]\nname = \"nonfair\"\nrun = [\"prog\", \"{k}\"]\n",
        "",
    );
    let source = format!("{one}with = \"waits\"\ndirection = \"same\"\n");
    let e = parse(&source, Path::new("exp/lab.toml"), Path::new("exp"), None).unwrap_err();
    assert_eq!(e.key, "check[1].cells");
    assert_eq!(
        e.message,
        "the experiment has 1 cell; a `mechanism` check relates metrics across 2 cells or more"
    );
}

#[test]
fn cells_that_are_neither_a_table_nor_a_list_of_tables_say_what_is_wanted() {
    let e = mechanism("with = \"waits\"\ndirection = \"same\"\ncells = 5\n").unwrap_err();
    assert_eq!(e.key, "check[1].cells", "{e}");
    assert_eq!(
        e.message,
        "cells as a table, e.g. { variant = \"fair\" }, or a list of tables"
    );
    let e = mechanism("with = \"waits\"\ndirection = \"same\"\ncells = []\n").unwrap_err();
    assert_eq!(
        (e.key.as_str(), e.message.as_str()),
        ("check[1].cells", "an empty list selects no cell")
    );
    let e = mechanism("with = \"waits\"\ndirection = \"same\"\ncells = [{ k = 7 }]\n").unwrap_err();
    assert_eq!(
        (e.key.as_str(), e.message.as_str()),
        ("check[1].cells[1].k", "7 is not a value of `k`")
    );
}
