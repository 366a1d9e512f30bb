//! The chapter as a reader uses it, read from the built HTML through a parser: figures and
//! tables numbered with anchors that the notes link to, citations of references.bib with the
//! list of what they cite, the "Cite this chapter" entry, and the book's search in Chromium.

use crate::browser::{Browser, chromium_or_skip, file_url};
use crate::committed::{committed_experiments, committed_project};
use crate::common::Project;
use lab::Exit;
use scraper::{ElementRef, Html, Selector};

const NOTES: &str = r#"The scores are in {{ table(name="results-score") }}, drawn in {{ fig(name="score-by-n") }}; the method follows {{ cite(key="chen2016") }}.

{{ chart(file="score-by-n.svg") }}

Checks: {{ table(name="checks") }}. Again {{ cite(key="chen2016") }} and {{ cite(key="odd") }}.
"#;

const REFERENCES: &str = r#"@inproceedings{chen2016,
  author = {Chen, Tianqi and Guestrin, Carlos},
  title = {{XGBoost}: A Scalable Tree Boosting System},
  booktitle = {Proceedings of KDD},
  year = {2016},
  doi = {10.1145/2939672.2939785},
}
@misc{odd,
  author = {Mallory, Eve},
  title = {<script>alert(1)</script> *not* emphasis},
  howpublished = {javascript:alert(1)},
  url = {javascript:alert(2)},
  year = {2020},
}
@misc{uncited,
  author = {Nobody, No},
  title = {Never cited},
  year = {1999},
}
"#;

fn select<'a>(page: &'a Html, css: &str) -> Vec<ElementRef<'a>> {
    let selector = Selector::parse(css).unwrap_or_else(|e| panic!("{css}: {e:?}"));
    page.select(&selector).collect()
}

fn text(element: &ElementRef) -> String {
    element.text().collect::<String>()
}

/// The tiny experiment with `notes` and `references`, run once and built to HTML.
fn tiny_with(notes: &str, references: Option<&str>) -> Project {
    let project = Project::with_fixtures(&["tiny"]);
    std::fs::write(project.path("experiments/tiny/notes.md"), notes).unwrap();
    if let Some(bib) = references {
        std::fs::write(project.path("experiments/tiny/references.bib"), bib).unwrap();
    }
    project
}

fn chapter(project: &Project) -> Html {
    Html::parse_document(&project.read("book/book/tiny/index.html"))
}

#[test]
fn figures_and_tables_are_numbered_and_the_notes_link_to_them() {
    let project = tiny_with(NOTES, Some(REFERENCES));
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    project.lab_exits(&["book", "--quiet"], Exit::Ok);
    let page = chapter(&project);

    let anchored: Vec<(String, String)> = select(&page, "figure.lab-figure[id]")
        .iter()
        .map(|f| {
            let caption = select_in(f, "figcaption strong");
            (f.value().attr("id").unwrap().to_string(), caption)
        })
        .collect();
    let numbers: Vec<&str> = anchored.iter().map(|(_, n)| n.as_str()).collect();
    let expected: Vec<String> = (1..=anchored.len())
        .map(|n| format!("Figure {n}."))
        .collect();
    assert_eq!(numbers, expected, "{anchored:?}");
    assert_eq!(anchored[0].0, "figure-score-by-n", "{anchored:?}");
    // The copy the notes show carries the number and leaves the anchor to the chapter's own.
    let copies = select(&page, "figure.lab-figure:not([id]) figcaption strong");
    assert_eq!(copies.iter().map(text).collect::<Vec<_>>(), ["Figure 1."]);

    let link = |href: &str| -> String {
        let links = select(&page, &format!("main a[href=\"{href}\"]"));
        assert_eq!(links.len(), 1, "{href}");
        text(&links[0])
    };
    assert_eq!(link("#figure-score-by-n"), "Figure 1");
    assert_eq!(link("#table-checks"), "Table 1");
    assert_eq!(link("#table-results-score"), "Table 2");
    let captions: Vec<(String, String)> = select(&page, "p.lab-caption")
        .iter()
        .map(|p| (p.value().attr("id").unwrap().to_string(), text(p)))
        .collect();
    assert_eq!(
        captions[0],
        (
            "table-checks".into(),
            "Table 1. The checks and their verdicts.".into()
        )
    );
    assert_eq!(
        captions[1],
        (
            "table-results-score".into(),
            "Table 2. score (points) in each cell.".into()
        )
    );
    // Each caption sits right above its table.
    for caption in select(&page, "p.lab-caption") {
        let next = caption
            .next_siblings()
            .filter_map(ElementRef::wrap)
            .next()
            .unwrap();
        assert_eq!(next.value().name(), "div", "{:?}", text(&caption));
        assert_eq!(select_tag(&next, "table"), 1);
    }
}

fn select_in(element: &ElementRef, css: &str) -> String {
    let selector = Selector::parse(css).unwrap();
    element.select(&selector).map(|e| text(&e)).collect()
}

fn select_tag(element: &ElementRef, css: &str) -> usize {
    element.select(&Selector::parse(css).unwrap()).count()
}

#[test]
fn citations_link_to_a_list_of_what_the_notes_cite_escaped() {
    let project = tiny_with(NOTES, Some(REFERENCES));
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    let sealed = project.session("tiny").join("sealed/references.bib");
    assert_eq!(
        std::fs::read_to_string(&sealed).unwrap(),
        REFERENCES,
        "the session keeps the references it ran with"
    );
    project.lab_exits(&["book", "--quiet"], Exit::Ok);
    let page = chapter(&project);

    let citations: Vec<String> = select(&page, "main a[href^=\"#ref-\"]")
        .iter()
        .map(text)
        .collect();
    assert_eq!(
        citations,
        [
            "Chen and Guestrin 2016",
            "Chen and Guestrin 2016",
            "Mallory 2020"
        ]
    );
    let headings: Vec<String> = select(&page, "main h3").iter().map(text).collect();
    assert!(headings.contains(&"References".to_string()), "{headings:?}");
    let entries = select(&page, "ul.lab-references > li");
    let ids: Vec<&str> = entries
        .iter()
        .map(|e| e.value().attr("id").unwrap())
        .collect();
    assert_eq!(
        ids,
        ["ref-chen2016", "ref-odd"],
        "only what the notes cite, by author"
    );
    assert_eq!(
        text(&entries[0]),
        "Chen, Tianqi, and Carlos Guestrin. 2016. XGBoost: A Scalable Tree Boosting System. Proceedings of KDD. https://doi.org/10.1145/2939672.2939785."
    );
    let doi = select(&page, "li#ref-chen2016 a");
    assert_eq!(
        doi[0].value().attr("href"),
        Some("https://doi.org/10.1145/2939672.2939785")
    );
    // The author's fields are text: no script, no emphasis, no link to another scheme.
    assert_eq!(
        text(&entries[1]),
        "Mallory, Eve. 2020. <script>alert(1)</script> *not* emphasis. javascript:alert(1). javascript:alert(2)."
    );
    assert_eq!(select_tag(&entries[1], "script, em > em, a"), 0);
    assert!(select(&page, "main script").is_empty());
}

#[test]
fn two_works_of_the_same_authors_and_year_are_told_apart_by_a_letter() {
    let second = "@article{chen2016b,\n  author = {Chen, Tianqi and Guestrin, Carlos},\n  \
                  title = {A Second Paper},\n  year = {2016},\n}\n";
    let references = format!("{REFERENCES}{second}");
    let notes = "First {{ cite(key=\"chen2016\") }}, then {{ cite(key=\"chen2016b\") }}.\n";
    let project = tiny_with(notes, Some(&references));
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    project.lab_exits(&["book", "--quiet"], Exit::Ok);
    let page = chapter(&project);
    let citations: Vec<String> = select(&page, "main a[href^=\"#ref-\"]")
        .iter()
        .map(text)
        .collect();
    // "A Second Paper" comes before "XGBoost…" in the list, so it is 2016a.
    assert_eq!(
        citations,
        ["Chen and Guestrin 2016b", "Chen and Guestrin 2016a"]
    );
    let entries: Vec<String> = select(&page, "ul.lab-references > li")
        .iter()
        .map(text)
        .collect();
    assert_eq!(
        entries[0],
        "Chen, Tianqi, and Carlos Guestrin. 2016a. A Second Paper."
    );
    assert!(entries[1].starts_with("Chen, Tianqi, and Carlos Guestrin. 2016b. XGBoost"));
}

#[test]
fn every_chapter_ends_with_a_bibtex_entry_for_itself() {
    let project = tiny_with(NOTES, Some(REFERENCES));
    let toml = project.read("experiments/tiny/lab.toml");
    let title = toml
        .lines()
        .find(|l| l.starts_with("title"))
        .unwrap()
        .to_string();
    let odd = "title = \"Tiny {50%} & `a_b` ```x```\"";
    std::fs::write(
        project.path("experiments/tiny/lab.toml"),
        toml.replace(&title, odd),
    )
    .unwrap();
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    project.lab_exits(&["book", "--quiet"], Exit::Ok);
    let page = chapter(&project);
    let headings: Vec<String> = select(&page, "main h2").iter().map(text).collect();
    assert_eq!(
        headings.last().map(String::as_str),
        Some("Cite this chapter")
    );
    let blocks = select(&page, "main pre code.language-bibtex");
    assert_eq!(blocks.len(), 1);
    let entry = text(&blocks[0]);
    let session = std::fs::read_dir(project.path("data/tiny"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| !n.starts_with('.'))
        .unwrap();
    let year = &session[..4];
    assert_eq!(
        entry,
        format!(
            "@misc{{lab-tiny-{session},\n  title = {{{{Tiny \\{{50\\%\\}} \\& `a\\_b` ```x```}}}},\n  year = {{{year}}},\n  note = {{lab session {session}, not from a git checkout}},\n  howpublished = {{Lab notebook, chapter tiny}}\n}}\n"
        )
    );
}

/// The first line of stderr that names notes.md or references.bib, from its path's file name.
fn error_line(out: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("notes.md:") || l.contains("references.bib:"))
        .unwrap_or_else(|| panic!("no located error in {stderr}"));
    let from = line
        .find("notes.md:")
        .or_else(|| line.find("references.bib:"))
        .unwrap();
    line[from..].to_string()
}

#[test]
fn a_wrong_figure_table_or_reference_stops_the_chapter_where_it_is_written() {
    let project = tiny_with("Fine.\n", None);
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    let cases = [
        (
            "See {{ fig(name=\"score\") }}.\n",
            None,
            "notes.md:1:8: error: no figure named \"score\"; figures: score-by-n, score-runs, score-order, ratios",
        ),
        (
            "A\n\nSee {{ table(name=\"results-nope\") }}.\n",
            None,
            "notes.md:3:8: error: no table named \"results-nope\"; tables: checks, results-score",
        ),
        (
            "As {{ cite(key=\"chen\") }} says.\n",
            Some(REFERENCES),
            "notes.md:1:7: error: no reference \"chen\" in references.bib; its keys: chen2016, odd, uncited",
        ),
        (
            "As {{ cite(key=\"chen2016\") }} says.\n",
            None,
            "notes.md:1:7: error: cite(key=\"chen2016\") needs a references file: put the BibTeX entries in experiments/tiny/references.bib",
        ),
        (
            "Fine.\n",
            Some("@misc{a, title = {x}}\n@misc{b,\n  title = {y}\n  year = 2020\n}\n"),
            "references.bib:4:3: expected comma",
        ),
    ];
    let dir = project.path("experiments/tiny");
    for (notes, references, want) in cases {
        std::fs::write(dir.join("notes.md"), notes).unwrap();
        let bib = dir.join("references.bib");
        match references {
            Some(text) => std::fs::write(&bib, text).unwrap(),
            None => {
                let _ = std::fs::remove_file(&bib);
            }
        }
        let out = project.lab_exits(&["report", "tiny"], Exit::Usage);
        assert_eq!(error_line(&out), want, "{notes}");
    }
}

#[test]
fn search_finds_a_word_of_every_committed_chapter_in_chromium() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let project = committed_project();
    project.lab_exits(&["book", "--quiet"], Exit::Ok);
    let browser = Browser {
        exe: chromium,
        scratch: project.path("chromium"),
    };
    let index = file_url(&project.path("book/book/index.html"));
    let words = [
        ("clock-ceiling", "hotspot"),
        ("false-sharing", "padded"),
        ("heap-order-effect", "nonius"),
        ("lockstack-dip", "lockstack"),
        ("openmp-row-add", "openmp"),
        ("spsc-queue-evolution", "spsc"),
    ];
    let names: Vec<&str> = words.iter().map(|(name, _)| *name).collect();
    assert_eq!(committed_experiments(), names);
    for (chapter, word) in words {
        let dom = Html::parse_document(&browser.dump_dom_of(&format!("{index}?search={word}")));
        let found: Vec<String> = select(&dom, "ul#mdbook-searchresults > li > a")
            .iter()
            .filter_map(|a| a.value().attr("href").map(String::from))
            .collect();
        assert!(
            found
                .iter()
                .any(|href| href.starts_with(&format!("{chapter}/index.html"))),
            "searching {word:?} finds no part of {chapter}: {found:?}"
        );
    }
}
