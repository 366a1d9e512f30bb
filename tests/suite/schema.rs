//! The lab.toml reference stays true: the committed lab.schema.json is what `lab schema`
//! prints, and the manual's reference tables (docs/src/reference/lab-toml.md) name exactly the
//! keys the schema has.

use std::collections::BTreeSet;

fn schema() -> serde_json::Value {
    serde_json::from_str(&lab::config::schema_json()).unwrap()
}

#[test]
fn the_committed_schema_is_the_one_lab_prints() {
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/lab.schema.json")).unwrap();
    assert_eq!(
        committed.trim_end(),
        lab::config::schema_json(),
        "lab.schema.json is stale: run `lab schema > lab.schema.json`"
    );
}

/// Every key path of the schema, tables of names written as `NAME`.
fn schema_keys() -> BTreeSet<String> {
    let s = schema();
    let defs = &s["$defs"];
    let tables = [
        ("experiment", "RawExperiment"),
        ("build", "RawBuild"),
        ("variant", "RawVariant"),
        ("metric.NAME", "RawMetric"),
        ("profile.NAME", "RawProfile"),
        ("check", "RawCheck"),
    ];
    let mut keys: BTreeSet<String> = tables
        .iter()
        .flat_map(|(prefix, def)| {
            defs[def]["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(move |k| format!("{prefix}.{k}"))
        })
        .collect();
    keys.insert("params.NAME".to_string());
    keys
}

/// The first column of the manual's lab.toml reference tables.
fn reference_keys() -> BTreeSet<String> {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/src/reference/lab-toml.md"
    ))
    .unwrap();
    page.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_reference_names_every_key_of_the_schema_and_no_other() {
    let (schema, reference) = (schema_keys(), reference_keys());
    let missing: Vec<&String> = schema.difference(&reference).collect();
    let extra: Vec<&String> = reference.difference(&schema).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing from docs/src/reference/lab-toml.md: {missing:?}; not in the schema: {extra:?}"
    );
    assert_eq!(schema.len(), 80);
}
