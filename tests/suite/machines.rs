//! Runs nested in machines end to end: a session whose rows name three nodes, reported with
//! the cells' intervals resampling the nodes and the machine-effect check's verdict with its
//! numbers, when one node is slower than the others and when none is.

use crate::common::{self, FakeRunner, Project, Reply, sampled_project, twelve_uniforms};
use lab::Exit;
use lab::app;
use lab::layout::Layout;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::Path;

/// The nodes the rows name.
const NODES: [&str; 3] = ["n1", "n2", "n3"];

/// The node of a variant's `nth` run (counted from 0 in execution order): they take turns.
fn node_of(nth: usize) -> &'static str {
    NODES[nth % NODES.len()]
}

/// `bench.sh VARIANT GAP` as a seeded stream: about 100 ms (GAP percent more for slow), each
/// run off by 2%, and `n3` slower by the factor `slowdown`.
fn on_three_nodes(slowdown: f64) -> FakeRunner {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    FakeRunner::new(move |run| match run.request.argv {
        [_, _, _, gap] if run.measured() => {
            let gap: f64 = gap.parse().unwrap();
            let node = if node_of(run.nth) == "n3" {
                slowdown
            } else {
                1.0
            };
            let noise = 1.0 + 0.02 * twelve_uniforms(&mut rng);
            Reply::ms(100.0 * (1.0 + gap / 100.0) * node * noise)
        }
        _ => Reply::ms(0.001),
    })
}

/// Writes each row's node into the session's runs.csv (rows in execution order), as a merge
/// of cluster shards does, and seals the session with it.
fn name_nodes(session: &Path) {
    let path = session.join("runs.csv");
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let at = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (variant, node) = (at("variant"), at("node"));
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(&headers).unwrap();
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    for record in reader.records() {
        let mut row: Vec<String> = record.unwrap().iter().map(String::from).collect();
        let nth = seen.entry(row[variant].clone()).or_default();
        row[node] = node_of(*nth).to_string();
        *nth += 1;
        out.write_record(&row).unwrap();
    }
    let bytes = out.into_inner().unwrap();
    std::fs::write(&path, &bytes).unwrap();
    // The shards are merged before the session is sealed: the sealed digest is the merged file's.
    let manifest_path = session.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    manifest["digests"]["runs.csv"] = lab::store::sha256_hex(&bytes).into();
    std::fs::write(
        &manifest_path,
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();
}

/// A session of the `sampled` fixture (12 runs of each of two cells) measured by `runner`,
/// its rows naming three nodes, then reported; the chapter and analysis.json.
fn reported(project: &Project, mut runner: FakeRunner) -> (String, serde_json::Value) {
    let layout = Layout::new(project.root());
    app::run(
        &layout,
        Path::new("sampled"),
        &common::quiet_run("sampled"),
        &mut runner,
    )
    .unwrap();
    name_nodes(&project.session("sampled"));
    project.lab_exits(&["report", "sampled", "--quiet"], Exit::Ok);
    let chapter = crate::common::unlinked(&project.read("book/src/sampled/index.md"));
    let analysis = serde_json::from_str(&project.read("book/src/sampled/analysis.json")).unwrap();
    (chapter, analysis)
}

/// The chapter's line that holds `needle`.
fn line_with<'a>(chapter: &'a str, needle: &str) -> &'a str {
    chapter
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{chapter}"))
}

#[test]
fn a_slower_node_fails_the_machine_check_and_widens_the_intervals() {
    // n3 runs 1.3× slower than n1 and n2; each cell ran 4 runs on each node.
    let project = sampled_project();
    let (chapter, analysis) = reported(&project, on_three_nodes(1.3));
    let row = line_with(&chapter, "**no cell depends on the machine that ran it**");
    assert!(
        row.starts_with("| <span class=\"lab-verdict lab-fail\">fail</span>"),
        "{row}"
    );
    assert!(row.contains(
        "cell fast: node n3&#39;s median is 1.30× node n1&#39;s; the nodes hold 98.3% of the variance of the run medians (p = 0.013, Holm-adjusted over 2 cells); \
         cell slow: node n3&#39;s median is 1.30× node n2&#39;s; the nodes hold 98.5% of the variance of the run medians (p = 0.0026, Holm-adjusted over 2 cells)"
    ), "{row}");
    assert!(row.contains(
        "fast: nodes n1 99.3 \\[98.1, 103\\] over 4 runs, n2 100 \\[97.9, 102\\] over 4 runs, n3 129 \\[126, 133\\] over 4 runs; \
         between nodes 98.3% of the run medians&#39; variance (ICC 0.983), Kruskal–Wallis H 7.42, permutation p = 0.013 over 9,999 splits (Holm 0.013); \
         median 101 \\[99.2, 129\\] resampling nodes, \\[99.3, 127\\] runs alone"
    ), "{row}");
    // The results table gives the nested interval and notes the runs-only one.
    let fast = line_with(&chapter, "| fast | 101 ");
    assert!(fast.starts_with("| fast | 101 \\[99.2, 129\\] |"), "{fast}");
    assert!(
        fast.ends_with(
            "runs on 3 nodes: the CI resamples nodes, then runs (runs alone: \\[99.3, 127\\]) |"
        ),
        "{fast}"
    );
    // The hypothesis that reads both cells is untrusted, and its interval resamples nodes.
    assert!(chapter.contains(
        "The validity check “no cell depends on the machine that ran it” failed in fast and slow"
    ));
    let cell = &analysis["cells"][0];
    assert_eq!(cell["label"], "fast");
    assert_eq!(
        cell["machines"]["names"],
        serde_json::json!(["n1", "n2", "n3"])
    );
    assert_eq!(cell["median_ci"]["lo"], 99.18);
    assert_eq!(cell["median_ci"]["hi"], 128.988);
    assert_eq!(cell["machines"]["runs_only_ci"]["hi"], 127.09);
    let effect = &analysis["nodes"][0]["effect"];
    assert_eq!(effect["p_value"], 0.0131);
    assert_eq!(
        (effect["machines"].as_u64(), effect["runs"].as_u64()),
        (Some(3), Some(12))
    );
    assert_eq!(analysis["runs"][0]["node"], "n1");
    let out = project.lab(&["check", "sampled"]);
    common::assert_ended(&out, &["check", "sampled"], Exit::CheckFailed);
}

#[test]
fn nodes_that_agree_pass_the_machine_check() {
    let project = sampled_project();
    let (chapter, analysis) = reported(&project, on_three_nodes(1.0));
    let row = line_with(&chapter, "**9 automatic checks**");
    assert!(
        row.starts_with("| <span class=\"lab-verdict lab-pass\">pass</span>"),
        "{row}"
    );
    assert!(row.contains(
        "no cell depends on the machine that ran it: fast: nodes n1 99.3 \\[98.1, 103\\] over 4 runs, n2 100 \\[97.9, 102\\] over 4 runs, n3 99.2 \\[97.1, 102\\] over 4 runs; \
         between nodes 0.0% of the run medians&#39; variance (ICC -0.299), Kruskal–Wallis H 0.154, permutation p = 0.94 over 9,999 splits (Holm 0.94); \
         median 99.4 \\[98.2, 101\\] resampling nodes, \\[98.2, 101\\] runs alone"
    ), "{row}");
    assert_eq!(analysis["nodes"].as_array().map(Vec::len), Some(2));
    let out = project.lab(&["check", "sampled"]);
    common::assert_ended(&out, &["check", "sampled"], Exit::Ok);
}
