//! The `order` check against carry-over within one variant: `carry-flawed` runs twice as fast
//! whenever the previous run of its own variant left a marker behind, so each variant
//! alternates 29 / 58 Mops/s whatever ran in between; `carry-clean` prints the same values
//! around 29 Mops/s and leaves nothing behind. Values come from a per-variant counter and the
//! run order is seeded, so the verdicts do not depend on this machine.

use crate::common;
use crate::common::exit_of;
use lab::Exit;

use common::Project;
use serde_json::Value;

const CHECK: &str = "no dependence on position or the runs before";

/// Runs the fixture `name` and returns its `order` check and the exit code of `lab check`.
fn order_check(name: &str) -> (Value, Exit) {
    let project = Project::with_fixtures(&[name]);
    let path = format!("experiments/{name}");
    let run = exit_of(&project.lab(&["run", &path, "--quiet"]));
    let out = project.lab(&["check", &path, "--json"]);
    let checks: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{name}: check --json: {e}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let check = checks
        .into_iter()
        .find(|c| c["name"] == CHECK)
        .unwrap_or_else(|| panic!("{name}: no check named {CHECK:?}"));
    assert_eq!(run, exit_of(&out), "{name}: lab run ends as lab check does");
    (check, run)
}

fn text<'a>(check: &'a Value, field: &str) -> &'a str {
    check[field].as_str().unwrap_or_default()
}

#[test]
fn carry_over_within_a_variant_fails_on_serial_dependence_within_cells() {
    let (check, code) = order_check("carry-flawed");
    assert_eq!(
        check["verdict"],
        "fail",
        "{}\n{}",
        text(&check, "reading"),
        text(&check, "evidence")
    );
    assert_eq!(code, Exit::CheckFailed);
    assert_eq!(
        text(&check, "reading"),
        "serial dependence within cells: each run lands on the other side of its cell's mean \
         from the previous run of its cell (mean lag-1 r = −1.00, adjusted p = 0.0027)"
    );
    assert_eq!(check["runs"].as_array().map_or(0, Vec::len), 16);
    // As in the issue, grouping runs by the variant that ran just before sees nothing: only
    // the pairs of runs of one cell do.
    let evidence = text(&check, "evidence");
    for part in [
        "Holm-adjusted over the 5 tests that ran",
        "carry-over: Kruskal–Wallis by the previous run's variant H = 0.40, df = 1, p = 0.53 (Holm-adjusted 1.0)",
        "within cells: Wald–Wolfowitz serial correlation of detrended residuals, mean lag-1 r = −1.00 over 2 cells (16 runs), z = −3.46, p = 0.00054 (Holm-adjusted 0.0027)",
    ] {
        assert!(evidence.contains(part), "{part}: {evidence}");
    }
}

#[test]
fn its_clean_twin_passes_with_every_part_tested() {
    let (check, code) = order_check("carry-clean");
    assert_eq!(
        check["verdict"],
        "pass",
        "{}\n{}",
        text(&check, "reading"),
        text(&check, "evidence")
    );
    assert_eq!(code, Exit::Ok);
    assert_eq!(
        text(&check, "reading"),
        "no dependence on execution order (adjusted p ≥ 1.0): neither on position, nor on the \
         previous run, nor between runs of a cell, nor in a cell's first run"
    );
    let evidence = text(&check, "evidence");
    for part in [
        "Holm-adjusted over the 5 tests that ran",
        "trend: Mann–Kendall",
        "against a declared limit of 5%",
        "carry-over: Kruskal–Wallis",
        "within cells: Wald–Wolfowitz",
        "whole sequence: Ljung–Box",
        "first of cell: van Elteren rank sum",
    ] {
        assert!(evidence.contains(part), "{part}: {evidence}");
    }
}
