//! The manual in docs/ stays true to the code: its reference pages carry what lab.schema.json,
//! the `Exit` table and the tables of built-in metrics say (`LAB_UPDATE_DOCS=1` rewrites
//! them), the book builds with the mdBook library without a warning, and every relative link
//! in it, and in README.md, leads to a file that exists and to an anchor that file has.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Set, the test rewrites the generated parts of the reference pages instead of failing.
const UPDATE: &str = "LAB_UPDATE_DOCS";

/// The README is one page; the rest of the manual is the book.
const README_MAX_LINES: usize = 250;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn docs() -> PathBuf {
    Path::new(ROOT).join("docs")
}

// ---------------------------------------------------------------------------------------
// Generated reference pages
// ---------------------------------------------------------------------------------------

/// A part of a page written from the code: the lines between
/// `<!-- begin generated NAME … -->` and `<!-- end generated NAME -->`.
struct Block {
    page: &'static str,
    name: &'static str,
    text: fn() -> String,
}

const BLOCKS: [Block; 6] = [
    Block {
        page: "reference/lab-toml.md",
        name: "lab-toml-keys",
        text: lab_toml_keys,
    },
    Block {
        page: "reference/metrics.md",
        name: "builtin-metrics",
        text: builtin_metrics,
    },
    Block {
        page: "reference/metrics.md",
        name: "perf-counters",
        text: perf_counters,
    },
    Block {
        page: "reference/where-things-go.md",
        name: "runs-columns",
        text: runs_columns,
    },
    Block {
        page: "reference/where-things-go.md",
        name: "samples-columns",
        text: samples_columns,
    },
    Block {
        page: "reference/exit-statuses.md",
        name: "exit-statuses",
        text: exit_statuses,
    },
];

/// `page` with the block `name` holding `text`.
fn splice(page: &str, name: &str, text: &str) -> String {
    let begin = format!("<!-- begin generated {name}");
    let end = format!("<!-- end generated {name} -->");
    let start = page
        .find(&begin)
        .unwrap_or_else(|| panic!("no `{begin} … -->` line"));
    let body = start + page[start..].find("-->").expect("the begin line ends") + "-->".len();
    let stop = page[body..]
        .find(&end)
        .map(|at| body + at)
        .unwrap_or_else(|| panic!("no `{end}` line after `{begin}`"));
    format!(
        "{}\n\n{}\n\n{}",
        &page[..body],
        text.trim_end(),
        &page[stop..]
    )
}

/// Where two texts first differ, as the line of each.
fn first_difference(committed: &str, fresh: &str) -> String {
    let (mut a, mut b) = (committed.lines(), fresh.lines());
    for number in 1.. {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (None, None) => break,
            (x, y) => {
                return format!(
                    "line {number}: the page has {:?}, the code says {:?}",
                    x.unwrap_or("(end)"),
                    y.unwrap_or("(end)")
                );
            }
        }
    }
    "only in line endings".into()
}

#[test]
fn the_reference_pages_say_what_the_code_says() {
    let update = std::env::var_os(UPDATE).is_some();
    let pages: BTreeSet<&str> = BLOCKS.iter().map(|b| b.page).collect();
    let mut stale = Vec::new();
    for page in pages {
        let path = docs().join("src").join(page);
        let committed = read(&path);
        let fresh = BLOCKS
            .iter()
            .filter(|b| b.page == page)
            .fold(committed.clone(), |text, b| {
                splice(&text, b.name, &(b.text)())
            });
        if fresh == committed {
            continue;
        }
        if update {
            std::fs::write(&path, &fresh).unwrap();
        } else {
            stale.push(format!(
                "docs/src/{page}: {}",
                first_difference(&committed, &fresh)
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "the generated parts of these reference pages differ from what the code says:\n{}\n\
         run `{UPDATE}=1 cargo test --test suite docs` to rewrite them, then review and commit",
        stale.join("\n")
    );
}

/// The tables of lab.toml, each with the schema's definition of its keys (`None`: `[params]`,
/// a table of any names).
const TABLES: [(&str, &str, Option<&str>); 7] = [
    ("experiment", "[experiment]", Some("RawExperiment")),
    ("build", "[build]", Some("RawBuild")),
    ("params", "[params]", None),
    ("variant", "[[variant]]", Some("RawVariant")),
    ("metric.NAME", "[metric.NAME]", Some("RawMetric")),
    ("profile.NAME", "[profile.NAME]", Some("RawProfile")),
    ("check", "[[check]]", Some("RawCheck")),
];

/// One key of lab.toml as the schema declares it.
struct Key<'a> {
    path: String,
    schema: &'a Value,
    required: bool,
}

/// The keys of one table, in the schema's order.
fn keys_of<'a>(schema: &'a Value, prefix: &str, def: Option<&str>) -> Vec<Key<'a>> {
    let Some(def) = def else {
        let values = &schema["properties"]["params"]["additionalProperties"];
        return vec![Key {
            path: format!("{prefix}.NAME"),
            schema: values,
            required: false,
        }];
    };
    let table = &schema["$defs"][def];
    let required: Vec<&str> = table["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    table["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("lab.schema.json: {def} has no properties"))
        .iter()
        .map(|(name, schema)| Key {
            path: format!("{prefix}.{name}"),
            schema,
            required: required.contains(&name.as_str()),
        })
        .collect()
}

/// The ways a schema node may be written, in words (`null` left out: an absent key).
fn alternatives(schema: &Value, node: &Value) -> Vec<String> {
    if let Some(reference) = node["$ref"].as_str() {
        let name = reference.trim_start_matches("#/$defs/");
        return alternatives(schema, &schema["$defs"][name]);
    }
    if let Some(values) = node["enum"].as_array() {
        return values.iter().map(|v| format!("`{v}`")).collect();
    }
    let mut ways: Vec<String> = Vec::new();
    if let Some(any) = node["anyOf"].as_array() {
        ways.extend(any.iter().flat_map(|n| alternatives(schema, n)));
    }
    let types: Vec<&str> = match &node["type"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    for kind in types {
        let way = match kind {
            "null" => continue,
            "array" => format!("array of {}", plural(&alternatives(schema, &node["items"]))),
            "object" => table_words(schema, node),
            other => other.to_string(),
        };
        ways.push(way);
    }
    let mut seen = BTreeSet::new();
    ways.retain(|w| seen.insert(w.clone()));
    ways
}

/// An object node in words: its fixed keys, or what each of its named entries holds.
fn table_words(schema: &Value, node: &Value) -> String {
    if let Some(properties) = node["properties"].as_object() {
        let names: Vec<&str> = properties.keys().map(String::as_str).collect();
        return format!("table {{ {} }}", names.join(", "));
    }
    match &node["additionalProperties"] {
        entry @ Value::Object(_) => format!("table of {}", plural(&alternatives(schema, entry))),
        _ => "table".into(),
    }
}

/// Alternatives joined: `a`, `a or b`, `a, b or c`.
fn either(ways: &[String]) -> String {
    match ways {
        [] => "any value".into(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Alternatives as the items of an array or the entries of a table: `strings`, `arrays of …`.
fn plural(ways: &[String]) -> String {
    let many: Vec<String> = ways
        .iter()
        .map(|w| match w.split_once(' ') {
            Some((first, rest)) if !first.starts_with('`') => format!("{first}s {rest}"),
            None if !w.starts_with('`') => format!("{w}s"),
            _ => w.clone(),
        })
        .collect();
    either(&many)
}

/// A schema description as one line of a table cell: rustdoc links to constants replaced by
/// their values, pipes escaped.
fn description(node: &Value) -> String {
    let text = node["description"].as_str().unwrap_or("");
    let constants = [("[`crate::MAX_RUNS`]", lab::config::MAX_RUNS.to_string())];
    let text = constants
        .iter()
        .fold(text.to_string(), |t, (link, value)| t.replace(link, value));
    assert!(
        !text.contains("[`crate::"),
        "a description in lab.schema.json links to code: give docs.rs the value it stands for: {text}"
    );
    cell(&text)
}

/// Text fit for one table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The hand-kept part of the reference, by key: docs/lab-toml-keys.toml.
fn key_notes() -> BTreeMap<String, toml::Table> {
    let path = docs().join("lab-toml-keys.toml");
    let table: toml::Table = toml::from_str(&read(&path)).unwrap();
    table
        .into_iter()
        .map(|(key, entry)| match entry {
            toml::Value::Table(entry) => (key, entry),
            other => panic!("docs/lab-toml-keys.toml: {key} is {other}, not a table"),
        })
        .collect()
}

/// The reference of every key of lab.toml: from the schema, its type and description; from
/// docs/lab-toml-keys.toml, its default, an example and a note.
fn lab_toml_keys() -> String {
    let schema: Value =
        serde_json::from_str(&read(&Path::new(ROOT).join("lab.schema.json"))).unwrap();
    let mut notes = key_notes();
    let mut out = String::new();
    for (prefix, heading, def) in TABLES {
        let _ = writeln!(out, "### `{heading}`\n");
        out.push_str("| key | type | default | example | what it is |\n|---|---|---|---|---|\n");
        for key in keys_of(&schema, prefix, def) {
            let note = notes.remove(&key.path).unwrap_or_else(|| {
                panic!(
                    "lab.schema.json has `{}`: give it a default, an example and a note in \
                     docs/lab-toml-keys.toml",
                    key.path
                )
            });
            let field = |name: &str| cell(note.get(name).and_then(|v| v.as_str()).unwrap_or(""));
            let default = if key.required {
                "required".to_string()
            } else {
                field("default")
            };
            let what: Vec<String> = [description(key.schema), field("note")]
                .into_iter()
                .filter(|t| !t.is_empty())
                .collect();
            let _ = writeln!(
                out,
                "| `{}` | {} | {default} | {} | {} |",
                key.path,
                cell(&either(&alternatives(&schema, key.schema))),
                field("example"),
                what.join(" ")
            );
        }
        out.push('\n');
    }
    let unknown: Vec<&String> = notes.keys().collect();
    assert!(
        unknown.is_empty(),
        "docs/lab-toml-keys.toml names keys lab.schema.json does not have: {unknown:?}"
    );
    out
}

/// The metrics lab measures for every run, from `lab::config::BUILTIN_METRICS`.
fn builtin_metrics() -> String {
    let mut out = String::from("| metric | unit | what | counted or timed |\n|---|---|---|---|\n");
    for (name, unit, what) in lab::config::BUILTIN_METRICS {
        let kind = if lab::config::COUNTED_BUILTINS.contains(&name) {
            "counted"
        } else {
            "timed"
        };
        let _ = writeln!(out, "| `{name}` | {unit} | {} | {kind} |", cell(what));
    }
    out
}

/// The counters `[experiment] counters` may name, from `lab::exec::Counter::ALL`.
fn perf_counters() -> String {
    let mut out = String::from(
        "| counter | metric | unit | what | counted or timed |\n|---|---|---|---|---|\n",
    );
    for counter in lab::exec::Counter::ALL {
        let def = counter.def();
        let kind = if def.counted { "counted" } else { "timed" };
        let _ = writeln!(
            out,
            "| `{}` | `{}` | {} | {} | {kind} |",
            def.name,
            def.metric,
            def.unit,
            cell(def.what)
        );
    }
    out
}

/// The columns of runs.csv, from `lab::store::RUN_COLUMNS`, the parameters' columns where
/// they stand.
fn runs_columns() -> String {
    let mut out = String::from("| column | what it holds |\n|---|---|\n");
    for (at, column) in lab::store::RUN_COLUMNS.iter().enumerate() {
        if at == lab::store::PARAMS_AFTER {
            out.push_str(
                "| one per parameter, by its name | the run's value of that parameter |\n",
            );
        }
        let mut what = cell(column.what);
        if column.layout_only {
            what.push_str(" (only in sessions with `layout = \"randomized\"`)");
        }
        let _ = writeln!(out, "| `{}` | {what} |", column.name);
    }
    out
}

/// The columns of samples.csv, from `lab::store::SAMPLE_COLUMNS`.
fn samples_columns() -> String {
    let mut out = String::from("| column | what it holds |\n|---|---|\n");
    for (name, what) in &lab::store::SAMPLE_COLUMNS {
        let _ = writeln!(out, "| `{name}` | {} |", cell(what));
    }
    out
}

/// Every exit status, from `lab::Exit::TABLE` and `lab::Exit::SIGNALS`.
fn exit_statuses() -> String {
    let mut out = String::from("| status | ending (`lab::Exit`) | meaning |\n|---|---|---|\n");
    for (exit, code, meaning) in lab::Exit::TABLE {
        let _ = writeln!(out, "| {code} | `{exit:?}` | {} |", cell(meaning));
    }
    for (number, name) in lab::Exit::SIGNALS {
        let exit = lab::Exit::Signal(number);
        let _ = writeln!(out, "| {} | `{exit:?}` | stopped by {name} |", exit.code());
    }
    out
}

// ---------------------------------------------------------------------------------------
// The book builds, and its links resolve
// ---------------------------------------------------------------------------------------

/// Every warning and error mdBook reports while building (it reports through `tracing`).
#[derive(Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

/// The fields of one event, as text.
struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, "{}={value:?}", field.name());
        }
    }
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        matches!(
            *metadata.level(),
            tracing::Level::WARN | tracing::Level::ERROR
        )
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        let metadata = event.metadata();
        self.0.lock().unwrap().push(format!(
            "{} {}: {}",
            metadata.level(),
            metadata.target(),
            fields.0
        ));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Builds docs/ into `site` as `mdbook build docs` would, missing pages an error rather than
/// created; returns every warning and error.
fn build_manual(site: &Path) -> Vec<String> {
    let root = docs();
    let mut config = mdbook_driver::config::Config::from_disk(root.join("book.toml")).unwrap();
    config.build.build_dir = site.to_path_buf();
    config.build.create_missing = false;
    let recorder = Recorder::default();
    let reports = Arc::clone(&recorder.0);
    let built = tracing::subscriber::with_default(recorder, || {
        mdbook_driver::MDBook::load_with_config(&root, config)?.build()
    });
    let mut reports = reports.lock().unwrap().clone();
    if let Err(e) = built {
        reports.push(format!("the build failed: {e:#}"));
    }
    reports
}

/// Every file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// `html` without its scripts (whose strings are not links of the page).
fn without_scripts(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(start) = rest.find("<script") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</script>") {
            Some(end) => rest = &rest[start + end + "</script>".len()..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// The values of every `NAME="…"` attribute in `html`.
fn attribute_values<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let needle = format!(" {name}=\"");
    html.match_indices(&needle)
        .filter_map(|(at, _)| {
            let value = &html[at + needle.len()..];
            value.find('"').map(|end| &value[..end])
        })
        .collect()
}

/// Whether a link leaves the site (`https:`, `mailto:`…).
fn is_external(target: &str) -> bool {
    let before = target.split(['/', '#', '?']).next().unwrap_or("");
    before.contains(':')
}

/// `path` with `.` and `..` resolved, without looking at the disk.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The `id`s an HTML page defines.
fn ids(html: &str) -> BTreeSet<String> {
    attribute_values(html, "id")
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The relative links of the built site that lead nowhere: to a file the site lacks, or to
/// an anchor the file does not define.
fn broken_links(site: &Path) -> Vec<String> {
    let pages: BTreeMap<PathBuf, String> = files_under(site)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .map(|p| {
            let html = read(&p);
            (p, html)
        })
        .collect();
    let anchors: BTreeMap<&PathBuf, BTreeSet<String>> =
        pages.iter().map(|(p, html)| (p, ids(html))).collect();
    let mut broken = BTreeSet::new();
    for (page, html) in &pages {
        let html = without_scripts(html);
        // 404.html is served at any depth: its links start from the site's root.
        let base = if html.contains("<base href=\"/\"") {
            site.to_path_buf()
        } else {
            page.parent().unwrap().to_path_buf()
        };
        let links = attribute_values(&html, "href")
            .into_iter()
            .chain(attribute_values(&html, "src"));
        for link in links {
            let target = link.replace("&amp;", "&");
            if target.is_empty() || is_external(&target) {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let path = path.split('?').next().unwrap_or("");
            let file = if path.is_empty() {
                page.clone()
            } else if let Some(from_root) = path.strip_prefix('/') {
                normal(&site.join(from_root))
            } else {
                normal(&base.join(path))
            };
            let file = if file.is_dir() {
                file.join("index.html")
            } else {
                file
            };
            let shown = page.strip_prefix(site).unwrap_or(page).display();
            if !file.starts_with(site) || !file.is_file() {
                broken.insert(format!("{shown}: {link}: no such file in the site"));
            } else if !anchor.is_empty()
                && anchors.get(&file).is_none_or(|ids| !ids.contains(anchor))
            {
                broken.insert(format!("{shown}: {link}: the page has no id {anchor:?}"));
            }
        }
    }
    broken.into_iter().collect()
}

#[test]
fn the_manual_builds_without_a_warning_and_every_link_in_it_resolves() {
    let site = tempfile::tempdir().unwrap();
    let reports = build_manual(site.path());
    assert!(
        reports.is_empty(),
        "mdBook reported, building docs/:\n{}",
        reports.join("\n")
    );
    assert!(site.path().join("index.html").is_file());
    let broken = broken_links(site.path());
    assert!(
        broken.is_empty(),
        "{} links of the built manual lead nowhere:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// README.md
// ---------------------------------------------------------------------------------------

/// `line` without its code spans.
fn without_code(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// The targets of a Markdown file's inline links, outside code.
fn markdown_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced {
            continue;
        }
        let line = without_code(line);
        for (at, _) in line.match_indices("](") {
            let rest = &line[at + 2..];
            if let Some(end) = rest.find(')') {
                links.push(rest[..end].to_string());
            }
        }
    }
    links
}

/// The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped,
/// spaces as `-`.
fn heading_anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut anchors = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        let anchor: String = heading
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        anchors.insert(anchor);
    }
    anchors
}

#[test]
fn every_relative_link_of_the_readme_resolves() {
    let root = Path::new(ROOT);
    let readme = read(&root.join("README.md"));
    let mut broken = Vec::new();
    for link in markdown_links(&readme) {
        if is_external(&link) {
            continue;
        }
        let (path, anchor) = link.split_once('#').unwrap_or((&link, ""));
        let file = if path.is_empty() {
            root.join("README.md")
        } else {
            root.join(path)
        };
        if !file.exists() {
            broken.push(format!("{link}: no such file"));
        } else if !anchor.is_empty()
            && (file.extension().is_none_or(|e| e != "md")
                || !heading_anchors(&read(&file)).contains(anchor))
        {
            broken.push(format!("{link}: no heading with the anchor {anchor:?}"));
        }
    }
    assert!(
        broken.is_empty(),
        "README.md links lead nowhere:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_readme_is_one_page() {
    let lines = read(&Path::new(ROOT).join("README.md")).lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, over {README_MAX_LINES}: move the detail into docs/"
    );
}
