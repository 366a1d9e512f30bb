//! Reading metric values out of a run's standard output: JSON object lines (read as
//! `store::printed` reads them) or a regex.

use lab_config::{Extractor, Metric};
use lab_store::{Found, JsonLine, Line, LogRef, SampleRow, Scan, read_lines, scan_lines};
use regex::Regex;

/// One value a run reported: the `iteration`-th value of `metric` (0-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub metric: String,
    pub iteration: usize,
    pub value: String,
}

/// Compiled extractors, built once per session so nothing is compiled between runs.
pub struct MetricReader {
    metrics: Vec<(String, Reader)>,
}

enum Reader {
    Json(Vec<String>),
    Regex(Regex),
}

impl MetricReader {
    pub fn new(metrics: &[Metric]) -> Self {
        // Built-in metrics are measured by lab, not read from output: they have no reader.
        let metrics = metrics
            .iter()
            .filter_map(|m| {
                let reader = match &m.extractor {
                    Extractor::Json(key) => {
                        Reader::Json(key.split('.').map(str::to_string).collect())
                    }
                    // Validated at load time, so compiling cannot fail here.
                    Extractor::Regex(r) => Reader::Regex(
                        Regex::new(r).unwrap_or_else(|_| Regex::new("$^").expect("valid")),
                    ),
                    Extractor::Builtin | Extractor::Derived { .. } => return None,
                };
                Some((m.name.clone(), reader))
            })
            .collect();
        MetricReader { metrics }
    }

    /// The stored rows of every value of every metric in a kept log, read line by line in
    /// bounded memory (a regex matches within one line), grouped by metric in declared order,
    /// and what scanning the log found (its SHA-256, lines skipped).
    pub fn read_log(&self, log: &LogRef, run_id: &str) -> (Scan, Vec<SampleRow>) {
        let mut values: Vec<Vec<String>> = vec![Vec::new(); self.metrics.len()];
        let scan = scan_lines(log, |line| self.take(line, &mut values));
        (scan, self.rows(values, run_id))
    }

    /// As [`Self::read_log`], for a log whose digest is known already (a run's output just
    /// packed): the values only, without hashing the log again.
    pub fn read_values(&self, log: &LogRef, run_id: &str) -> Vec<SampleRow> {
        let mut values: Vec<Vec<String>> = vec![Vec::new(); self.metrics.len()];
        read_lines(log, |line| {
            if let Line::Text(text) = line {
                self.take(text, &mut values);
            }
        });
        self.rows(values, run_id)
    }

    /// Adds the values of `line` to those of their metrics.
    fn take(&self, line: &str, values: &mut [Vec<String>]) {
        for sample in self.read(line) {
            if let Some(i) = self.metrics.iter().position(|(n, _)| *n == sample.metric) {
                values[i].push(sample.value);
            }
        }
    }

    /// The sample rows of each metric's values, in declared order.
    fn rows(&self, values: Vec<Vec<String>>, run_id: &str) -> Vec<SampleRow> {
        self.metrics
            .iter()
            .zip(values)
            .flat_map(|((name, _), values)| {
                values
                    .into_iter()
                    .enumerate()
                    .map(move |(iteration, value)| SampleRow {
                        run_id: run_id.into(),
                        metric: name.as_str().into(),
                        iteration,
                        value: value.into(),
                    })
            })
            .collect()
    }

    /// Every value of every metric in `output`, in order of appearance.
    pub fn read(&self, output: &str) -> Vec<Sample> {
        let mut samples = Vec::new();
        for (name, reader) in &self.metrics {
            let values = match reader {
                Reader::Json(path) => json_values(output, path),
                Reader::Regex(re) => re
                    .captures_iter(output)
                    .filter_map(|c| c.get(1))
                    .map(|m| m.as_str().to_string())
                    .collect(),
            };
            samples.extend(
                values
                    .into_iter()
                    .enumerate()
                    .map(|(iteration, value)| Sample {
                        metric: name.clone(),
                        iteration,
                        value,
                    }),
            );
        }
        samples
    }
}

/// The values under `path` of every JSON line of `output` that has one lab can use (what it
/// cannot use is named when the run is judged).
fn json_values(output: &str, path: &[String]) -> Vec<String> {
    output
        .lines()
        .filter_map(JsonLine::parse)
        .filter_map(|line| match line.get(path) {
            Found::Value(value) => Some(value),
            Found::Unusable(_) | Found::Absent => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_config::Better;

    fn metric(name: &str, extractor: Extractor) -> Metric {
        Metric {
            name: name.into(),
            extractor,
            unit: String::new(),
            better: Better::Higher,
            text: false,
            count: false,
            optional: false,
            warmup_iterations: 0,
        }
    }

    #[test]
    fn reads_json_lines_and_regex_matches() {
        let reader = MetricReader::new(&[
            metric("mops", Extractor::Json("mops".into())),
            metric("nested", Extractor::Json("a.b".into())),
            metric("lat", Extractor::Regex(r"lat=(\S+)".into())),
        ]);
        let out = "warming up\n{\"mops\": 8.4, \"a\": {\"b\": \"x\"}}\nlat=1.5 lat=2\n{\"mops\": NaN}\nstep 1\r{\"mops\": 9, \"a\": null}\nnot {json\n";
        let s = reader.read(out);
        let values = |m: &str| {
            s.iter()
                .filter(|x| x.metric == m)
                .map(|x| x.value.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(values("mops"), vec!["8.4", "9"]);
        assert_eq!(values("nested"), vec!["x"]);
        assert_eq!(values("lat"), vec!["1.5", "2"]);
        assert_eq!(
            s.iter()
                .find(|x| x.metric == "mops" && x.value == "9")
                .unwrap()
                .iteration,
            1
        );
    }
}
