//! Beside compare and history: the sessions of one experiment measured on several machines,
//! set side by side per hypothesis. A machine is what its manifest fingerprints (host, CPU
//! model, logical CPUs, kernel, governor, turbo, and the versions of the tools lab.toml
//! declares); each machine stands for its latest session, judged by that session's own sealed
//! lab.toml. With fewer than two machines there is nothing to replicate, and no answer.

use crate::checks::CheckResult;
use lab_config::CheckClass;
use lab_store::Manifest;

pub use lab_findings::replication::{Hypothesis, Machine, Replications};

/// One session's record as the replications read it.
pub struct SessionVerdicts<'a> {
    pub name: &'a str,
    pub manifest: &'a Manifest,
    pub checks: &'a [CheckResult],
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
