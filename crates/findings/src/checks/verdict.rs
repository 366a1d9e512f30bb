//! The outcome of a check and the evidence that decided it.

use lab_config::CheckClass;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Every check ends in one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Pass,
    Fail,
    /// The interval straddles the threshold: the data cannot decide.
    Inconclusive,
    /// Too few valid runs to decide.
    NotRun,
    /// The interval straddles the threshold but lies wholly within the check's margin of it:
    /// the data cannot tell which side, and more runs would not change what it means (an
    /// equivalence test, two one-sided tests; Schuirmann 1987).
    AtThreshold,
}

impl Verdict {
    /// Whether the check reached an answer: passed, failed, or found the statistic at its
    /// threshold.
    pub fn decided(self) -> bool {
        matches!(self, Verdict::Pass | Verdict::Fail | Verdict::AtThreshold)
    }

    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotRun => "not run",
            Verdict::AtThreshold => "at the threshold",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// How many checks ended in each verdict, and whether a validity check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub pass: usize,
    pub fail: usize,
    pub inconclusive: usize,
    pub not_run: usize,
    /// Decided as at the threshold (sessions from analysis 3 on).
    #[serde(skip_serializing_if = "is_zero")]
    pub at_threshold: usize,
    pub untrusted: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Tally {
    pub fn of(checks: &[CheckResult]) -> Self {
        let count = |v: Verdict| checks.iter().filter(|c| c.verdict == v).count();
        Tally {
            pass: count(Verdict::Pass),
            fail: count(Verdict::Fail),
            inconclusive: count(Verdict::Inconclusive),
            not_run: count(Verdict::NotRun),
            at_threshold: count(Verdict::AtThreshold),
            untrusted: checks
                .iter()
                .any(|c| c.class == CheckClass::Validity && c.verdict == Verdict::Fail),
        }
    }
}

/// Spearman's ρ between two metrics over the runs of several cells, with its interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorrelationEvidence {
    pub metric: String,
    pub with: String,
    pub rho: f64,
    pub lo: f64,
    pub hi: f64,
    pub level: f64,
    /// The runs with both values, and the cells they came from.
    pub points: usize,
    pub cells: usize,
}

/// A ratio interval compared with a threshold, drawn in the forest chart.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RatioEvidence {
    pub a: String,
    pub b: String,
    pub a_value: f64,
    pub b_value: f64,
    pub ratio: f64,
    pub lo: f64,
    pub hi: f64,
    pub threshold: f64,
    /// What the check asks of the ratio, in a few symbols: `a/b < 0.500`, `within ±5.0%`.
    #[serde(default)]
    pub needs: String,
    /// The confidence level of `lo`..`hi`.
    #[serde(default = "stated_level")]
    pub level: f64,
}

fn stated_level() -> f64 {
    crate::analysis::LEVEL
}

/// A decided check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckResult {
    pub name: String,
    pub kind: String,
    pub class: CheckClass,
    pub automatic: bool,
    pub verdict: Verdict,
    /// The numbers that decided it.
    pub evidence: String,
    /// One plain-language sentence.
    pub reading: String,
    /// Runs that failed it, or that it used (absent from a large session's analysis.json,
    /// which counts them instead).
    #[serde(default)]
    pub runs: Vec<String>,
    /// The cells of those runs, in plan order: the cells that decided the verdict.
    #[serde(default)]
    pub cells: Vec<String>,
    /// A hypothesis verdict reached while some validity check failed.
    pub untrusted: bool,
    pub ratio: Option<RatioEvidence>,
    /// The correlation a `mechanism` check decided on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation: Option<CorrelationEvidence>,
    /// Why the verdict was withheld because the machine was busy: what the runs waited for a
    /// CPU, which could explain it. Absent when the machine could not change the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<String>,
    /// The bounds the ratio's interval would lie within undisturbed, where the check's text
    /// prints them: each run's value moved to the ends its waiting for a CPU allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undisturbed: Option<[f64; 2]>,
    /// The figures its evidence prints that a reader can trace to how they were computed.
    #[serde(skip)]
    pub figures: Vec<CheckFigure>,
}

/// A figure a check's evidence prints (a test's statistic or p-value), with how it was
/// computed: the chapter links it to its derivation, and `lab explain` computes it again.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckFigure {
    /// Its name within the check (`trend.p`); the number's id is `check.CHECK.NAME`.
    pub name: String,
    /// The words the evidence prints just before it (`Mann–Kendall τ = `): with the number,
    /// what is found in the evidence after the figure before it.
    pub label: String,
    /// The number as printed (`−0.007`).
    pub number: String,
    /// Its interval's bounds as printed, where it shows one after the number.
    pub interval: Option<(String, String)>,
    /// What it is, in a few words (`Mann–Kendall τ of the residuals against run position`).
    pub what: String,
    /// How it was computed, with the parameters.
    pub method: String,
    /// The runs it was computed from.
    pub runs: String,
}

impl CheckFigure {
    /// Its label and its text, as the evidence prints them: `×0.779 [0.691, 0.915]`.
    pub fn shown(&self) -> String {
        format!("{}{}", self.label, self.text())
    }

    /// The number with its interval, as its words end: `0.779 [0.691, 0.915]`.
    pub fn text(&self) -> String {
        match &self.interval {
            Some((lo, hi)) => format!("{} [{lo}, {hi}]", self.number),
            None => self.number.clone(),
        }
    }
}

impl CheckResult {
    pub fn new(name: &str, kind: &str, class: CheckClass, verdict: Verdict) -> Self {
        CheckResult {
            name: name.to_string(),
            kind: kind.to_string(),
            class,
            automatic: false,
            verdict,
            evidence: String::new(),
            reading: String::new(),
            runs: Vec::new(),
            cells: Vec::new(),
            untrusted: false,
            ratio: None,
            correlation: None,
            busy: None,
            undisturbed: None,
            figures: Vec::new(),
        }
    }

    pub fn evidence(mut self, text: impl Into<String>) -> Self {
        self.evidence = text.into();
        self
    }

    pub fn reading(mut self, text: impl Into<String>) -> Self {
        self.reading = text.into();
        self
    }

    pub fn runs(mut self, runs: Vec<String>) -> Self {
        self.runs = runs;
        self
    }
}
