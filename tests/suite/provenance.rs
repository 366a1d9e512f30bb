//! Every number a chapter links leads to where it comes from: the provenance page holds an
//! anchor for each link of the committed chapters, read from the built HTML through a parser,
//! and `lab explain` computes a number again and says whether the chapter printed it.

use crate::committed::{committed_experiments, committed_project, committed_tree, repository};
use crate::common::Project;
use lab::Exit;
use lab::layout::Layout;
use scraper::{Html, Selector};
use std::collections::BTreeSet;

/// The `href`s of `page`'s links that go to its chapter's provenance page, and the ids the
/// provenance page's anchors carry.
fn links_and_anchors(chapter: &std::path::Path) -> (Vec<String>, BTreeSet<String>) {
    let read =
        |name: &str| Html::parse_document(&std::fs::read_to_string(chapter.join(name)).unwrap());
    let (page, provenance) = (read("index.html"), read("provenance.html"));
    let links = page
        .select(&Selector::parse("a[href]").unwrap())
        .filter_map(|a| a.value().attr("href"))
        .filter_map(|href| href.strip_prefix("provenance.html#"))
        .map(String::from)
        .collect();
    let anchors = provenance
        .select(&Selector::parse("a[id]").unwrap())
        .filter_map(|a| a.value().attr("id"))
        .map(String::from)
        .collect();
    (links, anchors)
}

/// Each link to the provenance page with its text, whitespace made single spaces.
fn linked_texts(page: &Html) -> Vec<(String, String)> {
    page.select(&Selector::parse("a[href]").unwrap())
        .filter_map(|a| {
            let id = a.value().attr("href")?.strip_prefix("provenance.html#")?;
            let text = a.text().collect::<String>();
            Some((
                id.to_string(),
                text.split_whitespace().collect::<Vec<_>>().join(" "),
            ))
        })
        .collect()
}

/// The texts of `page`'s main content outside links, code, figures and folded details: where
/// a number with an interval would be one the reader cannot trace.
fn unlinked_texts(page: &Html) -> Vec<String> {
    let main = page
        .select(&Selector::parse("main").unwrap())
        .next()
        .unwrap();
    main.descendants()
        .filter_map(|node| {
            let text = node.value().as_text()?;
            let hidden = node.ancestors().any(|a| {
                a.value().as_element().is_some_and(|e| {
                    matches!(
                        e.name(),
                        "a" | "code" | "figure" | "svg" | "details" | "pre"
                    )
                })
            });
            (!hidden).then(|| text.to_string())
        })
        .collect()
}

/// The numbers of a chapter's numbers.json by id.
fn numbers_of(path: &std::path::Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    json["numbers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap().to_string(), n.clone()))
        .collect()
}

#[test]
fn every_link_of_every_committed_chapter_finds_its_number() {
    let project = Project::with_fixtures(&[]);
    committed_tree("book", &project.path("book"));
    let _ = std::fs::remove_dir_all(project.path("book/book"));
    lab::app::build_html(&Layout::new(project.root())).unwrap();
    for name in committed_experiments() {
        let (links, anchors) = links_and_anchors(&project.path(&format!("book/book/{name}")));
        assert!(links.len() >= 20, "{name}: only {} links", links.len());
        let dangling: Vec<&String> = links.iter().filter(|l| !anchors.contains(*l)).collect();
        assert!(
            dangling.is_empty(),
            "{name}: links to no number: {dangling:?}"
        );
        let numbers: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(project.path(&format!("book/src/{name}/numbers.json")))
                .unwrap(),
        )
        .unwrap();
        let ids: BTreeSet<String> = numbers["numbers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            anchors, ids,
            "{name}: the page has an anchor for each number, no other"
        );
        each_link_shows_its_number(&project, &name);
    }
}

/// Whether `text` shows the number `value` at the fewer digits it prints, as notes print a
/// statistic with `num(digits=…)` or `percent(digits=…)`: "11%" or "0.11" of a CV of "11.4%",
/// "0.0388" of "0.0388 s". Both are rounded, so they may differ by half a unit of the last
/// digit of each.
fn rounds_to(text: &str, value: &str) -> bool {
    let number = |s: &str| -> Option<(f64, f64)> {
        let digits = regex::Regex::new(r"-?\d+(\.\d+)?")
            .unwrap()
            .find(s)?
            .as_str();
        let decimals = digits.split_once('.').map_or(0, |(_, d)| d.len());
        Some((digits.parse().ok()?, 10f64.powi(-(decimals as i32))))
    };
    let (Some((shown, shown_unit)), Some((full, full_unit))) = (number(text), number(value)) else {
        return false;
    };
    let percent = if value.contains('%') && !text.contains('%') {
        100.0
    } else {
        1.0
    };
    (shown - full / percent).abs() <= (shown_unit + full_unit / percent) / 2.0 + 1e-12
}

/// Every link's text shows the number it leads to (its interval's bounds where it shows an
/// interval), but for the check rows' "how the ratio was computed"; and no number with an
/// interval is left unlinked in the chapter's text.
fn each_link_shows_its_number(project: &Project, name: &str) {
    let page = Html::parse_document(&project.read(&format!("book/book/{name}/index.html")));
    let numbers = numbers_of(&project.path(&format!("book/src/{name}/numbers.json")));
    for (id, text) in linked_texts(&page) {
        if text == "how the ratio was computed" {
            continue;
        }
        let n = &numbers[&id];
        // A median the comparison shows without its interval, an order-statistic interval
        // shown without its median: what the text holds of the number must be the number's.
        let shown: Vec<&str> = match (n["lo"].as_str(), n["hi"].as_str()) {
            (Some(lo), Some(hi)) if text.contains('[') => vec![lo, hi],
            _ => vec![n["value"].as_str().unwrap()],
        };
        assert!(
            shown.iter().all(|s| text.contains(s)) || rounds_to(&text, shown[0]),
            "{name}: the link to {id} reads {text:?}, not {shown:?}"
        );
    }
    let interval = regex::Regex::new(r"\d \[-?[\d.]+ ?[kMGTmµn]?, -?[\d.]+ ?[kMGTmµn]?\]").unwrap();
    let unlinked: Vec<String> = unlinked_texts(&page)
        .into_iter()
        .filter(|t| interval.is_match(t))
        .collect();
    assert!(
        unlinked.is_empty(),
        "{name}: numbers with an interval and no link: {unlinked:#?}"
    );
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn lab_explain_computes_a_number_again_and_compares_it_with_the_chapter() {
    let project = Project::with_fixtures(&["tiny"]);
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    let id = "triple-n-2.score.median";
    let out = project.lab_exits(&["explain", "tiny", id], Exit::Ok);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "triple-n-2.score.median: 6.00 [6.00, 6.00] points"
    );
    assert_eq!(lines[1], "  what:   triple n=2, score, median");
    assert!(
        lines[2]
            .starts_with("  from:   the 3 valid, non-warm-up runs of triple n=2 in runs.csv (r"),
        "{text}"
    );
    assert!(
        lines[3]
            .contains("percentile bootstrap interval resampling runs, 10,000 resamples, seed 3"),
        "{text}"
    );
    assert!(lines[4].ends_with(": 6.00 [6.00, 6.00]"), "{text}");
    assert_eq!(lines[5], "the chapter prints: the same");

    // A chapter whose number no longer reads as computed.
    let numbers = project.path("book/src/tiny/numbers.json");
    let edited = std::fs::read_to_string(&numbers).unwrap().replacen(
        "\"value\": \"6.00\"",
        "\"value\": \"6.50\"",
        1,
    );
    std::fs::write(&numbers, edited).unwrap();
    let out = project.lab_exits(&["explain", "tiny", id], Exit::CheckFailed);
    assert!(
        stdout(&out).ends_with("the chapter prints: 6.50 [6.00, 6.00]: it differs\n"),
        "{}",
        stdout(&out)
    );

    // One side of a check's ratio, as the check read it.
    let side = "check.triple-beats-double-by-at-least-1-4-at-n-2.a";
    let out = project.lab_exits(&["explain", "tiny", side], Exit::Ok);
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!("{side}: 6.00 points\n  what:   triple n=2, score, median as check \"triple beats double by at least 1.4 at n=2\" read it (a)\n")),
        "{text}"
    );
    assert!(text.ends_with("the chapter prints: the same\n"), "{text}");

    let out = project.lab_exits(&["explain", "tiny", "triple-n-2.scor"], Exit::Usage);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "tiny has no number triple-n-2.scor\n  hint: ids of that cell: triple-n-2.score.median, triple-n-2.score.mean"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_chapter_links_its_numbers_and_summary_lists_the_provenance_page() {
    let project = Project::with_fixtures(&["tiny"]);
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    let summary = project.read("book/src/SUMMARY.md");
    assert!(
        summary.contains("  - [Where each number comes from](tiny/provenance.md)"),
        "{summary}"
    );
    let page = project.read("book/src/tiny/index.md");
    assert!(
        page.contains("[6.00 \\[6.00, 6.00\\]](provenance.md#triple-n-2.score.median)"),
        "{page}"
    );
    assert!(
        page.contains("<small>[how the ratio was computed](provenance.md#check.triple-beats-double-by-at-least-1-4-at-n-2.ratio)</small>"),
        "{page}"
    );
}

/// The runs of `cell` a check of the committed lockstack-dip session read, in the cell's
/// order: those of the check's runs (analysis.json) that are the cell's.
fn runs_the_check_read(analysis: &serde_json::Value, check: &str, cell: &str) -> Vec<String> {
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let check = analysis["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == check)
        .unwrap();
    let read = strings(&check["runs"]);
    let cell = analysis["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["label"] == cell && c["metric"] == "mops")
        .unwrap();
    strings(&cell["run_ids"])
        .into_iter()
        .filter(|id| read.contains(id))
        .collect()
}

/// The provenance page's row of the number `id`.
fn row_of(provenance: &str, id: &str) -> String {
    provenance
        .lines()
        .find(|l| l.contains(&format!("<a id=\"{id}\"></a>")))
        .unwrap_or_else(|| panic!("no row for {id}"))
        .to_string()
}

/// A file of lockstack-dip's chapter as the repository's last commit holds it: the README's
/// main command rewrites the working tree's chapter with a session of its own, whose figures
/// are not these.
fn committed_chapter_file(name: &str) -> String {
    let path = format!("book/src/lockstack-dip/{name}");
    let shown = std::process::Command::new("git")
        .args(["show", &format!("HEAD:{path}")])
        .current_dir(repository())
        .output();
    match shown {
        Ok(out) if out.status.success() => String::from_utf8(out.stdout).unwrap(),
        _ => std::fs::read_to_string(repository().join(path)).unwrap(),
    }
}

#[test]
fn a_check_decided_at_an_early_look_links_the_medians_and_runs_of_that_look() {
    let read = committed_chapter_file;
    let (page, provenance) = (read("index.md"), read("provenance.md"));
    let analysis: serde_json::Value = serde_json::from_str(&read("analysis.json")).unwrap();
    let check = "non-fair at 2 threads is under half of 1 thread";
    let id = "check.non-fair-at-2-threads-is-under-half-of-1-thread";
    // The row prints each cell's median at the look the check was decided at (look 1: 5 runs
    // a cell), not the session's final median, and links each to its own number.
    assert!(
        page.contains(&format!(
            "a = nonfair threads=2 = [13.5](provenance.md#{id}.a) Mops/s, b = nonfair threads=1 = [50.9](provenance.md#{id}.b) Mops/s"
        )),
        "{page}"
    );
    let a = runs_the_check_read(&analysis, check, "nonfair threads=2");
    let b = runs_the_check_read(&analysis, check, "nonfair threads=1");
    assert_eq!((a.len(), b.len()), (5, 5), "the look's runs: {a:?} {b:?}");
    let from = |cell: &str, runs: &[String]| {
        format!(
            "the 5 valid, non-warm-up runs of {cell} in runs.csv ({})",
            runs.join(", ")
        )
    };
    let row = |suffix: &str| row_of(&provenance, &format!("{id}.{suffix}"));
    assert!(row("a").starts_with(&format!("| <a id=\"{id}.a\"></a>13.5 Mops/s |")));
    assert!(
        row("a").contains(&from("nonfair threads=2", &a)),
        "{}",
        row("a")
    );
    assert!(
        row("b").contains(&from("nonfair threads=1", &b)),
        "{}",
        row("b")
    );
    let ratio = row("ratio");
    assert!(
        ratio.contains(&format!(
            "From {}; over {}.",
            from("nonfair threads=2", &a),
            from("nonfair threads=1", &b)
        )),
        "the ratio names the runs it was computed from: {ratio}"
    );
}

#[test]
fn statistics_the_notes_ask_for_link_to_the_numbers_they_print() {
    let page = committed_chapter_file("index.md");
    // `cell(of="nonfair threads=2", stat="cv") | percent(digits=2)`, then `stat="n" | num`: the
    // CV the results table prints as 11.4%, at the notes' two digits, and the runs counted.
    assert!(
        page.contains(
            "(CV [11%](provenance.md#nonfair-threads-2.mops.cv) over\n[27](provenance.md#nonfair-threads-2.mops.runs) runs)"
        ),
        "{page}"
    );
    let numbers = committed_chapter_file("numbers.json");
    assert!(
        numbers.contains("\"id\": \"nonfair-threads-2.mops.cv\",\n      \"value\": \"11.4%\""),
        "{numbers}"
    );
}

#[test]
fn a_drift_the_results_table_reports_links_its_slope_and_test() {
    let (page, provenance) = (
        committed_chapter_file("index.md"),
        committed_chapter_file("provenance.md"),
    );
    let id = "spin-threads-3.mops.drift";
    assert!(
        page.contains(&format!(
            "drift: [-0.00609](provenance.md#{id}) per run position (Mann–Kendall p = 0.030)"
        )),
        "{page}"
    );
    let row = row_of(&provenance, id);
    assert!(
        row.contains("-0.00609 Mops/s per run position")
            && row.contains("Theil–Sen slope")
            && row.contains("S = -105, z = -2.17, p = 0.030"),
        "{row}"
    );
}

#[test]
fn the_readings_and_the_multiplicity_sentence_link_the_figures_they_name() {
    let read = committed_chapter_file;
    let (page, provenance) = (read("index.md"), read("provenance.md"));
    let id = "check.non-fair-at-2-threads-is-under-half-of-1-thread";
    // The reading links the estimate it names without its interval.
    assert!(
        page.contains(&format!(
            "nonfair threads=2 is [0.265](provenance.md#{id}.ratio)× nonfair threads=1"
        )),
        "{page}"
    );
    // A cell with two modes links each mode's median where the stable check names it.
    assert!(
        page.contains("60.0% of runs at [20.9](provenance.md#treiber-threads-4.mops.mode-low) Mops/s and 40.0% of runs at [35.7](provenance.md#treiber-threads-4.mops.mode-high) Mops/s"),
        "{page}"
    );
    // The multiplicity sentence's three figures: 7 decided hypotheses, α = 5%.
    assert!(
        page.contains("up to [35.0%](provenance.md#multiplicity.bonferroni) ([30.2%](provenance.md#multiplicity.sidak) if they are independent); to hold it at 5% for the whole set, read each at [99.3%](provenance.md#multiplicity.per-check) confidence"),
        "{page}"
    );
    assert!(
        row_of(&provenance, "multiplicity.bonferroni")
            .contains("k × α with α = 5.0% and k = 7, at most 100%"),
        "{provenance}"
    );
}

#[test]
fn each_look_s_level_the_history_and_the_undisturbed_bounds_link_their_figures() {
    let read = committed_chapter_file;
    let (page, provenance) = (read("index.md"), read("provenance.md"));
    // Each look's level: look 2 spent α(8/40) − α(5/40) of α = 5% by the Pocock-type function,
    // 0.504%, so it read its intervals at 99.5%.
    let spent = |t: f64| 0.05 * (1.0 + (std::f64::consts::E - 1.0) * t).ln();
    let level = 1.0 - (spent(8.0 / 40.0) - spent(5.0 / 40.0));
    assert!((level - 0.99496).abs() < 1e-5, "{level}");
    assert!(
        page.contains("| 2 | 8 | [99.5%](provenance.md#sampling.look-2.level) |"),
        "{page}"
    );
    assert!(
        row_of(&provenance, "sampling.look-2.level")
            .contains("t = 8/40 the runs per cell by this look over the most the session could take, and t′ = 5/40"),
        "{provenance}"
    );
    // The History page links each session's median of each cell.
    let history = read("history.md");
    assert!(
        history.contains("| nonfair threads=1 | 1: [57.5](provenance.md#history.nonfair-threads-1.mops.session-1), 2: [56.0](provenance.md#history.nonfair-threads-1.mops.session-2) | none |"),
        "{history}"
    );
    assert!(
        row_of(&provenance, "history.nonfair-threads-1.mops.session-1")
            .contains("From the 27 valid, non-warm-up runs of nonfair threads=1 in session 20261130T081716Z-vm"),
        "{provenance}"
    );
    // A verdict the machine's waiting cannot explain links the bounds its ratio keeps
    // undisturbed.
    let spin = "check.the-spin-lock-shows-no-dip-2-threads-at-least-0-9-of-3-threads";
    assert!(
        page.contains(&format!("undisturbed the ratio lies within [\\[0.924, 1.04\\]](provenance.md#{spin}.undisturbed)")),
        "{page}"
    );
    assert!(
        row_of(&provenance, &format!("{spin}.undisturbed")).contains(
            "each run&#39;s value moved to the end of the range its waiting for a CPU allows"
        ),
        "{provenance}"
    );
}

/// The committed lockstack-dip session reported afresh: the project, its chapter and its
/// provenance page. The session is named: the README's main command adds a later one.
fn lockstack_reported() -> (Project, String, String) {
    let project = committed_project();
    let session = ["--session", "20261206T075049Z-vm"];
    let args = [&["report", "lockstack-dip", "--quiet"][..], &session[..]].concat();
    project.lab_exits(&args, Exit::Ok);
    let page = project.read("book/src/lockstack-dip/index.md");
    let provenance = project.read("book/src/lockstack-dip/provenance.md");
    (project, page, provenance)
}

/// What `lab explain lockstack-dip ID` prints, once it exits 0.
fn explained(project: &Project, id: &str) -> String {
    stdout(&project.lab_exits(&["explain", "lockstack-dip", id], Exit::Ok))
}

/// The order check's folded statistics link each test's statistic, p-value and Holm-adjusted
/// p-value; `lab explain` computes them again from the committed session's raw files.
#[test]
fn the_order_checks_statistics_link_to_their_tests_and_compute_again() {
    let (project, page, provenance) = lockstack_reported();
    let id = "check.throughput-depends-neither-on-run-order-nor-on-the-previous-run";
    let link = |figure: &str, number: &str| format!("[{number}](provenance.md#{id}.{figure})");
    let details = format!(
        "carry-over: Kruskal–Wallis by the previous run&#39;s variant H = {}, df = 3, p = {} (Holm-adjusted {})",
        link("carry-over.h", "6.96"),
        link("carry-over.p", "0.073"),
        link("carry-over.adjusted-p", "0.37"),
    );
    assert!(page.contains(&details), "{page}");
    for figure in ["trend", "within-cells", "sequence", "first-of-cell"] {
        for what in ["p", "adjusted-p"] {
            let target = format!("(provenance.md#{id}.{figure}.{what})");
            assert!(page.contains(&target), "{figure}.{what}");
        }
    }
    let row = row_of(&provenance, &format!("{id}.carry-over.adjusted-p"));
    assert!(
        row.contains(
            "Holm&#39;s step-down adjustment (Holm 1979) of the p-values of the 5 tests that ran"
        ) && row.contains("From the 296 valid, non-warm-up runs of mops"),
        "{row}"
    );
    let out = explained(&project, &format!("{id}.carry-over.adjusted-p"));
    assert!(
        out.contains("session 20261206T075049Z-vm: 0.37\nthe chapter prints: the same"),
        "{out}"
    );
}

/// A figure of a check's statistics, traced: the chapter's text shows `linked`, the
/// provenance row of `id` holds `method`, and `lab explain` computes it again as `value`.
struct Traced<'a> {
    id: &'a str,
    linked: &'a str,
    method: &'a str,
    value: &'a str,
}

fn assert_traced((project, page, provenance): &(Project, String, String), t: Traced) {
    assert!(page.contains(t.linked), "{}\n{page}", t.linked);
    let row = row_of(provenance, t.id);
    assert!(row.contains(t.method), "{row}");
    let out = explained(project, t.id);
    let computed = format!(": {}\nthe chapter prints: the same", t.value);
    assert!(out.contains(&computed), "{out}");
}

/// The stable check's folded statistics link its worst cell's CV, dip and critical dip.
#[test]
fn the_stable_checks_statistics_link_to_their_methods_and_compute_again() {
    let stable = "check.runs-of-a-cell-vary-under-25-with-no-second-mode.worst";
    assert_traced(
        &lockstack_reported(),
        Traced {
            id: &format!("{stable}.critical"),
            linked: &format!(
                "worst treiber threads=4: CV [29.4%](provenance.md#{stable}.cv) over 5 runs, dip [0.193](provenance.md#{stable}.dip) &gt; critical [0.186](provenance.md#{stable}.critical) (n = 5)"
            ),
            method: "The 0.95 quantile of the dip of 5 values drawn uniformly",
            value: "0.186",
        },
    );
}

/// The passing automatic checks' folded statistics link the parallel check's nearest pair:
/// its gain with the interval, and the gain in CPUs it is held against.
#[test]
fn the_parallel_checks_nearest_gain_links_with_its_interval_and_computes_again() {
    let id = "check.no-speed-up-beyond-the-cpus-the-runs-used.nearest";
    assert_traced(
        &lockstack_reported(),
        Traced {
            id: &format!("{id}.gain"),
            linked: &format!(
                "the nearest: nonfair threads=4: threads=1 → threads=4 ×[0.779 \\[0.691, 0.915\\]](provenance.md#{id}.gain) on ×[1.08](provenance.md#{id}.cpu-gain) CPU</details>"
            ),
            method: "The median of mops of nonfair threads=4 over that of nonfair threads=1 (higher mops is better)",
            value: "0.779 [0.691, 0.915]",
        },
    );
}
