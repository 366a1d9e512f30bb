//! `layout = "randomized"` end to end: every run's environment is padded by a length drawn
//! from the seed and its heap shifted by an amount drawn from it, the run sees both, runs.csv
//! and plan.json record them, and the check "the primary metric does not depend on the memory
//! layout" fails on a fixture whose time steps up by 8% from 2,048 bytes of padding at one
//! n and by 10% where the heap lands 48 bytes along a cache line at another, and passes on one
//! whose time does not move. The fixtures print a time computed from the padding and shift
//! they see, so every figure is known whatever the machine. A C program shows that the heap
//! really moves by the recorded shift, and that a statically linked one is not shifted.

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
        "cell bench n=2: runs with ≥ 2,048 bytes of padding are 9.1% [8.2%, 10.3%] slower; cell bench n=3: runs whose heap was shifted 48 bytes along a cache line (heap_shift mod 64 = 48) are 9.6% [8.5%, 10.7%] slower than the others: the result depends on where the heap lands, not on the variant"
    );
    assert_eq!(
        text(&check, "evidence"),
        "bench n=1: larger/smaller padding 0.9931 [0.9835, 1.006], heap at +16 bytes/others 0.9917 [0.9844, 0.9971] (permutation p = 0.39); bench n=2: larger/smaller padding 1.091 [1.082, 1.103], heap at +48 bytes/others 1.081 [0.9178, 1.097] (permutation p = 0.43); bench n=3: larger/smaller padding 1.003 [0.9893, 1.094], heap at +48 bytes/others 1.096 [1.085, 1.107] (permutation p = 0.042); 95% CI, tolerance ±2.0%"
    );
    assert_eq!(
        check["cells"],
        serde_json::json!(["bench n=2", "bench n=3"])
    );
    assert_eq!(check["runs"].as_array().map_or(0, Vec::len), 28);
    let chapter = project.read("book/src/layout-sensitive/index.md");
    assert!(
        chapter.contains("| memory layout | randomised: environment padding 0–4,095 bytes per run (LAB_LAYOUT_PAD), drawn from seed 11;"),
        "{chapter}"
    );
    assert!(
        chapter.contains("; heap shifted 0–4,080 bytes per run in steps of 16 by a preloaded shim (LAB_HEAP_SHIFT), "),
        "{chapter}"
    );
}

/// The value each run printed of `metric`, by run.
fn printed(samples: &[BTreeMap<String, String>], metric: &str) -> BTreeMap<String, String> {
    samples
        .iter()
        .filter(|s| s["metric"] == metric)
        .map(|s| (s["run_id"].clone(), s["value"].clone()))
        .collect()
}

/// Each run's padding and heap shift as plan.json records them.
fn planned_layout(session: &std::path::Path) -> BTreeMap<String, (u64, u64)> {
    let plan: Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("plan.json")).unwrap()).unwrap();
    plan["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                (
                    r["env_padding"].as_u64().unwrap(),
                    r["heap_shift"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

/// The run's padding and heap shift, which it printed (`[pads, heaps]`), plan.json records
/// too and which are the seeded draws for the run (seed 11); the shift is a multiple of 16
/// within a page.
fn assert_saw_its_draws(
    row: &BTreeMap<String, String>,
    [pads, heaps]: [&BTreeMap<String, String>; 2],
    planned: &BTreeMap<String, (u64, u64)>,
) -> (u32, u32) {
    let id = &row["run_id"];
    let padding: u32 = row["env_padding"].parse().unwrap();
    let shift: u32 = row["heap_shift"].parse().unwrap();
    assert_eq!(
        pads[id],
        padding.to_string(),
        "{id}: the run saw its padding"
    );
    assert_eq!(heaps[id], shift.to_string(), "{id}: the run saw its shift");
    assert_eq!(
        planned[id],
        (u64::from(padding), u64::from(shift)),
        "{id}: plan.json agrees"
    );
    let repetition: u32 = row["repetition"].parse().unwrap();
    assert_eq!(
        lab::plan::layout::padding(11, id, repetition),
        padding,
        "{id}"
    );
    assert_eq!(
        lab::plan::layout::heap_shift(11, id, repetition),
        shift,
        "{id}"
    );
    assert!(shift < 4096 && shift.is_multiple_of(16), "{id}: {shift}");
    (padding, shift)
}

/// Each run saw in `${#LAB_LAYOUT_PAD}` the padding runs.csv and plan.json record for it, and
/// in `$LAB_HEAP_SHIFT` its heap shift; both are the seeded draws for the run, and the heap
/// positions are drawn evenly.
#[test]
fn every_run_sees_the_padding_its_row_records_and_the_seed_draws() {
    let (project, check) = run("layout-insensitive", Exit::Ok);
    assert_eq!(check["verdict"], "pass", "{}", text(&check, "evidence"));
    assert_eq!(
        text(&check, "reading"),
        "in both cells the runs with larger paddings are within ±2.0% of those with smaller ones, and the runs at each heap position within a cache line within ±2.0% of the others"
    );
    let session = project.session("layout-insensitive");
    let runs = csv_rows(&session.join("runs.csv"));
    let header = std::fs::read_to_string(session.join("runs.csv")).unwrap();
    assert!(
        header
            .lines()
            .next()
            .unwrap()
            .ends_with(",stderr_sha256,wait_ns,wait_tasks,wait_share,env_padding,heap_shift"),
        "the columns come after the existing ones"
    );
    let samples = csv_rows(&session.join("samples.csv"));
    let (pads, heaps) = (printed(&samples, "pad"), printed(&samples, "heap"));
    let planned = planned_layout(&session);
    assert_eq!(runs.len(), 28);
    let (mut lower, mut upper) = (0, 0);
    let mut positions = [0; 4];
    for row in &runs {
        let (padding, shift) = assert_saw_its_draws(row, [&pads, &heaps], &planned);
        positions[(shift % 64 / 16) as usize] += 1;
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
    // Fourteen repetitions: every position twice in the first eight, then 0, 1, 2, 3, 1, 0.
    assert_eq!(positions, [8, 8, 6, 6], "by repetition, in each cell alike");
}

/// A tighter tolerance than the fixture's spread can vouch for leaves the check open: the
/// same runs (the same seed) as the test above, judged against ±0.5%.
#[test]
fn a_tolerance_narrower_than_the_interval_is_inconclusive() {
    let (_, check) = run_edited(
        "layout-insensitive",
        "layout_tolerance = \"0.5%\"\n",
        Exit::Ok,
    );
    assert_eq!(check["verdict"], "inconclusive");
    assert_eq!(
        text(&check, "reading"),
        "the intervals of bench n=1, bench n=2 reach past ±0.5%: more runs would decide"
    );
}

/// Whether this machine's C compiler links a program statically (it needs the C library's
/// static archive, which not every system installs).
fn links_statically() -> bool {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("x.c");
    std::fs::write(&source, "int main(void) { return 0; }\n").unwrap();
    std::process::Command::new("cc")
        .args(["-static", "-o"])
        .arg(dir.path().join("x"))
        .arg(&source)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Without a static C library only the dynamic half can be shown: the static variant goes.
fn drop_the_static_variant(project: &Project, path: &str) {
    let toml = project.path(&format!("{path}/lab.toml"));
    let source = std::fs::read_to_string(&toml).unwrap();
    let source = source
        .replace(" && cc -O2 -static -o build/static addr.c", "")
        .replace(", \"build/static\"]", "]")
        .replace(
            "[[variant]]\nname = \"static\"\nrun = [\"build/static\"]\n",
            "",
        );
    std::fs::write(&toml, source).unwrap();
}

/// The statically linked program's block stays where it is in every run, and the session
/// says why.
fn assert_static_heap_kept(kept: &[i64], manifest: &str, chapter: &str) {
    assert_eq!(kept.len(), 8);
    assert!(kept.iter().all(|k| *k == kept[0]), "{kept:?}");
    let why = "`build/static` is statically linked: no dynamic loader runs to preload the heap shim, so its heap stays where it is";
    assert!(manifest.contains(why), "{manifest}");
    assert!(
        chapter.contains("bytes in 8 of 16 runs (runs.csv column heap_shift)"),
        "{chapter}"
    );
    // The page marks the name as code its own way.
    assert!(
        chapter.contains(
            "build/static\\` is statically linked: no dynamic loader runs to preload the heap shim"
        ),
        "{chapter}"
    );
}

/// A C program's first block lands exactly the recorded shift further on in every run: its
/// offset within the page less the shift is the same in all of them, while the offsets
/// themselves differ. The same program linked statically loads no shim: its runs record no
/// shift, see none, keep their block where it was, and the session says why.
#[test]
fn the_heap_moves_by_the_recorded_shift_where_the_program_is_linked_dynamically() {
    let project = Project::with_fixtures(&["layout-heap"]);
    let path = "experiments/layout-heap";
    let statically = links_statically();
    if !statically {
        drop_the_static_variant(&project, path);
    }
    project.lab(&["run", path, "--quiet"]);
    let session = project.session("layout-heap");
    let rows = csv_rows(&session.join("runs.csv"));
    let samples = csv_rows(&session.join("samples.csv"));
    let printed = |id: &str, metric: &str| -> i64 {
        samples
            .iter()
            .find(|s| s["run_id"] == id && s["metric"] == metric)
            .unwrap_or_else(|| panic!("{id}: no {metric}"))["value"]
            .parse()
            .unwrap()
    };
    let (mut moved, mut offsets, mut kept) = (Vec::new(), Vec::new(), Vec::new());
    for row in &rows {
        let id = row["run_id"].as_str();
        let offset = printed(id, "page_offset");
        if row["variant"] == "dynamic" {
            let shift: i64 = row["heap_shift"].parse().expect("a recorded shift");
            assert_eq!(printed(id, "shift"), shift, "{id}: the run saw its shift");
            moved.push((offset - shift).rem_euclid(4096));
            offsets.push(offset);
        } else {
            assert_eq!(row["heap_shift"], "", "{id}: no shift recorded");
            assert_eq!(printed(id, "shift"), -1, "{id}: no shift given");
            kept.push(offset);
        }
    }
    assert_eq!(moved.len(), 8);
    assert!(moved.iter().all(|m| *m == moved[0]), "{moved:?}");
    offsets.dedup();
    assert!(offsets.len() > 1, "the blocks moved: {offsets:?}");
    let manifest = std::fs::read_to_string(session.join("manifest.json")).unwrap();
    let chapter = project.read("book/src/layout-heap/index.md");
    if statically {
        assert_static_heap_kept(&kept, &manifest, &chapter);
    }
    // A session recorded before lab shifted heaps has no such column: it reads as before.
    crate::common::strip_columns(&session.join("runs.csv"), &["heap_shift"]);
    let stored = lab::store::load_session(&session).expect("an older session loads");
    assert!(
        stored
            .runs
            .iter()
            .all(|r| r.heap_shift.is_none() && r.env_padding.is_some())
    );
}
