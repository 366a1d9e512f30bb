//! hyperfine's export files written from a `lab bench` session, in hyperfine's own shapes so
//! that scripts reading them keep working: `--export-json` in the 1.x layout (seconds, one
//! entry per timed run in `times`, `memory_usage_byte` and `exit_codes`, `parameters` as
//! `{"NAME": "VALUE"}`), `--export-markdown` as its table and `--export-csv` as its columns.
//! Only valid timed runs are written, as hyperfine writes only the runs it timed.

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

fn json_result(t: &Timed) -> Value {
    let (min, max) = range(&t.times);
    let mut entry = Map::new();
    entry.insert("command".into(), json!(t.command));
    entry.insert("mean".into(), json!(mean(&t.times)));
    entry.insert("stddev".into(), json!(sd(&t.times)));
    entry.insert("median".into(), json!(median(&t.times)));
    entry.insert("user".into(), json!(mean(&t.user)));
    entry.insert("system".into(), json!(mean(&t.system)));
    entry.insert(
        "min".into(),
        json!(if t.times.is_empty() { 0.0 } else { min }),
    );
    entry.insert(
        "max".into(),
        json!(if t.times.is_empty() { 0.0 } else { max }),
    );
    entry.insert("times".into(), json!(t.times));
    entry.insert("memory_usage_byte".into(), json!(t.memory_bytes));
    entry.insert("exit_codes".into(), json!(t.exit_codes));
    if !t.params.is_empty() {
        entry.insert("parameters".into(), json!(t.params));
    }
    Value::Object(entry)
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
        let (min, max) = range(&t.times);
        let relative = reference_of(report, t)
            .map(|r| relative(t, r))
            .unwrap_or_else(|| "1.00".into());
        out.push_str(&format!(
            "| `{}` | {:.1} ± {:.1} | {:.1} | {:.1} | {relative} |\n",
            t.command.replace('|', "\\|").replace('`', "'"),
            mean(&t.times) * scale,
            sd(&t.times) * scale,
            min * scale,
            max * scale
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
        let (min, max) = range(&t.times);
        let mut record: Vec<String> = vec![t.command.clone()];
        for x in [
            mean(&t.times),
            sd(&t.times),
            median(&t.times),
            mean(&t.user),
            mean(&t.system),
            min,
            max,
        ] {
            record.push(x.to_string());
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
