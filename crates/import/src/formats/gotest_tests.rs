use super::*;
use crate::formats::test_support::{assert_close, fixture};

fn read(file: &str) -> Imported {
    let path = fixture(file);
    parse(file, &std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn each_line_is_a_run_and_its_other_pairs_are_metrics() {
    let imported = read("go/go-bench.txt");
    assert_eq!(imported.format, Format::GoTest);
    assert_eq!(imported.context["goos"], "linux");
    assert_eq!(imported.context["cpu"], "Intel(R) Xeon(R) Processor");
    assert_eq!(imported.context["pkg"], "example.com/sorts");
    let names: Vec<&str> = imported
        .benchmarks
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "BenchmarkSort/n=100",
            "BenchmarkSort/n=10000",
            "BenchmarkJoin",
            "BenchmarkCustom"
        ]
    );
    let sort = &imported.benchmarks[0];
    assert_eq!(sort.params["procs"], "2");
    assert_eq!(sort.runs.len(), 5);
    // BenchmarkSort/n=100-2  6614  4834 ns/op  25 B/op  1 allocs/op
    assert_close(sort.runs[0].values[0], 4834e-9);
    assert_eq!(sort.runs[0].secondary["bytes_per_op"], vec![25.0]);
    assert_eq!(sort.runs[0].secondary["allocs_per_op"], vec![1.0]);
    let join = &imported.benchmarks[2];
    assert_close(join.runs[0].values[0], 774.4e-9);
    assert_eq!(join.runs[0].secondary["mb_per_s"], vec![83.94]);
    let rate = join
        .secondary
        .iter()
        .find(|s| s.name == "mb_per_s")
        .unwrap();
    assert!(rate.higher_is_better && !rate.count);
    let custom = &imported.benchmarks[3];
    assert_eq!(custom.runs[0].secondary["inversions/op"], vec![14.0]);
}

#[test]
fn gomaxprocs_is_a_parameter_one_where_go_writes_no_suffix() {
    let imported = read("go/go-bench-cpu.txt");
    let sorts: Vec<(&str, &str, usize)> = imported
        .benchmarks
        .iter()
        .map(|b| (b.name.as_str(), b.params["procs"].as_str(), b.runs.len()))
        .collect();
    assert_eq!(sorts[0], ("BenchmarkSort/n=100", "1", 3));
    assert_eq!(sorts[1], ("BenchmarkSort/n=100", "2", 3));
}

#[test]
fn text_without_result_lines_and_bad_values_are_refused_with_their_line() {
    let err = parse("x.txt", "PASS\nok  \texample.com/x\t0.01s\n").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("x.txt: not go test -bench output: no result line")
    );
    let err = parse("x.txt", "goos: linux\nBenchmarkX-2 \t 10\t NaN ns/op\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "x.txt: benchmark \"BenchmarkX\": line 2: ns/op is NaN (expected a finite, non-negative measurement)"
    );
    let err = parse("x.txt", "BenchmarkX-2 \t 10\t 12 B/op\n").unwrap_err();
    assert!(
        err.to_string()
            .contains("line 1: benchmark \"BenchmarkX\" has no ns/op")
    );
    // Lines that only look like results are not read as ones.
    let text = "Benchmarking is fun\nBenchmarkY 10 5 ns/op\n";
    assert_eq!(parse("x.txt", text).unwrap().benchmarks.len(), 1);
}

#[test]
fn a_log_of_two_machines_says_so_once_and_one_machine_says_nothing() {
    let one = read("go/go-bench.txt");
    assert!(one.notes.is_empty(), "{:?}", one.notes);
    let text = std::fs::read_to_string(fixture("go/go-bench.txt")).unwrap();
    let other = text.replace("cpu: Intel(R) Xeon(R) Processor", "cpu: Cortex-A76");
    let both = parse("both.txt", &format!("{text}{other}")).unwrap();
    assert_eq!(
        both.notes,
        [
            "both.txt holds results from more than one machine (cpu: Intel(R) Xeon(R) Processor; Cortex-A76), and their runs share cells: split the log where its configuration lines change and import each part with --machine LABEL"
        ]
    );
    assert_eq!(
        both.benchmarks[0].runs.len(),
        2 * one.benchmarks[0].runs.len()
    );
}

#[test]
fn benchmarks_of_one_name_in_two_packages_stay_two_benchmarks() {
    // A CI log of `go test -bench . ./...` over gofiber's middleware: BenchmarkAppendMsgitem
    // and BenchmarkUnmarshalitem in both middleware/cache and middleware/csrf.
    let imported = read("go/real/gofiber-two-packages.txt");
    let cells: Vec<(&str, &str, f64)> = imported
        .benchmarks
        .iter()
        .map(|b| {
            assert_eq!(b.runs.len(), 1, "{}", b.name);
            (
                b.name.as_str(),
                b.params["pkg"].as_str(),
                b.runs[0].values[0],
            )
        })
        .collect();
    let cache = "github.com/gofiber/fiber/v3/middleware/cache";
    let csrf = "github.com/gofiber/fiber/v3/middleware/csrf";
    let expected = [
        ("BenchmarkAppendMsgitem", cache, 55.76e-9),
        ("BenchmarkUnmarshalitem", cache, 174.0e-9),
        ("BenchmarkAppendMsgitem", csrf, 0.3733e-9),
        ("BenchmarkUnmarshalitem", csrf, 4.360e-9),
    ];
    assert_eq!(cells.len(), expected.len());
    for ((name, pkg, value), (want_name, want_pkg, want)) in cells.iter().zip(expected) {
        assert_eq!((*name, *pkg), (want_name, want_pkg));
        assert_close(*value, want);
    }
    assert!(imported.benchmarks.iter().all(|b| b.params["procs"] == "4"));
    assert_eq!(
        imported.notes,
        [format!(
            "go/real/gofiber-two-packages.txt holds the results of 2 packages ({cache}, {csrf}): each benchmark keeps its package as the param pkg, so that benchmarks of one name in two packages stay apart"
        )]
    );
    // One package's results keep no pkg param, as before.
    assert!(
        !read("go/go-bench.txt").benchmarks[0]
            .params
            .contains_key("pkg")
    );
}
