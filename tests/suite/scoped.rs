//! Scoped and practical `stable` checks on one session: a scope leaves a noisy-by-design
//! variant out, a per-variant limit allows it more spread, and two modes 2.9% apart pass
//! under the default gap (the CV limit) but fail when the declared gap is 1%.

use crate::common;
use lab::Exit;

use common::Project;

#[test]
fn stability_is_judged_where_and_as_strictly_as_declared() {
    let project = Project::with_fixtures(&["scoped"]);
    project.lab_exits(&["run", "scoped", "--quiet"], Exit::CheckFailed);
    let out = project.lab_exits(&["check", "scoped", "--json"], Exit::CheckFailed);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = |name: &str| {
        json.as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no check {name}"))
            .clone()
    };
    let every = check("every cell is stable");
    assert_eq!(every["verdict"], "fail");
    assert_eq!(every["cells"], serde_json::json!(["noisy"]), "{every}");
    assert!(
        every["reading"]
            .as_str()
            .unwrap()
            .starts_with("noisy varies "),
        "{every}"
    );

    let quiet = check("quiet is stable");
    assert_eq!(quiet["verdict"], "pass", "{quiet}");
    assert_eq!(
        quiet["cells"],
        serde_json::json!(["quiet"]),
        "only the scoped cell"
    );

    let allowed = check("stable with noisy allowed more spread");
    assert_eq!(allowed["verdict"], "pass", "{allowed}");
    assert!(
        allowed["evidence"]
            .as_str()
            .unwrap()
            .contains("limit CV ≤ 10.0% (noisy ≤ 100.0%)"),
        "{allowed}"
    );

    let close = check("close modes matter at a 1% gap");
    assert_eq!(close["verdict"], "fail", "{close}");
    assert_eq!(
        close["reading"],
        "close has two modes 2.9% apart: 50.0% of runs at 57.8 and 50.0% of runs at 59.5 (CV 1.5%)"
    );
    assert_eq!(close["cells"], serde_json::json!(["close"]));
}

#[test]
fn a_scope_must_name_declared_cells() {
    let project = Project::with_fixtures(&["scoped"]);
    let toml = project.path("experiments/scoped/lab.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        text.replace(
            r#"cells = { variant = "quiet" }"#,
            r#"cells = { variant = "quite" }"#,
        ),
    )
    .unwrap();
    let out = project.lab_exits(&["run", "scoped", "--quiet"], Exit::Usage);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("lab.toml:"), "{err}");
    assert!(err.contains("check[2].cells"), "{err}");
    assert!(err.contains("quite"), "{err}");
}
