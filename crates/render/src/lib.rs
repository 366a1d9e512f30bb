//! Stage 8: SVG charts and Tera templates → `book/` (book.toml, src/SUMMARY.md, one chapter per
//! experiment with its charts, raw CSV files and analysis.json). A pure function of the
//! experiments and their stored sessions: rendering twice gives byte-identical files.
//!
//! Each chapter is written whole into a staging folder and swapped in only when complete, so a
//! failure leaves the previous chapter as it was; the book's index pages are replaced the same
//! way, and list an experiment whose chapter could not be rendered from its previous chapter.

mod answer;
mod bisect;
mod chapter;
pub mod charts;
mod check_numbers;
mod cite;
mod compared;
pub mod escape;
mod figures;
mod history;
mod marks;
pub mod notes;
mod number;
mod numbering;
pub mod numbers;
pub mod paper;
pub mod provenance;
mod provenance_methods;
pub mod published;
pub mod pull_request;
pub mod record;
mod replications;
pub mod sampling;
pub mod search_index;
mod shape;
mod tables;
mod templates;

pub use lab_config::shell_syntax::shell_words;

use anyhow::{Context, Result};
use lab_config::Experiment;
use lab_findings::analysis::Analysis;
use lab_findings::checks::{CheckResult, Findings, Tally};
use lab_store::{RUNS, SAMPLES};
use published::{
    ANALYSIS_JSON, BISECT_PAGE, CHAPTER_PAGE, DATA_FOLDER, HISTORY_PAGE, INDEX_PAGES,
    PROVENANCE_PAGE, REPLICATIONS_PAGE, ROOT_FILES,
};
use serde::Serialize;
use std::fs;
use std::path::{Path, PathBuf};

/// One experiment with the analysis of the session its chapter shows.
pub struct Rendered<'a> {
    pub experiment: &'a Experiment,
    pub analysis: &'a Analysis,
    pub findings: &'a Findings,
    pub session_dir: &'a Path,
    /// Lines about the record itself (lab.toml edited since, tails set aside…).
    pub notices: &'a [String],
    /// What differs today from what the session measured, in a sentence: the chapter's
    /// "Out of date" banner.
    pub outdated: Option<&'a str>,
    /// A sampled session's looks, the last saying why sampling stopped.
    pub looks: &'a [lab_findings::stopping::Standing],
    /// The experiment's sessions in time order, when it has more than one: its History page.
    pub history: Option<&'a lab_findings::history::History>,
    /// The session before this one (or the revision it was measured against), compared.
    pub compared: Option<&'a lab_findings::compare::Comparison>,
    /// The experiment's hypotheses on each machine, when it was measured on several: its
    /// Replications page.
    pub replications: Option<&'a lab_findings::replication::Replications>,
    /// The experiment's notes.md with the values its references name, when it has one.
    pub notes: Option<&'a notes::QuotedNotes>,
    /// The bisections `lab bisect` kept for the experiment: its Bisect page, when any.
    pub bisections: &'a [lab_findings::bisect::Bisection],
}

/// An experiment's line in SUMMARY.md and on the introduction page.
#[derive(Debug, Clone, Serialize)]
pub struct BookEntry {
    pub name: String,
    pub title: String,
    pub session: String,
    pub pass: usize,
    pub fail: usize,
    pub inconclusive: usize,
    pub not_run: usize,
    pub trusted: String,
    /// The chapter's answer block (HTML lab composes).
    pub headline: String,
    /// The chapter has a History page.
    pub history: bool,
    /// The chapter has a Replications page.
    pub replications: bool,
    /// The chapter has a Bisect page.
    pub bisect: bool,
    /// The chapter has a page of where each number comes from.
    pub provenance: bool,
}

/// Writes `src/NAME/` for one experiment: staged, then swapped in whole. Returns the notes'
/// warnings (references whose data this session lacks) and the chapter's book entry.
pub fn render_chapter(book_dir: &Path, item: &Rendered) -> Result<(BookEntry, Vec<String>)> {
    let src = book_dir.join("src");
    let name = &item.experiment.name;
    // One staging folder per process: a `lab report` beside a `lab run` renders the same
    // chapter into a folder of its own, and the last swapped in wins whole.
    let staging = src.join(format!(".{name}.staging-{}", std::process::id()));
    remove_abandoned(&src, &format!(".{name}.staging-"));
    // Whatever is there is cleared, a link included: a dangling one would lead the chapter
    // out of the book.
    lab_store::remove_planted(&staging)
        .with_context(|| format!("cannot clear {}", staging.display()))?;
    let written = write_chapter(&staging, item);
    let warnings = match written {
        Ok(w) => w,
        Err(e) => {
            let _ = fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    swap_in(&staging, &src.join(name))?;
    Ok((book_entry(item), warnings))
}

fn write_chapter(dir: &Path, item: &Rendered) -> Result<Vec<String>> {
    let exp = item.experiment;
    fs::create_dir_all(dir.join(DATA_FOLDER))
        .with_context(|| format!("cannot create {}", dir.display()))?;
    // Every number the pages link, found once for the chapter and its History page.
    let catalogue = numbers::catalogue(item);
    let ids = provenance::Ids::of(&catalogue);
    let numbered = (&catalogue, &ids);
    // The pages and the record are written to files of their own: side by side, the same.
    let (pages, record) = rayon::join(
        || write_pages(dir, item, numbered),
        || write_record(dir, item),
    );
    let (tera, warnings) = pages?;
    record?;
    if let Some(h) = item.history {
        let (view, figures) = history::view(&exp.title, h, &ids)?;
        write_figures(dir, &figures)?;
        write(
            &dir.join(HISTORY_PAGE),
            &templates::render(&tera, "history.md", &view)?,
        )?;
    }
    if let Some(r) = item.replications {
        let (view, figures) = replications::view(&exp.title, r)?;
        write_figures(dir, &figures)?;
        write(
            &dir.join(REPLICATIONS_PAGE),
            &templates::render(&tera, "replications.md", &view)?,
        )?;
    }
    if !item.bisections.is_empty() {
        let view = bisect::view(&exp.title, item.bisections);
        write(
            &dir.join(BISECT_PAGE),
            &templates::render(&tera, "bisect.md", &view)?,
        )?;
    }
    Ok(warnings)
}

/// The chapter's figures and page, its numbers linked by `ids` from `catalogue`; the template
/// engine, for the pages after it, and the notes' warnings.
fn write_pages(
    dir: &Path,
    item: &Rendered,
    (catalogue, ids): (&numbers::Catalogue, &provenance::Ids),
) -> Result<(tera::Tera, Vec<String>)> {
    let exp = item.experiment;
    let figures = figures::figures(exp, item.analysis, &item.findings.checks)?;
    write_figures(dir, &figures)?;
    let tera = templates::engine(Some(&exp.dir.join("templates")))?;
    let (compared, compared_figure) = compared_section(dir, item)?;
    let id = |c: &lab_findings::analysis::CellStats, s| ids.cell(c, s);
    let tables = tables::tables(exp, item.analysis, &id);
    let percentiles = tables::percentile_rows(exp, item.analysis, &id);
    let notes_charts = item.notes.map(|n| n.file.charts()).unwrap_or_default();
    let numbering = numbering::Numbering::of(&numbering::Page {
        figures: &figures,
        notes_charts: &notes_charts,
        compared_figure: compared_figure.as_ref(),
        comparison: compared.is_some(),
        results: &tables,
        percentiles: !percentiles.is_empty(),
    });
    let shown = notes::Shown {
        figures: &figures,
        numbering: &numbering,
        ids,
    };
    let (notes, warnings) = notes::rendered(item, &shown)?;
    let compared = compared.map(|view| {
        let metric = item.compared.map_or("", |c| c.metric.as_str());
        ids.link_compared(view.numbered(compared_figure.as_ref(), &numbering), metric)
    });
    let mut context = chapter::context(
        exp,
        item,
        chapter::Parts {
            figures,
            tables,
            percentiles,
            notes,
            numbering,
            ids,
        },
    );
    context.compared = compared;
    context.replications = item.replications.map(|r| {
        format!(
            "Measured on {} machines: their verdicts side by side, with each machine's fingerprint.",
            r.machines.len()
        )
    });
    write(
        &dir.join(CHAPTER_PAGE),
        &templates::render(&tera, "chapter.md", &context)?,
    )?;
    provenance::write(dir, item, catalogue, &tera)?;
    Ok((tera, warnings))
}

/// The comparison with the session before, when there is one, and its chart, written.
fn compared_section(
    dir: &Path,
    item: &Rendered,
) -> Result<(Option<compared::ComparedView>, Option<figures::Figure>)> {
    let Some(c) = item.compared else {
        return Ok((None, None));
    };
    let (view, figure) = compared::view(c)?;
    write_figures(dir, figure.as_slice())?;
    Ok((Some(view), figure))
}

/// The chapter's analysis.json and its copy of the session's data.
fn write_record(dir: &Path, item: &Rendered) -> Result<()> {
    let exp = item.experiment;
    let mut json = inert_json(&record::chapter_json(
        &exp.title,
        item.analysis,
        &item.findings.checks,
        &item.findings.multiplicity,
    )?);
    json.push('\n');
    write(&dir.join(ANALYSIS_JSON), &json)?;
    for name in [RUNS, SAMPLES] {
        fs::copy(
            item.session_dir.join(name),
            dir.join(DATA_FOLDER).join(name),
        )
        .with_context(|| format!("cannot copy {name}"))?;
    }
    Ok(())
}

/// Replaces `target` by `staging`: the old chapter is moved away first and removed last.
fn swap_in(staging: &Path, target: &Path) -> Result<()> {
    let old = target.with_file_name(format!(
        ".{}.old-{}",
        target
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        std::process::id()
    ));
    if old.exists() {
        fs::remove_dir_all(&old)?;
    }
    if target.exists() {
        fs::rename(target, &old)
            .with_context(|| format!("cannot move {} aside", target.display()))?;
    }
    fs::rename(staging, target)
        .with_context(|| format!("cannot move the new chapter to {}", target.display()))?;
    if old.exists() {
        fs::remove_dir_all(&old)?;
    }
    Ok(())
}

/// Removes the folders in `src` named `prefix` and a process id whose process is gone: the
/// staging of a rendering that was killed part way.
fn remove_abandoned(src: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(src) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|p| p.parse::<u32>().ok());
        if pid
            .is_some_and(|p| p != std::process::id() && !Path::new(&format!("/proc/{p}")).exists())
        {
            let _ = lab_store::remove_planted(&entry.path());
        }
    }
}

fn book_entry(item: &Rendered) -> BookEntry {
    BookEntry {
        history: item.history.is_some(),
        replications: item.replications.is_some(),
        bisect: !item.bisections.is_empty(),
        provenance: true,
        ..entry_from_checks(
            &item.experiment.name,
            &item.experiment.title,
            &item.analysis.session,
            &item.findings.checks,
        )
    }
}

fn entry_from_checks(name: &str, title: &str, session: &str, checks: &[CheckResult]) -> BookEntry {
    let tally = Tally::of(checks);
    BookEntry {
        name: name.to_string(),
        title: title.to_string(),
        session: session.to_string(),
        pass: tally.pass,
        fail: tally.fail,
        inconclusive: tally.inconclusive,
        not_run: tally.not_run,
        trusted: if tally.untrusted {
            "no: a validity check failed".into()
        } else {
            "yes".into()
        },
        headline: answer::answer(checks, &|_| None),
        history: false,
        replications: false,
        bisect: false,
        provenance: false,
    }
}

/// The book entry of a chapter already on disk, read from its analysis.json: a regular file in
/// the chapter's own folder, never through a link or from a FIFO a run left there.
pub fn existing_entry(book_dir: &Path, name: &str) -> Option<BookEntry> {
    let chapter = book_dir.join("src").join(name);
    if !fs::symlink_metadata(&chapter).ok()?.is_dir() {
        return None;
    }
    let path = chapter.join(ANALYSIS_JSON);
    let file = lab_store::regular::open_regular(&path).ok()?;
    let record: serde_json::Value = serde_json::from_reader(std::io::BufReader::new(file)).ok()?;
    let checks: Vec<CheckResult> = serde_json::from_value(record.get("checks")?.clone()).ok()?;
    Some(BookEntry {
        history: chapter.join(HISTORY_PAGE).is_file(),
        replications: chapter.join(REPLICATIONS_PAGE).is_file(),
        bisect: chapter.join(BISECT_PAGE).is_file(),
        provenance: chapter.join(PROVENANCE_PAGE).is_file(),
        ..entry_from_checks(
            name,
            record.get("title")?.as_str()?,
            record.get("session")?.as_str()?,
            &checks,
        )
    })
}

/// Writes a short page for an experiment that has no chapter and could not get one.
pub fn render_failure_page(book_dir: &Path, name: &str, reason: &str) -> Result<BookEntry> {
    let dir = book_dir.join("src").join(name);
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let text = format!(
        "# {}\n\nThis chapter could not be rendered:\n\n<pre><code>{}</code></pre>\n",
        escape::markdown(name),
        escape::html(reason)
    );
    write_atomic(&dir.join(CHAPTER_PAGE), &text)?;
    Ok(BookEntry {
        name: name.to_string(),
        title: escape::markdown(name),
        session: "–".into(),
        pass: 0,
        fail: 0,
        inconclusive: 0,
        not_run: 0,
        trusted: "could not render".into(),
        headline: "<p>This chapter could not be rendered; its page says why.</p>\n".into(),
        history: false,
        replications: false,
        bisect: false,
        provenance: false,
    })
}

/// Writes book.toml, lab.css and the index pages for `entries` (sorted by name).
pub fn render_index(book_dir: &Path, entries: &[BookEntry]) -> Result<()> {
    let src = book_dir.join("src");
    fs::create_dir_all(&src).with_context(|| format!("cannot create {}", src.display()))?;
    let defaults = templates::engine(None)?;
    let book = serde_json::json!({ "title": "Lab notebook", "experiments": entries });
    let pages = ROOT_FILES
        .iter()
        .map(|name| (book_dir.join(name), *name))
        .chain(INDEX_PAGES.iter().map(|name| (src.join(name), *name)));
    let rendered: Vec<(PathBuf, String)> = pages
        .map(|(path, name)| Ok((path, templates::render(&defaults, name, &book)?)))
        .collect::<Result<_>>()?;
    for (path, text) in rendered {
        write_atomic(&path, &text)?;
    }
    Ok(())
}

/// JSON that stays inert if a browser or a careless page ever treats it as HTML: `<`, `>` and
/// `&` (which only occur inside JSON strings) become `\u` escapes, as does the colon of a
/// `javascript:` scheme. The parsed values are unchanged.
pub(crate) fn inert_json(text: &str) -> String {
    const SCHEME: &str = "javascript:";
    let mut out = String::with_capacity(text.len() + text.len() / 64);
    let mut rest = text;
    // The bytes searched for are ASCII, so every match is at a character boundary.
    while let Some(at) = rest
        .bytes()
        .position(|b| matches!(b, b'<' | b'>' | b'&' | b'j'))
    {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let (escaped, taken) = match rest.as_bytes()[0] {
            b'<' => ("\\u003c", 1),
            b'>' => ("\\u003e", 1),
            b'&' => ("\\u0026", 1),
            _ if rest.starts_with(SCHEME) => ("javascript\\u003a", SCHEME.len()),
            _ => ("j", 1),
        };
        out.push_str(escaped);
        rest = &rest[taken..];
    }
    out.push_str(rest);
    out
}

/// Each figure's wide and narrow drawing, under the names the page links.
fn write_figures(dir: &Path, figures: &[figures::Figure]) -> Result<()> {
    for f in figures {
        write(&dir.join(&f.file), &f.svg)?;
        write(&dir.join(&f.narrow_file), &f.narrow_svg)?;
    }
    Ok(())
}

pub(crate) fn write(path: &Path, text: &str) -> Result<()> {
    fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes through a temporary file and a rename, so a reader never sees half a file. The
/// temporary file is made new (whatever a run planted under its name is removed first), so
/// the text is never written through a link.
fn write_atomic(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = Path::new(&tmp);
    lab_store::remove_planted(tmp).with_context(|| format!("cannot clear {}", tmp.display()))?;
    fs::File::options()
        .write(true)
        .create_new(true)
        .open(tmp)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
