use super::*;
use crate::formats::test_support::text;

/// Real Catch2 XML reports, each with its count of benchmarks (see PROVENANCE.md); every one
/// holds them in the test case "Convolution Implementation Benchmarks".
const REPORTS: [(&str, usize); 5] = [
    ("catch2/catch2-3.1.0-AppleClang-macOS-arm64.xml", 30),
    ("catch2/catch2-3.3.2-MSVC-Windows-AMD64AVX2.xml", 36),
    ("catch2/catch2-3.6.0-GNU-Linux-x86_64SSE2.xml", 30),
    ("catch2/catch2-3.8.0-GNU-Windows-AMD64AVX.xml", 36),
    ("catch2/catch2-3.15.3-GNU-Linux-x86_64AVX2.xml", 36),
];

fn refusal(origin: &str, text: &str) -> String {
    format!("{:#}", parse(origin, text).unwrap_err())
}

#[test]
fn every_real_report_is_refused_as_summaries_only_with_its_counts_and_what_to_do() {
    for (file, count) in REPORTS {
        assert_eq!(
            refusal(file, &text(file)),
            format!(
                "{file}: this Catch2 XML report holds only each benchmark's mean and standard \
                 deviation ({count} benchmarks in 1 test case), not the samples they summarise, \
                 and lab needs every measured value: Catch2 writes no samples, even with \
                 --benchmark-no-analysis (instead, time the binary as lab variants, one per test \
                 case, each running it with the test case's name as Catch2's test spec, e.g. \
                 `BINARY \"Convolution Implementation Benchmarks\"`)"
            )
        );
    }
}

/// A Catch2 2.x report: a `<Catch>` root and `<Group>` around the test cases.
const CATCH2_V2: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Catch name="bench">
  <Group name="bench">
    <TestCase name="sort" filename="bench.cpp" line="9">
      <BenchmarkResults name="std::sort" samples="100" resamples="100000" iterations="1" clockResolution="20" estimatedDuration="1e+06">
        <!--All values in nano seconds-->
        <mean value="445059" lowerBound="431008" upperBound="464146" ci="0.95"/>
        <standardDeviation value="83000.9" lowerBound="56000" upperBound="120000" ci="0.95"/>
        <outliers variance="0.9" lowMild="0" lowSevere="0" highMild="2" highSevere="1"/>
      </BenchmarkResults>
      <OverallResult success="true"/>
    </TestCase>
    <TestCase name="hash" filename="bench.cpp" line="20">
      <BenchmarkResults name="fnv"><mean value="12"/></BenchmarkResults>
      <BenchmarkResults name="xx"><mean value="9"/></BenchmarkResults>
      <OverallResult success="true"/>
    </TestCase>
    <OverallResults successes="0" failures="0" expectedFailures="0"/>
  </Group>
  <OverallResults successes="0" failures="0" expectedFailures="0"/>
</Catch>
"#;

#[test]
fn a_catch2_2_report_is_refused_counting_its_benchmarks_and_test_cases() {
    let said = refusal("v2.xml", CATCH2_V2);
    assert!(
        said.starts_with("v2.xml: this Catch2 XML report holds only each benchmark's mean"),
        "{said}"
    );
    assert!(said.contains("(3 benchmarks in 2 test cases)"), "{said}");
    assert!(said.contains("e.g. `BINARY \"sort\"`"), "{said}");
}

#[test]
fn a_catch2_report_without_benchmarks_says_so() {
    let tests_only = r#"<?xml version="1.0" encoding="UTF-8"?>
<Catch2TestRun name="t" catch2-version="3.7.1">
  <TestCase name="adds"><OverallResult success="true"/></TestCase>
  <OverallResults successes="1" failures="0" expectedFailures="0"/>
</Catch2TestRun>"#;
    let said = refusal("tests.xml", tests_only);
    assert!(
        said.starts_with(
            "tests.xml: a Catch2 report without benchmarks (no <BenchmarkResults>): it holds \
             test results only, nothing to import"
        ),
        "{said}"
    );
}

#[test]
fn catch2_json_report_is_refused_as_holding_no_benchmark_results() {
    let json = r#"{"version": 1, "metadata": {"name": "bench", "rng-seed": 1, "catch2-version": "3.7.1"},
        "test-run": {"test-cases": []}}"#;
    let said = refusal("run.json", json);
    assert!(
        said.starts_with(
            "run.json: Catch2 3.7.1's JSON report (-r json) holds no benchmark results"
        ),
        "{said}"
    );
    assert!(said.contains("test spec"), "{said}");
}

#[test]
fn other_files_are_not_catch2_reports() {
    for (origin, text, why) in [
        ("a.json", "{\"benchmarks\": []}", "JSON without Catch2's"),
        (
            "b.xml",
            "<testsuites><testsuite/></testsuites>",
            "root element is <testsuites>",
        ),
        ("c.xml", "<Catch2TestRun><TestCase>", "invalid XML"),
        ("d.txt", "BenchmarkSort-8 100 12 ns/op", "invalid XML"),
    ] {
        let said = refusal(origin, text);
        assert!(
            said.starts_with(&format!("{origin}: not a Catch2 report: ")),
            "{said}"
        );
        assert!(said.contains(why), "{said}");
        assert!(said.contains("-r xml"), "{said}");
    }
}
