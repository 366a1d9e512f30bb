//! notes.md against what runs and commands print: a value in a Markdown link or image, an
//! `href` or a `src` reaches the page as inert text, never a `javascript:` or `data:` URL;
//! `| safe` cannot make it markup; a value where no escaping helps is refused at its place; a
//! template that loops, writes or spins without end stops at its budget; notes that are not
//! UTF-8 are an error at their first bad byte.

use super::{project_with, stderr};
use crate::common::Project;
use lab::Exit;
use std::time::{Duration, Instant};

/// U+2060 WORD JOINER, which lab puts before a colon that could end a URL scheme.
const WJ: &str = "\u{2060}";

/// (what a command printed, what notes.md shows of it): each a way to write a URL that runs
/// script or opens a page of its own.
const URL_PAYLOADS: [(&str, &str); 10] = [
    ("javascript:alert(1)", "javascript\u{2060}:alert(1)"),
    ("JaVaScRiPt:alert(2)", "JaVaScRiPt\u{2060}:alert(2)"),
    ("\u{1}javascript:alert(3)", " javascript\u{2060}:alert(3)"),
    (
        "java&#115;cript:alert(4)",
        "java&amp;#115;cript\u{2060}:alert(4)",
    ),
    ("javascript&#58;alert(5)", "javascript&amp;#58;alert(5)"),
    ("javascript%3Aalert(6)", "javascript%3Aalert(6)"),
    ("java\\script:alert(7)", "java\\\\script\u{2060}:alert(7)"),
    (
        "data:text/html,<script>alert(8)</script>",
        "data\u{2060}:text/html,&lt;script&gt;alert(8)&lt;/script&gt;",
    ),
    ("vbscript:msgbox(9)", "vbscript\u{2060}:msgbox(9)"),
    ("file:///etc/passwd", "file\u{2060}:///etc/passwd"),
];

/// Where notes.md can put a value that a browser reads as a URL, `V` standing for the value.
const URL_PLACES: [&str; 5] = [
    "[x](V)",
    "![x](V)",
    "<a href=\"V\">x</a>",
    "<img src=\"V\">",
    "<iframe src=\"V\"></iframe>",
];

/// Commands printed after the payloads: a scheme split in two, a web address, a relative one.
const SPLIT_SCHEME: [&str; 2] = ["javascript", ":alert(12)"];
const WEB_ADDRESS: &str = "https://example.org/report?a=1";
const RELATIVE_ADDRESS: &str = "docs/results.html#top";

/// A project whose session has run, with the manifest holding one version command per
/// output in `printed` (`manifest.versions[i].output`), and two variants answering
/// differently, one `<script>alert(90)</script>`, so that the checksum check quotes it.
fn session_printing(printed: &[&str]) -> Project {
    let versions: Vec<String> = printed
        .iter()
        .map(|p| {
            format!(
                "[\"printf\", \"%s\", {}]",
                serde_json::to_string(p).unwrap()
            )
        })
        .collect();
    let answer = |a: &str| {
        format!(
            "[\"sh\", \"-c\", \"sleep 0.2; echo '{{{{\\\"v\\\": 1, \\\"answer\\\": \\\"{a}\\\"}}}}'\", \"{{n}}\"]"
        )
    };
    let lab_toml = format!(
        r#"[experiment]
max_busy = "100%"
title = "notes"
hypothesis = "what runs print stays text"
repetitions = 3
seed = 1
timeout = "5s"
versions = [{}]

[params]
n = [1]

[[variant]]
name = "a"
run = {}

[[variant]]
name = "b"
run = {}

[metric.v]
json = "v"

[metric.answer]
json = "answer"
text = true

[[check]]
name = "same answer"
kind = "checksum"
metric = "answer"
"#,
        versions.join(", "),
        answer("<script>alert(90)</script>"),
        answer("b"),
    );
    let project = project_with("exp", &lab_toml, &[("notes.md", "Notes.\n")]);
    project.lab_exits(&["run", "exp", "--quiet"], Exit::CheckFailed);
    project
}

/// Writes notes.md and renders the chapter again from the stored session.
fn report_with(project: &Project, notes: &[u8], expected: Exit) -> std::process::Output {
    std::fs::write(project.path("experiments/exp/notes.md"), notes).unwrap();
    project.lab_exits(&["report", "exp", "--quiet"], expected)
}

const CHAPTER: &str = "book/src/exp/index.md";

/// The first error line lab printed.
fn error_line(out: &std::process::Output) -> String {
    stderr(out).lines().next().unwrap_or_default().to_string()
}

/// Notes that place every printed value in every URL place, and the chapter lines expected
/// of them.
fn url_notes() -> (String, Vec<String>) {
    let mut notes = String::from("NOTES-START\n\n");
    let mut expected = Vec::new();
    for (i, (_, inert)) in URL_PAYLOADS.iter().enumerate() {
        for (j, place) in URL_PLACES.iter().enumerate() {
            let value = format!("{{{{ manifest.versions[{i}].output }}}}");
            notes.push_str(&format!("P{i}.{j}: {}\n\n", place.replace('V', &value)));
            expected.push(format!("P{i}.{j}: {}", place.replace('V', inert)));
        }
    }
    let (split, web, relative) = (
        URL_PAYLOADS.len(),
        URL_PAYLOADS.len() + 2,
        URL_PAYLOADS.len() + 3,
    );
    notes.push_str(&format!(
        "Split: [x]({{{{ manifest.versions[{split}].output }}}}{{{{ manifest.versions[{}].output }}}})\n\n\
         Web: [report]({{{{ manifest.versions[{web}].output }}}}) <a href=\"{{{{ manifest.versions[{web}].output }}}}\">report</a>\n\n\
         Relative: [results]({{{{ manifest.versions[{relative}].output }}}})\n\n\
         Literal: <a href=\"https://lab.example/\">literal</a> <b>bold</b> <img src=\"score.svg\" alt=\"chart\">\n\n\
         NOTES-END\n",
        split + 1
    ));
    expected.extend([
        format!("Split: [x](javascript{WJ}:alert(12))"),
        "Web: [report](https://example.org/report?a=1) <a href=\"https://example.org/report?a=1\">report</a>".into(),
        "Relative: [results](docs/results.html#top)".into(),
        "Literal: <a href=\"https://lab.example/\">literal</a> <b>bold</b> <img src=\"score.svg\" alt=\"chart\">".into(),
    ]);
    (notes, expected)
}

/// Every URL of the rendered notes is inert or a web address, and the author's own HTML is
/// kept.
fn assert_inert(notes_html: &str) {
    let urls = url_attributes(notes_html);
    // Every place once, a Markdown image twice (the book draws it again to enlarge it), and the
    // six addresses after the payloads.
    let places = URL_PLACES.len() + 1;
    assert_eq!(urls.len(), URL_PAYLOADS.len() * places + 6, "{urls:#?}");
    let live: Vec<&String> = urls
        .iter()
        .filter(|u| !matches!(scheme(u).as_deref(), None | Some("http" | "https")))
        .collect();
    assert!(
        live.is_empty(),
        "URLs that run or open something: {live:#?}"
    );
    for kept in [
        "href=\"https://example.org/report?a=1\"",
        "href=\"docs/results.html#top\"",
        "href=\"https://lab.example/\"",
        "<b>bold</b>",
        "src=\"score.svg\"",
    ] {
        assert!(
            notes_html.contains(kept),
            "{kept} is gone from\n{notes_html}"
        );
    }
    assert!(
        notes_html.contains("alert(8)"),
        "the payload is shown as text"
    );
    assert!(!notes_html.contains("<script"), "{notes_html}");
}

#[test]
fn values_in_every_url_place_reach_the_page_as_inert_text() {
    let mut printed: Vec<&str> = URL_PAYLOADS.iter().map(|(p, _)| *p).collect();
    printed.extend(SPLIT_SCHEME);
    printed.extend([WEB_ADDRESS, RELATIVE_ADDRESS]);
    let project = session_printing(&printed);
    let (notes, expected) = url_notes();
    report_with(&project, notes.as_bytes(), Exit::Ok);
    let chapter = project.read(CHAPTER);
    for line in &expected {
        assert!(
            chapter.lines().any(|l| l == line),
            "missing {line:?} in\n{chapter}"
        );
    }

    project.lab_exits(&["book", "--quiet"], Exit::Ok);
    let page = project.read("book/book/exp/index.html");
    let notes_html = between(&page, "NOTES-START", "NOTES-END");
    assert_inert(notes_html);
}

#[test]
fn safe_cannot_make_run_output_markup_and_still_passes_the_authors_html() {
    let project = session_printing(&["<script>alert(91)</script> [v](javascript:alert(92))"]);
    let notes = "E: {{ check(name=\"same answer\", field=\"evidence\") | safe }}\n\n\
                 R: {{ check(name=\"same answer\", field=\"reading\") | safe }}\n\n\
                 V: {{ manifest.versions[0].output | safe }}\n\n\
                 U: {{ manifest.versions[0].output | upper | safe }}\n\n\
                 A: {{ \"<em>mine</em>\" | safe }} <span class=\"x\">also mine</span>\n";
    report_with(&project, notes.as_bytes(), Exit::Ok);
    let chapter = project.read(CHAPTER);
    let line = |prefix: &str| {
        chapter
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line in\n{chapter}"))
            .to_string()
    };
    assert_eq!(
        line("R: "),
        "R: run r0002 (b) printed answer b where most runs printed &lt;script&gt;alert(90)&lt;/script&gt;"
    );
    assert!(
        line("E: ")
            .contains("most runs printed &quot;&lt;script&gt;alert(90)&lt;/script&gt;&quot;"),
        "{}",
        line("E: ")
    );
    assert_eq!(
        line("V: "),
        format!("V: &lt;script&gt;alert(91)&lt;/script&gt; \\[v\\](javascript{WJ}:alert(92))")
    );
    assert_eq!(
        line("U: "),
        format!("U: &LT;SCRIPT&GT;ALERT(91)&LT;/SCRIPT&GT; \\[V\\](JAVASCRIPT{WJ}:ALERT(92))")
    );
    assert_eq!(
        line("A: "),
        "A: <em>mine</em> <span class=\"x\">also mine</span>"
    );
    project.lab_exits(&["book", "--quiet"], Exit::Ok);
    let page = project.read("book/book/exp/index.html");
    for live in [
        "<script>alert(9",
        "<SCRIPT",
        "href=\"javascript:",
        "href=\"JAVASCRIPT:",
    ] {
        assert!(!page.contains(live), "{live} is live on the page");
    }
    assert!(page.contains("<em>mine</em>"));
}

#[test]
fn values_where_no_escaping_helps_are_refused_at_their_place() {
    let project = session_printing(&["x onerror=alert(1)"]);
    let before = project.read(CHAPTER);
    let v = "{{ manifest.versions[0].output }}";
    let cases = [
        (
            format!("Fine.\n<img src={v}>\n"),
            "2:10: a value inside the `<img>` tag but outside quotes could add attributes; \
             write it in a quoted attribute, as in title=\"{{ … }}\"",
        ),
        (
            format!("<{v}>\n"),
            "1:2: a value right after `<` would name a tag; write `&lt;` for a `<` in the text",
        ),
        (
            format!("<b onclick=\"show('{v}')\">b</b>\n"),
            "1:19: a value in the `onclick` attribute of `<b>` would run as script; \
             values from runs cannot be code",
        ),
        (
            format!("<iframe srcdoc=\"{v}\"></iframe>\n"),
            "1:17: a value in the `srcdoc` attribute of `<iframe>` would be read as a page; \
             put it in the text instead",
        ),
        (
            format!("<script>\nconst tool = \"{v}\";\n</script>\n"),
            "2:15: a value inside `<script>` would be read as script; values from runs cannot be code",
        ),
    ];
    for (notes, expected) in cases {
        let out = report_with(&project, notes.as_bytes(), Exit::Usage);
        assert_eq!(
            error_line(&out),
            format!("error: exp: experiments/exp/notes.md:{expected}"),
            "{notes}"
        );
        assert_eq!(project.read(CHAPTER), before, "the chapter stays as it was");
    }
}

#[test]
fn nested_loops_stop_at_the_iteration_budget_naming_the_inner_loop() {
    let project = session_printing(&["tool 1.0"]);
    let before = project.read(CHAPTER);
    let notes = "Counting.\n{% for i in range(end=100000) %}\n  {%- for j in range(end=100000) %}{{ j }}{% endfor %}\n{% endfor %}\n";
    let started = Instant::now();
    let out = report_with(&project, notes.as_bytes(), Exit::Usage);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        error_line(&out),
        "error: exp: experiments/exp/notes.md:3:3: rendering stopped after 100,000 loop \
         iterations, the most notes.md may take (an inner loop counts its iterations in every \
         pass of the outer one)"
    );
    assert!(
        stderr(&out).contains(
            "hint: the session data is kept; fix the file named above and run `lab report`"
        )
    );
    assert_eq!(project.read(CHAPTER), before, "the chapter stays as it was");
}

#[test]
fn a_loop_writing_without_end_stops_at_the_output_budget() {
    let project = session_printing(&["tool 1.0"]);
    let before = project.read(CHAPTER);
    let line = "x".repeat(200);
    let notes = format!(
        "Writing.\n\n{{% for i in range(end=90000) %}}{line}{{{{ manifest.versions[0].output }}}}\n{{% endfor %}}\n"
    );
    let out = report_with(&project, notes.as_bytes(), Exit::Usage);
    assert_eq!(
        error_line(&out),
        "error: exp: experiments/exp/notes.md:3:1: rendering stopped at 4 MiB of text, the most notes.md may write"
    );
    assert_eq!(project.read(CHAPTER), before, "the chapter stays as it was");
}

#[test]
fn a_template_spinning_where_no_loop_counts_stops_at_the_time_budget() {
    let project = session_printing(&["tool 1.0"]);
    let before = project.read(CHAPTER);
    // List comprehensions have no body to count a step in: only the clock stops them.
    let notes = "{{ [i for i in range(end=100000) if [j for j in range(end=100000) if false]] }}\n";
    let started = Instant::now();
    let out = report_with(&project, notes.as_bytes(), Exit::Usage);
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(30),
        "{took:?}"
    );
    assert_eq!(
        error_line(&out),
        "error: exp: experiments/exp/notes.md: rendering stopped after 5 s, the longest notes.md may take"
    );
    assert_eq!(project.read(CHAPTER), before, "the chapter stays as it was");
}

#[test]
fn notes_that_are_not_utf8_are_an_error_at_their_first_bad_byte() {
    let project = session_printing(&["tool 1.0"]);
    let before = project.read(CHAPTER);
    let notes = b"# Notes\n\nCaf\xe9 au lait.\n";
    let out = report_with(&project, notes, Exit::Usage);
    assert_eq!(
        error_line(&out),
        "error: exp: experiments/exp/notes.md: not valid UTF-8 at byte 12; save it as UTF-8"
    );
    assert_eq!(project.read(CHAPTER), before, "the chapter stays as it was");
    // A session run with them seals them byte for byte, and says the same.
    let out = project.lab_exits(&["run", "exp", "--quiet"], Exit::Usage);
    assert!(
        stderr(&out).contains("experiments/exp/notes.md: not valid UTF-8 at byte 12"),
        "{}",
        stderr(&out)
    );
    let sealed = std::fs::read(project.session("exp").join("sealed/notes.md")).unwrap();
    assert_eq!(sealed, notes);
}

/// The part of `text` between two markers.
fn between<'t>(text: &'t str, start: &str, end: &str) -> &'t str {
    let from = text.find(start).expect("start marker") + start.len();
    let to = text[from..].find(end).expect("end marker") + from;
    &text[from..to]
}

/// Every `href` and `src` attribute value in an HTML text, as written.
fn url_attributes(html: &str) -> Vec<String> {
    let mut urls = Vec::new();
    for name in ["href=\"", "src=\""] {
        let mut rest = html;
        while let Some(i) = rest.find(name) {
            let after = &rest[i + name.len()..];
            let end = after.find('"').unwrap_or(after.len());
            urls.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    urls
}

/// The scheme a browser reads in an attribute's URL: character references decoded, leading
/// spaces and control characters dropped, tabs and newlines removed (WHATWG URL §4.4).
fn scheme(attribute: &str) -> Option<String> {
    let decoded = decode_references(attribute);
    let url: String = decoded
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let end = url.find(':')?;
    let scheme = &url[..end];
    let well_formed = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    well_formed.then(|| scheme.to_ascii_lowercase())
}

/// `&amp;`, `&colon;`, `&#NN;` and `&#xNN;` decoded, as an attribute value is.
fn decode_references(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let Some(end) = after.find(';') else {
            out.push('&');
            rest = after;
            continue;
        };
        let name = &after[..end];
        let decoded = match name {
            "amp" => Some('&'),
            "colon" => Some(':'),
            "quot" => Some('"'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            _ => name
                .strip_prefix("#x")
                .or_else(|| name.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &after[end + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn a_component_defined_in_the_notes_is_refused_at_its_line() {
    let project = session_printing(&["tool 1.0"]);
    let before = project.read(CHAPTER);
    let notes = "Intro.\n\n{% component card(title) %}<b>{{ title }}</b>{% endcomponent %}\n\n{{<card title=\"x\"/>}}\n";
    let out = report_with(&project, notes.as_bytes(), Exit::Usage);
    let line = error_line(&out);
    assert!(
        line.starts_with(
            "error: exp: experiments/exp/notes.md:3:1: notes do not define components"
        ),
        "{line}"
    );
    assert!(line.contains("{{ cell(...) }}"), "{line}");
    assert!(!stderr(&out).contains("budgeted"), "{}", stderr(&out));
    assert_eq!(project.read(CHAPTER), before, "the chapter stays as it was");
}

#[test]
fn a_ratio_of_computed_cells_is_refused_at_its_place_and_a_quoted_one_renders() {
    let project = session_printing(&["tool 1.0"]);
    let quoted = "Ratio: {{ ratio(a=\"a\", b=\"b\", stat=\"ratio\") | num }}.\n";
    report_with(&project, quoted.as_bytes(), Exit::Ok);
    assert!(
        project.read(CHAPTER).contains("Ratio: 1."),
        "{}",
        project.read(CHAPTER)
    );
    let before = project.read(CHAPTER);
    let computed = "Intro.\n\n{% set other = \"b\" %}x {{ ratio(a=\"a\", b=other) }}\n";
    let out = report_with(&project, computed.as_bytes(), Exit::Usage);
    let line = error_line(&out);
    assert!(
        line.starts_with(
            "error: exp: experiments/exp/notes.md:3:27: ratio(...) names its cells and metric in quoted strings"
        ),
        "{line}"
    );
    assert_eq!(project.read(CHAPTER), before, "the chapter stays as it was");
}

#[test]
fn a_value_doubled_in_a_loop_stops_at_the_memory_budget() {
    let project = session_printing(&["tool 1.0"]);
    let before = project.read(CHAPTER);
    // Forty doublings would hold a terabyte: the budget stops the loop a few passes past
    // 64 MiB, long before the allocator would fail and end lab.
    let notes = "Doubling.\n\n{% set_global s = \"x\" %}{% for i in range(end=40) %}{% set_global s = s ~ s %}{% endfor %}{{ s | length }}\n";
    let out = report_with(&project, notes.as_bytes(), Exit::Usage);
    assert_eq!(
        error_line(&out),
        "error: exp: experiments/exp/notes.md:3:25: rendering stopped holding over 64 MiB, the most notes.md may hold"
    );
    assert_eq!(project.read(CHAPTER), before, "the chapter stays as it was");
}

#[test]
fn one_filter_writing_a_terabyte_stops_before_it_asks_and_lab_says_so() {
    let project = session_printing(&["tool 1.0"]);
    let before = project.read(CHAPTER);
    // 100,000 pieces joined by a 10-megabyte text: one request for a terabyte, which the
    // allocator would fail, ending lab. No loop step comes between.
    let long = "{% set s = range(end=100000) | join(sep=\"0123456789\") %}";
    for filter in ["join(sep=s)", "join(sep=\"9\") | replace(from=\"9\", to=s)"] {
        let notes = format!("Joined.\n\n{long}{{{{ range(end=100000) | {filter} | length }}}}\n");
        let out = report_with(&project, notes.as_bytes(), Exit::Usage);
        let line = error_line(&out);
        assert!(
            line.starts_with(
                "error: exp: experiments/exp/notes.md: rendering stopped when one step asked for "
            ),
            "{filter}: {line}"
        );
        assert!(
            line.contains("MiB at once, past the 256 MiB notes.md may hold"),
            "{filter}: {line}"
        );
        assert_eq!(project.read(CHAPTER), before, "the chapter stays as it was");
    }
}

/// For notes.md and references.bib in turn, a FIFO in its place: `lab ARGS` must end at once
/// with exit 2 and the error `prefix` followed by the file's name and why, and `unchanged` must
/// hold after.
fn each_fifo_refused(project: &Project, args: &[&str], prefix: &str, unchanged: &dyn Fn() -> bool) {
    for name in ["references.bib", "notes.md"] {
        let path = project.path(&format!("experiments/exp/{name}"));
        let _ = std::fs::remove_file(&path);
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo {name}");
        let started = Instant::now();
        let out = project.lab_exits(args, Exit::Usage);
        assert!(started.elapsed() < Duration::from_secs(30), "{name}");
        assert_eq!(
            error_line(&out),
            format!(
                "error: {prefix}experiments/exp/{name}: it is a FIFO, not a regular file; put \
                 the file itself there"
            )
        );
        assert!(
            unchanged(),
            "{args:?} with a FIFO for {name} changed what it must not"
        );
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn a_fifo_for_notes_or_references_is_an_error_at_once_not_a_wait_for_a_writer() {
    let project = session_printing(&["tool 1.0"]);
    let before = project.read(CHAPTER);
    let chapter_kept = || project.read(CHAPTER) == before;
    each_fifo_refused(
        &project,
        &["report", "exp", "--quiet"],
        "exp: ",
        &chapter_kept,
    );
}

#[test]
fn lab_run_refuses_a_fifo_for_notes_or_references_before_any_run() {
    let project = session_printing(&["tool 1.0"]);
    let sessions = || std::fs::read_dir(project.path("data/exp")).unwrap().count();
    let before = sessions();
    let no_session = || sessions() == before;
    each_fifo_refused(&project, &["run", "exp", "--quiet"], "", &no_session);
}
