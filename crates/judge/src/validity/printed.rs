//! A run's stored stdout, read once when the run is judged: the lines that may echo its
//! configuration, the first value of each JSON metric that lab cannot use, the lines the
//! values that are not numbers were printed on, and the first line lab could not read. A run
//! that printed a value lab cannot take is reported with what it printed and where, never as
//! a run that printed no value.

use super::automatic::{Problem, Skipped};
use lab_config::{Extractor, Metric};
use lab_store::{Found, JsonLine, Line, LogRef, MAX_LINE, Unusable, read_lines};

/// What one pass over a run's stdout found.
#[derive(Debug, Default)]
pub(super) struct Printed {
    /// The lines that may echo the run's configuration, bounded.
    pub config: String,
    /// The first value lab cannot use of each JSON metric that printed one: the metric's
    /// name, the line and what it was.
    unusable: Vec<(String, usize, Unusable)>,
    /// The first line lab could not read, by number.
    skipped: Option<(usize, Skipped)>,
    /// The first line each value asked for was printed on.
    located: Vec<Option<usize>>,
}

/// A JSON metric as the pass looks for it: a line that does not hold `"KEY"` cannot hold
/// its value, and is not parsed.
struct Wanted<'a> {
    metric: &'a Metric,
    path: Vec<String>,
    needle: String,
}

/// Reads the stdout at `path` once, looking for the values of `metrics` lab cannot use and
/// for the first line each of `locate` appears on.
pub(super) fn read(log: &LogRef, metrics: &[Metric], locate: &[String]) -> Printed {
    let wanted: Vec<Wanted> = metrics.iter().filter_map(wanted).collect();
    let mut printed = Printed {
        located: vec![None; locate.len()],
        ..Printed::default()
    };
    let mut number = 0;
    read_lines(log, |line| {
        number += 1;
        match line {
            Line::Text(text) => printed.look_at(number, text, &wanted, locate),
            Line::TooLong(bytes) => printed.skip(number, Skipped::TooLong(bytes)),
            Line::NotUtf8 => printed.skip(number, Skipped::NotUtf8),
        }
    });
    printed
}

fn wanted(metric: &Metric) -> Option<Wanted<'_>> {
    let Extractor::Json(key) = &metric.extractor else {
        return None;
    };
    let path: Vec<String> = key.split('.').map(str::to_string).collect();
    let needle = format!("\"{}\"", path.last()?);
    Some(Wanted {
        metric,
        path,
        needle,
    })
}

impl Printed {
    fn look_at(&mut self, number: usize, text: &str, wanted: &[Wanted], locate: &[String]) {
        if text.contains("\"config\"") && self.config.len() < 4 * MAX_LINE {
            self.config.push_str(text);
            self.config.push('\n');
        }
        for (at, value) in self.located.iter_mut().zip(locate) {
            if at.is_none() && text.contains(value.as_str()) {
                *at = Some(number);
            }
        }
        let mut parsed: Option<Option<JsonLine>> = None;
        for w in wanted {
            if !text.contains(&w.needle) || self.unusable.iter().any(|u| u.0 == w.metric.name) {
                continue;
            }
            let line = parsed.get_or_insert_with(|| JsonLine::parse(text));
            if let Some(Found::Unusable(what)) = line.as_ref().map(|l| l.get(&w.path)) {
                self.unusable.push((w.metric.name.clone(), number, what));
            }
        }
    }

    fn skip(&mut self, number: usize, why: Skipped) {
        self.skipped.get_or_insert((number, why));
    }
}

/// The values to locate: those `found` says are not numbers, in order.
pub(super) fn to_locate(found: &[Problem]) -> Vec<String> {
    found
        .iter()
        .filter_map(|p| match p {
            Problem::NotANumber { value, .. } => Some(value.clone()),
            _ => None,
        })
        .collect()
}

/// Says in `found` what the run printed that lab could not use: a metric reported missing
/// that printed an unusable value (or whose value may have been on a line lab skipped) is
/// reported as that; an unusable value of a metric that printed others is reported too; a
/// value that is not a number gets its line.
pub(super) fn explain(found: &mut Vec<Problem>, printed: &Printed, metrics: &[Metric]) {
    let mut lines = printed.located.iter();
    let mut missing = Vec::new();
    for problem in found.iter_mut() {
        match problem {
            Problem::MissingMetric(name) => {
                missing.push(name.clone());
                if let Some(better) = printed.unusable_of(name, metrics) {
                    *problem = better;
                } else if let Some((line, skipped)) = printed.skipped {
                    let metric = std::mem::take(name);
                    *problem = Problem::Unread {
                        metric,
                        line,
                        skipped,
                    };
                }
            }
            Problem::NotANumber { line, .. } => *line = lines.next().copied().flatten(),
            _ => {}
        }
    }
    for (name, _, _) in &printed.unusable {
        if !missing.contains(name) {
            found.extend(printed.unusable_of(name, metrics));
        }
    }
}

impl Printed {
    /// The problem of the first value of metric `name` lab cannot use, if it printed one.
    fn unusable_of(&self, name: &str, metrics: &[Metric]) -> Option<Problem> {
        let (_, line, what) = self.unusable.iter().find(|u| u.0 == name)?;
        let metric = metrics.iter().find(|m| m.name == name)?;
        let Extractor::Json(key) = &metric.extractor else {
            return None;
        };
        Some(Problem::Unusable {
            metric: name.to_string(),
            key: key.clone(),
            line: *line,
            found: what.clone(),
            text: metric.text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_config::Better;

    fn metric(name: &str, extractor: Extractor, text: bool) -> Metric {
        Metric {
            name: name.into(),
            extractor,
            unit: String::new(),
            better: Better::Higher,
            text,
            count: false,
            optional: false,
            warmup_iterations: 0,
        }
    }

    fn metrics() -> Vec<Metric> {
        vec![
            metric("v", Extractor::Json("v".into()), false),
            metric("deep", Extractor::Json("a.b".into()), true),
            metric("lat", Extractor::Regex(r"lat=(\S+)".into()), false),
        ]
    }

    /// The problems of a run that printed `stdout`, starting from those `found` without it.
    fn explained(stdout: &[u8], mut found: Vec<Problem>) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, stdout).unwrap();
        let printed = read(&LogRef::File(path.clone()), &metrics(), &to_locate(&found));
        explain(&mut found, &printed, &metrics());
        found.iter().map(ToString::to_string).collect()
    }

    fn missing(name: &str) -> Problem {
        Problem::MissingMetric(name.into())
    }

    #[test]
    fn a_missing_metric_is_reported_as_what_was_printed_instead() {
        let out = b"warming up\n{\"v\": NaN, \"a\": {\"b\": [1]}}\n{\"v\": 1e400}\n";
        assert_eq!(
            explained(out, vec![missing("v"), missing("deep"), missing("lat")]),
            [
                "metric `v`: stdout line 2: key \"v\" is NaN, not a number lab can use",
                "metric `deep`: stdout line 2: key \"a.b\" is an array, not a value lab can use",
                "printed no value for metric `lat`",
            ]
        );
    }

    #[test]
    fn an_unusable_value_beside_usable_ones_is_reported_too() {
        let out = b"{\"v\": 1}\n{\"v\": null}\n{\"v\": -Infinity}\n";
        assert_eq!(
            explained(out, vec![]),
            ["metric `v`: stdout line 2: key \"v\" is null, not a number lab can use"]
        );
        let out = b"{\"v\": 1}\n{\"v\": 1e400}\n";
        assert_eq!(
            explained(out, vec![]),
            [
                "metric `v`: stdout line 2: key \"v\" is 1e400, beyond the largest number lab can hold (about 1.8e308)"
            ]
        );
    }

    #[test]
    fn a_skipped_line_is_named_when_no_value_was_read() {
        let mut out = b"start\n\xff\xfe\n".to_vec();
        out.extend(std::iter::repeat_n(b'x', MAX_LINE + 1));
        assert_eq!(
            explained(&out, vec![missing("lat")]),
            [
                "metric `lat`: no value lab could read; stdout line 2 is not UTF-8 text, so lab could not read it"
            ]
        );
        let mut out = b"{\"v\": 1}\n".to_vec();
        out.extend(std::iter::repeat_n(b'x', MAX_LINE + 1));
        assert_eq!(
            explained(&out, vec![missing("lat")]),
            [format!(
                "metric `lat`: no value lab could read; stdout line 2 is {} bytes long, over the 1 MiB lab reads a line of values up to (print each value on a short line of its own)",
                MAX_LINE + 1
            )]
        );
    }

    #[test]
    fn values_that_are_not_numbers_get_the_line_they_were_printed_on() {
        let not_a_number = |value: &str| Problem::NotANumber {
            metric: "lat".into(),
            value: value.into(),
            why: "is not a number".into(),
            line: None,
        };
        let out = b"\xff\nlat=1\nlat=fast\n";
        assert_eq!(
            explained(out, vec![not_a_number("fast")]),
            ["metric `lat`: stdout line 3: \"fast\" is not a number"]
        );
        assert_eq!(
            explained(out, vec![not_a_number("slow")]),
            ["metric `lat`: \"slow\" is not a number"]
        );
    }

    #[test]
    fn configuration_lines_are_kept_for_the_echo_check() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, "{\"config\": {\"n\": 1}}\n{\"v\": 2}\n").unwrap();
        let printed = read(&LogRef::File(path.clone()), &metrics(), &[]);
        assert_eq!(printed.config, "{\"config\": {\"n\": 1}}\n");
    }
}
