use super::*;

const LAB_TOML: &str = r#"
[experiment]
title = "t"
hypothesis = "h"

[build]
run = ["sh", "src/build.sh"]
inputs = ["src/*.c", "src/build.sh"]
outputs = ["build/bench"]

[[variant]]
name = "a"
run = ["./build/bench", "--n={n}", "data/input.txt"]

[[variant]]
name = "b"
run = ["python3", "bench.py", "/usr/bin/env", "../outside.txt"]

[params]
n = [1]
"#;

fn folder() -> (tempfile::TempDir, Experiment) {
    let dir = tempfile::Builder::new().prefix("exp").tempdir().unwrap();
    let d = dir.path();
    for (path, text) in [
        ("lab.toml", LAB_TOML),
        ("src/a.c", "int a;"),
        ("src/b.c", "int b;"),
        ("src/build.sh", "cc src/*.c -o build/bench"),
        ("build/bench", "binary"),
        ("data/input.txt", "1 2 3"),
        ("bench.py", "print(1)"),
        ("notes.md", "notes"),
    ] {
        std::fs::create_dir_all(d.join(path).parent().unwrap()).unwrap();
        std::fs::write(d.join(path), text).unwrap();
    }
    let exp = lab_config::parse(LAB_TOML, &d.join("lab.toml"), d, None).unwrap();
    (dir, exp)
}

fn described(found: &[SourceChange]) -> Vec<String> {
    found.iter().map(ToString::to_string).collect()
}

#[test]
fn the_record_holds_what_the_build_reads_and_writes_and_what_commands_name() {
    let (_dir, exp) = folder();
    let recorded = record(&exp);
    let paths: Vec<&str> = recorded.keys().map(String::as_str).collect();
    assert_eq!(
        paths,
        [
            "bench.py",
            "build/bench",
            "data/input.txt",
            "src/a.c",
            "src/b.c",
            "src/build.sh"
        ]
    );
    // sha256("int a;"), computed with `printf 'int a;' | sha256sum`.
    assert_eq!(
        recorded["src/a.c"],
        "68ee7ca0e099b2c45f613f363e4911edbf3f696a3569f0ca666d433db8503c90"
    );
}

#[test]
fn an_unchanged_folder_has_no_change() {
    let (_dir, exp) = folder();
    let recorded = record(&exp);
    assert!(changes(&exp, &recorded, true).is_empty());
}

#[test]
fn each_kind_of_change_is_named() {
    let (dir, exp) = folder();
    let recorded = record(&exp);
    let d = dir.path();
    std::fs::write(d.join("src/a.c"), "int a = 1;").unwrap();
    std::fs::remove_file(d.join("src/b.c")).unwrap();
    std::fs::write(d.join("src/c.c"), "int c;").unwrap();
    std::fs::write(d.join("build/bench"), "other binary").unwrap();
    std::fs::write(d.join("notes.md"), "edited notes").unwrap();
    assert_eq!(
        described(&changes(&exp, &recorded, true)),
        [
            "build/bench was built again and differs",
            "src/a.c changed",
            "src/b.c was removed",
            "src/c.c is new"
        ]
    );
}

#[test]
fn built_files_count_only_where_they_were_built_on_this_machine_and_exist() {
    let (dir, exp) = folder();
    let recorded = record(&exp);
    let d = dir.path();
    std::fs::write(d.join("build/bench"), "other binary").unwrap();
    assert!(changes(&exp, &recorded, false).is_empty());
    std::fs::remove_file(d.join("build/bench")).unwrap();
    assert!(changes(&exp, &recorded, true).is_empty());
}

#[test]
fn a_changed_build_input_changes_the_fingerprint() {
    let (dir, exp) = folder();
    let before = crate::build::fingerprint(&exp).unwrap();
    assert!(!build_changed(&exp, &before));
    std::fs::write(dir.path().join("src/build.sh"), "cc -O3 src/*.c").unwrap();
    assert!(build_changed(&exp, &before));
}

#[test]
fn paths_out_of_the_folder_or_absolute_are_not_sources() {
    assert_eq!(normal(Path::new("./build/x")).as_deref(), Some("build/x"));
    assert_eq!(normal(Path::new("../x")), None);
    assert_eq!(normal(Path::new("/usr/bin/env")), None);
    assert_eq!(normal(Path::new(".")), None);
}

#[test]
fn a_linked_source_is_read_through_its_link_and_a_fifo_is_left_out_without_blocking() {
    let (dir, exp) = folder();
    let shared = dir.path().join("shared.c");
    std::fs::write(&shared, "int a;").unwrap();
    std::fs::remove_file(dir.path().join("src/a.c")).unwrap();
    std::os::unix::fs::symlink(&shared, dir.path().join("src/a.c")).unwrap();
    let recorded = record(&exp);
    assert_eq!(
        recorded["src/a.c"], "68ee7ca0e099b2c45f613f363e4911edbf3f696a3569f0ca666d433db8503c90",
        "the linked file's content"
    );
    assert!(changes(&exp, &recorded, true).is_empty());
    std::fs::write(&shared, "int a2;").unwrap();
    assert_eq!(
        described(&changes(&exp, &recorded, true)),
        ["src/a.c changed"]
    );

    let input = dir.path().join("data/input.txt");
    std::fs::remove_file(&input).unwrap();
    let c = std::ffi::CString::new(input.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let now = record(&exp);
    assert!(
        !now.contains_key("data/input.txt"),
        "a FIFO has no content to record"
    );
}
