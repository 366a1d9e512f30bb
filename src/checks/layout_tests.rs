//! Tests of the memory-layout check on cells whose values are known from their paddings.

use super::*;
use crate::config::Metric;
use crate::plan::CellKey;
use crate::validity::RunValues;
use std::path::Path;

fn experiment(extra: &str) -> Experiment {
    let src = format!(
        r#"
[experiment]
title = "t"
hypothesis = "h"
layout = "randomized"
{extra}
[[variant]]
name = "a"
run = ["x"]
[[variant]]
name = "b"
run = ["y"]
[metric.ms]
json = "ms"
unit = "ms"
"#
    );
    crate::config::parse(&src, Path::new("lab.toml"), Path::new("x"), None).unwrap()
}

fn run(position: usize, variant: &str, padding: Option<u32>, value: f64) -> RunView {
    RunView {
        id: format!("r{position:04}"),
        position,
        cell: CellKey::new(variant, Default::default()),
        repetition: position as u32,
        warmup: false,
        wall_s: 0.3,
        exit: "exit 0".into(),
        stdout_sha256: String::new(),
        echoed_config: false,
        busy_share: None,
        slowed: 0.0,
        disturbed: false,
        reshaped: false,
        exact_wait: false,
        repeats: None,
        overlapped: Vec::new(),
        problems: Vec::new(),
        failed_checks: Vec::new(),
        timing_only: Vec::new(),
        values: RunValues::of("ms", vec![value.to_string()]),
        env_padding: padding,
        node: None,
        usage: Default::default(),
    }
}

/// `per_half` runs of each variant in each half of the range, padded 100 + 37·k bytes below
/// 2,048 and 2,100 + 37·k above; the k-th run of a half measures `value(variant, upper)`
/// times 1 + k/1000, so that each half's median is `value` × (1 + (per_half − 1)/2000) and
/// their ratio is exactly the ratio of the two values.
fn session(per_half: usize, value: impl Fn(&str, bool) -> f64) -> Vec<RunView> {
    let mut runs = Vec::new();
    for k in 0..per_half {
        for upper in [false, true] {
            for variant in ["a", "b"] {
                let padding = if upper { 2100 } else { 100 } + 37 * k as u32;
                let x = value(variant, upper) * (1.0 + k as f64 / 1000.0);
                runs.push(run(runs.len() + 1, variant, Some(padding), x));
            }
        }
    }
    runs
}

fn decide(exp: &Experiment, runs: &[RunView]) -> Option<CheckResult> {
    let keys: Vec<CellKey> = ["a", "b"]
        .map(|v| CellKey::new(v, Default::default()))
        .to_vec();
    let resampling = Resampling {
        seed: exp.seed,
        resamples: crate::analysis::RESAMPLES,
        level: crate::analysis::LEVEL,
        generator: crate::stats::Generator::ChaCha8,
    };
    let cells =
        crate::analysis::cell_stats_of(exp, &exp.analysed_metrics(), &keys, runs, resampling);
    judge(exp, &cells, runs, resampling)
}

#[test]
fn a_cell_slower_with_larger_paddings_fails_naming_the_cell_and_the_effect() {
    let runs = session(8, |v, upper| if v == "b" && upper { 110.0 } else { 100.0 });
    let c = decide(&experiment(""), &runs).unwrap();
    assert_eq!(c.verdict, Verdict::Fail, "{}", c.evidence);
    assert!(c.automatic);
    assert_eq!(c.class, CheckClass::Validity);
    // The medians are 100.35 and 110.385: b's larger paddings are exactly 10% slower. The
    // intervals are the 2.5th and 97.5th percentiles of the ratio of resampled medians; plain
    // resampling of the same values in Python (100,000 draws) gives [1.0962, 1.1038] for b
    // and [0.99652, 1.00349] for a.
    assert_eq!(
        c.reading,
        "cell b: runs with ≥ 2,048 bytes of padding are 10.0% [9.6%, 10.4%] slower"
    );
    assert_eq!(
        c.evidence,
        "a: larger/smaller padding 1.000 [0.9965, 1.003]; b: larger/smaller padding 1.100 [1.096, 1.104]; 95% CI, tolerance ±2.0%"
    );
    // The runs it rests on are b's, every one of them.
    assert_eq!(c.runs.len(), 16);
    assert!(
        c.runs
            .iter()
            .all(|id| runs.iter().any(|r| r.id == *id && r.cell.variant == "b"))
    );
}

#[test]
fn a_faster_cell_is_named_faster() {
    let runs = session(8, |v, upper| if v == "a" && upper { 90.0 } else { 100.0 });
    let c = decide(&experiment(""), &runs).unwrap();
    assert_eq!(c.verdict, Verdict::Fail);
    assert_eq!(
        c.reading,
        "cell a: runs with ≥ 2,048 bytes of padding are 10.0% [9.7%, 10.3%] faster"
    );
}

#[test]
fn a_metric_in_another_unit_is_higher_or_lower() {
    let runs = session(8, |v, upper| if v == "a" && upper { 110.0 } else { 100.0 });
    let exp = experiment("");
    let throughput = Experiment {
        metrics: exp
            .metrics
            .iter()
            .map(|m| Metric {
                unit: "ops/s".into(),
                ..m.clone()
            })
            .collect(),
        ..exp
    };
    let c = decide(&throughput, &runs).unwrap();
    assert_eq!(
        c.reading,
        "cell a: runs with ≥ 2,048 bytes of padding are 10.0% [9.6%, 10.3%] higher"
    );
}

#[test]
fn cells_within_the_tolerance_pass_and_a_wider_tolerance_admits_a_larger_effect() {
    let flat = session(8, |_, _| 100.0);
    let c = decide(&experiment(""), &flat).unwrap();
    assert_eq!(c.verdict, Verdict::Pass, "{}", c.evidence);
    assert_eq!(
        c.reading,
        "in both cells the runs with larger paddings are within ±2.0% of those with smaller ones"
    );
    assert!(c.runs.is_empty());
    let three = session(8, |v, upper| if v == "b" && upper { 103.0 } else { 100.0 });
    assert_eq!(
        decide(&experiment(""), &three).unwrap().verdict,
        Verdict::Fail
    );
    let wide = experiment("layout_tolerance = \"5%\"");
    let c = decide(&wide, &three).unwrap();
    assert_eq!(c.verdict, Verdict::Pass, "{}", c.evidence);
    assert!(c.evidence.ends_with("tolerance ±5.0%"), "{}", c.evidence);
}

#[test]
fn an_interval_across_the_band_is_inconclusive() {
    // b's halves differ by 2% in the middle, its interval reaching to either side of 1.02.
    let runs = session(8, |v, upper| if v == "b" && upper { 102.0 } else { 100.0 });
    let c = decide(&experiment(""), &runs).unwrap();
    assert_eq!(c.verdict, Verdict::Inconclusive, "{}", c.evidence);
    assert_eq!(
        c.reading,
        "the interval of b reaches past ±2.0%: more runs would decide"
    );
}

#[test]
fn a_cell_short_of_runs_in_one_half_keeps_a_pass_open() {
    let mut runs = session(8, |_, _| 100.0);
    // Leave b with 2 runs padded with 2,048 bytes or more.
    let mut upper_b = 0;
    runs.retain(|r| {
        let drop = r.cell.variant == "b" && r.env_padding >= Some(2048);
        upper_b += usize::from(drop);
        !drop || upper_b <= 2
    });
    let c = decide(&experiment(""), &runs).unwrap();
    assert_eq!(c.verdict, Verdict::Inconclusive);
    assert_eq!(
        c.reading,
        "b has 8 valid runs padded with fewer than 2,048 bytes and 2 with more; 3 of each are needed"
    );
    assert!(
        c.evidence.starts_with("a: larger/smaller padding 1.000"),
        "{}",
        c.evidence
    );
}

#[test]
fn too_few_runs_everywhere_is_not_run_and_says_what_is_needed() {
    let runs = session(2, |_, _| 100.0);
    let c = decide(&experiment(""), &runs).unwrap();
    assert_eq!(c.verdict, Verdict::NotRun);
    assert_eq!(
        c.reading,
        "a has 2 valid runs padded with fewer than 2,048 bytes and 2 with more; 3 of each are needed; b has 2 valid runs padded with fewer than 2,048 bytes and 2 with more; 3 of each are needed"
    );
}

#[test]
fn a_session_that_left_the_layout_alone_has_no_layout_check() {
    let runs: Vec<RunView> = session(8, |_, _| 100.0)
        .into_iter()
        .map(|r| RunView {
            env_padding: None,
            ..r
        })
        .collect();
    assert!(decide(&experiment(""), &runs).is_none());
}
