use super::*;
use crate::formats::test_support::{fixture, text};

const VM: &str = "asv/results/vm/4c3316fa-existing-py_work_asv-venv_bin_python.json";
const LABVM: &str = "asv/results/labvm/b28ff83d-existing-py_work_asv-venv_bin_python.json";

fn found<'a>(imported: &'a Imported, name: &str, params: &[(&str, &str)]) -> &'a Benchmark {
    imported
        .benchmarks
        .iter()
        .find(|b| {
            b.name == name
                && params
                    .iter()
                    .all(|(k, v)| b.params.get(*k).map(String::as_str) == Some(*v))
        })
        .unwrap_or_else(|| panic!("no {name} {params:?}"))
}

/// The samples the file holds for a benchmark's `j`th combination, as serde reads them.
fn samples_in(file: &str, name: &str, j: usize) -> Vec<f64> {
    let document: Value = serde_json::from_str(&quote_non_finite(&text(file))).unwrap();
    document["results"][name][11][j]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[test]
fn each_parameter_combination_is_one_run_of_its_samples() {
    let imported = read(&fixture(VM)).unwrap();
    assert_eq!(imported.format, Format::Asv);
    assert_eq!(imported.benchmarks.len(), 14);
    let sort = |n, order| {
        found(
            &imported,
            "bench_sorts.Sorts.time_sort",
            &[("n", n), ("order", order)],
        )
    };
    for (j, (n, order)) in [
        ("100", "sorted"),
        ("100", "shuffled"),
        ("1000", "sorted"),
        ("1000", "shuffled"),
    ]
    .into_iter()
    .enumerate()
    {
        let b = sort(n, order);
        assert_eq!((b.metric.as_str(), b.unit.as_str()), ("time", "s"));
        assert_eq!(b.params["commit"], "4c3316fa");
        assert_eq!(b.runs.len(), 1);
        assert_eq!(
            b.runs[0].values,
            samples_in(VM, "bench_sorts.Sorts.time_sort", j)
        );
    }
    let last = &sort("1000", "shuffled").runs[0].values;
    assert_eq!(last.len(), 10);
    assert_eq!(last[0], 6.145499992271652e-05);
    assert_eq!(last[9], 6.828799996583257e-05);
    let join = found(&imported, "bench_sorts.time_join", &[]);
    assert_eq!(join.params.keys().collect::<Vec<_>>(), ["commit"]);
    assert_eq!(join.runs[0].values[0], 2.9541368420675434e-05);
}

#[test]
fn measure_once_benchmarks_keep_their_result_in_their_own_unit() {
    let imported = read(&fixture(VM)).unwrap();
    let track = found(
        &imported,
        "bench_sorts.Sorts.track_length",
        &[("n", "1000"), ("order", "sorted")],
    );
    assert_eq!(
        (track.metric.as_str(), track.unit.as_str()),
        ("value", "items")
    );
    assert_eq!(track.runs[0].values, [1000.0]);
    let size = found(&imported, "bench_sorts.mem_list", &[]);
    assert_eq!(
        (size.metric.as_str(), size.unit.as_str()),
        ("size", "bytes")
    );
    assert_eq!(size.runs[0].values, [8056.0]);
    let peak = found(&imported, "bench_sorts.peakmem_list", &[]);
    assert_eq!(peak.metric, "peak_memory");
    assert_eq!(peak.runs[0].values, [24715264.0]);
}

#[test]
fn failed_and_skipped_benchmarks_are_failed_runs() {
    let imported = read(&fixture(VM)).unwrap();
    let exit = |b: &Benchmark| (b.runs[0].exit.clone(), b.runs[0].values.len());
    let failed = found(&imported, "bench_sorts.time_fails", &[]);
    assert_eq!(
        exit(failed),
        (Some(Exit::SpawnFailed("asv: failed".into())), 0)
    );
    let skipped = found(&imported, "bench_sorts.Partly.time_sum", &[("param1", "2")]);
    assert_eq!(
        exit(skipped),
        (Some(Exit::SpawnFailed("asv: skipped (n/a)".into())), 0)
    );
    let ran = found(&imported, "bench_sorts.Partly.time_sum", &[("param1", "1")]);
    assert_eq!(ran.runs[0].values.len(), 10);
    assert_eq!(ran.runs[0].exit, None);
}

#[test]
fn the_context_is_the_machine_the_environment_and_the_commit() {
    let imported = read(&fixture(VM)).unwrap();
    let facts: Vec<(&str, &str)> = imported
        .context
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        facts,
        [
            ("arch", "x86_64"),
            ("commit_hash", "4c3316fa4742920310846260593325a1a7736666"),
            ("cpu_count", "2"),
            ("cpu_model_name", "AMD EPYC"),
            ("env_name", "existing-py_work_asv-venv_bin_python"),
            ("hostname", "vm"),
            ("os", "Linux 6.18.44-fc-v1272"),
            ("python", "/work/asv-venv/bin/python"),
            ("ram", "25276194816"),
        ]
    );
}

#[test]
fn without_benchmarks_json_names_and_prefixes_say_what_they_can() {
    let imported = parse(LABVM, &text(LABVM)).unwrap();
    assert_eq!(imported.context["hostname"], "labvm");
    let b = found(
        &imported,
        "bench_sorts.Sorts.time_sort",
        &[("param1", "1000"), ("param2", "shuffled")],
    );
    assert_eq!(b.params["commit"], "b28ff83d");
    assert_eq!(b.runs[0].values.len(), 14);
    assert_eq!(b.runs[0].values[0], 8.244399941759184e-05);
    let track = found(&imported, "bench_sorts.Sorts.track_length", &[]);
    assert_eq!(track.unit, "unit");
}

#[test]
fn a_file_of_summaries_only_is_refused_with_that_reason() {
    let file = "asv/summary-only/vm/b28ff83d-existing-py_work_asv-venv_bin_python.json";
    let err = read(&fixture(file)).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{}: 3 of 7 benchmarks (bench_sorts.Partly.time_sum, …) hold only asv's summary \
             result, no samples: lab needs the samples (expected a file written by `asv run \
             --record-samples`, which keeps them)",
            fixture(file).display()
        )
    );
}

#[test]
fn public_summary_files_of_both_format_versions_are_refused() {
    for (file, count) in [
        (
            "asv/blas/gha-aws-graviton/03433efb-virtualenv-py3.12.json",
            "10 of 10",
        ),
        (
            "asv/asv-v1/cheetah/05d283b9-py2.7-Cython-numpy1.8.json",
            "12 of 12",
        ),
    ] {
        let err = read(&fixture(file)).unwrap_err().to_string();
        assert!(err.contains(&format!("{count} benchmarks")), "{err}");
        assert!(err.contains("asv run --record-samples"), "{err}");
    }
}

#[test]
fn a_result_that_is_not_a_number_is_refused_naming_the_benchmark() {
    let file = "asv/nwb/asv_0.6.6_raw_results.json";
    let err = parse(file, &text(file)).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{file}: benchmark \"bench.Incremental.track_cumulative_slice_times \
             (param1={{'name': 'A'}})\": result is true, not a number (expected a measured value)"
        )
    );
}

#[test]
fn python_non_finite_numbers_are_quoted_outside_strings_only() {
    assert_eq!(
        quote_non_finite(r#"[NaN, -Infinity, Infinity, "NaN \" NaN"]"#),
        r#"["NaN", "-Infinity", "Infinity", "NaN \" NaN"]"#
    );
    let v: Value = serde_json::from_str(&quote_non_finite("[1e-6, NaN]")).unwrap();
    assert!(number(&v[1]).unwrap().is_nan());
}

#[test]
fn a_results_folder_is_its_result_files_without_descriptions() {
    let files = result_files(&fixture("asv/results")).unwrap();
    assert_eq!(files, [fixture(LABVM), fixture(VM)]);
    assert!(
        result_files(&fixture("asv/results/vm/machine.json"))
            .unwrap()
            .is_empty()
    );
    let empty = tempfile::tempdir().unwrap();
    let err = result_files(empty.path()).unwrap_err().to_string();
    assert!(err.contains("a folder with no asv result file"), "{err}");
}

#[test]
fn results_that_do_not_fit_the_parameters_are_refused() {
    let text = r#"{"version": 2, "commit_hash": "abc", "result_columns": ["result", "params"],
        "results": {"time_x": [[1.0, 2.0, 3.0], [["1", "2"]]]}}"#;
    let err = parse("x.json", text).unwrap_err().to_string();
    assert_eq!(
        err,
        "x.json: benchmark \"time_x\": result holds 3 values for 2 parameter combinations \
         (expected one per combination)"
    );
    let err = parse("x.json", r#"{"version": 3, "results": {}}"#)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("x.json: result format version 3"), "{err}");
}

#[test]
fn a_benchmark_of_no_type_lab_can_tell_is_left_out_with_a_note_and_the_rest_imported() {
    // A custom benchmark (asv's `benchmark_name` attribute) named with no prefix, as one
    // would find it without the benchmarks.json that gives its type.
    let renamed = text(LABVM).replace("bench_sorts.time_join", "bench_sorts.custom_join");
    let imported = parse(LABVM, &renamed).unwrap();
    assert_eq!(
        imported.notes,
        vec![format!(
            "{LABVM}: benchmark \"bench_sorts.custom_join\": of no type lab can tell from its \
             name (expected time_, timeraw_, mem_, peakmem_ or track_ benchmarks; keep asv's \
             benchmarks.json in the results folder, above the machine folders, to say a custom \
             benchmark's type): left out"
        )]
    );
    let all = parse(LABVM, &text(LABVM)).unwrap();
    assert_eq!(imported.benchmarks.len() + 1, all.benchmarks.len());
    assert!(!imported.benchmarks.iter().any(|b| b.name.contains("join")));
}
