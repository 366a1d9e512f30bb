//! Beside compare and history: the sessions of one experiment measured on several machines,
//! set side by side per hypothesis. A machine is what its manifest fingerprints (host, CPU
//! model, logical CPUs, kernel, governor, turbo, and the versions of the tools lab.toml
//! declares); each machine stands for its latest session, judged by that session's own sealed
//! lab.toml. With fewer than two machines there is nothing to replicate, and no answer.

use crate::checks::{CheckResult, Verdict};
use lab_config::CheckClass;
use lab_store::Manifest;

/// One session's record as the replications read it.
pub struct SessionVerdicts<'a> {
    pub name: &'a str,
    pub manifest: &'a Manifest,
    pub checks: &'a [CheckResult],
}

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

/// A machine's fingerprint: the facts that change what a benchmark measures.
pub fn fingerprint(m: &Manifest) -> Vec<(String, String)> {
    let known = |v: &Option<String>| v.clone().unwrap_or_else(|| "not recorded".into());
    let h = &m.host;
    let mut facts = vec![
        ("host".to_string(), h.name.clone()),
        ("CPU model".to_string(), known(&h.cpu_model)),
        ("logical CPUs".to_string(), h.logical_cpus.to_string()),
        ("kernel".to_string(), known(&h.kernel)),
        ("governor".to_string(), known(&h.governor)),
        ("turbo".to_string(), known(&h.turbo)),
    ];
    facts.extend(m.versions.iter().map(|t| {
        let first_line = t.output.lines().next().unwrap_or("").to_string();
        (t.command.join(" "), first_line)
    }));
    facts
}

/// The replications of sessions given oldest first: each distinct fingerprint's latest
/// session; `None` with fewer than two machines.
pub fn replications(sessions: &[SessionVerdicts]) -> Option<Replications> {
    let mut latest: Vec<(Vec<(String, String)>, &SessionVerdicts)> = Vec::new();
    for s in sessions {
        let print = fingerprint(s.manifest);
        match latest.iter_mut().find(|(p, _)| *p == print) {
            Some(slot) if slot.1.name <= s.name => slot.1 = s,
            Some(_) => {}
            None => latest.push((print, s)),
        }
    }
    if latest.len() < 2 {
        return None;
    }
    latest.sort_by(|(a, x), (b, y)| (&a[0].1, a, x.name).cmp(&(&b[0].1, b, y.name)));
    let machines = labelled(&latest);
    let hypotheses = hypotheses(&latest.iter().map(|(_, s)| *s).collect::<Vec<_>>());
    Some(Replications {
        machines,
        hypotheses,
    })
}

/// The machines with their labels: the host name, numbered "#2", "#3" where it repeats.
fn labelled(latest: &[(Vec<(String, String)>, &SessionVerdicts)]) -> Vec<Machine> {
    let mut machines: Vec<Machine> = Vec::new();
    for (print, s) in latest {
        let host = &print[0].1;
        let same = machines.iter().filter(|m| m.facts[0].1 == *host).count();
        machines.push(Machine {
            label: if same == 0 {
                host.clone()
            } else {
                format!("{host} #{}", same + 1)
            },
            session: s.name.to_string(),
            received: s.manifest.received.is_some(),
            facts: print.clone(),
            clocksource: s.manifest.host.clocksource.clone(),
        });
    }
    machines
}

/// Every hypothesis check any of the sessions has, by name in the order first met, with its
/// outcome on each.
fn hypotheses(sessions: &[&SessionVerdicts]) -> Vec<Hypothesis> {
    let mut names: Vec<&str> = Vec::new();
    for s in sessions {
        for c in s
            .checks
            .iter()
            .filter(|c| c.class == CheckClass::Hypothesis)
        {
            if !names.contains(&c.name.as_str()) {
                names.push(&c.name);
            }
        }
    }
    names
        .into_iter()
        .map(|name| Hypothesis {
            name: name.to_string(),
            outcomes: sessions
                .iter()
                .map(|s| {
                    s.checks
                        .iter()
                        .find(|c| c.class == CheckClass::Hypothesis && c.name == name)
                        .cloned()
                })
                .collect(),
        })
        .collect()
}

/// Whether the manifests come from more than one machine: the cheap test before any session
/// is analysed.
pub fn several_machines<'a>(manifests: impl IntoIterator<Item = &'a Manifest>) -> bool {
    let mut first: Option<Vec<(String, String)>> = None;
    for m in manifests {
        let print = fingerprint(m);
        match &first {
            None => first = Some(print),
            Some(f) if *f != print => return true,
            Some(_) => {}
        }
    }
    false
}

#[cfg(test)]
#[path = "replication_tests.rs"]
mod tests;
