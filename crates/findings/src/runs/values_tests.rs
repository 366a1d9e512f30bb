//! Tests of a run's values: every value reads back as it was, held compactly.

use super::*;

#[test]
fn a_number_is_exact_only_in_its_shortest_form() {
    for (text, number) in [
        ("0", Some(0.0)),
        ("-0", Some(-0.0)),
        ("12345", Some(12345.0)),
        ("0.000819123", Some(0.000819123)),
        ("1e21", None),
        ("1000000000000000000000", Some(1e21)),
        ("1.00", None),
        ("1.5", Some(1.5)),
        (" 7", None),
        ("07", None),
        ("0.1", Some(0.1)),
        ("0.10000000000000001", None),
        ("inf", Some(f64::INFINITY)),
        ("12a", None),
        ("", None),
    ] {
        assert_eq!(exact_number(text), number, "{text:?}");
    }
    assert!(
        exact_number("NaN").is_some_and(f64::is_nan),
        "as Display writes it"
    );
    assert_eq!(exact_number("nan"), None);
}

fn texts(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn measured_values_given_as_numbers_equal_the_same_values_given_as_text() {
    let huge = (1u64 << 53) + 1;
    let measured = || {
        vec![
            ("wall_s", Measured::Number(0.000819123)),
            ("max_rss_mib", Measured::Number(1.5)),
            ("voluntary_cs", Measured::count(12)),
            ("minor_faults", Measured::count(huge)),
        ]
    };
    let printed = BTreeMap::from([
        ("ms".to_string(), texts(&["23.2153", "1.00"])),
        // A printed value under a measured name (a record written by hand) gives way.
        ("wall_s".to_string(), texts(&["9"])),
    ]);
    let names = Names::of(["ms", "wall_s"]);
    let mut as_text = printed.clone();
    for (name, value) in measured() {
        let text = match value {
            Measured::Number(x) => x.to_string(),
            Measured::Digits(digits) => digits,
        };
        as_text.insert(name.to_string(), vec![text]);
    }
    let parts = RunValues::from_parts(printed, measured(), &names);
    assert_eq!(parts, RunValues::from_map(as_text, &names));
    assert_eq!(parts.texts("wall_s"), Some(texts(&["0.000819123"])));
    assert_eq!(parts.texts("minor_faults"), Some(vec![huge.to_string()]));
    assert_eq!(parts.numbers("voluntary_cs", 0), vec![12.0]);
}

#[test]
fn every_value_reads_back_as_the_text_and_the_number_it_was() {
    let map = BTreeMap::from([
        ("ms".to_string(), texts(&["23.2153"])),
        ("ops".to_string(), texts(&["1", "2.5", "-0.5", "0.1"])),
        ("sum".to_string(), texts(&["0x1f", "12", " 7"])),
        ("wall_s".to_string(), texts(&["1.00", "3"])),
    ]);
    let as_map: BTreeMap<String, Vec<String>> = map.clone();
    let values = RunValues::from_map(map, &Names::of(["ms", "wall_s"]));
    for (metric, list) in &as_map {
        assert_eq!(values.texts(metric).as_ref(), Some(list), "{metric}");
        let parsed: Vec<f64> = list
            .iter()
            .skip(1)
            .filter_map(|s| s.trim().parse().ok())
            .collect();
        assert_eq!(values.numbers(metric, 1), parsed, "{metric}");
    }
    assert_eq!(values.numbers("ms", 0), vec![23.2153]);
    assert_eq!(values.numbers("sum", 0), vec![12.0, 7.0]);
    assert_eq!(values.texts("missing"), None);
    assert!(values.numbers("missing", 0).is_empty());
    // Exactly the JSON a map of strings gives.
    assert_eq!(
        serde_json::to_string(&values).unwrap(),
        serde_json::to_string(&as_map).unwrap()
    );
    // Only numbers in their shortest form are held as numbers ("1.00" and " 7" are not).
    assert_eq!(values.find("ms"), Some(Found::One(&23.2153)));
    assert!(values.find("ops").and_then(Found::numbers).is_some());
    assert!(values.find("wall_s").and_then(Found::text).is_some());
}

#[test]
fn a_metric_of_one_number_takes_eight_bytes_and_runs_share_their_names() {
    assert_eq!(std::mem::size_of::<RunValues>(), 48);
    let names = Names::of(["ms", "wall_s"]);
    let run = |ms: &str| {
        let printed = BTreeMap::from([
            ("ms".to_string(), texts(&[ms])),
            ("ops".to_string(), texts(&["1", "2"])),
        ]);
        RunValues::from_parts(printed, vec![("wall_s", Measured::Number(0.5))], &names)
    };
    let (a, b) = (run("1.5"), run("2.5"));
    assert!(
        Arc::ptr_eq(&a.names, &b.names),
        "one list of names for both"
    );
    assert_eq!(a.ones.len(), 3, "a number per metric");
    assert_eq!(a.rest.len(), 1, "only ops holds more than one");
    assert_eq!(b.numbers("ms", 0), vec![2.5]);
    assert_eq!(b.numbers("ops", 0), vec![1.0, 2.0]);
    assert_eq!(b.numbers("wall_s", 0), vec![0.5]);
    assert_ne!(a, b);
    assert_eq!(a, run("1.5"));
}

#[test]
fn insert_replaces_or_adds_in_name_order() {
    let mut values = RunValues::of("v", texts(&["2"]));
    values.insert("a", texts(&["x"]));
    values.insert("v", texts(&["1"]));
    assert_eq!(
        serde_json::to_string(&values).unwrap(),
        r#"{"a":["x"],"v":["1"]}"#
    );
}
