//! What runs print and what lab.toml says, published: every payload reaches the site as text,
//! never as a tag, a script or a `javascript:` link, and never as an escape sequence on the
//! terminal.

use super::{files_containing, project_with, stdout};
use lab::Exit;

/// A run printing `answer` for variant `a` and `b`, with payloads in every place lab.toml can
/// hold text.
fn hostile_experiment() -> (String, String) {
    let lab_toml = r#"[experiment]
max_busy = "100%"
title = "Payloads [t](javascript:alert(1))"
hypothesis = "<script>alert(2)</script> and [h](javascript:alert(3))"
repetitions = 3
seed = 1
timeout = "5s"
versions = [["sh", "-c", "echo '<script>alert(4)</script> [v](javascript:alert(5))'"]]

[params]
mode = ["[p](javascript:alert(6))"]

[[variant]]
name = "a"
label = "[l](javascript:alert(7)) <b onmouseover=alert(8)>"
run = ["sh", "-c", "sleep 0.2; echo '{{\"v\": 1, \"answer\": \"<script>alert(9)</script>\\u001b[2J\\u001b]0;owned\\u0007\"}}'", "{mode}"]

[[variant]]
name = "b"
run = ["sh", "-c", "sleep 0.2; echo '{{\"v\": 1, \"answer\": \"[x](javascript:alert(10)) ![i](javascript:alert(11)) <javascript:alert(12)> <img src=x onerror=alert(13)>\"}}'", "{mode}"]

[metric.v]
json = "v"
unit = "<script>alert(14)</script>"

[metric.answer]
json = "answer"
text = true

[[check]]
name = "same answer [c](javascript:alert(15))"
kind = "checksum"
metric = "answer"
"#;
    let notes = "Evidence: {{ check(name=\"same answer [c](javascript:alert(15))\", field=\"evidence\") }}.\n\
                 Reading: {{ check(name=\"same answer [c](javascript:alert(15))\", field=\"reading\") }}.\n\
                 Tool: {{ manifest.versions[0].output }}.\n\
                 Cell: {{ cell(of=\"a\") }}.\n";
    (lab_toml.to_string(), notes.to_string())
}

/// Payload markers that must never appear live in the book's text files: pages, charts,
/// analysis.json, scripts, styles. (The raw CSV copies are the runs' data, byte for byte as
/// stored, served as text/csv: the one place run output stays as printed.)
const LIVE: [&str; 8] = [
    "<script>alert(",
    "href=\"javascript:",
    "src=\"javascript:",
    "href='javascript:",
    "<img src=x",
    "<b onmouseover",
    "<javascript:alert",
    "\u{1b}",
];

#[test]
fn payloads_in_output_and_lab_toml_reach_the_site_as_text_only() {
    let (lab_toml, notes) = hostile_experiment();
    let project = project_with("exp", &lab_toml, &[("notes.md", &notes)]);
    // The two variants answer differently, so the checksum check fails.
    project.lab_exits(&["run", "exp", "--quiet"], Exit::CheckFailed);
    let out = project.lab_exits(&["book", "--quiet"], Exit::Ok);
    assert!(out.status.success());
    let page = project.read("book/book/exp/index.html");
    // Every payload is on the page, as text.
    for visible in [
        "alert(9)",
        "alert(10)",
        "alert(4)",
        "alert(2)",
        "alert(15)",
        "alert(14)",
        "alert(1)",
    ] {
        assert!(page.contains(visible), "{visible} is missing from the page");
    }
    let mut live = Vec::new();
    for marker in LIVE {
        for file in files_containing(&project.path("book"), marker.as_bytes()) {
            let text = [".md", ".html", ".svg", ".json", ".js", ".css", ".toml"];
            // The search index holds each page's text as data, which mdBook's searcher escapes
            // before showing it; its breadcrumbs are checked below.
            let search_index = file.contains("/searchindex-");
            if text.iter().any(|ext| file.ends_with(ext)) && !search_index {
                live.push(format!("{marker:?} in {file}"));
            }
        }
    }
    assert!(live.is_empty(), "live payloads:\n{}", live.join("\n"));
    let shown = search_breadcrumbs(&project.path("book/book"));
    assert!(
        shown.iter().any(|b| b.contains("&lt;script&gt;alert(14)")),
        "{shown:?}"
    );
    assert!(!shown.iter().any(|b| b.contains('<')), "{shown:?}");
    // The title with a Markdown link still makes a readable SUMMARY.
    assert!(project.read("book/book/index.html").contains("Payloads"));
}

#[test]
fn escape_sequences_never_reach_the_terminal() {
    let (lab_toml, notes) = hostile_experiment();
    let project = project_with("exp", &lab_toml, &[("notes.md", &notes)]);
    let run = project.lab(&["run", "exp"]);
    let check = project.lab(&["check", "exp"]);
    for out in [&run, &check] {
        assert!(
            !out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b),
            "raw ESC on the terminal"
        );
        assert!(!out.stdout.contains(&0x07), "raw BEL on the terminal");
    }
    assert!(stdout(&check).contains("same answer"));
}

/// The breadcrumbs and titles of the site's search index, which mdBook's searcher puts on the
/// page as they are.
fn search_breadcrumbs(site: &std::path::Path) -> Vec<String> {
    let index = std::fs::read_dir(site)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("searchindex-"))
        .expect("a search index")
        .path();
    let text = std::fs::read_to_string(index).unwrap();
    let value = lab::render::search_index::parse(&text).unwrap();
    value["index"]["documentStore"]["docs"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|d| [d["breadcrumbs"].as_str(), d["title"].as_str()])
        .flatten()
        .map(String::from)
        .collect()
}
