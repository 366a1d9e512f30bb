use super::*;
use std::cell::RefCell;

thread_local! {
    /// The state folder [`state_dir`] gives in this thread's test.
    pub(super) static STATE: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
}

/// A session folder `name` under a data folder, and a state folder of its own for the test.
fn session(name: &str) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    STATE.with(|s| *s.borrow_mut() = Some(root.path().join("state")));
    let dir = root.path().join("data").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    (root, dir)
}

fn manifest_with(dir: &Path, digests: &[(&str, &str)]) -> crate::Manifest {
    let mut manifest = crate::tests::fixture_manifest();
    manifest.digests = digests
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    crate::write_json(&dir.join(crate::MANIFEST), &manifest).unwrap();
    manifest
}

#[test]
fn a_session_lab_did_not_record_is_unrecorded_and_never_damaged_by_that() {
    let (_root, dir) = session("29991231T235959Z-vm");
    let manifest = manifest_with(&dir, &[]);
    let verified = verify(&dir, &manifest);
    assert_eq!(verified.standing, Standing::Unrecorded);
    assert_eq!(verified.damage, None);
    assert_eq!(
        recorded(dir.parent().unwrap(), std::slice::from_ref(&dir)),
        [false]
    );
}

#[test]
fn a_manifest_rewritten_after_lab_sealed_it_is_damaged() {
    let (_root, dir) = session("s1");
    std::fs::write(dir.join("runs.csv"), "a\n").unwrap();
    let digest = crate::sha256_hex(b"a\n");
    let manifest = manifest_with(&dir, &[("runs.csv", &digest)]);
    record_closed(&dir).unwrap();
    assert_eq!(
        verify(&dir, &manifest),
        Verified {
            standing: Standing::Sealed,
            damage: None
        }
    );
    // The file changed and its digest re-sealed in the manifest: only lab's record tells.
    std::fs::write(dir.join("runs.csv"), "b\n").unwrap();
    let forged = manifest_with(&dir, &[("runs.csv", &crate::sha256_hex(b"b\n"))]);
    let damage = verify(&dir, &forged).damage.unwrap();
    assert!(
        damage.starts_with("manifest.json is not the file the session was sealed with"),
        "{damage}"
    );
}

#[test]
fn an_open_session_whose_manifest_claims_digests_is_damaged() {
    let (_root, dir) = session("s1");
    let manifest = manifest_with(&dir, &[]);
    record_open(&dir).unwrap();
    assert_eq!(verify(&dir, &manifest).standing, Standing::Open);
    assert_eq!(verify(&dir, &manifest).damage, None);
    let claimed = manifest_with(&dir, &[("runs.csv", "00")]);
    assert_eq!(
        verify(&dir, &claimed).damage.as_deref(),
        Some("manifest.json holds digests lab did not seal")
    );
}

#[test]
fn a_baselines_list_edited_after_lab_wrote_it_is_damaged() {
    let (_root, dir) = session("s1");
    let file = dir.parent().unwrap().join("baselines.json");
    std::fs::write(&file, "{\"main\": \"s1\"}\n").unwrap();
    assert_eq!(sealed_file_damage(&file), None);
    seal_file(&file).unwrap();
    assert_eq!(sealed_file_damage(&file), None);
    std::fs::write(&file, "{\"main\": \"s2\"}\n").unwrap();
    let damage = sealed_file_damage(&file).unwrap();
    assert!(
        damage.starts_with("baselines.json is not the file lab wrote"),
        "{damage}"
    );
}
