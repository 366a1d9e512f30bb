//! `checksum`: every variant computes the same answer (seed 000: the C harness prints a
//! checksum on every run and refuses a time it could not verify against the sequential
//! version). A text metric is compared over all valid measured runs with the same parameters:
//! it must equal the `reference` variant's value, or, without a reference, be the same for
//! every variant. A run whose value differs from other runs of its own cell fails too: an
//! answer that changes from run to run is wrong at least some of the time.

use super::verdict::{CheckResult, Verdict};
use crate::analysis::{RunView, cell_label};
use crate::config::{CheckSpec, Experiment, ParamValue};
use std::collections::BTreeMap;

/// One run's answer: every value it printed for the metric.
struct Answer<'a> {
    run: &'a RunView,
    values: Vec<String>,
}

/// A run whose answer differs from the expected one.
struct Mismatch {
    run: String,
    cell: String,
    got: String,
    expected: String,
    expected_from: String,
}

pub fn check(
    spec: &CheckSpec,
    exp: &Experiment,
    metric: &str,
    reference: Option<&str>,
    runs: &[RunView],
) -> CheckResult {
    let base = CheckResult::new(&spec.name, "checksum", spec.class, Verdict::NotRun);
    let mut groups: BTreeMap<&BTreeMap<String, ParamValue>, Vec<Answer>> = BTreeMap::new();
    for run in runs.iter().filter(|r| !r.warmup && r.is_valid()) {
        if let Some(values) = run.values.texts(metric).filter(|v| !v.is_empty()) {
            groups
                .entry(&run.cell.params)
                .or_default()
                .push(Answer { run, values });
        }
    }
    let compared: Vec<&Vec<Answer>> = groups.values().filter(|g| variants(g) >= 2).collect();
    if compared.is_empty() {
        return base.reading(format!(
            "no parameter setting has `{metric}` from two variants to compare"
        ));
    }
    let mismatches: Vec<Mismatch> = compared
        .iter()
        .flat_map(|g| mismatches(exp, g, reference))
        .collect();
    let answers: usize = compared.iter().map(|g| g.len()).sum();
    let verdict = if mismatches.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let evidence = if mismatches.is_empty() {
        format!(
            "{answers} runs over {} parameter settings, all agreeing",
            compared.len()
        )
    } else {
        let listed: Vec<String> = mismatches
            .iter()
            .take(10)
            .map(|m| {
                format!(
                    "{} ({}) printed {:?}, {} {:?}",
                    m.run, m.cell, m.got, m.expected_from, m.expected
                )
            })
            .collect();
        format!(
            "{} of {answers} runs differ: {}{}",
            mismatches.len(),
            listed.join("; "),
            if mismatches.len() > 10 { "; …" } else { "" }
        )
    };
    let reading = match mismatches.first() {
        None => format!(
            "every variant printed the same `{metric}` for the same parameters ({answers} runs)"
        ),
        Some(m) => format!(
            "run {} ({}) printed {metric} {} where {} {}",
            m.run, m.cell, m.got, m.expected_from, m.expected
        ),
    };
    CheckResult { verdict, ..base }
        .evidence(evidence)
        .reading(reading)
        .runs(mismatches.into_iter().map(|m| m.run).collect())
}

fn variants(group: &[Answer]) -> usize {
    let mut names: Vec<&str> = group.iter().map(|a| a.run.cell.variant.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.len()
}

/// The runs of one parameter setting that differ from the expected answer: the reference
/// variant's (its most common value), else the most common value of all runs.
fn mismatches(exp: &Experiment, group: &[Answer], reference: Option<&str>) -> Vec<Mismatch> {
    let from_reference: Vec<&Answer> = group
        .iter()
        .filter(|a| Some(a.run.cell.variant.as_str()) == reference)
        .collect();
    let (basis, expected_from) = match reference {
        Some(r) if !from_reference.is_empty() => (from_reference, format!("{r} printed")),
        _ => (group.iter().collect(), "most runs printed".to_string()),
    };
    let Some(expected) = most_common(&basis) else {
        return Vec::new();
    };
    group
        .iter()
        .filter_map(|a| {
            let got = a.values.iter().find(|v| **v != expected)?;
            Some(Mismatch {
                run: a.run.id.clone(),
                cell: cell_label(exp, &a.run.cell),
                got: got.clone(),
                expected: expected.clone(),
                expected_from: expected_from.clone(),
            })
        })
        .collect()
}

/// The most frequent value; ties go to the one seen first.
fn most_common(answers: &[&Answer]) -> Option<String> {
    let mut counts: Vec<(&String, usize)> = Vec::new();
    for v in answers.iter().flat_map(|a| &a.values) {
        match counts.iter_mut().find(|(x, _)| *x == v) {
            Some(c) => c.1 += 1,
            None => counts.push((v, 1)),
        }
    }
    let best = counts.iter().map(|c| c.1).max()?;
    counts
        .into_iter()
        .find(|c| c.1 == best)
        .map(|c| c.0.clone())
}
