//! The sessions of one experiment measured on several machines, set side by side per
//! hypothesis: each machine with the session that stands for it, and each hypothesis's verdict
//! on every machine.

use crate::checks::{CheckResult, Verdict};

/// The experiment's machines, and every hypothesis on each.
#[derive(Debug, Clone)]
pub struct Replications {
    /// Sorted by label.
    pub machines: Vec<Machine>,
    /// In the order first met along the machines.
    pub hypotheses: Vec<Hypothesis>,
}

/// A machine with the session that stands for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// Its host name, numbered where two machines share one: "vm", "vm #2".
    pub label: String,
    pub session: String,
    /// Received in a bundle (`lab import lab`) rather than measured here.
    pub received: bool,
    /// Its fingerprint, fact by fact: ("CPU model", "AMD EPYC"), …
    pub facts: Vec<(String, String)>,
    /// The kernel's clock source its session recorded. Shown, not part of the fingerprint:
    /// sessions stored before it was recorded would otherwise count as another machine.
    pub clocksource: Option<String>,
}

/// One hypothesis across the machines.
#[derive(Debug, Clone)]
pub struct Hypothesis {
    pub name: String,
    /// One per machine, in the machines' order; `None` where that session's lab.toml has
    /// no such hypothesis.
    pub outcomes: Vec<Option<CheckResult>>,
}

impl Hypothesis {
    /// The machines it passed on.
    pub fn held(&self) -> usize {
        self.outcomes
            .iter()
            .flatten()
            .filter(|c| c.verdict == Verdict::Pass)
            .count()
    }

    /// "held on 2 of 3 machines; failed on vm-b (0.190× where a/b < 0.100 was needed)".
    pub fn line(&self, machines: &[Machine]) -> String {
        let mut parts = vec![format!(
            "held on {} of {} machines",
            self.held(),
            machines.len()
        )];
        for (machine, outcome) in machines.iter().zip(&self.outcomes) {
            match outcome {
                Some(c) if c.verdict == Verdict::Pass => {}
                Some(c) => parts.push(format!(
                    "{} on {} ({})",
                    missed_word(c.verdict),
                    machine.label,
                    missed_because(c)
                )),
                None => parts.push(format!(
                    "not checked on {} (its lab.toml has no such hypothesis)",
                    machine.label
                )),
            }
        }
        parts.join("; ")
    }
}

/// How a hypothesis that did not pass ended, as the line says it.
fn missed_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "held",
        Verdict::Fail => "failed",
        Verdict::Inconclusive => "undecided",
        Verdict::NotRun => "not run",
        Verdict::AtThreshold => "at the threshold",
    }
}

/// Why: the ratio against what was needed, or the check's own evidence.
fn missed_because(c: &CheckResult) -> String {
    match (&c.ratio, c.verdict) {
        (Some(r), Verdict::Fail) if !r.needs.is_empty() => format!(
            "{}× where {} was needed",
            lab_config::format::ratio(r.ratio),
            r.needs
        ),
        (Some(r), Verdict::Inconclusive) => format!(
            "{}× {} straddles the threshold {}",
            lab_config::format::ratio(r.ratio),
            lab_config::format::ratio_bounds(r.lo, r.hi),
            lab_config::format::ratio(r.threshold)
        ),
        _ if c.evidence.is_empty() => c.verdict.word().to_string(),
        _ => c.evidence.clone(),
    }
}
