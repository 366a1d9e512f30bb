use super::*;
use crate::formats::test_support::text;

/// The JSON files of nanobench's json template (see PROVENANCE.md and MADE.md).
const JSON: [&str; 5] = [
    "nanobench/nanobench-2020-docs-render.json",
    "nanobench/nanobench-4.3.11-sort-batch.json",
    "nanobench/nanobench-4.3.11-three.json",
    "nanobench/nanobench-4.6.0-sort-batch.json",
    "nanobench/nanobench-4.6.0-three.json",
];

fn read(file: &str) -> (Imported, Vec<Value>) {
    let imported = parse(file, &text(file)).unwrap();
    let document: Value = serde_json::from_str(&text(file)).unwrap();
    (imported, document["results"].as_array().unwrap().clone())
}

#[test]
fn every_file_gives_one_run_per_benchmark_of_each_epochs_elapsed_per_unit() {
    for file in JSON {
        let (imported, results) = read(file);
        assert_eq!(imported.format, Format::Nanobench);
        assert_eq!(imported.benchmarks.len(), results.len(), "{file}");
        for (b, result) in imported.benchmarks.iter().zip(&results) {
            assert_eq!(b.runs.len(), 1, "{file} {}", b.name);
            let batch = result["batch"].as_f64().unwrap();
            let epochs = result["measurements"].as_array().unwrap();
            assert_eq!(
                epochs.len() as u64,
                result["epochs"].as_u64().unwrap(),
                "{file}"
            );
            let want: Vec<f64> = epochs
                .iter()
                .map(|e| e["elapsed"].as_f64().unwrap() / batch)
                .collect();
            assert_eq!(b.runs[0].values, want, "{file} {}", b.name);
            assert_eq!((b.unit.as_str(), b.metric.as_str()), ("s", "time"));
        }
    }
}

/// nanobench's `totalTime` is the sum over epochs of iterations × elapsed: the values, times
/// the batch and each epoch's iterations, give it back.
#[test]
fn the_values_give_back_nanobenchs_total_time() {
    for file in JSON {
        let (imported, results) = read(file);
        for (b, result) in imported.benchmarks.iter().zip(&results) {
            let batch = result["batch"].as_f64().unwrap();
            let epochs = result["measurements"].as_array().unwrap();
            let total: f64 = b.runs[0]
                .values
                .iter()
                .zip(epochs)
                .map(|(v, e)| v * batch * e["iterations"].as_f64().unwrap())
                .sum();
            let own = result["totalTime"].as_f64().unwrap();
            assert!(
                (total - own).abs() <= 1e-6 * own,
                "{file} {}: {total} is not {own}",
                b.name
            );
        }
    }
}

#[test]
fn the_docs_file_keeps_its_counters_and_names_title_slash_name() {
    let (imported, _) = read("nanobench/nanobench-2020-docs-render.json");
    let names: Vec<&str> = imported
        .benchmarks
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "Benchmarking std::mt19937_64 and std::knuth_b/std::mt19937_64",
            "Benchmarking std::mt19937_64 and std::knuth_b/std::knuth_b"
        ]
    );
    let first = &imported.benchmarks[0];
    assert_eq!(first.runs[0].values.len(), 11);
    assert_eq!(first.runs[0].values[0], 2.54708571428571e-08);
    assert_eq!(first.runs[0].values[1], 2.58467243510507e-08);
    let kept: Vec<&str> = first.secondary.iter().map(|s| s.name.as_str()).collect();
    // Page faults and context switches were 0 in every epoch: left out.
    assert_eq!(
        kept,
        [
            "instructions",
            "cpucycles",
            "branchinstructions",
            "branchmisses"
        ]
    );
    assert_eq!(first.secondary[0].unit, "instructions/op");
    assert_eq!(first.runs[0].secondary["instructions"][0], 125.885714285714);
    assert_eq!(
        first.runs[0].secondary["branchmisses"][1],
        0.582200247218789
    );
    assert!(first.params.is_empty());
    assert_eq!(imported.tool_version, None);
}

#[test]
fn a_batch_divides_the_values_and_the_unit_and_complexity_become_params() {
    let (imported, _) = read("nanobench/nanobench-4.6.0-sort-batch.json");
    let b = &imported.benchmarks[0];
    assert_eq!(b.name, "sorting/std::sort 100");
    assert_eq!(b.runs[0].values[0], 3.88128185328185e-06 / 100.0);
    assert_eq!(b.runs[0].values.len(), 9);
    let params: Vec<(&str, &str)> = b
        .params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(params, [("complexityN", "100"), ("unit", "element")]);
    // No counter could be read where these were made: none is kept.
    assert!(b.secondary.is_empty());
    assert_eq!(imported.benchmarks[1].params["complexityN"], "1000");
}

#[test]
fn the_other_templates_are_refused_naming_the_json_template() {
    for file in [
        "nanobench/nanobench-4.6.0-csv.csv",
        "nanobench/nanobench-4.6.0-pyperf.json",
    ] {
        let error = parse(file, &text(file)).unwrap_err().to_string();
        assert!(error.starts_with(file), "{error}");
        assert!(error.contains("templates::json()"), "{error}");
    }
    let pyperf = parse("p.json", &text("nanobench/nanobench-4.6.0-pyperf.json"))
        .unwrap_err()
        .to_string();
    assert!(pyperf.contains("lab import pyperf"), "{pyperf}");
}

#[test]
fn a_custom_template_of_summaries_only_is_refused() {
    let summaries = r#"{"results": [{"title": "t", "name": "n", "median(elapsed)": 1e-8}]}"#;
    let error = parse("s.json", summaries).unwrap_err().to_string();
    assert!(
        error.contains("benchmark \"t/n\" holds no \"measurements\""),
        "{error}"
    );
    assert!(error.contains("templates::json()"), "{error}");
}

#[test]
fn a_negative_elapsed_or_a_zero_batch_is_refused_where_it_is() {
    let epoch = |elapsed: &str, batch: &str| {
        format!(
            r#"{{"results": [{{"name": "n", "batch": {batch}, "measurements": [{{"iterations": 1, "elapsed": {elapsed}}}]}}]}}"#
        )
    };
    let error = parse("e.json", &epoch("-1", "1")).unwrap_err().to_string();
    assert!(error.contains("epoch 1 \"elapsed\" is negative"), "{error}");
    let error = parse("e.json", &epoch("1", "0")).unwrap_err().to_string();
    assert!(error.contains("\"batch\" is 0"), "{error}");
}
