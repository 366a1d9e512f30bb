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
        secondary: Vec::new(),
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

mod gzip {
    //! Gzip-compressed result files, read through `read_text`.

    use super::super::test_support::{assert_close, fixture};
    use super::*;
    use std::io::Write;

    fn gzipped(text: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(text).unwrap();
        encoder.finish().unwrap()
    }

    /// `bytes` written to a file `name` in a fresh folder (kept alive by the returned guard).
    fn file_of(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        (folder, path)
    }

    #[test]
    fn a_file_pyperf_wrote_compressed_reads_like_plain_json() {
        let imported = read(Format::Pyperf, &[fixture("pyperf/pyperf-gzip.json.gz")]).unwrap();
        assert_eq!(imported.tool_version.as_deref(), Some("2.11.0"));
        assert_eq!(imported.context["hostname"], "vm");
        assert_eq!(imported.benchmarks.len(), 1);
        let timeit = &imported.benchmarks[0];
        assert_eq!(timeit.name, "timeit");
        assert_eq!(timeit.runs.len(), 11);
        assert!(timeit.runs[0].warmup && timeit.runs[0].values.is_empty());
        assert_eq!(timeit.runs[0].warmup_values.len(), 19);
        assert_close(timeit.runs[0].warmup_values[0], 7.684000593144447e-06);
        assert!(timeit.runs[1..].iter().all(|run| run.values.len() == 2));
        assert_close(timeit.runs[1].values[0], 1.7405454407759535e-06);
        assert_close(timeit.runs[10].values[1], 2.705587387019648e-06);
    }

    #[test]
    fn compression_is_recognised_by_content_not_name() {
        let plain = std::fs::read(fixture("gbench/gbench.json")).unwrap();
        let (_folder, path) = file_of("gbench.json", &gzipped(&plain));
        assert_eq!(read_text(&path).unwrap().as_bytes(), plain.as_slice());
        let imported = read(Format::Gbench, &[path]).unwrap();
        assert_eq!(imported.benchmarks.len(), 3);
        assert_eq!(imported.benchmarks[0].runs.len(), 5);
    }

    #[test]
    fn criterion_reads_a_compressed_sample_json() {
        let folder = tempfile::tempdir().unwrap();
        let new = folder.path().join("new");
        std::fs::create_dir(&new).unwrap();
        let sample = br#"{"sampling_mode":"Linear","iters":[2.0,4.0],"times":[300.0,1000.0]}"#;
        std::fs::write(new.join("sample.json"), gzipped(sample)).unwrap();
        std::fs::write(new.join("benchmark.json"), br#"{"group_id":"g"}"#).unwrap();
        let imported = read(Format::Criterion, &[folder.path().to_path_buf()]).unwrap();
        let values = &imported.benchmarks[0].runs[0].values;
        assert_close(values[0], 150e-9);
        assert_close(values[1], 250e-9);
    }

    #[test]
    fn a_truncated_gzip_file_is_refused_naming_it() {
        let whole = std::fs::read(fixture("pyperf/pyperf-gzip.json.gz")).unwrap();
        let (_folder, path) = file_of("cut.json.gz", &whole[..whole.len() / 2]);
        let error = read(Format::Pyperf, std::slice::from_ref(&path))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            format!(
                "{}: gzip-compressed but cannot be decompressed: incomplete deflate stream \
                 (expected a whole, uncorrupted .gz file; check it with gzip -t)",
                path.display()
            )
        );
    }

    #[test]
    fn a_corrupt_gzip_file_is_refused_naming_it() {
        let mut bytes = gzipped(&std::fs::read(fixture("gbench/gbench.json")).unwrap());
        let crc = bytes.len() - 8; // the trailer: CRC-32, then the size
        bytes[crc] ^= 0xff;
        let (_folder, path) = file_of("bad.json.gz", &bytes);
        let error = read_text(&path).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "{}: gzip-compressed but cannot be decompressed: corrupt gzip stream does not \
                 have a matching checksum (expected a whole, uncorrupted .gz file; check it \
                 with gzip -t)",
                path.display()
            )
        );
    }

    #[test]
    fn decompression_stops_at_the_cap() {
        let text = "x".repeat(1001);
        let compressed = gzipped(text.as_bytes());
        let path = Path::new("big.json.gz");
        assert_eq!(gunzip(path, &compressed, 1001).unwrap().len(), 1001);
        let error = gunzip(path, &compressed, 1000).unwrap_err().to_string();
        assert_eq!(
            error,
            "big.json.gz: gzip-compressed and decompresses to more than 1000 B (expected a \
             result file smaller than that; a real one is, so check what the file holds with \
             zcat | head)"
        );
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_after_the_magic_number_are_an_error_or_text_never_a_panic(
            tail in proptest::collection::vec(proptest::num::u8::ANY, 0..64)
        ) {
            let bytes = [&[0x1f, 0x8b][..], &tail].concat();
            let _ = gunzip(Path::new("x.gz"), &bytes, 1 << 20);
        }
    }

    #[test]
    fn the_cap_is_512_mib() {
        assert_eq!(
            lab_config::format::memory(MAX_DECOMPRESSED_BYTES as f64),
            "512 MiB"
        );
    }
}

mod mutated {
    //! Every parser over real fixtures with bytes changed, cut short or lines dropped: a
    //! result or an error that names the file, never a panic.

    use super::super::test_support::fixture;
    use super::super::{Format, parse};

    /// One text fixture per parser that takes text.
    fn originals() -> Vec<(Format, String)> {
        [
            (Format::Hyperfine, "hyperfine/hyperfine-scan.json"),
            (Format::Jmh, "jmh/jmh-field.json"),
            (Format::Gbench, "gbench/gbench-1.4.json"),
            (Format::Gbench, "gbench/gbench.json"),
            (Format::Pyperf, "pyperf/perf-0.9.json"),
            (Format::Pyperf, "pyperf/pyperf-suite.json"),
            (Format::Hyperfine, "hyperfine/hyperfine-2.0-metrics.json"),
            (Format::Hyperfine, "hyperfine/hyperfine-1.20.json"),
            (Format::Gbench, "gbench/gbench-counters.json"),
            (Format::Gbench, "gbench/gbench-failing.json"),
            (Format::Gbench, "gbench/gbench-ci.log"),
            (Format::Jmh, "jmh/jmh-perfasm.json"),
            (
                Format::PytestBenchmark,
                "pytest-benchmark/pytest-benchmark-data.json",
            ),
            (Format::GoTest, "go/go-bench.txt"),
            (Format::GoTest, "go/real/simdcbor.txt"),
            (
                Format::Asv,
                "asv/results/vm/4c3316fa-existing-py_work_asv-venv_bin_python.json",
            ),
            (Format::Asv, "asv/nwb/asv_0.6.6_raw_results.json"),
            (
                Format::BenchmarkDotNet,
                "benchmarkdotnet/bdn-0.14.1-failing-report-full-compressed.json",
            ),
            (
                Format::BenchmarkDotNet,
                "benchmarkdotnet/bdn-0.14.0-report-full.json",
            ),
            (
                Format::Nanobench,
                "nanobench/nanobench-2020-docs-render.json",
            ),
            (
                Format::Catch2,
                "catch2/catch2-3.1.0-AppleClang-macOS-arm64.xml",
            ),
        ]
        .into_iter()
        .map(|(format, file)| (format, std::fs::read_to_string(fixture(file)).unwrap()))
        .collect()
    }

    /// Parses `text` as `format`: either it reads, or the error starts with the file's name.
    fn read_or_located(format: Format, text: &str) {
        if let Err(e) = parse(format, "mutated.json", text) {
            let message = format!("{e:#}");
            assert!(message.starts_with("mutated.json: "), "{message}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        #[test]
        fn changed_bytes_give_a_result_or_a_located_error(
            which in 0usize..21,
            edits in proptest::collection::vec((0.0f64..1.0, 32u8..127), 1..8)
        ) {
            let (format, text) = &originals()[which];
            let mut bytes = text.clone().into_bytes();
            for (at, byte) in edits {
                let i = ((bytes.len() - 1) as f64 * at) as usize;
                bytes[i] = byte;
            }
            read_or_located(*format, &String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn files_cut_short_or_missing_lines_give_a_result_or_a_located_error(
            which in 0usize..21,
            cut in 0.0f64..1.0,
            dropped in proptest::collection::vec(0.0f64..1.0, 0..6)
        ) {
            let (format, text) = &originals()[which];
            let short = &text.as_bytes()[..(text.len() as f64 * cut) as usize];
            read_or_located(*format, &String::from_utf8_lossy(short));
            let lines: Vec<&str> = text.lines().collect();
            let gone: Vec<usize> = dropped.iter().map(|d| (lines.len() as f64 * d) as usize).collect();
            let kept: Vec<&str> = lines
                .iter()
                .enumerate()
                .filter(|(i, _)| !gone.contains(i))
                .map(|(_, l)| *l)
                .collect();
            read_or_located(*format, &kept.join("\n"));
        }
    }
}
