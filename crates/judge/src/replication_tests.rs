use super::*;
use crate::checks::{RatioEvidence, Verdict};

/// A committed manifest, moved to the host `host` with `cpus` logical CPUs.
fn manifest(host: &str, cpus: usize) -> Manifest {
    let text = include_str!("../../../data/lockstack-dip/20261130T081716Z-vm/manifest.json");
    let mut m = Manifest::from_json(text.as_bytes()).unwrap();
    m.host.name = host.to_string();
    m.host.logical_cpus = cpus;
    m
}

/// A compare hypothesis "a/b < 0.100" that measured `ratio` in [lo, hi].
fn hypothesis(verdict: Verdict, ratio: f64, lo: f64, hi: f64) -> Vec<CheckResult> {
    let mut c = CheckResult::new("fair is slow", "compare", CheckClass::Hypothesis, verdict);
    c.ratio = Some(RatioEvidence {
        a: "fair".into(),
        b: "nonfair".into(),
        a_value: ratio,
        b_value: 1.0,
        ratio,
        lo,
        hi,
        threshold: 0.1,
        needs: "a/b < 0.100".into(),
        level: 0.95,
    });
    vec![c]
}

#[test]
fn each_machine_stands_for_its_latest_session_and_the_line_names_the_misses() {
    let (a, b, c) = (manifest("a", 8), manifest("b", 2), manifest("c", 4));
    let pass = hypothesis(Verdict::Pass, 0.05, 0.04, 0.06);
    let fail = hypothesis(Verdict::Fail, 0.19, 0.17, 0.21);
    let open = hypothesis(Verdict::Inconclusive, 0.09, 0.07, 0.12);
    let sessions = [
        SessionVerdicts {
            name: "1-b",
            manifest: &b,
            checks: &pass,
        },
        SessionVerdicts {
            name: "2-a",
            manifest: &a,
            checks: &pass,
        },
        SessionVerdicts {
            name: "3-b",
            manifest: &b,
            checks: &fail,
        },
        SessionVerdicts {
            name: "4-c",
            manifest: &c,
            checks: &open,
        },
    ];
    let r = replications(&sessions).unwrap();
    let labels: Vec<(&str, &str)> = r
        .machines
        .iter()
        .map(|m| (m.label.as_str(), m.session.as_str()))
        .collect();
    assert_eq!(labels, [("a", "2-a"), ("b", "3-b"), ("c", "4-c")]);
    assert_eq!(r.hypotheses.len(), 1);
    assert_eq!(r.hypotheses[0].held(), 1);
    assert_eq!(
        r.hypotheses[0].line(&r.machines),
        "held on 1 of 3 machines; failed on b (0.190× where a/b < 0.100 was needed); \
         undecided on c (0.0900× [0.0700, 0.120] straddles the threshold 0.100)"
    );
}

#[test]
fn one_machine_has_no_replications_and_shared_host_names_are_numbered() {
    let a = manifest("vm", 2);
    let pass = hypothesis(Verdict::Pass, 0.05, 0.04, 0.06);
    let one = [
        SessionVerdicts {
            name: "1",
            manifest: &a,
            checks: &pass,
        },
        SessionVerdicts {
            name: "2",
            manifest: &a,
            checks: &pass,
        },
    ];
    assert!(replications(&one).is_none());
    assert!(!several_machines([&a, &a]));
    let b = manifest("vm", 4);
    assert!(several_machines([&a, &b]));
    let two = [
        SessionVerdicts {
            name: "1",
            manifest: &a,
            checks: &pass,
        },
        SessionVerdicts {
            name: "2",
            manifest: &b,
            checks: &[],
        },
    ];
    let r = replications(&two).unwrap();
    let labels: Vec<&str> = r.machines.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(labels, ["vm", "vm #2"]);
    assert_eq!(
        r.hypotheses[0].line(&r.machines),
        "held on 1 of 2 machines; not checked on vm #2 (its lab.toml has no such hypothesis)"
    );
}
