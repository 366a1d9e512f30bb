//! Parsing and resolving every form of [`SessionRef`] against a folder of stored sessions.

use super::*;
use crate::{GitState, Sealed, SessionWriter};
use lab_config::plan::Plan;

/// Three sessions, the two last made at commits `abcd1234…` and `abcd9999…`.
fn list() -> (tempfile::TempDir, SessionList) {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data/exp");
    std::fs::create_dir_all(&data).unwrap();
    for (name, commit) in [
        ("20260101T000000Z-a", "0123"),
        ("20260102T000000Z-b", "abcd1234"),
        ("20260102T120000Z-c", "abcd9999"),
    ] {
        let mut m = crate::tests::fixture_manifest();
        m.git = Some(GitState {
            commit: commit.into(),
            dirty: false,
        });
        let plan = Plan {
            order: lab_config::Order::Shuffled,
            seed: 1,
            runs: Vec::new(),
        };
        let sealed = Sealed {
            lab_toml: "x".into(),
            notes: None,
            references: None,
        };
        SessionWriter::create(data.join(name), &m, &plan, Vec::new(), &sealed).unwrap();
    }
    let list = SessionList::new("exp", Path::new("experiments/exp"), &data);
    (root, list)
}

fn parsed(text: &str) -> SessionRef {
    text.parse().unwrap()
}

fn resolved(list: &SessionList, text: &str) -> Result<String> {
    list.resolve(&parsed(text)).map(|d| folder_name(&d))
}

#[test]
fn every_spelling_parses_to_its_form() {
    assert_eq!(parsed("latest"), SessionRef::Latest);
    assert_eq!(parsed("previous"), SessionRef::Previous);
    assert_eq!(parsed("2026"), SessionRef::Named("2026".into()));
    assert_eq!(parsed("baseline:main"), SessionRef::Baseline("main".into()));
    let empty = "baseline:".parse::<SessionRef>().unwrap_err();
    assert!(
        empty.contains("names no baseline") && empty.contains("`previous`"),
        "{empty}"
    );
}

#[test]
fn latest_and_previous_count_from_the_newest() {
    let (_root, list) = list();
    assert_eq!(resolved(&list, "latest").unwrap(), "20260102T120000Z-c");
    assert_eq!(resolved(&list, "previous").unwrap(), "20260102T000000Z-b");
    assert_eq!(
        folder_name(&list.find(None).unwrap().unwrap()),
        "20260102T120000Z-c"
    );
    let empty = SessionList::new(
        "none",
        Path::new("experiments/none"),
        Path::new("/nonexistent"),
    );
    assert_eq!(empty.find(None).unwrap(), None);
    let e = empty
        .resolve(&SessionRef::Previous)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("none has 0 sessions: there is no previous one"),
        "{e}"
    );
}

#[test]
fn a_name_or_a_unique_prefix_finds_its_session() {
    let (_root, list) = list();
    assert_eq!(
        resolved(&list, "20260101T000000Z-a").unwrap(),
        "20260101T000000Z-a"
    );
    assert_eq!(
        resolved(&list, "20260102T12").unwrap(),
        "20260102T120000Z-c"
    );
}

#[test]
fn an_ambiguous_prefix_is_refused_with_the_sessions_listed() {
    let (_root, list) = list();
    let e = resolved(&list, "20260102").unwrap_err();
    assert!(matches!(e, SessionError::Usage(_)), "{e}");
    let e = e.to_string();
    assert!(
        e.starts_with("exp has 2 sessions named like \"20260102\""),
        "{e}"
    );
    assert!(
        e.contains("hint: sessions of exp: 20260101T000000Z-a, "),
        "{e}"
    );
}

#[test]
fn a_commit_finds_the_newest_session_made_at_it() {
    let (_root, list) = list();
    assert_eq!(resolved(&list, "ABCD").unwrap(), "20260102T120000Z-c");
    assert_eq!(resolved(&list, "abcd1").unwrap(), "20260102T000000Z-b");
    // Under four hex digits a commit is not tried: "0123" is no session's name.
    let e = resolved(&list, "012").unwrap_err().to_string();
    assert!(
        e.starts_with("exp has no sessions named like \"012\""),
        "{e}"
    );
    assert!(e.contains("`latest`, `previous`, a git commit"), "{e}");
}

#[test]
fn a_baseline_resolves_to_the_session_saved_under_it() {
    let (_root, list) = list();
    let e = resolved(&list, "baseline:main").unwrap_err().to_string();
    assert!(
        e.contains(
            "no baseline named \"main\"\n  hint: save one with `lab baseline experiments/exp main`"
        ),
        "{e}"
    );
    save_baseline(&list.data_dir, "main", "20260101T000000Z-a").unwrap();
    assert_eq!(
        resolved(&list, "baseline:main").unwrap(),
        "20260101T000000Z-a"
    );
    let e = resolved(&list, "baseline:release").unwrap_err().to_string();
    assert!(
        e.contains("no baseline named \"release\"\n  hint: baselines: main"),
        "{e}"
    );
}
