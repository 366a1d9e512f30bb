use super::{entry_from_checks, inert_json, render_index};

#[test]
fn a_title_is_escaped_once_in_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let entry = entry_from_checks("bench-1", "echo 1 | wc -l", "s1", &[]);
    render_index(dir.path(), &[entry]).unwrap();
    let summary = std::fs::read_to_string(dir.path().join("src/SUMMARY.md")).unwrap();
    assert!(
        summary.contains("- [echo 1 \\| wc -l](bench-1/index.md)"),
        "{summary}"
    );
}

#[test]
fn inert_json_escapes_markup_and_the_javascript_scheme_in_one_pass() {
    let text = r#"{"a":"<b>&amp;</b>","j":"javascript:alert(1) jav javascript: JavaScript: j"}"#;
    let want = text
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace("javascript:", "javascript\\u003a");
    assert_eq!(inert_json(text), want);
    assert_eq!(inert_json("é<javascript:j"), "é\\u003cjavascript\\u003aj");
    let parsed: serde_json::Value = serde_json::from_str(&inert_json(text)).unwrap();
    assert_eq!(
        parsed["j"],
        "javascript:alert(1) jav javascript: JavaScript: j"
    );
}
