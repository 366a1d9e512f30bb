use super::*;

fn cell(name: &str, verdict: Change, ratio: Option<(f64, f64, f64)>) -> CellChange {
    CellChange {
        cell: name.to_string(),
        a_median: Some(100.0),
        b_median: ratio.map(|(r, _, _)| 100.0 * r),
        a_runs: 10,
        b_runs: 10,
        ratio: ratio.map(|(r, _, _)| r),
        lo: ratio.map(|(_, lo, _)| lo),
        hi: ratio.map(|(_, _, hi)| hi),
        half_width: None,
        pairs: None,
        verdict,
        busy: None,
    }
}

fn comparison(better: &str, cells: Vec<CellChange>) -> Comparison {
    Comparison {
        experiment: "ab".into(),
        a: "3f2a1b2c4d5e (3f2a1b2c4d5e)".into(),
        b: "HEAD (9c8d7e6f5a4b)".into(),
        metric: "ms".into(),
        unit: "ms".into(),
        better: better.into(),
        threshold: 0.05,
        level: 0.95,
        differences: Vec::new(),
        summary: String::new(),
        regressed: cells.iter().any(|c| c.verdict == Change::Slower),
        cells,
        noise: None,
    }
}

fn pull_request<'a>(experiments: Vec<Measured<'a>>) -> PullRequest<'a> {
    PullRequest {
        base: "main",
        base_commit: "3f2a1b2c4d5e6f708192a3b4c5d6e7f801234567",
        head_commit: "9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d",
        threshold: 0.05,
        url: Some("https://example.org/book/"),
        experiments,
    }
}

#[test]
fn one_slower_cell_makes_the_experiment_slower_and_one_undecided_cell_leaves_it_open() {
    let slower = comparison(
        "lower",
        vec![
            cell("a", Change::Same, Some((1.0, 0.99, 1.01))),
            cell("b", Change::Inconclusive, Some((1.03, 0.98, 1.08))),
            cell("c", Change::Slower, Some((1.2, 1.17, 1.23))),
        ],
    );
    assert_eq!(Standing::of(&slower), Standing::Slower);
    let open = comparison(
        "lower",
        vec![
            cell("a", Change::Faster, Some((0.8, 0.78, 0.82))),
            cell("b", Change::TooFewRuns, None),
        ],
    );
    assert_eq!(Standing::of(&open), Standing::Undecided);
    let faster = comparison(
        "lower",
        vec![
            cell("a", Change::Faster, Some((0.8, 0.78, 0.82))),
            cell("b", Change::Same, Some((1.0, 0.99, 1.01))),
        ],
    );
    assert_eq!(Standing::of(&faster), Standing::Faster);
    assert_eq!(
        Standing::of(&comparison("lower", Vec::new())),
        Standing::Undecided
    );
}

#[test]
fn the_comment_names_the_slower_cell_with_its_ratio_and_links_the_chapter() {
    let c = comparison(
        "lower",
        vec![
            cell("work", Change::Slower, Some((1.2, 1.17, 1.23))),
            cell("idle", Change::Same, Some((1.0, 0.99, 1.01))),
        ],
    );
    let pr = pull_request(vec![Measured {
        name: "ab",
        outcome: Ok(&c),
        used: Some("40 runs in 12 s".into()),
    }]);
    let text = comment(&pr);
    assert!(
        text.contains(
            "| ab | **slower**: work, 1.20× [1.17, 1.23] | [chapter](https://example.org/book/ab/) |"
        ),
        "{text}"
    );
    assert!(
        text.contains("`9c8d7e6f5a4b`, measured against `3f2a1b2c4d5e`"),
        "{text}"
    );
    assert!(
        text.contains("| work | 100 ms | 120 ms | 1.20× [1.17, 1.23] | slower |"),
        "{text}"
    );
    assert!(
        text.contains("| idle | 100 ms | 100 ms | 1.00× [0.990, 1.01] | same |"),
        "{text}"
    );
    assert!(text.contains("<details><summary>ab: ms per cell"), "{text}");
    assert!(text.contains("\n40 runs in 12 s.\n"), "{text}");
}

#[test]
fn same_and_undecided_answers_count_cells_and_a_failure_says_why() {
    let same = comparison(
        "lower",
        vec![cell("work", Change::Same, Some((1.0, 0.99, 1.01)))],
    );
    let open = comparison(
        "lower",
        vec![
            cell("x", Change::Inconclusive, Some((1.03, 0.98, 1.08))),
            cell("y", Change::Same, Some((1.0, 0.99, 1.01))),
        ],
    );
    let pr = pull_request(vec![
        Measured {
            name: "same",
            outcome: Ok(&same),
            used: None,
        },
        Measured {
            name: "open",
            outcome: Ok(&open),
            used: None,
        },
        Measured {
            name: "new",
            outcome: Err("not at the merge-base | new".into()),
            used: None,
        },
    ]);
    let text = comment(&pr);
    assert!(
        text.contains("| same | **same**: 1 cell within ±5.0% |"),
        "{text}"
    );
    assert!(
        text.contains(
            "| open | **inconclusive**: 1 of 2 cells undecided; more runs could decide |"
        ),
        "{text}"
    );
    assert!(
        text.contains("| new | not measured: not at the merge-base \\| new | |"),
        "{text}"
    );
    assert_eq!(text.matches("<details>").count(), 2, "{text}");
}

#[test]
fn names_that_hold_markup_stay_text() {
    let c = comparison(
        "lower",
        vec![cell("a|b*", Change::Slower, Some((1.2, 1.1, 1.3)))],
    );
    let pr = pull_request(vec![Measured {
        name: "x[1]",
        outcome: Ok(&c),
        used: None,
    }]);
    let text = comment(&pr);
    assert!(
        text.contains("| x\\[1\\] | **slower**: a\\|b\\*, 1.20×"),
        "{text}"
    );
}

/// Bencher's metric format as its documentation gives it: an object of benchmark names, each
/// an object of measure slugs, each an object with a number `value` and optional number
/// `lower_value` and `upper_value`, nothing else.
fn is_bencher_metric_format(v: &Value) -> Result<(), String> {
    let benchmarks = v.as_object().ok_or("not an object")?;
    for (name, measures) in benchmarks {
        let measures = measures
            .as_object()
            .ok_or(format!("{name}: not an object"))?;
        for (slug, m) in measures {
            if !slug
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            {
                return Err(format!("{slug}: not a slug"));
            }
            let m = m
                .as_object()
                .ok_or(format!("{name}/{slug}: not an object"))?;
            if !m.get("value").is_some_and(Value::is_f64) {
                return Err(format!("{name}/{slug}: no number value"));
            }
            for (key, x) in m {
                let known = ["value", "lower_value", "upper_value"].contains(&key.as_str());
                if !known || !x.is_f64() {
                    return Err(format!("{name}/{slug}: {key}"));
                }
            }
        }
    }
    Ok(())
}

/// github-action-benchmark's custom tools' input as its README gives it: an array of objects
/// with a string `name` and `unit` and a number `value`, and optional string `range` and
/// `extra`.
fn is_github_benchmark_input(v: &Value) -> Result<(), String> {
    for entry in v.as_array().ok_or("not an array")? {
        let e = entry.as_object().ok_or("an entry is not an object")?;
        for key in ["name", "unit"] {
            if !e.get(key).is_some_and(Value::is_string) {
                return Err(format!("{entry}: no string {key}"));
            }
        }
        if !e.get("value").is_some_and(Value::is_number) {
            return Err(format!("{entry}: no number value"));
        }
        for (key, x) in e {
            let optional = ["range", "extra"].contains(&key.as_str());
            if optional && !x.is_string() {
                return Err(format!("{entry}: {key} is not a string"));
            }
            if !optional && !["name", "unit", "value"].contains(&key.as_str()) {
                return Err(format!("{entry}: unknown key {key}"));
            }
        }
    }
    Ok(())
}

#[test]
fn the_exports_hold_each_cell_as_the_dashboards_read_it() {
    let lower = comparison(
        "lower",
        vec![
            cell("work", Change::Slower, Some((1.2, 1.17, 1.23))),
            cell("few", Change::TooFewRuns, None),
        ],
    );
    let higher = comparison(
        "higher",
        vec![cell("rate", Change::Same, Some((1.0, 0.99, 1.01)))],
    );
    let pr = pull_request(vec![
        Measured {
            name: "ab",
            outcome: Ok(&lower),
            used: None,
        },
        Measured {
            name: "tp",
            outcome: Ok(&higher),
            used: None,
        },
    ]);
    let bmf = bencher_metrics(&pr);
    is_bencher_metric_format(&bmf).unwrap();
    assert_eq!(bmf["ab/work"]["ms"]["value"], 120.0);
    assert_eq!(bmf["ab/work"]["ms-ratio"]["lower_value"], 1.17);
    assert_eq!(
        bmf["ab/few"],
        Value::Null,
        "a cell with no value is left out"
    );
    let smaller = github_benchmark(&pr, "lower");
    is_github_benchmark_input(&smaller).unwrap();
    assert_eq!(smaller.as_array().unwrap().len(), 1);
    assert_eq!(smaller[0]["name"], "ab/work");
    assert_eq!(smaller[0]["value"], 120.0);
    assert_eq!(
        smaller[0]["range"],
        "1.20× [1.17, 1.23] against 3f2a1b2c4d5e"
    );
    assert_eq!(smaller[0]["extra"], "slower; 10 and 10 runs");
    let bigger = github_benchmark(&pr, "higher");
    is_github_benchmark_input(&bigger).unwrap();
    assert_eq!(bigger[0]["name"], "tp/rate");
}

#[test]
fn the_schema_checks_refuse_what_the_tools_would() {
    assert!(is_bencher_metric_format(&json!({"b": {"ms": {"value": "1"}}})).is_err());
    assert!(is_bencher_metric_format(&json!({"b": {"Ms": {"value": 1.0}}})).is_err());
    assert!(is_bencher_metric_format(&json!({"b": {"ms": {"value": 1.0, "x": 1.0}}})).is_err());
    assert!(is_github_benchmark_input(&json!([{"name": "a", "value": 1.0}])).is_err());
    assert!(
        is_github_benchmark_input(&json!([{"name": "a", "unit": "s", "value": 1.0, "range": 2}]))
            .is_err()
    );
}

#[test]
fn without_a_url_the_table_has_no_chapter_column() {
    let c = comparison(
        "lower",
        vec![cell("work", Change::Same, Some((1.0, 0.99, 1.01)))],
    );
    let pr = PullRequest {
        url: None,
        ..pull_request(vec![Measured {
            name: "ab",
            outcome: Ok(&c),
            used: None,
        }])
    };
    let text = comment(&pr);
    assert!(
        text.contains(
            "| experiment | answer |\n|---|---|\n| ab | **same**: 1 cell within ±5.0% |\n"
        ),
        "{text}"
    );
}
