//! `checksum`: every variant computes the same answer (seed 000: the C harness prints a
//! checksum on every run and refuses a time it could not verify against the sequential
//! version). A text metric is compared over all measured runs with the same parameters whose
//! outputs are valid (a run whose timing was discarded on a busy machine still counts):
//! it must equal the `reference` variant's value, or, without a reference, be the same for
//! every variant. A run whose value differs from other runs of its own cell fails too: an
//! answer that changes from run to run is wrong at least some of the time.

use super::shape::{Check, Context, Declared, Description, Outcome};
use crate::analysis::{RunView, cell_label};
use lab_config::{CheckKind, Experiment};
use lab_findings::checks::Verdict;
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

/// A declared `checksum` check.
pub(super) struct Checksum<'a> {
    pub metric: &'a str,
    pub reference: Option<&'a str>,
}

/// The runs that differ from the expected answer, out of those compared.
pub(super) struct Answers {
    mismatches: Vec<Mismatch>,
    /// Runs compared.
    answers: usize,
    /// Parameter settings with answers from two variants or more.
    settings: usize,
}

impl Outcome for Answers {
    fn verdict(&self) -> Verdict {
        if self.mismatches.is_empty() {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }

    fn runs(&self) -> Vec<String> {
        self.mismatches.iter().map(|m| m.run.clone()).collect()
    }
}

impl<'a> Declared<'a> for Checksum<'a> {
    fn of(cx: &Context<'a>) -> Option<Self> {
        let CheckKind::Checksum { metric, reference } = &cx.spec.kind else {
            return None;
        };
        Some(Checksum {
            metric,
            reference: reference.as_deref(),
        })
    }
}

impl<'a> Check<'a> for Checksum<'_> {
    type Outcome = Answers;
    const KIND: &'static str = "checksum";

    fn decide(&self, cx: &Context<'a>) -> Result<Answers, String> {
        let mut groups: BTreeMap<&BTreeMap<String, lab_config::ParamValue>, Vec<Answer>> =
            BTreeMap::new();
        for run in cx.runs.iter().filter(|r| !r.warmup && r.outputs_valid()) {
            if let Some(values) = run.values.texts(self.metric).filter(|v| !v.is_empty()) {
                groups
                    .entry(&run.cell.params)
                    .or_default()
                    .push(Answer { run, values });
            }
        }
        let compared: Vec<&Vec<Answer>> = groups.values().filter(|g| variants(g) >= 2).collect();
        if compared.is_empty() {
            return Err(format!(
                "no parameter setting has `{}` from two variants to compare",
                self.metric
            ));
        }
        Ok(Answers {
            mismatches: compared
                .iter()
                .flat_map(|g| mismatches(cx.exp, g, self.reference))
                .collect(),
            answers: compared.iter().map(|g| g.len()).sum(),
            settings: compared.len(),
        })
    }

    fn describe(&self, a: &Answers) -> Description {
        let (answers, metric) = (a.answers, self.metric);
        let reading = match a.mismatches.first() {
            None => format!(
                "every variant printed the same `{metric}` for the same parameters ({answers} runs)"
            ),
            Some(m) => format!(
                "run {} ({}) printed {metric} {} where {} {}",
                m.run, m.cell, m.got, m.expected_from, m.expected
            ),
        };
        Description {
            evidence: evidence(a),
            reading,
            ratio: None,
        }
    }
}

fn evidence(a: &Answers) -> String {
    if a.mismatches.is_empty() {
        return format!(
            "{} runs over {} parameter settings, all agreeing",
            a.answers, a.settings
        );
    }
    let listed: Vec<String> = a
        .mismatches
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
        "{} of {} runs differ: {}{}",
        a.mismatches.len(),
        a.answers,
        listed.join("; "),
        if a.mismatches.len() > 10 { "; …" } else { "" }
    )
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
