use super::*;
use crate::formats::{Format, Run};
use std::collections::BTreeMap;

fn file(name: &str, values: &[f64]) -> (PathBuf, Imported) {
    let benchmark = Benchmark {
        name: "./render".into(),
        params: BTreeMap::new(),
        metric: "time".into(),
        unit: "s".into(),
        higher_is_better: false,
        runs: values.iter().map(|v| Run::measured(vec![*v])).collect(),
        summary_only: false,
        secondary: Vec::new(),
    };
    let imported = Imported {
        format: Format::Hyperfine,
        tool_version: None,
        context: BTreeMap::new(),
        benchmarks: vec![benchmark],
        notes: Vec::new(),
    };
    (PathBuf::from(name), imported)
}

#[test]
fn values_wholly_apart_and_far_apart_are_doubted() {
    let files = [
        file("ryzen.json", &[2.9, 2.95, 2.88, 3.0]),
        file("board.json", &[7.1, 7.2, 7.05, 7.3]),
    ];
    let doubts = doubts(&files);
    assert_eq!(doubts.len(), 1);
    assert!(
        doubts[0].starts_with(
            "ryzen.json and board.json record no machine, and \"./render\" differs between them by more than noise would (median 2.92 s against 7.15 s"
        ),
        "{}",
        doubts[0]
    );
}

#[test]
fn overlapping_or_close_values_and_files_with_a_machine_are_not_doubted() {
    // Overlapping ranges: noise.
    let overlap = [file("a", &[2.9, 3.5, 3.0]), file("b", &[3.4, 3.6, 3.7])];
    assert!(doubts(&overlap).is_empty());
    // Apart, but within 25 %: a drift on one machine.
    let drift = [file("a", &[2.9, 2.91, 2.92]), file("b", &[3.3, 3.31, 3.32])];
    assert!(doubts(&drift).is_empty());
    // Too few values to tell.
    let few = [file("a", &[2.9, 2.91]), file("b", &[7.3, 7.31])];
    assert!(doubts(&few).is_empty());
    // A file that names its machine is told apart by it, never doubted.
    let mut named = [file("a", &[2.9, 2.91, 2.92]), file("b", &[7.3, 7.31, 7.32])];
    named[1].1.context.insert("hostname".into(), "board".into());
    assert!(doubts(&named).is_empty());
}

#[test]
fn the_chance_that_one_machine_s_files_lie_apart_is_small() {
    // Two files of 10 runs from one machine: the same distribution, lognormal noise of 5 %
    // (a seeded generator; a Box–Muller transform of an xorshift stream).
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut normal = move || {
        let (u, v) = (uniform().max(1e-300), uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    let mut alarms = 0;
    for _ in 0..1000 {
        let mut sample = || {
            (0..10)
                .map(|_| 3.0 * (0.05 * normal()).exp())
                .collect::<Vec<_>>()
        };
        let files = [file("a", &sample()), file("b", &sample())];
        alarms += doubts(&files).len();
    }
    assert_eq!(alarms, 0, "{alarms} false alarms in 1000");
}
