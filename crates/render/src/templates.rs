//! The default templates, embedded in the binary; an experiment may override any of them by
//! placing a file of the same name in `experiments/NAME/templates/`.

use anyhow::{Context as _, Result};
use std::path::Path;
use tera::{Context, Tera};

/// (name, embedded default) of every template.
const DEFAULTS: [(&str, &str); 10] = [
    ("book.toml", include_str!("../templates/book.toml")),
    ("SUMMARY.md", include_str!("../templates/SUMMARY.md")),
    (
        "introduction.md",
        include_str!("../templates/introduction.md"),
    ),
    ("chapter.md", include_str!("../templates/chapter.md")),
    ("history.md", include_str!("../templates/history.md")),
    ("bisect.md", include_str!("../templates/bisect.md")),
    ("provenance.md", include_str!("../templates/provenance.md")),
    (
        "replications.md",
        include_str!("../templates/replications.md"),
    ),
    (
        "how-to-read.md",
        include_str!("../templates/how-to-read.md"),
    ),
    ("lab.css", include_str!("../templates/lab.css")),
];

/// A Tera instance holding the defaults, or an experiment's overrides where it has them.
pub(crate) fn engine(override_dir: Option<&Path>) -> Result<Tera> {
    let mut tera = Tera::new();
    // Everything that reaches a page is HTML-escaped: run output may contain `<script>`.
    tera.autoescape_on([".md"]);
    for (name, default) in DEFAULTS {
        let custom = override_dir.map(|d| d.join(name)).filter(|p| p.is_file());
        let text = match &custom {
            Some(path) => lab_config::folder_file::read_text(path)
                .with_context(|| format!("cannot read template {}", path.display()))?,
            None => default.to_string(),
        };
        let origin = custom.as_ref().map_or_else(
            || format!("built-in template {name}"),
            |p| p.display().to_string(),
        );
        tera.add_raw_template(name, &text)
            .map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
    }
    Ok(tera)
}

/// Context fields that hold Markdown or HTML lab composed itself from already escaped parts
/// (the answer block, verdict marks, notices, chart and table captions, the rendered notes,
/// the chapter's BibTeX entry in its fence, a Shape cell with its links); every other string
/// is escaped.
const RAW_FIELDS: [&str; 19] = [
    "answer",
    "caption",
    "checks_caption",
    "cite",
    "details_md",
    "evidence_md",
    "figure",
    "headline",
    "levels_md",
    "mark",
    "multiplicity_md",
    "notes",
    "notices",
    "sentence_md",
    "outdated",
    "percentiles_caption",
    "reading_md",
    "shown",
    "text_md",
];

/// Renders one template with a serialisable context. This is the book's escaping boundary:
/// every string of the context but [`RAW_FIELDS`] is made inert for Markdown here, and Tera's
/// autoescape makes it inert for HTML.
pub(crate) fn render<T: serde::Serialize>(tera: &Tera, name: &str, value: &T) -> Result<String> {
    let value = serde_json::to_value(value)?;
    let context = Context::from_serialize(&escape_strings(&value))
        .map_err(|e| anyhow::anyhow!("template {name}: {e}"))?;
    tera.render(name, &context)
        .map_err(|e| anyhow::anyhow!("template {name}: {e}"))
}

fn escape_strings(value: &serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => serde_json::Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if RAW_FIELDS.contains(&k.as_str()) {
                        v.clone()
                    } else {
                        escape_strings(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(escape_strings).collect())
        }
        other => super::escape::markdown_json(other),
    }
}
