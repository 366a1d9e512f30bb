//! The lab.toml `lab import` writes reads back with the types it was written with.

use super::*;
use crate::import::formats::Run;

fn benchmark(name: &str, size: &str) -> Benchmark {
    Benchmark {
        name: name.into(),
        params: BTreeMap::from([("size".to_string(), size.to_string())]),
        metric: "time".into(),
        unit: "s".into(),
        higher_is_better: false,
        runs: vec![Run::measured(vec![1.0])],
        summary_only: false,
    }
}

#[test]
fn generated_floats_read_back_as_floats() {
    let imported = Imported {
        format: Format::Hyperfine,
        tool_version: None,
        context: BTreeMap::new(),
        benchmarks: vec![benchmark("big", "1e20"), benchmark("two", "2.0")],
    };
    let opts = ImportOptions {
        format: Format::Hyperfine,
        files: &[],
        into: Path::new("x"),
        filter: None,
        quiet: true,
        command_line: "lab import hyperfine f.json --into x".into(),
    };
    let metric = ("time".to_string(), "s".to_string(), false);
    let text = generated_toml("x", &imported, &metric, &opts).unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let floats = |v: &toml::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_float().unwrap_or_else(|| panic!("{x:?} in\n{text}")))
            .collect()
    };
    assert_eq!(floats(&table["params"]["size"]), [1e20, 2.0]);
    assert_eq!(floats(&table["variant"][0]["params"]["size"]), [1e20]);
    assert_eq!(floats(&table["variant"][1]["params"]["size"]), [2.0]);
}
