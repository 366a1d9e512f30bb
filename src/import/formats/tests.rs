//! Unit tests of `formats`.

use super::*;

fn bench(name: &str, unit: &str, values: Vec<f64>) -> Benchmark {
    Benchmark {
        name: name.into(),
        params: BTreeMap::new(),
        metric: "time".into(),
        unit: unit.into(),
        higher_is_better: false,
        runs: vec![Run::measured(values)],
        summary_only: false,
    }
}

#[test]
fn same_benchmarks_merge_their_runs_in_order() {
    let grouped = group_benchmarks(
        "b.json",
        vec![bench("a", "s", vec![1.0]), bench("b", "s", vec![2.0])],
        vec![bench("a", "s", vec![3.0])],
    )
    .unwrap();
    assert_eq!(grouped.len(), 2);
    assert_eq!(grouped[0].runs.len(), 2);
    assert_eq!(grouped[0].runs[1].values, vec![3.0]);
}

#[test]
fn a_benchmark_in_two_units_is_refused() {
    let error = group_benchmarks(
        "b.json",
        vec![bench("a", "ops/s", vec![1.0])],
        vec![bench("a", "ops/ms", vec![3.0])],
    )
    .unwrap_err()
    .to_string();
    assert!(error.starts_with("b.json: benchmark \"a\""), "{error}");
    assert!(
        error.contains("ops/ms") && error.contains("ops/s"),
        "{error}"
    );
}

#[test]
fn disagreeing_facts_keep_every_distinct_value() {
    let mut facts = Facts::default();
    facts.add("host", "a".into());
    facts.add("host", "b".into());
    facts.add("host", "a".into());
    assert_eq!(facts.into_context()["host"], "a | b");
}

#[test]
fn non_finite_and_negative_values_are_refused_with_the_benchmark() {
    let source = Source {
        origin: "x.json",
        what: "x",
        expected: "x",
    };
    for bad in [f64::NAN, f64::INFINITY, -1.0] {
        let error = source
            .checked("sort", "run 1", bad)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("x.json: benchmark \"sort\": run 1 is"),
            "{error}"
        );
    }
    let nan_string = serde_json::json!("NaN");
    assert!(source.value("sort", "run 1", &nan_string).is_err());
}

#[test]
fn no_files_is_an_error() {
    assert!(read(Format::Hyperfine, &[]).is_err());
}

#[test]
fn criterion_text_alone_is_refused() {
    let error = parse(Format::Criterion, "sample.json", "{}")
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("sample.json: "), "{error}");
}
