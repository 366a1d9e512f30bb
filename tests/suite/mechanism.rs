//! `mechanism` checks end to end: two sessions of a lock whose contention level `k` raises
//! the waits it counts; where work falls as waits rise the check passes, where work only
//! wobbles it fails, with Spearman's ρ over the 24 runs of the 4 cells in both readings.

use crate::common;
use lab::Exit;
use serde_json::Value;

use common::{Project, exit_of};

/// The exit of `lab run`, the check's result from `lab check --json`, and the chapter.
fn run(name: &str) -> (Exit, Value, String) {
    let project = Project::with_fixtures(&["mechanism"]);
    let path = format!("experiments/mechanism/{name}");
    let code = exit_of(&project.lab(&["run", &path, "--quiet"]));
    let check = project.lab(&["check", &path, "--json"]);
    let checks: Vec<Value> = serde_json::from_slice(&check.stdout).expect("check --json");
    let result = checks
        .into_iter()
        .find(|c| c["name"] == "work falls as waits rise")
        .expect("the mechanism check");
    let page = project.read(&format!("book/src/{name}/index.md"));
    (code, result, page)
}

#[test]
fn work_that_falls_as_waits_rise_passes() {
    let (code, check, page) = run("mechanism-holds");
    assert_eq!(check["verdict"], "pass", "{check}");
    assert_eq!(check["kind"], "mechanism");
    assert_eq!(check["class"], "hypothesis");
    // scipy.stats.spearmanr over the 24 (work, waits) pairs work.sh prints: -0.96606.
    assert_eq!(
        check["reading"],
        "`work` falls as `waits` rises across 4 cells: ρ = -0.97 [-0.99, -0.94], the whole \
         interval ≤ -0.50"
    );
    assert_eq!(
        check["evidence"],
        "Spearman ρ = -0.97 [-0.99, -0.94] (95% CI) over 24 runs in 4 cells; needs ρ ≤ -0.50 \
         (opposite: `work` falls as `waits` rises)"
    );
    assert_eq!(check["runs"].as_array().unwrap().len(), 24);
    assert_eq!(
        check["cells"],
        serde_json::json!(["lock k=1", "lock k=2", "lock k=3", "lock k=4"])
    );
    assert_eq!(code, Exit::Ok, "{check}");
    assert!(
        page.contains(
            "ρ = <a href=\"provenance.md#check.work-falls-as-waits-rise.rho\">-0.97 [-0.99, -0.94]</a>"
        ),
        "{page}"
    );
}

#[test]
fn work_that_only_wobbles_fails() {
    let (code, check, _) = run("mechanism-absent");
    assert_eq!(check["verdict"], "fail", "{check}");
    // scipy.stats.spearmanr over the 24 pairs: -0.01357.
    assert_eq!(
        check["reading"],
        "`work` does not fall as `waits` rises strongly enough: ρ = -0.01 [-0.38, 0.35] \
         across 4 cells, the whole interval short of ρ ≤ -0.50"
    );
    assert_eq!(code, Exit::CheckFailed);
}

#[test]
fn a_strength_beyond_one_is_a_configuration_error() {
    let project = Project::with_fixtures(&["mechanism"]);
    let toml = project.path("experiments/mechanism/mechanism-holds/lab.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, format!("{text}min_rho = 1.5\n")).unwrap();
    let args = ["run", "experiments/mechanism/mechanism-holds", "--quiet"];
    let out = project.lab_exits(&args, Exit::Usage);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "lab.toml:31:11: `check[1].min_rho`: 1.5 is not a correlation the check can require"
        ),
        "{err}"
    );
}
