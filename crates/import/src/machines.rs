//! Files that record no machine but whose values say they come from different ones.
//!
//! hyperfine (and criterion) record nothing about the machine, so lab cannot tell two such
//! files apart by their facts and pools them. Where the same benchmark's values in two files
//! lie wholly apart (every value of one below every value of the other) and their medians
//! differ by more than [`RATIO`], the difference is not run-to-run noise: a separation of the
//! ranges is the exact, distribution-free evidence of the Mann–Whitney U statistic at its
//! extreme (U = 0; Mann & Whitney 1947), and the ratio bound keeps a small drift between two
//! sessions on one machine from being taken for a second machine.

use crate::formats::{Benchmark, Imported, machine_of};
use std::path::PathBuf;

/// How far apart two files' medians must be (larger over smaller) to be more than noise.
pub const RATIO: f64 = 1.25;

/// The fewest values each file must hold of a benchmark for a separation to count: with 3
/// against 3, ranges lie apart by chance with probability 2 / C(6, 3) = 0.1.
const FEWEST: usize = 3;

/// A warning, with its hint, for each pair of files that record no machine and hold a
/// benchmark whose values differ by more than noise would.
pub fn doubts(files: &[(PathBuf, Imported)]) -> Vec<String> {
    let anonymous: Vec<&(PathBuf, Imported)> = files
        .iter()
        .filter(|(_, imported)| machine_of(imported).is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, (a, first)) in anonymous.iter().enumerate() {
        for (b, second) in &anonymous[i + 1..] {
            let apart: Vec<Apart> = first
                .benchmarks
                .iter()
                .filter_map(|x| {
                    let y = second.benchmarks.iter().find(|y| same(x, y))?;
                    apart(x, y)
                })
                .collect();
            if let Some(first_apart) = apart.first() {
                out.push(warning(a, b, first_apart, apart.len()));
            }
        }
    }
    out
}

/// One benchmark whose values lie apart in two files: its name, unit and the two medians.
struct Apart {
    name: String,
    unit: String,
    medians: (f64, f64),
}

fn same(a: &Benchmark, b: &Benchmark) -> bool {
    a.name == b.name && a.params == b.params && a.metric == b.metric && a.unit == b.unit
}

/// The medians of the two benchmarks' values where they lie apart by more than noise.
fn apart(a: &Benchmark, b: &Benchmark) -> Option<Apart> {
    let (x, y) = (measured(a), measured(b));
    if x.len() < FEWEST || y.len() < FEWEST {
        return None;
    }
    let separated = x.last()? < y.first()? || y.last()? < x.first()?;
    let (mx, my) = (median(&x), median(&y));
    let ratio = mx.max(my) / mx.min(my);
    (separated && ratio > RATIO).then(|| Apart {
        name: a.name.clone(),
        unit: a.unit.clone(),
        medians: (mx, my),
    })
}

/// The measured values of the runs that ended normally, sorted.
fn measured(b: &Benchmark) -> Vec<f64> {
    let ok = |r: &&crate::formats::Run| {
        !r.warmup
            && r.exit
                .as_ref()
                .is_none_or(|e| *e == lab_store::Exit::Code(0))
    };
    let mut values: Vec<f64> = b
        .runs
        .iter()
        .filter(ok)
        .flat_map(|r| r.values.iter().copied())
        .filter(|v| v.is_finite())
        .collect();
    values.sort_by(f64::total_cmp);
    values
}

/// The median of sorted values.
fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

fn warning(a: &std::path::Path, b: &std::path::Path, apart: &Apart, count: usize) -> String {
    let (ma, mb) = apart.medians;
    let others = match count - 1 {
        0 => String::new(),
        1 => " (and 1 more benchmark)".to_string(),
        n => format!(" (and {n} more benchmarks)"),
    };
    format!(
        "{} and {} record no machine, and \"{}\"{others} differs between them by more than noise \
         would (median {} against {}, every value of one beyond every value of the other): they \
         look like two machines, pooled here as one\n  hint: import each machine's files on \
         their own, each with --machine LABEL, into the same experiment",
        a.display(),
        b.display(),
        apart.name,
        lab_config::format::value(ma, &apart.unit),
        lab_config::format::value(mb, &apart.unit),
    )
}

#[cfg(test)]
#[path = "machines_tests.rs"]
mod tests;
