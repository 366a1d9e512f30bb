//! A session is read with the analysis it was recorded for: a session recorded now draws its
//! resamples from xoshiro256++ streams (analysis 3: from analysis 2 on) and says so; one recorded before the
//! manifest named an analysis keeps analysis 1's ChaCha8 intervals; one of an analysis this
//! lab does not know is refused; `lab reanalyze` derives a session read with today's.

use crate::common;
use lab::Exit;

use common::Project;

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every cell's interval ends of every metric in the chapter's analysis.json.
fn interval_ends(project: &Project) -> Vec<(String, String, f64, f64)> {
    let analysis = json(&project.path("book/src/many/analysis.json"));
    let mut ends = Vec::new();
    for cell in analysis["cells"].as_array().unwrap() {
        for key in ["median_ci", "mean_ci"] {
            if let Some(ci) = cell[key].as_object() {
                ends.push((
                    format!("{} {}", cell["label"], cell["metric"]),
                    key.to_string(),
                    ci["lo"].as_f64().unwrap(),
                    ci["hi"].as_f64().unwrap(),
                ));
            }
        }
    }
    ends
}

fn set_analysis(manifest: &std::path::Path, analysis: Option<u64>) {
    let mut m = json(manifest);
    let fields = m.as_object_mut().unwrap();
    match analysis {
        Some(n) => fields.insert("analysis".into(), n.into()),
        None => fields.remove("analysis"),
    };
    std::fs::write(manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    // The session now reads as one an older lab wrote, which kept no seal outside the project.
    let project = manifest.ancestors().nth(4).unwrap();
    let _ = std::fs::remove_dir_all(project.join(".lab-state"));
}

/// The `many` fixture with a value that differs from run to run (its process id), so that
/// other resamples give other interval ends, and runs of 0.2 s, far above the highest timing
/// floor seen with the other tests busy beside it (41 ms): a session with no valid run has no
/// interval to compare.
fn varied() -> Project {
    let project = Project::with_fixtures(&["many"]);
    let toml = project.path("experiments/many/lab.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let from = r#"sleep 0.1; echo \"v=$0\"; echo \"v=$0$0\""#;
    assert!(text.contains(from), "{text}");
    let text = text.replacen(from, r#"sleep 0.2; echo \"v=$(( $$ % 1000 + $0 ))\""#, 1);
    std::fs::write(&toml, text).unwrap();
    project
}

#[test]
fn a_session_keeps_the_analysis_it_was_recorded_for() {
    let project = varied();
    project.lab_exits(&["run", "many", "--quiet"], Exit::Ok);
    let session = project.session("many");
    let manifest = session.join("manifest.json");
    assert_eq!(json(&manifest)["analysis"], 3, "a session recorded now");
    let analysis = json(&project.path("book/src/many/analysis.json"));
    assert_eq!(analysis["resampling"]["generator"], "xoshiro256++");
    let chapter = project.read("book/src/many/index.md");
    assert!(
        chapter.contains("drawn from xoshiro256++ streams (analysis 3)"),
        "{chapter}"
    );
    let second = interval_ends(&project);
    assert!(second.len() >= 6, "{second:?}");

    // The same session as one recorded before the manifest named its analysis.
    set_analysis(&manifest, None);
    project.lab_exits(&["report", "many", "--quiet"], Exit::Ok);
    let analysis = json(&project.path("book/src/many/analysis.json"));
    assert!(
        analysis["resampling"].get("generator").is_none(),
        "analysis 1 reads as before: {}",
        analysis["resampling"]
    );
    assert!(!project.read("book/src/many/index.md").contains("xoshiro"));
    let first = interval_ends(&project);
    assert_eq!(first.len(), second.len());
    let moved = first
        .iter()
        .zip(&second)
        .filter(|(a, b)| (a.2, a.3) != (b.2, b.3));
    assert!(moved.count() >= 1, "other resamples, other ends: {first:?}");
    project.lab_exits(&["report", "many", "--quiet"], Exit::Ok);
    assert_eq!(
        interval_ends(&project),
        first,
        "and the same ones every time"
    );

    // Re-analysed, it derives a session of today's analysis, which names its parent.
    project.lab_exits(&["reanalyze", "many", "--quiet"], Exit::Ok);
    let derived = project.session("many");
    assert_ne!(derived, session);
    let derived_manifest = json(&derived.join("manifest.json"));
    assert_eq!(derived_manifest["analysis"], 3);
    let parent = session.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(derived_manifest["derived_from"], parent.as_str());
    assert_eq!(
        interval_ends(&project),
        second,
        "today's analysis of the same runs"
    );
    assert!(
        project
            .read("book/src/many/index.md")
            .contains(&format!("re-analysed from session {parent}"))
    );
}

#[test]
fn a_session_of_an_analysis_this_lab_does_not_know_is_refused_by_name() {
    let project = Project::with_fixtures(&["many"]);
    project.lab_exits(&["run", "many", "--quiet"], Exit::Ok);
    let manifest = project.session("many").join("manifest.json");
    set_analysis(&manifest, Some(4));
    let out = project.lab_exits(&["report", "many", "--quiet"], Exit::Internal);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("manifest.json")
            && err.contains("key `analysis`")
            && err.contains("analysis 4")
            && err.contains("hint:"),
        "{err}"
    );
}
