//! The Bisect page of an experiment: each bisection `lab bisect` kept, newest file last, with
//! its answer, the commits it tried in order with their ratios against the good commit, and
//! the session that measured each.

use crate::escape::markdown;
use lab_config::format::{percent, ratio, ratio_bounds};
use lab_findings::bisect::{Answer, Bisection, Commit, Step, short};
use serde::Serialize;

/// The page's template context.
#[derive(Serialize)]
pub(crate) struct BisectView {
    pub title: String,
    pub bisections: Vec<BisectionView>,
}

#[derive(Serialize)]
pub(crate) struct BisectionView {
    pub heading: String,
    pub sentence: String,
    pub answer: String,
    pub steps: Vec<StepRow>,
}

#[derive(Serialize)]
pub(crate) struct StepRow {
    pub number: usize,
    pub commit: String,
    pub subject: String,
    pub ratios: String,
    pub verdict: String,
    pub session: String,
}

pub(crate) fn view(title: &str, bisections: &[Bisection]) -> BisectView {
    BisectView {
        title: title.to_string(),
        bisections: bisections.iter().map(bisection).collect(),
    }
}

fn bisection(b: &Bisection) -> BisectionView {
    let watched = if b.cells.is_empty() {
        "no cell".to_string()
    } else {
        b.cells
            .iter()
            .map(|c| markdown(c))
            .collect::<Vec<_>>()
            .join(", ")
    };
    BisectionView {
        heading: format!("{} to {}", plain(&b.good), plain(&b.bad)),
        sentence: format!(
            "Each step measured one commit against {}, their runs interleaved in a session of its own; the cells slower at {} ({watched}) were watched, a change within ±{} counting as the same, and a step that could not decide them was skipped.",
            short(&b.good.commit),
            short(&b.bad.commit),
            percent(b.threshold)
        ),
        answer: answer(b),
        steps: b
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| step(i + 1, s))
            .collect(),
    }
}

/// "1a2b3c4d5e6f (Use a spin lock)", for a field the template escapes.
fn plain(c: &Commit) -> String {
    format!("{} ({})", short(&c.commit), c.subject)
}

/// [`plain`] made inert for the answer, which the template takes as Markdown.
fn commit_words(c: &Commit) -> String {
    markdown(&plain(c))
}

fn answer(b: &Bisection) -> String {
    match &b.answer {
        Answer::Culprit { commit } => {
            format!("The first slower commit is **{}**.", commit_words(commit))
        }
        Answer::Ambiguous { commits } => format!(
            "The first slower commit is one of {}: the steps between them were inconclusive.",
            commits
                .iter()
                .map(commit_words)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Answer::NotSlower => format!(
            "{} is not slower than {}: there was nothing to bisect.",
            short(&b.bad.commit),
            short(&b.good.commit)
        ),
    }
}

fn step(number: usize, s: &Step) -> StepRow {
    let ratios = s
        .cells
        .iter()
        .map(|c| match (c.ratio, c.lo, c.hi) {
            (Some(r), Some(lo), Some(hi)) => {
                format!(
                    "{}: {}× {}",
                    markdown(&c.cell),
                    ratio(r),
                    ratio_bounds(lo, hi)
                )
            }
            _ => format!("{}: too few runs", c.cell),
        })
        .collect::<Vec<_>>()
        .join("; ");
    StepRow {
        number,
        commit: short(&s.tried.commit).to_string(),
        subject: s.tried.subject.clone(),
        ratios,
        verdict: s.verdict.words().to_string(),
        session: s.session.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_findings::bisect::StepVerdict;

    fn commit(hex: char, subject: &str) -> Commit {
        Commit {
            commit: hex.to_string().repeat(40),
            subject: subject.to_string(),
        }
    }

    #[test]
    fn a_subject_holding_markup_is_escaped_once_in_every_place_it_shows() {
        let culprit = commit('b', "Use a *spin* lock | [fast]");
        let bisection = Bisection {
            experiment: "ab".into(),
            good: commit('a', "good"),
            bad: commit('c', "bad"),
            threshold: 0.05,
            cells: vec!["work".into()],
            steps: vec![Step {
                tried: culprit.clone(),
                session: "20261207T000000Z-vm".into(),
                verdict: StepVerdict::Slower,
                cells: Vec::new(),
            }],
            answer: Answer::Culprit { commit: culprit },
        };
        let tera = crate::templates::engine(None).unwrap();
        let page = crate::templates::render(&tera, "bisect.md", &view("T", &[bisection])).unwrap();
        let escaped = r"Use a \*spin\* lock \| \[fast\]";
        assert!(
            page.contains(&format!(
                "The first slower commit is **bbbbbbbbbbbb ({escaped})**."
            )),
            "{page}"
        );
        assert!(
            page.contains(&format!("| bbbbbbbbbbbb | {escaped} |  | slower |")),
            "{page}"
        );
        assert!(!page.contains(r"\\"), "escaped twice: {page}");
    }
}
