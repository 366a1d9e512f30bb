use super::*;

fn median(id: &str) -> Number {
    Number {
        id: id.into(),
        value: "1.00".into(),
        lo: None,
        hi: None,
        unit: String::new(),
        what: Subject::Cell {
            cell: "a".into(),
            metric: "m".into(),
            statistic: Statistic::Median,
        },
    }
}

#[test]
fn kebab_keeps_letters_and_digits_and_joins_the_rest_with_one_hyphen() {
    assert_eq!(kebab("nonfair threads=2"), "nonfair-threads-2");
    assert_eq!(kebab("parks_per_op"), "parks-per-op");
    assert_eq!(kebab("  Fair µ-lock: n=16 "), "fair-lock-n-16");
    assert_eq!(kebab("non-fair at 2 threads"), "non-fair-at-2-threads");
}

#[test]
fn equal_ids_get_the_first_free_suffix_in_order() {
    let ids = ["a.m.median", "a.m.median", "a.m.median-2", "a.m.median"];
    let catalogue = Catalogue::of(ids.iter().map(|id| median(id)).collect());
    let got: Vec<&str> = catalogue.numbers.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(
        got,
        ["a.m.median", "a.m.median-3", "a.m.median-2", "a.m.median-4"]
    );
}

#[test]
fn a_number_prints_with_its_interval_as_a_table_cell_does() {
    let mut n = median("x");
    assert_eq!(n.text(), "1.00");
    n.lo = Some("0.900".into());
    n.hi = Some("1.10".into());
    assert_eq!(n.interval().as_deref(), Some("[0.900, 1.10]"));
    assert_eq!(n.text(), "1.00 [0.900, 1.10]");
    assert_eq!(
        lab_config::format::interval(1.0, 0.9, 1.1, ""),
        n.text(),
        "the chapter's own formatter"
    );
}
