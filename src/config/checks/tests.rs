//! Unit tests of `checks`.

use crate::config::{CheckClass, CheckKind, ConfigError, Experiment, parse};
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
