//! The citations' in-text form, year letters, list and errors, on a small references.bib.

use super::*;

const BIB: &str = r#"@inproceedings{chen2016,
  author = {Chen, Tianqi and Guestrin, Carlos},
  title = {{XGBoost}: A Scalable Tree Boosting System},
  booktitle = {Proceedings of KDD},
  year = {2016},
  doi = {10.1145/2939672.2939785},
}
@article{lamport1978,
  author = {Leslie Lamport},
  title = {Time, Clocks, and the Ordering of Events <in> a Distributed System},
  journal = {Communications of the ACM},
  year = 1978,
  url = {javascript:alert(1)},
}
@misc{many,
  author = {A, B and C, D and E, F},
  date = {2020-01-02},
}
"#;

fn references() -> References {
    References {
        path: PathBuf::from("exp/references.bib"),
        present: true,
        entries: parse(BIB).unwrap(),
        letters: BTreeMap::new(),
    }
}

#[test]
fn citations_are_author_and_year_linked_to_their_entry() {
    let refs = references();
    assert_eq!(
        refs.cite("chen2016").unwrap(),
        "(<a href=\"#ref-chen2016\">Chen and Guestrin 2016</a>)"
    );
    assert_eq!(
        refs.cite("many").unwrap(),
        "(<a href=\"#ref-many\">A et al. 2020</a>)"
    );
    assert_eq!(
        refs.cite("nope").unwrap_err(),
        "no reference \"nope\" in references.bib; its keys: chen2016, lamport1978, many"
    );
}

#[test]
fn the_list_holds_the_cited_entries_by_author_escaped_and_linked_only_to_the_web() {
    let section = references().section(&["lamport1978".into(), "chen2016".into()]);
    assert_eq!(
        section,
        "\n\n### References\n\n<ul class=\"lab-references\">\
         <li id=\"ref-chen2016\">Chen, Tianqi, and Carlos Guestrin. 2016. XGBoost: A Scalable Tree Boosting System. <em>Proceedings of KDD</em>. <a href=\"https://doi.org/10.1145/2939672.2939785\">https://doi.org/10.1145/2939672.2939785</a>.</li>\
         <li id=\"ref-lamport1978\">Lamport, Leslie. 1978. Time, Clocks, and the Ordering of Events &lt;in&gt; a Distributed System. <em>Communications of the ACM</em>. javascript:alert(1).</li>\
         </ul>\n"
    );
}

#[test]
fn works_of_the_same_authors_and_year_cited_together_get_letters_in_title_order() {
    let bib = "@misc{late, author = {Chen, Tianqi}, title = {Zeta}, year = 2016}\n\
               @misc{early, author = {Chen, Tianqi}, title = {alpha}, year = 2016}\n\
               @misc{other, author = {Chen, Tianqi}, title = {Beta}, year = 2017}\n\
               @misc{nd1, author = {Doe, J}, title = {One}}\n\
               @misc{nd2, author = {Doe, J}, title = {Two}}\n";
    let refs = References {
        path: PathBuf::from("exp/references.bib"),
        present: true,
        entries: parse(bib).unwrap(),
        letters: BTreeMap::new(),
    };
    // One of the pair cited alone needs no letter.
    assert!(
        refs.year_letters(&["late".into(), "other".into()])
            .is_empty()
    );
    let cited: Vec<String> = ["late", "other", "early", "nd2", "nd1"]
        .map(String::from)
        .to_vec();
    let letters = refs.year_letters(&cited);
    let expected = [("early", 'a'), ("late", 'b'), ("nd1", 'a'), ("nd2", 'b')];
    assert_eq!(
        letters,
        expected
            .map(|(k, l)| (k.to_string(), l))
            .into_iter()
            .collect()
    );
    let refs = refs.with_year_letters(letters);
    assert_eq!(
        refs.cite("late").unwrap(),
        "(<a href=\"#ref-late\">Chen 2016b</a>)"
    );
    assert_eq!(
        refs.cite("other").unwrap(),
        "(<a href=\"#ref-other\">Chen 2017</a>)"
    );
    assert_eq!(
        refs.cite("nd1").unwrap(),
        "(<a href=\"#ref-nd1\">Doe n.d.-a</a>)"
    );
    let section = refs.section(&cited);
    let years: Vec<&str> = section
        .split("<li ")
        .skip(1)
        .map(|item| item.split(". ").nth(1).unwrap())
        .collect();
    assert_eq!(years, ["2016a", "2016b", "2017", "n.d.-a", "n.d.-b"]);
}

#[test]
fn a_malformed_file_is_reported_at_its_line_and_column() {
    let text = "@misc{a, title = {x}}\n@misc{b,\n  title = {y}\n  year = 2020\n}\n";
    assert_eq!(parse(text).unwrap_err(), "4:3: expected comma");
    let text = "@misc{a, title = {x}}\n@misc{a, title = {y}}\n";
    assert_eq!(parse(text).unwrap_err(), "2:1: duplicate key \"a\"");
}

#[test]
fn anchors_take_any_key() {
    assert_eq!(anchor("knuth:1984"), "ref-knuth:1984");
    assert_eq!(anchor("a b\"c"), "ref-a_20_b_22_c");
}
