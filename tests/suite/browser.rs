// Over 500 lines: one Chromium session per test, with the pixel and layout readers it needs beside it.
//! The built HTML book checked in a real browser: headless Chromium screenshots, dumps and
//! measures the chapters of fixture experiments, and the test asserts the charts render, the
//! verdict marks show, commands stay verbatim, the page fits screens of 1400, 800 and 400 px
//! and text from run output stays text.

use crate::common::Project;
use lab::Exit;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long one Chromium call may take before the test kills it and fails.
const CHROMIUM_DEADLINE: Duration = Duration::from_secs(60);

/// The chart palette (plotters' colours as lab draws them): the first two series.
const CHART_BLUE: [u8; 3] = [0x00, 0x72, 0xB2];
const CHART_VERMILION: [u8; 3] = [0xD5, 0x5E, 0x00];

#[test]
fn the_html_book_renders_in_chromium() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let project = Project::with_fixtures(&["tiny", "broken"]);
    // A command-line option that smart punctuation would turn into an en dash.
    let toml = project.read("experiments/tiny/lab.toml").replace(
        r#"run = ["sh", "bench.sh", "double", "{n}"]"#,
        r#"run = ["sh", "bench.sh", "double", "{n}", "--impl=nonfair"]"#,
    );
    std::fs::write(project.path("experiments/tiny/lab.toml"), toml).unwrap();
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    project.lab_exits(&["run", "broken", "--quiet"], Exit::CheckFailed);
    project.lab_exits(&["book", "--quiet"], Exit::Ok);
    let browser = Browser {
        exe: chromium,
        scratch: project.path("chromium"),
    };

    charts_render(&project, &browser);
    verdict_marks_show(&project, &browser);
    commands_stay_verbatim(&project);
    for width in [1400, 800, 400] {
        fits_the_screen(&project, &browser, width);
    }
    run_output_stays_text(&project, &browser);
}

/// The chapter shows its SVG charts: the DOM embeds them, each file loads as an SVG, and the
/// screenshot of the page holds the charts' line colours.
fn charts_render(project: &Project, browser: &Browser) {
    let chapter = project.path("book/book/tiny/index.html");
    let dom = browser.dump_dom(&chapter);
    let charts = svg_images(&dom);
    assert!(
        charts.iter().any(|c| c == "score-by-n.svg"),
        "no <img> of score-by-n.svg in the DOM: {charts:?}"
    );
    for chart in &charts {
        assert!(
            project.path("book/book/tiny").join(chart).is_file(),
            "the DOM embeds {chart}, which the book lacks"
        );
    }

    let svg = project.path("book/book/tiny/score-by-n.svg");
    assert!(
        browser.dump_dom(&svg).contains("<svg"),
        "Chromium did not parse score-by-n.svg as SVG"
    );
    let chart = Pixels::of(&browser.screenshot(&svg, "score-by-n.png", (800, 480)));
    assert!(
        chart.distinct_colours() >= 16 && chart.non_white_share() > 0.01,
        "score-by-n.svg renders blank: {chart}"
    );

    let page = Pixels::of(&browser.screenshot(&chapter, "tiny.png", (1200, 2000)));
    assert!(
        page.distinct_colours() >= 64 && page.non_white_share() > 0.02,
        "the tiny chapter renders blank: {page}"
    );
    for (name, colour) in [("blue", CHART_BLUE), ("vermilion", CHART_VERMILION)] {
        let count = page.near(colour);
        assert!(
            count >= 200,
            "only {count} {name} chart pixels in the tiny chapter: is the chart drawn? {page}"
        );
    }
}

/// The answer block and the checks table mark their verdicts with CSS badges holding the
/// word (tiny has one passing and one failing hypothesis check): no emoji font needed.
fn verdict_marks_show(project: &Project, browser: &Browser) {
    let dom = browser.dump_dom(&project.path("book/book/tiny/index.html"));
    let table = table_after(&dom, "id=\"checks\"")
        .unwrap_or_else(|| panic!("no checks table in the tiny chapter:\n{dom}"));
    for word in ["pass", "fail"] {
        let badge = format!("<span class=\"lab-verdict lab-{word}\">{word}</span>");
        assert!(
            table.contains(&badge),
            "no {badge} in the checks table:\n{table}"
        );
    }
    let answer = &dom[dom.find("lab-answer").expect("an answer block")..];
    assert!(
        dom.find("lab-answer") < dom.find("id=\"checks\""),
        "the answer block comes first"
    );
    assert!(
        answer.contains("triple beats double by at least 1.4 at n=2</strong>: <a href=\"provenance.html#check.triple-beats-double-by-at-least-1-4-at-n-2.ratio\">1.50 [1.50, 1.50]</a> (95% CI); needs a/b &gt; 1.40"),
        "the answer states each hypothesis with its ratio, interval and threshold:\n{}",
        &answer[..answer.len().min(1500)]
    );
    for emoji in ["✅", "❌", "⚠️", "⏸️"] {
        assert!(!dom.contains(emoji), "{emoji} needs an emoji font");
    }
    let css = project.read("book/lab.css");
    assert!(
        css.contains(".lab-verdict.lab-pass { background: var(--lab-pass); }")
            && css.contains("--lab-pass: #1a7f37;"),
        "the badge colours come from lab.css"
    );
}

/// `--impl=nonfair` reaches the HTML as typed: smart punctuation would make it `–impl`.
fn commands_stay_verbatim(project: &Project) {
    let html = project.read("book/book/tiny/index.html");
    assert!(
        html.contains("sh bench.sh double {n} --impl=nonfair"),
        "the variant's command is not verbatim in the HTML"
    );
    assert!(!html.contains("–impl") && !html.contains("—impl"));
}

/// At `width` px the chapter scrolls only vertically, every chart loads, the verdict words are
/// in the DOM, and chart text is drawn at 11 px or more.
fn fits_the_screen(project: &Project, browser: &Browser, width: u32) {
    let chapter = project.path("book/book/tiny/index.html");
    let m = browser.measure(&chapter, width);
    let scroll = m["scrollWidth"].as_f64().unwrap();
    let inner = m["innerWidth"].as_f64().unwrap();
    assert!(
        scroll <= inner,
        "at {width} px the page overflows: scrollWidth {scroll} > innerWidth {inner}; wide elements: {}",
        m["wide"]
    );
    let words: Vec<&str> = m["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(
        words.contains(&"pass") && words.contains(&"fail"),
        "at {width} px the verdict words are missing: {words:?}"
    );
    // mdBook's image zoom keeps a hidden second copy of Markdown images: judge the shown ones.
    let images: Vec<&serde_json::Value> = m["images"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["shown"].as_f64() > Some(0.0))
        .collect();
    assert!(
        images.len() >= 4,
        "at {width} px only {} charts",
        images.len()
    );
    let narrow = images
        .iter()
        .filter(|i| i["file"].as_str().unwrap().ends_with("-narrow.svg"))
        .count();
    let expected = if width <= 760 { images.len() } else { 0 };
    assert_eq!(
        narrow,
        expected,
        "at {width} px {narrow} of {} charts are the narrow drawing",
        images.len()
    );
    for image in images {
        let file = image["file"].as_str().unwrap();
        let natural = image["natural"].as_f64().unwrap();
        let shown = image["shown"].as_f64().unwrap();
        assert!(natural > 0.0, "at {width} px {file} did not load");
        let svg = project.read(&format!("book/book/tiny/{file}"));
        let smallest = smallest_font(&svg);
        let drawn = smallest * shown.min(natural) / natural;
        assert!(
            drawn >= 11.0 - 1e-9,
            "at {width} px {file} draws text at {drawn:.1} px ({smallest} px in a {natural} px SVG shown {shown} px wide)"
        );
    }
}

/// The smallest `font-size` in an SVG document.
fn smallest_font(svg: &str) -> f64 {
    svg.split("font-size=\"")
        .skip(1)
        .filter_map(|rest| rest[..rest.find('"')?].parse::<f64>().ok())
        .fold(f64::INFINITY, f64::min)
}

/// The broken fixture prints `<script>alert(1)</script>` and `{"value": "<script>"}`: the page
/// shows them as text and gains no script element.
fn run_output_stays_text(project: &Project, browser: &Browser) {
    let html = project.read("book/book/broken/index.html");
    assert!(
        html.contains("&lt;script&gt;"),
        "the run's `<script>` value is not shown escaped"
    );
    assert!(
        !html.contains("<script>alert(1)") && !html.contains("\"<script>\""),
        "raw run output in the HTML"
    );

    let hostile = browser.dump_dom(&project.path("book/book/broken/index.html"));
    let calm = browser.dump_dom(&project.path("book/book/tiny/index.html"));
    let scripts = |dom: &str| dom.matches("<script").count();
    assert_eq!(
        scripts(&hostile),
        scripts(&calm),
        "the broken chapter has script elements the theme did not add"
    );
    assert!(
        hostile.contains("&lt;script&gt;"),
        "the run's value is not shown as text after JS ran"
    );
}

/// Chromium's path, or `None` (the test is skipped) when it is missing outside CI.
pub(crate) fn chromium_or_skip() -> Option<PathBuf> {
    if let Some(exe) = find_chromium() {
        return Some(exe);
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !in_ci,
        "chromium not installed: the browser test needs it in CI (.ci/run installs it: apt-get install chromium)"
    );
    eprintln!("skipped: chromium not installed");
    None
}

/// `$LAB_CHROMIUM`, else the first Chromium-like program on `PATH`.
fn find_chromium() -> Option<PathBuf> {
    if let Some(exe) = std::env::var_os("LAB_CHROMIUM") {
        return Some(PathBuf::from(exe));
    }
    let path = std::env::var_os("PATH")?;
    let names = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ];
    std::env::split_paths(&path)
        .flat_map(|dir| names.map(|n| dir.join(n)))
        .find(|p| p.is_file())
}

/// Headless Chromium with a throwaway profile, no network chatter and a deadline per call.
pub(crate) struct Browser {
    pub(crate) exe: PathBuf,
    pub(crate) scratch: PathBuf,
}

impl Browser {
    /// The page's DOM after its scripts ran.
    fn dump_dom(&self, page: &Path) -> String {
        let out = self.scratch.join("dom.html");
        self.run(&["--dump-dom".to_string(), file_url(page)], &out);
        std::fs::read_to_string(&out).expect("dumped DOM")
    }

    /// The DOM of the page at `url` (a `file://` address, with a query if need be) once the
    /// scripts it loads and the timers they set have run.
    pub(crate) fn dump_dom_of(&self, url: &str) -> String {
        let out = self.scratch.join("dom.html");
        let args = [
            "--virtual-time-budget=8000".to_string(),
            "--dump-dom".to_string(),
            url.to_string(),
        ];
        self.run(&args, &out);
        std::fs::read_to_string(&out).expect("dumped DOM")
    }

    /// Loads `page` in a `width` px frame and returns what its scripts measured: the page's
    /// scroll and inner widths, elements wider than the frame, the charts each `<img>` shows
    /// (after `<picture>` chose) with their natural and shown widths, and the verdict words.
    fn measure(&self, page: &Path, width: u32) -> serde_json::Value {
        std::fs::create_dir_all(&self.scratch).expect("scratch folder");
        let probe = self.scratch.join(format!("probe-{width}.html"));
        std::fs::write(
            &probe,
            PROBE
                .replace("WIDTH", &width.to_string())
                .replace("PAGE", &file_url(page)),
        )
        .expect("probe page");
        let out = self.scratch.join(format!("probe-{width}.dom"));
        self.run(
            &[
                "--allow-file-access-from-files".to_string(),
                "--virtual-time-budget=10000".to_string(),
                "--dump-dom".to_string(),
                file_url(&probe),
            ],
            &out,
        );
        let dom = std::fs::read_to_string(&out).expect("probe DOM");
        let start = dom
            .find("<pre id=\"result\">")
            .unwrap_or_else(|| panic!("the probe measured nothing:\n{dom}"))
            + 17;
        let end = start + dom[start..].find("</pre>").expect("end of result");
        let json = dom[start..end]
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"");
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("probe result {json}: {e}"))
    }

    /// A PNG of the page's first `size` pixels, written under the scratch folder.
    fn screenshot(&self, page: &Path, name: &str, (width, height): (u32, u32)) -> PathBuf {
        let png = self.scratch.join(name);
        let args = [
            format!("--screenshot={}", png.display()),
            format!("--window-size={width},{height}"),
            file_url(page),
        ];
        self.run(&args, &self.scratch.join("screenshot.out"));
        assert!(
            png.is_file(),
            "Chromium wrote no screenshot of {}",
            page.display()
        );
        png
    }

    /// Runs Chromium with `args`, stdout to `stdout`; fails on a non-zero exit or the deadline.
    fn run(&self, args: &[String], stdout: &Path) {
        std::fs::create_dir_all(&self.scratch).expect("scratch folder");
        let profile = tempfile::tempdir().expect("profile dir");
        let stderr = self.scratch.join("chromium.err");
        let child = self
            .command(profile.path(), args, stdout, &stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.exe.display()));
        let ok = wait_or_kill(child, CHROMIUM_DEADLINE);
        let log = std::fs::read_to_string(&stderr).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(20)..].join("\n");
        assert!(
            ok.is_ok(),
            "chromium {args:?}: {}\nstderr tail:\n{tail}",
            ok.unwrap_err()
        );
    }

    fn command(&self, profile: &Path, args: &[String], stdout: &Path, stderr: &Path) -> Command {
        let mut cmd = Command::new(&self.exe);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(File::create(stdout).expect("stdout file"))
        .stderr(File::create(stderr).expect("stderr file"));
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd
    }
}

/// Waits for `child`; after `deadline` kills its whole process group (Chromium forks helpers).
fn wait_or_kill(mut child: Child, deadline: Duration) -> Result<(), String> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            return if status.success() {
                Ok(())
            } else {
                Err(format!("exited with {status}"))
            };
        }
        if start.elapsed() > deadline {
            // SAFETY: the child leads its own process group (`process_group(0)`).
            unsafe { libc::killpg(child.id() as libc::pid_t, libc::SIGKILL) };
            let _ = child.wait();
            return Err(format!("still running after {deadline:?}, killed"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A page that frames the chapter at a given width and writes its measurements into the DOM.
const PROBE: &str = r#"<!doctype html><html><body style="margin:0">
<iframe id="f" style="width:WIDTHpx;height:1000px;border:0" src="PAGE"></iframe>
<script>
const f = document.getElementById('f');
f.addEventListener('load', () => {
  const d = f.contentDocument, w = f.contentWindow;
  const images = [...d.images]
    .filter(i => (i.currentSrc || i.src).endsWith('.svg'))
    .map(i => ({file: (i.currentSrc || i.src).split('/').pop(), natural: i.naturalWidth,
                shown: i.getBoundingClientRect().width}));
  const wide = [...d.body.querySelectorAll('*')]
    .filter(e => e.getBoundingClientRect().right > d.documentElement.clientWidth + 1)
    .filter(e => !e.closest('.table-wrapper, pre, .nav-chapters, .sidebar, #sidebar'))
    .map(e => e.tagName + '.' + e.className).slice(0, 10);
  const result = {scrollWidth: d.documentElement.scrollWidth, innerWidth: d.documentElement.clientWidth,
    images, wide, verdicts: [...d.querySelectorAll('.lab-verdict')].map(e => e.textContent)};
  const out = document.createElement('pre');
  out.id = 'result';
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
});
</script></body></html>"#;

pub(crate) fn file_url(path: &Path) -> String {
    format!(
        "file://{}",
        path.canonicalize().expect("page exists").display()
    )
}

/// The `src` of every `<img>` whose source is an `.svg` file.
fn svg_images(dom: &str) -> Vec<String> {
    let mut sources: Vec<String> = dom
        .split("<img")
        .skip(1)
        .filter_map(|tag| attribute(&tag[..tag.find('>')?], "src"))
        .filter(|src| src.ends_with(".svg"))
        .collect();
    sources.dedup();
    sources
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(tag[start..start + tag[start..].find('"')?].to_string())
}

/// The first `<table>…</table>` after `marker`.
fn table_after<'a>(dom: &'a str, marker: &str) -> Option<&'a str> {
    let rest = &dom[dom.find(marker)?..];
    let start = rest.find("<table")?;
    let end = rest[start..].find("</table>")? + start;
    Some(&rest[start..end])
}

/// The RGB pixels of a PNG.
struct Pixels(Vec<[u8; 3]>);

impl Pixels {
    fn of(path: &Path) -> Self {
        let mut decoder = png::Decoder::new(File::open(path).expect("screenshot"));
        decoder.set_transformations(png::Transformations::normalize_to_color8());
        let mut reader = decoder.read_info().expect("a PNG");
        let mut buffer = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buffer).expect("PNG frame");
        let channels = info.color_type.samples();
        assert!(
            channels >= 3,
            "{}: a {:?} PNG, expected colour",
            path.display(),
            info.color_type
        );
        Pixels(
            buffer[..info.buffer_size()]
                .chunks_exact(channels)
                .map(|p| [p[0], p[1], p[2]])
                .collect(),
        )
    }

    fn distinct_colours(&self) -> usize {
        self.0
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len()
    }

    fn non_white_share(&self) -> f64 {
        self.0.iter().filter(|p| p.iter().any(|&c| c < 240)).count() as f64
            / self.0.len().max(1) as f64
    }

    /// Pixels within a small distance of `colour` in every channel.
    fn near(&self, colour: [u8; 3]) -> usize {
        self.0
            .iter()
            .filter(|p| p.iter().zip(colour).all(|(&a, b)| a.abs_diff(b) <= 24))
            .count()
    }
}

impl std::fmt::Display for Pixels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} pixels, {} colours, {:.1}% not white",
            self.0.len(),
            self.distinct_colours(),
            100.0 * self.non_white_share()
        )
    }
}
