//! `distinct`: configurations that should differ are distinguishable (seed 000, trap 5: six
//! "block sizes" were one algorithm because zsh passed the options as one argument). Adjacent
//! cells along a parameter are indistinguishable when every run of both printed the same
//! output, or when the bootstrap CI of their ratio lies inside [1−m, 1+m]; distinguishable when
//! the interval lies wholly outside that band; anything else is undecided.

use super::compare::ratio_of;
use super::verdict::{CheckResult, Verdict};
use super::{Inputs, series};
use crate::analysis::CellStats;
use crate::config::CheckSpec;
use crate::format::{percent, ratio};
use std::collections::BTreeSet;

/// How one adjacent pair was judged.
enum Pair {
    SameOutput,
    Ratio {
        r: f64,
        lo: f64,
        hi: f64,
        verdict: Verdict,
    },
    NotJudged(String),
}

/// Fail (indistinguishable) when the interval lies inside [1−m, 1+m], pass (distinguishable)
/// when it lies wholly outside, inconclusive otherwise.
pub fn decide(margin: f64, lo: f64, hi: f64) -> Verdict {
    let (low, high) = (1.0 - margin, 1.0 + margin);
    if lo >= low && hi <= high {
        Verdict::Fail
    } else if lo > high || hi < low {
        Verdict::Pass
    } else {
        Verdict::Inconclusive
    }
}

pub fn check(
    spec: &CheckSpec,
    x: &Inputs,
    metric: &str,
    along: &str,
    variant: Option<&str>,
    margin: f64,
) -> CheckResult {
    let base = CheckResult::new(&spec.name, "distinct", spec.class, Verdict::NotRun);
    let mut pairs: Vec<(&CellStats, &CellStats, Pair)> = Vec::new();
    for s in series::along(x.exp, x.cells, metric, along, variant) {
        for w in s.windows(2) {
            pairs.push((w[0], w[1], judge(spec, x, w[0], w[1], margin)));
        }
    }
    let verdict_of = |p: &Pair| match p {
        Pair::SameOutput => Verdict::Fail,
        Pair::Ratio { verdict, .. } => *verdict,
        Pair::NotJudged(_) => Verdict::NotRun,
    };
    let judged = pairs
        .iter()
        .filter(|p| verdict_of(&p.2) != Verdict::NotRun)
        .count();
    if judged == 0 {
        let why = pairs.iter().find_map(|p| {
            if let Pair::NotJudged(w) = &p.2 {
                Some(w.clone())
            } else {
                None
            }
        });
        return base.reading(why.unwrap_or_else(|| format!("no adjacent cells along `{along}`")));
    }
    let verdict = [Verdict::Fail, Verdict::Inconclusive]
        .into_iter()
        .find(|v| pairs.iter().any(|p| verdict_of(&p.2) == *v))
        .unwrap_or(Verdict::Pass);
    let evidence: Vec<String> = pairs
        .iter()
        .map(|(a, b, p)| describe(a, b, p, x.resampling.level))
        .collect();
    let evidence = format!(
        "adjacent cells along `{along}` must differ by more than ±{}; {}",
        percent(margin),
        evidence.join("; ")
    );
    let failing: Vec<&(&CellStats, &CellStats, Pair)> = pairs
        .iter()
        .filter(|p| verdict_of(&p.2) == verdict)
        .collect();
    let reading = reading(verdict, &failing, judged, margin);
    let mut result = CheckResult { verdict, ..base }
        .evidence(evidence)
        .reading(reading);
    let ids: BTreeSet<&String> = failing
        .iter()
        .flat_map(|(a, b, _)| a.run_ids.iter().chain(&b.run_ids))
        .collect();
    result.runs = ids.into_iter().cloned().collect();
    result
}

fn judge(spec: &CheckSpec, x: &Inputs, a: &CellStats, b: &CellStats, margin: f64) -> Pair {
    if same_output(x, a, b) {
        return Pair::SameOutput;
    }
    match ratio_of(
        b,
        a,
        x.resampling,
        &format!("distinct/{}/{}", spec.name, b.label),
    ) {
        Ok((r, ci)) => Pair::Ratio {
            r,
            lo: ci.lo,
            hi: ci.hi,
            verdict: decide(margin, ci.lo, ci.hi),
        },
        Err(why) => Pair::NotJudged(why),
    }
}

/// Every valid measured run of both cells printed exactly the same standard output.
fn same_output(x: &Inputs, a: &CellStats, b: &CellStats) -> bool {
    let digests: BTreeSet<&str> = x
        .runs
        .iter()
        .filter(|r| a.run_ids.contains(&r.id) || b.run_ids.contains(&r.id))
        .map(|r| r.stdout_sha256.as_str())
        .collect();
    !a.run_ids.is_empty() && !b.run_ids.is_empty() && digests.len() == 1
}

fn describe(a: &CellStats, b: &CellStats, p: &Pair, level: f64) -> String {
    match p {
        Pair::SameOutput => format!(
            "{} vs {}: identical output in all {} runs",
            b.label,
            a.label,
            a.n + b.n
        ),
        Pair::Ratio { r, lo, hi, verdict } => format!(
            "{} / {} = {} [{}, {}] ({} CI) {}",
            b.label,
            a.label,
            ratio(*r),
            ratio(*lo),
            ratio(*hi),
            crate::format::level(level),
            verdict_word(*verdict)
        ),
        Pair::NotJudged(why) => format!("{} vs {}: not judged, {why}", b.label, a.label),
    }
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "distinct",
        Verdict::Fail => "indistinguishable",
        _ => "undecided",
    }
}

fn reading(
    verdict: Verdict,
    failing: &[&(&CellStats, &CellStats, Pair)],
    judged: usize,
    margin: f64,
) -> String {
    let Some((a, b, p)) = failing.first() else {
        return String::new();
    };
    let more = if failing.len() > 1 {
        format!(", and {} more", failing.len() - 1)
    } else {
        String::new()
    };
    match (verdict, p) {
        (Verdict::Pass, _) => format!(
            "all {judged} adjacent pairs differ by more than ±{}",
            percent(margin)
        ),
        (_, Pair::SameOutput) => format!(
            "{} and {} printed identical output: the setting made no difference{more}",
            a.label, b.label
        ),
        (Verdict::Fail, Pair::Ratio { r, .. }) => format!(
            "{} is {}× {}, within ±{}: the setting made no measurable difference{more}",
            b.label,
            ratio(*r),
            a.label,
            percent(margin)
        ),
        (_, Pair::Ratio { lo, hi, .. }) => format!(
            "{} vs {}: the interval [{}, {}] overlaps ±{}; the data cannot decide{more}",
            b.label,
            a.label,
            ratio(*lo),
            ratio(*hi),
            percent(margin)
        ),
        (_, Pair::NotJudged(why)) => why.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indistinguishable_inside_the_band() {
        assert_eq!(decide(0.01, 0.995, 1.005), Verdict::Fail);
        assert_eq!(decide(0.01, 0.98, 1.005), Verdict::Inconclusive);
        assert_eq!(decide(0.01, 1.02, 1.3), Verdict::Pass);
        assert_eq!(decide(0.01, 0.5, 0.98), Verdict::Pass);
    }
}
