//! `lab import catch2` of real Catch2 XML reports: each is refused as holding only each
//! benchmark's mean, saying what to do instead, and nothing is left behind.

use crate::common;
use lab::Exit;

use common::Project;
use std::path::PathBuf;

fn fixture(file: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import/catch2")
        .join(file)
        .display()
        .to_string()
}

#[test]
fn catch2_reports_are_refused_as_summaries_only_and_leave_nothing() {
    let project = Project::with_fixtures(&[]);
    let before = common::tree(project.root());
    let file = fixture("catch2-3.15.3-GNU-Linux-x86_64AVX2.xml");
    let out = project.lab_exits(&["import", "catch2", &file, "--into", "conv"], Exit::Usage);
    let said = String::from_utf8_lossy(&out.stderr);
    let refusal = format!(
        "{file}: this Catch2 XML report holds only each benchmark's mean and standard deviation \
         (36 benchmarks in 1 test case), not the samples they summarise, and lab needs every \
         measured value: Catch2 writes no samples, even with --benchmark-no-analysis (instead, \
         time the binary as lab variants, one per test case, each running it with the test \
         case's name as Catch2's test spec, e.g. `BINARY \"Convolution Implementation \
         Benchmarks\"`)"
    );
    assert!(said.contains(&refusal), "{said}");
    assert!(said.contains("hint: `lab import catch2` reads"), "{said}");
    assert_eq!(common::tree(project.root()), before);
}
