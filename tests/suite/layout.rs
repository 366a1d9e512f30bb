//! `layout = "randomized"` end to end: every run's environment is padded by a length drawn
//! from the seed, the run sees that padding, runs.csv and plan.json record it, and the check
//! "the primary metric does not depend on the memory layout" fails on a fixture whose time
//! steps up by 8% from 2,048 bytes of padding and passes on one whose time does not move.
//! The fixtures print a time computed from the padding they see, so every figure is known
//! whatever the machine.

use crate::common::{Project, csv_rows, verdicts};
use lab::Exit;
use serde_json::Value;
use std::collections::BTreeMap;

const CHECK: &str = "the primary metric does not depend on the memory layout";

/// Runs fixture `name` (ending as `expected`) and returns the project and its layout check.
fn run(name: &str, expected: Exit) -> (Project, Value) {
    run_edited(name, "", expected)
}

/// [`run`] with `extra` lines added after `layout = "randomized"` in the fixture's lab.toml.
fn run_edited(name: &str, extra: &str, expected: Exit) -> (Project, Value) {
    let project = Project::with_fixtures(&[name]);
    let path = format!("experiments/{name}");
    let toml = project.path(&format!("{path}/lab.toml"));
    let source = std::fs::read_to_string(&toml).unwrap();
    let layout = "layout = \"randomized\"\n";
    std::fs::write(&toml, source.replace(layout, &format!("{layout}{extra}"))).unwrap();
    project.lab_exits(&["run", &path, "--quiet"], expected);
    let check = layout_check(&project, &path);
    (project, check)
}

fn layout_check(project: &Project, path: &str) -> Value {
    verdicts(project, path)
        .into_iter()
        .find(|c| c["name"] == CHECK)
        .unwrap_or_else(|| panic!("{path}: no check named {CHECK:?}"))
}

fn text<'a>(check: &'a Value, field: &str) -> &'a str {
    check[field].as_str().unwrap_or_default()
}

#[test]
fn a_time_that_steps_with_the_padding_fails_the_check_naming_the_cell_and_the_effect() {
    let (project, check) = run("layout-sensitive", Exit::CheckFailed);
    assert_eq!(check["verdict"], "fail", "{}", text(&check, "evidence"));
    assert_eq!(check["automatic"], true);
    assert_eq!(
        text(&check, "reading"),
        "cell bench n=2: runs with ≥ 2,048 bytes of padding are 7.7% [6.4%, 9.5%] slower"
    );
    assert_eq!(
        text(&check, "evidence"),
        "bench n=1: larger/smaller padding 1.000 [0.9825, 1.007]; bench n=2: larger/smaller padding 1.077 [1.064, 1.095]; 95% CI, tolerance ±2.0%"
    );
    assert_eq!(check["cells"], serde_json::json!(["bench n=2"]));
    assert_eq!(check["runs"].as_array().map_or(0, Vec::len), 14);
    let chapter = project.read("book/src/layout-sensitive/index.md");
    assert!(
        chapter.contains("| memory layout | randomised: environment padding 0–4,095 bytes per run (LAB_LAYOUT_PAD), drawn from seed 11;"),
        "{chapter}"
    );
}

/// Each run saw in `${#LAB_LAYOUT_PAD}` the padding runs.csv and plan.json record for it, and
/// that padding is the seeded draw for the run.
#[test]
fn every_run_sees_the_padding_its_row_records_and_the_seed_draws() {
    let (project, check) = run("layout-insensitive", Exit::Ok);
    assert_eq!(check["verdict"], "pass", "{}", text(&check, "evidence"));
    assert_eq!(
        text(&check, "reading"),
        "in both cells the runs with larger paddings are within ±2.0% of those with smaller ones"
    );
    let session = project.session("layout-insensitive");
    let runs = csv_rows(&session.join("runs.csv"));
    let header = std::fs::read_to_string(session.join("runs.csv")).unwrap();
    assert!(
        header
            .lines()
            .next()
            .unwrap()
            .ends_with(",stderr_sha256,wait_ns,wait_tasks,wait_share,env_padding"),
        "the column comes after the existing ones"
    );
    let printed: BTreeMap<String, String> = csv_rows(&session.join("samples.csv"))
        .into_iter()
        .filter(|s| s["metric"] == "pad")
        .map(|s| (s["run_id"].clone(), s["value"].clone()))
        .collect();
    let plan: Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("plan.json")).unwrap()).unwrap();
    let planned: BTreeMap<String, u64> = plan["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["env_padding"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(runs.len(), 28);
    let (mut lower, mut upper) = (0, 0);
    for row in &runs {
        let id = &row["run_id"];
        let padding: u32 = row["env_padding"].parse().unwrap();
        assert_eq!(
            printed[id],
            padding.to_string(),
            "{id}: the run saw its padding"
        );
        assert_eq!(planned[id], u64::from(padding), "{id}: plan.json agrees");
        let repetition: u32 = row["repetition"].parse().unwrap();
        assert_eq!(
            lab::plan::layout::padding(11, id, repetition),
            padding,
            "{id}"
        );
        if padding >= 2048 {
            upper += 1;
        } else {
            lower += 1;
        }
    }
    assert_eq!(
        (lower, upper),
        (14, 14),
        "seven runs of each cell in each half"
    );
}

/// A tighter tolerance than the fixture's spread can vouch for leaves the check open: the
/// same runs (the same seed) as the test above, judged against ±1%.
#[test]
fn a_tolerance_narrower_than_the_interval_is_inconclusive() {
    let (_, check) = run_edited(
        "layout-insensitive",
        "layout_tolerance = \"1%\"\n",
        Exit::Ok,
    );
    assert_eq!(check["verdict"], "inconclusive");
    assert_eq!(
        text(&check, "reading"),
        "the intervals of bench n=1, bench n=2 reach past ±1.0%: more runs would decide"
    );
}
