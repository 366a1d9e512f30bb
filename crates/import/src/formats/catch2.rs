//! Catch2's benchmark reports, recognised and refused with the reason: they hold each benchmark's
//! summaries, never its samples.
//!
//! The XML reporter (`-r xml`) writes a `<Catch>` root (Catch2 2.x) or a `<Catch2TestRun>` root
//! (3.x) holding each test case, and in it one `<BenchmarkResults>` per `BENCHMARK`: its
//! settings (`samples`, `iterations`, `estimatedDuration`…) and what `XmlReporter::benchmarkEnded`
//! writes, `<mean>`, `<standardDeviation>` (each a point estimate with its bootstrap bounds, in
//! nanoseconds) and `<outliers>` (counts). The samples those come from are never written, in
//! 2.9.0 through 3.x, not even with `--benchmark-no-analysis` (which then reports the plain mean).
//! The JSON reporter of 3.x (`-r json`, `catch_reporter_json.cpp`) writes nothing at all for a
//! benchmark: its `benchmarkEnded` is empty.
//!
//! A mean is not a measurement lab can analyse (the aggregates-only Google Benchmark file is
//! refused for the same reason), so such a report is refused, naming how many benchmarks it
//! holds and what to do instead: time the Catch2 binary as lab variants, one per test case, each
//! chosen by the test case's name as Catch2's test spec.

use super::{Imported, Source};
use anyhow::Result;
use serde_json::Value;

const WHAT: &str = "a Catch2 report";
const EXPECTED: &str = "the file written by a Catch2 test binary's `-r xml` (or `--reporter \
    xml::out=FILE`), whose <Catch> or <Catch2TestRun> root holds <BenchmarkResults>";

/// Reads one Catch2 report to say why it cannot be imported; `origin` names the file. Every
/// file is refused: one that is not a Catch2 report as such, one that is with the reason.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    if text.trim_start().starts_with('{') {
        return Err(json_report(&source, text));
    }
    let document = roxmltree::Document::parse(text)
        .map_err(|e| source.not_format(format!("invalid XML ({e})")))?;
    let root = document.root_element();
    if !matches!(root.tag_name().name(), "Catch" | "Catch2TestRun") {
        return Err(source.not_format(format!(
            "its root element is <{}>, not <Catch> or <Catch2TestRun>",
            root.tag_name().name()
        )));
    }
    Err(summaries_only(&source, &Benchmarks::of(root)))
}

/// The refusal of a JSON file: Catch2's JSON reporter writes no benchmark results, and other
/// JSON is not Catch2's.
fn json_report(source: &Source, text: &str) -> anyhow::Error {
    let document: Value = match source.json(text) {
        Ok(document) => document,
        Err(e) => return e,
    };
    let version = document
        .get("metadata")
        .and_then(|m| m.get("catch2-version"))
        .and_then(Value::as_str);
    match version {
        Some(version) => source.bad(format!(
            "Catch2 {version}'s JSON report (-r json) holds no benchmark results: its reporter \
             writes nothing for a BENCHMARK, and no Catch2 report holds the samples lab needs \
             (instead, {INSTEAD})"
        )),
        None => source.not_format("JSON without Catch2's \"metadata\": {\"catch2-version\"}"),
    }
}

/// What to do instead of importing a Catch2 report.
const INSTEAD: &str = "time the binary as lab variants, one per test case, each running it with \
    the test case's name as Catch2's test spec";

/// The benchmarks a Catch2 XML report holds: how many, and the test cases holding them, in
/// file order.
#[derive(Debug, PartialEq)]
struct Benchmarks {
    count: usize,
    test_cases: Vec<String>,
}

impl Benchmarks {
    fn of(root: roxmltree::Node) -> Benchmarks {
        let mut benchmarks = Benchmarks {
            count: 0,
            test_cases: Vec::new(),
        };
        let results = root
            .descendants()
            .filter(|n| n.has_tag_name("BenchmarkResults"));
        for result in results {
            benchmarks.count += 1;
            let test_case = result
                .ancestors()
                .find(|n| n.has_tag_name("TestCase"))
                .and_then(|n| n.attribute("name"));
            if let Some(name) = test_case
                && !benchmarks.test_cases.iter().any(|t| t == name)
            {
                benchmarks.test_cases.push(name.to_string());
            }
        }
        benchmarks
    }
}

/// The refusal of a Catch2 XML report: it holds no benchmark, or only each one's summaries.
fn summaries_only(source: &Source, benchmarks: &Benchmarks) -> anyhow::Error {
    if benchmarks.count == 0 {
        return source.bad(
            "a Catch2 report without benchmarks (no <BenchmarkResults>): it holds test results \
             only, nothing to import (expected the report of a run of test cases that hold \
             BENCHMARKs; hidden ones, tagged [.] or [!benchmark], run only when the test spec \
             names them)",
        );
    }
    let example = match benchmarks.test_cases.first() {
        Some(name) => format!(", e.g. `BINARY \"{name}\"`"),
        None => String::new(),
    };
    source.bad(format!(
        "this Catch2 XML report holds only each benchmark's mean and standard deviation ({} \
         benchmark{} in {} test case{}), not the samples they summarise, and lab needs every \
         measured value: Catch2 writes no samples, even with --benchmark-no-analysis (instead, \
         {INSTEAD}{example})",
        benchmarks.count,
        plural(benchmarks.count),
        benchmarks.test_cases.len(),
        plural(benchmarks.test_cases.len()),
    ))
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

#[cfg(test)]
#[path = "catch2_tests.rs"]
mod tests;
