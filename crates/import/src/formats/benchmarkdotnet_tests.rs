use super::*;
use crate::formats::test_support::text;

/// The real full exports, of BenchmarkDotNet 0.14.0 to 0.15.8 (see PROVENANCE.md).
const FULL: [&str; 6] = [
    "benchmarkdotnet/bdn-0.14.0-report-full.json",
    "benchmarkdotnet/bdn-0.14.1-failing-report-full-compressed.json",
    "benchmarkdotnet/bdn-0.15.1-report-full.json",
    "benchmarkdotnet/bdn-0.15.2-jobs-report-full-compressed.json",
    "benchmarkdotnet/bdn-0.15.8-params-report-full.json",
    "benchmarkdotnet/bdn-0.15.8-memory-report-full.json",
];

fn read(file: &str) -> (Imported, Value) {
    let imported = parse(file, &text(file)).unwrap();
    (imported, serde_json::from_str(&text(file)).unwrap())
}

/// The entry's measurements of this mode and stage.
fn stage<'a>(entry: &'a Value, mode: &str, stage: &str) -> Vec<&'a Value> {
    entry["Measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["IterationMode"] == mode && m["IterationStage"] == stage)
        .collect()
}

fn nanos(m: &Value) -> f64 {
    m["Nanoseconds"].as_f64().unwrap()
}

fn operations(m: &Value) -> f64 {
    m["Operations"].as_f64().unwrap()
}

/// The median as BenchmarkDotNet's `Statistics.Median` takes it (the mean of the middle two
/// of an even count).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// BenchmarkDotNet's mean computed from the imported values as `Engines/RunResults.cs` does:
/// the median overhead iteration subtracted from each iteration's nanoseconds, the iterations
/// it dropped as outliers (those its `Result` stage does not hold) left out, per operation.
/// Also how many it kept.
fn bdn_mean(values: &[f64], entry: &Value) -> (f64, usize) {
    let overhead: Vec<f64> = stage(entry, "Overhead", "Actual")
        .into_iter()
        .map(nanos)
        .collect();
    let overhead = if overhead.is_empty() {
        0.0
    } else {
        median(overhead)
    };
    let actual = stage(entry, "Workload", "Actual");
    let results = stage(entry, "Workload", "Result");
    let mut kept = Vec::new();
    for (value, m) in values.iter().zip(&actual) {
        let ops = operations(m);
        let mut result = (value * 1e9 * ops - overhead).max(0.0);
        if result < 0.1 {
            result = 0.0;
        }
        if let Some(next) = results.get(kept.len())
            && (result - nanos(next)).abs() <= 1e-9 * result.max(1.0)
        {
            kept.push(result / ops);
        }
    }
    (kept.iter().sum::<f64>() / kept.len() as f64, kept.len())
}

#[test]
fn every_real_export_gives_back_each_actual_iteration_and_bdns_own_mean() {
    for file in FULL {
        let (imported, document) = read(file);
        assert_eq!(imported.format, Format::BenchmarkDotNet);
        let entries = document["Benchmarks"].as_array().unwrap();
        assert_eq!(imported.benchmarks.len(), entries.len(), "{file}");
        for (b, entry) in imported.benchmarks.iter().zip(entries) {
            let actual = stage(entry, "Workload", "Actual");
            if actual.is_empty() {
                continue;
            }
            // Every launch of these files is one process: LaunchIndex 1.
            assert_eq!(b.runs.len(), 1, "{file} {}", b.name);
            let want: Vec<f64> = actual
                .iter()
                .map(|m| nanos(m) / operations(m) * 1e-9)
                .collect();
            assert_eq!(b.runs[0].values, want, "{file} {}", b.name);
            assert!(b.runs[0].warmup_values.is_empty());
            let stats = &entry["Statistics"];
            let (mean, n) = bdn_mean(&b.runs[0].values, entry);
            let own = stats["Mean"].as_f64().unwrap();
            assert_eq!(n as u64, stats["N"].as_u64().unwrap(), "{file} {}", b.name);
            assert!(
                (mean - own).abs() <= 1e-9 * own.abs(),
                "{file} {}: {mean} is not {own}",
                b.name
            );
        }
    }
}

#[test]
fn parameters_become_params_and_the_host_the_context() {
    let file = "benchmarkdotnet/bdn-0.15.8-params-report-full.json";
    let (imported, _) = read(file);
    assert_eq!(imported.tool_version.as_deref(), Some("0.15.8"));
    assert_eq!(
        imported.context["cpu_model_name"],
        "Intel Core Ultra 7 165H"
    );
    assert_eq!(imported.context["num_cpus"], "22");
    assert_eq!(imported.context["arch"], "X64");
    assert_eq!(imported.context["chronometer_hz"], "10000000");
    assert_eq!(
        imported.context["runtime"],
        ".NET 10.0.4 (10.0.4, 10.0.426.12010)"
    );
    let names: Vec<(&str, &str)> = imported
        .benchmarks
        .iter()
        .map(|b| (b.name.as_str(), b.params["N"].as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("Md5VsSha256Benchmark.Sha256", "1000"),
            ("Md5VsSha256Benchmark.Md5", "1000"),
            ("Md5VsSha256Benchmark.Sha256", "10000"),
            ("Md5VsSha256Benchmark.Md5", "10000"),
            ("Md5VsSha256Benchmark.Sha256", "100000"),
            ("Md5VsSha256Benchmark.Md5", "100000"),
        ]
    );
    let sha = &imported.benchmarks[0];
    assert_eq!(sha.runs[0].values.len(), 3);
    assert_eq!(sha.runs[0].values[0], 642231700.0 / 1048576.0 * 1e-9);
}

#[test]
fn several_jobs_are_variants_of_their_own() {
    let (imported, _) = read("benchmarkdotnet/bdn-0.15.2-jobs-report-full-compressed.json");
    let names: Vec<&str> = imported
        .benchmarks
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "IndexOfAnyBenchmarks.IndexOfAny_String [.NET 8.0]",
            "IndexOfAnyBenchmarks.IndexOfAny_Span_Array [.NET 8.0]",
            "IndexOfAnyBenchmarks.IndexOfAny_Span_Two_Chars [.NET 8.0]",
            "IndexOfAnyBenchmarks.IndexOfAny_String [.NET 9.0]",
            "IndexOfAnyBenchmarks.IndexOfAny_Span_Array [.NET 9.0]",
            "IndexOfAnyBenchmarks.IndexOfAny_Span_Two_Chars [.NET 9.0]",
        ]
    );
    let counts: Vec<usize> = imported
        .benchmarks
        .iter()
        .map(|b| b.runs[0].values.len())
        .collect();
    assert_eq!(counts, [31, 29, 29, 15, 27, 15]);
}

#[test]
fn a_benchmark_that_failed_is_one_failed_run() {
    let (imported, _) = read("benchmarkdotnet/bdn-0.14.1-failing-report-full-compressed.json");
    assert_eq!(
        imported.tool_version.as_deref(),
        Some("0.14.1-nightly.20250107.205")
    );
    let runs: Vec<(&str, usize, bool)> = imported
        .benchmarks
        .iter()
        .map(|b| {
            (
                b.name.as_str(),
                b.runs[0].values.len(),
                b.runs[0].exit.is_some(),
            )
        })
        .collect();
    assert_eq!(
        runs,
        [
            ("OpenApiBenchmarks.AspNetCore", 63, false),
            ("OpenApiBenchmarks.NSwag", 47, false),
            ("OpenApiBenchmarks.Swashbuckle", 0, true),
        ]
    );
}

#[test]
fn a_brief_export_is_refused_naming_the_full_exporter() {
    let file = "benchmarkdotnet/bdn-0.15.1-report-brief.json";
    let err = parse(file, &text(file)).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{file}: 1 of 1 benchmarks (ArrayProcessorBenchmarks.GenerateArray) hold only \
             BenchmarkDotNet's statistics, no measurements: lab needs the iterations (expected \
             the full JSON export, *-report-full.json, of [JsonExporterAttribute.Full] or \
             --exporters json; the brief flavour and excludeMeasurements: true leave the \
             measurements out)"
        )
    );
}

#[test]
fn the_build_log_before_the_export_is_left_out_with_a_note() {
    let file = "benchmarkdotnet/bdn-0.15.1-report-full.json";
    let logged = format!(
        "// Validating benchmarks:\n// ***** BenchmarkRunner: Start *****\n{}",
        text(file)
    );
    let imported = parse("run.log", &logged).unwrap();
    assert_eq!(imported.benchmarks.len(), 1);
    assert_eq!(imported.benchmarks[0].runs[0].values.len(), 93);
    assert_eq!(
        imported.notes,
        [
            "run.log: the JSON document begins on line 3; the 2 lines of other text before it are left out"
        ]
    );
}

#[test]
fn what_is_not_an_export_is_refused_with_what_was_expected() {
    let err = parse("x.json", r#"{"benchmarks": []}"#)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("x.json: not a BenchmarkDotNet JSON export: no \"Benchmarks\""),
        "{err}"
    );
    let zero = r#"{"HostEnvironmentInfo": {}, "Benchmarks": [{"Type": "T", "Method": "M",
        "Measurements": [{"IterationMode": "Workload", "IterationStage": "Actual",
        "LaunchIndex": 1, "Operations": 0, "Nanoseconds": 5}]}]}"#;
    let err = parse("z.json", zero).unwrap_err().to_string();
    assert!(
        err.contains("benchmark \"T.M\": measurement 1 has 0 Operations"),
        "{err}"
    );
}

#[test]
fn each_launch_is_a_run() {
    let two = r#"{"HostEnvironmentInfo": {}, "Benchmarks": [{"Type": "T", "Method": "M",
        "Parameters": "A=1&B=x", "Measurements": [
        {"IterationMode": "Workload", "IterationStage": "Actual", "LaunchIndex": 1, "Operations": 2, "Nanoseconds": 10},
        {"IterationMode": "Overhead", "IterationStage": "Actual", "LaunchIndex": 1, "Operations": 2, "Nanoseconds": 1},
        {"IterationMode": "Workload", "IterationStage": "Result", "LaunchIndex": 1, "Operations": 2, "Nanoseconds": 9},
        {"IterationMode": "Workload", "IterationStage": "Actual", "LaunchIndex": 2, "Operations": 4, "Nanoseconds": 12},
        {"IterationMode": "Workload", "IterationStage": "Actual", "LaunchIndex": 2, "Operations": 4, "Nanoseconds": 16}]}]}"#;
    let imported = parse("two.json", two).unwrap();
    let b = &imported.benchmarks[0];
    assert_eq!(b.params["A"], "1");
    assert_eq!(b.params["B"], "x");
    let runs: Vec<&Vec<f64>> = b.runs.iter().map(|r| &r.values).collect();
    let per_op = |ns: f64, ops: f64| ns / ops * 1e-9;
    assert_eq!(
        runs,
        [
            &vec![per_op(10.0, 2.0)],
            &vec![per_op(12.0, 4.0), per_op(16.0, 4.0)]
        ]
    );
}

#[test]
fn before_0_11_the_measured_iterations_are_main_target() {
    let old = r#"{"HostEnvironmentInfo": {"BenchmarkDotNetVersion": "0.10.14"}, "Benchmarks": [
        {"Type": "T", "Method": "M", "Parameters": "", "Statistics": {"Mean": 2.5}, "Measurements": [
        {"IterationMode": "IdleTarget", "LaunchIndex": 1, "IterationIndex": 1, "Operations": 4, "Nanoseconds": 1},
        {"IterationMode": "MainWarmup", "LaunchIndex": 1, "IterationIndex": 1, "Operations": 4, "Nanoseconds": 40},
        {"IterationMode": "MainTarget", "LaunchIndex": 1, "IterationIndex": 1, "Operations": 4, "Nanoseconds": 10},
        {"IterationMode": "Result", "LaunchIndex": 1, "IterationIndex": 1, "Operations": 4, "Nanoseconds": 9}]}]}"#;
    let imported = parse("old.json", old).unwrap();
    assert_eq!(imported.tool_version.as_deref(), Some("0.10.14"));
    assert_eq!(imported.benchmarks[0].runs[0].values, [10.0 / 4.0 * 1e-9]);
}

#[test]
fn a_real_export_whose_measurements_were_cut_short_is_refused_naming_what_it_keeps() {
    // github-action-benchmark's test data: a 0.12.1 export whose every benchmark keeps its
    // Statistics (N = 14 and 13) but only 20 of its measurements, none of them Actual.
    let file = "benchmarkdotnet/bdn-0.12.1-report-full.json";
    let err = parse(file, &text(file)).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{file}: 2 of 2 benchmarks (Benchmarks.Fib10, …) hold statistics but none of the \
             measured iterations (Workload/Actual) they were made from: \"Benchmarks.Fib10\" \
             keeps only Overhead/Jitting ×2, Workload/Jitting ×2, Workload/Pilot ×16. The \
             file's measurements were cut short after BenchmarkDotNet wrote it: lab needs \
             every measured iteration (expected the full JSON export, *-report-full.json, as \
             BenchmarkDotNet writes it)"
        )
    );
    // An export of 0.9.9 (2016), which wrote no measurements at all, is a summary.
    let file = "benchmarkdotnet/bdn-0.9.9-introjsonexport.json";
    let err = parse(file, &text(file)).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "{file}: 2 of 2 benchmarks (IntroJsonExport.Sleep10, …) hold only BenchmarkDotNet's \
             statistics, no measurements"
        )),
        "{err}"
    );
}
