//! hyperfine's export files written from a `lab bench` session, in hyperfine's own shapes so
//! that scripts reading them keep working: `--export-json` in the 1.x layout (seconds, one
//! entry per timed run in `times`, `memory_usage_byte` and `exit_codes`, `parameters` as
//! `{"NAME": "VALUE"}`), `--export-markdown` as its table and `--export-csv` as its columns.
//! Only valid timed runs are written, as hyperfine writes only the runs it timed. A figure of
//! no runs is never invented: a command with no timed run has `null` for its mean and the
//! rest in JSON, an empty field in CSV and a dash in Markdown.

use super::output::{Report, Timed, mean, median, range, sd};
use serde_json::{Map, Value, json};

/// hyperfine's `--export-json` layout (1.x, which its 2.0 still reads and lab imports).
pub fn json(report: &Report) -> String {
    let results: Vec<Value> = report.timed.iter().map(json_result).collect();
    let mut text = serde_json::to_string_pretty(&json!({ "results": results }))
        .unwrap_or_else(|_| "{}".into());
    text.push('\n');
    text
}

/// `figure` of `xs`, or nothing when there are none.
fn of_some(xs: &[f64], figure: fn(&[f64]) -> f64) -> Option<f64> {
    (!xs.is_empty()).then(|| figure(xs))
}

fn json_result(t: &Timed) -> Value {
    let mut entry = Map::new();
    let [mean, stddev, median, user, system, min, max] = figures(t);
    entry.insert("command".into(), json!(t.command));
    entry.insert("mean".into(), json!(mean));
    entry.insert("stddev".into(), json!(stddev));
    entry.insert("median".into(), json!(median));
    entry.insert("user".into(), json!(user));
    entry.insert("system".into(), json!(system));
    entry.insert("min".into(), json!(min));
    entry.insert("max".into(), json!(max));
    entry.insert("times".into(), json!(t.times));
    entry.insert("memory_usage_byte".into(), json!(t.memory_bytes));
    entry.insert("exit_codes".into(), json!(t.exit_codes));
    if !t.params.is_empty() {
        entry.insert("parameters".into(), json!(t.params));
    }
    Value::Object(entry)
}

/// hyperfine's summary figures of a command, in its order (mean, stddev, median, user,
/// system, min, max), each `None` for a command with no timed run.
fn figures(t: &Timed) -> [Option<f64>; 7] {
    [
        of_some(&t.times, mean),
        of_some(&t.times, sd),
        of_some(&t.times, median),
        of_some(&t.user, mean),
        of_some(&t.system, mean),
        of_some(&t.times, |xs| range(xs).0),
        of_some(&t.times, |xs| range(xs).1),
    ]
}

/// hyperfine's `--export-markdown` table: mean ± σ, min and max in one unit, and each
/// command's mean relative to the reference's at the same parameters (± by first-order error
/// propagation of the two means' spreads, as hyperfine computes it).
pub fn markdown(report: &Report) -> String {
    let (unit, scale) = unit_of(&report.timed);
    let mut out = format!(
        "| Command | Mean [{unit}] | Min [{unit}] | Max [{unit}] | Relative |\n|:---|---:|---:|---:|---:|\n"
    );
    for t in &report.timed {
        let relative = reference_of(report, t)
            .map(|r| relative(t, r))
            .unwrap_or_else(|| "1.00".into());
        let [mean, sd, _, _, _, min, max] = figures(t).map(|f| f.map(|x| x * scale));
        let shown = |x: Option<f64>| x.map_or_else(|| "—".to_string(), |x| format!("{x:.1}"));
        let spread = match (mean, sd) {
            (Some(m), Some(s)) => format!("{m:.1} ± {s:.1}"),
            _ => "—".to_string(),
        };
        out.push_str(&format!(
            "| `{}` | {spread} | {} | {} | {relative} |\n",
            t.command.replace('|', "\\|").replace('`', "'"),
            shown(min),
            shown(max)
        ));
    }
    out
}

/// hyperfine's choice of unit: milliseconds unless the first command's mean is a second or more.
fn unit_of(timed: &[Timed]) -> (&'static str, f64) {
    match timed.first() {
        Some(t) if mean(&t.times) >= 1.0 => ("s", 1.0),
        _ => ("ms", 1e3),
    }
}

/// The reference's result at the same parameters: the first command's.
fn reference_of<'a>(report: &'a Report, t: &Timed) -> Option<&'a Timed> {
    let first = &report.timed.first()?.label;
    report
        .timed
        .iter()
        .find(|r| &r.label == first && r.params == t.params)
}

fn relative(t: &Timed, reference: &Timed) -> String {
    if t.times.is_empty() || reference.times.is_empty() {
        return "—".into();
    }
    let (m, r) = (mean(&t.times), mean(&reference.times));
    if std::ptr::eq(t, reference) || r == 0.0 || m == 0.0 {
        return "1.00".into();
    }
    let ratio = m / r;
    let spread = ratio * ((sd(&t.times) / m).powi(2) + (sd(&reference.times) / r).powi(2)).sqrt();
    format!("{ratio:.2} ± {spread:.2}")
}

/// hyperfine's `--export-csv` columns: command, mean, stddev, median, user, system, min, max,
/// then one `parameter_NAME` column per parameter.
pub fn csv(report: &Report) -> String {
    let names: Vec<&String> = report
        .timed
        .first()
        .map(|t| t.params.keys().collect())
        .unwrap_or_default();
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = [
        "command", "mean", "stddev", "median", "user", "system", "min", "max",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(names.iter().map(|n| format!("parameter_{n}")));
    let _ = writer.write_record(&header);
    for t in &report.timed {
        let mut record: Vec<String> = vec![t.command.clone()];
        for x in figures(t) {
            record.push(x.map(|x| x.to_string()).unwrap_or_default());
        }
        record.extend(
            names
                .iter()
                .map(|n| t.params.get(*n).cloned().unwrap_or_default()),
        );
        let _ = writer.write_record(&record);
    }
    String::from_utf8(writer.into_inner().unwrap_or_default()).unwrap_or_default()
}
