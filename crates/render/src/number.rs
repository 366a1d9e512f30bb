//! What one number of a chapter is: its id, its text as the chapter prints it, and what it
//! was computed from, the kinds a catalogue holds.

use lab_config::format::ratio;
use lab_findings::analysis::CellStats;
use serde::Serialize;

/// One number a reader sees, with its interval where the chapter prints one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Number {
    /// Kebab-case and dotted, from what the number is: `nonfair-threads-2.mops.median`.
    pub id: String,
    /// As the chapter prints it: `13.4`, `283 µ`, `12.4%`.
    pub value: String,
    pub lo: Option<String>,
    pub hi: Option<String>,
    /// The metric's unit (empty for ratios, shares and counts).
    pub unit: String,
    pub what: Subject,
}

/// The id of the number a table shows for a cell's statistic, where the chapter's catalogue
/// holds one: the anchor its link goes to on the provenance page.
pub(crate) type NumberId<'a> = &'a dyn Fn(&CellStats, Statistic) -> Option<String>;

/// What a number is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Subject {
    /// A statistic of one cell's runs.
    Cell {
        cell: String,
        metric: String,
        statistic: Statistic,
    },
    /// The median of a cell of the session the chapter's session is compared with.
    Before {
        cell: String,
        metric: String,
        session: String,
    },
    /// Spearman's ρ between two metrics over the runs of several cells, as a check decided
    /// on it.
    Correlation {
        metric: String,
        with: String,
        check: String,
    },
    /// The median of one of the two cells a check's ratio compares (`side` `a` or `b`), of
    /// the runs the check read.
    Side {
        check: String,
        side: String,
        cell: String,
        metric: String,
    },
    /// One figure of what the decided hypothesis checks risk together: `bonferroni` (the
    /// chance of a false pass among them, at most), `sidak` (the same for independent checks)
    /// or `per-check` (the confidence each would need for 5% over the set).
    Multiplicity { figure: String, decided: usize },
    /// The level a sampled session's look read its intervals at: it spent `runs_per_cell` of
    /// the `max` runs per cell the session could take, after `before` at the look before.
    Look {
        look: u32,
        runs_per_cell: u32,
        before: u32,
        max: u32,
    },
    /// The median of a cell in one of the sessions the History page shows (`number`, its
    /// place in time order), of its `runs` runs.
    Session {
        cell: String,
        metric: String,
        session: String,
        number: usize,
        runs: usize,
    },
    /// The bounds a check's ratio interval would lie within had the machine not made its
    /// runs wait.
    Undisturbed { check: String, a: String, b: String },
    /// A figure a check's evidence prints (a test's statistic or p-value), as the check
    /// computed it: what it is, how, and from which runs.
    CheckFigure {
        check: String,
        figure: String,
        what: String,
        #[serde(skip)]
        method: String,
        #[serde(skip)]
        runs: String,
    },
    /// A ratio of two medians: `a` over `b`.
    Ratio {
        a: String,
        b: String,
        metric: Option<String>,
        from: RatioSource,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Statistic {
    Median,
    /// The median with its distribution-free order-statistic interval.
    OrderCi,
    Mean,
    Cv,
    Runs,
    Min,
    Max,
    /// Tail percentiles of every recorded value, not one per run.
    P50,
    P90,
    P99,
    P999,
    /// The recorded values counted, and the largest of them.
    Values,
    ValuesMax,
    /// The medians of the lower and the higher of a cell's two modes, where its runs have two.
    ModeLow,
    ModeHigh,
    /// The Theil–Sen slope of a cell's run values against their run positions, where the
    /// Mann–Kendall test finds a trend at 5%.
    Drift,
}

/// Where the chapter quotes a ratio.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RatioSource {
    /// The check of this name decided on it.
    Check(String),
    /// The compared section: this session's median over that of the session named.
    Compared(String),
    /// The notes ask for it (`ratio(a=…, b=…)`).
    Notes,
}

impl Statistic {
    pub fn word(self) -> &'static str {
        match self {
            Statistic::Median => "median",
            Statistic::OrderCi => "order-ci",
            Statistic::Mean => "mean",
            Statistic::Cv => "cv",
            Statistic::Runs => "runs",
            Statistic::Min => "min",
            Statistic::Max => "max",
            Statistic::P50 => "p50",
            Statistic::P90 => "p90",
            Statistic::P99 => "p99",
            Statistic::P999 => "p99-9",
            Statistic::Values => "values",
            Statistic::ValuesMax => "values-max",
            Statistic::ModeLow => "mode-low",
            Statistic::ModeHigh => "mode-high",
            Statistic::Drift => "drift",
        }
    }
}

impl Number {
    /// The interval as the chapter prints it: `[12.8, 13.6]`.
    pub fn interval(&self) -> Option<String> {
        Some(format!("[{}, {}]", self.lo.as_ref()?, self.hi.as_ref()?))
    }

    /// The number with its interval, as a table cell shows it: `13.4 [12.8, 13.6]`.
    pub fn text(&self) -> String {
        match self.interval() {
            Some(interval) => format!("{} {interval}", self.value),
            None => self.value.clone(),
        }
    }
}

impl Subject {
    /// In a few words: `nonfair threads=2, mops, median`; `ratio nonfair threads=2 / nonfair
    /// threads=1 (check "non-fair at 2 threads is under half of 1 thread")`.
    pub fn describe(&self) -> String {
        match self {
            Subject::Cell {
                cell,
                metric,
                statistic,
            } => format!("{cell}, {metric}, {}", statistic.word()),
            Subject::Before {
                cell,
                metric,
                session,
            } => format!("{cell}, {metric}, median in session {session}"),
            Subject::Correlation {
                metric,
                with,
                check,
            } => format!("Spearman's ρ of {metric} with {with} (check \"{check}\")"),
            Subject::Side {
                check,
                side,
                cell,
                metric,
            } => format!("{cell}, {metric}, median as check \"{check}\" read it ({side})"),
            Subject::Multiplicity { figure, decided } => match figure.as_str() {
                "sidak" => {
                    format!("chance of a false pass among the {decided} hypotheses, if independent")
                }
                "per-check" => {
                    format!("confidence each of the {decided} hypotheses needs for 5% over the set")
                }
                _ => format!("chance of a false pass among the {decided} hypotheses, at most"),
            },
            Subject::Look { look, .. } => format!("the level look {look} read its intervals at"),
            Subject::Undisturbed { check, a, b } => {
                format!("ratio {a} / {b} undisturbed, its bounds (check \"{check}\")")
            }
            Subject::Session {
                cell,
                metric,
                session,
                ..
            } => format!("{cell}, {metric}, median in session {session} of the history"),
            Subject::CheckFigure { check, what, .. } => format!("{what} (check \"{check}\")"),
            Subject::Ratio { a, b, metric, from } => {
                let metric = metric
                    .as_deref()
                    .map_or_else(String::new, |m| format!(" of {m}"));
                let from = match from {
                    RatioSource::Check(name) => format!("check \"{name}\""),
                    RatioSource::Compared(session) => format!("compared with {session}"),
                    RatioSource::Notes => "notes".into(),
                };
                format!("ratio{metric} {a} / {b} ({from})")
            }
        }
    }
}

/// A ratio of medians with its interval, as [`lab_config::format::ratio_interval`] prints it.
pub(crate) fn ratio_number(id: String, (r, lo, hi): (f64, f64, f64), what: Subject) -> Number {
    Number {
        id,
        value: ratio(r),
        lo: Some(ratio(lo)),
        hi: Some(ratio(hi)),
        unit: String::new(),
        what,
    }
}

/// `text` in lower-case kebab form: ASCII letters and digits kept, every run of anything else
/// one hyphen (`nonfair threads=2` → `nonfair-threads-2`, `parks_per_op` → `parks-per-op`).
pub fn kebab(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}
