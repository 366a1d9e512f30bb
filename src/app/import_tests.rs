//! The lab.toml `lab import` writes reads back with the types it was written with.

use super::*;
use lab_import::formats::Run;

fn benchmark(name: &str, size: &str) -> Benchmark {
    Benchmark {
        name: name.into(),
        params: BTreeMap::from([("size".to_string(), size.to_string())]),
        metric: "time".into(),
        unit: "s".into(),
        higher_is_better: false,
        runs: vec![Run::measured(vec![1.0])],
        summary_only: false,
        secondary: Vec::new(),
    }
}

#[test]
fn generated_floats_read_back_as_floats() {
    let imported = Imported {
        format: Format::Hyperfine,
        tool_version: None,
        context: BTreeMap::new(),
        notes: Vec::new(),
        benchmarks: vec![benchmark("big", "1e20"), benchmark("two", "2.0")],
    };
    let opts = ImportOptions {
        format: Format::Hyperfine,
        files: &[],
        into: Path::new("x"),
        filters: &[],
        machine: None,
        quiet: true,
        command_line: "lab import hyperfine f.json --into x".into(),
    };
    let metrics = metrics_of(&imported);
    let names = variant_names(&imported);
    let new = NewExperiment {
        imported: &imported,
        metrics: &metrics,
        names: &names,
        repetitions: 1,
    };
    let text = generated_toml("x", &new, &opts).unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let floats = |v: &toml::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_float().unwrap_or_else(|| panic!("{x:?} in\n{text}")))
            .collect()
    };
    assert_eq!(floats(&table["params"]["size"]), [1e20, 2.0]);
    assert_eq!(floats(&table["variant"][0]["params"]["size"]), [1e20]);
    assert_eq!(floats(&table["variant"][1]["params"]["size"]), [2.0]);
}

fn measured(name: &str, metric: &str, unit: &str, params: &[(&str, &str)]) -> Benchmark {
    Benchmark {
        name: name.into(),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        metric: metric.into(),
        unit: unit.into(),
        higher_is_better: metric == "throughput",
        runs: vec![Run::measured(vec![1.0])],
        summary_only: false,
        secondary: Vec::new(),
    }
}

fn of(benchmarks: Vec<Benchmark>) -> Imported {
    Imported {
        format: Format::Jmh,
        tool_version: None,
        context: BTreeMap::new(),
        notes: Vec::new(),
        benchmarks,
    }
}

fn tags(parts: &[(Option<String>, Imported)]) -> Vec<(Option<&str>, Vec<&str>)> {
    parts
        .iter()
        .map(|(tag, part)| {
            let names = part.benchmarks.iter().map(|b| b.name.as_str()).collect();
            (tag.as_deref(), names)
        })
        .collect()
}

#[test]
fn one_kind_is_one_experiment_without_a_tag() {
    let parts = split(of(vec![
        measured("a", "time", "s", &[("n", "1")]),
        measured("b", "time", "s", &[("n", "2")]),
    ]));
    assert_eq!(tags(&parts), [(None, vec!["a", "b"])]);
}

#[test]
fn kinds_and_parameter_sets_split_into_experiments_named_by_what_differs() {
    let parts = split(of(vec![
        measured("a", "throughput", "ops/ms", &[("size", "10")]),
        measured("b", "time", "s", &[]),
        measured("a", "throughput", "ops/ms", &[("size", "20")]),
        measured("c", "time", "s", &[("size", "10")]),
    ]));
    assert_eq!(
        tags(&parts),
        [
            (Some("throughput-by-size"), vec!["a", "a"]),
            (Some("time-plain"), vec!["b"]),
            (Some("time-by-size"), vec!["c"]),
        ]
    );
    // One metric in two units: the unit names the experiment.
    let parts = split(of(vec![
        measured("a", "throughput", "ops/ms", &[]),
        measured("b", "throughput", "ops/s", &[]),
    ]));
    assert_eq!(
        tags(&parts),
        [
            (Some("throughput-ops-ms"), vec!["a"]),
            (Some("throughput-ops-s"), vec!["b"]),
        ]
    );
    assert_eq!(
        into_for(Path::new("sub/field"), Some("time-plain")),
        Path::new("sub/field-time-plain")
    );
}

#[test]
fn secondary_metrics_get_identifiers_that_no_other_metric_has() {
    assert_eq!(
        metric_identifier("\u{b7}gc.alloc.rate", &["time"]),
        "gc_alloc_rate"
    );
    assert_eq!(metric_identifier("time_cpu", &["time"]), "time_cpu");
    assert_eq!(metric_identifier("time", &["time"]), "time_2");
    assert_eq!(metric_identifier("wall_s", &["time"]), "wall_s_2");
    assert_eq!(metric_identifier("\u{b7}\u{b7}", &[]), "metric");
    assert_eq!(metric_identifier(&"x".repeat(80), &[]).len(), 60);
}

#[test]
fn a_secondary_metric_some_runs_lack_is_optional_and_follows_the_main_one() {
    let mut with = measured("a", "throughput", "ops/ms", &[]);
    with.secondary = vec![formats::Secondary::new(
        "\u{b7}gc.count",
        "counts",
        false,
        true,
    )];
    with.runs = vec![Run::measured(vec![1.0]).with("\u{b7}gc.count", vec![3.0])];
    let mut without = measured("b", "throughput", "ops/ms", &[]);
    without.runs = vec![Run::measured(vec![2.0])];
    let part = Imported {
        format: Format::Jmh,
        tool_version: None,
        context: BTreeMap::new(),
        notes: Vec::new(),
        benchmarks: vec![with, without],
    };
    let metrics = metrics_of(&part);
    let names: Vec<(&str, bool)> = metrics
        .iter()
        .map(|m| (m.name.as_str(), m.optional))
        .collect();
    assert_eq!(names, [("throughput", false), ("gc_count", true)]);
    assert_eq!(metrics[1].values(&part.benchmarks[0].runs[0]), [3.0]);
    assert!(metrics[1].values(&part.benchmarks[1].runs[0]).is_empty());
}
