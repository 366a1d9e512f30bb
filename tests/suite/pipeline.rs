//! End to end: `lab run` on small fixture experiments in a temporary project, then the stored
//! CSV, the verdicts and the written chapter.

use crate::common;
use lab::Exit;

use common::{Project, csv_rows, tree, verdicts};

/// A row of runs.csv by column.
type Row = std::collections::BTreeMap<String, String>;

/// 2 variants × 2 values of n × (1 warm-up + 3 repetitions), one row per process, each with
/// the score it printed: FACTOR × n.
fn assert_stored(session: &std::path::Path) {
    let runs = csv_rows(&session.join("runs.csv"));
    assert_eq!(runs.len(), 16);
    assert_eq!(runs.iter().filter(|r| r["warmup"] == "true").count(), 4);
    assert!(
        runs.iter()
            .all(|r| r["exit_code"] == "0" && r["samples"] == "2" && r["timed_out"] == "false")
    );
    let positions: Vec<usize> = runs
        .iter()
        .map(|r| r["position"].parse().unwrap())
        .collect();
    assert_eq!(positions, (1..=16).collect::<Vec<_>>());
    assert!(
        runs.iter()
            .all(|r| r["wall_ns"].parse::<u64>().unwrap() > 0)
    );

    // Every run printed its score: FACTOR × n.
    let samples = csv_rows(&session.join("samples.csv"));
    for run in &runs {
        let expected = match (run["variant"].as_str(), run["n"].as_str()) {
            ("double", "1") => "2",
            ("double", "2") => "4",
            ("triple", "1") => "3",
            _ => "6",
        };
        let score: Vec<&str> = samples
            .iter()
            .filter(|s| s["run_id"] == run["run_id"] && s["metric"] == "score")
            .map(|s| s["value"].as_str())
            .collect();
        assert_eq!(score, vec![expected], "run {}", run["run_id"]);
    }
}

/// The chapter opens with the answer, shows the evidence, the results and a chart, and is in
/// the book's summary.
fn assert_rendered(project: &Project) {
    let page = crate::common::unlinked(&project.read("book/src/tiny/index.md"));
    assert!(page.contains("| <span class=\"lab-verdict lab-pass\">pass</span> | **triple beats double by at least 1.4 at n=2**<br><small>hypothesis, compare</small> |"), "{page}");
    assert!(page.contains(
        "| <span class=\"lab-verdict lab-fail\">fail</span> | **double beats triple at n=1**"
    ));
    assert!(
        page.contains("<li><span class=\"lab-verdict lab-pass\">pass</span> <strong>triple beats double by at least 1.4 at n=2</strong>: 1.50 [1.50, 1.50] (95% CI); needs a/b &gt; 1.40</li>"),
        "the answer block opens the chapter with each hypothesis:\n{page}"
    );
    assert!(
        page.find("lab-answer") < page.find("## Checks"),
        "the answer comes before the checks"
    );
    assert!(
        page.contains("a/b = 1.50 \\[1.50, 1.50\\]"),
        "the evidence shows the ratio and its CI"
    );
    assert!(
        page.contains(
            "| triple | 2 | 6.00 \\[6.00, 6.00\\] | 6.00 \\[6.00, 6.00\\] | 0.0% | 6.00–6.00 |"
        ),
        "results table row:\n{page}"
    );
    assert!(
        page.contains("| Variant | n | Median \\[95% CI\\] | Mean \\[95% BCa CI\\] | CV | Range |"),
        "columns without information (order-statistic CI at 3 runs, equal run counts, nothing excluded, no shape) are left out:\n{page}"
    );
    assert!(page.contains("No cell has enough runs for a distribution-free interval"));
    assert!(page.contains("Every cell shown has 3 valid runs."));
    let svg = project.read("book/src/tiny/score-by-n.svg");
    assert!(
        svg.contains("double") && svg.contains("triple"),
        "the chart names the variants"
    );
    assert!(
        project
            .read("book/src/SUMMARY.md")
            .contains("[Tiny: double against triple](tiny/index.md)")
    );
}

#[test]
fn tiny_experiment_runs_stores_analyses_and_renders() {
    let project = Project::with_fixtures(&["tiny"]);
    project.lab_exits(&["run", "experiments/tiny", "--quiet"], Exit::CheckFailed);
    let session = project.session("tiny");

    assert_stored(&session);

    // The verdicts: the ratio is exactly 1.5 (> 1.4 passes) and double never beats triple.
    let checks = verdicts(&project, "tiny");
    let verdict = |name: &str| {
        checks
            .iter()
            .find(|c| c["name"] == name)
            .map(|c| c["verdict"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(
        verdict("triple beats double by at least 1.4 at n=2"),
        "pass"
    );
    assert_eq!(verdict("double beats triple at n=1"), "fail");
    assert_eq!(verdict("every run exited normally"), "pass");

    assert_rendered(&project);
}

#[test]
fn the_whole_book_is_byte_identical_when_rebuilt_and_report_runs_nothing() {
    let project = Project::with_fixtures(&["tiny", "iterations"]);
    project.lab_exits(&["run", "experiments/tiny", "--quiet"], Exit::CheckFailed);
    project.lab_exits(&["run", "iterations", "--quiet"], Exit::Ok);
    let first = tree(&project.path("book"));
    assert!(first.len() > 15, "{:?}", first.keys());
    let sessions_before = project.sessions("tiny").len();
    std::fs::remove_dir_all(project.path("book")).unwrap();
    project.lab_exits(&["report", "tiny", "--quiet"], Exit::Ok);
    project.lab_exits(&["report", "--quiet"], Exit::Ok);
    let second = tree(&project.path("book"));
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        second.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &first {
        assert!(second[path] == *bytes, "{path} differs after a rebuild");
    }
    assert_eq!(project.sessions("tiny").len(), sessions_before);
}

#[test]
fn an_experiment_can_override_the_chapter_template() {
    let project = Project::with_fixtures(&["tiny"]);
    let templates = project.path("experiments/tiny/templates");
    std::fs::create_dir_all(&templates).unwrap();
    std::fs::write(
        templates.join("chapter.md"),
        "# {{ title }}\n\nCustom page with {{ checks | length }} rows of checks.\n",
    )
    .unwrap();
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    assert_eq!(
        project.read("book/src/tiny/index.md"),
        "# Tiny: double against triple\n\nCustom page with 6 rows of checks.\n"
    );
}

/// The row of the run of `broken` in mode `mode`.
fn by_mode(runs: &[Row], mode: &str) -> Row {
    runs.iter().find(|r| r["mode"] == mode).unwrap().clone()
}

/// One process stayed in the run's group, one left it with setsid: both are killed, named.
fn assert_left_running_named(runs: &[Row]) {
    let leave = by_mode(runs, "leave");
    assert_eq!(leave["exit_code"], "0");
    // Named as /proc names them when found: a forked `sh` or `setsid` until it has become
    // `sleep`.
    let left: Vec<&str> = leave["left_running"].split(' ').collect();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(
        left.iter()
            .all(|name| ["sh", "setsid", "sleep"].contains(name)),
        "{left:?}"
    );
    assert_eq!(by_mode(runs, "ok")["left_running"], "");
}

/// A stream a run printed nothing on takes no bytes; every run's output is in the two packs,
/// and the spool files are gone.
fn assert_output_packed(session: &std::path::Path, runs: &[Row]) {
    assert_eq!(
        by_mode(runs, "fail")["stdout_bytes"],
        "0",
        "`fail` printed only to stderr"
    );
    let hang = by_mode(runs, "hang");
    assert_eq!(hang["stdout_bytes"], "0");
    assert_eq!(hang["stderr_bytes"], "0");
    assert_ne!(by_mode(runs, "silent")["stdout_bytes"], "0");
    let mut kept: Vec<String> = std::fs::read_dir(session.join("logs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert_eq!(kept, ["stderr.pack", "stdout.pack"]);
}

#[test]
fn broken_runs_are_data_not_crashes() {
    let project = Project::with_fixtures(&["broken"]);
    let out = project.lab_exits(&["run", "experiments/broken"], Exit::CheckFailed);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[4/7]") && stderr.contains("timed out"),
        "plain progress lines off a terminal:\n{stderr}"
    );
    let runs = csv_rows(&project.session("broken").join("runs.csv"));
    let mode = |m: &str| by_mode(&runs, m);
    assert_eq!(mode("ok")["exit_code"], "0");
    assert_eq!(mode("crash")["signal"], "11");
    assert_eq!(mode("fail")["exit_code"], "3");
    let hang = mode("hang");
    assert_eq!(hang["timed_out"], "true");
    assert!(
        hang["wall_ns"].parse::<u64>().unwrap() < 5_000_000_000,
        "killed at the 300 ms timeout"
    );
    let silent = mode("silent")["run_id"].clone();
    assert_left_running_named(&runs);
    let report = project.lab_exits(&["report", "broken", "--json"], Exit::Ok);
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let problems = report["analysis"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == silent.as_str())
        .map(|r| r["problems"].clone())
        .unwrap();
    assert_eq!(problems[0], "printed no value for metric `value`");
    let session = project.session("broken");
    assert_eq!(
        common::run_stderr(&session, &mode("fail")["run_id"]).trim(),
        "no such file: input.dat"
    );
    assert_output_packed(&session, &runs);

    // A validity check failed: `lab check` says so with exit code 1.
    let check = project.lab_exits(&["check", "broken"], Exit::CheckFailed);
    let table = String::from_utf8_lossy(&check.stdout);
    assert!(
        table.contains("fail") && table.contains("every run exited normally"),
        "{table}"
    );

    // Text from run output is escaped on the page.
    let page = project.read("book/src/broken/index.md");
    assert!(!page.contains("<script>"), "raw script tag on the page");
    assert!(page.contains("&lt;script&gt;"));
    assert!(
        page.contains("| r0002 | prog mode=crash | killed by signal 11 (SIGSEGV)"),
        "{page}"
    );
}

#[test]
fn a_bad_config_exits_2_with_its_location_and_writes_nothing() {
    let project = Project::with_fixtures(&["tiny"]);
    let file = project.path("experiments/tiny/lab.toml");
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"{n}\"]\n\n[[variant]]", "\"{m}\"]\n\n[[variant]]");
    std::fs::write(&file, text).unwrap();
    let out = project.lab_exits(&["run", "experiments/tiny"], Exit::Usage);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .contains("experiments/tiny/lab.toml:15:7: `variant[1].run`: unknown placeholder {m}"),
        "{stderr}"
    );
    assert!(!project.path("data").exists() && !project.path("book").exists());
}

#[test]
fn unknown_experiments_and_options_are_usage_errors() {
    let project = Project::with_fixtures(&["tiny"]);
    let out = project.lab_exits(&["run", "nope"], Exit::Usage);
    assert!(String::from_utf8_lossy(&out.stderr).contains("experiments here: tiny"));
    project.lab_exits(&["run", "tiny", "--frobnicate"], Exit::Usage);
    project.lab_exits(&["check", "tiny"], Exit::Usage);
}

#[test]
fn dry_run_prints_the_plan_and_runs_nothing() {
    let project = Project::with_fixtures(&["tiny"]);
    let out = project.lab_exits(&["run", "tiny", "--dry-run"], Exit::Ok);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("16 runs (shuffled order, seed 3)"), "{text}");
    assert!(text.contains("sh bench.sh triple 2"));
    assert!(!project.path("data").exists());
}

#[test]
fn the_book_lists_each_experiment_once() {
    let project = Project::with_fixtures(&["tiny", "broken"]);
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    project.lab_exits(&["run", "broken", "--quiet"], Exit::CheckFailed);
    project.lab_exits(&["report", "tiny", "--quiet"], Exit::Ok);
    let summary = project.read("book/src/SUMMARY.md");
    assert_eq!(summary.matches("(tiny/index.md)").count(), 1, "{summary}");
    assert_eq!(summary.matches("(broken/index.md)").count(), 1, "{summary}");
    let intro = project.read("book/src/introduction.md");
    assert!(
        intro.contains("The validity check “every run exited normally” failed in prog mode=crash and prog mode=fail, and no hypothesis is declared."),
        "a failed validity check is named even where no hypothesis reads it:\n{intro}"
    );
    assert!(
        intro.contains(
            "<strong>triple beats double by at least 1.4 at n=2</strong>: 1.50 [1.50, 1.50]"
        ),
        "the introduction repeats each chapter's answer:\n{intro}"
    );
    let list = String::from_utf8_lossy(&project.lab_exits(&["list"], Exit::Ok).stdout).into_owned();
    let broken = list.lines().find(|l| l.starts_with("broken")).unwrap();
    assert!(
        broken.contains("1 session; latest ") && broken.ends_with(", untrusted"),
        "{list}"
    );
    let tiny = list.lines().find(|l| l.starts_with("tiny")).unwrap();
    assert!(
        tiny.contains(", 1 fail, 0 inconclusive, 3 not run") && !tiny.contains("untrusted"),
        "{list}"
    );
}

#[test]
fn lab_book_builds_the_html_with_the_mdbook_library() {
    let project = Project::with_fixtures(&["tiny"]);
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    project.lab_exits(&["book", "--quiet"], Exit::Ok);
    let html = project.read("book/book/tiny/index.html");
    assert!(html.contains("Tiny: double against triple"));
    assert!(html.contains("score-by-n.svg"), "the chart is embedded");
    assert!(project.path("book/book/tiny/score-by-n.svg").is_file());
    assert!(
        project.path("book/book/tiny/data/runs.csv").is_file(),
        "raw data is published with the book"
    );
}

#[test]
fn notes_are_rendered_with_numbers_from_the_data() {
    let project = Project::with_fixtures(&["tiny"]);
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    let page = project.read("book/src/tiny/index.md");
    assert!(
        page.contains("Triple scored [6.00 points \\[6.00, 6.00\\]](provenance.md#triple-n-2.score.median) at n=2, double [4.0](provenance.md#double-n-2.score.median)."),
        "{page}"
    );
    assert!(page.contains("The ratio is [1.50 \\[1.50, 1.50\\]](provenance.md#notes.triple-n-2.over.double-n-2.score.ratio), so the check says <span class=\"lab-verdict lab-pass\">pass</span>."));
    assert!(page.contains("<figure class=\"lab-figure\"><picture><source media=\"(max-width: 760px)\" srcset=\"score-by-n-narrow.svg\"><img src=\"score-by-n.svg\" alt=\"score against n, one line per variant\"></picture>"), "{page}");
    assert!(page.contains("Seeds: 3; 12 valid runs."));
}

#[test]
fn a_note_naming_a_missing_cell_is_an_error_at_its_line() {
    let project = Project::with_fixtures(&["tiny"]);
    let notes = project.path("experiments/tiny/notes.md");
    std::fs::write(
        &notes,
        "Fine line.\n\nQuadruple: {{ cell(of=\"quadruple n=2\") }}\n",
    )
    .unwrap();
    let out = project.lab_exits(&["run", "tiny", "--quiet"], Exit::Usage);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("notes.md:3:") && stderr.contains("no cell matches \"quadruple n=2\""),
        "{stderr}"
    );
    assert!(
        project.session("tiny").join("runs.csv").is_file(),
        "the session is kept"
    );
    std::fs::write(&notes, "{{ check(name=\"no such check\") }}\n").unwrap();
    let out = project.lab_exits(&["report", "tiny"], Exit::Usage);
    assert!(String::from_utf8_lossy(&out.stderr).contains("notes.md:1:"));
}

#[test]
fn runs_with_many_iterations_are_resampled_by_run_and_trimmed_to_their_steady_state() {
    let project = Project::with_fixtures(&["iterations"]);
    project.lab_exits(&["run", "iterations", "--quiet"], Exit::Ok);
    let out = project.lab_exits(&["report", "iterations", "--json"], Exit::Ok);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let analysis = &report["analysis"];
    let cell = &analysis["cells"][0];
    assert_eq!(cell["n"], 6, "n counts processes, not iterations");
    let steady = &cell["steady"];
    assert_eq!(steady["states"].as_array().unwrap().len(), 6);
    assert!(
        steady["states"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s == "Warmup"),
        "{steady}"
    );
    assert_eq!(
        steady["iterations_dropped"], 60,
        "ten warm-up iterations dropped from each run"
    );
    // Only steady values remain: the slow warm-up (24–60 µs) no longer reaches the maximum.
    assert!(
        cell["summary"]["max"].as_f64().unwrap() < 17.0,
        "{}",
        cell["summary"]
    );
    assert!(
        cell["design_effect"]["icc"].as_f64().unwrap() > 0.9,
        "runs differ far more than iterations"
    );
    assert_eq!(cell["percentiles"]["n"], 180);
    assert!(
        cell["percentiles"]["p99"]["ci"].is_object() && cell["percentiles"]["p999"]["ci"].is_null()
    );
    let page = crate::common::unlinked(&project.read("book/src/iterations/index.md"));
    assert!(
        page.contains("### Percentiles") && page.contains("| latency_us | jit | 180 |"),
        "{page}"
    );
}

#[test]
fn a_missing_build_tool_or_failing_build_stops_before_any_run() {
    let project = Project::with_fixtures(&["tiny"]);
    let file = project.path("experiments/tiny/lab.toml");
    let original = std::fs::read_to_string(&file).unwrap();
    let with_build =
        |build: &str| original.replace("[params]", &format!("[build]\nrun = {build}\n\n[params]"));
    std::fs::write(&file, with_build(r#"["no-such-compiler", "x.c"]"#)).unwrap();
    let out = project.lab_exits(&["run", "tiny"], Exit::Usage);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot start `no-such-compiler`: not found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(
        &file,
        with_build(
            r#"["sh", "-c", "echo compiling; echo 'x.c:3: error: expected ;' >&2; exit 1"]"#,
        ),
    )
    .unwrap();
    let out = project.lab_exits(&["run", "tiny"], Exit::Usage);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("failed (exit status: 1)") && stderr.contains("x.c:3: error: expected ;"),
        "{stderr}"
    );
    assert!(
        project.sessions("tiny").is_empty(),
        "no session for a failed build"
    );
}

#[test]
fn results_read_at_a_glance() {
    let project = Project::with_fixtures(&["glance"]);
    let out = project.lab_exits(&["run", "glance"], Exit::Ok);
    let terminal = String::from_utf8_lossy(&out.stdout).into_owned();
    let page = crate::common::unlinked(&project.read("book/src/glance/index.md"));
    let prefixed = regex::Regex::new(
        r"\| park \| 1 \| [23]\d\d M \\\[[23]\d\d M, [23]\d\d M\\\] \| [23]\d\d M \\\[[23]\d\d M, [23]\d\d M\\\] \| \d\.\d% \| [23]\d\d M–[23]\d\d M \|",
    )
    .unwrap();
    assert!(prefixed.is_match(&page), "large values carry M:\n{page}");
    assert!(
        regex::Regex::new(r"\| park \| 2 \| [78]\d\.\d µ \\\[")
            .unwrap()
            .is_match(&page),
        "small values carry µ:\n{page}"
    );
    assert!(
        regex::Regex::new(r"park n=1  [23]\d\d M \[[23]\d\d M, [23]\d\d M\]  n=3")
            .unwrap()
            .is_match(&terminal),
        "the terminal uses the same formatter:\n{terminal}"
    );
    assert!(
        page.contains("| Variant | n | Median \\[95% CI\\] | Mean \\[95% BCa CI\\] | CV | Range |"),
        "no order-statistic, runs, excluded or shape column:\n{page}"
    );
    assert!(page.contains(
        "Left out, because every run of the cell measured exactly the same value: 0 parks/op in spin (n=1, n=2)."
    ));
    assert!(
        !page.contains("| spin | 1 | 0 "),
        "constant rows are left out"
    );
    let constant = "The median is 0.00200 s in all 4 cells (12 runs, every value 0.00200 s, largest CV 0.0%): one line instead of a table of identical rows.";
    assert!(page.contains(constant), "{page}");
    assert!(!page.contains("2.00 \\[2.00, 2.00\\]"));

    // Interval bars are the one-pixel lines in a series colour (the first, park, is blue).
    let bars = |file: &str| {
        project
            .read(&format!("book/src/glance/{file}"))
            .matches("stroke=\"#0072B2\" stroke-width=\"1\"")
            .count()
    };
    assert!(bars("ops-by-n.svg") >= 6, "three runs give interval bars");
    assert!(
        !project.path("book/src/glance/elapsed_s-by-n.svg").exists(),
        "no chart of a metric that reads the same in every cell"
    );

    project.lab_exits(&["run", "glance", "--profile", "two", "--quiet"], Exit::Ok);
    assert_eq!(bars("ops-by-n.svg"), 0, "two runs give no interval bar");
    assert_eq!(bars("ops-by-n-narrow.svg"), 0);
    let page = project.read("book/src/glance/index.md");
    assert!(
        page.contains("| Variant | n | Median | Mean | CV | Range |"),
        "two runs give no interval:\n{page}"
    );
}

#[test]
fn a_session_too_large_for_the_memory_left_is_refused_before_it_is_read() {
    use std::os::unix::process::CommandExt;
    let project = Project::with_fixtures(&["tiny"]);
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    let session = project.session("tiny");
    // 300 MB of samples.csv without a newline: a torn tail, which a reading would set aside,
    // but whose bytes a reading has to go through; held in a hole, it takes no disk.
    let samples = std::fs::OpenOptions::new()
        .write(true)
        .open(session.join("samples.csv"))
        .unwrap();
    samples.set_len(300_000_000).unwrap();
    drop(samples);
    let grown = tree(&session);
    let report = |limit: Option<u64>| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_lab"));
        project.in_project(command.args(["report", "tiny"]));
        if let Some(bytes) = limit {
            // SAFETY: setrlimit acts on the child alone, between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    let limit = libc::rlimit {
                        rlim_cur: bytes,
                        rlim_max: bytes,
                    };
                    (libc::setrlimit(libc::RLIMIT_AS, &limit) == 0)
                        .then_some(())
                        .ok_or_else(std::io::Error::last_os_error)
                });
            }
        }
        command.output().unwrap()
    };
    // 1.20 GB to read it, in an address space of 1 GB.
    let out = report(Some(1_000_000_000));
    let err = common::stderr_text(&out);
    assert_eq!(common::exit_of(&out), Exit::Internal, "{err}");
    assert!(
        err.contains("its runs.csv and samples.csv (300 MB) take about 1.20 GB of memory or more to read, and this machine has")
            && err.contains("LAB_IGNORE_MEMORY=1 reads it anyway"),
        "{err}"
    );
    assert_eq!(tree(&session), grown, "nothing of the session changed");
    // With room, the same session reads, its torn tail set aside.
    let out = report(None);
    let err = common::stderr_text(&out);
    assert_eq!(common::exit_of(&out), Exit::Ok, "{err}");
    assert!(
        err.contains("samples.csv: 2999") && err.contains("set aside (a row cut off mid-write)"),
        "{err}"
    );
}
