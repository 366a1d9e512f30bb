//! Every export of one hand-made report — two commands at two values of a parameter, with
//! fixed times — pinned down whole, then each option of the tables on its own.

use super::*;
use crate::app::bench::figures::Timed;
use crate::app::bench::output::Report;
use lab_config::units::Seconds;
use std::collections::BTreeMap;

/// A command's result at `level`, its `{level}` replaced, as `Report::of` builds it.
fn timed(label: &str, level: &str, times: &[f64]) -> Timed {
    let n = times.len();
    Timed {
        label: label.into(),
        command: label.replace("{level}", level),
        params: BTreeMap::from([("level".to_string(), level.to_string())]),
        times: times.to_vec(),
        user: vec![0.08; n],
        system: vec![0.02; n],
        memory_bytes: vec![4_194_304; n],
        exit_codes: vec![Some(0); n],
        median: None,
        interval: None,
        invalid: 0,
        first_problem: None,
        failed: false,
    }
}

fn report(timed: Vec<Timed>) -> Report {
    Report {
        timed,
        against: Vec::new(),
        across: Vec::new(),
        start_up: None,
        unit: None,
        sort: SortOrder::Auto,
        threshold: None,
        validity: Vec::new(),
        sampling: None,
        session_dir: String::new(),
        chapter: String::new(),
        reproduce: String::new(),
    }
}

const GZIP: &str = "gzip -{level} data.bin";
const ZSTD: &str = "zstd -{level} data.bin";

/// Means 110, 320, 52 and 160 ms; σ 10, 20, 2 and 10 ms.
fn two_commands() -> Report {
    report(vec![
        timed(GZIP, "1", &[0.100, 0.110, 0.120]),
        timed(GZIP, "9", &[0.300, 0.320, 0.340]),
        timed(ZSTD, "1", &[0.050, 0.052, 0.054]),
        timed(ZSTD, "9", &[0.150, 0.160, 0.170]),
    ])
}

fn with(unit: Option<TimeUnit>, sort: SortOrder, relative_to: RelativeTo) -> Markup {
    Markup {
        unit,
        sort,
        relative_to,
    }
}

#[test]
fn each_format_of_two_commands_and_a_parameter() {
    let report = two_commands();
    let options = Markup::default();
    insta::assert_snapshot!("json", json(&report));
    insta::assert_snapshot!("csv", csv(&report));
    insta::assert_snapshot!("markdown", markdown(&report, &options));
    insta::assert_snapshot!("asciidoc", asciidoc(&report, &options));
    insta::assert_snapshot!("orgmode", orgmode(&report, &options));
}

#[test]
fn markdown_is_relative_to_the_fastest_over_every_parameter_value() {
    // 110 / 52 = 2.115, ± 2.115·√((10/110)² + (2/52)²) = 0.209; zstd -1 is the fastest.
    assert_eq!(
        markdown(&two_commands(), &Markup::default()),
        "\
| Command | Mean [ms] | Min [ms] | Max [ms] | Relative to fastest |
|:---|---:|---:|---:|---:|
| `gzip -1 data.bin` | 110.0 ± 10.0 | 100.0 | 120.0 | 2.12 ± 0.21 |
| `gzip -9 data.bin` | 320.0 ± 20.0 | 300.0 | 340.0 | 6.15 ± 0.45 |
| `zstd -1 data.bin` | 52.0 ± 2.0 | 50.0 | 54.0 | 1.00 |
| `zstd -9 data.bin` | 160.0 ± 10.0 | 150.0 | 170.0 | 3.08 ± 0.23 |
"
    );
}

#[test]
fn asciidoc_and_orgmode_keep_hyperfines_spacing() {
    let report = report(vec![timed(ZSTD, "1", &[0.050, 0.052, 0.054])]);
    assert_eq!(
        asciidoc(&report, &Markup::default()),
        "[cols=\"<,>,>,>,>\"]\n|===\n| Command \n| Mean [ms] \n| Min [ms] \n| Max [ms] \n\
         | Relative to fastest \n\n| `zstd -1 data.bin` \n| 52.0 ± 2.0 \n| 50.0 \n| 54.0 \n\
         | 1.00 \n|===\n"
    );
    assert_eq!(
        orgmode(&report, &Markup::default()),
        "| Command  |  Mean [ms] |  Min [ms] |  Max [ms] |  Relative to fastest |\n\
         |--+--+--+--+--|\n\
         | =zstd -1 data.bin=  |  52.0 ± 2.0 |  50.0 |  54.0 |  1.00 |\n"
    );
}

#[test]
fn mean_time_orders_the_rows_fastest_first() {
    let options = with(None, SortOrder::MeanTime, RelativeTo::Fastest);
    let text = markdown(&two_commands(), &options);
    let rows: Vec<&str> = text.lines().skip(2).collect();
    assert_eq!(
        rows,
        [
            "| `zstd -1 data.bin` | 52.0 ± 2.0 | 50.0 | 54.0 | 1.00 |",
            "| `gzip -1 data.bin` | 110.0 ± 10.0 | 100.0 | 120.0 | 2.12 ± 0.21 |",
            "| `zstd -9 data.bin` | 160.0 ± 10.0 | 150.0 | 170.0 | 3.08 ± 0.23 |",
            "| `gzip -9 data.bin` | 320.0 ± 20.0 | 300.0 | 340.0 | 6.15 ± 0.45 |",
        ]
    );
    // Auto and Command keep the order the commands were given in.
    for sort in [SortOrder::Auto, SortOrder::Command] {
        let options = with(None, sort, RelativeTo::Fastest);
        assert_eq!(
            markdown(&two_commands(), &options),
            markdown(&two_commands(), &Markup::default())
        );
    }
}

#[test]
fn a_time_unit_changes_the_header_and_the_numbers() {
    let report = report(vec![timed(ZSTD, "1", &[0.050, 0.052, 0.054])]);
    let unit = |u| {
        markdown(
            &report,
            &with(Some(u), SortOrder::Auto, RelativeTo::Fastest),
        )
    };
    assert_eq!(
        unit(TimeUnit::Microsecond),
        "\
| Command | Mean [µs] | Min [µs] | Max [µs] | Relative to fastest |
|:---|---:|---:|---:|---:|
| `zstd -1 data.bin` | 52000.0 ± 2000.0 | 50000.0 | 54000.0 | 1.00 |
"
    );
    assert!(unit(TimeUnit::Second).contains("| Mean [s] |"));
    assert!(unit(TimeUnit::Second).contains("| 0.052 ± 0.002 | 0.050 | 0.054 |"));
}

#[test]
fn the_unit_suits_the_first_commands_mean() {
    let first_slow = report(vec![
        timed(GZIP, "9", &[2.0, 2.01]),
        timed(ZSTD, "1", &[0.0004, 0.0008]),
    ]);
    let text = markdown(&first_slow, &Markup::default());
    assert!(text.contains("| `zstd -1 data.bin` | 0.001 ± 0.000 | 0.000 | 0.001 |"));
    assert!(text.starts_with("| Command | Mean [s] |"));
    let first_fast = report(vec![timed(ZSTD, "1", &[0.0004, 0.0008])]);
    let text = markdown(&first_fast, &Markup::default());
    assert!(text.contains("| `zstd -1 data.bin` | 600.0 ± 282.8 | 400.0 | 800.0 | 1.00 |"));
}

#[test]
fn relative_to_the_reference_at_the_same_parameter_values() {
    let mut report = two_commands();
    report.timed.pop(); // zstd has no result at level 9
    let options = with(None, SortOrder::Auto, RelativeTo::Reference(ZSTD.into()));
    // 320 / 160 would be gzip -9's; the reference has no level 9, so there is no ratio.
    assert_eq!(
        markdown(&report, &options),
        "\
| Command | Mean [ms] | Min [ms] | Max [ms] | Relative to reference |
|:---|---:|---:|---:|---:|
| `gzip -1 data.bin` | 110.0 ± 10.0 | 100.0 | 120.0 | 2.12 ± 0.21 |
| `gzip -9 data.bin` | 320.0 ± 20.0 | 300.0 | 340.0 | — |
| `zstd -1 data.bin` | 52.0 ± 2.0 | 50.0 | 54.0 | 1.00 |
"
    );
    // With the reference at level 9: 320 / 160 = 2, ± 2·√((20/320)² + (10/160)²) = 0.18.
    let text = markdown(&two_commands(), &options);
    assert!(text.contains("| `gzip -9 data.bin` | 320.0 ± 20.0 | 300.0 | 340.0 | 2.00 ± 0.18 |"));
    assert!(text.contains("| `zstd -9 data.bin` | 160.0 ± 10.0 | 150.0 | 170.0 | 1.00 |"));
}

#[test]
fn a_command_with_no_timed_run_shows_dashes_and_is_never_the_fastest() {
    let report = report(vec![
        timed(GZIP, "1", &[]),
        timed(ZSTD, "1", &[0.050, 0.052, 0.054]),
    ]);
    let text = markdown(&report, &Markup::default());
    assert!(text.contains("| `gzip -1 data.bin` | — | — | — | — |"));
    assert!(text.contains("| `zstd -1 data.bin` | 52.0 ± 2.0 | 50.0 | 54.0 | 1.00 |"));
    let text = markdown(
        &report,
        &with(None, SortOrder::MeanTime, RelativeTo::Fastest),
    );
    assert!(text.ends_with("| `gzip -1 data.bin` | — | — | — | — |\n"));
    let csv = csv(&report);
    assert_eq!(csv.lines().nth(1), Some("gzip -1 data.bin,,,,,,,,1"));
    let json: serde_json::Value = serde_json::from_str(&json(&report)).unwrap();
    assert_eq!(json["results"][0]["mean"], serde_json::Value::Null);
    assert_eq!(json["results"][0]["times"], serde_json::json!([]));
}

#[test]
fn a_single_run_has_no_spread() {
    let report = report(vec![
        timed(GZIP, "1", &[0.110]),
        timed(ZSTD, "1", &[0.050, 0.052, 0.054]),
    ]);
    let text = markdown(&report, &Markup::default());
    // hyperfine: no ± on the mean, nor on a ratio with it.
    assert!(text.contains("| `gzip -1 data.bin` | 110.0 | 110.0 | 110.0 | 2.12 |"));
    let json: serde_json::Value = serde_json::from_str(&json(&report)).unwrap();
    assert_eq!(json["results"][0]["stddev"], serde_json::Value::Null);
    assert!(csv(&report).contains("\ngzip -1 data.bin,0.11,0,0.11,"));
}

#[test]
fn a_parameter_the_label_does_not_show_is_named_and_bars_are_escaped() {
    let mut t = timed("fast", "9", &[0.050, 0.052]);
    t.command = "tr a | b".into();
    t.label = "tr a | b".into();
    let text = markdown(&report(vec![t]), &Markup::default());
    assert!(text.contains("| `tr a \\| b (level = 9)` |"));
    let text = orgmode(
        &report(vec![timed("fast", "9", &[0.05])]),
        &Markup::default(),
    );
    assert!(text.contains("| =fast (level = 9)=  |"));
}

#[test]
fn json_has_hyperfines_fields() {
    let mut report = two_commands();
    report.timed[0].params.clear();
    let json: serde_json::Value = serde_json::from_str(&json(&report)).unwrap();
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let figures = [
        "command", "mean", "stddev", "median", "user", "system", "min", "max",
    ];
    let runs = ["times", "memory_usage_byte", "exit_codes"];
    for (i, result) in results.iter().enumerate() {
        let object = result.as_object().unwrap();
        let mut expected: Vec<&str> = figures.iter().chain(&runs).copied().collect();
        if i > 0 {
            expected.push("parameters");
        }
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        keys.sort_unstable();
        expected.sort_unstable();
        assert_eq!(keys, expected, "result {i}");
        for figure in &figures[1..] {
            assert!(object[*figure].is_f64(), "result {i}: {figure}");
        }
        for run in runs {
            assert_eq!(
                object[run].as_array().unwrap().len(),
                3,
                "result {i}: {run}"
            );
        }
    }
    // The same keys as hyperfine 1.20 wrote for a parameter list (a fixture of its own output).
    let fixture: serde_json::Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/hyperfine/hyperfine-1.20-list.json"
    )))
    .unwrap();
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&results[1]), keys(&fixture["results"][0]));
    assert_eq!(results[1]["command"], "gzip -9 data.bin");
    assert_eq!(results[1]["parameters"], serde_json::json!({"level": "9"}));
    assert_eq!(results[1]["times"], serde_json::json!([0.3, 0.32, 0.34]));
    assert_eq!(results[1]["exit_codes"], serde_json::json!([0, 0, 0]));
    assert_eq!(results[1]["memory_usage_byte"][0], 4_194_304);
}

#[test]
fn time_units_format_as_hyperfines() {
    assert_eq!(TimeUnit::of(Seconds(1.0)), TimeUnit::Second);
    assert_eq!(TimeUnit::of(Seconds(0.999)), TimeUnit::Millisecond);
    assert_eq!(TimeUnit::of(Seconds(0.0005)), TimeUnit::Microsecond);
    assert_eq!(TimeUnit::of(Seconds(0.0)), TimeUnit::Microsecond);
    assert_eq!(
        TimeUnit::Second.format_value(Seconds(123.456789)),
        "123.457"
    );
    assert_eq!(
        TimeUnit::Millisecond.format_value(Seconds(123.456789)),
        "123456.8"
    );
    assert_eq!(
        TimeUnit::Microsecond.format_value(Seconds(0.00123456)),
        "1234.6"
    );
    assert_eq!(
        TimeUnit::Millisecond.format_duration(Seconds(1.3)),
        "1300.0 ms"
    );
    assert_eq!(
        TimeUnit::Microsecond.format_duration(Seconds(0.0005)),
        "500.0 µs"
    );
    assert_eq!(TimeUnit::Second.scale(), 1.0);
}

#[test]
fn option_values_are_hyperfines() {
    use clap::ValueEnum;
    fn names<T: ValueEnum>() -> Vec<String> {
        T::value_variants()
            .iter()
            .filter_map(|v| Some(v.to_possible_value()?.get_name().to_string()))
            .collect()
    }
    assert_eq!(
        names::<TimeUnit>(),
        ["microsecond", "millisecond", "second"]
    );
    assert_eq!(names::<SortOrder>(), ["auto", "command", "mean-time"]);
    assert_eq!(
        Markup::default(),
        with(None, SortOrder::Auto, RelativeTo::Fastest)
    );
}
