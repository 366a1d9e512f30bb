//! Every kind of configuration error, with the location and key it must name.

use super::*;
use std::path::Path;

const BASE: &str = r#"[experiment]
title = "t"
hypothesis = "h"

[params]
threads = [1, 2]

[[variant]]
name = "fast"
run = ["prog", "--threads={threads}"]

[[variant]]
name = "slow"
run = ["prog", "--slow", "--threads={threads}"]

[metric.mops]
json = "mops"
unit = "Mops/s"
"#;

fn load(source: &str) -> Result<Experiment, ConfigError> {
    parse(source, Path::new("exp/lab.toml"), Path::new("exp"), None)
}

fn error(source: &str) -> ConfigError {
    match load(source) {
        Ok(_) => panic!("expected an error for:\n{source}"),
        Err(e) => e,
    }
}

/// The 1-based line of the first occurrence of `needle`.
fn line_of(source: &str, needle: &str) -> usize {
    source[..source.find(needle).expect("needle present")]
        .matches('\n')
        .count()
        + 1
}

#[test]
fn the_base_file_is_valid() {
    let exp = load(BASE).unwrap();
    assert_eq!(exp.variants.len(), 2);
    assert_eq!(exp.repetitions, 5);
    assert!(exp.warnings.is_empty());
}

#[test]
fn unknown_key_names_file_line_column_and_key() {
    let src = BASE.replace("hypothesis = \"h\"", "hypothesis = \"h\"\nrepetitons = 3");
    let e = error(&src);
    assert_eq!(e.file, Path::new("exp/lab.toml"));
    assert_eq!((e.line, e.column), (4, 1));
    assert_eq!(e.key, "experiment.repetitons");
    assert!(
        e.message.contains("unknown field `repetitons`"),
        "{}",
        e.message
    );
    assert!(
        e.to_string()
            .starts_with("exp/lab.toml:4:1: `experiment.repetitons`: unknown field"),
        "{e}"
    );
}

#[test]
fn wrong_type_names_the_key() {
    let src = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\nrepetitions = \"five\"",
    );
    let e = error(&src);
    assert_eq!(e.line, 4);
    assert_eq!(e.key, "experiment.repetitions");
    assert!(e.message.contains("invalid type"), "{}", e.message);
}

#[test]
fn unknown_placeholder_is_an_error_at_the_command() {
    let src = BASE.replace(
        "--slow\", \"--threads={threads}",
        "--slow\", \"--threads={thread}",
    );
    let e = error(&src);
    assert_eq!(e.line, line_of(&src, "[\"prog\", \"--slow\""));
    assert_eq!(e.key, "variant[2].run");
    assert!(
        e.message.contains("unknown placeholder {thread}"),
        "{}",
        e.message
    );
    assert!(e.hint.as_deref().unwrap_or("").contains("threads"));
}

#[test]
fn empty_matrix_is_an_error() {
    let src = BASE.replace("threads = [1, 2]", "threads = []");
    let e = error(&src);
    assert_eq!(e.key, "params.threads");
    assert_eq!(e.line, 6);
    assert!(e.message.contains("empty list"), "{}", e.message);
}

#[test]
fn duplicate_variant_name_is_an_error() {
    let src = BASE.replace("name = \"slow\"", "name = \"fast\"");
    let e = error(&src);
    assert_eq!(e.key, "variant[2].name");
    assert_eq!(
        e.line,
        line_of(&src, "name = \"fast\"\nrun = [\"prog\", \"--slow\"")
    );
    assert!(e.message.contains("duplicate variant name \"fast\""));
}

#[test]
fn check_naming_a_missing_variant_is_an_error() {
    let src = format!(
        "{BASE}\n[[check]]\nname = \"c\"\nkind = \"compare\"\nmetric = \"mops\"\na = {{ variant = \"fats\", threads = 2 }}\nb = {{ variant = \"slow\", threads = 2 }}\nexpect = \"a > b\"\n"
    );
    let e = error(&src);
    assert_eq!(e.key, "check[1].a");
    assert_eq!(e.line, line_of(&src, "a = { variant = \"fats\""));
    assert!(
        e.message.contains("no variant named \"fats\""),
        "{}",
        e.message
    );
    assert!(e.hint.as_deref().unwrap_or("").contains("fast, slow"));
}

#[test]
fn check_naming_a_missing_metric_is_an_error() {
    let src = format!("{BASE}\n[[check]]\nname = \"c\"\nkind = \"stable\"\nmetric = \"mpos\"\n");
    let e = error(&src);
    assert_eq!(e.key, "check[1].metric");
    assert_eq!(e.line, line_of(&src, "metric = \"mpos\""));
    assert!(e.message.contains("no metric named \"mpos\""));
}

#[test]
fn a_cell_selector_must_name_one_cell() {
    let src = format!(
        "{BASE}\n[[check]]\nname = \"c\"\nkind = \"compare\"\nmetric = \"mops\"\na = {{ variant = \"fast\" }}\nb = {{ variant = \"slow\", threads = 2 }}\nexpect = \"a > b\"\n"
    );
    let e = error(&src);
    assert_eq!(e.key, "check[1].a");
    assert!(e.message.contains("several cells"), "{}", e.message);
}

#[test]
fn keys_of_another_kind_are_rejected() {
    let src = format!(
        "{BASE}\n[[check]]\nname = \"c\"\nkind = \"stable\"\nmetric = \"mops\"\ntolerance = \"5%\"\n"
    );
    let e = error(&src);
    assert_eq!(e.key, "check[1].tolerance");
    assert!(e.message.contains("not a key of a `stable` check"));
}

#[test]
fn bad_expressions_timeouts_and_regexes_are_errors() {
    let src = format!(
        "{BASE}\n[[check]]\nname = \"c\"\nkind = \"compare\"\nmetric = \"mops\"\na = {{ variant = \"fast\", threads = 2 }}\nb = {{ variant = \"slow\", threads = 2 }}\nexpect = \"a is bigger\"\n"
    );
    assert_eq!(error(&src).key, "check[1].expect");
    let src = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\ntimeout = \"soon\"",
    );
    let e = error(&src);
    assert_eq!((e.key.as_str(), e.line), ("timeout", 4));
    let src = BASE.replace("json = \"mops\"", "regex = 'mops=\\S+'");
    let e = error(&src);
    assert_eq!(e.key, "metric.mops.regex");
    assert!(e.message.contains("no capture group"));
}

/// A timeout past what a deadline on the clock can hold is refused where it is written, in
/// the experiment and in a profile, instead of panicking at the first run.
#[test]
fn timeouts_too_long_to_wait_for_are_refused_at_their_place() {
    for timeout in [
        "\"18446744073709551616s\"",
        "\"184467440737095516m\"",
        "1e10",
        "\"1e400s\"",
    ] {
        let src = BASE.replace(
            "hypothesis = \"h\"",
            &format!("hypothesis = \"h\"\ntimeout = {timeout}"),
        );
        let e = error(&src);
        assert_eq!(
            (e.key.as_str(), e.line, e.column),
            ("timeout", 4, 11),
            "{timeout}"
        );
        let expected = if timeout.contains("e400") {
            "not a duration"
        } else {
            "longer than lab can wait for (at most 1e9 s, about 31 years)"
        };
        assert!(e.message.contains(expected), "{timeout}: {}", e.message);
    }
    let src = format!("{BASE}\n[profile.long]\ntimeout = \"184467440737095516m\"\n");
    let e = parse(&src, Path::new("lab.toml"), Path::new("x"), Some("long")).unwrap_err();
    assert_eq!(e.line, line_of(&src, "184467440737095516m"));
    assert!(
        e.message.contains("longer than lab can wait for"),
        "{}",
        e.message
    );
    let exp = load(&BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\ntimeout = \"8760h\"",
    ))
    .unwrap();
    assert_eq!(exp.timeout, std::time::Duration::from_secs(8760 * 3600));
}

#[test]
fn an_unknown_profile_lists_the_known_ones() {
    let src = format!("{BASE}\n[profile.quick]\nrepetitions = 2\n");
    let e = parse(&src, Path::new("lab.toml"), Path::new("x"), Some("fast")).unwrap_err();
    assert!(e.message.contains("no profile named \"fast\""));
    assert_eq!(e.hint.as_deref(), Some("profiles declared here: quick"));
    let quick = parse(&src, Path::new("lab.toml"), Path::new("x"), Some("quick")).unwrap();
    assert_eq!(quick.repetitions, 2);
}

#[test]
fn a_profile_replaces_parameter_lists_and_keeps_their_order() {
    let src = BASE.replace("threads = [1, 2]", "threads = [1, 2]\nseconds = [2.0]")
        + "\n[profile.quick]\nparams.seconds = [0.5]\n";
    let exp = parse(&src, Path::new("lab.toml"), Path::new("x"), Some("quick")).unwrap();
    let names: Vec<&str> = exp.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["threads", "seconds"]);
    assert_eq!(
        exp.param("seconds").unwrap().values,
        vec![ParamValue::Float(0.5)]
    );
}

#[test]
fn an_argument_with_spaces_gets_a_warning_with_a_hint() {
    let src = BASE.replace(
        "\"--slow\", \"--threads={threads}\"",
        "\"--slow --threads={threads}\"",
    );
    let exp = load(&src).unwrap();
    assert_eq!(exp.warnings.len(), 1);
    let w = &exp.warnings[0];
    assert!(
        w.contains("variant[2].run")
            && w.contains("contains a space")
            && w.contains("hint: it is passed as ONE argument"),
        "{w}"
    );
}

#[test]
fn an_option_before_a_placeholder_gets_the_warning_whatever_its_value() {
    let src = BASE.replace(
        "\"--slow\", \"--threads={threads}\"",
        "\"--slow\", \"--threads {threads}\"",
    );
    let exp = load(&src).unwrap();
    assert_eq!(exp.warnings.len(), 1, "{:?}", exp.warnings);
    // Literal braces are not placeholders: no warning.
    let src = BASE.replace("\"--slow\", \"--threads={threads}\"", "\"--json {{x}}\"");
    assert!(load(&src).unwrap().warnings.is_empty());
}

#[test]
fn values_follow_one_grammar_with_plain_messages() {
    let with = |extra: &str| {
        BASE.replacen(
            "hypothesis = \"h\"",
            &format!("hypothesis = \"h\"\n{extra}"),
            1,
        )
    };
    // A timeout as a number of seconds, or as text with its unit.
    let exp = load(&with("timeout = 12.5")).unwrap();
    assert_eq!(exp.timeout, std::time::Duration::from_millis(12_500));
    let exp = load(&with("timeout = \"250ms\"")).unwrap();
    assert_eq!(exp.timeout, std::time::Duration::from_millis(250));
    let e = error(&with("repetitions = \"5\""));
    assert!(
        e.message.contains("a number, not a string \"5\""),
        "{}",
        e.message
    );
}

#[test]
fn a_missing_section_is_reported() {
    let e = error("[params]\nthreads = [1]\n");
    assert!(
        e.message.contains("missing field `experiment`"),
        "{}",
        e.message
    );
}

#[test]
fn a_value_listed_twice_in_two_spellings_is_refused_where_the_list_is() {
    let refused = |list: &str| {
        error(&BASE.replace("threads = [1, 2]", &format!("threads = {list}"))).to_string()
    };
    assert_eq!(
        refused("[1, \"1\"]"),
        "exp/lab.toml:6:11: `params.threads`: the value 1 is listed twice, as 1 and \"1\""
    );
    assert_eq!(
        refused("[4, 2, 2.0]"),
        "exp/lab.toml:6:11: `params.threads`: the value 2 is listed twice, as 2 and 2.0"
    );
    assert_eq!(
        refused("[2, 2]"),
        "exp/lab.toml:6:11: `params.threads`: the value 2 is listed twice"
    );
    let e = error(&BASE.replace("threads = [1, 2]", "threads = [1, 2]\nsize = [\"8\", 8.0]"));
    assert_eq!((e.line, e.column, e.key.as_str()), (7, 8, "params.size"));
    assert_eq!(e.message, "the value 8 is listed twice, as \"8\" and 8.0");
}

#[test]
fn an_error_inside_an_inline_table_names_the_key_in_it() {
    let src = BASE.replace(
        "[metric.mops]\njson = \"mops\"\nunit = \"Mops/s\"",
        "[metric]\nmops = { json = \"mops\", unit = 3 }",
    );
    let e = error(&src);
    assert_eq!(e.key, "metric.mops.unit");
    assert_eq!(e.line, line_of(&src, "mops = {"));
    assert!(e.message.contains("invalid type"), "{}", e.message);
}

#[test]
fn an_error_under_a_dotted_key_names_every_part_of_it() {
    let src = BASE.replace(
        "[metric.mops]\njson = \"mops\"\nunit = \"Mops/s\"",
        "[metric]\nmops.json = \"mops\"\nmops.\"unit\" = 3",
    );
    let e = error(&src);
    assert_eq!(e.key, "metric.mops.unit");
    assert_eq!(e.line, line_of(&src, "mops.\"unit\""));
}

#[test]
fn hooks_are_commands_checked_like_run() {
    let src = BASE.replace(
        "run = [\"prog\", \"--slow\", \"--threads={threads}\"]",
        "run = [\"prog\", \"--slow\", \"--threads={threads}\"]\nprepare = [\"sync\"]\nconclude = [\"rm\", \"-f\", \"out-{threads}\"]\nsetup = [\"make\", \"data\"]",
    );
    let exp = load(&src).unwrap();
    let hooks = &exp.variant("slow").unwrap().hooks;
    assert_eq!(hooks.prepare.as_deref(), Some(&["sync".to_string()][..]));
    assert_eq!(
        hooks.conclude.as_ref().unwrap(),
        &["rm", "-f", "out-{threads}"]
    );
    assert_eq!(hooks.setup.as_ref().unwrap(), &["make", "data"]);
    assert!(exp.variant("fast").unwrap().hooks.is_empty());

    let unknown = BASE.replace(
        "name = \"slow\"",
        "name = \"slow\"\nprepare = [\"clear\", \"{size}\"]",
    );
    let e = error(&unknown);
    assert_eq!(e.key, "variant[2].prepare");
    assert_eq!(e.line, line_of(&unknown, "prepare"));
    assert_eq!(e.message, "unknown placeholder {size} in \"{size}\"");
    let empty = BASE.replace("name = \"slow\"", "name = \"slow\"\nconclude = []");
    assert_eq!(error(&empty).key, "variant[2].conclude");
    assert_eq!(error(&empty).message, "empty command");
}

#[test]
fn a_workdir_must_be_a_folder_and_runs_start_there() {
    let dir = tempfile::tempdir().unwrap();
    let exp_dir = dir.path().join("experiments/x");
    std::fs::create_dir_all(&exp_dir).unwrap();
    let at = |source: &str| parse(source, &exp_dir.join("lab.toml"), &exp_dir, None);
    let src = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\nworkdir = \"../..\"",
    );
    let exp = at(&src).unwrap();
    assert_eq!(exp.workdir.as_deref(), Some(Path::new("../..")));
    assert_eq!(exp.run_dir(&Default::default()), exp_dir.join("../.."));

    let missing = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\nworkdir = \"nowhere\"",
    );
    let e = at(&missing).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("experiment.workdir", 4));
    assert!(
        e.message.ends_with("nowhere\" is not a folder"),
        "{}",
        e.message
    );
    let unset = load(BASE).unwrap();
    assert_eq!(unset.run_dir(&Default::default()), Path::new("exp"));
    assert!(!unset.ignore_failure);
    let ignoring = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\nignore_failure = true",
    );
    assert!(load(&ignoring).unwrap().ignore_failure);
}

#[test]
fn the_layout_is_left_alone_unless_randomized_with_a_tolerance_of_two_percent() {
    assert_eq!(load(BASE).unwrap().layout, None);
    let fixed = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\nlayout = \"fixed\"",
    );
    assert_eq!(load(&fixed).unwrap().layout, None);
    let random = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\nlayout = \"randomized\"",
    );
    assert_eq!(
        load(&random).unwrap().layout,
        Some(Layout { tolerance: 0.02 })
    );
    let wider = random.replace(
        "layout = \"randomized\"",
        "layout = \"randomized\"\nlayout_tolerance = \"5%\"",
    );
    assert_eq!(
        load(&wider).unwrap().layout,
        Some(Layout { tolerance: 0.05 })
    );
}

#[test]
fn a_layout_tolerance_is_refused_without_randomizing_or_outside_zero_to_one() {
    let alone = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\nlayout_tolerance = \"2%\"",
    );
    let e = error(&alone);
    assert_eq!(
        (e.key.as_str(), e.line, e.column),
        ("experiment.layout_tolerance", 4, 20)
    );
    assert_eq!(
        e.message,
        "a tolerance for an effect of the memory layout, which is not randomised"
    );
    for bad in ["\"0%\"", "\"100%\"", "\"soon\"", "-0.1"] {
        let src = BASE.replace(
            "hypothesis = \"h\"",
            &format!("hypothesis = \"h\"\nlayout = \"randomized\"\nlayout_tolerance = {bad}"),
        );
        let e = error(&src);
        assert_eq!(
            (e.key.as_str(), e.line),
            ("experiment.layout_tolerance", 5),
            "{bad}"
        );
        assert_eq!(e.message, "not a share above 0 and below 100%", "{bad}");
    }
    let unknown = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\nlayout = \"shuffled\"",
    );
    assert_eq!(error(&unknown).key, "experiment.layout");
}

#[test]
fn a_derived_metric_names_two_numeric_metrics_without_a_cycle() {
    let with = |extra: &str| format!("{BASE}{extra}");
    let src = with("\n[metric.cs_per_op]\nof = \"voluntary_cs\"\nper = \"mops\"\n");
    let m = load(&src).unwrap();
    let m = m.metric("cs_per_op").unwrap();
    assert_eq!(m.unit, "switches/mops");
    assert!(
        matches!(&m.extractor, Extractor::Derived { of, per } if of == "voluntary_cs" && per == "mops")
    );

    let src = with("\n[metric.cs_per_op]\nof = \"voluntary_cs\"\nper = \"opz\"\n");
    let e = error(&src);
    assert_eq!((e.line, e.column), (line_of(&src, "per = \"opz\""), 7));
    assert_eq!(e.key, "metric.cs_per_op.per");
    assert_eq!(e.message, "no metric `opz`");
    assert!(
        e.hint
            .as_deref()
            .unwrap()
            .contains("minor_faults, mops, sys_s"),
        "{e}"
    );

    let src = with(
        "\n[metric.sum]\njson = \"sum\"\ntext = true\n\n[metric.r]\nof = \"mops\"\nper = \"sum\"\n",
    );
    let e = error(&src);
    assert_eq!(e.key, "metric.r.per");
    assert_eq!(e.line, line_of(&src, "per = \"sum\""));
    assert_eq!(e.message, "`sum` is text; only numbers can be divided");

    let src = with("\n[metric.r]\nof = \"mops\"\n");
    let e = error(&src);
    assert_eq!(
        (e.line, e.key.as_str()),
        (line_of(&src, "of = "), "metric.r")
    );
    assert_eq!(e.message, "`of` and `per` go together");

    let src = with("\n[metric.r]\nof = \"mops\"\nper = \"wall_s\"\njson = \"r\"\n");
    let e = error(&src);
    assert_eq!(e.line, line_of(&src, "[metric.r]"));
    assert!(e.message.contains("reads nothing from the output"), "{e}");
}

#[test]
fn a_derived_metric_that_depends_on_itself_is_refused_with_the_cycle() {
    let src = format!(
        "{BASE}\n[metric.a]\nof = \"b\"\nper = \"mops\"\n\n[metric.b]\nof = \"wall_s\"\nper = \"a\"\n"
    );
    let e = error(&src);
    assert_eq!(e.key, "metric.a");
    assert_eq!(e.line, line_of(&src, "of = \"b\""));
    assert_eq!(e.message, "`a` depends on itself: a → b → a");
    let own = format!("{BASE}\n[metric.a]\nof = \"a\"\nper = \"mops\"\n");
    assert_eq!(error(&own).message, "`a` depends on itself: a → a");
}

#[test]
fn an_unknown_or_repeated_counter_is_refused_at_its_place_with_the_known_ones() {
    let src = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\ncounters = [\"task-clock\", \"instructons\"]",
    );
    let e = error(&src);
    assert_eq!((e.line, e.column), (4, 27));
    assert_eq!(e.key, "experiment.counters");
    assert_eq!(e.message, "unknown counter \"instructons\"");
    assert_eq!(
        e.hint.as_deref(),
        Some(
            "lab reads these, by perf's names, and callgrind-instructions through valgrind: task-clock, context-switches, cpu-migrations, page-faults, instructions, cycles, cache-references, cache-misses, branch-misses, branches, callgrind-instructions"
        )
    );
    let twice = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\ncounters = [\"cycles\", \"cycles\"]",
    );
    assert_eq!(error(&twice).message, "\"cycles\" is listed twice");

    let ok = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\ncounters = [\"task-clock\", \"page-faults\"]",
    );
    let exp = load(&ok).unwrap();
    let clock = exp.metric("task_clock_s").unwrap();
    assert_eq!((clock.unit.as_str(), clock.is_timing()), ("s", true));
    let faults = exp.metric("page_faults").unwrap();
    assert_eq!(
        (faults.unit.as_str(), faults.is_timing()),
        ("faults", false)
    );
    assert!(exp.metric("instructions").is_none(), "only those asked for");
}

#[test]
fn a_run_with_shell_syntax_is_refused_at_the_word_with_the_fix() {
    let fast = "run = [\"prog\", \"--threads={threads}\"]";
    let piped = BASE.replace(fast, "run = [\"echo\", \"1\", \"|\", \"wc\", \"-l\"]");
    assert_eq!(
        error(&piped).to_string(),
        "exp/lab.toml:10:21: `variant[1].run`: this command needs a shell for a pipe `|`, and lab runs it without one: \"echo\" would get \"|\" as an argument\n  \
         hint: to run it in a shell, write run = [\"sh\", \"-c\", \"echo 1 | wc -l\"]; to run the words as they are, set shell_check = false on this variant"
    );
    let insisted = piped.replace("name = \"fast\"", "name = \"fast\"\nshell_check = false");
    let exp = load(&insisted).unwrap();
    assert_eq!(exp.variants[0].argv, ["echo", "1", "|", "wc", "-l"]);
    assert!(!exp.variants[0].shell_check && exp.variants[1].shell_check);
    let in_a_shell = BASE.replace(fast, "run = [\"sh\", \"-c\", \"echo 1 | wc -l\"]");
    assert_eq!(
        load(&in_a_shell).unwrap().variants[0].argv[2],
        "echo 1 | wc -l"
    );
}

#[test]
fn hooks_with_shell_syntax_are_refused_like_run() {
    let src = BASE.replace(
        "name = \"slow\"",
        "name = \"slow\"\nsetup = [\n  \"cd\", # into the data\n  \"data\",\n]",
    );
    let e = error(&src);
    let at = (line_of(&src, "\"cd\""), 3);
    assert_eq!(
        (e.key.as_str(), (e.line, e.column)),
        ("variant[2].setup", at)
    );
    assert_eq!(
        e.message,
        "this command needs a shell for the shell builtin `cd`, and lab runs it without one: it would look for a program named \"cd\""
    );
    assert_eq!(
        e.hint.unwrap(),
        "to run it in a shell, write setup = [\"sh\", \"-c\", \"cd data\"]; to run the words as they are, set shell_check = false on this variant"
    );
    let redirected = BASE.replace(
        "name = \"slow\"",
        "name = \"slow\"\nconclude = ['rm', \"-f\", \"out {threads}\", '2>/dev/null']",
    );
    let e = error(&redirected);
    assert_eq!((e.key.as_str(), e.column), ("variant[2].conclude", 42));
    assert!(e.message.contains("a redirection `2>`"), "{}", e.message);
    let hint = e.hint.unwrap();
    assert!(
        hint.contains(r#"["sh", "-c", "rm -f 'out {threads}' 2>/dev/null"]"#),
        "{hint}"
    );
    let insisted = redirected.replace("name = \"slow\"", "name = \"slow\"\nshell_check = false");
    assert!(load(&insisted).is_ok());
}

#[test]
fn an_unknown_or_repeated_check_to_skip_is_refused_at_its_place_with_the_known_ones() {
    let src = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\nskip_checks = [\"cold-state\", \"cold\"]",
    );
    let e = error(&src);
    assert_eq!((e.line, e.column), (4, 30));
    assert_eq!(e.key, "experiment.skip_checks");
    assert_eq!(
        e.message,
        "\"cold\" names no automatic check lab can turn off"
    );
    assert!(
        e.hint.as_deref().is_some_and(|h| h.starts_with(
            "these can be: \"impossible-times\" (a time value above its run's own wall and CPU time), \"cold-state\""
        )),
        "{:?}",
        e.hint
    );
    let twice = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\nskip_checks = [\"layout\", \"layout\"]",
    );
    assert_eq!(error(&twice).message, "\"layout\" is listed twice");
    let ok = BASE.replace(
        "hypothesis = \"h\"",
        "hypothesis = \"h\"\nskip_checks = [\"periodicity\"]",
    );
    let exp = load(&ok).unwrap();
    assert!(exp.skips("periodicity") && !exp.skips("layout"));
}
