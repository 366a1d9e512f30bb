//! `lab export`: the committed sessions' numbers as LaTeX macros and Typst bindings. The
//! catalogue is read against the committed chapters (every median of their Results tables
//! and every ratio of their Compared tables, digit for digit), one experiment's LaTeX against
//! its snapshot, and the file is compiled by pdflatex where one is installed (CI installs it
//! and sets LAB_REQUIRE_TEX=1).

use crate::committed::{committed_experiments, committed_project, repository};
use crate::common::{Project, assert_ended};
use lab::Exit;
use lab::layout::Layout;
use lab_render::numbers::{Catalogue, RatioSource, Statistic, Subject};
use std::collections::BTreeMap;
use std::path::Path;

/// The experiment whose LaTeX is kept as a snapshot: the one with the fewest cells.
const SNAPSHOT: &str = "openmp-row-add";

/// A Markdown table's cells, backslash escapes undone, under the `###` or `##` heading
/// before it.
struct Table {
    heading: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

fn unescaped(cell: &str) -> String {
    let mut out = String::new();
    let mut chars = cell.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(|n| n.is_ascii_punctuation()) {
            continue;
        }
        out.push(c);
    }
    out
}

fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner
        .split(" | ")
        .map(|c| unescaped(link_text(c.trim())))
        .collect()
}

/// The text of a cell that links to its number's provenance, `[text](provenance.md#id)`;
/// any other cell as it is.
fn link_text(cell: &str) -> &str {
    match cell.rsplit_once("](provenance.md#") {
        Some((text, _)) if cell.ends_with(')') => text.strip_prefix('[').unwrap_or(text),
        _ => cell,
    }
}

/// Every table of `markdown` in order.
fn tables(markdown: &str) -> Vec<Table> {
    let mut out: Vec<Table> = Vec::new();
    let mut heading = String::new();
    let mut in_table = false;
    for line in markdown.lines() {
        if line.starts_with('#') {
            heading = line.trim_start_matches('#').trim().to_string();
        }
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        if !in_table {
            out.push(Table {
                heading: heading.clone(),
                header: cells(line),
                rows: Vec::new(),
            });
            in_table = true;
        } else if !line.starts_with("|---") {
            out.last_mut().expect("a table").rows.push(cells(line));
        }
    }
    out
}

/// The catalogue's text (number and interval) of `statistic` of `cell` in `metric`.
fn cell_text(
    catalogue: &Catalogue,
    cell: &str,
    metric: &str,
    statistic: Statistic,
) -> Option<String> {
    catalogue.numbers.iter().find_map(|n| match &n.what {
        Subject::Cell {
            cell: c,
            metric: m,
            statistic: s,
        } if c == cell && m == metric && *s == statistic => Some(n.text()),
        _ => None,
    })
}

/// Checks every median of the chapter's Results tables against the catalogue; how many.
fn results_medians(chapter: &str, catalogue: &Catalogue, experiment: &str) -> usize {
    let results = chapter.split("\n## Results\n").nth(1).unwrap_or("");
    let results = results.split("\n## ").next().unwrap_or("");
    let mut checked = 0;
    // The percentiles table has no median column: its numbers are read from all values.
    for table in tables(results)
        .iter()
        .filter(|t| t.heading != "Percentiles")
    {
        let metric = table.heading.split(" (").next().unwrap_or("");
        let median = table
            .header
            .iter()
            .position(|t| t.starts_with("Median"))
            .unwrap_or_else(|| panic!("{experiment} {metric}: no median column"));
        for row in &table.rows {
            let mut label = row[0].clone();
            for (title, value) in table.header[1..median].iter().zip(&row[1..median]) {
                label.push_str(&format!(" {title}={value}"));
            }
            assert_eq!(
                cell_text(catalogue, &label, metric, Statistic::Median).as_deref(),
                Some(row[median].as_str()),
                "{experiment}: {label}, {metric}"
            );
            checked += 1;
        }
    }
    checked
}

/// Checks every ratio of the chapter's Compared table against the catalogue; how many.
fn compared_ratios(chapter: &str, catalogue: &Catalogue, experiment: &str) -> usize {
    let mut checked = 0;
    for table in tables(chapter)
        .iter()
        .filter(|t| t.heading.starts_with("Compared with"))
    {
        let ratio = table
            .header
            .iter()
            .position(|t| t.starts_with("ratio"))
            .expect("ratio column");
        for row in table.rows.iter().filter(|r| !r[ratio].starts_with("n/a")) {
            let found = catalogue.numbers.iter().find(|n| {
                matches!(&n.what, Subject::Ratio { from: RatioSource::Compared(_), b, .. } if b.starts_with(&format!("{} in ", row[0])))
            });
            assert_eq!(
                found.map(|n| n.text()).as_deref(),
                Some(row[ratio].as_str()),
                "{experiment}: compared {}",
                row[0]
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_catalogue_holds_every_median_and_compared_ratio_the_committed_chapters_print() {
    let project = committed_project();
    let layout = Layout::new(project.root());
    for experiment in committed_experiments() {
        let chapter = std::fs::read_to_string(
            repository()
                .join("book/src")
                .join(&experiment)
                .join("index.md"),
        )
        .unwrap();
        let exported = lab::app::export(&layout, Path::new(&experiment), None).unwrap();
        let catalogue = &exported.catalogue;
        assert!(
            results_medians(&chapter, catalogue, &experiment) >= 4,
            "{experiment}: too few medians read"
        );
        compared_ratios(&chapter, catalogue, &experiment);
        let ids: std::collections::BTreeSet<&str> =
            catalogue.numbers.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(
            ids.len(),
            catalogue.numbers.len(),
            "{experiment}: ids unique"
        );
    }
}

#[test]
fn the_compared_ratios_and_check_ratios_of_the_lockstack_chapter_are_in_the_catalogue() {
    let project = committed_project();
    let layout = Layout::new(project.root());
    // The chapter as committed and the session it shows: a session of the user's own in data/
    // (the README's first command makes one) changes neither.
    let chapter = committed_chapter("lockstack-dip");
    let session = chapter
        .lines()
        .find_map(|line| line.strip_prefix("Session "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the chapter names its session");
    let which = lab::store::SessionRef::Named(session.to_string());
    let exported = lab::app::export(&layout, Path::new("lockstack-dip"), Some(&which)).unwrap();
    assert_eq!(
        compared_ratios(&chapter, &exported.catalogue, "lockstack-dip"),
        24
    );
    let check = exported
        .catalogue
        .get("check.non-fair-at-2-threads-is-under-half-of-1-thread.ratio")
        .expect("the check's ratio");
    assert!(chapter.contains(&check.text()), "{}", check.text());
    assert_eq!(check.text(), "0.265 [0.205, 0.289]");
    let median = exported
        .catalogue
        .get("nonfair-threads-2.mops.median")
        .unwrap();
    assert_eq!(median.text(), "13.4 [12.8, 13.6]");
    assert_eq!(median.unit, "Mops/s");
}

/// The chapter of `name` as the repository's HEAD holds it.
fn committed_chapter(name: &str) -> String {
    let out = std::process::Command::new("git")
        .args(["show", &format!("HEAD:book/src/{name}/index.md")])
        .current_dir(repository())
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git show: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// `lab export SNAPSHOT` written to `out/` through the binary, both formats.
fn exported_files(project: &Project) -> (String, String) {
    let args = [
        "export",
        SNAPSHOT,
        "--latex",
        "out/numbers.tex",
        "--typst",
        "out/numbers.typ",
        "--quiet",
    ];
    std::fs::create_dir_all(project.path("out")).unwrap();
    let out = project.lab(&args);
    assert_ended(&out, &args, Exit::Ok);
    (
        project.read("out/numbers.tex"),
        project.read("out/numbers.typ"),
    )
}

/// Every `\newcommand*{\NAME}` of a macro file, in order.
fn macro_names(latex: &str) -> Vec<String> {
    latex
        .lines()
        .filter_map(|l| l.strip_prefix("\\newcommand*{\\"))
        .map(|l| l.split('}').next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn export_writes_latex_and_typst_with_the_same_names_and_the_chapters_charts() {
    let project = committed_project();
    let (latex, typst) = exported_files(&project);
    let names = macro_names(&latex);
    assert!(
        names
            .iter()
            .all(|n| n.chars().all(|c| c.is_ascii_alphabetic()))
    );
    let typst_names: Vec<String> = typst
        .lines()
        .filter_map(|l| l.strip_prefix("#let "))
        .map(|l| l.split(' ').next().unwrap_or("").to_string())
        .collect();
    assert_eq!(names, typst_names);
    let mut counted: BTreeMap<&str, usize> = BTreeMap::new();
    for n in &names {
        *counted.entry(n).or_default() += 1;
    }
    assert!(
        counted.values().all(|&c| c == 1),
        "every macro defined once"
    );
    // The charts are the chapter's own drawings, byte for byte.
    let chapter = repository().join("book/src").join(SNAPSHOT);
    let charts = project.path(&format!("out/{SNAPSHOT}-charts"));
    let mut svgs = 0;
    let rsvg = lab_exec::locate_program("rsvg-convert", Path::new("."), &BTreeMap::new()).is_some();
    for entry in std::fs::read_dir(&chapter).unwrap().flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        if file.ends_with(".svg") && !file.ends_with("-narrow.svg") && !file.starts_with("history-")
        {
            let copied =
                charts.join(lab_render::numbers::kebab(file.trim_end_matches(".svg")) + ".svg");
            assert_eq!(
                std::fs::read(&copied).ok(),
                std::fs::read(entry.path()).ok(),
                "{file}"
            );
            if rsvg {
                let pdf = std::fs::read(copied.with_extension("pdf")).unwrap_or_default();
                assert!(pdf.starts_with(b"%PDF"), "{file}: no PDF beside it");
            }
            svgs += 1;
        }
    }
    assert!(svgs >= 2, "{svgs} charts");
    // The same session writes the same bytes.
    let (again, _) = exported_files(&project);
    assert_eq!(latex, again);
}

#[test]
fn the_latex_of_a_committed_experiment() {
    let project = committed_project();
    let (latex, _) = exported_files(&project);
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.add_filter(
        r"written by lab [0-9][^ ]*\.\n",
        "written by lab [version].\n",
    );
    settings.bind(|| insta::assert_snapshot!("export_latex", latex));
}

#[test]
fn a_latex_document_using_every_macro_compiles() {
    let required = std::env::var_os("LAB_REQUIRE_TEX").is_some_and(|v| v == "1");
    let Some(pdflatex) = lab_exec::locate_program("pdflatex", Path::new("."), &BTreeMap::new())
    else {
        assert!(!required, "LAB_REQUIRE_TEX=1 but pdflatex is not on PATH");
        eprintln!("pdflatex is not installed: the LaTeX is not compiled");
        return;
    };
    let project = committed_project();
    let (latex, _) = exported_files(&project);
    let uses: String = macro_names(&latex)
        .iter()
        .filter(|n| !n.contains("Chart"))
        .map(|n| format!("\\{n}\\par\n"))
        .collect();
    let document = format!(
        "\\documentclass{{article}}\n\\input{{numbers.tex}}\n\\begin{{document}}\n{uses}\\end{{document}}\n"
    );
    std::fs::write(project.path("out/paper.tex"), document).unwrap();
    let out = std::process::Command::new(pdflatex)
        .args(["-interaction=nonstopmode", "-halt-on-error", "paper.tex"])
        .current_dir(project.path("out"))
        .output()
        .unwrap();
    let log = std::fs::read_to_string(project.path("out/paper.log")).unwrap_or_default();
    assert!(out.status.success(), "pdflatex failed:\n{log}");
    assert!(!log.contains("Missing character"), "{log}");
    assert!(project.path("out/paper.pdf").is_file());
}

#[test]
fn export_errors_say_what_to_fix_and_exit_2() {
    let project = committed_project();
    let unknown = ["export", "no-such-experiment", "--latex", "x.tex"];
    let out = project.lab(&unknown);
    assert_ended(&out, &unknown, Exit::Usage);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no experiment at no-such-experiment"));
    let unwritable = ["export", SNAPSHOT, "--latex", "missing-folder/x.tex"];
    let out = project.lab(&unwritable);
    assert_ended(&out, &unwritable, Exit::Usage);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot write missing-folder/x.tex"),
        "{stderr}"
    );
    let neither = ["export", SNAPSHOT];
    assert_ended(&project.lab(&neither), &neither, Exit::Usage);
}
